package fetch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tree digest changes with any file's content or name.
func TestTreeDigest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	d1, err := treeDigest(dir)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "a"), []byte("2"), 0o644)
	d2, _ := treeDigest(dir)
	_ = os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	d3, _ := treeDigest(dir)
	if d1 == d2 || d2 == d3 || d1 == d3 {
		t.Errorf("digests %s %s %s should differ", d1, d2, d3)
	}
}

func TestIsExactChartVersion(t *testing.T) {
	for v, want := range map[string]bool{"1.2.3": true, "v1.2.3": true, "1.2.3-rc.1": true, "1.2.3+build": true,
		"": false, "^1.2": false, "1.x": false, ">=1.0.0": false, "1.2": false, "~1.2.3": false} {
		if IsExactChartVersion(v) != want {
			t.Errorf("IsExactChartVersion(%q) = %v", v, !want)
		}
	}
}

func TestIsCommitID(t *testing.T) {
	for ref, want := range map[string]bool{strings.Repeat("a", 40): true, strings.Repeat("0", 64): true,
		strings.Repeat("a", 39): false, strings.Repeat("A", 40): false, "v1": false, "": false} {
		if IsCommitID(ref) != want {
			t.Errorf("IsCommitID(%q) = %v", ref, !want)
		}
	}
}
