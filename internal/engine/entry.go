package engine

import (
	"context"
	"runtime"

	"github.com/kpipe/kpipe/plugins"
)

// A Request is one build: the roots, how their kustomizations are loaded,
// and how they are built.
type Request struct {
	// Dirs are the roots: kustomization directories, or remote bases'
	// URLs.
	Dirs []string
	// Load says where and how the kustomizations are read.
	Load LoadOptions
	// Options say how they are built.
	Options Options
	// Loaded, when set, is given the graph once it is loaded, before it is
	// built, and its warnings (Graph.Warnings) with it: the caller gives
	// them out as it sees fit. Without it they go to Options.Warn.
	Loaded func(g *Graph)
	// Each, when set, is handed each root's result (and the builder, to
	// read what the root's build did) as soon as the root is finished,
	// from several goroutines at once (Builder.RunEach), and Build keeps
	// none; without it Build returns them.
	Each func(b *Builder, i int, res Result)
}

// Build loads the kustomizations of req.Dirs and builds them, a shared base
// once: the one way kpipe builds, whether for `kpipe build`, `kpipe edit`'s
// check, `kpipe build-all`, `kpipe diff` or the public API (package kpipe,
// a thin shell over it). The results are in the order of req.Dirs (nil
// with req.Each); the Builder is for what a caller reads of the run
// afterwards (Explain, Stats, Reads, InputSets, Graph).
func Build(ctx context.Context, req Request) (*Builder, []Result) {
	if req.Options.Kustomize581 {
		req.Load.Kustomize581 = true
	}
	g, loadErrs := LoadContext(ctx, req.Dirs, req.Load)
	opts := req.Options.withDefaults()
	if req.Loaded != nil {
		req.Loaded(g)
	} else {
		for _, w := range g.Warnings {
			opts.Warn(w)
		}
	}
	b := NewBuilder(g, opts)
	if req.Each != nil {
		b.RunEach(ctx, loadErrs, func(i int, res Result) { req.Each(b, i, res) })
		return b, nil
	}
	return b, b.Run(ctx, loadErrs)
}

// Graph is the graph the builder builds.
func (b *Builder) Graph() *Graph { return b.g }

// withDefaults gives the options their documented defaults for zero
// values, once for every caller: as many jobs as CPUs, warnings
// discarded, helm from PATH, plugins.DefaultTimeout.
func (o Options) withDefaults() Options {
	if o.Jobs < 1 {
		o.Jobs = runtime.NumCPU()
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.Helm.Command == "" {
		o.Helm.Command = "helm"
	}
	if o.PluginTimeout == 0 {
		o.PluginTimeout = plugins.DefaultTimeout
	}
	return o
}
