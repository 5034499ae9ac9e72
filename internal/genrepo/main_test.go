package genrepo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	roots, err := Write(dir, Spec{Apps: 3, Envs: 2, ResourcesPerApp: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) != 6 {
		t.Fatalf("got %d roots, want 6", len(roots))
	}
	for _, r := range roots {
		if _, err := os.Stat(filepath.Join(dir, r, "kustomization.yaml")); err != nil {
			t.Errorf("root %s has no kustomization: %v", r, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, SharedBaseFile)); err != nil {
		t.Errorf("SharedBaseFile missing: %v", err)
	}
}
