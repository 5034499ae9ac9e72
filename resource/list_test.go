package resource_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

func TestAppenderRejectsDuplicates(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs[0])
	add := resource.NewAppender(l)
	if err := add.AppendAll(resource.NewList(rs[1])); err != nil {
		t.Fatal(err)
	}
	// "a" without a namespace is "a" in namespace default.
	dup, _ := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\n"))
	err = add.AppendAll(resource.NewList(dup...))
	if err == nil || !strings.Contains(err.Error(), "already registered id: ConfigMap.v1.[noGrp]/a.default") {
		t.Fatalf("err = %v", err)
	}
	if l.Len() != 2 {
		t.Errorf("len %d after a rejected append, want 2", l.Len())
	}
	if err := resource.NewList(rs...).AppendAll(resource.NewList(rs...)); err == nil {
		t.Errorf("AppendAll of a list onto itself succeeded")
	}
}

// AnyID asks of the previous IDs, oldest first, then of the current one,
// and stops at the first yes.
func TestAnyIDAsksEveryIDInOrder(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: a\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	r.RememberID()
	r.SetName("p-web")
	r.RememberID()
	r.SetName("p-web-s")
	var asked []resource.ID
	if r.AnyID(func(id resource.ID) bool { asked = append(asked, id); return false }) {
		t.Error("AnyID is true though f never was")
	}
	if all := append(r.PrevIDs(), r.ID()); !reflect.DeepEqual(asked, all) || len(all) != 3 {
		t.Errorf("AnyID asked of %v; the IDs are %v", asked, all)
	}
	asked = nil
	if !r.AnyID(func(id resource.ID) bool { asked = append(asked, id); return id.Name == "p-web" }) || len(asked) != 2 {
		t.Errorf("AnyID asked %v to find p-web; want it to stop at the second", asked)
	}
	asked = nil
	r.AnyPrevID(func(id resource.ID) bool { asked = append(asked, id); return false })
	if !reflect.DeepEqual(asked, r.PrevIDs()) || r.OrigID() != r.PrevIDs()[0] {
		t.Errorf("AnyPrevID asked of %v, OrigID is %v; PrevIDs are %v", asked, r.OrigID(), r.PrevIDs())
	}
	l := resource.NewList(r)
	if got := l.ByAnyID(resource.ID{GVK: r.GVK(), Name: "web", Namespace: "a"}); len(got) != 1 {
		t.Errorf("ByAnyID of the first name = %v", got)
	}
	if got := l.ByAnyID(resource.ID{GVK: r.GVK(), Name: "web", Namespace: "b"}); len(got) != 0 {
		t.Errorf("ByAnyID in another namespace = %v", got)
	}
}

// Annotation reads one annotation as Annotations() reads them all.
func TestAnnotationIsAnnotationsEntry(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    s: x\n    b: true\n    n: 5\n    e: \"\"\n    z: null\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: null\n",
	} {
		rs, err := resyaml.Decode([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		all := rs[0].Annotations()
		for _, k := range []string{"s", "b", "n", "e", "z", "missing"} {
			want, wantOK := all[k]
			if got, ok := rs[0].Annotation(k); got != want || ok != wantOK {
				t.Errorf("%q: Annotation(%q) = %q, %v; Annotations has %q, %v", doc, k, got, ok, want, wantOK)
			}
		}
	}
}

// EditTree gives a frozen element a private clone that takes its build
// state by copy and its tree by reference; the tree that replaces it, and
// a name remembered by the clone, leave the frozen original as it was, as
// they leave other lists that share it.
func TestEditTreeLeavesTheFrozenOriginal(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"))
	if err != nil {
		t.Fatal(err)
	}
	orig := rs[0]
	orig.Freeze()
	shared := resource.NewList(orig)
	l := resource.NewList(orig)
	r := l.EditTree(0)
	if r == orig || r.Frozen() || l.At(0) != r {
		t.Fatalf("EditTree of a frozen element returned it, or a frozen or unplaced clone")
	}
	r.RememberID()
	r.SetObject(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b"}})
	if orig.Name() != "a" || resource.LookupMap(orig.Object(), "data")["k"] != "v" || len(orig.PrevIDs()) != 0 {
		t.Errorf("the frozen original changed: %v, previous names %v", orig.Object(), orig.PrevIDs())
	}
	if shared.At(0) != orig {
		t.Errorf("another list's element was replaced")
	}
	if r.Name() != "b" || len(r.PrevIDs()) != 1 || r.PrevIDs()[0].Name != "a" {
		t.Errorf("the clone: name %q, previous names %v", r.Name(), r.PrevIDs())
	}
	if again := l.EditTree(0); again != r {
		t.Errorf("EditTree of an unfrozen element did not return it")
	}
}

// TestKeep: Keep drops the resources keep refuses, in order, and leaves a
// slice taken before it alone.
func TestKeep(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	before := l.All()
	l.Keep(func(i int, r *resource.Resource) bool { return i != 1 && r.Name() != "c" })
	if l.Len() != 1 || l.At(0).Name() != "a" {
		t.Errorf("kept %d, want a alone", l.Len())
	}
	if before[1].Name() != "b" || before[2].Name() != "c" {
		t.Errorf("the slice taken before changed")
	}
}
