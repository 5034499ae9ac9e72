package helmrelease

import (
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestTemplateCommand(t *testing.T) {
	dir := t.TempDir()
	base := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec:
  interval: 1h
  chartRef: {kind: OCIRepository, name: o}
`
	values := filepath.Join(dir, "values.yaml")
	for _, c := range []struct {
		name, spec string
		opts       TemplateOptions
		want       string
		notes      []string
	}{
		{name: "defaults", want: "helm template podinfo CHART --namespace apps --values " + values + " --include-crds --skip-tests"},
		{name: "target namespace, CRDs skipped, tests enabled, hooks disabled",
			spec: "  targetNamespace: prod\n  install: {crds: Skip, disableHooks: true}\n  test: {enable: true}\n",
			want: "helm template prod-podinfo CHART --namespace prod --values " + values + " --no-hooks"},
		{name: "upgrade reads upgrade's settings",
			spec: "  install: {crds: Skip, disableHooks: true}\n  upgrade: {crds: CreateReplace, preserveValues: true, disableSchemaValidation: true}\n  postRenderers: [{kustomize: {images: [{name: x, newTag: y}]}}]\n",
			opts: TemplateOptions{Upgrade: true, KubeVersion: "v1.31.0", APIVersions: []string{"monitoring.coreos.com/v1", "networking.k8s.io/v1/Ingress"}, Helm: "/opt/helm"},
			want: "/opt/helm template podinfo CHART --namespace apps --values " + values + " --include-crds --skip-tests --is-upgrade --kube-version v1.31.0 --api-versions monitoring.coreos.com/v1 --api-versions networking.k8s.io/v1/Ingress",
			notes: []string{"upgrade.preserveValues reuses the values of the release in the cluster",
				"disableSchemaValidation: helm v3.10.2 always validates values against the chart's schema",
				"1 post-renderer(s) to apply to the output"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hr := parse(t, base+c.spec)
			o := c.opts
			o.Chart, o.Dir = "CHART", dir
			cmd, err := Template(hr, map[string]any{"a": float64(1)}, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cmd.Args, " "); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			if !reflect.DeepEqual(cmd.Notes, c.notes) {
				t.Fatalf("notes %q, want %q", cmd.Notes, c.notes)
			}
			if got := string(cmd.Files[values]); got != "{\n  \"a\": 1\n}\n" {
				t.Fatalf("values file %q", got)
			}
		})
	}
	hr := parse(t, base)
	hr.Namespace = ""
	if _, err := Template(hr, nil, TemplateOptions{Chart: "c", Dir: dir}); err == nil || err.Error() != "HelmRelease podinfo has no namespace (a cluster would refuse it)" {
		t.Fatal(err)
	}
}

func TestEncodeValuesIntegers(t *testing.T) {
	vals := map[string]any{}
	for _, s := range []string{`a.b=5000000`, `a.l[1]=7`, `a.l[2][0]=-3`, `k\.with\=odd\,chars.n=0`, `s=5000000`} {
		if err := parseInto(s, vals); err != nil {
			t.Fatal(err)
		}
	}
	vals["s"] = "5000000"
	_, sets, err := EncodeValues(vals)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`a.b=5000000`, `a.l[1]=7`, `a.l[2][0]=-3`, `k\.with\=odd\,chars.n=0`}
	if !reflect.DeepEqual(sets, want) {
		t.Fatalf("sets %q, want %q", sets, want)
	}
	if _, _, err := EncodeValues(map[string]any{"": map[string]any{"x": int64(1)}}); err == nil {
		t.Fatal("an integer under an empty key was accepted")
	}
	if _, _, err := EncodeValues(map[string]any{"a": "\xff"}); err == nil {
		t.Fatal("invalid UTF-8 was accepted")
	}
}

// TestEncodeValuesRoundTrip: what helm reads back from the values file,
// with the --set arguments applied after it as helm applies them, is the
// values (random trees, with the integers targetPaths make).
func TestEncodeValuesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		b := make([]byte, 48)
		r.Read(b)
		p := &picker{b}
		vals := map[string]any{}
		for j, n := 0, p.n(5); j < n; j++ {
			vals[p.pick(fuzzKeys)] = fuzzValue(p, 1)
		}
		for j, n := 0, p.n(3); j < n; j++ {
			_ = parseInto(p.pick(fuzzPaths)+"="+p.pick([]string{"1", "5000000", "-2", "0", "x", "true", "null"}), vals)
		}
		for _, f := range []float64{1e21, 1e-7, 0.1, 123456789012345678} {
			vals["f"+strings.ReplaceAll(strings.ReplaceAll(yamlString(f), ".", "_"), "+", "")] = f
		}
		vals["strings"] = []any{"yes", "on", "~", "1.10", "0x1F", "'q'", "a: b", "- x", "\u2028", "\x00", "<&>", ""}
		file, sets, err := EncodeValues(vals)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := yaml.Unmarshal(file, &back); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if back == nil {
			back = map[string]any{}
		}
		for _, s := range sets {
			if err := parseInto(s, back); err != nil {
				t.Fatalf("--set %s: %v", s, err)
			}
		}
		if !reflect.DeepEqual(back, vals) {
			t.Fatalf("values\n%#v\nread back as\n%#v\nfrom %s and %q", vals, back, file, sets)
		}
	}
}

func yamlString(v any) string {
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(b))
}
