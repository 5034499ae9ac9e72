package stages

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kpipe/kpipe/resource"
)

// TestDirectJSONPatchMatchesEvanphx: on random objects and patches,
// whenever applyDirect applies a patch, the trip through JSON and evanphx
// (kustomize's way) succeeds with the same tree, and the object given is
// left as it was. And the direct path is not one nothing takes: of the
// add, replace and remove patches evanphx applies, nearly all (all but odd
// indices, null steps and values the trip rewrites) are applied directly.
func TestDirectJSONPatchMatchesEvanphx(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	direct, plain := 0, 0
	for seed := int64(0); seed < int64(n); seed++ {
		d, p := checkDirectJSONPatch(t, seed)
		if d {
			direct++
		}
		if p {
			plain++
		}
	}
	if plain < n/10 || direct < plain*9/10 {
		t.Errorf("of %d random patches, evanphx applied %d of add, replace and remove only, and %d were applied directly; want a tenth and nine in ten of those", n, plain, direct)
	}
}

// FuzzDirectJSONPatch is TestDirectJSONPatchMatchesEvanphx from any seed.
func FuzzDirectJSONPatch(f *testing.F) {
	f.Add(int64(1))
	f.Fuzz(func(t *testing.T, seed int64) { checkDirectJSONPatch(t, seed) })
}

// TestDirectJSONPatchCommonPatches: the patches overlays are made of are
// applied directly, with evanphx's result.
func TestDirectJSONPatchCommonPatches(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": 1, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "nginx", "ports": []any{map[string]any{"containerPort": 80}}}},
		}}},
	}
	for _, text := range []string{
		`[{"op":"replace","path":"/spec/replicas","value":3}]`,
		`[{"op":"add","path":"/metadata/labels/tier","value":"front"}]`,
		`[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"A","value":"1"}]}]`,
		`[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"side","image":"busybox"}}]`,
		`[{"op":"remove","path":"/metadata/labels/app"},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.27"}]`,
		`[{"op":"add","path":"/spec/template/spec/containers/0/ports/1","value":{"containerPort":443}}]`,
	} {
		p, err := jsonpatch.DecodePatch([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := applyDirect(directPatch(p), obj)
		if !ok {
			t.Errorf("%s: not applied directly", text)
			continue
		}
		want, err := applyJSONPatch(p, obj)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ndirect %v\nevanphx %v (%v)", text, got, want, err)
		}
	}
}

// checkDirectJSONPatch makes a random object and patch from seed and
// compares applyDirect with applyJSONPatch. It reports whether the patch
// was applied directly, and whether it is one of add, replace and remove
// operations only that evanphx applied.
func checkDirectJSONPatch(t *testing.T, seed int64) (direct, plain bool) {
	t.Helper()
	g := &patchGen{r: rand.New(rand.NewSource(seed))}
	obj := map[string]any{}
	for i, n := 0, 1+g.r.Intn(4); i < n; i++ {
		obj[g.key()] = g.value(3)
	}
	text := g.patch(obj)
	p, err := jsonpatch.DecodePatch([]byte(text))
	if err != nil {
		t.Fatalf("seed %d: decoding %s: %v", seed, text, err)
	}
	before := fmt.Sprintf("%#v", obj) // (fmt sorts keys; NaN is not DeepEqual to itself)
	ops := directPatch(p)
	got, ok := applyDirect(ops, obj)
	if fmt.Sprintf("%#v", obj) != before {
		t.Fatalf("seed %d: applyDirect changed its input", seed)
	}
	want, err := evanphx(p, obj)
	if ok && err != nil {
		t.Fatalf("seed %d: applied directly, but evanphx fails: %v\nobject %#v\npatch %s", seed, err, obj, text)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("seed %d: patch %s\nobject  %#v\ndirect  %#v\nevanphx %#v", seed, text, obj, got, want)
	}
	return ok, err == nil && ops != nil
}

// evanphx is applyJSONPatch, with a panic (evanphx has some on odd
// input) as an error.
func evanphx(p jsonpatch.Patch, obj map[string]any) (out map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return applyJSONPatch(p, obj)
}

// patchGen makes random value trees and patches over them.
type patchGen struct{ r *rand.Rand }

func (g *patchGen) key() string {
	return []string{"a", "b", "c", "spec", "name", "x/y", "t~n", "", "0", "-", "é"}[g.r.Intn(11)]
}

// value is a random tree of the value types resources hold.
func (g *patchGen) value(depth int) any {
	n := 12
	if depth > 0 {
		n = 15
	}
	if g.r.Intn(40) == 0 {
		// What the trip through JSON refuses or rewrites: left to it.
		return []any{math.NaN(), math.Inf(1), "\xff", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}[g.r.Intn(4)]
	}
	switch g.r.Intn(n) {
	case 0:
		return nil
	case 1:
		return resource.EmptyNull{Flow: g.r.Intn(2) == 0}
	case 2:
		return []string{"v", "", "true", "1e3", "a\nb", "<&>", "é"}[g.r.Intn(7)]
	case 3:
		return g.r.Intn(2) == 0
	case 4:
		return g.r.Intn(100)
	case 5:
		return []int64{-1, 1 << 53, 1<<53 + 1, math.MaxInt64}[g.r.Intn(4)]
	case 6:
		return uint64(math.MaxUint64)
	case 7:
		return []float64{0.5, math.Copysign(0, -1), 1e21, 3, 1e-7}[g.r.Intn(5)]
	case 8, 9, 10, 11:
		return "s"
	case 12, 13:
		m := map[string]any{}
		for i, k := 0, g.r.Intn(4); i < k; i++ {
			m[g.key()] = g.value(depth - 1)
		}
		return m
	default:
		l := []any{}
		for i, k := 0, g.r.Intn(4); i < k; i++ {
			l = append(l, g.value(depth-1))
		}
		return l
	}
}

// patch is the JSON text of 1-3 random operations, most on paths that
// exist in obj.
func (g *patchGen) patch(obj map[string]any) string {
	var ops []string
	for i, n := 0, 1+g.r.Intn(3); i < n; i++ {
		kind := []string{"add", "add", "replace", "replace", "remove", "remove", "move", "test"}[g.r.Intn(8)]
		op := map[string]any{"op": kind, "path": g.path(obj)}
		switch kind {
		case "move":
			op["from"] = g.path(obj)
		case "add", "replace", "test":
			switch g.r.Intn(6) {
			case 0: // no value
			case 1:
				op["value"] = nil
			default:
				op["value"] = g.jsonValue(2)
			}
		}
		b, err := json.Marshal(op)
		if err != nil {
			panic(err)
		}
		ops = append(ops, string(b))
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// path is a JSON pointer: along obj's keys and indices, then maybe one
// step that does not exist or is written in a way evanphx reads oddly.
func (g *patchGen) path(obj map[string]any) string {
	if g.r.Intn(20) == 0 {
		return []string{"", "a", "/"}[g.r.Intn(3)]
	}
	var parts []string
	var cur any = obj
	for {
		var tok string
		switch c := cur.(type) {
		case map[string]any:
			keys := make([]string, 0, len(c))
			for k := range c {
				keys = append(keys, k)
			}
			if len(keys) == 0 || g.r.Intn(4) == 0 {
				cur, tok = nil, g.key()
			} else {
				// sorted, so that a seed makes one path
				sort.Strings(keys)
				k := keys[g.r.Intn(len(keys))]
				cur, tok = c[k], k
			}
		case []any:
			i := g.r.Intn(len(c) + 2)
			if i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
			tok = fmt.Sprint(i)
			if g.r.Intn(6) == 0 {
				tok = []string{"-", "-1", "01", "+0", "x"}[g.r.Intn(5)]
			}
		default:
			tok = g.key()
			cur = nil
		}
		parts = append(parts, strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
		if cur == nil || g.r.Intn(3) == 0 {
			break
		}
	}
	return "/" + strings.Join(parts, "/")
}

// jsonValue is a random value as a patch's JSON holds it.
func (g *patchGen) jsonValue(depth int) any {
	switch g.r.Intn(7) {
	case 0:
		return nil
	case 1:
		return "v"
	case 2:
		return g.r.Intn(10)
	case 3:
		return 1.5
	case 4:
		return true
	case 5:
		if depth > 0 {
			return map[string]any{g.key(): g.jsonValue(depth - 1)}
		}
		return map[string]any{}
	default:
		if depth > 0 {
			return []any{g.jsonValue(depth - 1)}
		}
		return []any{}
	}
}
