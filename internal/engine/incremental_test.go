package engine

import (
	"context"
	"flag"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/kpipe/kpipe/internal/cache"
	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/internal/loaders"
)

var mutations = flag.Int("kpipe.mutations", 12, "mutations in TestWarmEqualsCold (more: go test ./build -run WarmEqualsCold -kpipe.mutations=500)")

// outputs builds the roots and returns each root's YAML (or error text).
func outputs(t *testing.T, roots []string, store *cache.Store) ([]string, Stats) {
	t.Helper()
	g, errs := Load(roots, loaders.RootOnly)
	opts := Options{Jobs: 3}
	if store != nil {
		files, _ := cache.LoadFileIndex(store.Dir())
		opts.Cache = Cache{Store: store, Files: files, Version: "test"}
	}
	b := NewBuilder(g, opts)
	var out []string
	for _, r := range b.Run(context.Background(), errs) {
		if r.Err != nil {
			out = append(out, "error: "+r.Err.Error())
			continue
		}
		out = append(out, string(r.YAML))
	}
	if store != nil {
		_ = opts.Cache.Files.Save(store.Dir())
		store.Flush()
	}
	return out, b.Stats()
}

// TestWarmEqualsCold mutates a monorepo at random (edit a value, edit a
// file a generator reads, add or remove a resource, rename a file) and checks after each mutation that a
// build using the cache gives exactly the output of a build without it.
func TestWarmEqualsCold(t *testing.T) {
	dir := t.TempDir()
	rel, err := genrepo.Write(dir, genrepo.Spec{Apps: 3, Envs: 2, ResourcesPerApp: 2})
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, r := range rel {
		roots = append(roots, filepath.Join(dir, r))
	}
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	defer store.Close()
	rng := rand.New(rand.NewSource(20261123))
	outputs(t, roots, store) // fill the cache
	for step := 0; step < *mutations; step++ {
		what := mutate(t, rng, dir)
		warm, stats := outputs(t, roots, store)
		cold, _ := outputs(t, roots, nil)
		for i := range roots {
			if warm[i] != cold[i] {
				t.Fatalf("step %d (%s): %s: output with the cache differs from output without it:\n--- warm\n%s\n--- cold\n%s",
					step, what, rel[i], warm[i], cold[i])
			}
		}
		if step == 0 && stats.NodesCached == 0 {
			t.Errorf("step 0 (%s): no node came from the cache (stats %+v)", what, stats)
		}
	}
}

// mutate changes one thing in the tree and says what.
func mutate(t *testing.T, rng *rand.Rand, dir string) string {
	t.Helper()
	what, err := genrepo.Mutate(rng, dir)
	if err != nil {
		t.Fatal(err)
	}
	return what
}
