package batch

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/rootindex"
	"github.com/kpipe/kpipe/loaders"
)

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

// buildRoots builds roots[i] for every i in todo, RootsPerGraph roots
// over one graph at a time, writes their outputs, fills their report
// entries and records their inputs in index.
func buildRoots(ctx context.Context, o Options, load loadSettings, roots []string, todo []int, outputOf func(string) string,
	index *rootindex.Index, man *manifest, rep *Report) engine.Stats {
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
	index *rootindex.Index, man *manifest, rep *Report, step func(), warned, explained map[string]bool) engine.Stats {
	opts := o.Engine
	dirs := make([]string, len(todo))
	for j, i := range todo {
		dirs[j] = roots[i]
	}
	store := opts.Cache.Store
	// Each root's output is written, and its record kept, as soon as the
	// root is finished; nothing of it is kept after that.
	b, _ := engine.Build(ctx, engine.Request{Dirs: dirs, Options: opts,
		Load: engine.LoadOptions{FS: o.FS, Restriction: o.Restriction, Remote: o.Remote,
			Resolved: load.resolved, Listed: load.listed, Since: load.since, Warned: warned},
		Loaded: func(g *engine.Graph) {
			// The warnings of the run are given now; those of kustomization
			// files go with the roots that include them (RootReport.Warnings).
			if opts.Warn != nil {
				for _, w := range g.RunWarnings() {
					opts.Warn(w)
				}
			}
		},
		Each: func(b *engine.Builder, j int, res engine.Result) {
			g := b.Graph()
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
						index.SetRoot(root, &rootindex.Record{Inputs: own, Sets: keys, Output: rr.Output, OutputDigest: sum})
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
