package reduce_test

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/pgasmr/pgasmr/reduce"
)

// areaSink is a sink that lends a CountArea, as the node table of ranks
// that take turns does, and keeps what it is given one count or one run
// at a time in a map.
type areaSink struct {
	seed  maphash.Seed
	area  reduce.CountArea
	lent  int
	given map[string]int64 // by Count, CountHashed and Take
	calls int              // Count and CountHashed
}

func newAreaSink(size int) *areaSink {
	mem := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, size/8)))), size)
	s := &areaSink{seed: maphash.MakeSeed(), given: map[string]int64{}}
	s.area.Reset(mem, 16, 6) // a header of 16 bytes, 64 slots
	return s
}

func (s *areaSink) Take(e reduce.Run[string, int64]) (reduce.Run[string, int64], error) {
	for i, k := range e.Keys {
		s.given[k] += e.Vals[i]
	}
	return reduce.Run[string, int64]{}, nil
}

func (s *areaSink) Count(key []byte, n int64) bool {
	s.given[string(key)] += n
	s.calls++
	return true
}

func (s *areaSink) Seed() maphash.Seed { return s.seed }

func (s *areaSink) CountHashed(key []byte, h uint64, n int64) bool {
	if h != reduce.NewKeyHash(s.seed).Bytes(key) {
		panic(fmt.Sprintf("CountHashed(%q): hash %x is not the key's under the seed", key, h))
	}
	return s.Count(key, n)
}

func (s *areaSink) Area() *reduce.CountArea {
	if err := s.area.Open(); err != nil {
		panic(err)
	}
	s.lent++
	return &s.area
}

// contents reads the area's keys and counts.
func (s *areaSink) contents(t *testing.T) map[string]int64 {
	m := map[string]int64{}
	if err := s.area.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.area.Close()
	err := s.area.Slots(0, 1<<s.area.LogCap, func(key []byte, n int64) bool {
		m[string(key)] += n
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCountTableArea: a table handed over to a sink that lends an area
// counts every occurrence in the area, growing it, and holds nothing of
// its own; once the area is full, or closed as a map's end closes it, the
// table counts in its own slots within the budget and gives the rest to
// the sink. Area, sink and table together hold exactly what was counted,
// and the area counted the loads and stores it made.
func TestCountTableArea(t *testing.T) {
	for _, size := range []int{1 << 20, 16 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			word := func() string { return fmt.Sprint("w", int(3000*rng.Float64()*rng.Float64())) }
			sink := newAreaSink(size)
			st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				t.Fatal(err)
			}
			const budget = 100
			st.SetSink(sink, budget)
			c := reduce.NewCountTable()
			handed := c.HandOver(st)
			want := map[string]int64{}
			add := func(k int) {
				for i := range k {
					w := word()
					want[w]++
					if i%3 == 0 {
						c.AddN(w, 1)
					} else {
						c.Add([]byte(w))
					}
				}
				if err := handed(); err != nil {
					t.Fatal(err)
				}
			}
			add(30000)
			if sink.lent != 1 {
				t.Fatalf("the area was lent %d times, want once", sink.lent)
			}
			full := sink.area.Full
			switch {
			case size == 1<<20 && (full || c.Len() != 0 || sink.calls != 0):
				t.Errorf("a 1 MiB area: full %v, the table holds %d keys, %d counts given one at a time", full, c.Len(), sink.calls)
			case size == 1<<20 && sink.area.LogCap <= 6:
				t.Errorf("the area did not grow from 64 slots")
			case size == 16<<10 && (!full || sink.calls == 0):
				t.Errorf("a 16 KiB area: full %v, %d counts given one at a time", full, sink.calls)
			}
			inArea := sink.area.Added
			sink.area.Close() // the map ends
			add(10000)
			if c.Len() > budget+1 {
				t.Errorf("after the area: the table holds %d keys, budget %d", c.Len(), budget)
			}
			if sink.area.Added != inArea {
				t.Errorf("a closed area took %d counts", sink.area.Added-inArea)
			}
			got := sink.contents(t)
			var sum int64
			for _, n := range got {
				sum += n
			}
			if sum != inArea {
				t.Errorf("the area holds %d occurrences, it counted %d", sum, inArea)
			}
			for k, n := range sink.given {
				got[k] += n
			}
			for k, n := range c.All() {
				got[k] += n
			}
			if !maps.Equal(got, want) {
				t.Errorf("area, sink and table: %d keys, want %d (or counts differ)", len(got), len(want))
			}
			a := &sink.area
			if a.Gets < inArea || a.Puts < inArea || a.GetBytes < reduce.CountSlotBytes*inArea || a.PutBytes < 8*inArea {
				t.Errorf("%d counts in the area, counted %d gets (%d B) and %d puts (%d B)", inArea, a.Gets, a.GetBytes, a.Puts, a.PutBytes)
			}
		})
	}
}

// TestCountAreaCorrupt: Open refuses a header that points outside the
// region, and Slots a slot whose key does.
func TestCountAreaCorrupt(t *testing.T) {
	mem := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, 1024)))), 8192)
	var a reduce.CountArea
	a.Reset(mem, 48, 4)
	if err := a.Open(); err != nil {
		t.Fatalf("a fresh area: %v", err)
	}
	a.Add([]byte("key"), 7, 1)
	a.Close()
	for name, bad := range map[string]func(*reduce.CountArea){
		"used past the end": func(a *reduce.CountArea) { a.Used = 9000 },
		"slots unaligned":   func(a *reduce.CountArea) { a.SlotsAt = 52 },
		"slots past used":   func(a *reduce.CountArea) { a.LogCap = 12 },
		"more keys":         func(a *reduce.CountArea) { a.Keys = 17 },
	} {
		b := a
		bad(&b)
		if err := b.Open(); err == nil {
			t.Errorf("%s: Open took it", name)
		}
	}
	// The slot of "key" points at its bytes; point it past the keys.
	if err := a.Open(); err != nil {
		t.Fatal(err)
	}
	slot := 48 + 24*(7&15)
	at := uint64(a.Base+a.Used+10) << 24
	for i := range 8 {
		mem[slot+8+i] = byte(at >> (8 * i))
	}
	mem[slot+8] = 3 // the length
	if err := a.Slots(0, 16, func([]byte, int64) bool { return true }); err == nil {
		t.Errorf("Slots read a key outside the area")
	}
}
