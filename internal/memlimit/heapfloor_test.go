package memlimit

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// goal returns the collector's heap goal after a collection, once the
// floor's finalizer for it has run (it polls until cond holds or a second
// has passed).
func goal(cond func(int64) bool) int64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	var g int64
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		runtime.GC()
		metrics.Read(s)
		g = int64(s[0].Value.Uint64())
		if cond(g) || time.Now().After(deadline) {
			return g
		}
	}
}

var sink []byte

// TestHeapFloor: a floor raises the goal of a small live heap to the floor
// (so 256 MiB of garbage takes a handful of collections); a larger floor
// set at the same time wins; stopping the last restores GOGC; a live heap
// above the floor keeps the GOGC that was found.
func TestHeapFloor(t *testing.T) {
	if base := debug.SetGCPercent(100); base != 100 {
		debug.SetGCPercent(base)
		t.Skipf("GOGC=%d in the environment", base)
	}
	const floor = 64 << 20
	if g := goal(func(int64) bool { return true }); g > floor/2 {
		t.Skipf("the heap goal is %d MiB already", g>>20)
	}
	stop := HeapFloor(floor)
	if g := goal(func(g int64) bool { return g >= floor*9/10 }); g < floor*9/10 || g > 2*floor {
		t.Errorf("goal with a %d MiB floor = %d MiB", floor>>20, g>>20)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumGC
	for i := 0; i < 256<<20; i += 4096 {
		sink = make([]byte, 4096)
	}
	runtime.ReadMemStats(&ms)
	if n := ms.NumGC - before; n > 8 {
		t.Errorf("256 MiB of garbage over a %d MiB floor took %d collections, want <= 8", floor>>20, n)
	}
	stop2 := HeapFloor(2 * floor)
	if g := goal(func(g int64) bool { return g >= 2*floor*9/10 }); g < 2*floor*9/10 {
		t.Errorf("goal with floors of %d and %d MiB = %d MiB", floor>>20, 2*floor>>20, g>>20)
	}
	stop2()
	stop()
	if g := debug.SetGCPercent(100); g != 100 {
		t.Errorf("GOGC after the last stop = %d, want 100", g)
	}
	if g := goal(func(g int64) bool { return g < floor/2 }); g >= floor/2 {
		t.Errorf("goal after the last stop = %d MiB, want the small heap's again", g>>20)
	}

	// A live heap above the floor gets the GOGC that was found.
	stop = HeapFloor(16 << 20)
	big := make([]byte, 64<<20)
	g := 0
	for range 1000 {
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
}
