package appset

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"sort"
	"strconv"
	"strings"

	"dario.cat/mergo"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
	sigsyaml "sigs.k8s.io/yaml"
)

// Repo answers the git generator's questions about one repository, as
// the repo-server does: Files lists the tracked files a pattern matches
// with their content (GetGitFiles), Directories every directory
// (GetGitDirectories).
type Repo interface {
	Files(pattern string) (map[string][]byte, error)
	Directories() ([]string, error)
}

// Repos finds the Repo of a repoURL; an error for a repository that is
// not here.
type Repos func(repoURL string) (Repo, error)

// Errors of the generators, worded as Argo CD's.
var (
	ErrEmptyGenerator     = errors.New("ApplicationSet is empty")
	errLessThanTwo        = errors.New("found less than two generators, Matrix support only two")
	errMoreThanTwo        = errors.New("found more than two generators, Matrix support only two")
	errMoreThanOneInner   = errors.New("found more than one generator in matrix.Generators")
	errLessThanTwoMerge   = errors.New("found less than two generators, Merge requires two or more")
	errNoMergeKeys        = errors.New("no merge keys were specified, Merge requires at least one")
	errNonUniqueParamSets = errors.New("the parameters from a generator were not unique by the given mergeKeys, Merge requires all param sets to be unique")
	errNoChildParams      = errors.New("child generator generated no parameters")
)

// RefusedError is a generator that needs a cluster or the network.
type RefusedError struct{ Name string }

func (e *RefusedError) Error() string {
	return e.Name + " generator needs a cluster or network: not expanded offline"
}

// expander holds what one expansion needs.
type expander struct {
	as    *ApplicationSet
	r     *Renderer
	repos Repos
}

// result is what Transform returns per generator kind.
type result struct {
	Params   []map[string]any
	Template map[string]any
}

// kinds lists the non-nil generator fields in Argo CD's struct order.
func (g *Generator) kinds() []string {
	var out []string
	if g.List != nil {
		out = append(out, "List")
	}
	if g.Clusters != nil {
		out = append(out, "Clusters")
	}
	if g.Git != nil {
		out = append(out, "Git")
	}
	if g.SCMProvider != nil {
		out = append(out, "SCMProvider")
	}
	if g.ClusterDecisionResource != nil {
		out = append(out, "ClusterDecisionResource")
	}
	if g.PullRequest != nil {
		out = append(out, "PullRequest")
	}
	if g.Plugin != nil {
		out = append(out, "Plugin")
	}
	if g.Matrix != nil {
		out = append(out, "Matrix")
	}
	if g.Merge != nil {
		out = append(out, "Merge")
	}
	if g.Oci != nil {
		out = append(out, "Oci")
	}
	return out
}

func (g *Generator) template(kind string) map[string]any {
	switch kind {
	case "List":
		return g.List.Template
	case "Git":
		return g.Git.Template
	case "Matrix":
		return g.Matrix.Template
	case "Merge":
		return g.Merge.Template
	}
	return nil
}

// transform is generators.Transform: for each kind set in g, the
// generator's template filled from base, its params (after g is
// re-rendered with genParams when given), filtered by the selector.
func (e *expander) transform(g Generator, base map[string]any, genParams map[string]any) ([]result, error) {
	var res []result
	var first error
	interp := g
	for _, kind := range g.kinds() {
		tmpl := fillTemplate(deepCopyMap(g.template(kind)), base)
		if len(genParams) != 0 {
			ig, err := e.interpolate(g, genParams)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			interp = ig
		}
		params, err := e.generate(kind, &interp)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		var kept []map[string]any
		for _, p := range params {
			flat, err := flattenParams(p)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			if g.Selector != nil && !g.Selector.matches(flat) {
				continue
			}
			kept = append(kept, p)
		}
		res = append(res, result{Params: kept, Template: tmpl})
	}
	return res, first
}

func (e *expander) generate(kind string, g *Generator) ([]map[string]any, error) {
	switch kind {
	case "List":
		return e.list(g.List)
	case "Git":
		return e.git(g.Git)
	case "Matrix":
		return e.matrix(g.Matrix)
	case "Merge":
		return e.merge(g.Merge)
	}
	return nil, &RefusedError{Name: kind}
}

// list is the list generator.
func (e *expander) list(l *ListGenerator) ([]map[string]any, error) {
	res := make([]map[string]any, len(l.Elements))
	for i, raw := range l.Elements {
		var el map[string]any
		if err := json.Unmarshal(raw, &el); err != nil {
			return nil, fmt.Errorf("error unmarshling list element %w", err)
		}
		if e.as.Spec.GoTemplate {
			res[i] = el
			continue
		}
		params := map[string]any{}
		for k, v := range el {
			if k == "values" {
				vals, ok := v.(map[string]any)
				if !ok {
					return nil, errors.New("error parsing values map")
				}
				for vk, vv := range vals {
					s, ok := vv.(string)
					if !ok {
						return nil, fmt.Errorf("error parsing value as string %w", error(nil))
					}
					params["values."+vk] = s
				}
			} else {
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("error parsing value as string %w", error(nil))
				}
				params[k] = s
			}
			res[i] = params
		}
	}
	if l.ElementsYaml != "" {
		var more []map[string]any
		if err := sigsyaml.Unmarshal([]byte(l.ElementsYaml), &more); err != nil {
			return nil, fmt.Errorf("error unmarshling decoded ElementsYaml %w", err)
		}
		res = append(res, more...)
	}
	return res, nil
}

// git is the git generator.
func (e *expander) git(g *GitGenerator) ([]map[string]any, error) {
	var (
		res []map[string]any
		err error
	)
	switch {
	case len(g.Directories) != 0:
		res, err = e.gitDirectories(g)
	case len(g.Files) != 0:
		res, err = e.gitFiles(g)
	default:
		return nil, ErrEmptyGenerator
	}
	if err != nil {
		return nil, fmt.Errorf("error generating params from git: %w", err)
	}
	return res, nil
}

func (e *expander) repo(url string) (Repo, error) {
	if e.repos == nil {
		return nil, fmt.Errorf("no local checkout for %s (remote repository)", url)
	}
	return e.repos(url)
}

func (e *expander) gitDirectories(g *GitGenerator) ([]map[string]any, error) {
	repo, err := e.repo(g.RepoURL)
	if err != nil {
		return nil, fmt.Errorf("error getting directories from git: error retrieving Git Directories: %w", err)
	}
	all, err := repo.Directories()
	if err != nil {
		return nil, fmt.Errorf("error getting directories from git: %w", err)
	}
	var paths []string
	for _, p := range all {
		in, ex := false, false
		for _, d := range g.Directories {
			ok, err := path.Match(d.Path, p)
			if err != nil {
				continue
			}
			if ok && !d.Exclude {
				in = true
			}
			if ok && d.Exclude {
				ex = true
			}
		}
		if in && !ex {
			paths = append(paths, p)
		}
	}
	res := make([]map[string]any, len(paths))
	for i, p := range paths {
		params := e.pathParams(p, g.PathParamPrefix)
		if err := e.appendValues(g.Values, params); err != nil {
			return nil, fmt.Errorf("error generating params from apps: failed to append templated values: %w", err)
		}
		res[i] = params
	}
	return res, nil
}

func (e *expander) pathParams(p, prefix string) map[string]any {
	params := map[string]any{}
	if e.as.Spec.GoTemplate {
		pp := map[string]any{
			"path": p, "basename": path.Base(p), "basenameNormalized": SanitizeName(path.Base(p)),
			"segments": toAny(strings.Split(p, "/")),
		}
		if prefix != "" {
			params[prefix] = map[string]any{"path": pp}
		} else {
			params["path"] = pp
		}
		return params
	}
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	params[name] = p
	params[name+".basename"] = path.Base(p)
	params[name+".basenameNormalized"] = SanitizeName(path.Base(p))
	for i, s := range strings.Split(p, "/") {
		if s != "" {
			params[name+"["+strconv.Itoa(i)+"]"] = s
		}
	}
	return params
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func (e *expander) gitFiles(g *GitGenerator) ([]map[string]any, error) {
	repo, err := e.repo(g.RepoURL)
	if err != nil {
		return nil, fmt.Errorf("error retrieving Git files: %w", err)
	}
	content := map[string][]byte{}
	for _, f := range g.Files {
		if f.Exclude {
			continue
		}
		got, err := repo.Files(f.Path)
		if err != nil {
			return nil, err
		}
		maps.Copy(content, got)
	}
	for _, f := range g.Files {
		if !f.Exclude {
			continue
		}
		got, err := repo.Files(f.Path)
		if err != nil {
			return nil, err
		}
		for p := range got {
			delete(content, p)
		}
	}
	paths := make([]string, 0, len(content))
	for p := range content {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var all []map[string]any
	for _, p := range paths {
		ps, err := e.fileParams(p, content[p], g)
		if err != nil {
			return nil, fmt.Errorf("unable to process file '%s' from repository '%s': %w", p, g.RepoURL, err)
		}
		all = append(all, ps...)
	}
	return all, nil
}

func (e *expander) fileParams(file string, data []byte, g *GitGenerator) ([]map[string]any, error) {
	var objs []map[string]any
	single := map[string]any{}
	if err := sigsyaml.Unmarshal(data, &single); err == nil {
		objs = append(objs, single)
	} else if err := sigsyaml.Unmarshal(data, &objs); err != nil {
		return nil, fmt.Errorf("unable to parse file: %w", err)
	}
	var res []map[string]any
	dir := path.Dir(file)
	for _, o := range objs {
		params := map[string]any{}
		if e.as.Spec.GoTemplate {
			maps.Copy(params, o)
			pp := map[string]any{
				"path": dir, "basename": path.Base(dir), "filename": path.Base(file),
				"basenameNormalized": SanitizeName(path.Base(dir)), "filenameNormalized": SanitizeName(path.Base(file)),
				"segments": toAny(strings.Split(dir, "/")),
			}
			if g.PathParamPrefix != "" {
				params[g.PathParamPrefix] = map[string]any{"path": pp}
			} else {
				params["path"] = pp
			}
		} else {
			flat := map[string]any{}
			flattenInto(flat, o, "", true)
			for k, v := range flat {
				params[k] = fmt.Sprintf("%v", v)
			}
			name := "path"
			if g.PathParamPrefix != "" {
				name = g.PathParamPrefix + ".path"
			}
			params[name] = dir
			params[name+".basename"] = path.Base(dir)
			params[name+".filename"] = path.Base(file)
			params[name+".basenameNormalized"] = SanitizeName(path.Base(dir))
			params[name+".filenameNormalized"] = SanitizeName(path.Base(file))
			for i, s := range strings.Split(dir, "/") {
				if s != "" {
					params[name+"["+strconv.Itoa(i)+"]"] = s
				}
			}
		}
		if err := e.appendValues(g.Values, params); err != nil {
			return nil, fmt.Errorf("failed to append templated values: %w", err)
		}
		res = append(res, params)
	}
	return res, nil
}

// appendValues renders a generator's values with its params and adds them
// as values.<k> (flat) or values: {k: v} (goTemplate).
func (e *expander) appendValues(values map[string]string, params map[string]any) error {
	tmp := map[string]any{}
	for _, k := range sortedKeys(values) {
		v, err := e.r.Replace(values[k], params)
		if err != nil {
			return fmt.Errorf("failed to replace templated string: failed to replace templated string with rendered values: %w", err)
		}
		if e.as.Spec.GoTemplate {
			if tmp["values"] == nil {
				tmp["values"] = map[string]any{}
			}
			tmp["values"].(map[string]any)[k] = v
		} else {
			tmp["values."+k] = v
		}
	}
	maps.Copy(params, tmp)
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// flattenInto is jeremywohl/flatten's DotStyle flattening.
func flattenInto(out map[string]any, v any, prefix string, top bool) {
	key := func(k string) string {
		if top {
			return prefix + k
		}
		return prefix + "." + k
	}
	assign := func(k string, e any) {
		switch e.(type) {
		case map[string]any, []any:
			flattenInto(out, e, k, false)
		default:
			out[k] = e
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			assign(key(k), e)
		}
	case []any:
		for i, e := range t {
			assign(key(strconv.Itoa(i)), e)
		}
	}
}

// flattenParams is the selector's view of a parameter set.
func flattenParams(p map[string]any) (map[string]string, error) {
	flat := map[string]any{}
	flattenInto(flat, normalizeForFlatten(p), "", true)
	out := make(map[string]string, len(flat))
	for k, v := range flat {
		out[k] = fmt.Sprintf("%v", v)
	}
	return out, nil
}

func normalizeForFlatten(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		switch t := v.(type) {
		case map[string]string:
			m := make(map[string]any, len(t))
			for a, b := range t {
				m[a] = b
			}
			out[k] = m
		case map[string]any:
			out[k] = normalizeForFlatten(t)
		default:
			out[k] = v
		}
	}
	return out
}

// matches is a label selector over flattened params.
func (s *LabelSelector) matches(l map[string]string) bool {
	for k, v := range s.MatchLabels {
		if got, ok := l[k]; !ok || got != v {
			return false
		}
	}
	for _, ex := range s.MatchExpressions {
		v, has := l[ex.Key]
		in := false
		for _, w := range ex.Values {
			if has && v == w {
				in = true
			}
		}
		switch ex.Operator {
		case "In":
			if !in {
				return false
			}
		case "NotIn":
			if in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// interpolate renders a nested generator with the first matrix child's
// params (RenderGeneratorParams): every string, values kept raw on a
// missing key (goTemplate values are rendered with missingkey=error).
func (e *expander) interpolate(g Generator, params map[string]any) (Generator, error) {
	b, err := json.Marshal(g)
	if err != nil {
		return g, err
	}
	var tree any
	json.Unmarshal(b, &tree)
	var vals map[string]string
	if g.Git != nil && g.Git.Values != nil {
		vals = map[string]string{}
		opts := e.r.Options
		if e.as.Spec.GoTemplate {
			opts = nil
			for _, o := range e.r.Options {
				if !strings.HasPrefix(o, "missingkey=") {
					opts = append(opts, o)
				}
			}
			opts = append(opts, "missingkey=error")
		}
		for _, k := range sortedKeys(g.Git.Values) {
			v := g.Git.Values[k]
			x, err := e.r.replace(v, params, opts)
			if err != nil {
				if strings.Contains(err.Error(), "map has no entry for key") || strings.Contains(err.Error(), "can't evaluate field") {
					vals[k] = v
					continue
				}
				return g, fmt.Errorf("failed to replace parameters in generator: failed to pre-resolve Values key %q: %w", k, err)
			}
			vals[k] = x
		}
		if m, ok := tree.(map[string]any); ok {
			if gm, ok := m["git"].(map[string]any); ok {
				delete(gm, "values")
			}
		}
	}
	out, err := e.r.Render(tree, params)
	if err != nil {
		return g, fmt.Errorf("failed to replace parameters in generator: %w", err)
	}
	b, _ = json.Marshal(out)
	var ng Generator
	if err := json.Unmarshal(b, &ng); err != nil {
		return g, err
	}
	if vals != nil {
		ng.Git.Values = vals
	}
	return ng, nil
}

// matrix is the matrix generator.
func (e *expander) matrix(m *Combine) ([]map[string]any, error) {
	if len(m.Generators) < 2 {
		return nil, errLessThanTwo
	}
	if len(m.Generators) > 2 {
		return nil, errMoreThanTwo
	}
	g0, err := e.child(m.Generators[0], nil)
	if err != nil {
		return nil, fmt.Errorf("error failed to get params for first generator in matrix generator: %w", err)
	}
	b, _ := json.Marshal(m.Generators[1])
	reusable := !strings.Contains(string(b), "{{")
	var reused []map[string]any
	if reusable && len(g0) > 0 {
		if reused, err = e.child(m.Generators[1], g0[0]); err != nil {
			return nil, fmt.Errorf("failed to get params for second generator in the matrix generator: %w", err)
		}
	}
	res := []map[string]any{}
	for _, a := range g0 {
		var g1 []map[string]any
		if reusable {
			g1 = deepCopyList(reused)
		} else if g1, err = e.child(m.Generators[1], a); err != nil {
			return nil, fmt.Errorf("failed to get params for second generator in the matrix generator: %w", err)
		}
		for _, b := range g1 {
			if e.as.Spec.GoTemplate {
				tmp := map[string]any{}
				if err := mergo.Merge(&tmp, b, mergo.WithOverride); err != nil {
					return nil, fmt.Errorf("failed to merge params from the second generator in the matrix generator with temp map: %w", err)
				}
				if err := mergo.Merge(&tmp, a, mergo.WithOverride); err != nil {
					return nil, fmt.Errorf("failed to merge params from the second generator in the matrix generator with the first: %w", err)
				}
				res = append(res, tmp)
				continue
			}
			v, err := combineStringMaps(a, b)
			if err != nil {
				return nil, fmt.Errorf("failed to combine string maps with merging params for the matrix generator: %w", err)
			}
			res = append(res, v)
		}
	}
	return res, nil
}

func combineStringMaps(a, b map[string]any) (map[string]any, error) {
	res := map[string]any{}
	for k, v := range a {
		res[k] = fmt.Sprintf("%v", v)
	}
	for _, k := range sortedAnyKeys(b) {
		v := fmt.Sprintf("%v", b[k])
		if cur, ok := res[k]; ok && cur != v {
			return nil, fmt.Errorf("found duplicate key %s with different value, a: %s ,b: %s", k, cur, v)
		}
		res[k] = v
	}
	return res, nil
}

func sortedAnyKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// child runs a nested generator (matrix: with the first child's params).
func (e *expander) child(g Generator, params map[string]any) ([]map[string]any, error) {
	if params == nil {
		params = map[string]any{}
	}
	t, err := e.transform(g, nil, params)
	if err != nil {
		return nil, fmt.Errorf("child generator returned an error on parameter generation: %w", err)
	}
	if len(t) == 0 {
		return nil, errNoChildParams
	}
	if len(t) > 1 {
		return nil, errMoreThanOneInner
	}
	return t[0].Params, nil
}

// merge is the merge generator. Argo CD returns the merged sets in Go
// map order (random); kpipe keeps the first child's order.
func (e *expander) merge(m *Combine) ([]map[string]any, error) {
	if len(m.Generators) < 2 {
		return nil, errLessThanTwoMerge
	}
	var sets [][]map[string]any
	for i, g := range m.Generators {
		ps, err := e.child(g, nil)
		if err != nil {
			return nil, fmt.Errorf("error getting param sets from generators: error getting params from generator %d of %d: %w", i+1, len(m.Generators), err)
		}
		sets = append(sets, ps)
	}
	base, order, err := byMergeKey(m.MergeKeys, sets[0])
	if err != nil {
		return nil, fmt.Errorf("error getting param sets by merge key: %w", err)
	}
	for _, ps := range sets[1:] {
		other, _, err := byMergeKey(m.MergeKeys, ps)
		if err != nil {
			return nil, fmt.Errorf("error getting param sets by merge key: %w", err)
		}
		for _, k := range order {
			over, ok := other[k]
			if !ok {
				continue
			}
			b := base[k]
			if e.as.Spec.GoTemplate {
				if err := mergo.Merge(&b, over, mergo.WithOverride); err != nil {
					return nil, fmt.Errorf("error merging base param set with override param set: %w", err)
				}
			} else {
				maps.Copy(b, over)
			}
			base[k] = b
		}
	}
	out := make([]map[string]any, 0, len(order))
	for _, k := range order {
		out = append(out, base[k])
	}
	return out, nil
}

func byMergeKey(keys []string, sets []map[string]any) (map[string]map[string]any, []string, error) {
	if len(keys) < 1 {
		return nil, nil, errNoMergeKeys
	}
	by := map[string]map[string]any{}
	var order []string
	for _, p := range sets {
		k := map[string]any{}
		for _, mk := range keys {
			k[mk] = p[mk]
		}
		b, err := json.Marshal(k)
		if err != nil {
			return nil, nil, fmt.Errorf("error marshalling param set key json: %w", err)
		}
		if _, dup := by[string(b)]; dup {
			return nil, nil, fmt.Errorf("%w. Duplicate key was %s", errNonUniqueParamSets, b)
		}
		by[string(b)] = p
		order = append(order, string(b))
	}
	return by, order, nil
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return manifest.CopyValue(m).(map[string]any)
}

func deepCopyList(l []map[string]any) []map[string]any {
	if l == nil {
		return nil
	}
	out := make([]map[string]any, len(l))
	for i, m := range l {
		out[i] = manifest.CopyValue(m).(map[string]any)
	}
	return out
}

// fillTemplate is mergo.Merge(dst=generator's template, src=base): what
// the generator's template leaves empty is taken from the
// ApplicationSet's.
func fillTemplate(dst, src map[string]any) map[string]any {
	if dst == nil {
		return deepCopyMap(src)
	}
	for k, sv := range src {
		dv, ok := dst[k]
		if !ok || isZero(dv) {
			dst[k] = manifest.CopyValue(sv)
			continue
		}
		dm, dok := dv.(map[string]any)
		sm, sok := sv.(map[string]any)
		if dok && sok {
			dst[k] = fillTemplate(dm, sm)
		}
	}
	return dst
}

func isZero(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case bool:
		return !t
	case float64:
		return t == 0
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}
