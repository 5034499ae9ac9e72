package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/plugins"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// pluginStage configures the stage of one plugin config listed under
// generators, transformers or validators (entry is the list entry it came
// from): a builtin stage for `apiVersion: builtin`, else an external
// plugin (package plugins). A node that runs an external plugin is not
// memoized as a whole (see memo.volatile); its plugin stages are, under
// keys covering the executable and its environment.
func (b *Builder) pluginStage(ctx context.Context, n *Node, entry string, c *resource.Resource, role plugins.Role) (stages.Stage, error) {
	if plugins.IsBuiltin(c) {
		if role == plugins.Generator {
			return b.builtinGenerator(ctx, n, c)
		}
		return b.builtinStage(n, c)
	}
	if role != plugins.Validator {
		if s, ok, err := b.definedStage(n, c); ok {
			return s, err
		}
	}
	if b.memo != nil {
		b.memo.setVolatile(n)
	}
	var dir string
	if b.opts.EnableAlphaPlugins { // (else refused: no copy of a tree not on disk)
		var err error
		if dir, err = b.pluginDir(n, c); err != nil {
			return nil, err
		}
	}
	return plugins.Load(plugins.Config{
		Object: c,
		Role:   role,
		Dir:    dir,
		Source: configSource(n, entry),
		Read:   readFile(n),
	}, b.pluginOptions())
}

// pluginDir is the directory on disk a plugin configured by c in n runs
// in: n's own, or, for a node of a tree that is not on disk, a copy of it
// (realDirs), with the executable of an exec function that lies outside
// it.
func (b *Builder) pluginDir(n *Node, c *resource.Resource) (string, error) {
	fsys := n.Loader.FS()
	if fsys == loaders.Disk {
		return n.Dir, nil
	}
	dir, err := b.real.dir(fsys, n.Dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", n.File.Path, err)
	}
	if p := plugins.ExecPath(c); strings.Contains(p, "/") && !filepath.IsAbs(p) {
		if abs := filepath.Join(n.Dir, filepath.FromSlash(p)); !loaders.Within(n.Dir, abs) {
			_, _ = b.real.file(fsys, abs) // (a missing one: the plugin says so)
		}
	}
	return dir, nil
}

// pluginOptions are the plugin settings of the build.
func (b *Builder) pluginOptions() plugins.Options {
	return plugins.Options{
		EnableAlpha: b.opts.EnableAlphaPlugins,
		EnableExec:  b.opts.EnableExec,
		Timeout:     b.opts.PluginTimeout,
		Env:         b.opts.FnEnv,
		Environ:     b.opts.PluginEnviron,
		Warn:        b.opts.Warn,
		GoPlugins:   b.opts.GoPlugins,
	}
}

// configSource names where a plugin config entry was read: its file, or
// the kustomization file for an inline config.
func configSource(n *Node, entry string) string {
	if strings.Contains(entry, "\n") || strings.Contains(entry, ": ") {
		return n.File.Path + " (inline config)"
	}
	return filepath.Join(filepath.Dir(n.File.Path), entry)
}

// runValidators runs the node's `validators:` entries, in order, after its
// transformers: each runs as a transformer that may only add the
// validated-by label.
func (b *Builder) runValidators(ctx context.Context, n *Node, acc *Accumulation) error {
	var list []stages.Stage
	for _, p := range inlineFirst(n.K.Validators) {
		configs, err := b.pluginConfigs(ctx, n, p)
		if err != nil {
			return fmt.Errorf("validators: %w", err)
		}
		for _, c := range configs {
			if plugins.IsBuiltin(c) {
				return fmt.Errorf("%s: validators: builtin %s cannot be a validator", n.File.Path, c.ID())
			}
			s, err := b.pluginStage(ctx, n, p, c, plugins.Validator)
			if err != nil {
				return rewordDisabled(fmt.Errorf("%s: validators: %w", n.File.Path, err), err, "")
			}
			list = append(list, s)
		}
	}
	return b.runStages(ctx, list, acc.Resources)
}

// definedStage configures the stage of an embedder's definition
// (Options.Stages) that c selects, if any: its output is memoized on its
// own, by its kind, fingerprint and input (unless it is stages.Cheap); the
// node is not memoized as a whole (memo.volatile), as its key cannot cover
// what the definition's code depends on besides the config.
func (b *Builder) definedStage(n *Node, c *resource.Resource) (stages.Stage, bool, error) {
	api, kind := c.APIVersion(), c.Kind()
	for _, d := range b.opts.Stages {
		if d.APIVersion != api || d.Kind != kind {
			continue
		}
		if b.memo != nil {
			b.memo.setVolatile(n)
		}
		s, err := d.New(c)
		if err == nil && s == nil {
			err = fmt.Errorf("its definition made no stage")
		}
		if err != nil {
			return nil, true, fmt.Errorf("plugin %s fails configuration: %w", c.ID(), err)
		}
		if _, cheap := s.(stages.Cheap); cheap {
			return s, true, nil
		}
		return &definedStage{Stage: s, def: d}, true, nil
	}
	return nil, false, nil
}

// definedStage is the stage of an embedder's definition: memoized on its
// own (expensive), under a fingerprint that names the definition too, so
// that no builtin's key can meet it.
type definedStage struct {
	stages.Stage
	def stages.Definition
}

// Unwrap returns the embedder's stage.
func (s *definedStage) Unwrap() stages.Stage { return s.Stage }

func (s *definedStage) Fingerprint() []byte {
	return stages.Fingerprint("DefinedStage", struct {
		APIVersion, Kind string
		Inner            []byte
	}{s.def.APIVersion, s.def.Kind, s.Stage.Fingerprint()})
}
