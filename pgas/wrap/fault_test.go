package wrap_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

func TestFaultyFiresAtTheChosenOp(t *testing.T) {
	ctx := t.Context()
	f := wrap.NewFaulty(inproc.New(), 2, 3)
	if f.Injected() || f.Ops(2) != 0 {
		t.Fatal("Injected or Ops before Open")
	}
	eps := open(t, f, 3)
	e2 := eps[2]
	eps[1].Segment()[0] = 42

	// Other ranks' operations do not count towards rank 2's.
	for range 5 {
		if err := eps[0].Put(ctx, 1, 8, []byte{1}); err != nil {
			t.Fatalf("rank 0: %v", err)
		}
	}
	_, _, _ = e2.Rank(), e2.Size(), e2.Segment() // not operations
	buf := []byte{7}
	if err := e2.Put(ctx, 1, 16, buf); err != nil { // op 0
		t.Fatal(err)
	}
	if err := e2.Get(ctx, 1, 0, buf); err != nil || buf[0] != 42 { // op 1
		t.Fatal(buf, err)
	}
	if _, err := e2.FetchAdd(ctx, 0, 8, 1); err != nil { // op 2
		t.Fatal(err)
	}
	if f.Injected() {
		t.Fatal("Injected before op 3")
	}
	err := e2.Put(ctx, 1, 0, []byte{99}) // op 3: fails, not performed
	if !errors.Is(err, wrap.ErrInjected) {
		t.Fatalf("op 3 returned %v, want ErrInjected", err)
	}
	if got, want := err.Error(), "wrap: injected failure: rank 2 op 3 (Put)"; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
	var ie *wrap.InjectedError
	if !errors.As(err, &ie) || *ie != (wrap.InjectedError{Rank: 2, Op: 3, Method: "Put"}) {
		t.Fatalf("errors.As: %+v", ie)
	}
	if eps[1].Segment()[0] != 42 {
		t.Fatal("the failed Put was performed")
	}
	if !f.Injected() {
		t.Fatal("Injected() = false after the fault")
	}
	if err := e2.Get(ctx, 1, 0, buf); err != nil || buf[0] != 42 { // op 4 passes
		t.Fatal(buf, err)
	}
	if got := [3]int64{f.Ops(0), f.Ops(1), f.Ops(2)}; got != [3]int64{5, 0, 5} {
		t.Fatalf("Ops = %v, want [5 0 5]", got)
	}
	if f.Ops(-1) != 0 || f.Ops(3) != 0 {
		t.Fatal("Ops of a rank not in the job")
	}

	// A new job starts afresh.
	eps = open(t, f, 3)
	if f.Injected() || f.Ops(2) != 0 || f.Ops(0) != 0 {
		t.Fatalf("after reopen: Injected %v, Ops(2) %d", f.Injected(), f.Ops(2))
	}
	for i := range 3 {
		if err := eps[2].Fence(ctx); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	if err := eps[2].Fence(ctx); !errors.Is(err, wrap.ErrInjected) || !strings.HasSuffix(err.Error(), "rank 2 op 3 (Fence)") {
		t.Fatalf("op 3 in the second job: %v", err)
	}
}

func TestFaultyEveryMethod(t *testing.T) {
	type call func(ctx context.Context, ep transport.Endpoint) error
	buf := make([]byte, 8)
	methods := []struct {
		name string
		pre  call // an operation that succeeds first, or nil
		call call
	}{
		{"Put", nil, func(ctx context.Context, ep transport.Endpoint) error { return ep.Put(ctx, 0, 0, buf) }},
		{"Get", nil, func(ctx context.Context, ep transport.Endpoint) error { return ep.Get(ctx, 0, 0, buf) }},
		{"PutAsync", nil, func(ctx context.Context, ep transport.Endpoint) error { return ep.PutAsync(ctx, 0, 0, buf).Wait(ctx) }},
		{"GetAsync", nil, func(ctx context.Context, ep transport.Endpoint) error { return ep.GetAsync(ctx, 0, 0, buf).Wait(ctx) }},
		{"Fence", nil, func(ctx context.Context, ep transport.Endpoint) error { return ep.Fence(ctx) }},
		{"FetchAdd", nil, func(ctx context.Context, ep transport.Endpoint) error {
			_, err := ep.FetchAdd(ctx, 0, 0, 1)
			return err
		}},
		{"CompareAndSwap", nil, func(ctx context.Context, ep transport.Endpoint) error {
			_, err := ep.CompareAndSwap(ctx, 0, 0, 0, 1)
			return err
		}},
		{"Load", nil, func(ctx context.Context, ep transport.Endpoint) error {
			_, err := ep.Load(ctx, 0, 0)
			return err
		}},
		{"Notify", nil, func(ctx context.Context, ep transport.Endpoint) error { return ep.Notify(ctx) }},
		{"Wait", func(ctx context.Context, ep transport.Endpoint) error { return ep.Notify(ctx) },
			func(ctx context.Context, ep transport.Endpoint) error { return ep.Wait(ctx) }},
		{"Barrier", nil, func(ctx context.Context, ep transport.Endpoint) error { return ep.Barrier(ctx) }},
	}
	for _, m := range methods {
		t.Run(m.name, func(t *testing.T) {
			ctx := t.Context()
			op := int64(0)
			if m.pre != nil {
				op = 1
			}
			f := wrap.NewFaulty(inproc.New(), 0, op)
			ep := open(t, f, 1)[0]
			if m.pre != nil {
				if err := m.pre(ctx, ep); err != nil {
					t.Fatal(err)
				}
			}
			err := m.call(ctx, ep)
			want := fmt.Sprintf("wrap: injected failure: rank 0 op %d (%s)", op, m.name)
			if !errors.Is(err, wrap.ErrInjected) || err.Error() != want {
				t.Fatalf("%s = %v, want %q", m.name, err, want)
			}
			if !f.Injected() || f.Ops(0) != op+1 {
				t.Fatalf("Injected %v, Ops %d", f.Injected(), f.Ops(0))
			}
		})
	}
}

func TestFaultyAsyncNotPerformed(t *testing.T) {
	ctx := t.Context()
	f := wrap.NewFaulty(inproc.New(), 0, 0)
	eps := open(t, f, 2)
	copy(eps[1].Segment(), "remote")
	dst := []byte("local!")
	h := eps[0].GetAsync(ctx, 1, 0, dst)
	if err := h.Wait(ctx); !errors.Is(err, wrap.ErrInjected) {
		t.Fatalf("Wait = %v, want ErrInjected", err)
	}
	if string(dst) != "local!" {
		t.Fatalf("the failed GetAsync filled dst with %q", dst)
	}
	if err := eps[0].GetAsync(ctx, 1, 0, dst).Wait(ctx); err != nil || string(dst) != "remote" {
		t.Fatalf("next GetAsync: %q, %v", dst, err)
	}
}

func TestFaultyNeverFires(t *testing.T) {
	ctx := t.Context()
	for _, f := range []*wrap.Faulty{wrap.NewFaulty(inproc.New(), 0, -1), wrap.NewFaulty(inproc.New(), 5, 0)} {
		eps := open(t, f, 2)
		for range 10 {
			if err := eps[0].Put(ctx, 1, 0, []byte{1}); err != nil {
				t.Fatal(err)
			}
		}
		all(t, eps, barrier(ctx))
		if f.Injected() || f.Ops(0) != 11 || f.Ops(1) != 1 {
			t.Fatalf("Injected %v, Ops %d %d", f.Injected(), f.Ops(0), f.Ops(1))
		}
	}
}

// faultBody is a job that uses every kind of operation. The operations of
// each rank are deterministic: no rank but 0 takes a lock, and rank 0 takes
// its allocator lock uncontended.
func faultBody(ctx context.Context, r *pgas.Rank) error {
	a, err := pgas.AllAllocArray[int64](ctx, r, 3*32, 8)
	if err != nil {
		return err
	}
	for _, blk := range a.MyBlocks() {
		for k := range blk {
			blk[k] = int64(r.ID())
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	next := (r.ID() + 1) % r.N()
	if v, err := a.Get(ctx, int64(8*next)); err != nil {
		return err
	} else if v != int64(next) {
		return fmt.Errorf("element %d = %d", 8*next, v)
	}
	got := make([]int64, a.Len())
	if err := a.GetRange(ctx, got, 0); err != nil {
		return err
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	if err := a.PutRange(ctx, int64(8*next), []int64{1, 2, 3}); err != nil {
		return err
	}
	if err := r.Fence(ctx); err != nil {
		return err
	}
	if _, err := pgas.FetchAdd(ctx, a, 31, 1); err != nil {
		return err
	}
	if _, err := pgas.AtomicLoad(ctx, a, 31); err != nil {
		return err
	}
	if err := r.Notify(ctx); err != nil {
		return err
	}
	if err := r.Wait(ctx); err != nil {
		return err
	}
	return a.AllFree(ctx)
}

func TestFaultyEveryOpFailsTheRun(t *testing.T) {
	// For every operation of every rank of a job run by pgas.Run: failing
	// it fails the job with an error wrapping ErrInjected, and nothing
	// hangs. The first op index that does not fire is one past the rank's
	// last operation, and that run succeeds.
	const ranks = 3
	for rank := range ranks {
		var op int64
		for ; ; op++ {
			if op > 2000 {
				t.Fatalf("rank %d: still injecting at op %d", rank, op)
			}
			f := wrap.NewFaulty(inproc.New(), rank, op)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			cfg := pgas.Config{Ranks: ranks, Transport: f, FragmentBytes: 64, ShutdownTimeout: 3 * time.Second}
			err := pgas.Run(ctx, cfg, faultBody)
			cancel()
			if !f.Injected() {
				if err != nil {
					t.Fatalf("rank %d op %d: no fault injected, but the job failed: %v", rank, op, err)
				}
				if f.Ops(rank) != op {
					t.Fatalf("rank %d issued %d ops in the clean run; faults fired at ops 0..%d", rank, f.Ops(rank), op-1)
				}
				break
			}
			if !errors.Is(err, wrap.ErrInjected) {
				t.Fatalf("rank %d op %d: job error %v, want one wrapping ErrInjected", rank, op, err)
			}
			if want := fmt.Sprintf("rank %d op %d (", rank, op); !strings.Contains(err.Error(), want) {
				t.Fatalf("rank %d op %d: job error %q does not name the op", rank, op, err)
			}
		}
		t.Logf("rank %d: %d operations, each failed once", rank, op)
		if op < 10 {
			t.Errorf("rank %d issued only %d operations", rank, op)
		}
	}
}
