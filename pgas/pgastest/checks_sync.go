package pgastest

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// idRecord is what a rank says about itself in checkIDs.
type idRecord struct {
	ID1, N, Node, Nodes, RanksPerNode int64 // ID1 is ID+1, so that an unwritten slot is visible
}

// checkIDs: ID, N, Node, NodeOf and Nodes agree with the Config and with
// what every other rank says about itself.
func checkIDs(ctx context.Context, r *pgas.Rank) error {
	n, me := r.N(), r.ID()
	cfg := r.Config()
	if n < 1 || cfg.Ranks != n {
		return fmt.Errorf("N() = %d, Config().Ranks = %d", n, cfg.Ranks)
	}
	if me < 0 || me >= n {
		return fmt.Errorf("ID() = %d, not in [0,%d)", me, n)
	}
	rpn := cfg.RanksPerNode
	if rpn < 1 || rpn > n {
		return fmt.Errorf("Config().RanksPerNode = %d with %d ranks", rpn, n)
	}
	for p := range n {
		if got := r.NodeOf(p); got != p/rpn {
			return fmt.Errorf("NodeOf(%d) = %d; want %d (RanksPerNode %d)", p, got, p/rpn, rpn)
		}
	}
	if r.Node() != me/rpn {
		return fmt.Errorf("Node() = %d; want %d", r.Node(), me/rpn)
	}
	nodes := (n + rpn - 1) / rpn
	if r.Nodes() != nodes {
		return fmt.Errorf("Nodes() = %d; want %d", r.Nodes(), nodes)
	}
	if r.TransportName() == "" {
		return fmt.Errorf("TransportName() is empty")
	}

	a, err := pgas.AllAllocArray[idRecord](ctx, r, int64(n), pgas.Cyclic)
	if err != nil {
		return err
	}
	mine := idRecord{int64(me) + 1, int64(n), int64(r.Node()), int64(r.Nodes()), int64(rpn)}
	if err := a.Put(ctx, int64(me), mine); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for p := range n {
		got, err := a.Get(ctx, int64(p))
		if err != nil {
			return err
		}
		want := idRecord{int64(p) + 1, int64(n), int64(p / rpn), int64(nodes), int64(rpn)}
		if got != want {
			return fmt.Errorf("rank %d's record = %+v; want %+v", p, got, want)
		}
	}
	return a.AllFree(ctx)
}

// tag is the value rank p writes in round k.
func tag(p, k int) int64 { return int64(p)*1_000_000 + int64(k) + 1 }

// checkBarrierOrder: a put issued before a barrier is visible after it.
// Each round, rank r puts into rank (r+1)%N's slot, all ranks pass a
// barrier, and each reads its own slot. Two slot sets alternate so that a
// round's puts cannot overwrite a slot that is still to be read.
func checkBarrierOrder(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	a, err := pgas.AllAllocArray[int64](ctx, r, 2*n, pgas.Cyclic) // element b*n+p is on rank p
	if err != nil {
		return err
	}
	rounds := scaled(r, 40)
	for k := range rounds {
		base := int64(k%2) * n
		if err := a.Put(ctx, base+int64(next(r)), tag(r.ID(), k)); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		got, err := a.Get(ctx, base+me)
		if err != nil {
			return err
		}
		if want := tag(prev(r), k); got != want {
			return fmt.Errorf("round %d: slot after barrier = %d; want %d, the put of rank %d", k, got, want, prev(r))
		}
	}
	return a.AllFree(ctx)
}

// checkSplitPhase: Notify returns without waiting for the other ranks,
// work (remote gets of read-only data) can be done between Notify and Wait,
// and puts issued before Notify are visible after Wait.
func checkSplitPhase(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), int64(r.ID())
	const per = 8
	ro, err := pgas.AllAllocArray[int64](ctx, r, n*per, pgas.Star)
	if err != nil {
		return err
	}
	for start, blk := range ro.MyBlocks() {
		for k := range blk {
			blk[k] = val(start+int64(k), 7)
		}
	}
	a, err := pgas.AllAllocArray[int64](ctx, r, 2*n, pgas.Cyclic)
	if err != nil {
		return err
	}
	flag, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic)
	if err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}

	// Notify must not wait: rank 1 notifies only after rank 0's Notify has
	// returned, which deadlocks if Notify waits for every rank.
	if n > 1 {
		if err := notifyFirst(ctx, r, flag); err != nil {
			return err
		}
	}
	rounds := scaled(r, 30)
	for k := range rounds {
		base := int64(k%2) * n
		if err := a.Put(ctx, base+int64(next(r)), tag(r.ID(), k)); err != nil {
			return err
		}
		if err := r.Notify(ctx); err != nil {
			return err
		}
		// Work between the phases: read-only remote data and private sums.
		var sum, want int64
		for j := range int64(per) {
			i := (me*per + per + j + int64(k)) % (n * per)
			v, err := ro.Get(ctx, i)
			if err != nil {
				return err
			}
			sum += v
			want += val(i, 7)
		}
		if sum != want {
			return fmt.Errorf("round %d: sum of read-only elements between Notify and Wait = %d; want %d", k, sum, want)
		}
		if err := r.Wait(ctx); err != nil {
			return err
		}
		got, err := a.Get(ctx, base+me)
		if err != nil {
			return err
		}
		if want := tag(prev(r), k); got != want {
			return fmt.Errorf("round %d: slot after Wait = %d; want %d, the put of rank %d before its Notify", k, got, want, prev(r))
		}
	}
	if err := a.AllFree(ctx); err != nil {
		return err
	}
	if err := flag.AllFree(ctx); err != nil {
		return err
	}
	return ro.AllFree(ctx)
}

// notifyFirst is one split-phase barrier in which rank 1 calls Notify
// only after rank 0's Notify has returned (rank 0 tells it with an atomic
// on flag element 1).
func notifyFirst(ctx context.Context, r *pgas.Rank, flag *pgas.Array[int64]) error {
	switch r.ID() {
	case 0:
		if err := r.Notify(ctx); err != nil {
			return err
		}
		if _, err := pgas.FetchAdd(ctx, flag, 1, 1); err != nil {
			return err
		}
	case 1:
		err := spinUntil(ctx, "rank 0's Notify to return before rank 1 notifies (Notify must not wait)", func() (bool, error) {
			v, err := pgas.AtomicLoad(ctx, flag, 1)
			return v == 1, err
		})
		if err != nil {
			return err
		}
		if err := r.Notify(ctx); err != nil {
			return err
		}
	default:
		if err := r.Notify(ctx); err != nil {
			return err
		}
	}
	return r.Wait(ctx)
}

// checkPutFence: puts are complete at their targets after the issuing
// rank's Fence (signalled to the target by an atomic, without a barrier),
// and after Fence and Barrier.
func checkPutFence(ctx context.Context, r *pgas.Rank) error {
	n, me := int64(r.N()), r.ID()
	const per = 16
	data, err := pgas.AllAllocArray[int64](ctx, r, n*per, pgas.Star) // block p on rank p
	if err != nil {
		return err
	}
	flags, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic) // element p on rank p
	if err != nil {
		return err
	}
	dst := int64(next(r)) * per
	checkMine := func(round int64, how string) error {
		for k, v := range data.Local() {
			if want := val(int64(prev(r))*per+int64(k), round); v != want {
				return fmt.Errorf("%s, round %d: local element %d = %d; want %d, put by rank %d", how, round, k, v, want, prev(r))
			}
		}
		return nil
	}
	rounds := int64(scaled(r, 4))
	for round := int64(1); round <= rounds; round++ {
		// Fence, then tell the target with an atomic.
		for j := range int64(per) {
			if err := data.Put(ctx, dst+j, val(int64(me)*per+j, round)); err != nil {
				return err
			}
		}
		if err := r.Fence(ctx); err != nil {
			return err
		}
		if _, err := pgas.FetchAdd(ctx, flags, int64(next(r)), 1); err != nil {
			return err
		}
		err := spinUntil(ctx, "flag set by the previous rank after its Fence", func() (bool, error) {
			v, err := pgas.AtomicLoad(ctx, flags, int64(me))
			return v >= round, err
		})
		if err != nil {
			return err
		}
		if err := checkMine(round, "after Fence and flag"); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil { // everyone has read before the next round writes
			return err
		}
	}
	// Fence and Barrier, with a new pattern.
	round := rounds + 1
	for j := range int64(per) {
		if err := data.Put(ctx, dst+j, val(int64(me)*per+j, round)); err != nil {
			return err
		}
	}
	if err := r.Fence(ctx); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if err := checkMine(round, "after Fence and Barrier"); err != nil {
		return err
	}
	if err := flags.AllFree(ctx); err != nil {
		return err
	}
	return data.AllFree(ctx)
}

// checkCast: Cast(me) is the rank's own segment; where Cast(q) is not nil
// (a mapped transport, no wrapper) it is q's whole segment, loads through
// it see q's stores after a barrier, stores through it under q's lock are
// what q reads after a barrier, and CountCast counts them.
func checkCast(ctx context.Context, r *pgas.Rank) error {
	if got := r.Cast(r.ID()); len(got) != len(r.Segment()) || &got[0] != &r.Segment()[0] {
		return fmt.Errorf("Cast(%d) is not the rank's own segment", r.ID())
	}
	reg, err := r.AllAlloc(ctx, 64)
	if err != nil {
		return err
	}
	l, err := r.AllLockAlloc(ctx)
	if err != nil {
		return err
	}
	q := next(r)
	le := binary.LittleEndian
	le.PutUint64(r.Segment()[reg.Off:], uint64(1000+r.ID()))
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	seg := r.Cast(q)
	if seg != nil {
		if int64(len(seg)) != r.Config().SegmentBytes {
			return fmt.Errorf("Cast(%d) is %d bytes; want the segment's %d", q, len(seg), r.Config().SegmentBytes)
		}
		if v := le.Uint64(seg[reg.Off:]); v != uint64(1000+q) {
			return fmt.Errorf("through Cast(%d): %d; want %d, stored by rank %d", q, v, 1000+q, q)
		}
		before := r.Stats()
		if err := l.Lock(ctx); err != nil {
			return err
		}
		le.PutUint64(seg[reg.Off+8:], le.Uint64(seg[reg.Off+8:])+uint64(r.ID()+1))
		if err := l.Unlock(ctx); err != nil {
			return err
		}
		r.CountCast(pgas.OpGet, q, 1, 8)
		r.CountCast(pgas.OpPut, q, 1, 8)
		after := r.Stats()
		if q != r.ID() && (after.Peers[q].BytesSent-before.Peers[q].BytesSent != 8 || after.Peers[q].BytesReceived-before.Peers[q].BytesReceived != 8) {
			return fmt.Errorf("CountCast: traffic with rank %d grew by %d sent, %d received; want 8 and 8", q,
				after.Peers[q].BytesSent-before.Peers[q].BytesSent, after.Peers[q].BytesReceived-before.Peers[q].BytesReceived)
		}
	}
	// Everyone learns whether everyone cast, then checks its own word.
	flags, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N()), pgas.Cyclic)
	if err != nil {
		return err
	}
	if seg != nil {
		if err := flags.Put(ctx, int64(q), 1); err != nil {
			return err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	v := le.Uint64(r.Segment()[reg.Off+8:])
	if flags.Local()[0] == 1 && v != uint64(prev(r)+1) {
		return fmt.Errorf("rank %d stored %d through Cast under the lock; read %d", prev(r), prev(r)+1, v)
	}
	if flags.Local()[0] == 0 && v != 0 {
		return fmt.Errorf("no rank cast to this one, yet the word is %d", v)
	}
	if err := flags.AllFree(ctx); err != nil {
		return err
	}
	if err := l.AllFree(ctx); err != nil {
		return err
	}
	return r.AllFree(ctx, reg)
}
