package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var sink []byte

// churn allocates n bytes of short-lived garbage with little kept live,
// and returns the collections it took.
func churn(n int) uint32 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	for i := 0; i < n; i += 4096 {
		sink = make([]byte, 4096)
	}
	runtime.ReadMemStats(&ms)
	return ms.NumGC - before
}

// TestHeapFloor: with a 64 MiB floor, 256 MiB of garbage over a small live
// heap takes a handful of collections instead of one every few MiB; stop
// restores GOGC.
func TestHeapFloor(t *testing.T) {
	if base := debug.SetGCPercent(100); base != 100 {
		debug.SetGCPercent(base)
		t.Skipf("GOGC=%d in the environment", base)
	}
	runtime.GC()
	without := churn(256 << 20)
	stop := HeapFloor(64 << 20)
	runtime.GC() // the floor applies from the first collection on
	with := churn(256 << 20)
	stop()
	t.Logf("collections for 256 MiB of garbage: %d without the floor, %d with a 64 MiB floor", without, with)
	if without < 20 || with > 8 {
		t.Errorf("collections: %d without the floor, %d with; want >= 20 and <= 8", without, with)
	}
	if g := debug.SetGCPercent(100); g != 100 {
		t.Errorf("GOGC after stop = %d, want 100", g)
	}

	// A live heap above the floor gets the GOGC that was found.
	stop = HeapFloor(16 << 20)
	big := make([]byte, 64<<20)
	g := 0
	for range 100 { // a cycle's finalizer runs on the finalizer goroutine
		runtime.GC()
		g = debug.SetGCPercent(100)
		debug.SetGCPercent(g)
		if g == 100 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(big)
	stop()
	if g != 100 {
		t.Errorf("GOGC with 64 MiB live over a 16 MiB floor = %d, want 100", g)
	}
	if g := debug.SetGCPercent(100); g != 100 {
		t.Errorf("GOGC after stop = %d, want 100", g)
	}
	runtime.GC() // big is garbage now: back to a small live heap
	after := churn(256 << 20)
	if after < 20 {
		t.Errorf("after stop: %d collections, want >= 20 again", after)
	}
}
