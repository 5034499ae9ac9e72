package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kpipe/kpipe/internal/loaders"
	"github.com/kpipe/kpipe/internal/resource"
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
	Target *Selector `json:"target,omitempty"`
	Path   string    `json:"path,omitempty"`
	JSONOp string    `json:"jsonOp,omitempty"`
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
	return &jsonPatchStage{kind: "PatchJson6902Transformer", target: *cfg.Target, text: cfg.JSONOp, patch: patch}, nil
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
	target Selector
	text   string
	patch  jsonpatch.Patch
	// rename records the old ID first, so that a patch may rename objects
	// (the `patches` field allows it; patchesJson6902 does not).
	rename bool
}

func (s *jsonPatchStage) Kind() string { return s.kind }
func (s *jsonPatchStage) Fingerprint() []byte {
	return Fingerprint(s.kind, struct {
		Target Selector
		Patch  string
		Rename bool
	}{s.target, s.text, s.rename})
}

// Run patches every selected object; the build annotations kpipe keeps
// survive the patch.
func (s *jsonPatchStage) Run(_ context.Context, rs *resource.List) error {
	idx, err := s.target.Select(rs)
	if err != nil {
		return err
	}
	for _, i := range idx {
		r := rs.Edit(i)
		if s.rename {
			r.RememberID()
		}
		internal := internalAnnotations(r)
		obj, err := applyJSONPatch(s.patch, r.Object())
		if err != nil {
			return err
		}
		r.SetObject(obj)
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
