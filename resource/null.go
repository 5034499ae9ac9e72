package resource

// EmptyNull is the value of a field written with no value at all (`x:`),
// told apart from an explicit null (`x: null`, `x: ~`), which is nil.
//
// Both print as null, and most of kustomize treats them alike, but not
// all: kustomize works on YAML nodes, where `x:` is a null whose text is
// empty. Its strategic-merge patch drops such a field from the object when
// the patch says nothing about it, and keeps an explicit null; a
// replacement into a field below `x:` fails, and one below `x: null`
// creates it. Any trip through JSON (a JSON patch, for one) makes every
// null explicit; EmptyNull marshals to JSON and YAML as null, so that
// happens here too.
//
// Code that reads object trees must treat EmptyNull as it treats nil; use
// IsNull.
type EmptyNull struct {
	// Flow is set for a bare null inside a flow collection (`{a: }`):
	// yaml.v3 cannot write an empty plain scalar there, so kustomize's trip
	// from nodes to JSON turns it into an empty string, and prints "".
	Flow bool
}

// MarshalJSON writes null, or "" for a null in a flow collection (see
// Flow): the JSON kustomize makes of the object.
func (e EmptyNull) MarshalJSON() ([]byte, error) {
	if e.Flow {
		return []byte(`""`), nil
	}
	return []byte("null"), nil
}

// MarshalYAML writes what MarshalJSON writes.
func (e EmptyNull) MarshalYAML() (any, error) {
	if e.Flow {
		return "", nil
	}
	return nil, nil
}

// IsNull reports whether v is a null of either kind (nil or EmptyNull).
func IsNull(v any) bool {
	switch v.(type) {
	case nil, EmptyNull:
		return true
	}
	return false
}

// PlainNulls replaces every EmptyNull in the tree v by nil, in place, and
// returns v: for code outside kpipe (Go plugins), which is promised only
// the types YAML decoding gives.
func PlainNulls(v any) any {
	switch t := v.(type) {
	case EmptyNull:
		return nil
	case map[string]any:
		for k, e := range t {
			t[k] = PlainNulls(e)
		}
	case []any:
		for i, e := range t {
			t[i] = PlainNulls(e)
		}
	}
	return v
}
