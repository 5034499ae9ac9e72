package fieldspec

import (
	"reflect"
	"testing"
)

// appendSplitPath splits as SplitPath does, after what dst holds.
func TestAppendSplitPathIsSplitPath(t *testing.T) {
	for _, p := range []string{"", "/", "//", "a", "/a", "a/", "a//b", "/a/b/c", "spec/template/spec/containers[]/image",
		`metadata/annotations/a.io\/b`, `\/a`, `a\`, `/a/b\/c/d\/`, "a/b/c/d/e/f/g/h/i/j"} {
		got := appendSplitPath([]string{"x"}, p)
		if want := append([]string{"x"}, SplitPath(p)...); !reflect.DeepEqual(got, want) {
			t.Errorf("appendSplitPath(%q) = %q, want %q", p, got, want)
		}
	}
}
