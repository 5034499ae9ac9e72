package stages

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseValues reads a chart's values file (its first document) as
// kustomize does before merging valuesInline into it: as YAML 1.2 (`yes`
// stays a string, timestamps become times).
func parseValues(data []byte) (any, error) {
	var v any
	if err := yaml.NewDecoder(strings.NewReader(string(data))).Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("could not parse values file into rnode: EOF")
		}
		return nil, fmt.Errorf("could not parse values file into rnode: %w", err)
	}
	return stringKeys(v), nil
}

// stringKeys turns maps with non-string keys (which YAML allows) into maps
// keyed by the keys' text, recursively.
func stringKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = stringKeys(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = stringKeys(e)
		}
	}
	return v
}

// mergeValues merges src into dest as kustomize's values merge does (kyaml's
// merge2): maps merge key by key, a null in src deletes the key, any other
// src value (lists included) replaces dest's, and a map, list or scalar
// meeting a different kind is an error. dest is modified and returned.
func mergeValues(src, dest any) (any, error) {
	if src == nil {
		return dest, nil
	}
	if dest == nil {
		return copyValue(src), nil
	}
	if nodeKind(src) != nodeKind(dest) {
		y, _ := yaml.Marshal(src)
		return nil, fmt.Errorf("wrong node kind: expected %s but got %s: node contents:\n%s", nodeKind(dest), nodeKind(src), y)
	}
	sm, ok := src.(map[string]any)
	if !ok {
		return copyValue(src), nil
	}
	dm := dest.(map[string]any)
	keys := make([]string, 0, len(sm))
	for k := range sm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sv := sm[k]
		if sv == nil {
			delete(dm, k)
			continue
		}
		merged, err := mergeValues(sv, dm[k])
		if err != nil {
			return nil, err
		}
		dm[k] = merged
	}
	return dm, nil
}

// nodeKind names the YAML node kind of a value as kyaml does.
func nodeKind(v any) string {
	switch v.(type) {
	case map[string]any, map[any]any:
		return "MappingNode"
	case []any:
		return "SequenceNode"
	}
	return "ScalarNode"
}
