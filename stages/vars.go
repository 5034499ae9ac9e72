package stages

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// gvk returns the group, version and kind of the object the var reads:
// the apiVersion's when it has one or two parts, else the group and version
// given.
func varGVK(r loaders.VarTarget) resource.GVK {
	g := resource.GVK{Group: r.Group, Version: r.Version, Kind: r.Kind}
	if r.APIVersion == "" {
		return g
	}
	switch parts := strings.Split(r.APIVersion, "/"); len(parts) {
	case 1:
		g.Version = parts[0]
	case 2:
		g.Group, g.Version = parts[0], parts[1]
	}
	return g
}

// withGVK returns v with its group and version taken from its apiVersion.
func withGVK(v loaders.Var) loaders.Var {
	g := varGVK(v.ObjRef)
	v.ObjRef.Group, v.ObjRef.Version = g.Group, g.Version
	return v
}

// defaulted returns v as kustomize keeps it once declared: group and
// version set from the apiVersion, and the field path defaulted to
// metadata.name.
func defaulted(v loaders.Var) loaders.Var {
	v = withGVK(v)
	if v.FieldRef.FieldPath == "" {
		v.FieldRef.FieldPath = defaultReplacementFieldPath
	}
	return v
}

// FormatVars formats a list of vars as kustomize's messages do.
func FormatVars(vars []loaders.Var) string {
	parts := make([]string, len(vars))
	for i, v := range vars {
		parts[i] = v.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// VarSet is the set of vars a kustomization and its bases declare. The
// zero value is an empty set; add vars with Merge, MergeAll and MergeSet,
// which refuse a second var of the same name.
type VarSet struct {
	// ByName holds the vars (defaulted) by name. It is exported so that a
	// set can be stored (package engine encodes it); change it only through
	// the methods.
	ByName map[string]loaders.Var
}

// Merge adds v (defaulted), failing when a var of that name is already in
// the set.
func (s *VarSet) Merge(v loaders.Var) error {
	if _, ok := s.ByName[v.Name]; ok {
		return fmt.Errorf("var '%s' already encountered", v.Name)
	}
	if s.ByName == nil {
		s.ByName = map[string]loaders.Var{}
	}
	s.ByName[v.Name] = defaulted(v)
	return nil
}

// MergeAll adds vars in order, failing at the first name already in the
// set.
func (s *VarSet) MergeAll(vars []loaders.Var) error {
	for _, v := range vars {
		if err := s.Merge(v); err != nil {
			return err
		}
	}
	return nil
}

// MergeSet adds every var of o, in name order, failing at the first name
// already in s.
func (s *VarSet) MergeSet(o *VarSet) error {
	return s.MergeAll(o.Sorted())
}

// Len returns the number of vars.
func (s *VarSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.ByName)
}

// Sorted returns the vars in name order.
func (s *VarSet) Sorted() []loaders.Var {
	if s == nil {
		return nil
	}
	out := make([]loaders.Var, 0, len(s.ByName))
	for _, v := range s.ByName {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NewVarTargets returns the stage that marks, for each var a
// kustomization declares, the object the var reads: the one object whose
// current or earlier ID has the var's kind, group, version and name (and
// namespace, when the var gives one or the kind is cluster-scoped). It
// fails when more than one object matches; a var that matches nothing is
// left for a later error (when vars are resolved).
func NewVarTargets(vars []loaders.Var) Stage {
	return &varTargetsStage{vars: append([]loaders.Var(nil), vars...)}
}

type varTargetsStage struct {
	vars []loaders.Var
}

func (s *varTargetsStage) Kind() string        { return "VarTargets" }
func (s *varTargetsStage) Cheap()              {}
func (s *varTargetsStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.vars) }

// Run records each var's name on the object it reads.
func (s *varTargetsStage) Run(_ context.Context, rs *resource.List) error {
	for _, v := range s.vars {
		v = withGVK(v)
		target := resource.ID{GVK: varGVK(v.ObjRef), Name: v.ObjRef.Name, Namespace: v.ObjRef.Namespace}
		exact := target.Namespace != "" || target.IsClusterScoped()
		var matched []int
		for i, r := range rs.All() {
			if len(r.Object()) == 0 {
				continue
			}
			if r.AnyID(func(id resource.ID) bool { return (exact && id.Equals(target)) || (!exact && id.SameGVKN(target)) }) {
				matched = append(matched, i)
			}
		}
		if len(matched) > 1 {
			return fmt.Errorf("found %d resId matches for var %s (unable to disambiguate)", len(matched), v)
		}
		if len(matched) == 1 {
			rs.Edit(matched[0]).AddRefVarName(v.Name)
		}
	}
	return nil
}

// VarResolverConfig configures the var resolver: the vars of a build (as
// a VarSet keeps them) and the fields in which $(NAME) is replaced.
type VarResolverConfig struct {
	Vars       []loaders.Var       `json:"vars,omitempty"`
	FieldSpecs []loaders.FieldSpec `json:"fieldSpecs,omitempty"`
}

// NewVarResolver returns the stage that resolves vars at the root of a
// build, after names are final: each var takes the value of its field in
// the object NewVarTargets marked, and every $(NAME) in the fields the
// field specs name is replaced by it.
//
// The replacement follows kustomize: in a string that is exactly $(NAME)
// the value keeps its type (a number stays a number); elsewhere it is
// written as text. $$ stands for $, so $$(NAME) gives $(NAME). A $(NAME)
// with no var of that name, or whose var's value is a map or a list, is
// left as it is. In the fields reached, a string is expanded, a map has its
// string values expanded, and a list must hold only strings.
func NewVarResolver(cfg VarResolverConfig) Stage {
	cfg.Vars = append([]loaders.Var(nil), cfg.Vars...)
	cfg.FieldSpecs = append([]loaders.FieldSpec(nil), cfg.FieldSpecs...)
	return &varResolverStage{cfg: cfg}
}

type varResolverStage struct {
	cfg VarResolverConfig
}

func (s *varResolverStage) Kind() string        { return "RefVarTransformer" }
func (s *varResolverStage) Cheap()              {}
func (s *varResolverStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.cfg) }

// Run resolves the vars and replaces their references.
func (s *varResolverStage) Run(_ context.Context, rs *resource.List) error {
	if len(s.cfg.Vars) == 0 {
		return nil
	}
	values := make(map[string]any, len(s.cfg.Vars))
	for _, v := range s.cfg.Vars {
		val, err := varValue(rs, v)
		if err != nil {
			return err
		}
		values[v.Name] = val
	}
	mapping := func(name string) any {
		switch v := values[name].(type) {
		case string, int, int64, float64, bool:
			return v
		}
		return "$(" + name + ")"
	}
	// The walks' functions, made once for all of them.
	need := false
	probe := func(f fieldspec.Field) error {
		need = need || needsExpansion(f.Value())
		return nil
	}
	expand := func(f fieldspec.Field) error { return expandField(f, mapping) }
	for i := 0; i < rs.Len(); i++ {
		gvk := rs.At(i).GVK()
		for _, fs := range s.cfg.FieldSpecs {
			if !fs.Matches(gvk) {
				continue
			}
			if !strings.Contains(fs.Path, "[]") {
				// Walk changes nothing but what fn does, so a shared object
				// is copied only when there is something to expand.
				need = false
				if err := fieldspec.Walk(rs.At(i).Object(), fs, fieldspec.CreateNone, probe); err != nil {
					return err
				}
				if !need {
					continue
				}
			}
			err := fieldspec.Walk(rs.Edit(i).Edit(), fs, fieldspec.CreateNone, expand)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// needsExpansion reports whether expandField could change v or fail on it.
func needsExpansion(v any) bool {
	switch t := v.(type) {
	case string:
		return strings.Contains(t, "$")
	case map[string]any:
		for _, e := range t {
			if s, ok := e.(string); ok && strings.Contains(s, "$") {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); !ok || strings.Contains(s, "$") {
				return true
			}
		}
	}
	return false
}

// expandField replaces var references in the value of one field.
func expandField(f fieldspec.Field, mapping func(string) any) error {
	switch v := f.Value().(type) {
	case string:
		f.Set(expandString(v, mapping))
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok {
				v[k] = expandString(s, mapping)
			}
		}
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return errors.New("invalid value type expect a string")
			}
			v[i] = expandString(s, mapping)
		}
	}
	return nil
}

// expandString is expandVars as kustomize stores its result: a string that
// is not valid UTF-8 (expandVars can make one, see readVarName) is kept as
// its base64 encoding.
func expandString(s string, mapping func(string) any) any {
	v := expandVars(s, mapping)
	if t, ok := v.(string); ok && !utf8.ValidString(t) {
		return base64.StdEncoding.EncodeToString([]byte(t))
	}
	return v
}

// expandVars replaces the $(NAME) references in s by mapping(NAME), as
// kustomize does: when s is exactly one reference, the mapped value is
// returned as it is (keeping its type); otherwise each mapped value is
// written into the string with %v. "$$" stands for "$", and a "$" that does
// not start a complete reference is kept.
func expandVars(s string, mapping func(string) any) any {
	var buf strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(s); cursor++ {
		if s[cursor] != '$' || cursor+1 >= len(s) {
			continue
		}
		buf.WriteString(s[checkpoint:cursor])
		read, isVar, advance := readVarName(s[cursor+1:])
		if isVar {
			mapped := mapping(read)
			if s == "$("+read+")" {
				return mapped
			}
			fmt.Fprintf(&buf, "%v", mapped)
		} else {
			buf.WriteString(read)
		}
		cursor += advance
		checkpoint = cursor + 1
	}
	return buf.String() + s[checkpoint:]
}

// readVarName reads what follows a '$': the name of a complete reference
// "(NAME)" (isVar), or the text to keep. advance is how many bytes were
// consumed after the '$' for the caller's cursor.
func readVarName(s string) (read string, isVar bool, advance int) {
	switch s[0] {
	case '$':
		return "$", false, 1
	case '(':
		if i := strings.IndexByte(s[1:], ')'); i >= 0 {
			return s[1 : i+1], true, i + 2
		}
		return "$(", false, 1
	}
	// kustomize writes the byte after the '$' as a character of its own.
	return "$" + string(rune(s[0])), false, 1
}

// varValue reads the value of var v from the object marked with its name:
// a string, number or boolean for a scalar (by the scalar's type), or a map
// or list.
func varValue(rs *resource.List, v loaders.Var) (any, error) {
	for _, r := range rs.All() {
		for _, name := range r.RefVarNames() {
			if name != v.Name {
				continue
			}
			val, err := fieldValue(r.Object(), v.FieldRef.FieldPath)
			if err != nil {
				return nil, fmt.Errorf("field specified in var '%v' not found in corresponding resource", v)
			}
			return val, nil
		}
	}
	return nil, fmt.Errorf("var '%v' cannot be mapped to a field in the set of known resources", v)
}

// sliceIndex matches a path element such as "ports[0]".
var sliceIndex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)\[(\d+)\]$`) })

// fieldValue reads the field at a var's field path, which may also write
// list positions as "ports[0]".
func fieldValue(obj map[string]any, path string) (any, error) {
	var parts []string
	for _, p := range splitFieldPath(path) {
		if !strings.HasSuffix(p, "]") {
			parts = append(parts, p)
			continue
		}
		g := sliceIndex().FindStringSubmatch(p)
		if g == nil {
			parts = append(parts, p)
			continue
		}
		if g[1] != "" {
			parts = append(parts, g[1])
		}
		parts = append(parts, g[2])
	}
	n, err := lookupPath(toNode(obj), parts)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("no field named '%s'", path)
	}
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		return fromNode(n)
	}
	switch n.Tag {
	case tagStr:
		return n.Value, nil
	case tagInt:
		return strconv.Atoi(n.Value)
	case tagFloat:
		return strconv.ParseFloat(n.Value, 64)
	case tagBool:
		return strconv.ParseBool(n.Value)
	}
	return n.Value, nil
}
