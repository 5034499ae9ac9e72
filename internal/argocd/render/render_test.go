package render_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/render"
	"github.com/kpipe/kpipe/internal/engine"
)

// repo writes files under a temporary directory and returns it as a Tree.
func repo(t *testing.T, files map[string]string) *render.Tree {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := render.DiskTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

const repoURL = "https://example.com/r.git"

func application(name, path, kustomize string) *app.Application {
	doc := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  source:\n    repoURL: %s\n    path: %s\n%s  destination:\n    namespace: ns\n", name, repoURL, path, kustomize)
	a, err := app.ParseApplication([]byte(doc))
	if err != nil {
		panic(err)
	}
	return a
}

var baseFiles = map[string]string{
	"base/kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: gen\n  literals:\n  - a=b\n",
	"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
	"a/kustomization.yaml":    "# overlay a\nresources:\n- ../base\nnamePrefix: a-\n",
	"b/kustomization.yaml":    "resources:\n- ../base\nnamePrefix: b-\n",
}

// TestBatchSharesBases: Applications rendered in one batch, some with
// Kustomize options (their root edited), build their shared base once,
// over one graph, and render what each renders alone.
func TestBatchSharesBases(t *testing.T) {
	tree := repo(t, baseFiles)
	co := func(string) (app.Checkout, bool) { return app.Checkout{FS: tree, Root: tree.Dir}, true }
	apps := []*app.Application{
		application("plain-a", "a", ""),
		application("plain-b", "b", ""),
		application("edited-a", "a", "    kustomize:\n      namePrefix: x-\n"),
		application("edited-b", "b", "    kustomize:\n      commonLabels:\n        team: t\n"),
		application("edited-a-again", "a", "    kustomize:\n      namePrefix: x-\n"),
	}
	alone := make([][]byte, len(apps))
	for i, a := range apps {
		r := render.New(render.Options{})
		res := generate.Application(context.Background(), a, co, generate.Settings{}, r)
		if res.Err != nil {
			t.Fatalf("%s: %v", a.Metadata.Name, res.Err)
		}
		alone[i] = objects(res)
	}
	r := render.New(render.Options{})
	batched := make([][]byte, len(apps))
	r.Batch(context.Background(), len(apps), func(ctx context.Context, i int) {
		res := generate.Application(ctx, apps[i], co, generate.Settings{}, r)
		if res.Err == nil {
			batched[i] = objects(res)
		}
	})
	for i := range apps {
		if string(batched[i]) != string(alone[i]) {
			t.Errorf("%s: batched\n%s\nalone\n%s", apps[i].Metadata.Name, batched[i], alone[i])
		}
	}
	if !strings.Contains(string(batched[2]), "x-cm") || !strings.Contains(string(batched[3]), `"team":"t"`) {
		t.Errorf("the edits did not apply:\n%s\n%s", batched[2], batched[3])
	}
	// One graph: the base, the two overlays and the two edited variants
	// (edited-a-again is edited-a's bytes: the same node).
	st := r.Stats()
	if st.Builds != 1 || st.Roots != 4 || st.NodesBuilt != 5 {
		t.Errorf("stats %+v: want 1 build of 4 roots, 5 nodes built", st)
	}
	// The checkout was not written to.
	if b, _ := os.ReadFile(filepath.Join(tree.Dir, "a/kustomization.yaml")); string(b) != baseFiles["a/kustomization.yaml"] {
		t.Errorf("a/kustomization.yaml changed:\n%s", b)
	}
}

func objects(res *generate.Result) []byte {
	var b strings.Builder
	for _, o := range res.Manifests {
		j, _ := json.Marshal(o)
		b.Write(j)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// TestKustomizeErrorWording: a failing build is reported as Argo CD
// reports kustomize's failure: the command, its exit status, kustomize's
// standard error (its warnings, then "Error: " and its message, without
// kpipe's context), paths named by the checkout's label; an edited root's
// errors name the real directory.
func TestKustomizeErrorWording(t *testing.T) {
	tree := repo(t, map[string]string{
		"bad/kustomization.yaml": "commonLabels:\n  a: b\nresources:\n- cm.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /spec/missing/x\n      value: x\n",
		"bad/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
	})
	co := func(string) (app.Checkout, bool) { return app.Checkout{FS: tree, Root: "<repo>"}, true }
	for _, opts := range []string{"", "    kustomize:\n      namePrefix: p-\n"} {
		res := generate.Application(context.Background(), application("x", "bad", opts), co, generate.Settings{}, render.New(render.Options{}))
		want := "failed to generate manifest for source 1 of 1: rpc error: code = Unknown desc = `kustomize build <repo>/bad` failed exit status 1: " +
			"# Warning: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n" +
			"Error: add operation does not apply: doc is missing path: \"/spec/missing/x\": missing value"
		if res.Err == nil || res.Err.Error() != want {
			t.Errorf("options %q:\n got: %v\nwant: %s", opts, res.Err, want)
		}
	}
	res := generate.Application(context.Background(), application("x", "bad", ""), co, generate.Settings{BuildOptions: "--no-such-flag"}, render.New(render.Options{}))
	if res.Err == nil || !strings.HasSuffix(res.Err.Error(), "failed exit status 1: Error: unknown flag: --no-such-flag") {
		t.Errorf("an unknown build option: %v", res.Err)
	}
}

// TestHelmCached: a Helm source's output comes from the cache the second
// time, the same bytes, and again from helm when a value file changes.
func TestHelmCached(t *testing.T) {
	helm := argocdtest.Helm(t)
	files := map[string]string{
		"chart/Chart.yaml":             "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/values.yaml":            "who: world\n",
		"chart/prod.yaml":              "who: prod\n",
		"chart/templates/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  who: {{ .Values.who }}\n",
		"chart/templates/tests/t.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations:\n    helm.sh/hook: test\n",
	}
	tree := repo(t, files)
	co := func(string) (app.Checkout, bool) { return app.Checkout{FS: tree, Root: tree.Dir}, true }
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	eo := engine.Options{Helm: engine.HelmOptions{Command: helm}, Cache: engine.Cache{Store: store, Files: store.FileIndex(), Version: "test"}}
	a := application("rel", "chart", "    helm:\n      valueFiles:\n      - prod.yaml\n")
	var outs []string
	var stats []render.Stats
	for i := 0; i < 3; i++ {
		if i == 2 {
			os.WriteFile(filepath.Join(tree.Dir, "chart/prod.yaml"), []byte("who: production\n"), 0o644)
		}
		r := render.New(render.Options{Engine: eo, HelmSources: true})
		res := generate.Application(context.Background(), a, co, generate.Settings{}, r)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		outs = append(outs, string(objects(res)))
		stats = append(stats, r.Stats())
	}
	// Without HelmSources (kpipe's --enable-helm) helm never runs: the
	// Application fails naming the flag.
	off := render.New(render.Options{Engine: eo})
	if res := generate.Application(context.Background(), a, co, generate.Settings{}, off); res.Err == nil || !strings.Contains(res.Err.Error(), "--enable-helm") || off.Stats().HelmRuns != 0 {
		t.Errorf("a Helm source without HelmSources: err %v, helm runs %d", res.Err, off.Stats().HelmRuns)
	}
	if !strings.Contains(outs[0], `"who":"prod"`) || !strings.Contains(outs[0], "Pod") || outs[1] != outs[0] || !strings.Contains(outs[2], `"who":"production"`) {
		t.Errorf("outputs:\n%s\n%s\n%s", outs[0], outs[1], outs[2])
	}
	if stats[0].HelmRuns != 1 || stats[1].HelmCached != 1 || stats[1].HelmRuns != 0 || stats[2].HelmRuns != 1 {
		t.Errorf("stats %+v", stats)
	}
}
