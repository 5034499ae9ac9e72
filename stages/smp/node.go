package smp

import (
	"sort"

	"github.com/kpipe/kpipe/resource"
)

// nodeKind is the YAML kind of a node.
type nodeKind uint8

const (
	mappingNode nodeKind = iota + 1
	sequenceNode
	scalarNode
)

// String names the kind as kyaml does in its error messages.
func (k nodeKind) String() string {
	switch k {
	case mappingNode:
		return "MappingNode"
	case sequenceNode:
		return "SequenceNode"
	case scalarNode:
		return "ScalarNode"
	}
	return "Unknown"
}

// node is a mutable YAML node. The merge works on nodes rather than on
// map[string]any because kyaml's merge depends on node identity: it edits
// nodes in place, shares them between the object, the patch and the lists
// it builds, and overwrites a node's content when it sets a field.
type node struct {
	kind nodeKind
	// null marks a scalar tagged !!null.
	null bool
	// keep marks a null that setting a field keeps instead of deleting the
	// field (kyaml's persistent null).
	keep bool
	// value is a scalar's value (nil for null); text is how kyaml sees it
	// (the node's Value): "" for maps and lists.
	value any
	text  string
	// keys and vals are a mapping's entries, in order.
	keys []string
	vals []*node
	// items are a sequence's elements.
	items []*node
}

// toNode converts an object tree into nodes. Map keys are sorted: their
// order does not change the merge. Nil maps and slices are nulls, as they
// print.
func toNode(v any) *node {
	switch t := v.(type) {
	case map[string]any:
		if t == nil {
			return toNode(nil)
		}
		n := &node{kind: mappingNode, keys: resource.SortedKeys(t)}
		n.vals = make([]*node, len(n.keys))
		for i, k := range n.keys {
			n.vals[i] = toNode(t[k])
		}
		return n
	case []any:
		if t == nil {
			// A nil slice prints as null.
			return toNode(nil)
		}
		n := &node{kind: sequenceNode, items: make([]*node, len(t))}
		for i, e := range t {
			n.items[i] = toNode(e)
		}
		return n
	case nil:
		return &node{kind: scalarNode, null: true, text: "null"}
	case resource.EmptyNull:
		// `x:`: a null without text, which the merge drops where the
		// patch says nothing about it.
		return &node{kind: scalarNode, null: true, value: t}
	default:
		s, _ := resource.ScalarString(t)
		return &node{kind: scalarNode, value: t, text: s}
	}
}

// stringNode is a new string scalar.
func stringNode(s string) *node {
	return &node{kind: scalarNode, value: s, text: s}
}

// toValue converts nodes back into an object tree.
func toValue(n *node) any {
	switch n.kind {
	case mappingNode:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k] = toValue(n.vals[i])
		}
		return m
	case sequenceNode:
		l := make([]any, len(n.items))
		for i, e := range n.items {
			l[i] = toValue(e)
		}
		return l
	}
	if n.null {
		if e, ok := n.value.(resource.EmptyNull); ok {
			return e
		}
		if n.text == "" {
			return resource.EmptyNull{}
		}
		return nil
	}
	return n.value
}

// missingOrNull is kyaml's IsMissingOrNull.
func missingOrNull(n *node) bool { return n == nil || n.null }

// emptyMap is kyaml's IsEmptyMap: missing, null or an empty mapping.
func emptyMap(n *node) bool {
	return missingOrNull(n) || (n.kind == mappingNode && len(n.keys) == 0)
}

// nilOrEmpty is kyaml's IsNilOrEmpty: missing, null, or an empty mapping
// or sequence.
func nilOrEmpty(n *node) bool {
	return emptyMap(n) || (n.kind == sequenceNode && len(n.items) == 0)
}

// field returns the value of a mapping's field, nil when n is not a
// mapping or has no such field.
func (n *node) field(name string) *node {
	if n == nil || n.kind != mappingNode {
		return nil
	}
	for i, k := range n.keys {
		if k == name {
			return n.vals[i]
		}
	}
	return nil
}

// fieldNames returns a mapping's keys; none for other nodes.
func (n *node) fieldNames() []string {
	if n == nil || n.kind != mappingNode {
		return nil
	}
	return n.keys
}

// removeField deletes a mapping's field.
func (n *node) removeField(name string) {
	for i, k := range n.keys {
		if k == name {
			n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
			return
		}
	}
}

// sortedUnion returns the field names of the nodes, sorted, each once.
func sortedUnion(ns ...*node) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range ns {
		for _, k := range n.fieldNames() {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// invalidKind is kyaml's InvalidNodeKindError.
type invalidKind struct {
	want nodeKind
	got  *node
}

func (e *invalidKind) Error() string {
	msg := "wrong node kind: expected " + e.want.String() + " but got " + e.got.kind.String()
	if s, err := nodeString(e.got); err == nil {
		msg += ": node contents:\n" + s
	}
	return msg
}

// checkKind is kyaml's ErrorIfInvalid: missing and null nodes pass.
func checkKind(n *node, want nodeKind) error {
	if missingOrNull(n) || n.kind == want {
		return nil
	}
	return &invalidKind{want: want, got: n}
}
