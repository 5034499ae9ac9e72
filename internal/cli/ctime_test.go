package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInPlaceEditKeepingSizeAndMtime: a (large) file rewritten in place with the
// same size and its modification time set back (cp -p, rsync --inplace,
// tar -x, touch -r do this) is seen, through its ctime, by the warm paths
// of both build and build-all: the new output, never the old one.
func TestInPlaceEditKeepingSizeAndMtime(t *testing.T) {
	dir := t.TempDir()
	cacheDir := t.TempDir()
	cm := filepath.Join(dir, "cm.yaml")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "kustomization.yaml"), "resources:\n- cm.yaml\n")
	// Large enough (64 KiB or more) that its digest is kept in the cache's
	// stat index across runs; smaller files are always read.
	write(cm, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  big: "+strings.Repeat("x", 70<<10)+"\n  k: AAAA\n")
	// Old enough that the digest is trusted from the stat index (outside
	// the 2 s window in which a file is always hashed again).
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(cm, old, old); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	t.Chdir(dir)
	for i, edit := range []string{"BBBB", "CCCC"} {
		if code, stdout, errOut := kpipe(t, "build", dir, "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "k: "+[]string{"AAAA", "BBBB"}[i]) {
			t.Fatalf("build before edit %d: exit %d: %s%s", i, code, stdout, errOut)
		}
		if code, _, errOut := kpipe(t, "build-all", ".", "--cache-dir", cacheDir, "--out-dir", out, "--progress=false"); code != 0 {
			t.Fatalf("build-all: exit %d: %s", code, errOut)
		}
		// Same size, same mtime: only ctime (and content) differ.
		data, _ := os.ReadFile(cm)
		f, err := os.OpenFile(cm, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(strings.Replace(string(data), []string{"AAAA", "BBBB"}[i], edit, 1)), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(cm, old, old); err != nil {
			t.Fatal(err)
		}
		code, stdout, errOut := kpipe(t, "build", dir, "--cache-dir", cacheDir)
		if code != 0 || !strings.Contains(stdout, "k: "+edit) {
			t.Fatalf("build after an in-place edit keeping size and mtime: exit %d, want k: %s:\n%s%s", code, edit, stdout, errOut)
		}
		if code, _, errOut := kpipe(t, "build-all", ".", "--cache-dir", cacheDir, "--out-dir", out, "--progress=false"); code != 0 {
			t.Fatalf("build-all: exit %d: %s", code, errOut)
		}
		if got, err := os.ReadFile(filepath.Join(out, "_root.yaml")); err != nil || !strings.Contains(string(got), "k: "+edit) {
			t.Fatalf("build-all after an in-place edit keeping size and mtime: %s", got)
		}
	}
}
