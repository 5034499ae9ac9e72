package resyaml

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/resource"
	"go.yaml.in/yaml/v3"
)

// The decoder reads each document into YAML nodes first, and fixNodes
// then corrects the value tree where kustomize, which keeps the nodes,
// reads something other than what yaml.v3 decodes:
//
//   - a null written without text (`x:`) becomes EmptyNull;
//   - a string written as a folded block scalar (`>`, with a tag or not)
//     takes the value kustomize prints: kustomize turns objects into JSON
//     by encoding their nodes as YAML (keeping each scalar's style and
//     tag) and decoding that again, and yaml.v3's encoder and decoder
//     disagree on folded scalars with blank or more-indented lines
//     ("a\n\n b" becomes "a\n\n\n b"). Literal and other styles survive that
//     trip unchanged.
//
//   - a key that is not a string keeps its text (`00: a` has the key
//     "00", where yaml.v3 reads the number 0); below the top level, such
//     a key is also recorded (keyRecorder), as kustomize fails on it
//     (keys.go).
//
// Nodes reached through aliases and merge keys are left alone.

// needsFix reports whether the node tree below n (not through aliases) has
// a node fixNodes changes: most documents have none and need no second
// walk.
func needsFix(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return isEmptyNullNode(n) || isFoldedString(n)
	case yaml.MappingNode:
		if hasNonStringKey(n) {
			return true
		}
		for _, c := range n.Content {
			if needsFix(c) {
				return true
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if needsFix(c) {
				return true
			}
		}
	}
	return false
}

func isEmptyNullNode(n *yaml.Node) bool { return n.Value == "" && n.Tag == "!!null" }

// isFoldedString reports whether n is a folded block scalar that reads as
// a string: tagged !!str (explicitly or by resolution), or with a local
// tag (`!x`, `!`), which yaml.v3 reads as a string too and which the
// trip keeps on the node.
func isFoldedString(n *yaml.Node) bool {
	return n.Style&yaml.FoldedStyle != 0 && (n.Tag == "!!str" || !strings.HasPrefix(n.Tag, "!!"))
}

// keyRecorder collects, as fixNodes walks a document, the keys of nested
// maps that are not strings (keys.go), with the path of their map from the
// document's top level; a nil recorder records nothing.
type keyRecorder struct {
	path []string
	keys []resource.FieldKey
}

func (kr *keyRecorder) push(p string) {
	if kr != nil {
		kr.path = append(kr.path, p)
	}
}

func (kr *keyRecorder) pop() {
	if kr != nil {
		kr.path = kr.path[:len(kr.path)-1]
	}
}

// note records k, a key of the map at the current path, when that map is
// below the top level and k is not a string.
func (kr *keyRecorder) note(k *yaml.Node, key string) {
	if kr == nil || len(kr.path) == 0 {
		return
	}
	if t := k.ShortTag(); k.Kind == yaml.ScalarNode && resource.NonStringKeyTag(t) {
		kr.keys = append(kr.keys, resource.FieldKey{Path: append([]string(nil), kr.path...), Key: key, Tag: t})
	}
}

// fixNodes returns v (the value decoded from n) with the corrections
// above; flow is set inside a flow collection. rec, when not nil, records
// the nested keys that are not strings.
func fixNodes(n *yaml.Node, v any, flow bool, rec *keyRecorder) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return fixNodes(n.Content[0], v, flow, rec)
		}
	case yaml.ScalarNode:
		if v == nil && isEmptyNullNode(n) {
			return resource.EmptyNull{Flow: flow}
		}
		if _, ok := v.(string); ok && isFoldedString(n) {
			if s, err := reencode(n); err == nil {
				return s
			}
		}
	case yaml.MappingNode:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		flow = flow || n.Style&yaml.FlowStyle != 0
		if hasNonStringKey(n) {
			if r, ok := rebuildMap(n, flow, rec); ok {
				return r
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
				continue
			}
			if e, ok := m[k.Value]; ok {
				rec.push(k.Value)
				m[k.Value] = fixNodes(val, e, flow, rec)
				rec.pop()
			}
		}
	case yaml.SequenceNode:
		l, ok := v.([]any)
		if !ok || len(l) != len(n.Content) {
			return v
		}
		flow = flow || n.Style&yaml.FlowStyle != 0
		for i, e := range n.Content {
			rec.push(strconv.Itoa(i))
			l[i] = fixNodes(e, l[i], flow, rec)
			rec.pop()
		}
	}
	return v
}

// hasNonStringKey reports whether a mapping has a scalar key that is not a
// string (a merge key does not count).
func hasNonStringKey(n *yaml.Node) bool {
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind == yaml.ScalarNode && k.Tag != "!!str" && k.Tag != "!!merge" {
			return true
		}
	}
	return false
}

// rebuildMap decodes a mapping with keys that are not strings entry by
// entry, each key written as its own text (`00`, not `0`; a null key as
// ""), as kustomize reads it. It declines (false) for mappings with merge
// keys or keys that are not scalars.
func rebuildMap(n *yaml.Node, flow bool, rec *keyRecorder) (map[string]any, bool) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			return nil, false
		}
	}
	m := make(map[string]any, len(n.Content)/2)
	var noted []resource.FieldKey
	if rec != nil {
		noted = rec.keys
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		if k.Tag == "!!null" {
			key = ""
		}
		var e any
		if err := val.Decode(&e); err != nil {
			if rec != nil {
				rec.keys = noted // declined: the caller records nothing here
			}
			return nil, false
		}
		rec.note(k, key)
		rec.push(key)
		m[key] = fixNodes(val, normalize(e), flow, rec)
		rec.pop()
	}
	return m, true
}

// reencode returns the string a scalar node reads as after kyaml's trip
// from nodes to JSON: encoded in its style (indent 2, compact sequences,
// as kyaml's encoder) and decoded again.
func reencode(n *yaml.Node) (string, error) {
	scalar := &yaml.Node{Kind: yaml.ScalarNode, Tag: n.Tag, Style: n.Style, Value: n.Value}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "k"}, scalar}}
	var b bytes.Buffer
	e := NewNodeEncoder(&b)
	if err := e.Encode(doc); err != nil {
		return "", err
	}
	if err := e.Close(); err != nil {
		return "", err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b.Bytes(), &m); err != nil {
		return "", err
	}
	s, ok := m["k"].(string)
	if !ok {
		return "", fmt.Errorf("folded scalar %q does not read back as a string", n.Value)
	}
	return s, nil
}
