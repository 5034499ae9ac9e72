package fieldspec

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"go.yaml.in/yaml/v3"
)

// testdata/defaults.json and testdata/configurations.make.json are the JSON
// encodings of kustomize v5.8.0's MakeDefaultConfig() (updated for v5.8.2: volumeClaimTemplateLabels, the CronJob image volume) and of its
// MakeTransformerConfig for testdata/configurations.yaml.

func mustDefaults(t *testing.T) *Config {
	t.Helper()
	c, err := Defaults()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDefaultsMatchKustomize(t *testing.T) {
	want, err := os.ReadFile("testdata/defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDefaults(t).canonicalBytes(); !bytes.Equal(got, bytes.TrimSpace(want)) {
		t.Errorf("defaults differ from kustomize's:\n got %.300s...\nwant %.300s...", got, want)
	}
}

func hasSpec(s []loaders.FieldSpec, want loaders.FieldSpec) bool {
	for _, f := range s {
		if f == want {
			return true
		}
	}
	return false
}

func TestDefaultsContent(t *testing.T) {
	c := mustDefaults(t)
	if !hasSpec(c.CommonLabels, loaders.FieldSpec{Kind: "Deployment", Path: "spec/selector/matchLabels", CreateIfNotPresent: true}) {
		t.Error("commonLabels lacks Deployment spec/selector/matchLabels (create)")
	}
	if !hasSpec(c.CommonLabels, loaders.FieldSpec{Group: "batch", Kind: "Job", Path: "spec/selector/matchLabels"}) {
		t.Error("commonLabels lacks Job spec/selector/matchLabels (no create)")
	}
	// The StatefulSet volumeClaimTemplates get commonLabels and the labels
	// entries with includeVolumeClaimTemplates; since kustomize v5.8.1 not
	// those with includeTemplates.
	vct := loaders.FieldSpec{Group: "apps", Kind: "StatefulSet", Path: "spec/volumeClaimTemplates[]/metadata/labels", CreateIfNotPresent: true}
	if !hasSpec(c.CommonLabels, vct) || !hasSpec(c.VolumeClaimTemplateLabels, vct) {
		t.Error("commonLabels or volumeClaimTemplateLabels lacks the StatefulSet volumeClaimTemplates spec")
	}
	if hasSpec(c.TemplateLabels, vct) || len(c.VolumeClaimTemplateLabels) != 1 {
		t.Errorf("templateLabels must not reach volumeClaimTemplates; volumeClaimTemplateLabels = %v", c.VolumeClaimTemplateLabels)
	}
	if hasSpec(c.TemplateLabels, loaders.FieldSpec{Kind: "Deployment", Path: "spec/selector/matchLabels", CreateIfNotPresent: true}) {
		t.Error("templateLabels must not touch selectors")
	}
	if c.Labels != nil {
		t.Errorf("labels = %v, want none by default", c.Labels)
	}
	if want := []loaders.FieldSpec{{Path: "metadata/name"}}; !reflect.DeepEqual(c.NamePrefix, want) || !reflect.DeepEqual(c.NameSuffix, want) {
		t.Errorf("namePrefix/nameSuffix = %v / %v", c.NamePrefix, c.NameSuffix)
	}
	// Sorted by kustomize's GVK order: Service ranks before other kinds in
	// commonLabels, and the kind-less metadata/labels sorts last.
	if first, last := c.CommonLabels[0], c.CommonLabels[len(c.CommonLabels)-1]; first.Kind != "Service" || last.Path != "metadata/labels" {
		t.Errorf("commonLabels order: first %v, last %v", first, last)
	}
	var secret *NameBackReference
	for i, r := range c.NameReference {
		if r.Kind == "Secret" {
			secret = &c.NameReference[i]
		}
	}
	if secret == nil {
		t.Fatal("no Secret name reference")
	}
	n := 0
	for _, f := range secret.FieldSpecs {
		if f.Kind == "Ingress" && f.Path == "spec/tls/secretName" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("Ingress spec/tls/secretName appears %d times in Secret refs, kustomize keeps both (2)", n)
	}
	if !hasSpec(secret.FieldSpecs, loaders.FieldSpec{Kind: "Ingress", Path: `metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret`}) {
		t.Error("Secret refs lack the escaped annotation path")
	}

	// Each call parses afresh.
	c.CommonLabels[0].Path = "changed"
	if mustDefaults(t).CommonLabels[0].Path == "changed" {
		t.Error("Defaults shares state between calls")
	}
}

func TestMakeMatchesKustomize(t *testing.T) {
	data, err := os.ReadFile("testdata/configurations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/configurations.make.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Make(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.canonicalBytes(); !bytes.Equal(got, bytes.TrimSpace(want)) {
		t.Errorf("Make differs from kustomize's MakeTransformerConfig:\n got %s\nwant %s", got, want)
	}
	d, err := Make()
	if err != nil {
		t.Fatal(err)
	}
	if d.digest() != mustDefaults(t).digest() {
		t.Error("Make() without files must be the defaults")
	}
}

func TestParse(t *testing.T) {
	c, err := Parse([]byte(`
images:
- path: spec/template/spec/containers[]/image
  kind: MyKind
nameReference:
- kind: Bee
  version: v1
  fieldSpecs:
  - path: spec/beeRef/name
    kind: MyKind
NamePrefix:          # keys match case-insensitively
- Path: 123          # numbers given for a path are taken as text
  KIND: Foo
  create: yes        # YAML 1.1 boolean
`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []loaders.FieldSpec{{Kind: "MyKind", Path: "spec/template/spec/containers[]/image"}}; !reflect.DeepEqual(c.Images, want) {
		t.Errorf("images = %v", c.Images)
	}
	if want := []NameBackReference{{Version: "v1", Kind: "Bee", FieldSpecs: []loaders.FieldSpec{{Kind: "MyKind", Path: "spec/beeRef/name"}}}}; !reflect.DeepEqual(c.NameReference, want) {
		t.Errorf("nameReference = %v", c.NameReference)
	}
	if want := []loaders.FieldSpec{{Kind: "Foo", Path: "123", CreateIfNotPresent: true}}; !reflect.DeepEqual(c.NamePrefix, want) {
		t.Errorf("namePrefix = %v", c.NamePrefix)
	}

	// Parse keeps duplicates; merging removes them.
	c, err = Parse([]byte("varReference:\n- path: a\n- path: a\n"))
	if err != nil || len(c.VarReference) != 2 {
		t.Fatalf("duplicates: %v %v", c, err)
	}

	empty, err := Parse(nil)
	if err != nil || string(empty.canonicalBytes()) != "{}" {
		t.Errorf("empty file: %s %v", empty.canonicalBytes(), err)
	}

	for _, tc := range []struct{ in, err string }{
		{"commonLabels:\n- path: a\n  foo: bar\n", `error unmarshaling JSON: while decoding JSON: json: unknown field "foo"`},
		{"whatever: []\n", `json: unknown field "whatever"`},
		{"namePrefix:\n- path: a\n  kind: 123\n", "json: cannot unmarshal number into Go struct field FieldSpec.namePrefix.Gvk.kind of type string"},
		{"namePrefix:\n- path: a\n  create: \"true\"\n", "json: cannot unmarshal string into Go struct field FieldSpec.namePrefix.create of type bool"},
		{"namePrefix: foo\n", "json: cannot unmarshal string into Go struct field TransformerConfig.namePrefix of type types.FsSlice"},
		{"- path: a\n", "json: cannot unmarshal array into Go value of type builtinconfig.TransformerConfig"},
		{"namePrefix:\n- path: a\n  path: b\n", `error converting YAML to JSON: yaml: unmarshal errors:`},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.err)
		}
	}
}

func TestMerge(t *testing.T) {
	a := &Config{
		CommonLabels: []loaders.FieldSpec{{Kind: "Zeta", Path: "z"}, {Path: "metadata/labels", CreateIfNotPresent: true}},
		NameReference: []NameBackReference{
			{Kind: "ConfigMap", Version: "v1", FieldSpecs: []loaders.FieldSpec{{Kind: "Pod", Path: "p"}}},
		},
	}
	b := &Config{
		CommonLabels: []loaders.FieldSpec{
			{Kind: "Zeta", Path: "z"},                // duplicate: dropped
			{Kind: "Service", Path: "s"},             // new: sorted before Zeta
			{Group: "apps", Kind: "Zeta", Path: "z"}, // not selected by a's spec: kept
		},
		NameReference: []NameBackReference{
			{Kind: "ConfigMap", Version: "v1", FieldSpecs: []loaders.FieldSpec{{Kind: "Pod", Path: "p"}, {Kind: "Job", Path: "j"}}},
			{Kind: "Aaa", FieldSpecs: []loaders.FieldSpec{{Path: "x"}}},
		},
	}
	aBefore, bBefore := a.clone(), b.clone()
	m, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := []loaders.FieldSpec{
		{Kind: "Service", Path: "s"},
		{Group: "apps", Kind: "Zeta", Path: "z"},
		{Kind: "Zeta", Path: "z"},
		{Path: "metadata/labels", CreateIfNotPresent: true},
	}
	if !reflect.DeepEqual(m.CommonLabels, wantLabels) {
		t.Errorf("commonLabels = %v\nwant %v", m.CommonLabels, wantLabels)
	}
	wantRefs := []NameBackReference{
		{Kind: "ConfigMap", Version: "v1", FieldSpecs: []loaders.FieldSpec{{Kind: "Pod", Path: "p"}, {Kind: "Job", Path: "j"}}},
		{Kind: "Aaa", FieldSpecs: []loaders.FieldSpec{{Path: "x"}}},
	}
	if !reflect.DeepEqual(m.NameReference, wantRefs) {
		t.Errorf("nameReference = %v\nwant %v", m.NameReference, wantRefs)
	}
	if !reflect.DeepEqual(a, aBefore) || !reflect.DeepEqual(b, bBefore) {
		t.Error("Merge changed its inputs")
	}
	m.NameReference[0].FieldSpecs[0].Path = "changed"
	if a.NameReference[0].FieldSpecs[0].Path == "changed" {
		t.Error("Merge result shares memory with its input")
	}

	// A spec without a kind matches a held spec of any kind; create must agree.
	_, err = a.Merge(&Config{CommonLabels: []loaders.FieldSpec{{Path: "z", CreateIfNotPresent: true}}})
	var ce *ConflictError
	if err == nil || err.Error() != "failed to merge CommonLabels fieldSpec: conflicting fieldspecs" || !errors.As(err, &ce) {
		t.Errorf("conflict error = %v", err)
	}
	_, err = a.Merge(&Config{NameReference: []NameBackReference{{Kind: "ConfigMap", Version: "v1",
		FieldSpecs: []loaders.FieldSpec{{Kind: "Pod", Path: "p", CreateIfNotPresent: true}}}}})
	if err == nil || err.Error() != "failed to merge NameReference fieldSpec: conflicting fieldspecs" {
		t.Errorf("name reference conflict error = %v", err)
	}

	// Merging nil copies without sorting.
	n, err := b.Merge(nil)
	if err != nil || !reflect.DeepEqual(n, b) || &n.CommonLabels[0] == &b.CommonLabels[0] {
		t.Errorf("Merge(nil) = %v, %v", n, err)
	}
}

func TestMergeSpecs(t *testing.T) {
	base := []loaders.FieldSpec{{Group: "apps", Kind: "Deployment", Path: "p", CreateIfNotPresent: true}}
	got, err := MergeSpecs(base, loaders.FieldSpec{Kind: "Deployment", Path: "p", CreateIfNotPresent: true}, loaders.FieldSpec{Path: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if want := append(base[:1:1], loaders.FieldSpec{Path: "q"}); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := MergeSpecs(base, loaders.FieldSpec{Path: "p"}); err == nil {
		t.Error("a kind-less spec with another create must conflict")
	}
}

func TestLessGVK(t *testing.T) {
	order := []resource.GVK{
		{Kind: "Namespace"}, {Kind: "Service"}, {Group: "apps", Kind: "Deployment"},
		{Group: "a", Kind: "Zeta"}, {Version: "v1", Kind: "Alpha"}, {Kind: "Alpha"}, {},
		{Kind: "MutatingWebhookConfiguration"},
	}
	for i := range order {
		for j := range order {
			if got := lessGVK(order[i], order[j]); got != (i < j) {
				t.Errorf("lessGVK(%v, %v) = %v", order[i], order[j], got)
			}
		}
	}
}

func TestDigest(t *testing.T) {
	a := mustDefaults(t)
	b := a.clone()
	if a.digest() != b.digest() {
		t.Error("equal configs, different digests")
	}
	b.Images = append(b.Images, loaders.FieldSpec{Kind: "X", Path: "y"})
	if a.digest() == b.digest() {
		t.Error("different configs, same digest")
	}
}

func TestPathElements(t *testing.T) {
	for in, want := range map[string][]string{
		"spec/template/metadata/labels":   {"spec", "template", "metadata", "labels"},
		`metadata/annotations/a.io\/b`:    {"metadata", "annotations", "a.io/b"},
		`metadata/annotations/a.io\/b\/c`: {"metadata", "annotations", "a.io/b/c"},
		"/metadata/name":                  {"metadata", "name"},
		"spec/containers[]/image":         {"spec", "containers[]", "image"},
		"metadata/":                       {"metadata", ""},
		"":                                {""},
		"/":                               {""},
	} {
		if got := (loaders.FieldSpec{Path: in}).PathElements(); !reflect.DeepEqual(got, want) {
			t.Errorf("PathElements(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatches(t *testing.T) {
	deploy := resource.NewGVK("apps/v1", "Deployment")
	for fs, want := range map[loaders.FieldSpec]bool{
		{}:                                  true,
		{Kind: "Deployment"}:                true,
		{Group: "apps", Kind: "Deployment"}: true,
		{Group: "extensions", Kind: "Deployment"}: false,
		{Version: "v1"}:       true,
		{Version: "v2"}:       false,
		{Kind: "StatefulSet"}: false,
	} {
		if got := fs.Matches(deploy); got != want {
			t.Errorf("%v.Matches(Deployment) = %v", fs, got)
		}
	}
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    a.io/b: x
  labels: null
spec:
  selector: null
  template:
    spec:
      containers:
      - name: a
        image: nginx
      - null
      - name: b
        image: redis
      initContainers: null
      sidecars: [x, y]
`

func parseObj(t *testing.T) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(deployment), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// walk runs Walk and returns the paths and values it reached.
func walk(t *testing.T, obj map[string]any, fs loaders.FieldSpec, kind createKind) ([]string, []any, error) {
	t.Helper()
	var paths []string
	var values []any
	err := Walk(obj, fs, kind, func(f Field) error {
		paths = append(paths, strings.Join(f.Path, "."))
		values = append(values, f.Value())
		return nil
	})
	return paths, values, err
}

func TestWalkCreatesMaps(t *testing.T) {
	obj := parseObj(t)
	fs := loaders.FieldSpec{Path: "spec/template/metadata/labels", CreateIfNotPresent: true}
	err := Walk(obj, fs, CreateMap, func(f Field) error {
		f.Value().(map[string]any)["app"] = "web"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resource.LookupString(obj, "spec", "template", "metadata", "labels", "app"); got != "web" {
		t.Errorf("label not set: %v", obj["spec"])
	}

	// A null field is replaced when creating, left alone otherwise.
	if _, _, err := walk(t, obj, loaders.FieldSpec{Path: "spec/selector/matchLabels"}, CreateMap); err != nil {
		t.Fatal(err)
	}
	if v, ok := resource.Lookup(obj, "spec", "selector"); !ok || v != nil {
		t.Errorf("selector changed without create: %v", v)
	}
	paths, values, err := walk(t, obj, loaders.FieldSpec{Path: "spec/selector/matchLabels", CreateIfNotPresent: true}, CreateMap)
	if err != nil || len(paths) != 1 || paths[0] != "spec.selector.matchLabels" || !reflect.DeepEqual(values[0], map[string]any{}) {
		t.Errorf("selector: %v %v %v", paths, values, err)
	}
	// Without create a null leaf is still reached, as null.
	paths, values, err = walk(t, obj, loaders.FieldSpec{Path: "metadata/labels"}, CreateMap)
	if err != nil || len(paths) != 1 || values[0] != nil {
		t.Errorf("null leaf: %v %v %v", paths, values, err)
	}
	// create: true does nothing when the caller creates nothing.
	paths, _, _ = walk(t, obj, loaders.FieldSpec{Path: "metadata/missing", CreateIfNotPresent: true}, CreateNone)
	if _, ok := resource.Lookup(obj, "metadata", "missing"); ok || len(paths) != 0 {
		t.Error("CreateNone created a field")
	}
	// CreateScalar makes intermediate maps and an empty string leaf.
	paths, values, _ = walk(t, obj, loaders.FieldSpec{Path: "spec/a/b", CreateIfNotPresent: true}, CreateScalar)
	if len(paths) != 1 || values[0] != "" || resource.LookupMap(obj, "spec", "a") == nil {
		t.Errorf("scalar create: %v %v", paths, values)
	}
}

func TestWalkSequences(t *testing.T) {
	obj := parseObj(t)
	for _, p := range []string{"spec/template/spec/containers/image", "spec/template/spec/containers[]/image"} {
		paths, values, err := walk(t, obj, loaders.FieldSpec{Path: p, CreateIfNotPresent: true}, CreateScalar)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(values, []any{"nginx", "redis"}) || paths[0] != "spec.template.spec.containers.image" {
			t.Errorf("%s: %v %v", p, paths, values)
		}
	}
	err := Walk(obj, loaders.FieldSpec{Path: "spec/template/spec/containers/image"}, CreateNone, func(f Field) error {
		f.Set("img:" + f.Value().(string))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	containers := resource.LookupMap(obj, "spec", "template", "spec")["containers"].([]any)
	if containers[0].(map[string]any)["image"] != "img:nginx" || containers[2].(map[string]any)["image"] != "img:redis" {
		t.Errorf("images not set: %v", containers)
	}

	// "[]" never creates, but turns a null into an empty sequence.
	paths, _, err := walk(t, obj, loaders.FieldSpec{Path: "spec/template/spec/initContainers[]/image", CreateIfNotPresent: true}, CreateScalar)
	if err != nil || len(paths) != 0 {
		t.Fatalf("initContainers[]: %v %v", paths, err)
	}
	if v := resource.LookupMap(obj, "spec", "template", "spec")["initContainers"]; !reflect.DeepEqual(v, []any{}) {
		t.Errorf("initContainers = %#v, want []", v)
	}
	if _, _, err := walk(t, obj, loaders.FieldSpec{Path: "spec/extra[]/image", CreateIfNotPresent: true}, CreateScalar); err != nil {
		t.Fatal(err)
	}
	if _, ok := resource.Lookup(obj, "spec", "extra"); ok {
		t.Error("a [] field was created")
	}
}

func TestWalkEscapedKey(t *testing.T) {
	obj := parseObj(t)
	paths, values, err := walk(t, obj, loaders.FieldSpec{Path: `metadata/annotations/a.io\/b`}, CreateNone)
	if err != nil || !reflect.DeepEqual(values, []any{"x"}) || paths[0] != "metadata.annotations.a.io/b" {
		t.Errorf("escaped key: %v %v %v", paths, values, err)
	}
}

func TestWalkErrors(t *testing.T) {
	obj := parseObj(t)
	for path, want := range map[string]string{
		"metadata/name/x": "considering field 'metadata/name/x' of object Deployment.v1.apps/web.[noNs]: expected sequence or mapping node",
		"spec/template/spec/sidecars/x": "considering field 'spec/template/spec/sidecars/x' of object Deployment.v1.apps/web.[noNs]: " +
			"visit traversal on path: [x]: expected sequence or mapping node",
		"spec//x":   "cannot set or create an empty field name",
		"spec/0":    "fieldName: 0: wrong node kind: expected SequenceNode but got MappingNode",
		"spec/[a]":  "fieldName: [a]: list path element must contain fieldName=fieldValue",
		"metadata/": "cannot set or create an empty field name",
		// Every element kyaml reads as other than a key, met at a map.
		"spec/+1":    "fieldName: +1: wrong node kind: expected SequenceNode but got MappingNode",
		"spec/-2":    "fieldName: -2: array index -2 cannot be negative",
		"spec/-":     "fieldName: -: wrong node kind: expected SequenceNode but got MappingNode",
		"spec/*":     "fieldName: *: wildcard is not supported in PathGetter",
		"spec/[a=b]": "fieldName: [a=b]: wrong node kind: expected SequenceNode but got MappingNode",
	} {
		_, _, err := walk(t, obj, loaders.FieldSpec{Path: path, CreateIfNotPresent: true}, CreateMap)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Walk(%q) error = %v, want %q", path, err, want)
		}
	}
	// A missing path is no error and creates nothing.
	before := resource.DeepCopy(obj)
	paths, _, err := walk(t, obj, loaders.FieldSpec{Path: "status/x/y"}, CreateMap)
	if err != nil || len(paths) != 0 || !reflect.DeepEqual(obj, before) {
		t.Errorf("missing path: %v %v", paths, err)
	}
	// fn's errors are wrapped too.
	boom := errors.New("boom")
	err = Walk(obj, loaders.FieldSpec{Path: "metadata/name"}, CreateNone, func(Field) error { return boom })
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "considering field 'metadata/name'") {
		t.Errorf("fn error = %v", err)
	}
}

func TestWalkBlankElementStays(t *testing.T) {
	// kyaml drops blank lookup elements: "metadata/ " reaches metadata itself.
	obj := parseObj(t)
	paths, values, err := walk(t, obj, loaders.FieldSpec{Path: "metadata/ "}, CreateNone)
	if err != nil || len(paths) != 1 || paths[0] != "metadata" {
		t.Fatalf("%v %v %v", paths, values, err)
	}
	if _, ok := values[0].(map[string]any)["name"]; !ok {
		t.Errorf("value = %v, want the metadata map", values[0])
	}
}
