package kustfile

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/loaders"
)

// GeneratorFlags are the flags of `edit add|set configmap|secret`.
type GeneratorFlags struct {
	Name                  string
	FileSources           []string
	LiteralSources        []string
	EnvFileSource         string
	Behavior              string
	Type                  string // secrets only
	Namespace             string
	NewNamespace          string // set only
	DisableNameSuffixHash bool
}

// ExpandFileSources expands the globs of --from-file ([key=]pattern)
// relative to dir; a keyed pattern must match exactly one file.
func (g *GeneratorFlags) ExpandFileSources(dir string) error {
	var out []string
	for _, src := range g.FileSources {
		key, pattern := "", src
		if s := strings.Split(src, "="); len(s) == 2 {
			key, pattern = s[0], s[1]
		} else {
			pattern = s[0]
		}
		rel, err := globIn(dir, pattern)
		if err != nil {
			return fmt.Errorf("failed to expand file source: %w", err)
		}
		if key != "" {
			if len(rel) != 1 {
				return fmt.Errorf("failed to expand file source: 'pattern '%s' catches files %v, should catch only one", src, rel)
			}
			out = append(out, key+"="+rel[0])
			continue
		}
		out = append(out, rel...)
	}
	g.FileSources = out
	return nil
}

// ValidateAdd checks the flags of an add command.
func (g *GeneratorFlags) ValidateAdd(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("failed to validate flags: name must be specified once")
	}
	g.Name = args[0]
	if g.EnvFileSource == "" && len(g.FileSources) == 0 && len(g.LiteralSources) == 0 {
		return fmt.Errorf("failed to validate flags: at least from-env-file, or from-file or from-literal must be set")
	}
	if g.EnvFileSource != "" && (len(g.FileSources) > 0 || len(g.LiteralSources) > 0) {
		return fmt.Errorf("failed to validate flags: from-env-file cannot be combined with from-file or from-literal")
	}
	switch g.Behavior {
	case "", "create", "merge", "replace":
	default:
		return fmt.Errorf(`failed to validate flags: invalid behavior: must be one of "create", "merge", or "replace"`)
	}
	return nil
}

// ValidateSet checks the flags of a set command.
func (g *GeneratorFlags) ValidateSet(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("failed to validate flags: name must be specified once")
	}
	g.Name = args[0]
	if len(g.LiteralSources) == 0 && g.NewNamespace == "" {
		return fmt.Errorf("failed to validate flags: at least one of [--from-literal, --new-namespace] must be specified")
	}
	return nil
}

// namespaceEqual treats "" and "default" as the same namespace.
func namespaceEqual(a, b string) bool {
	if a == "" {
		a = "default"
	}
	if b == "" {
		b = "default"
	}
	return a == b
}

func (g *GeneratorFlags) mergeInto(a *loaders.GeneratorArgs) {
	a.Literals = append(a.Literals, g.LiteralSources...)
	a.Files = append(a.Files, g.FileSources...)
	if g.EnvFileSource != "" {
		a.Envs = append(a.Envs, g.EnvFileSource)
	}
	if g.DisableNameSuffixHash {
		a.Options = &loaders.GeneratorOptions{DisableNameSuffixHash: true}
	}
	if g.Behavior != "" {
		a.Behavior = g.Behavior
	}
}

// mergeGlobalOptions copies the kustomization's generatorOptions into a
// generator's options, as kustomize does (and writes) when it adds or
// sets a generator.
func mergeGlobalOptions(local, global *loaders.GeneratorOptions) *loaders.GeneratorOptions {
	if global == nil {
		return local
	}
	if local == nil {
		local = &loaders.GeneratorOptions{}
	}
	override := func(l *map[string]string, g map[string]string) {
		if *l == nil {
			if g != nil {
				*l = map[string]string{}
				for k, v := range g {
					(*l)[k] = v
				}
			}
			return
		}
		for k, v := range g {
			if _, ok := (*l)[k]; !ok {
				(*l)[k] = v
			}
		}
	}
	override(&local.Labels, global.Labels)
	override(&local.Annotations, global.Annotations)
	if global.DisableNameSuffixHash {
		local.DisableNameSuffixHash = true
	}
	if global.Immutable {
		local.Immutable = true
	}
	return local
}

// AddConfigMap adds to (or creates) the configMapGenerator entry named by
// the flags, then checks that the generator can be built from dir.
func AddConfigMap(k *loaders.Kustomization, g GeneratorFlags, dir string) error {
	i := slices.IndexFunc(k.ConfigMapGenerator, func(c loaders.GeneratorArgs) bool {
		return c.Name == g.Name && namespaceEqual(c.Namespace, g.Namespace)
	})
	if i < 0 {
		k.ConfigMapGenerator = append(k.ConfigMapGenerator, loaders.GeneratorArgs{Name: g.Name, Namespace: g.Namespace})
		i = len(k.ConfigMapGenerator) - 1
	}
	a := &k.ConfigMapGenerator[i]
	g.mergeInto(a)
	a.Options = mergeGlobalOptions(a.Options, k.GeneratorOptions)
	if err := checkSources(a, dir); err != nil {
		return fmt.Errorf("failed to create configmap: %w", err)
	}
	return nil
}

// AddSecret adds to (or creates) the secretGenerator entry named by the
// flags, then checks that the generator can be built from dir.
func AddSecret(k *loaders.Kustomization, g GeneratorFlags, dir string) error {
	i := slices.IndexFunc(k.SecretGenerator, func(s loaders.GeneratorArgs) bool {
		return s.Name == g.Name && namespaceEqual(s.Namespace, g.Namespace)
	})
	if i < 0 {
		k.SecretGenerator = append(k.SecretGenerator, loaders.GeneratorArgs{Name: g.Name, Namespace: g.Namespace, Type: g.Type})
		i = len(k.SecretGenerator) - 1
	}
	a := &k.SecretGenerator[i]
	g.mergeInto(a)
	a.Options = mergeGlobalOptions(a.Options, k.GeneratorOptions)
	if err := checkSources(a, dir); err != nil {
		return fmt.Errorf("failed to create secret: %w", err)
	}
	return nil
}

// SetConfigMap changes literal values and the namespace of an existing
// configMapGenerator entry.
func SetConfigMap(k *loaders.Kustomization, g GeneratorFlags, dir string) error {
	i := slices.IndexFunc(k.ConfigMapGenerator, func(c loaders.GeneratorArgs) bool {
		return c.Name == g.Name && namespaceEqual(g.Namespace, c.Namespace)
	})
	if i < 0 {
		return fmt.Errorf("failed to create configmap: could not set new ConfigMap value: unable to find ConfigMap with name %q", g.Name)
	}
	return setGenerator(&k.ConfigMapGenerator[i], k, g, dir, "ConfigMap")
}

// SetSecret changes literal values and the namespace of an existing
// secretGenerator entry.
func SetSecret(k *loaders.Kustomization, g GeneratorFlags, dir string) error {
	i := slices.IndexFunc(k.SecretGenerator, func(s loaders.GeneratorArgs) bool {
		return s.Name == g.Name && namespaceEqual(g.Namespace, s.Namespace)
	})
	if i < 0 {
		return fmt.Errorf("failed to create secret: could not set new Secret value: unable to find Secret with name %q", g.Name)
	}
	return setGenerator(&k.SecretGenerator[i], k, g, dir, "Secret")
}

// setGenerator updates literals in place: every key given must exist.
// kustomize rebuilds the list from a Go map, in random order; kpipe keeps
// the entries' order, which is one of the orders kustomize can produce.
func setGenerator(a *loaders.GeneratorArgs, k *loaders.Kustomization, g GeneratorFlags, dir, kind string) error {
	if len(g.LiteralSources) > 0 {
		keys := make([]string, len(a.Literals))
		vals := map[string]string{}
		for i, s := range a.Literals {
			key, v, err := literalKV(s)
			if err != nil {
				return fmt.Errorf("failed to update literal sources: failed to update resource: %w", err)
			}
			keys[i], vals[key] = key, v
		}
		for _, s := range g.LiteralSources {
			key, v, err := literalKV(s)
			if err != nil {
				return fmt.Errorf("failed to update literal sources: failed to update resource: %w", err)
			}
			if _, ok := vals[key]; !ok {
				return fmt.Errorf("failed to update literal sources: key '%s' not found in resource", key)
			}
			vals[key] = v
		}
		out := []string{}
		for _, key := range keys {
			if _, ok := vals[key]; ok {
				out = append(out, key+"="+vals[key])
				delete(vals, key)
			}
		}
		a.Literals = out
	}
	if g.NewNamespace != "" {
		a.Namespace = g.NewNamespace
	}
	a.Options = mergeGlobalOptions(a.Options, k.GeneratorOptions)
	if err := checkSources(a, dir); err != nil {
		return fmt.Errorf("failed to validate %s structure: %w", kind, err)
	}
	return nil
}

// literalKV splits key=value with exactly one '=' (as `set` requires).
func literalKV(s string) (string, string, error) {
	if strings.Count(s, "=") != 1 {
		return "", "", fmt.Errorf("invalid format: literal values must be specified in the key=value format")
	}
	k, v, _ := strings.Cut(s, "=")
	return k, v, nil
}

var (
	configMapKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-._a-zA-Z0-9]+$`) })
	envVarName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`) })
)

// checkSources checks that a generator's sources can be read and give
// valid, distinct keys, as kustomize checks by building it.
func checkSources(a *loaders.GeneratorArgs, dir string) error {
	seen := map[string]bool{}
	add := func(key string) error {
		if len(key) > 253 || !configMapKey().MatchString(key) {
			return fmt.Errorf("%q is not a valid key name for a ConfigMap or Secret", key)
		}
		if seen[key] {
			return fmt.Errorf("cannot add key %q, another key by that name already exists", key)
		}
		seen[key] = true
		return nil
	}
	for _, p := range a.Envs {
		data, err := fsread.File(filepath.Join(dir, p))
		if err != nil {
			return fmt.Errorf("env source files: [%s]: %w", p, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimLeft(sc.Text(), " \t\r\n\v\f")
			if line == "" || line[0] == '#' {
				continue
			}
			key, _, _ := strings.Cut(line, "=")
			if !envVarName().MatchString(key) {
				return fmt.Errorf("env source files: [%s]: %q is not a valid environment variable name", p, key)
			}
			if err := add(key); err != nil {
				return err
			}
		}
	}
	for _, s := range a.Literals {
		if strings.Index(s, "=") <= 0 {
			return fmt.Errorf("literal sources %v: invalid literal source %v, expected key=value", a.Literals, s)
		}
		key, _, _ := strings.Cut(s, "=")
		if err := add(key); err != nil {
			return err
		}
	}
	for _, s := range a.Files {
		key, path := filepath.Base(s), s
		if k, p, ok := strings.Cut(s, "="); ok {
			if k == "" || p == "" {
				return fmt.Errorf("file sources: [%s]: key and file path must not be empty", s)
			}
			key, path = k, p
		}
		if _, err := fsread.File(filepath.Join(dir, path)); err != nil {
			return fmt.Errorf("file sources: [%s]: %w", s, err)
		}
		if err := add(key); err != nil {
			return err
		}
	}
	return nil
}

// RemoveGenerators removes the named configMapGenerator (secret false) or
// secretGenerator entries in namespace; it is an error when none is found,
// and warn reports each name that was not.
func RemoveGenerators(k *loaders.Kustomization, names []string, namespace string, secret bool, warn func(string)) error {
	found := map[string]bool{}
	match := func(name, ns string) bool {
		if slices.Contains(names, name) && namespaceEqual(ns, namespace) {
			found[name] = true
			return true
		}
		return false
	}
	kind := "configmap"
	if secret {
		kind = "secret"
		k.SecretGenerator = slices.DeleteFunc(k.SecretGenerator, func(s loaders.GeneratorArgs) bool { return match(s.Name, s.Namespace) })
	} else {
		k.ConfigMapGenerator = slices.DeleteFunc(k.ConfigMapGenerator, func(c loaders.GeneratorArgs) bool { return match(c.Name, c.Namespace) })
	}
	if len(found) == 0 {
		return fmt.Errorf("no specified %s(s) were found in the kustomization.yaml file", kind)
	}
	for _, n := range names {
		if !found[n] {
			warn(fmt.Sprintf("%s %s doesn't exist in kustomization file", kind, n))
		}
	}
	return nil
}

// AddPatch appends p to patches unless an equal patch is there (then it
// reports false and the file should stay as it is).
func AddPatch(k *loaders.Kustomization, p loaders.Patch) (bool, error) {
	if p.Patch != "" && p.Path != "" {
		return false, fmt.Errorf("patch and path can't be set at the same time")
	}
	if p.Patch == "" && p.Path == "" {
		return false, fmt.Errorf("must provide either patch or path")
	}
	if p.Target != nil && *p.Target == (loaders.Selector{}) {
		p.Target = nil
	}
	for _, have := range k.Patches {
		if samePatch(have, p) {
			return false, nil
		}
	}
	k.Patches = append(k.Patches, p)
	return true, nil
}

// samePatch reports whether two patches are the same, as kustomize
// compares them for `add patch` and `remove patch`.
func samePatch(p, o loaders.Patch) bool {
	targetEqual := p.Target == o.Target || (p.Target != nil && o.Target != nil && *p.Target == *o.Target)
	optionsEqual := p.Options == o.Options || (p.Options != nil && o.Options != nil && *p.Options == *o.Options)
	return p.Path == o.Path && p.Patch == o.Patch && targetEqual && optionsEqual
}

// RemovePatch removes the patches equal to p; false when there was none.
func RemovePatch(k *loaders.Kustomization, p loaders.Patch) (bool, error) {
	if p.Patch != "" && p.Path != "" {
		return false, fmt.Errorf("patch and path can't be set at the same time")
	}
	if p.Target != nil && *p.Target == (loaders.Selector{}) {
		p.Target = nil
	}
	var keep []loaders.Patch
	for _, have := range k.Patches {
		if !samePatch(have, p) {
			keep = append(keep, have)
		}
	}
	if len(keep) == len(k.Patches) {
		return false, nil
	}
	k.Patches = keep
	return true, nil
}
