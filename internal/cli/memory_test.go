package cli

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
// times what is live; allowed more (one big root's build), by that; stopped,
// it sets nothing more.
func TestBoundHeapGrowth(t *testing.T) {
	old := debug.SetGCPercent(defaultGCPercent)
	defer debug.SetGCPercent(old)
	b := &heapBound{}
	b.headroom.Store(8 << 20)
	b.last.Store(defaultGCPercent)
	b.arm()
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20)) // 64 MiB live
	}
	settle := func(want int) int {
		deadline := time.Now().Add(10 * time.Second)
		pct := -1
		for time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(10 * time.Millisecond) // the cleanup runs after the collection
			pct = debug.SetGCPercent(-1)
			debug.SetGCPercent(pct)
			if pct == want {
				break
			}
		}
		return pct
	}
	if pct := settle(minGCPercent); pct != minGCPercent {
		t.Errorf("GOGC %d with 64 MiB live and 8 MiB of headroom, want %d", pct, minGCPercent)
	}
	b.Allow(4 << 20) // less than it has: no change
	b.Allow(1 << 30)
	if pct := settle(defaultGCPercent); pct != defaultGCPercent {
		t.Errorf("GOGC %d with 64 MiB live and 1 GiB of headroom allowed, want %d", pct, defaultGCPercent)
	}
	b.Allow(8 << 20)
	if got := b.headroom.Load(); got != 1<<30 {
		t.Errorf("Allow lowered the headroom to %d", got)
	}
	b.Done()
	runtime.KeepAlive(live)
	live = nil
	debug.SetGCPercent(77)
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if pct := debug.SetGCPercent(defaultGCPercent); pct != 77 {
		t.Errorf("stopped, it still set GOGC %d", pct)
	}
}
