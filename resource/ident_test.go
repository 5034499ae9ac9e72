package resource_test

import (
	"sync"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// settledCM returns a settled ConfigMap whose ID has been read once, so
// that the resource keeps it.
func settledCM(t *testing.T) *resource.Resource {
	t.Helper()
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	r.Settle()
	if got := r.ID().String(); got != "ConfigMap.v1.[noGrp]/a.ns" {
		t.Fatalf("ID %s", got)
	}
	return r
}

// TestIDFollowsChanges: a resource keeps its ID between changes, and
// every way of changing the tree (setters, a map from Edit written after
// the ID was asked, SetObject, a clone's own changes) shows in the next
// ID, GVK, Kind, Name and Namespace.
func TestIDFollowsChanges(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(r *resource.Resource) *resource.Resource
		want   string
	}{
		{"SetName", func(r *resource.Resource) *resource.Resource { r.SetName("b"); return r }, "ConfigMap.v1.[noGrp]/b.ns"},
		{"SetNamespace", func(r *resource.Resource) *resource.Resource { r.SetNamespace("x"); return r }, "ConfigMap.v1.[noGrp]/a.x"},
		{"SetKind", func(r *resource.Resource) *resource.Resource { r.SetKind("Secret"); return r }, "Secret.v1.[noGrp]/a.ns"},
		{"Edit, then ID, then write", func(r *resource.Resource) *resource.Resource {
			obj := r.Edit()
			_ = r.ID()
			obj["apiVersion"] = "example.com/v2"
			resource.LookupMap(obj, "metadata")["name"] = "c"
			return r
		}, "ConfigMap.v2.example.com/c.ns"},
		{"Edit, delete the namespace", func(r *resource.Resource) *resource.Resource {
			obj := r.Edit()
			_ = r.ID()
			delete(resource.LookupMap(obj, "metadata"), "namespace")
			return r
		}, "ConfigMap.v1.[noGrp]/a.[noNs]"},
		{"SetObject, then write", func(r *resource.Resource) *resource.Resource {
			obj := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "s"}}
			r.SetObject(obj)
			_ = r.ID()
			obj["kind"] = "Pod"
			return r
		}, "Pod.v1.[noGrp]/s.[noNs]"},
		{"clone of a frozen one, edited", func(r *resource.Resource) *resource.Resource {
			r.Freeze()
			c := r.Clone()
			_ = c.ID()
			resource.LookupMap(c.Edit(), "metadata")["name"] = "d"
			if r.Name() != "a" {
				t.Errorf("the frozen original was renamed %q", r.Name())
			}
			return c
		}, "ConfigMap.v1.[noGrp]/d.ns"},
		{"List.EditTree of a frozen one, SetObject", func(r *resource.Resource) *resource.Resource {
			r.Freeze()
			l := resource.NewList(r)
			e := l.EditTree(0)
			e.SetObject(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "e"}})
			return l.At(0)
		}, "ConfigMap.v1.[noGrp]/e.[noNs]"},
		{"RememberID, then rename", func(r *resource.Resource) *resource.Resource {
			r.RememberID()
			r.SetName("f")
			if got := r.OrigID().String(); got != "ConfigMap.v1.[noGrp]/a.ns" {
				t.Errorf("OrigID %s", got)
			}
			return r
		}, "ConfigMap.v1.[noGrp]/f.ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.change(settledCM(t))
			id := r.ID()
			if got := id.String(); got != c.want {
				t.Errorf("ID %s, want %s", got, c.want)
			}
			if r.GVK() != id.GVK || r.Kind() != id.Kind || r.Name() != id.Name || r.Namespace() != id.Namespace ||
				r.APIVersion() != id.GVK.APIVersion() {
				t.Errorf("parts %s %s %s %s %s disagree with ID %s", r.APIVersion(), r.GVK(), r.Kind(), r.Name(), r.Namespace(), id)
			}
			// Settled again, the resource keeps the new ID.
			r.Settle()
			if got := r.ID().String(); got != c.want {
				t.Errorf("settled: ID %s, want %s", got, c.want)
			}
		})
	}
}

// TestIDUnsettledReadsTree: a resource made from a tree its caller still
// holds reads the ID from the tree each time until it is settled.
func TestIDUnsettledReadsTree(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}
	r := resource.New(obj)
	_ = r.ID()
	resource.LookupMap(obj, "metadata")["name"] = "b"
	if r.Name() != "b" || r.ID().Name != "b" {
		t.Errorf("name %q, ID %s: the tree says b", r.Name(), r.ID())
	}
}

// TestFrozenIDConcurrent: goroutines read the IDs of shared (frozen)
// resources at once (go test -race checks that nothing is written).
func TestFrozenIDConcurrent(t *testing.T) {
	r := settledCM(t)
	r.Freeze()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				if r.ID().Name != "a" || r.GVK().Kind != "ConfigMap" {
					t.Error("wrong ID")
				}
				_ = r.Clone().ID()
			}
		})
	}
	wg.Wait()
}
