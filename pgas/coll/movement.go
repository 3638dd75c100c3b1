package coll

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
)

// Chunk placement. A collective over a team of S members has S chunk
// slots, slot m belonging to team id m; with AllThr it has THREADS slots,
// slot i belonging to rank i (slots of non-members are left alone).
//
//   - A member's chunk (n elements): in a shared buffer, elements
//     [at + slot*n, at + (slot+1)*n); in a private buffer, the member's
//     slice from offset 0.
//   - A member's region (slots*n elements, for allgather, exchange and the
//     in-place scatter and gather): in a shared buffer, elements starting at
//     at + slot*slots*n; in a private buffer, the member's slice. Chunk j of
//     a region is its elements [j*n, (j+1)*n).
//   - The root's area (slots*n elements, the source of scatter and the
//     destination of gather): in a shared buffer, elements starting at at;
//     in a private buffer, the root's slice.

func (c *call[T]) nslots() int {
	if c.o.allThr {
		return c.r.N()
	}
	return c.t.Size()
}

func (c *call[T]) slot(tid int) int {
	if c.o.allThr {
		return c.t.RankOf(tid)
	}
	return tid
}

// chunk returns member tid's chunk of n elements in buffer b.
func (c *call[T]) chunk(b uint8, tid int, n int64) loc {
	if c.bufs[b].isPr {
		return loc{buf: b, rank: c.t.RankOf(tid)}
	}
	return loc{buf: b, idx: c.bufs[b].at + int64(c.slot(tid))*n}
}

// region returns chunk j (a slot) of member tid's region in buffer b.
func (c *call[T]) region(b uint8, tid, j int, n int64) loc {
	if c.bufs[b].isPr {
		return loc{buf: b, rank: c.t.RankOf(tid), idx: int64(j) * n}
	}
	return loc{buf: b, idx: c.bufs[b].at + (int64(c.slot(tid))*int64(c.nslots())+int64(j))*n}
}

// area returns slot j of the root's area in buffer b.
func (c *call[T]) area(b uint8, root, j int, n int64) loc {
	if c.bufs[b].isPr {
		return loc{buf: b, rank: c.t.RankOf(root), idx: int64(j) * n}
	}
	return loc{buf: b, idx: c.bufs[b].at + int64(j)*n}
}

func checkCount(name string, n int) {
	if n < 0 {
		panic(fmt.Sprintf("coll: %s: negative count %d", name, n))
	}
}

func needValid[T any](name string, bs ...Buf[T]) {
	for _, b := range bs {
		if !b.valid() {
			panic(fmt.Sprintf("coll: %s: zero Buf (use Shared or Private)", name))
		}
	}
}

// Broadcast copies n elements from the root's src to every member's chunk
// of dst (upc_all_broadcast and its get/put/priv forms; Root gives
// _rooted). src is read on the root only. The tree is chosen by WithAlgo.
func Broadcast[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, opts ...Option) error {
	checkCount("Broadcast", n)
	needValid("Broadcast", dst, src)
	c := newCall(t, "Broadcast", dst, src, opts)
	return c.broadcast(ctx, false, int64(n))
}

// BroadcastInPlace copies the root's chunk of buf to every other member's
// chunk (upc_all_broadcast_in_place[_priv]).
func BroadcastInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, opts ...Option) error {
	checkCount("BroadcastInPlace", n)
	needValid("BroadcastInPlace", buf)
	c := newCall(t, "BroadcastInPlace", buf, buf, opts)
	return c.broadcast(ctx, true, int64(n))
}

func (c *call[T]) broadcast(ctx context.Context, inPlace bool, n int64) error {
	if nat := c.native(); nat != nil && c.bufs[bufDst].isPr && c.bufs[bufSrc].isPr {
		sig := func() string { return fmt.Sprintf("n=%d priv", n) }
		if err := c.beginNative(ctx, sig); err != nil {
			return err
		}
		dst := c.privSlice(loc{buf: bufDst}, n)
		if c.t.ID() == c.o.root && !inPlace {
			copy(dst, c.privSlice(loc{buf: bufSrc}, n))
		}
		return c.wrap(nat.Broadcast(ctx, c.t.RankOf(c.o.root), pgas.Bytes(dst)))
	}
	if err := c.begin(ctx, func() string { return fmt.Sprintf("n=%d %s", n, kind(c.bufs[bufDst], c.bufs[bufSrc])) }); err != nil {
		return err
	}
	if c.chainable(n) {
		done, err := c.chainBroadcast(ctx, inPlace, n)
		if err != nil {
			return err
		}
		if done {
			return c.end(ctx)
		}
	}
	root := c.o.root
	tree := broadcastTree(c.t, root, c.o.algo)
	err := c.runRounds(ctx, func() [][]move {
		srcOf := func(tid int) loc { return c.chunk(bufDst, tid, n) }
		var rounds [][]move
		if !inPlace {
			// The root's own chunk, and the root forwards from src.
			rootSrc := c.area(bufSrc, root, 0, n)
			rounds = append(rounds, []move{{rootSrc, c.chunk(bufDst, root, n), n}})
			srcOf = func(tid int) loc {
				if tid == root {
					return rootSrc
				}
				return c.chunk(bufDst, tid, n)
			}
		}
		for i, rd := range tree {
			ms := make([]move, 0, len(rd)+1)
			for _, e := range rd {
				ms = append(ms, move{srcOf(e.from), c.chunk(bufDst, e.to, n), n})
			}
			if i == 0 && len(rounds) > 0 {
				rounds[0] = append(rounds[0], ms...)
			} else {
				rounds = append(rounds, ms)
			}
		}
		return rounds
	}, false)
	if err != nil {
		return err
	}
	return c.end(ctx)
}

// Scatter copies slot m of the root's src area (n elements each) to member
// m's chunk of dst (upc_all_scatter and forms).
func Scatter[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, opts ...Option) error {
	checkCount("Scatter", n)
	needValid("Scatter", dst, src)
	c := newCall(t, "Scatter", dst, src, opts)
	nn := int64(n)
	if c.treeMoves() {
		return c.treeCall(ctx, nn, c.treeScatter)
	}
	return c.flat(ctx, func() string { return fmt.Sprintf("n=%d", n) }, false, func(add func(move)) {
		for m := range c.t.Size() {
			add(move{c.area(bufSrc, c.o.root, c.slot(m), nn), c.chunk(bufDst, m, nn), nn})
		}
	})
}

// ScatterInPlace copies slot m of the root's region of buf to the start of
// member m's region (upc_all_scatter_in_place[_priv]).
func ScatterInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, opts ...Option) error {
	checkCount("ScatterInPlace", n)
	needValid("ScatterInPlace", buf)
	c := newCall(t, "ScatterInPlace", buf, buf, opts)
	nn := int64(n)
	return c.flat(ctx, func() string { return fmt.Sprintf("n=%d", n) }, true, func(add func(move)) {
		for m := range c.t.Size() {
			add(move{c.region(bufSrc, c.o.root, c.slot(m), nn), c.region(bufDst, m, 0, nn), nn})
		}
	})
}

// Gather copies member m's chunk of src to slot m of the root's dst area
// (upc_all_gather and forms).
func Gather[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, opts ...Option) error {
	checkCount("Gather", n)
	needValid("Gather", dst, src)
	c := newCall(t, "Gather", dst, src, opts)
	nn := int64(n)
	if c.treeMoves() {
		return c.treeCall(ctx, nn, c.treeGather)
	}
	return c.flat(ctx, func() string { return fmt.Sprintf("n=%d", n) }, false, func(add func(move)) {
		for m := range c.t.Size() {
			add(move{c.chunk(bufSrc, m, nn), c.area(bufDst, c.o.root, c.slot(m), nn), nn})
		}
	})
}

// GatherInPlace copies the start of member m's region to slot m of the
// root's region (upc_all_gather_in_place[_priv]).
func GatherInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, opts ...Option) error {
	checkCount("GatherInPlace", n)
	needValid("GatherInPlace", buf)
	c := newCall(t, "GatherInPlace", buf, buf, opts)
	nn := int64(n)
	return c.flat(ctx, func() string { return fmt.Sprintf("n=%d", n) }, true, func(add func(move)) {
		for m := range c.t.Size() {
			add(move{c.region(bufSrc, m, 0, nn), c.region(bufDst, c.o.root, c.slot(m), nn), nn})
		}
	})
}

// Allgather copies member m's chunk of src to slot m of every member's
// region of dst (upc_all_gather_all and forms).
func Allgather[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, opts ...Option) error {
	checkCount("Allgather", n)
	needValid("Allgather", dst, src)
	c := newCall(t, "Allgather", dst, src, opts)
	nn := int64(n)
	sig := func() string { return fmt.Sprintf("n=%d", n) }
	plan := func(add func(move)) {
		for m := range c.t.Size() {
			for k := range c.t.Size() {
				add(move{c.chunk(bufSrc, m, nn), c.region(bufDst, k, c.slot(m), nn), nn})
			}
		}
	}
	if c.pairwise() {
		return c.flatPairs(ctx, sig, false, c.allgatherPairs(nn), c.globalOf(plan))
	}
	return c.flat(ctx, sig, false, plan)
}

// AllgatherInPlace copies the start of member m's region of buf to slot m
// of every member's region (upc_all_gather_all_in_place[_priv]).
func AllgatherInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, opts ...Option) error {
	checkCount("AllgatherInPlace", n)
	needValid("AllgatherInPlace", buf)
	c := newCall(t, "AllgatherInPlace", buf, buf, opts)
	nn := int64(n)
	sig := func() string { return fmt.Sprintf("n=%d", n) }
	plan := func(add func(move)) {
		for m := range c.t.Size() {
			for k := range c.t.Size() {
				add(move{c.region(bufSrc, m, 0, nn), c.region(bufDst, k, c.slot(m), nn), nn})
			}
		}
	}
	if c.pairwise() {
		return c.flatPairs(ctx, sig, true, c.allgatherPairs(nn), c.globalOf(plan))
	}
	return c.flat(ctx, sig, true, plan)
}

// allgatherPairs is the structured plan of Allgather and AllgatherInPlace
// between private buffers: every member's first n elements go to its slot
// of every member's slice.
func (c *call[T]) allgatherPairs(n int64) *pairPlan {
	p := c.newPairPlan()
	p.send = func(int) pchunk { return pchunk{at: 0, n: n} }
	p.recv = func(i int) pchunk { return pchunk{at: int64(c.slot(i)) * n, n: n} }
	p.stageBySender(c.esz, func(int) int64 { return n }, func(i int) int64 { return int64(i) * n })
	return p
}

// Exchange copies slot j of member i's src region to slot i of member j's
// dst region, for every pair (upc_all_exchange and forms: all-to-all).
func Exchange[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], n int, opts ...Option) error {
	checkCount("Exchange", n)
	needValid("Exchange", dst, src)
	c := newCall(t, "Exchange", dst, src, opts)
	return c.exchange(ctx, false, int64(n))
}

// ExchangeInPlace swaps slot j of member i's region with slot i of member
// j's region, for every pair (upc_all_exchange_in_place[_priv]).
func ExchangeInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], n int, opts ...Option) error {
	checkCount("ExchangeInPlace", n)
	needValid("ExchangeInPlace", buf)
	c := newCall(t, "ExchangeInPlace", buf, buf, opts)
	return c.exchange(ctx, true, int64(n))
}

func (c *call[T]) exchange(ctx context.Context, inPlace bool, n int64) error {
	sig := func() string { return fmt.Sprintf("n=%d", n) }
	plan := func(add func(move)) {
		for i := range c.t.Size() {
			for j := range c.t.Size() {
				if inPlace && i == j {
					continue
				}
				add(move{c.region(bufSrc, i, c.slot(j), n), c.region(bufDst, j, c.slot(i), n), n})
			}
		}
	}
	if c.pairwise() {
		return c.flatPairs(ctx, sig, inPlace, c.exchangePairs(n, inPlace), c.globalOf(plan))
	}
	if inPlace && c.ownRegions(n) {
		return c.exchangeInPlaceShared(ctx, sig, n)
	}
	return c.flat(ctx, sig, inPlace, plan)
}

// ownRegions reports whether every member's region of a shared buffer
// (nslots chunks of n elements) lies in one block of the member's own
// partition, so that each member reaches its region as a slice.
func (c *call[T]) ownRegions(n int64) bool {
	if c.bufs[bufDst].isPr || c.o.allThr || n == 0 {
		return false
	}
	for tid := range c.t.Size() {
		rank, ok := c.ownsRun(c.region(bufDst, tid, 0, n), int64(c.nslots())*n)
		if !ok || rank != c.t.RankOf(tid) {
			return false
		}
	}
	return true
}

// exchangeInPlaceShared is the in-place exchange of seeds/002 Fig. 3.3 on
// a shared buffer whose regions are their members' own: in stage s = 1 ..
// floor(T/2) member i swaps the chunks of the pair (i, j = (i+s) mod T)
// by itself: its chunk for j into a private array, j's chunk for i
// (fetched) into that place, the private copy to j's chunk for i. Every
// chunk belongs to one pair, so no stage waits for another: only the
// call's entry and exit synchronise. With T even the last stage's pairs
// are met from both ends (i and i+T/2): each member swaps half of the
// pair's chunks, so that two members share the work instead of one doing
// it while the other waits. Extra memory: one private array of n
// elements.
func (c *call[T]) exchangeInPlaceShared(ctx context.Context, sig func() string, n int64) error {
	if err := c.begin(ctx, func() string { return sig() + " " + kind(c.bufs[bufDst], c.bufs[bufSrc]) }); err != nil {
		return err
	}
	size, me := c.t.Size(), c.t.ID()
	if w := (n*c.esz + 7) / 8; int64(len(c.st.swap)) < w {
		c.st.swap = make([]uint64, w)
	}
	tmp := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(c.st.swap))), n)
	h := &pgas.Handle{}
	for s := 1; 2*s <= size; s++ {
		j := (me + s) % size
		lo, hi := int64(0), n
		if 2*s == size { // i and j = i+T/2 both reach this pair
			if me < j {
				hi = n / 2
			} else {
				lo = n / 2
			}
		}
		if lo == hi {
			continue
		}
		mine := c.localRun(c.region(bufDst, me, c.slot(j), n), n)[lo:hi]
		theirs := c.region(bufDst, j, c.slot(me), n)
		theirs.idx += lo
		t := tmp[:hi-lo]
		copy(t, mine)
		c.getRange(ctx, theirs, mine, h)
		if err := h.Wait(ctx); err != nil {
			return c.wrap(err)
		}
		c.putRange(ctx, theirs, t, h)
		if err := h.Wait(ctx); err != nil {
			return c.wrap(err)
		}
	}
	return c.end(ctx)
}

// exchangePairs is the structured plan of Exchange and ExchangeInPlace
// between private buffers: slot j of member i's slice goes to slot i of
// member j's (in place, a member's own slot stays).
func (c *call[T]) exchangePairs(n int64, inPlace bool) *pairPlan {
	p := c.newPairPlan()
	me := p.me
	chunk := func(j int) pchunk {
		ch := pchunk{at: int64(c.slot(j)) * n, n: n}
		if inPlace && j == me {
			ch.n = 0
		}
		return ch
	}
	p.send, p.recv = chunk, chunk
	p.stageBySender(c.esz, func(int) int64 { return n }, func(i int) int64 { return int64(i) * n })
	return p
}

// Permute copies member m's chunk of src to member perm[m]'s chunk of dst
// (upc_all_permute and forms). perm holds team ids (ranks with AllThr:
// then it has THREADS entries, and entries of non-members are ignored but
// must still make a permutation). It panics if perm is not a permutation.
func Permute[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], perm []int, n int, opts ...Option) error {
	checkCount("Permute", n)
	needValid("Permute", dst, src)
	c := newCall(t, "Permute", dst, src, opts)
	return c.permute(ctx, false, perm, int64(n))
}

// PermuteInPlace moves member m's chunk of buf to member perm[m]'s chunk
// (upc_all_permute_in_place[_priv]).
func PermuteInPlace[T any](ctx context.Context, t *pgas.Team, buf Buf[T], perm []int, n int, opts ...Option) error {
	checkCount("PermuteInPlace", n)
	needValid("PermuteInPlace", buf)
	c := newCall(t, "PermuteInPlace", buf, buf, opts)
	return c.permute(ctx, true, perm, int64(n))
}

func (c *call[T]) permute(ctx context.Context, inPlace bool, perm []int, n int64) error {
	checkPerm(c.name, perm, c.nslots())
	return c.flat(ctx, func() string { return fmt.Sprintf("n=%d perm=%v", n, perm) }, inPlace, func(add func(move)) {
		for m := range c.t.Size() {
			to := perm[c.slot(m)]
			if c.o.allThr {
				to = c.t.TeamID(to)
				if to < 0 {
					panic(fmt.Sprintf("coll: %s: perm sends member rank %d to rank %d, which is not in the team", c.name, c.t.RankOf(m), perm[c.slot(m)]))
				}
			}
			if inPlace && to == m {
				continue
			}
			add(move{c.chunk(bufSrc, m, n), c.chunk(bufDst, to, n), n})
		}
	})
}

func checkPerm(name string, perm []int, n int) {
	if len(perm) != n {
		panic(fmt.Sprintf("coll: %s: perm has %d entries, want %d", name, len(perm), n))
	}
	seen := make([]bool, n)
	for i, p := range perm {
		if p < 0 || p >= n || seen[p] {
			panic(fmt.Sprintf("coll: %s: perm %v is not a permutation of [0,%d) (entry %d = %d)", name, perm, n, i, p))
		}
		seen[p] = true
	}
}

// flat runs a one-round collective whose moves plan adds.
func (c *call[T]) flat(ctx context.Context, sig func() string, inPlace bool, plan func(add func(move))) error {
	return c.flatMoves(ctx, sig, inPlace, c.sharedPlan(func() [][]move { return [][]move{movesOf(plan)} }))
}

// movesOf returns the moves plan adds.
func movesOf(plan func(add func(move))) []move {
	var ms []move
	plan(func(m move) { ms = append(ms, m) })
	return ms
}

// flatMoves runs a one-round collective of the plan p, of one round.
func (c *call[T]) flatMoves(ctx context.Context, sig func() string, inPlace bool, p *plan) error {
	fullSig := func() string { return sig() + " " + kind(c.bufs[bufDst], c.bufs[bufSrc]) }
	if nat := c.native(); nat != nil && !inPlace && c.privOnly() && onePerPair(p.rounds[0].moves) {
		if err := c.beginNative(ctx, fullSig); err != nil {
			return err
		}
		return c.wrap(c.alltoallv(ctx, nat, p.rounds[0].moves))
	}
	if err := c.begin(ctx, fullSig); err != nil {
		return err
	}
	if err := c.run(ctx, p, inPlace); err != nil {
		return err
	}
	return c.end(ctx)
}
