package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	yaml2 "go.yaml.in/yaml/v2"

	"github.com/kpipe/kpipe/internal/resource"
)

// Marshal renders resources as one YAML stream, documents separated by
// "---", as `kustomize build` prints them.
func Marshal(list []*resource.Resource) ([]byte, error) {
	var buf bytes.Buffer
	for i, r := range list {
		b, err := MarshalOne(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// MarshalOne renders one resource.
func MarshalOne(r *resource.Resource) ([]byte, error) {
	v, err := jsonValue(r.Object())
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", r.ID(), err)
	}
	return yaml2.Marshal(v)
}

// MarshalValue renders any object tree the way MarshalOne renders a
// resource's tree.
func MarshalValue(v any) ([]byte, error) {
	jv, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	return yaml2.Marshal(jv)
}

// jsonValue returns v as it reads after a trip through encoding/json and a
// YAML decoder: floats keep only what JSON keeps (1.0 becomes 1), times
// become RFC 3339 strings and invalid UTF-8 is replaced.
func jsonValue(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			jv, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[validUTF8(k)] = jv
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			jv, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = jv
		}
		return out, nil
	case string:
		return validUTF8(t), nil
	case float64:
		return jsonFloat(t)
	case time.Time:
		return t.Format(time.RFC3339Nano), nil
	case resource.EmptyNull:
		return nil, nil
	default:
		return v, nil
	}
}

// jsonFloat returns the value a YAML decoder reads from the JSON encoding
// of f: an int when JSON writes it without a fraction or exponent.
func jsonFloat(f float64) (any, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("unsupported number %v (JSON cannot represent it)", f)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	var v any
	if err := yaml2.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// validUTF8 replaces each invalid byte with U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
