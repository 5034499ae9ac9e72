package stages

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// helmFixture reads the files of testdata/helm: the chart "hello" under
// charts/, and extra-values.yaml.
func helmFixture(t *testing.T) (ReadFile, ReadTree) {
	t.Helper()
	ldr, err := loaders.New(loaders.Disk, "testdata/helm", loaders.RootOnly)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) ([]byte, error) {
		data, _, err := ldr.ReadFile(p)
		return data, err
	}
	tree := func(p string) ([]loaders.TreeFile, error) {
		files, _, err := ldr.ReadTree(p)
		return files, err
	}
	return read, tree
}

// fakeHelm writes a stand-in for helm that answers `version` with version
// and `template` with a ConfigMap recording its arguments, the values files
// it got and the chart's files; with fail set, template fails instead.
func fakeHelm(t *testing.T, version string, fail bool) HelmSettings {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake helm is a shell script")
	}
	script := `#!/bin/sh
if [ "$1" = version ]; then echo "` + version + `"; exit 0; fi
if [ -n "` + map[bool]string{true: "fail"}[fail] + `" ]; then echo "Error: template: boom" >&2; exit 1; fi
chart=$3
values=""
prev=""
for a in "$@"; do
  if [ "$prev" = "-f" ]; then values="$values$(cat "$a" | tr '\n' ' ')|"; fi
  prev=$a
done
files=$(cd "$chart" && find . -type f | sort | tr '\n' ' ')
cat <<EOF
Some message helm printed first
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: args
data:
  args: "$*"
  values: '$values'
  files: "$files"
  home: "$HELM_CONFIG_HOME"
EOF
`
	p := filepath.Join(t.TempDir(), "helm")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return HelmSettings{Command: "helm", Path: p, Digest: "fake", Env: []string{"PATH=/usr/bin:/bin"}}
}

var tmpPath = regexp.MustCompile(`/[^ "|]*/kpipe-helm-[0-9]+`)

func runHelmStage(t *testing.T, args HelmChartArgs, h HelmSettings) (*resource.List, error) {
	t.Helper()
	read, tree := helmFixture(t)
	s, err := NewHelmChartInflationGenerator(args, h, read, tree)
	if err != nil {
		t.Fatal(err)
	}
	rs := resource.NewList()
	return rs, s.Run(context.Background(), rs)
}

func TestHelmCallsHelmTemplateAsKustomizeDoes(t *testing.T) {
	args := HelmChartArgs{}
	args.Name = "hello"
	args.ReleaseName = "rel"
	args.Namespace = "ns"
	args.NameTemplate = "nt"
	args.AdditionalValuesFiles = []string{"extra-values.yaml"}
	args.ApiVersions = []string{"a/v1", "b/v1"}
	args.KubeVersion = "1.29"
	args.IncludeCRDs, args.SkipTests, args.SkipHooks, args.Debug = true, true, true, true
	h := fakeHelm(t, "v3.10.2+g50f003e", false)
	h.APIVersions, h.KubeVersion = []string{"flag/v1"}, "1.20" // the chart's own win
	rs, err := runHelmStage(t, args, h)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 1 {
		t.Fatalf("got %d objects, want the one ConfigMap", rs.Len())
	}
	r := rs.At(0)
	data := r.Object()["data"].(map[string]any)
	got := tmpPath.ReplaceAllString(data["args"].(string), "$$TMP")
	want := "template rel $TMP/chart/hello --namespace ns --name-template nt -f $TMP/hello-kustomize-values.yaml -f $TMP/additional-values-1-extra-values.yaml " +
		"--api-versions a/v1 --api-versions b/v1 --kube-version 1.29 --include-crds --skip-tests --no-hooks --debug"
	if got != want {
		t.Errorf("helm arguments:\n got %s\nwant %s", got, want)
	}
	if v := data["values"]; v != "greeting: hello replicas: 1 |greeting: bonjour |" {
		t.Errorf("values files given to helm: %q", v)
	}
	if f := data["files"]; f != "./Chart.yaml ./templates/configmap.yaml ./templates/test.yaml ./values.yaml " {
		t.Errorf("chart files seen by helm: %q", f)
	}
	if home := tmpPath.ReplaceAllString(data["home"].(string), "$$TMP"); home != "$TMP/helm" {
		t.Errorf("HELM_CONFIG_HOME = %q, want a temporary directory", home)
	}
	if r.Annotations()[helmGeneratedAnnotation] != "true" {
		t.Errorf("object not marked as made by helm: %v", r.Annotations())
	}
}

func TestHelmFlagsApplyWhenTheChartSetsNone(t *testing.T) {
	args := HelmChartArgs{}
	args.Name = "hello"
	h := fakeHelm(t, "v3.10.2", false)
	h.APIVersions, h.KubeVersion, h.Debug = []string{"flag/v1"}, "1.20", true
	rs, err := runHelmStage(t, args, h)
	if err != nil {
		t.Fatal(err)
	}
	got := tmpPath.ReplaceAllString(rs.At(0).Object()["data"].(map[string]any)["args"].(string), "$$TMP")
	want := "template --generate-name $TMP/chart/hello -f $TMP/hello-kustomize-values.yaml --api-versions flag/v1 --kube-version 1.20 --debug"
	if got != want {
		t.Errorf("helm arguments:\n got %s\nwant %s", got, want)
	}
}

func TestHelmFailureNamesTheChartWithHelmsMessage(t *testing.T) {
	args := HelmChartArgs{}
	args.Name = "hello"
	args.ReleaseName = "rel"
	_, err := runHelmStage(t, args, fakeHelm(t, "v3.10.2", true))
	if err == nil {
		t.Fatal("no error from a failing helm")
	}
	for _, want := range []string{"chart charts/hello", "'helm template rel charts/hello", "Error: template: boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "kpipe-helm-") {
		t.Errorf("error shows the temporary copy instead of the chart: %v", err)
	}
}

func TestHelmRequiresHelm3(t *testing.T) {
	args := HelmChartArgs{}
	args.Name = "hello"
	_, err := runHelmStage(t, args, fakeHelm(t, "v2.17.0+ga690bad", false))
	if err == nil || !strings.Contains(err.Error(), "requires helm V3 or V4 but got v2.17.0") {
		t.Errorf("helm 2: got %v", err)
	}
}

func TestHelmConfigErrors(t *testing.T) {
	read, tree := helmFixture(t)
	h := HelmSettings{Command: "helm", Path: "/nonexistent/helm"}
	for _, tc := range []struct {
		name, merge, repo, version, want string
	}{
		{"", "", "", "", "chart name cannot be empty"},
		{"hello", "mix", "", "", "valuesMerge must be one of [merge override replace]"},
		{"absent", "", "", "", "no repo specified for pull, no chart found at 'charts/absent'"},
		{"hello", "", "https://charts.example.com", "1.0.0", "no chart found at 'charts/hello-1.0.0/hello', and it was not pulled from its repository (https://charts.example.com)"},
	} {
		args := HelmChartArgs{}
		args.Name, args.ValuesMerge, args.Repo, args.Version = tc.name, tc.merge, tc.repo, tc.version
		_, err := NewHelmChartInflationGenerator(args, h, read, tree)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got error %v, want %q", tc, err, tc.want)
		}
	}
}

func TestHelmFingerprintCoversChartAndSettings(t *testing.T) {
	read, tree := helmFixture(t)
	args := HelmChartArgs{}
	args.Name = "hello"
	h := HelmSettings{Command: "helm", Path: "/usr/bin/helm", Digest: "d1"}
	fp := func(args HelmChartArgs, h HelmSettings, tree ReadTree) string {
		s, err := NewHelmChartInflationGenerator(args, h, read, tree)
		if err != nil {
			t.Fatal(err)
		}
		return string(s.Fingerprint())
	}
	base := fp(args, h, tree)
	if fp(args, h, tree) != base {
		t.Fatal("fingerprint is not stable")
	}
	changedTree := func(p string) ([]loaders.TreeFile, error) {
		files, err := tree(p)
		return append(files, loaders.TreeFile{Rel: "templates/new.yaml", Data: []byte("x")}), err
	}
	h2 := h
	h2.Digest = "d2"
	h3 := h
	h3.KubeVersion = "1.30"
	h4 := h
	h4.EnvFingerprint = []string{"HELM_NAMESPACE=x"}
	args2 := args
	args2.SkipTests = true
	for what, got := range map[string]string{
		"a new chart file": fp(args, h, changedTree), "another helm binary": fp(args, h2, tree),
		"--helm-kube-version": fp(args, h3, tree), "the environment": fp(args, h4, tree), "skipTests": fp(args2, h, tree),
	} {
		if got == base {
			t.Errorf("fingerprint unchanged by %s", what)
		}
	}
}

// TestHelmRendersWithRealHelm inflates the fixture chart with the helm on
// PATH, if any.
func TestHelmRendersWithRealHelm(t *testing.T) {
	p, err := exec.LookPath("helm")
	if err != nil {
		t.Skip("skipping: no helm on PATH (go install helm.sh/helm/v3/cmd/helm@v3.10.2)")
	}
	args := HelmChartArgs{}
	args.Name = "hello"
	args.ReleaseName = "rel"
	args.Namespace = "ns1"
	args.AdditionalValuesFiles = []string{"extra-values.yaml"}
	args.ValuesInline = map[string]any{"replicas": float64(3)}
	args.ApiVersions = []string{"example.com/v1"}
	args.KubeVersion = "1.29.0"
	args.SkipTests = true
	rs, err := runHelmStage(t, args, HelmSettings{Command: "helm", Path: p, Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs.All() {
		r.SetAnnotations(nil)
	}
	got, err := output.Marshal(rs.All())
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
data:
  example: "yes"
  greeting: bonjour
  kube: v1.29.0
  replicas: "3"
kind: ConfigMap
metadata:
  name: rel-hello
  namespace: ns1
`
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
