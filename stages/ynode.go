package stages

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// This file holds the YAML node helpers the replacement stage works with.
// kustomize copies replacement values as YAML nodes: a scalar target keeps
// its tag and only takes the source's text, a created field has no tag at
// all (its text is read again as plain YAML), and a value that no longer
// reads as its tag fails when kustomize turns the object back into data.
// Converting the objects involved to nodes and back reproduces all of it.

// YAML tags of the node kinds objects are made of.
const (
	tagStr       = "!!str"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagBool      = "!!bool"
	tagNull      = "!!null"
	tagMap       = "!!map"
	tagSeq       = "!!seq"
	tagTimestamp = "!!timestamp"
)

// toNode converts an object tree into YAML nodes, with tags that say what
// each scalar is. Map keys are sorted.
func toNode(v any) *yaml.Node {
	switch t := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: tagMap}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		n.Content = make([]*yaml.Node, 0, 2*len(keys))
		// The key nodes in one allocation: a replacement converts whole
		// objects, and their nodes were most of what it allocated.
		keyNodes := make([]yaml.Node, len(keys))
		for i, k := range keys {
			keyNodes[i] = yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: k}
			n.Content = append(n.Content, &keyNodes[i], toNode(t[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: tagSeq, Content: make([]*yaml.Node, len(t))}
		for i, e := range t {
			n.Content[i] = toNode(e)
		}
		return n
	case nil:
		return scalarNode(tagNull, "null")
	case resource.EmptyNull:
		return scalarNode(tagNull, "")
	case string:
		return scalarNode(tagStr, t)
	case bool:
		return scalarNode(tagBool, strconv.FormatBool(t))
	case int:
		return scalarNode(tagInt, strconv.Itoa(t))
	case int64:
		return scalarNode(tagInt, strconv.FormatInt(t, 10))
	case uint64:
		return scalarNode(tagInt, strconv.FormatUint(t, 10))
	case float64:
		return scalarNode(tagFloat, formatYAMLFloat(t))
	case time.Time:
		return scalarNode(tagTimestamp, t.Format(time.RFC3339Nano))
	}
	return scalarNode(tagStr, fmt.Sprint(v))
}

func scalarNode(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// formatYAMLFloat writes f as YAML reads it back.
func formatYAMLFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// fromNode converts YAML nodes back into an object tree. A scalar is read
// as its tag says (or, without a tag, as plain YAML); one whose text does
// not fit its tag is an error worded as kustomize's. A map with a key that
// is not a string (possible only for keys created without a tag) comes
// back as a map[any]any, which objectFromNode refuses.
func fromNode(n *yaml.Node) (any, error) {
	return fromNodeAlong(n, nil)
}

// fromNodeAlong is fromNode for nodes made by toNodeAlong: a stub gives
// back the value it stands for.
func fromNodeAlong(n *yaml.Node, stubs []any) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return fromNodeAlong(n.Content[0], stubs)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return fromNodeAlong(n.Alias, stubs)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		var general map[any]any
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := fromNodeAlong(n.Content[i+1], stubs)
			if err != nil {
				return nil, err
			}
			k := n.Content[i]
			if k.Tag == "" && general == nil {
				// A key kyaml created has no tag and is read as plain
				// YAML: "1" or "true" is then not a string.
				if kv, err := decodeScalar(k); err != nil || kv != k.Value {
					general = make(map[any]any, len(n.Content)/2)
					for sk, sv := range m {
						general[sk] = sv
					}
				}
			}
			if general == nil {
				m[k.Value] = v
				continue
			}
			kv := any(k.Value)
			if k.Tag == "" {
				if d, err := decodeScalar(k); err == nil {
					kv = d
				}
			}
			general[kv] = v
		}
		if general != nil {
			return general, nil
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, e := range n.Content {
			v, err := fromNodeAlong(e, stubs)
			if err != nil {
				return nil, err
			}
			s[i] = v
		}
		return s, nil
	}
	if stubs != nil && n.Tag == stubTag {
		if n.Line < 0 || n.Line >= len(stubs) {
			return nil, fmt.Errorf("kpipe: internal error: bad stub node %d", n.Line)
		}
		return stubs[n.Line], nil
	}
	return decodeScalar(n)
}

// objectFromNode converts the nodes of a whole object back into an object
// tree, failing as kustomize fails to write an object that has a map with
// a key that is not a string.
func objectFromNode(n *yaml.Node) (map[string]any, error) {
	return objectFromNodeAlong(n, nil)
}

// objectFromNodeAlong is objectFromNode for nodes made by toNodeAlong.
func objectFromNodeAlong(n *yaml.Node, stubs []any) (map[string]any, error) {
	v, err := fromNodeAlong(n, stubs)
	if err != nil {
		return nil, err
	}
	if hasGeneralMap(v) {
		return nil, fmt.Errorf("%#v: json: unsupported type: map[interface {}]interface {}", v)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected an object (a map) but found %T", v)
	}
	return m, nil
}

// hasGeneralMap reports whether v holds a map[any]any.
func hasGeneralMap(v any) bool {
	switch t := v.(type) {
	case map[any]any:
		return true
	case map[string]any:
		for _, e := range t {
			if hasGeneralMap(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasGeneralMap(e) {
				return true
			}
		}
	}
	return false
}

// decodeScalar reads a scalar node as yaml.v3 does.
func decodeScalar(n *yaml.Node) (any, error) {
	switch n.Tag {
	case "":
		if n.Value == "" {
			return nil, nil
		}
	case tagNull:
		switch n.Value {
		case "":
			return resource.EmptyNull{}, nil
		case "null":
			return nil, nil
		}
	case tagStr:
		// What toNode writes, read as yaml.v3 reads it, without a decoder
		// for each scalar; other text takes the decoder's way.
		return n.Value, nil
	case tagBool:
		switch n.Value {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	case tagInt:
		if i, err := strconv.Atoi(n.Value); err == nil && strconv.Itoa(i) == n.Value {
			return i, nil
		}
	}
	c := *n
	c.Kind = yaml.ScalarNode
	c.Content = nil
	var v any
	if err := c.Decode(&v); err != nil {
		return nil, fmt.Errorf("map[string]interface {}(nil): %w", err)
	}
	return v, nil
}

// unwrapDocument returns the content of a document node, or n itself.
func unwrapDocument(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}

// isMissingOrNull reports whether n is absent or a null.
func isMissingOrNull(n *yaml.Node) bool {
	return n == nil || n.Tag == tagNull
}

// isNilOrEmpty reports whether n is absent, a null, or an empty map or
// list.
func isNilOrEmpty(n *yaml.Node) bool {
	switch {
	case isMissingOrNull(n):
		return true
	case n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode:
		return len(n.Content) == 0
	}
	return n.Kind == 0 && n.Tag == "" && n.Value == "" && n.Anchor == "" && n.Alias == nil && len(n.Content) == 0
}

// nodeValue is the text of a scalar node ("" for a null).
func nodeValue(n *yaml.Node) string {
	if isMissingOrNull(n) {
		return ""
	}
	return n.Value
}

// checkKind returns kyaml's error for a node that is not of the expected
// kind; absent and null nodes pass.
func checkKind(n *yaml.Node, want yaml.Kind) error {
	if isMissingOrNull(n) {
		return nil
	}
	if n.Kind != want {
		msg := fmt.Sprintf("wrong node kind: expected %s but got %s", resyaml.NodeKindName(want), resyaml.NodeKindName(n.Kind))
		if s, err := resyaml.EncodeNode(n); err == nil {
			msg += ": node contents:\n" + s
		}
		return errors.New(msg)
	}
	return nil
}

// elements returns the elements of a list node (none for a null, unless
// something was appended to the null; see appendElement).
func elements(n *yaml.Node) ([]*yaml.Node, error) {
	n = unwrapDocument(n)
	if err := checkKind(n, yaml.SequenceNode); err != nil {
		return nil, err
	}
	if n == nil {
		return nil, nil
	}
	return n.Content, nil
}

// mapField returns the value of key name in map node n: nil when n is
// absent or null or has no such key, an error when n is not a map. An empty
// name matches n itself when it is an empty scalar, as kyaml's field
// matcher does.
func mapField(n *yaml.Node, name string) (*yaml.Node, error) {
	n = unwrapDocument(n)
	if isMissingOrNull(n) {
		return nil, nil
	}
	if name == "" {
		if err := checkKind(n, yaml.ScalarNode); err != nil {
			return nil, err
		}
		if n.Value == "" {
			return n, nil
		}
		return nil, nil
	}
	if err := checkKind(n, yaml.MappingNode); err != nil {
		return nil, err
	}
	var found *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			found = n.Content[i+1]
		}
	}
	return found, nil
}

// setMapField adds key name to map node n. As in kyaml, the key has no
// tag (so it is read as plain YAML), and a null node takes the entry among
// its contents but stays a null, so the entry is lost.
func setMapField(n *yaml.Node, name string, v *yaml.Node) {
	n = unwrapDocument(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, v)
}

// appendElement appends v to list node n. As in kyaml, a null node takes
// the element among its contents but stays a null, so the element is lost.
func appendElement(n *yaml.Node, v *yaml.Node) error {
	n = unwrapDocument(n)
	if err := checkKind(n, yaml.SequenceNode); err != nil {
		return err
	}
	n.Content = append(n.Content, v)
	return nil
}

// A replacement target's field paths lead to a small part of an object
// (metadata.annotations.x, spec.template.spec.volumes), and converting the
// whole object into nodes and back, for every object a target selects,
// was most of what replacements cost. reach says what the paths may
// lead to; toNodeAlong converts that part and puts a stub node in place of
// every other value, which objectFromNodeAlong puts back as it was.

// reach is the part of an object that field paths may lead to: below a
// map, the keys plain path elements name, each with what is reached below
// it; all when a path ends here or goes on with anything but a plain key
// (a list index or selector, a wildcard, an element with spaces...), so
// that everything below is converted as before.
type reach struct {
	all  bool
	keys map[string]*reach
}

// reachOf returns what the field paths may lead to.
func reachOf(fieldPaths []string) *reach {
	root := &reach{}
	for _, fp := range fieldPaths {
		r := root
		for _, part := range splitFieldPath(fp) {
			if r.all {
				break
			}
			if !plainKey(part) {
				r.all = true
				break
			}
			if r.keys == nil {
				r.keys = map[string]*reach{}
			}
			next := r.keys[part]
			if next == nil {
				next = &reach{}
				r.keys[part] = next
			}
			r = next
		}
		r.all = true // the field itself, replaced whole or not
	}
	return root
}

// plainKey reports whether a path element is only a map key for both
// pathMatcher and lookupPath (which setInStructuredData follows).
func plainKey(part string) bool {
	if part == "" || part == "-" || part == "*" || strings.TrimSpace(part) != part ||
		strings.ContainsAny(part, "[]*=") {
		return false
	}
	_, isIdx := atoi(part)
	return !isIdx
}

// stubTag marks a stub node: its Line is the index of the value it
// stands for. No path element reaches a stub (see reach), so nothing reads
// or writes one.
const stubTag = "!kpipe-stub"

// toNodeAlong is toNode for the part of v that r reaches, with stubs for
// the rest, which it appends to stubs.
func toNodeAlong(v any, r *reach, stubs *[]any) *yaml.Node {
	m, ok := v.(map[string]any)
	if r.all || !ok {
		return toNode(v)
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: tagMap}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n.Content = make([]*yaml.Node, 2*len(keys))
	// The keys and the stubs in one allocation.
	nodes := make([]yaml.Node, 2*len(keys))
	for i, k := range keys {
		nodes[2*i] = yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: k}
		n.Content[2*i] = &nodes[2*i]
		if sub, ok := r.keys[k]; ok {
			n.Content[2*i+1] = toNodeAlong(m[k], sub, stubs)
			continue
		}
		nodes[2*i+1] = yaml.Node{Kind: yaml.ScalarNode, Tag: stubTag, Line: len(*stubs)}
		n.Content[2*i+1] = &nodes[2*i+1]
		*stubs = append(*stubs, m[k])
	}
	return n
}
