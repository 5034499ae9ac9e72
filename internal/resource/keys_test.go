package resource

import (
	"errors"
	"reflect"
	"testing"
)

// TestNonStringKeysRecorded checks which keys Decode records as not
// strings, with the paths of their maps: nested plain numbers, booleans
// and tagged keys; not quoted keys, `! a`, `!!str`, null keys or an
// object's own top-level keys; a List's items each from their own top
// level.
func TestNonStringKeysRecorded(t *testing.T) {
	const head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	for _, tc := range []struct {
		name, text string
		want       []FieldKey
	}{
		{"int", head + "data:\n  9000: x\n  a: y\n", []FieldKey{{Path: []string{"data"}, Key: "9000", Tag: "!!int"}}},
		{"in a list", head + "spec:\n  l:\n  - {a: 1}\n  - {true: 2}\n", []FieldKey{{Path: []string{"spec", "l", "1"}, Key: "true", Tag: "!!bool"}}},
		{"local tag", head + "data:\n  !x a: b\n", []FieldKey{{Path: []string{"data"}, Key: "a", Tag: "!x"}}},
		{"quoted", head + "data:\n  \"9000\": x\n  '1.5': y\n", nil},
		{"string tags", head + "data:\n  ! a: x\n  !!str 1: y\n", nil},
		{"null key", head + "data:\n  null: x\n", nil},
		{"top level", head + "9000: x\n", nil},
		{"list items", "apiVersion: v1\nkind: List\nitems:\n- " + "apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  7: top\n  data:\n    1: a\n",
			[]FieldKey{{Path: []string{"data"}, Key: "1", Tag: "!!int"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Decode([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if got := rs[0].NonStringKeys(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("recorded %#v, want %#v", got, tc.want)
			}
			if err := rs[0].CheckKeys(); (err != nil) != (tc.want != nil) {
				t.Errorf("CheckKeys() = %v, want an error: %v", err, tc.want != nil)
			}
		})
	}
}

// TestCheckKeysAsKustomize checks the error of an object with a number as
// a nested key is kustomize's (a map[interface {}]interface {} in Go
// syntax), that it survives Clone and the cache's encoding, and that it
// goes with the key.
func TestCheckKeysAsKustomize(t *testing.T) {
	rs, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tcp\ndata:\n  9000: default/svc:8080\n"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `map[string]interface {}{"apiVersion":"v1", "data":map[interface {}]interface {}{9000:"default/svc:8080"}, "kind":"ConfigMap", "metadata":map[string]interface {}{"name":"tcp"}}: json: unsupported type: map[interface {}]interface {}`
	enc, err := EncodeList(NewList(rs[0]))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeList(enc)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Resource{"decoded": rs[0], "clone": rs[0].Clone(), "from the cache encoding": dec.At(0)} {
		err := r.CheckKeys()
		if err == nil || err.Error() != want || !errors.Is(err, ErrNonStringKey) || !r.HasNonStringKey() {
			t.Errorf("%s: CheckKeys() = %v, want\n%s", name, err, want)
		}
	}
	c := rs[0].Clone()
	delete(c.Edit()["data"].(map[string]any), "9000")
	if err := c.CheckKeys(); err != nil || c.HasNonStringKey() {
		t.Errorf("with the key deleted: CheckKeys() = %v", err)
	}
}

// TestAddNonStringKeys checks the keys kpipe makes (a generator's) are
// judged as plain scalars: numbers and booleans are not strings.
func TestAddNonStringKeys(t *testing.T) {
	r := New(map[string]any{"data": map[string]any{"1": "a", "true": "b", "a1": "c", "1a": "d", "": "e"}})
	r.AddNonStringKeys("data")
	var keys []string
	for _, k := range r.NonStringKeys() {
		keys = append(keys, k.Key)
	}
	if want := []string{"1", "true"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("recorded %q, want %q", keys, want)
	}
}
