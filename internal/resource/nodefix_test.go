package resource

import (
	"encoding/json"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDecodeNullsAndEmpties checks that the model keeps apart what
// kustomize keeps apart: an absent key, `x:`, `x: null` (and `~`), `x: {}`
// and `x: []`.
func TestDecodeNullsAndEmpties(t *testing.T) {
	vs, err := DecodeValues([]byte(`bare:
"null": null
tilde: ~
"Null": Null
tagged: !!null
quoted: ""
map: {}
list: []
nested:
  bare:
  list:
  -
  - null
flow: {a: , b: null, c: [x, ]}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := vs[0].(map[string]any)
	want := map[string]any{
		"bare": EmptyNull{}, "null": nil, "tilde": nil, "Null": nil, "tagged": EmptyNull{},
		"quoted": "", "map": map[string]any{}, "list": []any{},
		"nested": map[string]any{"bare": EmptyNull{}, "list": []any{EmptyNull{}, nil}},
		"flow":   map[string]any{"a": EmptyNull{Flow: true}, "b": nil, "c": []any{"x"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%#v\nwant\n%#v", got, want)
	}
	if _, has := got["absent"]; has {
		t.Error("an absent key is present")
	}
}

// TestEmptyNullReadsAsNull checks the helpers treat EmptyNull as null, and
// that JSON and YAML write it as null ("" in a flow collection).
func TestEmptyNullReadsAsNull(t *testing.T) {
	if !IsNull(EmptyNull{}) || !IsNull(nil) || IsNull("") || IsNull(map[string]any{}) {
		t.Error("IsNull")
	}
	if KindOf(EmptyNull{}) != "null" {
		t.Errorf("KindOf = %s", KindOf(EmptyNull{}))
	}
	if s, ok := ScalarString(EmptyNull{}); s != "" || !ok {
		t.Errorf("ScalarString = %q, %v", s, ok)
	}
	obj := map[string]any{"metadata": map[string]any{"labels": EmptyNull{}}}
	m, err := EnsureMap(obj, "metadata", "labels")
	if err != nil || m == nil {
		t.Fatalf("EnsureMap over a bare null: %v", err)
	}
	j, err := json.Marshal(map[string]any{"a": EmptyNull{}, "b": EmptyNull{Flow: true}})
	if err != nil || string(j) != `{"a":null,"b":""}` {
		t.Errorf("JSON: %s, %v", j, err)
	}
	y, err := yaml.Marshal(map[string]any{"a": EmptyNull{}, "b": EmptyNull{Flow: true}})
	if err != nil || string(y) != "a: null\nb: \"\"\n" {
		t.Errorf("YAML: %q, %v", y, err)
	}
}

// TestDecodeFoldedAsKustomizePrints checks that a folded block scalar reads
// as kustomize prints it (its trip through yaml.v3 adds a line break before
// a more-indented line after a blank one), and that literal blocks are
// read as they are.
func TestDecodeFoldedAsKustomizePrints(t *testing.T) {
	vs, err := DecodeValues([]byte("folded: >\n  folded\n  more\n\n  para\n\n    indented\n  back\nliteral: |\n  a\n\n    b  \n  c\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := vs[0].(map[string]any)
	if want := "folded more\npara\n\n\n  indented\nback\n"; got["folded"] != want {
		t.Errorf("folded = %q, want %q", got["folded"], want)
	}
	if want := "a\n\n  b  \nc\n"; got["literal"] != want {
		t.Errorf("literal = %q, want %q", got["literal"], want)
	}
	// The same with a local tag, which yaml.v3 reads as a string and
	// kustomize's trip keeps on the node (kustomize v5.8.2 prints "0\n\n 0"
	// for the first, found by FuzzEmitterText).
	vs, err = DecodeValues([]byte("a: !0 >\n 0\n  0\nb: !foo >\n  x\n\n   y\n  z\nc: ! >\n  p\n    q\n"))
	if err != nil {
		t.Fatal(err)
	}
	got = vs[0].(map[string]any)
	for k, want := range map[string]string{"a": "0\n\n 0\n", "b": "x\n\n\n y\nz\n", "c": "p\n\n  q\n"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}

// TestDecodeKeysKeepTheirText checks keys that are not strings: each keeps
// its own text, so 0 and 00 stay two keys.
func TestDecodeKeysKeepTheirText(t *testing.T) {
	vs, err := DecodeValues([]byte("0: a\n00: b\ntrue: c\n1.50: d\n0x1F: e\nnested: {1: f}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"0": "a", "00": "b", "true": "c", "1.50": "d", "0x1F": "e", "nested": map[string]any{"1": "f"}}
	if got := vs[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %#v, want %#v", got, want)
	}
}

// TestEncodeListKeepsEmptyNulls checks the cache encoding keeps the two
// nulls apart.
func TestEncodeListKeepsEmptyNulls(t *testing.T) {
	rs, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\ndata: {a: , b: null}\nlist: [null, {x: }]\n"))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeList(NewList(rs...))
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeList(enc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.At(0).Object(), rs[0].Object(); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n%#v\nwant\n%#v", got, want)
	}
	if v := back.At(0).Object()["metadata"].(map[string]any)["annotations"]; v != (EmptyNull{}) {
		t.Errorf("annotations = %#v, want EmptyNull", v)
	}
}

// TestPlainNulls checks Go plugins get only nil for nulls.
func TestPlainNulls(t *testing.T) {
	v := map[string]any{"a": EmptyNull{}, "b": []any{EmptyNull{Flow: true}, map[string]any{"c": EmptyNull{}}}, "d": "x"}
	want := map[string]any{"a": nil, "b": []any{nil, map[string]any{"c": nil}}, "d": "x"}
	if got := PlainNulls(v); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
}
