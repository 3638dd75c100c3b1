package shuffle

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Stripes. When a process hosts more of a node's ranks than it has
// processors, the ranks map in turns (pgas.Rank.TakeTurn). A stripe is a
// whole counting table, a reduce.CountArea in a region of a rank's
// segment, that one rank at a time holds for the rest of its map; a node
// has one stripe a turn, in the stripe region of each of its first
// ranks. A rank's table counts in the stripe it holds in place of its own
// slots (reduce.AreaSink: Area lends it, with the stripes' seed), so a
// rank counts each word with one lookup in a table that the ranks before
// it in the same turn filled with the vocabulary, as if it were a table
// of its own: at 64 ranks of a 2-core laptop, two hot tables instead of
// 64 cold ones of 4,096 keys (the rank's share of the node's budget)
// whose misses went to the counting partitions, each paying for the
// key's encoding, a second hash and two cache misses. A rank takes a free
// stripe when its map starts and lets it go when its map ends (EndMap);
// since only ranks that hold a turn run, a free stripe is there when it
// asks, unless a rank holding one waits in the runtime. A rank that finds
// none, or a full one, counts in its own table within its share of the
// budget and the rest into the partitions (Count), and a table that does
// not count in a stripe can still give it counts one at a time with the
// hash it computed (CountHashed). Before the node's table is read
// (nodeCombine), the ranks fold the stripes into the partitions, each
// rank a slice of every stripe's slots, encoding and hashing each key
// once, and the stripes' regions are freed. Every access is counted as
// the get, put or atomic operation it stands for, as the partitions' are
// (the area counts its own).
//
// A stripe is a region of its home rank's segment:
//
//	[0,8)    lock: 0 never taken, 1 free, 2 held
//	[8,16)   bytes allocated past the header
//	[16,24)  offset of the slot array
//	[24,32)  log2 of the slot count
//	[32,40)  keys
//	[40,48)  1 once full: it takes no new key
//	[48,...) the CountArea's keys and slot arrays
//
// The first slot array takes a quarter of the region (firstLogCap).

const (
	stripeLogCap = 10 // log2 of a stripe's first slots, at least
	stripeSlot   = reduce.CountSlotBytes
)

// firstLogCap returns log2 of the first slots of a stripe in a region of
// size bytes: as many as a quarter of the region holds, at least
// 2^stripeLogCap. A stripe then grows at most once or twice (each growth
// moves every slot, and at 64 ranks of a laptop the growths from 2^10
// were a twentieth of the time the stripes took), and its untouched
// slots cost no memory.
func firstLogCap(size int64) uint {
	l := uint(stripeLogCap)
	for stripeSlot<<(l+1) <= size/4 {
		l++
	}
	return l
}

// minStripeRegion is the least region stripes are made in: room for the
// first slots, and as much again for keys and the next.
const minStripeRegion = nodeHdr + 4*stripeSlot<<stripeLogCap

// stripeSeed is the seed the stripes of this process's ranks, and the
// tables of the ranks that count into them, hash keys with. (Ranks of
// another process hash the same key elsewhere: a stripe may then hold it
// twice, and the fold adds both counts.)
var stripeSeed = maphash.MakeSeed()

// stripeHash hashes keys under stripeSeed as the tables do.
var stripeHash = reduce.NewKeyHash(stripeSeed)

// testStripes, if positive, is the stripes a node has, whatever its ranks
// and turns (tests use stripes with few ranks with it).
var testStripes int

// stripesFor returns how many stripes r's node of size ranks has: one a
// turn (pgas.Rank.Turns), if its ranks take turns and outnumber them.
func stripesFor(r *pgas.Rank, size int) int {
	if testStripes > 0 {
		return min(testStripes, size)
	}
	if k := r.Turns(); k > 0 && size > k {
		return k
	}
	return 0
}

// tally counts the accesses a rank makes to a region of another rank's
// segment until they are handed to the runtime (flush).
type tally struct {
	gets, getB, puts, putB, atomics int64
}

// stripe is a stripe as a rank sees it: the region of its home rank's
// segment, and while the rank holds it, the counting table in it, open.
type stripe struct {
	home int
	mem  []byte
	area reduce.CountArea
	tally
}

func (s *stripe) lock() *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&s.mem[0])) }

// acquire takes the stripe if it is free, and reads its header; a stripe
// never taken (its region is zero when allocated) starts empty, with its
// first slots past the header.
func (s *stripe) acquire() bool {
	s.atomics++
	switch {
	case s.lock().CompareAndSwap(1, 2):
		s.readHeader()
	case s.lock().CompareAndSwap(0, 2):
		s.area.Reset(s.mem, nodeHdr, firstLogCap(int64(len(s.mem))))
	default:
		return false
	}
	if err := s.area.Open(); err != nil {
		// Only a write outside the runtime's rules gets here: the
		// stripe stays held, and the fold reports it.
		return false
	}
	return true
}

// readHeader reads the header of the stripe's table.
func (s *stripe) readHeader() {
	le := binary.LittleEndian
	s.area = reduce.CountArea{Mem: s.mem, Base: nodeHdr,
		Used: int64(le.Uint64(s.mem[8:])), SlotsAt: int64(le.Uint64(s.mem[16:])), LogCap: uint(le.Uint64(s.mem[24:])),
		Keys: int64(le.Uint64(s.mem[32:])), Full: le.Uint64(s.mem[40:]) != 0}
	s.gets++
	s.getB += nodeHdr - 8
}

// release writes the header back and frees the stripe.
func (s *stripe) release() {
	a := &s.area
	a.Close()
	le := binary.LittleEndian
	le.PutUint64(s.mem[8:], uint64(a.Used))
	le.PutUint64(s.mem[16:], uint64(a.SlotsAt))
	le.PutUint64(s.mem[24:], uint64(a.LogCap))
	le.PutUint64(s.mem[32:], uint64(a.Keys))
	if a.Full {
		le.PutUint64(s.mem[40:], 1)
	}
	s.puts++
	s.putB += nodeHdr - 8
	s.atomics++
	s.lock().Store(1)
}

// take moves the accesses the stripe's table counted, and the counts it
// took, to the stripe's tally and returns the counts.
func (s *stripe) take() int64 {
	a := &s.area
	s.gets += a.Gets
	s.getB += a.GetBytes
	s.puts += a.Puts
	s.putB += a.PutBytes
	n := a.Added
	a.Gets, a.GetBytes, a.Puts, a.PutBytes, a.Added = 0, 0, 0, 0, 0
	return n
}

// openStripes sets up the node's k stripes in reg, a symmetric region
// (zero on every rank when allocated), one in the region of each of the
// node's first k ranks.
func (t *nodeTable[K, V]) openStripes(reg pgas.Region, k int) {
	first, _ := nodeSpan(t.x.r)
	t.sreg = reg
	t.stripes = make([]stripe, k)
	for j := range k {
		mem := t.x.r.Cast(first + j)
		t.stripes[j] = stripe{home: first + j, mem: mem[reg.Off : reg.Off+reg.Size]}
	}
	t.next = (t.x.r.ID() - first) % k
	t.held = -1
}

// Seed returns the seed the stripes hash keys with
// (reduce.HashedCountSink).
func (t *nodeTable[K, V]) Seed() maphash.Seed { return stripeSeed }

// Area lends the caller's table the stripe this rank holds, taking the
// first free one if it holds none, or returns nil if every stripe is held
// (reduce.AreaSink): a rank that holds a turn then counts every word
// straight into its turn's stripe, as it would into a table of its own.
func (t *nodeTable[K, V]) Area() *reduce.CountArea {
	if t.stripes == nil || t.err != nil || t.full || (t.held < 0 && !t.takeStripe()) {
		return nil
	}
	return &t.stripes[t.held].area
}

// CountHashed adds n to the count of the string key whose bytes are key
// and whose hash under Seed is h (reduce.HashedCountSink): into the
// stripe this rank holds, taking the first free one if it holds none;
// without a stripe with room for it, into the partitions (Count).
func (t *nodeTable[K, V]) CountHashed(key []byte, h uint64, n int64) bool {
	if a := t.Area(); a == nil || !a.Add(key, h, n) {
		return t.Count(key, n)
	}
	return true
}

// stripePairs adds the pairs of e (string keys, int64 values: a table
// that has stripes counts) to the stripe this rank holds, and returns
// those it has no room for: the pairs a rank's own table hands over as
// its map ends.
func (t *nodeTable[K, V]) stripePairs(e reduce.Run[K, V]) reduce.Run[K, V] {
	keys := *(*[]string)(unsafe.Pointer(&e.Keys))
	vals := *(*[]int64)(unsafe.Pointer(&e.Vals))
	a := &t.stripes[t.held].area
	before := a.Added
	var left []int32
	for i, k := range keys {
		kb := unsafe.Slice(unsafe.StringData(k), len(k))
		if !a.Add(kb, stripeHash.String(k), vals[i]) {
			left = append(left, int32(i))
		}
	}
	t.direct -= a.Added - before // pairs, emitted already; EndMap counts the rest as pairs emitted
	if len(left) == 0 {
		return reduce.Run[K, V]{}
	}
	return pick(e, left)
}

// takeStripe takes the first free stripe from the one this rank took last,
// or reports false if every stripe is held.
func (t *nodeTable[K, V]) takeStripe() bool {
	k := len(t.stripes)
	for range k {
		if t.stripes[t.next].acquire() {
			t.held = t.next
			return true
		}
		t.next = (t.next + 1) % k
	}
	return false
}

// EndMap adds the counts Count holds and lets the rank's stripe go
// (reduce.MapEnder): package mr calls it when a rank's map ends. A table
// counting in the stripe (Area) counts in its own slots after.
func (t *nodeTable[K, V]) EndMap() {
	if t.parts == nil {
		return
	}
	t.countBatch()
	if t.stripes != nil && t.held >= 0 {
		s := &t.stripes[t.held]
		n := s.take() // counts, each a pair emitted
		t.folded += n
		t.striped += n
		t.direct += n
		s.release()
		t.held = -1
	}
}

// foldStripes folds this rank's slice of every open stripe's slots into
// the partitions, encoding and hashing each key as Count does; an entry
// that finds no room joins the counts the rank holds (overKeys). Every
// rank must be past its last count, and no rank may read the partitions
// before every rank is past its fold.
func (t *nodeTable[K, V]) foldStripes() error {
	first, size := nodeSpan(t.x.r)
	me := t.x.r.ID() - first
	n := t.x.r.N()
	var kb []byte
	for j := range t.stripes {
		s := &t.stripes[j]
		s.atomics++
		if s.lock().Load() == 0 {
			continue
		}
		s.readHeader()
		if err := s.area.Open(); err != nil {
			return fmt.Errorf("reduce: rank %d's stripe: %w", s.home, err)
		}
		l := s.area.LogCap
		lo, hi := (me<<l)/size, ((me+1)<<l)/size
		err := s.area.Slots(lo, hi, func(key []byte, c int64) bool {
			kb = t.str.Append(kb[:0], unsafe.String(unsafe.SliceData(key), len(key)))
			h := xxhash.Sum64(kb)
			if !t.parts[partOf(h, n, first, size)].add(kb, h>>32, c) {
				if t.overKeys == nil {
					t.overKeys = map[string]int64{}
				}
				t.overKeys[string(kb)] += c
			}
			return true
		})
		s.area.Close()
		s.take()
		if err != nil {
			return fmt.Errorf("reduce: rank %d's stripe: %w", s.home, err)
		}
	}
	return nil
}

// stripeUsed returns the bytes of this rank's stripe region that were
// written: none unless it is a stripe's home.
func (t *nodeTable[K, V]) stripeUsed() int64 {
	first, _ := nodeSpan(t.x.r)
	if me := t.x.r.ID() - first; me < len(t.stripes) {
		s := &t.stripes[me]
		return min(nodeHdr+int64(binary.LittleEndian.Uint64(s.mem[8:])), int64(len(s.mem)))
	}
	return 0
}

// endStripes folds the stripes into the partitions, after a barrier (see
// foldStripes).
func (t *nodeTable[K, V]) endStripes(ctx context.Context) error {
	if err := t.x.r.Barrier(ctx); err != nil {
		return err
	}
	err := t.foldStripes()
	t.flushCounts()
	return err
}
