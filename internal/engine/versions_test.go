package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

// realHelm finds helm v3 for tests that inflate a chart: the one .ci/run
// installs, else the one on PATH; the test is skipped without one.
func realHelm(t *testing.T) string {
	t.Helper()
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "kpipe-ci", "helm-v3.10.2", "helm")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	t.Skip("helm not installed (go install helm.sh/helm/v3/cmd/helm@v3.10.2): helm case skipped")
	return ""
}

// TestKustomizeVersionCases builds each case of testdata/versions, one per
// rule that changed between kustomize v5.8.0 and v5.8.2/v5.8.3 (see its
// README), and compares with what kustomize v5.8.2 printed: the output
// byte for byte, or the start of the error.
func TestKustomizeVersionCases(t *testing.T) {
	dir := "../../testdata/versions"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		n++
		t.Run(name, func(t *testing.T) {
			root, _ := filepath.Abs(filepath.Join(dir, name))
			if _, err := os.Stat(filepath.Join(root, "overlay")); err == nil {
				root = filepath.Join(root, "overlay")
			}
			opts := Options{}
			if strings.HasPrefix(name, "helm") {
				opts.EnableHelm = true
				opts.Helm.Command = realHelm(t)
			}
			g, errs := Load([]string{root}, loaders.RootOnly)
			res := NewBuilder(g, opts).Run(context.Background(), errs)[0]
			if want, err := os.ReadFile(filepath.Join(dir, name+".err")); err == nil {
				if res.Err == nil || !strings.Contains(res.Err.Error(), string(want)) {
					t.Fatalf("error = %v, want one containing %q", res.Err, want)
				}
				return
			}
			want, err := os.ReadFile(filepath.Join(dir, name+".out"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil {
				t.Fatalf("build: %v", res.Err)
			}
			if string(res.YAML) != string(want) {
				t.Errorf("output differs from kustomize v5.8.2's\n--- kpipe\n%s\n--- kustomize v5.8.2\n%s", res.YAML, want)
			}
		})
	}
	if n < 9 {
		t.Fatalf("found %d cases in %s, want at least 9", n, dir)
	}
}

// TestOverlayNamespaceStaysInTheOverlay is the v5.8.0 regression: an
// overlay's namespace is not the base's, so a patch whose target names that
// namespace does not match the base's objects (the overlay's patches run
// before its namespace transformer), while a helm chart in the base, two
// levels down, still renders into the overlay's namespace.
func TestOverlayNamespaceStaysInTheOverlay(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml": "resources:\n- pvc.yaml\n",
		"base/pvc.yaml":           "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  resources:\n    requests:\n      storage: 50Gi\n",
		"prod/kustomization.yaml": "namespace: prod\nresources:\n- ../base\npatches:\n- target:\n    kind: PersistentVolumeClaim\n    namespace: prod\n  patch: '[{\"op\": \"replace\", \"path\": \"/spec/resources/requests/storage\", \"value\": \"20Gi\"}]'\n",
		"own/kustomization.yaml":  "namespace: own\nresources:\n- ../prod\n",
	})
	out := buildAll(t, []string{filepath.Join(root, "prod")}, 1)[0]
	if !strings.Contains(out, "storage: 50Gi") || !strings.Contains(out, "namespace: prod") {
		t.Errorf("want the base's 50Gi, unpatched, in namespace prod (v5.8.0 applied the patch):\n%s", out)
	}
	// prod reaches the base directly and through own: one base node, which
	// keeps no namespace of its own.
	g, _ := Load([]string{filepath.Join(root, "prod"), filepath.Join(root, "own")}, loaders.RootOnly)
	if len(g.Nodes) != 3 {
		t.Errorf("graph has %d nodes, want 3 (own, prod, base)", len(g.Nodes))
	}
	for key, n := range g.Nodes {
		if filepath.Base(n.Dir) == "base" && n.K.Namespace != "" {
			t.Errorf("base node %s took namespace %q from an overlay", key, n.K.Namespace)
		}
	}
}

// TestHelmChartsInheritTheNearestNamespace checks where a chart without a
// namespace renders: its kustomization's namespace, else the nearest
// referrer's, else none.
func TestHelmChartsInheritTheNearestNamespace(t *testing.T) {
	charts := []loaders.HelmChart{{Name: "a"}, {Name: "b", Namespace: "own"}}
	for _, tc := range []struct{ ns, inherited, wantA string }{
		{"k", "parent", "k"}, {"", "parent", "parent"}, {"", "", ""},
	} {
		got := chartsWithNamespace(charts, tc.ns, tc.inherited)
		if got[0].Namespace != tc.wantA || got[1].Namespace != "own" {
			t.Errorf("ns %q inherited %q: charts %+v, want a in %q and b in own", tc.ns, tc.inherited, got, tc.wantA)
		}
	}
	if charts[0].Namespace != "" {
		t.Error("chartsWithNamespace changed the parsed file's charts")
	}
}
