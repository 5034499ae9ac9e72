// The process's memory settings: the soft limit and GOGC of build,
// build-all, diff and affected, and when a build's heap is backed by huge
// pages.

package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// defaultMemoryLimit is the soft memory limit of build and build-all
// unless GOMEMLIMIT says otherwise, and defaultGCPercent their GOGC
// unless GOGC does: the heap may grow to five times what is live between
// collections (Go's default: twice), which saves a quarter to a third of
// the CPU of a cold build (most of it was collecting garbage), up to the
// limit, where the runtime collects harder instead. What a build-all
// keeps live grows slowly with the number of roots (about 12 MB per 1,000
// roots of the synthetic monorepo; one build of 3.5 MB of CRDs, about
// 20 MB), so the limit is what bounds a big run's memory; a run that
// needs more live memory than the limit slows down (the runtime caps the
// collector at half the CPU) rather than fail. Set GOMEMLIMIT (for
// example 2GiB) or GOGC to choose otherwise.
const (
	defaultMemoryLimit = 448 << 20
	defaultGCPercent   = 400
)

// bigBuildHeap is the heap, once its kustomizations are loaded, from which
// a `kpipe build` is worth hugeHeap's 3-5 ms: building allocates many
// times what loading did. Measured on a 2-core VM, CPU of `kpipe build
// --no-cache` without and with huge pages: kubeflow/manifests' kserve
// (3.9 MB after loading) 250-280 and 115-130 ms, istio-crds (1.0 MB)
// 154-188 and 99-100 ms, a synthetic root of 1,500 resources (1.6 MB)
// about 260 and 160-175 ms; knative-serving (0.66 MB) 73-91 and 71-89 ms;
// a small root (0.15 MB) 41-46 and 45 ms. Most roots hold under 0.2 MB.
const bigBuildHeap = 512 << 10

// heapObjects is the memory the heap's objects occupy now, live or not
// yet collected. (runtime.ReadMemStats stops the world for some
// microseconds; runtime/metrics, which does not, costs every kpipe
// process its package's initialisation, about 0.3 ms.)
func heapObjects() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// softMemoryLimit sets defaultMemoryLimit and defaultGCPercent where the
// environment does not set them.
func softMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// hugeHeapToLimit backs the heap up to the soft memory limit (at most
// defaultMemoryLimit) with huge pages, where hugeHeap can.
func hugeHeapToLimit() {
	hugeHeap(min(int(debug.SetMemoryLimit(-1)), defaultMemoryLimit))
}
