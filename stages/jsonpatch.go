package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// ReadFile reads a file a stage's config names, through the build's
// loader (so the load restrictor applies). Stages read files only while
// they are configured, never in Run, and their fingerprints cover the
// contents.
type ReadFile func(path string) ([]byte, error)

// JSONPatchConfig configures the PatchJson6902Transformer: an RFC 6902
// patch, inline (JSON or YAML) or in a file, applied to every object the
// target selects.
type JSONPatchConfig struct {
	Target *loaders.Selector `json:"target,omitempty"`
	Path   string            `json:"path,omitempty"`
	JSONOp string            `json:"jsonOp,omitempty"`
}

// NewJSONPatch returns the PatchJson6902Transformer stage, reading the
// patch file (if any) with read.
func NewJSONPatch(cfg JSONPatchConfig, read ReadFile) (Stage, error) {
	if cfg.Target == nil || cfg.Target.Name == "" {
		return nil, errors.New("must specify the target name")
	}
	if cfg.Path == "" && cfg.JSONOp == "" {
		return nil, errors.New("empty file path and empty jsonOp")
	}
	if cfg.Path != "" {
		if cfg.JSONOp != "" {
			return nil, errors.New("must specify a file path or jsonOp, not both")
		}
		data, err := read(cfg.Path)
		if err != nil {
			return nil, err
		}
		if len(data) == 0 {
			return nil, fmt.Errorf("patch file '%s' empty seems to be empty", cfg.Path)
		}
		cfg.JSONOp = string(data)
	}
	patch, err := decodeJSONPatch(cfg.JSONOp)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", cfg.JSONOp, err)
	}
	if len(patch) == 0 {
		return nil, fmt.Errorf("patch appears to be empty; file=%s, JsonOp=%s", cfg.Path, cfg.JSONOp)
	}
	return &jsonPatchStage{kind: "PatchJson6902Transformer", target: *cfg.Target, text: cfg.JSONOp, patch: patch, direct: directPatch(patch)}, nil
}

// JSONPatchFromConfig configures a PatchJson6902Transformer from its
// builtin plugin config.
func JSONPatchFromConfig(data []byte, read ReadFile) (Stage, error) {
	var cfg JSONPatchConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, err
	}
	return NewJSONPatch(cfg, read)
}

// decodeJSONPatch parses patch operations written as JSON or as YAML.
func decodeJSONPatch(text string) (jsonpatch.Patch, error) {
	if text == "" {
		return nil, errors.New("empty json patch operations")
	}
	b := []byte(text)
	if text[0] != '[' {
		j, err := loaders.YAMLToJSON(b)
		if err != nil {
			return nil, err
		}
		b = j
	}
	return jsonpatch.DecodePatch(b)
}

// jsonPatchStage applies a decoded JSON patch to the selected objects.
type jsonPatchStage struct {
	kind   string
	target loaders.Selector
	text   string
	patch  jsonpatch.Patch
	// direct is patch as applyDirect applies it, nil when every object
	// goes through JSON (jsonpatch_direct.go).
	direct []directOp
	// rename records the old ID first, so that a patch may rename objects
	// (the `patches` field allows it; patchesJson6902 does not).
	rename bool
}

func (s *jsonPatchStage) Kind() string { return s.kind }
func (s *jsonPatchStage) Fingerprint() []byte {
	return Fingerprint(s.kind, struct {
		Target loaders.Selector
		Patch  string
		Rename bool
	}{s.target, s.text, s.rename})
}

// Run patches every selected object; the build annotations kpipe keeps
// survive the patch.
func (s *jsonPatchStage) Run(_ context.Context, rs *resource.List) error {
	idx, err := selectIndexes(s.target, rs)
	if err != nil {
		return err
	}
	for _, i := range idx {
		// The patched object is built apart from the resource's tree,
		// which is only read until it is replaced (EditTree).
		orig := rs.At(i)
		r := rs.EditTree(i)
		if s.rename {
			r.RememberID()
		}
		if r.HasNonStringKey() {
			// kustomize turns the object into JSON first, and fails.
			rs.Set(i, orig)
			return resource.ErrNonStringKey
		}
		internal := internalAnnotations(r)
		in := withStateAnnotations(r)
		obj, ok := applyDirect(s.direct, in)
		if !ok {
			var err error
			if obj, err = applyJSONPatch(s.patch, in); err != nil {
				rs.Set(i, orig)
				return err
			}
		}
		dropStateAnnotations(obj)
		r.SetObject(obj)
		r.ClearNonStringKeys() // every key came back from JSON a string
		restoreAnnotations(r, internal)
	}
	return nil
}

// applyJSONPatch applies patch to obj through JSON, as kustomize does.
func applyJSONPatch(patch jsonpatch.Patch, obj map[string]any) (map[string]any, error) {
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out, err := patch.Apply(doc)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// withStateAnnotations returns the object as kustomize hands it to the JSON
// patch: kustomize keeps its build state (previous names, generator
// options) in annotations, so an object with build state has an
// annotations map even where the tree has none or a null one, and a patch
// may add to it. The tree of r is not modified.
func withStateAnnotations(r *resource.Resource) map[string]any {
	obj := r.Object()
	state := r.StateAnnotations()
	md, ok := obj["metadata"].(map[string]any)
	if len(state) == 0 || !ok {
		return obj
	}
	ann := map[string]any{}
	switch old := md["annotations"].(type) {
	case map[string]any:
		for k, v := range old {
			ann[k] = v
		}
	case nil, resource.EmptyNull:
	default:
		return obj
	}
	for k, v := range state {
		ann[k] = v
	}
	mdc := make(map[string]any, len(md)+1)
	for k, v := range md {
		mdc[k] = v
	}
	mdc["annotations"] = ann
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	c["metadata"] = mdc
	return c
}

// dropStateAnnotations removes what withStateAnnotations added (kpipe keeps
// that state beside the tree).
func dropStateAnnotations(obj map[string]any) {
	ann := resource.LookupMap(obj, "metadata", "annotations")
	for k := range ann {
		if resource.IsStateAnnotation(k) {
			delete(ann, k)
		}
	}
}

// internalAnnotations returns the build annotations of r (kustomize's
// internal.config.kubernetes.io/ keys and the legacy path/index keys).
func internalAnnotations(r *resource.Resource) map[string]string {
	out := map[string]string{}
	for k, v := range r.Annotations() {
		if isInternalAnnotation(k) {
			out[k] = v
		}
	}
	return out
}

func isInternalAnnotation(k string) bool {
	return strings.HasPrefix(k, "internal.config.kubernetes.io/") ||
		k == "config.kubernetes.io/path" || k == "config.kubernetes.io/index" || k == "config.k8s.io/id"
}

// restoreAnnotations puts the saved build annotations back after an edit
// that may have dropped them, rewriting the annotations as strings (and
// removing an empty annotations map) as kustomize's SetAnnotations does.
func restoreAnnotations(r *resource.Resource, saved map[string]string) {
	ann := r.Annotations()
	for k, v := range saved {
		ann[k] = v
	}
	r.SetAnnotations(ann)
}
