// Package fluxdiff is `kpipe diff --flux` and `kpipe affected --flux`:
// which Flux Kustomizations of a cluster render differently between two
// git revisions, resource by resource.
//
// Both revisions are read through the read seam (package diff's Sides:
// git's objects, no checkout). The new side's cluster is rendered by
// package cluster, through its records: a Flux Kustomization whose inputs
// are unchanged since a run rendered it is not built again. The old side
// is rendered by the same walk, except that a Flux Kustomization whose
// object, path and substitution variables are those of the new side (its
// key) and none of whose reads on the new side is a changed path renders
// the same bytes on both sides: the new side's result is taken, nothing is
// built. So the cost follows the change: only the Kustomizations the
// change reaches are rendered at the old revision.
//
// It imports internal/affected, internal/diff, internal/flux/cluster and
// loaders.
package fluxdiff

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/diff"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/loaders"
)

// Options are the settings of a review.
type Options struct {
	// Dir is where the command runs (a directory of the repository).
	Dir string
	// ClusterDirs are the cluster directories (relative to Dir, or
	// absolute in the working tree): the directories the flux-system
	// Kustomization applies.
	ClusterDirs []string
	// SourceRoot is the repository's directory in the working tree (""
	// for the repository's top level).
	SourceRoot string
	// Base is the old revision ("": the merge base of HEAD with the
	// default branch); Head the new one ("": the working tree).
	Base, Head string
	// Cluster carries the run's settings (cache, local sources, dry run,
	// jobs); its FS, Cwd, SourceRoot, OutDir and Reuse are the review's.
	Cluster cluster.Options
	// Diff tunes the comparison.
	Diff diff.Options
}

// Outcome is a review: the comparison, and for each Flux Kustomization
// that differs, the changed paths that reach it on the new side.
type Outcome struct {
	*diff.Result
	// Because are, by Kustomization (Namespace/Name), the changed paths
	// (relative to the repository) its new side's rendering read.
	Because map[string][]string `json:"-"`
	// Rendered counts the Kustomizations rendered at the old revision
	// (the others were taken from the new side).
	Rendered int `json:"-"`
}

// Review renders the clusters at both revisions and compares them. The
// Result's roots are Flux Kustomizations, by Namespace/Name.
func Review(ctx context.Context, o Options) (*Outcome, error) {
	sides, err := diff.OpenSides(ctx, o.Dir, o.Base, o.Head)
	if err != nil {
		return nil, err
	}
	defer sides.Close()
	top := sides.Repo.Top
	srcRel := "."
	if o.SourceRoot != "" {
		sr, err := filepath.Abs(o.SourceRoot)
		if err != nil {
			return nil, err
		}
		if real, err := filepath.EvalSymlinks(sr); err == nil {
			sr = real
		}
		if srcRel, err = filepath.Rel(top, sr); err != nil || !filepath.IsLocal(srcRel) && srcRel != "." {
			return nil, &outsideError{sr, top}
		}
	}
	var rels []string
	for _, c := range o.ClusterDirs {
		if !filepath.IsAbs(c) {
			c = filepath.Join(sides.Dir, c)
		}
		rel, err := filepath.Rel(top, c)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return nil, &outsideError{c, top}
		}
		rels = append(rels, rel)
	}
	out := &Outcome{Result: &diff.Result{}, Because: map[string][]string{}}
	out.Base, out.Head = sides.Names()
	defer func() { out.ObjectsRead = sides.ObjectsRead() }()

	side := func(tree string, fsys loaders.FS, reuse func(*cluster.Node) (*cluster.Result, bool)) (*cluster.Report, error) {
		co := o.Cluster
		co.FS, co.Cwd, co.SourceRoot, co.OutDir, co.Check, co.Prune, co.Reuse = fsys, tree, filepath.Join(tree, srcRel), "", false, false, reuse
		var roots []cluster.Root
		for _, rel := range rels {
			r, err := cluster.ClusterRoot(co.SourceRoot, filepath.Join(tree, rel))
			if err != nil {
				return nil, err
			}
			roots = append(roots, r)
		}
		return cluster.Run(ctx, roots, co)
	}
	head, err := side(sides.HeadDir, sides.HeadFS, nil)
	if err != nil {
		return nil, err
	}
	type headNode struct {
		res     *cluster.Result
		because []string
	}
	heads := map[string]headNode{}
	m := affected.NewMatcher(sides.HeadFS, affected.Under(sides.HeadDir, sides.Changes))
	keys := headKeys(head)
	for i, rr := range head.Roots {
		res := head.Result(i)
		var because []string
		if rs := res.ReadSet(); rs != nil {
			because = m.Match(*rs)
		} else {
			because = []string{"(unknown reads)"}
		}
		heads[rr.Path] = headNode{res: res, because: because}
	}
	var rendered atomic.Int64
	base, err := side(sides.BaseDir, sides.BaseFS, func(n *cluster.Node) (*cluster.Result, bool) {
		h, ok := heads[n.ID]
		if ok && len(h.because) == 0 && keys[n.ID] == n.Key && !n.Key.IsZero() {
			return h.res, true
		}
		rendered.Add(1)
		return nil, false
	})
	if err != nil {
		return nil, err
	}
	out.Rendered = int(rendered.Load())
	olds, news := outputs(base), outputs(head)
	for id, h := range heads {
		if len(h.because) > 0 {
			for _, p := range h.because {
				out.Because[id] = append(out.Because[id], relOf(sides.HeadDir, p))
			}
		}
	}
	compare(out.Result, olds, news, sides.BaseDir, sides.HeadDir, o.Diff)
	return out, nil
}

// headKeys are the new side's node keys, by Kustomization.
func headKeys(rep *cluster.Report) map[string]cache.Key {
	m := map[string]cache.Key{}
	for i, rr := range rep.Roots {
		m[rr.Path] = rep.NodeKey(i)
	}
	return m
}

// side's output of one Kustomization.
type rendered struct {
	res *cluster.Result
}

func outputs(rep *cluster.Report) map[string]rendered {
	m := map[string]rendered{}
	for i, rr := range rep.Roots {
		m[rr.Path] = rendered{res: rep.Result(i)}
	}
	return m
}

// compare fills res from the two sides.
func compare(res *diff.Result, olds, news map[string]rendered, oldTree, newTree string, o diff.Options) {
	ids := map[string]bool{}
	for id := range olds {
		ids[id] = true
	}
	for id := range news {
		ids[id] = true
	}
	for id := range ids {
		old, inOld := olds[id]
		nw, inNew := news[id]
		if inOld && inNew && old.res == nw.res {
			res.Compared++
			res.Unchanged++
			continue // taken from the new side: the same bytes
		}
		rd := diff.RootDiff{Path: id}
		res.Compared++
		switch {
		case !inOld:
			rd.Status, rd.NewError = diff.RootAdded, nw.res.Err
			if nw.res.Err == "" {
				rd.Changes, _, _ = diff.Compare(nil, nw.res.YAML, o)
			}
		case !inNew:
			rd.Status, rd.OldError = diff.RootRemoved, old.res.Err
			if old.res.Err == "" {
				rd.Changes, _, _ = diff.Compare(old.res.YAML, nil, o)
			}
		case old.res.Err != "" || nw.res.Err != "":
			oe := strings.ReplaceAll(old.res.Err, oldTree+string(filepath.Separator), "")
			ne := strings.ReplaceAll(nw.res.Err, newTree+string(filepath.Separator), "")
			if oe == ne {
				rd.Status, rd.NewError = diff.RootFailing, ne
				break
			}
			rd.Status, rd.OldError, rd.NewError = diff.RootError, oe, ne
		default:
			changes, reordered, err := diff.Compare(old.res.YAML, nw.res.YAML, o)
			if err != nil {
				rd.Status, rd.NewError = diff.RootError, err.Error()
				break
			}
			if len(changes) == 0 && !(o.OrderMatters && reordered) {
				res.Unchanged++
				continue
			}
			rd.Status, rd.Changes, rd.Reordered = diff.RootChanged, changes, reordered
		}
		res.Roots = append(res.Roots, rd)
	}
	diff.SortRoots(res.Roots)
}

func relOf(tree, p string) string {
	if rel, err := filepath.Rel(tree, p); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return p
}

type outsideError struct{ path, top string }

func (e *outsideError) Error() string {
	return e.path + " is outside the repository at " + e.top
}
