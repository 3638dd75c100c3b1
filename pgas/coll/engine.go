package coll

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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

// state is one member's per-team collective state. It holds nothing that
// grows with the team: a table of one entry per member on every member
// is memory in the square of the team's size over a process hosting all
// of them (at 4,000 in-process ranks, gigabytes). The plans of calls are
// shared by the members a process hosts (sharedPlan); a member's own part
// of a structured plan is computed, not stored (pairs.go).
type state struct {
	stage  pgas.Region
	cap    int64 // bytes per half
	parity int64
	calls  int64 // plans taken (sharedPlan), the same sequence on every member

	// The private array of the in-place exchange on shared buffers
	// (exchangeInPlaceShared), reused: bytes, viewed as the call's type.
	swap []uint64

	// The chain broadcast's ring and counts (chain.go).
	chain chainRing
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

// ssPlan returns who does a shared-to-shared move, and how. Unless the
// call is in place (where every read must precede every write), a member
// that owns the whole destination pulls straight into its partition, or
// one that owns the whole source pushes straight from it: one copy, no
// temporary.
func (c *call[T]) ssPlan(m move, inPlace bool) (agent, mode int) {
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

// plan is the rounds of moves of a collective call, with where each
// staged move lands in its receiver's staging area and what each round
// needs: a function of single-valued arguments, the same on every member,
// so the members a process hosts share one (sharedPlan) and only read it.
type plan struct {
	rounds []*planRound
}

// planRound is one round of a plan.
type planRound struct {
	moves []move
	// stage[i] is the byte offset of staged move i (see staged) in its
	// receiver's staging half: after the staged moves to the same
	// receiver before it. nil when nothing is staged.
	stage []int64
	need  int64 // the most staged bytes any receiver is sent

	// priv says every move with elements is between private buffers;
	// then a member acts only on the moves it sends or receives, which
	// the index lists (involved), so that a flat round of a move per
	// member costs a member O(1) instead of a scan of every move: at
	// 100,000 in-process ranks the scans were 10^10 steps a call.
	priv  bool
	start []int32         // dense index: rank r's moves are idx[start[r]:start[r+1]]
	idx   []int32         // the dense index's move indices
	by    map[int][]int32 // sparse index (a round of few moves), by rank

	// The round cut into sub-rounds that fit a staging half of subCap
	// bytes (splitRound), made by the first member that needs them.
	mu     sync.Mutex
	subCap int64
	subs   []*planRound
}

// planKey names a call's plan among its team's: its number among the
// plans the member has taken, with the call's name and element size,
// so that members that disagree on the call (an error the call check
// reports) never take each other's plan.
type planKey struct {
	seq  int64
	name string
	esz  int64
}

// sharedPlan returns the plan of this call whose rounds build returns:
// built by the first member this process hosts that asks, taken by the
// others (pgas.Team.SharedOnce). Every member calls it for the same
// calls in the same order, as they make the same collective calls.
func (c *call[T]) sharedPlan(build func() [][]move) *plan {
	c.st.calls++
	k := planKey{c.st.calls, c.name, c.esz}
	return c.t.SharedOnce(k, func() any { return c.newPlan(build()) }).(*plan)
}

// newPlan makes the plan of rounds.
func (c *call[T]) newPlan(rounds [][]move) *plan {
	p := &plan{rounds: make([]*planRound, len(rounds))}
	for i, ms := range rounds {
		p.rounds[i] = c.newRound(ms)
	}
	return p
}

// newRound stages the moves of one round as subRound lays them out: each
// receiver's staged moves one after another, in plan order.
func (c *call[T]) newRound(ms []move) *planRound {
	pr := &planRound{moves: ms}
	pr.stage, pr.need = c.stageOffsets(ms)
	pr.priv = true
	for _, m := range ms {
		if m.n > 0 && !(c.isPriv(m.src) && c.isPriv(m.dst)) {
			pr.priv = false
			break
		}
	}
	if pr.priv {
		pr.index(c.r.N())
	}
	return pr
}

// index lists, for every rank, the moves of pr (all between private
// buffers) it sends or receives, in plan order.
func (pr *planRound) index(ranks int) {
	ms := pr.moves
	each := func(f func(rank int, i int32)) {
		for i, m := range ms {
			f(m.src.rank, int32(i))
			if m.dst.rank != m.src.rank {
				f(m.dst.rank, int32(i))
			}
		}
	}
	if 8*len(ms) < ranks {
		pr.by = map[int][]int32{}
		each(func(rank int, i int32) { pr.by[rank] = append(pr.by[rank], i) })
		return
	}
	pr.start = make([]int32, ranks+1)
	each(func(rank int, _ int32) { pr.start[rank+1]++ })
	for r := range ranks {
		pr.start[r+1] += pr.start[r]
	}
	pr.idx = make([]int32, pr.start[ranks])
	next := slices.Clone(pr.start[:ranks])
	each(func(rank int, i int32) {
		pr.idx[next[rank]] = i
		next[rank]++
	})
}

// involved calls f with the index of every move of pr that rank acts on,
// in plan order: those it sends or receives where every move is between
// private buffers, else all of them.
func (pr *planRound) involved(rank int, f func(i int, m move)) {
	switch {
	case !pr.priv:
		for i, m := range pr.moves {
			f(i, m)
		}
	case pr.by != nil:
		for _, i := range pr.by[rank] {
			f(int(i), pr.moves[i])
		}
	case pr.start != nil:
		for _, i := range pr.idx[pr.start[rank]:pr.start[rank+1]] {
			f(int(i), pr.moves[i])
		}
	}
}

// stageOffsets returns the staging offset of each staged move of ms
// (nil if none is) and the most staged bytes any receiver is sent.
func (c *call[T]) stageOffsets(ms []move) (stage []int64, need int64) {
	// Per receiver: a slice where the round reaches many ranks, a map
	// where it reaches a few (a broadcast tree's early rounds).
	var dense []int64
	var sparse map[int]int64
	for i, m := range ms {
		if !c.staged(m) {
			continue
		}
		if stage == nil {
			stage = make([]int64, len(ms))
			if 8*len(ms) >= c.r.N() {
				dense = make([]int64, c.r.N())
			} else {
				sparse = map[int]int64{}
			}
		}
		var u int64
		if dense != nil {
			u = dense[m.dst.rank]
			dense[m.dst.rank] = u + m.n*c.esz
		} else {
			u = sparse[m.dst.rank]
			sparse[m.dst.rank] = u + m.n*c.esz
		}
		stage[i] = u
		need = max(need, u+m.n*c.esz)
	}
	return stage, need
}

// run executes the plan's rounds; inPlace means sources and destinations
// share a buffer, so shared sources are read before anything is written.
func (c *call[T]) run(ctx context.Context, p *plan, inPlace bool) error {
	for i, pr := range p.rounds {
		if err := c.round(ctx, pr, inPlace); err != nil {
			return c.wrap(err)
		}
		if i < len(p.rounds)-1 {
			if err := c.t.Barrier(ctx); err != nil {
				return c.wrap(err)
			}
		}
	}
	return nil
}

// runRounds runs rounds as a plan shared with the other members.
func (c *call[T]) runRounds(ctx context.Context, build func() [][]move, inPlace bool) error {
	return c.run(ctx, c.sharedPlan(build), inPlace)
}

// staged reports whether m goes through the receiver's staging area.
func (c *call[T]) staged(m move) bool {
	return m.n > 0 && c.isPriv(m.src) && c.isPriv(m.dst) && m.src.rank != m.dst.rank
}

// round executes one round of moves. Staged moves take room in their
// receiver's staging area; if some receiver needs more than the area holds,
// the round streams: splitRound cuts it into sub-rounds that fit, each with
// its own barrier, alternating halves of the area.
func (c *call[T]) round(ctx context.Context, pr *planRound, inPlace bool) error {
	if !pr.priv {
		c.checkRound(pr.moves)
	}
	capacity, err := c.st.ensure(ctx, c.t, pr.need, c.esz)
	if err != nil {
		return err
	}
	return c.roundAt(ctx, pr, inPlace, capacity)
}

// checkRound checks a round's shared ranges, on every member.
func (c *call[T]) checkRound(moves []move) {
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
	}
}

// roundAt executes a round with a staging area of capacity bytes (from
// ensure).
func (c *call[T]) roundAt(ctx context.Context, pr *planRound, inPlace bool, capacity int64) error {
	if pr.need <= capacity {
		return c.subRound(ctx, pr, inPlace)
	}
	subs := c.splitShared(pr, capacity)
	if inPlace && c.bufs[bufSrc].isPr {
		// A later sub-round must still read the sources an earlier one's
		// unloads overwrite: read them from this rank's own copy.
		src := c.bufs[bufSrc]
		c.bufs[bufSrc].priv = slices.Clone(src.priv)
		defer func() { c.bufs[bufSrc] = src }()
	}
	for i, sub := range subs {
		if i > 0 {
			inPlace = false // only the first sub-round has shared moves
		}
		if err := c.subRound(ctx, sub, inPlace); err != nil {
			return err
		}
	}
	return nil
}

// splitShared returns pr cut into sub-rounds for a staging half of
// capacity bytes, cut by the first member that asks (capacity is the
// same on every member).
func (c *call[T]) splitShared(pr *planRound, capacity int64) []*planRound {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.subs == nil || pr.subCap != capacity {
		subs := c.splitRound(pr.moves, capacity)
		pr.subs = make([]*planRound, len(subs))
		for i, sub := range subs {
			pr.subs[i] = c.newRound(sub)
		}
		pr.subCap = capacity
	}
	return pr.subs
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
	at := map[int]*cursor{}
	for _, m := range moves {
		if !c.staged(m) {
			subs[0] = append(subs[0], m)
			continue
		}
		cur := at[m.dst.rank]
		if cur == nil {
			cur = &cursor{}
			at[m.dst.rank] = cur
		}
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

// subRound executes a round whose staged bytes fit the staging area.
func (c *call[T]) subRound(ctx context.Context, pr *planRound, inPlace bool) error {
	r, me := c.r, c.me
	moves, stageOff, need := pr.moves, pr.stage, pr.need
	var base int64
	if need > 0 {
		base = c.st.stage.Off + (c.st.parity%2)*c.st.cap
		c.st.parity++
	}

	// A1: shared sources this rank reads (agent moves and gets into its own
	// private destinations).
	h := &pgas.Handle{}
	var tmp [][]T // by move, made when a move needs one (rare)
	if !pr.priv {
		for i, m := range moves {
			if m.n <= 0 || c.isPriv(m.src) {
				continue
			}
			switch {
			case !c.isPriv(m.dst):
				switch agent, mode := c.ssPlan(m, inPlace); {
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
	pr.involved(me, func(i int, m move) {
		if m.n <= 0 {
			return
		}
		switch {
		case c.isPriv(m.src) && m.src.rank == me && c.isPriv(m.dst) && m.dst.rank != me:
			c.putBytes(ctx, m.dst.rank, base+stageOff[i], pgas.Bytes(c.privSlice(m.src, m.n)), h)
		case c.isPriv(m.src) && m.src.rank == me && !c.isPriv(m.dst):
			c.putRange(ctx, m.dst, c.privSlice(m.src, m.n), h)
		case tmp != nil && tmp[i] != nil:
			c.putRange(ctx, m.dst, tmp[i], h)
		case !c.isPriv(m.src) && !c.isPriv(m.dst):
			if agent, mode := c.ssPlan(m, inPlace); agent == me && mode == ssPush {
				c.putRange(ctx, m.dst, c.localRun(m.src, m.n), h)
			}
		}
	})
	if err := h.Wait(ctx); err != nil {
		return err
	}
	// This rank's own private-to-private copies, now that its pushes have
	// read their sources and before anything staged lands (so an in-place
	// chunk moves before another chunk overwrites it); they overlap the
	// wait at the barrier.
	pr.involved(me, func(_ int, m move) {
		if m.n > 0 && c.isPriv(m.src) && c.isPriv(m.dst) && m.src.rank == me && m.dst.rank == me {
			copy(c.privSlice(m.dst, m.n), c.privSlice(m.src, m.n))
		}
	})
	if need > 0 {
		if err := c.t.Barrier(ctx); err != nil {
			return err
		}
	}
	// B: unload staged data into this rank's private destinations.
	seg := r.Segment()
	pr.involved(me, func(i int, m move) {
		if m.n > 0 && c.isPriv(m.src) && c.isPriv(m.dst) && m.src.rank != me && m.dst.rank == me {
			off := base + stageOff[i]
			copy(pgas.Bytes(c.privSlice(m.dst, m.n)), seg[off:off+m.n*c.esz])
		}
	})
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
