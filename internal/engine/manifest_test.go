package engine

import (
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

func TestManifestRoundTripAndDamage(t *testing.T) {
	recs := []readRecord{
		{Path: "patch.yaml"},
		{Path: "charts/web", Tree: true},
		{Path: "ü/../x"},
	}
	for _, want := range [][]readSet{{{recs: recs}, {recs: recs[:1], lazy: true}}, {{lazy: true, recs: []readRecord{}}}, {}} {
		data := encodeManifest(want)
		got, ok := decodeManifest(data)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %+v, %v; want %+v", got, ok, want)
		}
		for n := 0; n < len(data); n++ {
			if _, ok := decodeManifest(data[:n]); ok {
				t.Errorf("a manifest cut to %d of %d bytes decoded", n, len(data))
			}
		}
		if _, ok := decodeManifest(append(data, 0)); ok {
			t.Error("a manifest with a trailing byte decoded")
		}
	}
	many := make([]readSet, maxReadSets+1)
	for i := range many {
		many[i].recs = []readRecord{}
	}
	if _, ok := decodeManifest(encodeManifest(many)); ok {
		t.Errorf("a manifest of %d read sets decoded (at most %d are kept)", len(many), maxReadSets)
	}
}

func TestAccumulationRoundTripAndDamage(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n  n: \"1\"\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports: [{port: 80}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	custom, err := fieldspec.Parse([]byte("namePrefix:\n- path: spec/x\n  kind: Thing\n"))
	if err != nil {
		t.Fatal(err)
	}
	vars := stages.VarSet{}
	if err := vars.Merge(loaders.Var{Name: "SVC", ObjRef: loaders.VarTarget{Kind: "Service", Name: "s"}}); err != nil {
		t.Fatal(err)
	}
	b := &Builder{}
	plain, err := b.plainConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*Accumulation{
		{Resources: resource.NewList(rs...), Config: plain, PlainConfig: true},
		{Resources: resource.NewList(rs...), Config: custom, Vars: vars},
		{Resources: resource.NewList(), Config: plain, PlainConfig: true, Vars: vars},
	} {
		data, err := b.encodeAccumulation(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.decodeAccumulation(data)
		if err != nil {
			t.Fatal(err)
		}
		if got.PlainConfig != want.PlainConfig || !reflect.DeepEqual(got.Config, want.Config) || !reflect.DeepEqual(got.Vars, want.Vars) {
			t.Errorf("config or vars changed in a round trip: got %+v %+v, want %+v %+v", got.Config, got.Vars, want.Config, want.Vars)
		}
		if got.Resources.Len() != want.Resources.Len() {
			t.Fatalf("%d resources back, want %d", got.Resources.Len(), want.Resources.Len())
		}
		for i, r := range want.Resources.All() {
			if !reflect.DeepEqual(got.Resources.At(i).Object(), r.Object()) {
				t.Errorf("resource %d changed in a round trip: got %v, want %v", i, got.Resources.At(i).Object(), r.Object())
			}
		}
		for n := 0; n < len(data); n++ {
			if _, err := b.decodeAccumulation(data[:n]); err == nil {
				t.Errorf("an accumulation cut to %d of %d bytes decoded", n, len(data))
			}
		}
	}
}
