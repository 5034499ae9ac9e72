package main

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kpipe/kpipe/internal/genrepo"
)

// kustomizeBinary finds kustomize v5 for differential tests: on PATH or in
// ~/go/bin (`go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.0`).
func kustomizeBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("kustomize"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, "go", "bin", "kustomize"); fileExists(p) {
			return p
		}
	}
	t.Skip("kustomize not installed (go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.0): differential test skipped")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestDifferentialAgainstKustomize builds the examples in testdata and a
// synthetic monorepo, changed at random a few times (fixed seed), with both
// kustomize and kpipe, and compares the outputs byte for byte.
func TestDifferentialAgainstKustomize(t *testing.T) {
	kz := kustomizeBinary(t)
	same := func(root string) {
		t.Helper()
		want, err := exec.Command(kz, "build", root).Output()
		if err != nil {
			t.Fatalf("kustomize build %s: %v", root, err)
		}
		code, got, stderr := kpipe(t, "build", root, "--no-cache")
		if code != 0 {
			t.Fatalf("kpipe build %s: exit %d: %s", root, code, stderr)
		}
		if got != string(want) {
			t.Errorf("%s: kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", root, got, want)
		}
	}
	same("../../testdata/examples/prod")
	same("../../testdata/plugin-order")

	tree, roots := newRepo(t)
	rng := rand.New(rand.NewSource(7))
	for step := 0; step < 4; step++ {
		for _, r := range roots {
			same(filepath.Join(tree, r))
		}
		if _, err := genrepo.Mutate(rng, tree); err != nil {
			t.Fatal(err)
		}
	}
}
