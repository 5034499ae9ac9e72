package kustfile

import (
	"encoding/json"
	"fmt"
	"strings"
)

// editError words a decoding error as it read when kpipe edit decoded into
// types of its own, named as kustomize's are (ConfigMapArgs and SecretArgs
// embedding GeneratorArgs, PatchArgs), in this package: kpipe edit keeps
// its messages while it reads the loaders' schema (editShape). Only a
// *json.UnmarshalTypeError names types; other errors are returned as they
// are.
func editError(err error) error {
	e, ok := err.(*json.UnmarshalTypeError)
	if !ok {
		return err
	}
	return &typeError{e: e, text: typeErrorText(e)}
}

// typeError is a *json.UnmarshalTypeError with editError's wording.
type typeError struct {
	e    *json.UnmarshalTypeError
	text string
}

func (t *typeError) Error() string { return t.text }
func (t *typeError) Unwrap() error { return t.e }

// typeErrorText is what encoding/json wrote for e when it decoded into
// this package's former types.
func typeErrorText(e *json.UnmarshalTypeError) string {
	if e.Struct == "" && e.Field == "" {
		return "json: cannot unmarshal " + e.Value + " into Go value of type kustfile.Kustomization"
	}
	path := strings.Split(e.Field, ".")
	top, entry := path[0], len(path) > 1
	generator := top == "configMapGenerator" || top == "secretGenerator"
	// A generator entry's own fields were GeneratorArgs' (embedded), but
	// for a secret's type; a replacement's were not embedded.
	switch {
	case generator && entry && !(top == "secretGenerator" && path[1] == "type"):
		path = append(path[:1], append([]string{"GeneratorArgs"}, path[1:]...)...)
	case top == "replacements" && entry && path[1] == "Replacement":
		path = append(path[:1], path[2:]...)
	}
	args := map[string]string{"configMapGenerator": "ConfigMapArgs", "secretGenerator": "SecretArgs"}[top]
	st := e.Struct
	switch {
	case st == "" && generator && entry, st == "GeneratorArgs":
		st = args // an entry (editShape's are unnamed)
	case st == "":
		st = "Kustomization"
	case st == "PatchOptions":
		st = "PatchArgs"
	}
	typ := e.Type.String()
	switch {
	case generator && !entry:
		typ = "kustfile." + args
		if strings.HasPrefix(e.Type.String(), "[]") {
			typ = "[]" + typ
		}
	default:
		typ = strings.NewReplacer("loaders.PatchOptions", "kustfile.PatchArgs", "loaders.", "kustfile.").Replace(typ)
	}
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s.%s of type %s", e.Value, st, strings.Join(path, "."), typ)
}
