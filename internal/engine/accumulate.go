package engine

import (
	"context"
	"fmt"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// accumulate builds node n into acc, in kustomize's order: resources,
// configurations, crds, generators, components, transformers, validators.
// A component is accumulated into its parent's acc.
func (b *Builder) accumulate(ctx context.Context, n *Node, acc *Accumulation) error {
	if err := checkSchema(n); err != nil {
		return err
	}
	if err := b.accumulateResources(ctx, n, acc); err != nil {
		return fmt.Errorf("accumulating resources: %w", err)
	}
	var cfg *fieldspec.Config // nil where mergeConfig takes the shared defaults
	var err error
	plain := len(n.K.Configurations) == 0
	if !plain || !(acc.PlainConfig || acc.Config.IsEmpty()) {
		if cfg, err = b.transformerConfig(n); err != nil {
			return err
		}
	}
	if err = b.mergeConfig(acc, cfg, plain); err != nil {
		return fmt.Errorf("merging config: %w", err)
	}
	if len(n.K.Crds) > 0 {
		crds, err := b.crdConfig(n)
		if err != nil {
			return err
		}
		if err = b.mergeConfig(acc, crds, false); err != nil {
			return fmt.Errorf("%s: merging CRDs %v: %w", n.File.Path, n.K.Crds, err)
		}
	}
	if err := b.runGenerators(ctx, n, acc); err != nil {
		return err
	}
	for _, e := range n.Components {
		if e.Err != nil {
			return fmt.Errorf("accumulating components: %w", e.Err)
		}
		if err := b.accumulate(ctx, e.Child, acc); err != nil {
			return fmt.Errorf("accumulating components: accumulateDirectory: %q",
				fmt.Sprintf("recursed accumulation of path '%s': %v", e.Child.Dir, err))
		}
	}
	if err := b.runTransformers(ctx, n, acc); err != nil {
		return err
	}
	if err := b.runValidators(ctx, n, acc); err != nil {
		return err
	}
	return b.mergeVars(ctx, n, acc)
}

// mergeVars declares the node's vars, as kustomize's MergeVars does after
// the node's transformers: each marks the object it reads (now, so that it
// is found under its current or any earlier name), and joins the vars of
// the accumulation, which the root resolves when names are final.
func (b *Builder) mergeVars(ctx context.Context, n *Node, acc *Accumulation) error {
	if len(n.K.Vars) == 0 {
		return nil
	}
	vars := n.K.Vars
	if err := b.runStage(ctx, stages.NewVarTargets(vars), acc.Resources); err != nil {
		return fmt.Errorf("merging vars %s: %w", stages.FormatVars(vars), err)
	}
	if err := acc.Vars.MergeAll(vars); err != nil {
		return fmt.Errorf("merging vars %s: %w", stages.FormatVars(vars), err)
	}
	return nil
}

// accumulateResources appends the node's `resources` entries in order.
func (b *Builder) accumulateResources(ctx context.Context, n *Node, acc *Accumulation) error {
	add := resource.NewAppender(acc.Resources)
	for _, e := range n.Resources {
		switch {
		case e.Err != nil:
			return e.Err
		case e.Child != nil:
			sub, err := b.child(ctx, e.Child)
			if err != nil {
				return fmt.Errorf("accumulation err='accumulating resources from '%s': %s': recursed accumulation of path '%s': %w",
					e.Path, dirFileErr(n, e), e.Child.Dir, err)
			}
			if err := add.AppendAll(sub.Resources); err != nil {
				return fmt.Errorf("accumulation err='accumulating resources from '%s': %s': recursed merging from path '%s': %w",
					e.Path, dirFileErr(n, e), e.Child.Dir, err)
			}
			if err = b.mergeConfig(acc, sub.Config, sub.PlainConfig); err != nil {
				return fmt.Errorf("recursed merging from path '%s': %w", e.Child.Dir, err)
			}
			if err := acc.Vars.MergeSet(&sub.Vars); err != nil {
				return fmt.Errorf("accumulation err='accumulating resources from '%s': %s': recursed merging from path '%s': %w",
					e.Path, dirFileErr(n, e), e.Child.Dir, err)
			}
		default:
			p := b.parse(e)
			if p.err != nil {
				return p.err
			}
			list := p.list
			if n.Origin != nil {
				list = p.list.Copy()
				if err := b.runStage(ctx, stages.NewSetOrigin(*n.Origin.Append(e.Path)), list); err != nil {
					return fmt.Errorf("cannot add path annotation for '%s': %w", e.Path, err)
				}
			}
			if err := add.AppendAll(list); err != nil {
				return fmt.Errorf("merging resources from '%s': %w", e.Path, err)
			}
		}
	}
	return nil
}

// mergeConfig merges a transformer configuration into acc's, as
// kustomize's MergeConfig does. Nearly every kustomization uses only the
// default field specs, and merging the defaults into an empty or default
// configuration always gives the same (deduplicated) defaults, so that
// case shares one precomputed value instead of merging hundreds of specs
// per node. plain says cfg is the defaults (or that value).
func (b *Builder) mergeConfig(acc *Accumulation, cfg *fieldspec.Config, plain bool) error {
	if plain && (acc.PlainConfig || acc.Config.IsEmpty()) {
		p, err := b.plainConfig()
		if err != nil {
			return err
		}
		acc.Config, acc.PlainConfig = p, true
		return nil
	}
	merged, err := acc.Config.Merge(cfg)
	if err != nil {
		return err
	}
	acc.Config, acc.PlainConfig = merged, false
	return nil
}

// plainConfig is the defaults merged into an empty configuration
// (fieldspec.PlainDefaults), made once per builder. It is shared and must
// not be modified.
func (b *Builder) plainConfig() (*fieldspec.Config, error) {
	b.plainOnce.Do(func() { b.plain = fieldspec.PlainDefaults() })
	return b.plain, nil
}

// transformerConfig is kustomize's default field specs merged with the
// node's `configurations` files.
func (b *Builder) transformerConfig(n *Node) (*fieldspec.Config, error) {
	var files [][]byte
	for _, p := range n.K.Configurations {
		data, _, err := n.Loader.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: configurations: %w", n.File.Path, err)
		}
		files = append(files, data)
	}
	cfg, err := fieldspec.Make(files...)
	if err != nil {
		return nil, fmt.Errorf("%s: configurations %v: %w", n.File.Path, n.K.Configurations, err)
	}
	return cfg, nil
}

// crdConfig is the field specs the node's `crds` files add (name
// references, annotation, label and prefix fields of custom kinds).
func (b *Builder) crdConfig(n *Node) (*fieldspec.Config, error) {
	out := &fieldspec.Config{}
	for _, p := range n.K.Crds {
		data, _, err := n.Loader.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: loading CRDs %v: %w", n.File.Path, n.K.Crds, err)
		}
		c, err := fieldspec.FromCRDs(data)
		if err != nil {
			return nil, fmt.Errorf("%s: loading CRDs %v: unable to parse open API definition from '%s': %w", n.File.Path, n.K.Crds, p, err)
		}
		if out, err = out.Merge(c); err != nil {
			return nil, fmt.Errorf("%s: loading CRDs %v: %w", n.File.Path, n.K.Crds, err)
		}
	}
	return out, nil
}

// unsupported is the error for a kustomization field kpipe cannot build yet.
func (b *Builder) unsupported(n *Node, field string) error {
	return fmt.Errorf("%s: the '%s' field is not supported yet by kpipe", n.File.Path, field)
}

// dirFileErr is kustomize's error for reading e, a directory entry of n,
// as a file (which kustomize tries first): under LoadRestrictionsNone the
// file system's own ("read DIR: is a directory", the entry joined to n's
// directory), else the restrictor's.
func dirFileErr(n *Node, e *Entry) string {
	if n.Loader.Restriction() == loaders.None && !e.Remote {
		return fmt.Sprintf("read %s: is a directory", n.Loader.Abs(e.Path))
	}
	return fmt.Sprintf("'%s' must resolve to a file", e.Child.Dir)
}
