package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputToAMissingDirectory: -o naming a directory that does not exist
// (missing-dir/, or missing-dir/out.yaml) fails naming that directory and
// saying it does not exist, with no temporary file name in the message,
// and creates nothing.
func TestOutputToAMissingDirectory(t *testing.T) {
	example, err := filepath.Abs("../../testdata/examples/prod")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct{ out, want string }{
		{"missing-dir/", "--output missing-dir/: no such directory"},
		{"missing-dir/out.yaml", "--output missing-dir/out.yaml: the directory missing-dir does not exist"},
		{filepath.Join("a", "b", "c.yaml"), "the directory " + filepath.Join("a", "b") + " does not exist"},
	} {
		code, _, stderr := kpipe(t, "build", example, "-o", tc.out)
		if code == 0 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "tmp-") {
			t.Errorf("-o %s: exit %d, stderr %q; want it to say %q", tc.out, code, stderr, tc.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("-o %s: created %v", tc.out, entries)
		}
	}
}
