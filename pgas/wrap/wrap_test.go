package wrap_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

const segBytes = 1 << 16

// open opens a job of ranks ranks on tr and closes its endpoints when the
// test ends.
func open(t *testing.T, tr transport.Transport, ranks int) []transport.Endpoint {
	t.Helper()
	eps, err := tr.Open(t.Context(), transport.Job{ID: t.Name(), Ranks: ranks, SegmentBytes: segBytes})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if len(eps) != ranks {
		t.Fatalf("Open returned %d endpoints, want %d", len(eps), ranks)
	}
	t.Cleanup(func() {
		for _, ep := range eps {
			if err := ep.Close(); err != nil {
				t.Errorf("Close rank %d: %v", ep.Rank(), err)
			}
		}
	})
	return eps
}

// all runs fn concurrently on every endpoint (as the ranks' goroutines) and
// fails the test with the first error.
func all(t *testing.T, eps []transport.Endpoint, fn func(ep transport.Endpoint) error) {
	t.Helper()
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { errs[i] = fn(ep) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", i, err)
		}
	}
}

func barrier(ctx context.Context) func(transport.Endpoint) error {
	return func(ep transport.Endpoint) error { return ep.Barrier(ctx) }
}

func TestWrappersAreTransparent(t *testing.T) {
	// Every wrapper, and a stack of all three, must behave like the inner
	// transport for data: puts land, gets and atomics see them.
	stacks := map[string]transport.Transport{
		"counting": wrap.NewCounting(inproc.New()),
		"faulty":   wrap.NewFaulty(inproc.New(), 0, -1),
		"latency":  wrap.NewLatency(inproc.New(), 0),
		"stack":    wrap.NewCounting(wrap.NewFaulty(wrap.NewLatency(inproc.New(), 0), 1, -1)),
	}
	for name, tr := range stacks {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			eps := open(t, tr, 2)
			if eps[1].Rank() != 1 || eps[1].Size() != 2 || len(eps[1].Segment()) != segBytes {
				t.Fatalf("rank %d size %d segment %d", eps[1].Rank(), eps[1].Size(), len(eps[1].Segment()))
			}
			if err := eps[0].Put(ctx, 1, 8, []byte("hello")); err != nil {
				t.Fatal(err)
			}
			if err := eps[0].PutAsync(ctx, 1, 16, []byte("world")).Wait(ctx); err != nil {
				t.Fatal(err)
			}
			all(t, eps, barrier(ctx))
			if got := string(eps[1].Segment()[8:13]) + string(eps[1].Segment()[16:21]); got != "helloworld" {
				t.Fatalf("segment holds %q", got)
			}
			dst := make([]byte, 5)
			if err := eps[1].Get(ctx, 1, 16, dst); err != nil || string(dst) != "world" {
				t.Fatalf("Get = %q, %v", dst, err)
			}
			if err := eps[0].GetAsync(ctx, 1, 8, dst).Wait(ctx); err != nil || string(dst) != "hello" {
				t.Fatalf("GetAsync = %q, %v", dst, err)
			}
			if v, err := eps[0].FetchAdd(ctx, 1, 32, 5); v != 0 || err != nil {
				t.Fatalf("FetchAdd = %d, %v", v, err)
			}
			if v, err := eps[1].CompareAndSwap(ctx, 1, 32, 5, 7); v != 5 || err != nil {
				t.Fatalf("CompareAndSwap = %d, %v", v, err)
			}
			if v, err := eps[0].Load(ctx, 1, 32); v != 7 || err != nil {
				t.Fatalf("Load = %d, %v", v, err)
			}
			if err := eps[0].Fence(ctx); err != nil {
				t.Fatal(err)
			}
			all(t, eps, func(ep transport.Endpoint) error {
				if err := ep.Notify(ctx); err != nil {
					return err
				}
				return ep.Wait(ctx)
			})
			// Errors of the inner transport come through unchanged.
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if err := eps[0].Put(cancelled, 1, 0, dst); !errors.Is(err, context.Canceled) {
				t.Fatalf("Put with a cancelled context: %v, want context.Canceled", err)
			}
			if _, err := eps[0].Load(cancelled, 1, 0); !errors.Is(err, context.Canceled) {
				t.Fatalf("Load with a cancelled context: %v, want context.Canceled", err)
			}
		})
	}
}

func TestNames(t *testing.T) {
	for tr, want := range map[transport.Transport]string{
		wrap.NewCounting(inproc.New()):                     "inproc+counting",
		wrap.NewFaulty(inproc.New(), 0, 0):                 "inproc+faulty",
		wrap.NewLatency(inproc.New(), 0):                   "inproc+latency",
		wrap.NewCounting(wrap.NewLatency(inproc.New(), 0)): "inproc+latency+counting",
	} {
		if got := tr.Name(); got != want {
			t.Errorf("Name() = %q, want %q", got, want)
		}
	}
}

func TestNilInnerPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"NewCounting": func() { wrap.NewCounting(nil) },
		"NewFaulty":   func() { wrap.NewFaulty(nil, 0, 0) },
		"NewLatency":  func() { wrap.NewLatency(nil, 0) },
	} {
		func() {
			defer func() {
				if v := recover(); v == nil {
					t.Errorf("%s(nil) did not panic", name)
				} else if s, _ := v.(string); !strings.HasPrefix(s, "wrap: ") {
					t.Errorf("%s(nil) panicked with %v, want a \"wrap: \" message", name, v)
				}
			}()
			f()
		}()
	}
}

// failingTransport fails every Open.
type failingTransport struct{}

func (failingTransport) Name() string { return "failing" }
func (failingTransport) Open(context.Context, transport.Job) ([]transport.Endpoint, error) {
	return nil, errOpen
}

var errOpen = errors.New("no such network")

func TestOpenErrorPassesThrough(t *testing.T) {
	for _, tr := range []transport.Transport{
		wrap.NewCounting(failingTransport{}),
		wrap.NewFaulty(failingTransport{}, 0, 0),
		wrap.NewLatency(failingTransport{}, 0),
	} {
		if _, err := tr.Open(t.Context(), transport.Job{Ranks: 1, SegmentBytes: 8}); !errors.Is(err, errOpen) {
			t.Errorf("%s: Open error %v, want %v", tr.Name(), err, errOpen)
		}
	}
}
