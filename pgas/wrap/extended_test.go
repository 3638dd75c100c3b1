package wrap_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/transport/transporttest"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// stacks are the wrappers, alone and composed, over an inner transport.
var stacks = []struct {
	name string
	make func(inner transport.Transport) transport.Transport
}{
	{"counting", func(in transport.Transport) transport.Transport { return wrap.NewCounting(in) }},
	{"faulty", func(in transport.Transport) transport.Transport { return wrap.NewFaulty(in, 0, -1) }},
	{"latency", func(in transport.Transport) transport.Transport { return wrap.NewLatency(in, 0) }},
	{"counting+latency+faulty", func(in transport.Transport) transport.Transport {
		return wrap.NewCounting(wrap.NewLatency(wrap.NewFaulty(in, 0, -1), 0))
	}},
	{"faulty+counting", func(in transport.Transport) transport.Transport {
		return wrap.NewFaulty(wrap.NewCounting(in), 0, -1)
	}},
}

// extended returns the Extended form of every endpoint, which must be the
// endpoint itself: a wrapper's endpoints implement Extended.
func extended(t *testing.T, eps []transport.Endpoint) []transport.Extended {
	t.Helper()
	xs := make([]transport.Extended, len(eps))
	for i, ep := range eps {
		x, ok := ep.(transport.Extended)
		if !ok {
			t.Fatalf("rank %d: endpoint %T does not implement transport.Extended", i, ep)
		}
		xs[i] = x
	}
	return xs
}

// TestWrappersForwardExtras: every wrapper and stack of wrappers over a
// transport with native collectives and failure notification passes both
// on, and over one without them offers neither.
func TestWrappersForwardExtras(t *testing.T) {
	for _, st := range stacks {
		t.Run(st.name, func(t *testing.T) {
			ctx := t.Context()
			xs := extended(t, open(t, st.make(inproc.New()), 2))
			for i, x := range xs {
				if x.Collectives() != nil || x.Failed() != nil {
					t.Errorf("over inproc, rank %d: Collectives() = %v, Failed() = %v; want nil, nil", i, x.Collectives(), x.Failed())
				}
			}

			xs = extended(t, open(t, st.make(transporttest.NewNative(inproc.New())), 3))
			for i, x := range xs {
				if x.Collectives() == nil || x.Failed() == nil {
					t.Fatalf("over native, rank %d: Collectives() = %v, Failed() = %v; want both", i, x.Collectives(), x.Failed())
				}
			}
			// The forwarded collectives move the data.
			all(t, eps(xs), func(ep transport.Endpoint) error {
				x := ep.(transport.Extended)
				buf := []byte{0, 0, 0}
				if x.Rank() == 2 {
					copy(buf, "abc")
				}
				if err := x.Collectives().Broadcast(ctx, 2, buf); err != nil {
					return err
				}
				if string(buf) != "abc" {
					return fmt.Errorf("Broadcast gave %q; want \"abc\"", buf)
				}
				return nil
			})
			// Failed is the inner endpoint's: a failure of rank 1 closes
			// it on rank 0.
			select {
			case <-xs[0].Failed():
				t.Fatal("Failed closed before any rank failed")
			default:
			}
			xs[1].Fail(errors.New("boom"))
			select {
			case <-xs[0].Failed():
			case <-time.After(5 * time.Second):
				t.Fatal("Failed of rank 0 did not close after rank 1 failed")
			}
		})
	}
}

func eps(xs []transport.Extended) []transport.Endpoint {
	out := make([]transport.Endpoint, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// TestCountingNative: Counting counts each native collective call as one
// operation of its kind, and the bytes it carries to and from other ranks
// by its arguments, apart from the one-sided traffic in Peers.
func TestCountingNative(t *testing.T) {
	ctx := t.Context()
	const n = 3
	c := wrap.NewCounting(transporttest.NewNative(inproc.New()))
	xs := extended(t, open(t, c, n))
	all(t, eps(xs), func(ep transport.Endpoint) error {
		me := ep.Rank()
		nat := ep.(transport.Extended).Collectives()
		// Broadcast of 10 bytes from rank 1.
		if err := nat.Broadcast(ctx, 1, make([]byte, 10)); err != nil {
			return err
		}
		// Allgatherv: rank q contributes q+1 bytes.
		counts, displs := []int{1, 2, 3}, []int{0, 1, 3}
		if err := nat.Allgatherv(ctx, make([]byte, me+1), make([]byte, 6), counts, displs); err != nil {
			return err
		}
		// Alltoallv: rank i sends i+j bytes to rank j.
		sc, sd, rc, rd := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		var stot, rtot int
		for q := range n {
			sc[q], sd[q], rc[q], rd[q] = me+q, stot, q+me, rtot
			stot += sc[q]
			rtot += rc[q]
		}
		return nat.Alltoallv(ctx, make([]byte, stot), sc, sd, make([]byte, rtot), rc, rd)
	})
	var total int64
	for me := range n {
		got := c.Counts(me)
		want := wrap.Counts{Ops: ops(wrap.OpBroadcast, 1, wrap.OpAllgatherv, 1, wrap.OpAlltoallv, 1), Peers: make(transport.Traffic, n)}
		bcastSent, bcastRecv := 0, 10
		if me == 1 {
			bcastSent, bcastRecv = 10*(n-1), 0
		}
		agSent, agRecv := (me+1)*(n-1), 6-(me+1)
		var a2aSent int
		for q := range n {
			if q != me {
				a2aSent += me + q
			}
		}
		want.NativeSent = int64(bcastSent + agSent + a2aSent)
		want.NativeReceived = int64(bcastRecv + agRecv + a2aSent) // i+j is symmetric
		if !equalCounts(got, want) || got.NativeSent != want.NativeSent || got.NativeReceived != want.NativeReceived {
			t.Errorf("Counts(%d) = %+v; want %+v", me, got, want)
		}
		total += got.NativeSent
	}
	tot := c.Total()
	if tot.Ops[wrap.OpAllgatherv] != n || tot.NativeSent != total || tot.NativeSent != tot.NativeReceived {
		t.Errorf("Total() = %+v; want %d Allgatherv and NativeSent = NativeReceived = %d", tot, n, total)
	}
	c.Reset()
	if got := c.Counts(0); got.NativeSent != 0 || got.NativeReceived != 0 || got.Ops[wrap.OpBroadcast] != 0 {
		t.Errorf("Counts(0) after Reset = %+v", got)
	}
}

// TestLatencyNative: a forwarded native collective takes the latency.
func TestLatencyNative(t *testing.T) {
	ctx := t.Context()
	xs := extended(t, open(t, wrap.NewLatency(transporttest.NewNative(inproc.New()), lat), 2))
	start := time.Now()
	all(t, eps(xs), func(ep transport.Endpoint) error {
		return ep.(transport.Extended).Collectives().Broadcast(ctx, 0, make([]byte, 8))
	})
	if el := time.Since(start); el < lat {
		t.Errorf("Broadcast took %v, want at least %v", el, lat)
	}
}

// TestFaultyNative: native collective calls are operations of the rank
// like any other; Faulty fails the chosen one without performing it, and
// the other ranks, blocked in the collective, learn of the failure.
func TestFaultyNative(t *testing.T) {
	ctx := t.Context()
	f := wrap.NewFaulty(transporttest.NewNative(inproc.New()), 1, 1)
	xs := extended(t, open(t, f, 3))
	errs := make([]error, 3)
	done := make(chan int, 3)
	for i, x := range xs {
		go func() {
			defer func() { done <- i }()
			if err := x.Barrier(ctx); err != nil { // op 0
				errs[i] = err
				return
			}
			buf := make([]byte, 4)
			errs[i] = x.Collectives().Allgatherv(ctx, buf[i:i+1], buf, []int{1, 1, 1}, []int{0, 1, 2}) // op 1
			if errs[i] != nil {
				x.Fail(errs[i])
			}
		}()
	}
	for range 3 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a rank hangs after the injected failure")
		}
	}
	var ie *wrap.InjectedError
	if !errors.As(errs[1], &ie) || *ie != (wrap.InjectedError{Rank: 1, Op: 1, Method: "Allgatherv"}) {
		t.Fatalf("rank 1: %v; want the injected failure of op 1 (Allgatherv)", errs[1])
	}
	for _, r := range []int{0, 2} {
		var rf *transport.RankFailedError
		if !errors.As(errs[r], &rf) || rf.Rank != 1 {
			t.Errorf("rank %d: %v; want a RankFailedError naming rank 1", r, errs[r])
		}
	}
	if !f.Injected() || f.Ops(1) != 2 {
		t.Errorf("Injected() = %v, Ops(1) = %d; want true, 2", f.Injected(), f.Ops(1))
	}
}

// allgatherBody gathers every rank's ID+1, three of each, privately, on
// the world team, and checks the result.
func allgatherBody(opts ...coll.Option) func(ctx context.Context, r *pgas.Rank) error {
	return func(ctx context.Context, r *pgas.Rank) error {
		n := r.N()
		counts := make([]int, n)
		for q := range counts {
			counts[q] = 3
		}
		mine := []int32{int32(r.ID() + 1), int32(r.ID() + 1), int32(r.ID() + 1)}
		all := make([]int32, 3*n)
		if err := coll.AllgatherV(ctx, r.World(), coll.Private(all), coll.Private(mine), counts, nil, nil, opts...); err != nil {
			return err
		}
		for i, v := range all {
			if v != int32(i/3+1) {
				return fmt.Errorf("AllgatherV gave %v", all)
			}
		}
		return nil
	}
}

// TestCountingNativeThroughPgas: under pgas.Run, a rank on a counting
// wrapper of a transport with native collectives still has them
// (Rank.Native), package coll uses them through the wrapper, and the
// result is the same as with the library's own algorithm.
func TestCountingNativeThroughPgas(t *testing.T) {
	for _, noNative := range []bool{false, true} {
		nt := transporttest.NewNative(inproc.New())
		c := wrap.NewCounting(nt)
		var opts []coll.Option
		if noNative {
			opts = append(opts, coll.NoNative())
		}
		body := allgatherBody(opts...)
		err := pgas.Run(t.Context(), pgas.Config{Ranks: 4, Transport: c}, func(ctx context.Context, r *pgas.Rank) error {
			if r.Native() == nil {
				return errors.New("a counting wrapper hid the native collectives")
			}
			return body(ctx, r)
		})
		if err != nil {
			t.Fatalf("NoNative=%v: %v", noNative, err)
		}
		tot := c.Total()
		want := int64(4)
		if noNative {
			want = 0
		}
		if got := nativeOps(tot); got != want || nt.Calls() != want {
			t.Errorf("NoNative=%v: %d native calls counted, %d made; want %d", noNative, got, nt.Calls(), want)
		}
		if !noNative && (tot.NativeSent != 4*3*4*3 || tot.NativeReceived != tot.NativeSent) {
			t.Errorf("native bytes sent, received = %d, %d; want %d each", tot.NativeSent, tot.NativeReceived, 4*3*4*3)
		}
	}
}

// TestFaultyEveryOpNative is the fault-injection loop over a job whose
// collective goes native through the wrapper: a failure at every operation
// of rank 2, the native call among them, fails the job with that error,
// and nothing hangs.
func TestFaultyEveryOpNative(t *testing.T) {
	var methods []string
	for op := int64(0); ; op++ {
		f := wrap.NewFaulty(transporttest.NewNative(inproc.New()), 2, op)
		cfg := pgas.Config{Ranks: 3, Transport: f, ShutdownTimeout: 10 * time.Second}
		err := pgas.Run(t.Context(), cfg, allgatherBody())
		if !f.Injected() {
			if err != nil {
				t.Fatalf("op %d: no failure injected, but the job failed: %v", op, err)
			}
			break
		}
		var ie *wrap.InjectedError
		if !errors.As(err, &ie) || ie.Rank != 2 || ie.Op != op {
			t.Fatalf("op %d: job error %v; want the injected failure", op, err)
		}
		methods = append(methods, ie.Method)
	}
	if !slices.ContainsFunc(methods, func(m string) bool { return m == "Allgatherv" || m == "Alltoallv" }) {
		t.Errorf("the failures hit %v; want a native collective among them", methods)
	}
}

// nativeOps is the number of native collective calls in c.
func nativeOps(c wrap.Counts) int64 {
	return c.Ops[wrap.OpBroadcast] + c.Ops[wrap.OpAllgatherv] + c.Ops[wrap.OpAlltoallv]
}
