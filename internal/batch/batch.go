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
// Run (this file) is a run's steps; discovery.go finds the roots,
// graphs.go builds them a graph at a time, outputs.go names and writes
// their outputs, manifest.go keeps the list of what a run wrote (and
// prunes by it), report.go is the report and shard.go splits the roots
// among runners.
//
// It imports engine, rootindex, cache, loaders, output, fetch and fsread;
// the CLI (flags, progress bar, exit codes) sits above it.
package batch

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/rootindex"
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
	Remote *fetch.Fetcher
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
	index := rootindex.Open(store, engine.SettingsKey(opts, o.Restriction))
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

// outputIntact reports whether the output file a root record names still
// holds the recorded output.
func outputIntact(files *cache.FileIndex, rec rootindex.Record) bool {
	if rec.Output == "" {
		return true
	}
	d, ok := files.Digest(rec.Output)
	return ok && d == rec.OutputDigest
}
