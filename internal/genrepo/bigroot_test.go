package genrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteBigRoot: the big root's base holds as many objects as asked,
// less the two the overlay generates, whatever the size.
func TestWriteBigRoot(t *testing.T) {
	for _, n := range []int{5, 23, 1000} {
		dir := t.TempDir()
		if err := WriteBigRoot(dir, n); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "base", "*", "*.yaml"))
		objects := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			objects += strings.Count("\n"+string(b), "\napiVersion: ")
		}
		if objects+2 != n {
			t.Errorf("%d resources asked: %d in the base, +2 generated", n, objects)
		}
		if _, err := os.Stat(filepath.Join(dir, BigRoot, "kustomization.yaml")); err != nil {
			t.Error(err)
		}
	}
	if err := WriteBigRoot(t.TempDir(), 4); err == nil {
		t.Error("4 resources: no error")
	}
}
