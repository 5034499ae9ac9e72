package fnrun

// This file holds the YAML node operations fn run is built from. kustomize's
// fn run (kyaml) edits objects as go.yaml.in/yaml/v3 node trees and writes
// them with that library's encoder, which keeps key order, scalar styles and
// comments; kpipe does the same, with the same library at the same version,
// and these functions make the same edits kyaml's make (where a new key
// goes, which style a new value gets, when an emptied map is dropped), so
// that the encoder prints the same bytes.

import (
	"errors"
	"fmt"

	"github.com/kpipe/kpipe/internal/resyaml"
	"go.yaml.in/yaml/v3"
)

const (
	nullTag = "!!null"
	strTag  = "!!str"
)

// errMissingMetadata is kyaml's ErrMissingMetadata: a node with no
// apiVersion, no kind and no metadata.
var errMissingMetadata = errors.New("missing Resource metadata")

// content is n itself, or a document's content.
func content(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return n.Content[0]
	}
	return n
}

// isMissingOrNull reports whether n is absent or tagged null.
func isMissingOrNull(n *yaml.Node) bool {
	c := content(n)
	return c == nil || c.Tag == nullTag
}

// isNilOrEmpty reports whether n is absent, null, an empty map or list,
// or a zero node.
func isNilOrEmpty(n *yaml.Node) bool {
	c := content(n)
	return c == nil || c.Tag == nullTag ||
		(c.Kind == yaml.MappingNode && len(c.Content) == 0) ||
		(c.Kind == yaml.SequenceNode && len(c.Content) == 0) ||
		(c.Kind == 0 && c.Style == 0 && c.Tag == "" && c.Value == "" && c.Anchor == "" && c.Alias == nil &&
			c.Content == nil && c.HeadComment == "" && c.LineComment == "" && c.FootComment == "" && c.Line == 0 && c.Column == 0)
}

// value is a scalar's value ("" for a missing or null node).
func value(n *yaml.Node) string {
	if isMissingOrNull(n) {
		return ""
	}
	return content(n).Value
}

// field is the first entry named name of mapping n (nil when n is not a
// mapping or has no such key).
func field(n *yaml.Node, name string) (key, val *yaml.Node) {
	m := content(n)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// fieldNames lists the keys of mapping n, duplicates included.
func fieldNames(n *yaml.Node) ([]string, error) {
	if err := checkKind(n, yaml.MappingNode); err != nil {
		return nil, err
	}
	m := content(n)
	var names []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		names = append(names, m.Content[i].Value)
	}
	return names, nil
}

// checkKind fails, as kyaml's ErrorIfInvalid does, when n is neither
// missing nor null and not of kind k.
func checkKind(n *yaml.Node, k yaml.Kind) error {
	if isMissingOrNull(n) {
		return nil
	}
	c := content(n)
	if c.Kind != k {
		msg := fmt.Sprintf("wrong node kind: expected %s but got %s", resyaml.NodeKindName(k), resyaml.NodeKindName(c.Kind))
		if s, err := resyaml.EncodeNode(c); err == nil {
			msg += ": node contents:\n" + s
		}
		return errors.New(msg)
	}
	return nil
}

// lookup follows the mapping keys of path from n; nil when one is
// missing (or n is null). A node on the way that is not a mapping is an
// error.
func lookup(n *yaml.Node, path ...string) (*yaml.Node, error) {
	return follow(n, false, path)
}

// lookupCreate follows path from n, appending an empty mapping for each
// key that is missing (kyaml's LookupCreate(MappingNode, path...)).
func lookupCreate(n *yaml.Node, path ...string) (*yaml.Node, error) {
	return follow(n, true, path)
}

// follow is lookup, or with create lookupCreate.
func follow(n *yaml.Node, create bool, path []string) (*yaml.Node, error) {
	cur := content(n)
	for _, p := range path {
		if isMissingOrNull(cur) {
			return nil, nil
		}
		if err := checkKind(cur, yaml.MappingNode); err != nil {
			return nil, err
		}
		_, v := field(cur, p)
		if v == nil && !create {
			return nil, nil
		}
		if v == nil {
			v = &yaml.Node{Kind: yaml.MappingNode}
			cur.Content = append(cur.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, v)
		}
		cur = v
	}
	return cur, nil
}

// clearField removes the first entry named name from mapping m (when
// ifEmpty, only if its value has no content); it returns the removed value.
func clearField(m *yaml.Node, name string, ifEmpty bool) (*yaml.Node, error) {
	if err := checkKind(m, yaml.MappingNode); err != nil {
		return nil, err
	}
	c := content(m)
	if c == nil {
		return nil, nil
	}
	for i := 0; i+1 < len(c.Content); i += 2 {
		if c.Content[i].Value != name {
			continue
		}
		v := c.Content[i+1]
		if ifEmpty && len(v.Content) > 0 {
			continue
		}
		c.Content = append(c.Content[:i:i], c.Content[i+2:]...)
		return v, nil
	}
	return nil, nil
}

// setField sets mapping m's entry name to v as kyaml's FieldSetter does:
// an existing value is replaced in place, v taking its style; a new entry
// is appended.
func setField(m *yaml.Node, name string, v *yaml.Node) error {
	if err := checkKind(m, yaml.MappingNode); err != nil {
		return err
	}
	c := content(m)
	if c == nil {
		return nil
	}
	if _, old := field(c, name); old != nil {
		v.Style = old.Style
		*old = *v
		return nil
	}
	c.Content = append(c.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, v)
	return nil
}

// meta is what kyaml's GetMeta reads of an object.
type meta struct {
	APIVersion, Kind, Name, Namespace string
	Annotations                       map[string]string
}

// getMeta reads an object's type and metadata; errMissingMetadata when it
// has none of apiVersion, kind and metadata.
func getMeta(n *yaml.Node) (meta, error) {
	var m meta
	if isMissingOrNull(n) {
		return m, nil
	}
	missing := true
	if _, v := field(n, "apiVersion"); v != nil && !isNilOrEmpty(v) {
		m.APIVersion = value(v)
		missing = false
	}
	if _, v := field(n, "kind"); v != nil && !isNilOrEmpty(v) {
		m.Kind = value(v)
		missing = false
	}
	_, md := field(n, "metadata")
	if md == nil || isNilOrEmpty(md) {
		if missing {
			return m, errMissingMetadata
		}
		return m, nil
	}
	if _, v := field(md, "name"); v != nil && !isNilOrEmpty(v) {
		m.Name = v.Value
	}
	if _, v := field(md, "namespace"); v != nil && !isNilOrEmpty(v) {
		m.Namespace = value(v)
	}
	if _, v := field(md, "annotations"); v != nil && !isNilOrEmpty(v) {
		m.Annotations = map[string]string{}
		if v.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(v.Content); i += 2 {
				// The first of duplicate keys counts, as in kyaml.
				if k := value(v.Content[i]); !seen(m.Annotations, k) {
					m.Annotations[k] = value(v.Content[i+1])
				}
			}
		}
	}
	return m, nil
}

func seen(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// annotations is an object's annotations (empty when it has none or
// cannot have any).
func annotations(n *yaml.Node) map[string]string {
	m, _ := getMeta(n)
	if m.Annotations == nil {
		return map[string]string{}
	}
	return m.Annotations
}

// clearEmptyAnnotations drops metadata.annotations when it has no entries,
// then metadata when it has none.
func clearEmptyAnnotations(n *yaml.Node) error {
	md, err := lookup(n, "metadata")
	if err != nil {
		return err
	}
	if md != nil {
		if _, err := clearField(md, "annotations", true); err != nil {
			return err
		}
	}
	_, err = clearField(n, "metadata", true)
	return err
}

// setAnnotation sets an annotation as kyaml's SetAnnotation does: a new
// value is single-quoted (an existing one keeps its style), a new key goes
// last, and metadata and annotations are created (last) when missing.
func setAnnotation(n *yaml.Node, key, val string) error {
	v := &yaml.Node{Kind: yaml.ScalarNode}
	v.SetString(val)
	v.Style = yaml.SingleQuotedStyle
	if err := clearEmptyAnnotations(n); err != nil {
		return err
	}
	a, err := lookupCreate(n, "metadata", "annotations")
	if err != nil || a == nil {
		return err
	}
	return setField(a, key, v)
}

// clearAnnotation removes an annotation (its first entry).
func clearAnnotation(n *yaml.Node, key string) error {
	a, err := lookup(n, "metadata", "annotations")
	if err != nil || a == nil {
		return err
	}
	_, err = clearField(a, key, false)
	return err
}

// annotationNode is an annotation's value node (nil when absent).
func annotationNode(n *yaml.Node, key string) (*yaml.Node, error) {
	return lookup(n, "metadata", "annotations", key)
}
