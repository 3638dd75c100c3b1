package inproc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/pgastest"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

func TestConformance(t *testing.T) {
	for _, cfg := range []pgas.Config{
		{Ranks: 1},
		{Ranks: 2, NoCheck: true},
		// Bulk transfers split into many fragments, some inside an element.
		{Ranks: 3, RanksPerNode: 2, SegmentBytes: 1 << 20, FragmentBytes: 20},
		{Ranks: 8, RanksPerNode: 4, Transport: inproc.New()},
		{Ranks: 64, RanksPerNode: 8, SegmentBytes: 1 << 20}, // the checks scale their work down above 8 ranks
	} {
		t.Run(fmt.Sprintf("ranks=%d", cfg.Ranks), func(t *testing.T) {
			pgastest.Test(t, cfg)
		})
	}
}

// checkNoLeak fails t if the number of goroutines does not come back to
// base within 2 s.
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines 2s after the job, %d before it:\n%s", runtime.NumGoroutine(), base, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rankErrors records what each rank's function returned. It is test
// instrumentation: each rank writes only its own slot.
type rankErrors struct {
	mu       sync.Mutex
	err      []error
	returned []bool
}

func newRankErrors(n int) *rankErrors {
	return &rankErrors{err: make([]error, n), returned: make([]bool, n)}
}

func (e *rankErrors) set(rank int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.err[rank], e.returned[rank] = err, true
}

func (e *rankErrors) get(rank int) (error, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err[rank], e.returned[rank]
}

// failureJob runs a job of failRanks ranks in which rank failRank fails
// (how: "error" returns errBoom, "panic" panics with "boom", "cancel"
// waits while the test cancels the job's context) once every other rank is
// about to block (where: "barrier" in a Barrier, "lock" in a Lock wait on a
// lock that rank failRank holds, "gets" in a loop of remote Gets). It
// returns Run's error, what every other rank returned, and how long Run
// took to return after the failure.
func failureJob(t *testing.T, how, where string) (error, *rankErrors, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var ready atomic.Int32 // ranks about to block
	var failAt atomic.Int64
	errs := newRankErrors(failRanks)

	body := func(ctx context.Context, r *pgas.Rank) (err error) {
		me := r.ID()
		l, err := r.AllLockAlloc(ctx)
		if err != nil {
			return err
		}
		a, err := pgas.AllAllocArray[int64](ctx, r, int64(r.N()), pgas.Cyclic)
		if err != nil {
			return err
		}
		if me == failRank && where == "lock" {
			if err := l.Lock(ctx); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if me == failRank {
			if how == "cancel" {
				ready.Add(1)
				<-ctx.Done()
				return ctx.Err()
			}
			for ready.Load() < failRanks-1 {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // let them block
			failAt.Store(time.Now().UnixNano())
			if how == "panic" {
				panic("boom")
			}
			return errBoom
		}
		defer func() { errs.set(me, err) }()
		ready.Add(1)
		switch where {
		case "barrier":
			return r.Barrier(ctx)
		case "lock":
			if err := l.Lock(ctx); err != nil {
				return err
			}
			return fmt.Errorf("rank %d got the lock that rank %d holds", me, failRank)
		default:
			for {
				if _, err := a.Get(ctx, int64((me+1)%r.N())); err != nil {
					return err
				}
			}
		}
	}

	cancelled := make(chan struct{})
	go func() {
		defer close(cancelled)
		if how != "cancel" {
			return
		}
		for ready.Load() < failRanks {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		failAt.Store(time.Now().UnixNano())
		cancel()
	}()
	err := pgas.Run(ctx, pgas.Config{Ranks: failRanks}, body)
	end := time.Now()
	<-cancelled
	if err == nil {
		t.Fatal("Run returned nil")
	}
	if failAt.Load() == 0 {
		t.Fatalf("the job ended before the failure: %v", err)
	}
	return err, errs, end.Sub(time.Unix(0, failAt.Load()))
}

const failRanks, failRank = 8, 3

var errBoom = errors.New("boom")

// TestFailure: when rank 3 of 8 returns an error or panics, or the job's
// context is cancelled, while the other ranks are blocked in a barrier, in
// a lock wait or in a loop of remote gets, Run returns within 5 s an error
// naming the cause, every rank returns an error, and no goroutine is left.
func TestFailure(t *testing.T) {
	for _, how := range []string{"error", "panic", "cancel"} {
		for _, where := range []string{"barrier", "lock", "gets"} {
			t.Run(how+"/"+where, func(t *testing.T) {
				base := runtime.NumGoroutine()
				err, errs, d := failureJob(t, how, where)
				if d > 5*time.Second {
					t.Errorf("Run returned %v after the failure; want at most 5s", d)
				}
				if strings.Contains(err.Error(), "did not return") {
					t.Errorf("Run reports stuck ranks: %v", err)
				}
				name := fmt.Sprintf("pgas: rank %d: ", failRank)
				switch how {
				case "error":
					if !errors.Is(err, errBoom) || err.Error() != name+"boom" {
						t.Errorf("Run = %q; want %q, rank %d's error and no echoes of it", err, name+"boom", failRank)
					}
				case "panic":
					var pe *pgas.PanicError
					if !errors.As(err, &pe) || pe.Value != "boom" || !strings.HasPrefix(err.Error(), name) {
						t.Errorf("Run = %v; want rank %d's panic", err, failRank)
					}
				case "cancel":
					if !errors.Is(err, context.Canceled) {
						t.Errorf("Run = %v; want an error wrapping context.Canceled", err)
					}
				}
				for p := range failRanks {
					if p == failRank {
						continue
					}
					perr, ok := errs.get(p)
					var rf *pgas.RankFailedError
					switch {
					case !ok:
						t.Errorf("rank %d did not return", p)
					case perr == nil:
						t.Errorf("rank %d returned nil", p)
					case how == "cancel":
						if !errors.Is(perr, context.Canceled) {
							t.Errorf("rank %d returned %v; want an error wrapping context.Canceled", p, perr)
						}
					case errors.As(perr, &rf):
						if rf.Rank != failRank {
							t.Errorf("rank %d returned %v; want the failure of rank %d", p, perr, failRank)
						}
					default:
						t.Errorf("rank %d returned %v; want a *RankFailedError naming rank %d", p, perr, failRank)
					}
				}
				checkNoLeak(t, base)
			})
		}
	}
}

// TestRankErrorNamesFailedRank: a rank whose remote Gets are cut short by
// another rank's failure gets an error naming that rank, as package pgas
// documents ("every other rank's blocking calls return an error wrapping a
// *RankFailedError naming it").
func TestRankErrorNamesFailedRank(t *testing.T) {
	for attempt := range 20 {
		_, errs, _ := failureJob(t, "error", "gets")
		for p := range failRanks {
			if p == failRank {
				continue
			}
			perr, _ := errs.get(p)
			var rf *pgas.RankFailedError
			if !errors.As(perr, &rf) || rf.Rank != failRank {
				t.Fatalf("job %d: rank %d returned %v; want a *RankFailedError naming rank %d", attempt, p, perr, failRank)
			}
		}
	}
}

// TestSyncTimeout: a rank that never reaches a barrier, or never releases a
// lock, makes the job fail with ErrTimeout after Config.SyncTimeout.
func TestSyncTimeout(t *testing.T) {
	const ranks, absent = 4, 3
	for _, where := range []string{"barrier", "lock"} {
		t.Run(where, func(t *testing.T) {
			base := runtime.NumGoroutine()
			errs := newRankErrors(ranks)
			body := func(ctx context.Context, r *pgas.Rank) (err error) {
				defer func() { errs.set(r.ID(), err) }()
				l, err := r.AllLockAlloc(ctx)
				if err != nil {
					return err
				}
				if r.ID() == absent {
					if where == "lock" {
						if err := l.Lock(ctx); err != nil {
							return err
						}
					}
					if err := r.Barrier(ctx); err != nil {
						return err
					}
					<-ctx.Done()
					return ctx.Err()
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				if where == "lock" {
					if err := l.Lock(ctx); err != nil {
						return err
					}
					return fmt.Errorf("rank %d got the lock that rank %d holds", r.ID(), absent)
				}
				return r.Barrier(ctx)
			}
			start := time.Now()
			err := pgas.Run(t.Context(), pgas.Config{Ranks: ranks, SyncTimeout: 200 * time.Millisecond}, body)
			d := time.Since(start)
			if !errors.Is(err, pgas.ErrTimeout) {
				t.Fatalf("Run = %v; want an error wrapping pgas.ErrTimeout", err)
			}
			if d < 200*time.Millisecond || d > 5*time.Second {
				t.Errorf("Run returned after %v with SyncTimeout 200ms", d)
			}
			if where == "barrier" && !strings.Contains(err.Error(), fmt.Sprintf("[%d]", absent)) {
				t.Errorf("Run = %v; want the missing rank [%d] named", err, absent)
			}
			for p := range ranks {
				if perr, ok := errs.get(p); !ok || perr == nil {
					t.Errorf("rank %d returned %v (returned: %v); want an error", p, perr, ok)
				}
			}
			checkNoLeak(t, base)
		})
	}
}

// TestCancelledBeforeRun: a job whose context is already cancelled ends at
// the start barrier with context.Canceled, without calling the function.
func TestCancelledBeforeRun(t *testing.T) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var called atomic.Bool
	start := time.Now()
	err := pgas.Run(ctx, pgas.Config{Ranks: 8}, func(context.Context, *pgas.Rank) error {
		called.Store(true)
		return nil
	})
	if !errors.Is(err, context.Canceled) || called.Load() {
		t.Errorf("Run with a cancelled context = %v, called the function: %v; want context.Canceled without calling it", err, called.Load())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v", d)
	}
	checkNoLeak(t, base)
}

// TestNoLeakAfterSuccess: a job that succeeds leaves no goroutine behind.
func TestNoLeakAfterSuccess(t *testing.T) {
	base := runtime.NumGoroutine()
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 8}, func(ctx context.Context, r *pgas.Rank) error {
		return r.Barrier(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	checkNoLeak(t, base)
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  pgas.Config
		want []string // substrings of the error; none for a valid config
	}{
		{pgas.Config{}, nil},
		{pgas.Config{Ranks: 3, RanksPerNode: 3, SyncTimeout: -1}, nil},
		{pgas.Config{Ranks: 2, SegmentBytes: pgas.MinSegmentBytes * 2, FragmentBytes: 8}, nil},
		{pgas.Config{Ranks: -1}, []string{"Ranks = -1"}},
		{pgas.Config{Ranks: 4, RanksPerNode: -2}, []string{"RanksPerNode = -2"}},
		{pgas.Config{Ranks: 2, SegmentBytes: 1<<20 + 4}, []string{"not a multiple of 8"}},
		{pgas.Config{Ranks: 2, SegmentBytes: 4096}, []string{"SegmentBytes = 4096, want at least"}},
		{pgas.Config{Ranks: 2, SegmentBytes: -8}, []string{"SegmentBytes = -8"}},
		{pgas.Config{Ranks: 2, ShutdownTimeout: -time.Second}, []string{"ShutdownTimeout = -1s is negative"}},
		{pgas.Config{Ranks: 2, FragmentBytes: 4}, []string{"FragmentBytes = 4"}},
		{pgas.Config{Ranks: 2, FragmentBytes: -1}, []string{"FragmentBytes = -1"}},
		{
			pgas.Config{Ranks: -1, SegmentBytes: 12, FragmentBytes: 1, ShutdownTimeout: -1},
			[]string{"Ranks = -1", "SegmentBytes = 12 is not a multiple of 8", "FragmentBytes = 1", "ShutdownTimeout"},
		},
	} {
		err := tc.cfg.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v.Validate() = %v; want nil", tc.cfg, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v.Validate() = nil; want an error mentioning %q", tc.cfg, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v.Validate() = %v; want it to mention %q", tc.cfg, err, w)
			}
		}
		var called atomic.Bool
		rerr := pgas.Run(t.Context(), tc.cfg, func(context.Context, *pgas.Rank) error {
			called.Store(true)
			return nil
		})
		if rerr == nil || called.Load() {
			t.Errorf("Run(%+v) = %v, ran the function: %v; want the Validate error without running", tc.cfg, rerr, called.Load())
		}
	}
}

// TestOpen: the transport rejects bad jobs and hands out zeroed, aligned
// segments of the requested size.
func TestOpen(t *testing.T) {
	tr := inproc.New()
	if tr.Name() != "inproc" {
		t.Errorf("Name() = %q", tr.Name())
	}
	for _, job := range []transport.Job{{Ranks: 0, SegmentBytes: 64}, {Ranks: 2, SegmentBytes: 12}, {Ranks: 2, SegmentBytes: -8}} {
		if _, err := tr.Open(t.Context(), job); err == nil {
			t.Errorf("Open(%+v) succeeded; want an error", job)
		}
	}
	eps, err := tr.Open(t.Context(), transport.Job{ID: "t", Ranks: 3, SegmentBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	for i, ep := range eps {
		if ep.Rank() != i || ep.Size() != 3 || len(ep.Segment()) != 4096 {
			t.Errorf("endpoint %d: Rank %d, Size %d, len(Segment) %d", i, ep.Rank(), ep.Size(), len(ep.Segment()))
		}
		for _, b := range ep.Segment() {
			if b != 0 {
				t.Fatalf("endpoint %d: segment not zero", i)
			}
		}
	}
	for _, ep := range eps {
		if err := ep.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestEndpointErrors: the sentinel errors of the transport contract, and
// the safety of calls with arguments the contract rules out.
func TestEndpointErrors(t *testing.T) {
	base := runtime.NumGoroutine()
	ctx := t.Context()
	eps, err := inproc.New().Open(ctx, transport.Job{ID: "t", Ranks: 2, SegmentBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	e0 := eps[0]
	buf := make([]byte, 16)
	if err := e0.Wait(ctx); err == nil {
		t.Error("wait without notify: no error")
	}
	// Ranges are the caller's to check (pgas does, see TestBadAccess in
	// package pgas); a bad one panics on a bounds check rather than
	// reaching memory outside a segment, and leaves the segments as they
	// were.
	for _, tc := range []struct {
		name string
		call func()
	}{
		{"put past the end", func() { e0.Put(ctx, 1, 1020, buf[:8]) }},
		{"get from rank 2", func() { e0.Get(ctx, 2, 0, buf) }},
		{"get at a negative offset", func() { e0.Get(ctx, 1, -8, buf) }},
		{"async get past the end", func() { e0.GetAsync(ctx, 1, 1016, buf) }},
		{"fetch-add straddling the end", func() { e0.FetchAdd(ctx, 1, 1020, 1) }},
		{"compare-and-swap at the end", func() { e0.CompareAndSwap(ctx, 1, 1024, 0, 1) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.call()
		}()
	}
	for r, ep := range eps {
		if !bytes.Equal(ep.Segment(), make([]byte, 1024)) {
			t.Errorf("rank %d's segment changed by the bad calls", r)
		}
	}
	if err := e0.Notify(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e0.Notify(ctx); err == nil {
		t.Error("second Notify without Wait: no error")
	}
	// Data moves through the segments.
	copy(buf, "0123456789abcdef")
	if err := e0.Put(ctx, 1, 64, buf); err != nil {
		t.Fatal(err)
	}
	if got := string(eps[1].Segment()[64:80]); got != "0123456789abcdef" {
		t.Errorf("after Put, target segment holds %q", got)
	}
	if v, err := e0.FetchAdd(ctx, 1, 128, 5); v != 0 || err != nil {
		t.Errorf("FetchAdd = %d, %v; want 0, nil", v, err)
	}
	if v, err := eps[1].CompareAndSwap(ctx, 1, 128, 5, 9); v != 5 || err != nil {
		t.Errorf("CompareAndSwap = %d, %v; want 5, nil", v, err)
	}
	if v, err := e0.Load(ctx, 1, 128); v != 9 || err != nil {
		t.Errorf("Load = %d, %v; want 9, nil", v, err)
	}
	// Failure: every call of every rank reports it.
	cause := errors.New("cause")
	eps[1].Fail(cause)
	var rf *transport.RankFailedError
	if err := e0.Wait(ctx); !errors.As(err, &rf) || rf.Rank != 1 || !errors.Is(err, cause) {
		t.Errorf("Wait after rank 1 failed: %v; want a *RankFailedError naming rank 1", err)
	}
	if err := e0.Put(ctx, 1, 0, buf); !errors.As(err, &rf) {
		t.Errorf("Put after rank 1 failed: %v; want a *RankFailedError", err)
	}
	for _, ep := range eps {
		if err := ep.Close(); err != nil {
			t.Error(err)
		}
	}
	if err := e0.Put(ctx, 1, 0, buf); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Put after Close: %v; want ErrClosed", err)
	}
	checkNoLeak(t, base)
}
