package engine

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"weak"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// TestRunEachForgetsWrittenRoots: with a cache (the memo records what each
// node read), a node goes once every root that reaches it has been handed
// to emit: while the last roots build, the first ones, their kustomizations
// and what the memo learned of them are garbage, and the shared base stays
// until its last root is written. (Before, the graph and the memo held every
// node to the end of the run: a build-all's memory grew with each root
// written.) Run, which returns every result, keeps its graph.
func TestRunEachForgetsWrittenRoots(t *testing.T) {
	_, roots := monorepo(t, 6)
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	g, loadErrs := Load(roots, loaders.RootOnly)
	base := g.Roots[0].Resources[0].Child
	weakBase := weak.Make(base)
	var weakRoots []weak.Pointer[Node]
	for _, n := range g.Roots {
		weakRoots = append(weakRoots, weak.Make(n))
	}
	base = nil
	b := NewBuilder(g, Options{Jobs: 1, Cache: Cache{Store: store, Version: "test"}})
	emitted := 0
	var alive []string
	b.RunEach(context.Background(), loadErrs, func(i int, r Result) {
		if r.Err != nil {
			t.Fatalf("root %d: %v", i, r.Err)
		}
		emitted++
		if emitted < len(roots) {
			return
		}
		// The last root: every other root was written before it.
		runtime.GC()
		for j, w := range weakRoots {
			if j != i && w.Value() != nil {
				alive = append(alive, fmt.Sprintf("root %d", j))
			}
		}
		if weakBase.Value() == nil {
			t.Error("the base went while a root that includes it was being written")
		}
	})
	if emitted != len(roots) {
		t.Fatalf("%d roots emitted, want %d", emitted, len(roots))
	}
	if len(alive) > 0 {
		t.Errorf("still held while the last root was written: %v", alive)
	}
	runtime.GC()
	if weakBase.Value() != nil || weakRoots[len(roots)-1].Value() != nil {
		t.Error("the base or the last root is still held after the run")
	}
	if len(g.Nodes) != 0 || len(b.memo.keys)+len(b.memo.used)+len(b.memo.reads)+len(b.memo.inputs) != 0 {
		t.Errorf("after the run: %d nodes in the graph, memo: %d keys, %d used, %d reads, %d inputs",
			len(g.Nodes), len(b.memo.keys), len(b.memo.used), len(b.memo.reads), len(b.memo.inputs))
	}

	// Run keeps the graph: a caller may ask about its roots afterwards.
	g, loadErrs = Load(roots, loaders.RootOnly)
	NewBuilder(g, Options{Jobs: 1, Cache: Cache{Store: store, Version: "test"}}).Run(context.Background(), loadErrs)
	if len(g.Nodes) != len(roots)+1 {
		t.Errorf("Run left %d nodes in the graph, want %d", len(g.Nodes), len(roots)+1)
	}
}
