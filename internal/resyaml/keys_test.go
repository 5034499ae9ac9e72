package resyaml

import (
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/resource"
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
		want       []resource.FieldKey
	}{
		{"int", head + "data:\n  9000: x\n  a: y\n", []resource.FieldKey{{Path: []string{"data"}, Key: "9000", Tag: "!!int"}}},
		{"in a list", head + "spec:\n  l:\n  - {a: 1}\n  - {true: 2}\n", []resource.FieldKey{{Path: []string{"spec", "l", "1"}, Key: "true", Tag: "!!bool"}}},
		{"local tag", head + "data:\n  !x a: b\n", []resource.FieldKey{{Path: []string{"data"}, Key: "a", Tag: "!x"}}},
		{"quoted", head + "data:\n  \"9000\": x\n  '1.5': y\n", nil},
		{"string tags", head + "data:\n  ! a: x\n  !!str 1: y\n", nil},
		{"null key", head + "data:\n  null: x\n", nil},
		{"top level", head + "9000: x\n", nil},
		{"list items", "apiVersion: v1\nkind: List\nitems:\n- " + "apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  7: top\n  data:\n    1: a\n",
			[]resource.FieldKey{{Path: []string{"data"}, Key: "1", Tag: "!!int"}}},
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
