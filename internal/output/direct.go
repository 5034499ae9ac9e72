package output

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/resource"
)

// bestWidth is go.yaml.in/yaml/v2's preferred line width: past this
// column its emitter folds a plain scalar at a space.
const bestWidth = 80

// maxSimpleKey is the longest key yaml.v2 writes as a simple key ("k: v");
// it writes longer ones as complex keys ("? k"), which the direct emitter
// leaves to the reference path.
const maxSimpleKey = 128

// encodeDirect writes v, a resource's object tree, as the reference path
// (encoding/json, then go.yaml.in/yaml/v2's JSON-to-YAML) writes it, but
// without a generic encoder in between. It covers the shapes that make up
// Kubernetes configuration: block maps and lists, empty ones, nulls,
// booleans, integers, and strings in every style yaml.v2 writes them in
// (scalar.go). For anything else (fractions, times, keys yaml.v2 writes as
// complex keys, text holding NEL, LS, PS or invalid UTF-8) it reports
// ok=false and writes nothing useful: the caller falls back to the
// reference path for the whole value, so the bytes never differ from it.
func encodeDirect(buf *bytes.Buffer, v any) (ok bool) {
	kp := keysPool.Get().(*[]string)
	e := directEncoder{buf: buf, keys: (*kp)[:0]}
	defer func() {
		clear(e.keys[:cap(e.keys)]) // keep no object's keys alive
		*kp = e.keys[:0]
		keysPool.Put(kp)
	}()
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
	case string:
		// A root scalar: yaml.v2 indents its continuation lines by 2.
		w := scalarWriter{buf: buf, indent: 2, whitespace: true, indention: true}
		if !w.str(t, false) {
			return false
		}
		if w.column != 0 {
			buf.WriteByte('\n')
		}
		return true
	default:
		if !e.scalar(v) {
			return false
		}
		buf.WriteByte('\n')
		return true
	}
}

// keysPool holds the key slices of encodeDirect's calls: one call per
// resource, and growing a new slice for each was a twentieth of what a
// cold build allocated.
var keysPool = sync.Pool{New: func() any { return new([]string) }}

// directEncoder holds the output buffer and a scratch slice for sorting
// keys, reused across maps.
type directEncoder struct {
	buf  *bytes.Buffer
	keys []string
}

func (e *directEncoder) indent(n int) { writeSpaces(e.buf, n) }

// spaces is indentation to copy from.
const spaces = "                                                                "

// writeSpaces writes n spaces.
func writeSpaces(buf *bytes.Buffer, n int) {
	for n > 0 {
		k := min(n, len(spaces))
		buf.WriteString(spaces[:k])
		n -= k
	}
}

// sortedKeys returns m's keys in yaml.v2's order (see sortedMapSlice),
// in e.keys past its current length: the caller truncates e.keys back
// when done, so nested maps share one slice.
func (e *directEncoder) sortedKeys(m map[string]any) []string {
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	slices.Sort(keys)
	// The reference path's sort (sortedMapSlice), so that the order is
	// the same one even for keys yamlKeyLess does not order consistently.
	// Up to 20 keys, sort.SliceStable is one insertion sort, which moves
	// nothing when no key is less than the one before it: most maps,
	// whose byte order is already yaml.v2's.
	if len(keys) > 20 || !yamlOrdered(keys) {
		sort.SliceStable(keys, func(i, j int) bool { return yamlKeyLess(keys[i], keys[j]) })
	}
	return keys
}

// yamlOrdered reports whether no key is yamlKeyLess than the one before.
func yamlOrdered(keys []string) bool {
	for i := 1; i < len(keys); i++ {
		if yamlKeyLess(keys[i], keys[i-1]) {
			return false
		}
	}
	return true
}

// mapping writes a non-empty block map whose first key starts at the
// current position, at column ind; the rest of its keys are indented by ind.
func (e *directEncoder) mapping(m map[string]any, ind int) bool {
	keys := e.sortedKeys(m)
	defer func() { e.keys = e.keys[:len(e.keys)-len(keys)] }()
	for i, k := range keys {
		if i > 0 {
			e.indent(ind)
		}
		if len(k) > maxSimpleKey || strings.ContainsAny(k, "\n\r") {
			return false
		}
		w := scalarWriter{buf: e.buf, column: ind, indent: ind + 2, whitespace: true, indention: true}
		if !w.str(k, true) {
			return false
		}
		e.buf.WriteByte(':')
		if !e.value(m[k], ind, w.column+1, true) {
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
	case string:
		// After "k:" the emitter's line is no longer indentation only;
		// after "-" it still is.
		w := scalarWriter{buf: e.buf, column: col, indent: ind + 2, indention: !inMap}
		if !w.str(t, false) {
			return false
		}
		if w.column != 0 {
			// Every style but a literal ending in a line break ends
			// mid-line.
			e.buf.WriteByte('\n')
		}
		return true
	}
	e.buf.WriteByte(' ')
	if !e.scalar(v) {
		return false
	}
	e.buf.WriteByte('\n')
	return true
}

// scalar writes a scalar other than a string; all print plain.
func (e *directEncoder) scalar(v any) bool {
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
	default:
		return false
	}
	return true
}
