package resource

import (
	"fmt"
	"time"
)

// DeepCopy returns a copy of an object tree that shares nothing mutable with
// v. Scalars are immutable and are returned as they are.
func DeepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return CopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = DeepCopy(e)
		}
		return out
	default:
		return v
	}
}

// CopyMap deep-copies a mapping node.
func CopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = DeepCopy(e)
	}
	return out
}

// Lookup follows a path of map keys from obj and returns the value found.
func Lookup(obj map[string]any, path ...string) (any, bool) {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// LookupString is Lookup for string values; any other type reads as "".
func LookupString(obj map[string]any, path ...string) string {
	v, _ := Lookup(obj, path...)
	s, _ := v.(string)
	return s
}

// LookupMap is Lookup for mapping values.
func LookupMap(obj map[string]any, path ...string) map[string]any {
	v, _ := Lookup(obj, path...)
	m, _ := v.(map[string]any)
	return m
}

// EnsureMap returns the mapping at path below obj, creating empty mappings
// (and replacing null values) along the way. It fails when a value on the
// path exists but is not a mapping.
func EnsureMap(obj map[string]any, path ...string) (map[string]any, error) {
	cur := obj
	for i, k := range path {
		v, ok := cur[k]
		if !ok || IsNull(v) {
			n := map[string]any{}
			cur[k] = n
			cur = n
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected a map at %s but found %s", joinPath(path[:i+1]), KindOf(v))
		}
		cur = m
	}
	return cur, nil
}

func joinPath(p []string) string {
	s := ""
	for i, e := range p {
		if i > 0 {
			s += "."
		}
		s += e
	}
	return s
}

// KindOf names the YAML node kind of a value, for error messages.
func KindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	case nil, EmptyNull:
		return "null"
	default:
		return "a scalar"
	}
}

// ScalarString renders a scalar value as the string kustomize sees in the
// YAML node (the node's text). Non-scalars render as "".
func ScalarString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case bool:
		if t {
			return "true", true
		}
		return "false", true
	case int:
		return fmt.Sprint(t), true
	case int64:
		return fmt.Sprint(t), true
	case uint64:
		return fmt.Sprint(t), true
	case float64:
		return fmt.Sprint(t), true
	case time.Time:
		return t.Format(time.RFC3339Nano), true
	case nil, EmptyNull:
		return "", true
	}
	return "", false
}

// StringMap reads a mapping of strings (labels, annotations, selectors).
// Non-string values are rendered as their text.
func StringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, _ := ScalarString(e)
		out[k] = s
	}
	return out
}
