package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, defaultGCPercent},
		{1 << 20, defaultGCPercent}, // a small run keeps GOGC 400
		{4 << 20, defaultGCPercent}, // 16 MiB of headroom is 400%
		{16 << 20, 100},             // then the headroom is what the heap may add
		{24 << 20, 66},              //
		{64 << 20, minGCPercent},    // but never less than half of what is live
		{1 << 30, minGCPercent},     //
	} {
		if got := gcPercentFor(c.live, heapHeadroom); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestBoundHeapGrowth: once the live heap is large, the collection after
// it sets a GOGC that lets the heap grow by the headroom, not by four
// times what is live; stopped, it sets nothing more.
func TestBoundHeapGrowth(t *testing.T) {
	old := debug.SetGCPercent(defaultGCPercent)
	defer debug.SetGCPercent(old)
	stop := boundHeapGrowth(8 << 20)
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20)) // 64 MiB live
	}
	deadline := time.Now().Add(10 * time.Second)
	pct := defaultGCPercent
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs after the collection
		pct = debug.SetGCPercent(-1)
		debug.SetGCPercent(pct)
		if pct == minGCPercent {
			break
		}
	}
	stop()
	runtime.KeepAlive(live)
	if pct != minGCPercent {
		t.Errorf("GOGC %d with 64 MiB live and 8 MiB of headroom, want %d", pct, minGCPercent)
	}
	live = nil
	debug.SetGCPercent(defaultGCPercent)
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if pct := debug.SetGCPercent(defaultGCPercent); pct != defaultGCPercent {
		t.Errorf("stopped, it still set GOGC %d", pct)
	}
}
