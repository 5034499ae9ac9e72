package stages

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	yaml "go.yaml.in/yaml/v3"
)

// This file follows replacement field paths through YAML nodes, as
// kustomize does: lookupPath reads a source (kyaml's PathGetter), and
// pathMatcher finds, and may create, the fields of a target (kyaml's
// PathMatcher). The two differ: a source path takes "-" (the last element)
// and exact "[key=value]" selectors; a target path takes "*" (every
// element) and selectors whose value is an unanchored regular expression.

// cleanPath drops blank elements and trims the others.
func cleanPath(path []string) []string {
	var out []string
	for _, e := range path {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// lookupPath follows a source field path from n. It returns nil, with no
// error, where the path leads nowhere.
func lookupPath(n *yaml.Node, path []string) (*yaml.Node, error) {
	match := n
	for _, part := range cleanPath(path) {
		var err error
		idx, isIdx := atoi(part)
		switch {
		case isIdx:
			if idx < 0 {
				return nil, fmt.Errorf("array index %d cannot be negative", idx)
			}
			match, err = elementAt(match, idx)
		case part == "-":
			match, err = elementAt(match, -1)
		case part == "*":
			return nil, errors.New("wildcard is not supported in PathGetter")
		case isListIndex(part):
			name, value, ok := splitIndexNameValue(part)
			if !ok {
				return nil, errors.New("list path element must contain fieldName=fieldValue for element to match")
			}
			match, err = matchElement(match, name, value)
		default:
			match, err = mapField(match, part)
		}
		if match == nil || err != nil {
			return nil, err
		}
	}
	return match, nil
}

// elementAt returns element idx of a list node (the last one for a
// negative idx), or nil when there is none.
func elementAt(n *yaml.Node, idx int) (*yaml.Node, error) {
	elems, err := elements(n)
	if err != nil {
		return nil, err
	}
	if idx < 0 {
		idx = len(elems) - 1
	}
	if idx < 0 || idx >= len(elems) {
		return nil, nil
	}
	return elems[idx], nil
}

// matchElement returns the first element of a list node that a source
// selector picks: a map whose field name has exactly value, or, with no
// name, an element whose text is value.
func matchElement(n *yaml.Node, name, value string) (*yaml.Node, error) {
	elems, err := elements(n)
	if err != nil {
		return nil, err
	}
	for _, e := range elems {
		if name == "" {
			if e.Value == value {
				return e, nil
			}
			continue
		}
		if isMissingOrNull(e) || e.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(e.Content); i += 2 {
			if e.Content[i].Value == name && e.Content[i+1].Value == value {
				return e, nil
			}
		}
	}
	return nil, nil
}

// pathMatcher finds the fields a target field path names. With create set
// (to the kind of the value being written), missing fields are created on
// the way: maps, or lists where the next element is an index or a
// selector, and the last field as create.
type pathMatcher struct {
	create yaml.Kind
	// texts, when not nil, memoizes the YAML text of scalar list
	// elements, which a selector matches: a target's objects have the
	// same few (encoding one cost an encoder each).
	texts map[scalarText]string
}

// scalarText is what the YAML text of a scalar node without anchor and
// comments depends on.
type scalarText struct {
	tag, value string
	style      yaml.Style
}

// text returns the YAML text of n (resyaml.EncodeNode), memoized for
// scalars when p.texts is set.
func (p pathMatcher) text(n *yaml.Node) (string, error) {
	if p.texts == nil || n.Kind != yaml.ScalarNode || n.Anchor != "" ||
		n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return resyaml.EncodeNode(n)
	}
	k := scalarText{tag: n.Tag, value: n.Value, style: n.Style}
	if t, ok := p.texts[k]; ok {
		return t, nil
	}
	t, err := resyaml.EncodeNode(n)
	if err == nil {
		p.texts[k] = t
	}
	return t, err
}

// filter returns the nodes path leads to from n.
func (p pathMatcher) filter(n *yaml.Node, path []string) ([]*yaml.Node, error) {
	if len(path) == 0 {
		return []*yaml.Node{n}, nil
	}
	switch {
	case isIdxNumber(path[0]):
		return p.index(n, path)
	case isListIndex(path[0]):
		return p.selector(n, path, true)
	case path[0] == "*":
		return p.every(n, path)
	}
	return p.field(n, path)
}

// nextKind is the kind of node to create for a field followed by next.
func (p pathMatcher) nextKind(path []string) yaml.Kind {
	if len(path) < 2 {
		return p.create
	}
	next := path[1]
	if isListIndex(next) || isIdxNumber(next) {
		return yaml.SequenceNode
	}
	if next == "" {
		return p.create
	}
	return yaml.MappingNode
}

// index follows a list position; with create, a missing element just past
// the end is appended.
func (p pathMatcher) index(n *yaml.Node, path []string) ([]*yaml.Node, error) {
	idx, _ := strconv.Atoi(path[0])
	elems, err := elements(n)
	if err != nil {
		return nil, err
	}
	if len(elems) == idx && p.create != 0 {
		elem := &yaml.Node{Kind: p.nextKind(path)}
		if err := appendElement(n, elem); err != nil {
			return nil, fmt.Errorf("failed to append element for %q: %w", path[0], err)
		}
		elems = append(elems[:len(elems):len(elems)], elem)
	}
	if len(elems) < idx+1 {
		return nil, fmt.Errorf("index %d specified but only %d elements found", idx, len(elems))
	}
	return p.filter(elems[idx], path[1:])
}

// selector follows "[key=regexp]" (the map elements whose key matches) or
// "[=regexp]" (the scalar elements that match). The expression is
// unanchored and matched against the YAML text of the value. With create
// and no match, an element made of the selector's key and text is appended.
func (p pathMatcher) selector(n *yaml.Node, path []string, mayCreate bool) ([]*yaml.Node, error) {
	field, value, ok := splitIndexNameValue(path[0])
	if !ok {
		return nil, errors.New("list path element must contain fieldName=fieldValue for element to match")
	}
	elems, err := elements(n)
	if err != nil {
		return nil, err
	}
	var out []*yaml.Node
	matched := false
	var re *regexp.Regexp // compiled at the first element, as an error only counts then
	for _, e := range elems {
		if re == nil {
			if re, err = regexp.Compile(value); err != nil {
				return nil, err
			}
		}
		var v *yaml.Node
		if field == "" {
			v = e
		} else if v, _ = mapField(e, field); e.Kind != yaml.MappingNode || v == nil {
			continue
		}
		text, err := p.text(v)
		if err != nil {
			return nil, err
		}
		if !re.MatchString(strings.TrimSpace(text)) {
			continue
		}
		if field == "" {
			// A scalar element is the match; the rest of the path is not
			// followed.
			out = append(out, e)
			matched = true
			continue
		}
		add, err := p.filter(e, path[1:])
		if err != nil {
			return nil, err
		}
		if add != nil {
			out = append(out, add...)
			matched = true
		}
	}
	if matched && len(out) == 0 {
		matched = false
	}
	if matched || p.create == 0 || !mayCreate {
		return out, nil
	}
	elem := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
	if field != "" {
		elem = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: field}, elem}}
	}
	if err := appendElement(n, elem); err != nil {
		return nil, fmt.Errorf("failed to create element for %q: %w", path[0], err)
	}
	// Look again: the new element matches, unless the selector's text does
	// not match itself as an expression.
	return p.selector(n, path, false)
}

// every follows "*": every element of a list.
func (p pathMatcher) every(n *yaml.Node, path []string) ([]*yaml.Node, error) {
	elems, err := elements(n)
	if err != nil {
		return nil, err
	}
	var out []*yaml.Node
	for _, e := range elems {
		add, err := p.filter(e, path[1:])
		if err != nil {
			return nil, err
		}
		out = append(out, add...)
	}
	return out, nil
}

// field follows a map key, creating it when asked. A path that goes on
// past a scalar reads the scalar as YAML (or JSON) and follows the rest of
// the path inside it; what is found there is a copy, so writing to it
// changes nothing (setInStructuredData is what writes into such scalars).
func (p pathMatcher) field(n *yaml.Node, path []string) ([]*yaml.Node, error) {
	f, err := mapField(n, path[0])
	if err != nil {
		return nil, err
	}
	if f == nil {
		if p.create == 0 {
			return nil, nil
		}
		f = &yaml.Node{Kind: p.nextKind(path)}
		setMapField(n, path[0], f)
	}
	if f.Kind == yaml.ScalarNode && len(path) > 1 {
		var parsed yaml.Node
		if err := yaml.Unmarshal([]byte(f.Value), &parsed); err != nil {
			return nil, err
		}
		return p.filter(&parsed, path[1:])
	}
	return p.filter(f, path[1:])
}

// errNotStructured says that setInStructuredData did not apply.
var errNotStructured = errors.New("no structured data found in path")

// setInStructuredData writes value into a field inside a scalar that
// holds YAML or JSON, as kustomize v5.8 does for a field path that goes on
// past a scalar ("data.config\.json.server.port"): the scalar is parsed,
// the rest of the path followed inside it, and the result written back as
// JSON (sorted keys; indented when the original was) or as YAML. It
// returns an error, and changes nothing, when the path does not go through
// such a scalar; the caller then follows the path normally. The target's
// options apply inside as outside (delimiter and index: kustomize v5.8.1+;
// v5.8.0 replaced the whole inner value).
func setInStructuredData(root, value *yaml.Node, fieldPath string, create yaml.Kind, o *loaders.FieldOptions) error {
	parts := splitFieldPath(fieldPath)
	if len(parts) < 2 {
		return errNotStructured
	}
	var scalar *yaml.Node
	var rest []string
	for i := 1; i < len(parts); i++ {
		f, err := lookupPath(root, parts[:i])
		if err != nil || f == nil || f.Kind != yaml.ScalarNode {
			continue
		}
		var parsed yaml.Node
		if yaml.Unmarshal([]byte(f.Value), &parsed) == nil {
			scalar, rest = f, parts[i:]
			break
		}
	}
	if scalar == nil {
		return errNotStructured
	}
	var parsed yaml.Node
	if err := yaml.Unmarshal([]byte(scalar.Value), &parsed); err != nil {
		return err
	}
	targets, err := pathMatcher{create: create}.filter(&parsed, rest)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return errors.New("unable to find field in structured data")
	}
	for _, t := range targets {
		if err := setFieldValue(o, t, value); err != nil {
			return err
		}
	}
	s, err := serializeStructured(&parsed, scalar.Value)
	if err != nil {
		return err
	}
	scalar.Value = s
	return nil
}

// serializeStructured writes parsed data back into a scalar: as JSON when
// the original text was JSON (an object or array), else as YAML.
func serializeStructured(doc *yaml.Node, original string) (string, error) {
	trimmed := strings.TrimSpace(original)
	if trimmed != "" && (trimmed[0] == '{' || trimmed[0] == '[') {
		text, err := resyaml.EncodeNode(doc)
		if err != nil {
			return "", fmt.Errorf("failed to serialize structured data: %w", err)
		}
		var data any
		if err := yaml.Unmarshal([]byte(text), &data); err != nil {
			return "", fmt.Errorf("failed to unmarshal YAML data: %w", err)
		}
		if strings.Contains(original, "\n") && strings.Contains(original, "  ") {
			if b, err := json.MarshalIndent(data, "", "  "); err == nil {
				return string(b), nil
			}
		}
		if b, err := json.Marshal(data); err == nil {
			return string(b), nil
		}
		return "", errors.New("failed to marshal JSON data")
	}
	text, err := resyaml.EncodeNode(doc)
	if err != nil {
		return "", fmt.Errorf("failed to serialize YAML data: %w", err)
	}
	return strings.TrimSpace(text), nil
}
