package postbuild

import (
	"encoding/json"
	"fmt"
	"regexp"

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

var varName = regexp.MustCompile(varNameRegex)

// substituteAll substitutes the variables of every resource that does not
// opt out, in kustomize's order, as flux2's Builder.do does; the first
// failure aborts.
func substituteAll(list []*resource, o Options) error {
	run := len(o.Vars) > 0 || o.Always
	for i, r := range list {
		if optedOut(r.obj) {
			continue
		}
		if run {
			obj, err := Substitute(r.text, o.Vars, o.Strict)
			if err != nil {
				return fmt.Errorf("var substitution failed for '%s': %w", stringField(r.obj, "metadata", "name"), err)
			}
			r.obj, r.text = obj, nil
		}
		// ResMap.Replace(res), which runs even when nothing was
		// substituted: the resource's id must be the current id of no
		// other resource.
		id := resID(r.obj)
		n := 0
		for j, other := range list {
			if j == i || resID(other.obj) == id {
				n++
			}
		}
		if n > 1 {
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
	for _, name := range sortedKeys(vars) {
		if !varName.MatchString(name) {
			return nil, fmt.Errorf("envsubst error: '%s' var name is invalid, must match '%s'", name, varNameRegex)
		}
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
