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
		if !e.scalar(v, 0, -1) {
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
		if len(k) > maxDirectKey {
			return false
		}
		if i > 0 {
			e.indent(ind)
		}
		width := len(k) // the key's columns, quotes included
		switch scalarStyle(k) {
		case stylePlain:
			e.buf.WriteString(k)
		case styleQuoted:
			e.buf.WriteByte('"')
			e.buf.WriteString(k)
			e.buf.WriteByte('"')
			width += 2
		default:
			return false
		}
		e.buf.WriteByte(':')
		if !e.value(m[k], ind, ind+width+1, true) {
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
		if strings.IndexByte(t, '\n') >= 0 {
			return e.literal(t, ind+2)
		}
	}
	{
		e.buf.WriteByte(' ')
		if !e.scalar(v, col+1, ind+2) {
			return false
		}
		e.buf.WriteByte('\n')
		return true
	}
}

// literal writes s, a string holding a line break, as yaml.v2 writes it
// as a block collection's value: a literal block scalar ("|", "|-") whose
// lines are indented by ind, empty lines left empty. It covers printable
// ASCII text with no line that ends in a space, that does not start with
// a space or line break and ends in at most one line break; anything else
// (other chomping, indentation indicators, double quotes) falls back.
func (e *directEncoder) literal(s string, ind int) bool {
	if s[0] == ' ' || s[0] == '\n' || s[len(s)-1] == ' ' || strings.HasSuffix(s, "\n\n") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' {
			if i > 0 && s[i-1] == ' ' {
				return false
			}
			continue
		}
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	if s[len(s)-1] == '\n' {
		e.buf.WriteString(" |\n")
		s = s[:len(s)-1]
	} else {
		e.buf.WriteString(" |-\n")
	}
	for len(s) > 0 {
		line := s
		if j := strings.IndexByte(s, '\n'); j >= 0 {
			line, s = s[:j], s[j+1:]
		} else {
			s = ""
		}
		if line != "" {
			e.indent(ind)
			e.buf.WriteString(line)
		}
		e.buf.WriteByte('\n')
	}
	return true
}

// folded writes s, a plain string with single spaces, starting at column
// col, as yaml.v2's write_plain does: past column bestWidth, a space
// followed by a non-space becomes a line break and ind spaces.
func (e *directEncoder) folded(s string, col, ind int) {
	column, spaces := col, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != ' ' {
			e.buf.WriteByte(c)
			column++
			spaces = false
			continue
		}
		if !spaces && column > bestWidth && i+1 < len(s) && s[i+1] != ' ' {
			e.buf.WriteByte('\n')
			e.indent(ind)
			column = ind
		} else {
			e.buf.WriteByte(' ')
			column++
		}
		spaces = true
	}
}

// scalar writes a scalar starting at column col; a plain string that
// folds continues at indentation ind (< 0: folding falls back).
func (e *directEncoder) scalar(v any, col, ind int) bool {
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
		switch scalarStyle(t) {
		case stylePlain:
			if col+len(t) > bestWidth && strings.IndexByte(t, ' ') >= 0 {
				// yaml.v2 may fold this line at a space.
				if ind < 0 {
					return false
				}
				e.folded(t, col, ind)
				return true
			}
			e.buf.WriteString(t)
		case styleQuoted:
			e.buf.WriteByte('"')
			e.buf.WriteString(t)
			e.buf.WriteByte('"')
		default:
			return false
		}
	default:
		return false
	}
	return true
}

const (
	styleOther = iota
	stylePlain
	styleQuoted
)

// yaml11Words are the strings yaml.v2 reads as booleans or null, which it
// writes double-quoted when they are strings.
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"null": true, "Null": true, "NULL": true,
}

// scalarStyle says how yaml.v2 writes the string s, where the direct
// emitter knows: plain, double-quoted with s as it is inside the quotes
// (a string of digits, which reads as a number, or a YAML 1.1 boolean or
// null word), or styleOther (the emitter falls back).
func scalarStyle(s string) int {
	if s == "" {
		return styleOther
	}
	if yaml11Words[s] {
		return styleQuoted
	}
	digits := true
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		return styleQuoted
	}
	if plainSafe(s) || digitWord(s) {
		return stylePlain
	}
	return styleOther
}

// dashWord reports whether s starts as a command-line flag does ("-v",
// "--port=8080"): one or two dashes, then a letter. That is no number and
// no "- " or "---" indicator, so yaml.v2 writes it plain.
func dashWord(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if len(s) == 0 {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
	}
	return len(s) > 0 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// digitWord reports whether s is a quantity such as "100m" or "64Mi" or a
// version such as "1.0.0": a digit, then only ASCII letters, digits and dots, with a letter that cannot
// make it a hexadecimal, octal or binary int or an exponent, so it reads
// as a string (and, holding no indicator, prints plain).
func digitWord(s string) bool {
	if s[0] < '0' || s[0] > '9' {
		return false
	}
	letter, dots := false, 0
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.':
			dots++
		case c == 'e', c == 'E', c == 'x', c == 'X', c == 'o', c == 'O', c == 'b', c == 'B':
			return false
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		default:
			return false
		}
	}
	// Two dots ("1.0.0") make it no float, int or timestamp either.
	return letter || dots >= 2
}

// plainSafe reports whether yaml.v2 writes s plain, as it is, in block
// context, after the JSON trip leaves it unchanged: a conservative subset
// of YAML's plain scalars. s starts with an ASCII letter, '/', "./",
// "../" or a flag's dashes (dashWord), holds
// only printable ASCII without YAML indicators, has no leading or trailing
// space, no ": " or " #", and does not read as a boolean or null in
// YAML 1.1 (starting with a letter rules out numbers, timestamps and
// base-60 floats).
func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	c0 := s[0]
	if !(c0 >= 'a' && c0 <= 'z' || c0 >= 'A' && c0 <= 'Z' || c0 == '/' ||
		strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || dashWord(s)) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '-', c == '/', c == '=', c == '+', c == '(', c == ')', c == '$', c == '^', c == ';', c == ',':
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
