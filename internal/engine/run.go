package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// Options are the settings of a build that change its output or what it
// may do.
type Options struct {
	// Jobs bounds how many nodes are built at once, and within one node
	// how many resource files are decoded at once, and within one root
	// how many documents are encoded at once (< 1: number of CPUs).
	Jobs int
	// Reorder is the --reorder flag: "legacy", "none", or "" (unspecified,
	// which kustomize treats as legacy unless sortOptions is set).
	Reorder string
	// ManagedByLabel adds app.kubernetes.io/managed-by to every object.
	ManagedByLabel bool
	// EnableAlphaPlugins allows plugins other than builtins.
	EnableAlphaPlugins bool
	// EnableExec allows KRM functions that run executables.
	EnableExec bool
	// PluginTimeout bounds each plugin run (zero: plugins.DefaultTimeout).
	PluginTimeout time.Duration
	// FnEnv are the --env entries given to KRM functions.
	FnEnv []string
	// PluginEnviron is the environment plugins start from (nil: the
	// process's).
	PluginEnviron []string
	// GoPlugins opens Go plugins (plugins.Options.GoPlugins): goplugin.Open
	// of package plugins/goplugin, or nil, which leaves the plugin package
	// out of the program and makes a Go plugin an error
	// (plugins.ErrNoGoPlugins).
	GoPlugins func(path string) (func(string) (any, error), error)
	// NoCachePlugins keeps plugin stages out of the cache.
	NoCachePlugins bool
	// VerifyCache re-runs stages found in the cache (and plugin stages
	// twice when not cached) and fails when an output differs.
	VerifyCache bool
	// EnableHelm allows helm chart inflation (so does EnableAlphaPlugins,
	// as in kustomize).
	EnableHelm bool
	// Helm are the --helm-* flags.
	Helm HelmOptions
	// Warn receives warnings (for example about conflicting sort settings).
	Warn func(msg string)
	// Cache memoizes nodes, stages and outputs; its zero value builds
	// without a cache.
	Cache Cache
	// Progress, when set, is called each time a graph node is resolved.
	Progress func()
	// Events, when set, receives an Event as each node and stage ends
	// (from many goroutines at once: it must be safe for that).
	Events func(Event)
	// Stages are the embedding program's stage definitions
	// (kpipe.Options.Stages), which configs listed under transformers: or
	// generators: select by apiVersion and kind.
	Stages []stages.Definition
	// Patches, when set, is where the builds that share it keep the patch
	// texts they decoded (a run of many builds of one tree: kpipe flux
	// build-all, one build a Flux Kustomization); nil: the build's own.
	Patches *stages.Patches
	// Kustomize581 builds as kustomize v5.8.1 (the release Flux links)
	// where it differs from v5.8.2, kpipe's reference: labels with
	// includeTemplates also label StatefulSet volumeClaimTemplates, the
	// images field matches sha256 digests only and a name that is not a
	// regular expression panics (stages.PanicError), no CronJob image
	// volumes among the images field specs, no refusal of ambiguous paths,
	// a secretGenerator merge ignores the base Secret's stringData, and
	// replacements copy values inside structured data (stages.Release).
	// `kpipe flux` turns it on; Build passes it on to the load.
	Kustomize581 bool
	// Explain records, for each node and cached stage, whether it came
	// from the cache and, when it did not, which named inputs changed
	// since its last build (Builder.Explain). Needs a cache.
	Explain bool
}

// Accumulation is the result of building one kustomization node, before the
// steps that only a root runs: its resources (frozen, shareable) and the
// transformer configuration it and its bases declared.
type Accumulation struct {
	Resources *resource.List
	Config    *fieldspec.Config
	// PlainConfig says Config is exactly kustomize's default field specs.
	PlainConfig bool
	// Vars are the legacy vars the node and its bases declare.
	Vars stages.VarSet
}

// Result is the outcome of one root.
type Result struct {
	// Resources are the root's output objects in output order; nil when
	// the output came from the cache (Cached), which keeps only YAML.
	Resources []*resource.Resource
	// Err is the root's error; Resources is nil then.
	Err error
	// YAML is the rendered output (what `kustomize build` prints).
	YAML []byte
	// Digest is YAML's SHA-256 (cache.Digest) when the build computed it,
	// as it does with a cache; zero otherwise.
	Digest cache.Key
	// Cached says the final output came from the cache.
	Cached bool
	// Sensitive says the output may hold a Secret's data or a plugin's
	// output: a cache must not send it to a remote (see sensitive.go).
	Sensitive bool
	// NodesBuilt and NodesCached count the nodes of the root's graph
	// (shared ones included) that were built, or found in the cache, in
	// this run; StagesRan and StagesCached count their stages.
	NodesBuilt, NodesCached, StagesRan, StagesCached int
}

// OutputDigest is YAML's digest: Digest, or computed now when the build
// did not (it had no cache).
func (r Result) OutputDigest() cache.Key {
	if r.Digest.IsZero() {
		return cache.Digest(r.YAML)
	}
	return r.Digest
}

// Builder builds the nodes of a Graph, each once.
type Builder struct {
	g    *Graph
	opts Options

	mu     sync.Mutex
	done   map[string]*nodeResult
	parsed map[*fileRead]*parsedFile // resource files decoded, once each
	// patches are the `patches` texts decoded, once each (a component's
	// are configured again in every parent).
	patches *stages.Patches
	stats   Stats
	memo    *memo
	// scratch holds a buffer (*[]byte) that stored accumulations are
	// encoded into, reused from node to node.
	scratch sync.Pool

	// included are the nodes some other node of the run includes.
	included map[*Node]bool
	// roots are the graph's roots, as a set (g.Roots may hold thousands).
	roots map[*Node]bool

	plainOnce sync.Once
	plain     *fieldspec.Config

	helmOnce sync.Once
	helm     stages.HelmSettings
	helmErr  error

	// explains are the nodes' explanations (Options.Explain), by node key.
	explains map[string]*NodeExplain

	// real are the directories written for plugins of a tree not on
	// disk, removed when RunEach returns.
	real realDirs
}

// Stats counts what a Builder did.
type Stats struct {
	// NodesBuilt is the number of graph nodes whose work ran (not counting
	// components, which run inside their parents).
	NodesBuilt int
	// NodesCached is the number of nodes whose key was found in the cache.
	NodesCached int
	// RootsCached is the number of roots whose final output came from the
	// cache.
	RootsCached int
	// Stages counts stage runs by kind.
	Stages map[string]StageStats
}

// Stats returns what the builder has done so far.
func (b *Builder) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.stats
	st.Stages = make(map[string]StageStats, len(b.stats.Stages))
	for k, v := range b.stats.Stages {
		st.Stages[k] = v
	}
	return st
}

type nodeResult struct {
	acc *Accumulation
	err error

	key       cache.Key // the node's full key, when known
	fromCache bool      // acc is to be read from the cache under key
	lazy      bool      // with fromCache: the value may not be stored (load then builds it)
	rebuilt   bool      // with fromCache: load built it (the value was not stored, or unusable)
	once      sync.Once

	// output and outputSum are a root's output and its digest, when
	// found in the cache with its key (resolve).
	output    []byte
	outputSum cache.Key
	// miss says why a node built had no entry (--explain; "" when its
	// key could not be known).
	miss string

	// stagesRan and stagesCached count the node's own stage runs.
	stagesRan, stagesCached int
}

type parsedFile struct {
	list *resource.List
	err  error
}

// NewBuilder returns a builder for g.
func NewBuilder(g *Graph, opts Options) *Builder {
	opts = opts.withDefaults()
	b := &Builder{g: g, opts: opts, done: map[string]*nodeResult{}, parsed: map[*fileRead]*parsedFile{}, roots: make(map[*Node]bool, len(g.Roots)),
		patches: opts.Patches}
	if b.patches == nil {
		b.patches = &stages.Patches{}
	}
	for _, r := range g.Roots {
		if r != nil {
			b.roots[r] = true
		}
	}
	if opts.Cache.Store != nil {
		b.memo = newMemo(opts.Cache, g, opts)
		b.memo.helm = b.helmSettings
	}
	return b
}

// Run builds every root of the graph and returns one result per root, in
// the order of g.Roots. Nodes shared by several roots are built once.
// loadErrs are the errors Load returned for the roots.
func (b *Builder) Run(ctx context.Context, loadErrs []error) []Result {
	results := make([]Result, len(b.g.Roots))
	b.runEach(ctx, loadErrs, func(i int, r Result) { results[i] = r }, false)
	return results
}

// RunEach builds every root of the graph like Run, but hands each root's
// result to emit as soon as the root is finished, and keeps none: a node's
// accumulation is released once every node that includes it is built or
// is released itself (release), and a root's once it is finished, so
// memory holds what is being built, not everything built so far. emit is called once per index of g.Roots, from
// several goroutines at once.
//
// Once emit has returned for every root that reaches a node, the node
// itself goes (forget): its parsed kustomization and files, what the
// cache learned of it, its place in the graph. What a run keeps thus
// does not grow with the roots written so far. The graph, and the
// Builder's methods that take a node (Inputs, Reads), serve only emit's
// own root: a graph built with RunEach cannot be built again.
func (b *Builder) RunEach(ctx context.Context, loadErrs []error, emit func(i int, r Result)) {
	b.runEach(ctx, loadErrs, emit, true)
}

// reachCounts counts, for every node reachable from roots, the roots that
// reach it.
func (b *Builder) reachCounts(roots []string) map[*Node]int {
	counts := map[*Node]int{}
	for _, k := range roots {
		eachNode(func(n *Node) { counts[n]++ }, b.g.Nodes[k])
	}
	return counts
}

// eachNode calls fn once for each node reachable from roots, roots
// included, each before the nodes it includes.
func eachNode(fn func(n *Node), roots ...*Node) {
	seen := map[*Node]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		fn(n)
		for _, e := range n.Children() {
			walk(e.Child)
		}
	}
	for _, r := range roots {
		walk(r)
	}
}

// forget drops every trace of n once no root left to finish reaches it:
// its result, what the memo learned of it, its place in the graph (so
// that its kustomization, files and entries are garbage).
func (b *Builder) forget(n *Node) {
	b.mu.Lock()
	delete(b.done, n.Key)
	delete(b.roots, n)
	delete(b.included, n)
	delete(b.g.Nodes, n.Key)
	delete(b.g.kfiles, n.Dir)
	for _, e := range n.Resources {
		delete(b.g.files, [2]string{n.Dir, e.Path})
	}
	b.mu.Unlock()
	if b.memo != nil {
		b.memo.forget(n)
	}
}

func (b *Builder) runEach(ctx context.Context, loadErrs []error, emit func(i int, r Result), release bool) {
	defer b.real.remove()
	rootIdx := map[string][]int{} // by node key (a node is dropped once done: forget)
	var roots []string
	for i, n := range b.g.Roots {
		switch {
		case n == nil:
			emit(i, Result{Err: loadErrs[i]})
		case len(rootIdx[n.Key]) == 0:
			roots = append(roots, n.Key)
			rootIdx[n.Key] = []int{i}
		default:
			rootIdx[n.Key] = append(rootIdx[n.Key], i)
		}
	}
	pending := b.parentCounts(roots)
	b.mu.Lock()
	b.included = make(map[*Node]bool, len(pending))
	for n := range pending {
		b.included[n] = true
	}
	b.mu.Unlock()
	var reach map[*Node]int // (with release) the roots left to finish that reach each node
	if release {
		reach = b.reachCounts(roots)
	}
	var mu sync.Mutex
	finished := map[string]bool{}
	finish := func(ctx context.Context, n *Node, r *nodeResult, walkErr error) {
		var res Result
		switch {
		case r == nil && walkErr != nil:
			res.Err = walkErr
		case r == nil:
			res.Err = fmt.Errorf("internal error: %s was not built", n.Dir)
		case r.err != nil:
			res.Err = r.err
		default:
			b.finishRoot(ctx, n, r, &res)
			res.Sensitive = yamlHasSecret(res.YAML) || runsPlugins(n)
		}
		if r != nil {
			b.countSubgraph(n, &res)
		}
		mu.Lock()
		finished[n.Key] = true
		mu.Unlock()
		for _, i := range rootIdx[n.Key] {
			emit(i, res)
		}
	}
	// forgetRoot counts finished root n out of the nodes it reaches, and
	// forgets those no other root left reaches.
	forgetRoot := func(n *Node) {
		var gone []*Node
		mu.Lock()
		eachNode(func(x *Node) {
			if reach[x]--; reach[x] == 0 {
				delete(reach, x)
				gone = append(gone, x)
			}
		}, n)
		mu.Unlock()
		b.mu.Lock()
		for _, i := range rootIdx[n.Key] {
			b.g.Roots[i] = nil
		}
		for _, x := range gone {
			delete(pending, x)
		}
		b.mu.Unlock()
		for _, x := range gone {
			b.forget(x)
		}
	}
	// Node functions record their own errors and never fail the walk, so
	// that a parent can report its child's error in kustomize's words, in
	// the order of its entries.
	walkErr := b.g.DAG.WalkFrom(ctx, b.opts.Jobs, roots, func(ctx context.Context, key string) error {
		b.mu.Lock() // (forget deletes from the map)
		n := b.g.Nodes[key]
		b.mu.Unlock()
		r := b.visit(ctx, n)
		b.mu.Lock()
		b.done[key] = r
		b.mu.Unlock()
		root := len(rootIdx[key]) > 0
		if root {
			finish(ctx, n, r, nil)
		}
		b.release(n, pending, rootIdx)
		if root && release {
			forgetRoot(n)
		}
		return ctx.Err()
	})
	// Roots the walk did not reach (it was cancelled, or failed).
	for _, key := range roots {
		mu.Lock()
		done := finished[key]
		mu.Unlock()
		if !done {
			n := b.g.Nodes[key]
			finish(ctx, n, b.result(n), walkErr)
		}
	}
}

// storesAccumulation reports whether n's accumulation is worth a cache
// entry: some node includes it, or it is not a root.
func (b *Builder) storesAccumulation(n *Node) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.included[n] || !b.roots[n]
}

// parentCounts counts, for every node reachable from roots, the entries
// of other reachable nodes that include it.
func (b *Builder) parentCounts(roots []string) map[*Node]int {
	counts := map[*Node]int{}
	nodes := make([]*Node, len(roots))
	for i, k := range roots {
		nodes[i] = b.g.Nodes[k]
	}
	eachNode(func(n *Node) {
		for _, e := range n.Children() {
			counts[e.Child]++
		}
	}, nodes...)
	return counts
}

// release drops what n's build no longer needs once n is built (and, for
// a root, finished): the resource files n parsed, and the accumulation of
// every child all of whose parents are done with it. A parent is done
// with its children when it was built, or else (it was found in the
// cache, and a dependent that is rebuilt may still build it, asking for
// them) when its own accumulation is dropped. A root's own accumulation
// goes when it has no parent left either.
func (b *Builder) release(n *Node, pending map[*Node]int, rootIdx map[string][]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n.IsComponent() {
		// A component is applied inside each parent, which reads the
		// component's files and children then: they stay.
		return
	}
	for _, e := range n.Resources {
		if e.File != "" {
			delete(b.parsed, e.src)
		}
	}
	if r := b.done[n.Key]; r == nil || !r.fromCache {
		b.doneWithChildren(n, pending)
	}
	if len(rootIdx[n.Key]) > 0 && pending[n] == 0 {
		b.drop(n, pending)
	}
}

// doneWithChildren counts n out of its children's pending parents, and
// drops each child that has none left. b.mu is held.
func (b *Builder) doneWithChildren(n *Node, pending map[*Node]int) {
	for _, e := range n.Children() {
		pending[e.Child]--
		if pending[e.Child] == 0 {
			b.drop(e.Child, pending)
		}
	}
}

// drop releases n's accumulation; n, found in the cache, is then done with
// its children too. b.mu is held.
func (b *Builder) drop(n *Node, pending map[*Node]int) {
	if n.IsComponent() {
		return
	}
	r := b.done[n.Key]
	if r == nil {
		return
	}
	r.acc = nil
	if r.fromCache {
		b.doneWithChildren(n, pending)
	}
}

// countSubgraph adds up the node and stage counts of the nodes reachable
// from root.
func (b *Builder) countSubgraph(root *Node, res *Result) {
	eachNode(func(n *Node) {
		r := b.result(n)
		if r == nil {
			return
		}
		switch {
		case r.fromCache:
			res.NodesCached++
		case !n.IsComponent() || n == root:
			res.NodesBuilt++
		}
		res.StagesRan += r.stagesRan
		res.StagesCached += r.stagesCached
	}, root)
}

// isRoot reports whether n is one of the graph's build roots.
func (b *Builder) isRoot(n *Node) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.roots[n]
}

func (b *Builder) result(n *Node) *nodeResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done[n.Key]
}

// buildNode is the work of one graph vertex. Components are only prepared
// here (their files parsed); they are applied in each parent's context. A
// component that is itself a build root is also built like a
// kustomization, as kustomize does.
func (b *Builder) buildNode(ctx context.Context, n *Node) (*Accumulation, error) {
	b.parseFiles(n.Resources)
	if n.IsComponent() && !b.isRoot(n) {
		return nil, nil
	}
	b.mu.Lock()
	b.stats.NodesBuilt++
	b.mu.Unlock()
	acc := &Accumulation{Resources: resource.NewList(), Config: &fieldspec.Config{}}
	if err := b.accumulate(ctx, n, acc); err != nil {
		return nil, err
	}
	// Freezing makes whoever edits a resource next copy it first: the
	// dependents that share the accumulation. A root no node includes has
	// one reader, its own finishing steps, which may then edit in place
	// what this build made or copied (its bases' resources stay frozen):
	// before, every resource was copied once more for the labels and
	// annotations those steps rewrite.
	if b.storesAccumulation(n) || b.opts.VerifyCache {
		acc.Resources.Freeze()
	}
	return acc, nil
}

// parseFiles decodes the resource files among entries, several at once
// (at most Jobs; each file on one goroutine). Decoding only fills the
// parse table: accumulate takes the files in their order, so the output
// and the error reported (that of the first file in order that fails) do
// not depend on which file finished first.
func (b *Builder) parseFiles(entries []*Entry) {
	var files []*Entry
	for _, e := range entries {
		if e.File != "" {
			files = append(files, e)
		}
	}
	forEach(len(files), b.opts.Jobs, func(i int) { b.parse(files[i]) })
}

// parse decodes a resource file entry once.
func (b *Builder) parse(e *Entry) *parsedFile {
	b.mu.Lock()
	p, ok := b.parsed[e.src]
	b.mu.Unlock()
	if ok {
		return p
	}
	rs, err := resyaml.Decode(e.Data)
	p = &parsedFile{}
	if err != nil {
		p.err = decodeError(e, err)
	} else {
		p.list = resource.NewList(rs...)
		p.list.Freeze()
	}
	b.mu.Lock()
	b.parsed[e.src] = p
	b.mu.Unlock()
	return p
}

// decodeError is the error of a resource file entry e whose content does
// not decode (err from resyaml.Decode), in kustomize's words.
func decodeError(e *Entry, err error) error {
	var se *resyaml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("accumulating resources from '%s': MalformedYAMLError: yaml: line %d: %s in File: %s", e.Path, se.Line, se.Msg, e.File)
	}
	return fmt.Errorf("accumulating resources from '%s': %s: %w", e.Path, e.File, err)
}

// child returns the accumulation of a built child node.
func (b *Builder) child(ctx context.Context, n *Node) (*Accumulation, error) {
	r := b.result(n)
	if r == nil {
		return nil, fmt.Errorf("internal error: %s used before it was built", n.Dir)
	}
	return b.load(ctx, n, r)
}

// finishRoot runs the root-only steps on a root's accumulation and renders
// the output, or takes both from the cache.
func (b *Builder) finishRoot(ctx context.Context, n *Node, r *nodeResult, res *Result) {
	if r.output != nil {
		b.count(func(s *Stats) { s.RootsCached++ })
		res.YAML, res.Digest, res.Cached = r.output, r.outputSum, true
		return
	}
	var key cache.Key
	if b.memo != nil && r.key != (cache.Key{}) {
		key = b.memo.rootKey(r.key)
		if r.fromCache && !b.opts.VerifyCache {
			if data, sum, ok := b.memo.Store.GetDigest(key); ok {
				b.count(func(s *Stats) { s.RootsCached++ })
				res.YAML, res.Digest, res.Cached = data, sum, true
				b.explainRoot(n, "hit (its output, stored under its key)")
				return
			}
		}
	}
	acc, err := b.load(ctx, n, r)
	if err != nil {
		res.Err = err
		return
	}
	if r.fromCache && !r.rebuilt {
		b.explainRoot(n, "hit (its accumulation; the output rendered from it)")
	}
	out, err := b.finish(ctx, n, acc)
	if err != nil {
		res.Err = err
		return
	}
	y, err := b.render(out)
	if err != nil {
		res.Err = err
		return
	}
	// (Capped, so that an append by the caller copies.)
	res.Resources, res.YAML = out, y[:len(y):len(y)]
	if key != (cache.Key{}) {
		// The output as rendered is the whole entry: no second encoding,
		// and its digest, computed once, serves the caller too.
		res.Digest = cache.Digest(y)
		b.memo.Store.PutDigest(key, y, res.Digest, hasSecret(out) || runsPlugins(n))
	}
}
