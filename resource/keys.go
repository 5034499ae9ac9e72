package resource

import (
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// A map key that is not a string, below an object's top level, makes
// kustomize fail: a number, a boolean or a float written plain (`9000:`),
// or a key with a tag other than !!str (`!x a:`, `!!int 1:`). kustomize
// turns each object into JSON (for its output, and for a JSON patch) by
// decoding its YAML nodes into map[string]interface{}, where a nested map
// with such a key becomes a map[interface{}]interface{}, which
// encoding/json refuses. The object's own top-level keys decode into the
// string map and are read as their text. (kustomize#3446.)
//
// kpipe's object trees key every map by the key's text, so the decoder
// records where such keys were (FieldKey), and the resource carries the
// record through the build; CheckKeys, before an object is written or goes
// through JSON, fails as kustomize does when one of them is still there.
// A quoted key (`"9000":`) is a string and is not recorded. A null key is
// left alone: kustomize fails on it otherwise, and kpipe writes it as ""
// (see the README).

// ErrNonStringKey is the error of encoding/json that kustomize reports for
// an object with a nested map keyed by something that is not a string.
var ErrNonStringKey = errors.New("json: unsupported type: map[interface {}]interface {}")

// FieldKey is a map key that is not a string: the key's text and its
// resolved YAML tag (!!int, !!bool, !x...), in the map at Path from the
// object's top level (map keys, and list indexes in decimal).
type FieldKey struct {
	Path []string
	Key  string
	Tag  string
}

// NonStringKeyTag reports whether a map key whose resolved YAML tag is tag
// (a short tag: !!int, !!bool, !x...) is one kustomize does not read as a
// string in a nested map: any tag but !!str, a merge key (!!merge) or null
// (!!null, which kpipe writes as "").
func NonStringKeyTag(tag string) bool {
	switch tag {
	case "!!str", "!!merge", "!!null":
		return false
	}
	return true
}

// PlainKeyTag returns the tag key resolves to when written as a plain YAML
// scalar, as kustomize writes the keys it makes (a generator's data keys,
// the labels it adds), and whether that makes it a key that is not a
// string.
func PlainKeyTag(key string) (tag string, nonString bool) {
	t := (&yaml.Node{Kind: yaml.ScalarNode, Value: key}).ShortTag()
	if !NonStringKeyTag(t) {
		return "", false
	}
	return t, true
}

// AddNonStringKeys records the keys of the map at path (from the object's
// top level, not empty) that would not read as strings if written plain,
// as kustomize writes the keys it makes.
func (r *Resource) AddNonStringKeys(path ...string) {
	r.mustBeMutable()
	if len(path) == 0 {
		return
	}
	m, ok := mapAtPath(r.obj, path)
	if !ok {
		return
	}
	for _, k := range SortedKeys(m) {
		if t, bad := PlainKeyTag(k); bad {
			r.keys = append(r.keys, FieldKey{Path: append([]string(nil), path...), Key: k, Tag: t})
		}
	}
}

// NonStringKeys returns the recorded keys that are not strings (see
// FieldKey); the caller must not change them.
func (r *Resource) NonStringKeys() []FieldKey { return r.keys }

// AddNonStringKey records one key that is not a string.
func (r *Resource) AddNonStringKey(k FieldKey) {
	r.mustBeMutable()
	r.keys = append(r.keys, k)
}

// ClearNonStringKeys forgets the recorded keys: after a trip through JSON
// (every key of the object is then a string), or for output that never
// goes through JSON (`kpipe fn run`).
func (r *Resource) ClearNonStringKeys() {
	r.mustBeMutable()
	r.keys = nil
}

// liveKeys returns the recorded keys still in the object.
func (r *Resource) liveKeys() []FieldKey {
	var live []FieldKey
	for _, k := range r.keys {
		if m, ok := mapAtPath(r.obj, k.Path); ok {
			if _, ok := m[k.Key]; ok {
				live = append(live, k)
			}
		}
	}
	return live
}

// HasNonStringKey reports whether the object still holds a recorded key
// that is not a string: a trip through JSON fails with ErrNonStringKey.
func (r *Resource) HasNonStringKey() bool { return len(r.keys) > 0 && len(r.liveKeys()) > 0 }

// CheckKeys returns the error kustomize prints when it writes an object
// with a nested map keyed by something that is not a string: the object
// in Go syntax (the maps with such keys as map[interface {}]interface {}),
// then ErrNonStringKey. It returns nil for every other object.
func (r *Resource) CheckKeys() error {
	if len(r.keys) == 0 {
		return nil
	}
	live := r.liveKeys()
	if len(live) == 0 {
		return nil
	}
	return fmt.Errorf("%#v: %w", goValueWithKeys(r.obj, live), ErrNonStringKey)
}

// mapAtPath returns the map at path in obj: LookupMap, with list indexes
// in the path too.
func mapAtPath(obj map[string]any, path []string) (map[string]any, bool) {
	m, _, ok := walkPath(obj, path)
	return m, ok
}

// walkPath follows path in obj (map keys, and list indexes in decimal) and
// returns the map there, and whether the path went through maps only.
func walkPath(obj map[string]any, path []string) (m map[string]any, mapsOnly, ok bool) {
	var v any = obj
	mapsOnly = true
	for _, p := range path {
		switch t := v.(type) {
		case map[string]any:
			v = t[p]
		case []any:
			mapsOnly = false
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(t) {
				return nil, mapsOnly, false
			}
			v = t[i]
		default:
			return nil, mapsOnly, false
		}
	}
	m, ok = v.(map[string]any)
	return m, mapsOnly, ok
}

// goValueWithKeys returns a copy of obj as kustomize holds it when it fails
// (see CheckKeys): plain Go values, each map with a key in keys a
// map[interface{}]interface{} whose such keys are their YAML values.
func goValueWithKeys(obj map[string]any, keys []FieldKey) any {
	byPath := map[string]map[string]string{} // path -> key -> tag
	for _, k := range keys {
		p := pathString(k.Path)
		if byPath[p] == nil {
			byPath[p] = map[string]string{}
		}
		byPath[p][k.Key] = k.Tag
	}
	var conv func(v any, path []string) any
	conv = func(v any, path []string) any {
		switch t := v.(type) {
		case map[string]any:
			tags := byPath[pathString(path)]
			if tags == nil { // (the top level's keys are never recorded)
				m := make(map[string]any, len(t))
				for k, e := range t {
					m[k] = conv(e, append(path[:len(path):len(path)], k))
				}
				return m
			}
			m := make(map[any]any, len(t))
			for k, e := range t {
				var key any = k
				if tag, ok := tags[k]; ok {
					key = keyValue(k, tag)
				}
				m[key] = conv(e, append(path[:len(path):len(path)], k))
			}
			return m
		case []any:
			l := make([]any, len(t))
			for i, e := range t {
				l[i] = conv(e, append(path[:len(path):len(path)], strconv.Itoa(i)))
			}
			return l
		case EmptyNull:
			return nil
		}
		return v
	}
	return conv(obj, nil)
}

// pathString joins a path into a map key, its elements each ended by a NUL
// (a key holding a NUL, written with an escape, could make two paths meet:
// that would only change which maps the message shows as general).
func pathString(path []string) string {
	s := ""
	for _, p := range path {
		s += p + "\x00"
	}
	return s
}

// keyValue is the value yaml.v3 decodes a key with text and tag into (an
// int for !!int, true for !!bool...; the text for a local tag).
func keyValue(text, tag string) any {
	var v any
	if err := (&yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text}).Decode(&v); err != nil {
		return text
	}
	return v
}

// KeyAt reports whether the map at path in obj holds key, and whether the
// path to it went through maps only (no list index).
func KeyAt(obj map[string]any, path []string, key string) (found, mapsOnly bool) {
	m, mapsOnly, ok := walkPath(obj, path)
	if ok {
		_, found = m[key]
	}
	return found, mapsOnly
}
