package fieldspec

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// Field is one place in an object that a field spec reached. It is almost
// always an entry of a map: Parent[Key]. (A path element made only of
// spaces stays on the node it is at, so a path such as "a/ " reaches the
// node a itself, which may be a sequence element or the object; Value and
// Set work for those too.)
type Field struct {
	// Parent is the map holding the field, and Key its key in Parent.
	Parent map[string]any
	Key    string
	// Path is the field's path from the object: the map keys followed, with
	// escapes and "[]" removed. Sequences add nothing to it (as in kyaml), so
	// the fields reached through the elements of a list share a path.
	Path []string

	seq  []any          // the sequence holding the node, when not a map entry
	idx  int            // its index in seq
	root map[string]any // the object, when the node is the object itself
}

// Value returns the field's current value (nil for a null value, written
// with or without text: see resource.EmptyNull).
func (f Field) Value() any {
	var v any
	switch {
	case f.Parent != nil:
		v = f.Parent[f.Key]
	case f.seq != nil:
		v = f.seq[f.idx]
	default:
		return f.root
	}
	if _, ok := v.(resource.EmptyNull); ok {
		return nil
	}
	return v
}

// Set replaces the field's value. (Where the field is the object itself,
// only a map can replace it: the object's entries become v's.)
func (f Field) Set(v any) {
	switch {
	case f.Parent != nil:
		f.Parent[f.Key] = v
	case f.seq != nil:
		f.seq[f.idx] = v
	case f.root != nil:
		if m, ok := v.(map[string]any); ok {
			clear(f.root)
			for k, e := range m {
				f.root[k] = e
			}
		}
	}
}

// createKind says what Walk creates at a missing leaf when the spec has
// create: true. kustomize's transformers choose: labels and annotations
// create maps; prefix, suffix, namespace and replicas create scalars; images,
// name references and vars create nothing (so create: true in their specs
// has no effect).
type createKind int

const (
	// CreateNone creates nothing: a missing field ends the walk there.
	CreateNone createKind = iota
	// CreateMap creates a missing leaf as an empty map.
	CreateMap
	// CreateScalar creates a missing leaf as an empty string; the caller
	// sets its value.
	CreateScalar
	// createSequence creates a missing leaf as an empty sequence.
	createSequence
)

// empty returns a fresh empty value of the kind.
func (k createKind) empty() any {
	switch k {
	case CreateMap:
		return map[string]any{}
	case CreateScalar:
		return ""
	case createSequence:
		return []any{}
	}
	return nil
}

// Walk calls fn for every field the spec's path reaches in obj, following
// kustomize's fieldspec filter (api/filters/fieldspec with kyaml lookups):
//
//   - Path elements are map keys (see PathElements for escapes); surrounding
//     spaces are ignored. A sequence met along the path is walked element by
//     element without using up a path element, so "spec/containers/image"
//     reaches the image of every container; null elements are skipped.
//   - fn gets the field at the end of the path whatever its value: a null,
//     a sequence, a map or a scalar.
//   - A missing field ends that branch silently, unless fs.CreateIfNotPresent
//     and create != CreateNone: then missing intermediate fields are created
//     as empty maps and a missing leaf as create's kind.
//   - A present but null field is replaced the same way as a missing one is
//     created, under the same condition (with CreateScalar it becomes "";
//     kyaml keeps the spelling of the null, e.g. "~", as the text). Otherwise
//     a null intermediate field ends the branch silently.
//   - An element with the suffix "[]" ("containers[]") marks a sequence: it
//     is never created, but if present and null it becomes an empty sequence
//     (whatever create says).
//   - Reaching a scalar where the path goes on is an error ("expected
//     sequence or mapping node"), as are an element that is empty or "[]",
//     and elements that kyaml reads as list selectors when they meet a map:
//     a number, "-", "*" or "[...]". These are the only errors besides fn's.
//
// Errors are wrapped as kustomize wraps them: "considering field '<path>' of
// object <id>: ...", with "visit traversal on path: [<rest>]: " for each
// sequence passed through. Walk does not check the spec's GVK; callers use
// Matches. It changes obj only by creating or replacing fields as above (and
// through fn).
func Walk(obj map[string]any, fs loaders.FieldSpec, create createKind, fn func(Field) error) error {
	var elems, keys [8]string // the path's elements and keys followed, without allocating
	w := walker{path: appendSplitPath(elems[:0], fs.Path), spec: fs, create: create, fn: fn}
	if err := w.visit(obj, Field{root: obj}, 0, keys[:0]); err != nil {
		return fmt.Errorf("considering field '%s' of object %s: %w", fs.Path, describe(obj), err)
	}
	return nil
}

// describe names obj as kustomize's resid does in messages.
func describe(obj map[string]any) string {
	return resource.ID{
		GVK:       resource.NewGVK(resource.LookupString(obj, "apiVersion"), resource.LookupString(obj, "kind")),
		Name:      resource.LookupString(obj, "metadata", "name"),
		Namespace: resource.LookupString(obj, "metadata", "namespace"),
	}.String()
}

type walker struct {
	path   []string
	spec   loaders.FieldSpec
	create createKind
	fn     func(Field) error
}

// visit handles node, found at at, with path elements i... still to
// follow. keys are the map keys followed to it: the Path of the Field
// given to fn, copied then (a walk mostly ends before it reaches a field,
// and then allocates nothing).
func (w *walker) visit(node any, at Field, i int, keys []string) error {
	if i == len(w.path) {
		if len(keys) > 0 {
			at.Path = slices.Clone(keys)
		}
		return w.fn(at)
	}
	switch n := node.(type) {
	case nil, resource.EmptyNull:
		return nil
	case map[string]any:
		return w.visitMap(n, at, i, keys)
	case []any:
		for j, e := range n {
			if err := w.visit(e, Field{seq: n, idx: j}, i, keys); err != nil {
				return fmt.Errorf("visit traversal on path: %v: %w", slices.Clone(w.path[i:]), err)
			}
		}
		return nil
	}
	return errors.New("expected sequence or mapping node")
}

// visitMap follows path element i from map m.
func (w *walker) visitMap(m map[string]any, at Field, i int, keys []string) error {
	name, isSeq := strings.CutSuffix(w.path[i], "[]")
	if name == "" {
		return errors.New("cannot set or create an empty field name")
	}
	creating := w.spec.CreateIfNotPresent && w.create != CreateNone && !isSeq
	// kind is what a missing (when creating) or null field turns into.
	kind := CreateNone
	switch {
	case !creating:
		if isSeq {
			kind = createSequence
		}
	case i == len(w.path)-1:
		kind = w.create
	default:
		kind = CreateMap
	}

	key := strings.TrimSpace(name)
	if key == "" {
		// kyaml drops blank lookup elements and stays on the node.
		return w.visit(m, at, i+1, keys)
	}
	if err := checkKey(key); err != nil {
		return fmt.Errorf("fieldName: %s: %w", name, err)
	}
	v, ok := m[key]
	switch {
	case !ok && !creating:
		return nil
	case !ok || (resource.IsNull(v) && kind != CreateNone):
		v = kind.empty()
		m[key] = v
	}
	return w.visit(v, Field{Parent: m, Key: key}, i+1, append(keys, key))
}

// checkKey rejects the elements that kyaml's lookup reads as list selectors
// rather than keys; met at a map, they are errors.
func checkKey(key string) error {
	if c := key[0]; c != '-' && c != '+' && c != '*' && c != '[' && (c < '0' || c > '9') {
		return nil // a name (most keys): no index, wildcard or selector
	}
	wrongKind := errors.New("wrong node kind: expected SequenceNode but got MappingNode")
	if n, err := strconv.Atoi(key); err == nil {
		if n < 0 {
			return fmt.Errorf("array index %d cannot be negative", n)
		}
		return wrongKind
	}
	switch {
	case key == "-":
		return wrongKind
	case key == "*":
		return errors.New("wildcard is not supported in PathGetter")
	case strings.HasPrefix(key, "[") && strings.HasSuffix(key, "]"):
		if !strings.Contains(key, "=") {
			return errors.New("list path element must contain fieldName=fieldValue for element to match")
		}
		return wrongKind
	}
	return nil
}
