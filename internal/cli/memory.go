// The process's memory settings: the soft limit and GOGC of build,
// build-all, diff and affected, and when a build's heap is backed by huge
// pages.

package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/kpipe/kpipe/internal/engine"
)

// defaultMemoryLimit is the soft memory limit of build and build-all
// unless GOMEMLIMIT says otherwise, and defaultGCPercent their GOGC
// unless GOGC does: the heap may grow to five times what is live between
// collections (Go's default: twice), which saves a quarter to a third of
// the CPU of a cold build (most of it was collecting garbage), up to the
// limit, where the runtime collects harder instead. A run that needs
// more live memory than the limit slows down (the runtime caps the
// collector at half the CPU) rather than fail. Set GOMEMLIMIT (for
// example 2GiB) or GOGC to choose otherwise.
//
// Five times what is live is a few megabytes for one root, but for a
// build-all it multiplied all it held at once: the kustomizations of
// every root were loaded before the first was built (about 30 MB at 4,000
// roots of the synthetic monorepo, 70 MB at 10,000; now a graph holds 256
// roots, package batch), and a heap five times that was most of the
// process's memory. So the heap may grow past
// what is live by at most heapHeadroom, or by half of it when that is
// more (heapBound): a run holding up to 4 MiB keeps GOGC 400, a
// bigger one collects more often, for a heap that grows with what it
// holds, not five times as fast. (Measured in benchmarks/RESULTS.md,
// issue 40: a cold build-all of 4,000 roots peaks at 72 MiB instead of
// 225 for the same CPU; one of 10,000 at 144 instead of 446, for about a
// fifth more CPU.)
const (
	defaultMemoryLimit = 448 << 20
	defaultGCPercent   = 400
	heapHeadroom       = 16 << 20
	minGCPercent       = 50
)

// bigBuildLoad is how many bytes of kustomization and resource files a
// root's load reads from which a `kpipe build` is worth hugeHeap's 3-5 ms:
// building allocates many times what loading read. Measured on a 2-core
// VM, CPU of `kpipe build --no-cache` without and with huge pages:
// kubeflow/manifests' kserve (its load reads 3.8 MB) 250-280 and 115-130
// ms, istio-crds (0.88 MB) 154-188 and 99-100 ms, a synthetic root of
// 1,500 resources about 260 and 160-175 ms; knative-serving (0.51 MB)
// 73-91 and 71-89 ms; admission-webhook (87 KB) 41-46 and 45 ms. Most
// roots read under 0.1 MB, a ConfigMap and a namePrefix 105 bytes.
//
// It is what the load read (engine.Graph.ReadBytes), not the heap's
// size: the heap also holds what the process's package initialisers
// allocated (some 0.4 MB in a binary built without urfave/cli's
// urfave_cli_no_docs tag), which put every new one-ConfigMap root over
// the bar, a 6-7 ms reservation and collection for a build of 5; and
// reading the heap's statistics (runtime.ReadMemStats stops the world)
// cost 0.3 ms of such a build.
const bigBuildLoad = 512 << 10

// heapPerByteRead is the headroom a `kpipe build` allows its heap (past
// what is live, between collections) for every byte its load read: a
// build's live heap is some tens of times what it read, and between two
// collections it may allocate about that much again, as GOGC 400 lets a
// small root. (The 4,000-resource root of benchmarks/scaling reads about
// 1.3 MB and holds 40-70 MB live.)
const heapPerByteRead = 64

// sizeHeap sizes the heap of a build for what its load read: past
// bigBuildLoad, up to the memory limit at once (hugeHeapToLimit); and a
// headroom of heapPerByteRead for every byte.
func sizeHeap(heap *heapBound, g *engine.Graph) {
	if bigLoad(g) {
		hugeHeapToLimit()
	}
	heap.Allow(uint64(g.ReadBytes()) * heapPerByteRead)
}

// bigLoad says whether g's load read at least bigBuildLoad.
func bigLoad(g *engine.Graph) bool { return g.ReadBytes() >= bigBuildLoad }

// softMemoryLimit sets defaultMemoryLimit and defaultGCPercent where the
// environment does not set them, the latter bounded by a heapBound (by
// heapHeadroom) until its Done is called (when the command is done).
func softMemoryLimit() *heapBound {
	b := &heapBound{}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
		b.headroom.Store(heapHeadroom)
		b.last.Store(defaultGCPercent)
		b.arm()
	}
	return b
}

// gcPercentFor is the GOGC for a live heap of live bytes: the heap may grow
// by headroom past it, or by minGCPercent of it if that is more, and by
// no more than defaultGCPercent of it.
func gcPercentFor(live, headroom uint64) int {
	if live == 0 {
		return defaultGCPercent
	}
	return int(max(minGCPercent, min(defaultGCPercent, headroom*100/live)))
}

// heapBound sets the GOGC of gcPercentFor after every collection, from the
// heap it left, until Done. (The runtime has no hook after a collection;
// an object's cleanup runs after the collection that found it
// unreachable, and arms the next. ReadMemStats stops the world for
// microseconds, once a collection.)
type heapBound struct {
	stopped  atomic.Bool
	headroom atomic.Uint64
	last     atomic.Int64 // the GOGC set last
}

// Done stops bounding the heap's growth (the command is done); on a
// heapBound of an environment that set GOGC, it does nothing.
func (b *heapBound) Done() { b.stopped.Store(true) }

// Allow lets the heap grow past what is live by at least n between
// collections. One root's build, whose heap follows what its load read,
// allows what that calls for: the headroom that suits a build-all (whose
// live heap holds many roots' loads) made a root of thousands of
// resources collect ever more often as it grew (issue 49: 4,000 -> 8,000
// resources 2.6 times the time, 2.2-2.3 with GOGC fixed).
func (b *heapBound) Allow(n uint64) {
	for {
		old := b.headroom.Load()
		if n <= old || b.headroom.CompareAndSwap(old, n) {
			return
		}
	}
}

func (b *heapBound) arm() {
	// 32 bytes: the runtime's tiny allocator batches smaller pointer-free
	// objects, which then die together, if ever.
	sentinel := new([32]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		if b.stopped.Load() {
			return
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if pct := gcPercentFor(m.HeapAlloc, b.headroom.Load()); int64(pct) != b.last.Swap(int64(pct)) {
			debug.SetGCPercent(pct)
		}
		b.arm()
	}, struct{}{})
}

// hugeHeapToLimit backs the heap up to the soft memory limit (at most
// defaultMemoryLimit) with huge pages, where hugeHeap can, once a process:
// the pages it maps stay the heap's, and doing it again would only clear
// them (a program that runs many commands, as the tests do, paid a clear
// of the whole reservation for every build).
func hugeHeapToLimit() {
	hugeHeapOnce.Do(func() { hugeHeap(min(int(debug.SetMemoryLimit(-1)), defaultMemoryLimit)) })
}

// hugeHeapOnce makes hugeHeapToLimit's reservation once a process.
var hugeHeapOnce sync.Once
