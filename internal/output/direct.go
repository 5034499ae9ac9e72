package output

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/resource"
)

// bestWidth is go.yaml.in/yaml/v2's preferred line width: past this
// column its emitter folds a plain scalar at a space.
const bestWidth = 80

// maxDirectKey is the longest key the direct emitter writes itself:
// yaml.v2 writes keys longer than 128 bytes as complex keys ("? k").
const maxDirectKey = 100

// encodeDirect writes v, a resource's object tree, as the reference path
// (encoding/json, then go.yaml.in/yaml/v2's JSON-to-YAML) writes it, but
// without a generic encoder in between. It covers the shapes that make up
// almost all of Kubernetes configuration: block maps and lists, empty
// ones, nulls, booleans, integers, and strings that print plain on one
// line. For anything else (multi-line or quoted strings, strings that
// would fold, fractions, times) it reports ok=false and writes nothing
// useful: the caller falls back to the reference path for the whole
// value, so the bytes never differ from it.
func encodeDirect(buf *bytes.Buffer, v any) (ok bool) {
	e := directEncoder{buf: buf}
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			buf.WriteString("{}\n")
			return true
		}
		return e.mapping(t, 0)
	case []any:
		if len(t) == 0 {
			buf.WriteString("[]\n")
			return true
		}
		return e.sequence(t, 0)
	default:
		if !e.scalar(v, 0) {
			return false
		}
		buf.WriteByte('\n')
		return true
	}
}

// directEncoder holds the output buffer and a scratch slice for sorting
// keys, reused across maps.
type directEncoder struct {
	buf  *bytes.Buffer
	keys []string
}

func (e *directEncoder) indent(n int) {
	for i := 0; i < n; i++ {
		e.buf.WriteByte(' ')
	}
}

// sortedKeys returns m's keys in yaml.v2's order (see sortedMapSlice).
func (e *directEncoder) sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sort.SliceStable(keys, func(i, j int) bool { return yamlKeyLess(keys[i], keys[j]) })
	return keys
}

// mapping writes a non-empty block map whose first key starts at the
// current position, at column ind; the rest of its keys are indented by ind.
func (e *directEncoder) mapping(m map[string]any, ind int) bool {
	keys := e.sortedKeys(m)
	for i, k := range keys {
		if len(k) > maxDirectKey || !plainSafe(k) {
			return false
		}
		if i > 0 {
			e.indent(ind)
		}
		e.buf.WriteString(k)
		e.buf.WriteByte(':')
		if !e.value(m[k], ind, ind+len(k)+1, true) {
			return false
		}
	}
	return true
}

// sequence writes a non-empty block list whose first "- " starts at the
// current position, at column ind.
func (e *directEncoder) sequence(l []any, ind int) bool {
	for i, v := range l {
		if i > 0 {
			e.indent(ind)
		}
		e.buf.WriteByte('-')
		if !e.value(v, ind, ind+1, false) {
			return false
		}
	}
	return true
}

// value writes the value after a key's ':' or a list item's '-', at
// column col, in a collection indented by ind, and ends the line.
func (e *directEncoder) value(v any, ind, col int, inMap bool) bool {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			e.buf.WriteString(" {}\n")
			return true
		}
		if inMap {
			e.buf.WriteByte('\n')
			e.indent(ind + 2)
		} else {
			e.buf.WriteByte(' ')
		}
		return e.mapping(t, ind+2)
	case []any:
		if len(t) == 0 {
			e.buf.WriteString(" []\n")
			return true
		}
		if inMap {
			// yaml.v2 does not indent a list under a map key.
			e.buf.WriteByte('\n')
			e.indent(ind)
			return e.sequence(t, ind)
		}
		e.buf.WriteByte(' ')
		return e.sequence(t, ind+2)
	default:
		e.buf.WriteByte(' ')
		if !e.scalar(v, col+1) {
			return false
		}
		e.buf.WriteByte('\n')
		return true
	}
}

// scalar writes a scalar starting at column col.
func (e *directEncoder) scalar(v any, col int) bool {
	switch t := v.(type) {
	case nil:
		e.buf.WriteString("null")
	case resource.EmptyNull:
		if t.Flow {
			// Reads as "" after kustomize's trip: quoted.
			e.buf.WriteString(`""`)
			return true
		}
		e.buf.WriteString("null")
	case bool:
		e.buf.WriteString(strconv.FormatBool(t))
	case int:
		e.buf.WriteString(strconv.Itoa(t))
	case int64:
		e.buf.WriteString(strconv.FormatInt(t, 10))
	case int32:
		e.buf.WriteString(strconv.FormatInt(int64(t), 10))
	case float64:
		// encoding/json writes an integral float below 1e21 as digits,
		// which the YAML reader takes for an int; keep well inside the
		// range where that int is exact.
		if t != math.Trunc(t) || math.Abs(t) >= 1e15 || (t == 0 && math.Signbit(t)) {
			return false
		}
		e.buf.WriteString(strconv.FormatInt(int64(t), 10))
	case string:
		if t == "" {
			e.buf.WriteString(`""`)
			return true
		}
		if !plainSafe(t) {
			return false
		}
		if col+len(t) > bestWidth && strings.IndexByte(t, ' ') >= 0 {
			// yaml.v2 may fold this line at a space.
			return false
		}
		e.buf.WriteString(t)
	default:
		return false
	}
	return true
}

// plainSafe reports whether yaml.v2 writes s plain, as it is, in block
// context, after the JSON trip leaves it unchanged: a conservative subset
// of YAML's plain scalars. s starts with an ASCII letter or '/', holds
// only printable ASCII without YAML indicators, has no leading or trailing
// space, no ": " or " #", and does not read as a boolean or null in
// YAML 1.1 (starting with a letter rules out numbers, timestamps and
// base-60 floats).
func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	c0 := s[0]
	if !(c0 >= 'a' && c0 <= 'z' || c0 >= 'A' && c0 <= 'Z' || c0 == '/') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '-', c == '/', c == '=', c == '+', c == '(', c == ')', c == '$', c == '^', c == ';':
		case c == ':':
			if i == len(s)-1 || s[i+1] == ' ' {
				return false
			}
		case c == ' ':
			if i == len(s)-1 || s[i+1] == ' ' || s[i+1] == '#' {
				return false
			}
		default:
			return false
		}
	}
	if len(s) <= 5 {
		switch strings.ToLower(s) {
		case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
			return false
		}
	}
	return true
}
