package helmrelease

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const sourcesYAML = `
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: bitnami, namespace: flux-system}
spec: {url: "https://charts.example.com/stable//", interval: 1h}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: ghcr, namespace: apps}
spec: {type: oci, url: "oci://ghcr.io/org/charts/", interval: 1h}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: app-template, namespace: apps}
spec: {url: "oci://ghcr.io/bjw-s/helm/app-template", ref: {tag: 4.1.2}, layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip, operation: copy}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: "ssh://git@github.com/org/repo", ref: {branch: main}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: shared, namespace: apps}
spec: {chart: podinfo, version: ">=6.0.0 <7", sourceRef: {kind: HelmRepository, name: ghcr}, valuesFiles: [values-prod.yaml]}
---
apiVersion: v1
kind: HelmRepository
metadata: {name: wrong-group, namespace: apps}
`

func sources(t *testing.T) *Objects {
	t.Helper()
	decoded, err := DecodeObjects([]byte(sourcesYAML))
	if err != nil {
		t.Fatal(err)
	}
	objs := NewObjects()
	if n := objs.Add(decoded...); n != 5 {
		t.Fatalf("kept %d objects, want 5 (a HelmRepository of group v1 is not a source)", n)
	}
	return objs
}

func parse(t *testing.T, doc string) *HelmRelease {
	t.Helper()
	hr, err := Parse([]byte(doc), Options{AllowV2Beta2: true})
	if err != nil {
		t.Fatal(err)
	}
	return hr
}

func TestResolveChart(t *testing.T) {
	objs := sources(t)
	for _, c := range []struct {
		name, hr string
		want     ChartSource
		err      string
	}{
		{
			name: "HTTP HelmRepository in another namespace, no version",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: redis, namespace: apps}
spec:
  interval: 1h
  chart: {spec: {chart: redis, sourceRef: {kind: HelmRepository, name: bitnami, namespace: flux-system}}}`,
			want: ChartSource{Type: TypeHelmHTTP, Kind: "HelmRepository", Namespace: "flux-system", Name: "bitnami",
				HelmChart: "flux-system/apps-redis", URL: "https://charts.example.com/stable/", Chart: "redis", Version: "*",
				ReconcileStrategy: "ChartVersion"},
		},
		{
			name: "OCI HelmRepository, the namespace defaulting to the HelmRelease's, a range",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec:
  interval: 1h
  chart: {spec: {chart: podinfo, version: 6.x, sourceRef: {kind: HelmRepository, name: ghcr}, valuesFiles: [a.yaml]}}`,
			want: ChartSource{Type: TypeHelmOCI, Kind: "HelmRepository", Namespace: "apps", Name: "ghcr",
				HelmChart: "apps/apps-podinfo", URL: "oci://ghcr.io/org/charts", Chart: "podinfo", Version: "6.x",
				ValuesFiles: []string{"a.yaml"}, ReconcileStrategy: "ChartVersion"},
		},
		{
			name: "GitRepository path, v2beta2 valuesFile before valuesFiles",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2beta2
kind: HelmRelease
metadata: {name: local, namespace: apps}
spec:
  interval: 1h
  chart: {spec: {chart: ./charts/local, version: 9.9.9, reconcileStrategy: Revision, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}, valuesFile: base.yaml, valuesFiles: [prod.yaml]}}`,
			want: ChartSource{Type: TypeGit, Kind: "GitRepository", Namespace: "flux-system", Name: "flux-system",
				HelmChart: "flux-system/apps-local", URL: "ssh://git@github.com/org/repo", Chart: "./charts/local",
				ValuesFiles: []string{"base.yaml", "prod.yaml"}, ReconcileStrategy: "Revision"},
		},
		{
			name: "GitRepository not in the tree (the caller maps it)",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: local, namespace: apps}
spec:
  interval: 1h
  chart: {spec: {chart: charts/x, sourceRef: {kind: GitRepository, name: other}}}`,
			want: ChartSource{Type: TypeGit, Kind: "GitRepository", Namespace: "apps", Name: "other",
				HelmChart: "apps/apps-local", Chart: "charts/x", ReconcileStrategy: "ChartVersion"},
		},
		{
			name: "chartRef OCIRepository",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app, namespace: apps}
spec:
  interval: 1h
  chartRef: {kind: OCIRepository, name: app-template}`,
			want: ChartSource{Type: TypeOCIArtifact, Kind: "OCIRepository", Namespace: "apps", Name: "app-template",
				URL: "oci://ghcr.io/bjw-s/helm/app-template", OCIRef: &OCIRef{Tag: "4.1.2"}},
		},
		{
			name: "chartRef HelmChart: its sourceRef, in its namespace",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app, namespace: apps}
spec:
  interval: 1h
  chartRef: {kind: HelmChart, name: shared}`,
			want: ChartSource{Type: TypeHelmOCI, Kind: "HelmRepository", Namespace: "apps", Name: "ghcr",
				HelmChart: "apps/shared", URL: "oci://ghcr.io/org/charts", Chart: "podinfo", Version: ">=6.0.0 <7",
				ValuesFiles: []string{"values-prod.yaml"}, ReconcileStrategy: "ChartVersion"},
		},
		{
			name: "a HelmRepository the tree does not render",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: x, namespace: apps}
spec:
  interval: 1h
  chart: {spec: {chart: x, sourceRef: {kind: HelmRepository, name: elsewhere}}}`,
			err: "HelmRelease apps/x: HelmRepository apps/elsewhere: not found in the rendered objects",
		},
		{
			name: "ExternalArtifact without the feature gate",
			hr: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: x, namespace: apps}
spec:
  interval: 1h
  chartRef: {kind: ExternalArtifact, name: a, namespace: other}`,
			err: "can't access 'ExternalArtifact/other/a', ExternalArtifact feature gate is disabled",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResolveChart(parse(t, c.hr), objs, ResolveOptions{})
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Source == nil && c.want.URL != "" {
				t.Error("no source object")
			}
			got.Source = nil
			if !reflect.DeepEqual(*got, c.want) {
				t.Fatalf("got  %+v\nwant %+v", *got, c.want)
			}
		})
	}
}

func TestResolveChartCrossNamespace(t *testing.T) {
	objs := sources(t)
	hr := parse(t, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: redis, namespace: apps}
spec:
  interval: 1h
  chart: {spec: {chart: redis, sourceRef: {kind: HelmRepository, name: bitnami, namespace: flux-system}}}`)
	_, err := ResolveChart(hr, objs, ResolveOptions{NoCrossNamespaceRefs: true})
	if err == nil || err.Error() != "cross-namespace references are not allowed: cannot access HelmChart flux-system/apps-redis" {
		t.Fatal(err)
	}
	if !errors.Is(func() error { _, err := ResolveChart(hr, NewObjects(), ResolveOptions{}); return err }(), ErrSourceNotFound) {
		t.Fatal("a missing HelmRepository is not ErrSourceNotFound")
	}
	cs, _ := ResolveChart(parse(t, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: l, namespace: apps}
spec: {interval: 1h, chart: {spec: {chart: c, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}}}`), objs, ResolveOptions{})
	if dir, ok := cs.LocalSource(map[string]string{"GitRepository/flux-system/flux-system": "/repo"}); !ok || dir != "/repo" {
		t.Fatal(dir, ok)
	}
}

func TestParseRefusals(t *testing.T) {
	for _, c := range []struct{ doc, err string }{
		{`apiVersion: helm.toolkit.fluxcd.io/v2beta2
kind: HelmRelease
metadata: {name: x, namespace: ns}
spec: {interval: 1h, chartRef: {kind: OCIRepository, name: o}}`, "HelmRelease ns/x: helm.toolkit.fluxcd.io/v2beta2 is not served since helm-controller v1.5 (Flux v2.8); move it to helm.toolkit.fluxcd.io/v2"},
		{`apiVersion: helm.toolkit.fluxcd.io/v2beta1
kind: HelmRelease
metadata: {name: x, namespace: ns}`, "HelmRelease ns/x: apiVersion helm.toolkit.fluxcd.io/v2beta1 is not served by helm-controller (it serves helm.toolkit.fluxcd.io/v2)"},
		{`apiVersion: v1
kind: ConfigMap`, `not a HelmRelease: apiVersion "v1", kind "ConfigMap"`},
		{`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: x}
spec: {interval: 1h}`, `HelmRelease.helm.toolkit.fluxcd.io "x" is invalid: spec: Invalid value: "object": either chart or chartRef must be set`},
		{`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: x}
spec:
  interval: 1h
  releaseName: a-release-name-that-is-much-longer-than-fifty-three-characters
  chartRef: {kind: GitRepository, name: g}
  install: {crds: Always}
  valuesFrom: [{kind: Secret, name: s, valuesKey: "a b", targetPath: "a=b"}]`,
			`HelmRelease.helm.toolkit.fluxcd.io "x" is invalid: spec.chartRef.kind: Unsupported value: "GitRepository": supported values: "OCIRepository", "HelmChart", "ExternalArtifact", ` +
				`spec.releaseName: Too long: may not be more than 53 bytes, ` +
				`spec.valuesFrom[0].valuesKey: Invalid value: "a b": should match '^[\-._a-zA-Z0-9]+$', ` +
				`spec.valuesFrom[0].targetPath: Invalid value: "a=b": should match '^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$', ` +
				`spec.install.crds: Unsupported value: "Always": supported values: "Skip", "Create", "CreateReplace"`},
		{`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: x}
spec: {interval: 5, chartRef: {kind: OCIRepository, name: o}}`, `decoding a HelmRelease: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go struct field Spec.spec.interval of type string`},
		{`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: x}
spec: {interval: 1h, chartRef: {kind: OCIRepository, name: o}, valuesFrom: {kind: Secret}}`, `decoding a HelmRelease: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go struct field Spec.spec.valuesFrom of type []helmrelease.ValuesReference`},
	} {
		_, err := Parse([]byte(c.doc), Options{})
		if err == nil || err.Error() != c.err {
			t.Errorf("Parse(%q):\n got %v\nwant %s", c.doc, err, c.err)
		}
	}
}

func TestFromObjectAndDecode(t *testing.T) {
	objs, err := DecodeObjects([]byte("---\n# a comment\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: x, namespace: ns}\nspec:\n  interval: 1h\n  chartRef: {kind: OCIRepository, name: o}\n  values: {replicas: 3, version: 1.10, on: yes}\n--- # next\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || !IsHelmRelease(objs[0]) || IsHelmRelease(objs[1]) {
		t.Fatalf("%v", objs)
	}
	hr, err := FromObject(objs[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	// YAML 1.1 as Flux reads it: 1.10 is the number 1.1, on and yes are true.
	if got := hr.GetValues(); !reflect.DeepEqual(got, map[string]any{"replicas": float64(3), "version": 1.1, "true": true}) {
		t.Fatalf("%#v", got)
	}
	if _, err := DecodeObjects([]byte("a: [")); err == nil || !strings.HasPrefix(err.Error(), "document 1: ") {
		t.Fatal(err)
	}
	if _, err := DecodeObjects([]byte("- 1\n")); err == nil || err.Error() != "document 1 is not an object" {
		t.Fatal(err)
	}
}
