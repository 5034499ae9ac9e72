package fieldspec

import (
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

const crdJSON = `{
  "example.com/v1.MyKind": {
    "Schema": {
      "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"$ref": "meta.ObjectMeta"},
        "spec": {"$ref": "example.com/v1.MyKindSpec"}
      }
    }
  },
  "example.com/v1.MyKindSpec": {
    "Schema": {
      "properties": {
        "secretRef": {"x-kubernetes-object-ref-api-version": "v1", "x-kubernetes-object-ref-kind": "Secret"},
        "beeRef": {"x-kubernetes-object-ref-api-version": "v1beta1", "x-kubernetes-object-ref-kind": "Bee",
                   "x-kubernetes-object-ref-name-key": "beeName"},
        "tags": {"x-kubernetes-annotation": ""},
        "selector": {"x-kubernetes-label-selector": ""},
        "self": {"$ref": "example.com/v1.MyKindSpec"},
        "notAString": {"x-kubernetes-annotation": true}
      }
    }
  },
  "example.com/v1.NotAType": {
    "Schema": {"properties": {"ref": {"x-kubernetes-object-ref-api-version": "v1", "x-kubernetes-object-ref-kind": "Secret"}}}
  }
}`

func TestFromCRDs(t *testing.T) {
	want := &Config{
		CommonAnnotations: []loaders.FieldSpec{{Kind: "MyKind", Path: "spec/tags"}},
		CommonLabels:      []loaders.FieldSpec{{Kind: "MyKind", Path: "spec/selector"}},
		NameReference: []NameBackReference{
			{Version: "v1", Kind: "Secret", FieldSpecs: []loaders.FieldSpec{{Kind: "MyKind", Path: "spec/secretRef/name"}}},
			{Version: "v1beta1", Kind: "Bee", FieldSpecs: []loaders.FieldSpec{{Kind: "MyKind", Path: "spec/beeRef/beeName"}}},
		},
	}
	got, err := FromCRDs([]byte(crdJSON))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON:\n got %+v\nwant %+v", got, want)
	}
	// The same definitions in YAML read the same.
	y := `example.com/v1.MyKind:
  Schema:
    properties:
      apiVersion: {type: string}
      kind: {type: string}
      metadata: {}
      spec:
        $ref: example.com/v1.MyKindSpec
example.com/v1.MyKindSpec:
  Schema:
    properties:
      secretRef:
        x-kubernetes-object-ref-api-version: v1
        x-kubernetes-object-ref-kind: Secret
`
	got, err = FromCRDs([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	wantY := &Config{NameReference: want.NameReference[:1]}
	if !reflect.DeepEqual(got, wantY) {
		t.Errorf("YAML:\n got %+v\nwant %+v", got, wantY)
	}
	if _, err := FromCRDs([]byte(`{"a": {"Schema": {"properties": 3}}}`)); err == nil {
		t.Error("a malformed definition should fail")
	}
}
