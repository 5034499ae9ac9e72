package appset

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
)

// ResourcesFinalizer is the finalizer generated Applications get unless
// the ApplicationSet preserves resources on deletion.
const ResourcesFinalizer = "resources-finalizer.argocd.argoproj.io"

// Result is an expansion.
type Result struct {
	// Applications are the generated Applications, valid ones only,
	// normalized (NormalizeApplicationSpec), sorted by name.
	Applications []app.Application
	// Params are the parameter sets of each top-level generator.
	Params [][]map[string]any
	// Invalid maps an invalid Application ("namespace/name") to why.
	Invalid map[string]string
	// Err is the first error (no Application is created then); Reason is
	// Argo CD's condition reason for it.
	Err    error
	Reason string
}

// Generate expands as (its namespace defaulted to controllerNamespace) as
// the ApplicationSet controller does: each generator's parameter sets,
// the template rendered with each, templatePatch applied, the names
// validated. repos answers the git generators.
func Generate(as *ApplicationSet, repos Repos, controllerNamespace string) *Result {
	if as.Metadata.Namespace == "" {
		as.Metadata.Namespace = controllerNamespace
	}
	e := &expander{as: as, r: NewRenderer(as.Spec.GoTemplate, as.Spec.GoTemplateOptions), repos: repos}
	res := &Result{Params: [][]map[string]any{}}
	var apps []map[string]any
	for _, g := range as.Spec.Generators {
		ts, err := e.transform(g, as.Spec.Template, map[string]any{})
		for _, t := range ts {
			res.Params = append(res.Params, append([]map[string]any{}, t.Params...))
		}
		if err != nil {
			if res.Err == nil {
				res.Err, res.Reason = err, "ApplicationParamsGenerationError"
			}
			continue
		}
		for _, t := range ts {
			tmpl := tempApplication(t.Template)
			for _, p := range t.Params {
				a, err := e.render(tmpl, p)
				if err != nil {
					if res.Err == nil {
						res.Err, res.Reason = err, "RenderTemplateParamsError"
					}
					continue
				}
				apps = append(apps, a)
			}
		}
	}
	if res.Err != nil {
		return res
	}
	names := map[string]bool{}
	for _, m := range apps {
		b, _ := json.Marshal(m)
		var a app.Application
		if err := json.Unmarshal(b, &a); err != nil {
			res.Err = fmt.Errorf("generated Application: %w", err)
			return res
		}
		a.Metadata.Namespace = as.Metadata.Namespace
		var why string
		switch {
		case a.Metadata.Name == "":
			why = fmt.Sprintf("ApplicationSet %s contains an application with no name; a name must be set in the template's metadata.name or via a templatePatch (generateName is not supported)", as.Metadata.Name)
		case names[a.Metadata.Name]:
			why = fmt.Sprintf("ApplicationSet %s contains applications with duplicate name: %s", as.Metadata.Name, a.Metadata.Name)
		}
		if why != "" {
			if res.Invalid == nil {
				res.Invalid = map[string]string{}
			}
			res.Invalid[a.Metadata.Namespace+"/"+a.Metadata.Name] = why
			continue
		}
		names[a.Metadata.Name] = true
		a.Spec.Normalize()
		a.APIVersion, a.Kind = app.Group+"/v1alpha1", app.KindApplication
		res.Applications = append(res.Applications, a)
	}
	sort.SliceStable(res.Applications, func(i, j int) bool {
		return res.Applications[i].Metadata.Name < res.Applications[j].Metadata.Name
	})
	for _, ps := range res.Params {
		sort.SliceStable(ps, func(i, j int) bool {
			a, _ := json.Marshal(ps[i])
			b, _ := json.Marshal(ps[j])
			return string(a) < string(b)
		})
	}
	return res
}

// tempApplication is GetTempApplication: the template's name, namespace,
// labels, annotations, finalizers and spec.
func tempApplication(t map[string]any) map[string]any {
	meta, _ := t["metadata"].(map[string]any)
	m := map[string]any{}
	for _, k := range []string{"name", "namespace", "labels", "annotations", "finalizers"} {
		if v, ok := meta[k]; ok {
			m[k] = v
		}
	}
	out := map[string]any{"metadata": m}
	if s, ok := t["spec"]; ok {
		out["spec"] = s
	}
	return out
}

// render is RenderTemplateParams plus templatePatch.
func (e *expander) render(tmpl map[string]any, params map[string]any) (map[string]any, error) {
	if len(params) == 0 {
		return deepCopyMap(tmpl), nil
	}
	v, err := e.r.Render(tmpl, params)
	if err != nil {
		return nil, err
	}
	a := v.(map[string]any)
	meta, _ := a["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		a["metadata"] = meta
	}
	if fin, _ := meta["finalizers"].([]any); len(fin) == 0 {
		if sp := e.as.Spec.SyncPolicy; sp == nil || !sp.PreserveResourcesOnDeletion {
			meta["finalizers"] = []any{ResourcesFinalizer}
		}
	}
	if p := e.as.Spec.TemplatePatch; p != nil {
		patch, err := e.r.Replace(*p, params)
		if err != nil {
			return nil, fmt.Errorf("error replacing values in templatePatch: %w", err)
		}
		return applyPatch(a, patch)
	}
	return a, nil
}

// applyPatch applies a rendered templatePatch. Argo CD runs a strategic
// merge patch over the Application type, whose fields declare no merge
// keys: maps merge and lists are replaced, as a JSON merge patch does.
// The project is kept.
func applyPatch(a map[string]any, patch string) (map[string]any, error) {
	pj := []byte(patch)
	if s := strings.TrimSpace(patch); s == "" || s[0] != '{' {
		j, err := manifest.YAMLToJSON([]byte(patch))
		if err != nil {
			return nil, fmt.Errorf("error while converting template to json %q: %w", patch, err)
		}
		pj = j
	}
	var check app.Application
	if err := json.Unmarshal(pj, &check); err != nil {
		return nil, fmt.Errorf("invalid templatePatch %q: %w", pj, err)
	}
	doc, _ := json.Marshal(a)
	out, err := jsonpatch.MergePatch(doc, pj)
	if err != nil {
		return nil, fmt.Errorf("error while applying templatePatch template to json %q: %w", pj, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	if spec, ok := a["spec"].(map[string]any); ok {
		if ms, ok := m["spec"].(map[string]any); ok {
			if p, ok := spec["project"]; ok {
				ms["project"] = p
			} else {
				delete(ms, "project")
			}
		}
	}
	return m, nil
}
