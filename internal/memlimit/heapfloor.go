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
// on 40 MB of mail). After each collection the floor sets GOGC so that the
// next goal is the larger of floor and what the GOGC it found gives (live
// × (1 + GOGC/100)); once the live heap is large enough it restores that
// GOGC. The Go memory limit (SetMemoryLimit, SetGoLimit) still caps the
// heap. With GOGC=off HeapFloor does nothing.
//
// Floors may be set from several places at once (mrrun's main and every
// pgas.Run): the largest active one applies, and the GOGC found before the
// first is restored when the last stops.
func HeapFloor(floor int64) (stop func()) {
	if floor <= 0 {
		return func() {}
	}
	f := &theFloor
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.floors) == 0 {
		f.base = debug.SetGCPercent(100)
		debug.SetGCPercent(f.base)
		f.cur = f.base
		if f.sample == nil {
			// The goal GOGC scales: the live heap plus the stacks and
			// globals the collector scans.
			f.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
		}
	}
	if f.base < 0 {
		return func() {}
	}
	id := f.next
	f.next++
	if f.floors == nil {
		f.floors = map[int]int64{}
	}
	f.floors[id] = floor
	f.adjustLocked()
	if !f.armed {
		f.armed = true
		f.arm()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			delete(f.floors, id)
			if len(f.floors) == 0 {
				debug.SetGCPercent(f.base)
				f.cur = f.base
				return
			}
			f.adjustLocked()
		})
	}
}

var theFloor heapFloor

type heapFloor struct {
	mu     sync.Mutex
	floors map[int]int64 // active floors by id
	next   int
	base   int  // the GOGC found before the first floor
	cur    int  // the GOGC set
	armed  bool // a sentinel waits for the next collection
	sample []metrics.Sample
}

// sentinel is garbage from birth: its finalizer runs after the next
// collection, once per cycle.
type sentinel struct{ _ [16]byte }

func (f *heapFloor) arm() {
	s := new(sentinel)
	runtime.SetFinalizer(s, func(*sentinel) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.floors) == 0 {
			f.armed = false
			return
		}
		f.adjustLocked()
		f.arm()
	})
}

// adjustLocked sets GOGC for the live heap now and the largest floor.
func (f *heapFloor) adjustLocked() {
	var floor int64
	for _, v := range f.floors {
		floor = max(floor, v)
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
	case max(live*int64(100+f.base)/100, heapMin*int64(f.base)/100) >= floor:
	case live < heapMin:
		want = int(min(floor*100/heapMin, 1<<20))
	default:
		want = int(min(floor*100/live-100, 1<<20))
	}
	// Only a change of a tenth or more: a setting costs a little of the
	// collector's time.
	if d := want - f.cur; d*10 > f.cur || -d*10 > f.cur {
		debug.SetGCPercent(want)
		f.cur = want
	}
}
