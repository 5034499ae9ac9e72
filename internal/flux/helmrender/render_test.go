package helmrender

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kpipe/kpipe/internal/helmtest"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/diff"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/fetch/netfetch"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/fluxdiff"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// copyExample copies testdata/flux-helm (the example of docs/flux.md) to
// a temporary directory.
func copyExample(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "testdata", "flux-helm")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFiles(t, dst, map[string]string{filepath.ToSlash(rel): string(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// env is a run's settings: a cache and a fetcher under dir.
type env struct {
	helm    string
	store   *cache.Store
	remote  *fetch.Fetcher
	offline bool
}

func newEnv(t *testing.T, helm, dir string, offline bool) *env {
	t.Helper()
	store := cache.Open(context.Background(), cache.Options{Dir: filepath.Join(dir, "cache")})
	t.Cleanup(func() { store.Close() })
	return &env{helm: helm, store: store, offline: offline,
		remote: fetch.New(fetch.Options{Dir: filepath.Join(dir, "remote"), Offline: offline, Net: netfetch.New(nil)})}
}

func (e *env) engine() engine.Options {
	return engine.Options{Jobs: 2, EnableHelm: true, Helm: engine.HelmOptions{Command: e.helm},
		Cache: engine.Cache{Store: e.store, Files: e.store.FileIndex(), Version: "test"}}
}

// run renders the cluster directory clusters/prod of root with its
// HelmReleases, into out, and returns the report's entry of each.
func (e *env) run(t *testing.T, root, out string) map[string]batch.RootReport {
	t.Helper()
	r, err := cluster.ClusterRoot(root, filepath.Join(root, "clusters/prod"))
	if err != nil {
		t.Fatal(err)
	}
	eo := e.engine()
	rep, err := cluster.Run(context.Background(), []cluster.Root{r}, cluster.Options{Cwd: root, SourceRoot: root, OutDir: out,
		Engine: eo, Remote: e.remote, HelmReleases: New(Options{Engine: eo, Remote: e.remote}).Render})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]batch.RootReport{}
	for _, rr := range rep.Roots {
		m[rr.Path] = rr
	}
	return m
}

// expected is what kpipe renders for a HelmRelease whose post-renderers
// add annotations (by kind): helm's output, post-rendered, with the
// origin labels, printed as Flux prints.
func expected(t *testing.T, helmOut []byte, name, namespace string, annotate map[string]map[string]string) []byte {
	t.Helper()
	objs, err := postbuild.Decode(helmOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("helm rendered nothing:\n%s", helmOut)
	}
	for _, obj := range objs {
		md := obj["metadata"].(map[string]any)
		if a := annotate[obj["kind"].(string)]; a != nil {
			m := map[string]any{}
			for k, v := range a {
				m[k] = v
			}
			md["annotations"] = m
		}
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		labels["helm.toolkit.fluxcd.io/name"] = name
		labels["helm.toolkit.fluxcd.io/namespace"] = namespace
	}
	out, err := postbuild.Encode(objs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestInRepoChart renders testdata/flux-helm: a HelmRelease of a chart
// in the repository (GitRepository flux-system), its values from a
// ConfigMap the cluster renders and inline, a kustomize post-renderer.
// The output is `helm template` of the chart with the merged values
// (written by hand), post-rendered; a warm run runs no helm; a change of
// the ConfigMap's values renders it again.
func TestInRepoChart(t *testing.T) {
	helm := helmtest.V3(t)
	root := copyExample(t)
	e := newEnv(t, helm, t.TempDir(), false)
	out := filepath.Join(t.TempDir(), "out")

	rep := e.run(t, root, out)
	rr, ok := rep["HelmRelease web/hello"]
	if !ok || rr.Status != "ok" || rr.Cached || rr.StageMisses != 1 {
		t.Fatalf("first run: %+v (report %v)", rr, rep)
	}
	got := readFile(t, filepath.Join(out, "web", "hello.helmrelease.yaml"))
	ref := t.TempDir()
	writeFiles(t, ref, map[string]string{"values.yaml": "greeting: hello from flux\nimage: {tag: \"1.27.1\"}\nreplicas: 3\n"})
	helmOut := helmtest.Run(t, ref, helm, "template", "hello", filepath.Join(root, "charts", "hello"), "--namespace", "web",
		"-f", filepath.Join(ref, "values.yaml"), "--include-crds", "--skip-tests")
	want := expected(t, helmOut, "hello", "web", map[string]map[string]string{"Deployment": {"team": "web"}})
	if !bytes.Equal(got, want) {
		t.Fatalf("rendered\n%s\nhelm template with the merged values, post-rendered\n%s", got, want)
	}
	for _, s := range []string{"replicas: 3", "image: nginx:1.27.1", "greeting: hello from flux", "team: web"} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("the output lacks %q:\n%s", s, got)
		}
	}

	// Warm: taken from the cache, helm not run.
	rep = e.run(t, root, out)
	if rr := rep["HelmRelease web/hello"]; rr.Status != "ok" || !rr.Cached || rr.StageMisses != 0 || rr.StageHits != 1 {
		t.Fatalf("warm run: %+v", rr)
	}
	if again := readFile(t, filepath.Join(out, "web", "hello.helmrelease.yaml")); !bytes.Equal(again, got) {
		t.Fatalf("the warm run's output differs:\n%s", again)
	}

	// The values from the ConfigMap change: rendered again.
	cm := filepath.Join(root, "apps", "values.yaml")
	if err := os.WriteFile(cm, bytes.Replace(readFile(t, cm), []byte(`"1.27.1"`), []byte(`"1.27.2"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	rep = e.run(t, root, out)
	if rr := rep["HelmRelease web/hello"]; rr.Status != "ok" || rr.Cached || rr.StageMisses != 1 {
		t.Fatalf("after a values change: %+v", rr)
	}
	if got := readFile(t, filepath.Join(out, "web", "hello.helmrelease.yaml")); !bytes.Contains(got, []byte("image: nginx:1.27.2")) {
		t.Fatalf("after a values change:\n%s", got)
	}

	// Without --enable-helm nothing runs.
	eo := e.engine()
	eo.EnableHelm = false
	res := New(Options{Engine: eo}).Render(context.Background(), cluster.HelmRelease{ID: "web/hello",
		Object: []byte(`{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"hello","namespace":"web"},"spec":{"interval":"1m","chart":{"spec":{"chart":"./charts/hello","sourceRef":{"kind":"GitRepository","name":"flux-system","namespace":"flux-system"}}}}}`)})
	if !strings.Contains(res.Err, "needs --enable-helm") || res.HelmRuns != 0 {
		t.Fatalf("without EnableHelm: %+v", res)
	}
}

// helloChart is a chart whose output shows its values and version.
func helloChart(version string) map[string]string {
	return map[string]string{
		"hello/Chart.yaml":  "apiVersion: v2\nname: hello\nversion: " + version + "\n",
		"hello/values.yaml": "greeting: hi\nreplicas: 1\n",
		"hello/templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-hello
  labels: {helm.sh/chart: "{{ .Chart.Name }}-{{ .Chart.Version }}"}
data:
  greeting: {{ .Values.greeting | quote }}
  replicas: "{{ .Values.replicas }}"
  namespace: {{ .Release.Namespace }}
`,
	}
}

// httpCluster is a cluster rendering a HelmRepository and a HelmRelease
// of its chart hello in a version range, with values from a ConfigMap.
func httpCluster(repoURL, greeting string) map[string]string {
	return map[string]string{
		"clusters/prod/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
		"apps/repo.yaml":          "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: flux-system}\nspec: {interval: 1h, url: \"" + repoURL + "\"}\n",
		"apps/values.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello-values, namespace: apps}\ndata:\n  values.yaml: |\n    greeting: " + greeting + "\n",
		"apps/hr.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: hello, namespace: apps}
spec:
  interval: 1h
  targetNamespace: web
  chart:
    spec:
      chart: hello
      version: "~1.0"
      sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}
  valuesFrom:
  - {kind: ConfigMap, name: hello-values}
  values:
    replicas: 2
`,
	}
}

// TestHTTPRepositoryChart serves a chart repository (charts packaged and
// indexed by helm) on 127.0.0.1 and renders a HelmRelease of it: the
// version range resolved as source-controller resolves it (1.0.3, not
// 1.1.0 nor a pre-release), the chart pulled and kept, the output that
// of `helm template` of the archive with the merged values. Warm, no
// helm runs; offline, the kept chart and resolution serve a change of
// values; offline with nothing kept, the HelmRelease fails saying why.
func TestHTTPRepositoryChart(t *testing.T) {
	helm := helmtest.V3(t)
	src, repo := t.TempDir(), t.TempDir()
	for _, v := range []string{"1.0.0", "1.0.3", "1.1.0", "1.0.4-rc.1"} {
		dir := filepath.Join(src, v)
		writeFiles(t, dir, helloChart(v))
		helmtest.Run(t, dir, helm, "package", filepath.Join(dir, "hello"), "--destination", repo)
	}
	helmtest.Run(t, repo, helm, "repo", "index", repo)
	var mu sync.Mutex
	var requests []string
	files := http.StripPrefix("/charts", http.FileServer(http.Dir(repo)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()

	root := t.TempDir()
	writeFiles(t, root, httpCluster(srv.URL+"/charts", "from-configmap"))
	dir := t.TempDir()
	e := newEnv(t, helm, dir, false)
	out := filepath.Join(t.TempDir(), "out")
	rep := e.run(t, root, out)
	rr := rep["HelmRelease apps/hello"]
	if rr.Status != "ok" || rr.Cached || rr.StageMisses != 1 {
		t.Fatalf("first run: %+v", rr)
	}
	got := readFile(t, filepath.Join(out, "apps", "hello.helmrelease.yaml"))
	ref := t.TempDir()
	writeFiles(t, ref, map[string]string{"values.yaml": "greeting: from-configmap\nreplicas: 2\n"})
	helmOut := helmtest.Run(t, ref, helm, "template", "web-hello", filepath.Join(repo, "hello-1.0.3.tgz"), "--namespace", "web",
		"-f", filepath.Join(ref, "values.yaml"), "--include-crds", "--skip-tests")
	if want := expected(t, helmOut, "hello", "apps", nil); !bytes.Equal(got, want) {
		t.Fatalf("rendered\n%s\nhelm template of hello 1.0.3 with the merged values\n%s", got, want)
	}
	for _, s := range []string{"helm.sh/chart: hello-1.0.3", "greeting: from-configmap", `replicas: "2"`, "namespace: web"} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("the output lacks %q:\n%s", s, got)
		}
	}

	// Warm: the index is read again (a range may resolve to a newer
	// chart), the kept chart is not pulled again, helm does not run.
	mu.Lock()
	requests = nil
	mu.Unlock()
	if rr := e.run(t, root, out)["HelmRelease apps/hello"]; rr.Status != "ok" || !rr.Cached || rr.StageMisses != 0 {
		t.Fatalf("warm run: %+v", rr)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(requests, ",") != "/charts/index.yaml" {
		t.Errorf("the warm run requested %v, want the index alone", requests)
	}

	// Offline, with what is kept: a change of values renders with the
	// kept chart and the range's kept resolution.
	srv.Close()
	writeFiles(t, root, map[string]string{"apps/values.yaml": httpCluster("", "offline")["apps/values.yaml"]})
	off := newEnv(t, helm, dir, true)
	off.store.Close()
	off.store = e.store
	if rr := off.run(t, root, out)["HelmRelease apps/hello"]; rr.Status != "ok" || rr.Cached || rr.StageMisses != 1 {
		t.Fatalf("offline with the chart kept: %+v", rr)
	}
	if got := readFile(t, filepath.Join(out, "apps", "hello.helmrelease.yaml")); !bytes.Contains(got, []byte("greeting: offline")) || !bytes.Contains(got, []byte("hello-1.0.3")) {
		t.Fatalf("offline with the chart kept:\n%s", got)
	}

	// Offline with nothing kept: a clear failure, no output.
	empty := newEnv(t, helm, t.TempDir(), true)
	out2 := filepath.Join(t.TempDir(), "out")
	rr = empty.run(t, root, out2)["HelmRelease apps/hello"]
	if rr.Status != "error" || !strings.Contains(rr.Error, "--offline") || !strings.Contains(rr.Error, "HelmRelease apps/hello") {
		t.Fatalf("offline with nothing kept: %+v", rr)
	}
	if _, err := os.Stat(filepath.Join(out2, "apps", "hello.helmrelease.yaml")); !os.IsNotExist(err) {
		t.Fatalf("offline with nothing kept wrote an output: %v", err)
	}
	// An exact version offline, nothing kept: the fetcher's refusal.
	writeFiles(t, root, map[string]string{"apps/hr.yaml": strings.Replace(httpCluster("", "")["apps/hr.yaml"], `"~1.0"`, `"1.0.3"`, 1)})
	rr = empty.run(t, root, out2)["HelmRelease apps/hello"]
	if rr.Status != "error" || !strings.Contains(rr.Error, "--offline forbids pulling it") {
		t.Fatalf("offline, an exact version, nothing kept: %+v", rr)
	}
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// review is kpipe diff --flux clusters/prod of the working tree of dir
// against HEAD, with the HelmReleases rendered.
func (e *env) review(t *testing.T, dir string) map[string]diff.RootDiff {
	t.Helper()
	m, _ := e.reviewBecause(t, dir)
	return m
}

// reviewBecause is review, with the changed paths that reach each
// entry (affected --flux's "because").
func (e *env) reviewBecause(t *testing.T, dir string) (map[string]diff.RootDiff, map[string][]string) {
	t.Helper()
	eo := e.engine()
	res, err := fluxdiff.Review(context.Background(), fluxdiff.Options{Dir: dir, ClusterDirs: []string{"clusters/prod"}, Base: "HEAD",
		Cluster: cluster.Options{Engine: eo, Remote: e.remote, HelmReleases: New(Options{Engine: eo, Remote: e.remote}).Render}})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]diff.RootDiff{}
	for _, rd := range res.Roots {
		m[rd.Path] = rd
	}
	return m, res.Because
}

// TestDiffNamesHelmReleases: kpipe diff --flux names a HelmRelease whose
// rendering changes: when its values change (with the Kustomization that
// renders it, whose object changed), and alone when only its chart
// changes (the old side's chart read from git's objects).
func TestDiffNamesHelmReleases(t *testing.T) {
	helm := helmtest.V3(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed (apt-get install git)")
	}
	root := copyExample(t)
	gitRun(t, root, "init", "-q", "-b", "main")
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-qm", "base")
	e := newEnv(t, helm, t.TempDir(), false)

	if got := e.review(t, root); len(got) != 0 {
		t.Fatalf("no change, yet diff --flux names %v", got)
	}

	hr := filepath.Join(root, "apps", "hello.yaml")
	orig := readFile(t, hr)
	if err := os.WriteFile(hr, bytes.Replace(orig, []byte("replicas: 3"), []byte("replicas: 4"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	got, because := e.reviewBecause(t, root)
	if b := strings.Join(because["HelmRelease web/hello"], ","); b != "apps/hello.yaml" {
		t.Errorf("values changed: the HelmRelease's changed reads are %q, want apps/hello.yaml", b)
	}
	rd, ok := got["HelmRelease web/hello"]
	if !ok || rd.Status != diff.RootChanged || len(rd.Changes) != 1 || rd.Changes[0].ID.Kind != "Deployment" || !strings.Contains(rd.Changes[0].Diff, "+  replicas: 4") {
		t.Fatalf("values changed: HelmRelease web/hello: %+v (all: %v)", rd, got)
	}
	if _, ok := got["flux-system/apps"]; !ok || len(got) != 2 {
		t.Fatalf("values changed: want the HelmRelease and the Kustomization rendering it, got %v", got)
	}

	if err := os.WriteFile(hr, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	cm := filepath.Join(root, "charts", "hello", "templates", "configmap.yaml")
	if err := os.WriteFile(cm, append(readFile(t, cm), []byte("  extra: \"1\"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	got, because = e.reviewBecause(t, root)
	if b := strings.Join(because["HelmRelease web/hello"], ","); b != "charts/hello/templates/configmap.yaml" {
		t.Errorf("chart changed: the HelmRelease's changed reads are %q", b)
	}
	rd, ok = got["HelmRelease web/hello"]
	if !ok || len(got) != 1 || rd.Status != diff.RootChanged || len(rd.Changes) != 1 || rd.Changes[0].ID.Kind != "ConfigMap" {
		t.Fatalf("chart changed: want the HelmRelease alone, got %v", got)
	}
	// With an empty cache: the old side's chart is read from git's
	// objects.
	cold := newEnv(t, helm, t.TempDir(), false)
	if again := cold.review(t, root); len(again) != 1 || again["HelmRelease web/hello"].Changes[0].Diff != rd.Changes[0].Diff {
		t.Fatalf("chart changed, cold cache: %v", again)
	}
}
