package smp

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// TestMergeMatchesKustomize replays the cases in testdata: an object, a
// strategic-merge patch for it, and what kustomize v5.8.0 printed after
// applying the patch through `patches:` (or the start of its error).
func TestMergeMatchesKustomize(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			sec := sections(t, f)
			obj, patch := decodeOne(t, sec["object"]), decodeOne(t, sec["patch"])
			got, deleted, err := Merge(obj, patch, Builtin())
			if want, ok := sec["error"]; ok {
				first, _, _ := strings.Cut(want, "\n")
				if err == nil || !strings.HasPrefix(err.Error(), first) {
					t.Fatalf("error = %v, want one starting %q", err, first)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSpace(sec["want"])
			if want == "" {
				if !deleted {
					t.Fatalf("object not deleted: %v", got)
				}
				return
			}
			if deleted {
				t.Fatal("object deleted")
			}
			if w := decodeOne(t, want); !reflect.DeepEqual(got, w) {
				t.Errorf("merged:\n%#v\nwant:\n%#v", got, w)
			}
		})
	}
}

// sections splits a test file at its "# name" lines.
func sections(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	name := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "# "); ok && !strings.Contains(s, " ") {
			name = s
			out[name] = ""
			continue
		}
		out[name] += line
	}
	return out
}

func decodeOne(t *testing.T, text string) map[string]any {
	t.Helper()
	vs, err := resyaml.DecodeValues([]byte(text))
	if err != nil {
		t.Fatalf("decoding %q: %v", text, err)
	}
	if len(vs) != 1 {
		t.Fatalf("want one document in %q, got %d", text, len(vs))
	}
	m, ok := vs[0].(map[string]any)
	if !ok {
		t.Fatalf("not a map: %q", text)
	}
	return m
}

func TestMergeLeavesInputsAlone(t *testing.T) {
	obj := decodeOne(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - {name: a, image: x}
`)
	patch := decodeOne(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - {name: b, image: y}
      - {name: a, $patch: delete}
`)
	objCopy, patchCopy := resource.CopyMap(obj), resource.CopyMap(patch)
	got, _, err := Merge(obj, patch, Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj, objCopy) || !reflect.DeepEqual(patch, patchCopy) {
		t.Error("Merge modified its inputs")
	}
	containers, _ := resource.Lookup(got, "spec", "template", "spec", "containers")
	want := []any{map[string]any{"name": "b", "image": "y"}}
	if !reflect.DeepEqual(containers, want) {
		t.Errorf("containers = %v, want %v", containers, want)
	}
}

func TestMergeWithoutSchemaReplacesLists(t *testing.T) {
	obj := decodeOne(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: a}, {name: b}]}}}\n")
	patch := decodeOne(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c}]}}}\n")
	got, _, err := Merge(obj, patch, nil)
	if err != nil {
		t.Fatal(err)
	}
	containers, _ := resource.Lookup(got, "spec", "template", "spec", "containers")
	if want := []any{map[string]any{"name": "c"}}; !reflect.DeepEqual(containers, want) {
		t.Errorf("without a schema, containers = %v, want %v", containers, want)
	}
	got, _, err = Merge(obj, patch, Builtin())
	if err != nil {
		t.Fatal(err)
	}
	containers, _ = resource.Lookup(got, "spec", "template", "spec", "containers")
	if want := []any{map[string]any{"name": "c"}, map[string]any{"name": "a"}, map[string]any{"name": "b"}}; !reflect.DeepEqual(containers, want) {
		t.Errorf("with the built-in schema, containers = %v, want %v", containers, want)
	}
}
