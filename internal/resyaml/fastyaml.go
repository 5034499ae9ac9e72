package resyaml

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kpipe/kpipe/resource"
	yaml2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
)

// fastDecode reads a document written in the block style most Kubernetes
// configuration is written in (generated CRDs above all) straight into a
// value tree, as decodeOne's yaml.v3 path would, without building yaml.v3
// nodes first. It covers block maps and lists (indentless lists under a
// key, "- key: v" items), plain and quoted scalars on one or more lines,
// literal block scalars ("|", "|-", "|+"), empty values, "[]", "{}" and
// comments. For anything else (flow
// collections, folded or indented block scalars, anchors, aliases, tags,
// merge keys, complex keys, tabs, duplicate keys, text it is unsure of,
// errors) it reports ok=false and the caller decodes the document with
// yaml.v3, so values and error messages never differ from that path.
func fastDecode(text string) (v any, ok bool) {
	return fastDecodeWith(text, plainValue, false)
}

// FastDecodeV2 reads a document as go.yaml.in/yaml/v2 decodes it into an
// interface{} (YAML 1.1's booleans, numbers and nulls: "yes" and "on" are
// true, "0777" is octal), for kustomization files and plugin configs,
// which kustomize reads that way. It covers what fastDecode covers; maps
// are map[string]any, a key yaml.v2 would not read as a string is
// refused, and an empty value is EmptyNull, which encoding/json writes as
// null. For anything else it reports ok=false, and the caller decodes with
// yaml.v2, so values and errors never differ from that path.
//
// Text need not end in a line break (an inline patch, which kustomize
// trims of white space, does not): a literal block scalar that then ends
// the text keeps no final line break whatever its chomping says, as in
// yaml.v2; FastDecodeV2 leaves that case to yaml.v2.
func FastDecodeV2(text string) (v any, ok bool) {
	open := text != "" && text[len(text)-1] != '\n'
	if open {
		text += "\n"
	}
	return fastDecodeWith(text, plainValueV2, open)
}

// fastDecodeWith is fastDecode with the given scalar rules; open says
// that the caller added text's final line break.
func fastDecodeWith(text string, scalar func(string) (any, bool), open bool) (v any, ok bool) {
	if !fastSafeText(text) {
		return nil, false
	}
	lines := strings.Split(text[:len(text)-1], "\n")
	p := &fastParser{lines: lines, scalar: scalar, open: open}
	p.skipBlank()
	if p.i < len(lines) && lines[p.i] == "---" {
		p.i++
		p.skipBlank()
	}
	if p.i >= len(lines) {
		return nil, false
	}
	ind := indentOf(lines[p.i])
	v, ok = p.block(ind)
	if !ok {
		return nil, false
	}
	if p.skipBlank(); p.i < len(lines) {
		return nil, false
	}
	return v, true
}

// fastSafeText reports whether text holds nothing fastDecode leaves to
// yaml.v3 whatever the structure: it ends in a line break and holds no
// tab, carriage return or other control character, no byte order mark,
// no Unicode line break (NEL, LS, PS), no character YAML does not allow
// and no invalid UTF-8, and no line that starts a directive or document
// marker.
func fastSafeText(text string) bool {
	if text == "" || text[len(text)-1] != '\n' {
		return false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < 0x80 {
			if c < 0x20 && c != '\n' || c == 0x7f {
				return false
			}
			if c == '\n' && i+1 < len(text) {
				switch text[i+1] {
				case '%':
					return false
				case '.', '-':
					if strings.HasPrefix(text[i+1:], "...") || strings.HasPrefix(text[i+1:], "---") {
						return false
					}
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 || r < 0xa0 || r == 0x2028 || r == 0x2029 ||
			r == 0xfeff || r >= 0xd800 && r <= 0xdfff || r == 0xfffe || r == 0xffff {
			return false
		}
		i += n
	}
	if strings.HasPrefix(text, "---") && !strings.HasPrefix(text, "---\n") {
		return false
	}
	return !strings.HasPrefix(text, "%") && !strings.HasPrefix(text, "...")
}

// fastParser walks the lines of a document; the current line is
// lines[i].
type fastParser struct {
	lines []string
	i     int
	depth int // collections open
	// scalar resolves a plain scalar: plainValue (yaml.v3's rules), or
	// plainValueV2 for FastDecodeV2.
	scalar func(string) (any, bool)
	// open says that the text had no final line break (FastDecodeV2
	// added one): a literal block scalar that runs to its end is left to
	// yaml.v2.
	open bool
}

// maxDepth bounds the nesting fastDecode reads, well below yaml.v3's
// limit (10000).
const maxDepth = 1000

func indentOf(line string) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// blankLine reports whether a line holds only spaces or a comment.
func blankLine(line string) bool {
	n := indentOf(line)
	return n == len(line) || line[n] == '#'
}

// skipBlank moves past blank and comment lines.
func (p *fastParser) skipBlank() {
	for p.i < len(p.lines) && blankLine(p.lines[p.i]) {
		p.i++
	}
}

// block reads the node that starts at column ind of the current line: a
// list or a map (a scalar alone on its line is left to yaml.v3).
func (p *fastParser) block(ind int) (any, bool) {
	rest := p.lines[p.i][ind:]
	if rest == "-" || strings.HasPrefix(rest, "- ") {
		return p.sequence(ind)
	}
	if _, _, isKey := scanKey(rest); isKey {
		return p.mapping(ind)
	}
	return nil, false
}

// sequence reads a block list whose "-" items are at column ind, the
// first on the current line.
func (p *fastParser) sequence(ind int) (any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	list := []any{}
	for {
		line := p.lines[p.i]
		// The item's content, after "-" and spaces.
		c := ind + 1
		for c < len(line) && line[c] == ' ' {
			c++
		}
		v, ok := p.value(ind, c, false)
		if !ok {
			return nil, false
		}
		list = append(list, v)
		p.skipBlank()
		if p.i >= len(p.lines) {
			return list, true
		}
		line = p.lines[p.i]
		n := indentOf(line)
		if n < ind {
			return list, true
		}
		if n > ind {
			return nil, false
		}
		if rest := line[ind:]; rest != "-" && !strings.HasPrefix(rest, "- ") {
			// A key after an indentless list: the map's next entry.
			return list, true
		}
	}
}

// mapping reads a block map whose keys are at column ind, the first on
// the current line.
func (p *fastParser) mapping(ind int) (any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	m := map[string]any{}
	for {
		line := p.lines[p.i]
		rest := line[ind:]
		keyText, after, isKey := scanKey(rest)
		if !isKey {
			return nil, false
		}
		key, ok := p.key(keyText)
		if !ok {
			return nil, false
		}
		if _, dup := m[key]; dup {
			return nil, false
		}
		v, ok := p.value(ind, ind+after, true)
		if !ok {
			return nil, false
		}
		m[key] = v
		p.skipBlank()
		if p.i >= len(p.lines) {
			return m, true
		}
		line = p.lines[p.i]
		n := indentOf(line)
		if n < ind {
			return m, true
		}
		if n > ind || line[ind] == '-' && (len(line) == ind+1 || line[ind+1] == ' ') {
			return nil, false
		}
	}
}

// scanKey finds the key of a map entry at the start of s: a quoted
// scalar, or plain text, followed by ':' and a space or the end of the
// line. It returns the key as written and the offset of the value's text
// (past the ':').
func scanKey(s string) (key string, after int, ok bool) {
	if s == "" {
		return "", 0, false
	}
	switch s[0] {
	case '"', '\'':
		end := quotedEnd(s)
		if end < 0 || end >= len(s) || s[end] != ':' || end+1 < len(s) && s[end+1] != ' ' || end > maxSimpleKey {
			return "", 0, false
		}
		return s[:end], end + 1, true
	}
	for i := 0; i < len(s) && i <= maxSimpleKey; i++ {
		switch s[i] {
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return strings.TrimRight(s[:i], " "), i + 1, true
			}
		case '#':
			if i > 0 && s[i-1] == ' ' {
				return "", 0, false
			}
		}
	}
	return "", 0, false
}

// maxSimpleKey bounds the keys fastDecode reads, in bytes from the key's
// start to its ':', below yaml.v3's limit of 1024 characters: a longer
// key is not found, and the line is left to yaml.v3.
const maxSimpleKey = 1000

// quotedEnd returns the offset just past the quoted scalar at the start of
// s, or -1 when it does not end on this line.
func quotedEnd(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q == '"':
			i++
		case s[i] == q:
			if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return -1
}

// key returns a key's string, or false for a key that does not read as a
// string or that yaml.v3 treats specially (a merge key, complex keys,
// anchors, tags...).
func (p *fastParser) key(text string) (string, bool) {
	if text == "" {
		return "", false
	}
	switch text[0] {
	case '"', '\'':
		return unquote(text)
	}
	if !plainStart(text) || text == "<<" {
		return "", false
	}
	v, ok := p.scalar(text)
	if !ok {
		return "", false
	}
	s, isString := v.(string)
	return s, isString
}

// plainStart reports whether s may start a plain scalar: no indicator
// first, except '-', '?' and ':' before a non-space.
func plainStart(s string) bool {
	switch s[0] {
	case '-', '?', ':':
		return len(s) > 1 && s[1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return false
	}
	return true
}

// value reads the value of a map entry or list item whose text starts at
// column c of the current line (past the ':' or '-'), in a collection at
// column ind; inMap tells which. It leaves the current line after the
// value.
func (p *fastParser) value(ind, c int, inMap bool) (any, bool) {
	line := p.lines[p.i]
	for c < len(line) && line[c] == ' ' {
		c++
	}
	if c == len(line) || line[c] == '#' && line[c-1] == ' ' {
		// Nothing on this line: a node on the next ones, or null.
		p.i++
		p.skipBlank()
		if p.i >= len(p.lines) {
			return resource.EmptyNull{}, true
		}
		next := p.lines[p.i]
		n := indentOf(next)
		if n > ind {
			return p.block(n)
		}
		if inMap && n == ind && (next[n:] == "-" || strings.HasPrefix(next[n:], "- ")) {
			return p.sequence(n)
		}
		return resource.EmptyNull{}, true
	}
	rest := line[c:]
	switch rest[0] {
	case '|':
		return p.literal(ind, rest[1:])
	case '"', '\'':
		end := quotedEnd(rest)
		if end < 0 {
			return p.quotedLines(ind, rest)
		}
		if !inMap {
			if _, _, isKey := scanKey(rest); isKey {
				return p.mapping(c)
			}
		}
		if !endOfLine(rest[end:]) {
			return nil, false
		}
		s, ok := unquote(rest[:end])
		if !ok {
			return nil, false
		}
		p.i++
		return s, true
	case '[', '{':
		if strings.HasPrefix(rest, "[]") && endOfLine(rest[2:]) {
			p.i++
			return []any{}, true
		}
		if strings.HasPrefix(rest, "{}") && endOfLine(rest[2:]) {
			p.i++
			return map[string]any{}, true
		}
		return nil, false
	case '-':
		if rest == "-" || strings.HasPrefix(rest, "- ") {
			if inMap {
				return nil, false
			}
			return p.sequence(c)
		}
	}
	if !plainStart(rest) {
		return nil, false
	}
	if _, _, isKey := scanKey(rest); isKey {
		if inMap {
			return nil, false
		}
		return p.mapping(c)
	}
	return p.plain(ind, rest)
}

// endOfLine reports whether s, the rest of a line after a scalar, holds
// only spaces and perhaps a comment.
func endOfLine(s string) bool {
	n := indentOf(s)
	return n == len(s) || n > 0 && s[n] == '#'
}

// plain reads a plain scalar whose first line is first (the rest of the
// current line), continued on the following lines indented past ind, as
// YAML folds it: lines joined by a space, each empty line a line break.
func (p *fastParser) plain(ind int, first string) (any, bool) {
	text, commented, ok := plainLine(first)
	if !ok {
		return nil, false
	}
	p.i++
	var b *strings.Builder
	breaks := 0
	for j := p.i; j < len(p.lines); j++ {
		line := p.lines[j]
		n := indentOf(line)
		if n == len(line) {
			breaks++
			continue
		}
		if n <= ind || commented || line[n] == '#' {
			// A comment ends the scalar too; a line indented past ind
			// after it is an error, which the collection reading on
			// finds (and leaves to yaml.v3).
			break
		}
		more, hasComment, ok := plainLine(line[n:])
		if !ok {
			return nil, false
		}
		commented = hasComment
		if b == nil {
			b = &strings.Builder{}
			b.WriteString(text)
		}
		if breaks == 0 {
			b.WriteByte(' ')
		}
		for ; breaks > 0; breaks-- {
			b.WriteByte('\n')
		}
		b.WriteString(more)
		p.i = j + 1
	}
	if b != nil {
		text = b.String()
	}
	return p.scalar(text)
}

// plainLine returns one line's part of a plain scalar: up to a comment
// (commented: there was one), without trailing spaces. It reports false
// where the line holds ": ", ends in ':' (a map entry, an error here) or
// is empty.
func plainLine(s string) (text string, commented, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' {
				return "", false, false
			}
		case '#':
			if i > 0 && s[i-1] == ' ' {
				s, commented = s[:i], true
			}
		}
	}
	s = strings.TrimRight(s, " ")
	return s, commented, s != ""
}

// plainValue is the value yaml.v3 reads from a plain scalar: a string,
// unless it starts as a number, boolean, null or timestamp may, where
// yaml.v3 itself decides.
func plainValue(s string) (any, bool) {
	switch c := s[0]; {
	case c == '~' || c == '.' || c == '+' || c == '-' || c >= '0' && c <= '9':
	case strings.IndexByte("yYnNtTfFoO", c) >= 0:
		switch s {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		case "null", "Null", "NULL":
			return nil, true
		}
		return s, true
	default:
		return s, true
	}
	if len(s) <= 18 && s[0] >= '1' && s[0] <= '9' {
		if n, err := strconv.Atoi(s); err == nil {
			return n, true
		}
	}
	var v any
	if err := (&yaml.Node{Kind: yaml.ScalarNode, Value: s}).Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// plainValueV2 is the value yaml.v2 reads from a plain scalar into an
// interface{}: a string, unless it starts as a YAML 1.1 number, boolean,
// null, timestamp or merge key may, where yaml.v2 itself decides (as the
// value of a one-entry map, so that text such as "..." is not read as a
// document marker). Text that spans lines is a string: no other type's
// form holds a line break.
func plainValueV2(s string) (any, bool) {
	switch c := s[0]; {
	case strings.IndexByte(s, '\n') >= 0:
		return s, true
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		// yaml.v2's table of words (resolve.go): only these are not strings.
		switch s {
		case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
			return true, true
		case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
			return false, true
		case "~", "null", "Null", "NULL":
			return nil, true
		}
		return s, true
	case c >= '1' && c <= '9':
		if n, err := strconv.Atoi(s); err == nil && len(s) <= 18 {
			return n, true // a decimal integer, most numbers
		}
	case c == '.' || c == '+' || c == '-':
		// After a sign, a number has a digit or a '.' next, and so has
		// "-.inf"; after a '.', a digit, unless it is ".inf" or ".nan".
		// yaml.v2 drops every '_' before it parses a number, so "+_1" is
		// 1: an '_' may stand before the digit. A relative path
		// ("../base", "./x") has none of these.
		switch s {
		case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF":
		default:
			if len(s) == 1 {
				return s, true
			}
			digit := s[1] >= '0' && s[1] <= '9' || s[1] == '_'
			if signDot := c != '.' && s[1] == '.'; !digit && !signDot {
				return s, true
			}
		}
	case s == "0":
		return 0, true
	case strings.IndexByte("0<=", c) < 0:
		return s, true
	}
	var m map[string]any
	if err := yaml2.Unmarshal([]byte("k: "+s+"\n"), &m); err != nil || len(m) != 1 {
		return nil, false
	}
	switch v := m["k"].(type) {
	case nil, bool, int, int64, uint64, float64, string:
		return v, true
	}
	return nil, false
}

// quotedLines reads a quoted scalar that first (the rest of the current
// line) opens and a later line closes, its lines indented past ind, as
// YAML folds it: spaces around line breaks dropped, lines joined by a
// space, each empty line a line break, and in double quotes an escaped
// line break ("\\" at the end of a line) joining lines with nothing.
func (p *fastParser) quotedLines(ind int, first string) (any, bool) {
	q := first[0]
	var b strings.Builder
	escaped, ok := quotedPiece(&b, first[1:], q, false)
	if !ok {
		return nil, false
	}
	breaks := 0
	for j := p.i + 1; j < len(p.lines); j++ {
		line := p.lines[j]
		n := indentOf(line)
		if n == len(line) {
			breaks++
			continue
		}
		if n <= ind {
			return nil, false
		}
		text := line[n:]
		if breaks == 0 && !escaped {
			b.WriteByte(' ')
		}
		for ; breaks > 0; breaks-- {
			b.WriteByte('\n')
		}
		end := quotedEnd(string(q) + text)
		if end < 0 {
			if escaped, ok = quotedPiece(&b, text, q, false); !ok {
				return nil, false
			}
			continue
		}
		end-- // past the closing quote, in text
		if !endOfLine(text[end:]) {
			return nil, false
		}
		if _, ok := quotedPiece(&b, text[:end-1], q, true); !ok {
			return nil, false
		}
		p.i = j + 1
		return b.String(), true
	}
	return nil, false
}

// quotedPiece appends one line's part of a quoted scalar (q is its quote)
// to b: quotes and escapes resolved, and, unless last (the part before
// the closing quote), the spaces before the line break dropped. escaped
// reports a double-quoted line ending in an escaped line break.
func quotedPiece(b *strings.Builder, s string, q byte, last bool) (escaped, ok bool) {
	if q == '\'' {
		s = strings.ReplaceAll(s, "''", "'")
		if !last {
			s = strings.TrimRight(s, " ")
		}
		b.WriteString(s)
		return false, true
	}
	spaces := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			spaces++
			continue
		}
		for ; spaces > 0; spaces-- {
			b.WriteByte(' ')
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return !last, !last
		}
		hex := 0
		switch s[i] {
		case '0':
			b.WriteByte(0)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case ' ', '"', '\'', '\\':
			b.WriteByte(s[i])
		case 'N':
			b.WriteRune(0x85)
		case '_':
			b.WriteRune(0xa0)
		case 'L':
			b.WriteRune(0x2028)
		case 'P':
			b.WriteRune(0x2029)
		case 'x':
			hex = 2
		case 'u':
			hex = 4
		case 'U':
			hex = 8
		default:
			return false, false
		}
		if hex > 0 {
			if i+1+hex > len(s) {
				return false, false
			}
			r, err := strconv.ParseUint(s[i+1:i+1+hex], 16, 32)
			if err != nil || r > utf8.MaxRune || r >= 0xd800 && r <= 0xdfff {
				return false, false
			}
			b.WriteRune(rune(r))
			i += hex
		}
	}
	if last {
		for ; spaces > 0; spaces-- {
			b.WriteByte(' ')
		}
	}
	return false, true
}

// unquote returns the string of a quoted scalar written on one line.
func unquote(q string) (string, bool) {
	body := q[1 : len(q)-1]
	if q[0] == '\'' {
		return strings.ReplaceAll(body, "''", "'"), true
	}
	if strings.IndexByte(body, '\\') < 0 {
		return body, true
	}
	var b strings.Builder
	if _, ok := quotedPiece(&b, body, '"', true); !ok {
		return "", false
	}
	return b.String(), true
}

// literal reads a literal block scalar whose header (after '|') is
// header, in a collection at column ind: its lines are those indented as
// its first non-empty line, which must be past ind.
func (p *fastParser) literal(ind int, header string) (any, bool) {
	chomp := byte(0)
	if header != "" && (header[0] == '-' || header[0] == '+') {
		chomp = header[0]
		header = header[1:]
	}
	if !endOfLine(header) {
		return nil, false
	}
	p.i++
	// The indentation: that of the first line holding more than spaces.
	indent, maxBlank := -1, 0
	for j := p.i; j < len(p.lines); j++ {
		n := indentOf(p.lines[j])
		if n < len(p.lines[j]) {
			indent = n
			break
		}
		maxBlank = max(maxBlank, n)
	}
	if indent <= ind || maxBlank > indent {
		return nil, false
	}
	var b strings.Builder
	started := false
	trailing := 0 // empty lines since the last line with content
	for ; p.i < len(p.lines); p.i++ {
		line := p.lines[p.i]
		n := indentOf(line)
		if n == len(line) && n <= indent {
			trailing++
			continue
		}
		if n < indent {
			break
		}
		if started {
			b.WriteByte('\n') // the previous line's break
		}
		for k := 0; k < trailing; k++ {
			b.WriteByte('\n')
		}
		b.WriteString(line[indent:])
		started, trailing = true, 0
	}
	if p.open && p.i == len(p.lines) && chomp != '-' {
		// The scalar ends the text, which has no final line break: its
		// last line has none either (clip), and keep's count differs.
		return nil, false
	}
	s := b.String()
	switch chomp {
	case '-':
	case '+':
		s += strings.Repeat("\n", trailing+1)
	default:
		s += "\n"
	}
	return s, true
}
