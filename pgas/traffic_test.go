package pgas_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// expectedTraffic is the naive oracle for a bulk transfer by rank me of
// elements [start, start+n) of an array with layout l: walk element by
// element, cut a message wherever the block changes or a fragment fills.
func expectedTraffic(l pgas.Layout, me int, start, n, esz, frag int64) pgas.Traffic {
	want := make(pgas.Traffic, l.Ranks)
	var cur int64 = -1 // current block
	var fill int64     // bytes in the current message
	for i := start; i < start+n; i++ {
		o := l.Owner(i)
		if o == me {
			cur = -1
			continue
		}
		if b := i / l.Block; b != cur || fill+esz > frag {
			want[o].Messages++
			cur, fill = b, 0
		}
		fill += esz
		want[o].BytesSent += esz // caller flips for gets
	}
	return want
}

func delta(after, before wrap.Counts) pgas.Traffic {
	d := make(pgas.Traffic, len(after.Peers))
	for p := range d {
		d[p] = after.Peers[p].Sub(before.Peers[p])
	}
	return d
}

// TestBulkTrafficExact checks, under the counting transport, the exact
// per-peer messages and bytes of GetRange and PutRange over ranges that
// span blocks and ranks, with fragmentation.
func TestBulkTrafficExact(t *testing.T) {
	for _, tc := range []struct {
		ranks       int
		n, blk      int64
		frag        int64
		start, cnt  int64
		getter, put int
	}{
		{4, 40, 3, 16, 2, 31, 0, 1},
		{3, 100, 10, 1 << 20, 0, 100, 2, 0},
		{5, 64, pgas.Cyclic, 8, 5, 40, 1, 4},
		{2, 1000, pgas.Star, 64, 100, 800, 0, 1},
		{4, 50, pgas.Indefinite, 40, 0, 50, 3, 2},
	} {
		t.Run(fmt.Sprintf("ranks=%d/n=%d/blk=%d/frag=%d", tc.ranks, tc.n, tc.blk, tc.frag), func(t *testing.T) {
			c := wrap.NewCounting(inproc.New())
			cfg := pgas.Config{Ranks: tc.ranks, Transport: c, FragmentBytes: tc.frag}
			err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
				a, err := pgas.AllAllocArray[int64](ctx, r, tc.n, tc.blk)
				if err != nil {
					return err
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				buf := make([]int64, tc.cnt)
				if r.ID() == tc.getter {
					before := c.Counts(r.ID())
					if err := a.GetRange(ctx, buf, tc.start); err != nil {
						return err
					}
					got := delta(c.Counts(r.ID()), before)
					want := expectedTraffic(a.Layout(), r.ID(), tc.start, tc.cnt, 8, tc.frag)
					for p := range want {
						want[p].BytesReceived, want[p].BytesSent = want[p].BytesSent, 0
						if got[p] != want[p] {
							return fmt.Errorf("GetRange traffic with rank %d = %+v; want %+v", p, got[p], want[p])
						}
					}
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				if r.ID() == tc.put {
					before := c.Counts(r.ID())
					if err := a.PutRange(ctx, tc.start, buf); err != nil {
						return err
					}
					got := delta(c.Counts(r.ID()), before)
					want := expectedTraffic(a.Layout(), r.ID(), tc.start, tc.cnt, 8, tc.frag)
					for p := range want {
						if got[p] != want[p] {
							return fmt.Errorf("PutRange traffic with rank %d = %+v; want %+v", p, got[p], want[p])
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGatherPlanTrafficCounted checks the plan's traffic as the transport
// sees it: per Execute, one message to each rank that needs this rank's
// data, carrying each needed element once, and nothing else.
func TestGatherPlanTrafficCounted(t *testing.T) {
	const ranks, n, k = 5, 300, 80
	c := wrap.NewCounting(inproc.New())
	err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, Transport: c}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int32](ctx, r, n, 7)
		if err != nil {
			return err
		}
		plan, err := pgas.NewGatherPlan(ctx, a, needs(r.ID(), n, k, 4))
		if err != nil {
			return err
		}
		before := c.Counts(r.ID())
		if err := plan.Execute(ctx, a, make([]int32, k)); err != nil {
			return err
		}
		got := delta(c.Counts(r.ID()), before)
		for q := range ranks {
			want := pgas.PeerTraffic{}
			uniq := map[int64]bool{}
			for _, g := range needs(q, n, k, 4) {
				if a.Layout().Owner(g) == r.ID() {
					uniq[g] = true
				}
			}
			if q != r.ID() && len(uniq) > 0 {
				want = pgas.PeerTraffic{Messages: 1, BytesSent: 4 * int64(len(uniq))}
			}
			if got[q] != want {
				return fmt.Errorf("Execute traffic to rank %d = %+v; want %+v", q, got[q], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAsyncOverlapsLatency: k outstanding async gets complete in about one
// latency, k blocking gets take k latencies.
func TestAsyncOverlapsLatency(t *testing.T) {
	const d, k = 20 * time.Millisecond, 8
	tr := wrap.NewLatency(inproc.New(), d)
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, Transport: tr}, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, 2*k, pgas.Cyclic)
		if err != nil {
			return err
		}
		for g, blk := range a.MyBlocks() {
			blk[0] = g * 10
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() != 0 {
			return nil
		}
		vals := make([]int64, k)
		t0 := time.Now()
		hs := make([]*pgas.Handle, k)
		for j := range k {
			hs[j] = a.GetAsync(ctx, int64(2*j+1), &vals[j]) // all on rank 1
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				return err
			}
		}
		async := time.Since(t0)
		t0 = time.Now()
		for j := range k {
			if _, err := a.Get(ctx, int64(2*j+1)); err != nil {
				return err
			}
		}
		sync := time.Since(t0)
		for j, v := range vals {
			if v != int64(2*j+1)*10 {
				return fmt.Errorf("GetAsync of element %d = %d; want %d", 2*j+1, v, (2*j+1)*10)
			}
		}
		if async >= 3*d {
			return fmt.Errorf("%d outstanding GetAsync took %v; want about one latency (%v)", k, async, d)
		}
		if sync < k*d {
			return fmt.Errorf("%d blocking Gets took %v; want at least %v", k, sync, k*d)
		}
		t.Logf("latency %v: %d async gets %v, %d blocking gets %v", d, k, async, k, sync)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNotifyDoesNotWait: Notify returns while other ranks have not yet
// notified; Wait returns only after they have.
func TestNotifyDoesNotWait(t *testing.T) {
	const late = 300 * time.Millisecond
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() != 0 {
			time.Sleep(late)
		}
		t0 := time.Now()
		if err := r.Notify(ctx); err != nil {
			return err
		}
		notify := time.Since(t0)
		if err := r.Wait(ctx); err != nil {
			return err
		}
		wait := time.Since(t0)
		if r.ID() == 0 {
			if notify > late/3 {
				return fmt.Errorf("Notify took %v while the others arrive after %v", notify, late)
			}
			if wait < late/2 {
				return fmt.Errorf("Wait returned after %v, before the others notified (%v)", wait, late)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// faultJob uses allocation, locks, atomics, bulk and element access and a
// gather plan, so a fault sweep reaches every kind of operation.
func faultJob(ctx context.Context, r *pgas.Rank) error {
	a, err := pgas.AllAllocArray[int64](ctx, r, 24, 4)
	if err != nil {
		return err
	}
	lock, err := r.AllLockAlloc(ctx)
	if err != nil {
		return err
	}
	if err := lock.Lock(ctx); err != nil {
		return err
	}
	v, err := a.Get(ctx, 0)
	if err != nil {
		return err
	}
	if err := a.Put(ctx, 0, v+1); err != nil {
		return err
	}
	if err := lock.Unlock(ctx); err != nil {
		return err
	}
	if _, err := pgas.FetchAdd(ctx, a, 23, 1); err != nil {
		return err
	}
	loc, err := r.Alloc(ctx, 100)
	if err != nil {
		return err
	}
	if err := r.Free(ctx, loc); err != nil {
		return err
	}
	plan, err := pgas.NewGatherPlan(ctx, a, []int64{int64(r.ID()*5) % 24, 13, 22})
	if err != nil {
		return err
	}
	dst := make([]int64, 3)
	if err := plan.Execute(ctx, a, dst); err != nil {
		return err
	}
	buf := make([]int64, 10)
	if err := a.GetRange(ctx, buf, 7); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if r.ID() == 0 {
		if v, err := a.Get(ctx, 0); err != nil {
			return err
		} else if v != int64(r.N()) {
			return fmt.Errorf("locked counter = %d; want %d", v, r.N())
		}
	}
	return plan.Free(ctx)
}

// TestFaultSweep fails each operation of each rank in turn (until a run
// reaches no more operations of that rank) and checks that every such job
// ends with the injected error, names the rank, and leaks no goroutine.
func TestFaultSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep")
	}
	const ranks = 3
	base := runtime.NumGoroutine()
	total := 0
	for rank := range ranks {
		for op := int64(0); ; op++ {
			if op > 2000 {
				t.Fatalf("rank %d: still injecting at op %d", rank, op)
			}
			f := wrap.NewFaulty(inproc.New(), rank, op)
			cfg := pgas.Config{Ranks: ranks, Transport: f, SyncTimeout: 10 * time.Second}
			t0 := time.Now()
			err := pgas.Run(context.Background(), cfg, faultJob)
			if el := time.Since(t0); el > 5*time.Second {
				t.Errorf("rank %d op %d: job took %v to fail", rank, op, el)
			}
			if !f.Injected() {
				if err != nil {
					t.Fatalf("rank %d: clean run failed: %v", rank, err)
				}
				total += int(op)
				break
			}
			if !errors.Is(err, wrap.ErrInjected) {
				t.Fatalf("rank %d op %d: err = %v; want ErrInjected", rank, op, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("pgas: rank %d:", rank)) {
				t.Fatalf("rank %d op %d: error does not name the rank: %v", rank, op, err)
			}
		}
	}
	t.Logf("%d injected faults, each ended the job with an error", total)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines leaked:\n%s", n-base, buf[:runtime.Stack(buf, true)])
	}
}

// TestMovedOffNode: what moved between a rank and other nodes, through
// its own operations and the others' on its memory, from synthetic
// counters: Moved's total split by node.
func TestMovedOffNode(t *testing.T) {
	// 4 ranks, 2 a node. all[i].Peers[j]: what rank i issued to rank j.
	all := make([]pgas.Stats, 4)
	for i := range all {
		all[i] = pgas.Stats{Rank: i, Peers: make(pgas.Traffic, 4)}
		for j := range 4 {
			if i != j {
				all[i].Peers[j] = pgas.PeerTraffic{Messages: 1, BytesSent: int64(100*i + j), BytesReceived: int64(1000*i + 10*j)}
			}
		}
	}
	for rank := range 4 {
		var sent, recv int64
		for j := range 4 {
			if j == rank || j/2 == rank/2 {
				continue
			}
			sent += all[rank].Peers[j].BytesSent + all[j].Peers[rank].BytesReceived
			recv += all[rank].Peers[j].BytesReceived + all[j].Peers[rank].BytesSent
		}
		gs, gr := pgas.MovedOffNode(all, rank, 2)
		if gs != sent || gr != recv {
			t.Errorf("rank %d: MovedOffNode = %d, %d; want %d, %d", rank, gs, gr, sent, recv)
		}
		ts, tr := pgas.Moved(all, rank)
		if s1, r1 := pgas.MovedOffNode(all, rank, 4); s1 != 0 || r1 != 0 {
			t.Errorf("rank %d: one node of 4, yet %d, %d moved off it", rank, s1, r1)
		}
		if s1, r1 := pgas.MovedOffNode(all, rank, 1); s1 != ts || r1 != tr {
			t.Errorf("rank %d: a node a rank: %d, %d off node, Moved says %d, %d", rank, s1, r1, ts, tr)
		}
	}
}
