package stages

import (
	"bytes"
	"context"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

func decodeList(t *testing.T, y string) *resource.List {
	t.Helper()
	rs, err := resyaml.Decode([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	l.Freeze()
	return l
}

func TestOriginYAML(t *testing.T) {
	root := &Origin{}
	base := root.Append("../base")
	file := base.Append("./svc.yaml")
	got, err := file.String()
	if err != nil {
		t.Fatal(err)
	}
	if want := "path: ../base/svc.yaml\n"; got != want {
		t.Errorf("file origin: got %q, want %q", got, want)
	}
	got, _ = base.BuiltinOrigin("kustomization.yaml", "ConfigMapGenerator").String()
	want := "configuredIn: ../base/kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n"
	if got != want {
		t.Errorf("builtin origin:\n got %q\nwant %q", got, want)
	}
	got, _ = root.BuiltinOrigin("kustomization.yml", "PrefixTransformer").String()
	if want := "configuredIn: kustomization.yml\nconfiguredBy:\n  apiVersion: builtin\n  kind: PrefixTransformer\n"; got != want {
		t.Errorf("root builtin origin:\n got %q\nwant %q", got, want)
	}
}

func TestOriginFromPluginConfig(t *testing.T) {
	l := decodeList(t, `apiVersion: builtin
kind: ConfigMapGenerator
metadata:
  name: gen
  annotations:
    config.kubernetes.io/origin: |
      path: ../base/gen.yaml
`)
	o, err := OriginFromPluginConfig(l.At(0))
	if err != nil {
		t.Fatal(err)
	}
	want := Origin{ConfiguredIn: "../base/gen.yaml", ConfiguredBy: OriginRef{APIVersion: "builtin", Kind: "ConfigMapGenerator", Name: "gen"}}
	if o == nil || *o != want {
		t.Errorf("got %+v, want %+v", o, want)
	}
	plain := decodeList(t, "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: gen\n")
	if o, err := OriginFromPluginConfig(plain.At(0)); o != nil || err != nil {
		t.Errorf("config without origin: got %+v, %v; want nil", o, err)
	}
}

func TestTransformerWithOrigin(t *testing.T) {
	rs := decodeList(t, `apiVersion: v1
kind: Service
metadata:
  name: a
  annotations:
    config.kubernetes.io/origin: |
      path: a.yaml
---
apiVersion: v1
kind: Service
metadata:
  name: b
`)
	o := (&Origin{}).BuiltinOrigin("kustomization.yaml", "PrefixTransformer")
	prefix, err := NewPrefixSuffix("PrefixTransformer", PrefixSuffixConfig{Prefix: "p-", FieldSpecs: []loaders.FieldSpec{{Path: "metadata/name"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := TransformerWithOrigin(prefix, o)
	if s.Kind() != "PrefixTransformer" {
		t.Errorf("kind %q, want the inner stage's", s.Kind())
	}
	if bytes.Equal(s.Fingerprint(), prefix.Fingerprint()) ||
		bytes.Equal(s.Fingerprint(), TransformerWithOrigin(prefix, (&Origin{}).Append("x").BuiltinOrigin("kustomization.yaml", "PrefixTransformer")).Fingerprint()) {
		t.Error("fingerprint does not cover the origin")
	}
	for range 2 {
		if err := s.Run(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
	}
	a := rs.At(0).Annotations()
	wantList := `- configuredIn: kustomization.yaml
  configuredBy:
    apiVersion: builtin
    kind: PrefixTransformer
- configuredIn: kustomization.yaml
  configuredBy:
    apiVersion: builtin
    kind: PrefixTransformer
`
	if a[TransformationsAnnotation] != wantList || a[OriginAnnotation] != "path: a.yaml\n" {
		t.Errorf("object with an origin: annotations %q", a)
	}
	// An object without an origin is taken to be made by the first
	// transformer; the second one is then a transformation.
	b := rs.At(1).Annotations()
	if b[OriginAnnotation] != "configuredIn: kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: PrefixTransformer\n" {
		t.Errorf("object without an origin: origin %q", b[OriginAnnotation])
	}
	if got := b[TransformationsAnnotation]; got != wantList[:len(wantList)/2] {
		t.Errorf("object without an origin: transformations %q", got)
	}
	if TransformerWithOrigin(prefix, nil) != prefix {
		t.Error("a nil origin should leave the stage as it is")
	}
}

func TestGeneratorWithOriginMerge(t *testing.T) {
	ctx := context.Background()
	rs := resource.NewList()
	base, _ := NewConfigMapGenerator(loaders.GeneratorArgs{Name: "cm", Literals: []string{"a=1"}}, nil)
	baseOrigin := (&Origin{}).Append("../base").BuiltinOrigin("kustomization.yaml", "ConfigMapGenerator")
	s, err := GeneratorWithOrigin(base, baseOrigin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(s.Fingerprint(), base.Fingerprint()) {
		t.Error("fingerprint does not cover the origin")
	}
	if err := s.Run(ctx, rs); err != nil {
		t.Fatal(err)
	}
	overlayOrigin := (&Origin{}).BuiltinOrigin("kustomization.yaml", "ConfigMapGenerator")
	for _, behavior := range []string{behaviorMerge, behaviorReplace} {
		g, _ := NewConfigMapGenerator(loaders.GeneratorArgs{Name: "cm", Behavior: behavior, Literals: []string{"b=2"}}, nil)
		if g, err = GeneratorWithOrigin(g, overlayOrigin); err != nil {
			t.Fatal(err)
		}
		l := rs.Copy()
		if err := g.Run(ctx, l); err != nil {
			t.Fatal(err)
		}
		got, _ := originOf(l.At(0))
		want := baseOrigin
		if behavior == behaviorReplace {
			want = overlayOrigin
		}
		if got == nil || *got != *want {
			t.Errorf("%s: origin %+v, want %+v", behavior, got, want)
		}
	}
}

func TestSetOrigin(t *testing.T) {
	rs := decodeList(t, `apiVersion: v1
kind: Service
metadata:
  name: a
  annotations:
    config.kubernetes.io/origin: |
      path: elsewhere.yaml
`)
	if err := NewSetOrigin(Origin{Path: "svc.yaml"}).Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if got := rs.At(0).Annotations()[OriginAnnotation]; got != "path: svc.yaml\n" {
		t.Errorf("origin %q: a resource file's origin replaces any", got)
	}
}

// fakePlugin stands for a plugin generator: it appends its objects.
type fakePlugin struct{ objs string }

func (f fakePlugin) Kind() string        { return "executable" }
func (f fakePlugin) Fingerprint() []byte { return Fingerprint("fake", f.objs) }
func (f fakePlugin) Run(_ context.Context, rs *resource.List) error {
	made, err := resyaml.Decode([]byte(f.objs))
	if err != nil {
		return err
	}
	for _, r := range made {
		if err := rs.Append(r); err != nil {
			return err
		}
	}
	return nil
}

func TestGeneratorWithOriginPlugin(t *testing.T) {
	config := decodeList(t, `kind: executable
metadata:
  name: demo
  annotations:
    config.kubernetes.io/origin: |
      path: ../base/kustomization.yaml
`).At(0)
	o, err := OriginFromPluginConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	g, err := GeneratorWithOrigin(fakePlugin{objs: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx\n"}, o)
	if err != nil {
		t.Fatal(err)
	}
	rs := decodeList(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")
	if err := g.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if rs.Len() != 2 {
		t.Fatalf("got %d objects, want the input's and the generated one", rs.Len())
	}
	want := "configuredIn: ../base/kustomization.yaml\nconfiguredBy:\n  kind: executable\n  name: demo\n"
	if got := rs.At(1).Annotations()[OriginAnnotation]; got != want {
		t.Errorf("generated object's origin:\n got %q\nwant %q", got, want)
	}
	if _, ok := rs.At(0).Annotations()[OriginAnnotation]; ok {
		t.Error("the input object was annotated by a generator")
	}
	// A second run makes an object that already exists: create fails.
	if err := g.Run(context.Background(), rs); err == nil {
		t.Error("generating an existing object with behavior create succeeded")
	}
}
