package engine

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/rescodec"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// This file runs stages: every stage of a build goes through runStage,
// which memoizes the expensive ones (plugins, helm, an embedder's) on
// their own, checks them under --verify-cache, and counts and times them.

// runStage runs one configured stage over rs. Every stage of a build runs
// through here: with a cache, a stage whose kind, fingerprint and input are
// unchanged takes its output from the cache instead of running.
func (b *Builder) runStage(ctx context.Context, s stages.Stage, rs *resource.List) error {
	_, err := b.runStageEncoded(ctx, s, rs, nil)
	return err
}

// runStages runs stages in order over rs; the encoding of one stage's
// output, which its cache entry needs, is the next stage's input encoding.
func (b *Builder) runStages(ctx context.Context, list []stages.Stage, rs *resource.List) error {
	var enc []byte
	for _, s := range list {
		var err error
		if enc, err = b.runStageEncoded(ctx, s, rs, enc); err != nil {
			return &stageError{kind: s.Kind(), err: err}
		}
	}
	return nil
}

// runStageEncoded is runStage given the encoding of rs when the caller
// has it (nil otherwise); it returns the encoding of the output, or nil
// without a cache.
//
// A plugin stage (one with a Describe method) is not cached with
// --no-cache-plugins. With --verify-cache a stage found in the cache runs
// anyway and its output must equal the cached one; a plugin stage not in
// the cache runs twice, and both outputs must be equal.
func (b *Builder) runStageEncoded(ctx context.Context, s stages.Stage, rs *resource.List, in []byte) ([]byte, error) {
	start := time.Now()
	var key cache.Key
	cacheable := false
	if _, cheap := s.(stages.Cheap); cheap {
		if err := s.Run(ctx, rs); err != nil {
			return nil, err
		}
		rs.Settle() // the stage is done with the trees: IDs are kept
		b.stageDone(ctx, s.Kind(), false, time.Since(start))
		return nil, nil
	}
	if c, _ := ctx.Value(nodeCountsKey{}).(*nodeCounts); c != nil {
		c.mu.Lock()
		c.costly++
		c.mu.Unlock()
	}
	desc, isPlugin := asPlugin(s)
	var want []byte // --verify-cache: the output the stage must give
	// Only stages that cost more than storing them are memoized on their
	// own (plugins, functions, helm); the others are memoized as part of
	// their node.
	if b.memo != nil && b.memo.Store != nil && expensive(s, isPlugin) && !(isPlugin && b.opts.NoCachePlugins) {
		var err error
		if in == nil {
			in, err = rescodec.EncodeList(rs)
		}
		if err == nil {
			key = b.memo.key("stage").String(s.Kind()).Bytes(s.Fingerprint()).Key(cache.Digest(in)).Sum()
			cacheable = true
			if data, ok := b.memo.Store.Get(key); ok {
				if out, err := rescodec.DecodeList(data); err == nil {
					if !b.opts.VerifyCache {
						rs.Replace(out.All())
						b.explainStage(ctx, s, cache.Digest(in), true)
						b.stageDone(ctx, s.Kind(), true, time.Since(start))
						return data, nil
					}
					want = data
				}
			}
		}
	}
	var again *resource.List // --verify-cache: a second run's input
	if b.opts.VerifyCache && isPlugin && want == nil {
		rs.Freeze()
		again = rs.Copy()
	}
	if err := s.Run(ctx, rs); err != nil {
		return nil, err
	}
	rs.Settle()
	if b.opts.VerifyCache && (want != nil || again != nil) {
		got, err := rescodec.EncodeList(rs)
		if err != nil {
			return nil, err
		}
		if want == nil {
			if err := s.Run(ctx, again); err != nil {
				return nil, err
			}
			if want, err = rescodec.EncodeList(again); err != nil {
				return nil, err
			}
		}
		if !bytes.Equal(got, want) {
			if isPlugin {
				return nil, fmt.Errorf("--verify-cache: %s printed different output for the same input: it is not a pure function of its config and input (build with --no-cache-plugins while it is not)", desc.Describe())
			}
			return nil, fmt.Errorf("--verify-cache: the %s stage gave a different output than the one cached for the same input (a kpipe bug, or a cache written by a different kpipe)", s.Kind())
		}
	}
	var out []byte
	if cacheable {
		b.explainStage(ctx, s, cache.Digest(in), false)
		if enc, err := rescodec.EncodeList(rs); err == nil {
			b.memo.put(key, enc, isPlugin || hasSecret(rs.All()))
			out = enc
		}
	}
	b.stageDone(ctx, s.Kind(), false, time.Since(start))
	return out, nil
}

// expensive reports whether a stage is worth a cache entry of its own:
// an external plugin or function, helm, or an embedder's stage (whose
// node is not memoized: see definedStage).
func expensive(s stages.Stage, isPlugin bool) bool {
	return isPlugin || s.Kind() == "HelmChartInflationGenerator" || isDefined(s)
}

// isDefined reports whether s is, or wraps, an embedder's stage
// (definedStage).
func isDefined(s stages.Stage) bool {
	for {
		if _, ok := s.(*definedStage); ok {
			return true
		}
		u, ok := s.(interface{ Unwrap() stages.Stage })
		if !ok {
			return false
		}
		s = u.Unwrap()
	}
}

// describer is implemented by plugin stages, which name themselves for
// messages.
type describer interface{ Describe() string }

// asPlugin returns the external plugin stage s is, or wraps (origin
// annotations wrap plugin stages), if any.
func asPlugin(s stages.Stage) (describer, bool) {
	for {
		if d, ok := s.(describer); ok {
			return d, true
		}
		u, ok := s.(interface{ Unwrap() stages.Stage })
		if !ok {
			return nil, false
		}
		s = u.Unwrap()
	}
}

// nodeCounts counts the stage runs of one node's build.
type nodeCounts struct {
	node, key   string // the node's directory and its key in the graph
	mu          sync.Mutex
	ran, cached int
	costly      int // stages run or cached that are not stages.Cheap
}

// ranCostly says whether a stage that is not stages.Cheap ran (or came
// from the cache) in the node ctx counts for.
func ranCostly(ctx context.Context) bool {
	c, _ := ctx.Value(nodeCountsKey{}).(*nodeCounts)
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.costly > 0
}

type nodeCountsKey struct{}

func withNodeCounts(ctx context.Context, c *nodeCounts) context.Context {
	return context.WithValue(ctx, nodeCountsKey{}, c)
}

func (b *Builder) stageDone(ctx context.Context, kind string, cached bool, d time.Duration) {
	c, _ := ctx.Value(nodeCountsKey{}).(*nodeCounts)
	if b.opts.Events != nil {
		ev := Event{Kind: StageDone, Stage: kind, Start: time.Now().Add(-d), Dur: d, Cached: cached}
		if c != nil {
			ev.Node = c.node
		}
		b.emit(ev)
	}
	if c != nil {
		c.mu.Lock()
		if cached {
			c.cached++
		} else {
			c.ran++
		}
		c.mu.Unlock()
	}
	b.count(func(st *Stats) {
		if st.Stages == nil {
			st.Stages = map[string]StageStats{}
		}
		ss := st.Stages[kind]
		if cached {
			ss.Cached++
		} else {
			ss.Ran++
		}
		ss.Time += d
		st.Stages[kind] = ss
	})
}

func (b *Builder) count(f func(*Stats)) {
	b.mu.Lock()
	f(&b.stats)
	b.mu.Unlock()
}

// stageError is a stage's failure, named by the stage's kind.
type stageError struct {
	kind string
	err  error
}

func (e *stageError) Error() string { return e.kind + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// kustomizeText is the failure as kustomize words it: the stage's own
// error, without kpipe's naming of the stage (which some stages repeat).
func (e *stageError) kustomizeText() string {
	msg := e.err.Error()
	for strings.HasPrefix(msg, e.kind+": ") {
		msg = strings.TrimPrefix(msg, e.kind+": ")
	}
	return msg
}
