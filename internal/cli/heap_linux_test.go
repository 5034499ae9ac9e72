package cli

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestHugeHeapIsReused checks hugeHeap's premise: the pages it advised are
// marked for huge pages, and once collected they are where the heap's
// next allocation goes.
//
// It runs in a process of its own: garbage that earlier tests (or an
// earlier -count) left below the block would take the allocation.
func TestHugeHeapIsReused(t *testing.T) {
	if os.Getenv("KPIPE_TEST_HUGEHEAP") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugeHeapIsReused$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "KPIPE_TEST_HUGEHEAP=1")
		out, err := cmd.CombinedOutput()
		switch {
		case err == nil && strings.Contains(string(out), "--- SKIP"):
			t.Skip(string(out))
		case err != nil || !strings.Contains(string(out), "--- PASS"):
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	const size = 32 << 20
	start, beg, end, err := adviseHuge(size)
	if err != nil {
		t.Skipf("madvise(MADV_HUGEPAGE): %v (a kernel without transparent huge pages)", err)
	}
	runtime.GC()
	if flags := vmFlags(t, beg); !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("the advised range %#x-%#x has VmFlags %q, without hg", beg, end, flags)
	}
	// Free pages below the block (the test binary's own garbage) come
	// first, and may run on into it; an allocation that fits only there
	// must use the advised pages.
	b := make([]byte, size-4<<20)
	if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p+uintptr(len(b)) <= beg || p >= end {
		t.Fatalf("a %d MiB allocation after the collection is at %#x-%#x, outside the advised %#x-%#x (the freed block began at %#x)", len(b)>>20, p, p+uintptr(len(b)), beg, end, start)
	}
	runtime.KeepAlive(b)
}

// vmFlags returns the VmFlags line of the mapping that holds addr, from
// /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case !strings.HasSuffix(f[0], ":"): // a mapping: "lo-hi perms ..."
			var lo, hi uintptr
			_, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi)
			in = err == nil && lo <= addr && addr < hi
		case in && f[0] == "VmFlags:":
			return strings.Join(f[1:], " ")
		}
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return ""
}

// hugeHeapSize never reserves more than a quarter of the machine's memory,
// whatever it is asked for, and reserves whole huge pages.
func TestHugeHeapSizeIsCapped(t *testing.T) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Skip(err)
	}
	quarter := int(uint64(si.Totalram) * uint64(si.Unit) / 4)
	got := hugeHeapSize(math.MaxInt)
	if got > quarter || got%hugePageSize != 0 {
		t.Errorf("hugeHeapSize(MaxInt) = %d on a machine of %d bytes; want a multiple of 2 MiB up to %d", got, 4*quarter, quarter)
	}
	if got == 0 {
		t.Logf("no reservation here (transparent huge pages not \"madvise\", or a limit): %d", got)
	}
}
