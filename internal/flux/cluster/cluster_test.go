package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
)

// ks is a Flux Kustomization document.
func ks(name, path, extra string) string {
	return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: " + path +
		"\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n" + extra
}

// repo is a small Flux repository: a cluster directory applying a
// cluster-settings ConfigMap and two Kustomizations, one of which
// substitutes from the ConfigMap and renders a third.
func repo() map[string]string {
	return map[string]string{
		"clusters/prod/settings.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  DOMAIN: example.org\n",
		"clusters/prod/apps.yaml":      ks("apps", "./apps/prod", "  dependsOn:\n  - name: infra\n  - name: missing\n  postBuild:\n    substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"),
		"clusters/prod/infra.yaml":     ks("infra", "./infra", ""),
		"apps/prod/kustomization.yaml": "resources:\n- ../base\n- child.yaml\n",
		"apps/prod/child.yaml":         ks("app-a", "./apps/a", "  targetNamespace: a\n"),
		"apps/base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"apps/base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: web\ndata:\n  host: web.${DOMAIN}\n",
		"apps/a/deploy.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: nginx\n",
		"infra/ns.yaml":                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra\n",
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runOn runs the cluster directory clusters/prod of root.
func runOn(t *testing.T, root string, o Options) *Report {
	t.Helper()
	r, err := ClusterRoot(root, filepath.Join(root, "clusters/prod"))
	if err != nil {
		t.Fatal(err)
	}
	o.Cwd, o.SourceRoot = root, root
	if o.Engine.Jobs == 0 {
		o.Engine.Jobs = 2
	}
	rep, err := Run(context.Background(), []Root{r}, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// byID returns the report's entries by Kustomization.
func byID(rep *Report) map[string]int {
	m := map[string]int{}
	for i, rr := range rep.Roots {
		m[rr.Path] = i
	}
	return m
}

func TestRunRendersTheCluster(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, repo())
	out := filepath.Join(t.TempDir(), "out")
	rep := runOn(t, root, Options{OutDir: out})
	ids := byID(rep)
	for _, id := range []string{"flux-system/flux-system", "flux-system/apps", "flux-system/infra", "flux-system/app-a"} {
		i, ok := ids[id]
		if !ok {
			t.Fatalf("%s not rendered; report: %+v", id, rep.Roots)
		}
		if rr := rep.Roots[i]; rr.Status != "ok" {
			t.Errorf("%s: %s", id, rr.Error)
		}
	}
	if len(rep.Roots) != 4 {
		t.Errorf("%d Kustomizations, want 4", len(rep.Roots))
	}
	apps, err := os.ReadFile(filepath.Join(out, "flux-system/apps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(apps), "host: web.example.org") {
		t.Errorf("apps was not substituted from cluster-settings:\n%s", apps)
	}
	a, _ := os.ReadFile(filepath.Join(out, "flux-system/app-a.yaml"))
	if !strings.Contains(string(a), "namespace: a\n") || !strings.Contains(string(a), "kustomize.toolkit.fluxcd.io/name: app-a") {
		t.Errorf("app-a:\n%s", a)
	}
	k := rep.Kustomizations[ids["flux-system/app-a"]]
	if k.RenderedBy != "flux-system/apps" {
		t.Errorf("app-a rendered by %q", k.RenderedBy)
	}
	k = rep.Kustomizations[ids["flux-system/apps"]]
	if strings.Join(k.DependsOn, ",") != "flux-system/infra,flux-system/missing" {
		t.Errorf("apps depends on %v", k.DependsOn)
	}
	warned := false
	for _, w := range rep.Roots[ids["flux-system/apps"]].Warnings {
		warned = warned || strings.Contains(w.Message, "dependsOn flux-system/missing")
	}
	if !warned {
		t.Errorf("no warning about the missing dependsOn: %+v", rep.Roots[ids["flux-system/apps"]].Warnings)
	}

	// With --dry-run semantics nothing is substituted from the ConfigMap.
	rep = runOn(t, root, Options{DryRun: true})
	if y := rep.Result(byID(rep)["flux-system/apps"]).YAML; !strings.Contains(string(y), "host: web.${DOMAIN}") {
		t.Errorf("dry run substituted:\n%s", y)
	}
}

// A node is taken from its record when nothing it read changed; an edit
// renders again exactly the nodes whose inputs it touches (and those whose
// variables come from it).
func TestRunCachedByContent(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, repo())
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	o := Options{Engine: engine.Options{Cache: engine.Cache{Store: store, Files: store.FileIndex(), Version: "test"}}}
	first := runOn(t, root, o)
	upToDate := func(rep *Report) map[string]bool {
		m := map[string]bool{}
		for _, rr := range rep.Roots {
			if rr.Status != "ok" {
				t.Fatalf("%s: %s", rr.Path, rr.Error)
			}
			m[rr.Path] = rr.UpToDate
		}
		return m
	}
	for id, up := range upToDate(first) {
		if up {
			t.Errorf("%s up to date on the first run", id)
		}
	}
	o.Engine.Cache.Files = store.FileIndex() // a new run's index
	second := runOn(t, root, o)
	for id, up := range upToDate(second) {
		if !up {
			t.Errorf("%s rendered again though nothing changed", id)
		}
	}
	for i := range first.Roots {
		if string(first.Result(i).YAML) != string(second.Result(i).YAML) {
			t.Errorf("%s: the cached output differs", first.Roots[i].Path)
		}
	}
	// An edit under infra: infra only.
	writeTree(t, root, map[string]string{"infra/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra2\n"})
	o.Engine.Cache.Files = store.FileIndex()
	got := upToDate(runOn(t, root, o))
	if got["flux-system/infra"] || !got["flux-system/apps"] || !got["flux-system/app-a"] || !got["flux-system/flux-system"] {
		t.Errorf("after editing infra: up to date %v", got)
	}
	// A new file in a generated path changes what is generated.
	writeTree(t, root, map[string]string{"apps/a/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n"})
	o.Engine.Cache.Files = store.FileIndex()
	rep := runOn(t, root, o)
	got = upToDate(rep)
	if got["flux-system/app-a"] || !got["flux-system/apps"] {
		t.Errorf("after adding apps/a/svc.yaml: up to date %v", got)
	}
	if y := rep.Result(byID(rep)["flux-system/app-a"]).YAML; !strings.Contains(string(y), "kind: Service") {
		t.Errorf("app-a lacks the new Service:\n%s", y)
	}
	// The cluster settings: the cluster directory's own node and apps,
	// whose variables change.
	writeTree(t, root, map[string]string{"clusters/prod/settings.yaml": strings.Replace(repo()["clusters/prod/settings.yaml"], "example.org", "example.net", 1)})
	o.Engine.Cache.Files = store.FileIndex()
	rep = runOn(t, root, o)
	got = upToDate(rep)
	if got["flux-system/flux-system"] || got["flux-system/apps"] || !got["flux-system/infra"] {
		t.Errorf("after editing the settings: up to date %v", got)
	}
	if y := rep.Result(byID(rep)["flux-system/apps"]).YAML; !strings.Contains(string(y), "host: web.example.net") {
		t.Errorf("apps not substituted anew:\n%s", y)
	}
}

func TestRunRefusesCycles(t *testing.T) {
	root := t.TempDir()
	files := repo()
	// app-a renders apps back.
	files["apps/prod/child.yaml"] = ks("app-a", "./apps/a", "")
	files["apps/a/back.yaml"] = ks("apps", "./apps/prod", "")
	writeTree(t, root, files)
	rep := runOn(t, root, Options{})
	rr := rep.Roots[byID(rep)["flux-system/app-a"]]
	if rr.Status != "error" || rr.Error != "Kustomizations render each other in a cycle: flux-system/apps -> flux-system/app-a -> flux-system/apps" {
		t.Errorf("app-a: %s %q", rr.Status, rr.Error)
	}
}

func TestRunRefusesTwoRenderingsOfOneKustomization(t *testing.T) {
	root := t.TempDir()
	files := repo()
	files["infra/app-a.yaml"] = ks("app-a", "./apps/a", "  targetNamespace: other\n")
	writeTree(t, root, files)
	rep := runOn(t, root, Options{})
	rr := rep.Roots[byID(rep)["flux-system/app-a"]]
	if rr.Status != "error" || !strings.Contains(rr.Error, "rendered differently by") {
		t.Errorf("app-a: %s %s", rr.Status, rr.Error)
	}
}

func TestRunPrunesAndChecks(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, repo())
	out := filepath.Join(t.TempDir(), "out")
	runOn(t, root, Options{OutDir: out})
	// Check: nothing differs.
	rep := runOn(t, root, Options{OutDir: out, Check: true})
	if rep.Summary.OutOfDate != 0 || len(rep.Orphans) != 0 {
		t.Errorf("check after a run: %d out of date, orphans %v", rep.Summary.OutOfDate, rep.Orphans)
	}
	// infra is gone: --check names its output, --prune deletes it.
	if err := os.Remove(filepath.Join(root, "clusters/prod/infra.yaml")); err != nil {
		t.Fatal(err)
	}
	rep = runOn(t, root, Options{OutDir: out, Check: true})
	if strings.Join(rep.Orphans, ",") != "flux-system/infra.yaml" {
		t.Errorf("orphans %v", rep.Orphans)
	}
	rep = runOn(t, root, Options{OutDir: out, Prune: true})
	if strings.Join(rep.Pruned, ",") != "flux-system/infra.yaml" {
		t.Errorf("pruned %v", rep.Pruned)
	}
	if _, err := os.Stat(filepath.Join(out, "flux-system/infra.yaml")); !os.IsNotExist(err) {
		t.Errorf("infra's output is still there: %v", err)
	}
}

// HelmReleases a Flux Kustomization renders are listed in the report, and
// with Options.HelmReleases each is a node of its own: given its object
// as rendered and a lookup of what the cluster renders (valuesFrom), its
// output written beside the Kustomizations'.
func TestRunHelmReleaseSeam(t *testing.T) {
	root := t.TempDir()
	files := repo()
	files["infra/hr.yaml"] = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: infra\nspec:\n  chart:\n    spec:\n      chart: podinfo\n  valuesFrom:\n  - kind: ConfigMap\n    name: cluster-settings\n"
	writeTree(t, root, files)
	rep := runOn(t, root, Options{})
	k := rep.Kustomizations[byID(rep)["flux-system/infra"]]
	if strings.Join(k.HelmReleases, ",") != "infra/podinfo" {
		t.Errorf("infra's HelmReleases: %v", k.HelmReleases)
	}
	out := filepath.Join(t.TempDir(), "out")
	var seen []string
	var mu sync.Mutex
	rep = runOn(t, root, Options{OutDir: out, HelmReleases: func(_ context.Context, hr HelmRelease) *Result {
		mu.Lock()
		seen = append(seen, hr.ID+" by "+hr.RenderedBy)
		mu.Unlock()
		p, ok := hr.Lookup("ConfigMap", "flux-system", "cluster-settings")
		if !ok {
			return &Result{Err: "cluster-settings not found"}
		}
		return &Result{YAML: []byte("domain: " + p.Data["DOMAIN"] + "\n")}
	}})
	if strings.Join(seen, ",") != "infra/podinfo by flux-system/infra" {
		t.Errorf("rendered %v", seen)
	}
	rr := rep.Roots[byID(rep)["HelmRelease infra/podinfo"]]
	if rr.Status != "ok" {
		t.Fatalf("HelmRelease entry: %+v", rr)
	}
	if data, err := os.ReadFile(filepath.Join(out, "infra/podinfo.helmrelease.yaml")); err != nil || string(data) != "domain: example.org\n" {
		t.Errorf("output: %q %v", data, err)
	}
}
