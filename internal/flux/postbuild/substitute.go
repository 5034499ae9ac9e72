package postbuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux/envsubst"
)

// Opt-out of substitution: this label or annotation with this value.
const (
	SubstituteKey      = "kustomize.toolkit.fluxcd.io/substitute"
	SubstituteDisabled = "disabled"
)

// varNameRegex is what a variable's name must match.
const varNameRegex = "^[_[:alpha:]][_[:alpha:][:digit:]]*$"

var varName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(varNameRegex) })

// substituteAll substitutes the variables of every resource that does not
// opt out, in kustomize's order, as flux2's Builder.do does; the first
// failure aborts.
func substituteAll(list []*resource, o Options) error {
	run := len(o.Vars) > 0 || o.Always
	// The current id of every resource, and how many resources have each.
	ids := make([][4]string, len(list))
	count := map[[4]string]int{}
	for i, r := range list {
		ids[i] = resID(r.obj)
		count[ids[i]]++
	}
	for i, r := range list {
		if optedOut(r.obj) {
			continue
		}
		if run {
			var obj map[string]any
			var err error
			if bytes.IndexByte(r.text, '$') < 0 {
				// No expression: the text comes out as it went in, and
				// reading it back only takes its numbers through float64.
				if err = checkVarNames(o.Vars); err == nil {
					obj = throughFloat64(r.obj).(map[string]any)
				}
			} else {
				obj, err = Substitute(r.text, o.Vars, o.Strict)
			}
			if err != nil {
				return fmt.Errorf("var substitution failed for '%s': %w", stringField(r.obj, "metadata", "name"), err)
			}
			r.obj, r.text = obj, nil
			count[ids[i]]--
			ids[i] = resID(obj)
			count[ids[i]]++
		}
		// ResMap.Replace(res), which runs even when nothing was
		// substituted: the resource's id must be the current id of no
		// other resource.
		if n := count[ids[i]]; n > 1 {
			return fmt.Errorf("in Replace: id matched %d resources", n)
		}
	}
	return nil
}

// optedOut reports whether a resource carries the opt-out label or
// annotation (exactly "disabled").
func optedOut(obj map[string]any) bool {
	for _, f := range []string{"labels", "annotations"} {
		if m, ok := nestedMap(obj, "metadata", f); ok && m[SubstituteKey] == SubstituteDisabled {
			return true
		}
	}
	return false
}

// Substitute substitutes the variables of one resource's text (kustomize's
// output of it) as fluxcd/pkg/kustomize does: every variable's name must
// be valid, the text goes through Flux's envsubst (strict or not), and the
// result is read back as YAML 1.1 (quotes the text had are gone: a
// substituted "true" is a boolean, an empty value null). The result's
// numbers are json.Number, as kustomize holds them after reading the JSON
// back (through float64).
func Substitute(text []byte, vars map[string]string, strict bool) (map[string]any, error) {
	if err := checkVarNames(vars); err != nil {
		return nil, err
	}
	out, err := envsubst.Eval(string(text), envsubst.Mapping(vars, strict))
	if err != nil {
		return nil, fmt.Errorf("envsubst error: variable substitution failed: %w", err)
	}
	j, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		return nil, fmt.Errorf("envsubst error: YAMLToJSON: %w", err)
	}
	// kustomize's Resource.UnmarshalJSON: into a map (numbers become
	// float64), then a yaml.v3 node made from the map.
	m := map[string]any{}
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("UnmarshalJSON: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("UnmarshalJSON: %w", err)
	}
	return jsonObject(b)
}

// checkVarNames checks every variable's name (the first invalid one in
// byte order is named; flux names a random one).
func checkVarNames(vars map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if !varName().MatchString(name) {
			return fmt.Errorf("envsubst error: '%s' var name is invalid, must match '%s'", name, varNameRegex)
		}
	}
	return nil
}

// throughFloat64 is v with its JSON numbers as encoding/json writes them
// after reading them into float64 (kustomize's Resource.UnmarshalJSON).
func throughFloat64(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = throughFloat64(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = throughFloat64(e)
		}
		return out
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return t
		}
		b, err := json.Marshal(f)
		if err != nil {
			return t
		}
		return json.Number(b)
	}
	return v
}

// resID is a resource's current id as kustomize compares them: group,
// version, kind, name, and the namespace with "" read as "default".
func resID(obj map[string]any) [4]string {
	ns := stringField(obj, "metadata", "namespace")
	if ns == "" {
		ns = "default"
	}
	return [4]string{scalarText(obj["apiVersion"]), scalarText(obj["kind"]), scalarText(mapGet(obj, "metadata", "name")), ns}
}

// mapGet returns the value at path, nil when a step is missing.
func mapGet(m map[string]any, path ...string) any {
	parent, ok := nestedMap(m, path[:len(path)-1]...)
	if !ok {
		return nil
	}
	return parent[path[len(path)-1]]
}
