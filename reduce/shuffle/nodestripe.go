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
// processors, the ranks map in turns (pgas.Rank.TakeTurn), and a rank's
// own table holds only its share of the node's budget: 4,096 keys at 64
// ranks of a 2-core laptop. The keys it does not hold went to the
// counting partitions one atomic add at a time (Count), each paying for
// the key's encoding, a second hash, and two cache misses (the slot, then
// the entry that holds the key and its count). A stripe is a whole
// counting table that one rank at a time holds, for the rest of its map:
// laid out as a CountTable is (a slot holds the hash, the count and where
// the key lies; the keys, unencoded, lie together), looked up with the
// hash the rank's own table computed (reduce.HashedCountSink: the tables
// share the stripes' seed), and written with plain loads and stores. A
// node has one stripe a turn, in the stripe region of each of its first
// ranks; a rank takes a free one when its own table first misses and
// lets it go when its map ends (EndMap), and since only ranks that hold a
// turn run, a free stripe is there when it asks, unless a rank holding
// one waits in the runtime. A rank that finds none, or a full one, counts
// into the partitions as before (Count). Before the node's table is read
// (nodeCombine), the ranks fold the stripes into the partitions, each
// rank a slice of every stripe's slots, encoding and hashing each key
// once, and the stripes' regions are freed. Every access is counted as
// the get, put or atomic operation it stands for, as the partitions' are.
//
// A stripe is a region of its home rank's segment:
//
//	[0,8)    lock: 0 never taken, 1 free, 2 held
//	[8,16)   bytes allocated past the header
//	[16,24)  offset of the slot array
//	[24,32)  log2 of the slot count
//	[32,40)  keys
//	[40,48)  1 once full: it takes no new key
//	[48,...) keys and slot arrays, bump allocated
//
// A slot is 24 bytes: the key's hash (0: empty), its count, and its
// offset in the region << 24 | its length. Slots are probed linearly
// from hash & mask; the first array takes a quarter of the region
// (firstLogCap), and at three quarters full the slots move to an array
// twice the size, allocated like a key (the arrays left behind are
// smaller than the last).

const (
	stripeLogCap   = 10 // log2 of a stripe's first slots, at least
	stripeSlot     = 24
	stripeMaxKey   = 1<<24 - 1
	stripeMaxShift = 40 // offsets below 2^40
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
// segment, and while the rank holds it, the header's fields and the slot
// array.
type stripe struct {
	home   int
	mem    []byte
	used   int64 // past the header
	logCap uint
	keys   int64
	full   bool
	slots  []sslot // the slot array, in mem
	soff   int64   // its offset
	tally
}

// sslot is a stripe's slot.
type sslot struct {
	h     uint64
	count int64
	at    uint64
}

func (s *stripe) lock() *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&s.mem[0])) }

// slotsAt returns the 2^l slots at offset off of the region.
func (s *stripe) slotsAt(off int64, l uint) []sslot {
	return unsafe.Slice((*sslot)(unsafe.Pointer(&s.mem[off])), 1<<l)
}

// acquire takes the stripe if it is free, and reads its header; a stripe
// never taken (its region is zero when allocated) starts empty, with its
// first slots past the header.
func (s *stripe) acquire() bool {
	s.atomics++
	switch {
	case s.lock().CompareAndSwap(1, 2):
		le := binary.LittleEndian
		s.used, s.soff, s.logCap = int64(le.Uint64(s.mem[8:])), int64(le.Uint64(s.mem[16:])), uint(le.Uint64(s.mem[24:]))
		s.keys, s.full = int64(le.Uint64(s.mem[32:])), le.Uint64(s.mem[40:]) != 0
		s.gets++
		s.getB += 40
	case s.lock().CompareAndSwap(0, 2):
		l := firstLogCap(int64(len(s.mem)))
		s.used, s.soff, s.logCap, s.keys, s.full = stripeSlot<<l, nodeHdr, l, 0, false
	default:
		return false
	}
	s.slots = s.slotsAt(s.soff, s.logCap)
	return true
}

// release writes the header back and frees the stripe.
func (s *stripe) release() {
	le := binary.LittleEndian
	le.PutUint64(s.mem[8:], uint64(s.used))
	le.PutUint64(s.mem[16:], uint64(s.soff))
	le.PutUint64(s.mem[24:], uint64(s.logCap))
	le.PutUint64(s.mem[32:], uint64(s.keys))
	if s.full {
		le.PutUint64(s.mem[40:], 1)
	}
	s.slots = nil
	s.puts++
	s.putB += 40
	s.atomics++
	s.lock().Store(1)
}

// alloc returns the offset of n more bytes of the region, aligned to
// align, or false.
func (s *stripe) alloc(n, align int64) (int64, bool) {
	at := (nodeHdr + s.used + align - 1) &^ (align - 1)
	if at+n > int64(len(s.mem)) || at+n > 1<<stripeMaxShift {
		return 0, false
	}
	s.used = at + n - nodeHdr
	return at, true
}

// add adds n to the count of key, whose hash under stripeSeed is h
// (nonzero), and reports false, changing nothing, if the key is new and
// the stripe has no room for it. The stripe must be held.
func (s *stripe) add(key []byte, h uint64, n int64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		s.gets++
		s.getB += stripeSlot
		if sl.h == h {
			off, l := int64(sl.at>>24), int64(sl.at&stripeMaxKey)
			s.gets++
			s.getB += l
			if string(s.mem[off:off+l]) == string(key) {
				sl.count += n
				s.puts++
				s.putB += 8
				return true
			}
			continue
		}
		if sl.h != 0 {
			continue
		}
		if s.full || len(key) > stripeMaxKey {
			return false
		}
		if 4*(s.keys+1) > 3<<s.logCap {
			if !s.grow() {
				s.full = true
				return false
			}
			return s.add(key, h, n) // the slots moved
		}
		at, ok := s.alloc(int64(len(key)), 1)
		if !ok {
			s.full = true
			return false
		}
		copy(s.mem[at:], key)
		*sl = sslot{h: h, count: n, at: uint64(at)<<24 | uint64(len(key))}
		s.keys++
		s.puts += 2
		s.putB += int64(len(key)) + stripeSlot
		return true
	}
}

// grow moves the slots to an array twice the size, or reports false if
// the region has no room for it.
func (s *stripe) grow() bool {
	l := s.logCap + 1
	at, ok := s.alloc(stripeSlot<<l, 8)
	if !ok {
		return false
	}
	slots := s.slotsAt(at, l)
	mask := uint64(len(slots) - 1)
	for _, sl := range s.slots {
		if sl.h == 0 {
			continue
		}
		i := sl.h & mask
		for slots[i].h != 0 {
			i = (i + 1) & mask
		}
		slots[i] = sl
	}
	s.gets++
	s.getB += stripeSlot << s.logCap
	s.puts++
	s.putB += stripeSlot << l
	s.slots, s.soff, s.logCap = slots, at, l
	return true
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

// CountHashed adds n to the count of the string key whose bytes are key
// and whose hash under Seed is h (reduce.HashedCountSink): into the
// stripe this rank holds, taking the first free one if it holds none;
// without a stripe with room for it, into the partitions (Count).
func (t *nodeTable[K, V]) CountHashed(key []byte, h uint64, n int64) bool {
	if t.stripes == nil || t.err != nil || t.full {
		return t.Count(key, n)
	}
	if t.held < 0 && !t.takeStripe() {
		return t.Count(key, n)
	}
	start := len(t.skbuf)
	t.skbuf = append(t.skbuf, key...)
	t.sbatch = append(t.sbatch, pending{start: int32(start), end: int32(len(t.skbuf)), n: n, hash: h})
	t.direct++
	if len(t.sbatch) == countBatch {
		t.stripeBatch()
	}
	return true
}

// stripeBatch adds the counts CountHashed holds to the stripe this rank
// holds, after loading the slot of each and the key it points to in loops
// whose loads do not wait for each other (as warmBatch does for the
// partitions); those it has no room for go to the partitions (Count).
func (t *nodeTable[K, V]) stripeBatch() {
	if len(t.sbatch) == 0 {
		return
	}
	s := &t.stripes[t.held]
	mask := uint64(len(s.slots) - 1)
	var sum uint64
	for i := range t.sbatch {
		b := &t.sbatch[i]
		b.w = s.slots[b.hash&mask].at
	}
	for _, b := range t.sbatch {
		if off := int64(b.w >> 24); off > 0 && off < int64(len(s.mem)) {
			sum += uint64(s.mem[off])
		}
	}
	t.warmed += sum
	for _, b := range t.sbatch {
		key := t.skbuf[b.start:b.end]
		if s.add(key, b.hash, b.n) {
			t.folded++
			t.striped++
			continue
		}
		t.direct-- // Count counts it again
		t.Count(key, b.n)
	}
	t.sbatch, t.skbuf = t.sbatch[:0], t.skbuf[:0]
}

// stripePairs adds the pairs of e (string keys, int64 values: a table
// that has stripes counts) to the stripe this rank holds, and returns
// those it has no room for: the pairs a rank's own table hands over as
// its map ends.
func (t *nodeTable[K, V]) stripePairs(e reduce.Run[K, V]) reduce.Run[K, V] {
	keys := *(*[]string)(unsafe.Pointer(&e.Keys))
	vals := *(*[]int64)(unsafe.Pointer(&e.Vals))
	t.stripeBatch()
	s := &t.stripes[t.held]
	var left []int32
	for i, k := range keys {
		kb := unsafe.Slice(unsafe.StringData(k), len(k))
		if s.add(kb, nonzero(maphash.String(stripeSeed, k)), vals[i]) {
			t.folded++
			t.striped++
		} else {
			left = append(left, int32(i))
		}
	}
	if len(left) == 0 {
		return reduce.Run[K, V]{}
	}
	return pick(e, left)
}

// nonzero maps the hash 0, which marks an empty slot, to 1 (as
// reduce.CountTable does).
func nonzero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
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
// (reduce.MapEnder): package mr calls it when a rank's map ends.
func (t *nodeTable[K, V]) EndMap() {
	if t.parts == nil {
		return
	}
	if t.stripes != nil && t.held >= 0 {
		t.stripeBatch()
	}
	t.countBatch()
	if t.stripes != nil && t.held >= 0 {
		t.stripes[t.held].release()
		t.held = -1
	}
}

// foldStripes folds this rank's slice of every open stripe's slots into
// the partitions, encoding and hashing each key as Count does; an entry
// that finds no room joins the counts the rank holds (overKeys). Every
// rank must be past its last count, and no rank may read the partitions
// before every rank is past its fold.
func (t *nodeTable[K, V]) foldStripes() error {
	le := binary.LittleEndian
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
		used, soff, logCap := int64(le.Uint64(s.mem[8:])), int64(le.Uint64(s.mem[16:])), uint(le.Uint64(s.mem[24:]))
		end := nodeHdr + used
		if end > int64(len(s.mem)) || logCap > 40 || soff < nodeHdr || soff%8 != 0 || soff+stripeSlot<<logCap > end {
			return fmt.Errorf("reduce: rank %d's stripe: header corrupt (used %d, slots at %d, 2^%d slots)", s.home, used, soff, logCap)
		}
		slots := s.slotsAt(soff, logCap)
		lo, hi := (me<<logCap)/size, ((me+1)<<logCap)/size
		s.gets++
		s.getB += 40 + stripeSlot*int64(hi-lo)
		for _, sl := range slots[lo:hi] {
			if sl.h == 0 {
				continue
			}
			off, l := int64(sl.at>>24), int64(sl.at&stripeMaxKey)
			if off < nodeHdr || off+l > end {
				return fmt.Errorf("reduce: rank %d's stripe: a key at %d (%d bytes) outside [%d,%d)", s.home, off, l, nodeHdr, end)
			}
			key := s.mem[off : off+l]
			s.gets++
			s.getB += l
			kb = t.str.Append(kb[:0], unsafe.String(unsafe.SliceData(key), len(key)))
			h := xxhash.Sum64(kb)
			if !t.parts[partOf(h, n, first, size)].add(kb, h>>32, sl.count) {
				if t.overKeys == nil {
					t.overKeys = map[string]int64{}
				}
				t.overKeys[string(kb)] += sl.count
			}
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
