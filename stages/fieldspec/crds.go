package fieldspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kpipe/kpipe/loaders"
	"go.yaml.in/yaml/v3"
)

// OpenAPI extensions of a `crds:` file that add field specs (kustomize's
// loadconfigfromcrds; the values are data carried over).
const (
	xAnnotation    = "x-kubernetes-annotation"             // field is an annotation map
	xLabelSelector = "x-kubernetes-label-selector"         // field is a label map
	xIdentity      = "x-kubernetes-identity"               // field takes namePrefix
	xRefVersion    = "x-kubernetes-object-ref-api-version" // field refers to an object of this version...
	xRefKind       = "x-kubernetes-object-ref-kind"        // ...and kind
	xRefNameKey    = "x-kubernetes-object-ref-name-key"    // key of the name under the field ("name")
)

// crdDefinition is one entry of a `crds:` file: an OpenAPI definition, keyed
// by Go type name ("example.com/pkg/apis/v1.MyKind").
type crdDefinition struct {
	Schema struct {
		Properties map[string]crdProperty `json:"properties"`
	}
}

// crdProperty is one property of a definition's schema: its $ref and the
// string values of its x- extensions.
type crdProperty struct {
	ref  string
	ext  map[string]string
	hasR bool
}

func (p *crdProperty) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	p.ext = map[string]string{}
	for k, v := range m {
		var s string
		switch {
		case k == "$ref":
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("$ref: %w", err)
			}
			p.ref, p.hasR = s, true
		case strings.HasPrefix(k, "x-"):
			// Only string values count, as kustomize reads them.
			if json.Unmarshal(v, &s) == nil {
				p.ext[k] = s
			}
		}
	}
	return nil
}

// FromCRDs reads a `crds:` file, a map of OpenAPI definitions in JSON (when
// it starts with '{') or YAML, into the field specs kustomize takes from
// it: for every definition that looks like a Kubernetes type (properties
// kind, apiVersion and metadata), with the kind taken from the type name
// after its last '.', each property (following $ref into other definitions
// of the file) marked x-kubernetes-annotation adds a commonAnnotations
// spec, x-kubernetes-label-selector a commonLabels spec,
// x-kubernetes-identity a namePrefix spec, and
// x-kubernetes-object-ref-api-version with x-kubernetes-object-ref-kind a
// name reference to that version and kind at the property's name key
// (x-kubernetes-object-ref-name-key, default "name"). Definitions and
// properties are visited in name order, so the result is deterministic.
func FromCRDs(data []byte) (*Config, error) {
	defs, err := readCRDDefinitions(data)
	if err != nil {
		return nil, err
	}
	result := &Config{}
	for _, name := range sortedKeys(defs) {
		props := defs[name].Schema.Properties
		if !hasAll(props, "kind", "apiVersion", "metadata") {
			continue
		}
		kind := name[strings.LastIndex(name, ".")+1:]
		c := &Config{}
		if err := loadCRD(c, kind, defs, name, nil, map[string]bool{}); err != nil {
			return nil, err
		}
		if result, err = result.Merge(c); err != nil {
			return nil, err
		}
	}
	return result, nil
}

func readCRDDefinitions(data []byte) (map[string]crdDefinition, error) {
	data = bytes.TrimLeft(data, "\ufeff")
	if len(data) == 0 {
		return nil, fmt.Errorf("empty file")
	}
	if data[0] != '{' {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		data = j
	}
	var defs map[string]crdDefinition
	if err := json.Unmarshal(data, &defs); err != nil {
		return nil, err
	}
	return defs, nil
}

// loadCRD adds the field specs of definition typeName, reached at path in
// objects of kind, to c. seen guards against $ref cycles.
func loadCRD(c *Config, kind string, defs map[string]crdDefinition, typeName string, path []string, seen map[string]bool) error {
	def, ok := defs[typeName]
	if !ok || seen[typeName] {
		return nil
	}
	seen[typeName] = true
	defer delete(seen, typeName)
	props := def.Schema.Properties
	for _, prop := range sortedKeys(props) {
		p := props[prop]
		at := append(append([]string(nil), path...), prop)
		fs := loaders.FieldSpec{Kind: kind, Path: strings.Join(at, "/")}
		var err error
		if _, ok := p.ext[xAnnotation]; ok {
			if c.CommonAnnotations, err = MergeSpecs(c.CommonAnnotations, fs); err != nil {
				return err
			}
		}
		if _, ok := p.ext[xLabelSelector]; ok {
			if c.CommonLabels, err = MergeSpecs(c.CommonLabels, fs); err != nil {
				return err
			}
		}
		if _, ok := p.ext[xIdentity]; ok {
			if c.NamePrefix, err = MergeSpecs(c.NamePrefix, fs); err != nil {
				return err
			}
		}
		if version, ok := p.ext[xRefVersion]; ok {
			if refKind, ok := p.ext[xRefKind]; ok {
				key, ok := p.ext[xRefNameKey]
				if !ok {
					key = "name"
				}
				ref := NameBackReference{Version: version, Kind: refKind,
					FieldSpecs: []loaders.FieldSpec{{Kind: kind, Path: strings.Join(append(at, key), "/")}}}
				if c.NameReference, err = mergeRefs(c.NameReference, []NameBackReference{ref}); err != nil {
					return err
				}
			}
		}
		if p.hasR {
			if err := loadCRD(c, kind, defs, p.ref, at, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasAll(m map[string]crdProperty, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
