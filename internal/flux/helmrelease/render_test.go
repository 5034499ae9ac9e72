package helmrelease

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/helmtest"
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

// helloChart is a chart whose output shows its values, release and
// capabilities, with a CRD and a test hook.
func helloChart(version string) map[string]string {
	return map[string]string{
		"hello/Chart.yaml":  "apiVersion: v2\nname: hello\nversion: " + version + "\n",
		"hello/values.yaml": "greeting: hi\nreplicas: 1\nbig: 1\nnested: {keep: default, drop: default}\n",
		"hello/crds/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: greetings.example.com}
spec: {group: example.com, names: {kind: Greeting, plural: greetings}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}
`,
		"hello/templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-hello
  labels: {helm.sh/chart: "{{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}"}
data:
  greeting: {{ .Values.greeting | quote }}
  replicas: "{{ .Values.replicas }}"
  big: "{{ .Values.big }}"
  namespace: {{ .Release.Namespace }}
  kube: {{ .Capabilities.KubeVersion.Version }}
  values: {{ toJson .Values | quote }}
`,
		"hello/templates/tests/test.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations: {helm.sh/hook: test}
spec: {containers: [{name: t, image: busybox}]}
`,
	}
}

// tree is what a Flux Kustomization renders: the HelmRelease, its
// repository and the objects its values come from.
const tree = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: flux-system}
spec: {interval: 1h, url: "REPO"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hello-values, namespace: apps}
data:
  values.yaml: |
    greeting: from-configmap
    nested: {drop: null, added: cm}
---
apiVersion: v1
kind: Secret
metadata: {name: hello-secret, namespace: apps}
data: {replicas: NTAwMDAwMA==}
---
apiVersion: helm.toolkit.fluxcd.io/v2
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
  - {kind: Secret, name: hello-secret, valuesKey: replicas, targetPath: replicas}
  values:
    big: 5000000
`

// wantValues are the values helm-controller merges for tree's
// HelmRelease, written out by hand: replicas, set by a targetPath, is the
// integer 5000000; big, from spec.values, the number 5e+06.
const wantValues = "greeting: from-configmap\nnested: {drop: null, added: cm}\nbig: 5000000\n"

// TestHTTPRepositoryRender serves a chart repository (charts packaged and
// indexed by helm) on 127.0.0.1, renders tree's HelmRelease through it
// and compares the output with `helm template` of the same chart with the
// merged values written by hand.
func TestHTTPRepositoryRender(t *testing.T) {
	helm := helmtest.V3(t)
	src, repo := t.TempDir(), t.TempDir()
	for _, v := range []string{"1.0.0", "1.0.3", "1.1.0", "1.0.4-rc.1"} {
		dir := filepath.Join(src, v)
		writeFiles(t, dir, helloChart(v))
		helmtest.Run(t, dir, helm, "package", filepath.Join(dir, "hello"), "--destination", repo)
	}
	helmtest.Run(t, repo, helm, "repo", "index", repo)
	srv := httptest.NewServer(http.StripPrefix("/charts", http.FileServer(http.Dir(repo))))
	defer srv.Close()

	objs, hr := loadTree(t, strings.Replace(tree, "REPO", srv.URL+"/charts", 1))
	cs, err := ResolveChart(hr, objs, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Type != TypeHelmHTTP || cs.URL != srv.URL+"/charts/" || cs.Chart != "hello" || cs.Version != "~1.0" {
		t.Fatalf("%+v", cs)
	}
	chart, err := (&Repository{URL: cs.URL}).Pull(context.Background(), cs.Chart, cs.Version)
	if err != nil {
		t.Fatal(err)
	}
	if chart.Version != "1.0.3" || chart.URL != srv.URL+"/charts/hello-1.0.3.tgz" {
		t.Fatalf("pulled %s from %s, want the newest stable 1.0.x: 1.0.3", chart.Version, chart.URL)
	}
	work := t.TempDir()
	tgz := filepath.Join(work, "hello-"+chart.Version+".tgz")
	if err := os.WriteFile(tgz, chart.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	got := render(t, helm, hr, objs, tgz)

	// The reference: helm template of the repository's archive with the
	// values helm-controller merges.
	ref := t.TempDir()
	writeFiles(t, ref, map[string]string{"values.yaml": wantValues})
	want := helmtest.Run(t, ref, helm, "template", "web-hello", filepath.Join(repo, "hello-1.0.3.tgz"), "--namespace", "web",
		"-f", filepath.Join(ref, "values.yaml"), "--set", "replicas=5000000", "--include-crds", "--skip-tests")
	if !bytes.Equal(got, want) {
		t.Fatalf("rendered\n%s\nhelm template with the merged values\n%s", got, want)
	}
	for _, s := range []string{"name: greetings.example.com", `replicas: "5000000"`, `big: "5e+06"`, "namespace: web", "name: web-hello-hello",
		`greeting: "from-configmap"`, `\"nested\":{\"added\":\"cm\",\"keep\":\"default\"}`} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("the output lacks %q:\n%s", s, got)
		}
	}
	if bytes.Contains(got, []byte("web-hello-test")) {
		t.Errorf("the test hook is rendered (tests are not enabled):\n%s", got)
	}

	// A chart that is not the one the index describes is refused.
	if err := os.WriteFile(filepath.Join(repo, "hello-1.0.3.tgz"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Repository{URL: cs.URL}).Pull(context.Background(), "hello", "1.0.3"); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("a tampered archive: %v", err)
	}
	if _, err := (&Repository{URL: cs.URL}).Pull(context.Background(), "hello", ">=2"); err == nil || !strings.Contains(err.Error(), "no 'hello' chart with version matching '>=2' found") {
		t.Fatalf("no match: %v", err)
	}
}

func loadTree(t *testing.T, text string) (*Objects, *HelmRelease) {
	t.Helper()
	decoded, err := DecodeObjects([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	objs := NewObjects()
	objs.Add(decoded...)
	var hr *HelmRelease
	for _, obj := range decoded {
		if IsHelmRelease(obj) {
			if hr, err = FromObject(obj, Options{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return objs, hr
}

// render merges hr's values, builds its helm template command for chart
// and runs it.
func render(t *testing.T, helm string, hr *HelmRelease, objs *Objects, chart string) []byte {
	t.Helper()
	vals, skipped, err := Values(hr, objs)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	dir := t.TempDir()
	cmd, err := Template(hr, vals, TemplateOptions{Helm: helm, Chart: chart, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range cmd.Files {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return helmtest.Run(t, dir, cmd.Args...)
}

// TestGitRepositoryRender renders a HelmRelease whose chart is a path of
// the repository, with valuesFiles and the Revision strategy, and
// compares it with `helm template` of the chart as source-controller
// packages it (values.yaml replaced by the values files' merge, the
// version carrying the commit), written by hand.
func TestGitRepositoryRender(t *testing.T) {
	helm := helmtest.V3(t)
	root := t.TempDir()
	files := map[string]string{}
	for name, data := range helloChart("1.2.0") {
		files["charts/"+name] = data
	}
	files["deploy/values-base.yaml"] = "greeting: base\nnested: {keep: base}\n"
	files["deploy/values-prod.yaml"] = "nested: {added: prod}\n"
	files["clusters/prod/hello.yaml"] = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: hello, namespace: apps}
spec:
  interval: 1h
  chart:
    spec:
      chart: ./charts/hello
      reconcileStrategy: Revision
      valuesFiles: [deploy/values-base.yaml, deploy/values-prod.yaml, deploy/missing.yaml]
      ignoreMissingValuesFiles: true
      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  values: {replicas: 2}
`
	writeFiles(t, root, files)
	// charts/link -> ../../.. would leave the repository: it is resolved
	// inside it, as source-controller's securejoin does.
	if err := os.Symlink("../../..", filepath.Join(root, "charts", "link")); err != nil {
		t.Fatal(err)
	}
	if p, err := secureJoin(root, "charts/link/charts/hello"); err != nil || p != filepath.Join(root, "charts", "hello") {
		t.Fatalf("securejoin: %s %v", p, err)
	}

	data, err := os.ReadFile(filepath.Join(root, "clusters/prod/hello.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, hr := loadTree(t, string(data))
	cs, err := ResolveChart(hr, objs, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir, ok := cs.LocalSource(map[string]string{"GitRepository/flux-system/flux-system": root})
	if !ok {
		t.Fatal("no local source")
	}
	meta := VersionMetadata(cs, "main@sha1:0123456789abcdef0123456789abcdef01234567", 0)
	if meta != "0123456789ab" {
		t.Fatalf("version metadata %q", meta)
	}
	chart, err := LocalChart(LocalChartOptions{Root: dir, Chart: cs.Chart, ValuesFiles: cs.ValuesFiles,
		IgnoreMissingValuesFiles: cs.IgnoreMissingValuesFiles, VersionMetadata: meta, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := render(t, helm, hr, objs, chart)

	ref := t.TempDir()
	want := helloChart("1.2.0+0123456789ab")
	want["hello/values.yaml"] = "greeting: base\nnested: {keep: base, added: prod}\n"
	want["values.yaml"] = "replicas: 2\n"
	writeFiles(t, ref, want)
	wantOut := helmtest.Run(t, ref, helm, "template", "hello", filepath.Join(ref, "hello"), "--namespace", "apps",
		"-f", filepath.Join(ref, "values.yaml"), "--include-crds", "--skip-tests")
	if !bytes.Equal(got, wantOut) {
		t.Fatalf("rendered\n%s\nhelm template of the chart as source-controller builds it\n%s", got, wantOut)
	}
	for _, s := range []string{"helm.sh/chart: \"hello-1.2.0_0123456789ab\"", `\"nested\":{\"added\":\"prod\",\"keep\":\"base\"}`, `replicas: "2"`} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("the output lacks %q:\n%s", s, got)
		}
	}

	// Without ignoreMissingValuesFiles a missing file is source-controller's error.
	_, err = LocalChart(LocalChartOptions{Root: dir, Chart: cs.Chart, ValuesFiles: cs.ValuesFiles, Dir: t.TempDir()})
	if err == nil || err.Error() != "no values file found at path '/deploy/missing.yaml' (reference 'deploy/missing.yaml')" {
		t.Fatal(err)
	}
	// Nothing to change: the chart's own directory.
	if p, err := LocalChart(LocalChartOptions{Root: dir, Chart: "charts/hello"}); err != nil || p != filepath.Join(root, "charts", "hello") {
		t.Fatal(p, err)
	}
}
