package engine

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// fill sets every field reachable from v (strings, bools, slices, maps
// with string keys, structs) to random non-zero values, so that a field
// the encoding forgets does not survive a round trip.
func fill(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d\xff\x00é", rng.Intn(1000))) // invalid UTF-8 and NUL kept byte for byte
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(rng, v.Field(i))
		}
	case reflect.Slice:
		n := 1 + rng.Intn(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < s.Len(); i++ {
			fill(rng, s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 1 + rng.Intn(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(rng, k)
			fill(rng, e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem())
		v.Set(p)
	default:
		panic("fill: no rule for " + v.Type().String())
	}
}

func TestExtraRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := range 50 {
		var cfg fieldspec.Config
		var vars stages.VarSet
		fill(rng, reflect.ValueOf(&cfg).Elem())
		fill(rng, reflect.ValueOf(&vars).Elem())
		in := &cfg
		if i%5 == 0 {
			in = nil
		}
		if i%7 == 0 {
			vars = stages.VarSet{}
		}
		gotCfg, gotVars, err := decodeExtra(encodeExtra(in, vars))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotCfg, in) || !reflect.DeepEqual(gotVars, vars) {
			t.Fatalf("round trip %d:\n%+v\n%+v\ngot\n%+v\n%+v", i, in, vars, gotCfg, gotVars)
		}
	}
	// configLists names every field-spec list of a Config.
	n := 0
	ty := reflect.TypeOf(fieldspec.Config{})
	for i := 0; i < ty.NumField(); i++ {
		if ty.Field(i).Type == reflect.TypeOf([]loaders.FieldSpec(nil)) {
			n++
		}
	}
	if got := len(configLists(&fieldspec.Config{})); got != n {
		t.Errorf("configLists has %d lists, Config %d", got, n)
	}
}

func TestExtraRefusesDamage(t *testing.T) {
	var cfg fieldspec.Config
	var vars stages.VarSet
	fill(rand.New(rand.NewSource(2)), reflect.ValueOf(&cfg).Elem())
	fill(rand.New(rand.NewSource(3)), reflect.ValueOf(&vars).Elem())
	data := encodeExtra(&cfg, vars)
	for cut := 0; cut < len(data); cut++ {
		if _, _, err := decodeExtra(data[:cut]); err == nil {
			t.Fatalf("a part cut at %d of %d bytes decoded", cut, len(data))
		}
	}
	if _, _, err := decodeExtra(append(data, 0)); err == nil {
		t.Error("a part with a trailing byte decoded")
	}
}

// Stored bytes come from a cache directory anyone with access may have
// written (with a digest that matches): no bytes make the decoders of
// manifests and extra parts fail other than by refusing.
func FuzzDecodeStored(f *testing.F) {
	f.Add(encodeManifest([]readSet{{recs: []readRecord{{Path: "p.yaml"}}}, {lazy: true}}))
	f.Add(encodeExtra(&fieldspec.Config{Images: []loaders.FieldSpec{{Kind: "Pod", Path: "spec/containers/image"}}}, stages.VarSet{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if sets, ok := decodeManifest(data); ok && len(sets) > maxReadSets {
			t.Fatalf("a manifest of %d read sets decoded", len(sets))
		}
		_, _, _ = decodeExtra(data)
	})
}
