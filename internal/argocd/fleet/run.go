// Package fleet renders a repository's Argo CD Applications as kpipe's
// build-all renders its kustomization roots: every Application and
// expandable ApplicationSet found (Discover), rendered together (their
// kustomize builds over shared graphs, package render), each to one file
// named by its instance name, with build-all's output directory, report,
// check, shards and cache (package batch's pieces), and records that
// skip an Application whose inputs did not change. It also compares two
// revisions Application by Application (Review: `kpipe diff --argocd`)
// and says which Applications a change reaches (`kpipe affected
// --argocd`) and what their manifest-generate-paths should be (Paths).
//
// It imports kpipe's internal/argocd packages, batch, diff, affected,
// engine, cache, rootindex, gitfs, loaders and output.
package fleet

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/batch"
)

// Options are a build-all run's settings.
type Options struct {
	Source
	// Discover says where Applications are looked for (its Tree, Repos
	// and ControllerNamespace are Source's).
	Discover DiscoverOptions
	// OutDir, when set, receives each Application's manifests, in
	// <name>.yaml (absolute, or relative to the current directory).
	OutDir string
	// Check compares each output with the file under OutDir instead of
	// writing it; Prune deletes the outputs of Applications that are gone
	// (only files kpipe wrote).
	Check, Prune bool
	// Shard renders one part of the Applications (by a hash of the name).
	Shard batch.Shard
	// Version is written in the report.
	Version string
	// Previous are the digests of an earlier report, by name: without
	// OutDir, an output is "changed" when it differs from it.
	Previous map[string]string
	// Reads keeps what each Application read (Result.Reads).
	Reads bool
}

// Result is a run's outcome: the report (one entry per Application, by
// name; Path is the name, Source its file) and, with Options.Reads, what
// each read, by name.
type Result struct {
	Report *batch.Report
	Units  []Unit
	Reads  map[string]ReadPaths
	// Outputs are the rendered Applications' outputs, by name (up to
	// date ones too, from their records).
	Outputs map[string]*Output
}

// ErrNoApplications is a run that found nothing to render.
var ErrNoApplications = fmt.Errorf("no Argo CD Application or ApplicationSet found")

// Run is `kpipe argocd build-all`.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	o.Discover.Tree, o.Discover.Repos, o.Discover.ControllerNamespace = o.Tree, o.Repos, o.Settings.ControllerNamespace
	if o.OutDir != "" {
		// The outputs are not searched: an app of apps renders Applications.
		if abs, err := filepath.Abs(o.OutDir); err == nil {
			if rel, err := filepath.Rel(o.Tree.Dir, abs); err == nil && filepath.IsLocal(rel) {
				o.Discover.Skip = append(o.Discover.Skip, filepath.ToSlash(rel))
			}
		}
	}
	units, err := Discover(o.Discover)
	if err != nil {
		return nil, err
	}
	if len(units) == 0 {
		return nil, ErrNoApplications
	}
	// Two Applications of one name: Argo CD has one of them (or refuses
	// the second); kpipe says so and renders neither.
	byName := map[string][]int{}
	for i, u := range units {
		byName[u.Name] = append(byName[u.Name], i)
	}
	for _, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		var files []string
		for _, i := range idx {
			files = append(files, units[i].File)
		}
		for _, i := range idx {
			units[i].Err = fmt.Sprintf("Application %s is defined %d times (%s): Argo CD keeps one Application per name", units[i].Name, len(idx), strings.Join(files, ", "))
			units[i].App = nil
		}
	}
	live := make([]string, 0, len(units))
	for _, u := range units {
		live = append(live, owner(u.Name))
	}
	if o.Shard.Count > 1 {
		var mine []Unit
		for _, u := range units {
			if batch.ShardOf(u.Name, o.Shard.Count) == o.Shard.Index {
				mine = append(mine, u)
			}
		}
		units = mine
	}
	outDir := ""
	if o.OutDir != "" {
		if outDir, err = filepath.Abs(o.OutDir); err != nil {
			return nil, err
		}
	}
	if o.Check && outDir == "" {
		return nil, fmt.Errorf("--check needs --out-dir: the directory of rendered outputs to compare with")
	}
	outputOf := func(name string) string {
		if outDir == "" {
			return ""
		}
		return filepath.Join(outDir, name+".yaml")
	}
	var od *batch.OutDir
	if outDir != "" {
		if od, err = batch.OpenOutDir(ctx, outDir, o.Check, o.Renderer.Options().Engine.Warn); err != nil {
			return nil, err
		}
	}
	res := &Result{Units: units, Reads: map[string]ReadPaths{}, Outputs: map[string]*Output{}}
	rep := &batch.Report{Version: o.Version, Shard: o.Shard.String(), Roots: make([]batch.RootReport, len(units))}
	res.Report = rep
	recs := newRecords(&o.Source)
	if o.Tree.CheckSymlinks() != nil {
		recs = nil // every Application fails: render them to say so
	}
	files := o.Renderer.FileIndex(o.Tree)
	disk := files
	if files.Source() != nil {
		disk = files.On(nil)
	}
	intact := func(path string, d cache.Key) bool {
		got, ok := disk.Digest(path)
		return ok && got == d
	}
	var todo []*Unit
	var todoIdx []int
	for i := range units {
		u := &units[i]
		rr := batch.RootReport{Path: u.Name, Source: u.File}
		switch {
		case u.Err != "":
			rr.Status, rr.Error = "error", u.Err
		case u.Skipped != "":
			rr.Status, rr.Skipped = "skipped", u.Skipped
		default:
			if out, inputs, ok := recs.lookup(u, outputOf(u.Name), intact); ok {
				rr.Status, rr.Cached, rr.UpToDate, rr.Output = "ok", true, true, outputOf(u.Name)
				rr.Digest = digestHex(out.Manifests)
				if od != nil {
					od.Keep(owner(u.Name), rr.Output, rr.Digest)
				}
				res.Outputs[u.Name] = out
				if o.Reads {
					res.Reads[u.Name] = readsOfInputs(o.Tree.Files, inputs)
				}
				rep.Roots[i] = rr
				continue
			}
			todo = append(todo, u)
			todoIdx = append(todoIdx, i)
			continue
		}
		if rr.Status == "error" && outputOf(u.Name) != "" && od != nil {
			rr.RemovedOutput = od.Drop(outputOf(u.Name))
		}
		rep.Roots[i] = rr
	}
	before := o.Renderer.Stats()
	outs := o.RenderAll(ctx, todo)
	after := o.Renderer.Stats()
	for j, u := range todo {
		i := todoIdx[j]
		out := outs[j]
		res.Outputs[u.Name] = out
		rr := batch.RootReport{Path: u.Name, Source: u.File}
		if o.Reads && out.Reads != nil {
			res.Reads[u.Name] = readsOfReads(out.Reads)
		}
		switch {
		case out.Skipped != "":
			rr.Status, rr.Skipped = "skipped", out.Skipped
		case out.Err != "":
			rr.Status, rr.Error = "error", out.Err
			if p := outputOf(u.Name); p != "" && od != nil {
				rr.RemovedOutput = od.Drop(p)
			}
		default:
			rr.Status, rr.Output = "ok", outputOf(u.Name)
			rr.Digest = digestHex(out.Manifests)
			switch {
			case od != nil:
				changed, _, err := od.Put(owner(u.Name), rr.Output, out.Manifests)
				if err != nil {
					rr.Status, rr.Error, rr.Output = "error", err.Error(), ""
					break
				}
				if o.Check {
					rr.OutOfDate, rr.Changed = changed, changed
				} else {
					rr.Changed = changed
				}
			case o.Previous != nil:
				rr.Changed = o.Previous[u.Name] != rr.Digest
			default:
				rr.Changed = true
			}
			if rr.Status == "ok" && !o.Check {
				recs.save(&o.Source, u, out, rr.Output)
			}
		}
		rep.Roots[i] = rr
	}
	if od != nil {
		var outputs []string
		for _, rr := range rep.Roots {
			if rr.Output != "" {
				outputs = append(outputs, rr.Output)
			}
		}
		if o.Check {
			rep.Orphans = od.Orphans(outputs)
		}
		if rep.Pruned, rep.Kept, err = od.Close(live, o.Prune); err != nil {
			return res, err
		}
	}
	if recs != nil {
		_ = files.Save("")
	}
	s := &rep.Summary
	s.Roots = len(units)
	s.NodesBuilt, s.NodesCached = after.NodesBuilt-before.NodesBuilt, after.NodesCached-before.NodesCached
	s.FilesHashed, s.FilesStat = files.Counts()
	if rs := o.Renderer.Options().Engine.Cache.Store.RemoteStats(); rs.URL != "" {
		o.Renderer.Options().Engine.Cache.Store.Flush()
		rs = o.Renderer.Options().Engine.Cache.Store.RemoteStats()
		s.Remote = &rs
	}
	for _, rr := range rep.Roots {
		switch {
		case rr.Status == "error":
			s.Failed++
		case rr.OutOfDate:
			s.OutOfDate++
		case rr.Changed:
			s.Changed++
		case rr.UpToDate:
			s.UpToDate++
		}
	}
	s.Seconds = time.Since(start).Seconds()
	return res, nil
}

// owner names an Application in the output directory's manifest.
func owner(name string) string { return "argocd:" + name }

func digestHex(data []byte) string {
	d := cache.Digest(data)
	return hex.EncodeToString(d[:])
}
