package wrap_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/transport/transporttest"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

const lat = 20 * time.Millisecond

func TestLatencyGetAsyncOverlaps(t *testing.T) {
	ctx := t.Context()
	eps := open(t, wrap.NewLatency(inproc.New(), lat), 2)
	for i := range 8 {
		eps[1].Segment()[i] = byte(i + 1)
	}
	dst := make([]byte, 8)
	start := time.Now()
	hs := make([]transport.Handle, 8)
	for i := range hs {
		hs[i] = eps[0].GetAsync(ctx, 1, int64(i), dst[i:i+1])
	}
	if el := time.Since(start); el >= lat {
		t.Errorf("issuing 8 GetAsync took %v, want well under %v", el, lat)
	}
	for _, h := range hs {
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	el := time.Since(start)
	if el < lat || el >= 4*lat {
		t.Errorf("8 outstanding GetAsync took %v, want in [%v, %v)", el, lat, 4*lat)
	}
	if !bytes.Equal(dst, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("dst = %v", dst)
	}
	// A handle waited after its completion time returns at once.
	h := eps[0].GetAsync(ctx, 1, 0, dst[:1])
	time.Sleep(lat + lat/2)
	start = time.Now()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el >= lat {
		t.Errorf("Wait on a completed handle took %v", el)
	}
}

func TestLatencySequentialGets(t *testing.T) {
	ctx := t.Context()
	eps := open(t, wrap.NewLatency(inproc.New(), lat), 2)
	dst := make([]byte, 8)
	start := time.Now()
	for i := range 8 {
		if err := eps[0].Get(ctx, 1, int64(8*i), dst); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 8*lat {
		t.Errorf("8 sequential Gets took %v, want at least %v", el, 8*lat)
	}
}

func TestLatencyAtomics(t *testing.T) {
	ctx := t.Context()
	eps := open(t, wrap.NewLatency(inproc.New(), lat), 2)
	for _, f := range []func() (int64, error){
		func() (int64, error) { return eps[0].FetchAdd(ctx, 1, 0, 3) },
		func() (int64, error) { return eps[0].CompareAndSwap(ctx, 1, 0, 3, 4) },
		func() (int64, error) { return eps[0].Load(ctx, 1, 0) },
	} {
		start := time.Now()
		if _, err := f(); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el < lat {
			t.Errorf("atomic took %v, want at least %v", el, lat)
		}
	}
	if v, _ := eps[1].Load(ctx, 1, 0); v != 4 {
		t.Errorf("word = %d, want 4", v)
	}
	// An error of the inner transport comes back without the latency.
	start := time.Now()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := eps[0].Load(cancelled, 1, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a cancelled context: %v", err)
	}
	if el := time.Since(start); el >= lat {
		t.Errorf("failed Load took %v", el)
	}
}

func TestLatencyPutFence(t *testing.T) {
	ctx := t.Context()
	eps := open(t, wrap.NewLatency(inproc.New(), lat), 2)
	start := time.Now()
	if err := eps[0].Put(ctx, 1, 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el >= lat {
		t.Errorf("Put took %v, want well under %v", el, lat)
	}
	if err := eps[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if el < lat || el >= 4*lat {
		t.Errorf("Put+Fence took %v, want in [%v, %v)", el, lat, 4*lat)
	}
	// Nothing outstanding: Fence returns at once.
	start = time.Now()
	if err := eps[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el >= lat {
		t.Errorf("Fence with no puts outstanding took %v", el)
	}
	// Fence waits for the latest put: two puts lat/2 apart complete at
	// the second one's time.
	start = time.Now()
	if err := eps[0].Put(ctx, 1, 0, []byte("y")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lat / 2)
	if err := eps[0].Put(ctx, 1, 0, []byte("z")); err != nil {
		t.Fatal(err)
	}
	if err := eps[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < lat+lat/2 {
		t.Errorf("two puts %v apart fenced after %v, want at least %v", lat/2, el, lat+lat/2)
	}
}

func TestLatencyPutAsync(t *testing.T) {
	ctx := t.Context()
	eps := open(t, wrap.NewLatency(inproc.New(), lat), 2)
	start := time.Now()
	hs := make([]transport.Handle, 8)
	for i := range hs {
		hs[i] = eps[0].PutAsync(ctx, 1, int64(i), []byte{byte(i)})
	}
	for _, h := range hs {
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < lat || el >= 4*lat {
		t.Errorf("8 PutAsync took %v, want in [%v, %v)", el, lat, 4*lat)
	}
	// A PutAsync is a put: Fence waits for it without its handle.
	start = time.Now()
	h := eps[0].PutAsync(ctx, 1, 0, []byte{1})
	if err := eps[0].Fence(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < lat {
		t.Errorf("Fence after PutAsync took %v, want at least %v", el, lat)
	}
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLatencyNotifyDoesNotWait(t *testing.T) {
	// A longer latency here, so that "well under d" leaves room for a
	// noisy machine.
	const d = 5 * lat
	ctx := t.Context()
	eps := open(t, wrap.NewLatency(inproc.New(), d), 2)

	// Rank 1 has not notified: rank 0's Notify returns at once.
	start := time.Now()
	if err := eps[0].Notify(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el >= d/4 {
		t.Errorf("Notify took %v, want well under %v", el, d)
	}
	// With a put outstanding, Notify fences (about one latency) but still
	// does not wait for rank 0's Wait.
	start = time.Now()
	if err := eps[1].Put(ctx, 0, 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := eps[1].Notify(ctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < d || el >= 2*d {
		t.Errorf("Put+Notify took %v, want in [%v, %v)", el, d, 2*d)
	}
	// Wait and Barrier take the latency longer than the inner barrier.
	start = time.Now()
	all(t, eps, func(ep transport.Endpoint) error { return ep.Wait(ctx) })
	if el := time.Since(start); el < d || el >= 2*d {
		t.Errorf("Wait took %v, want in [%v, %v)", el, d, 2*d)
	}
	start = time.Now()
	all(t, eps, barrier(ctx))
	if el := time.Since(start); el < d || el >= 2*d {
		t.Errorf("Barrier took %v, want in [%v, %v)", el, d, 2*d)
	}
}

func TestLatencyCancel(t *testing.T) {
	// With an hour of latency, every wait must end when ctx is cancelled.
	const long = time.Hour
	eps := open(t, wrap.NewLatency(inproc.New(), long), 1)
	ep := eps[0]
	buf := make([]byte, 8)
	// Handles and puts are issued with a live context; the waits use one
	// that is cancelled shortly.
	bg := t.Context()
	getH := ep.GetAsync(bg, 0, 0, buf)
	putH := ep.PutAsync(bg, 0, 0, buf)
	for name, f := range map[string]func(context.Context) error{
		"Get":          func(ctx context.Context) error { return ep.Get(ctx, 0, 0, buf) },
		"FetchAdd":     func(ctx context.Context) error { _, err := ep.FetchAdd(ctx, 0, 0, 1); return err },
		"Fence":        func(ctx context.Context) error { return ep.Fence(ctx) },
		"GetAsyncWait": func(ctx context.Context) error { return getH.Wait(ctx) },
		"PutAsyncWait": func(ctx context.Context) error { return putH.Wait(ctx) },
		"Notify":       func(ctx context.Context) error { return ep.Notify(ctx) }, // fences
	} {
		ctx, cancel := context.WithCancel(bg)
		time.AfterFunc(lat, cancel)
		start := time.Now()
		err := f(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", name, err)
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s returned %v after the cancel", name, el-lat)
		}
	}
}

func TestLatencyCancelWaitAndBarrier(t *testing.T) {
	eps := open(t, wrap.NewLatency(inproc.New(), time.Hour), 1)
	ep := eps[0]
	bg := t.Context()
	if err := ep.Notify(bg); err != nil { // no puts: no wait
		t.Fatal(err)
	}
	// In this order: the Wait completes the phase Notify began (the
	// cancel only cuts its latency short), so the Barrier may notify.
	for _, c := range []struct {
		name string
		f    func(context.Context) error
	}{{"Wait", ep.Wait}, {"Barrier", ep.Barrier}} {
		name, f := c.name, c.f
		ctx, cancel := context.WithTimeout(bg, lat)
		start := time.Now()
		err := f(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want context.DeadlineExceeded", name, err)
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s took %v", name, el)
		}
	}
}

func TestLatencyRun(t *testing.T) {
	// A job through pgas.Run on a stack of wrappers gets correct data, and
	// a batch of async gets costs about one latency.
	const d = 5 * time.Millisecond
	c := wrap.NewCounting(wrap.NewLatency(inproc.New(), d))
	var batch time.Duration
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 2, Transport: c, SyncTimeout: 10 * time.Second},
		func(ctx context.Context, r *pgas.Rank) error {
			a, err := pgas.AllAllocArray[int64](ctx, r, 2*64, 8)
			if err != nil {
				return err
			}
			for i, blk := range a.MyBlocks() {
				for k := range blk {
					blk[k] = 10 * (i + int64(k))
				}
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			got := make([]int64, a.Len())
			start := time.Now()
			if err := a.GetRange(ctx, got, 0); err != nil { // 8 remote blocks
				return err
			}
			if r.ID() == 0 {
				batch = time.Since(start)
			}
			for i, v := range got {
				if v != 10*int64(i) {
					t.Errorf("rank %d: element %d = %d", r.ID(), i, v)
					break
				}
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Counts(0).Ops[wrap.OpGetAsync]; n != 8 {
		t.Errorf("rank 0 issued %d GetAsync, want 8", n)
	}
	if batch < d || batch >= 4*d+10*time.Millisecond {
		t.Errorf("GetRange of 8 remote blocks took %v, want about %v", batch, d)
	}
}

// nodeLat is the link latency of the NodeLatency tests.
const nodeLat = 100 * time.Millisecond

// TestNodeLatency: with 2 ranks a node, only what crosses a node pays the
// link: its latency, plus the bytes at its bandwidth; synchronisation pays
// the latency when the job spans nodes, and nothing on one node.
func TestNodeLatency(t *testing.T) {
	ctx := t.Context()
	// A long latency, so that the bounds hold on a loaded machine: an
	// operation within a node must take well under it.
	const lat = nodeLat
	link := wrap.NodeLink{RanksPerNode: 2, Latency: lat, BytesPerSec: 1e6}
	tr := wrap.NewNodeLatency(inproc.New(), link)
	if got := tr.Name(); got != "inproc+nodelatency" {
		t.Errorf("Name = %q", got)
	}
	eps := open(t, tr, 4)
	for r, ep := range eps {
		for i := range 8 {
			ep.Segment()[i] = byte(10*r + i)
		}
	}
	timed := func(what string, lo, hi time.Duration, f func() error) {
		t.Helper()
		start := time.Now()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if el := time.Since(start); el < lo || el >= hi {
			t.Errorf("%s took %v, want in [%v, %v)", what, el, lo, hi)
		}
	}
	dst := make([]byte, 8)
	timed("Get within a node", 0, lat/2, func() error { return eps[0].Get(ctx, 1, 0, dst) })
	if dst[0] != 10 {
		t.Errorf("Get from rank 1 read %v", dst)
	}
	timed("Get across nodes", lat, 3*lat, func() error { return eps[0].Get(ctx, 2, 0, dst) })
	if dst[0] != 20 {
		t.Errorf("Get from rank 2 read %v", dst)
	}
	big := make([]byte, 50_000) // 50 ms at 1 MB/s
	timed("50 kB Get across nodes", lat+50*time.Millisecond, 3*lat+100*time.Millisecond, func() error { return eps[3].Get(ctx, 0, 0, big) })
	timed("FetchAdd within a node", 0, lat/2, func() error { _, err := eps[2].FetchAdd(ctx, 3, 8, 1); return err })
	timed("FetchAdd across nodes", lat, 3*lat, func() error { _, err := eps[2].FetchAdd(ctx, 1, 8, 1); return err })
	timed("Put and Fence within a node", 0, lat/2, func() error {
		if err := eps[1].Put(ctx, 0, 16, []byte{1}); err != nil {
			return err
		}
		return eps[1].Fence(ctx)
	})
	timed("Put and Fence across nodes", lat, 3*lat, func() error {
		if err := eps[1].Put(ctx, 3, 16, []byte{1}); err != nil {
			return err
		}
		return eps[1].Fence(ctx)
	})
	timed("Barrier over 2 nodes", lat, 3*lat, func() error { all(t, eps, barrier(ctx)); return nil })
	// The ranks of a node share its link: four 25 kB transfers at once,
	// from two ranks of node 0, take 100 ms of it, not 25.
	timed("4 concurrent 25 kB gets from one node", lat+100*time.Millisecond, 3*lat+150*time.Millisecond, func() error {
		var hs []transport.Handle
		for _, r := range []int{0, 1, 0, 1} {
			hs = append(hs, eps[r].GetAsync(ctx, 2+r, 0, make([]byte, 25_000)))
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				return err
			}
		}
		return nil
	})

	// One node: nothing is remote.
	one := open(t, wrap.NewNodeLatency(inproc.New(), wrap.NodeLink{RanksPerNode: 4, Latency: lat, BytesPerSec: 1e6}), 4)
	timed("Get on one node", 0, lat/2, func() error { return one[0].Get(ctx, 3, 0, big) })
	timed("Barrier on one node", 0, lat/2, func() error { all(t, one, barrier(ctx)); return nil })

	defer func() {
		if recover() == nil {
			t.Errorf("NewNodeLatency with 0 ranks per node did not panic")
		}
	}()
	wrap.NewNodeLatency(inproc.New(), wrap.NodeLink{Latency: lat})
}

// TestNodeLatencyCollectives: a native collective over nodes takes the
// latency plus the bytes a rank receives from other nodes.
func TestNodeLatencyCollectives(t *testing.T) {
	ctx := t.Context()
	const lat = nodeLat
	eps := open(t, wrap.NewNodeLatency(transporttest.NewNative(inproc.New()), wrap.NodeLink{RanksPerNode: 2, Latency: lat, BytesPerSec: 1e6}), 4)
	nat := make([]transport.Collectives, len(eps))
	for i, x := range extended(t, eps) {
		if nat[i] = x.Collectives(); nat[i] == nil {
			t.Fatalf("rank %d: the native collectives were not passed on", i)
		}
	}
	const per = 25_000 // each rank's part: 2 parts from the other node, 50 ms
	start := time.Now()
	all(t, eps, func(ep transport.Endpoint) error {
		send := bytes.Repeat([]byte{byte(ep.Rank())}, per)
		recv := make([]byte, 4*per)
		counts, displs := []int{per, per, per, per}, []int{0, per, 2 * per, 3 * per}
		if err := nat[ep.Rank()].Allgatherv(ctx, send, recv, counts, displs); err != nil {
			return err
		}
		for j := range 4 {
			if recv[j*per] != byte(j) {
				return errors.New("Allgatherv moved the wrong bytes")
			}
		}
		return nil
	})
	if el := time.Since(start); el < lat+50*time.Millisecond {
		t.Errorf("Allgatherv over 2 nodes took %v, want at least %v", el, lat+50*time.Millisecond)
	}
}
