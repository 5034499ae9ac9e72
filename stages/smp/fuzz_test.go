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

// FuzzMerge merges arbitrary YAML objects: Merge must not panic or modify
// its inputs, and a patch without fields beyond the object's identity must
// not delete it. The seeds are the kustomize comparison cases in testdata.
func FuzzMerge(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		parts := strings.SplitN(string(data), "# patch\n", 2)
		if len(parts) != 2 {
			continue
		}
		patch, _, _ := strings.Cut(parts[1], "\n# ")
		f.Add(strings.TrimPrefix(parts[0], "# object\n"), patch)
	}
	f.Fuzz(func(t *testing.T, objText, patchText string) {
		objs, err1 := resyaml.DecodeValues([]byte(objText))
		patches, err2 := resyaml.DecodeValues([]byte(patchText))
		if err1 != nil || err2 != nil || len(objs) == 0 || len(patches) == 0 {
			return
		}
		obj, ok1 := objs[0].(map[string]any)
		patch, ok2 := patches[0].(map[string]any)
		if !ok1 || !ok2 {
			return
		}
		objCopy, patchCopy := resource.CopyMap(obj), resource.CopyMap(patch)
		_, _, _ = Merge(obj, patch, Builtin())
		if !reflect.DeepEqual(obj, objCopy) || !reflect.DeepEqual(patch, patchCopy) {
			t.Fatal("Merge modified its inputs")
		}
		header := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
		if _, deleted, err := Merge(obj, header, Builtin()); err == nil && deleted {
			t.Fatal("a patch without directives deleted the object")
		}
	})
}
