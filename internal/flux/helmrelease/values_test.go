package helmrelease

import (
	"errors"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux/helmrelease/internal/hroracle"
)

// valuesCases are helm-controller's values for small HelmReleases, each
// showing one rule. TestValuesCases checks kpipe's merge against them;
// TestValuesCasesAgainstLibrary checks them against the library itself.
var valuesCases = []struct {
	name    string
	hr      string // spec (YAML), in namespace "ns"
	objects string // YAML stream
	want    map[string]any
	err     string
}{
	{
		name: "inline values win over valuesFrom",
		hr: `values: {a: {b: inline}, c: [1]}
valuesFrom: [{kind: ConfigMap, name: cm}]`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {values.yaml: "a: {b: cm, d: cm}\nc: [2, 3]\ne: 1000000\n"}}`,
		want:    map[string]any{"a": map[string]any{"b": "inline", "d": "cm"}, "c": []any{float64(1)}, "e": float64(1000000)},
	},
	{
		name: "valuesFrom merge in order, maps recursively, lists and scalars replaced",
		hr: `valuesFrom:
- {kind: ConfigMap, name: cm}
- {kind: Secret, name: s, valuesKey: more.yaml}`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {values.yaml: "a: {b: 1, c: 2}\nl: [1, 2]\nm: {x: 1}\n"}}
---
{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, data: {more.yaml: YToge2M6IDN9Cmw6IFszXQptOiBzY2FsYXIK}}`,
		want: map[string]any{"a": map[string]any{"b": float64(1), "c": float64(3)}, "l": []any{float64(3)}, "m": "scalar"},
	},
	{
		name: "a targetPath into a map only spec.values has changes spec.values too, and wins",
		hr: `values: {a: {shared: inline, m: 1}}
valuesFrom: [{kind: Secret, name: s, valuesKey: v, targetPath: a.shared}]`,
		objects: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, stringData: {v: fromsecret}}`,
		want:    map[string]any{"a": map[string]any{"shared": "fromsecret", "m": float64(1)}},
	},
	{
		name: "a targetPath into a map an earlier valuesFrom made loses to spec.values",
		hr: `values: {a: {shared: inline}}
valuesFrom:
- {kind: ConfigMap, name: cm}
- {kind: Secret, name: s, valuesKey: v, targetPath: a.shared}`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {values.yaml: "a: {x: 1}"}}
---
{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, stringData: {v: fromsecret}}`,
		want: map[string]any{"a": map[string]any{"shared": "inline", "x": float64(1)}},
	},
	{
		name: "targetPath values are typed as --set types them; quoted ones and literal ones are strings",
		hr: `valuesFrom:
- {kind: ConfigMap, name: cm, valuesKey: int, targetPath: "replicas"}
- {kind: ConfigMap, name: cm, valuesKey: bool, targetPath: "on"}
- {kind: ConfigMap, name: cm, valuesKey: quoted, targetPath: "q"}
- {kind: ConfigMap, name: cm, valuesKey: list, targetPath: "l[1].x"}
- {kind: ConfigMap, name: cm, valuesKey: commas, targetPath: "lit", literal: true}
- {kind: ConfigMap, name: cm, valuesKey: zero, targetPath: "z"}
- {kind: ConfigMap, name: cm, valuesKey: nul, targetPath: "nul"}`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {int: "5000000", bool: "TRUE", quoted: "'007'", list: "{a,b}", commas: "x,y=[z]", zero: "007", nul: "null"}}`,
		want: map[string]any{"replicas": int64(5000000), "on": true, "q": "007",
			"l": []any{nil, map[string]any{"x": []any{"a", "b"}}}, "lit": "x,y=[z]", "z": "007", "nul": nil},
	},
	{
		name:    "a comma in a targetPath value is --set's separator",
		hr:      `valuesFrom: [{kind: Secret, name: s, valuesKey: v, targetPath: a.b}]`,
		objects: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, stringData: {v: "fromsecret,x"}}`,
		err:     `could not resolve Secret chart values reference 'ns/s' with key 'v': key "x" has no value`,
	},
	{
		name:    "a missing object",
		hr:      `valuesFrom: [{kind: ConfigMap, name: cm}]`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: other}, data: {values.yaml: "a: 1"}}`,
		err:     `could not resolve ConfigMap chart values reference 'ns/cm' with key 'values.yaml': configmaps "cm" not found`,
	},
	{
		name: "an optional missing object is skipped, and a later non-optional reference to it fails",
		hr: `valuesFrom:
- {kind: Secret, name: s, optional: true}
- {kind: Secret, name: s, valuesKey: other}`,
		err: `could not resolve Secret chart values reference 'ns/s' with key 'other': resource not found`,
	},
	{
		name:    "a missing key",
		hr:      `valuesFrom: [{kind: ConfigMap, name: cm, valuesKey: nope}]`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {values.yaml: "a: 1"}}`,
		err:     `could not resolve ConfigMap chart values reference 'ns/cm' with key 'nope': key not found`,
	},
	{
		name: "optional missing keys and objects are skipped",
		hr: `values: {a: 1}
valuesFrom:
- {kind: ConfigMap, name: cm, valuesKey: nope, optional: true}
- {kind: Secret, name: gone, optional: true}`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {values.yaml: "a: 2"}}`,
		want:    map[string]any{"a": float64(1)},
	},
	{
		name:    "a Secret's stringData is written over its data",
		hr:      `valuesFrom: [{kind: Secret, name: s}]`,
		objects: `{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: ns}, data: {values.yaml: YTogZnJvbWRhdGE=}, stringData: {values.yaml: "a: fromstringdata"}}`,
		want:    map[string]any{"a": "fromstringdata"},
	},
	{
		name:    "values that are not a map",
		hr:      `valuesFrom: [{kind: ConfigMap, name: cm}]`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {values.yaml: "- 1\n- 2"}}`,
		err:     `could not resolve ConfigMap chart values reference 'ns/cm' with key 'values.yaml': error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type common.Values`,
	},
	{
		name: "nulls are kept (helm then deletes the chart's default), an empty document is no values",
		hr: `values: {a: null, b: {c: null}}
valuesFrom: [{kind: ConfigMap, name: cm}]`,
		objects: `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ns}, data: {values.yaml: ""}}`,
		want:    map[string]any{"a": nil, "b": map[string]any{"c": nil}},
	},
	{
		name: "spec.values that is not a map is ignored",
		hr:   `values: [1, 2]`,
		want: map[string]any{},
	},
	{
		name: "YAML 1.1 keys of spec.values",
		hr:   `values: {n: 1, "y": 2, on: 3}`,
		want: map[string]any{"false": float64(1), "y": float64(2), "true": float64(3)},
	},
	{
		name: "a kind that is neither ConfigMap nor Secret",
		hr:   `valuesFrom: [{kind: Deployment, name: d}]`,
		err:  `could not resolve Deployment chart values reference 'ns/d' with key 'values.yaml': unsupported values reference kind`,
	},
}

func caseHR(t *testing.T, spec string) string {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	if s == nil {
		s = map[string]any{}
	}
	s["interval"] = "5m"
	s["chart"] = map[string]any{"spec": map[string]any{"chart": "c", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "r"}}}
	out, err := yaml.Marshal(map[string]any{"apiVersion": V2, "kind": "HelmRelease",
		"metadata": map[string]any{"name": "hr", "namespace": "ns"}, "spec": s})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestValuesCases(t *testing.T) {
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			hr := &HelmRelease{}
			if err := yaml.Unmarshal([]byte(caseHR(t, c.hr)), hr); err != nil {
				t.Fatal(err)
			}
			decoded, err := DecodeObjects([]byte(c.objects))
			if err != nil {
				t.Fatal(err)
			}
			objs := NewObjects()
			objs.Add(decoded...)
			got, _, err := Values(hr, objs)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v\nwant %#v", got, c.want)
			}
		})
	}
}

func TestValuesCasesAgainstLibrary(t *testing.T) {
	o := hroracle.Start(t)
	for _, c := range valuesCases {
		t.Run(c.name, func(t *testing.T) {
			res := o.Values(t, caseHR(t, c.hr), c.objects)
			if c.err != "" {
				if res.Err == nil || *res.Err != c.err {
					t.Fatalf("the library says %v, the case %s", res.Err, c.err)
				}
				return
			}
			if res.Err != nil {
				t.Fatalf("the library fails: %s", *res.Err)
			}
			if g, w := hroracle.Canonical(res.Values), hroracle.Canonical(hroracle.Typed(c.want)); g != w {
				t.Fatalf("the library gives\n%s\nthe case says\n%s", g, w)
			}
		})
	}
}

func TestValuesReferenceErrorIs(t *testing.T) {
	hr := &HelmRelease{}
	hr.Namespace = "ns"
	hr.Spec.ValuesFrom = []ValuesReference{{Kind: "ConfigMap", Name: "cm"}}
	_, _, err := Values(hr, NewObjects())
	if !errors.Is(err, ErrResourceNotFound) {
		t.Fatalf("%v is not ErrResourceNotFound", err)
	}
	var ref *ValuesReferenceError
	if !errors.As(err, &ref) || ref.Name != "cm" || ref.Key != "values.yaml" {
		t.Fatalf("%#v", err)
	}
	hr.Spec.ValuesFrom[0].Optional = true
	vals, skipped, err := Values(hr, NewObjects())
	if err != nil || len(vals) != 0 || len(skipped) != 1 ||
		skipped[0].Message != `could not resolve optional ConfigMap chart values reference 'ns/cm' with key 'values.yaml': configmaps "cm" not found` {
		t.Fatalf("%v %v %v", vals, skipped, err)
	}
}

func TestObjectsRefuseBadData(t *testing.T) {
	decoded, err := DecodeObjects([]byte(`apiVersion: v1
kind: Secret
metadata: {name: s, namespace: ns}
data: {values.yaml: "ENC[AES256_GCM,data:abc]"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: ns}
data: {values.yaml: [1]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: ns}
`))
	if err != nil {
		t.Fatal(err)
	}
	objs := NewObjects()
	if n := objs.Add(decoded...); n != 2 || len(objs.Duplicates()) != 1 || objs.Duplicates()[0] != "ConfigMap/ns/c" {
		t.Fatalf("kept %d, duplicates %v", n, objs.Duplicates())
	}
	hr := &HelmRelease{}
	hr.Namespace = "ns"
	for kind, want := range map[string]string{
		"Secret":    "Secret ns/s: data.values.yaml: illegal base64 data at input byte 3",
		"ConfigMap": "ConfigMap ns/c: data.values.yaml is not a string",
	} {
		hr.Spec.ValuesFrom = []ValuesReference{{Kind: kind, Name: map[string]string{"Secret": "s", "ConfigMap": "c"}[kind]}}
		if _, _, err := Values(hr, objs); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", kind, err, want)
		}
	}
}
