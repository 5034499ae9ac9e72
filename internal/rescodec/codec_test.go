package rescodec

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

func TestEncodeListRoundTrip(t *testing.T) {
	rs, err := resyaml.Decode([]byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    when: 2001-12-14t21:59:43.10-05:00
spec:
  replicas: 3
  big: 18446744073709551615
  ratio: 0.5
  flag: true
  nothing: null
  list: [a, 1, {b: c}]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	r.Edit()["when"] = time.Date(2001, 12, 15, 2, 59, 43, 0, time.UTC)
	r.RememberID()
	r.SetName("prod-web")
	r.AddRefBy(resource.ID{GVK: resource.GVK{Kind: "Service", Version: "v1"}, Name: "svc"})
	r.Gen = &resource.Generated{Behavior: "merge", NeedsHash: true}
	l := resource.NewList(r)
	enc, err := EncodeList(l)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeList(enc)
	if err != nil {
		t.Fatal(err)
	}
	got := back.At(0)
	if !reflect.DeepEqual(got.Object(), r.Object()) {
		t.Errorf("object changed in a round trip:\n got %#v\nwant %#v", got.Object(), r.Object())
	}
	if !reflect.DeepEqual(got.PrevIDs(), r.PrevIDs()) || got.ID() != r.ID() || !reflect.DeepEqual(got.RefBy(), r.RefBy()) ||
		*got.Gen != *r.Gen {
		t.Errorf("build state changed in a round trip")
	}
	again, _ := EncodeList(back)
	if !bytes.Equal(enc, again) {
		t.Errorf("encoding is not deterministic")
	}

	// The unsorted encoding, appended after other bytes, decodes to the
	// same resource.
	un, err := AppendListUnsorted([]byte("prefix"), l)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(un, []byte("prefix")) || len(un)-len("prefix") != len(enc) {
		t.Fatalf("unsorted encoding: %d bytes after the prefix, want %d", len(un)-len("prefix"), len(enc))
	}
	back, err = DecodeList(un[len("prefix"):])
	if err != nil {
		t.Fatal(err)
	}
	if got := back.At(0); !reflect.DeepEqual(got.Object(), r.Object()) || !reflect.DeepEqual(got.PrevIDs(), r.PrevIDs()) || got.ID() != r.ID() {
		t.Errorf("unsorted encoding changed the resource in a round trip:\n got %#v\nwant %#v", got.Object(), r.Object())
	}
}

func TestDecodeListRejectsGarbage(t *testing.T) {
	enc, _ := EncodeList(resource.NewList(resource.New(map[string]any{"kind": "A", "metadata": map[string]any{"name": "a"}})))
	for i := 0; i < len(enc); i++ {
		if _, err := DecodeList(enc[:i]); err == nil {
			t.Errorf("truncated encoding (%d of %d bytes) decoded without error", i, len(enc))
		}
	}
}

func TestEncodeListRejectsUnknownTypes(t *testing.T) {
	l := resource.NewList(resource.New(map[string]any{"kind": "A", "x": []string{"a"}}))
	if _, err := EncodeList(l); err == nil {
		t.Error("a []string value encoded without error")
	}
}
