// Package manifest decodes and post-processes the Kubernetes objects Argo
// CD's repo-server generates, on plain JSON trees (map[string]any, as
// Kubernetes' unstructured objects hold them: integers as int64, other
// numbers as float64): splitting YAML streams as Kubernetes' YAML reader
// does, Lists flattened, the tracking annotation or label, the
// controller's namespace normalization and duplicate resolution, and the
// output format (compact JSON with sorted keys, as the repo-server
// returns each object).
//
// It imports only the standard library and kpipe's loaders (YAML to JSON
// with YAML 1.1 scalars, as sigs.k8s.io/yaml converts).
package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kpipe/kpipe/loaders"
)

// Object is one Kubernetes object as a JSON tree.
type Object = map[string]any

// SplitDocuments splits a YAML stream into documents as Kubernetes'
// YAMLReader does: a line starting with "---" ends a document (only
// spaces or a comment may follow it on the line, else it is an error),
// empty documents are dropped.
func SplitDocuments(data []byte) ([][]byte, error) {
	r := bufio.NewReader(bytes.NewReader(data))
	var docs [][]byte
	var buf bytes.Buffer
	for {
		line, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return docs, err
		}
		if bytes.HasPrefix(line, []byte("---")) {
			rest := strings.TrimSpace(string(line[3:]))
			if rest != "" && rest[0] != '#' {
				return docs, fmt.Errorf("invalid Yaml document separator: %s", rest)
			}
			if buf.Len() != 0 {
				docs = append(docs, append([]byte(nil), buf.Bytes()...))
				buf.Reset()
			}
			if err == io.EOF {
				return docs, nil
			}
			continue
		}
		buf.Write(line)
		if err == io.EOF {
			if buf.Len() != 0 {
				docs = append(docs, append([]byte(nil), buf.Bytes()...))
			}
			return docs, nil
		}
	}
}

// YAMLToJSON converts one YAML document to JSON as sigs.k8s.io/yaml does
// (YAML 1.1; an empty or comment-only document is "null"), with its
// error wording ("error converting YAML to JSON: ...").
func YAMLToJSON(doc []byte) ([]byte, error) {
	j, err := loaders.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	return j, nil
}

// DecodeJSON decodes one JSON value into a tree whose integers are int64
// and other numbers float64, as Kubernetes' unstructured decoding does.
func DecodeJSON(j []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("invalid character after top-level value")
	}
	return fixNumbers(v), nil
}

func fixNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = fixNumbers(e)
		}
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

// ToObject decodes a document's JSON as an unstructured object: null
// gives nil, a value that is not an object or has no kind is an error
// worded as Kubernetes words it.
func ToObject(j []byte) (Object, error) {
	v, err := DecodeJSON(j)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("json: cannot unmarshal %s into Go value of type map[string]interface {}", jsonKind(v))
	}
	if k, _ := m["kind"].(string); k == "" {
		return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", bytes.TrimSpace(j))
	}
	return m, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return "number"
}

// SplitYAML decodes a YAML (or JSON) stream of objects as gitops-engine's
// kube.SplitYAML does for kustomize's and helm's output: documents in
// order, empty and null ones skipped.
func SplitYAML(data []byte) ([]Object, error) {
	docs, err := SplitDocuments(data)
	if err != nil {
		return nil, err
	}
	var out []Object
	for _, d := range docs {
		j, err := YAMLToJSON(d)
		if err != nil {
			return out, err
		}
		o, err := ToObject(j)
		if err != nil {
			return out, err
		}
		if o != nil {
			out = append(out, o)
		}
	}
	return out, nil
}

// Marshal writes obj as the repo-server returns it (json.Marshal of the
// unstructured object): compact JSON, keys sorted, <, > and & escaped.
func Marshal(obj any) ([]byte, error) { return json.Marshal(obj) }

// DeepCopy copies an object and everything in it (maps and lists; a nil
// map stays nil).
func DeepCopy(o Object) Object {
	if o == nil {
		return nil
	}
	return CopyValue(o).(Object)
}

// CopyValue copies a JSON tree value: maps and lists copied all the way
// down, anything else shared (it is immutable).
func CopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if t == nil {
			return map[string]any(nil)
		}
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = CopyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = CopyValue(e)
		}
		return l
	}
	return v
}
