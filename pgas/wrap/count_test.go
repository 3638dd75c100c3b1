package wrap_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

func TestOpString(t *testing.T) {
	want := []string{"put", "get", "putasync", "getasync", "fence", "fetchadd", "cas", "load", "notify", "wait", "barrier",
		"broadcast", "allgatherv", "alltoallv", "getstrided", "putstrided"}
	if int(wrap.NumOps) != len(want) {
		t.Fatalf("NumOps = %d, want %d", wrap.NumOps, len(want))
	}
	for op := range wrap.NumOps {
		if got := op.String(); got != want[op] {
			t.Errorf("Op(%d).String() = %q, want %q", int(op), got, want[op])
		}
	}
	if got := wrap.NumOps.String(); got != "wrap.Op(16)" {
		t.Errorf("NumOps.String() = %q", got)
	}
}

// ops builds an Ops array from kind/count pairs.
func ops(kv ...any) [wrap.NumOps]int64 {
	var a [wrap.NumOps]int64
	for i := 0; i < len(kv); i += 2 {
		a[kv[i].(wrap.Op)] = int64(kv[i+1].(int))
	}
	return a
}

func TestCountingExact(t *testing.T) {
	ctx := t.Context()
	c := wrap.NewCounting(inproc.New())
	eps := open(t, c, 3)
	e0 := eps[0]

	// The example of the package brief: two 100-byte puts to rank 1 and a
	// 24-byte get from rank 2.
	buf := make([]byte, 100)
	for range 2 {
		if err := e0.Put(ctx, 1, 0, buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := e0.Get(ctx, 2, 0, buf[:24]); err != nil {
		t.Fatal(err)
	}
	// Rank, Size and Segment are not operations.
	_, _, _ = e0.Rank(), e0.Size(), e0.Segment()
	got := c.Counts(0)
	want := wrap.Counts{
		Ops:   ops(wrap.OpPut, 2, wrap.OpGet, 1),
		Peers: transport.Traffic{{}, pt(2, 200, 0), pt(1, 0, 24)},
	}
	if !equalCounts(got, want) {
		t.Fatalf("Counts(0) = %+v, want %+v", got, want)
	}
	if got.Messages() != 3 || got.BytesSent() != 200 || got.BytesReceived() != 24 {
		t.Fatalf("Messages, BytesSent, BytesReceived = %d, %d, %d", got.Messages(), got.BytesSent(), got.BytesReceived())
	}
	for r := 1; r < 3; r++ {
		if got := c.Counts(r); !equalCounts(got, wrap.Counts{Peers: make(transport.Traffic, 3)}) {
			t.Fatalf("Counts(%d) = %+v, want zero", r, got)
		}
	}

	// Every other kind, including messages to the calling rank itself. A
	// failed call still counts: it was issued.
	if err := e0.PutAsync(ctx, 2, 0, buf[:8]).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e0.GetAsync(ctx, 1, 0, buf[:16]).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e0.Put(ctx, 0, 0, buf[:40]); err != nil { // to itself
		t.Fatal(err)
	}
	if _, err := e0.FetchAdd(ctx, 1, 8, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e0.CompareAndSwap(ctx, 0, 8, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e0.Load(ctx, 2, 8); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e0.Load(cancelled, 2, 8); err == nil {
		t.Fatal("Load with a cancelled context succeeded")
	}
	if err := e0.Get(cancelled, 0, 0, buf[:8]); err == nil {
		t.Fatal("Get with a cancelled context succeeded")
	}
	if err := e0.Fence(ctx); err != nil {
		t.Fatal(err)
	}
	all(t, eps, func(ep transport.Endpoint) error {
		if err := ep.Notify(ctx); err != nil {
			return err
		}
		if err := ep.Wait(ctx); err != nil {
			return err
		}
		return ep.Barrier(ctx)
	})
	got = c.Counts(0)
	want = wrap.Counts{
		Ops: ops(wrap.OpPut, 3, wrap.OpGet, 2, wrap.OpPutAsync, 1, wrap.OpGetAsync, 1, wrap.OpFence, 1,
			wrap.OpFetchAdd, 1, wrap.OpCAS, 1, wrap.OpLoad, 2, wrap.OpNotify, 1, wrap.OpWait, 1, wrap.OpBarrier, 1),
		Peers: transport.Traffic{pt(3, 40, 8), pt(4, 200, 16), pt(4, 8, 24)},
	}
	if !equalCounts(got, want) {
		t.Fatalf("Counts(0) = %+v, want %+v", got, want)
	}
	sync3 := wrap.Counts{Ops: ops(wrap.OpNotify, 1, wrap.OpWait, 1, wrap.OpBarrier, 1), Peers: make(transport.Traffic, 3)}
	if got := c.Counts(1); !equalCounts(got, sync3) {
		t.Fatalf("Counts(1) = %+v, want %+v", got, sync3)
	}

	// Total sums the ranks.
	if err := eps[1].Put(ctx, 2, 0, buf[:10]); err != nil {
		t.Fatal(err)
	}
	tot := c.Total()
	want.Ops[wrap.OpNotify], want.Ops[wrap.OpWait], want.Ops[wrap.OpBarrier] = 3, 3, 3
	want.Ops[wrap.OpPut]++
	want.Peers[2].Messages++
	want.Peers[2].BytesSent += 10
	if !equalCounts(tot, want) {
		t.Fatalf("Total() = %+v, want %+v", tot, want)
	}

	// Snapshots are copies.
	got.Peers[1].Messages = 1000
	if c.Counts(0).Peers[1].Messages != 4 {
		t.Fatal("changing a snapshot changed the counts")
	}

	c.Reset()
	zero := wrap.Counts{Peers: make(transport.Traffic, 3)}
	if got := c.Total(); !equalCounts(got, zero) {
		t.Fatalf("Total() after Reset = %+v", got)
	}
	if err := e0.Put(ctx, 1, 0, buf[:3]); err != nil {
		t.Fatal(err)
	}
	if got := c.Counts(0); got.Ops[wrap.OpPut] != 1 || got.Peers[1] != pt(1, 3, 0) {
		t.Fatalf("Counts(0) after Reset and a put = %+v", got)
	}
	for _, r := range []int{-1, 3} {
		if got := c.Counts(r); got.Peers != nil || got.Ops != ([wrap.NumOps]int64{}) {
			t.Fatalf("Counts(%d) = %+v, want the zero Counts", r, got)
		}
	}
}

// pt is a PeerTraffic of m messages, sent bytes sent and recv received.
func pt(m, sent, recv int64) transport.PeerTraffic {
	return transport.PeerTraffic{Messages: m, BytesSent: sent, BytesReceived: recv}
}

func equalCounts(a, b wrap.Counts) bool {
	return a.Ops == b.Ops && slices.Equal(a.Peers, b.Peers)
}

func TestCountingBeforeOpenAndReopen(t *testing.T) {
	ctx := t.Context()
	c := wrap.NewCounting(inproc.New())
	if got := c.Counts(0); got.Peers != nil {
		t.Fatalf("Counts before Open = %+v", got)
	}
	if got := c.Total(); got.Peers != nil {
		t.Fatalf("Total before Open = %+v", got)
	}
	c.Reset() // no job: nothing to do, no panic

	eps := open(t, c, 2)
	if err := eps[0].Put(ctx, 1, 0, make([]byte, 50)); err != nil {
		t.Fatal(err)
	}
	eps2 := open(t, c, 3)
	if got := c.Total(); !equalCounts(got, wrap.Counts{Peers: make(transport.Traffic, 3)}) {
		t.Fatalf("Total after the second Open = %+v, want zero with 3 peers", got)
	}
	if err := eps2[2].Get(ctx, 0, 0, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	// The first job's endpoints count into the first job's counters.
	if err := eps[0].Put(ctx, 1, 0, make([]byte, 50)); err != nil {
		t.Fatal(err)
	}
	if got := c.Counts(2); got.Peers[0] != pt(1, 0, 5) || got.Ops[wrap.OpGet] != 1 {
		t.Fatalf("Counts(2) = %+v", got)
	}
	if got := c.Total(); got.Messages() != 1 {
		t.Fatalf("Total().Messages() = %d, want 1", got.Messages())
	}
}

func TestCountingConcurrent(t *testing.T) {
	// Several goroutines per rank issue operations while another goroutine
	// reads the counts; run with -race.
	ctx := t.Context()
	c := wrap.NewCounting(inproc.New())
	const ranks, workers, iters = 3, 4, 200
	eps := open(t, c, ranks)
	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for r := range ranks {
				if m := c.Counts(r).Messages(); m < 0 || m > workers*iters*2 {
					t.Errorf("rank %d: %d messages", r, m)
				}
			}
			_ = c.Total()
		}
	})
	var wg sync.WaitGroup
	for _, ep := range eps {
		for w := range workers {
			wg.Go(func() {
				me := ep.Rank()
				peer := (me + 1) % ranks
				buf := make([]byte, 8)
				for range iters {
					if err := ep.Put(ctx, peer, int64(64*me+8*w), buf); err != nil {
						t.Error(err)
						return
					}
					if _, err := ep.FetchAdd(ctx, peer, 1024, 1); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(stop)
	reader.Wait()
	for r := range ranks {
		got := c.Counts(r)
		peer := (r + 1) % ranks
		if got.Ops[wrap.OpPut] != workers*iters || got.Ops[wrap.OpFetchAdd] != workers*iters {
			t.Errorf("rank %d: ops %v", r, got.Ops)
		}
		if want := pt(2*workers*iters, 8*workers*iters, 0); got.Peers[peer] != want {
			t.Errorf("rank %d: peer %d counts %+v, want %+v", r, peer, got.Peers[peer], want)
		}
	}
	if v, _ := eps[0].Load(ctx, 1, 1024); v != workers*iters {
		t.Errorf("counter at rank 1 = %d, want %d", v, workers*iters)
	}
}

func TestCountingRunMatchesStats(t *testing.T) {
	// Through pgas.Run: every transfer the runtime counts in its Stats
	// must be a message the transport sees, and the other way round.
	c := wrap.NewCounting(inproc.New())
	const ranks = 3
	stats := make([]pgas.Stats, ranks)
	var mid [ranks]wrap.Counts
	cfg := pgas.Config{Ranks: ranks, Transport: c, FragmentBytes: 64, SyncTimeout: 10 * time.Second}
	err := pgas.Run(t.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, 3*64, 16)
		if err != nil {
			return err
		}
		for i, blk := range a.MyBlocks() {
			for k := range blk {
				blk[k] = i + int64(k)
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		// Counts are readable while the job runs.
		mid[r.ID()] = c.Counts(r.ID())
		all := make([]int64, a.Len())
		if err := a.GetRange(ctx, all, 0); err != nil {
			return err
		}
		for i, v := range all {
			if v != int64(i) {
				return fmt.Errorf("element %d = %d", i, v)
			}
		}
		if err := r.Barrier(ctx); err != nil { // reads done before the writes
			return err
		}
		next := (r.ID() + 1) % ranks
		if err := a.Put(ctx, int64(16*next), -1); err != nil {
			return err
		}
		if _, err := a.Get(ctx, int64(16*next+1)); err != nil {
			return err
		}
		if err := r.PutBytes(ctx, next, a.Ref().Region.Off+8, make([]byte, 200)); err != nil {
			return err
		}
		// Element 78 is local index 30 of rank 1, clear of the puts.
		if _, err := pgas.FetchAdd(ctx, a, 78, 1); err != nil {
			return err
		}
		if err := r.Notify(ctx); err != nil {
			return err
		}
		if err := r.Wait(ctx); err != nil {
			return err
		}
		stats[r.ID()] = r.Stats()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range ranks {
		got := c.Counts(r) // after the job ended
		if len(got.Peers) != ranks {
			t.Fatalf("rank %d: %d peers", r, len(got.Peers))
		}
		if got.Ops[wrap.OpBarrier] < 4 || got.Ops[wrap.OpNotify] != 1 || got.Ops[wrap.OpWait] != 1 {
			t.Errorf("rank %d: ops %v", r, got.Ops)
		}
		if got.Messages() <= mid[r].Messages() {
			t.Errorf("rank %d: %d messages in the middle of the job, %d at the end", r, mid[r].Messages(), got.Messages())
		}
		for p := range ranks {
			if p == r {
				continue
			}
			// One type: what the transport saw and what pgas counted
			// compare directly.
			if want := stats[r].Peers[p]; got.Peers[p] != want {
				t.Errorf("rank %d peer %d: transport saw %+v, pgas.Stats counted %+v", r, p, got.Peers[p], want)
			}
		}
		// 200 bytes in 64-byte fragments plus one element to the next rank.
		if n := got.Peers[(r+1)%ranks].BytesSent; n < 208 {
			t.Errorf("rank %d: %d bytes sent to the next rank, want at least 208", r, n)
		}
	}
}
