package rescodec

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// TestCheckKeysAsKustomize checks the error of an object with a number as
// a nested key is kustomize's (a map[interface {}]interface {} in Go
// syntax), that it survives Clone and the cache's encoding, and that it
// goes with the key.
func TestCheckKeysAsKustomize(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tcp\ndata:\n  9000: default/svc:8080\n"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `map[string]interface {}{"apiVersion":"v1", "data":map[interface {}]interface {}{9000:"default/svc:8080"}, "kind":"ConfigMap", "metadata":map[string]interface {}{"name":"tcp"}}: json: unsupported type: map[interface {}]interface {}`
	enc, err := EncodeList(resource.NewList(rs[0]))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeList(enc)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*resource.Resource{"decoded": rs[0], "clone": rs[0].Clone(), "from the cache encoding": dec.At(0)} {
		err := r.CheckKeys()
		if err == nil || err.Error() != want || !errors.Is(err, resource.ErrNonStringKey) || !r.HasNonStringKey() {
			t.Errorf("%s: CheckKeys() = %v, want\n%s", name, err, want)
		}
	}
	c := rs[0].Clone()
	delete(c.Edit()["data"].(map[string]any), "9000")
	if err := c.CheckKeys(); err != nil || c.HasNonStringKey() {
		t.Errorf("with the key deleted: CheckKeys() = %v", err)
	}
}

// TestEncodeListKeepsEmptyNulls checks the cache encoding keeps the two
// nulls apart.
func TestEncodeListKeepsEmptyNulls(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\ndata: {a: , b: null}\nlist: [null, {x: }]\n"))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := EncodeList(resource.NewList(rs...))
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
	if v := back.At(0).Object()["metadata"].(map[string]any)["annotations"]; v != (resource.EmptyNull{}) {
		t.Errorf("annotations = %#v, want EmptyNull", v)
	}
}
