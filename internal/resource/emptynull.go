package resource

import (
	"go.yaml.in/yaml/v3"
)

// EmptyNull is the value of a field written with no value at all (`x:`),
// told apart from an explicit null (`x: null`, `x: ~`), which is nil.
//
// Both print as null, and most of kustomize treats them alike, but not
// all: kustomize works on YAML nodes, where `x:` is a null whose text is
// empty. Its strategic-merge patch drops such a field from the object when
// the patch says nothing about it, and keeps an explicit null; a
// replacement into a field below `x:` fails, and one below `x: null`
// creates it. Any trip through JSON (a JSON patch, for one) makes every
// null explicit; EmptyNull marshals to JSON and YAML as null, so that
// happens here too.
//
// Code that reads object trees must treat EmptyNull as it treats nil; use
// IsNull.
type EmptyNull struct{}

// MarshalJSON writes null.
func (EmptyNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// MarshalYAML writes null.
func (EmptyNull) MarshalYAML() (any, error) { return nil, nil }

// IsNull reports whether v is a null of either kind (nil or EmptyNull).
func IsNull(v any) bool {
	switch v.(type) {
	case nil, EmptyNull:
		return true
	}
	return false
}

// markEmptyNulls replaces by EmptyNull each nil in v (the value decoded
// from n) whose node is a null scalar written without text. Nodes reached
// through aliases and merge keys are left alone: their nulls stay nil.
func markEmptyNulls(n *yaml.Node, v any) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return markEmptyNulls(n.Content[0], v)
		}
	case yaml.ScalarNode:
		if v == nil && n.Value == "" && n.Tag == "!!null" {
			return EmptyNull{}
		}
	case yaml.MappingNode:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				continue
			}
			key := k.Value
			if k.Tag != "!!str" {
				// Non-string keys are written as their text when the map
				// is normalized; the text of such scalars is their value.
				var kv any
				if k.Decode(&kv) != nil {
					continue
				}
				key, _ = ScalarString(kv)
			}
			if e, ok := m[key]; ok {
				m[key] = markEmptyNulls(val, e)
			}
		}
	case yaml.SequenceNode:
		l, ok := v.([]any)
		if !ok || len(l) != len(n.Content) {
			return v
		}
		for i, e := range n.Content {
			l[i] = markEmptyNulls(e, l[i])
		}
	}
	return v
}

// hasEmptyNull reports whether the node tree below n (not through aliases)
// holds a null scalar without text: most documents have none, and need no
// second walk.
func hasEmptyNull(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value == "" && n.Tag == "!!null"
	case yaml.MappingNode, yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if hasEmptyNull(c) {
				return true
			}
		}
	}
	return false
}
