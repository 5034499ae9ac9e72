package diff

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/rootindex"
	"github.com/kpipe/kpipe/loaders"
)

// Statuses of a root in a Result.
const (
	RootChanged = "changed" // rendered on both sides, some resource differs
	RootAdded   = "added"   // a root only on the new side
	RootRemoved = "removed" // a root only on the old side
	RootError   = "error"   // fails to render on one side, or fails differently on both
	// RootFailing is a root that fails to render on both sides with the
	// same error: nothing changed, but the change reaches a root that does
	// not build, and a reviewer must see it.
	RootFailing = "failing"
)

// RootDiff is one root that differs between the two sides.
type RootDiff struct {
	// Path is the root's directory relative to the tree (slash-separated;
	// "." for the tree itself).
	Path   string `json:"path"`
	Status string `json:"status"`
	// OldError and NewError are the root's build errors on each side.
	OldError string `json:"oldError,omitempty"`
	NewError string `json:"newError,omitempty"`
	// Changes are the resources that differ.
	Changes []ResourceChange `json:"resources,omitempty"`
	// Reordered says the order of the resources changed (not a change by
	// itself).
	Reordered bool `json:"reordered,omitempty"`
}

// Result is the outcome of a review.
type Result struct {
	// Base and Head name the two sides (revisions, or directories).
	Base string `json:"base"`
	Head string `json:"head"`
	// Compared is the number of roots rendered and compared (the affected
	// roots, for a git review); Unchanged those of them equal on both sides.
	Compared  int `json:"compared"`
	Unchanged int `json:"unchanged"`
	// Roots are the roots that differ, and those that fail on both sides
	// (RootFailing), by path.
	Roots []RootDiff `json:"roots"`
	// ObjectsRead is the number of git objects a git review read (trees
	// and files of the revisions it compared): what the roots compared
	// read, whatever the size of the repository.
	ObjectsRead int `json:"objectsRead,omitempty"`
	// Warnings are those of the kustomization files that the compared
	// roots include on the new side, where this review loaded them (a
	// root taken from the record of an earlier review is not loaded), each
	// file's once; files are relative to the tree, as Roots' paths.
	Warnings []batch.Warning `json:"warnings,omitempty"`
	// OldBuilt and NewBuilt count the kustomizations built on each side
	// (the others came from the cache, or were up to date).
	OldBuilt int `json:"oldNodesBuilt"`
	NewBuilt int `json:"newNodesBuilt"`
	// Unit names what Roots are when they are not kustomization roots
	// ("application": `kpipe diff --argocd`, where Path is an
	// Application's name); "" for roots.
	Unit string `json:"unit,omitempty"`
}

// noun is what the result compares, singular.
func (r *Result) noun() string {
	if r.Unit != "" {
		return r.Unit
	}
	return "root"
}

// Changed reports whether anything differs, or a compared root fails to
// build on both sides (either asks for a reviewer's attention).
func (r *Result) Changed() bool { return len(r.Roots) > 0 }

// Failing counts the roots that fail on both sides (RootFailing).
func (r *Result) Failing() int {
	n := 0
	for _, rd := range r.Roots {
		if rd.Status == RootFailing {
			n++
		}
	}
	return n
}

// GitOptions are the settings of a review of two git revisions.
type GitOptions struct {
	// Dir is where the command runs (a directory of the repository); Paths
	// are the trees to search for roots, relative to Dir (none: Dir).
	Dir   string
	Paths []string
	// Base is the old revision ("": the merge base of HEAD with the
	// default branch); Head the new one ("": the working tree).
	Base, Head string
	// Build carries the build settings (restriction, engine options with
	// the cache, roots selection); its Trees and OutDir are ignored.
	Build batch.Options
	// Diff tunes the comparison.
	Diff Options
}

// ReviewGit renders, at two revisions, the roots whose inputs differ
// between them (package affected), through the cache, and compares them.
// A revision (the old one, and the new one unless it is the working tree)
// is read from git's objects through the read seam, without a checkout
// (package gitfs): what the roots compared read is read, nothing else.
// Its files appear under a path that names its side, <top>@base or
// <top>@head, which is never written to disk; what needs a real
// directory (a plugin) gets its kustomization's directory written to a
// temporary one (engine).
func ReviewGit(ctx context.Context, o GitOptions) (*Result, error) {
	sides, err := OpenSides(ctx, o.Dir, o.Base, o.Head)
	if err != nil {
		return nil, err
	}
	defer sides.Close()
	changes := sides.Changes
	res := &Result{}
	res.Base, res.Head = sides.Names()
	// Trees, relative to the repository's top level.
	rels, err := sides.Trees(o.Paths)
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return res, nil
	}
	defer func() { res.ObjectsRead = sides.ObjectsRead() }()
	baseDir, baseFS, headDir, headFS := sides.BaseDir, sides.BaseFS, sides.HeadDir, sides.HeadFS
	// The new side's affected roots (this also builds, or finds up to
	// date, every root there, recording what each read).
	bo := o.Build
	bo.OutDir, bo.Prune, bo.Progress, bo.RootsFrom = "", false, nil, ""
	bo.Trees, bo.FS = under(headDir, rels), headFS
	hits, rep, err := affected.Find(ctx, bo, affected.Under(headDir, changes))
	if err != nil && !errors.Is(err, batch.ErrNoRoots) {
		return nil, err
	}
	var hitRels []string
	for _, h := range hits {
		hitRels = append(hitRels, relPath(headDir, h.Path))
	}
	baseHasK := func(rel string) bool { return loaders.HasKustomization(baseFS, filepath.Join(baseDir, rel)) }
	removed := map[string]bool{}
	for _, d := range affected.RemovedKustomizations(headFS, affected.Under(headDir, changes)) {
		rel := relPath(headDir, d)
		if !slices.Contains(hitRels, rel) && inTrees(rel, rels) && baseHasK(rel) {
			removed[rel] = true
		}
	}
	// Directories that became roots (their last referrer changed) or
	// stopped being roots (a changed kustomization now refers to them).
	var became, ceased []string
	if !o.Build.AllKustomizations && rep != nil {
		sides := [2]side{{baseDir, baseFS}, {headDir, headFS}}
		if became, ceased, err = rootMoves(ctx, o.Build, sides, rels, changes, headRootsOf(rep, headDir), baseHasK); err != nil {
			return nil, err
		}
	}
	relRoots := slices.Clone(hitRels)
	for _, rel := range became {
		if !slices.Contains(relRoots, rel) {
			relRoots = append(relRoots, rel)
		}
	}
	// Old-side roots: the affected roots that were roots there too, the
	// directories whose kustomization was deleted (removed roots, or
	// bases, told apart when rendered), and the roots that ceased to be.
	oldCands := slices.Clone(ceased)
	for _, rel := range relRoots {
		if !slices.Contains(became, rel) && baseHasK(rel) {
			oldCands = append(oldCands, rel)
		}
	}
	for rel := range removed {
		oldCands = append(oldCands, rel)
	}
	slices.Sort(oldCands)
	oldCands = slices.Compact(oldCands)
	eo := o.Build.Engine
	olds, oldBuilt := renderRoots(ctx, eo, loadOptions(o.Build, baseFS), baseDir, oldCands, removed)
	news, newBuilt := renderRoots(ctx, eo, loadOptions(o.Build, headFS), headDir, relRoots, nil)
	compareSides(res, olds, news, baseDir, headDir, o.Diff)
	res.OldBuilt, res.NewBuilt = oldBuilt, newBuilt
	if rep != nil {
		res.NewBuilt += rep.Summary.NodesBuilt
	}
	return res, nil
}

// revisionDir is where the revision of one side (base, head) appears: a
// path never created on disk, so that nothing of the working tree is read
// for it. It names the side, not the commit: the records the cache keeps
// of what a root read there, and of the roots found there, are those of
// the last revision that side had, checked against this one by the names
// of git's objects, so that a new commit costs what changed since (an
// unchanged directory vouches for what lies below it).
func revisionDir(top, side string) string { return top + "@" + side }

// side is one side of a review: its tree's directory and where it is
// read.
type side struct {
	dir string
	fs  loaders.FS
}

// rootMoves finds the directories that are roots on the new side and were
// bases on the old one (became), and the reverse (ceased). Only a changed
// kustomization can move a directory between the two: a root became one
// when a kustomization that referred to it changed or went, and ceased to
// be one when a changed or added kustomization now refers to it. The old
// side's roots are discovered in full only in the second case.
func rootMoves(ctx context.Context, bo batch.Options, sides [2]side, trees []string, changes []affected.Change, headRoots []string,
	baseHasK func(rel string) bool) (became, ceased []string, err error) {
	old, nw := sides[0], sides[1]
	var oldK, newK []string
	for _, c := range changes {
		if !slices.Contains(loaders.FileNames, filepath.Base(c.Path)) {
			continue
		}
		d := filepath.FromSlash(filepath.Dir(c.Path))
		if c.Status != affected.Added && baseHasK(d) {
			oldK = append(oldK, d)
		}
		if c.Status != affected.Deleted && loaders.HasKustomization(nw.fs, filepath.Join(nw.dir, d)) {
			newK = append(newK, d)
		}
	}
	if len(oldK)+len(newK) == 0 {
		return nil, nil, nil
	}
	// referenced lists the directories the kustomizations in dirs (and
	// their bases) refer to.
	referenced := func(s side, dirs []string) map[string]bool {
		out := map[string]bool{}
		if len(dirs) == 0 {
			return out
		}
		g, _ := engine.LoadContext(ctx, under(s.dir, dirs), loadOptions(bo, s.fs))
		for _, n := range g.Nodes {
			for _, e := range n.Children() {
				out[relPath(s.dir, e.Child.Dir)] = true
			}
		}
		return out
	}
	oldRef := referenced(old, oldK)
	newRef := referenced(nw, newK)
	for _, r := range headRoots {
		if oldRef[r] {
			became = append(became, r)
		}
	}
	var maybe []string
	for r := range newRef {
		if !oldRef[r] && !slices.Contains(headRoots, r) && inTrees(r, trees) && baseHasK(r) {
			maybe = append(maybe, r)
		}
	}
	if len(maybe) == 0 {
		return became, nil, nil
	}
	// Telling whether they were roots takes every kustomization of the
	// old revision (a discovery the cache records, by revision).
	bo.Trees, bo.FS, bo.OutDir, bo.RootsFrom = under(old.dir, trees), old.fs, "", ""
	oldRoots, err := batch.Discover(bo)
	if err != nil && !errors.Is(err, batch.ErrNoRoots) {
		return nil, nil, err
	}
	for _, r := range oldRoots {
		if rel := relPath(old.dir, r); slices.Contains(maybe, rel) {
			ceased = append(ceased, rel)
		}
	}
	return became, ceased, nil
}

// headRootsOf lists the report's roots relative to tree.
func headRootsOf(rep *batch.Report, tree string) []string {
	if rep == nil {
		return nil
	}
	out := make([]string, len(rep.Roots))
	for i, rr := range rep.Roots {
		out[i] = relPath(tree, rr.Path)
	}
	return out
}

// loadOptions are the graph loading settings of a build's options, for
// a tree read through fsys.
func loadOptions(bo batch.Options, fsys loaders.FS) engine.LoadOptions {
	return engine.LoadOptions{FS: fsys, Restriction: bo.Restriction, Remote: bo.Remote}
}

// rendered is one root's output on one side.
type rendered struct {
	yaml []byte
	err  string
	// warnings are those of the kustomization files the root includes,
	// when it was loaded (files relative to the tree).
	warnings []batch.Warning
}

// renderRoots builds the roots rels of tree through the cache, and says
// how many nodes it built. A root whose inputs are unchanged since a
// review rendered it is taken from that review's record without being
// loaded (outputRecords). A candidate in maybe (a removed kustomization)
// is dropped when it is a component or another candidate includes it: it
// was a base, not a root.
func renderRoots(ctx context.Context, eo engine.Options, lo engine.LoadOptions, tree string, rels []string, maybe map[string]bool) (map[string]rendered, int) {
	out := map[string]rendered{}
	if len(rels) == 0 {
		return out, 0
	}
	fsys := lo.FS
	if fsys == nil {
		fsys = loaders.Disk
	}
	records := newOutputRecords(eo, lo)
	var todo []string // rels to build
	var reals []string
	for _, rel := range rels {
		if records != nil && !maybe[rel] {
			if real, err := fsys.EvalSymlinks(filepath.Join(tree, rel)); err == nil {
				if yaml, ok := records.lookup(real); ok {
					out[rel] = rendered{yaml: yaml}
					continue
				}
			}
		}
		todo = append(todo, rel)
	}
	if len(todo) == 0 {
		return out, 0
	}
	dirs := under(tree, todo)
	eo.Warn = nil // warnings were printed when the new side was found
	keep := make([]bool, len(todo))
	b, results := engine.Build(ctx, engine.Request{Dirs: dirs, Load: lo, Options: eo, Loaded: func(g *engine.Graph) {
		included := map[string]bool{}
		for _, n := range g.Nodes {
			for _, e := range n.Children() {
				included[e.Child.Dir] = true
			}
		}
		for i, rel := range todo {
			keep[i] = true
			if maybe[rel] {
				dir := dirs[i]
				if real, err := g.FS().EvalSymlinks(dir); err == nil {
					dir = real
				}
				if n := g.Roots[i]; included[dir] || n != nil && n.IsComponent() {
					keep[i] = false
				}
			}
			reals = append(reals, "")
			if n := g.Roots[i]; n != nil {
				reals[i] = n.Dir
			}
		}
	}})
	g := b.Graph()
	for i, res := range results {
		if !keep[i] {
			continue
		}
		var ws []batch.Warning
		for _, w := range g.WarningsOf(g.Roots[i]) {
			w := batch.WarningOf(w)
			w.File = relPath(tree, w.File)
			ws = append(ws, w)
		}
		if res.Err != nil {
			out[todo[i]] = rendered{err: res.Err.Error(), warnings: ws}
			continue
		}
		out[todo[i]] = rendered{yaml: res.YAML, warnings: ws}
		if records != nil && reals[i] != "" && !maybe[todo[i]] {
			records.record(b, g.Roots[i], reals[i], res)
		}
	}
	return out, b.Stats().NodesBuilt
}

// outputRecords are the records of the roots reviews rendered, in the
// cache: for each root, by its directory in its tree, every input its
// build read and its output, so that a root whose inputs are unchanged
// is taken from there without being loaded, as `kpipe build` takes an
// unchanged root's output. The records of a revision's roots are checked
// against it by the names of git's objects (package cache).
type outputRecords struct {
	store    *cache.Store
	index    *rootindex.Index
	checker  *cache.InputChecker
	settings cache.Key
	version  string
}

// newOutputRecords returns the records for builds with eo of trees read
// as lo says; nil without a cache, or with --verify-cache.
func newOutputRecords(eo engine.Options, lo engine.LoadOptions) *outputRecords {
	store := eo.Cache.Store
	if store == nil || eo.VerifyCache {
		return nil
	}
	settings := cache.NewKey(eo.Cache.Version, "review").Key(engine.SettingsKey(eo, lo.Restriction)).Sum()
	files := eo.Cache.Files
	if files == nil {
		files = store.FileIndex()
	}
	var src cache.Source
	if lo.FS != nil && lo.FS != loaders.Disk {
		src = lo.FS
	}
	if files.Source() != src {
		files = files.On(src)
	}
	return &outputRecords{store: store, index: rootindex.Open(store, settings), checker: cache.NewInputChecker(files), settings: settings, version: eo.Cache.Version}
}

// key is where root's output is kept.
func (r *outputRecords) key(root string) cache.Key {
	return cache.NewKey(r.version, "review-output").Key(r.settings).String(root).Sum()
}

// lookup returns root's output when its record's inputs are unchanged.
func (r *outputRecords) lookup(root string) ([]byte, bool) {
	rec, ok := r.index.Root(root)
	if !ok || !r.index.Unchanged(r.checker, rec) {
		return nil, false
	}
	data, d, ok := r.store.GetDigest(r.key(root))
	if !ok || d != rec.OutputDigest {
		return nil, false
	}
	return data, true
}

// record keeps root's output and inputs after a build of node n that
// knows every input (none for a root that runs plugins or helm).
func (r *outputRecords) record(b *engine.Builder, n *engine.Node, root string, res engine.Result) {
	inputs, ok := b.Inputs(n)
	if !ok {
		return
	}
	sum := res.OutputDigest()
	r.store.PutDigest(r.key(root), res.YAML, sum, res.Sensitive)
	r.index.SetRoot(root, &rootindex.Record{Inputs: inputs, OutputDigest: sum})
}

// compareSides fills res from the two sides' outputs.
func compareSides(res *Result, olds, news map[string]rendered, oldTree, newTree string, o Options) {
	paths := map[string]bool{}
	for p := range olds {
		paths[p] = true
	}
	for p := range news {
		paths[p] = true
	}
	sorted := slices.Sorted(maps.Keys(paths))
	var warned batch.Report // the new side's warnings, by root, in path order
	for _, p := range sorted {
		warned.Roots = append(warned.Roots, batch.RootReport{Warnings: news[p].warnings})
	}
	res.Warnings = warned.Warnings()
	for _, p := range sorted {
		old, inOld := olds[p]
		nw, inNew := news[p]
		rd := RootDiff{Path: filepath.ToSlash(p)}
		res.Compared++
		switch {
		case !inOld:
			rd.Status = RootAdded
			rd.NewError = nw.err
			if nw.err == "" {
				rd.Changes, _, _ = Compare(nil, nw.yaml, o)
			}
		case !inNew:
			rd.Status = RootRemoved
			rd.OldError = old.err
			if old.err == "" {
				rd.Changes, _, _ = Compare(old.yaml, nil, o)
			}
		case old.err != "" || nw.err != "":
			oe := strings.ReplaceAll(old.err, oldTree+string(filepath.Separator), "")
			ne := strings.ReplaceAll(nw.err, newTree+string(filepath.Separator), "")
			if oe == ne {
				rd.Status, rd.NewError = RootFailing, ne
				break
			}
			rd.Status, rd.OldError, rd.NewError = RootError, oe, ne
		default:
			changes, reordered, err := Compare(old.yaml, nw.yaml, o)
			if err != nil {
				rd.Status, rd.NewError = RootError, err.Error()
				break
			}
			if len(changes) == 0 && !(o.OrderMatters && reordered) {
				res.Unchanged++
				continue
			}
			rd.Status, rd.Changes, rd.Reordered = RootChanged, changes, reordered
		}
		res.Roots = append(res.Roots, rd)
	}
	sortRoots(res.Roots)
}

// DirOptions are the settings of a review of two directories.
type DirOptions struct {
	// Build carries the build settings, for directories that hold
	// kustomizations; its Trees and OutDir are ignored.
	Build batch.Options
	Diff  Options
}

// ReviewDirs compares two directories: two trees of kustomizations (every
// root of each is rendered through the cache and matched by its path
// relative to its tree), or, when neither holds a kustomization file, two
// directories of rendered output (.yaml and .yml files matched by path).
func ReviewDirs(ctx context.Context, a, b string, o DirOptions) (*Result, error) {
	res := &Result{Base: a, Head: b}
	var sides [2]map[string]rendered
	var trees [2]string
	kust := false
	for i, d := range []string{a, b} {
		real, err := loaders.RealDir(loaders.Disk, d)
		if err != nil {
			return nil, err
		}
		trees[i] = real
		if anyKustomization(real) {
			kust = true
		}
	}
	for i := range trees {
		var err error
		if kust {
			sides[i], err = renderTree(ctx, o.Build, trees[i])
		} else {
			sides[i], err = readOutputs(trees[i])
		}
		if err != nil {
			return nil, err
		}
	}
	compareSides(res, sides[0], sides[1], trees[0], trees[1], o.Diff)
	return res, nil
}

// renderTree renders every root of a tree.
func renderTree(ctx context.Context, bo batch.Options, tree string) (map[string]rendered, error) {
	bo.Trees, bo.OutDir, bo.RootsFrom = []string{tree}, "", ""
	roots, err := batch.Discover(bo)
	if err != nil && !errors.Is(err, batch.ErrNoRoots) {
		return nil, err
	}
	rels := make([]string, len(roots))
	for i, r := range roots {
		rels[i] = relPath(tree, r)
	}
	out, _ := renderRoots(ctx, bo.Engine, loadOptions(bo, loaders.Disk), tree, rels, nil)
	return out, nil
}

// readOutputs reads the .yaml and .yml files under dir, by relative path.
func readOutputs(dir string) (map[string]rendered, error) {
	out := map[string]rendered{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[relPath(dir, p)] = rendered{yaml: data}
		return nil
	})
	return out, err
}

// anyKustomization reports whether a tree holds a kustomization file
// (hidden directories skipped, as build-all skips them).
func anyKustomization(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
			return filepath.SkipDir
		}
		if slices.Contains(loaders.FileNames, d.Name()) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// under joins rels to tree.
func under(tree string, rels []string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = filepath.Join(tree, r)
	}
	return out
}

// relPath is p relative to tree ("." for the tree itself).
func relPath(tree, p string) string {
	rel, err := filepath.Rel(tree, p)
	if err != nil {
		return p
	}
	return rel
}

// inTrees reports whether rel lies in one of the trees (relative paths).
func inTrees(rel string, trees []string) bool {
	for _, t := range trees {
		if t == "." || rel == t || strings.HasPrefix(rel, t+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// short abbreviates a commit for display.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
