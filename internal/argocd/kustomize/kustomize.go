// Package kustomize applies an Application's Kustomize options to the
// app's kustomization file the way Argo CD v3.6.1's repo-server does
// before `kustomize build` (util/kustomize/kustomize.go): in its order,
// `kustomize edit set nameprefix`, `set namesuffix`, `set image`, `set
// replicas`, `add label`, `add annotation`, `set namespace`, the patches
// appended (a rewrite of the whole file through sigs.k8s.io/yaml: keys
// sorted, comments gone, numbers through float64), `add component`; and
// it builds the `kustomize build` argument list Argo CD runs.
//
// The edits are kustomize's own, as kpipe's internal/kustfile reproduces
// `kustomize edit` byte for byte; each edit reads and writes the file
// again, as each kustomize process does. Nothing is written to the
// checkout: the result is the new file's bytes, for the engine to read in
// place of the file.
//
// It imports kpipe's internal/argocd/app, internal/kustfile and
// sigs.k8s.io/yaml (Argo CD's YAML).
package kustomize

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
	"github.com/kpipe/kpipe/internal/kustfile"
	"github.com/kpipe/kpipe/loaders"
)

// PatchesComment is the line Argo CD puts in its command list when it
// rewrites the file for patches.
const PatchesComment = "# kustomization.yaml updated with patches. There is no `kustomize edit` command for adding patches. In order to generate the manifests in your local environment, you will need to copy the patches into kustomization.yaml manually."

// Result is what the edits did.
type Result struct {
	// Commands are the commands Argo CD reports, in order (label and
	// annotation pairs sorted: Argo CD's order is Go map order).
	Commands []string
	// File is the kustomization file edited (slash path relative to the
	// checkout's root), "" when nothing was edited.
	File string
	// Data is the file's new content; nil when nothing was edited (the
	// file is built as it is in the checkout).
	Data []byte
}

// Edit applies opts to the kustomization file of appDir (a slash path
// relative to co's root) and returns the new content and the commands.
// env is the source's ARGOCD_APP_* environment (images and label values
// are substituted; annotation values only with commonAnnotationsEnvsubst).
// Errors read as the repo-server's: "`kustomize edit ...` failed exit
// status 1: Error: ..." (without kustomize's usage text), or Argo CD's
// own.
func Edit(co app.Checkout, appDir string, opts *app.ApplicationSourceKustomize, env app.Env) (*Result, error) {
	res := &Result{}
	if opts == nil {
		return res, nil
	}
	e := &editor{co: co, appDir: appDir, res: res}
	if opts.NamePrefix != "" {
		if err := e.run([]string{"edit", "set", "nameprefix", "--", opts.NamePrefix}, func(k *loaders.Kustomization) error {
			k.NamePrefix = opts.NamePrefix
			return nil
		}); err != nil {
			return res, err
		}
	}
	if opts.NameSuffix != "" {
		if err := e.run([]string{"edit", "set", "namesuffix", "--", opts.NameSuffix}, func(k *loaders.Kustomization) error {
			k.NameSuffix = opts.NameSuffix
			return nil
		}); err != nil {
			return res, err
		}
	}
	if len(opts.Images) > 0 {
		var imgs []string
		for _, im := range opts.Images {
			imgs = append(imgs, env.Envsubst(im))
		}
		if err := e.run(append([]string{"edit", "set", "image"}, imgs...), func(k *loaders.Kustomization) error {
			return kustfile.SetImages(k, imgs)
		}); err != nil {
			return res, err
		}
	}
	if len(opts.Replicas) > 0 {
		var args []string
		for _, r := range opts.Replicas {
			n, err := r.IntCount()
			if err != nil {
				return res, err
			}
			args = append(args, fmt.Sprintf("%s=%d", r.Name, n))
		}
		if err := e.run(append([]string{"edit", "set", "replicas"}, args...), func(k *loaders.Kustomization) error {
			return kustfile.SetReplicas(k, args)
		}); err != nil {
			return res, err
		}
	}
	if len(opts.CommonLabels) > 0 {
		args := []string{"edit", "add", "label"}
		if opts.ForceCommonLabels {
			args = append(args, "--force")
		}
		if opts.LabelWithoutSelector {
			args = append(args, "--without-selector")
		}
		if opts.LabelIncludeTemplates {
			args = append(args, "--include-templates")
		}
		pairs := pairArgs(opts.CommonLabels, env.Envsubst)
		lo := kustfile.LabelOptions{Force: opts.ForceCommonLabels, WithoutSelector: opts.LabelWithoutSelector, IncludeTemplates: opts.LabelIncludeTemplates}
		if err := e.run(append(args, pairs...), func(k *loaders.Kustomization) error {
			m, err := kustfile.ParsePairs(pairs, "label")
			if err != nil {
				return err
			}
			return kustfile.AddLabels(k, m, lo)
		}); err != nil {
			return res, err
		}
	}
	if len(opts.CommonAnnotations) > 0 {
		args := []string{"edit", "add", "annotation"}
		if opts.ForceCommonAnnotations {
			args = append(args, "--force")
		}
		subst := func(s string) string { return s }
		if opts.CommonAnnotationsEnvsubst {
			subst = env.Envsubst
		}
		pairs := pairArgs(opts.CommonAnnotations, subst)
		if err := e.run(append(args, pairs...), func(k *loaders.Kustomization) error {
			m, err := kustfile.ParsePairs(pairs, "annotation")
			if err != nil {
				return err
			}
			return kustfile.AddAnnotations(k, m, opts.ForceCommonAnnotations)
		}); err != nil {
			return res, err
		}
	}
	if opts.Namespace != "" {
		if err := e.run([]string{"edit", "set", "namespace", "--", opts.Namespace}, func(k *loaders.Kustomization) error {
			k.Namespace = opts.Namespace
			return nil
		}); err != nil {
			return res, err
		}
	}
	if len(opts.Patches) > 0 {
		if err := e.patches(opts.Patches); err != nil {
			return res, err
		}
		res.Commands = append(res.Commands, PatchesComment)
	}
	if len(opts.Components) > 0 {
		comps := opts.Components
		if opts.IgnoreMissingComponents {
			comps = nil
			for _, c := range opts.Components {
				if hasKustomization(co.FS, path.Join(appDir, c)) {
					comps = append(comps, c)
				}
			}
		}
		if len(comps) > 0 {
			if err := e.run(append([]string{"edit", "add", "component"}, comps...), func(k *loaders.Kustomization) error {
				items, err := e.glob(comps)
				if err != nil {
					return err
				}
				k.Components = kustfile.AddUnique(k.Components, items, e.name, "component", func(string) {})
				return nil
			}); err != nil {
				return res, err
			}
		}
	}
	if e.data != nil {
		res.File, res.Data = path.Join(appDir, e.name), e.data
	}
	return res, nil
}

// pairArgs are the KEY:VALUE arguments of add label|annotation, sorted.
func pairArgs(m map[string]string, subst func(string) string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+":"+subst(v))
	}
	sort.Strings(out)
	return out
}

// hasKustomization is the ignoreMissingComponents test: a regular
// kustomization file in dir, inside the checkout.
func hasKustomization(fsys fs.FS, dir string) bool {
	if dir == ".." || strings.HasPrefix(dir, "../") {
		return false
	}
	for _, n := range kustfile.FileNames {
		if fi, err := fs.Stat(fsys, path.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

type editor struct {
	co     app.Checkout
	appDir string
	res    *Result
	name   string // the kustomization file's name
	data   []byte // current content, nil until first edited
}

// load finds the kustomization file (kustomize's rules: exactly one of
// the names) and reads it, once.
func (e *editor) load() error {
	if e.name != "" {
		return nil
	}
	var found []string
	for _, n := range kustfile.FileNames {
		if _, err := fs.Lstat(e.co.FS, path.Join(e.appDir, n)); err == nil {
			found = append(found, n)
		}
	}
	dir := e.co.Display(e.appDir)
	switch len(found) {
	case 0:
		return fmt.Errorf("missing kustomization file 'kustomization.yaml' in %s", dir)
	case 1:
	default:
		var paths []string
		for _, n := range found {
			paths = append(paths, dir+"/"+n)
		}
		return fmt.Errorf("found multiple kustomization files in %s: %s", dir, strings.Join(paths, ", "))
	}
	data, err := fs.ReadFile(e.co.FS, path.Join(e.appDir, found[0]))
	if err != nil {
		return err
	}
	e.name, e.data = found[0], data
	return nil
}

// run is one `kustomize edit` process: the file read (with kustomize's
// read-time fixes), changed by op, written back as kustomize writes it.
func (e *editor) run(args []string, op func(k *loaders.Kustomization) error) error {
	cmd := app.CommandString(append([]string{"kustomize"}, args...))
	e.res.Commands = append(e.res.Commands, cmd)
	fail := func(err error) error {
		msg := err.Error()
		// kustomize's Go types live in its package "types"
		msg = strings.ReplaceAll(msg, " of type kustfile.", " of type types.")
		return fmt.Errorf("`%s` failed exit status 1: Error: %s", cmd, msg)
	}
	if err := e.load(); err != nil {
		return fail(err)
	}
	out, err := e.apply(op)
	if err != nil {
		return fail(err)
	}
	e.data = out
	return nil
}

// apply runs op through kustfile on the current content.
func (e *editor) apply(op func(k *loaders.Kustomization) error) ([]byte, error) {
	f, k, err := kustfile.OpenData(e.name, e.data, 0o644)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), e.name+": "))
	}
	if err := op(k); err != nil {
		return nil, err
	}
	return f.Marshal(k)
}

// glob expands component paths as `kustomize edit add component` does,
// reading the checkout: a plain path must exist (it is kept as written),
// a pattern keeps its matches (hidden names only for a hidden pattern);
// no match is kustomize's error.
func (e *editor) glob(patterns []string) ([]string, error) {
	var out []string
	for _, p := range patterns {
		full := path.Join(e.appDir, p)
		outside := full == ".." || strings.HasPrefix(full, "../")
		var matches []string
		if !strings.ContainsAny(p, `*?[\`) {
			if !outside {
				if _, err := fs.Lstat(e.co.FS, full); err == nil {
					matches = []string{p}
				}
			}
		} else if !outside {
			ms, err := fs.Glob(e.co.FS, full)
			if err != nil {
				return nil, fmt.Errorf("error checking the filesystem: %w", err)
			}
			for _, m := range ms {
				if strings.HasPrefix(path.Base(m), ".") && !strings.HasPrefix(path.Base(p), ".") {
					continue
				}
				rel, err := filepath.Rel(e.appDir, m)
				if err != nil {
					return nil, err
				}
				matches = append(matches, filepath.ToSlash(rel))
			}
		}
		if len(matches) == 0 {
			shown := e.co.Display(full)
			if outside {
				shown = filepath.ToSlash(filepath.Join(e.co.Display(e.appDir), p))
			}
			return nil, fmt.Errorf("%s has no match: must build at directory: not a valid directory: evalsymlink failure on '%s' : lstat %s: no such file or directory", p, shown, shown)
		}
		out = append(out, matches...)
	}
	return out, nil
}

// patches appends the source's patches to the file's patches list and
// writes the whole file as sigs.k8s.io/yaml marshals a map: every number
// through float64, keys sorted, comments dropped.
func (e *editor) patches(ps []app.KustomizePatch) error {
	if e.name == "" {
		found := ""
		for _, n := range kustfile.FileNames {
			if _, err := fs.Stat(e.co.FS, path.Join(e.appDir, n)); err == nil {
				found = n
				break
			}
		}
		if found == "" {
			return errors.New("kustomization file not found in the path")
		}
		data, err := fs.ReadFile(e.co.FS, path.Join(e.appDir, found))
		if err != nil {
			return fmt.Errorf("failed to load kustomization.yaml: %w", err)
		}
		e.name, e.data = found, data
	}
	j, err := manifest.YAMLToJSON(e.data)
	if err != nil {
		return fmt.Errorf("failed to unmarshal kustomization.yaml: %w", err)
	}
	var doc any
	if err := json.Unmarshal(j, &doc); err != nil {
		return fmt.Errorf("failed to unmarshal kustomization.yaml: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("expected kustomization.yaml to be type map[string]any, but got %T", m)
	}
	var add []any
	for _, p := range ps {
		add = append(add, p)
	}
	if old, ok := m["patches"]; ok {
		list, ok := old.([]any)
		if !ok {
			return fmt.Errorf("expected 'patches' field in kustomization.yaml to be []any, but got %T", old)
		}
		m["patches"] = append(list, add...)
	} else {
		m["patches"] = ps
	}
	out, err := sigsyaml.Marshal(m)
	if err != nil {
		return fmt.Errorf("failed to marshal kustomization.yaml after adding patches: %w", err)
	}
	e.data = out
	return nil
}

// BuildArgs is the `kustomize build` argument list (without the program
// name) the repo-server runs for appDir (named as co names it): the build
// options split on white space and, when they enable helm, the source's
// or cluster's kube version and API versions as --helm-kube-version and
// --helm-api-versions (kustomize >= 5.3.0). kubeVersion must be parsed
// (app.ParseKubeVersion).
func BuildArgs(co app.Checkout, appDir, buildOptions, kubeVersion string, apiVersions []string) []string {
	args := []string{"build", co.Display(appDir)}
	if buildOptions == "" {
		return args
	}
	args = append(args, strings.Fields(buildOptions)...)
	if strings.Contains(buildOptions, "--enable-helm") {
		if kubeVersion != "" {
			args = append(args, "--helm-kube-version", kubeVersion)
		}
		for _, v := range apiVersions {
			args = append(args, "--helm-api-versions", v)
		}
	}
	return args
}
