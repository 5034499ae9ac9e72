package fieldspec

import (
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

// appendSplitPath splits as SplitPath does, after what dst holds.
func TestAppendSplitPathIsSplitPath(t *testing.T) {
	for _, p := range []string{"", "/", "//", "a", "/a", "a/", "a//b", "/a/b/c", "spec/template/spec/containers[]/image",
		`metadata/annotations/a.io\/b`, `\/a`, `a\`, `/a/b\/c/d\/`, "a/b/c/d/e/f/g/h/i/j"} {
		got := appendSplitPath([]string{"x"}, p)
		if want := append([]string{"x"}, loaders.SplitFieldPath(p)...); !reflect.DeepEqual(got, want) {
			t.Errorf("appendSplitPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestWalkPaths: every field Walk reaches comes with the map keys that
// lead to it (lists add none), and a Path kept from one field is not
// changed by the fields reached after it.
func TestWalkPaths(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"env": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}},
		map[string]any{"env": []any{map[string]any{"name": "c"}}},
		map[string]any{"other": 1},
	}}}
	var paths [][]string
	var names []any
	err := Walk(obj, loaders.FieldSpec{Path: "spec/containers[]/env[]/name"}, CreateNone, func(f Field) error {
		paths = append(paths, f.Path)
		names = append(names, f.Value())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"spec", "containers", "env", "name"}
	if len(paths) != 3 || !reflect.DeepEqual(names, []any{"a", "b", "c"}) {
		t.Fatalf("reached %v, want a, b and c", names)
	}
	for _, p := range paths {
		if !reflect.DeepEqual(p, want) {
			t.Errorf("path %q, want %q", p, want)
		}
	}
}
