package pgastest

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgasmr/pgasmr/pgas"
)

// statsBlock is the number of int64 elements per rank of the array the
// stats pattern works on.
const statsBlock = 100

// statsPattern is a fixed sequence of operations whose counts
// expectedStats predicts: on a Star array of statsBlock elements per rank,
// rank p puts and gets element 0 of its own block, puts element 2 of rank
// q=(p+1)%N's block, gets elements [4, statsBlock) of q's block in one
// GetRange (only if N > 1), adds to element 1 of its own block and to
// element 3 of q's, loads element 3 of q's, then fences once and passes one
// barrier. No two ranks touch the same element except by reading.
func statsPattern(ctx context.Context, r *pgas.Rank, a *pgas.Array[int64]) error {
	me, q := int64(r.ID())*statsBlock, int64(next(r))*statsBlock
	if err := a.Put(ctx, me, 1); err != nil {
		return err
	}
	if _, err := a.Get(ctx, me); err != nil {
		return err
	}
	if err := a.Put(ctx, q+2, 1); err != nil {
		return err
	}
	if r.N() > 1 {
		buf := make([]int64, statsBlock-4)
		if err := a.GetRange(ctx, buf, q+4); err != nil {
			return err
		}
	}
	if _, err := pgas.FetchAdd(ctx, a, me+1, 1); err != nil {
		return err
	}
	if _, err := pgas.FetchAdd(ctx, a, q+3, 1); err != nil {
		return err
	}
	if _, err := pgas.AtomicLoad(ctx, a, q+3); err != nil {
		return err
	}
	if err := r.Fence(ctx); err != nil {
		return err
	}
	return r.Barrier(ctx)
}

// expectedStats returns the counters of rank p of n after statsPattern,
// with transfers split at frag bytes. BarrierTime is not predicted.
func expectedStats(p, n int, frag int64) pgas.Stats {
	s := pgas.Stats{Rank: p, Peers: make(pgas.Traffic, n), Fences: 1, Barriers: 1}
	s.Local[pgas.OpPut], s.Local[pgas.OpGet], s.Local[pgas.OpAtomic] = 1, 1, 1
	s.LocalBytes = 16
	if n == 1 { // the "remote" put and atomics are local too
		s.Local[pgas.OpPut]++
		s.LocalBytes += 8
		s.Local[pgas.OpAtomic] += 2
		return s
	}
	got := int64(8 * (statsBlock - 4))
	msgs := (got + frag - 1) / frag
	s.Remote[pgas.OpPut], s.Remote[pgas.OpGet], s.Remote[pgas.OpAtomic] = 1, msgs, 2
	s.Peers[(p+1)%n] = pgas.PeerTraffic{Messages: 1 + msgs + 2, BytesSent: 8, BytesReceived: got}
	return s
}

// statsDiff describes how got's counters differ from want's, ignoring
// BarrierTime, or returns "".
func statsDiff(got, want pgas.Stats) string {
	var d []string
	add := func(name string, g, w int64) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %d, want %d", name, g, w))
		}
	}
	add("Rank", int64(got.Rank), int64(want.Rank))
	for k := range pgas.NumOpKinds {
		add("Local["+k.String()+"]", got.Local[k], want.Local[k])
		add("Remote["+k.String()+"]", got.Remote[k], want.Remote[k])
	}
	add("LocalBytes", got.LocalBytes, want.LocalBytes)
	add("Barriers", got.Barriers, want.Barriers)
	add("Fences", got.Fences, want.Fences)
	add("len(Peers)", int64(len(got.Peers)), int64(len(want.Peers)))
	for p := range min(len(got.Peers), len(want.Peers)) {
		if got.Peers[p] != want.Peers[p] {
			d = append(d, fmt.Sprintf("Peers[%d] = %+v, want %+v", p, got.Peers[p], want.Peers[p]))
		}
	}
	return strings.Join(d, "; ")
}

// checkStats: after ResetStats the counters are zero; a known pattern of
// local and remote operations counts exactly: local accesses in Local,
// remote ones in Remote and per peer, bytes and messages (fragments) per
// peer.
func checkStats(ctx context.Context, r *pgas.Rank) error {
	n, me := r.N(), r.ID()
	a, err := pgas.AllAllocArray[int64](ctx, r, int64(n)*statsBlock, pgas.Star)
	if err != nil {
		return err
	}
	r.ResetStats()
	zero := pgas.Stats{Rank: me, Peers: make(pgas.Traffic, n)}
	if s := r.Stats(); statsDiff(s, zero) != "" || s.BarrierTime != 0 {
		return fmt.Errorf("Stats after ResetStats: %s, BarrierTime %v", statsDiff(s, zero), s.BarrierTime)
	}
	if err := statsPattern(ctx, r, a); err != nil {
		return err
	}
	got := r.Stats()
	want := expectedStats(me, n, r.Config().FragmentBytes)
	if d := statsDiff(got, want); d != "" {
		return fmt.Errorf("Stats after the pattern: %s", d)
	}
	if got.BarrierTime < 0 {
		return fmt.Errorf("BarrierTime = %v", got.BarrierTime)
	}
	var sent, recv, msgs int64
	for _, p := range want.Peers {
		sent, recv, msgs = sent+p.BytesSent, recv+p.BytesReceived, msgs+p.Messages
	}
	if got.BytesSent() != sent || got.BytesReceived() != recv || got.Messages() != msgs {
		return fmt.Errorf("BytesSent, BytesReceived, Messages = %d, %d, %d; want %d, %d, %d",
			got.BytesSent(), got.BytesReceived(), got.Messages(), sent, recv, msgs)
	}
	got.Peers[next(r)].Messages += 1000
	if d := statsDiff(r.Stats(), want); d != "" {
		return fmt.Errorf("changing the Peers of a Stats copy changed the rank's counters: %s", d)
	}
	return a.AllFree(ctx)
}

// checkAllStats: AllStats returns every rank's counters as they were when
// it was called, matching the pattern each rank ran, and their exact sum;
// the exchange itself is not counted.
func checkAllStats(ctx context.Context, r *pgas.Rank) error {
	n, me := r.N(), r.ID()
	frag := r.Config().FragmentBytes
	a, err := pgas.AllAllocArray[int64](ctx, r, int64(n)*statsBlock, pgas.Star)
	if err != nil {
		return err
	}
	r.ResetStats()
	if err := statsPattern(ctx, r, a); err != nil {
		return err
	}
	before := r.Stats()
	per, sum, err := r.AllStats(ctx)
	if err != nil {
		return err
	}
	if d := statsDiff(r.Stats(), before); d != "" || r.Stats().BarrierTime != before.BarrierTime {
		return fmt.Errorf("AllStats changed this rank's counters: %s", d)
	}
	if len(per) != n {
		return fmt.Errorf("AllStats returned %d ranks' counters; want %d", len(per), n)
	}
	want := pgas.Stats{Peers: make(pgas.Traffic, n)}
	var barrierTime int64
	for p, s := range per {
		e := expectedStats(p, n, frag)
		if d := statsDiff(s, e); d != "" {
			return fmt.Errorf("AllStats: rank %d's counters: %s", p, d)
		}
		for k := range pgas.NumOpKinds {
			want.Local[k] += e.Local[k]
			want.Remote[k] += e.Remote[k]
		}
		want.LocalBytes += e.LocalBytes
		want.Barriers += e.Barriers
		want.Fences += e.Fences
		want.Peers.Add(e.Peers)
		barrierTime += int64(s.BarrierTime)
	}
	if per[me].BarrierTime != before.BarrierTime {
		return fmt.Errorf("AllStats: this rank's BarrierTime = %v; Stats() said %v", per[me].BarrierTime, before.BarrierTime)
	}
	want.Rank = sum.Rank
	if d := statsDiff(sum, want); d != "" {
		return fmt.Errorf("AllStats sum: %s", d)
	}
	if int64(sum.BarrierTime) != barrierTime {
		return fmt.Errorf("AllStats sum: BarrierTime = %v; want %v, the sum over ranks", sum.BarrierTime, barrierTime)
	}
	return a.AllFree(ctx)
}
