package coll

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Every data-movement collective is planned the same way on every member,
// from single-valued arguments only: as rounds of chunk moves. A move
// copies n elements from a location in one buffer to a location in another;
// a location is an element index of a shared array, or an offset in one
// rank's private slice. Each rank then executes its own part of each round:
//
//	A  gets: shared sources into its own private destinations, and into
//	   temporaries for the shared-to-shared moves it is the agent for (the
//	   owner of the source); -- team barrier, if in place --
//	   pushes: its private data into shared destinations (put) or into the
//	   receiving rank's staging area in shared memory (for a private
//	   destination), and its temporaries into shared destinations;
//	   then copies of its own private data between its private buffers.
//	   -- team barrier, if anything was staged --
//	B  its private destinations: unloads of its staging area.
//
// So a private slice is only touched by its own rank (seeds/002 fig. 3.7),
// and every byte that crosses ranks goes through segment memory and the
// transport. Staging areas are symmetric, grow-only, and double-buffered by
// round parity, so a round never overwrites staging another rank may still
// be unloading (safe under OutNo: the next staging round's barrier orders
// it).

const (
	bufSrc uint8 = iota
	bufDst
)

type loc struct {
	buf  uint8
	rank int   // private: the rank whose slice; shared: unused
	idx  int64 // shared: element index; private: offset in the slice
}

type move struct {
	src, dst loc
	n        int64
}

// state is one member's per-team collective state.
type state struct {
	moves  []move // reused by flat plans
	stage  pgas.Region
	cap    int64 // bytes per half
	parity int64
	trees  map[treeKey][][]edge // broadcast trees built so far

	// Per-rank byte counts of a round and of a sub-round, kept zero
	// between uses (each use zeroes the entries its moves touched), so
	// that a round of a few moves costs O(moves), not O(ranks): at 1,024
	// in-process ranks fresh arrays were most of a broadcast.
	roundUsed, subUsed []int64

	// The chunks of the last structured plan (pairPlan), and AlltoallV's
	// first-round words, reused.
	psend, precv []pchunk
	a2a          []int64

	// The private array of the in-place exchange on shared buffers
	// (exchangeInPlaceShared), reused: bytes, viewed as the call's type.
	swap []uint64

	// The chain broadcast's ring and counts (chain.go).
	chain chainRing
}

// perRank returns *buf grown to n entries; its entries are zero.
func perRank(buf *[]int64, n int) []int64 {
	if len(*buf) < n {
		*buf = make([]int64, n)
	}
	return (*buf)[:n]
}

type stateKey struct{}

func getState(t *pgas.Team) *state {
	if s, ok := t.Value(stateKey{}).(*state); ok {
		return s
	}
	s := &state{}
	t.SetValue(stateKey{}, s)
	return s
}

// Staging is bounded: a round whose staged data for some destination is
// larger than the staging area streams through it in sub-rounds (see
// round). The area grows on demand up to stageLimit bytes per half; if the
// segment cannot hold that, it settles for less, down to minStage, so a
// collective of any size runs while its segment has a few kilobytes free.
const minStage = 4096

// stageLimit is the largest staging half a team asks for: an eighth of a
// segment (2 MiB per half, 4 MiB in all, with the default 16 MiB).
func stageLimit(r *pgas.Rank) int64 {
	return max(minStage, r.Config().SegmentBytes/8&^7)
}

// ensure grows the staging area towards need bytes per half and returns
// the capacity it has, at least esz bytes (one element) and at most
// max(need, stageLimit). It is collective: every member computes the same
// need, and an allocation that fails, fails on every member alike (AllAlloc
// publishes rank 0's answer), so every member retries the same smaller
// sizes.
func (s *state) ensure(ctx context.Context, t *pgas.Team, need, esz int64) (int64, error) {
	if need <= s.cap {
		return s.cap, nil
	}
	limit := max(stageLimit(t.Rank()), esz)
	want := min(max(need, 2*s.cap, minStage), max(limit, s.cap))
	if want <= s.cap {
		return s.cap, nil // already as large as it may grow
	}
	if s.cap > 0 {
		// Nobody may still be unloading the old area.
		if err := t.AllFree(ctx, s.stage); err != nil {
			return 0, err
		}
		s.stage, s.cap = pgas.Region{}, 0
	}
	floor := max(min(want, minStage), esz)
	for c := want; ; c = max(c/2&^7, floor) {
		reg, err := t.AllAlloc(ctx, 2*c)
		if err == nil {
			s.stage, s.cap = reg, c
			return c, nil
		}
		var oom *pgas.OutOfMemoryError
		if !errors.As(err, &oom) || c == floor {
			return 0, fmt.Errorf("coll: staging area of %d bytes: %w", 2*c, err)
		}
	}
}

// call is one collective invocation on one member.
type call[T any] struct {
	t    *pgas.Team
	r    *pgas.Rank
	me   int
	o    options
	st   *state
	esz  int64
	segE int64 // elements per message
	bufs [2]Buf[T]
	name string
}

func newCall[T any](t *pgas.Team, name string, dst, src Buf[T], opts []Option) *call[T] {
	if t == nil {
		panic(fmt.Sprintf("coll: %s on a nil team", name))
	}
	o := collect(opts)
	if o.root < 0 || o.root >= t.Size() {
		panic(fmt.Sprintf("coll: %s: root %d is not a team id in [0,%d)", name, o.root, t.Size()))
	}
	r := t.Rank()
	esz := int64(unsafe.Sizeof(*new(T)))
	seg := o.segment
	if seg == 0 {
		seg = r.Config().FragmentBytes
	}
	return &call[T]{
		t: t, r: r, me: r.ID(), o: o, st: getState(t), esz: esz,
		segE: max(1, seg/esz), bufs: [2]Buf[T]{src, dst}, name: name,
	}
}

// native returns the transport's native collectives if this call may use
// them: the world team, no AllThr placement, and no NoNative option.
func (c *call[T]) native() transport.Collectives {
	if c.o.noNative || c.o.allThr || !c.t.IsWorld() {
		return nil
	}
	return c.r.Native()
}

// onePerPair reports whether the moves, all between private buffers, have
// at most one chunk per (source rank, destination rank) pair, so that an
// all-to-all-v carries them.
func onePerPair(ms []move) bool {
	seen := map[[2]int]bool{}
	for _, m := range ms {
		if m.n == 0 {
			continue
		}
		k := [2]int{m.src.rank, m.dst.rank}
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// alltoallv carries private-to-private moves with the transport's native
// all-to-all-v (MPI_Alltoallv for the MPI transport).
func (c *call[T]) alltoallv(ctx context.Context, nat transport.Collectives, ms []move) error {
	sc, sd, rc, rd, send, recv := c.nativeArgs()
	esz := int(c.esz)
	for _, m := range ms {
		if m.n == 0 {
			continue
		}
		if m.src.rank == c.me {
			c.privSlice(m.src, m.n) // bounds check
			sc[m.dst.rank], sd[m.dst.rank] = int(m.n)*esz, int(m.src.idx)*esz
		}
		if m.dst.rank == c.me {
			c.privSlice(m.dst, m.n)
			rc[m.src.rank], rd[m.src.rank] = int(m.n)*esz, int(m.dst.idx)*esz
		}
	}
	return nat.Alltoallv(ctx, send, sc, sd, recv, rc, rd)
}

// nativeArgs returns what a native all-to-all-v takes: zeroed send and
// receive counts and displacements, one per rank, and the private
// buffers as bytes.
func (c *call[T]) nativeArgs() (sc, sd, rc, rd []int, send, recv []byte) {
	n := c.r.N()
	sc, sd, rc, rd = make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	if s := c.bufs[bufSrc].priv; len(s) > 0 {
		send = pgas.Bytes(s)
	}
	if d := c.bufs[bufDst].priv; len(d) > 0 {
		recv = pgas.Bytes(d)
	}
	return sc, sd, rc, rd, send, recv
}

// beginNative is begin for a call served by a native collective: the
// argument check still runs, but no entry barrier, since only private
// buffers are involved and the native call synchronises itself.
func (c *call[T]) beginNative(ctx context.Context, sig func() string) error {
	if !c.r.Config().NoCheck {
		return c.t.CheckSame(ctx, fmt.Sprintf("%s(%s %s)", c.name, sig(), c.o))
	}
	return nil
}

// begin checks arguments across members (unless Config.NoCheck) and synchronises
// on entry. sig describes the single-valued arguments.
func (c *call[T]) begin(ctx context.Context, sig func() string) error {
	if !c.r.Config().NoCheck {
		// CheckSame's team barrier is also the entry synchronisation.
		return c.wrap(c.t.CheckSame(ctx, fmt.Sprintf("%s(%s %s)", c.name, sig(), c.o)))
	}
	if c.o.sync.inSync() && !c.privOnly() {
		return c.wrap(c.t.Barrier(ctx))
	}
	return nil
}

// privOnly reports whether both buffers are private. Then only their owners
// touch them, staging is protected by its own barriers, and the sync modes
// have no observable effect: the entry and exit barriers are skipped.
func (c *call[T]) privOnly() bool { return c.bufs[bufSrc].isPr && c.bufs[bufDst].isPr }

// end synchronises on exit.
func (c *call[T]) end(ctx context.Context) error {
	if c.o.sync.outSync() && !c.privOnly() {
		return c.wrap(c.t.Barrier(ctx))
	}
	return c.wrap(c.r.Fence(ctx))
}

func (c *call[T]) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("coll: %s: %w", c.name, err)
}

func (c *call[T]) isPriv(l loc) bool { return c.bufs[l.buf].isPr }

// privSlice returns this rank's private elements [idx, idx+n) of l's buffer.
func (c *call[T]) privSlice(l loc, n int64) []T {
	s := c.bufs[l.buf].priv
	if l.idx < 0 || l.idx+n > int64(len(s)) {
		panic(fmt.Sprintf("coll: %s: rank %d's private %s buffer has %d elements, needs [%d,%d)",
			c.name, c.me, [...]string{"source", "destination"}[l.buf], len(s), l.idx, l.idx+n))
	}
	return s[l.idx : l.idx+n]
}

func (c *call[T]) arr(l loc) *pgas.Array[T] { return c.bufs[l.buf].arr }

// checkShared panics if a shared location's range is outside its array.
func (c *call[T]) checkShared(l loc, n int64) {
	a := c.arr(l)
	if l.idx < 0 || l.idx+n > a.Len() {
		panic(fmt.Sprintf("coll: %s: shared %s elements [%d,%d) outside array of %d",
			c.name, [...]string{"source", "destination"}[l.buf], l.idx, l.idx+n, a.Len()))
	}
}

// agent returns the rank that performs a shared-to-shared move: the owner
// of the first source element if it is a member, else the owner of the
// first destination element if it is, else the team's leader. Shared
// arrays span every rank of the job, so a team's data may live on ranks
// outside it.
func (c *call[T]) agent(m move) int {
	if rank, _ := c.arr(m.src).Locate(m.src.idx); c.t.Contains(rank) {
		return rank
	}
	if rank, _ := c.arr(m.dst).Locate(m.dst.idx); c.t.Contains(rank) {
		return rank
	}
	return c.t.Leader()
}

// How a shared-to-shared move is done.
const (
	ssTmp  = iota // the agent gets into a temporary, then puts
	ssPull        // the destination's owner gets into its own partition
	ssPush        // the source's owner puts from its own partition
)

// sharedPlan returns who does a shared-to-shared move, and how. Unless the
// call is in place (where every read must precede every write), a member
// that owns the whole destination pulls straight into its partition, or
// one that owns the whole source pushes straight from it: one copy, no
// temporary.
func (c *call[T]) sharedPlan(m move, inPlace bool) (agent, mode int) {
	if !inPlace {
		if rank, ok := c.ownsRun(m.dst, m.n); ok {
			return rank, ssPull
		}
		if rank, ok := c.ownsRun(m.src, m.n); ok {
			return rank, ssPush
		}
	}
	return c.agent(m), ssTmp
}

// ownsRun reports whether the n elements at shared location l lie in one
// block, owned by a member, and returns that member's rank.
func (c *call[T]) ownsRun(l loc, n int64) (int, bool) {
	lay := c.arr(l).Layout()
	if lay.Phase(l.idx)+n > lay.Block {
		return 0, false
	}
	rank := lay.Owner(l.idx)
	return rank, c.t.Contains(rank)
}

// localRun returns this rank's partition slice holding the n elements at
// l, which ownsRun said this rank owns.
func (c *call[T]) localRun(l loc, n int64) []T {
	a := c.arr(l)
	li := a.Layout().LocalIndex(l.idx)
	return a.Local()[li : li+n]
}

// run executes the rounds; inPlace means sources and destinations share a
// buffer, so shared sources are read before anything is written.
func (c *call[T]) run(ctx context.Context, rounds [][]move, inPlace bool) error {
	for i, rd := range rounds {
		if err := c.round(ctx, rd, inPlace); err != nil {
			return c.wrap(err)
		}
		if i < len(rounds)-1 {
			if err := c.t.Barrier(ctx); err != nil {
				return c.wrap(err)
			}
		}
	}
	return nil
}

// staged reports whether m goes through the receiver's staging area.
func (c *call[T]) staged(m move) bool {
	return m.n > 0 && c.isPriv(m.src) && c.isPriv(m.dst) && m.src.rank != m.dst.rank
}

// round executes one round of moves. Staged moves take room in their
// receiver's staging area; if some receiver needs more than the area holds,
// the round streams: splitRound cuts it into sub-rounds that fit, each with
// its own barrier, alternating halves of the area.
func (c *call[T]) round(ctx context.Context, moves []move, inPlace bool) error {
	need := c.roundNeed(moves)
	capacity, err := c.st.ensure(ctx, c.t, need, c.esz)
	if err != nil {
		return err
	}
	return c.roundAt(ctx, moves, inPlace, need, capacity)
}

// roundNeed checks a round's shared ranges and returns its need: the most
// staged bytes any receiver is sent.
func (c *call[T]) roundNeed(moves []move) int64 {
	// Per receiver rank, as slices: a round has a move per rank pair or
	// per rank, and a map per call cost more than the moves at hundreds
	// of ranks.
	used := perRank(&c.st.roundUsed, c.r.N())
	defer c.unuse(used, moves)
	var need int64
	for _, m := range moves {
		if m.n <= 0 {
			continue
		}
		if !c.isPriv(m.src) {
			c.checkShared(m.src, m.n)
		}
		if !c.isPriv(m.dst) {
			c.checkShared(m.dst, m.n)
		}
		if c.staged(m) {
			used[m.dst.rank] += m.n * c.esz
			need = max(need, used[m.dst.rank])
		}
	}
	return need
}

// unuse zeroes the entries of used that moves touched.
func (c *call[T]) unuse(used []int64, moves []move) {
	for _, m := range moves {
		if c.staged(m) {
			used[m.dst.rank] = 0
		}
	}
}

// roundAt executes a round whose need roundNeed returned, with a staging
// area of capacity bytes (from ensure).
func (c *call[T]) roundAt(ctx context.Context, moves []move, inPlace bool, need, capacity int64) error {
	if need <= capacity {
		return c.subRound(ctx, moves, inPlace, need)
	}
	subs := c.splitRound(moves, capacity)
	if inPlace && c.bufs[bufSrc].isPr {
		// A later sub-round must still read the sources an earlier one's
		// unloads overwrite: read them from this rank's own copy.
		src := c.bufs[bufSrc]
		c.bufs[bufSrc].priv = slices.Clone(src.priv)
		defer func() { c.bufs[bufSrc] = src }()
	}
	used := perRank(&c.st.roundUsed, c.r.N())
	for i, sub := range subs {
		if i > 0 {
			inPlace = false // only the first sub-round has shared moves
		}
		var subNeed int64
		for _, m := range sub {
			if c.staged(m) {
				used[m.dst.rank] += m.n * c.esz
				subNeed = max(subNeed, used[m.dst.rank])
			}
		}
		c.unuse(used, sub)
		if err := c.subRound(ctx, sub, inPlace, subNeed); err != nil {
			return err
		}
	}
	return nil
}

// splitRound cuts a round into sub-rounds in which no receiver is sent more
// than capacity staged bytes. The first sub-round keeps every move that is
// not staged; staged moves are split at element boundaries and dealt, in
// order, to the first sub-round with room at their receiver. It is a pure
// function of single-valued arguments, so every member cuts alike.
func (c *call[T]) splitRound(moves []move, capacity int64) [][]move {
	perSub := max(1, capacity/c.esz) // elements a receiver takes per sub-round
	subs := [][]move{nil}
	type cursor struct{ sub, used int64 } // per receiver
	at := make([]cursor, c.r.N())
	for _, m := range moves {
		if !c.staged(m) {
			subs[0] = append(subs[0], m)
			continue
		}
		cur := &at[m.dst.rank]
		for m.n > 0 {
			room := perSub - cur.used
			if room == 0 {
				cur.sub, cur.used = cur.sub+1, 0
				continue
			}
			take := min(m.n, room)
			for int64(len(subs)) <= cur.sub {
				subs = append(subs, nil)
			}
			piece := m
			piece.n = take
			subs[cur.sub] = append(subs[cur.sub], piece)
			cur.used += take
			m.src.idx += take
			m.dst.idx += take
			m.n -= take
		}
	}
	return subs
}

// subRound executes moves whose staged bytes fit the staging area: need is
// the most any receiver is sent.
func (c *call[T]) subRound(ctx context.Context, moves []move, inPlace bool, need int64) error {
	r, me := c.r, c.me
	stageOff := make([]int64, len(moves))
	used := perRank(&c.st.subUsed, c.r.N())
	defer func() {
		for _, m := range moves {
			if c.staged(m) {
				used[m.dst.rank] = 0
			}
		}
	}()
	for i, m := range moves {
		if c.staged(m) {
			stageOff[i] = used[m.dst.rank]
			used[m.dst.rank] += m.n * c.esz
		}
	}
	var base int64
	if need > 0 {
		base = c.st.stage.Off + (c.st.parity%2)*c.st.cap
		c.st.parity++
	}

	// A1: shared sources this rank reads (agent moves and gets into its own
	// private destinations).
	h := &pgas.Handle{}
	var tmp [][]T // by move, made when a move needs one (rare)
	for i, m := range moves {
		if m.n <= 0 || c.isPriv(m.src) {
			continue
		}
		switch {
		case !c.isPriv(m.dst):
			switch agent, mode := c.sharedPlan(m, inPlace); {
			case agent != me:
			case mode == ssPull:
				c.getRange(ctx, m.src, c.localRun(m.dst, m.n), h)
			case mode == ssTmp:
				if tmp == nil {
					tmp = make([][]T, len(moves))
				}
				tmp[i] = make([]T, m.n)
				c.getRange(ctx, m.src, tmp[i], h)
			}
		case c.isPriv(m.dst) && m.dst.rank == me:
			c.getRange(ctx, m.src, c.privSlice(m.dst, m.n), h)
		}
	}
	if err := h.Wait(ctx); err != nil {
		return err
	}
	if inPlace {
		if err := c.t.Barrier(ctx); err != nil {
			return err
		}
	}
	// A2: pushes.
	for i, m := range moves {
		if m.n <= 0 {
			continue
		}
		switch {
		case c.isPriv(m.src) && m.src.rank == me && c.isPriv(m.dst) && m.dst.rank != me:
			c.putBytes(ctx, m.dst.rank, base+stageOff[i], pgas.Bytes(c.privSlice(m.src, m.n)), h)
		case c.isPriv(m.src) && m.src.rank == me && !c.isPriv(m.dst):
			c.putRange(ctx, m.dst, c.privSlice(m.src, m.n), h)
		case tmp != nil && tmp[i] != nil:
			c.putRange(ctx, m.dst, tmp[i], h)
		case !c.isPriv(m.src) && !c.isPriv(m.dst):
			if agent, mode := c.sharedPlan(m, inPlace); agent == me && mode == ssPush {
				c.putRange(ctx, m.dst, c.localRun(m.src, m.n), h)
			}
		}
	}
	if err := h.Wait(ctx); err != nil {
		return err
	}
	// This rank's own private-to-private copies, now that its pushes have
	// read their sources and before anything staged lands (so an in-place
	// chunk moves before another chunk overwrites it); they overlap the
	// wait at the barrier.
	for _, m := range moves {
		if m.n > 0 && c.isPriv(m.src) && c.isPriv(m.dst) && m.src.rank == me && m.dst.rank == me {
			copy(c.privSlice(m.dst, m.n), c.privSlice(m.src, m.n))
		}
	}
	if need > 0 {
		if err := c.t.Barrier(ctx); err != nil {
			return err
		}
	}
	// B: unload staged data into this rank's private destinations.
	seg := r.Segment()
	for i, m := range moves {
		if m.n > 0 && c.isPriv(m.src) && c.isPriv(m.dst) && m.src.rank != me && m.dst.rank == me {
			off := base + stageOff[i]
			copy(pgas.Bytes(c.privSlice(m.dst, m.n)), seg[off:off+m.n*c.esz])
		}
	}
	return nil
}

// getRange reads l's elements into dst in messages of at most segE
// elements.
func (c *call[T]) getRange(ctx context.Context, l loc, dst []T, h *pgas.Handle) {
	a := c.arr(l)
	for k := int64(0); k < int64(len(dst)); k += c.segE {
		e := min(k+c.segE, int64(len(dst)))
		hh := a.GetRangeAsync(ctx, dst[k:e], l.idx+k)
		h.Add(hh)
	}
}

func (c *call[T]) putRange(ctx context.Context, l loc, src []T, h *pgas.Handle) {
	a := c.arr(l)
	for k := int64(0); k < int64(len(src)); k += c.segE {
		e := min(k+c.segE, int64(len(src)))
		h.Add(a.PutRangeAsync(ctx, l.idx+k, src[k:e]))
	}
}

func (c *call[T]) putBytes(ctx context.Context, rank int, off int64, b []byte, h *pgas.Handle) {
	seg := c.segE * c.esz
	for k := int64(0); k < int64(len(b)); k += seg {
		e := min(k+seg, int64(len(b)))
		c.r.PutBytesAsync(ctx, rank, off+k, b[k:e], h)
	}
}
