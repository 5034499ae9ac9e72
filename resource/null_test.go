package resource

import (
	"encoding/json"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

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

// TestPlainNulls checks Go plugins get only nil for nulls.
func TestPlainNulls(t *testing.T) {
	v := map[string]any{"a": EmptyNull{}, "b": []any{EmptyNull{Flow: true}, map[string]any{"c": EmptyNull{}}}, "d": "x"}
	want := map[string]any{"a": nil, "b": []any{nil, map[string]any{"c": nil}}, "d": "x"}
	if got := PlainNulls(v); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
}
