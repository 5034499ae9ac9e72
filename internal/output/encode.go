package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	yaml2 "go.yaml.in/yaml/v2"

	"github.com/kpipe/kpipe/resource"
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

// MarshalOne renders one resource. It fails as kustomize does on an object
// with a map below its top level keyed by something that is not a string
// (resource.Resource.CheckKeys).
func MarshalOne(r *resource.Resource) ([]byte, error) {
	if err := r.CheckKeys(); err != nil {
		return nil, err
	}
	b, err := MarshalValue(r.Object())
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", r.ID(), err)
	}
	return b, nil
}

// MarshalValue renders any object tree the way MarshalOne renders a
// resource's tree.
//
// The direct emitter (encodeDirect) writes the tree when every part of it
// is a shape it covers; otherwise the whole tree goes through the
// reference path (marshalReference), which gives the same bytes for
// every shape, only slower.
func MarshalValue(v any) ([]byte, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		bufPool.Put(buf)
	}()
	if encodeDirect(buf, v) {
		// One copy of the exact size, instead of the growing buffer's
		// copies and slack.
		return bytes.Clone(buf.Bytes()), nil
	}
	return marshalReference(v)
}

// bufPool holds the direct emitter's buffers between documents.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// marshalReference renders v through the JSON-to-YAML path kustomize
// prints with (go.yaml.in/yaml/v2), the emitter's oracle and fallback.
func marshalReference(v any) ([]byte, error) {
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
			out[jsonString(k)] = jv
		}
		if len(out) < len(t) {
			// Two keys read the same after the trip through JSON (invalid
			// UTF-8, NEL). encoding/json writes both, in byte order, and
			// the YAML reader keeps the last.
			for _, k := range resource.SortedKeys(t) {
				jv, err := jsonValue(t[k])
				if err != nil {
					return nil, err
				}
				out[jsonString(k)] = jv
			}
		}
		return sortedMapSlice(out), nil
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
		return jsonString(t), nil
	case float64:
		return jsonFloat(t)
	case time.Time:
		return t.Format(time.RFC3339Nano), nil
	case resource.EmptyNull:
		if t.Flow {
			return "", nil
		}
		return nil, nil
	default:
		return v, nil
	}
}

// sortedMapSlice returns m's entries in the order go.yaml.in/yaml/v2
// writes a map's string keys (its "natural" order: runs of digits compare
// as numbers, letters before other characters). yaml.v2 sorts the keys of
// a Go map, whose order is random, with a comparison that is not
// transitive for a few sets of keys ("010Z101", "0Z101", "12:30"), so for
// those kustomize's order changes from run to run. Sorting the keys in
// byte order first and then with a stable sort gives the same order for
// every other set of keys, and one fixed order for those.
func sortedMapSlice(m map[string]any) yaml2.MapSlice {
	keys := resource.SortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return yamlKeyLess(keys[i], keys[j]) })
	out := make(yaml2.MapSlice, len(keys))
	for i, k := range keys {
		out[i] = yaml2.MapItem{Key: k, Value: m[k]}
	}
	return out
}

// yamlKeyLess is go.yaml.in/yaml/v2's order of two string keys (its
// keyList.Less for strings).
func yamlKeyLess(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return asciiKeyLess(a, b)
	}
	return runeKeyLess(a, b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func asciiLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func asciiDigit(c byte) bool  { return c >= '0' && c <= '9' }

// asciiKeyLess is runeKeyLess for two ASCII strings, without converting
// them to runes: the same comparison, byte by byte.
func asciiKeyLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		al, bl := asciiLetter(a[i]), asciiLetter(b[i])
		if al && bl {
			return a[i] < b[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if a[i] == '0' || b[i] == '0' {
			for j := i - 1; j >= 0 && asciiDigit(a[j]); j-- {
				if a[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(a) && asciiDigit(a[ai]); ai++ {
			an = an*10 + int64(a[ai]-'0')
		}
		for bi = i; bi < len(b) && asciiDigit(b[bi]); bi++ {
			bn = bn*10 + int64(b[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

// runeKeyLess is yamlKeyLess for any two strings.
func runeKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
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

// jsonString returns s as it reads after encoding/json wrote it and
// go.yaml.in/yaml/v2 read it back, as kustomize's JSON-to-YAML step does:
// invalid UTF-8 becomes U+FFFD, and NEL (U+0085, which encoding/json
// leaves as it is) is a line break to the YAML reader, so the quoted
// string folds there. A string that the YAML reader rejects (kustomize
// fails on it) is kept as it is.
func jsonString(s string) string {
	s = validUTF8(s)
	if !strings.ContainsRune(s, '\u0085') {
		return s
	}
	j, err := json.Marshal(s)
	if err != nil {
		return s
	}
	var r string
	if yaml2.Unmarshal(j, &r) != nil {
		return s
	}
	return r
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
