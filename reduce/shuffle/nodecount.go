package shuffle

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Counting partitions. When a job sums int64 values (reduce.Sum) and every
// partition of its node's table is memory of this process
// (pgas.Rank.Cast: inproc, shm without wrappers), the table the map fills
// needs no locks: a new key claims an empty slot with a compare-and-swap
// and a key's count grows with an atomic add, so all the node's ranks
// fold into all its partitions at once, and a rank can count a single
// occurrence straight into the table (reduce.CountSink, what
// reduce.CountTable.HandOver uses) at the cost of a hash and an atomic
// add instead of the lock, batch and hand-over of a pair. Every access
// is counted (pgas.Rank.CountCast) as the get, put or atomic operation it
// stands for.
//
// A counting partition is a region of its home rank's segment:
//
//	[0,16)   unused (a locked partition's lock)
//	[16,24)  bytes of entries allocated (atomic; past the region once full)
//	[24,40)  unused
//	[40,48)  entries (atomic)
//	[48,...) 2^L slots, then the entries, bump allocated
//
// L is fixed when the table is made (countLogCap), from the keys a
// partition is meant to hold; a slot is 0 (empty) or the key hash's high
// 32 bits above the entry's offset / 8, probed linearly from hash & mask
// as in a locked partition. An entry is [int64 count][u32 key length]
// [u32 0][key], 8-aligned; once a slot points to it only its count
// changes, by atomic adds. (A count array beside the slots, so that the
// lines a lookup reads would never be written, was slower: a lookup then
// touches three lines instead of two.) Two ranks that add the same new
// key at once both write an entry, one wins the slot and the other adds
// its count to the winner's: the loser's entry is left unreferenced. A partition takes new keys up
// to three quarters of its slots or until its entries reach the region's
// end; a pair it has no room for stays with its rank, as in a locked
// partition.

// countLogCap returns log2 of a counting partition's slots: room for keys
// keys at three quarters full, at least 2^10, and at most a quarter of a
// region of size bytes.
func countLogCap(size int64, keys int) uint {
	l := uint(10)
	for int64(3)<<l < 4*int64(keys) && int64(8)<<(l+1) <= size/4 {
		l++
	}
	for l > 3 && nodeHdr+int64(8)<<l > size/2 {
		l--
	}
	return l
}

// countPart is one counting partition as a rank sees it: the region of
// its home rank's segment, mapped, and the accesses to count.
type countPart struct {
	home  int
	mem   []byte // the region
	mask  uint64
	arena int64 // where the entries start
	limit int64 // the most entries
	tally
}

func newCountPart(home int, mem []byte, logCap uint) countPart {
	return countPart{
		home: home, mem: mem, mask: 1<<logCap - 1,
		arena: nodeHdr + 8<<logCap, limit: 3 << logCap / 4,
	}
}

func (p *countPart) word(off int64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&p.mem[off]))
}

func (p *countPart) int(off int64) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&p.mem[off]))
}

// add adds d to the count of the key kb (encoded), whose hash has the
// high 32 bits tag, and reports false, changing nothing, if the key is
// new and the partition has no room for it.
func (p *countPart) add(kb []byte, tag uint64, d int64) bool {
	var mine uint64 // this rank's entry for kb, once written
	i := tag & p.mask
	for range p.mask + 1 {
		s := p.word(nodeHdr + 8*int64(i))
		w := s.Load()
		p.gets++
		p.getB += 8
		if w == 0 {
			if mine == 0 {
				if p.int(40).Load() >= p.limit {
					return false
				}
				n := (16 + int64(len(kb)) + 7) &^ 7
				at := p.arena + p.int(16).Add(n) - n
				p.atomics++
				if at+n > int64(len(p.mem)) || at/8 > math.MaxUint32 {
					return false
				}
				e := p.mem[at : at+n]
				binary.LittleEndian.PutUint64(e, uint64(d))
				binary.LittleEndian.PutUint32(e[8:], uint32(len(kb)))
				copy(e[16:], kb)
				p.puts++
				p.putB += n
				mine = tag<<32 | uint64(at/8)
			}
			p.atomics++
			if s.CompareAndSwap(0, mine) {
				p.int(40).Add(1)
				p.atomics++
				return true
			}
			w = s.Load() // another rank's key took the slot: is it kb?
		}
		if w>>32 == tag {
			at := int64(uint32(w)) * 8
			p.gets++
			p.getB += 16 + int64(len(kb))
			if int(binary.LittleEndian.Uint32(p.mem[at+8:])) == len(kb) && string(p.mem[at+16:at+16+int64(len(kb))]) == string(kb) {
				p.int(at).Add(d)
				p.atomics++
				return true
			}
		}
		i = (i + 1) & p.mask
	}
	return false
}

// flush counts the accesses to home's segment made since the last flush.
func (p *tally) flush(r *pgas.Rank, home int) {
	if p.gets+p.puts+p.atomics == 0 {
		return
	}
	r.CountCast(pgas.OpGet, home, p.gets, p.getB)
	r.CountCast(pgas.OpPut, home, p.puts, p.putB)
	r.CountCast(pgas.OpAtomic, home, p.atomics, 8*p.atomics)
	*p = tally{}
}

// countUsed returns the bytes of a counting partition that were written:
// the header, the slots and the entries.
func countUsed(b []byte, logCap uint) int64 {
	return min(nodeHdr+8<<logCap+int64(binary.LittleEndian.Uint64(b[16:])), int64(len(b)))
}

// countMode reports whether t's pairs sum int64 values, and every
// partition of the node's table is mapped: then the table counts (parts).
func countMode[K comparable, V any](x *xfer[K, V]) bool {
	if _, ok := any(*new(V)).(int64); !ok || !x.s.Combiner().IsSum() {
		return false
	}
	first, size := nodeSpan(x.r)
	for j := range size {
		if x.r.Cast(first+j) == nil {
			return false
		}
	}
	return true
}

// counting sets t up to count in its region: the partitions' views and,
// for string keys, the key codec Count encodes with (the store's own, so
// that a key Count adds and the same key folded from a pair meet).
func (t *nodeTable[K, V]) counting(keys int) {
	x := t.x
	first, size := nodeSpan(x.r)
	t.logCap = countLogCap(t.reg.Size, keys)
	t.parts = make([]countPart, size)
	for j := range size {
		mem := x.r.Cast(first + j)
		t.parts[j] = newCountPart(first+j, mem[t.reg.Off:t.reg.Off+t.reg.Size], t.logCap)
	}
	if sc, ok := any(x.kc).(reduce.Codec[string]); ok {
		t.str = sc
	}
}

// partOf returns the partition of the key whose hash is h: its owner's,
// if the owner is on this node, else owner mod size (as place does).
func partOf(h uint64, n, first, size int) int {
	o := int(h % uint64(n))
	if o >= first && o < first+size {
		return o - first
	}
	return o % size
}

// Count adds n to the count of the string key whose bytes are key
// (reduce.CountSink): a rank's map counts the keys its own table does not
// hold straight into the node's table. The counts are batched (countBatch
// at a time) so that the table's memory is fetched for a whole batch at
// once (warmBatch); a count of a batch that finds no room stays with the
// rank (overflow, merged by Collect), and Count reports false from then
// on, so that the rank's table takes the keys it meets.
func (t *nodeTable[K, V]) Count(key []byte, n int64) bool {
	if t.str.Name() == "" || t.err != nil || t.full {
		return false
	}
	start := len(t.kbuf)
	t.kbuf = t.str.Append(t.kbuf, unsafe.String(unsafe.SliceData(key), len(key)))
	t.batch = append(t.batch, pending{start: int32(start), end: int32(len(t.kbuf)), n: n, hash: xxhash.Sum64(t.kbuf[start:])})
	t.direct++
	if len(t.batch) == countBatch {
		t.countBatch()
	}
	return true // taken: into the table, or into the overflow if it is full
}

// countBatch is how many counts Count holds before it adds them.
const countBatch = 128

// pending is a count Count holds (its key is kbuf[start:end]).
type pending struct {
	start int32
	end   int32
	part  int32
	n     int64
	hash  uint64
	w     uint64 // the first slot, as warmBatch found it
}

// countBatch adds the held counts to the table; those that find no room
// join the overflow.
func (t *nodeTable[K, V]) countBatch() {
	if len(t.batch) == 0 {
		return
	}
	first, size := nodeSpan(t.x.r)
	n := t.x.r.N()
	for i := range t.batch {
		b := &t.batch[i]
		b.part = int32(partOf(b.hash, n, first, size))
	}
	t.warmBatch()
	for _, b := range t.batch {
		kb := t.kbuf[b.start:b.end]
		if t.parts[b.part].add(kb, b.hash>>32, b.n) {
			t.folded++
			continue
		}
		t.full = true
		if t.overKeys == nil {
			t.overKeys = map[string]int64{}
		}
		t.overKeys[string(kb)] += b.n
	}
	t.batch, t.kbuf = t.batch[:0], t.kbuf[:0]
	// The accesses are counted when the table is next folded into
	// (foldCounts, at the latest in Collect): counting them here cost a
	// pass over every partition a batch, a second at 1,024 ranks.
}

// warmBatch loads the first slot of every held count, then the entry
// each points to, in loops whose loads do not wait for each other, so
// that the processor fetches a batch's lines from memory in parallel;
// add, which must wait for each probe, then finds them in cache. Nothing
// is counted: add's accesses are.
func (t *nodeTable[K, V]) warmBatch() {
	var sum uint64
	for i := range t.batch {
		b := &t.batch[i]
		p := &t.parts[b.part]
		b.w = p.word(nodeHdr + 8*int64((b.hash>>32)&p.mask)).Load()
	}
	for _, b := range t.batch {
		if at := int64(uint32(b.w)) * 8; b.w != 0 && at+16 <= int64(len(t.parts[b.part].mem)) {
			sum += uint64(t.parts[b.part].mem[at+8]) // the key's length: never written after the slot
		}
	}
	t.warmed = sum
}

// overRun returns the counts Count held that found no room, as a sorted
// run.
func (t *nodeTable[K, V]) overRun() (reduce.Run[K, V], error) {
	var e reduce.Run[K, V]
	for kb, n := range t.overKeys {
		k, err := t.x.decodeKey([]byte(kb))
		if err != nil {
			return e, fmt.Errorf("reduce: a count rank %d held: %w", t.x.r.ID(), err)
		}
		e.Keys = append(e.Keys, k)
		e.Vals = append(e.Vals, any(n).(V))
	}
	t.overKeys = nil
	return t.x.s.SortCombined(e), nil
}

// flushCounts counts the accesses of every partition and stripe.
func (t *nodeTable[K, V]) flushCounts() {
	for j := range t.parts {
		t.parts[j].flush(t.x.r, t.parts[j].home)
	}
	for j := range t.stripes {
		t.stripes[j].flush(t.x.r, t.stripes[j].home)
	}
}

// foldCounts folds e, placed, into the counting partitions and returns
// the pairs that did not fit.
func (t *nodeTable[K, V]) foldCounts(e reduce.Run[K, V]) []int32 {
	pl := &t.pl
	var over []int32
	for i := range e.Keys {
		d := any(e.Vals[i]).(int64)
		if t.parts[pl.part[i]].add(pl.key(int32(i)), pl.hash[i]>>32, d) {
			t.folded++
		} else {
			over = append(over, int32(i))
		}
	}
	t.flushCounts()
	t.over += int64(len(over))
	return over
}

// readCounts decodes this rank's counting partition (its own segment's
// region b) into a sorted run.
func (x *xfer[K, V]) readCounts(b []byte, logCap uint) (reduce.Run[K, V], error) {
	var e reduce.Run[K, V]
	le := binary.LittleEndian
	end := countUsed(b, logCap)
	count := int(le.Uint64(b[40:]))
	if count > 1<<logCap {
		return e, fmt.Errorf("header corrupt (%d entries in %d slots)", count, 1<<logCap)
	}
	e.Keys = make([]K, 0, count)
	e.Vals = make([]V, 0, count)
	arena := int64(nodeHdr + 8<<logCap)
	for i := range int64(1) << logCap {
		w := le.Uint64(b[nodeHdr+8*i:])
		if w == 0 {
			continue
		}
		at := int64(uint32(w)) * 8
		if at < arena || at+16 > end {
			return e, fmt.Errorf("slot %d points to %d, outside [%d,%d)", i, at, arena, end)
		}
		kl := int64(le.Uint32(b[at+8:]))
		if at+16+kl > end {
			return e, fmt.Errorf("entry at %d (%d key bytes) runs past %d", at, kl, end)
		}
		kb := b[at+16 : at+16+kl]
		k, err := x.decodeKey(kb)
		if err != nil {
			return e, fmt.Errorf("entry at %d: key: %w", at, err)
		}
		e.Keys = append(e.Keys, k)
		e.Vals = append(e.Vals, any(int64(le.Uint64(b[at:]))).(V))
	}
	if len(e.Keys) != count {
		return e, fmt.Errorf("%d entries in the slots, header says %d", len(e.Keys), count)
	}
	return x.s.SortCombined(e), nil // keys are distinct: a sort
}
