package coll

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// AlltoallV is the all-to-all with variable chunks for callers that know
// only their own row and column of the count matrix (MPI_Alltoallv with
// packed displacements). This member sends sendCounts[j] elements to team
// id j, packed in src in j order from offset 0, and receives
// recvCounts[i] elements from team id i, packed in dst in i order from
// offset 0; so it is ExchangeV with nil displacements, whose count matrix
// has this member's sendCounts as its row and its recvCounts as its
// column. sendCounts[j] of member i must equal recvCounts[i] of member j.
// The counts are per member, not single-valued: the call check compares
// only the call (its name and options).
//
// Both buffers must be private. On the world team of a transport with a
// native all-to-all-v (MPI_Alltoallv), and unless NoNative, that one call
// does the work. Otherwise the receivers first tell their senders, in one
// Exchange of three int64 per member pair, where each chunk lands in the
// receiver's staging area (after the chunks of the senders before it, as
// ExchangeV stages them), how many elements the receiver expects, and how
// many it receives in all, whose maximum sizes the staging area; then
// every chunk goes to its receiver's staging area in one put (split at
// Segment) and is unloaded after a barrier, streaming in more rounds when
// a member receives more than the staging area holds. That costs two
// staging rounds, each a barrier and a put per non-empty chunk, and
// O(Size) time and memory per member. A count matrix known to every
// member is cheaper through ExchangeV, which needs no first round but
// costs each member O(Size²) to read.
//
// It panics if a buffer is shared, if AllThr is given, if a count slice
// does not have Size entries or has a negative one, if src is shorter
// than sendCounts add up to or dst shorter than recvCounts add up to (on
// the member concerned), or, on the sender, if a member expects another
// count than its sender sends (over a native all-to-all-v that mismatch
// is the transport's to report).
func AlltoallV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], sendCounts, recvCounts []int, opts ...Option) error {
	needValid("AlltoallV", dst, src)
	c := newCall(t, "AlltoallV", dst, src, opts)
	if !c.privOnly() {
		panic(fmt.Sprintf("coll: AlltoallV: buffers must be private (Private), not %s and %s", dst, src))
	}
	if c.o.allThr {
		panic("coll: AlltoallV: AllThr is not defined for AlltoallV (counts are by team id)")
	}
	S := t.Size()
	checkCounts("AlltoallV", "sendCounts", sendCounts, S)
	checkCounts("AlltoallV", "recvCounts", recvCounts, S)
	for _, b := range []struct {
		what   string
		have   int
		counts []int
	}{{"source", len(src.priv), sendCounts}, {"destination", len(dst.priv), recvCounts}} {
		if n := sum(b.counts); b.have < n {
			panic(fmt.Sprintf("coll: AlltoallV: rank %d's private %s buffer has %d elements, its counts add up to %d",
				c.me, b.what, b.have, n))
		}
	}
	sig := func() string { return kind(dst, src) }
	if nat := c.native(); nat != nil {
		if err := c.beginNative(ctx, sig); err != nil {
			return err
		}
		return c.wrap(c.alltoallvPairs(ctx, nat, c.alltoallPlan(sendCounts, recvCounts, nil)))
	}
	if err := c.begin(ctx, sig); err != nil {
		return err
	}
	// Where each sender's chunk lands in this member's staging area, what
	// it expects from the sender, and its staged total.
	a2a := make([]int64, 6*S)
	mine, theirs := a2a[:3*S], a2a[3*S:6*S]
	var total int64
	for i, n := range recvCounts {
		mine[3*i], mine[3*i+1] = total*c.esz, int64(n)
		if i != c.t.ID() {
			total += int64(n)
		}
	}
	for i := range S {
		mine[3*i+2] = total * c.esz
	}
	x := newCall(t, "AlltoallV", Private(theirs), Private(mine), opts)
	if err := x.runPairs(ctx, x.exchangePairs(3, false), false, nil); err != nil {
		return c.wrap(err)
	}
	p := c.alltoallPlan(sendCounts, recvCounts, mine)
	for j, n := range sendCounts {
		if want := theirs[3*j+1]; int64(n) != want {
			panic(fmt.Sprintf("coll: AlltoallV: rank %d sends %d elements to team id %d (sendCounts[%d]), which expects %d (its recvCounts[%d])",
				c.me, n, j, j, want, c.t.ID()))
		}
		p.need = max(p.need, theirs[3*j+2])
	}
	send := p.send
	p.send = func(j int) pchunk { ch := send(j); ch.stage = theirs[3*j]; return ch }
	if err := c.runPairs(ctx, p, false, nil); err != nil {
		return c.wrap(err)
	}
	return c.end(ctx)
}

// alltoallPlan is AlltoallV's structured plan with packed chunks; stage,
// if not nil, holds the staging offset of the chunk from sender i at
// stage[3*i] (the senders' offsets and the need are the caller's to fill
// in).
func (c *call[T]) alltoallPlan(sendCounts, recvCounts []int, stage []int64) *pairPlan {
	p := c.newPairPlan()
	sendAt, recvAt := prefix(sendCounts), prefix(recvCounts)
	p.send = func(j int) pchunk { return pchunk{at: int64(sendAt[j]), n: int64(sendCounts[j])} }
	p.recv = func(i int) pchunk {
		ch := pchunk{at: int64(recvAt[i]), n: int64(recvCounts[i])}
		if stage != nil {
			ch.stage = stage[3*i]
		}
		return ch
	}
	return p
}
