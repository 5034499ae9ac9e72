package generate

import (
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/loaders"
)

// kustomizationFileNames are the names kustomize recognizes, in the order
// it looks for them.
var kustomizationFileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Options are the flux build settings the generation reads.
type Options struct {
	// IgnorePaths are --ignore-paths: gitignore patterns scoped to the path,
	// after (so above) those of the .sourceignore files.
	IgnorePaths []string
	// CheckResources parses a YAML file found while listing a path that has
	// no kustomization file, as kustomize parses a resource file, and
	// returns its error (kustomize's wording). Nil is CheckResources.
	CheckResources func(data []byte) error
	// InMemoryBuild words the errors as flux build --in-memory-build does
	// (its backend has nothing to clean up after a failed generation).
	InMemoryBuild bool
}

// Result is the kustomization flux builds for a path.
type Result struct {
	// File is where flux writes Manifest: the path's existing kustomization
	// file (kustomization.yaml, kustomization.yml or Kustomization, which
	// keeps its name), or the path's kustomization.yaml when it had none.
	// kpipe writes nothing: the build reads Manifest in its place.
	File string
	// Created is whether the path had no kustomization file.
	Created bool
	// Manifest is the kustomization file's content.
	Manifest []byte
	// Reads is what the generation read (also on error).
	Reads Reads
}

// Generate computes the kustomization `flux build kustomization` builds for
// the directory dir (absolute) and the Flux Kustomization k
// (fluxcd/pkg/kustomize's generator with flux build's ignore filtering),
// reading the tree through fsys and writing nothing:
//
//   - the path's kustomization file, re-encoded through kustomize v5.8.1's
//     types (unknown fields dropped, YAML 1.1 scalars coerced to strings,
//     comments gone), with buildMetadata: [originAnnotations] when it has
//     no resources; or, when there is none, one listing the path's YAML
//     files and the directories below it holding a kustomization (each
//     YAML file must parse as Kubernetes objects unless ignored), with
//     namespace _placeholder when there is nothing to list;
//   - resources, components and crds that are ignored (.sourceignore files
//     under the path, --ignore-paths, Flux's default patterns) are
//     dropped, and each that is not a URL must exist (lstat);
//   - then the Flux object's targetNamespace, namePrefix, nameSuffix,
//     patches, components (local and relative; missing ones dropped with
//     ignoreMissingComponents), images (merged by name) and buildMetadata.
//
// Errors are flux's, without its "✗ " prefix: "failed to generate
// kustomization.yaml: <what> <nil>" (or, when the path had no
// kustomization file and the error came after listing it, "... <what>
// remove <dir>/kustomization.yaml: no such file or directory", flux's
// failed cleanup).
func Generate(fsys flux.FS, k *flux.Kustomization, dir string, o Options) (*Result, error) {
	r := newRecorder(fsys)
	res, err := generate(r, k, filepath.Clean(dir), o)
	if res == nil {
		res = &Result{}
	}
	res.Reads = r.reads()
	if err != nil {
		// flux2's Builder prints the generator's error and its cleanup's
		// together: the on-disk backend removes the kustomization.yaml it
		// would have created, which a failed generation never wrote.
		var cleanup error
		if res.Created && !o.InMemoryBuild {
			cleanup = &fs.PathError{Op: "remove", Path: filepath.Join(filepath.Clean(dir), kustomizationFileNames[0]), Err: syscall.ENOENT}
		}
		return res, fmt.Errorf("failed to generate kustomization.yaml: %v %v", err, cleanup)
	}
	return res, nil
}

func generate(r *recorder, k *flux.Kustomization, dir string, o Options) (*Result, error) {
	domain := splitPath(dir)
	patterns, err := loadIgnorePatterns(r, dir, domain)
	if err != nil {
		return nil, fmt.Errorf("failed to load ignore patterns: %w", err)
	}
	if len(o.IgnorePaths) > 0 {
		patterns = append(patterns, readPatterns(strings.Join(o.IgnorePaths, "\n"), domain)...)
	}
	check := o.CheckResources
	if check == nil {
		check = CheckResources
	}
	data, kfile, created, err := findOrGenerate(r, dir, patterns, domain, check)
	if err != nil {
		// The generator reports these with its "unchanged" action.
		return nil, err
	}
	res := &Result{File: kfile, Created: created}

	kus, err := decodeKustomization(data)
	if err != nil {
		return res, err
	}
	if !created && len(kus.Resources) == 0 {
		// Flux's way around kustomize's "kustomization.yaml is empty".
		kus.BuildMetadata = []string{"originAnnotations"}
	}
	if err := filterIgnored(r, kus, dir, patterns, domain); err != nil {
		return res, err
	}

	spec := &k.Spec
	if spec.TargetNamespace != "" {
		kus.Namespace = spec.TargetNamespace
	}
	if spec.NamePrefix != "" {
		kus.NamePrefix = spec.NamePrefix
	}
	if spec.NameSuffix != "" {
		kus.NameSuffix = spec.NameSuffix
	}
	for _, p := range spec.Patches {
		kus.Patches = append(kus.Patches, loaders.Patch{Patch: p.Patch, Target: adaptSelector(p.Target)})
	}
	for _, c := range spec.Components {
		if !IsLocalRelativePath(c) {
			return res, fmt.Errorf("component path '%s' must be local and relative", c)
		}
		if !r.exists(filepath.Join(dir, c)) && spec.IgnoreMissingComponents {
			continue
		}
		kus.Components = append(kus.Components, c)
	}
	for _, image := range spec.Images {
		if i := imageIndex(kus.Images, image.Name); i >= 0 {
			// Fields set only in the file survive; newTag and digest are
			// replaced together.
			if image.NewName != "" {
				kus.Images[i].NewName = image.NewName
			}
			if image.NewTag != "" || image.Digest != "" {
				kus.Images[i].NewTag = image.NewTag
				kus.Images[i].Digest = image.Digest
			}
			continue
		}
		kus.Images = append(kus.Images, loaders.Image{Name: image.Name, NewName: image.NewName, NewTag: image.NewTag, Digest: image.Digest})
	}
	if len(spec.BuildMetadata) > 0 {
		kus.BuildMetadata = nil
		for _, b := range spec.BuildMetadata {
			kus.BuildMetadata = append(kus.BuildMetadata, string(b))
		}
	}
	manifest, err := yaml.Marshal(kus)
	if err != nil {
		return res, err
	}
	res.Manifest = manifest
	return res, nil
}

// findOrGenerate returns the path's kustomization file, or one generated
// from the path's files.
func findOrGenerate(r *recorder, dir string, patterns []*pattern, domain []string, check func([]byte) error) (data []byte, kfile string, created bool, err error) {
	for _, name := range kustomizationFileNames {
		kpath := filepath.Join(dir, name)
		if r.isFile(kpath) {
			data, err := r.readFile(kpath)
			return data, kpath, false, err
		}
	}
	files, err := scanManifests(r, dir, patterns, domain, check)
	if err != nil {
		return nil, "", true, err
	}
	kus := loaders.Kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization"}
	for _, f := range files {
		kus.Resources = append(kus.Resources, strings.Replace(f, dir, ".", 1))
	}
	if len(kus.Resources) == 0 {
		kus.Namespace = "_placeholder"
	}
	data, err = yaml.Marshal(kus)
	return data, filepath.Join(dir, kustomizationFileNames[0]), true, err
}

// scanManifests lists, in filepath.Walk's order, the YAML files under base
// that are not ignored and the directories holding a kustomization file
// (not descended into); every YAML file listed must parse.
func scanManifests(r *recorder, base string, patterns []*pattern, domain []string, check func([]byte) error) ([]string, error) {
	var paths []string
	err := walk(r, base, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if path == base {
			return nil
		}
		if info.IsDir() {
			for _, name := range kustomizationFileNames {
				if r.isFile(filepath.Join(path, name)) {
					paths = append(paths, path)
					return filepath.SkipDir
				}
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		if shouldIgnoreFile(r, path, patterns, domain) {
			return nil
		}
		data, err := r.readFile(path)
		if err != nil {
			return err
		}
		if err := checkRecovered(check, data, path); err != nil {
			return err
		}
		paths = append(paths, path)
		return nil
	})
	return paths, err
}

// checkRecovered runs check, turning a panic into flux's error.
func checkRecovered(check func([]byte) error, data []byte, path string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("recovered from panic while parsing YAML file %s: %v", filepath.Base(path), v)
		}
	}()
	if err := check(data); err != nil {
		return fmt.Errorf("failed to decode Kubernetes YAML from %s: %w", path, err)
	}
	return nil
}

// walk is filepath.Walk over the recorder: lexical order, symlinks not
// followed (a symlink is visited as what Lstat says it is).
func walk(r *recorder, root string, fn filepath.WalkFunc) error {
	info, err := r.lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkDir(r, root, info, fn)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

func walkDir(r *recorder, path string, info fs.FileInfo, fn filepath.WalkFunc) error {
	if !info.IsDir() {
		return fn(path, info, nil)
	}
	entries, err := r.readDir(path)
	err1 := fn(path, info, err)
	if err != nil || err1 != nil {
		return err1
	}
	for _, e := range entries {
		name := filepath.Join(path, e.Name())
		fi, err := r.lstat(name)
		if err != nil {
			if err := fn(name, fi, err); err != nil && err != filepath.SkipDir {
				return err
			}
			continue
		}
		if err := walkDir(r, name, fi, fn); err != nil {
			if !fi.IsDir() || err != filepath.SkipDir {
				return err
			}
		}
	}
	return nil
}

// shouldIgnoreFile: with at least one pattern (a .sourceignore line or an
// --ignore-paths entry), whether the default patterns and those ignore
// the file. Without any, nothing is ignored, not even a .sops.yaml.
func shouldIgnoreFile(r *recorder, path string, patterns []*pattern, domain []string) bool {
	if len(patterns) == 0 {
		return false
	}
	info, err := r.lstat(path)
	if err != nil {
		return false
	}
	return defaultMatcher(patterns, domain).Match(splitPath(path), info.IsDir())
}

// filterIgnored drops the ignored entries of resources, components and
// crds (the default patterns always apply here); an entry that is not a
// URL (crds: any entry) must exist.
func filterIgnored(r *recorder, kus *loaders.Kustomization, dir string, patterns []*pattern, domain []string) error {
	m := defaultMatcher(patterns, domain)
	for _, l := range []struct {
		list *[]string
		crds bool
	}{{&kus.Resources, false}, {&kus.Components, false}, {&kus.Crds, true}} {
		kept := (*l.list)[:0]
		for _, entry := range *l.list {
			if l.crds || !isURL(entry) {
				f := filepath.Join(dir, entry)
				info, err := r.lstat(f)
				if err != nil {
					return err
				}
				if m.Match(splitPath(f), info.IsDir()) {
					continue
				}
			}
			kept = append(kept, entry)
		}
		*l.list = kept
	}
	return nil
}

func isURL(s string) bool {
	u, err := url.ParseRequestURI(s)
	return err == nil && u.Scheme != ""
}

// IsLocalRelativePath reports whether a component path is local and
// relative, as Flux requires (kustomize's remote-spec prefixes, absolute
// paths and file:// absolute paths are not).
func IsLocalRelativePath(path string) bool {
	for _, p := range []string{"git::", "gh:", "ssh://", "https://", "http://", "git@", "github.com:", "github.com/"} {
		if len(p) < len(path) && strings.ToLower(path[:len(p)]) == p {
			return false
		}
	}
	return !filepath.IsAbs(path) && !filepath.IsAbs(strings.TrimPrefix(strings.ToLower(path), "file://"))
}

func adaptSelector(s *flux.Selector) *loaders.Selector {
	if s == nil {
		return nil
	}
	return &loaders.Selector{Group: s.Group, Version: s.Version, Kind: s.Kind, Name: s.Name, Namespace: s.Namespace,
		LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector}
}

func imageIndex(images []loaders.Image, name string) int {
	for i, im := range images {
		if im.Name == name {
			return i
		}
	}
	return -1
}
