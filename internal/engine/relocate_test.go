package engine

import (
	"context"
	"fmt"
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
	rel, err := genrepo.Write(m1, genrepo.Spec{Apps: 3, Envs: 2, ResourcesPerApp: 2, Regions: 3, Clusters: 3})
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

// copyTree copies the tree src to dst (which must not exist) with cp -r,
// skipping the test where there is none.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Skipf("cp -r: %v: %s", err, out)
	}
}

// under returns the roots rel joined to dir.
func under(dir string, rel []string) []string {
	var out []string
	for _, r := range rel {
		out = append(out, filepath.Join(dir, r))
	}
	return out
}

// Overlays whose kustomization files are the same bytes (each
// `resources: [../base]`, a component, `patches: [{path: p.yaml}]`) and
// whose p.yaml differ share a pre-key: the manifest under it names
// p.yaml for all of them, and each one's own content is in its full key.
// A copy of the tree elsewhere then builds nothing, whichever overlay
// wrote last; an edit to one overlay's p.yaml rebuilds that overlay
// alone (and the lazy base it asks for), and putting the old content
// back finds its entry again.
func TestSameNamedFilesAcrossRoots(t *testing.T) {
	files := map[string]string{
		"base/kustomization.yaml": "resources:\n- deploy.yaml\n",
		"base/deploy.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n",
		"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: p.yaml\n",
		"comp/p.yaml":             "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {comp: yes}\n",
	}
	var rel []string
	for _, o := range []string{"release-1", "release-2", "release-3", "release-4"} {
		files["overlays/"+o+"/kustomization.yaml"] = "resources:\n- ../../base\ncomponents:\n- ../../comp\npatches:\n- path: p.yaml\n"
		files["overlays/"+o+"/p.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: " + o[len(o)-1:] + "\n"
		rel = append(rel, "overlays/"+o)
	}
	top := t.TempDir()
	m1 := filepath.Join(top, "m1")
	for p, c := range files {
		writeText(t, filepath.Join(m1, p), c)
	}
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	defer store.Close()
	first, _ := outputsWith(t, under(m1, rel), Options{Jobs: 4}, store)
	m2 := filepath.Join(top, "elsewhere", "m2")
	copyTree(t, m1, m2)
	check := func(step string, wantBuilt int) {
		t.Helper()
		warm, st := outputsWith(t, under(m2, rel), Options{Jobs: 4}, store)
		cold, _ := outputsWith(t, under(m2, rel), Options{Jobs: 4}, nil)
		for i := range rel {
			if warm[i] != cold[i] {
				t.Fatalf("%s: %s with the cache\n%s\nwithout\n%s", step, rel[i], warm[i], cold[i])
			}
		}
		if st.NodesBuilt != wantBuilt {
			t.Errorf("%s: %d nodes built, want %d (stats %+v)", step, st.NodesBuilt, wantBuilt, st)
		}
	}
	check("the copy", 0)
	warm, _ := outputsWith(t, under(m2, rel), Options{Jobs: 4}, store)
	for i := range rel {
		if warm[i] != first[i] {
			t.Errorf("%s: the copy's output differs from the first tree's", rel[i])
		}
		if !strings.Contains(warm[i], "replicas: "+rel[i][len(rel[i])-1:]) {
			t.Errorf("%s: not its own patch:\n%s", rel[i], warm[i])
		}
	}
	p := filepath.Join(m2, "overlays/release-2/p.yaml")
	old := readText(t, p)
	writeText(t, p, strings.Replace(old, "replicas: 2", "replicas: 7", 1))
	// (The base is lazy: built again when the overlay asks for it.)
	check("release-2's p.yaml edited", 2)
	check("again", 0)
	writeText(t, p, old)
	check("release-2's p.yaml back", 0)
	// The component's patch: every overlay applies it.
	writeText(t, filepath.Join(m2, "comp/p.yaml"), strings.Replace(files["comp/p.yaml"], "comp: yes", "comp: edited", 1))
	// (The base's accumulation was stored when release-2 asked for it.)
	check("the component's p.yaml edited", len(rel))
}

// A component that many parents apply at once is remembered once, with
// every file it reads: its key then covers its patch, and a copy of the
// tree with that patch edited builds what a build without the cache
// gives. (Remembered by two parents at once, the second took the reads
// the first had taken away, an empty set: parents keyed by that missed
// every later change of the patch, or missed their entries.)
func TestSharedComponentAppliedConcurrently(t *testing.T) {
	files := map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
		"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: p.yaml\n",
		"comp/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  p: one\n",
	}
	var rel []string
	for i := 0; i < 24; i++ {
		o := fmt.Sprintf("o%02d", i)
		files[o+"/kustomization.yaml"] = fmt.Sprintf("resources:\n- ../base\ncomponents:\n- ../comp\nnamePrefix: %s-\n", o)
		rel = append(rel, o)
	}
	top := t.TempDir()
	for round := 0; round < 3; round++ {
		m1 := filepath.Join(top, fmt.Sprint(round), "m1")
		for p, c := range files {
			writeText(t, filepath.Join(m1, p), c)
		}
		store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
		outputsWith(t, under(m1, rel), Options{Jobs: 8}, store)
		m2 := filepath.Join(top, fmt.Sprint(round), "m2")
		copyTree(t, m1, m2)
		if _, st := outputsWith(t, under(m2, rel), Options{Jobs: 8}, store); st.NodesBuilt != 0 {
			t.Errorf("round %d: the copy built %d nodes", round, st.NodesBuilt)
		}
		m3 := filepath.Join(top, fmt.Sprint(round), "m3")
		copyTree(t, m1, m3)
		writeText(t, filepath.Join(m3, "comp/p.yaml"), strings.Replace(files["comp/p.yaml"], "one", "two", 1))
		warm, _ := outputsWith(t, under(m3, rel), Options{Jobs: 8}, store)
		cold, _ := outputsWith(t, under(m3, rel), Options{Jobs: 8}, nil)
		for i := range rel {
			if warm[i] != cold[i] || !strings.Contains(warm[i], "p: two") {
				t.Fatalf("round %d: %s after the component's patch changed, with the cache\n%s\nwithout\n%s", round, rel[i], warm[i], cold[i])
			}
		}
		store.Close()
	}
}
