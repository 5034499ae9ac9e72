// Package render is package generate's Renderer on kpipe's engine: what
// Argo CD runs `kustomize build` and `helm template` for, done in
// process. A Kustomize source is built with engine.Build, its edited
// kustomization (Argo CD's `kustomize edit` commands and patches) served
// through an overlay in place of the file, and only when there was an
// edit, so that a root without options keeps its cache keys; the builds
// of many Applications rendered together (Renderer.Batch) share one graph,
// so that a base shared by 300 Applications is built once. A Helm source
// runs helm through the runner the engine runs helmCharts with, on a copy
// of the chart, its output cached by the chart's files, the value files,
// the arguments and helm's binary.
//
// Trees are read through the read seam (loaders.FS: the disk, or a git
// revision for `kpipe diff --argocd`). What one Application read is
// recorded (Reads) for diff, affected, `kpipe argocd paths` and the
// records that let a run skip an unchanged Application.
//
// It imports kpipe's internal/argocd packages, engine, cache, loaders,
// stages, fetch and gitfs.
package render

import (
	"context"
	"errors"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/loaders"
)

// Options are a Renderer's settings.
type Options struct {
	// Engine are the options every kustomize build starts from (the
	// cache, jobs, the helm command); an Application's build options
	// (argocd-cm's kustomize.buildOptions) are applied on top. The helm
	// command also renders Helm sources.
	Engine engine.Options
	// Remote fetches remote bases (nil: they fail, as offline).
	Remote *fetch.Fetcher
	// Environ is the environment plugins and helm start from (nil: the
	// process's).
	Environ []string
	// HelmSources lets Helm sources run `helm template` (kpipe's
	// --enable-helm). Argo CD always renders them; kpipe runs nothing a
	// flag has not allowed, so without it a Helm source fails, naming
	// the flag. (Kustomize's helmCharts are allowed apart, by the
	// build options' --enable-helm, as in Argo CD.)
	HelmSources bool
}

// Renderer renders Applications' Kustomize and Helm sources
// (generate.Renderer). It is safe for concurrent use.
type Renderer struct {
	opts Options

	mu      sync.Mutex
	indexes map[*Tree]*cache.FileIndex
	parsed  map[cache.Key]*parsed
	stats   Stats

	helm helmRunner
}

// Stats count what a Renderer did.
type Stats struct {
	// Builds are the engine builds run (one per batch round and set of
	// options), Roots the kustomize roots they built.
	Builds, Roots int
	// NodesBuilt and NodesCached are the engine's counts.
	NodesBuilt, NodesCached int
	// HelmRuns are the helm template runs, HelmCached those answered from
	// the cache.
	HelmRuns, HelmCached int
}

// New returns a Renderer.
func New(o Options) *Renderer {
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Engine.Helm.Command == "" {
		o.Engine.Helm.Command = "helm"
	}
	r := &Renderer{opts: o, indexes: map[*Tree]*cache.FileIndex{}, parsed: map[cache.Key]*parsed{}}
	r.helm.r = r
	return r
}

// Stats returns the counts so far.
func (r *Renderer) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// FileIndex is the file index the Renderer reads t through (the cache's,
// on disk; an index of its own for another tree).
func (r *Renderer) FileIndex(t *Tree) *cache.FileIndex {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ix, ok := r.indexes[t]; ok {
		return ix
	}
	ix := r.opts.Engine.Cache.Files
	if ix == nil {
		ix = r.opts.Engine.Cache.Store.FileIndex()
	}
	var src cache.Source
	if t.Files != loaders.Disk {
		src = t.Files
	}
	if ix.Source() != src {
		ix = ix.On(src)
	}
	r.indexes[t] = ix
	return ix
}

// treeOf finds the Tree of a checkout.
func treeOf(co app.Checkout) (*Tree, error) {
	if v, ok := co.FS.(Viewer); ok {
		return v.Tree(), nil
	}
	return nil, errors.New("kpipe's renderer needs a checkout read through render.Tree")
}

// readsKey is the context key of the Reads of the Application a context
// renders.
type readsKey struct{}

// WithReads returns ctx carrying r: the renders made with it record
// their reads there.
func WithReads(ctx context.Context, r *Reads) context.Context {
	return context.WithValue(ctx, readsKey{}, r)
}

func readsOf(ctx context.Context) *Reads {
	r, _ := ctx.Value(readsKey{}).(*Reads)
	return r
}

// kreq is one kustomize build asked for.
type kreq struct {
	tree  *Tree
	dir   string // the app directory, absolute in tree.Files
	edit  *edited
	flags *buildFlags
	env   []string
	reads *Reads
	label string // how messages name the tree's root
	ctx   context.Context

	out  []byte
	err  error
	done chan struct{}
}

// Kustomize builds b's app directory with the engine (generate.Renderer).
// Within a Batch, it waits for the other Applications of the batch to
// ask for theirs, and they are built together.
func (r *Renderer) Kustomize(ctx context.Context, b *generate.KustomizeBuild) ([]byte, error) {
	tree, err := treeOf(b.Checkout)
	if err != nil {
		return nil, err
	}
	var args []string
	if len(b.Args) > 2 {
		args = b.Args[2:]
	}
	flags, err := parseBuildArgs(args)
	if err != nil {
		var fe flagError
		if errors.As(err, &fe) {
			return nil, &generate.CommandError{Cause: "exit status 1", Stderr: "Error: " + fe.Error() + "\n"}
		}
		return nil, err
	}
	dir := tree.Abs(b.AppDir)
	if real, err := tree.Files.EvalSymlinks(dir); err == nil {
		dir = real
	}
	q := &kreq{tree: tree, dir: dir, flags: flags, env: b.Env, reads: readsOf(ctx), label: b.Checkout.Root, ctx: ctx, done: make(chan struct{})}
	if e := b.Edit; e != nil && e.Data != nil {
		q.edit = newEdited(dir, path.Base(e.File), e.Data)
	}
	if bt, ok := ctx.Value(batchKey{}).(*batch); ok {
		bt.wait(q)
	} else {
		r.build(ctx, []*kreq{q})
	}
	if q.err != nil {
		return nil, q.err
	}
	return q.out, nil
}

// KustomizeObjects is Kustomize's output parsed as manifest.SplitYAML
// parses it (generate.ObjectRenderer): an output several Applications
// build (a root without options) is parsed once, each caller given its
// own copy.
func (r *Renderer) KustomizeObjects(ctx context.Context, b *generate.KustomizeBuild) ([]manifest.Object, error) {
	out, err := r.Kustomize(ctx, b)
	if err != nil {
		return nil, err
	}
	key := cache.Digest(out)
	r.mu.Lock()
	p, ok := r.parsed[key]
	if !ok {
		p = &parsed{}
		r.parsed[key] = p
	}
	r.mu.Unlock()
	p.once.Do(func() { p.objs, p.err = manifest.SplitYAML(out) })
	if p.err != nil {
		return nil, p.err
	}
	objs := make([]manifest.Object, len(p.objs))
	for i, o := range p.objs {
		objs[i] = manifest.DeepCopy(o)
	}
	return objs, nil
}

// parsed is one kustomize output, parsed once.
type parsed struct {
	once sync.Once
	objs []manifest.Object
	err  error
}

// build runs the kustomize builds qs asked for: one engine build for
// each tree and set of options, every root of it over one graph.
func (r *Renderer) build(ctx context.Context, qs []*kreq) {
	groups := map[string][]*kreq{}
	var keys []string
	for _, q := range qs {
		k := q.tree.Dir + "\x00" + q.flags.key(q.env)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], q)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.buildGroup(ctx, groups[k])
	}
	for _, q := range qs {
		close(q.done)
	}
}

// buildGroup builds qs (one tree, one set of options) over one graph.
func (r *Renderer) buildGroup(ctx context.Context, qs []*kreq) {
	tree, flags := qs[0].tree, qs[0].flags
	ov := &overlay{base: tree.Files, edits: map[string]*edited{}}
	index := map[string]int{}
	var dirs []string
	for _, q := range qs {
		d := q.dir
		if q.edit != nil {
			d = q.edit.virtual
			ov.edits[d] = q.edit
		}
		if _, ok := index[d]; !ok {
			index[d] = len(dirs)
			dirs = append(dirs, d)
		}
	}
	var fsys loaders.FS = tree.Files
	if len(ov.edits) > 0 {
		fsys = ov
	}
	eo := flags.options(r.opts.Engine, r.opts.Environ, qs[0].env)
	eo.Cache.Files = r.FileIndex(tree)
	eo.Warn = nil
	b, results := engine.Build(ctx, engine.Request{Dirs: dirs,
		Load:    engine.LoadOptions{FS: fsys, Restriction: flags.restriction, Remote: r.opts.Remote},
		Options: eo,
		Loaded:  func(*engine.Graph) {}, // warnings go with each root's error
	})
	g := b.Graph()
	st := b.Stats()
	r.mu.Lock()
	r.stats.Builds++
	r.stats.Roots += len(dirs)
	r.stats.NodesBuilt += st.NodesBuilt
	r.stats.NodesCached += st.NodesCached
	r.mu.Unlock()
	for _, q := range qs {
		d := q.dir
		if q.edit != nil {
			d = q.edit.virtual
		}
		i := index[d]
		res := results[i]
		root := g.Roots[i]
		unmap := func(s string) string {
			if q.edit != nil {
				s = strings.ReplaceAll(s, q.edit.virtual, q.edit.real)
			}
			return s
		}
		if q.reads != nil {
			r.recordReads(q, b, root, unmap)
		}
		if res.Err != nil {
			var lines []string
			lines = append(lines, flags.notes...)
			if root != nil {
				for _, w := range g.WarningsOf(root) {
					lines = append(lines, w.Text)
				}
			}
			lines = append(lines, "Error: "+kustomizeWording(unmap(res.Err.Error())))
			q.err = &generate.CommandError{Cause: "exit status 1", Stderr: relabel(strings.Join(lines, "\n")+"\n", q.tree, q.label)}
			continue
		}
		q.out = res.YAML
	}
}

// recordReads adds what root's build read to q's Reads, paths of an
// edited directory named as the real directory's (the edited file's
// digest is the real file's: the edits are a function of it and of the
// Application, which a record is kept under).
func (r *Renderer) recordReads(q *kreq, b *engine.Builder, root *engine.Node, unmap func(string) string) {
	if root == nil {
		q.reads.addEngine(engine.ReadSet{Trees: []string{q.dir}}, nil, false)
		return
	}
	rs := b.Reads(root)
	inputs, ok := b.Inputs(root)
	if q.edit != nil {
		for _, l := range []*[]string{&rs.Files, &rs.Dirs, &rs.Trees, &rs.Either} {
			for i, p := range *l {
				(*l)[i] = unmap(p)
			}
		}
		if ok {
			ix := r.FileIndex(q.tree)
			out := make([]cache.Input, 0, len(inputs))
			for _, in := range inputs {
				if p, real := unmap(in.Path), unmap(in.Real); p != in.Path || real != in.Real {
					d, found := ix.Digest(real)
					if !found {
						ok = false
						break
					}
					in = ix.Stamp(cache.Input{Path: p, Real: real, Digest: d})
				}
				out = append(out, in)
			}
			inputs = out
		}
	}
	q.reads.addEngine(rs, inputs, ok)
}

// batchKey is the context key of a Batch.
type batchKey struct{}

// batch gathers the kustomize builds of the Applications of one Batch:
// when every Application still running waits for a build, they are built
// together (a round), and released.
type batch struct {
	r       *Renderer
	mu      sync.Mutex
	running int
	waiting []*kreq
}

// Batch calls each(ctx, i) for every i < n, each in its own goroutine,
// and returns when all have returned. The kustomize builds they ask for
// are built together: one graph (per set of options) for every build
// asked for while the others ran, so that their shared bases are built
// once. ctx is passed on, carrying the batch.
func (r *Renderer) Batch(ctx context.Context, n int, each func(ctx context.Context, i int)) {
	bt := &batch{r: r, running: n}
	ctx = context.WithValue(ctx, batchKey{}, bt)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer bt.leave(ctx)
			each(ctx, i)
		}()
	}
	wg.Wait()
}

// wait adds q to the round and returns once it is built.
func (bt *batch) wait(q *kreq) {
	bt.mu.Lock()
	bt.waiting = append(bt.waiting, q)
	bt.running--
	round := bt.take()
	bt.mu.Unlock()
	if round != nil {
		bt.r.build(q.ctx, round)
	}
	<-q.done
}

// leave is an Application done.
func (bt *batch) leave(ctx context.Context) {
	bt.mu.Lock()
	bt.running--
	round := bt.take()
	bt.mu.Unlock()
	if round != nil {
		bt.r.build(ctx, round)
	}
}

// take returns the round to build when nothing else runs (the waiting
// builds, counted as running again), else nil; bt.mu is held.
func (bt *batch) take() []*kreq {
	if bt.running > 0 || len(bt.waiting) == 0 {
		return nil
	}
	round := bt.waiting
	bt.waiting = nil
	bt.running = len(round)
	slices.SortFunc(round, func(a, b *kreq) int { return strings.Compare(a.dir, b.dir) })
	return round
}

// relabel replaces the tree's directory in s by the checkout's label.
func relabel(s string, tree *Tree, label string) string {
	if label == "" || label == tree.Dir {
		return s
	}
	return strings.ReplaceAll(s, tree.Dir, label)
}

// Options returns the Renderer's options.
func (r *Renderer) Options() Options { return r.opts }
