// Package batch builds many kustomization roots in one run, as `kpipe
// build-all` does: it finds the roots under the given trees, skips every
// root whose recorded inputs are unchanged (the cache's root index),
// builds the others over graphs of RootsPerGraph roots (package engine),
// writes each root's output under an output directory as soon as it is
// finished and only when it changed, deletes outputs of roots that no
// longer exist (only files it wrote itself, listed in a manifest), and
// reports on every root. The trees are read through Options.FS (the
// disk, or a git revision for `kpipe diff --head`); outputs are written
// to disk.
//
// It imports engine, cache, loaders and output; the CLI (flags, progress
// bar, exit codes) and the public kpipe package sit above it.
package batch

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/remote"
	"github.com/kpipe/kpipe/loaders"
)

// Options are the settings of a run.
type Options struct {
	// FS is where the trees (or the roots RootsFrom lists) are read
	// (nil: loaders.Disk): the files, directories and symlinks of roots,
	// discovery and root records. Outputs and the roots file are on disk.
	FS loaders.FS
	// Trees are the directories searched for roots (none: ".").
	Trees []string
	// RootsFrom, when set, names a file listing the roots, one per line
	// (blank lines and lines starting with # skipped), instead of Trees.
	RootsFrom string
	// AllKustomizations builds every kustomization found, not only those
	// no other kustomization refers to (components are never roots).
	AllKustomizations bool
	// OutDir, when set, receives each root's output (see OutputName).
	OutDir string
	// Prune deletes the outputs under OutDir of roots that no longer
	// exist: only files a run wrote (OutDir's manifest says which) and
	// whose content is still what it wrote.
	Prune bool
	// Restriction is the load restrictor.
	Restriction loaders.Restriction
	// Remote fetches remote bases and files (nil: they fail).
	Remote *remote.Fetcher
	// Engine are the build options; Engine.Cache.Store may be nil.
	Engine engine.Options
	// Version is written into the report.
	Version string
	// Shard, when its Count is above one, builds only the roots of that
	// shard (see ShardOf); pruning still counts every root as live.
	Shard Shard
	// Progress, when set, is called once the work is known, with the
	// number of roots to build, and returns the function called as each
	// is finished.
	Progress func(total int) (step func())
	// Reads fills each RootReport's Reads: what the root's build depends
	// on (package affected matches changed paths against it).
	Reads bool
	// Previous are the output digests (hex) of an earlier run, by root
	// (absolute paths): without OutDir, a root's output is Changed when
	// it differs from its digest here (a root not here is changed). Nil:
	// from the digest of the root's last build in the cache's records.
	Previous map[string]string
	// Check compares each root's output with the file under OutDir
	// instead of writing it (RootReport.OutOfDate), and lists the .yaml
	// files under OutDir that no root renders (Report.Orphans); nothing
	// under OutDir is written, deleted or locked. It needs OutDir.
	Check bool

	// rootsPerGraph overrides RootsPerGraph (tests: graphs of a few roots).
	rootsPerGraph int
}

// RootsPerGraph is how many roots a run loads and builds over one graph,
// and how many kustomizations discovery loads at once: a graph holds
// every kustomization its roots reach, parsed, and the files they name,
// so that a run holding one graph of every root took memory in
// proportion to the repository (issue 40: 31 MB live of the 4,000-root
// synthetic monorepo before the first root was built). A base shared by
// roots of several graphs is loaded in each, and built once: the graphs
// after the first find it in the cache (without one, each builds it; a
// base whose build ran only cheap stages is not stored by the build that
// made it, and the next graph that needs it builds and stores it).
// Roots are in path order, so a graph's roots are neighbours, which
// share the most. (Measured in benchmarks/RESULTS.md, "Memory per root":
// peak RSS and CPU at 400 and 4,000 roots against one graph of all.)
const RootsPerGraph = 256

// perGraph is o's RootsPerGraph.
func (o Options) perGraph() int {
	if o.rootsPerGraph > 0 {
		return o.rootsPerGraph
	}
	return RootsPerGraph
}

// loadSettings are how discovery found the roots, for the loads of the
// graphs that build them: a fresh walk resolved every root and listed
// the directories, so a load need not look again; roots from a record or
// a roots file are resolved again.
type loadSettings struct {
	resolved bool
	listed   map[string]string
	since    time.Time
}

// RootReport is one root's entry in the report.
type RootReport struct {
	Path        string  `json:"path"`
	Output      string  `json:"output,omitempty"`
	Status      string  `json:"status"` // "ok" or "error"
	Error       string  `json:"error,omitempty"`
	Digest      string  `json:"digest,omitempty"` // sha256 of the output
	Changed     bool    `json:"changed"`          // output differs from the file under the output directory, or without one from the previous report's (Options.Previous) or the last build's
	Seconds     float64 `json:"seconds"`          // this root's own finishing, rendering and writing
	Cached      bool    `json:"cached"`           // final output taken from the cache
	UpToDate    bool    `json:"upToDate"`         // inputs unchanged since the last run: not loaded at all
	NodesBuilt  int     `json:"nodesBuilt"`
	NodesCached int     `json:"nodesCached"`
	StageHits   int     `json:"stageHits"`
	StageMisses int     `json:"stageMisses"`
	// RemovedOutput says a failing root's previous output file (one a
	// run wrote) was deleted, so that no stale output stays behind.
	RemovedOutput bool `json:"removedOutput,omitempty"`
	// Hint is, for a failing root, the plain line for a person that the
	// error carries (file:line, what is wrong, what was meant), when it
	// has one (loaders.Hinted); Error keeps kustomize's wording.
	Hint string `json:"hint,omitempty"`
	// OutOfDate says, with Options.Check, that the file under the output
	// directory is missing or differs from the root's output.
	OutOfDate bool `json:"outOfDate,omitempty"`
	// Reads is what the root's output depends on (Options.Reads).
	Reads *engine.ReadSet `json:"-"`
	// Warnings are the warnings of the kustomization files the root
	// includes (deprecated fields), when this run loaded it (a root up to
	// date is not loaded, and has none).
	Warnings []Warning `json:"warnings,omitempty"`
}

// Warning is one warning of a kustomization file.
type Warning struct {
	// File is the kustomization file (absolute in a Report that Run
	// returns; the CLI writes it relative to the current directory).
	File string `json:"file"`
	// Message is the warning, in kustomize's words without its "#
	// Warning: " lead.
	Message string `json:"message"`
}

// WarningOf is w as a report carries it.
func WarningOf(w engine.Warning) Warning {
	return Warning{File: w.File, Message: strings.TrimPrefix(w.Text, "# Warning: ")}
}

// Warnings returns the warnings of rep's roots, each file's once, in the
// order of the roots (the report's order, which is path order).
func (rep *Report) Warnings() []Warning {
	var out []Warning
	seen := map[string]bool{}
	for _, rr := range rep.Roots {
		given := map[string]bool{} // files of this root
		for _, w := range rr.Warnings {
			if seen[w.File] && !given[w.File] {
				continue
			}
			seen[w.File], given[w.File] = true, true
			out = append(out, w)
		}
	}
	return out
}

// Report is the outcome of a run (the --report file).
type Report struct {
	Version string `json:"version"`
	// Shard is "i/n" for a run with --shard i/n (MergeReports joins the
	// shards' reports).
	Shard string       `json:"shard,omitempty"`
	Roots []RootReport `json:"roots"`
	// Pruned are the outputs deleted because their roots no longer
	// exist; Kept are outputs of removed roots left in place because
	// their content is no longer what kpipe wrote.
	Pruned []string `json:"pruned,omitempty"`
	Kept   []string `json:"keptModified,omitempty"`
	// Orphans are, with Options.Check, the .yaml files under the output
	// directory (relative to it, with slashes) that no root renders.
	Orphans []string `json:"orphans,omitempty"`
	// Explain are the nodes built or taken from the cache, and why each
	// was built (Engine.Explain); roots up to date are not loaded and have
	// none (their report entry says upToDate).
	Explain []engine.NodeExplain `json:"explain,omitempty"`
	Summary struct {
		Roots       int                          `json:"roots"`
		Failed      int                          `json:"failed"`
		OutOfDate   int                          `json:"outOfDate,omitempty"`
		Changed     int                          `json:"changed"`
		UpToDate    int                          `json:"upToDate"`
		Seconds     float64                      `json:"seconds"`
		NodesBuilt  int                          `json:"nodesBuilt"`
		NodesCached int                          `json:"nodesCached"`
		RootsCached int                          `json:"rootsCached"`
		Stages      map[string]engine.StageStats `json:"stages"`
		FilesHashed int                          `json:"filesHashed"`
		FilesStat   int                          `json:"filesFromIndex"`
		// Remote counts the use of the remote cache, when there is one
		// (its uploads finished before the report was made).
		Remote *cache.RemoteStats `json:"remote,omitempty"`
	} `json:"summary"`
}

// Errors are the roots' errors, each prefixed with its root.
func (r *Report) Errors() []error {
	var errs []error
	for _, rr := range r.Roots {
		if rr.Status == "error" {
			errs = append(errs, fmt.Errorf("%s: %s", rr.Path, rr.Error))
		}
	}
	return errs
}

// ErrNoRoots is returned when the trees hold no kustomization root.
var ErrNoRoots = errors.New("no kustomization roots found")

// Run runs build-all. A root's failure is in its report entry, not in the
// error, which is for failures of the run itself (no roots, an output
// name claimed by two roots, an unreadable roots file, a manifest that
// cannot be written).
//
// A run has three steps. First it finds the roots: from the root index's
// discovery record when the trees hold the same, unchanged kustomization
// files as last time, else by loading every kustomization (RootsPerGraph
// at a time, each graph dropped once its references are noted). Then it
// checks each root against the index: a root whose inputs (every file and
// directory its last build read) and output file are unchanged is up to
// date and is neither loaded nor built. Last, it builds the other roots,
// RootsPerGraph over one graph at a time, and records their inputs. A run
// where nothing changed thus costs a walk of the trees and a stat of each
// input.
func Run(ctx context.Context, o Options) (*Report, error) {
	start := time.Now()
	opts := o.Engine
	store := opts.Cache.Store
	// The index of the disk (outputs) and the one of the trees.
	disk, files := o.indexes()
	opts.Cache.Files, o.Engine.Cache.Files = files, files
	index := store.RootIndex(engine.SettingsKey(opts, o.Restriction))
	checker := cache.NewInputChecker(opts.Cache.Files)
	roots, load, err := findRootsContext(ctx, o, index, checker)
	if err != nil {
		return nil, err
	}
	if len(roots) == 0 {
		return nil, ErrNoRoots
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	live := roots // every root, for pruning
	if o.Shard.Count > 1 {
		var mine []string
		for _, r := range roots {
			if o.Shard.has(cwd, r) {
				mine = append(mine, r)
			}
		}
		roots = mine
	}
	outDir := ""
	if o.OutDir != "" {
		if outDir, err = filepath.Abs(o.OutDir); err != nil {
			return nil, err
		}
	}
	outputOf := func(string) string { return "" }
	if outDir != "" {
		// Named over every root, so that every shard refuses the same
		// clash.
		if err := checkOutputNames(cwd, live); err != nil {
			return nil, err
		}
		outputOf = func(root string) string { return filepath.Join(outDir, OutputName(cwd, root)) }
	}
	if o.Check && outDir == "" {
		return nil, errors.New("--check needs --out-dir: the directory of rendered outputs to compare with")
	}
	if outDir != "" && !o.Check {
		unlock, err := lockOutDir(ctx, outDir, opts.Warn)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	man := readManifest(outDir)
	if o.Check {
		man = readManifest("") // a check deletes nothing
	}

	rep := &Report{Version: o.Version, Shard: o.Shard.String(), Roots: make([]RootReport, len(roots))}
	var check errgroup.Group
	jobs := opts.Jobs
	if jobs < 1 {
		jobs = runtime.NumCPU()
	}
	check.SetLimit(jobs)
	for i, root := range roots {
		check.Go(func() error {
			rec, ok := index.Root(root)
			// (A run that writes a remote cache through looks every root
			// up: what its entries are is only known by loading it, and
			// the remote may lack them.)
			if ok && !opts.VerifyCache && !store.WritesThrough() && rec.Output == outputOf(root) && index.Unchanged(checker, rec) && outputIntact(disk, rec) {
				rr := RootReport{Path: root, Output: rec.Output, Status: "ok", Digest: hex.EncodeToString(rec.OutputDigest[:]),
					Cached: true, UpToDate: true}
				if o.Reads {
					inputs, ok := index.AllInputs(rec)
					if !ok {
						return nil // (Unchanged has read every set: not reached; built again if it were)
					}
					rr.Reads = readsOfInputs(inputs)
				}
				rep.Roots[i] = rr
			}
			return nil
		})
	}
	_ = check.Wait()
	var todo []int // indexes of the roots to build
	for i := range roots {
		if !rep.Roots[i].UpToDate {
			todo = append(todo, i)
		}
	}

	var st engine.Stats
	if len(todo) > 0 {
		st = buildRoots(ctx, o, load, roots, todo, outputOf, index, man, rep)
	}
	_ = index.Save()
	_ = files.Save("")
	if disk != files {
		_ = disk.Save("")
	}
	if o.Check {
		rep.Orphans = orphans(outDir, live, outputOf)
	}
	if outDir != "" && !o.Check {
		for _, rr := range rep.Roots {
			if rr.Status == "ok" && rr.Output != "" {
				man.add(rr.Path, rr.Output, rr.Digest)
			}
		}
		if o.Prune {
			rep.Pruned, rep.Kept = man.prune(o.fs(), live)
		}
		if err := man.write(); err != nil {
			return rep, err
		}
	}

	rep.Summary.Roots = len(roots)
	rep.Summary.NodesBuilt, rep.Summary.NodesCached, rep.Summary.RootsCached = st.NodesBuilt, st.NodesCached, st.RootsCached
	rep.Summary.Stages = st.Stages
	rep.Summary.FilesHashed, rep.Summary.FilesStat = opts.Cache.Files.Counts()
	if rs := store.RemoteStats(); rs.URL != "" {
		store.Flush()
		rs = store.RemoteStats()
		rep.Summary.Remote = &rs
	}
	for _, rr := range rep.Roots {
		switch {
		case rr.Status == "error":
			rep.Summary.Failed++
		case rr.OutOfDate:
			rep.Summary.OutOfDate++
		case rr.Changed:
			rep.Summary.Changed++
		case rr.UpToDate:
			rep.Summary.UpToDate++
		}
	}
	rep.Summary.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// fs is o.FS, or the disk.
func (o Options) fs() loaders.FS {
	if o.FS == nil {
		return loaders.Disk
	}
	return o.FS
}

// indexes returns the file index of the disk and the one of the trees
// (the same when they are on disk), from the engine's (a tree's or the
// disk's) or the store's.
func (o Options) indexes() (disk, trees *cache.FileIndex) {
	ix := o.Engine.Cache.Files
	if ix == nil {
		ix = o.Engine.Cache.Store.FileIndex()
	}
	var src cache.Source
	if fsys := o.fs(); fsys != loaders.Disk {
		src = fsys
	}
	disk, trees = ix, ix
	if ix.Source() != nil {
		disk = ix.On(nil)
	}
	if ix.Source() != src {
		trees = ix.On(src)
	}
	return disk, trees
}

// readsOfInputs turns a root record's inputs into a ReadSet: a recorded
// root runs no plugin (engine.Builder.Inputs refuses those), so its inputs
// are files and kustomization directories (not told apart, to spare a
// stat each).
func readsOfInputs(inputs []cache.Input) *engine.ReadSet {
	var rs engine.ReadSet
	for _, in := range inputs {
		rs.Either = append(rs.Either, in.Path)
		if in.Real != "" && in.Real != in.Path {
			rs.Either = append(rs.Either, in.Real)
		}
	}
	return &rs
}

// Discover returns the roots build-all would build for o, without building
// them (in a stable order).
func Discover(o Options) ([]string, error) {
	opts := o.Engine
	_, files := o.indexes()
	index := opts.Cache.Store.RootIndex(engine.SettingsKey(opts, o.Restriction))
	roots, _, err := findRoots(o, index, cache.NewInputChecker(files))
	return roots, err
}

// outputIntact reports whether the output file a root record names still
// holds the recorded output.
func outputIntact(files *cache.FileIndex, rec cache.RootRecord) bool {
	if rec.Output == "" {
		return true
	}
	d, ok := files.Digest(rec.Output)
	return ok && d == rec.OutputDigest
}

// buildRoots builds roots[i] for every i in todo, RootsPerGraph roots
// over one graph at a time, writes their outputs, fills their report
// entries and records their inputs in index.
func buildRoots(ctx context.Context, o Options, load loadSettings, roots []string, todo []int, outputOf func(string) string,
	index *cache.RootIndex, man *manifest, rep *Report) engine.Stats {
	step := func() {}
	if o.Progress != nil {
		step = o.Progress(len(todo))
	}
	var total engine.Stats
	warned := map[string]bool{}
	explained := map[string]bool{}
	for len(todo) > 0 && ctx.Err() == nil {
		part := todo[:min(len(todo), o.perGraph())]
		todo = todo[len(part):]
		st := buildGraph(ctx, o, load, roots, part, outputOf, index, man, rep, step, warned, explained)
		addStats(&total, st)
	}
	slices.SortFunc(rep.Explain, func(a, b engine.NodeExplain) int { return strings.Compare(a.Node, b.Node) })
	// Roots left when the run was cancelled fail with its error.
	for _, i := range todo {
		rep.Roots[i] = RootReport{Path: roots[i], Status: "error", Error: ctx.Err().Error()}
	}
	return total
}

// addStats adds st to total.
func addStats(total *engine.Stats, st engine.Stats) {
	total.NodesBuilt += st.NodesBuilt
	total.NodesCached += st.NodesCached
	total.RootsCached += st.RootsCached
	addStages(&total.Stages, st.Stages)
}

// addStages adds the stage counts of from to *to.
func addStages(to *map[string]engine.StageStats, from map[string]engine.StageStats) {
	for k, v := range from {
		if *to == nil {
			*to = map[string]engine.StageStats{}
		}
		t := (*to)[k]
		t.Ran, t.Cached, t.Time = t.Ran+v.Ran, t.Cached+v.Cached, t.Time+v.Time
		(*to)[k] = t
	}
}

// buildGraph loads the graph of roots[i] for every i in todo and builds
// it: buildRoots for one graph. The warnings of earlier graphs' loads
// (warned, engine.LoadOptions.Warned), and the explanations of nodes in
// explained (a shared base, explained by the graph that built it first),
// are not given again.
func buildGraph(ctx context.Context, o Options, load loadSettings, roots []string, todo []int, outputOf func(string) string,
	index *cache.RootIndex, man *manifest, rep *Report, step func(), warned, explained map[string]bool) engine.Stats {
	opts := o.Engine
	dirs := make([]string, len(todo))
	for j, i := range todo {
		dirs[j] = roots[i]
	}
	store := opts.Cache.Store
	var g *engine.Graph
	var b *engine.Builder
	// Each root's output is written, and its record kept, as soon as the
	// root is finished; nothing of it is kept after that.
	b, _ = engine.Build(ctx, engine.Request{Dirs: dirs, Options: opts,
		Load: engine.LoadOptions{FS: o.FS, Restriction: o.Restriction, Remote: o.Remote,
			Resolved: load.resolved, Listed: load.listed, Since: load.since, Warned: warned},
		Loaded: func(loaded *engine.Graph) {
			g = loaded
			// The warnings of the run are given now; those of kustomization
			// files go with the roots that include them (RootReport.Warnings).
			if opts.Warn != nil {
				for _, w := range g.RunWarnings() {
					opts.Warn(w)
				}
			}
		},
		Each: func(b *engine.Builder, j int, res engine.Result) {
			t0 := time.Now()
			i := todo[j]
			root := roots[i]
			rr := RootReport{Path: root, Output: outputOf(root), Cached: res.Cached, NodesBuilt: res.NodesBuilt, NodesCached: res.NodesCached,
				StageHits: res.StagesCached, StageMisses: res.StagesRan}
			for _, w := range g.WarningsOf(g.Roots[j]) {
				rr.Warnings = append(rr.Warnings, WarningOf(w))
			}
			err := res.Err
			if err == nil {
				sum := res.OutputDigest()
				rr.Digest = hex.EncodeToString(sum[:])
				// Changed follows the output, not the cache: with an output
				// directory, whether the file there had to be written; else
				// whether the digest differs from the previous report's, or
				// from the root's last build.
				switch {
				case rr.Output != "":
				case o.Previous != nil:
					rr.Changed = o.Previous[root] != rr.Digest
				default:
					prev, known := index.Root(root)
					rr.Changed = !known || prev.OutputDigest != sum
				}
				switch {
				case rr.Output != "" && o.Check:
					old, rerr := fsread.Own(rr.Output, int64(len(res.YAML)))
					rr.OutOfDate = rerr != nil || string(old) != string(res.YAML)
					rr.Changed = rr.OutOfDate
				case rr.Output != "":
					var wrote bool
					wrote, err = writeIfChanged(rr.Output, res.YAML)
					rr.Changed = wrote
				}
				if err == nil && store != nil {
					// Record the root when the build knows every input. The
					// record is true even if an input changed while the root
					// was built: each digest in it is of the bytes the build
					// used (the listing of a directory is taken before the
					// build), and the next run compares every input with its
					// digest again before it trusts the record. Checking the
					// inputs here too cost a stat of each, for nothing.
					//
					// A base's inputs go in a set of their own, stored once
					// and named by every root that includes the base.
					if own, sets, ok := b.InputSets(g.Roots[j]); ok {
						keys := make([]cache.Key, len(sets))
						for k, s := range sets {
							keys[k] = index.SaveInputSet(s)
						}
						index.SetRoot(root, &cache.RootRecord{Inputs: own, Sets: keys, Output: rr.Output, OutputDigest: sum})
					}
				}
			}
			if err != nil {
				rr.Status, rr.Error = "error", err.Error()
				var h *loaders.Hinted
				if errors.As(err, &h) {
					rr.Hint = h.Hint
				}
				// No stale output stays behind a failing root: its
				// previous output goes, if a run wrote it.
				if rr.Output != "" && !o.Check {
					rr.RemovedOutput = man.removeOutput(rr.Output)
				}
				rr.Output = ""
			} else {
				rr.Status = "ok"
			}
			if o.Reads {
				rs := engine.ReadSet{Trees: []string{root}}
				if n := g.Roots[j]; n != nil {
					rs = b.Reads(n)
				}
				rr.Reads = &rs
			}
			rr.Seconds = time.Since(t0).Seconds()
			rep.Roots[i] = rr
			step()
		}})
	if opts.Explain {
		for _, e := range b.Explain() {
			if !explained[e.Node] {
				explained[e.Node] = true
				rep.Explain = append(rep.Explain, e)
			}
		}
	}
	return b.Stats()
}

// OutputName maps a root directory to its output file under the output
// directory: the root's path relative to cwd plus ".yaml" ("_root.yaml"
// for cwd itself), or, for a root outside cwd, its absolute path without
// the leading separator (and a volume's colon) plus ".yaml".
func OutputName(cwd, root string) string {
	rel, err := filepath.Rel(cwd, root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = strings.TrimPrefix(root, filepath.VolumeName(root))
		rel = strings.TrimPrefix(rel, string(filepath.Separator))
		if v := filepath.VolumeName(root); v != "" {
			rel = filepath.Join(strings.TrimSuffix(v, ":"), rel)
		}
	}
	if rel == "." {
		return "_root.yaml"
	}
	return rel + ".yaml"
}

// checkOutputNames fails naming both roots when two roots would write
// the same output name (OutputName; ignoring case: a root named
// _root and the current directory; a root inside and one outside the
// current directory with the same path tail), so that no output is ever
// overwritten by another root's.
func checkOutputNames(cwd string, roots []string) error {
	owner := make(map[string]string, len(roots))
	for _, root := range roots {
		name := OutputName(cwd, root)
		key := strings.ToLower(filepath.Clean(name)) // case-insensitive file systems
		if other, ok := owner[key]; ok && other != root {
			return fmt.Errorf("roots %s and %s would both write %s: build them in separate runs or with separate --out-dir", other, root, name)
		}
		owner[key] = root
	}
	return nil
}

// orphans lists the .yaml files under outDir (relative, with slashes,
// sorted) that are no root's output: outputs of roots that are gone, for
// --check. kpipe's own state files and other files are not listed.
func orphans(outDir string, live []string, outputOf func(string) string) []string {
	want := make(map[string]bool, len(live))
	for _, r := range live {
		want[outputOf(r)] = true
	}
	var list []string
	_ = filepath.WalkDir(outDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ".yaml") || want[p] {
			return nil
		}
		if rel, err := filepath.Rel(outDir, p); err == nil {
			list = append(list, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(list)
	return list
}

// writeIfChanged writes data to path atomically unless the file already
// holds exactly data, and says whether it wrote. The file there is read
// as kpipe's own (fsread.Own): a symlink, anything but a regular file and
// a file longer than data are not read, and are replaced.
func writeIfChanged(path string, data []byte) (bool, error) {
	if old, err := fsread.Own(path, int64(len(data))); err == nil && string(old) == string(data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, output.WriteFileAtomic(path, data)
}

// findRoots lists the roots to build, as absolute, symlink-free paths in a
// stable order. When it had to load the kustomizations of the trees to
// tell roots from bases, it returns that graph too.
//
// Discovery walks the trees for kustomization files; when they are the
// same files, unchanged, as at the last discovery of the same trees, the
// roots are those found then, and nothing is parsed.
func findRoots(o Options, index *cache.RootIndex, checker *cache.InputChecker) ([]string, loadSettings, error) {
	return findRootsContext(context.Background(), o, index, checker)
}

// findRootsContext is findRoots with the context remote bases are fetched
// under (o.Remote).
func findRootsContext(ctx context.Context, o Options, index *cache.RootIndex, checker *cache.InputChecker) ([]string, loadSettings, error) {
	fsys := o.fs()
	if f := o.RootsFrom; f != "" {
		roots, err := readRootsFile(fsys, f)
		return roots, loadSettings{}, err
	}
	r := o.Restriction
	paths := o.Trees
	if len(paths) == 0 {
		paths = []string{"."}
	}
	// The record is keyed by where the trees and the output directory are,
	// not by how they were named: "." is another tree in another directory.
	trees := make([]string, len(paths))
	for i, p := range paths {
		t, err := loaders.RealDir(fsys, p)
		if err != nil {
			return nil, loadSettings{}, err
		}
		trees[i] = t
	}
	outDir := o.OutDir
	if outDir != "" {
		if a, err := filepath.Abs(outDir); err == nil {
			outDir = a
		}
	}
	key := fmt.Sprintf("%q all=%v out=%q", trees, o.AllKustomizations, outDir)
	// (Checked as one record: in a git revision, a directory unchanged by
	// its tree's name vouches for the files below it.)
	if rec, ok := index.Discovery(key); ok && checker.Unchanged(append(slices.Clip(rec.Dirs), rec.Files...)) {
		// The same directories hold the same kustomization files.
		return rec.Roots, loadSettings{}, nil
	}
	start := time.Now() // before the walk: see LoadOptions.Since
	var all []string
	var files, dirs []cache.Input
	seen := map[string]bool{}
	var fileIndex *cache.FileIndex
	if index.Persistent() {
		fileIndex = checker.Files() // the walk's listings give the directories' digests
	}
	listed := map[string]string{}
	for _, p := range paths {
		found, walked, l, err := findKustomizations(fsys, p, o.OutDir, fileIndex)
		if err != nil {
			return nil, loadSettings{}, err
		}
		maps.Copy(listed, l)
		dirs = append(dirs, walked...)
		for _, f := range found {
			if !seen[f.Real] {
				seen[f.Real] = true
				all = append(all, filepath.Dir(f.Path))
				files = append(files, f)
			}
		}
	}
	// Components are not roots; unless --all-kustomizations, neither is a
	// kustomization another one refers to.
	// (The walk resolved every directory: it starts at a real one and
	// does not follow symlinks.) The kustomizations are loaded
	// RootsPerGraph at a time, each load's graph dropped once its
	// references are noted (a base of several is loaded with each).
	load := loadSettings{resolved: true, listed: listed, since: start}
	refs := map[string][]string{} // the directories each directory's entries name
	component := map[string]bool{}
	for part := range slices.Chunk(all, o.perGraph()) {
		g, _ := engine.LoadContext(ctx, part, engine.LoadOptions{FS: o.FS, Restriction: r, Remote: o.Remote,
			Resolved: load.resolved, Listed: load.listed, Since: load.since})
		for _, n := range g.Nodes {
			for _, e := range n.Children() {
				if !slices.Contains(refs[n.Dir], e.Child.Dir) {
					refs[n.Dir] = append(refs[n.Dir], e.Child.Dir)
				}
			}
		}
		for i, n := range g.Roots {
			if n != nil && n.IsComponent() {
				component[part[i]] = true
			}
		}
		if index.Persistent() {
			// The kustomization files were just read: their digests
			// need no second read.
			g.RememberKustomizations(checker.Files(), runtime.NumCPU())
		}
	}
	roots := rootsOf(all, refs, component, o.AllKustomizations)
	if index.Persistent() {
		// The walk's listings and the graph's reads gave most digests
		// (Known); the others cost a stat or a read each.
		var eg errgroup.Group
		eg.SetLimit(runtime.NumCPU())
		for _, ins := range [][]cache.Input{files, dirs} {
			for i := range ins {
				if d, ok := checker.Files().Known(ins[i].Real, start); ok {
					ins[i].Digest = d
					ins[i] = checker.Files().Stamp(ins[i])
					continue
				}
				eg.Go(func() error {
					ins[i].Digest, _ = checker.Digest(ins[i].Real)
					ins[i] = checker.Files().Stamp(ins[i])
					return nil
				})
			}
		}
		_ = eg.Wait()
		index.SetDiscovery(key, cache.DiscoveryRecord{Files: files, Dirs: dirs, Roots: roots})
	}
	return roots, load, nil
}

// rootsOf returns the directories of all (in its order) that are roots,
// given the directories each directory's entries name (refs) and which
// are components: every one that is not a component, unless all is
// false, and then those no other kustomization names. A kustomization
// named only within a cycle of references (which the build refuses)
// would then be built by no root, and its error never said: the first of
// such a cycle, in path order, is a root too, as it was when one graph
// held every kustomization (it was loaded first, and the entry that
// closed the cycle failed).
func rootsOf(dirs []string, refs map[string][]string, component map[string]bool, all bool) []string {
	referenced := map[string]bool{}
	for _, children := range refs {
		for _, c := range children {
			referenced[c] = true
		}
	}
	root := map[string]bool{}
	reached := map[string]bool{}
	var reach func(d string)
	reach = func(d string) {
		if reached[d] {
			return
		}
		reached[d] = true
		for _, c := range refs[d] {
			reach(c)
		}
	}
	for _, d := range dirs {
		if !component[d] && (all || !referenced[d]) {
			root[d] = true
			reach(d)
		}
	}
	for _, d := range dirs {
		if !component[d] && !reached[d] {
			root[d] = true
			reach(d)
		}
	}
	out := []string{}
	for _, d := range dirs {
		if root[d] {
			out = append(out, d)
		}
	}
	return out
}

// findKustomizations walks a tree for directories holding a kustomization
// file, skipping hidden directories and outDir, and returns each
// directory's kustomization file (the first of loaders.FileNames there),
// in the order of the directories' paths, and the directories it walked,
// in the same order; and, for each directory whose kustomization file is
// the only one there (soleKustomization), that file's name
// (engine.LoadOptions.Listed). With files, it records each directory's
// digest there from the listing it read (cache.FileIndex.RememberDir).
//
// Directories are read on several goroutines (a tree of 10,000 roots has
// 12,500 of them, and the walk came before any other work could start);
// when one cannot be read, the walk is done again on one goroutine, depth
// first, so the error is the first in that order whatever the goroutines
// met first.
func findKustomizations(fsys loaders.FS, tree, outDir string, files *cache.FileIndex) (found, walked []cache.Input, listed map[string]string, err error) {
	found, walked, listed, err = walkKustomizations(fsys, tree, outDir, files, runtime.NumCPU())
	if err != nil {
		return walkKustomizations(fsys, tree, outDir, files, 1)
	}
	return found, walked, listed, nil
}

// walkKustomizations is findKustomizations on at most jobs goroutines;
// with one, it walks depth first and stops at the first directory it
// cannot read.
func walkKustomizations(fsys loaders.FS, tree, outDir string, files *cache.FileIndex, jobs int) (found, walked []cache.Input, listed map[string]string, err error) {
	start := time.Now()
	tree, err = loaders.RealDir(fsys, tree)
	if err != nil {
		return nil, nil, nil, err
	}
	listed = map[string]string{}
	skip := ""
	if outDir != "" {
		if a, err := filepath.Abs(outDir); err == nil {
			skip = a
		}
	}
	var (
		mu       sync.Mutex
		firstErr error
		g        errgroup.Group
	)
	g.SetLimit(jobs)
	var visit func(dir string)
	visit = func(dir string) {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			return
		}
		// The directory's stat comes before its listing, as RememberDir
		// needs, from the descriptor the listing is read through.
		fi, entries, err := fsys.ReadDir(dir)
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			return
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		files.RememberDir(dir, fi, entries, start)
		k, ok := kustomizationIn(fsys, dir, entries)
		sole := ok && soleKustomization(entries, filepath.Base(k.Path))
		mu.Lock()
		walked = append(walked, cache.Input{Path: dir, Real: dir})
		if ok {
			found = append(found, k)
		}
		if sole {
			listed[dir] = filepath.Base(k.Path)
		}
		mu.Unlock()
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && p != skip {
				if jobs == 1 || !g.TryGo(func() error { visit(p); return nil }) {
					visit(p) // depth first, or every goroutine is busy
				}
			}
		}
	}
	visit(tree)
	_ = g.Wait()
	sort.Slice(walked, func(i, j int) bool { return walked[i].Path < walked[j].Path })
	sort.Slice(found, func(i, j int) bool { return filepath.Dir(found[i].Path) < filepath.Dir(found[j].Path) })
	return found, walked, listed, firstErr
}

// soleKustomization reports whether name, the kustomization file among
// entries, is a regular file and the only entry whose name is one of
// loaders.FileNames in any case (a case-insensitive file system finds
// "Kustomization" by another spelling).
func soleKustomization(entries []fs.DirEntry, name string) bool {
	for _, e := range entries {
		for _, n := range loaders.FileNames {
			if strings.EqualFold(e.Name(), n) && (e.Name() != name || !e.Type().IsRegular()) {
				return false
			}
		}
	}
	return true
}

// kustomizationIn returns the kustomization file among dir's entries
// (sorted by name): the first of loaders.FileNames that is a regular file
// or a symlink to one.
func kustomizationIn(fsys loaders.FS, dir string, entries []fs.DirEntry) (cache.Input, bool) {
	for _, name := range loaders.FileNames {
		i, ok := slices.BinarySearchFunc(entries, name, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
		if !ok {
			continue
		}
		p := filepath.Join(dir, name)
		if entries[i].Type().IsRegular() {
			return cache.Input{Path: p, Real: p}, true
		}
		if real, err := fsys.EvalSymlinks(p); err == nil {
			if st, err := fsys.Stat(real); err == nil && st.Mode().IsRegular() {
				return cache.Input{Path: p, Real: real}, true
			}
		}
	}
	return cache.Input{}, false
}

// readRootsFile reads --roots-from, whose roots are directories of fsys.
func readRootsFile(fsys loaders.FS, path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--roots-from: %w", err)
	}
	defer f.Close()
	var roots []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		d, err := loaders.RealDir(fsys, s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		// A root named twice (relative and absolute, or through a
		// symlink) is one root: built once, written once.
		if !seen[d] {
			seen[d] = true
			roots = append(roots, d)
		}
	}
	return roots, sc.Err()
}
