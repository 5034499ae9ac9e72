package appset

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// funcs is Argo CD's goTemplate function set: sprig's generic functions
// without env, expandenv and getHostByName, plus normalize, toYaml,
// fromYaml, fromYamlArray (tpl is bound per template).
func funcs() template.FuncMap {
	m := sprig.GenericFuncMap()
	delete(m, "env")
	delete(m, "expandenv")
	delete(m, "getHostByName")
	m["normalize"] = SanitizeName
	m["toYaml"] = toYAML
	m["fromYaml"] = fromYAML
	m["fromYamlArray"] = fromYAMLArray
	return m
}

var invalidDNS = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("[^-a-z0-9.]") })

// SanitizeName is Argo CD's SanitizeName (the normalize function and the
// *Normalized parameters): lowercase, [^-a-z0-9.] to "-", at most 253
// characters, "-" and "." trimmed at both ends.
func SanitizeName(name string) string {
	name = invalidDNS().ReplaceAllString(strings.ToLower(name), "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

func toYAML(v any) (string, error) {
	b, err := sigsyaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

func fromYAML(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := sigsyaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func fromYAMLArray(s string) ([]any, error) {
	a := []any{}
	if err := sigsyaml.Unmarshal([]byte(s), &a); err != nil {
		return nil, err
	}
	return a, nil
}

// tplFunc is the tpl function bound to t, with Argo CD's depth limit (3).
func tplFunc(t *template.Template) func(string, any) (string, error) {
	depth := 0
	return func(tpl string, vals any) (string, error) {
		depth++
		defer func() { depth-- }()
		if depth > 3 {
			return "", fmt.Errorf("maximum recursion depth %d exceeded in tpl function", 3)
		}
		c, err := t.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		c, err = c.New(t.Name()).Parse(tpl)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", tpl, err)
		}
		var b strings.Builder
		if err := c.Execute(&b, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", tpl, err)
		}
		return strings.ReplaceAll(b.String(), "<no value>", ""), nil
	}
}

var templated = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(".*{{.*}}.*") })

// Renderer renders strings as an ApplicationSet does.
type Renderer struct {
	GoTemplate bool
	Options    []string // goTemplateOptions, e.g. missingkey=error
	funcs      template.FuncMap
}

// NewRenderer returns the renderer of a template mode.
func NewRenderer(goTemplate bool, options []string) *Renderer {
	r := &Renderer{GoTemplate: goTemplate, Options: options}
	if goTemplate {
		r.funcs = funcs()
	}
	return r
}

// Replace renders one string with params (Argo CD's Render.Replace).
func (r *Renderer) Replace(tmpl string, params map[string]any) (string, error) {
	return r.replace(tmpl, params, r.Options)
}

func (r *Renderer) replace(tmpl string, params map[string]any, options []string) (string, error) {
	if r.GoTemplate {
		t := template.New("base").Funcs(r.funcs)
		for _, o := range options {
			t = t.Option(o)
		}
		t = t.Funcs(template.FuncMap{"tpl": tplFunc(t)})
		p, err := t.Parse(tmpl)
		if err != nil {
			return "", fmt.Errorf("failed to parse template %s: %w", tmpl, err)
		}
		var b bytes.Buffer
		if err := p.Execute(&b, params); err != nil {
			return "", fmt.Errorf("failed to execute go template %s: %w", tmpl, err)
		}
		return b.String(), nil
	}
	if !templated().MatchString(tmpl) {
		return tmpl, nil
	}
	return fastTemplate(tmpl, params)
}

// fastTemplate is valyala/fasttemplate with Argo CD's tag function: a
// tag whose trimmed name is a string parameter is replaced, any other
// is written back as it was.
func fastTemplate(tmpl string, params map[string]any) (string, error) {
	var b strings.Builder
	s := tmpl
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		s = s[i+2:]
		j := strings.Index(s, "}}")
		if j < 0 {
			return "", fmt.Errorf("invalid template: Cannot find end tag=%q in the template=%q starting from %q", "}}", tmpl, s)
		}
		tag := s[:j]
		s = s[j+2:]
		name := strings.TrimSpace(tag)
		if v, ok := params[name].(string); ok && name != "" {
			b.WriteString(v)
		} else {
			b.WriteString("{{" + tag + "}}")
		}
	}
}

// Render renders every string of a JSON tree, map keys included, with
// params (the deep replace Argo CD runs over the typed Application).
// Struct field order is followed for the Application's known fields
// (metadata before spec), so that the first error is Argo CD's where the
// order is fixed; map keys go in sorted order (Argo CD's is Go map
// order).
func (r *Renderer) Render(v any, params map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		return r.Replace(t, params)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			x, err := r.Render(e, params)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range orderedKeys(t) {
			e := t[k]
			if e == nil {
				continue // a nil map value is skipped, as Argo CD's walk does
			}
			x, err := r.Render(e, params)
			if err != nil {
				return nil, err
			}
			nk, err := r.Replace(k, params)
			if err != nil {
				return nil, err
			}
			out[nk] = x
		}
		return out, nil
	}
	return v, nil
}

var fieldRank = map[string]int{"metadata": 1, "spec": 2, "name": 3, "generateName": 4, "namespace": 5, "labels": 6, "annotations": 7, "finalizers": 8, "source": 9, "destination": 10, "project": 11, "syncPolicy": 12, "sources": 13}

func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := fieldRank[keys[i]], fieldRank[keys[j]]
		if ri != rj {
			if ri == 0 {
				return false
			}
			if rj == 0 {
				return true
			}
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}
