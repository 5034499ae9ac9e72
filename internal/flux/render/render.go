package render

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/generate"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// Options are the settings of a Flux build.
type Options struct {
	// FS is the tree (nil: loaders.Disk).
	FS loaders.FS
	// IgnorePaths are --ignore-paths.
	IgnorePaths []string
	// Strict is --strict-substitute.
	Strict bool
	// InMemoryBuild is --in-memory-build (it words the generator's errors
	// as that backend does).
	InMemoryBuild bool
	// Engine carries the build's jobs, cache and events; the settings
	// Flux builds with are set over it (Engine).
	Engine engine.Options
	// Remote fetches remote bases and http(s) resources (nil: they fail).
	Remote *fetch.Fetcher
	// SubstituteFrom returns the data of the ConfigMaps and Secrets k's
	// spec.postBuild.substituteFrom names, in order; nil (as flux build
	// --dry-run) reads none.
	SubstituteFrom func(k *flux.Kustomization) ([]map[string]string, error)
}

// Engine returns o with the settings flux build builds with: no
// reordering (accumulation order; sortOptions honoured), kustomize
// v5.8.1, builtins only (no plugins, no KRM functions, no helm).
func Engine(o engine.Options) engine.Options {
	o.Reorder = "none"
	o.Kustomize581 = true
	o.EnableAlphaPlugins, o.EnableExec, o.EnableHelm = false, false, false
	o.ManagedByLabel = false
	return o
}

// Rendering is one Flux Kustomization built.
type Rendering struct {
	// Objects are the objects, after the post-build steps, in Flux's
	// order.
	Objects []map[string]any
	// Warnings are what kustomize printed (deprecations, the sortOptions
	// notice), in order.
	Warnings []string
	// Generated is the kustomization built for the path, and what
	// generating it read.
	Generated *generate.Result
	// Dir is the path built (absolute, symlinks resolved when it exists).
	Dir string
	// Builder and Root are the engine's build of the path (nil when it
	// failed before building), for what the build read.
	Builder *engine.Builder
	Root    *engine.Node
	// Vars are the variables substituted (nil without spec.postBuild).
	Vars map[string]string
}

// Error is a failure of one step of a Flux build, worded as flux words it.
type Error struct {
	// Step is "generate", "kustomize", "post-build" or "recursive".
	Step string
	Msg  string
	// Err is the underlying error, when there is one.
	Err error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Kustomization builds k from dir (absolute) as flux build kustomization
// --dry-run builds it (without its children: Recursive).
func Kustomization(ctx context.Context, k *flux.Kustomization, dir string, o Options) (*Rendering, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = loaders.Disk
	}
	dir = filepath.Clean(dir)
	r := &Rendering{Dir: dir}
	gen, err := generate.Generate(fsys, k, dir, generate.Options{IgnorePaths: o.IgnorePaths, InMemoryBuild: o.InMemoryBuild})
	r.Generated = gen
	if err != nil {
		return r, &Error{Step: "generate", Msg: err.Error(), Err: err}
	}
	real, err := fsys.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	r.Dir = real
	file := filepath.Join(real, filepath.Base(gen.File))
	ofs := newOverlay(fsys, map[string][]byte{file: gen.Manifest})

	eo := Engine(o.Engine)
	var warnings []string
	eo.Warn = func(msg string) { warnings = append(warnings, msg) }
	b, results := engine.Build(ctx, engine.Request{Dirs: []string{real}, Options: eo,
		Load: engine.LoadOptions{FS: ofs, Restriction: loaders.None, Remote: o.Remote},
		Loaded: func(g *engine.Graph) {
			warnings = append(warnings, g.Warnings...)
		}})
	r.Builder = b
	if g := b.Graph(); len(g.Roots) > 0 {
		r.Root = g.Roots[0]
	}
	r.Warnings = warnings
	res := results[0]
	if res.Err != nil {
		return r, &Error{Step: "kustomize", Msg: "kustomize build failed: " + kustomizeMessage(res.Err), Err: res.Err}
	}
	var from []map[string]string
	if o.SubstituteFrom != nil && k.Spec.PostBuild != nil && len(k.Spec.PostBuild.SubstituteFrom) > 0 {
		if from, err = o.SubstituteFrom(k); err != nil {
			return r, &Error{Step: "post-build", Msg: err.Error(), Err: err}
		}
	}
	pb := k.PostBuild(from, o.Strict)
	r.Vars = pb.Vars
	objs, err := postbuild.Objects(res.YAML, pb)
	if err != nil {
		return r, &Error{Step: "post-build", Msg: err.Error(), Err: err}
	}
	r.Objects = objs
	return r, nil
}

// kustomizeMessage is an engine error as kustomize words it, or, for
// what kustomize v5.8.1 panics on, as flux words its recovery.
func kustomizeMessage(err error) string {
	var pe *stages.PanicError
	if errors.As(err, &pe) {
		return fmt.Sprintf("recovered from kustomize build panic: %v", pe.Value)
	}
	return engine.KustomizeMessage(err)
}

// Children returns the Flux Kustomizations among objs that flux build
// --recursive builds after k: those of another name or namespace than k's,
// as objects of the output (after k's post-build steps), in order.
func Children(k *flux.Kustomization, objs []map[string]any) ([]*flux.Kustomization, error) {
	var out []*flux.Kustomization
	for _, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if !flux.IsFluxKustomization(apiVersion, kind) {
			continue
		}
		child, err := flux.FromObject(obj)
		if err != nil {
			return nil, err
		}
		if child.Name == k.Name && child.Namespace == k.Namespace {
			continue
		}
		out = append(out, child)
	}
	return out, nil
}

// KustomizationID names a Flux Kustomization in messages: Kustomization
// NAMESPACE/NAME (or NAME when it has no namespace).
func KustomizationID(k *flux.Kustomization) string {
	if k.Namespace == "" {
		return "Kustomization/" + k.Name
	}
	return "Kustomization/" + k.Namespace + "/" + k.Name
}

// RecursiveOptions are flux build --recursive's settings.
type RecursiveOptions struct {
	// Cwd is where relative --local-sources directories are taken from.
	Cwd string
	// LocalSources are --local-sources: Kind/Namespace/Name -> directory.
	LocalSources map[string]string
	// Each, when set, is given each Flux Kustomization's rendering as it
	// is built (the parent before its children).
	Each func(k *flux.Kustomization, r *Rendering)
}

// Recursive builds k from dir and then, depth first, every Flux
// Kustomization it renders, as flux build --recursive does: each child at
// its source's --local-sources directory joined with its spec.path, with
// its own post-build settings, its objects after all of its parent's. It
// returns every object, in that order. An error of any build stops it.
//
// flux follows a cycle of Kustomizations that render each other until it
// runs out of stack; Recursive refuses it, naming the objects.
func Recursive(ctx context.Context, k *flux.Kustomization, dir string, o Options, ro RecursiveOptions) ([]map[string]any, error) {
	return recursive(ctx, k, dir, o, ro, nil)
}

func recursive(ctx context.Context, k *flux.Kustomization, dir string, o Options, ro RecursiveOptions, chain []string) ([]map[string]any, error) {
	id := KustomizationID(k)
	for i, c := range chain {
		if c == id {
			return nil, &Error{Step: "recursive", Msg: "Kustomizations render each other in a cycle: " + strings.Join(append(chain[i:], id), " -> ")}
		}
	}
	chain = append(chain, id)
	r, err := Kustomization(ctx, k, dir, o)
	if ro.Each != nil && r != nil {
		ro.Each(k, r)
	}
	if err != nil {
		return nil, err
	}
	children, err := Children(k, r.Objects)
	if err != nil {
		return nil, &Error{Step: "recursive", Msg: err.Error(), Err: err}
	}
	objs := r.Objects
	for _, child := range children {
		p, err := child.LocalPath(ro.LocalSources)
		if err != nil {
			return nil, &Error{Step: "recursive", Msg: err.Error(), Err: err}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(ro.Cwd, p)
		}
		sub, err := recursive(ctx, child, p, o, ro, chain)
		if err != nil {
			return nil, err
		}
		objs = append(objs, sub...)
	}
	return objs, nil
}
