package cli

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the size of a transparent huge page on the platforms Go
// supports on Linux (amd64, arm64 with 4 KiB base pages).
const hugePageSize = 2 << 20

// hugeHeap asks Linux to back the first size bytes the heap grows into with
// transparent huge pages, where it can.
//
// A build's heap is fresh memory, and the first touch of each 4 KiB page
// is a page fault. On a virtual machine a fault costs 10-20 us (16 us on
// the 2-core CI VM), and a cold build-all of 400 roots takes about 6,700
// of them: a quarter of its CPU. A huge page is one fault for 2 MiB. Go
// no longer asks for huge pages itself (it stopped in the 1.21 releases),
// and most distributions set /sys/kernel/mm/transparent_hugepage/enabled
// to "madvise", which gives them only to memory advised so. The runtime maps
// heap memory as the heap grows, each time as a new mapping that an
// earlier madvise does not cover; so hugeHeap has the runtime map size
// bytes at once, by allocating them, advises them, and lets a collection
// free them: the heap's next allocations reuse those pages (the runtime
// hands out free pages lowest address first) and fault them in 2 MiB at a
// time.
//
// The cost is a collection (3-5 ms, much of it starting the collector's
// workers, which a build starts anyway), so it is for runs that allocate
// tens of megabytes or more. It is done only where it helps and cannot
// hurt (hugeHeapSize): transparent huge pages set to "madvise" (with
// "always" the heap has them already, with "never" the advice does
// nothing), a 64-bit address space, no address-space limit (ulimit -v),
// no strict overcommit (vm.overcommit_memory 2), and at most a quarter of
// the machine's memory, so that the reservation itself cannot fail. The
// reservation is address space; what the build touches is counted as
// before, within a huge page of each 2 MiB region touched.
func hugeHeap(size int) {
	if size = hugeHeapSize(size); size > 0 {
		adviseHuge(size) // an advice refused leaves the heap as it was
		runtime.GC()
	}
}

// hugeHeapSize is how much of size hugeHeap may reserve: nothing unless
// the kernel gives transparent huge pages to advised memory only and the
// reservation is safe, and at most a quarter of the machine's memory (the
// kernel's default overcommit check refuses a mapping far beyond it, and
// the runtime cannot survive a refused one). 32-bit address spaces are
// left alone.
func hugeHeapSize(size int) int {
	if strconv.IntSize < 64 {
		return 0
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return 0
	}
	if commit, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err != nil || bytes.HasPrefix(bytes.TrimSpace(commit), []byte("2")) {
		return 0
	}
	var as unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &as) != nil || as.Cur != unix.RLIM_INFINITY {
		return 0
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	total := uint64(si.Totalram) * uint64(si.Unit)
	return int(min(uint64(size), total/4)) &^ (hugePageSize - 1)
}

// adviseHuge allocates size bytes at [start, start+size), advises the huge
// pages they cover, [beg, end), and drops them for the next collection to
// free.
func adviseHuge(size int) (start, beg, end uintptr, err error) {
	b := make([]byte, size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg = (p + hugePageSize - 1) &^ (hugePageSize - 1)
	end = (p + uintptr(size)) &^ (hugePageSize - 1)
	if beg >= end {
		return p, 0, 0, unix.EINVAL
	}
	return p, beg, end, unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE)
}
