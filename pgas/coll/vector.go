package coll

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/pgasmr/pgasmr/pgas"
)

// Vector variants (UPC's _v family, appendix A.2 of seeds/002).
//
// Counts are in elements of T and displacements are element offsets.
// Counts and displacement slices are ordinary private slices that every
// member passes with the same values: UPC's _v_privparam form, with no
// hidden remote reads (compared across members unless Config.NoCheck). Unless
// a function says otherwise they have one entry per chunk slot: slot m is
// team id m, or global rank m with AllThr (then entries of non-member
// slots are ignored, but must still be valid).
//
// A displacement for a private buffer is an offset into the owning
// member's slice. For a shared buffer it is an element index relative to
// the Buf's start (UPC's absolute displacement in the view that starts
// there). A nil displacement slice means "packed": the natural
// consecutive layout each function documents. Packed layouts count every
// slot, so under AllThr a non-member slot's count still takes its room
// (pass 0 for it to leave none). Displacements and counts must not be
// negative. Root, for the rooted functions, is a team id, as elsewhere.
//
// # Local displacements (_v_local)
//
// UPC's _v_local forms give each displacement as an offset inside the
// owning thread's block. Here the same thing is an offset into a rank's
// partition of the array (its Array.Local slice): LocalDispl converts one,
// LocalDispls a slice of them, one per slot, into the displacements the
// functions take. No separate option is needed.
//
// # Raw forms (_v_raw)
//
// The _v_raw forms, which count bytes instead of elements, are these
// functions instantiated with T = byte. That is how UPC-MR moves
// variable-size intermediate pairs: each rank encodes its records into one
// byte slice, the counts are byte lengths, and the receiver splits the
// concatenation with the lengths it already knows (or a small index sent
// alongside, itself an AllgatherV of ints). See ExampleAllgatherV_raw.
//
// # Checks
//
// Arguments that are wrong on their face panic before anything moves.
// Single-valued ones panic on every member: wrong slice lengths, negative
// counts or displacements, a shared chunk outside its array, destination
// chunks that overlap in the shared destination, and a shared-to-shared
// chunk whose first source element lives on a rank outside the team (such
// chunks are copied by the owner of their source, which would take no
// part). A private chunk that does not fit its slice, or that overlaps
// another destination chunk in it, panics on the member that owns the
// slice: each member checks the chunks it sends and receives, the only
// ones it plans when both buffers are private (see AllgatherV, ExchangeV).

func prefix(counts []int) []int {
	d := make([]int, len(counts))
	s := 0
	for i, c := range counts {
		d[i] = s
		s += c
	}
	return d
}

func sum(counts []int) int {
	s := 0
	for _, c := range counts {
		s += c
	}
	return s
}

func checkCounts(name, what string, counts []int, want int) {
	if len(counts) != want {
		panic(fmt.Sprintf("coll: %s: %s has %d entries, want %d", name, what, len(counts), want))
	}
	for i, c := range counts {
		if c < 0 {
			panic(fmt.Sprintf("coll: %s: %s[%d] = %d is negative", name, what, i, c))
		}
	}
}

func checkDispls(name, what string, d []int, want int) {
	if d != nil && len(d) != want {
		panic(fmt.Sprintf("coll: %s: %s has %d entries, want %d", name, what, len(d), want))
	}
	for i, v := range d {
		if v < 0 {
			panic(fmt.Sprintf("coll: %s: %s[%d] = %d is negative", name, what, i, v))
		}
	}
}

// vloc returns the location at displacement off for member tid in buffer
// b: in a private buffer an offset into tid's slice, in a shared buffer an
// element index (Buf start + off).
func (c *call[T]) vloc(b uint8, tid int, off int) loc {
	if c.bufs[b].isPr {
		return loc{buf: b, rank: c.t.RankOf(tid), idx: int64(off)}
	}
	return loc{buf: b, idx: c.bufs[b].at + int64(off)}
}

// slotTid returns the team id of slot s (a team id, or a rank with
// AllThr), panicking if s names no member.
func (c *call[T]) slotTid(what string, s int) int {
	if c.o.allThr {
		if s < 0 || s >= c.r.N() || !c.t.Contains(s) {
			panic(fmt.Sprintf("coll: %s: %s is rank %d, which is not a member of the team %v", c.name, what, s, c.t.Members()))
		}
		return c.t.TeamID(s)
	}
	if s < 0 || s >= c.t.Size() {
		panic(fmt.Sprintf("coll: %s: %s is team id %d, not in [0,%d)", c.name, what, s, c.t.Size()))
	}
	return s
}

// vcheckAll makes the checks of a vector collective's moves that come
// out alike on every member (they depend on single-valued arguments
// only): counts and offsets, shared ranges, overlapping shared
// destination chunks. The plan's builder makes them (sharedPlan), and a
// panic there is raised on every member. vcheckMine makes the rest.
func (c *call[T]) vcheckAll(ms []move) {
	var dsts []span
	for _, m := range ms {
		if m.n < 0 {
			panic(fmt.Sprintf("coll: %s: negative count %d", c.name, m.n))
		}
		if m.n == 0 {
			continue
		}
		c.vcheckLoc(m.src, m.n, false)
		c.vcheckLoc(m.dst, m.n, false)
		if !c.isPriv(m.dst) {
			dsts = append(dsts, span{rank: -1, lo: m.dst.idx, hi: m.dst.idx + m.n})
		}
	}
	c.checkOverlap(dsts)
}

// vcheckMine checks, on this member, the chunks of the plan's rounds in
// its own private slices: that they fit, and that those landing in its
// destination do not overlap. Each rank checks the chunks of its own
// slices; the owner's panic fails the job for everyone.
func (c *call[T]) vcheckMine(rounds ...*planRound) {
	var dsts []span
	for _, pr := range rounds {
		pr.involved(c.me, func(_ int, m move) {
			if m.n <= 0 {
				return
			}
			c.vcheckLoc(m.src, m.n, true)
			c.vcheckLoc(m.dst, m.n, true)
			if c.isPriv(m.dst) && m.dst.rank == c.me {
				dsts = append(dsts, span{rank: c.me, lo: m.dst.idx, hi: m.dst.idx + m.n})
			}
		})
	}
	c.checkOverlap(dsts)
}

// vcheckLoc checks the n elements at l: with mine, that a private chunk
// of this rank's slice fits in it; else that a shared chunk lies inside
// its array and a private one at a non-negative offset.
func (c *call[T]) vcheckLoc(l loc, n int64, mine bool) {
	switch {
	case mine:
		if c.isPriv(l) && l.rank == c.me {
			c.privSlice(l, n) // panics if the chunk does not fit
		}
	case !c.isPriv(l):
		c.checkShared(l, n)
	case l.idx < 0:
		panic(fmt.Sprintf("coll: %s: negative offset %d in rank %d's private %s buffer",
			c.name, l.idx, l.rank, [...]string{"source", "destination"}[l.buf]))
	}
}

// span is a destination chunk for the overlap check.
type span struct {
	rank   int // private destination: its rank; shared: -1
	lo, hi int64
}

// checkOverlap panics if two of the destination chunks overlap.
func (c *call[T]) checkOverlap(dsts []span) {
	slices.SortFunc(dsts, func(a, b span) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return cmp.Compare(a.lo, b.lo)
	})
	for i := 1; i < len(dsts); i++ {
		p, q := dsts[i-1], dsts[i]
		if p.rank == q.rank && q.lo < p.hi {
			where := "the shared destination (element indices)"
			if p.rank >= 0 {
				where = fmt.Sprintf("rank %d's private destination", p.rank)
			}
			panic(fmt.Sprintf("coll: %s: destination chunks [%d,%d) and [%d,%d) of %s overlap", c.name, p.lo, p.hi, q.lo, q.hi, where))
		}
	}
}

// vflat runs the moves build returns as a one-round collective, after
// checking them.
func (c *call[T]) vflat(ctx context.Context, sig func() string, build func() []move) error {
	p := c.sharedPlan(func() [][]move {
		ms := build()
		c.vcheckAll(ms)
		return [][]move{ms}
	})
	c.vcheckMine(p.rounds...)
	return c.flatMoves(ctx, sig, false, p)
}

// LocalDispl returns the displacement in b of element li of rank's
// partition of b's array (its Array.Local slice on that rank): the
// element's global index minus the Buf's start. For a private buffer the
// displacement is li itself. This is UPC's _v_local form, a phase inside
// the owner's block, generalised to block-cyclic partitions; a chunk
// addressed this way must not run past the end of its block if it is to
// stay on that rank. It panics if li is outside rank's partition (li may
// equal its length) or the element lies before the Buf's start.
func LocalDispl[T any](b Buf[T], rank, li int) int {
	needValid("LocalDispl", b)
	if b.isPr {
		if li < 0 {
			panic(fmt.Sprintf("coll: LocalDispl: negative offset %d", li))
		}
		return li
	}
	l := b.arr.Layout()
	if rank < 0 || rank >= l.Ranks {
		panic(fmt.Sprintf("coll: LocalDispl: rank %d not in [0,%d)", rank, l.Ranks))
	}
	if n := l.LocalLen(rank); li < 0 || int64(li) > n {
		panic(fmt.Sprintf("coll: LocalDispl: offset %d outside rank %d's partition of %d elements", li, rank, n))
	}
	g := l.GlobalIndex(rank, int64(li))
	if g < b.at {
		panic(fmt.Sprintf("coll: LocalDispl: rank %d's element %d is global element %d, before the buffer's start %d", rank, li, g, b.at))
	}
	return int(g - b.at)
}

// LocalDispls converts local displacements, one per slot, into
// displacements in b: entry s of local is an offset into the partition of
// slot s's rank (team id s's rank; rank s with AllThr, which must then be
// among opts). It is how to write UPC's _v_local calls:
//
//	dd := coll.LocalDispls(t, coll.Shared(a, 0), phases)
//	err := coll.ScatterV(ctx, t, coll.Shared(a, 0), src, counts, nil, dd)
func LocalDispls[T any](t *pgas.Team, b Buf[T], local []int, opts ...Option) []int {
	if t == nil {
		panic("coll: LocalDispls on a nil team")
	}
	o := collect(opts)
	slots := t.Size()
	if o.allThr {
		slots = t.Rank().N()
	}
	if len(local) != slots {
		panic(fmt.Sprintf("coll: LocalDispls: local has %d entries, want %d", len(local), slots))
	}
	d := make([]int, slots)
	for s, li := range local {
		rank := s
		if !o.allThr {
			rank = t.RankOf(s)
		}
		d[s] = LocalDispl(b, rank, li)
	}
	return d
}

// AllgatherV gathers counts[m] elements from every member m onto every
// member (upc_all_gather_all_v and its forms; UPC-MR's ApplyReduce
// collective). Member m's contribution starts at sdispls[m] of src (nil:
// private sources start at 0, shared ones are packed in slot order from
// the Buf's start). On member k the contributions are laid out
// consecutively in slot order starting at ddispls[k] of dst (nil: private
// destinations start at 0; shared ones give member k the region starting at
// k*sum(counts)); ddispls is UPC's privparam "one int per thread".
// counts and the displacements have one entry per slot.
func AllgatherV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], counts, sdispls, ddispls []int, opts ...Option) error {
	needValid("AllgatherV", dst, src)
	c := newCall(t, "AllgatherV", dst, src, opts)
	ns := c.nslots()
	checkCounts("AllgatherV", "counts", counts, ns)
	checkDispls("AllgatherV", "sdispls", sdispls, ns)
	checkDispls("AllgatherV", "ddispls", ddispls, ns)
	total := sum(counts)
	packed := prefix(counts)
	sd := func(slot int) int {
		if sdispls != nil {
			return sdispls[slot]
		}
		if src.isPr {
			return 0
		}
		return packed[slot]
	}
	dd := func(slot int) int {
		if ddispls != nil {
			return ddispls[slot]
		}
		if dst.isPr {
			return 0
		}
		return slot * total
	}
	plan := func(add func(move)) {
		for m := range c.t.Size() {
			sm := c.slot(m)
			for k := range c.t.Size() {
				add(move{c.vloc(bufSrc, m, sd(sm)), c.vloc(bufDst, k, dd(c.slot(k))+packed[sm]), int64(counts[sm])})
			}
		}
	}
	sig := func() string { return fmt.Sprintf("counts=%v sdispls=%v ddispls=%v", counts, sdispls, ddispls) }
	if c.pairwise() {
		p := c.newPairPlan()
		me := c.slot(p.me)
		p.send = func(int) pchunk { return pchunk{at: int64(sd(me)), n: int64(counts[me])} }
		p.recv = func(i int) pchunk {
			si := c.slot(i)
			return pchunk{at: int64(dd(me) + packed[si]), n: int64(counts[si])}
		}
		cnt := func(i int) int64 { return int64(counts[c.slot(i)]) }
		pre := func(i int) int64 { return int64(packed[i]) } // slot i is team id i
		if c.o.allThr {
			// The members' counts, summed in team-id order.
			mp := make([]int64, c.t.Size())
			var s int64
			for i := range mp {
				mp[i] = s
				s += cnt(i)
			}
			pre = func(i int) int64 { return mp[i] }
		}
		p.stageBySender(c.esz, cnt, pre)
		c.vcheckPairs(p)
		return c.flatPairs(ctx, sig, false, p, c.globalOf(plan))
	}
	return c.vflat(ctx, sig, c.globalOf(plan))
}

// ScatterV copies counts[m] elements of the root's src, starting at
// sdispls[m], to member m's dst at ddispls[m], for every slot m
// (upc_all_scatter_v[_rooted] and forms; Root selects the root). nil
// sdispls: the chunks lie consecutively in slot order from the start of
// the root's slice or the Buf (offset prefix(counts)[m]). nil ddispls:
// private destinations start at 0, shared ones are packed in slot order
// (member m's chunk at prefix(counts)[m]).
func ScatterV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], counts, sdispls, ddispls []int, opts ...Option) error {
	needValid("ScatterV", dst, src)
	c := newCall(t, "ScatterV", dst, src, opts)
	ns := c.nslots()
	checkCounts("ScatterV", "counts", counts, ns)
	checkDispls("ScatterV", "sdispls", sdispls, ns)
	checkDispls("ScatterV", "ddispls", ddispls, ns)
	build := func() []move {
		packed := prefix(counts)
		sd := pick(sdispls, func(s int) int { return packed[s] })
		dd := pick(ddispls, func(s int) int {
			if dst.isPr {
				return 0
			}
			return packed[s]
		})
		ms := make([]move, 0, c.t.Size())
		for m := range c.t.Size() {
			s := c.slot(m)
			ms = append(ms, move{c.vloc(bufSrc, c.o.root, sd(s)), c.vloc(bufDst, m, dd(s)), int64(counts[s])})
		}
		return ms
	}
	sig := func() string { return fmt.Sprintf("counts=%v sdispls=%v ddispls=%v", counts, sdispls, ddispls) }
	return c.vflat(ctx, sig, build)
}

// GatherV copies counts[m] elements of member m's src, starting at
// sdispls[m], to the root's dst at ddispls[m], for every slot m
// (upc_all_gather_v[_rooted] and forms; Root selects the root). nil
// sdispls: private sources start at 0, shared ones are packed in slot
// order (member m's chunk at prefix(counts)[m]). nil ddispls: the
// contributions are concatenated in slot order from the start of the
// root's slice or the Buf (offset prefix(counts)[m]), UPC's layout.
func GatherV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], counts, sdispls, ddispls []int, opts ...Option) error {
	needValid("GatherV", dst, src)
	c := newCall(t, "GatherV", dst, src, opts)
	ns := c.nslots()
	checkCounts("GatherV", "counts", counts, ns)
	checkDispls("GatherV", "sdispls", sdispls, ns)
	checkDispls("GatherV", "ddispls", ddispls, ns)
	build := func() []move {
		packed := prefix(counts)
		sd := pick(sdispls, func(s int) int {
			if src.isPr {
				return 0
			}
			return packed[s]
		})
		dd := pick(ddispls, func(s int) int { return packed[s] })
		ms := make([]move, 0, c.t.Size())
		for m := range c.t.Size() {
			s := c.slot(m)
			ms = append(ms, move{c.vloc(bufSrc, m, sd(s)), c.vloc(bufDst, c.o.root, dd(s)), int64(counts[s])})
		}
		return ms
	}
	sig := func() string { return fmt.Sprintf("counts=%v sdispls=%v ddispls=%v", counts, sdispls, ddispls) }
	return c.vflat(ctx, sig, build)
}

// BroadcastV copies n elements of the root's src (from the start of its
// slice, or of the Buf) to every member m's dst at ddispls[m]
// (upc_all_broadcast_v[_rooted] and forms; Root selects the root). nil
// ddispls: private destinations start at 0, shared ones at m*n (slot m).
// With private destinations the data follows the broadcast tree WithAlgo
// chooses, each member forwarding from its own dst; with a shared
// destination the tree would have to forward through the array's owners,
// so the root's data goes to every member directly (flat).
func BroadcastV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, ddispls []int, opts ...Option) error {
	checkCount("BroadcastV", n)
	needValid("BroadcastV", dst, src)
	c := newCall(t, "BroadcastV", dst, src, opts)
	ns := c.nslots()
	checkDispls("BroadcastV", "ddispls", ddispls, ns)
	nn := int64(n)
	dd := pick(ddispls, func(s int) int {
		if dst.isPr {
			return 0
		}
		return s * n
	})
	root := c.o.root
	rootSrc := c.vloc(bufSrc, root, 0)
	dstOf := func(tid int) loc { return c.vloc(bufDst, tid, dd(c.slot(tid))) }
	var tree [][]edge
	if dst.isPr {
		tree = broadcastTree(c.t, root, c.o.algo)
	}
	p := c.sharedPlan(func() [][]move {
		var rounds [][]move
		if dst.isPr {
			rounds = [][]move{{{rootSrc, dstOf(root), nn}}}
			for i, rd := range tree {
				var ms []move
				for _, e := range rd {
					from := rootSrc
					if e.from != root {
						from = dstOf(e.from)
					}
					ms = append(ms, move{from, dstOf(e.to), nn})
				}
				if i == 0 {
					rounds[0] = append(rounds[0], ms...)
				} else {
					rounds = append(rounds, ms)
				}
			}
		} else {
			ms := make([]move, 0, c.t.Size())
			for m := range c.t.Size() {
				ms = append(ms, move{rootSrc, dstOf(m), nn})
			}
			rounds = [][]move{ms}
		}
		c.vcheckAll(slices.Concat(rounds...))
		return rounds
	})
	c.vcheckMine(p.rounds...)
	if err := c.begin(ctx, func() string {
		return fmt.Sprintf("n=%d ddispls=%v %s", n, ddispls, kind(dst, src))
	}); err != nil {
		return err
	}
	if err := c.run(ctx, p, false); err != nil {
		return err
	}
	return c.end(ctx)
}

// ExchangeV is the all-to-all with variable chunks (upc_all_exchange_v and
// forms; MPI_Alltoallv). counts, sdispls and ddispls have Size*Size entries
// (THREADS*THREADS with AllThr), row i belonging to sender slot i: the
// chunk from slot i to slot j has counts[i*S+j] elements, read at
// sdispls[i*S+j] of sender i's src and written at ddispls[i*S+j] of
// receiver j's dst. Note that both displacements of a chunk are in the
// sender's row (UPC instead reads the receive offset from the receiver's
// row of one shared matrix).
//
// nil sdispls (private src only): each sender's chunks are packed in
// receiver order from offset 0 of its slice. nil ddispls (private dst
// only): each receiver's chunks are packed in sender order from offset 0.
// Shared buffers need explicit displacements. Destination chunks must not
// overlap.
func ExchangeV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], counts, sdispls, ddispls []int, opts ...Option) error {
	needValid("ExchangeV", dst, src)
	c := newCall(t, "ExchangeV", dst, src, opts)
	S := c.nslots()
	checkCounts("ExchangeV", "counts", counts, S*S)
	checkDispls("ExchangeV", "sdispls", sdispls, S*S)
	checkDispls("ExchangeV", "ddispls", ddispls, S*S)
	if sdispls == nil && !src.isPr {
		panic("coll: ExchangeV: a shared source needs explicit sdispls (nil means packed in a private slice)")
	}
	if ddispls == nil && !dst.isPr {
		panic("coll: ExchangeV: a shared destination needs explicit ddispls (nil means packed in a private slice)")
	}
	sig := func() string { return fmt.Sprintf("counts=%v sdispls=%v ddispls=%v", counts, sdispls, ddispls) }
	global := func() []move {
		rowPre, colPre := matrixPrefixes(counts, S)
		sd := pick(sdispls, func(k int) int { return rowPre[k] })
		dd := pick(ddispls, func(k int) int { return colPre[k] })
		return c.allToAll(counts, sd, dd)
	}
	if c.pairwise() {
		row, col := c.myPrefixes(counts)
		sd := pick(sdispls, func(k int) int { return row[k%S] })
		dd := pick(ddispls, func(k int) int { return col[k/S] })
		p := c.allToAllPairs(counts, sd, dd)
		c.vcheckPairs(p)
		return c.flatPairs(ctx, sig, false, p, global)
	}
	return c.vflat(ctx, sig, global)
}

// allToAll plans the chunk from every member i to every member j: chunk
// k = slot(i)*S + slot(j) has counts[k] elements, read at sd(k) and
// written at dd(k).
func (c *call[T]) allToAll(counts []int, sd, dd func(k int) int) []move {
	S := c.nslots()
	ms := make([]move, 0, c.t.Size()*c.t.Size())
	for i := range c.t.Size() {
		si := c.slot(i)
		for j := range c.t.Size() {
			k := si*S + c.slot(j)
			ms = append(ms, move{c.vloc(bufSrc, i, sd(k)), c.vloc(bufDst, j, dd(k)), int64(counts[k])})
		}
	}
	return ms
}

// allToAllPairs is allToAll's structured plan: this member evaluates sd on
// its own row of chunks (k = slot(me)*S + slot(j)) and dd on its own
// column (k = slot(i)*S + slot(me)) only.
func (c *call[T]) allToAllPairs(counts []int, sd, dd func(k int) int) *pairPlan {
	S := c.nslots()
	p := c.newPairPlan()
	me := c.slot(p.me)
	p.send = func(j int) pchunk {
		k := me*S + c.slot(j)
		return pchunk{at: int64(sd(k)), n: int64(counts[k])}
	}
	p.recv = func(i int) pchunk {
		k := c.slot(i)*S + me
		return pchunk{at: int64(dd(k)), n: int64(counts[k])}
	}
	c.stageMatrix(p, counts)
	return p
}

// myPrefixes is matrixPrefixes for this member's row and column only: the
// offset of each of its chunks among its own (row[slot of the receiver]),
// and of each chunk it receives among those (col[slot of the sender]).
func (c *call[T]) myPrefixes(counts []int) (row, col []int) {
	S, me := c.nslots(), c.slot(c.t.ID())
	row, col = make([]int, S), make([]int, S)
	rs, cs := 0, 0
	for x := range S {
		row[x], col[x] = rs, cs
		rs += counts[me*S+x]
		cs += counts[x*S+me]
	}
	return row, col
}

// ExchangeVMerge is the all-to-all with variable chunks and a packed
// receive (upc_all_exchange_v_merge and forms; MPI_Alltoallv whose
// receive displacements are the prefix sums of the receive counts). counts
// and sdispls are as in ExchangeV (Size*Size entries, row i = sender slot
// i; nil sdispls needs a private src and packs each sender's chunks in
// receiver order from offset 0). Receiver j gets the chunks from slots
// 0..S-1 packed consecutively in slot order starting at dstStart[j]: the
// chunk from slot i at dstStart[j] + counts[0*S+j] + ... + counts[(i-1)*S+j]
// (slots of non-members under AllThr still take their counts' room).
// dstStart has one entry per slot; nil means 0 for a private dst, and for a
// shared dst the receivers' areas packed one after another in slot order
// (receiver j's area starts at the total received by slots 0..j-1), so the
// whole dst is the transposed concatenation.
func ExchangeVMerge[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], counts, sdispls, dstStart []int, opts ...Option) error {
	needValid("ExchangeVMerge", dst, src)
	c := newCall(t, "ExchangeVMerge", dst, src, opts)
	S := c.nslots()
	checkCounts("ExchangeVMerge", "counts", counts, S*S)
	checkDispls("ExchangeVMerge", "sdispls", sdispls, S*S)
	checkDispls("ExchangeVMerge", "dstStart", dstStart, S)
	if sdispls == nil && !src.isPr {
		panic("coll: ExchangeVMerge: a shared source needs explicit sdispls (nil means packed in a private slice)")
	}
	sig := func() string { return fmt.Sprintf("counts=%v sdispls=%v dstStart=%v", counts, sdispls, dstStart) }
	global := func() []move {
		rowPre, colPre := matrixPrefixes(counts, S)
		recv := make([]int, S)
		for k, n := range counts {
			recv[k%S] += n
		}
		recvPre := prefix(recv)
		start := pick(dstStart, func(j int) int {
			if dst.isPr {
				return 0
			}
			return recvPre[j]
		})
		sd := pick(sdispls, func(k int) int { return rowPre[k] })
		dd := func(k int) int { return start(k%S) + colPre[k] }
		return c.allToAll(counts, sd, dd)
	}
	if c.pairwise() {
		row, col := c.myPrefixes(counts)
		start := pick(dstStart, func(int) int { return 0 }) // dst is private
		sd := pick(sdispls, func(k int) int { return row[k%S] })
		dd := func(k int) int { return start(k%S) + col[k/S] }
		p := c.allToAllPairs(counts, sd, dd)
		c.vcheckPairs(p)
		return c.flatPairs(ctx, sig, false, p, global)
	}
	return c.vflat(ctx, sig, global)
}

// PermuteV copies counts[m] elements of member m's src at displs[m] to
// member perm[m]'s dst at the same displacement within that member's part
// (upc_all_permute_v and forms; perm as in Permute: team ids, or ranks
// with AllThr). A member's part of a private buffer is its slice, and the
// chunk keeps its offset: src[displs[m]:] of m goes to dst[displs[m]:] of
// perm[m]. A member's part of a shared buffer is the block of its slot,
// [start + s*B, start + (s+1)*B) with B the array's block size
// (Layout().Block): the chunk's phase displs[m] - s*B in slot s's block of
// src is kept in perm[m]'s block of dst, which is UPC's inference ("a
// portion of the area associated to perm[i]", at the same phase). In a
// shared buffer a chunk must fit in its block. nil displs puts every
// chunk at phase 0. It panics if perm is not a permutation.
func PermuteV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], perm, counts, displs []int, opts ...Option) error {
	needValid("PermuteV", dst, src)
	c := newCall(t, "PermuteV", dst, src, opts)
	ns := c.nslots()
	checkPerm("PermuteV", perm, ns)
	checkCounts("PermuteV", "counts", counts, ns)
	checkDispls("PermuteV", "displs", displs, ns)
	block := func(b Buf[T]) int { return int(b.arr.Layout().Block) }
	build := func() []move {
		ms := make([]move, 0, c.t.Size())
		for m := range c.t.Size() {
			s := c.slot(m)
			to := c.slotTid(fmt.Sprintf("perm[%d]", s), perm[s])
			n := counts[s]
			var ph int
			switch {
			case displs == nil:
			case src.isPr:
				ph = displs[s]
			default:
				ph = displs[s] - s*block(src)
			}
			var sl, dl loc
			if src.isPr {
				sl = c.vloc(bufSrc, m, ph)
			} else {
				B := block(src)
				if n > 0 && (ph < 0 || ph+n > B) {
					panic(fmt.Sprintf("coll: PermuteV: slot %d's chunk [%d,%d) does not fit in its source block [%d,%d)",
						s, s*B+ph, s*B+ph+n, s*B, (s+1)*B))
				}
				sl = c.vloc(bufSrc, m, s*B+ph)
			}
			if dst.isPr {
				dl = c.vloc(bufDst, to, ph)
			} else {
				B, ts := block(dst), c.slot(to)
				if n > 0 && ph+n > B {
					panic(fmt.Sprintf("coll: PermuteV: slot %d's chunk of %d elements at phase %d does not fit in a destination block of %d",
						s, n, ph, B))
				}
				dl = c.vloc(bufDst, to, ts*B+ph)
			}
			ms = append(ms, move{sl, dl, int64(n)})
		}
		return ms
	}
	sig := func() string { return fmt.Sprintf("perm=%v counts=%v displs=%v", perm, counts, displs) }
	return c.vflat(ctx, sig, build)
}

// Copy is one copy of VectorCopy: N elements from Src of the source to Dst
// of the destination. Src and Dst are displacements as in the other vector
// functions: relative to a shared Buf's start, or offsets into a private
// slice. For a private source (destination) SrcRank (DstRank) names the
// member whose slice it is, as a team id (a rank with AllThr); for shared
// buffers they are ignored.
type Copy struct {
	Src, Dst, N      int
	SrcRank, DstRank int
}

// VectorCopy performs any number of copies between any members at once
// (upc_all_vector_copy and its get/put/priv forms): for every c in copies,
// dst[c.Dst : c.Dst+c.N] = src[c.Src : c.Src+c.N]. copies is single-valued.
// A shared-to-shared copy is done by the owner of its first source
// element, which must be a member; a copy into a private slice by its
// owner; a copy out of a private slice into shared memory by the slice's
// owner. Unlike UPC, a copy may span blocks and ranks. Destinations must
// not overlap; sources may.
func VectorCopy[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], copies []Copy, opts ...Option) error {
	needValid("VectorCopy", dst, src)
	c := newCall(t, "VectorCopy", dst, src, opts)
	build := func() []move {
		ms := make([]move, len(copies))
		for i, cp := range copies {
			if cp.N < 0 || cp.Src < 0 || cp.Dst < 0 {
				panic(fmt.Sprintf("coll: VectorCopy: copy %d %+v has a negative field", i, cp))
			}
			var st, dt int
			if src.isPr {
				st = c.slotTid(fmt.Sprintf("copy %d's SrcRank", i), cp.SrcRank)
			}
			if dst.isPr {
				dt = c.slotTid(fmt.Sprintf("copy %d's DstRank", i), cp.DstRank)
			}
			ms[i] = move{c.vloc(bufSrc, st, cp.Src), c.vloc(bufDst, dt, cp.Dst), int64(cp.N)}
		}
		return ms
	}
	sig := func() string { return fmt.Sprintf("copies=%v", copies) }
	return c.vflat(ctx, sig, build)
}

// pick returns d's entry k, or def(k) when d is nil.
func pick(d []int, def func(k int) int) func(k int) int {
	return func(k int) int {
		if d != nil {
			return d[k]
		}
		return def(k)
	}
}

// matrixPrefixes returns, for an S*S count matrix (row = sender), the
// offset of each chunk among its sender's chunks (in receiver order) and
// among its receiver's chunks (in sender order).
func matrixPrefixes(counts []int, S int) (row, col []int) {
	row = make([]int, len(counts))
	col = make([]int, len(counts))
	for i := range S {
		s := 0
		for j := range S {
			row[i*S+j] = s
			s += counts[i*S+j]
		}
	}
	for j := range S {
		s := 0
		for i := range S {
			col[i*S+j] = s
			s += counts[i*S+j]
		}
	}
	return row, col
}
