package engine

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/loaders"
)

var mutations = flag.Int("kpipe.mutations", 12, "mutations in TestWarmEqualsCold (more: go test ./build -run WarmEqualsCold -kpipe.mutations=500)")

// outputs builds the roots and returns each root's YAML (or error text).
func outputs(t *testing.T, roots []string, store *cache.Store) ([]string, Stats) {
	t.Helper()
	return outputsWith(t, roots, Options{Jobs: 3}, store)
}

// outputsWith is outputs with build options.
func outputsWith(t *testing.T, roots []string, opts Options, store *cache.Store) ([]string, Stats) {
	t.Helper()
	g, errs := Load(roots, loaders.RootOnly)
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

// TestWarmEqualsCold mutates a monorepo at random and checks after each
// mutation that a build using the cache gives exactly the output of a build
// without it. The edits: genrepo's (edit a value, edit a file a generator
// reads, add, remove or rename a resource), an in-place edit keeping size
// and mtime (as cp -p, rsync --inplace or tar -x do), a touch, a file
// renamed over another, a file read by an exec KRM function next to its
// config (the KSOPS pattern) and the helm binary replaced at the same path.
func TestWarmEqualsCold(t *testing.T) {
	testWarmEqualsCold(t, false)
}

// TestWarmEqualsColdSameSizeAndMtime is TestWarmEqualsCold with in-place
// edits that keep a file's size and mtime too. The stat index sees those
// only by ctime, which helper cachestore adds to cache/files.go.
func TestWarmEqualsColdSameSizeAndMtime(t *testing.T) {
	testWarmEqualsCold(t, true)
}

func testWarmEqualsCold(t *testing.T, sameMtime bool) {
	if runtime.GOOS == "windows" {
		t.Skip("the plugin and the fake helm are shell scripts")
	}
	dir := t.TempDir()
	// Regions and clusters: overlays and components whose kustomization
	// files are the same bytes and whose same-named files differ, which
	// genrepo.Mutate edits half the time.
	rel, err := genrepo.Write(dir, genrepo.Spec{Apps: 3, Envs: 2, ResourcesPerApp: 2, Regions: 2, Clusters: 2})
	if err != nil {
		t.Fatal(err)
	}
	// A root with a KSOPS-like function: it reads secret.enc.yaml next to
	// its config, which no kustomization names.
	writeExec(t, filepath.Join(dir, "ksops", "decrypt.sh"), "#!/bin/sh\ncat >/dev/null\nprintf 'kind: ResourceList\\napiVersion: config.kubernetes.io/v1\\nitems:\\n'\nsed 's/^/- /;s/^- \\(.*\\)=\\(.*\\)$/- apiVersion: v1\\n  kind: Secret\\n  metadata: {name: \\1}\\n  stringData: {v: \\2}/' secret.enc.yaml\n")
	writeText(t, filepath.Join(dir, "ksops", "secret.enc.yaml"), "s1=one\n")
	writeText(t, filepath.Join(dir, "ksops", "gen.yaml"), "apiVersion: example.com/v1\nkind: Decrypt\nmetadata:\n  name: d\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./decrypt.sh\n")
	writeText(t, filepath.Join(dir, "ksops", "kustomization.yaml"), "generators:\n- gen.yaml\n")
	// A root with a chart, built by a helm at a fixed path.
	writeText(t, filepath.Join(dir, "chart", "kustomization.yaml"), "helmCharts:\n- name: c\n  releaseName: r\n")
	writeText(t, filepath.Join(dir, "chart", "charts", "c", "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 1.0.0\n")
	writeText(t, filepath.Join(dir, "chart", "charts", "c", "values.yaml"), "")
	writeText(t, filepath.Join(dir, "chart", "charts", "c", "templates", "a.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: NAMESPACE\n")
	helm := fakeHelmCommand(t)
	rel = append(rel, "ksops", "chart")
	var roots []string
	for _, r := range rel {
		roots = append(roots, filepath.Join(dir, r))
	}
	opts := Options{Jobs: 3, EnableAlphaPlugins: true, EnableExec: true, EnableHelm: true,
		Helm: HelmOptions{Command: helm}, PluginEnviron: pluginEnv(dir)}
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	defer store.Close()
	// Files older than the stat index, as in a real checkout: an index
	// may rehash files modified in the second it was saved (git's "racy"
	// rule), which would hide an in-place edit from this test.
	old := time.Now().Add(-time.Hour)
	must(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
	rng := rand.New(rand.NewSource(20261123))
	outputsWith(t, roots, opts, store) // fill the cache
	for step := 0; step < *mutations; step++ {
		what := mutateMore(t, rng, dir, helm, sameMtime)
		warm, stats := outputsWith(t, roots, opts, store)
		cold, _ := outputsWith(t, roots, opts, nil)
		for i := range roots {
			if warm[i] != cold[i] {
				t.Fatalf("step %d (%s): %s: output with the cache differs from output without it:\n--- warm\n%s\n--- cold\n%s",
					step, what, rel[i], warm[i], cold[i])
			}
			if strings.HasPrefix(cold[i], "error: ") {
				t.Fatalf("step %d (%s): %s: %s", step, what, rel[i], cold[i])
			}
		}
		t.Log(what)
		if step == 0 && stats.NodesCached == 0 {
			t.Errorf("step 0 (%s): no node came from the cache (stats %+v)", what, stats)
		}
		if step%3 == 2 {
			// The tree as it is now, copied elsewhere: every node from
			// the cache but the one that runs a function (built every
			// run), the outputs those of the tree it was copied from.
			moved := filepath.Join(t.TempDir(), "moved")
			copyTree(t, dir, moved)
			got, st := outputsWith(t, under(moved, rel), opts, store)
			for i := range rel {
				if got[i] != cold[i] {
					t.Fatalf("step %d (%s): %s moved elsewhere, with the cache:\n%s\nwant\n%s", step, what, rel[i], got[i], cold[i])
				}
			}
			if st.NodesBuilt != 1 {
				t.Errorf("step %d (%s): the moved tree built %d nodes; want 1 (the function's root) (stats %+v)", step, what, st.NodesBuilt, st)
			}
		}
	}
}

// mutateMore makes one of genrepo's mutations or one of the edits the
// stat index and the plugin and helm keys must see, and says what.
func mutateMore(t *testing.T, rng *rand.Rand, dir, helm string, sameMtime bool) string {
	t.Helper()
	kind := rng.Intn(10) // 0-4: these edits; 5: same size and mtime; else genrepo's
	if kind == 5 && !sameMtime {
		kind = 6
	}
	deploys, _ := filepath.Glob(filepath.Join(dir, "apps", "*", "base", "deployment.yaml"))
	sort.Strings(deploys)
	f := deploys[rng.Intn(len(deploys))]
	switch kind {
	case 0: // touch: nothing changes
		now := time.Now()
		must(t, os.Chtimes(f, now, now))
		return "touch " + f
	case 1: // rename a new version over the file
		data := readText(t, f)
		tmp := f + ".tmp"
		writeText(t, tmp, strings.Replace(data, "cpu: ", fmt.Sprintf("cpu: %d", rng.Intn(9)+1), 1))
		must(t, os.Rename(tmp, f))
		return "rename over " + f
	case 2: // a file only the plugin reads
		p := filepath.Join(dir, "ksops", "secret.enc.yaml")
		writeText(t, p, readText(t, p)+fmt.Sprintf("s%d=v%d\n", rng.Intn(1e6), rng.Intn(1e6)))
		return "edit " + p
	case 3: // replace helm at the same path by one that gives other output
		script := readText(t, helm)
		label := fmt.Sprintf("x%d", rng.Intn(1e6))
		if i := strings.Index(script, "\n# label "); i >= 0 {
			script = script[:i]
		}
		script = strings.Replace(script, `sed "s/NAMESPACE/$ns/"`, `sed "s/NAMESPACE/$ns/;s/name: a$/name: a-`+label+`/"`, 1) + "\n# label " + label
		tmp := helm + ".new"
		writeExec(t, tmp, script)
		must(t, os.Rename(tmp, helm))
		return "replace helm (" + label + ")"
	case 4: // a template edited in the chart
		p := filepath.Join(dir, "chart", "charts", "c", "templates", "a.yaml")
		writeText(t, p, readText(t, p)+fmt.Sprintf("# %d\n", rng.Intn(1e6)))
		return "edit " + p
	case 5: // in place, same size, mtime set back (cp -p, rsync --inplace, tar -x)
		// A file a generator reads: resource files are read (and hashed)
		// whenever the graph loads, the files stages read are checked by
		// the stat index.
		f = filepath.Join(filepath.Dir(f), "application.properties")
		st, err := os.Stat(f)
		must(t, err)
		data := []byte(readText(t, f))
		i := strings.Index(string(data), "server.port=")
		if i < 0 {
			t.Fatalf("no server.port in %s", f)
		}
		j := i + len("server.port=")
		data[j] = '0' + (data[j]-'0'+1)%10
		must(t, os.WriteFile(f, data, st.Mode()))
		must(t, os.Chtimes(f, st.ModTime(), st.ModTime()))
		return "same size and mtime " + f
	}
	return mutate(t, rng, dir)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readText(t *testing.T, p string) string {
	t.Helper()
	d, err := os.ReadFile(p)
	must(t, err)
	return string(d)
}

func writeText(t *testing.T, p, data string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(data), 0o644))
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

// TestLazyBaseIsBuiltOnlyWhenAsked checks the nodes whose build does not
// store their accumulation (lazy: it ran only cheap stages): a run with
// nothing changed builds nothing, not even them; a run whose overlay
// changed builds the base again, giving the output a build without the
// cache gives, and stores it, so that the next such run reads it.
func TestLazyBaseIsBuiltOnlyWhenAsked(t *testing.T) {
	dir := t.TempDir()
	// A lazy base (a label is a cheap stage) and a patch over it.
	writeText(t, filepath.Join(dir, "base", "kustomization.yaml"), "labels:\n- pairs: {app: web}\nresources:\n- cm.yaml\n")
	writeText(t, filepath.Join(dir, "base", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: one\n")
	const patch = "patches:\n- patch: |-\n    - op: add\n      path: /data/p\n      value: x\n  target: {kind: ConfigMap}\n"
	writeText(t, filepath.Join(dir, "overlay", "kustomization.yaml"), "namePrefix: a-\nresources:\n- ../base\n"+patch)
	roots := []string{filepath.Join(dir, "overlay")}
	cacheDir := filepath.Join(dir, ".cache")
	run := func() (string, Stats) {
		t.Helper()
		store := cache.Open(context.Background(), cache.Options{Dir: cacheDir, Pack: true})
		out, st := outputs(t, roots, store)
		want, _ := outputs(t, roots, nil)
		if out[0] != want[0] {
			t.Fatalf("cached output\n%s\nwant\n%s", out[0], want[0])
		}
		return out[0], st
	}
	run()
	if _, st := run(); st.NodesBuilt != 0 {
		t.Errorf("nothing changed, yet %d nodes were built", st.NodesBuilt)
	}
	writeText(t, filepath.Join(dir, "overlay", "kustomization.yaml"), "namePrefix: b-\nresources:\n- ../base\n"+patch)
	out, st := run()
	if !strings.Contains(out, "name: b-cm") || !strings.Contains(out, "k: one") || !strings.Contains(out, "app: web") || !strings.Contains(out, "p: x") {
		t.Errorf("after the overlay changed:\n%s", out)
	}
	if st.NodesBuilt != 2 {
		// The base has no stored accumulation: the overlay's build asks
		// for it, and it is built (and stored now).
		t.Errorf("after the overlay changed, %d nodes were built, want 2 (the overlay, and the lazy base it asked for)", st.NodesBuilt)
	}
	writeText(t, filepath.Join(dir, "overlay", "kustomization.yaml"), "namePrefix: c-\nresources:\n- ../base\n"+patch)
	if out, st := run(); !strings.Contains(out, "name: c-cm") || st.NodesBuilt != 1 {
		t.Errorf("after the overlay changed again, %d nodes were built, want 1 (the base was stored when it was asked for):\n%s", st.NodesBuilt, out)
	}
	writeText(t, filepath.Join(dir, "base", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: two\n")
	if out, _ := run(); !strings.Contains(out, "k: two") {
		t.Errorf("after the base's file changed:\n%s", out)
	}
}

// A node built in a run whose parent is found in the cache (here the
// node's manifest entry is unreadable, as after a prune, or while another
// process's entries are half written) keeps its accumulation after the
// parent's visit: a new overlay then asks for the lazy parent, which is
// built and asks for the node again. (It was released once the parent
// was visited, and the parent's build failed on a nil accumulation.)
func TestChildOfALazyParentIsKept(t *testing.T) {
	root := writeTree(t, map[string]string{
		"common/kustomization.yaml": "resources:\n- svc.yaml\n",
		"common/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n",
		"base/kustomization.yaml":   "resources:\n- ../common\nlabels:\n- pairs: {app: web}\n",
		"one/kustomization.yaml":    "resources:\n- ../base\nnamePrefix: one-\n",
		"two/kustomization.yaml":    "resources:\n- ../base\nnamePrefix: two-\n",
	})
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	outputs(t, []string{filepath.Join(root, "one")}, store)

	// Damage common's manifest entry.
	two := []string{filepath.Join(root, "two")}
	g, _ := Load(two, loaders.RootOnly)
	files, _ := cache.LoadFileIndex(store.Dir())
	b := NewBuilder(g, Options{Jobs: 1, Cache: Cache{Store: store, Files: files, Version: "test"}})
	var common *Node
	for _, n := range g.Nodes {
		if n.Dir == filepath.Join(root, "common") {
			common = n
		}
	}
	pre, ok := b.memo.preKey(common)
	if !ok || !store.Has(b.memo.manifestKey(pre)) {
		t.Fatalf("common's manifest was not stored by the first build")
	}
	store.Put(b.memo.manifestKey(pre), []byte("damaged"))
	store.Flush()

	warm, st := outputs(t, two, store)
	cold, _ := outputs(t, two, nil)
	if warm[0] != cold[0] {
		t.Fatalf("with the cache\n%s\nwithout\n%s", warm[0], cold[0])
	}
	if st.NodesBuilt != 3 {
		t.Errorf("%d nodes built, want 3 (common, whose entry was damaged; two; base, lazy, asked for by two)", st.NodesBuilt)
	}
}

// A root's output is stored under its full key, which covers the files
// its manifest lists. A later build takes that output only while every
// one of those files has the digest it had; an edit to one (here the
// patch, which no key but the full key covers) is a miss, and going back
// to an earlier content finds that content's entry again. A root whose
// accumulation is kept too (because another root included it) is still
// found, and the other way round.
func TestFinishedRootIsCheckedAgainstItsFiles(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml":  "resources:\n- deploy.yaml\n",
		"base/deploy.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n",
		"app/kustomization.yaml":   "resources:\n- ../base\npatches:\n- path: patch.yaml\n",
		"app/patch.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n",
		"outer/kustomization.yaml": "resources:\n- ../app\nnamePrefix: o-\n",
	})
	app, outer := filepath.Join(root, "app"), filepath.Join(root, "outer")
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	check := func(step string, roots []string, wantCached int) {
		t.Helper()
		cold, _ := outputs(t, roots, nil)
		warm, st := outputs(t, roots, store)
		for i := range roots {
			if warm[i] != cold[i] {
				t.Fatalf("%s: %s with the cache\n%s\nwithout\n%s", step, filepath.Base(roots[i]), warm[i], cold[i])
			}
		}
		if st.RootsCached != wantCached {
			t.Errorf("%s: %d roots' outputs from the cache, want %d", step, st.RootsCached, wantCached)
		}
	}
	patch := filepath.Join(app, "patch.yaml")
	first := readText(t, patch)
	check("cold", []string{app}, 0)
	check("unchanged", []string{app}, 1)
	writeText(t, patch, strings.Replace(first, "replicas: 2", "replicas: 3", 1))
	check("patch edited", []string{app}, 0)
	check("unchanged after the edit", []string{app}, 1)
	writeText(t, patch, first)
	check("patch back to its first content", []string{app}, 1)
	// app included by outer: app's accumulation is kept too, and the
	// output of the run before still serves app.
	check("with outer", []string{app, outer}, 1)
	check("with outer, unchanged", []string{app, outer}, 2)
	check("alone again", []string{app}, 1)
	writeText(t, patch, strings.Replace(first, "replicas: 2", "replicas: 4", 1))
	check("with outer, patch edited", []string{app, outer}, 0)
	check("alone, after the edit with outer", []string{app}, 1)
}
