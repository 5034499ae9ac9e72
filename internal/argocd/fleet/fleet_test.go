package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/fleet"
	"github.com/kpipe/kpipe/internal/argocd/fleet/appsets"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/render"
)

const url = "https://example.com/r.git"

func tree(t *testing.T, files map[string]string) *render.Tree {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := render.DiskTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func appDoc(name, path string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: " + name + "\nspec:\n  source:\n    repoURL: " + url + "\n    path: " + path + "\n  destination:\n    namespace: ns\n"
}

// TestRunUnits: an Application defined twice fails (both files named),
// an ApplicationSet with a cluster generator is skipped with why, a list
// generator's Applications render, an Application outside the
// controller's namespace is named <namespace>_<name>.
func TestRunUnits(t *testing.T) {
	tr := tree(t, map[string]string{
		"k/kustomization.yaml": "resources:\n- cm.yaml\n",
		"k/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		"apps/one.yaml":        appDoc("dup", "k"),
		"apps/two.yml":         appDoc("dup", "k") + "---\n" + strings.Replace(appDoc("other", "k"), "metadata:\n", "metadata:\n  namespace: team\n", 1),
		"apps/sets.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: clusters
spec:
  generators:
  - clusters: {}
  template:
    metadata:
      name: '{{name}}'
    spec:
      source: {repoURL: ` + url + `, path: k}
      destination: {namespace: x}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: list
spec:
  generators:
  - list:
      elements:
      - env: a
      - env: b
  template:
    metadata:
      name: 'l-{{env}}'
    spec:
      source: {repoURL: ` + url + `, path: k}
      destination: {namespace: '{{env}}'}
`,
	})
	o := fleet.Options{Source: fleet.Source{Tree: tr, Repos: app.NewRepos(url), Renderer: render.New(render.Options{}), Settings: generate.Settings{}},
		Discover: fleet.DiscoverOptions{ApplicationSets: appsets.Expand}}
	res, err := fleet.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, rr := range res.Report.Roots {
		got[rr.Path] = rr.Status + " " + rr.Error + rr.Skipped
	}
	want := map[string]string{
		"applicationset/clusters": "skipped ApplicationSet clusters: the Clusters generator needs a cluster or the network",
		"dup":                     "error Application dup is defined 2 times (apps/one.yaml, apps/two.yml): Argo CD keeps one Application per name",
		"l-a":                     "ok ",
		"l-b":                     "ok ",
		"team_other":              "ok ",
	}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if m := string(res.Outputs["team_other"].Manifests); !strings.Contains(m, "argocd.argoproj.io/tracking-id: team_other:/ConfigMap:ns/cm") {
		t.Errorf("team_other:\n%s", m)
	}
}
