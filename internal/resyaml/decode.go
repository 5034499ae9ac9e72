package resyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/resource"
	"go.yaml.in/yaml/v3"
)

// SyntaxError is returned by Decode when the input is not well-formed YAML.
// Line is 1-based and counts from the start of the whole input.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("malformed YAML: line %d: %s", e.Line, e.Msg)
	}
	return "malformed YAML: " + e.Msg
}

// IsSyntaxError reports whether err (or an error it wraps) is a SyntaxError.
func IsSyntaxError(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}

var (
	docSeparator = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n---.*\n`) })
	yamlLineRef  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })
)

// document is one YAML document of a stream and the line it starts on.
type document struct {
	text      string
	firstLine int
}

// SplitDocuments splits a YAML stream at its separator lines as kyaml's
// ByteReader does (kustomize's resources, KRM functions' streams, Flux's
// generator): a line starting with "---" ends a document, and anything but
// a comment after the dashes is an error ("invalid document separator:
// ..."). The documents are the text between separator lines (the
// newline before a separator is the separator's); "" has none.
func SplitDocuments(s string) ([]string, error) {
	spans, _, err := split(s)
	docs := make([]string, len(spans))
	for i, sp := range spans {
		docs[i] = s[sp[0]:sp[1]]
	}
	return docs, err
}

// split returns the spans of s's documents (SplitDocuments) or, at a bad
// separator, its offset and the error.
func split(s string) (spans [][2]int, bad int, err error) {
	if s == "" {
		return nil, 0, nil
	}
	prev := 0
	for _, loc := range docSeparator().FindAllStringIndex(s, -1) {
		sep := strings.TrimSpace(s[loc[0]:loc[1]])
		if rest := strings.TrimSpace(sep[3:]); rest != "" && rest[0] != '#' {
			return nil, loc[0], fmt.Errorf("invalid document separator: %s", sep)
		}
		spans = append(spans, [2]int{prev, loc[0]})
		prev = loc[1]
	}
	return append(spans, [2]int{prev, len(s)}), 0, nil
}

// splitDocuments is SplitDocuments with each document's first line, a
// bad separator a SyntaxError at its line; every document but the last
// keeps the newline that ends it.
func splitDocuments(s string) ([]document, error) {
	spans, bad, err := split(s)
	if err != nil {
		return nil, &SyntaxError{Line: strings.Count(s[:bad], "\n") + 2, Msg: err.Error()}
	}
	docs := make([]document, len(spans))
	line, at := 1, 0 // the line at offset at (counted once over s)
	for i, sp := range spans {
		line += strings.Count(s[at:sp[0]], "\n")
		at = sp[0]
		docs[i] = document{text: s[sp[0]:sp[1]], firstLine: line}
		if i < len(spans)-1 {
			docs[i].text += "\n"
		}
	}
	return docs, nil
}

// DecodeValues parses every document of a YAML stream into a value tree,
// skipping empty documents. It does not interpret the values.
func DecodeValues(data []byte) ([]any, error) {
	docs, err := splitDocuments(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err != nil {
		return nil, err
	}
	var out []any
	for _, d := range docs {
		v, err := decodeOne(d)
		if err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// decodeOne decodes the first YAML document of d. An empty document gives nil.
func decodeOne(d document) (any, error) {
	v, _, err := decodeOneKeys(d)
	return v, err
}

// decodeOneKeys is decodeOne that also returns the keys of nested maps
// that are not strings (keys.go), with their paths from the document's
// top level.
func decodeOneKeys(d document) (any, []resource.FieldKey, error) {
	if v, ok := fastDecode(d.text); ok {
		return v, nil, nil // (fastDecode leaves every key that is not a string)
	}
	return decodeNodesKeys(d)
}

// decodeNodes is decodeOne through yaml.v3's nodes: for every document
// fastDecode leaves, and its oracle.
func decodeNodes(d document) (any, error) {
	v, _, err := decodeNodesKeys(d)
	return v, err
}

// decodeNodesKeys is decodeNodes that also returns the keys of nested
// maps that are not strings.
func decodeNodesKeys(d document) (any, []resource.FieldKey, error) {
	var n yaml.Node
	err := yaml.NewDecoder(strings.NewReader(d.text)).Decode(&n)
	if err == io.EOF {
		return nil, nil, nil
	}
	var v any
	node := &n
	if err == nil {
		err = n.Decode(&v)
		if err != nil && strings.Contains(err.Error(), "excessive aliasing") {
			// yaml.v3 judges aliases by their count against the nodes
			// decoded, which refuses legitimate documents kustomize renders
			// (a 9^5 expansion, 913 KB). Judge by what they expand to
			// instead: under the cap, decode the expanded tree.
			if size := expandedSize(&n, maxExpanded, map[*yaml.Node]int64{}, map[*yaml.Node]bool{}); size <= maxExpanded {
				v = nil
				node = expandAliases(&n)
				err = node.Decode(&v)
			} else {
				err = fmt.Errorf("yaml: document contains excessive aliasing: it expands to more than %d MiB", maxExpanded>>20)
			}
		}
	}
	if err != nil {
		return nil, nil, syntaxError(err, d.firstLine-1)
	}
	v = normalize(v)
	var rec keyRecorder
	if needsFix(node) {
		v = fixNodes(node, v, false, &rec)
	}
	if _, ok := v.(resource.EmptyNull); ok {
		return nil, nil, nil
	}
	return v, rec.keys, nil
}

// maxExpanded bounds the size of a document with its aliases expanded (the
// text of its scalars and keys, and a byte per node): 64 MiB, far above
// what a real document expands to, far below what an alias bomb does.
const maxExpanded = 64 << 20

// expandedSize returns the size of n with its aliases expanded, or a value
// above limit as soon as it passes limit (or when an alias contains
// itself). memo holds the sizes of the nodes measured, so that shared
// anchors are measured once; open the nodes being measured.
func expandedSize(n *yaml.Node, limit int64, memo map[*yaml.Node]int64, open map[*yaml.Node]bool) int64 {
	if s, ok := memo[n]; ok {
		return s
	}
	if open[n] {
		return limit + 1
	}
	open[n] = true
	defer delete(open, n)
	size := int64(1 + len(n.Value))
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		size = expandedSize(n.Alias, limit, memo, open)
	}
	for _, c := range n.Content {
		size += expandedSize(c, limit, memo, open)
		if size > limit {
			break
		}
	}
	if size > limit {
		size = limit + 1
	}
	memo[n] = size
	return size
}

// expandAliases returns a copy of n in which every alias is replaced by a
// copy of the node it names, and no node has an anchor.
func expandAliases(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return expandAliases(n.Alias)
	}
	c := *n
	c.Anchor = ""
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, e := range n.Content {
			c.Content[i] = expandAliases(e)
		}
	}
	return &c
}

// syntaxError turns a yaml.v3 error into a SyntaxError whose line numbers
// count from the start of the stream rather than the document.
func syntaxError(err error, offset int) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	first := 0
	msg = yamlLineRef().ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		if first == 0 {
			first = n + offset
		}
		return "line " + strconv.Itoa(n+offset)
	})
	// Lead with the first line mentioned; keep the rest of the message.
	if first > 0 {
		msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", first))
		msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
		msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", first))
	}
	return &SyntaxError{Line: first, Msg: msg}
}

// normalize converts maps with non-string keys (which yaml.v3 produces as
// map[interface{}]interface{}) into string-keyed maps, keys written as text.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			ks, ok := resource.ScalarString(k)
			if !ok {
				ks = fmt.Sprint(k)
			}
			m[ks] = normalize(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = normalize(e)
		}
		return t
	}
	return v
}

// Decode parses a stream of Kubernetes objects the way kustomize reads a
// resource file: empty documents are skipped, a single List or ResourceList
// document is replaced by its items, every other kind ending in "List" that
// has items is expanded (its items placed after the file's other objects),
// and each object must have a kind and a metadata.name.
func Decode(data []byte) ([]*resource.Resource, error) {
	docs, err := splitDocuments(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err != nil {
		return nil, err
	}
	var queue []queued
	for _, d := range docs {
		v, keys, err := decodeOneKeys(d)
		if err != nil {
			return nil, err
		}
		if isEmptyValue(v) {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &SyntaxError{Line: d.firstLine, Msg: fmt.Sprintf("expected a Kubernetes object (a map) but found %s", resource.KindOf(v))}
		}
		kind, _ := m["kind"].(string)
		if len(docs) == 1 && (kind == "List" || kind == "ResourceList") {
			items, hasItems := m["items"]
			_, hasFC := m["functionConfig"]
			if hasItems || hasFC {
				list, _ := items.([]any)
				queue = append(queue, itemsOf(list, keys)...)
				continue
			}
		}
		queue = append(queue, queued{m, keys})
	}

	var out []*resource.Resource
	for len(queue) > 0 {
		v, keys := queue[0].v, queue[0].keys
		queue = queue[1:]
		if isEmptyValue(v) {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected a Kubernetes object (a map) but found %s", resource.KindOf(v))
		}
		if err := validateMeta(m); err != nil {
			return nil, err
		}
		kind, _ := m["kind"].(string)
		if strings.HasSuffix(kind, "List") {
			items, ok := m["items"]
			if ok {
				if resource.IsNull(items) {
					continue
				}
				list, ok := items.([]any)
				if !ok {
					return nil, fmt.Errorf("expected array in %s/items, but found %s", kind, resource.KindOf(items))
				}
				queue = append(queue, itemsOf(list, keys)...)
				continue
			}
		}
		r := resource.New(m)
		for _, k := range keys {
			r.AddNonStringKey(k)
		}
		out = append(out, r)
	}
	return out, nil
}

// queued is an object Decode has yet to check, with the keys below its top
// level that are not strings (keys.go), their paths from its own top level.
type queued struct {
	v    any
	keys []resource.FieldKey
}

// itemsOf pairs the items of a List with the keys below each item's top
// level that are not strings, taken from keys (the List's) and made
// relative to the item; an item's own top-level keys are read as text.
func itemsOf(list []any, keys []resource.FieldKey) []queued {
	out := make([]queued, len(list))
	for i, v := range list {
		out[i].v = v
		idx := strconv.Itoa(i)
		for _, k := range keys {
			if len(k.Path) > 2 && k.Path[0] == "items" && k.Path[1] == idx {
				out[i].keys = append(out[i].keys, resource.FieldKey{Path: k.Path[2:], Key: k.Key, Tag: k.Tag})
			}
		}
	}
	return out
}

func isEmptyValue(v any) bool {
	switch t := v.(type) {
	case nil, resource.EmptyNull:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// validateMeta checks what kustomize checks of every object it reads.
func validateMeta(m map[string]any) error {
	if md, ok := m["metadata"]; ok && !resource.IsNull(md) {
		if _, ok := md.(map[string]any); !ok {
			return fmt.Errorf("metadata must be a map, found %s in object %s", resource.KindOf(md), describe(m))
		}
	}
	// A number or a boolean is read as its text, as kustomize reads it
	// (`kind: 5`, `name: 123`); a map or a list is an error.
	for _, f := range []string{"apiVersion", "kind"} {
		if v, ok := m[f]; ok && !resource.IsNull(v) {
			if _, ok := resource.ScalarString(v); !ok {
				return fmt.Errorf("%s must be a string in object %s", f, describe(m))
			}
		}
	}
	kind := resource.LookupScalar(m, "kind")
	if kind == "" {
		return fmt.Errorf("missing kind in object %s", describe(m))
	}
	if strings.HasSuffix(kind, "List") {
		return nil
	}
	if resource.LookupScalar(m, "metadata", "name") == "" {
		return fmt.Errorf("missing metadata.name in object %s", describe(m))
	}
	return nil
}

// describe summarises an object for error messages.
func describe(m map[string]any) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{apiVersion: %q, kind: %q", resource.LookupScalar(m, "apiVersion"), resource.LookupScalar(m, "kind"))
	if n := resource.LookupScalar(m, "metadata", "name"); n != "" {
		fmt.Fprintf(&b, ", name: %q", n)
	}
	b.WriteString("}")
	return b.String()
}
