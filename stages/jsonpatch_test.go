package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// TestJSONPatchSeesBuildStateAnnotations checks that a JSON patch sees the
// object kustomize hands it: kustomize keeps the build state (here the
// previous name the `patches` entry records) in metadata.annotations, so
// `add /metadata/annotations/x` works on an object without annotations,
// or with a null or bare annotations field; the build state does not leak
// into the object.
func TestJSONPatchSeesBuildStateAnnotations(t *testing.T) {
	const add = "- op: add\n  path: /metadata/annotations/x\n  value: z\n"
	for _, ann := range []string{"", "  annotations:\n", "  annotations: null\n", "  annotations: {}\n", "  annotations: {a: b}\n"} {
		rs := decodeList(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"+ann)
		s, err := newPatch(loaders.Patch{Patch: add, Target: &loaders.Selector{Kind: "ConfigMap"}}, mapFiles(nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background(), rs); err != nil {
			t.Fatalf("%q: %v", ann, err)
		}
		got := resource.LookupMap(rs.At(0).Object(), "metadata", "annotations")
		if got["x"] != "z" {
			t.Errorf("%q: annotations %v, want x: z", ann, got)
		}
		for k := range got {
			if strings.HasPrefix(k, "internal.config") {
				t.Errorf("%q: build state left in the object: %v", ann, got)
			}
		}
	}
}

// TestJSON6902NeedsAnAnnotationsMap checks the other side: the
// patchesJson6902 transformer records no build state, so kustomize's
// object has no annotations map to add to, and the patch fails as it does
// there.
func TestJSON6902NeedsAnAnnotationsMap(t *testing.T) {
	for _, ann := range []string{"", "  annotations:\n", "  annotations: null\n"} {
		rs := decodeList(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"+ann)
		s, err := NewJSONPatch(JSONPatchConfig{Target: &loaders.Selector{Kind: "ConfigMap", Name: "c"}, JSONOp: `[{"op": "add", "path": "/metadata/annotations/x", "value": "z"}]`}, mapFiles(nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background(), rs); err == nil || !strings.Contains(err.Error(), "doc is missing path") {
			t.Errorf("%q: err = %v, want kustomize's \"doc is missing path\"", ann, err)
		}
	}
}
