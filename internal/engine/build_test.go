package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/loaders"
)

// writeTree writes files (path -> content) under a new temporary directory
// and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// monorepo is a base shared by n overlays, each with its own prefix and
// image tag. (The base sets its own namespace: kustomize v5.8 pushes an
// overlay's namespace down into a base that has none, which makes that base
// a different node per namespace.)
func monorepo(t *testing.T, n int) (root string, overlays []string) {
	files := map[string]string{
		"base/kustomization.yaml": "namespace: web\nresources:\n- deploy.yaml\n- svc.yaml\ncommonLabels:\n  app: web\n",
		"base/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25
`,
		"base/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
	}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("env%d/kustomization.yaml", i)] = fmt.Sprintf(
			"resources:\n- ../base\nnamePrefix: e%d-\nimages:\n- name: nginx\n  newTag: \"1.%d\"\n", i, i)
		overlays = append(overlays, fmt.Sprintf("env%d", i))
	}
	root = writeTree(t, files)
	for i := range overlays {
		overlays[i] = filepath.Join(root, overlays[i])
	}
	return root, overlays
}

// buildAll builds the roots in one run and returns each root's output.
func buildAll(t *testing.T, roots []string, jobs int) []string {
	t.Helper()
	g, loadErrs := Load(roots, loaders.RootOnly)
	b := NewBuilder(g, Options{Jobs: jobs})
	var out []string
	for i, r := range b.Run(context.Background(), loadErrs) {
		if r.Err != nil {
			t.Fatalf("root %s: %v", roots[i], r.Err)
		}
		y, err := output.Marshal(r.Resources)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(y))
	}
	return out
}

func TestSharedBaseIsOneNode(t *testing.T) {
	_, overlays := monorepo(t, 5)
	g, errs := Load(overlays, loaders.RootOnly)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Five overlays and one base: the base is loaded once and shared.
	if len(g.Nodes) != 6 {
		t.Fatalf("graph has %d nodes, want 6 (5 overlays + 1 shared base)", len(g.Nodes))
	}
	b := NewBuilder(g, Options{Jobs: 4})
	for _, r := range b.Run(context.Background(), errs) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if got := b.Stats().NodesBuilt; got != 6 {
		t.Errorf("built %d nodes, want 6: a shared base must be built once per run", got)
	}
}

func TestOneRunEqualsSeparateRuns(t *testing.T) {
	_, overlays := monorepo(t, 4)
	together := buildAll(t, overlays, 4)
	for i, o := range overlays {
		alone := buildAll(t, []string{o}, 1)
		if alone[0] != together[i] {
			t.Errorf("%s: output differs when built with other roots:\n--- alone\n%s\n--- together\n%s", o, alone[0], together[i])
		}
	}
	if !strings.Contains(together[2], "name: e2-web") || !strings.Contains(together[2], "namespace: web") ||
		!strings.Contains(together[2], "image: nginx:1.2") {
		t.Errorf("overlay env2 output lacks its prefix, namespace or image:\n%s", together[2])
	}
}

func TestDeterministicAcrossJobs(t *testing.T) {
	_, overlays := monorepo(t, 8)
	want := buildAll(t, overlays, 1)
	for _, jobs := range []int{2, 8, 32} {
		for run := 0; run < 3; run++ {
			got := buildAll(t, overlays, jobs)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("jobs=%d run %d: %s output differs from jobs=1", jobs, run, overlays[i])
				}
			}
		}
	}
}

func TestCycleNamesThePath(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a/kustomization.yaml": "resources:\n- ../b\n",
		"b/kustomization.yaml": "resources:\n- ../c\n",
		"c/kustomization.yaml": "resources:\n- ../a\n",
	})
	g, errs := Load([]string{filepath.Join(root, "a")}, loaders.RootOnly)
	res := NewBuilder(g, Options{}).Run(context.Background(), errs)
	err := res[0].Err
	if err == nil {
		t.Fatal("a cycle of bases built without error")
	}
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("error is not a CycleError: %v", err)
	}
	msg := err.Error()
	real, _ := filepath.EvalSymlinks(root)
	for _, want := range []string{"cycle detected", filepath.Join(real, "a") + " -> " + filepath.Join(real, "b") + " -> " + filepath.Join(real, "c") + " -> " + filepath.Join(real, "a")} {
		if !strings.Contains(msg, want) {
			t.Errorf("cycle error %q does not contain %q", msg, want)
		}
	}
}

func TestFailingRootDoesNotStopOthers(t *testing.T) {
	_, overlays := monorepo(t, 2)
	bad := filepath.Join(filepath.Dir(overlays[0]), "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "kustomization.yaml"), []byte("resources:\n- missing.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	roots := []string{overlays[0], bad, overlays[1]}
	g, errs := Load(roots, loaders.RootOnly)
	res := NewBuilder(g, Options{Jobs: 2}).Run(context.Background(), errs)
	if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "missing.yaml") {
		t.Errorf("bad root: error %v does not name missing.yaml", res[1].Err)
	}
	for _, i := range []int{0, 2} {
		if res[i].Err != nil || len(res[i].Resources) != 2 {
			t.Errorf("root %s: err %v, %d resources; want its 2 resources", roots[i], res[i].Err, len(res[i].Resources))
		}
	}
	var buf bytes.Buffer
	y, _ := output.Marshal(res[0].Resources)
	buf.Write(y)
	if !strings.Contains(buf.String(), "e0-web") {
		t.Errorf("root env0 output lacks e0-web:\n%s", buf.String())
	}
}

func TestInheritedNamespaceMakesSeparateNodes(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		"a/kustomization.yaml":    "resources:\n- ../base\nnamespace: a\n",
		"b/kustomization.yaml":    "resources:\n- ../base\nnamespace: b\n",
	})
	out := buildAll(t, []string{filepath.Join(root, "a"), filepath.Join(root, "b")}, 2)
	if !strings.Contains(out[0], "namespace: a") || !strings.Contains(out[1], "namespace: b") {
		t.Errorf("overlays a and b did not each get their namespace:\n%s\n---\n%s", out[0], out[1])
	}
}

// TestPluginConfigOrder checks kustomize's order of `transformers:`
// entries: inline configs first, then files (testdata/plugin-order, whose
// expected output kustomize v5.8.0 wrote).
func TestPluginConfigOrder(t *testing.T) {
	want, err := os.ReadFile("../../testdata/plugin-order.expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, errs := Load([]string{"../../testdata/plugin-order"}, loaders.RootOnly)
	res := NewBuilder(g, Options{}).Run(context.Background(), errs)[0]
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if string(res.YAML) != string(want) {
		t.Errorf("got\n%s\nwant\n%s", res.YAML, want)
	}
}

// TestFilesParsedTogetherKeepOrder builds a kustomization of many resource
// files, which are decoded concurrently, and checks the output lists them
// in file order (with --reorder none) and that, of several broken files, the first in the
// `resources` list is the one reported, whatever the number of jobs.
func TestFilesParsedTogetherKeepOrder(t *testing.T) {
	files := map[string]string{}
	var list, want strings.Builder
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("cm%02d.yaml", 11-i) // not in name order
		files["ok/"+name] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  text: %s\n", i, strings.Repeat("x", 1000*i))
		fmt.Fprintf(&list, "- %s\n", name)
		fmt.Fprintf(&want, "cm%d,", i)
	}
	files["ok/kustomization.yaml"] = "resources:\n" + list.String()
	files["bad/kustomization.yaml"] = "resources:\n- big.yaml\n- broken1.yaml\n- broken2.yaml\n"
	files["bad/big.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  text: " + strings.Repeat("y", 1<<20) + "\n"
	files["bad/broken1.yaml"] = "apiVersion: v1\nkind: [\n"
	files["bad/broken2.yaml"] = "a: b\n c\n"
	root := writeTree(t, files)
	for _, jobs := range []int{1, 2, 8} {
		for range 5 {
			roots := []string{filepath.Join(root, "ok"), filepath.Join(root, "bad")}
			g, errs := Load(roots, loaders.RootOnly)
			res := NewBuilder(g, Options{Jobs: jobs, Reorder: "none"}).Run(context.Background(), errs)
			if res[0].Err != nil {
				t.Fatal(res[0].Err)
			}
			var got strings.Builder
			for _, r := range res[0].Resources {
				fmt.Fprintf(&got, "%s,", r.ID().Name)
			}
			if got.String() != want.String() {
				t.Errorf("jobs %d: order %s, want %s", jobs, got.String(), want.String())
			}
			if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "broken1.yaml") {
				t.Errorf("jobs %d: error %v, want the one of broken1.yaml", jobs, res[1].Err)
			}
		}
	}
}

// A root's finishing steps (the generated names' hash suffix, name
// references, dropping build annotations) edit its own resources in place
// when no other node includes it; a root that another root of the same
// run includes must keep its accumulation intact for its parent, and
// each output must be what building the root alone gives.
func TestRootIncludedByAnotherRootIsNotFinishedInPlace(t *testing.T) {
	root := writeTree(t, map[string]string{
		"inner/kustomization.yaml": "resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: cfg\n  literals:\n  - A=1\ncommonAnnotations:\n  team: a\n",
		"inner/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
        envFrom:
        - configMapRef:
            name: cfg
`,
		"outer/kustomization.yaml": "resources:\n- ../inner\nnamePrefix: p-\nconfigMapGenerator:\n- name: cfg\n  behavior: merge\n  literals:\n  - B=2\n",
	})
	inner, outer := filepath.Join(root, "inner"), filepath.Join(root, "outer")
	alone := []string{buildAll(t, []string{inner}, 1)[0], buildAll(t, []string{outer}, 1)[0]}
	for _, jobs := range []int{1, 4} {
		for _, order := range [][]string{{inner, outer}, {outer, inner}} {
			got := buildAll(t, order, jobs)
			for i, r := range order {
				want := alone[0]
				if r == outer {
					want = alone[1]
				}
				if got[i] != want {
					t.Errorf("jobs %d, roots %v: %s built together\n%s\nalone\n%s", jobs, order, filepath.Base(r), got[i], want)
				}
			}
		}
	}
	if !strings.Contains(alone[1], "name: p-cfg-") || strings.Count(alone[1], "cfg-") != 2 {
		t.Errorf("the outer root's ConfigMap and its reference should carry one hash suffix:\n%s", alone[1])
	}
}
