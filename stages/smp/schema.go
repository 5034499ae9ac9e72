package smp

//go:generate go run -C ../../tools/smpgen . -o ../../stages/smp/schema_table.go

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
)

// Schema tells the merger which lists merge by key: the part of an OpenAPI
// schema that strategic-merge patching reads, indexed by resource type.
type Schema struct {
	kinds map[[2]string]*schemaNode
	id    string
	// clusterScoped are the kinds a custom document's paths declare
	// cluster scoped.
	clusterScoped [][2]string
}

// ID identifies the schema's content: equal IDs, equal merges. Stages put
// it in their fingerprints.
func (s *Schema) ID() string {
	if s == nil {
		return "none"
	}
	return s.id
}

// schemaNode is the schema of one field, list element or object: its patch
// strategy and merge keys (for lists), and the schemas below it. A nil
// *schemaNode means "no schema", which is not the same as a schemaNode without
// strategies: where kyaml has no schema it looks for apiVersion and kind in
// the object to find one.
type schemaNode struct {
	strategy string
	keys     []string
	array    bool
	items    *schemaNode            // element schema of an array (may be nil)
	fields   map[string]*schemaNode // fields that lead to merge lists
	any      *schemaNode            // schema of fields not listed (additionalProperties)
	leaf     bool                   // a known schema with no merge lists below
	// closed says fields that are not listed have no schema; otherwise
	// (in the built-in table, which lists only the fields that lead to
	// merge lists) they have a schema without merge lists.
	closed bool
}

// leaf is the schema of everything that has a schema but no merge lists
// below it.
var leafNode = &schemaNode{leaf: true}

// Field returns the schema of a field of an object.
func (n *schemaNode) Field(name string) *schemaNode {
	if n == nil || n.leaf {
		return nil
	}
	if f, ok := n.fields[name]; ok {
		return f
	}
	if n.any != nil {
		return n.any
	}
	if n.closed {
		return nil
	}
	// A field the table does not list has a schema without merge lists.
	return leafNode
}

// Elements returns the schema of the elements of an array.
func (n *schemaNode) Elements() *schemaNode {
	if n == nil || n.leaf || !n.array {
		return nil
	}
	return n.items
}

// Associative reports whether a list with this schema merges by key (its
// patch strategy includes "merge").
func (n *schemaNode) Associative() bool {
	if n == nil {
		return false
	}
	for _, s := range strings.Split(n.strategy, ",") {
		if s == "merge" {
			return true
		}
	}
	return false
}

// MergeKeys returns the merge keys of a list: the list-map keys when the
// schema has them, else the patch merge key; none for a list of scalars.
func (n *schemaNode) MergeKeys() []string {
	if n == nil {
		return nil
	}
	return n.keys
}

// forType returns the schema of objects of the given apiVersion and kind,
// or nil when the schema does not know the type.
func (s *Schema) forType(apiVersion, kind string) *schemaNode {
	if s == nil {
		return nil
	}
	return s.kinds[[2]string{apiVersion, kind}]
}

var (
	builtinOnce   sync.Once
	builtinSchema *Schema
)

// Builtin returns the schema of the built-in Kubernetes kinds that
// kustomize v5.8.0 uses when a kustomization sets no `openapi:` field
// (Kubernetes v1.21.2, plus kustomize's own Kustomization type). It is
// parsed once and never modified.
func Builtin() *Schema {
	builtinOnce.Do(func() {
		s, err := parseTable(builtinSchemaText)
		if err != nil {
			panic(fmt.Sprintf("kpipe: internal error: built-in strategic merge schema: %v", err))
		}
		s.id = "builtin/" + builtinSchemaVersion
		builtinSchema = s
	})
	return builtinSchema
}

// BuiltinVersion names the Kubernetes schema Builtin was generated from.
func BuiltinVersion() string { return builtinSchemaVersion }

// parseTable reads a schema table in the format tools/smpgen writes. Each
// line is either
//
//	kind APIVERSION KIND @DEFINITION
//	def DEFINITION EXPR
//
// where EXPR is "-" (no schema), "L" (a schema without merge lists),
// "@NAME" (a definition), or an optional "<strategy|key1,key2>" followed by
// "[EXPR]" (an array and its elements) or "{field=EXPR,...,*=EXPR}" (an
// object, its fields that lead to merge lists, and "*" for
// additionalProperties). Blank lines are ignored.
func parseTable(text string) (*Schema, error) {
	t, err := readTable(text)
	if err != nil {
		return nil, err
	}
	defs := map[string]*schemaNode{}
	for _, b := range t.defs {
		defs[b.name] = &schemaNode{}
	}
	if err := t.bind(defs, nil); err != nil {
		return nil, err
	}
	s := &Schema{kinds: map[[2]string]*schemaNode{}, id: "table/" + digest([]byte(text))}
	for _, k := range t.kinds {
		d, ok := defs[k.def]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown definition @%s", k.line, k.def)
		}
		s.kinds[[2]string{k.apiVersion, k.kind}] = d
	}
	return s, nil
}

// table is a schema table read but not yet bound: its definitions' bodies
// as text, and its kinds.
type table struct {
	defs  []tableDef
	kinds []tableKind
}

type tableDef struct {
	name, expr string
	line       int
}

type tableKind struct {
	apiVersion, kind, def string
	line                  int
}

// readTable splits a schema table into definitions and kinds.
func readTable(text string) (*table, error) {
	t := &table{}
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		switch {
		case f[0] == "def" && len(f) == 3:
			if seen[f[1]] {
				return nil, fmt.Errorf("line %d: definition %s repeated", i+1, f[1])
			}
			seen[f[1]] = true
			t.defs = append(t.defs, tableDef{f[1], f[2], i + 1})
		case f[0] == "kind" && len(f) == 4:
			if !strings.HasPrefix(f[3], "@") {
				return nil, fmt.Errorf("line %d: unknown definition %s", i+1, f[3])
			}
			t.kinds = append(t.kinds, tableKind{f[1], f[2], f[3][1:], i + 1})
		default:
			return nil, fmt.Errorf("line %d: cannot parse %q", i+1, line)
		}
	}
	return t, nil
}

// bind parses the bodies of the table's definitions into the nodes defs
// holds for them (all of them, or those keep accepts); references in the
// bodies are resolved through defs, which may hold definitions from
// elsewhere.
func (t *table) bind(defs map[string]*schemaNode, keep func(name string) bool) error {
	for _, b := range t.defs {
		if keep != nil && !keep(b.name) {
			continue
		}
		n, err := t.parseDef(b, defs)
		if err != nil {
			return err
		}
		if d := defs[b.name]; n != d {
			*d = *n
		}
	}
	return nil
}

// parseDef parses one definition's body, resolving references through
// defs.
func (t *table) parseDef(b tableDef, defs map[string]*schemaNode) (*schemaNode, error) {
	p := &tableParser{s: b.expr, defs: defs}
	n, err := p.expr()
	if err == nil && p.pos != len(p.s) {
		err = fmt.Errorf("unexpected %q", p.s[p.pos:])
	}
	if err != nil {
		return nil, fmt.Errorf("line %d: definition %s: %w", b.line, b.name, err)
	}
	if n == nil || n == leafNode {
		return nil, fmt.Errorf("line %d: definition %s must be an array or an object", b.line, b.name)
	}
	return n, nil
}

// tableParser reads one EXPR of a schema table.
type tableParser struct {
	s    string
	pos  int
	defs map[string]*schemaNode
}

func (p *tableParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *tableParser) expect(c byte) error {
	if p.peek() != c {
		return fmt.Errorf("expected %q at offset %d of %q", c, p.pos, p.s)
	}
	p.pos++
	return nil
}

// name reads a field or definition name.
func (p *tableParser) name() string {
	start := p.pos
	for p.pos < len(p.s) && !strings.ContainsRune("<>|[]{}=,@", rune(p.s[p.pos])) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *tableParser) expr() (*schemaNode, error) {
	switch p.peek() {
	case '-':
		p.pos++
		return nil, nil
	case 'L':
		p.pos++
		return leafNode, nil
	case '@':
		p.pos++
		name := p.name()
		d, ok := p.defs[name]
		if !ok {
			return nil, fmt.Errorf("unknown definition %s", name)
		}
		return d, nil
	}
	n := &schemaNode{}
	if p.peek() == '<' {
		p.pos++
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] != '|' {
			p.pos++
		}
		n.strategy = p.s[start:p.pos]
		if err := p.expect('|'); err != nil {
			return nil, err
		}
		start = p.pos
		for p.pos < len(p.s) && p.s[p.pos] != '>' {
			p.pos++
		}
		if keys := p.s[start:p.pos]; keys != "" {
			n.keys = strings.Split(keys, ",")
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
	}
	switch p.peek() {
	case '[':
		p.pos++
		n.array = true
		items, err := p.expr()
		if err != nil {
			return nil, err
		}
		n.items = items
		return n, p.expect(']')
	case '{':
		p.pos++
		n.fields = map[string]*schemaNode{}
		for p.peek() != '}' {
			if len(n.fields) > 0 || n.any != nil {
				if err := p.expect(','); err != nil {
					return nil, err
				}
			}
			name := p.name()
			if name == "" {
				return nil, fmt.Errorf("missing field name at offset %d of %q", p.pos, p.s)
			}
			if err := p.expect('='); err != nil {
				return nil, err
			}
			f, err := p.expr()
			if err != nil {
				return nil, err
			}
			if name == "*" {
				n.any = f
			} else {
				n.fields[name] = f
			}
		}
		p.pos++
		return n, nil
	}
	return nil, fmt.Errorf("unexpected %q at offset %d of %q", p.peek(), p.pos, p.s)
}

// digest is the hex SHA-256 of data.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
