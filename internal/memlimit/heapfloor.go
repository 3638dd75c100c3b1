package memlimit

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// HeapFloor keeps the garbage collector's heap goal at floor bytes or more
// until stop is called. Under GOGC=100 a program with a small live heap is
// collected every time it allocates as much again, every 4 MiB at least:
// a MapReduce job that streams through input while keeping a few MiB live
// spends its time collecting (113 collections instead of 8 for spamcount
// on 40 MB of mail). After each collection HeapFloor sets GOGC so that the
// next goal is the larger of floor and what GOGC gives (live × (1 +
// GOGC/100)); once the live heap passes floor it restores the GOGC it
// found. The Go memory limit (SetMemoryLimit, SetGoLimit) still caps the
// heap. With GOGC=off HeapFloor does nothing.
func HeapFloor(floor int64) (stop func()) {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 || floor <= 0 {
		return func() {}
	}
	f := &heapFloor{floor: floor, base: base, cur: base}
	// The goal GOGC scales: the live heap plus the stacks and globals
	// the collector scans.
	f.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	f.adjust()
	f.arm()
	return f.stop
}

type heapFloor struct {
	mu      sync.Mutex
	floor   int64
	base    int // the GOGC found
	cur     int // the GOGC set
	stopped bool
	sample  []metrics.Sample
}

// sentinel is garbage from birth: its finalizer runs after the next
// collection, once per cycle.
type sentinel struct{ _ [16]byte }

func (f *heapFloor) arm() {
	s := new(sentinel)
	runtime.SetFinalizer(s, func(*sentinel) {
		if f.adjust() {
			f.arm()
		}
	})
}

// adjust sets GOGC for the live heap now; it reports false once stopped.
func (f *heapFloor) adjust() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.sample)
	var live int64
	for _, s := range f.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			live += int64(s.Value.Uint64())
		}
	}
	// The runtime's goal is the larger of live × (1 + GOGC/100) and its
	// minimum heap, 4 MiB × GOGC/100.
	const heapMin = 4 << 20
	want := f.base
	switch {
	case max(live*int64(100+f.base)/100, heapMin*int64(f.base)/100) >= f.floor:
	case live < heapMin:
		want = int(min(f.floor*100/heapMin, 1<<20))
	default:
		want = int(min(f.floor*100/live-100, 1<<20))
	}
	// Only a change of a tenth or more: a setting costs a little of the
	// collector's time.
	if d := want - f.cur; d*10 > f.cur || -d*10 > f.cur {
		debug.SetGCPercent(want)
		f.cur = want
	}
	return true
}

func (f *heapFloor) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		debug.SetGCPercent(f.base)
	}
}
