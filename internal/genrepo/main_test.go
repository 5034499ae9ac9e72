package genrepo

import (
	"math/rand"
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

// A tree with regions and clusters has the roots Spec promises, and the
// files alike that caches trip on: every region's kustomization file the
// same bytes, each region's patch its own.
func TestWriteRegionsAndClusters(t *testing.T) {
	dir := t.TempDir()
	roots, err := Write(dir, Spec{Apps: 2, Envs: 1, Regions: 3, Clusters: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) != 2+2*3+3 {
		t.Fatalf("got %d roots, want 11: %v", len(roots), roots)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if read("apps/app000/regions/r00/kustomization.yaml") != read("apps/app001/regions/r02/kustomization.yaml") ||
		read("apps/app000/regions/r00/patch.yaml") == read("apps/app000/regions/r01/patch.yaml") ||
		read("platform/clusters/c00/kustomization.yaml") != read("platform/clusters/c02/kustomization.yaml") ||
		read("platform/tuning/small/kustomization.yaml") != read("platform/tuning/large/kustomization.yaml") {
		t.Error("the files alike are not alike, or their neighbours not different")
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		if _, err := Mutate(rng, dir); err != nil {
			t.Fatal(err)
		}
	}
}
