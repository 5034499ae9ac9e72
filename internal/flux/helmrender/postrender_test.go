package helmrender

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/helmtest"

	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/helmrelease"
)

// A kustomize post-renderer is kustomize v5.8.1 over helm's output with
// no reordering: images and patches apply to every object, hooks
// included (helm-controller's combined strategy), and the objects keep
// helm's order (a Namespace after a Deployment stays there).
func TestKustomizePostRenderer(t *testing.T) {
	helmOut := `---
# Source: c/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.0
---
# Source: c/templates/ns.yaml
apiVersion: v1
kind: Namespace
metadata:
  name: web
---
# Source: c/templates/hook.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-install
spec:
  template:
    spec:
      containers:
      - name: m
        image: nginx:1.0
`
	var k helmrelease.Kustomize
	if err := json.Unmarshal([]byte(`{"images":[{"name":"nginx","newTag":"2.0"}],"patches":[{"target":{"kind":"Job"},"patch":"- op: add\n  path: /metadata/labels\n  value: {patched: \"yes\"}\n"}]}`), &k); err != nil {
		t.Fatal(err)
	}
	out, _, err := kustomize(context.Background(), &k, []byte(helmOut))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Count(s, "image: nginx:2.0") != 2 || !strings.Contains(s, "patched: \"yes\"") {
		t.Fatalf("images and patches not applied to every object, hooks included:\n%s", s)
	}
	if d, n, j := strings.Index(s, "kind: Deployment"), strings.Index(s, "kind: Namespace"), strings.Index(s, "kind: Job"); !(d < n && n < j) {
		t.Fatalf("reordered:\n%s", s)
	}
	if strings.Contains(s, "# Source") {
		t.Fatalf("helm's comments are kept (kustomize drops them):\n%s", s)
	}

	// A patch that does not apply fails the HelmRelease.
	if err := json.Unmarshal([]byte(`{"patches":[{"target":{"kind":"Job"},"patch":"- op: replace\n  path: /spec/nope/x\n  value: 1\n"}]}`), &k); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kustomize(context.Background(), &k, []byte(helmOut)); err == nil {
		t.Fatal("a patch that does not apply: no error")
	}
}

// A chart of a path source may not leave it: a symbolic link out of the
// repository fails the HelmRelease, naming the chart, and nothing is
// read there.
func TestPathChartConfined(t *testing.T) {
	helm := helmtest.V3(t)
	root, outside := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{
		"charts/c/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"charts/c/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"charts/d/Chart.yaml":        "apiVersion: v2\nname: d\nversion: 1.0.0\n",
		"charts/d/templates/.keep":   "",
		"charts/e/Chart.yaml":        "apiVersion: v2\nname: e\nversion: 1.0.0\n",
		"charts/e/values.yaml":       "x: default\nz: default\n",
		"charts/e/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: e}\ndata: {x: \"{{ .Values.x }}\", z: \"{{ .Values.z }}\"}\n",
		"values/e.yaml":              "x: from-values-file\n",
	})
	writeFiles(t, outside, map[string]string{"secret.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\n", "chart/Chart.yaml": "apiVersion: v2\nname: x\nversion: 1.0.0\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(root, "charts/d/templates/leak.yaml")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "chart"), filepath.Join(root, "charts/out")); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, helm, t.TempDir(), true)
	r := New(Options{Engine: e.engine(), Remote: e.remote})
	render := func(chart string, extra ...string) *cluster.Result {
		obj := `{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"x","namespace":"web"},"spec":{"interval":"1m","chart":{"spec":{"chart":"` + chart + `",` + strings.Join(extra, "") + `"sourceRef":{"kind":"GitRepository","name":"flux-system","namespace":"flux-system"}}}}}`
		return r.Render(context.Background(), cluster.HelmRelease{ID: "web/x", Object: []byte(obj),
			SourceDir: func(string, string, string) (string, error) { return root, nil }})
	}
	if res := render("./charts/c"); res.Err != "" || !strings.Contains(string(res.YAML), "name: c\n") {
		t.Fatalf("a chart inside the source: %+v", res)
	}
	if res := render("../../charts/c"); res.Err != "" || !strings.Contains(string(res.YAML), "name: c\n") {
		t.Fatalf("'..' stops at the source's top, as securejoin: %+v", res)
	}
	// valuesFiles (paths in the source) replace the chart's values.yaml.
	res := render("./charts/e", `"valuesFiles":["values/e.yaml"],`)
	if res.Err != "" || !strings.Contains(string(res.YAML), "x: from-values-file\n") || !strings.Contains(string(res.YAML), "z: \"\"\n") ||
		len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "generation") {
		t.Fatalf("valuesFiles: %+v\n%s", res, res.YAML)
	}
	if res := render("./charts/e", `"valuesFiles":["values/missing.yaml"],`); !strings.Contains(res.Err, "no values file found at path") {
		t.Fatalf("a missing values file: %+v", res)
	}
	for _, chart := range []string{"./charts/d", "./charts/out"} {
		res := render(chart)
		if !strings.Contains(res.Err, "HelmRelease web/x") || !strings.Contains(res.Err, "outside the source") || strings.Contains(string(res.YAML), "stolen") {
			t.Errorf("chart %s: %+v", chart, res)
		}
	}
}
