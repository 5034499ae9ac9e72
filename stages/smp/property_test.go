package smp

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/resource"
)

// randomDeployment builds a Deployment whose keyed lists have distinct keys
// (as valid objects do): containers by name, their env by name, their ports
// by containerPort and protocol, volumes by name; plus plain lists and maps.
func randomDeployment(r *rand.Rand) map[string]any {
	var containers []any
	for i, n := 0, r.Intn(4); i < n; i++ {
		c := map[string]any{"name": fmt.Sprintf("c%d", i), "image": fmt.Sprintf("img%d:%d", r.Intn(5), r.Intn(9))}
		if r.Intn(2) == 0 {
			env := []any{}
			for j, m := 0, r.Intn(4); j < m; j++ {
				env = append(env, map[string]any{"name": fmt.Sprintf("E%d", j), "value": fmt.Sprint(r.Intn(100))})
			}
			c["env"] = env
		}
		if r.Intn(2) == 0 {
			ports := []any{}
			for j, m := 0, r.Intn(3); j < m; j++ {
				p := map[string]any{"containerPort": 8000 + j}
				if r.Intn(2) == 0 {
					p["protocol"] = "TCP"
				}
				ports = append(ports, p)
			}
			c["ports"] = ports
		}
		if r.Intn(2) == 0 {
			c["args"] = []any{"--a", r.Intn(3), true}
		}
		if r.Intn(3) == 0 {
			c["resources"] = map[string]any{}
		}
		containers = append(containers, c)
	}
	spec := map[string]any{"containers": containers}
	if containers == nil {
		spec["containers"] = []any{}
	}
	if r.Intn(2) == 0 {
		spec["volumes"] = []any{map[string]any{"name": "v", "emptyDir": map[string]any{}}}
	}
	if r.Intn(2) == 0 {
		spec["nodeSelector"] = map[string]any{"zone": "a", "n": r.Intn(3)}
	}
	md := map[string]any{"name": "d", "labels": map[string]any{"app": "x"}}
	if r.Intn(2) == 0 {
		md["finalizers"] = []any{"f1", "f2"}
	}
	if r.Intn(3) == 0 {
		md["creationTimestamp"] = nil
	}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   md,
		"spec": map[string]any{
			"replicas": r.Intn(5),
			"template": map[string]any{"spec": spec},
		},
	}
}

// TestEmptyPatchIsIdentity: a patch that names the object and says nothing
// else leaves it as it was.
func TestEmptyPatchIsIdentity(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	patch := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"}}
	for i := 0; i < 500; i++ {
		obj := randomDeployment(r)
		got, deleted, err := Merge(obj, patch, Builtin())
		if err != nil || deleted {
			t.Fatalf("case %d: err=%v deleted=%v", i, err, deleted)
		}
		if !reflect.DeepEqual(got, obj) {
			t.Fatalf("case %d: empty patch changed\n%#v\ninto\n%#v", i, obj, got)
		}
	}
}

// TestMergeKeyListOrder: merging containers by name puts the patch's
// containers first, in the patch's order, each merged with the object's
// container of the same name, then the object's other containers in their
// order (kustomize prepends what patches add).
func TestMergeKeyListOrder(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	names := []string{"a", "b", "c", "d", "e", "f"}
	pick := func() []string {
		p := r.Perm(len(names))[:r.Intn(len(names)+1)]
		out := make([]string, len(p))
		for i, j := range p {
			out[i] = names[j]
		}
		return out
	}
	containers := func(ns []string, field string) []any {
		out := []any{}
		for _, n := range ns {
			out = append(out, map[string]any{"name": n, field: field + "-" + n})
		}
		return out
	}
	wrap := func(cs []any) map[string]any {
		return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}}
	}
	for i := 0; i < 500; i++ {
		objNames, patchNames := pick(), pick()
		got, _, err := Merge(wrap(containers(objNames, "image")), wrap(containers(patchNames, "command")), Builtin())
		if err != nil {
			t.Fatal(err)
		}
		inObj, inPatch := map[string]bool{}, map[string]bool{}
		for _, n := range objNames {
			inObj[n] = true
		}
		var want []any
		for _, n := range patchNames {
			inPatch[n] = true
			c := map[string]any{"name": n, "command": "command-" + n}
			if inObj[n] {
				c["image"] = "image-" + n
			}
			want = append(want, c)
		}
		for _, n := range objNames {
			if !inPatch[n] {
				want = append(want, map[string]any{"name": n, "image": "image-" + n})
			}
		}
		if want == nil {
			want = []any{}
		}
		gotList, _ := resource.Lookup(got, "spec", "template", "spec", "containers")
		if !reflect.DeepEqual(gotList, want) {
			t.Fatalf("object %v, patch %v:\ngot  %v\nwant %v", objNames, patchNames, gotList, want)
		}
	}
}
