package wrap

import (
	"context"
	"sync"
	"time"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Latency is a transport that models a network with a one-way latency per
// operation on top of the inner transport:
//
//   - Get, FetchAdd, CompareAndSwap and Load perform the operation and then
//     take the latency longer to return.
//   - Put performs the operation and returns at once, but the put counts as
//     complete only one latency after it was issued. Fence blocks until the
//     latest completion time of the rank's puts (PutAsync included); Notify
//     and Barrier fence first. Notify does not otherwise wait.
//   - PutAsync and GetAsync perform the operation at once and return a
//     handle whose Wait returns one latency after the call was issued, so
//     any number of outstanding async operations complete in about one
//     latency.
//   - Wait and Barrier take the latency longer than the inner call.
//   - The native collectives of an inner endpoint that has them (passed
//     on, see transport.Extended) take the latency longer than the inner
//     call, like Wait.
//
// Every wait stops early with ctx.Err() when ctx is cancelled. Errors of the
// inner transport are returned at once, without the latency.
//
// A Latency is safe for concurrent use.
type Latency struct {
	inner transport.Transport
	d     time.Duration
}

var _ transport.Transport = (*Latency)(nil)

// NewLatency returns a transport that adds the one-way latency d to every
// operation of inner's endpoints. A d of zero or less adds nothing. It
// panics if inner is nil.
func NewLatency(inner transport.Transport, d time.Duration) *Latency {
	mustInner("NewLatency", inner)
	return &Latency{inner: inner, d: max(d, 0)}
}

// Name returns the inner transport's name followed by "+latency".
func (l *Latency) Name() string { return l.inner.Name() + "+latency" }

// Open opens job on the inner transport and wraps every endpoint it returns.
func (l *Latency) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	eps, err := l.inner.Open(ctx, job)
	if err != nil {
		return nil, err
	}
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		le := &latencyEndpoint{base: base{inner: transport.Extend(ep)}, d: l.d}
		if nat := le.inner.Collectives(); nat != nil {
			le.nat = &latencyColl{e: le, inner: nat}
		}
		out[i] = le
	}
	return out, nil
}

// sleepUntil waits until t, or returns ctx.Err() if ctx is done first.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// latencyEndpoint delays the calls of one rank.
type latencyEndpoint struct {
	base
	d time.Duration

	mu      sync.Mutex
	putDone time.Time // latest completion time of the puts issued
}

var _ transport.Extended = (*latencyEndpoint)(nil)

// MemoryMapped is false: every operation pays the delay, as over a
// network, whatever the inner transport is.
func (e *latencyEndpoint) MemoryMapped() bool { return false }

// notePut records a put that completes at t.
func (e *latencyEndpoint) notePut(t time.Time) {
	e.mu.Lock()
	if t.After(e.putDone) {
		e.putDone = t
	}
	e.mu.Unlock()
}

// fence waits until every put issued so far is complete.
func (e *latencyEndpoint) fence(ctx context.Context) error {
	e.mu.Lock()
	t := e.putDone
	e.mu.Unlock()
	return sleepUntil(ctx, t)
}

// after waits one latency after a successful inner call.
func (e *latencyEndpoint) after(ctx context.Context, err error) error {
	if err != nil || e.d == 0 {
		return err
	}
	return sleepUntil(ctx, time.Now().Add(e.d))
}

func (e *latencyEndpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	done := time.Now().Add(e.d)
	if err := e.inner.Put(ctx, rank, off, src); err != nil {
		return err
	}
	e.notePut(done)
	return nil
}

func (e *latencyEndpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	return e.after(ctx, e.inner.Get(ctx, rank, off, dst))
}

func (e *latencyEndpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	done := time.Now().Add(e.d)
	h := e.inner.PutAsync(ctx, rank, off, src)
	e.notePut(done)
	return &latencyHandle{inner: h, done: done}
}

func (e *latencyEndpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	done := time.Now().Add(e.d)
	return &latencyHandle{inner: e.inner.GetAsync(ctx, rank, off, dst), done: done}
}

func (e *latencyEndpoint) Fence(ctx context.Context) error {
	if err := e.fence(ctx); err != nil {
		return err
	}
	return e.inner.Fence(ctx)
}

func (e *latencyEndpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	v, err := e.inner.FetchAdd(ctx, rank, off, delta)
	return v, e.after(ctx, err)
}

func (e *latencyEndpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	v, err := e.inner.CompareAndSwap(ctx, rank, off, old, new)
	return v, e.after(ctx, err)
}

func (e *latencyEndpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	v, err := e.inner.Load(ctx, rank, off)
	return v, e.after(ctx, err)
}

// Notify fences and notifies; it does not wait for other ranks.
func (e *latencyEndpoint) Notify(ctx context.Context) error {
	if err := e.fence(ctx); err != nil {
		return err
	}
	return e.inner.Notify(ctx)
}

func (e *latencyEndpoint) Wait(ctx context.Context) error {
	return e.after(ctx, e.inner.Wait(ctx))
}

func (e *latencyEndpoint) Barrier(ctx context.Context) error {
	if err := e.fence(ctx); err != nil {
		return err
	}
	return e.after(ctx, e.inner.Barrier(ctx))
}

// latencyHandle completes when the inner handle does and not before done.
type latencyHandle struct {
	inner transport.Handle
	done  time.Time
}

func (h *latencyHandle) Wait(ctx context.Context) error {
	if err := h.inner.Wait(ctx); err != nil {
		return err
	}
	return sleepUntil(ctx, h.done)
}

// latencyColl delays the native collective calls of one rank.
type latencyColl struct {
	e     *latencyEndpoint
	inner transport.Collectives
}

func (c *latencyColl) Broadcast(ctx context.Context, root int, buf []byte) error {
	return c.e.after(ctx, c.inner.Broadcast(ctx, root, buf))
}

func (c *latencyColl) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	return c.e.after(ctx, c.inner.Allgatherv(ctx, send, recv, counts, displs))
}

func (c *latencyColl) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	return c.e.after(ctx, c.inner.Alltoallv(ctx, send, scounts, sdispls, recv, rcounts, rdispls))
}
