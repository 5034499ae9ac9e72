package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/genrepo"
)

// TestRelocatedTreeHitsCache copies a built tree to another path (as a CI
// runner's checkout, Argo CD's or Flux's temporary directory does) and
// builds it from another working directory with the same cache: every
// node must come from the cache, and the output must be byte-identical to
// a build of the copy without the cache.
func TestRelocatedTreeHitsCache(t *testing.T) {
	top := t.TempDir()
	m1 := filepath.Join(top, "m1")
	rel, err := genrepo.Write(m1, genrepo.Spec{Apps: 3, Envs: 2, ResourcesPerApp: 2})
	if err != nil {
		t.Fatal(err)
	}
	// An app with origin annotations: output that embeds paths.
	if err := os.MkdirAll(filepath.Join(m1, "origin"), 0o755); err != nil {
		t.Fatal(err)
	}
	k := "resources: [../" + filepath.ToSlash(rel[0]) + "]\nbuildMetadata: [originAnnotations]\n"
	if err := os.WriteFile(filepath.Join(m1, "origin", "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	rel = append(rel, "origin")
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	defer store.Close()
	var roots1 []string
	for _, r := range rel {
		roots1 = append(roots1, filepath.Join(m1, r))
	}
	first, _ := outputs(t, roots1, store)

	m2 := filepath.Join(top, "elsewhere", "m2")
	if err := os.MkdirAll(filepath.Dir(m2), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", m1, m2).CombinedOutput(); err != nil {
		t.Skipf("cp -r: %v: %s", err, out)
	}
	other := t.TempDir()
	t.Chdir(other)
	var roots2 []string
	for _, r := range rel {
		// Relative to the new working directory, as a user would type it.
		p, err := filepath.Rel(other, filepath.Join(m2, r))
		if err != nil {
			t.Fatal(err)
		}
		roots2 = append(roots2, p)
	}
	warm, stats := outputs(t, roots2, store)
	cold, _ := outputs(t, roots2, nil)
	for i := range rel {
		if warm[i] != cold[i] {
			t.Errorf("%s: output at the new path with the cache differs from a build without it:\n--- warm\n%s\n--- cold\n%s", rel[i], warm[i], cold[i])
		}
		if warm[i] != first[i] {
			t.Errorf("%s: output at the new path differs from the output at the old one", rel[i])
		}
	}
	if !strings.Contains(warm[len(rel)-1], "config.kubernetes.io/origin") {
		t.Errorf("origin: no origin annotation in the output:\n%s", warm[len(rel)-1])
	}
	if stats.RootsCached != len(rel) {
		t.Errorf("relocated tree: %d of %d roots from the cache", stats.RootsCached, len(rel))
	}
	if stats.NodesBuilt != 0 || stats.NodesCached == 0 {
		t.Errorf("relocated tree: %d nodes built, %d from the cache; want every node from the cache", stats.NodesBuilt, stats.NodesCached)
	}
}
