// Package source decides what kind of source an Application source is and
// with which options, as Argo CD v3.6.1's repo-server does before it
// generates anything: the app path check (apppathutil.Path), the
// out-of-bounds symlink check, the .argocd-source.yaml and
// .argocd-source-<app>.yaml merge (an RFC 7386 JSON merge patch over the
// source's JSON), the explicit type and, without one, the discovery walk
// (a file named *Chart.yaml means Helm, a kustomization file Kustomize,
// the later in lexical order winning; anything else is Directory).
//
// It reads through io/fs (a checkout on disk, a git revision) and imports
// kpipe's internal/argocd/app and manifest, and evanphx/json-patch (the
// merge patch Argo CD runs).
package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
)

// Type is a source type as Argo CD names it.
type Type string

// The source types.
const (
	Kustomize Type = "Kustomize"
	Helm      Type = "Helm"
	Directory Type = "Directory"
	Plugin    Type = "Plugin"
)

// AppPath checks a source's path as apppathutil.Path does and returns the
// app directory as a slash path relative to the checkout's root ("." for
// the root). Errors are Argo CD's ("<p>: app path does not exist", ...).
func AppPath(fsys fs.FS, p string) (string, error) {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || len(p) > 1 && p[1] == ':' {
		return "", fmt.Errorf("%s: app path is absolute", p)
	}
	rel := path.Clean("./" + strings.ReplaceAll(p, `\`, "/"))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s: app path outside root", p)
	}
	fi, err := fs.Stat(fsys, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: app path does not exist", p)
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: app path is not a directory", p)
	}
	return rel, nil
}

// SymlinkChecker is a tree that answers CheckSymlinks itself (once for
// every Application rendered from it, say).
type SymlinkChecker interface {
	CheckSymlinks() error
}

// CheckSymlinks is the repo-server's out-of-bounds symlink check: any
// symlink (outside .git) that is absolute or points outside the tree is
// an error naming it. A tree without symlinks (fsys not an
// fs.ReadLinkFS) passes; a SymlinkChecker answers for itself.
func CheckSymlinks(fsys fs.FS) error {
	if c, ok := fsys.(SymlinkChecker); ok {
		return c.CheckSymlinks()
	}
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok {
		return nil
	}
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == ".git" {
			return fs.SkipDir
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := rl.ReadLink(p)
		if err != nil {
			return err
		}
		t := path.Join(path.Dir(p), target)
		if strings.HasPrefix(target, "/") || t == ".." || strings.HasPrefix(t, "../") {
			return fmt.Errorf("repository contains out-of-bounds symlinks. file: %s", p)
		}
		return nil
	})
}

// MergeParameters applies <appDir>/.argocd-source.yaml, then
// <appDir>/.argocd-source-<instanceName>.yaml, to src as Argo CD's
// mergeSourceParameters does: each file (YAML) is a JSON merge patch over
// the source's JSON; chart, path, repoURL and targetRevision are then
// restored. It returns the files it applied. Errors name the file as
// co.Display does and are wrapped as GetAppSourceType wraps them.
func MergeParameters(co app.Checkout, appDir string, src *app.ApplicationSource, instanceName string) ([]string, error) {
	files := []string{path.Join(appDir, ".argocd-source.yaml")}
	if instanceName != "" {
		files = append(files, path.Join(appDir, ".argocd-source-"+instanceName+".yaml"))
	}
	merged := *src
	var used []string
	for _, f := range files {
		fi, err := fs.Stat(co.FS, f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err == nil && fi.IsDir():
			continue
		case err != nil:
			return nil, fmt.Errorf("error while parsing source parameters: %w", err)
		}
		fail := func(err error) error {
			return fmt.Errorf("error while parsing source parameters: %s: %w", co.Display(f), err)
		}
		data, err := json.Marshal(merged)
		if err != nil {
			return nil, fail(err)
		}
		patch, err := fs.ReadFile(co.FS, f)
		if err != nil {
			return nil, fail(err)
		}
		pj, err := manifest.YAMLToJSON(patch)
		if err != nil {
			return nil, fail(err)
		}
		data, err = jsonpatch.MergePatch(data, pj)
		if err != nil {
			return nil, fail(err)
		}
		var next app.ApplicationSource
		if err := json.Unmarshal(data, &next); err != nil {
			return nil, fail(err)
		}
		merged = next
		used = append(used, f)
	}
	merged.Chart, merged.Path, merged.RepoURL, merged.TargetRevision = src.Chart, src.Path, src.RepoURL, src.TargetRevision
	*src = merged
	return used, nil
}

// ExplicitType is the type the source's options name, if any; two or
// more is Argo CD's error.
func ExplicitType(src *app.ApplicationSource) (Type, error) {
	var ts []string
	if src.Kustomize != nil {
		ts = append(ts, string(Kustomize))
	}
	if src.Helm != nil {
		ts = append(ts, string(Helm))
	}
	if src.Directory != nil {
		ts = append(ts, string(Directory))
	}
	if src.Plugin != nil {
		ts = append(ts, string(Plugin))
	}
	switch len(ts) {
	case 0:
		return "", nil
	case 1:
		return Type(ts[0]), nil
	}
	return "", fmt.Errorf("multiple application sources defined: %s", strings.Join(ts, ","))
}

// IsKustomization reports a kustomization file name.
func IsKustomization(name string) bool {
	return name == "kustomization.yaml" || name == "kustomization.yml" || name == "Kustomization"
}

// Discover is discovery.AppType without plugins: only the app directory's
// own files decide (a walk of the whole tree records the others and
// ignores them), in lexical order, a name ending in "Chart.yaml" setting
// Helm and a kustomization file Kustomize, the last one seen winning;
// neither is Directory. Symlinks count by their own names.
func Discover(fsys fs.FS, appDir string) (Type, error) {
	ents, err := fs.ReadDir(fsys, appDir)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	t := Directory
	for _, n := range names {
		if strings.HasSuffix(n, "Chart.yaml") {
			t = Helm
		}
		if IsKustomization(n) {
			t = Kustomize
		}
	}
	return t, nil
}

// Detect is GetAppSourceType: it merges the parameter files into src
// (src is changed), then returns the explicit type or the discovered one.
// Errors are worded as GenerateManifests returns them ("error getting app
// source type: ...").
func Detect(co app.Checkout, appDir string, src *app.ApplicationSource, instanceName string) (Type, error) {
	if _, err := MergeParameters(co, appDir, src, instanceName); err != nil {
		return "", fmt.Errorf("error getting app source type: %w", err)
	}
	t, err := ExplicitType(src)
	if err != nil {
		return "", fmt.Errorf("error getting app source type: %w", err)
	}
	if t != "" {
		return t, nil
	}
	t, err = Discover(co.FS, appDir)
	if err != nil {
		return "", fmt.Errorf("error getting app source type: error getting app source type: %w", err)
	}
	return t, nil
}
