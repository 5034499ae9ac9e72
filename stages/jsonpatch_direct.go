package stages

import (
	"encoding/json"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kpipe/kpipe/resource"
)

// A JSON patch applied to the value tree directly.
//
// kustomize applies a JSON patch by writing the object as JSON, handing it
// to evanphx/json-patch (v4) and reading the result back, and that trip
// was a sixth of a cold build of an overlay-heavy tree. Most patches are
// plain add, replace and remove operations on paths that exist; those are
// applied here to a copy of the tree that holds what the trip would have
// made of it (every number a float64, an empty null a null, ...), with
// evanphx's rules for each operation. Anything else (move, copy, test, an
// index evanphx reads in its own way, a value the trip would refuse or
// rewrite, any operation that would fail) is left to the trip, which
// gives kustomize's result or error. TestDirectJSONPatchMatchesEvanphx
// and FuzzDirectJSONPatch compare the two on random objects and patches.

// directOp is one operation of a directPatch: add, replace or remove of
// the value at path (its reference tokens, decoded).
type directOp struct {
	kind  string
	path  []string
	value any // add and replace: the operation's value, as JSON decodes it
}

// directPatch returns patch as operations applyDirect can apply, or nil
// when any of them is one it leaves to evanphx.
func directPatch(patch jsonpatch.Patch) []directOp {
	ops := make([]directOp, 0, len(patch))
	for _, o := range patch {
		kind := o.Kind()
		if kind != "add" && kind != "replace" && kind != "remove" {
			return nil
		}
		path, err := o.Path()
		if err != nil || !strings.HasPrefix(path, "/") {
			return nil // "" replaces the whole document; no leading slash drops a token in evanphx
		}
		op := directOp{kind: kind}
		for _, t := range strings.Split(path[1:], "/") {
			op.path = append(op.path, pointerTokens.Replace(t))
		}
		if kind != "remove" {
			// A missing or null value is JSON null in evanphx.
			if raw := o["value"]; raw != nil {
				if err := json.Unmarshal(*raw, &op.value); err != nil {
					return nil
				}
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// pointerTokens decodes a JSON pointer's reference token exactly as
// evanphx does (RFC 6901: ~1 is /, ~0 is ~).
var pointerTokens = strings.NewReplacer("~1", "/", "~0", "~")

// applyDirect applies ops to a copy of obj as the JSON trip would; false
// when the trip must do it (see above), or ops is nil. obj is not
// modified.
func applyDirect(ops []directOp, obj map[string]any) (map[string]any, bool) {
	if ops == nil {
		return nil, false
	}
	doc, ok := resource.JSONValue(obj)
	if !ok {
		return nil, false
	}
	for i := range ops {
		out, ok := applyAt(doc, ops[i].path, &ops[i])
		if !ok {
			return nil, false
		}
		doc = out
	}
	return doc.(map[string]any), true
}

// applyAt applies op at path below node and returns the node (a list that
// grew or shrank is a new slice); false where evanphx would fail, or
// would do what applyDirect leaves to it.
func applyAt(node any, path []string, op *directOp) (any, bool) {
	key := path[0]
	if len(path) > 1 {
		switch c := node.(type) {
		case map[string]any:
			out, ok := applyBelow(c[key], path[1:], op)
			if !ok {
				return nil, false
			}
			c[key] = out
		case []any:
			i, ok := listIndex(key, len(c))
			if !ok {
				return nil, false
			}
			out, ok := applyBelow(c[i], path[1:], op)
			if !ok {
				return nil, false
			}
			c[i] = out
		default:
			return nil, false
		}
		return node, true
	}
	switch c := node.(type) {
	case map[string]any:
		switch op.kind {
		case "remove":
			if _, ok := c[key]; !ok {
				return nil, false
			}
			delete(c, key)
		default:
			// evanphx's replace, like add, sets a key that is missing.
			c[key] = resource.DeepCopy(op.value)
		}
		return c, true
	case []any:
		if op.kind == "add" {
			if key == "-" {
				return append(c, resource.DeepCopy(op.value)), true
			}
			i, ok := listIndex(key, len(c)+1)
			if !ok {
				return nil, false
			}
			out := make([]any, 0, len(c)+1)
			out = append(append(append(out, c[:i]...), resource.DeepCopy(op.value)), c[i:]...)
			return out, true
		}
		i, ok := listIndex(key, len(c))
		if !ok {
			return nil, false
		}
		if op.kind == "replace" {
			c[i] = resource.DeepCopy(op.value)
			return c, true
		}
		return append(c[:i:i], c[i+1:]...), true
	}
	return nil, false
}

// applyBelow is applyAt on a step of the path: false unless next is a
// map or a list (missing, null or a scalar: evanphx fails, or for null
// panics).
func applyBelow(next any, path []string, op *directOp) (any, bool) {
	switch next.(type) {
	case map[string]any, []any:
		return applyAt(next, path, op)
	}
	return nil, false
}

// listIndex reads a list index below n written as plain decimal digits;
// false for anything else (evanphx also reads signs, leading zeros and
// negative indices, each in its own way: left to it).
func listIndex(s string, n int) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	i := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		i = i*10 + int(c-'0')
	}
	return i, i < n
}
