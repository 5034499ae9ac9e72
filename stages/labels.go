package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// LabelsConfig configures the LabelTransformer: the labels to set and the
// fields (label maps and selectors) to set them in.
type LabelsConfig struct {
	Labels     map[string]string   `json:"labels,omitempty"`
	FieldSpecs []loaders.FieldSpec `json:"fieldSpecs,omitempty"`
}

// NewLabels returns the LabelTransformer stage: every label is set, as a
// string, in the map at every field-spec path of every object the spec
// selects; missing maps are created where the spec says create. With no
// labels the stage does nothing.
func NewLabels(cfg LabelsConfig) Stage {
	cfg.Labels = copyStringMap(cfg.Labels)
	cfg.FieldSpecs = append([]loaders.FieldSpec(nil), cfg.FieldSpecs...)
	return &mapEntryStage{kind: "LabelTransformer", entries: cfg.Labels, specs: cfg.FieldSpecs, cfg: cfg}
}

// LabelsFromConfig configures a LabelTransformer from its builtin plugin
// config (`labels:` and `fieldSpecs:`).
func LabelsFromConfig(data []byte) (Stage, error) {
	var cfg LabelsConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("LabelTransformer: reading config: %w", err)
	}
	return NewLabels(cfg), nil
}

// mapEntryStage sets string entries in the maps that field specs reach: the
// LabelTransformer and the AnnotationsTransformer.
type mapEntryStage struct {
	kind    string
	entries map[string]string
	specs   []loaders.FieldSpec
	cfg     any // the whole config, for the fingerprint
}

func (s *mapEntryStage) Kind() string        { return s.kind }
func (s *mapEntryStage) Cheap()              {}
func (s *mapEntryStage) Fingerprint() []byte { return Fingerprint(s.kind, s.cfg) }

// Run sets the entries in every resource.
func (s *mapEntryStage) Run(_ context.Context, rs *resource.List) error {
	if len(s.entries) == 0 {
		return nil
	}
	keys := resource.SortedKeys(s.entries)
	// kustomize adds each entry as a plain scalar: a key such as "1" is
	// then a number, on which its output fails (resource/keys.go).
	tags := map[string]string{}
	for _, k := range keys {
		if t, bad := resource.PlainKeyTag(k); bad {
			tags[k] = t
		}
	}
	for i := 0; i < rs.Len(); i++ {
		gvk := rs.At(i).GVK()
		var r *resource.Resource
		var obj map[string]any
		for _, fs := range s.specs {
			if !fs.Matches(gvk) {
				continue
			}
			if obj == nil {
				r = rs.Edit(i)
				obj = r.Edit()
			}
			type added struct {
				path []string
				key  string
			}
			var adds []added
			err := fieldspec.Walk(obj, fs, fieldspec.CreateMap, func(f fieldspec.Field) error {
				switch m := f.Value().(type) {
				case nil:
					// A null map that the spec may not create stays null.
					return nil
				case map[string]any:
					for _, k := range keys {
						if _, had := m[k]; !had && tags[k] != "" {
							adds = append(adds, added{f.Path, k})
						}
						m[k] = s.entries[k]
					}
					return nil
				default:
					return wrongNodeKind("MappingNode", m)
				}
			})
			if err != nil {
				return fmt.Errorf("%s: %w", s.kind, err)
			}
			for _, a := range adds {
				// Recorded where the map's path is exact: Path does not
				// index the lists it goes through, and LookupMap finds
				// nothing on such a path, so those maps are left alone.
				if resource.LookupMap(obj, a.path...) != nil {
					r.AddNonStringKey(resource.FieldKey{Path: append([]string(nil), a.path...), Key: a.key, Tag: tags[a.key]})
				}
			}
		}
	}
	return nil
}

// copyStringMap returns a copy of m (nil for nil).
func copyStringMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// yamlNodeKind names the YAML node kind of a value as kyaml does.
func yamlNodeKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "MappingNode"
	case []any:
		return "SequenceNode"
	default:
		return "ScalarNode"
	}
}

// wrongNodeKind is kyaml's error for a value of the wrong YAML kind, with
// the value's contents.
func wrongNodeKind(expected string, v any) error {
	msg := fmt.Sprintf("wrong node kind: expected %s but got %s", expected, yamlNodeKind(v))
	if b, err := output.MarshalValue(v); err == nil {
		msg += ": node contents:\n" + string(b)
	}
	return fmt.Errorf("%s", msg)
}

// decodeLenientConfig decodes a builtin plugin config into v as
// sigs.k8s.io/yaml.Unmarshal does: YAML 1.1 read as JSON, field names
// matched without regard to case, unknown fields ignored, and numbers and
// booleans accepted (as their text) where v has a string.
func decodeLenientConfig(data []byte, v any) error {
	j, err := loaders.YAMLToJSON(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return err
	}
	tree = coerceScalars(tree, reflect.TypeOf(v))
	if j, err = json.Marshal(tree); err != nil {
		return err
	}
	return json.Unmarshal(j, v)
}

// coerceScalars turns numbers and booleans in tree into strings where the
// matching place in a value of type t is a string.
func coerceScalars(tree any, t reflect.Type) any {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return tree
	}
	switch n := tree.(type) {
	case map[string]any:
		for k, e := range n {
			var et reflect.Type
			switch t.Kind() {
			case reflect.Struct:
				et = jsonFieldType(t, k)
			case reflect.Map:
				et = t.Elem()
			}
			n[k] = coerceScalars(e, et)
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range n {
				n[i] = coerceScalars(e, t.Elem())
			}
		}
	case json.Number:
		if t.Kind() == reflect.String {
			s := n.String()
			if strings.ContainsAny(s, ".eE") {
				if f, err := n.Float64(); err == nil {
					s = strconv.FormatFloat(f, 'g', -1, 32)
				}
			}
			return s
		}
	case bool:
		if t.Kind() == reflect.String {
			return strconv.FormatBool(n)
		}
	}
	return tree
}

// jsonFieldType returns the type of the field of struct t that
// encoding/json decodes the key into: the exact name first, else one that
// matches without regard to case.
func jsonFieldType(t reflect.Type, key string) reflect.Type {
	var fold reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("json"); tag != "" {
			if tag == "-" {
				continue
			}
			if n, _, _ := strings.Cut(tag, ","); n != "" {
				name = n
			}
		}
		if name == key {
			return f.Type
		}
		if fold == nil && strings.EqualFold(name, key) {
			fold = f.Type
		}
	}
	return fold
}
