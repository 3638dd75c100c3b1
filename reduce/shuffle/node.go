package shuffle

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Node-level combining. Before pairs move between ranks, the ranks of a
// node fold their combined pairs into one table per node, so that what
// then moves is one pair per distinct key and node instead of one per
// distinct key and rank. The table is partitioned over the node's ranks:
// partition j is a region of the segment of the node's j-th rank, and
// holds the keys that rank reduces (its own key range under
// GatherPartitioned) and a share of the keys owned on other nodes. Every
// rank folds its pairs into every partition in turn, under the
// partition's lock, with one-sided gets and puts: no rank touches another
// rank's private memory, and every access is counted by the runtime like
// any other. Afterwards each rank reads its own partition, which is local.
//
// A partition is a region of one symmetric allocation:
//
//	[0,16)   the partition's lock (pgas.Lock: ticket, now serving)
//	[16,48)  used (bytes, from the region's start), slots (offset of the
//	         slot array), log2 of the slot count, entries
//	[48,...) the slot array, then entries and grown slot arrays, bump
//	         allocated
//
// A slot is 0 (empty) or the key hash's high 32 bits above the entry's
// offset / 8; slots are probed linearly from hash & mask. An entry is
// [u32 key length][u32 value length][key][value], 8-aligned. A combined
// value of another length goes to a new entry and the slot is repointed.
// A pair that does not fit (the region is full) stays with its rank and
// moves as an ordinary pair: the table only ever saves work, it never
// loses a pair.

const (
	nodeHdr    = 48
	nodeLogCap = 10 // initial slots: 1024
)

// nodeWanted reports whether Collect combines per node first.
func (x *xfer[K, V]) nodeWanted(o reduce.Options) bool {
	c := x.s.Combiner()
	if o.Node == reduce.NodeOff || c.KeepsAll() || !c.Commutative() || o.Gather == reduce.GatherNone {
		return false
	}
	if x.r.Config().RanksPerNode < 2 || x.r.N() < 2 {
		return false
	}
	if o.Node == reduce.NodeOn {
		return true
	}
	// An array store of few keys (a histogram's 768) moves at most that
	// many pairs a rank: less than the node's table costs to set up and
	// read in a fresh process.
	if k := x.s.ArrayKeys(); k >= 0 && k <= smallArrayKeys {
		return false
	}
	return x.r.MemoryMapped()
}

// smallArrayKeys is the most keys of an array store that is not combined
// per node unless asked (reduce.NodeOn).
const smallArrayKeys = 1 << 16

func entryBytes(k, v int) int64 { return (8 + int64(k) + int64(v) + 7) &^ 7 }

// nodeSpan returns the first rank of r's node and how many ranks it has:
// the node table's partitions.
func nodeSpan(r *pgas.Rank) (first, size int) {
	per := r.Config().RanksPerNode
	first = r.Node() * per
	return first, min(per, r.N()-first)
}

// pick returns the pairs of e at the indices idx.
func pick[K comparable, V any](e reduce.Run[K, V], idx []int32) reduce.Run[K, V] {
	left := reduce.Run[K, V]{Keys: make([]K, len(idx)), Vals: make([]V, len(idx))}
	for n, i := range idx {
		left.Keys[n], left.Vals[n] = e.Keys[i], e.Vals[i]
	}
	return left
}

// Begin is collective: called before a map into s whose pairs Collect
// will move as o says, it sets up the node's table and makes it s's sink
// (reduce.Store.SetSink), so that each rank folds its pairs into the table
// as it maps and holds at most its share of o.NodeBudget (its map's own
// table included: reduce.Store.SinkBudget). Collect then folds what is
// left, with the same options, and frees the table. Without node
// combining (o and the job decide, as in Collect), without a budget, or on
// a transport that does not map every segment, it does nothing. A second
// call before Collect keeps the table.
func Begin[K comparable, V any](ctx context.Context, r *pgas.Rank, s *reduce.Store[K, V], o reduce.Options) error {
	o.Gather = o.Gather.Resolve()
	x := newXfer(r, s, &reduce.Stats{}, o.Transfer)
	if !x.nodeWanted(o) {
		return nil
	}
	if t, ok := s.Sink().(*nodeTable[K, V]); ok && t.x.r == r {
		return nil
	}
	budget := o.NodeBudget
	if budget == 0 {
		budget = reduce.DefaultNodeBudget
	}
	if budget < 0 || !r.MemoryMapped() {
		// Over a network (mpi with node combining forced on), a rank
		// folding while others map would wait on targets busy outside
		// the transport: the table is filled after the map there.
		return nil
	}
	_, size := nodeSpan(r)
	budget = max(budget/size, reduce.MinRankBudget)
	want := (r.Config().SegmentBytes / 4) &^ 7
	if testNodeRegion > 0 {
		want = testNodeRegion
	}
	reg, ok, err := x.allocRegion(ctx, want)
	if err != nil || !ok {
		return err
	}
	t := &nodeTable[K, V]{x: x, ctx: ctx, reg: reg, o: o}
	if reg.Size >= minCountRegion && countMode(x) {
		// A partition holds a rank's share of the budget, and the table
		// at least minCountKeys: a tiny budget bounds what the ranks
		// hold, not the node's table.
		t.counting(max(budget, minCountKeys/size))
		if k := stripesFor(r, size); k > 0 && t.str.Name() != "" {
			sreg, ok, err := x.allocRegion(ctx, want)
			if err != nil {
				return err
			}
			if ok && sreg.Size >= minStripeRegion {
				t.openStripes(sreg, k)
			} else if ok {
				if err := r.AllFree(ctx, sreg); err != nil {
					return err
				}
			}
		}
	}
	s.SetSink(t, budget)
	return nil
}

// minCountRegion is the least region a counting table is made in, and
// minCountKeys the least keys a counting table is made for.
const (
	minCountRegion = 4 << 10
	minCountKeys   = 64 << 10
)

// nodeTable is a rank's handle on its node's table: the region, the
// options it was made for, and what the rank folded into it.
type nodeTable[K comparable, V any] struct {
	x      *xfer[K, V]
	ctx    context.Context
	reg    pgas.Region
	o      reduce.Options
	folded int64 // pairs folded into the table
	over   int64 // pairs it had no room for
	p      nodePart
	pl     placement
	err    error // fold's first error: the table takes nothing after it

	// A counting table's (nodecount.go): its partitions, their slots'
	// log2, and for string keys the store's key codec and a buffer
	// Count encodes keys in.
	parts    []countPart
	logCap   uint
	str      reduce.Codec[string]
	kbuf     []byte    // the keys of batch, encoded
	batch    []pending // counts Count holds
	full     bool      // a count found no room
	overKeys map[string]int64
	direct   int64  // the counts Count took
	warmed   uint64 // keeps warmBatch's loads

	// Its stripes (nodestripe.go), if it has any: their region, and the
	// stripe Count tries first.
	sreg    pgas.Region
	stripes []stripe
	next    int
	held    int   // the stripe this rank holds, or -1
	striped int64 // the counts and pairs added to stripes
}

// Take folds e into the node's table and returns the pairs that did not
// fit (reduce.Sink).
func (t *nodeTable[K, V]) Take(e reduce.Run[K, V]) (reduce.Run[K, V], error) {
	if t.err != nil {
		return reduce.Run[K, V]{}, t.err
	}
	if t.held >= 0 && t.stripes != nil {
		if e = t.stripePairs(e); len(e.Keys) == 0 {
			return e, nil
		}
	}
	t.place(e)
	if t.parts != nil {
		return pick(e, t.foldCounts(e)), nil
	}
	over, err := t.fold(t.ctx, e)
	if err != nil {
		// A lock may be left held or a ticket unserved: the table is
		// unusable, and the job fails.
		t.err = err
		return reduce.Run[K, V]{}, err
	}
	return pick(e, over), nil
}

// placement is where each pair of a run goes: its encoded key, its hash
// and its partition, and the pairs of each partition in turn.
type placement struct {
	keys  []byte  // the encoded keys, one after another
	end   []int32 // where each key ends in keys
	hash  []uint64
	part  []int32
	order []int32 // pair indices by partition
	from  []int   // partition j's pairs are order[from[j]:from[j+1]]
	bytes int64   // the entries' bytes, all pairs new
}

// place encodes and places every pair of e: a key owned on this node goes
// to its owner's partition, any other to partition owner mod size.
func (t *nodeTable[K, V]) place(e reduce.Run[K, V]) {
	x, pl := t.x, &t.pl
	n := x.r.N()
	first, size := nodeSpan(x.r)
	np := len(e.Keys)
	pl.keys = pl.keys[:0]
	pl.end = slices.Grow(pl.end[:0], np)[:np]
	pl.hash = slices.Grow(pl.hash[:0], np)[:np]
	pl.part = slices.Grow(pl.part[:0], np)[:np]
	pl.order = slices.Grow(pl.order[:0], np)[:np]
	pl.from = slices.Grow(pl.from[:0], size+1)[:size+1]
	clear(pl.from)
	pl.bytes = 0
	var vb []byte
	for i, k := range e.Keys {
		start := len(pl.keys)
		pl.keys = x.kc.Append(pl.keys, k)
		kb := pl.keys[start:]
		vl := x.vc.Fixed()
		if vl == 0 {
			vb = x.vc.Append(vb[:0], e.Vals[i])
			vl = len(vb)
		}
		h := xxhash.Sum64(kb)
		o := int(h % uint64(n))
		j := o % size
		if o >= first && o < first+size {
			j = o - first
		}
		pl.end[i], pl.hash[i], pl.part[i] = int32(len(pl.keys)), h, int32(j)
		pl.from[j+1]++
		pl.bytes += entryBytes(len(kb), vl)
	}
	for j := range size {
		pl.from[j+1] += pl.from[j]
	}
	next := slices.Clone(pl.from[:size])
	for i, j := range pl.part {
		pl.order[next[j]] = int32(i)
		next[j]++
	}
}

// key returns pair i's encoded key.
func (pl *placement) key(i int32) []byte {
	start := int32(0)
	if i > 0 {
		start = pl.end[i-1]
	}
	return pl.keys[start:pl.end[i]]
}

// fold folds e, placed (place), into every partition of the node's table
// in turn, each under its lock, and returns the pairs that did not fit.
func (t *nodeTable[K, V]) fold(ctx context.Context, e reduce.Run[K, V]) ([]int32, error) {
	x, pl := t.x, &t.pl
	r := x.r
	first, size := nodeSpan(r)
	var over []int32
	pending := make([]int, 0, size)
	me := r.ID() - first
	for d := range size {
		if j := (me + d) % size; pl.from[j+1] > pl.from[j] {
			pending = append(pending, j)
		}
	}
	comb := x.s.Combiner()
	var vb, vbuf []byte
	var cur int32 // the pair being folded, for value and combine
	p := &t.p
	value := func() []byte {
		vb = x.vc.Append(vb[:0], e.Vals[cur])
		return vb
	}
	combine := func(old []byte) ([]byte, error) {
		v, m, err := x.vc.Decode(old)
		if err == nil && m != len(old) {
			err = fmt.Errorf("%d bytes after the value", len(old)-m)
		}
		if err != nil {
			return nil, fmt.Errorf("reduce: node table at rank %d: a value of key %q: %w", p.home, pl.key(cur), err)
		}
		vbuf = x.vc.Append(vbuf[:0], comb.Combine(v, e.Vals[cur]))
		return vbuf, nil
	}
	reg := t.reg
	foldPart := func(j int, l *pgas.Lock) error {
		batch := pl.order[pl.from[j]:pl.from[j+1]]
		*p = nodePart{r: r, home: first + j, base: reg.Off, size: reg.Size, fixed: x.vc.Fixed(), buf: p.buf, old: p.old, spare: p.spare, mem: r.Cast(first + j)}
		if err := p.load(ctx, len(batch)); err != nil {
			return err
		}
		p.warm(batch, pl.hash)
		for _, i := range batch {
			cur = i
			ok, err := p.insert(ctx, pl.hash[i], pl.key(i), value, combine)
			if err != nil {
				return err
			}
			if ok {
				t.folded++
			} else {
				over = append(over, i)
			}
		}
		if err := p.store(ctx); err != nil {
			return err
		}
		p.flush()
		return l.Unlock(ctx)
	}
	// Take the partitions whose locks are free first; wait in turn only
	// when every one left is held.
	lock := func(j int) *pgas.Lock { return r.OpenLock(pgas.LockRef{Home: first + j, Off: reg.Off}) }
	for len(pending) > 0 {
		took := false
		for k := 0; k < len(pending); {
			j := pending[k]
			l := lock(j)
			ok, err := l.TryLock(ctx)
			if err != nil {
				return nil, err
			}
			if !ok {
				k++
				continue
			}
			if err := foldPart(j, l); err != nil {
				return nil, err
			}
			pending = slices.Delete(pending, k, k+1)
			took = true
		}
		if !took {
			j := pending[0]
			l := lock(j)
			if err := l.Lock(ctx); err != nil {
				return nil, err
			}
			if err := foldPart(j, l); err != nil {
				return nil, err
			}
			pending = pending[1:]
		}
	}
	t.over += int64(len(over))
	return over, nil
}

// nodeCombine folds local (combined pairs in no order, a key possibly
// more than once: Store.DrainCombined) into the node's table and returns,
// as a sorted run, this rank's partition of it merged with the pairs that
// did not fit. The table is the store's sink if Begin made one, else it is
// made here, sized from the job's totals (and, unless o.Node is NodeOn,
// only if there are enough pairs to gain from it). It is collective over
// all ranks.
func (x *xfer[K, V]) nodeCombine(ctx context.Context, local reduce.Run[K, V], o reduce.Options) (reduce.Run[K, V], error) {
	r := x.r
	t, ok := x.s.Sink().(*nodeTable[K, V])
	if ok && t.x.r == r {
		x.s.SetSink(nil, 0)
		if t.o.Gather != o.Gather || t.o.Node != o.Node {
			return reduce.Run[K, V]{}, fmt.Errorf("reduce: the map combined pairs per node for gather %v, node combining %v; the reduce asks for %v, %v", t.o.Gather, t.o.Node, o.Gather, o.Node)
		}
		if t.err != nil {
			return reduce.Run[K, V]{}, t.err // the map's fold failed: so does the job
		}
		t.ctx = ctx
		t.place(local)
	} else {
		t = &nodeTable[K, V]{x: x, ctx: ctx, o: o}
		t.place(local)
		reg, ok, err := x.nodeRegion(ctx, t.pl.bytes, int64(len(local.Keys)), o.Node == reduce.NodeOn)
		if err != nil || !ok {
			return x.s.SortCombined(local), err
		}
		t.reg = reg
	}
	var over []int32
	var err error
	if t.parts != nil {
		t.EndMap()
		over = t.foldCounts(local)
	} else if over, err = t.fold(ctx, local); err != nil {
		return reduce.Run[K, V]{}, err
	}
	if t.stripes != nil {
		if err := t.endStripes(ctx); err != nil {
			return reduce.Run[K, V]{}, err
		}
	}
	x.st.NodePairs += t.folded
	x.st.NodeOverflow += t.over + int64(len(t.overKeys))
	x.st.PairsEmitted += t.direct
	if err := r.Barrier(ctx); err != nil {
		return reduce.Run[K, V]{}, err
	}
	reg := t.reg
	part := r.Segment()[reg.Off : reg.Off+reg.Size]
	var mine reduce.Run[K, V]
	var used int64
	if t.parts != nil {
		mine, err = x.readCounts(part, t.logCap)
		used = countUsed(part, t.logCap)
	} else {
		mine, err = x.readPart(part)
		// Only the partition's used bytes were written (its lock too,
		// below nodeHdr): the rest of a region sized for the worst case
		// stays untouched for what is allocated over it next.
		used = max(int64(binary.LittleEndian.Uint64(part[16:])), nodeHdr)
	}
	if err != nil {
		return reduce.Run[K, V]{}, fmt.Errorf("reduce: rank %d's node table: %w", r.ID(), err)
	}
	if t.stripes != nil {
		if err := r.AllFreeUsed(ctx, t.sreg, t.stripeUsed()); err != nil {
			return reduce.Run[K, V]{}, err
		}
	}
	if err := r.AllFreeUsed(ctx, reg, min(used, reg.Size)); err != nil {
		return reduce.Run[K, V]{}, err
	}
	if len(over) == 0 && len(t.overKeys) == 0 {
		return mine, nil
	}
	runs := []reduce.Run[K, V]{mine}
	if len(over) > 0 {
		runs = append(runs, x.s.SortCombined(pick(local, over)))
	}
	if len(t.overKeys) > 0 {
		e, err := t.overRun()
		if err != nil {
			return reduce.Run[K, V]{}, err
		}
		runs = append(runs, e)
	}
	return x.s.Merge(runs), nil
}

// testNodeRegion, if positive, is the region's size (tests force the
// overflow path with it).
var testNodeRegion int64

// nodeRegion allocates the table's symmetric region, sized from the
// job's totals: room for the average rank's entries (an overestimate, as
// ranks share keys) with slack, and their slots. Unless forced, a job with
// too few pairs to gain from it does not combine (ok is false). If the
// segments have no room for the region, it takes half of what is left;
// if that is too little, nobody combines.
func (x *xfer[K, V]) nodeRegion(ctx context.Context, bytes, pairs int64, force bool) (reg pgas.Region, ok bool, err error) {
	r := x.r
	rows, err := x.rows(ctx, []int64{bytes, pairs})
	if err != nil {
		return reg, false, err
	}
	var tot [2]int64
	for i, v := range rows {
		tot[i%2] += v
	}
	n := int64(r.N())
	least := int64(nodeHdr + 16<<nodeLogCap) // the first slots and as much again
	want := nodeHdr + tot[0]/n*3/2 + tot[1]/n*32
	if tot[1] == 0 || want < 2*least && !force {
		return reg, false, nil // too few pairs to be worth the allocation
	}
	want = (min(max(want, 2*least), r.Config().SegmentBytes/4) + 7) &^ 7
	if testNodeRegion > 0 {
		want = testNodeRegion
	}
	return x.allocRegion(ctx, want)
}

// allocRegion allocates a symmetric region of want bytes for the node
// table. If the segments have no room for it, it takes half of what is
// left; if that is too little, nobody combines (ok is false).
func (x *xfer[K, V]) allocRegion(ctx context.Context, want int64) (reg pgas.Region, ok bool, err error) {
	r := x.r
	least := int64(nodeHdr + 16<<nodeLogCap)
	reg, err = r.AllAlloc(ctx, want)
	var oom *pgas.OutOfMemoryError
	if errors.As(err, &oom) && !oom.TooManyRegions {
		// Every rank got the same answer, so every rank retries alike.
		if want = (oom.Left / 2) &^ 7; want < least {
			return reg, false, nil
		}
		reg, err = r.AllAlloc(ctx, want)
	}
	if err != nil {
		return reg, false, err
	}
	return reg, true, nil
}

// readPart decodes this rank's partition (its own segment's region) into
// a sorted run.
func (x *xfer[K, V]) readPart(b []byte) (reduce.Run[K, V], error) {
	var e reduce.Run[K, V]
	le := binary.LittleEndian
	used, slots, logCap, count := int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:])), le.Uint64(b[32:]), int(le.Uint64(b[40:]))
	if used == 0 {
		return e, nil
	}
	if used > int64(len(b)) || logCap > 40 || slots < nodeHdr || slots+8<<logCap > used || count > 1<<logCap {
		return e, fmt.Errorf("header corrupt (used %d, slots at %d, 2^%d slots, %d entries)", used, slots, logCap, count)
	}
	e.Keys = make([]K, 0, count)
	e.Vals = make([]V, 0, count)
	for i := range int64(1) << logCap {
		w := le.Uint64(b[slots+8*i:])
		if w == 0 {
			continue
		}
		at := int64(uint32(w)) * 8
		if at < nodeHdr || at+8 > used {
			return e, fmt.Errorf("slot %d points to %d, outside [%d,%d)", i, at, nodeHdr, used)
		}
		kl, vl := int64(le.Uint32(b[at:])), int64(le.Uint32(b[at+4:]))
		if at+8+kl+vl > used {
			return e, fmt.Errorf("entry at %d (%d+%d bytes) runs past %d", at, kl, vl, used)
		}
		kb, vb := b[at+8:at+8+kl], b[at+8+kl:at+8+kl+vl]
		k, err := x.decodeKey(kb)
		if err != nil {
			return e, fmt.Errorf("entry at %d: key: %w", at, err)
		}
		v, m, err := x.vc.Decode(vb)
		if err == nil && m != len(vb) {
			err = fmt.Errorf("%d bytes after the value", len(vb)-m)
		}
		if err != nil {
			return e, fmt.Errorf("entry at %d: value: %w", at, err)
		}
		e.Keys = append(e.Keys, k)
		e.Vals = append(e.Vals, v)
	}
	if len(e.Keys) != count {
		return e, fmt.Errorf("%d entries in the slots, header says %d", len(e.Keys), count)
	}
	return x.s.SortCombined(e), nil // keys are distinct: a sort
}

// decodeKey decodes a key that is the whole of kb.
func (x *xfer[K, V]) decodeKey(kb []byte) (K, error) {
	k, m, err := x.kc.Decode(kb)
	if err == nil && m != len(kb) {
		err = fmt.Errorf("%d bytes after the key", len(kb)-m)
	}
	return k, err
}

// nodePart is one partition of the node table as the rank holding its
// lock sees it: the header words in private memory while it works, the
// slots and entries in the home rank's segment.
type nodePart struct {
	r                  *pgas.Rank
	home               int
	base, size         int64
	fixed              int // the value codec's size, 0 if variable
	used, slots, count int64
	logCap             uint
	w                  [8]byte
	buf                []byte // an entry being read or written
	old                []byte // a variable-size value being read
	// cache, when not nil, is a copy of the slot array, read with one get
	// at load because the batch is large for the table: probes read it
	// instead of a get each, and slot writes go to both.
	cache []byte
	spare []byte // cache's memory, kept from batch to batch
	// mem, when not nil, is the home rank's segment as memory of this
	// process (pgas.Rank.Cast: inproc, shm): the partition is read and
	// written with loads and stores, under the partition's lock as the
	// one-sided operations would be, and the accesses are counted at
	// unlock (flush) as the gets and puts they stand for.
	mem                []byte
	warmed             byte // keeps warm's loads
	gets, puts         int64
	getBytes, putBytes int64
}

// warm loads, where the partition is mapped, the first slot and the entry
// it points to of every pair of a batch, in a loop whose loads do not
// wait for each other, so that the processor fetches them from memory in
// parallel; insert, which must wait for each probe, then finds them in
// cache. Nothing is counted: insert's accesses are.
func (p *nodePart) warm(batch []int32, hash []uint64) {
	if p.mem == nil {
		return
	}
	mask := uint64(1)<<p.logCap - 1
	slots := p.mem[p.base+p.slots : p.base+p.slots+8<<p.logCap]
	var sum byte
	for _, i := range batch {
		w := binary.LittleEndian.Uint64(slots[8*((hash[i]>>32)&mask):])
		if at := p.base + int64(uint32(w))*8; w != 0 && at < p.base+p.size {
			sum += p.mem[at]
		}
	}
	p.warmed = sum
}

// get reads len(dst) bytes at off of the partition's home segment.
func (p *nodePart) get(ctx context.Context, off int64, dst []byte) error {
	if p.mem != nil {
		copy(dst, p.mem[off:])
		p.gets++
		p.getBytes += int64(len(dst))
		return nil
	}
	return p.r.GetBytes(ctx, p.home, off, dst)
}

// view returns n bytes at off of the partition's home segment: the
// segment's own bytes where it is mapped, else a copy in p.buf.
func (p *nodePart) view(ctx context.Context, off, n int64) ([]byte, error) {
	if p.mem != nil {
		p.gets++
		p.getBytes += n
		return p.mem[off : off+n], nil
	}
	if cap(p.buf) < int(n) {
		p.buf = make([]byte, n)
	}
	return p.buf[:n], p.r.GetBytes(ctx, p.home, off, p.buf[:n])
}

// put writes src at off of the partition's home segment.
func (p *nodePart) put(ctx context.Context, off int64, src []byte) error {
	if p.mem != nil {
		copy(p.mem[off:], src)
		p.puts++
		p.putBytes += int64(len(src))
		return nil
	}
	return p.r.PutBytes(ctx, p.home, off, src)
}

// flush counts the accesses made through mem.
func (p *nodePart) flush() {
	if p.mem == nil {
		return
	}
	p.r.CountCast(pgas.OpGet, p.home, p.gets, p.getBytes)
	p.r.CountCast(pgas.OpPut, p.home, p.puts, p.putBytes)
	p.gets, p.puts, p.getBytes, p.putBytes = 0, 0, 0, 0
}

// load reads the partition's header, and the slot array too when a batch
// of n pairs would probe a good part of it.
func (p *nodePart) load(ctx context.Context, n int) error {
	var h [32]byte
	if err := p.get(ctx, p.base+16, h[:]); err != nil {
		return err
	}
	le := binary.LittleEndian
	p.used, p.slots, p.logCap, p.count = int64(le.Uint64(h[0:])), int64(le.Uint64(h[8:])), uint(le.Uint64(h[16:])), int64(le.Uint64(h[24:]))
	if p.used == 0 { // first use: the region is zeroed
		p.slots, p.logCap, p.used = nodeHdr, nodeLogCap, nodeHdr+8<<nodeLogCap
	}
	p.cache = nil
	if p.mem == nil && 16*n >= 1<<p.logCap {
		p.spare = slices.Grow(p.spare[:0], 8<<p.logCap)[:8<<p.logCap]
		p.cache = p.spare
		return p.get(ctx, p.base+p.slots, p.cache)
	}
	return nil
}

func (p *nodePart) store(ctx context.Context) error {
	var h [32]byte
	le := binary.LittleEndian
	le.PutUint64(h[0:], uint64(p.used))
	le.PutUint64(h[8:], uint64(p.slots))
	le.PutUint64(h[16:], uint64(p.logCap))
	le.PutUint64(h[24:], uint64(p.count))
	return p.put(ctx, p.base+16, h[:])
}

// word reads slot i.
func (p *nodePart) word(ctx context.Context, i uint64) (uint64, error) {
	if p.cache != nil {
		return binary.LittleEndian.Uint64(p.cache[8*i:]), nil
	}
	if p.mem != nil {
		p.gets++
		p.getBytes += 8
		return binary.LittleEndian.Uint64(p.mem[p.base+p.slots+8*int64(i):]), nil
	}
	if err := p.get(ctx, p.base+p.slots+8*int64(i), p.w[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p.w[:]), nil
}

// putWord writes slot i.
func (p *nodePart) putWord(ctx context.Context, i uint64, v uint64) error {
	if p.cache != nil {
		binary.LittleEndian.PutUint64(p.cache[8*i:], v)
	}
	binary.LittleEndian.PutUint64(p.w[:], v)
	return p.put(ctx, p.base+p.slots+8*int64(i), p.w[:])
}

// add appends an entry and returns its offset, or -1 if it does not fit.
func (p *nodePart) add(ctx context.Context, kb, vb []byte) (int64, error) {
	n := entryBytes(len(kb), len(vb))
	if p.used+n > p.size || (p.used+n)/8 > 1<<32-1 {
		return -1, nil
	}
	b := binary.LittleEndian.AppendUint32(p.buf[:0], uint32(len(kb)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vb)))
	b = append(b, kb...)
	b = append(b, vb...)
	for int64(len(b)) < n {
		b = append(b, 0)
	}
	p.buf = b
	at := p.used
	if err := p.put(ctx, p.base+at, b); err != nil {
		return 0, err
	}
	p.used += n
	return at, nil
}

// insert folds a pair with key kb into the partition: a new key gets an
// entry with value()'s bytes, an existing one combine(its value)'s. It
// reports false, changing nothing, if the partition has no room.
func (p *nodePart) insert(ctx context.Context, h uint64, kb []byte, value func() []byte, combine func(old []byte) ([]byte, error)) (bool, error) {
	tag := h >> 32
	for {
		mask := uint64(1)<<p.logCap - 1
		for i := tag & mask; ; i = (i + 1) & mask {
			w, err := p.word(ctx, i)
			if err != nil {
				return false, err
			}
			if w == 0 {
				if (p.count+1)*4 > 3<<p.logCap {
					break // grow, then probe again
				}
				at, err := p.add(ctx, kb, value())
				if err != nil || at < 0 {
					return false, err
				}
				p.count++
				return true, p.putWord(ctx, i, tag<<32|uint64(at/8))
			}
			if w>>32 != tag {
				continue
			}
			at := int64(uint32(w)) * 8
			n := min(8+int64(len(kb))+int64(p.fixed), p.size-at)
			if n < 8+int64(len(kb)) {
				continue // the entry ends before a key this long would
			}
			e, err := p.view(ctx, p.base+at, n)
			if err != nil {
				return false, err
			}
			if int(binary.LittleEndian.Uint32(e)) != len(kb) || string(e[8:8+len(kb)]) != string(kb) {
				continue
			}
			vl := int(binary.LittleEndian.Uint32(e[4:]))
			var old []byte
			if vl == p.fixed && p.fixed > 0 {
				old = e[8+len(kb):]
			} else {
				p.old = slices.Grow(p.old[:0], vl)[:vl]
				old = p.old
				if err := p.get(ctx, p.base+at+8+int64(len(kb)), old); err != nil {
					return false, err
				}
			}
			nv, err := combine(old)
			if err != nil {
				return false, err
			}
			if len(nv) == vl {
				return true, p.put(ctx, p.base+at+8+int64(len(kb)), nv)
			}
			at2, err := p.add(ctx, kb, nv)
			if err != nil || at2 < 0 {
				return false, err
			}
			return true, p.putWord(ctx, i, tag<<32|uint64(at2/8))
		}
		if ok, err := p.grow(ctx); !ok || err != nil {
			return false, err
		}
	}
}

// grow doubles the slot array into fresh space, or reports false if
// there is none.
func (p *nodePart) grow(ctx context.Context) (bool, error) {
	old := int64(8) << p.logCap
	need := 2 * old
	if p.used+need > p.size || p.logCap >= 32 {
		return false, nil
	}
	b := p.cache
	if b == nil {
		b = make([]byte, old)
		if err := p.get(ctx, p.base+p.slots, b); err != nil {
			return false, err
		}
	}
	nb := make([]byte, need)
	mask := uint64(1)<<(p.logCap+1) - 1
	for i := int64(0); i < old; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if w == 0 {
			continue
		}
		j := (w >> 32) & mask
		for binary.LittleEndian.Uint64(nb[8*j:]) != 0 {
			j = (j + 1) & mask
		}
		binary.LittleEndian.PutUint64(nb[8*j:], w)
	}
	if err := p.put(ctx, p.base+p.used, nb); err != nil {
		return false, err
	}
	p.slots, p.used, p.logCap = p.used, p.used+need, p.logCap+1
	if p.cache != nil {
		p.cache, p.spare = nb, nb
	}
	return true, nil
}
