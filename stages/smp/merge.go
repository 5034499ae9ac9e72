package smp

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Merge applies a strategic-merge patch to obj as kustomize's
// patchstrategicmerge filter does, and returns the merged object. deleted
// is true when the patch deletes the whole object (`$patch: delete` at its
// top). obj and patch are not modified. schema supplies the merge keys of
// known types; nil means none are known (every list is replaced).
func Merge(obj, patch map[string]any, schema *Schema) (merged map[string]any, deleted bool, err error) {
	dest, src := toNode(obj), toNode(patch)
	w := &walker{schema: schema}
	res, err := w.walk(dest, src, nil)
	if err != nil {
		return nil, false, err
	}
	if res == nil {
		return nil, true, nil
	}
	// Like kustomize, keep the object's own root node, which the walk edited
	// in place; a `$patch: replace` at the top returns the patch instead and
	// leaves the object as it was.
	m, _ := toValue(dest).(map[string]any)
	return m, false, nil
}

// directive is a `$patch` value.
type directive int

const (
	directiveUnknown directive = iota
	directiveReplace
	directiveDelete
	directiveMerge
)

const directiveKey = "$patch"

func parseDirective(v string) directive {
	switch v {
	case "replace":
		return directiveReplace
	case "delete":
		return directiveDelete
	case "merge":
		return directiveMerge
	}
	return directiveUnknown
}

// walker merges a patch node (origin) into an object node (dest): kyaml's
// walk.Walker with the merge2 visitor, prepending new list elements as
// kustomize asks.
type walker struct {
	schema *Schema
}

// schemaFor returns the schema to use for a pair of nodes: the one given,
// or else the one of the type their apiVersion and kind name.
func (w *walker) schemaFor(s *schemaNode, nodes ...*node) *schemaNode {
	if s != nil {
		return s
	}
	for _, n := range nodes {
		if missingOrNull(n) || n.kind != mappingNode {
			continue
		}
		av, kind := metaText(n, "apiVersion"), metaText(n, "kind")
		if av == "" || kind == "" {
			continue
		}
		if t := w.schema.forType(av, kind); t != nil {
			return t
		}
	}
	return nil
}

// metaText reads a top-level field as kyaml's GetMeta does.
func metaText(n *node, name string) string {
	f := n.field(name)
	if nilOrEmpty(f) {
		return ""
	}
	return f.text
}

// walk merges origin into dest and returns the result: nil clears the
// field (or element) they came from.
func (w *walker) walk(dest, origin *node, s *schemaNode) (*node, error) {
	s = w.schemaFor(s, dest, origin)
	var kind nodeKind
	for _, n := range []*node{dest, origin} {
		if !missingOrNull(n) {
			kind = n.kind
			break
		}
	}
	if kind != 0 {
		for _, n := range []*node{dest, origin} {
			if err := checkKind(n, kind); err != nil {
				return nil, err
			}
		}
	}
	switch kind {
	case sequenceNode:
		if s.Associative() {
			return w.walkAssociativeList(dest, origin, s)
		}
		// Lists without a merge strategy are replaced.
		if origin != nil {
			return origin, nil
		}
		return dest, nil
	case scalarNode:
		if origin != nil {
			return origin, nil
		}
		return dest, nil
	}
	// Maps, and pairs of null or missing nodes.
	return w.walkMap(dest, origin, s)
}

// visitMap decides what a map becomes before its fields are merged.
func (w *walker) visitMap(dest, origin *node) (*node, error) {
	if missingOrNull(dest) {
		d, _ := smpDirective(origin)
		if d == directiveDelete {
			return nil, nil
		}
		// An explicit null in the object survives when the patch says
		// nothing about it.
		if origin == nil && dest != nil && dest.text != "" {
			return &node{kind: scalarNode, null: true, keep: true, text: dest.text}, nil
		}
		return origin, nil
	}
	if origin != nil && origin.null {
		return nil, nil
	}
	d, err := smpDirective(origin)
	if err != nil {
		return nil, err
	}
	switch d {
	case directiveDelete:
		return nil, nil
	case directiveReplace:
		return origin, nil
	}
	return dest, nil
}

// walkMap merges two maps field by field, in sorted field order.
func (w *walker) walkMap(dest, origin *node, s *schemaNode) (*node, error) {
	d, err := w.visitMap(dest, origin)
	if d == nil || err != nil {
		return nil, err
	}
	for _, key := range sortedUnion(d, origin) {
		val, err := w.walk(d.field(key), origin.field(key), s.Field(key))
		if err != nil {
			return nil, err
		}
		if err := setField(d, key, val); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// setField is kyaml's FieldSetter: it deletes the field for a missing or
// (non-persistent) null value, overwrites the existing value node in place,
// or appends the field.
func setField(n *node, name string, val *node) error {
	if val == nil || (val.null && !val.keep) {
		if err := checkKind(n, mappingNode); err != nil {
			return err
		}
		if !missingOrNull(n) {
			n.removeField(name)
		}
		return nil
	}
	if name == "" {
		// Setting a scalar to its own text: kyaml keeps the node's style, so
		// its value reads back unchanged.
		return checkKind(n, scalarNode)
	}
	if missingOrNull(n) {
		n.keys = append(n.keys, name)
		n.vals = append(n.vals, val)
		return nil
	}
	if err := checkKind(n, mappingNode); err != nil {
		return err
	}
	if f := n.field(name); f != nil {
		if f != val {
			*f = *keepQuoting(f, val)
		}
		return nil
	}
	n.keys = append(n.keys, name)
	n.vals = append(n.vals, val)
	return nil
}

// keepQuoting returns the value that replaces the scalar old. kyaml gives
// the new value old's style, so a scalar replacing a quoted string is
// printed quoted and reads back as a string. Object trees do not record
// styles; a string that only quoting (or a block style) can produce is
// taken to have been quoted.
func keepQuoting(old, val *node) *node {
	if old.kind != scalarNode || val.kind != scalarNode || val.null {
		return val
	}
	if _, isString := val.value.(string); isString {
		return val
	}
	if s, ok := old.value.(string); !ok || !needsQuotes(s) {
		return val
	}
	c := *val
	c.value = c.text
	return &c
}

// needsQuotes reports whether a string cannot be written as a plain YAML
// scalar that reads back as the same string.
func needsQuotes(s string) bool {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return true
	}
	r, ok := v.(string)
	return !ok || r != s
}

// smpDirective reads and removes a `$patch` directive from a patch node.
func smpDirective(patch *node) (directive, error) {
	if patch == nil {
		return directiveMerge, nil
	}
	switch patch.kind {
	case sequenceNode:
		return listDirective(patch)
	case mappingNode:
		v := patch.field(directiveKey)
		if v == nil {
			return directiveMerge, nil
		}
		d := parseDirective(v.text)
		if d == directiveUnknown {
			return d, fmt.Errorf("unknown patch strategy '%s'", v.text)
		}
		patch.removeField(directiveKey)
		return d, nil
	}
	s, _ := nodeString(patch)
	return directiveUnknown, fmt.Errorf("no implemented strategic merge patch strategy for '%s' ('%s')", shortTag(patch), s)
}

// listDirective reads the directive of a list patch: an element that is a
// map with the single field `$patch`.
func listDirective(patch *node) (directive, error) {
	var elem *node
	for _, e := range patch.items {
		if e.kind == mappingNode && e.field(directiveKey) != nil {
			elem = e
			break
		}
	}
	if elem == nil || len(elem.keys) > 1 {
		return directiveMerge, nil
	}
	v := elem.field(directiveKey)
	d := parseDirective(v.text)
	if d == directiveUnknown {
		return d, fmt.Errorf("unknown patch strategy '%s'", v.text)
	}
	return d, setElement(patch, nil, []string{directiveKey}, []string{v.text})
}

// walkAssociativeList merges two lists whose elements are matched by merge
// key (or by value, for lists of scalars).
func (w *walker) walkAssociativeList(dest, origin *node, s *schemaNode) (*node, error) {
	d, err := w.visitAssociativeList(dest, origin)
	if d == nil || err != nil {
		return nil, err
	}
	keys := s.MergeKeys()
	values := elementValues(keys, origin, d)
	if len(values) != 0 || len(keys) > 0 {
		return w.setAssociativeElements(values, keys, d, origin, s)
	}
	return w.setAssociativeElements(primitiveValues(origin, d), []string{""}, d, origin, s)
}

// visitAssociativeList decides what a merged list starts from.
func (w *walker) visitAssociativeList(dest, origin *node) (*node, error) {
	if missingOrNull(dest) {
		return origin, nil
	}
	if origin != nil && origin.null {
		return nil, nil
	}
	d, err := smpDirective(origin)
	if err != nil {
		return nil, err
	}
	switch d {
	case directiveDelete:
		return nil, nil
	case directiveReplace:
		return origin, nil
	}
	return dest, nil
}

// elementValues lists the merge-key values of the elements of the lists,
// patch first, each distinct tuple once.
func elementValues(keys []string, lists ...*node) [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, l := range lists {
		if l == nil || l.kind != sequenceNode {
			continue
		}
		for _, e := range l.items {
			var vals []string
			for _, k := range keys {
				f := e.field(k)
				if nilOrEmpty(f) {
					vals = append(vals, "")
				} else {
					vals = append(vals, f.text)
				}
			}
			id := tupleID(vals)
			if len(vals) == 0 || seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, vals)
		}
	}
	return out
}

// tupleID encodes a tuple of strings as a map key.
func tupleID(vals []string) string {
	var b bytes.Buffer
	for _, v := range vals {
		fmt.Fprintf(&b, "%d:%s;", len(v), v)
	}
	return b.String()
}

// primitiveValues lists the distinct values of the elements of lists of
// scalars, patch first.
func primitiveValues(lists ...*node) [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, l := range lists {
		if l == nil || l.kind != sequenceNode {
			continue
		}
		for _, e := range l.items {
			if seen[e.text] {
				continue
			}
			seen[e.text] = true
			out = append(out, []string{e.text})
		}
	}
	return out
}

// validateKeys keeps the merge keys that some element has a value for
// (all of them when none has), and the values that go with them.
func validateKeys(valuesList [][]string, values, keys []string) ([]string, []string) {
	valid := map[string]bool{}
	for _, vs := range valuesList {
		for i, v := range vs {
			if v != "" {
				valid[keys[i]] = true
			}
		}
	}
	if len(valid) == 0 {
		return keys, values
	}
	validKeys := make([]string, 0, len(keys))
	for _, k := range keys {
		if valid[k] {
			validKeys = append(validKeys, k)
		}
	}
	validValues := make([]string, 0, len(values))
	for i, v := range values {
		if v != "" || valid[keys[i]] {
			validValues = append(validValues, v)
		}
	}
	return validKeys, validValues
}

// mergeValues unifies tuples that agree wherever both have a value (for
// example a port without a protocol and the same port with one).
func mergeValues(valuesList [][]string) [][]string {
	for i, v1 := range valuesList {
		for j, v2 := range valuesList {
			if ok, v := matchValues(v1, v2); ok {
				valuesList[i] = v
				valuesList[j] = v
			}
		}
	}
	return valuesList
}

func matchValues(v1, v2 []string) (bool, []string) {
	if len(v1) != len(v2) {
		return false, nil
	}
	common := false
	var out []string
	for i := range v1 {
		switch {
		case v1[i] == v2[i]:
			common = true
			out = append(out, v1[i])
		case v1[i] != "" && v2[i] != "":
			return false, nil
		case v1[i] != "":
			out = append(out, v1[i])
		default:
			out = append(out, v2[i])
		}
	}
	return common, out
}

// setAssociativeElements merges the elements of two associative lists: the
// merged elements in the order of valuesList, then the object's other
// elements.
func (w *walker) setAssociativeElements(valuesList [][]string, keys []string, dest, origin *node, s *schemaNode) (*node, error) {
	added := &node{kind: sequenceNode}
	elemSchema := s.Elements()
	if len(keys) > 1 {
		valuesList = mergeValues(valuesList)
	}
	var validKeys, validValues []string
	for _, values := range valuesList {
		if len(values) == 0 {
			continue
		}
		validKeys, validValues = validateKeys(valuesList, values, keys)
		d, o := elementPair(validKeys, validValues, dest, origin)
		val, err := w.walk(d, o, elemSchema)
		if err != nil {
			return nil, err
		}
		exit := false
		for i, key := range validKeys {
			if emptyMap(val) {
				// The merged element is gone: drop it from the object's list.
				if err := setElement(dest, nil, validKeys, validValues); err != nil {
					return nil, err
				}
				exit = true
			} else if val.field(key) == nil && validValues[i] != "" {
				if err := setField(val, key, stringNode(validValues[i])); err != nil {
					return nil, err
				}
			}
		}
		if exit {
			continue
		}
		if err := setElement(added, val, validKeys, validValues); err != nil {
			return nil, err
		}
	}
	if len(valuesList) > 0 {
		var err error
		if dest, err = appendList(added, dest, validKeys); err != nil {
			return nil, err
		}
	}
	if missingOrNull(dest) {
		return nil, nil
	}
	return dest, nil
}

// elementPair finds the elements of the object's and the patch's lists that
// have the given merge-key values.
func elementPair(keys, values []string, lists ...*node) (*node, *node) {
	keys, values = validateKeys([][]string{values}, values, keys)
	var out [2]*node
	for i, l := range lists {
		if l != nil {
			out[i] = findElement(l, keys, values)
		}
	}
	return out[0], out[1]
}

// findElement is kyaml's ElementList: the first element whose keys all have
// the given values (for scalar lists, whose value is values[0]).
func findElement(l *node, keys, values []string) *node {
	if l.kind != sequenceNode {
		return nil
	}
	if len(keys) == 0 {
		keys = []string{""}
	}
	if len(values) == 0 {
		values = []string{""}
	}
	if keys[0] == "" {
		for _, e := range l.items {
			if e.text == values[0] {
				return e
			}
		}
		return nil
	}
	if len(keys) != len(values) {
		return nil
	}
	for _, e := range l.items {
		if e.kind != mappingNode && !e.null {
			continue
		}
		match := true
		for i := range keys {
			if e.null {
				match = false
				break
			}
			f := e.field(keys[i])
			if f == nil || f.text != values[i] {
				match = false
				break
			}
		}
		if match {
			return e
		}
	}
	return nil
}

// matchField is kyaml's FieldMatcher with a string value: a mapping's field
// (whose value, when want is not empty, must be want), or for name "", the
// scalar itself when its value is want.
func matchField(n *node, name, want string) (*node, error) {
	if missingOrNull(n) {
		return nil, nil
	}
	if name == "" {
		if err := checkKind(n, scalarNode); err != nil {
			return nil, err
		}
		if n.text == want {
			return n, nil
		}
		return nil, nil
	}
	if err := checkKind(n, mappingNode); err != nil {
		return nil, err
	}
	f := n.field(name)
	if f == nil || (want != "" && f.text != want) {
		return nil, nil
	}
	return f, nil
}

// setElement is kyaml's ElementSetter: in list l it replaces the elements
// whose keys have the given values by elem (or deletes them when elem is
// nil), appending elem when none matched. Null and empty elements of l are
// dropped on the way.
func setElement(l *node, elem *node, keys, values []string) error {
	if len(keys) == 0 {
		keys = []string{""}
	}
	if err := checkKind(l, sequenceNode); err != nil {
		return err
	}
	mappingSetter := keys[0] != "" && len(values) > 0 && values[0] != ""
	var out []*node
	found := false
	for _, e := range l.items {
		if emptyMap(e) {
			continue
		}
		if e.kind != mappingNode && mappingSetter {
			out = append(out, e)
			continue
		}
		match := true
		var val *node
		for j := range keys {
			if j < len(values) {
				var err error
				if val, err = matchField(e, keys[j], values[j]); err != nil {
					return err
				}
			}
			if val == nil {
				match = false
				break
			}
		}
		if !match {
			if len(values) > 0 {
				out = append(out, e)
			}
			continue
		}
		found = true
		if elem != nil {
			out = append(out, elem)
		}
	}
	if l != nil {
		l.items = out
	}
	if missingOrNull(elem) {
		return nil
	}
	if !found && l != nil {
		l.items = append(l.items, elem)
	}
	return nil
}

// appendList puts the elements of src into dst: each replaces the element
// of dst with the same merge-key values, or is appended.
func appendList(dst, src *node, keys []string) (*node, error) {
	if src == nil || len(keys) == 0 {
		return dst, nil
	}
	for _, e := range src.items {
		if keys[0] == "" {
			if err := setElement(dst, e, []string{""}, []string{e.text}); err != nil {
				return nil, err
			}
			continue
		}
		var v []string
		for _, k := range keys {
			f, err := matchField(e, k, "")
			if err != nil {
				return nil, err
			}
			if f == nil {
				dst.items = append(dst.items, e)
				continue
			}
			v = append(v, f.text)
		}
		if len(keys) > 1 {
			if err := setElement(dst, nil, keys, v); err != nil {
				return nil, err
			}
		}
		if err := setElement(dst, e, keys, v); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// nodeString renders a node as YAML for messages.
func nodeString(n *node) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(toValue(n)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// shortTag is the YAML tag of a scalar, as kyaml prints it.
func shortTag(n *node) string {
	if n.null {
		return "!!null"
	}
	switch n.value.(type) {
	case string:
		return "!!str"
	case bool:
		return "!!bool"
	case int, int64, uint64:
		return "!!int"
	case float64:
		return "!!float"
	}
	return "!!str"
}
