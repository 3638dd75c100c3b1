package coll

import (
	"context"
	"fmt"
	"math"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Structured plans. The one-round collectives whose buffers are both
// private (Allgather, Exchange and their in-place forms, AllgatherV,
// ExchangeV, ExchangeVMerge, AlltoallV) move at most one chunk between
// every ordered pair of members. Their global plan lists all Size² chunks
// on every member, Size³ work over the team (at 1,024 in-process ranks an
// Allgather of two words did not finish); a structured plan lists only
// this member's 2·Size: the chunk it sends to each member and the chunk it
// receives from each.
//
// Where a chunk lands in its receiver's staging area is where the global
// plan puts it: after the staged chunks (those between different members
// with elements) sent to the same receiver before it in the global order,
// sender by sender in team-id order. Each collective computes that by
// formula, O(Size) when a sender sends every member the same count
// (stageBySender) and one pass over the count matrix when the matrix is
// the argument (stageMatrix); AlltoallV learns it from its receivers. The
// round's need, the most staged bytes any member receives, comes out the
// same on every member, as ensure requires. So the staging layout, the
// messages and the barriers are those of the global plan.
//
// When need exceeds the staging area the round streams. A collective that
// has a global plan then runs it (splitRound); every member decides alike,
// since need is single-valued. AlltoallV, which has none, streams its
// structured plan: sub-round k carries elements [k·E, (k+1)·E) of every
// receiver's staged stream (E = capacity/esz), which is how splitRound
// deals out a global plan's chunks.

// pchunk is one chunk of a structured plan, seen from this member: n
// elements at offset at of this member's private slice (its source for a
// chunk it sends, its destination for one it receives), staged at byte
// stage of the receiver's staging area if it is staged (n > 0, and sender
// and receiver differ).
type pchunk struct{ at, n, stage int64 }

// pairPlan is this member's part of a one-round collective between
// private buffers. Its chunks are computed when asked for, from the
// call's arguments, not stored: a list of Size chunks on every member is
// memory in the square of the team's size over a process that hosts all
// of them.
type pairPlan struct {
	me   int                // this member's team id
	size int                // the team's size
	send func(j int) pchunk // the chunk to receiver j; send(me) is what this member keeps
	recv func(i int) pchunk // the chunk from sender i; recv(me) is where send(me) goes
	need int64              // the most staged bytes any member receives
}

// pairwise reports whether this call runs from a structured plan: both
// buffers are private, and the global plan is not forced (a test switch).
func (c *call[T]) pairwise() bool { return c.privOnly() && !c.o.global }

// newPairPlan returns a plan of this member with no chunks yet.
func (c *call[T]) newPairPlan() *pairPlan {
	none := func(int) pchunk { return pchunk{} }
	return &pairPlan{me: c.t.ID(), size: c.t.Size(), send: none, recv: none}
}

// stageBySender fills in the staging offsets and need of a plan in which
// member i sends cnt(i) elements to every other member (what it keeps
// does not matter): the chunk from i to j is staged after the chunks of
// members i' < i other than j. pre(i) is the sum of cnt(i') over i' < i.
func (p *pairPlan) stageBySender(esz int64, cnt, pre func(i int) int64) {
	var total int64
	least := int64(math.MaxInt64)
	for i := range p.size {
		n := cnt(i)
		total += n
		least = min(least, n)
	}
	me, mine, atMe := p.me, cnt(p.me), pre(p.me)
	send, recv := p.send, p.recv
	p.recv = func(i int) pchunk {
		ch := recv(i)
		st := pre(i)
		if me < i {
			st -= mine
		}
		ch.stage = st * esz
		return ch
	}
	p.send = func(j int) pchunk {
		ch := send(j)
		st := atMe
		if j < me {
			st -= cnt(j)
		}
		ch.stage = st * esz
		return ch
	}
	p.need = (total - least) * esz // what the member sending least receives
}

// stageMatrix fills in the staging offsets and need of a plan whose chunk
// from member i to member j has counts[slot(i)*nslots + slot(j)] elements.
// It reads every member's row once: O(Size²) time, as the matrix argument
// itself is, and O(Size) memory for the call.
func (c *call[T]) stageMatrix(p *pairPlan, counts []int) {
	S, NS := c.t.Size(), c.nslots()
	col := make([]int64, S) // per receiver: staged elements so far
	sendStage, recvStage := make([]int64, S), make([]int64, S)
	for i := range S {
		if i == p.me {
			for j := range S {
				sendStage[j] = col[j] * c.esz
			}
		}
		recvStage[i] = col[p.me] * c.esz
		row := counts[c.slot(i)*NS:][:NS]
		if c.o.allThr {
			for j := range S {
				if j != i {
					col[j] += int64(row[c.slot(j)])
				}
			}
			continue
		}
		for j, n := range row {
			col[j] += int64(n)
		}
		col[i] -= int64(row[i]) // a member's own chunk is not staged
	}
	p.need = 0
	for _, v := range col {
		p.need = max(p.need, v*c.esz)
	}
	send, recv := p.send, p.recv
	p.send = func(j int) pchunk { ch := send(j); ch.stage = sendStage[j]; return ch }
	p.recv = func(i int) pchunk { ch := recv(i); ch.stage = recvStage[i]; return ch }
}

// inOrder calls send(j) and recv(i) for this member's chunks in the order
// of the global plan (sender by sender, each to every receiver), so that
// checks along it fail on the chunk they fail on along the global plan.
func (p *pairPlan) inOrder(send, recv func(tid int)) {
	for i := range p.size {
		if i != p.me {
			recv(i)
			continue
		}
		for j := range p.size {
			send(j)
			if j == p.me {
				recv(j)
			}
		}
	}
}

// window returns the part of a chunk that lies in elements [lo, hi) of its
// receiver's staged stream, as element offsets [a, b) in the chunk, and
// whether it is not empty.
func (s pchunk) window(lo, hi, esz int64) (a, b int64, ok bool) {
	st := s.stage / esz
	a, b = max(st, lo)-st, min(st+s.n, hi)-st
	return a, b, a < b
}

// vcheckPairs is vcheck for a structured plan: this member checks the
// chunks it can see, that those it sends fit its source and those it
// receives fit its destination without overlapping. The other members'
// chunks are theirs to check; a panic on one member fails the job.
func (c *call[T]) vcheckPairs(p *pairPlan) {
	var dsts []span
	p.inOrder(func(j int) {
		if s := p.send(j); s.n > 0 {
			l := loc{buf: bufSrc, rank: c.me, idx: s.at}
			c.vcheckLoc(l, s.n, false)
			c.vcheckLoc(l, s.n, true)
		}
	}, func(i int) {
		if r := p.recv(i); r.n > 0 {
			l := loc{buf: bufDst, rank: c.me, idx: r.at}
			c.vcheckLoc(l, r.n, false)
			c.vcheckLoc(l, r.n, true)
			dsts = append(dsts, span{rank: c.me, lo: r.at, hi: r.at + r.n})
		}
	})
	c.checkOverlap(dsts)
}

// globalOf returns the global plan that plan adds, for runPairs.
func (c *call[T]) globalOf(plan func(add func(move))) func() []move {
	return func() []move { return movesOf(plan) }
}

// flatPairs runs a one-round collective between private buffers from this
// member's plan p, as flatMoves runs the global plan: with the transport's
// native all-to-all-v where there is one (not in place), else through
// staging (runPairs; global is the global plan, used only if the round
// streams).
func (c *call[T]) flatPairs(ctx context.Context, sig func() string, inPlace bool, p *pairPlan, global func() []move) error {
	if c.o.verify != nil {
		c.o.verify(c.t, c.esz, p, global())
	}
	fullSig := func() string { return sig() + " " + kind(c.bufs[bufDst], c.bufs[bufSrc]) }
	if nat := c.native(); nat != nil && !inPlace {
		if err := c.beginNative(ctx, fullSig); err != nil {
			return err
		}
		return c.wrap(c.alltoallvPairs(ctx, nat, p))
	}
	if err := c.begin(ctx, fullSig); err != nil {
		return err
	}
	if err := c.runPairs(ctx, p, inPlace, global); err != nil {
		return c.wrap(err)
	}
	return c.end(ctx)
}

// runPairs runs a one-round collective between private buffers from this
// member's plan p; inPlace says the source and destination are one slice.
// A round that does not fit the staging area streams: through the global
// plan that global returns if global is not nil, else (never in place)
// through p.
func (c *call[T]) runPairs(ctx context.Context, p *pairPlan, inPlace bool, global func() []move) error {
	capacity, err := c.st.ensure(ctx, c.t, p.need, c.esz)
	if err != nil {
		return err
	}
	if p.need <= capacity {
		return c.pairRound(ctx, p, inPlace, 0, math.MaxInt64, p.need > 0)
	}
	if global != nil {
		pr := c.sharedPlan(func() [][]move { return [][]move{global()} }).rounds[0]
		if pr.need != p.need {
			panic(fmt.Sprintf("coll: %s: internal error: structured plan needs %d staging bytes, global plan %d", c.name, p.need, pr.need))
		}
		return c.roundAt(ctx, pr, inPlace, capacity)
	}
	if inPlace {
		// A later sub-round would read sources an earlier one's unloads
		// overwrote; the in-place collectives stream their global plan.
		panic(fmt.Sprintf("coll: %s: internal error: an in-place structured round streams without a global plan", c.name))
	}
	perSub := max(1, capacity/c.esz) // elements a receiver takes per sub-round
	subs := (p.need/c.esz + perSub - 1) / perSub
	for k := range subs {
		if err := c.pairRound(ctx, p, false, k*perSub, (k+1)*perSub, true); err != nil {
			return err
		}
	}
	return nil
}

// pairRound executes the part of p that lies in elements [lo, hi) of every
// receiver's staged stream, each piece staged at its place in the stream
// less lo; the sub-round with lo == 0 also copies this member's own chunk.
// staged says whether any member receives anything in it (then it takes a
// half of the staging area and ends with a barrier). It does what
// subRound does with the moves of the global plan (or of one of
// splitRound's sub-rounds): the same puts, copies and barriers.
func (c *call[T]) pairRound(ctx context.Context, p *pairPlan, inPlace bool, lo, hi int64, staged bool) error {
	me, esz := p.me, c.esz
	var base int64
	if staged {
		base = c.st.stage.Off + (c.st.parity%2)*c.st.cap
		c.st.parity++
	}
	if inPlace {
		if err := c.t.Barrier(ctx); err != nil {
			return err
		}
	}
	h := &pgas.Handle{}
	for j := range p.size {
		if j == me {
			continue
		}
		s := p.send(j)
		a, b, ok := s.window(lo, hi, esz)
		if !ok {
			continue
		}
		src := c.privSlice(loc{buf: bufSrc, idx: s.at + a}, b-a)
		c.putBytes(ctx, c.t.RankOf(j), base+(s.stage/esz+a-lo)*esz, pgas.Bytes(src), h)
	}
	if err := h.Wait(ctx); err != nil {
		return err
	}
	if s := p.send(me); lo == 0 && s.n > 0 {
		copy(c.privSlice(loc{buf: bufDst, idx: p.recv(me).at}, s.n), c.privSlice(loc{buf: bufSrc, idx: s.at}, s.n))
	}
	if staged {
		if err := c.t.Barrier(ctx); err != nil {
			return err
		}
	}
	seg := c.r.Segment()
	for i := range p.size {
		if i == me {
			continue
		}
		r := p.recv(i)
		a, b, ok := r.window(lo, hi, esz)
		if !ok {
			continue
		}
		off := base + (r.stage/esz+a-lo)*esz
		copy(pgas.Bytes(c.privSlice(loc{buf: bufDst, idx: r.at + a}, b-a)), seg[off:off+(b-a)*esz])
	}
	return nil
}

// alltoallvPairs carries a structured plan with the transport's native
// all-to-all-v, as alltoallv carries a global one.
func (c *call[T]) alltoallvPairs(ctx context.Context, nat transport.Collectives, p *pairPlan) error {
	sc, sd, rc, rd, send, recv := c.nativeArgs()
	esz := int(c.esz)
	p.inOrder(func(j int) {
		if s := p.send(j); s.n > 0 {
			c.privSlice(loc{buf: bufSrc, idx: s.at}, s.n) // bounds check
			q := c.t.RankOf(j)
			sc[q], sd[q] = int(s.n)*esz, int(s.at)*esz
		}
	}, func(i int) {
		if r := p.recv(i); r.n > 0 {
			c.privSlice(loc{buf: bufDst, idx: r.at}, r.n)
			q := c.t.RankOf(i)
			rc[q], rd[q] = int(r.n)*esz, int(r.at)*esz
		}
	})
	return nat.Alltoallv(ctx, send, sc, sd, recv, rc, rd)
}
