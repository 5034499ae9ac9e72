package build

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/benchmarks/genrepo"
	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

var mutations = flag.Int("kpipe.mutations", 12, "mutations in TestWarmEqualsCold (more: go test ./build -run WarmEqualsCold -kpipe.mutations=500)")

// outputs builds the roots and returns each root's YAML (or error text).
func outputs(t *testing.T, roots []string, store *cache.Store) ([]string, Stats) {
	t.Helper()
	g, errs := Load(roots, loaders.RootOnly)
	opts := Options{Jobs: 3}
	if store != nil {
		opts.Cache = Cache{Store: store, Files: cache.LoadFileIndex(store), Version: "test"}
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
		opts.Cache.Files.Save(store)
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
	apps, _ := filepath.Glob(filepath.Join(dir, "apps", "*", "base"))
	sort.Strings(apps)
	base := apps[rng.Intn(len(apps))]
	kfile := filepath.Join(base, "kustomization.yaml")
	k := read(t, kfile)
	extras, _ := filepath.Glob(filepath.Join(base, "extra-*.yaml"))
	sort.Strings(extras)
	switch op := rng.Intn(5); {
	case op == 4: // edit a file a stage reads (a generator's file)
		f := filepath.Join(base, "application.properties")
		write(t, f, read(t, f)+fmt.Sprintf("extra.%d=x\n", rng.Intn(1e6)))
		return "edit " + f
	case op == 0 || len(extras) == 0: // edit a value
		f := filepath.Join(base, "deployment.yaml")
		d := read(t, f)
		write(t, f, strings.Replace(d, "cpu: ", fmt.Sprintf("cpu: %d", rng.Intn(9)+1), 1))
		return "edit " + f
	case op == 1: // add a resource
		name := fmt.Sprintf("extra-new%d.yaml", rng.Intn(1e6))
		write(t, filepath.Join(base, name), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: v\n", strings.TrimSuffix(name, ".yaml")))
		write(t, kfile, strings.Replace(k, "- deployment.yaml\n", "- deployment.yaml\n- "+name+"\n", 1))
		return "add " + name
	case op == 2: // remove a resource
		victim := filepath.Base(extras[rng.Intn(len(extras))])
		write(t, kfile, strings.Replace(k, "- "+victim+"\n", "", 1))
		os.Remove(filepath.Join(base, victim))
		return "remove " + victim
	default: // rename a file
		old := filepath.Base(extras[rng.Intn(len(extras))])
		renamed := strings.TrimSuffix(old, ".yaml") + "-r.yaml"
		if err := os.Rename(filepath.Join(base, old), filepath.Join(base, renamed)); err != nil {
			t.Fatal(err)
		}
		write(t, kfile, strings.Replace(k, "- "+old+"\n", "- "+renamed+"\n", 1))
		return "rename " + old
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
