package stages

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// compiledSelector is a loaders.Selector ready to match.
type compiledSelector struct {
	group, version, kind, name, namespace pattern
	labels, annotations                   labelSelector
}

// pattern matches a whole value against one selector field. A field with
// no regular-expression syntax (most are a plain kind or name) matches by
// equality, which is what its anchored expression would do, without
// compiling one for every patch of every build; the zero pattern (an
// empty field) matches anything.
type pattern struct {
	set bool
	lit string
	re  *regexp.Regexp
}

func compilePattern(p string) (pattern, error) {
	if p == "" {
		return pattern{}, nil
	}
	if regexp.QuoteMeta(p) == p && utf8.ValidString(p) && !strings.ContainsRune(p, utf8.RuneError) {
		return pattern{set: true, lit: p}, nil
	}
	re, err := regexp.Compile("^(?:" + p + ")$")
	if err != nil {
		return pattern{}, err
	}
	return pattern{set: true, re: re}, nil
}

// match reports whether the pattern takes v.
func (p pattern) match(v string) bool {
	switch {
	case !p.set:
		return true
	case p.re != nil:
		return p.re.MatchString(v)
	}
	return v == p.lit
}

// compileSelector prepares the selector's expressions: kustomize's target
// selector. Group, version, kind, name and namespace are regular
// expressions matched against the whole value; an empty one matches
// anything. Name and namespace match either the original or the current
// value. The label and annotation selectors use Kubernetes' selector syntax.
func compileSelector(s loaders.Selector) (*compiledSelector, error) {
	c := &compiledSelector{}
	for _, e := range []struct {
		field string
		p     *pattern
	}{{s.Group, &c.group}, {s.Version, &c.version}, {s.Kind, &c.kind}, {s.Name, &c.name}, {s.Namespace, &c.namespace}} {
		p, err := compilePattern(e.field)
		if err != nil {
			return nil, err
		}
		*e.p = p
	}
	var err error
	if c.labels, err = parseLabelSelector(s.LabelSelector); err != nil {
		return nil, err
	}
	if c.annotations, err = parseLabelSelector(s.AnnotationSelector); err != nil {
		return nil, err
	}
	return c, nil
}

// selectIndexes returns the indexes of the objects of rs s matches.
func selectIndexes(s loaders.Selector, rs *resource.List) ([]int, error) {
	c, err := compileSelector(s)
	if err != nil {
		return nil, err
	}
	var out []int
	for i, r := range rs.All() {
		if c.matches(r) {
			out = append(out, i)
		}
	}
	return out, nil
}

func (c *compiledSelector) matches(r *resource.Resource) bool {
	cur, org := r.ID(), r.OrigID()
	match := func(p pattern, values ...string) bool {
		if !p.set {
			return true
		}
		for _, v := range values {
			if p.match(v) {
				return true
			}
		}
		return false
	}
	return match(c.namespace, org.EffectiveNamespace(), cur.EffectiveNamespace()) &&
		match(c.name, org.Name, cur.Name) &&
		match(c.group, cur.Group) && match(c.version, cur.Version) && match(c.kind, cur.Kind) &&
		c.labels.matches(r.Labels()) && c.annotations.matches(r.Annotations())
}

// labelSelector is a parsed Kubernetes label selector: all requirements
// must hold.
type labelSelector []requirement

// requirement is one term of a label selector.
type requirement struct {
	key    string
	op     string // "=", "!=", "in", "notin", "exists", "!"
	values []string
}

func (s labelSelector) matches(labels map[string]string) bool {
	for _, r := range s {
		v, ok := labels[r.key]
		switch r.op {
		case "exists":
			if !ok {
				return false
			}
		case "!":
			if ok {
				return false
			}
		case "=", "in":
			if !ok || !slices.Contains(r.values, v) {
				return false
			}
		case "!=", "notin":
			if ok && slices.Contains(r.values, v) {
				return false
			}
		}
	}
	return true
}

// parseLabelSelector parses "a=b,c!=d,e in (f,g),h notin (i),j,!k".
func parseLabelSelector(s string) (labelSelector, error) {
	var out labelSelector
	rest := strings.TrimSpace(s)
	for rest != "" {
		// A term ends at a comma outside parentheses.
		depth, end := 0, len(rest)
		for i, ch := range rest {
			if ch == '(' {
				depth++
			} else if ch == ')' {
				depth--
			} else if ch == ',' && depth == 0 {
				end = i
				break
			}
		}
		term := strings.TrimSpace(rest[:end])
		if end < len(rest) {
			rest = strings.TrimSpace(rest[end+1:])
			if rest == "" {
				return nil, fmt.Errorf("unable to parse requirement: found trailing ',' in selector %q", s)
			}
		} else {
			rest = ""
		}
		r, err := parseRequirement(term)
		if err != nil {
			return nil, fmt.Errorf("unable to parse requirement %q of selector %q: %w", term, s, err)
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, nil
}

func parseRequirement(term string) (requirement, error) {
	if term == "" {
		return requirement{}, fmt.Errorf("empty requirement")
	}
	if k, ok := strings.CutPrefix(term, "!"); ok {
		return requirement{key: strings.TrimSpace(k), op: "!"}, nil
	}
	for _, op := range []string{"!=", "==", "="} {
		if k, v, ok := strings.Cut(term, op); ok {
			if op == "==" {
				op = "="
			}
			return requirement{key: strings.TrimSpace(k), op: op, values: []string{strings.TrimSpace(v)}}, nil
		}
	}
	fields := strings.Fields(term)
	if len(fields) == 1 {
		return requirement{key: fields[0], op: "exists"}, nil
	}
	if len(fields) >= 2 && (fields[1] == "in" || fields[1] == "notin" || strings.HasPrefix(fields[1], "in(") || strings.HasPrefix(fields[1], "notin(")) {
		key := fields[0]
		rest := strings.TrimSpace(strings.TrimPrefix(term, key))
		op := "in"
		if strings.HasPrefix(rest, "notin") {
			op = "notin"
		}
		rest = strings.TrimSpace(strings.TrimPrefix(rest, op))
		if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
			return requirement{}, fmt.Errorf("expected a parenthesized list of values")
		}
		var values []string
		for _, v := range strings.Split(rest[1:len(rest)-1], ",") {
			values = append(values, strings.TrimSpace(v))
		}
		return requirement{key: key, op: op, values: values}, nil
	}
	return requirement{}, fmt.Errorf("unknown operator")
}
