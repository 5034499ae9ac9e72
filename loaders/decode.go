package loaders

import (
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kpipe/kpipe/resource"
)

// A kustomization is decoded from its YAML tree into a Kustomization
// directly, without the JSON that kustomize goes through (the tree
// written as JSON, then read back with encoding/json, strictly). That
// trip was most of parsing a kustomization, and a build parses hundreds.
//
// decodeTree only decodes what it can tell encoding/json would decode to
// the same value: keys that are a field's JSON name exactly, and values
// of the field's own type. Anything else (a key in another case, an
// unknown field, a number where a string goes, a string that is not
// UTF-8, ...) makes it give up, and the caller takes the JSON way, which
// decides, and words the error. FuzzKustomizationDecode holds the two
// ways to the same results.

// decodeTree decodes tree, a YAML tree made JSON-compatible
// (jsonCompatible), into *k; false when it gave up (k is then partly
// filled, and to be thrown away).
func decodeTree(tree any, k *Kustomization) bool {
	m, ok := tree.(map[string]any)
	if !ok {
		return false
	}
	return decodeStruct(m, reflect.ValueOf(k).Elem())
}

// structFields maps a struct type a Kustomization holds to its fields by
// JSON name (an index path, through embedded structs); nil for a type
// whose fields decodeTree does not know how to name (two fields of one
// name, a field of a kind it does not decode). It is worked out on first
// use per type, and kept (fieldsOf): a small kustomization meets one or
// two of the dozens of types a Kustomization holds, and working them all
// out took about 60 us of a first build of a small root.
func structFields(t reflect.Type) map[string][]int {
	if f, ok := fieldsOf.Load(t); ok {
		return f.(map[string][]int)
	}
	fields := map[string][]int{}
	usable := true
	var collect func(t reflect.Type, index []int)
	collect = func(t reflect.Type, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			path := append(append([]int(nil), index...), i)
			switch {
			case tag == "-" || !f.IsExported() && !f.Anonymous:
				continue
			case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
				collect(f.Type, path)
				continue
			case f.Anonymous:
				usable = false
				continue
			}
			name := tag
			if name == "" {
				name = f.Name
			}
			if _, dup := fields[name]; dup {
				usable = false
			}
			fields[name] = path
		}
	}
	collect(t, nil)
	if !usable {
		fields = nil
	}
	f, _ := fieldsOf.LoadOrStore(t, fields)
	return f.(map[string][]int)
}

// fieldsOf holds structFields's answer for each struct type it was asked
// about: reflect.Type -> map[string][]int.
var fieldsOf sync.Map

func decodeStruct(m map[string]any, v reflect.Value) bool {
	fields := structFields(v.Type())
	if fields == nil {
		return false
	}
	for key, val := range m {
		path, ok := fields[key]
		if !ok {
			return false
		}
		if !decodeValue(val, v.FieldByIndex(path)) {
			return false
		}
	}
	return true
}

// decodeValue decodes val into v, which holds its zero value.
func decodeValue(val any, v reflect.Value) bool {
	if val == nil {
		// JSON null: encoding/json leaves a value as it is, and sets a
		// pointer, map, slice or interface to nil; both are v's zero.
		return true
	}
	switch v.Kind() {
	case reflect.String:
		s, ok := val.(string)
		if !ok || !utf8.ValidString(s) {
			return false
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			return false
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		var n int64
		switch t := val.(type) {
		case int:
			n = int64(t)
		case int64:
			n = t
		default:
			return false
		}
		if v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if !decodeValue(val, p.Elem()) {
			return false
		}
		v.Set(p)
	case reflect.Struct:
		m, ok := val.(map[string]any)
		if !ok {
			return false
		}
		return decodeStruct(m, v)
	case reflect.Slice:
		list, ok := val.([]any)
		if !ok {
			return false
		}
		s := reflect.MakeSlice(v.Type(), len(list), len(list))
		for i, e := range list {
			if !decodeValue(e, s.Index(i)) {
				return false
			}
		}
		v.Set(s)
	case reflect.Map:
		m, ok := val.(map[string]any)
		if !ok || v.Type().Key().Kind() != reflect.String {
			return false
		}
		switch v.Type().Elem().Kind() {
		case reflect.String:
			out := make(map[string]string, len(m))
			for k, e := range m {
				s, ok := e.(string)
				if !ok || !utf8.ValidString(s) || !utf8.ValidString(k) {
					return false
				}
				out[k] = s
			}
			if v.Type() != reflect.TypeOf(out) {
				return false
			}
			v.Set(reflect.ValueOf(out))
		case reflect.Interface:
			if v.Type() != reflect.TypeOf(map[string]any(nil)) {
				return false
			}
			out, ok := resource.JSONValue(m)
			if !ok {
				return false
			}
			v.Set(reflect.ValueOf(out))
		default:
			return false
		}
	default:
		return false
	}
	return true
}
