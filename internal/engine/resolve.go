package engine

import (
	"bytes"
	"context"
	"time"

	"github.com/kpipe/kpipe/cache"
)

// This file resolves graph nodes: from the memo when a node's key is
// known and stored, else by building it, then storing what was built.

// visit resolves one graph node: from the cache when its key is known and
// stored, else by building it.
func (b *Builder) visit(ctx context.Context, n *Node) *nodeResult {
	counts := &nodeCounts{node: n.Dir, key: n.Key}
	ctx = withNodeCounts(ctx, counts)
	start := time.Now()
	r := b.resolve(ctx, n)
	b.explainNode(n, r)
	r.stagesRan, r.stagesCached = counts.ran, counts.cached
	b.emit(Event{Kind: NodeDone, Node: n.Dir, Start: start, Dur: time.Since(start), Cached: r.fromCache})
	if b.opts.Progress != nil {
		b.opts.Progress()
	}
	return r
}

func (b *Builder) resolve(ctx context.Context, n *Node) *nodeResult {
	m := b.memo
	if m == nil || (n.IsComponent() && !b.isRoot(n)) {
		acc, err := b.buildNode(ctx, n)
		return &nodeResult{acc: acc, err: err}
	}
	var miss string
	if !b.opts.VerifyCache {
		cands, why := m.candidates(n)
		miss = why
		if b.isRoot(n) {
			// A root's output stands for its accumulation, which is not
			// stored when no node includes the root: load builds it if a
			// node asks for it. (The output is asked for first: with a
			// remote cache each question is a round trip, and most roots
			// have no accumulation entry.)
			for _, c := range cands {
				if out, sum, ok := m.Store.GetDigest(m.rootKey(c.key)); ok {
					m.accept(n, c)
					b.count(func(s *Stats) { s.NodesCached++ })
					return &nodeResult{key: c.key, fromCache: true, lazy: true, output: out, outputSum: sum}
				}
			}
		}
		for _, c := range cands {
			// The entry under the key is the node's accumulation, or the
			// mark a lazy node leaves (lazyMark): load reads it, or
			// builds the node, only when a dependent asks.
			if m.Store.Has(c.key) {
				m.accept(n, c)
				b.count(func(s *Stats) { s.NodesCached++ })
				return &nodeResult{key: c.key, fromCache: true, lazy: c.lazy}
			}
		}
	}
	acc, err := b.buildNode(ctx, n)
	if err != nil {
		return &nodeResult{err: err}
	}
	r := &nodeResult{acc: acc, miss: miss}
	// A node whose build ran only cheap stages (or none: it gathered its
	// files and its bases) is lazy: its accumulation is not stored by the
	// build that made it, only a mark under its key (lazyMark). Building
	// it again costs what its bases' entries cost to read plus a few
	// field edits, about what reading its own entry would, and that entry
	// would be the costliest to write, the whole content of every base
	// under it once more; most such nodes are never asked for again
	// (their dependents' outputs are stored). A later run that finds the
	// mark takes the key as found; load reads the entry, or builds the
	// node and stores its accumulation, only when a dependent that is
	// rebuilt asks for it.
	lazy := !ranCostly(ctx)
	if k, ok := m.remember(n, lazy); ok {
		switch {
		case !b.storesAccumulation(n):
			// A root no node includes: its output (finishRoot) is its
			// entry.
		case lazy:
			m.Store.Put(k, lazyMark)
		default:
			b.storeAccumulation(n, k, acc)
		}
		r.key = k
	}
	return r
}

// storeAccumulation stores n's accumulation under its key k, unless n is a
// root no other node of the run includes (storesAccumulation): its
// finished output is stored (finishRoot), and nothing else reads it.
func (b *Builder) storeAccumulation(n *Node, k cache.Key, acc *Accumulation) {
	if !b.storesAccumulation(n) {
		return
	}
	if data, err := b.encodeAccumulation(acc); err == nil {
		b.memo.put(k, data, hasSecret(acc.Resources.All()) || runsPlugins(n))
	}
}

// load returns a node result's accumulation, reading it from the cache on
// first use; if the entry is a lazy node's mark, or unusable, the node is
// built instead, and its accumulation stored under its key.
func (b *Builder) load(ctx context.Context, n *Node, r *nodeResult) (*Accumulation, error) {
	r.once.Do(func() {
		if !r.fromCache {
			return
		}
		marked := false
		if data, ok := b.memo.Store.Get(r.key); ok {
			if marked = bytes.Equal(data, lazyMark); !marked {
				if acc, err := b.decodeAccumulation(data); err == nil {
					r.acc = acc
					return
				}
			}
		}
		if b.opts.Explain {
			status := "built when a dependent asked (its entry was missing or unreadable; stored now)"
			switch {
			case b.isRoot(n) && !b.storesAccumulation(n):
				status = "built (lazy: not stored by the build that made it)"
			case marked || r.lazy:
				status = "built when a dependent asked (lazy: not stored by the build that made it; stored now)"
			}
			e := b.explainOf(n.Key)
			b.mu.Lock()
			e.Status = status
			b.mu.Unlock()
		}
		r.rebuilt = true
		r.acc, r.err = b.buildNode(ctx, n)
		if r.err == nil {
			// Asked for after all (a dependent changed, or one that runs
			// plugins is built every run): stored now, so that the next
			// run that needs it reads it. (The key was found under an
			// entry that proves it: the build read the files it covers.)
			b.storeAccumulation(n, r.key, r.acc)
		}
	})
	return r.acc, r.err
}
