package resyaml

import (
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/resource"
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
		"bare": resource.EmptyNull{}, "null": nil, "tilde": nil, "Null": nil, "tagged": resource.EmptyNull{},
		"quoted": "", "map": map[string]any{}, "list": []any{},
		"nested": map[string]any{"bare": resource.EmptyNull{}, "list": []any{resource.EmptyNull{}, nil}},
		"flow":   map[string]any{"a": resource.EmptyNull{Flow: true}, "b": nil, "c": []any{"x"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%#v\nwant\n%#v", got, want)
	}
	if _, has := got["absent"]; has {
		t.Error("an absent key is present")
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
