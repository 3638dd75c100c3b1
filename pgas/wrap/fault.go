package wrap

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// ErrInjected is wrapped by the error of the operation that Faulty makes
// fail.
var ErrInjected = errors.New("wrap: injected failure")

// InjectedError is the error of the operation that Faulty makes fail. It
// wraps ErrInjected; its text is, for example,
// "wrap: injected failure: rank 2 op 17 (Put)".
type InjectedError struct {
	Rank   int    // rank that issued the operation
	Op     int64  // 0-based index of the operation among the rank's counted ops
	Method string // Endpoint method, such as "Put" or "Barrier"
}

// Error says which rank, operation index and method failed.
func (e *InjectedError) Error() string {
	return fmt.Sprintf("%v: rank %d op %d (%s)", ErrInjected, e.Rank, e.Op, e.Method)
}

// Unwrap returns ErrInjected.
func (e *InjectedError) Unwrap() error { return ErrInjected }

// Faulty is a transport that makes one operation of one rank fail.
//
// Every Endpoint method call of a rank except Rank, Size, Segment, Fail,
// Close, Collectives and Failed is an operation, and so is every call of
// the native collectives the inner endpoint may offer (which the wrapper
// passes on: see transport.Extended). Operations are numbered from 0 in
// the order the calls reach the wrapper (a Barrier is one operation;
// waiting on a handle is none). The
// chosen operation is not performed: it returns an *InjectedError, which
// wraps ErrInjected; an async method returns a handle whose Wait returns
// it. Operations before and after it are passed through unchanged, so it is
// up to the caller (pgas.Run, say) to fail the job.
//
// Each Open starts the numbering and Injected afresh. A Faulty is safe for
// concurrent use.
type Faulty struct {
	inner transport.Transport
	rank  int
	op    int64
	cur   atomic.Pointer[faultJob]
}

var _ transport.Transport = (*Faulty)(nil)

// NewFaulty returns a transport that makes operation op (0-based) of rank
// fail in every job opened on inner. A negative op, or a rank that does not
// exist, never fails: the wrapper then only counts operations. It panics if
// inner is nil.
func NewFaulty(inner transport.Transport, rank int, op int64) *Faulty {
	mustInner("NewFaulty", inner)
	return &Faulty{inner: inner, rank: rank, op: op}
}

// faultJob is the state of one job.
type faultJob struct {
	ops   []atomic.Int64 // per rank: operations issued
	fired atomic.Bool
}

// Name returns the inner transport's name followed by "+faulty".
func (f *Faulty) Name() string { return f.inner.Name() + "+faulty" }

// Open opens job on the inner transport and wraps every endpoint it returns.
func (f *Faulty) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	eps, err := f.inner.Open(ctx, job)
	if err != nil {
		return nil, err
	}
	fj := &faultJob{ops: make([]atomic.Int64, max(job.Ranks, 0))}
	f.cur.Store(fj)
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		fe := &faultEndpoint{base: base{inner: transport.Extend(ep)}, f: f, j: fj, rank: ep.Rank()}
		if hosted(fe.rank, len(fj.ops)) {
			fe.ops = &fj.ops[fe.rank]
		} else {
			fe.ops = new(atomic.Int64)
		}
		if nat := fe.inner.Collectives(); nat != nil {
			fe.nat = &faultColl{e: fe, inner: nat}
		}
		out[i] = fe
	}
	return out, nil
}

// Injected reports whether the failure was injected in the latest job. When
// a job ends without it, the chosen operation lies beyond the last one the
// rank issued.
func (f *Faulty) Injected() bool {
	fj := f.cur.Load()
	return fj != nil && fj.fired.Load()
}

// Ops returns how many operations rank has issued in the latest job, the
// failed one included. It returns 0 if no job was opened or rank is not in
// the job.
func (f *Faulty) Ops(rank int) int64 {
	fj := f.cur.Load()
	if fj == nil || !hosted(rank, len(fj.ops)) {
		return 0
	}
	return fj.ops[rank].Load()
}

// faultEndpoint numbers the calls of one rank and fails the chosen one.
type faultEndpoint struct {
	base
	f    *Faulty
	j    *faultJob
	rank int
	ops  *atomic.Int64
}

var _ transport.Extended = (*faultEndpoint)(nil)

// next numbers one operation and returns the injected error if it is the
// chosen one, nil otherwise.
func (e *faultEndpoint) next(method string) error {
	i := e.ops.Add(1) - 1
	if e.rank != e.f.rank || i != e.f.op {
		return nil
	}
	e.j.fired.Store(true)
	return &InjectedError{Rank: e.rank, Op: i, Method: method}
}

func (e *faultEndpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	if err := e.next("Put"); err != nil {
		return err
	}
	return e.inner.Put(ctx, rank, off, src)
}

func (e *faultEndpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	if err := e.next("Get"); err != nil {
		return err
	}
	return e.inner.Get(ctx, rank, off, dst)
}

func (e *faultEndpoint) GetStrided(ctx context.Context, rank int, st transport.Strided, dst []byte) error {
	if err := e.next("GetStrided"); err != nil {
		return err
	}
	return e.inner.GetStrided(ctx, rank, st, dst)
}

func (e *faultEndpoint) PutStrided(ctx context.Context, rank int, st transport.Strided, src []byte) error {
	if err := e.next("PutStrided"); err != nil {
		return err
	}
	return e.inner.PutStrided(ctx, rank, st, src)
}

func (e *faultEndpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	if err := e.next("PutAsync"); err != nil {
		return transport.Done{Err: err}
	}
	return e.inner.PutAsync(ctx, rank, off, src)
}

func (e *faultEndpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	if err := e.next("GetAsync"); err != nil {
		return transport.Done{Err: err}
	}
	return e.inner.GetAsync(ctx, rank, off, dst)
}

func (e *faultEndpoint) Fence(ctx context.Context) error {
	if err := e.next("Fence"); err != nil {
		return err
	}
	return e.inner.Fence(ctx)
}

func (e *faultEndpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	if err := e.next("FetchAdd"); err != nil {
		return 0, err
	}
	return e.inner.FetchAdd(ctx, rank, off, delta)
}

func (e *faultEndpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	if err := e.next("CompareAndSwap"); err != nil {
		return 0, err
	}
	return e.inner.CompareAndSwap(ctx, rank, off, old, new)
}

func (e *faultEndpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	if err := e.next("Load"); err != nil {
		return 0, err
	}
	return e.inner.Load(ctx, rank, off)
}

func (e *faultEndpoint) Notify(ctx context.Context) error {
	if err := e.next("Notify"); err != nil {
		return err
	}
	return e.inner.Notify(ctx)
}

func (e *faultEndpoint) Wait(ctx context.Context) error {
	if err := e.next("Wait"); err != nil {
		return err
	}
	return e.inner.Wait(ctx)
}

func (e *faultEndpoint) Barrier(ctx context.Context) error {
	if err := e.next("Barrier"); err != nil {
		return err
	}
	return e.inner.Barrier(ctx)
}

// faultColl numbers the native collective calls of one rank with its other
// operations, and fails the chosen one.
type faultColl struct {
	e     *faultEndpoint
	inner transport.Collectives
}

func (c *faultColl) Broadcast(ctx context.Context, root int, buf []byte) error {
	if err := c.e.next("Broadcast"); err != nil {
		return err
	}
	return c.inner.Broadcast(ctx, root, buf)
}

func (c *faultColl) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	if err := c.e.next("Allgatherv"); err != nil {
		return err
	}
	return c.inner.Allgatherv(ctx, send, recv, counts, displs)
}

func (c *faultColl) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	if err := c.e.next("Alltoallv"); err != nil {
		return err
	}
	return c.inner.Alltoallv(ctx, send, scounts, sdispls, recv, rcounts, rdispls)
}
