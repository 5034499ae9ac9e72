package cluster

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/render"
	"github.com/kpipe/kpipe/internal/rootindex"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// Root is a Flux Kustomization a run starts from, and the directory it
// builds (absolute).
type Root struct {
	K   *flux.Kustomization
	Dir string
}

// ClusterRoot is the Flux Kustomization that applies clusterDir (as flux
// bootstrap's gotk-sync.yaml or flux-operator's FluxInstance does):
// flux-system in flux-system, from the GitRepository flux-system, with
// spec.path clusterDir relative to sourceRoot. A Kustomization of that
// name and namespace that the directory holds is the same object: it is
// not rendered again.
func ClusterRoot(sourceRoot, clusterDir string) (Root, error) {
	rel, err := filepath.Rel(sourceRoot, clusterDir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return Root{}, fmt.Errorf("%s is not inside the source root %s (set --source-root)", clusterDir, sourceRoot)
	}
	k := &flux.Kustomization{}
	k.APIVersion, k.Kind = flux.Group+"/v1", flux.KindKustomization
	k.Name, k.Namespace = "flux-system", "flux-system"
	k.Spec.Path = "./" + filepath.ToSlash(rel)
	k.Spec.Prune = true
	k.Spec.Interval.Duration = 10 * time.Minute
	k.Spec.SourceRef = flux.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}
	return Root{K: k, Dir: clusterDir}, nil
}

// Options are the settings of a run.
type Options struct {
	// FS is the tree (nil: loaders.Disk).
	FS loaders.FS
	// Cwd is where relative LocalSources directories are taken from, and
	// output names and report paths relative to.
	Cwd string
	// SourceRoot is the repository's directory (absolute): where a
	// GitRepository or OCIRepository named flux-system lies, unless
	// LocalSources says otherwise. Node keys hold paths relative to it.
	SourceRoot string
	// LocalSources are where sources lie: Kind/Namespace/Name -> directory
	// (--local-sources).
	LocalSources map[string]string
	// DryRun reads no substituteFrom (flux build --dry-run).
	DryRun bool
	// IgnorePaths and Strict are flux build's --ignore-paths and
	// --strict-substitute; InMemoryBuild words errors as its
	// --in-memory-build does.
	IgnorePaths   []string
	Strict        bool
	InMemoryBuild bool
	// Engine carries the jobs and the cache (Store, Files, Version).
	Engine engine.Options
	// Remote fetches remote bases and files (nil: they fail).
	Remote *fetch.Fetcher
	// OutDir receives each node's output (OutputName); Check compares
	// instead of writing; Prune deletes the outputs of Kustomizations the
	// cluster no longer renders (only files a run wrote).
	OutDir       string
	Check, Prune bool
	// Shard, when its Count is above one, writes and reports only the
	// Kustomizations of that shard (every shard renders what it needs to
	// find them: the others' nodes come from the cache when shared).
	Shard batch.Shard
	// Version is written into the report.
	Version string
	// Reuse, when set, is asked for each node before it is rendered (kpipe
	// diff --flux: the other side's result of a node whose inputs did not
	// change); a result it gives is used as the node's.
	Reuse func(n *Node) (*Result, bool)
	// NoRecords renders every node, reading and writing no record (the
	// engine's cache is still used).
	NoRecords bool
	// HelmReleases, when set, renders the HelmReleases the Flux
	// Kustomizations render, each as a node of its own kind, once every
	// Flux Kustomization is rendered (so that their valuesFrom can be
	// looked up among everything the cluster renders); their results are
	// entries of the report (Path "HelmRelease NAMESPACE/NAME", output
	// OUT/<namespace>/<name>.helmrelease.yaml). Nil: a HelmRelease stays an
	// object of its Kustomization's output, listed in the report. This is
	// the seam for package internal/flux/helmrelease (issue 52's third
	// part). It is called from several goroutines at once.
	HelmReleases func(ctx context.Context, hr HelmRelease) *Result
}

// HelmRelease is a HelmRelease (helm.toolkit.fluxcd.io) a Flux
// Kustomization rendered, for Options.HelmReleases.
type HelmRelease struct {
	// ID is Namespace/Name; Object the HelmRelease as rendered (after its
	// Kustomization's post-build steps), RenderedBy that Kustomization.
	ID         string
	Object     json.RawMessage
	RenderedBy string
	// Lookup returns a ConfigMap or a Secret the cluster renders (for
	// valuesFrom), as substituteFrom reads them.
	Lookup func(kind, namespace, name string) (Provided, bool)
	// Source returns a Flux source (source.toolkit.fluxcd.io: a
	// GitRepository, HelmRepository, OCIRepository, HelmChart...) the
	// cluster renders, as rendered (JSON; the first rendering of it).
	Source func(kind, namespace, name string) (json.RawMessage, bool)
	// SourceDir is the directory of a source (Options.LocalSources, or
	// the source root for the repository's own flux-system
	// GitRepository or OCIRepository), or an error naming the flag that
	// gives it.
	SourceDir func(kind, namespace, name string) (string, error)
	// FS is the tree the run reads (a directory SourceDir gives lies in
	// it).
	FS loaders.FS
}

// hrNode is a HelmRelease rendered by Options.HelmReleases.
type hrNode struct {
	hr   HelmRelease
	res  *Result
	used *usedNodes
}

// helmReleases renders the HelmReleases the nodes rendered, each once
// (the first rendering of one), with Options.HelmReleases.
func (r *run) helmReleases(ctx context.Context, order []*Node, jobs int) []*hrNode {
	if r.o.HelmReleases == nil {
		return nil
	}
	byID := map[string]*Node{}
	for _, n := range order {
		byID[n.ID] = n
	}
	// used collects, per HelmRelease, the nodes whose objects its
	// rendering looked up: what it read is theirs too.
	lookupIn := func(used *usedNodes) func(kind, namespace, name string) (Provided, bool) {
		return func(kind, namespace, name string) (Provided, bool) {
			r.mu.Lock()
			key := kind + "/" + namespace + "/" + name
			p, ok := r.provides[key]
			by := r.providedBy[key]
			r.mu.Unlock()
			used.add(by)
			return p, ok
		}
	}
	sourceIn := func(used *usedNodes) func(kind, namespace, name string) (json.RawMessage, bool) {
		return func(kind, namespace, name string) (json.RawMessage, bool) {
			r.mu.Lock()
			key := kind + "/" + namespace + "/" + name
			raw, ok := r.sources[key]
			by := r.sourcedBy[key]
			r.mu.Unlock()
			used.add(by)
			return raw, ok
		}
	}
	sourceDir := func(kind, namespace, name string) (string, error) {
		ref := flux.CrossNamespaceSourceReference{Kind: kind, Namespace: namespace, Name: name}
		return r.sourceDirOf(ref, "")
	}
	seen := map[string]bool{}
	var out []*hrNode
	for _, n := range order {
		if n.res == nil || n.res.Err != "" {
			continue
		}
		for _, raw := range n.res.HelmReleases {
			var obj struct {
				Metadata struct{ Name, Namespace string }
			}
			if json.Unmarshal(raw, &obj) != nil {
				continue
			}
			id := obj.Metadata.Namespace + "/" + obj.Metadata.Name
			if seen[id] {
				continue
			}
			seen[id] = true
			used := &usedNodes{ids: map[string]bool{n.ID: true}}
			out = append(out, &hrNode{used: used, hr: HelmRelease{ID: id, Object: raw, RenderedBy: n.ID, Lookup: lookupIn(used),
				Source: sourceIn(used), SourceDir: sourceDir, FS: r.fsys}})
		}
	}
	var g errgroup.Group
	g.SetLimit(jobs)
	for _, h := range out {
		g.Go(func() error {
			h.res = r.o.HelmReleases(ctx, h.hr)
			if h.res == nil {
				h.res = &Result{Err: "not rendered"}
			}
			h.res.cached = h.res.FromCache
			return nil
		})
	}
	_ = g.Wait()
	for _, h := range out {
		h.res.Reads = h.reads(byID)
	}
	return out
}

// usedNodes are the IDs of the nodes whose objects a HelmRelease's
// rendering used.
type usedNodes struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (u *usedNodes) add(id string) {
	if id == "" {
		return
	}
	u.mu.Lock()
	u.ids[id] = true
	u.mu.Unlock()
}

// reads is what a HelmRelease's rendering depended on: its own reads
// (Options.HelmReleases': the chart's files), and those of the nodes
// that rendered it and the objects it used; nil when one of them is not
// known.
func (h *hrNode) reads(byID map[string]*Node) *engine.ReadSet {
	if h.res.Reads == nil {
		return nil
	}
	rs := *h.res.Reads
	ids := slices.Sorted(maps.Keys(h.used.ids))
	for _, id := range ids {
		n := byID[id]
		if n == nil || n.res == nil {
			return nil
		}
		nr := n.res.ReadSet()
		if nr == nil {
			return nil
		}
		rs.Files = append(rs.Files, nr.Files...)
		rs.Dirs = append(rs.Dirs, nr.Dirs...)
		rs.Trees = append(rs.Trees, nr.Trees...)
		rs.Either = append(rs.Either, nr.Either...)
	}
	for _, l := range []*[]string{&rs.Files, &rs.Dirs, &rs.Trees, &rs.Either} {
		*l = slices.Clone(*l)
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return &rs
}

// isSource reports whether apiVersion and kind are a Flux source's
// (source.toolkit.fluxcd.io).
func isSource(apiVersion, kind string) bool {
	return strings.HasPrefix(apiVersion, "source.toolkit.fluxcd.io/") && kind != ""
}

// isHelmRelease reports whether apiVersion and kind are a HelmRelease's.
func isHelmRelease(apiVersion, kind string) bool {
	return strings.HasPrefix(apiVersion, "helm.toolkit.fluxcd.io/") && kind == "HelmRelease"
}

// Node is a Flux Kustomization of the run.
type Node struct {
	// ID is Namespace/Name.
	ID string
	K  *flux.Kustomization
	// Object is the Flux object as rendered (JSON), by its parent or given.
	Object []byte
	// Dir is the path it builds (absolute), RelDir the same relative to
	// the source root.
	Dir, RelDir string
	// RenderedBy is the ID of the node that rendered it ("" for a root).
	RenderedBy string
	// Key is its cache key (Object, RelDir, the substitution variables,
	// the settings), set before it is rendered.
	Key cache.Key

	chain []string // IDs from the root to it
	err   error    // a failure before rendering (source, cycle)
	res   *Result
}

// Result is what rendering a node gave.
type Result struct {
	// YAML is the node's output (flux's printing), Err its failure (flux's
	// words).
	YAML []byte `json:"yaml,omitempty"`
	Err  string `json:"err,omitempty"`
	// Children are the Flux Kustomizations among its objects (JSON), in
	// order; Provides the ConfigMaps and Secrets (for substituteFrom).
	Children []json.RawMessage `json:"children,omitempty"`
	Provides []Provided        `json:"provides,omitempty"`
	// HelmReleases are the HelmReleases (helm.toolkit.fluxcd.io) among
	// its objects (JSON), in order: each a node of its own kind
	// (Options.HelmReleases).
	HelmReleases []json.RawMessage `json:"helmReleases,omitempty"`
	// Sources are the Flux sources (source.toolkit.fluxcd.io) among its
	// objects (JSON), in order: a HelmRelease's chart comes from one.
	Sources []json.RawMessage `json:"sources,omitempty"`
	// Warnings are kustomize's (deprecations), and the run's about it.
	Warnings []string `json:"warnings,omitempty"`
	// Reads is what its rendering depended on (paths of its tree), when
	// it was rendered in this run (else ReadSet reads it from the cache).
	Reads *engine.ReadSet `json:"-"`
	// For a HelmRelease, Options.HelmReleases sets Reads to what its
	// rendering read of the tree itself (its chart's files; empty for a
	// chart from a repository, nil when not known); the run adds the
	// reads of the nodes that rendered it and the objects it looked up.
	//
	// FromCache and HelmRuns are set by Options.HelmReleases: the result
	// was taken from the cache; how many times helm ran for it (both in
	// the report: Cached, StageHits and StageMisses).
	FromCache bool `json:"-"`
	HelmRuns  int  `json:"-"`

	cached                             bool
	nodesBuilt, nodesCached, stageRuns int
	stageHits                          int
	loadReads                          func() *engine.ReadSet
}

// ReadSet is what the node's rendering depended on (read from the cache
// for a result taken from its record); nil when it is not known.
func (res *Result) ReadSet() *engine.ReadSet {
	if res.Reads == nil && res.loadReads != nil {
		res.Reads = res.loadReads()
	}
	return res.Reads
}

// Provided is a ConfigMap or a Secret a node renders: its data, as
// substituteFrom reads it (a Secret's data decoded, its stringData merged,
// as the API server stores it). Encrypted marks a SOPS-encrypted Secret,
// whose data cannot be read offline.
type Provided struct {
	Kind      string            `json:"kind"`
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Data      map[string]string `json:"data,omitempty"`
	Encrypted bool              `json:"encrypted,omitempty"`
}

// Report is the outcome of a run: build-all's report, one entry
// (batch.RootReport, its Path the Kustomization's Namespace/Name) per
// Flux Kustomization, and what is Flux's about each.
type Report struct {
	*batch.Report
	Kustomizations []Kustomization `json:"kustomizations"`

	results []*Result
	keys    []cache.Key
}

// Kustomization is what the report says of a Flux Kustomization besides
// its build.
type Kustomization struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Path is the directory it builds, relative to the working directory.
	Path string `json:"path"`
	// RenderedBy is the Kustomization that renders it ("" for a root).
	RenderedBy string `json:"renderedBy,omitempty"`
	// DependsOn are its spec.dependsOn (Namespace/Name): reported, not
	// followed (rendering does not wait for them).
	DependsOn []string `json:"dependsOn,omitempty"`
	// HelmReleases are the HelmReleases it renders (Namespace/Name).
	HelmReleases []string `json:"helmReleases,omitempty"`
	// Kind is "HelmRelease" for an entry Options.HelmReleases rendered
	// ("" for a Flux Kustomization).
	Kind string `json:"kind,omitempty"`
}

// Result returns the result of the i-th Kustomization of the report.
func (r *Report) Result(i int) *Result { return r.results[i] }

// NodeKey returns the key of the i-th Kustomization of the report (zero
// when it failed before it had one).
func (r *Report) NodeKey(i int) cache.Key { return r.keys[i] }

// OutputName is the output file of a Flux Kustomization under the output
// directory: <namespace>/<name>.yaml ("_" for an empty namespace).
func OutputName(namespace, name string) string {
	if namespace == "" {
		namespace = "_"
	}
	return namespace + "/" + name + ".yaml"
}

// ownerPrefix marks the output directory's manifest entries of Flux
// Kustomizations.
const ownerPrefix = "flux:"

// run is one Run's state.
type run struct {
	o        Options
	fsys     loaders.FS
	files    *cache.FileIndex
	checker  *cache.InputChecker
	index    *rootindex.Index
	store    *cache.Store
	settings cache.Key

	mu       sync.Mutex
	provides map[string]Provided        // Kind/Namespace/Name -> the first rendering of it
	sources  map[string]json.RawMessage // Kind/Namespace/Name -> the first rendering of it
	// providedBy and sourcedBy are the nodes that rendered them.
	providedBy, sourcedBy map[string]string
}

// Run renders roots and every Flux Kustomization they render, writes the
// outputs (Options.OutDir) and reports on each. A node's failure is in
// its report entry; the error is for the run's own (an output directory
// that cannot be used).
func Run(ctx context.Context, roots []Root, o Options) (*Report, error) {
	start := time.Now()
	r := newRun(o)
	nodes := map[string]*Node{}
	var order []*Node
	var pending []*Node
	for _, root := range roots {
		n := r.newNode(root.K, root.Dir, "", nil)
		if nodes[n.ID] != nil {
			continue
		}
		nodes[n.ID] = n
		order = append(order, n)
		pending = append(pending, n)
	}
	jobs := o.Engine.Jobs
	if jobs < 1 {
		jobs = runtime.NumCPU()
	}
	for len(pending) > 0 && ctx.Err() == nil {
		ready, waiting := r.partition(pending)
		if len(ready) == 0 {
			ready, waiting = waiting, nil // rendered with what is found
		}
		r.renderAll(ctx, ready, jobs)
		pending = waiting
		for _, n := range ready {
			if n.res == nil || n.res.Err != "" {
				continue
			}
			for _, raw := range n.res.Children {
				child, err := r.child(n, raw)
				if errors.Is(err, errCycle) {
					// A cycle fails the node that closes it.
					n.res = &Result{Err: err.Error(), Warnings: n.res.Warnings, Reads: n.res.Reads}
					break
				}
				if child == nil {
					if err != nil {
						n.res.Warnings = append(n.res.Warnings, err.Error())
					}
					continue
				}
				if prev := nodes[child.ID]; prev != nil {
					if string(prev.Object) != string(child.Object) {
						prev.err = fmt.Errorf("Kustomization %s is rendered differently by %s and by %s", child.ID, displayParent(prev.RenderedBy), n.ID)
						if prev.res != nil {
							prev.res = &Result{Err: prev.err.Error(), Reads: prev.res.Reads}
						}
					}
					continue
				}
				nodes[child.ID] = child
				order = append(order, child)
				pending = append(pending, child)
			}
		}
	}
	for _, n := range order {
		if n.res == nil { // (cancelled)
			msg := "not rendered"
			if err := ctx.Err(); err != nil {
				msg = context.Cause(ctx).Error()
			}
			n.res = &Result{Err: msg}
		}
	}
	return r.report(ctx, order, nodes, r.helmReleases(ctx, order, jobs), start)
}

func displayParent(id string) string {
	if id == "" {
		return "the run's roots"
	}
	return id
}

// newRun sets a run up.
func newRun(o Options) *run {
	r := &run{o: o, fsys: o.FS, store: o.Engine.Cache.Store, provides: map[string]Provided{}, sources: map[string]json.RawMessage{},
		providedBy: map[string]string{}, sourcedBy: map[string]string{}}
	if r.fsys == nil {
		r.fsys = loaders.Disk
	}
	r.files = o.Engine.Cache.Files
	if r.files == nil {
		r.files = r.store.FileIndex()
	}
	if r.fsys != loaders.Disk {
		var src cache.Source = r.fsys
		if r.files.Source() != src {
			r.files = r.files.On(src)
		}
	}
	r.o.Engine.Cache.Files = r.files
	if r.o.Engine.Patches == nil {
		r.o.Engine.Patches = &stages.Patches{} // shared by the run's builds
	}
	r.checker = cache.NewInputChecker(r.files)
	r.settings = r.settingsKey()
	r.index = rootindex.Open(r.store, r.settings)
	return r
}

// One renders k from dir (absolute) as Run renders a node, from its
// record when every input it read is unchanged, without following the
// Flux Kustomizations it renders: `kpipe flux build kustomization`
// without --recursive. Options' output directory, shard and Reuse are
// not used.
func One(ctx context.Context, k *flux.Kustomization, dir string, o Options) *Result {
	r := newRun(o)
	n := r.newNode(k, dir, "", nil)
	jobs := o.Engine.Jobs
	if jobs < 1 {
		jobs = runtime.NumCPU()
	}
	res := r.renderNode(ctx, n, jobs)
	_ = r.files.Save("")
	return res
}

// newNode is a node for k, which builds dir, rendered by parent.
func (r *run) newNode(k *flux.Kustomization, dir, parent string, chain []string) *Node {
	obj, _ := json.Marshal(k)
	n := &Node{ID: k.Namespace + "/" + k.Name, K: k, Object: obj, Dir: filepath.Clean(dir), RenderedBy: parent}
	n.RelDir = n.Dir
	if rel, err := filepath.Rel(r.o.SourceRoot, n.Dir); err == nil && (filepath.IsLocal(rel) || rel == ".") {
		n.RelDir = filepath.ToSlash(rel)
	}
	n.chain = append(slices.Clone(chain), n.ID)
	return n
}

// child is the node of a Flux Kustomization parent rendered (raw), or nil
// when it is parent itself (flux skips it too) or closes a cycle (an
// error naming the objects).
func (r *run) child(parent *Node, raw json.RawMessage) (*Node, error) {
	k, err := flux.FromJSON(raw) // (raw is json.Marshal's: see build)
	if err != nil {
		return nil, fmt.Errorf("%s renders a Flux Kustomization kpipe cannot read: %w", parent.ID, err)
	}
	id := k.Namespace + "/" + k.Name
	if id == parent.ID {
		return nil, nil
	}
	if i := slices.Index(parent.chain, id); i >= 0 {
		cycle := append(slices.Clone(parent.chain[i:]), id)
		return nil, fmt.Errorf("%w: %s", errCycle, strings.Join(cycle, " -> "))
	}
	dir, derr := r.sourceDir(k)
	n := r.newNode(k, dir, parent.ID, parent.chain)
	n.err = derr
	return n, nil
}

// sourceDir is where k builds: its source's directory (LocalSources, or
// the source root for the repository's own flux-system source) joined
// with spec.path.
func (r *run) sourceDir(k *flux.Kustomization) (string, error) {
	ref := k.Spec.SourceRef
	if ref.Namespace == "" {
		ref.Namespace = k.Namespace
	}
	dir, err := r.sourceDirOf(ref, " of Kustomization "+k.Namespace+"/"+k.Name)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, k.Spec.Path), nil
}

// sourceDirOf is the directory of the source ref (its namespace set):
// LocalSources', or the source root for the repository's own
// flux-system source; of says whose source it is, for the error.
func (r *run) sourceDirOf(ref flux.CrossNamespaceSourceReference, of string) (string, error) {
	dir, ok := r.o.LocalSources[ref.String()]
	switch {
	case ok:
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(r.o.Cwd, dir)
		}
	case ref.Name == "flux-system" && (ref.Kind == "GitRepository" || ref.Kind == "OCIRepository"):
		dir = r.o.SourceRoot
	default:
		return "", fmt.Errorf("source %s%s is not available offline: give its directory with --local-sources %s=DIR", ref.String(), of, ref.String())
	}
	return dir, nil
}

// partition splits pending (sorted by ID) into the nodes that can be
// rendered now and those whose substituteFrom references are not found
// yet.
func (r *run) partition(pending []*Node) (ready, waiting []*Node) {
	slices.SortFunc(pending, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) })
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range pending {
		if n.err != nil || r.o.DryRun || r.refsFound(n.K) {
			ready = append(ready, n)
		} else {
			waiting = append(waiting, n)
		}
	}
	return ready, waiting
}

// refsFound reports whether every substituteFrom reference of k is among
// the objects rendered so far (r.mu held).
func (r *run) refsFound(k *flux.Kustomization) bool {
	if k.Spec.PostBuild == nil {
		return true
	}
	for _, ref := range k.Spec.PostBuild.SubstituteFrom {
		if _, ok := r.provides[ref.Kind+"/"+k.Namespace+"/"+ref.Name]; !ok {
			return false
		}
	}
	return true
}

// substituteFrom resolves k's substituteFrom from what the run rendered,
// as kustomize-controller reads them from the cluster.
func (r *run) substituteFrom(k *flux.Kustomization) ([]map[string]string, []string, error) {
	if r.o.DryRun || k.Spec.PostBuild == nil {
		return nil, nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var from []map[string]string
	var warnings []string
	for _, ref := range k.Spec.PostBuild.SubstituteFrom {
		p, ok := r.provides[ref.Kind+"/"+k.Namespace+"/"+ref.Name]
		switch {
		case ref.Kind != "ConfigMap" && ref.Kind != "Secret":
			continue // (kustomize-controller ignores other kinds)
		case !ok && ref.Optional:
			continue
		case !ok:
			// In a cluster a missing one fails the reconciliation; one the
			// tree does not render is most often made there by another
			// tool (external-secrets, by hand), which kpipe cannot see.
			warnings = append(warnings, fmt.Sprintf("substituteFrom %s/%s/%s: the cluster's Kustomizations render no such object (made outside the tree?): its variables are not substituted", ref.Kind, k.Namespace, ref.Name))
			continue
		case p.Encrypted:
			warnings = append(warnings, fmt.Sprintf("substituteFrom %s/%s/%s is SOPS-encrypted: its variables are not substituted (kpipe cannot decrypt it)", ref.Kind, k.Namespace, ref.Name))
			continue
		}
		from = append(from, p.Data)
	}
	return from, warnings, nil
}

// renderAll renders the nodes, jobs at a time.
func (r *run) renderAll(ctx context.Context, nodes []*Node, jobs int) {
	var g errgroup.Group
	g.SetLimit(jobs)
	perBuild := 1
	if len(nodes) < jobs {
		perBuild = jobs / max(1, len(nodes))
	}
	for _, n := range nodes {
		g.Go(func() error {
			n.res = r.renderNode(ctx, n, perBuild)
			r.mu.Lock()
			for _, p := range n.res.Provides {
				key := p.Kind + "/" + p.Namespace + "/" + p.Name
				if _, ok := r.provides[key]; !ok {
					r.provides[key] = p
					r.providedBy[key] = n.ID
				}
			}
			for _, raw := range n.res.Sources {
				var obj struct {
					Kind     string
					Metadata struct{ Name, Namespace string }
				}
				if json.Unmarshal(raw, &obj) != nil {
					continue
				}
				key := obj.Kind + "/" + obj.Metadata.Namespace + "/" + obj.Metadata.Name
				if _, ok := r.sources[key]; !ok {
					r.sources[key] = raw
					r.sourcedBy[key] = n.ID
				}
			}
			r.mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
}

// renderNode renders n: from the other side (Reuse), from its record, or
// built.
func (r *run) renderNode(ctx context.Context, n *Node, jobs int) *Result {
	if n.err != nil {
		return &Result{Err: n.err.Error(), Reads: &engine.ReadSet{}}
	}
	from, warnings, err := r.substituteFrom(n.K)
	if err != nil {
		return &Result{Err: err.Error(), Warnings: warnings, Reads: &engine.ReadSet{Trees: []string{n.Dir}}}
	}
	n.Key = r.nodeKey(n, from)
	if r.o.Reuse != nil {
		if res, ok := r.o.Reuse(n); ok {
			return res
		}
	}
	name := r.recordName(n)
	if res, ok := r.lookup(name); ok {
		return res
	}
	res, inputs, sets := r.build(ctx, n, from, jobs)
	res.Warnings = append(warnings, res.Warnings...)
	if res.Err == "" && inputs != nil {
		r.record(name, res, inputs, sets)
	}
	return res
}

// build renders n with the engine.
func (r *run) build(ctx context.Context, n *Node, from []map[string]string, jobs int) (*Result, []cache.Input, []*rootindex.InputSet) {
	eo := r.o.Engine
	eo.Jobs = jobs
	ro := render.Options{FS: r.o.FS, IgnorePaths: r.o.IgnorePaths, Strict: r.o.Strict, InMemoryBuild: r.o.InMemoryBuild, Engine: eo, Remote: r.o.Remote,
		SubstituteFrom: func(*flux.Kustomization) ([]map[string]string, error) { return from, nil }}
	if r.o.DryRun {
		ro.SubstituteFrom = nil
	}
	rd, err := render.Kustomization(ctx, n.K, n.Dir, ro)
	res := &Result{}
	if rd != nil {
		res.Warnings = rd.Warnings
		res.Reads = readsOf(rd, n.Dir)
		if rd.Builder != nil {
			st := rd.Builder.Stats()
			res.nodesBuilt, res.nodesCached = st.NodesBuilt, st.NodesCached
			for _, s := range st.Stages {
				res.stageRuns += s.Ran
				res.stageHits += s.Cached
			}
		}
	}
	if err != nil {
		res.Err = err.Error()
		return res, nil, nil
	}
	out, err := encode(rd.Objects)
	if err != nil {
		res.Err = err.Error()
		return res, nil, nil
	}
	res.YAML = out
	for _, obj := range rd.Objects {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if flux.IsFluxKustomization(apiVersion, kind) {
			raw, err := json.Marshal(obj)
			if err == nil {
				res.Children = append(res.Children, raw)
			}
		}
		if isHelmRelease(apiVersion, kind) {
			if raw, err := json.Marshal(obj); err == nil {
				res.HelmReleases = append(res.HelmReleases, raw)
			}
		}
		if isSource(apiVersion, kind) {
			if raw, err := json.Marshal(obj); err == nil {
				res.Sources = append(res.Sources, raw)
			}
		}
		if p, ok := provided(obj); ok {
			res.Provides = append(res.Provides, p)
		}
	}
	inputs, sets, ok := r.inputsOf(rd)
	if !ok {
		return res, nil, nil
	}
	return res, inputs, sets
}

// readsOf is what a rendering depended on: the engine's reads of its
// kustomizations and the generation's files, stats and listings (a
// listed directory as a tree: a YAML file added anywhere below it
// changes the generated kustomization).
func readsOf(rd *render.Rendering, dir string) *engine.ReadSet {
	rs := engine.ReadSet{Trees: []string{dir}}
	if rd.Builder != nil && rd.Root != nil {
		rs = rd.Builder.Reads(rd.Root)
	}
	if g := rd.Generated; g != nil {
		rs.Files = append(rs.Files, g.Reads.Files...)
		rs.Trees = append(rs.Trees, g.Reads.Dirs...)
		rs.Either = append(rs.Either, g.Reads.Stats...)
	}
	for _, l := range []*[]string{&rs.Files, &rs.Dirs, &rs.Trees, &rs.Either} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return &rs
}

// errCycle is the error of a node that renders one of its ancestors.
var errCycle = errors.New("Kustomizations render each other in a cycle")

// errNoInput says a path's digest cannot be taken.
var errNoInput = errors.New("no digest")

// inputOf is the input that covers path as the generation saw it: the
// file or directory there, or, when nothing is there, the listing of its
// nearest existing directory (creating it changes that listing).
func (r *run) inputOf(path string) (cache.Input, error) {
	for p := path; ; p = filepath.Dir(p) {
		real, err := r.fsys.EvalSymlinks(p)
		if err == nil {
			d, ok := r.files.Digest(real)
			if !ok {
				return cache.Input{}, errNoInput
			}
			return r.files.Stamp(cache.Input{Path: p, Real: real, Digest: d}), nil
		}
		if filepath.Dir(p) == p {
			return cache.Input{}, errNoInput
		}
	}
}

// inputsOf lists what a rendering read, for its record: the generation's
// reads and the engine's inputs, without the kustomization laid over the
// tree and its directory's listing (which hold the overlay: the
// generation's reads stand for them). False when they cannot all be
// known.
func (r *run) inputsOf(rd *render.Rendering) ([]cache.Input, []*rootindex.InputSet, bool) {
	if rd.Builder == nil || rd.Root == nil || rd.Generated == nil {
		return nil, nil, false
	}
	own, sets, ok := rd.Builder.InputSets(rd.Root)
	if !ok {
		return nil, nil, false
	}
	overlayFile := filepath.Join(rd.Dir, filepath.Base(rd.Generated.File))
	var inputs []cache.Input
	for _, in := range own {
		if in.Real == overlayFile || in.Path == overlayFile || in.Real == rd.Dir {
			continue
		}
		inputs = append(inputs, in)
	}
	g := rd.Generated.Reads
	seen := map[string]bool{}
	for _, list := range [][]string{g.Files, g.Dirs, g.Stats} {
		for _, p := range list {
			if seen[p] {
				continue
			}
			seen[p] = true
			in, err := r.inputOf(p)
			if err != nil {
				return nil, nil, false
			}
			inputs = append(inputs, in)
		}
	}
	return inputs, sets, true
}

// settingsKey is the digest of what every node's output depends on
// besides its own inputs: kpipe's version, the engine's Flux settings and
// the run's.
func (r *run) settingsKey() cache.Key {
	eo := render.Engine(r.o.Engine)
	kb := cache.NewKey(r.o.Engine.Cache.Version, "flux-build-all").Key(engine.SettingsKey(eo, loaders.None))
	kb.String(fmt.Sprint(r.o.DryRun, r.o.Strict, r.o.InMemoryBuild)).String(strings.Join(r.o.IgnorePaths, "\n"))
	return kb.Sum()
}

// nodeKey is n's key: the object as rendered, its path relative to the
// source root, the variables substituteFrom gave, the settings.
func (r *run) nodeKey(n *Node, from []map[string]string) cache.Key {
	fromJSON, _ := json.Marshal(from)
	return cache.NewKey(r.o.Engine.Cache.Version, "flux-node").Key(r.settings).Bytes(n.Object).String(n.RelDir).Bytes(fromJSON).Sum()
}

// recordName names n's record: its key, and where its tree lies (a
// record's inputs are paths of one tree).
func (r *run) recordName(n *Node) string {
	return hex.EncodeToString(n.Key[:]) + "\x00" + r.o.SourceRoot
}

// outputKey is where the result a record names is kept.
func (r *run) outputKey(name string) cache.Key {
	return cache.NewKey(r.o.Engine.Cache.Version, "flux-node-result").Key(r.settings).String(name).Sum()
}

// lookup returns the result of the record name when every input it lists
// is unchanged.
func (r *run) lookup(name string) (*Result, bool) {
	if r.store == nil || r.o.NoRecords || r.o.Engine.VerifyCache {
		return nil, false
	}
	rec, ok := r.index.Root(name)
	if !ok || !r.index.Unchanged(r.checker, rec) {
		return nil, false
	}
	data, d, ok := r.store.GetDigest(r.outputKey(name))
	if !ok || d != rec.OutputDigest {
		return nil, false
	}
	res, ok := decodeResult(data)
	if !ok {
		return nil, false
	}
	res.cached = true
	store, key := r.store, r.readsKey(d)
	res.loadReads = func() *engine.ReadSet {
		rs := &engine.ReadSet{}
		b, ok := store.Get(key)
		if !ok || json.Unmarshal(b, rs) != nil {
			return nil
		}
		return rs
	}
	return res, true
}

// record keeps res and its inputs under name: the result (its output and
// what the run needs of it), and apart, keyed by the result's digest,
// what it read (only kpipe diff --flux asks for it).
func (r *run) record(name string, res *Result, inputs []cache.Input, sets []*rootindex.InputSet) {
	if r.store == nil || r.o.NoRecords {
		return
	}
	data, err := encodeResult(res)
	if err != nil {
		return
	}
	sum := cache.Digest(data)
	if res.Reads != nil {
		if b, err := json.Marshal(res.Reads); err == nil {
			r.store.Put(r.readsKey(sum), b)
		}
	}
	keys := make([]cache.Key, len(sets))
	for i, s := range sets {
		keys[i] = r.index.SaveInputSet(s)
	}
	// A Secret's data may be in the output: never sent to a remote
	// cache unless allowed.
	r.store.PutDigest(r.outputKey(name), data, sum, sensitive(res))
	r.index.SetRoot(name, &rootindex.Record{Inputs: inputs, Sets: keys, OutputDigest: sum})
}

// readsKey is where the reads of the result of digest d are kept.
func (r *run) readsKey(d cache.Key) cache.Key {
	return cache.NewKey(r.o.Engine.Cache.Version, "flux-node-reads").Key(d).Sum()
}

// storedResult is what a record's result keeps besides the output.
type storedResult struct {
	Children     []json.RawMessage `json:"children,omitempty"`
	Provides     []Provided        `json:"provides,omitempty"`
	HelmReleases []json.RawMessage `json:"helmReleases,omitempty"`
	Sources      []json.RawMessage `json:"sources,omitempty"`
	Warnings     []string          `json:"warnings,omitempty"`
}

// encodeResult is a result as its record keeps it: the length of the
// JSON of what it holds besides the output (a uvarint), that JSON, and
// the output's bytes as they are.
func encodeResult(res *Result) ([]byte, error) {
	meta, err := json.Marshal(storedResult{Children: res.Children, Provides: res.Provides, HelmReleases: res.HelmReleases, Sources: res.Sources, Warnings: res.Warnings})
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, len(meta)+len(res.YAML)+8), uint64(len(meta)))
	out = append(out, meta...)
	return append(out, res.YAML...), nil
}

func decodeResult(data []byte) (*Result, bool) {
	n, k := binary.Uvarint(data)
	if k <= 0 || uint64(len(data)-k) < n {
		return nil, false
	}
	var s storedResult
	if json.Unmarshal(data[k:k+int(n)], &s) != nil {
		return nil, false
	}
	return &Result{YAML: data[k+int(n):], Children: s.Children, Provides: s.Provides, HelmReleases: s.HelmReleases, Sources: s.Sources, Warnings: s.Warnings}, true
}

func sensitive(res *Result) bool {
	for _, p := range res.Provides {
		if p.Kind == "Secret" {
			return true
		}
	}
	return false
}
