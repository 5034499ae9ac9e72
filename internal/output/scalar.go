package output

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file writes string scalars as go.yaml.in/yaml/v2 (v2.4.4) writes
// them in block context: its encoder picks a style from what the string
// would read as (stringv: literal for text with "\n", plain when the plain
// text reads back as the same string, else double-quoted), its emitter
// checks the text allows that style (analyze_scalar, select_scalar_style)
// and may step to single- and then double-quoted, and its writers fold
// long lines at bestWidth and indent continuation lines. The emitter's
// state that decides where lines break (column, whitespace, indention) is
// kept in scalarWriter and updated as the emitter updates it.

// scalar styles, in the order yaml.v2 steps through them.
const (
	stylePlain = iota
	styleSingle
	styleDouble
	styleLiteral
)

// scalarInfo is what yaml.v2's analyze_scalar finds in a string (for block
// context only: kpipe never writes flow collections other than {} and []).
type scalarInfo struct {
	multiline   bool // holds a line break ("\n" or "\r")
	plainOK     bool // may be written plain
	singleOK    bool // may be single-quoted
	blockOK     bool // may be a literal block scalar
	unsupported bool // NEL, LS, PS or invalid UTF-8: left to the reference path
}

// analyzeScalar reports which styles yaml.v2's emitter allows for s.
func analyzeScalar(s string) scalarInfo {
	if s == "" {
		return scalarInfo{plainOK: true, singleOK: true}
	}
	var (
		indicators                                 bool
		lineBreaks, special                        bool
		leadSpace, leadBreak, trailSpace, trailBrk bool
		breakSpace, spaceBreak                     bool
		prevSpace, prevBreak                       bool
	)
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		indicators = true
	}
	precededByWS := true
	for i := 0; i < len(s); {
		c := s[i]
		w := 1
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 || r == 0x85 || r == 0x2028 || r == 0x2029 {
				// Invalid UTF-8 (the JSON step replaces it) and the
				// Unicode line breaks: the reference path handles them.
				return scalarInfo{unsupported: true}
			}
			w = size
			if !printableRune(r) {
				special = true
			}
		} else if !(c == '\n' || c >= 0x20 && c <= 0x7e) {
			special = true
		}
		followedByWS := i+w >= len(s) || s[i+w] == ' ' || s[i+w] == '\t'
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				indicators = true
			case '?', ':', '-':
				if followedByWS {
					indicators = true
				}
			}
		} else {
			switch c {
			case ':':
				if followedByWS {
					indicators = true
				}
			case '#':
				if precededByWS {
					indicators = true
				}
			}
		}
		switch c {
		case ' ':
			if i == 0 {
				leadSpace = true
			}
			if i+1 == len(s) {
				trailSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case '\n', '\r':
			lineBreaks = true
			if i == 0 {
				leadBreak = true
			}
			if i+1 == len(s) {
				trailBrk = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0
		i += w
	}
	info := scalarInfo{multiline: lineBreaks}
	info.plainOK = !(leadSpace || leadBreak || trailSpace || trailBrk || breakSpace ||
		spaceBreak || special || lineBreaks || indicators)
	info.singleOK = !(breakSpace || spaceBreak || special)
	info.blockOK = !(trailSpace || spaceBreak || special)
	return info
}

// printableRune is YAML's printable set as yaml.v2 tests it, for a
// character beyond ASCII: U+00A0 to U+FFFD except U+FEFF (the BOM) and the
// surrogates. yaml.v2 counts no character beyond U+FFFF as printable, so
// it writes those escaped, in double quotes.
func printableRune(r rune) bool {
	return r >= 0xa0 && r <= 0xfffd && r != 0xfeff && !(r >= 0xd800 && r <= 0xdfff)
}

// plainByte marks the ASCII bytes that never keep a string from being
// written plain when they are not its first byte: letters, digits, and
// punctuation that is an indicator only at the start (or only in flow
// context). ':', '#' and ' ' depend on their neighbours (see simplePlain).
var plainByte = func() (t [128]bool) {
	for c := '0'; c <= 'z'; c++ {
		t[c] = true
	}
	for _, c := range "!\"$%&'()*+,-./;<=>?@[\\]^_`{|}~" {
		t[c] = true
	}
	t[':'], t['#'] = false, false
	return t
}()

// simplePlain reports, for the strings most configuration is made of and
// without the full analysis, that yaml.v2 writes s plain: it starts with
// an ASCII letter and is no YAML 1.1 boolean or null word, holds only
// printable ASCII, does not end in a space, and has no ": " (or ':' at
// the end) and no " #". Other strings go through analyzeScalar.
func simplePlain(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') || s[len(s)-1] == ' ' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && plainByte[c] {
			continue
		}
		switch c {
		case ' ':
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	switch c {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O':
		return !yaml11Word(s)
	}
	return true
}

// readsAsString reports whether yaml.v2 writes s, a string, as a plain
// scalar if the text allows: when s read back as a plain scalar is the
// same string (yaml.v2's resolve gives !!str) and is no YAML 1.1 base-60
// float ("1:20"). Otherwise it double-quotes s.
func readsAsString(s string) bool {
	if s == "" {
		return false // reads as null
	}
	switch c := s[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		if isBase60(s) {
			return false
		}
		return !readsAsNumberOrTime(s)
	case c == '.':
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
			return false
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case c == '~':
		return s != "~"
	case strings.IndexByte("yYnNtTfFoO", c) >= 0:
		return !yaml11Word(s)
	}
	return true
}

// yaml11Word reports whether s is one of the words YAML 1.1 reads as a
// boolean or null.
func yaml11Word(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL":
		return true
	}
	return false
}

// readsAsNumberOrTime reports whether s, starting with a sign or a digit,
// reads as a number, infinity or timestamp to yaml.v2: "+.inf", a date
// ("2024-01-02", "2024-01-02T03:04:05Z"), an int in any base Go's
// strconv reads with base 0 once underscores are dropped ("0x1F", "0o17",
// "0755", "1_000"), an int or uint too large for int64, a float
// ("1.5", "1e3", "-.5"), or "0b" followed by a binary number, which may
// carry a sign ("0b-1").
func readsAsNumberOrTime(s string) bool {
	switch s {
	case "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return true
	}
	if isTimestamp(s) {
		return true
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if isYAMLFloat(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(rest, 2, 64); err == nil {
			return true
		}
	} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		if _, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
			return true
		}
	}
	return false
}

// timestampLayouts are the timestamp forms yaml.v2 reads from a plain
// scalar (a subset of YAML 1.1's timestamp type).
var timestampLayouts = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp reports whether yaml.v2 reads s as a timestamp: four digits
// and a dash, then one of timestampLayouts.
func isTimestamp(s string) bool {
	if len(s) < 5 || s[4] != '-' {
		return false
	}
	for i := 0; i < 4; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	for _, layout := range timestampLayouts {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// isYAMLFloat reports whether s has YAML 1.1's float form as yaml.v2 reads
// it: an optional sign, then ".digits" or "digits[.digits]", then an
// optional exponent "e[sign]digits".
func isYAMLFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// isBase60 reports whether s has YAML 1.1's base-60 float form, which
// yaml.v2 quotes: an optional sign, a digit, digits and underscores, one
// or more ":" each followed by one or two digits (the first 0-5 when
// two), then optionally "." and digits and underscores.
func isBase60(s string) bool {
	if strings.IndexByte(s, ':') < 0 {
		return false
	}
	i := 0
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return false
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_') {
		i++
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		i++
		switch {
		case i+1 < len(s) && s[i] >= '0' && s[i] <= '5' && s[i+1] >= '0' && s[i+1] <= '9':
			i += 2
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			i++
		default:
			return false
		}
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_') {
			i++
		}
	}
	return i == len(s)
}

// scalarWriter is the part of yaml.v2's emitter state that decides where
// a scalar's lines break: the output column (in characters), the indent
// of continuation lines, whether the last thing written was whitespace,
// and whether the line holds only indentation so far.
type scalarWriter struct {
	buf        *bytes.Buffer
	column     int
	indent     int
	whitespace bool
	indention  bool
}

func (w *scalarWriter) put(c byte) {
	w.buf.WriteByte(c)
	w.column++
}

func (w *scalarWriter) putBreak() {
	w.buf.WriteByte('\n')
	w.column = 0
}

// char writes the character at s[i] and returns its width in bytes.
func (w *scalarWriter) char(s string, i int) int {
	c := s[i]
	n := 1
	switch {
	case c < 0x80:
	case c&0xe0 == 0xc0:
		n = 2
	case c&0xf0 == 0xe0:
		n = 3
	default:
		n = 4
	}
	w.buf.WriteString(s[i : i+n])
	w.column++
	return n
}

// writeIndent is yaml.v2's write_indent: a line break unless the line
// holds only indentation up to the indent, then spaces to the indent.
func (w *scalarWriter) writeIndent() {
	if !w.indention || w.column > w.indent || (w.column == w.indent && !w.whitespace) {
		w.putBreak()
	}
	if w.column < w.indent {
		writeSpaces(w.buf, w.indent-w.column)
		w.column = w.indent
	}
	w.whitespace = true
	w.indention = true
}

// indicator is yaml.v2's write_indicator.
func (w *scalarWriter) indicator(s string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !w.whitespace {
		w.put(' ')
	}
	w.buf.WriteString(s)
	w.column += len(s)
	w.whitespace = isWhitespace
	w.indention = w.indention && isIndention
}

// plain is yaml.v2's write_plain_scalar for text with no line break:
// past bestWidth a single space becomes a line break and indentation
// (when allowBreaks; keys never fold).
func (w *scalarWriter) plain(s string, allowBreaks bool) {
	if !w.whitespace {
		w.put(' ')
	}
	if !allowBreaks || w.column+len(s) <= bestWidth || strings.IndexByte(s, ' ') < 0 {
		// Cannot fold: no space, or the whole text ends by bestWidth
		// (a column counts a character; len counts bytes, no fewer).
		w.buf.WriteString(s)
		w.column += utf8.RuneCountInString(s)
		if len(s) > 0 {
			w.indention = false
		}
	} else {
		spaces := false
		for i := 0; i < len(s); {
			if s[i] == ' ' {
				if !spaces && w.column > bestWidth && !(i+1 < len(s) && s[i+1] == ' ') {
					w.writeIndent()
					i++
				} else {
					w.put(' ')
					i++
				}
				spaces = true
				continue
			}
			i += w.run(s[i:], " ")
			w.indention = false
			spaces = false
		}
	}
	w.whitespace = false
	w.indention = false
}

// run writes the start of s up to the first byte of stop (s starts with
// none of them) and returns its length in bytes.
func (w *scalarWriter) run(s, stop string) int {
	n := strings.IndexAny(s, stop)
	if n < 0 {
		n = len(s)
	}
	w.buf.WriteString(s[:n])
	w.column += utf8.RuneCountInString(s[:n])
	return n
}

// single is yaml.v2's write_single_quoted_scalar for text with no line
// break (text with one goes literal or double-quoted): quotes doubled,
// folded past bestWidth at a single space that is neither first nor last.
func (w *scalarWriter) single(s string, allowBreaks bool) {
	w.indicator("'", true, false, false)
	spaces := false
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' {
			if allowBreaks && !spaces && w.column > bestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				w.writeIndent()
			} else {
				w.put(' ')
			}
			i++
			spaces = true
			continue
		}
		if c == '\'' {
			w.put('\'')
			i += w.char(s, i)
		} else {
			i += w.run(s[i:], " '")
		}
		w.indention = false
		spaces = false
	}
	w.indicator("'", false, false, false)
	w.whitespace = false
	w.indention = false
}

// double is yaml.v2's write_double_quoted_scalar: characters outside
// YAML's printable set, line breaks, '"' and '\' escaped (every character,
// when the text starts with a byte order mark: yaml.v2 tests the BOM at the
// start of the text for each character), folded past bestWidth at a space
// that is neither first nor last, a space after the fold escaped.
func (w *scalarWriter) double(s string, allowBreaks bool) {
	w.indicator(`"`, true, false, false)
	bom := strings.HasPrefix(s, "\ufeff")
	spaces := false
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		n := 1
		if c < 0x80 {
			r = rune(c)
		} else {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		escape := bom || r == '"' || r == '\\' || r == '\n' || r == '\r'
		if !escape {
			if r < 0x80 {
				escape = r < 0x20 || r > 0x7e
			} else {
				escape = !printableRune(r) || r == 0x85 || r == 0x2028 || r == 0x2029
			}
		}
		switch {
		case escape:
			w.escape(r)
			i += n
			spaces = false
		case c == ' ':
			if allowBreaks && !spaces && w.column > bestWidth && i > 0 && i < len(s)-1 {
				w.writeIndent()
				if s[i+1] == ' ' {
					w.put('\\')
				}
			} else {
				w.put(' ')
			}
			i++
			spaces = true
		default:
			w.buf.WriteString(s[i : i+n])
			w.column++
			i += n
			spaces = false
		}
	}
	w.indicator(`"`, false, false, false)
	w.whitespace = false
	w.indention = false
}

// escape writes r as yaml.v2 escapes it in a double-quoted scalar.
func (w *scalarWriter) escape(r rune) {
	w.put('\\')
	var c byte
	switch r {
	case 0x00:
		c = '0'
	case 0x07:
		c = 'a'
	case 0x08:
		c = 'b'
	case 0x09:
		c = 't'
	case 0x0a:
		c = 'n'
	case 0x0b:
		c = 'v'
	case 0x0c:
		c = 'f'
	case 0x0d:
		c = 'r'
	case 0x1b:
		c = 'e'
	case '"':
		c = '"'
	case '\\':
		c = '\\'
	case 0x85:
		c = 'N'
	case 0xa0:
		c = '_'
	case 0x2028:
		c = 'L'
	case 0x2029:
		c = 'P'
	}
	if c != 0 {
		w.put(c)
		return
	}
	digits := 8
	switch {
	case r <= 0xff:
		w.put('x')
		digits = 2
	case r <= 0xffff:
		w.put('u')
		digits = 4
	default:
		w.put('U')
	}
	for k := (digits - 1) * 4; k >= 0; k -= 4 {
		w.put("0123456789ABCDEF"[(r>>uint(k))&0xf])
	}
}

// literal is yaml.v2's write_literal_scalar: "|", an indentation
// indicator when the text starts with a space or line break, a chomping
// indicator ("-" without a final line break, "+" with more than one),
// then each line at the indent, empty lines left empty.
func (w *scalarWriter) literal(s string) {
	w.indicator("|", true, false, false)
	if s[0] == ' ' || s[0] == '\n' {
		w.indicator("2", false, false, false)
	}
	switch {
	case s[len(s)-1] != '\n':
		w.indicator("-", false, false, false)
	case len(s) == 1 || s[len(s)-2] == '\n':
		w.indicator("+", false, false, false)
	}
	w.putBreak()
	w.indention = true
	w.whitespace = true
	for len(s) > 0 {
		line := s
		j := strings.IndexByte(s, '\n')
		if j >= 0 {
			line, s = s[:j], s[j+1:]
		} else {
			s = ""
		}
		if line != "" {
			w.writeIndent()
			w.buf.WriteString(line)
			w.column += utf8.RuneCountInString(line)
			w.indention = false
		}
		if j >= 0 {
			w.putBreak()
			w.indention = true
		}
	}
}

// stringStyle is the style yaml.v2 writes s in: in a block collection's
// value (key false) or as a simple key (key true; such a key never holds a
// line break: the caller checks). ok is false for text the reference path
// handles (see scalarInfo.unsupported).
func stringStyle(s string, key bool) (style int, ok bool) {
	if simplePlain(s) {
		return stylePlain, true
	}
	info := analyzeScalar(s)
	if info.unsupported {
		return 0, false
	}
	if strings.IndexByte(s, '\n') >= 0 {
		style = styleLiteral
	} else if readsAsString(s) {
		style = stylePlain
	} else {
		style = styleDouble
	}
	if key && info.multiline {
		style = styleDouble
	}
	if style == stylePlain && !info.plainOK {
		style = styleSingle
	}
	if style == styleSingle && !info.singleOK {
		style = styleDouble
	}
	if style == styleLiteral && (!info.blockOK || key) {
		style = styleDouble
	}
	return style, true
}

// str writes s in the style yaml.v2 picks (see stringStyle).
func (w *scalarWriter) str(s string, key bool) bool {
	style, ok := stringStyle(s, key)
	if !ok {
		return false
	}
	switch style {
	case stylePlain:
		w.plain(s, !key)
	case styleSingle:
		w.single(s, !key)
	case styleDouble:
		w.double(s, !key)
	case styleLiteral:
		w.literal(s)
	}
	return true
}
