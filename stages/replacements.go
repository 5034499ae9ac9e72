package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// defaultReplacementFieldPath is the field a replacement reads or writes
// when it names none.
const defaultReplacementFieldPath = "metadata.name"

// ReplacementsConfig configures the ReplacementTransformer: the
// `replacements:` entries of a kustomization, or the `replacements:` of a
// builtin ReplacementTransformer config.
type ReplacementsConfig struct {
	Replacements []loaders.ReplacementField `json:"replacements,omitempty"`
}

// NewReplacements returns the ReplacementTransformer stage, reading the
// files that `path:` entries name with read. A file holds one replacement
// (a map) or a list of them.
func NewReplacements(cfg ReplacementsConfig, read ReadFile) (Stage, error) {
	var list []loaders.Replacement
	for _, e := range cfg.Replacements {
		if e.Path == "" {
			list = append(list, e.Replacement)
			continue
		}
		if e.Source != nil || len(e.Targets) != 0 {
			return nil, errors.New("cannot specify both path and inline replacement")
		}
		data, err := read(e.Path)
		if err != nil {
			return nil, err
		}
		rs, err := decodeReplacementFile(data)
		if err != nil {
			return nil, err
		}
		list = append(list, rs...)
	}
	return &replacementsStage{replacements: list}, nil
}

// ReplacementsFromConfig configures a ReplacementTransformer from its
// builtin plugin config.
func ReplacementsFromConfig(data []byte, read ReadFile) (Stage, error) {
	var cfg ReplacementsConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, err
	}
	return NewReplacements(cfg, read)
}

// decodeReplacementFile reads a file of replacements: one (a map) or a
// list.
func decodeReplacementFile(data []byte) ([]loaders.Replacement, error) {
	j, err := loaders.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	var probe any
	if err := json.Unmarshal(j, &probe); err != nil {
		return nil, fmt.Errorf("error unmarshaling JSON: while decoding JSON: %w", err)
	}
	switch probe.(type) {
	case []any:
		var list []loaders.Replacement
		if err := decodeLenientConfig(data, &list); err != nil {
			return nil, err
		}
		return list, nil
	case map[string]any:
		var r loaders.Replacement
		if err := decodeLenientConfig(data, &r); err != nil {
			return nil, err
		}
		return []loaders.Replacement{r}, nil
	}
	kind := "invalid"
	switch probe.(type) {
	case string:
		kind = "string"
	case float64:
		kind = "float64"
	case bool:
		kind = "bool"
	}
	return nil, fmt.Errorf("unsupported replacement type encountered within replacement path: %s", kind)
}

// ReplacementsConfigYAML writes the `replacements:` entries of a
// kustomization the way kustomize shows them in configuration errors.
func ReplacementsConfigYAML(entries []loaders.ReplacementField) string {
	j, err := json.Marshal(struct{ Replacements []loaders.ReplacementField }{entries})
	if err != nil {
		return ""
	}
	var tree any
	if err := json.Unmarshal(j, &tree); err != nil {
		return ""
	}
	b, err := output.MarshalValue(tree)
	if err != nil {
		return ""
	}
	return string(b)
}

// replacementsStage applies replacements in order; each sees the objects
// as the ones before it left them.
type replacementsStage struct {
	replacements []loaders.Replacement
	release      Release
}

func (s *replacementsStage) Kind() string { return "ReplacementTransformer" }
func (s *replacementsStage) Fingerprint() []byte {
	if s.release != Kustomize582 {
		return Fingerprint(s.Kind(), struct {
			Replacements []loaders.Replacement
			Release      Release
		}{s.replacements, s.release})
	}
	return Fingerprint(s.Kind(), s.replacements)
}

// Run applies every replacement. Errors are kustomize's.
func (s *replacementsStage) Run(_ context.Context, rs *resource.List) error {
	for i := range s.replacements {
		r := &s.replacements[i]
		if (r.SourceValue == nil && r.Source == nil) || r.Targets == nil {
			return errors.New("replacements must specify a source and at least one target")
		}
		value, err := replacementValue(rs, r)
		if err != nil {
			return err
		}
		if err := applyReplacement(rs, value, r.Targets, s.release); err != nil {
			return err
		}
	}
	return nil
}

// replacementValue reads the value a replacement writes.
func replacementValue(rs *resource.List, r *loaders.Replacement) (*yaml.Node, error) {
	if r.SourceValue != nil && r.Source != nil {
		return nil, errors.New("value and resource selectors are mutually exclusive")
	}
	if r.SourceValue != nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: *r.SourceValue}, nil
	}
	i, err := selectSource(rs, r.Source)
	if err != nil {
		return nil, err
	}
	fieldPath := r.Source.FieldPath
	if fieldPath == "" {
		fieldPath = defaultReplacementFieldPath
	}
	n, err := lookupPath(toNode(rs.At(i).Object()), splitFieldPath(fieldPath))
	if err != nil {
		return nil, fmt.Errorf("error looking up replacement source: %w", err)
	}
	if isNilOrEmpty(n) {
		return nil, fmt.Errorf("fieldPath `%s` is missing for replacement source %s", fieldPath, r.Source.ID())
	}
	o := r.Source.Options
	if o == nil || o.Delimiter == "" {
		return n, nil
	}
	if n.Kind != yaml.ScalarNode {
		return nil, errors.New("delimiter option can only be used with scalar nodes")
	}
	parts := strings.Split(nodeValue(n), o.Delimiter)
	if o.Index >= len(parts) || o.Index < 0 {
		return nil, fmt.Errorf("options.index %d is out of bounds for value %s", o.Index, nodeValue(n))
	}
	n = resyaml.CopyNode(n)
	n.Value = parts[o.Index]
	return n, nil
}

// selectSource returns the index of the one object the source names: by
// its current ID or any earlier one, names and kinds compared exactly and
// namespaces as effective namespaces.
func selectSource(rs *resource.List, src *loaders.SourceSelector) (int, error) {
	sel := src.ID()
	selNS := ""
	if sel.Namespace != "" {
		selNS = sel.EffectiveNamespace()
	}
	named := func(id resource.ID) bool {
		return (sel.Name == "" || sel.Name == id.Name) &&
			(selNS == "" || selNS == id.EffectiveNamespace()) &&
			id.GVK.Selects(sel.GVK)
	}
	found := -1
	for i, r := range rs.All() {
		if r.AnyID(named) {
			if found >= 0 {
				return 0, fmt.Errorf("multiple matches for selector %s", src)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("nothing selected by %s", src)
	}
	return found, nil
}

// targetSelector is a compiled loaders.TargetSelector selection.
type targetSelector struct {
	sel     *compiledSelector
	rejects []*compiledSelector
	// rejectIDs[i] is false for a reject that names no ID part (it rejects
	// by labels and annotations only).
	rejectIDs []bool
	// rejectMeta[i] is true for a reject with a label or annotation
	// selector.
	rejectMeta []bool
}

func compileTarget(t *loaders.TargetSelector) (*targetSelector, error) {
	ts := &targetSelector{}
	var err error
	if ts.sel, err = compileSelector(*t.Select); err != nil {
		return nil, err
	}
	for _, r := range t.Reject {
		if r == nil {
			r = &loaders.Selector{}
		}
		c, err := compileSelector(*r)
		if err != nil {
			return nil, err
		}
		ts.rejects = append(ts.rejects, c)
		ts.rejectIDs = append(ts.rejectIDs, r.Group != "" || r.Version != "" || r.Kind != "" || r.Name != "" || r.Namespace != "")
		ts.rejectMeta = append(ts.rejectMeta, r.AnnotationSelector != "" || r.LabelSelector != "")
	}
	return ts, nil
}

// matchesID reports whether every ID part the selector names matches id.
// The namespace is matched as written (empty for an object without one).
func (c *compiledSelector) matchesID(id resource.ID) bool {
	return c.group.match(id.Group) && c.version.match(id.Version) && c.kind.match(id.Kind) &&
		c.name.match(id.Name) && c.namespace.match(id.Namespace)
}

// selects reports whether the target takes r: the selection matches one
// of r's IDs (current or previous), no reject naming ID parts matches any
// of them, its labels and annotations match the selection and no reject
// with a label or annotation selector matches them. The IDs are asked
// first: they are kept with the object, while labels and annotations are
// copied out of its tree, and only when a selector names some.
func (ts *targetSelector) selects(r *resource.Resource) bool {
	if !r.AnyID(ts.sel.matchesID) {
		return false
	}
	meta := len(ts.sel.labels) > 0 || len(ts.sel.annotations) > 0
	for i, rej := range ts.rejects {
		if ts.rejectIDs[i] && r.AnyID(rej.matchesID) {
			return false
		}
		meta = meta || ts.rejectMeta[i]
	}
	if !meta {
		return true
	}
	labels, ann := r.Labels(), r.Annotations()
	if !ts.sel.labels.matches(labels) || !ts.sel.annotations.matches(ann) {
		return false
	}
	for i, rej := range ts.rejects {
		if ts.rejectMeta[i] && rej.labels.matches(labels) && rej.annotations.matches(ann) {
			return false
		}
	}
	return true
}

// applyReplacement writes value into every target.
func applyReplacement(rs *resource.List, value *yaml.Node, targets []*loaders.TargetSelector, release Release) error {
	for _, t := range targets {
		if t == nil || t.Select == nil {
			return errors.New("target must specify resources to select")
		}
		fieldPaths := t.FieldPaths
		if len(fieldPaths) == 0 {
			fieldPaths = []string{defaultReplacementFieldPath}
		}
		ts, err := compileTarget(t)
		if err != nil {
			return fmt.Errorf("error creating target selector: %w", err)
		}
		paths := reachOf(fieldPaths)
		texts := map[scalarText]string{}
		for i := 0; i < rs.Len(); i++ {
			if !ts.selects(rs.At(i)) {
				continue
			}
			if err := writeTarget(rs, i, value, t, fieldPaths, paths, texts, release); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeTarget writes value into the fields of the i-th object. Only the
// part of the object the field paths may reach (paths) goes through
// nodes; the rest is put back as it was, copied when the object is
// shared. texts memoizes the text of scalars for the target's selectors.
func writeTarget(rs *resource.List, i int, value *yaml.Node, t *loaders.TargetSelector, fieldPaths []string, paths *reach, texts map[scalarText]string, release Release) error {
	var stubs []any
	root := toNodeAlong(rs.At(i).Object(), paths, &stubs)
	if rs.At(i).Frozen() {
		for j, v := range stubs {
			stubs[j] = resource.DeepCopy(v)
		}
	}
	for _, fp := range fieldPaths {
		var create yaml.Kind
		if t.Options != nil && t.Options.Create {
			create = value.Kind
		}
		inner := t.Options // (kustomize v5.8.1 copies the value inside structured data)
		if release == Kustomize581 {
			inner = nil
		}
		if setInStructuredData(root, value, fp, create, inner) == nil {
			continue
		}
		fields, err := pathMatcher{create: create, texts: texts}.filter(root, splitFieldPath(fp))
		if err != nil {
			return fmt.Errorf("%s: %w", fieldRetrievalError(fp, create != 0), err)
		}
		if len(fields) == 0 {
			return errors.New(fieldRetrievalError(fp, create != 0))
		}
		for _, f := range fields {
			if err := setFieldValue(t.Options, f, value); err != nil {
				return err
			}
		}
	}
	m, err := objectFromNodeAlong(root, stubs)
	if err != nil {
		return err
	}
	rs.EditTree(i).SetObject(m)
	return nil
}

func fieldRetrievalError(fieldPath string, create bool) string {
	if create {
		return fmt.Sprintf("unable to find or create field %q in replacement target", fieldPath)
	}
	return fmt.Sprintf("unable to find field %q in replacement target", fieldPath)
}

// setFieldValue writes value into the field node f: a scalar field keeps
// its type and takes the value's text (so "5" written over a number stays
// a number, and over a string stays a string); any other field is replaced
// by a copy of value. With a delimiter, only one part of the field's text
// is replaced.
func setFieldValue(o *loaders.FieldOptions, f, value *yaml.Node) error {
	value = resyaml.CopyNode(value)
	if o != nil && o.Delimiter != "" {
		if f.Kind != yaml.ScalarNode {
			return errors.New("delimiter option can only be used with scalar nodes")
		}
		parts := strings.Split(f.Value, o.Delimiter)
		v := nodeValue(value)
		switch {
		case o.Index < 0:
			parts = append([]string{v}, parts...)
		case o.Index >= len(parts):
			parts = append(parts, v)
		default:
			parts[o.Index] = v
		}
		value.Value = strings.Join(parts, o.Delimiter)
	}
	if f.Kind == yaml.ScalarNode {
		f.Value = value.Value
	} else {
		*f = *value
	}
	return nil
}
