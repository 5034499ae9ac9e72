package stages

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/smp"
)

// PatchStrategicMergeConfig configures the PatchStrategicMergeTransformer
// (the `patchesStrategicMerge` field): strategic-merge patches, each applied
// to the one object whose current or earlier ID is the patch's ID. Each
// path is a file, or (as kustomize still allows) the text of patches
// itself; Patches is more patches as text.
type PatchStrategicMergeConfig struct {
	Paths   []string `json:"paths,omitempty"`
	Patches string   `json:"patches,omitempty"`
}

// NewPatchStrategicMerge returns the PatchStrategicMergeTransformer stage,
// reading patch files with read.
func NewPatchStrategicMerge(cfg PatchStrategicMergeConfig, read ReadFile) (Stage, error) {
	if len(cfg.Paths) == 0 && cfg.Patches == "" {
		return nil, errors.New("empty file path and empty patch content")
	}
	s := &smpStage{kind: "PatchStrategicMergeTransformer", mode: smpByID, copyPatch: true}
	for _, p := range cfg.Paths {
		// For legacy reasons, a path may be the patch text itself.
		patches, err := decodePatches(p)
		text := p
		if err != nil {
			data, rerr := read(p)
			if rerr != nil {
				return nil, rerr
			}
			if patches, err = decodePatches(string(data)); err != nil {
				var se *resyaml.SyntaxError
				if errors.As(err, &se) {
					return nil, fmt.Errorf("MalformedYAMLError: yaml: line %d: %s in File: %s", se.Line, se.Msg, p)
				}
				return nil, err
			}
			text = string(data)
		}
		s.add(text, patches)
	}
	if cfg.Patches != "" {
		patches, err := decodePatches(cfg.Patches)
		if err != nil {
			return nil, err
		}
		s.add(cfg.Patches, patches)
	}
	if len(s.patches) == 0 {
		return nil, fmt.Errorf("patch appears to be empty; files=[%s], Patch=%s", strings.Join(cfg.Paths, " "), cfg.Patches)
	}
	return s, nil
}

// PatchStrategicMergeFromConfig configures a PatchStrategicMergeTransformer
// from its builtin plugin config.
func PatchStrategicMergeFromConfig(data []byte, read ReadFile) (Stage, error) {
	var cfg PatchStrategicMergeConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, err
	}
	return NewPatchStrategicMerge(cfg, read)
}

// newStrategicMergePatch builds the stage for the strategic-merge patches
// of one `patches` entry.
func newStrategicMergePatch(cfg loaders.Patch, patches []*resource.Resource, text, source string) (Stage, error) {
	s := &smpStage{kind: "PatchTransformer", mode: smpByID}
	if cfg.Target != nil {
		if len(patches) > 1 {
			// kustomize issue #5049: which patch would go to which target?
			return nil, fmt.Errorf("Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field: %s", source)
		}
		s.mode, s.target, s.copyPatch = smpByTarget, *cfg.Target, true
	}
	if cfg.Options != nil {
		s.options = *cfg.Options
	}
	s.add(text, patches)
	return s, nil
}

// smpMode is how a strategic-merge stage finds the objects to patch.
type smpMode string

const (
	// smpByID patches the one object whose current or earlier ID is the
	// patch's ID.
	smpByID smpMode = "id"
	// smpByTarget patches every object the target selects.
	smpByTarget smpMode = "target"
)

// smpStage applies strategic-merge patches.
type smpStage struct {
	kind   string
	mode   smpMode
	target loaders.Selector
	// copyPatch applies a normalized copy of the patch whose type is the
	// target's, as kustomize's ResMap.ApplySmPatch does (the
	// PatchStrategicMergeTransformer, and `patches` with a target); without
	// it the patch applies as written.
	copyPatch bool
	options   loaders.PatchOptions
	texts     []string
	patches   []map[string]any
	ids       []resource.ID
	// keys are each patch's keys below its top level that are not
	// strings (resource.FieldKey): a key the patch adds to an object
	// keeps its kind there, as kyaml's merge keeps the patch's key node.
	keys [][]resource.FieldKey
	// schema gives the merge keys; nil is the built-in schema.
	schema *smp.Schema
}

// add records the patches parsed from one text.
func (s *smpStage) add(text string, patches []*resource.Resource) {
	s.texts = append(s.texts, text)
	for _, p := range patches {
		s.patches = append(s.patches, p.Object())
		s.ids = append(s.ids, p.ID())
		s.keys = append(s.keys, p.NonStringKeys())
	}
}

func (s *smpStage) Kind() string { return s.kind }

func (s *smpStage) Fingerprint() []byte {
	return Fingerprint(s.kind, struct {
		Mode      smpMode
		Target    loaders.Selector
		CopyPatch bool
		Options   loaders.PatchOptions
		Texts     []string
		Schema    string
	}{s.mode, s.target, s.copyPatch, s.options, s.texts, s.mergeSchema().ID()})
}

// mergeSchema is the schema the stage merges with.
func (s *smpStage) mergeSchema() *smp.Schema {
	if s.schema == nil {
		return smp.Builtin()
	}
	return s.schema
}

// WithMergeSchema returns s configured to take merge keys and patch
// strategies from schema (a kustomization's `openapi` schema) instead of
// the built-in Kubernetes schema, when s is a stage that reads them (one
// that applies strategic-merge patches, possibly wrapped, say with an
// origin); other stages are returned as they are. The schema's ID is part
// of the returned stage's fingerprint. A nil schema leaves s unchanged.
func WithMergeSchema(s Stage, schema *smp.Schema) Stage {
	if st, ok := s.(mergeSchemaUser); ok && schema != nil {
		return st.withMergeSchema(schema)
	}
	return s
}

// mergeSchemaUser is a stage that merges with a schema, or wraps one that
// does.
type mergeSchemaUser interface {
	withMergeSchema(schema *smp.Schema) Stage
}

func (s *smpStage) withMergeSchema(schema *smp.Schema) Stage {
	c := *s
	c.schema = schema
	return &c
}

// Run applies the patches in order.
func (s *smpStage) Run(_ context.Context, rs *resource.List) error {
	if s.mode == smpByTarget {
		idx, err := selectIndexes(s.target, rs)
		if err != nil {
			return fmt.Errorf("%s: unable to find patch target %q in `resources`: %w", s.kind, s.target.String(), err)
		}
		var gone []int
		for _, i := range idx {
			deleted, err := s.apply(rs, i, s.patches[0], s.keys[0])
			if err != nil {
				return fmt.Errorf("%s: %w", s.kind, err)
			}
			if deleted {
				gone = append(gone, i)
			}
		}
		removeIndexes(rs, gone)
		return nil
	}
	for n, patch := range s.patches {
		id := s.ids[n]
		matches := rs.ByAnyID(id)
		if len(matches) != 1 {
			what := "no"
			if len(matches) > 1 {
				what = "multiple"
			}
			err := fmt.Errorf("%s matches for Id %s; failed to find unique target for patch %s", what, id, id)
			if s.kind == "PatchTransformer" {
				err = fmt.Errorf("no resource matches strategic merge patch %q: %w", id.String(), err)
			}
			return fmt.Errorf("%s: %w", s.kind, err)
		}
		deleted, err := s.apply(rs, matches[0], patch, s.keys[n])
		if err != nil {
			return fmt.Errorf("%s: %w", s.kind, err)
		}
		if deleted {
			rs.Remove(matches[0])
		}
	}
	return nil
}

// apply patches the i-th object, reporting whether the patch deleted it;
// keys are the patch's keys that are not strings.
func (s *smpStage) apply(rs *resource.List, i int, patch map[string]any, keys []resource.FieldKey) (bool, error) {
	r := rs.Edit(i)
	if s.copyPatch {
		patch = patchFor(patch, r)
	}
	obj := r.Object()
	// The patch's keys that the object does not have yet, on paths
	// through maps only (a list's items merge by key, not by index).
	var adds []resource.FieldKey
	for _, k := range keys {
		if _, mapsOnly := resource.KeyAt(patch, k.Path, k.Key); !mapsOnly {
			continue
		}
		if found, _ := resource.KeyAt(obj, k.Path, k.Key); !found {
			adds = append(adds, k)
		}
	}
	md := resource.LookupMap(obj, "metadata")
	name, ns, kind := md["name"], md["namespace"], obj["kind"]
	if s.options.AllowNameChange || s.options.AllowKindChange {
		r.RememberID()
	}
	merged, deleted, err := smp.Merge(obj, patch, s.mergeSchema())
	if err != nil {
		return false, err
	}
	if deleted || len(merged) == 0 {
		return true, nil
	}
	r.SetObject(merged)
	for _, k := range adds {
		if found, _ := resource.KeyAt(merged, k.Path, k.Key); found {
			r.AddNonStringKey(k)
		}
	}
	if !s.options.AllowKindChange {
		merged["kind"] = kind
	}
	md, err = resource.EnsureMap(merged, "metadata")
	if err != nil {
		return false, err
	}
	if !s.options.AllowNameChange {
		md["name"] = name
	}
	if text, _ := resource.ScalarString(ns); text == "" {
		delete(md, "namespace")
	} else {
		md["namespace"] = ns
	}
	return false, nil
}

// patchFor is the copy of a patch kustomize applies to one target: labels
// and annotations as strings (and dropped when empty), metadata.name set,
// an empty namespace dropped, and the target's apiVersion.
func patchFor(patch map[string]any, target *resource.Resource) map[string]any {
	c := resource.CopyMap(patch)
	md, ok := c["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		c["metadata"] = md
	}
	for _, f := range []string{"labels", "annotations"} {
		m := metaStrings(md[f])
		if len(m) == 0 {
			delete(md, f)
			continue
		}
		v := make(map[string]any, len(m))
		for k, s := range m {
			v[k] = s
		}
		md[f] = v
	}
	name, _ := resource.ScalarString(md["name"])
	md["name"] = name
	if ns, _ := resource.ScalarString(md["namespace"]); ns == "" {
		delete(md, "namespace")
	} else {
		md["namespace"] = ns
	}
	kind, _ := resource.ScalarString(c["kind"])
	c["apiVersion"] = target.GVK().APIVersion()
	c["kind"] = kind
	return c
}

// metaStrings reads labels or annotations as kyaml does: each value's text.
func metaStrings(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, _ := resource.ScalarString(e)
		out[k] = s
	}
	return out
}

// removeIndexes removes the resources at the given indexes.
func removeIndexes(rs *resource.List, idx []int) {
	if len(idx) == 0 {
		return
	}
	gone := make(map[int]bool, len(idx))
	for _, i := range idx {
		gone[i] = true
	}
	rs.Keep(func(i int, _ *resource.Resource) bool { return !gone[i] })
}

// errMissingMetadata is kyaml's message for a document with neither
// apiVersion, kind nor metadata.
var errMissingMetadata = errors.New("missing Resource metadata")

// decodePatches reads strategic-merge patches as kustomize's resource
// factory does (SliceFromBytes): empty documents are skipped, every other
// document must be an object with a kind and (unless a list) a
// metadata.name, and lists are expanded into their items.
func decodePatches(text string) ([]*resource.Resource, error) {
	docs, err := resyaml.DecodeValues([]byte(text))
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if err := validatePatchMeta(d); err != nil {
			return nil, err
		}
	}
	return resyaml.Decode([]byte(text))
}

// validatePatchMeta checks one document as kyaml's GetValidatedMetadata
// does, with its messages.
func validatePatchMeta(doc any) error {
	m, ok := doc.(map[string]any)
	if !ok {
		if l, isList := doc.([]any); isList && len(l) == 0 {
			return nil
		}
		return errMissingMetadata
	}
	if len(m) == 0 {
		return nil
	}
	text := func(v any) string {
		switch v.(type) {
		case map[string]any, []any, nil:
			return ""
		}
		s, _ := resource.ScalarString(v)
		return s
	}
	apiVersion, kind := text(m["apiVersion"]), text(m["kind"])
	missing := apiVersion == "" && kind == ""
	md, _ := m["metadata"].(map[string]any)
	name, namespace := text(md["name"]), text(md["namespace"])
	labels, annotations := metaStrings(md["labels"]), metaStrings(md["annotations"])
	if len(md) > 0 && (name != "" || namespace != "" || len(labels) > 0 || len(annotations) > 0) {
		missing = false
	}
	if missing {
		return errMissingMetadata
	}
	meta := fmt.Sprintf("{{%s %s} {{%s %s} %s %s}}", apiVersion, kind, name, namespace, goMap(labels), goMap(annotations))
	if kind == "" {
		return fmt.Errorf("missing kind in object %s", meta)
	}
	if !strings.HasSuffix(kind, "List") && name == "" {
		return fmt.Errorf("missing metadata.name in object %s", meta)
	}
	return nil
}

// goMap formats a map as fmt's %v does.
func goMap(m map[string]string) string {
	return fmt.Sprint(m)
}
