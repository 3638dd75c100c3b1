// Package inproc is the in-process transport: every rank is a goroutine of
// the calling process and every segment is a block of ordinary memory that
// the transport owns.
//
// Puts and gets are memory copies into and out of the target's registered
// segment, done by the transport on behalf of the caller, the way a
// shared-memory or RDMA transport would do them; they complete before they
// return, so Fence has nothing to wait for. Atomics are hardware atomics on
// the owner's segment word. Barriers are split-phase: a phase completes when
// every rank has notified it.
//
// inproc is the default transport of pgas.Run and needs no set-up:
//
//	err := pgas.Run(ctx, pgas.Config{Ranks: 8}, body) // uses inproc
package inproc

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Transport is the in-process transport. The zero value is ready to use.
type Transport struct{}

var _ transport.Transport = (*Transport)(nil)

// New returns an in-process transport.
func New() *Transport { return &Transport{} }

// Name returns "inproc".
func (*Transport) Name() string { return "inproc" }

// Open maps one zeroed segment per rank (see mapSegments) and returns all
// the endpoints.
func (*Transport) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	if job.Ranks < 1 {
		return nil, fmt.Errorf("inproc: job needs at least 1 rank, got %d", job.Ranks)
	}
	if job.SegmentBytes < 0 || job.SegmentBytes%8 != 0 {
		return nil, fmt.Errorf("inproc: segment size %d is not a non-negative multiple of 8", job.SegmentBytes)
	}
	segs, unmap, err := mapSegments(ctx, job.Ranks, job.SegmentBytes)
	if err != nil {
		return nil, err
	}
	j := &jobState{
		job:     job,
		segs:    segs,
		unmap:   unmap,
		failed:  make(chan struct{}),
		stopped: make(chan struct{}),
	}
	for i := range j.phases {
		j.phases[i] = newPhase(job.Ranks)
	}
	j.departed = make([]bool, job.Ranks)
	j.dep.Store(&departures{ch: make(chan struct{})})
	eps := make([]transport.Endpoint, job.Ranks)
	for r := range eps {
		eps[r] = &endpoint{j: j, rank: r}
	}
	// A cancelled job context fails the job so that no rank waits for a
	// rank that has stopped.
	go func() {
		select {
		case <-ctx.Done():
			j.fail(-1, ctx.Err())
		case <-j.failed:
		case <-j.stopped:
		}
	}()
	return eps, nil
}

// phase is a barrier phase. Ranks arrive and leave with atomics, never
// under a lock of the job: a lock that every rank takes at every barrier
// is a convoy of a hundred thousand ranks at each one, and seconds before
// a cancelled job's ranks get past it.
type phase struct {
	notified atomic.Int64
	waited   atomic.Int64
	arrived  []atomic.Bool
	done     chan struct{} // closed when every rank has notified
}

func newPhase(ranks int) *phase {
	return &phase{arrived: make([]atomic.Bool, ranks), done: make(chan struct{})}
}

// phaseSlots is how many phases the job keeps: a rank notifies phase p+1
// only after every rank has notified phase p, and phase p+2 only after
// every rank has left its wait of phase p, so phase p's slot is free for
// phase p+phaseSlots by then.
const phaseSlots = 4

// departures is the departed ranks, in the order they departed, and the
// channel a later departure closes. Depart replaces it whole.
type departures struct {
	ranks []int
	ch    chan struct{}
}

type jobState struct {
	job   transport.Job
	segs  [][]byte
	unmap func() error // releases segs, once every endpoint is closed

	// phases[p%phaseSlots] is phase p; the last rank to leave it resets
	// it for phase p+phaseSlots.
	phases [phaseSlots]*phase

	failOnce  sync.Once
	failed    chan struct{}
	isFailed  atomic.Bool
	failErr   error // set before failed is closed
	failRank  int
	closedEps atomic.Int64
	stopped   chan struct{} // closed when every endpoint is closed

	// departed[r] is set, under depMu, when rank r's job has returned
	// (Depart), which then replaces dep, closing the old one's channel
	// and waking the waiters to look.
	depMu    sync.Mutex
	departed []bool
	dep      atomic.Pointer[departures]
}

// Depart marks the rank as returned and wakes the ranks waiting in a
// barrier, which fail if they wait for it.
func (e *endpoint) Depart() {
	j := e.j
	j.depMu.Lock()
	defer j.depMu.Unlock()
	if j.departed[e.rank] {
		return
	}
	j.departed[e.rank] = true
	old := j.dep.Load()
	j.dep.Store(&departures{ranks: append(slices.Clip(old.ranks), e.rank), ch: make(chan struct{})})
	close(old.ch)
}

// gone returns a rank that ph waits for and that has returned, or -1,
// and the channel that a later departure closes. It looks at the
// departed ranks only: a scan of every rank on every rank's wait was a
// barrier's time in the square of the ranks.
func (j *jobState) gone(ph *phase) (int, <-chan struct{}) {
	d := j.dep.Load()
	r := -1
	for _, q := range d.ranks {
		if !ph.arrived[q].Load() && (r < 0 || q < r) {
			r = q
		}
	}
	return r, d.ch
}

func (j *jobState) fail(rank int, err error) {
	j.failOnce.Do(func() {
		if rank < 0 {
			j.failErr = err
		} else {
			j.failErr = &transport.RankFailedError{Rank: rank, Cause: err}
		}
		j.failRank = rank
		j.isFailed.Store(true)
		close(j.failed)
	})
}

// err returns the job's failure, or nil.
func (j *jobState) err() error {
	if !j.isFailed.Load() {
		return nil
	}
	<-j.failed
	return j.failErr
}

func (j *jobState) phase(p uint64) *phase { return j.phases[p%phaseSlots] }

type endpoint struct {
	j        *jobState
	rank     int
	phase    uint64
	notified bool
	closed   atomic.Bool
}

var _ transport.Extended = (*endpoint)(nil)

// Collectives returns nil: the in-process transport has no native
// collectives.
func (e *endpoint) Collectives() transport.Collectives { return nil }

// Failed returns nil: the ranks of an in-process job are all supervised by
// the one pgas.Run that hosts them, which learns of a failure directly.
func (e *endpoint) Failed() <-chan struct{} { return nil }

// MemoryMapped is true: every segment is memory of this process.
func (e *endpoint) MemoryMapped() bool { return true }

// Mapped returns rank's segment.
func (e *endpoint) Mapped(rank int) []byte { return e.j.segs[rank] }

func (e *endpoint) Rank() int       { return e.rank }
func (e *endpoint) Size() int       { return e.j.job.Ranks }
func (e *endpoint) Segment() []byte { return e.j.segs[e.rank] }
func (e *endpoint) Fail(err error)  { e.j.fail(e.rank, err) }
func (e *endpoint) String() string  { return fmt.Sprintf("inproc rank %d/%d", e.rank, e.j.job.Ranks) }

// word is the int64 at (r, off). Callers pass a valid rank and an aligned
// offset inside the segment (pgas checks them); a bad one panics on Go's
// bounds check of the 8 bytes, it cannot reach memory outside a segment.
func (e *endpoint) word(r int, off int64) *int64 {
	return (*int64)(unsafe.Pointer(&e.j.segs[r][off : off+8 : off+8][0]))
}

// pre is the check every operation makes first.
func (e *endpoint) pre(ctx context.Context) error {
	if e.closed.Load() {
		return fmt.Errorf("inproc rank %d: %w", e.rank, transport.ErrClosed)
	}
	if err := e.j.err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		// A context cancelled because a rank failed reports that rank:
		// Run records the failure before it cancels.
		if ferr := e.j.err(); ferr != nil {
			return ferr
		}
		return err
	}
	return nil
}

// Put and Get rely on the caller for a valid rank and range (pgas checks
// them); the slice expressions bound the copy, so a bad call panics and
// never reaches memory outside a segment.
func (e *endpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	copy(e.j.segs[rank][off:off+int64(len(src))], src)
	return nil
}

func (e *endpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	copy(dst, e.j.segs[rank][off:off+int64(len(dst))])
	return nil
}

// GetStrided and PutStrided copy the elements of st straight between
// the segment and the packed buffer: one operation, like Get and Put.
func (e *endpoint) GetStrided(ctx context.Context, rank int, st transport.Strided, dst []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	transport.CopyStrided(e.j.segs[rank], st, dst, true)
	return nil
}

func (e *endpoint) PutStrided(ctx context.Context, rank int, st transport.Strided, src []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	transport.CopyStrided(e.j.segs[rank], st, src, false)
	return nil
}

func (e *endpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	return transport.DoneWith(e.Put(ctx, rank, off, src))
}

func (e *endpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	return transport.DoneWith(e.Get(ctx, rank, off, dst))
}

// Fence has nothing to wait for: puts complete before they return.
func (e *endpoint) Fence(ctx context.Context) error { return e.pre(ctx) }

func (e *endpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	if err := e.pre(ctx); err != nil {
		return 0, err
	}
	return atomic.AddInt64(e.word(rank, off), delta) - delta, nil
}

func (e *endpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	if err := e.pre(ctx); err != nil {
		return 0, err
	}
	w := e.word(rank, off)
	for {
		if atomic.CompareAndSwapInt64(w, old, new) {
			return old, nil
		}
		if cur := atomic.LoadInt64(w); cur != old {
			return cur, nil
		}
	}
}

func (e *endpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	if err := e.pre(ctx); err != nil {
		return 0, err
	}
	return atomic.LoadInt64(e.word(rank, off)), nil
}

func (e *endpoint) Notify(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if e.notified {
		return fmt.Errorf("inproc rank %d: notify of phase %d called twice without wait", e.rank, e.phase)
	}
	j := e.j
	ph := j.phase(e.phase)
	ph.arrived[e.rank].Store(true)
	if ph.notified.Add(1) == int64(j.job.Ranks) {
		close(ph.done)
	}
	e.notified = true
	return nil
}

func (e *endpoint) Wait(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if !e.notified {
		return fmt.Errorf("inproc rank %d: wait of phase %d without notify", e.rank, e.phase)
	}
	j := e.j
	ph := j.phase(e.phase)
	gone, departures := j.gone(ph)

	var timeout <-chan time.Time
	if d := j.job.SyncTimeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
wait:
	if gone >= 0 {
		select {
		case <-ph.done: // it arrived before it returned
		default:
			return fmt.Errorf("inproc rank %d: barrier phase %d: rank %d %w", e.rank, e.phase, gone, transport.ErrReturned)
		}
	}
	select {
	case <-departures:
		gone, departures = j.gone(ph)
		goto wait
	case <-ph.done:
	case <-j.failed:
		return j.err()
	case <-ctx.Done():
		if err := j.err(); err != nil {
			return err
		}
		return ctx.Err()
	case <-timeout:
		if err := j.err(); err != nil {
			return err
		}
		var missing []int
		for r := range ph.arrived {
			if !ph.arrived[r].Load() {
				missing = append(missing, r)
			}
		}
		return fmt.Errorf("inproc rank %d: barrier phase %d: waited %v for ranks %v: %w",
			e.rank, e.phase, j.job.SyncTimeout, missing, transport.ErrTimeout)
	}
	if err := j.err(); err != nil {
		return err
	}
	if ph.waited.Add(1) == int64(j.job.Ranks) {
		// The last rank out: the slot is phase e.phase+phaseSlots's,
		// which no rank reaches before this one leaves.
		j.phases[e.phase%phaseSlots] = newPhase(j.job.Ranks)
	}
	e.phase++
	e.notified = false
	return nil
}

func (e *endpoint) Barrier(ctx context.Context) error {
	if err := e.Notify(ctx); err != nil {
		return err
	}
	return e.Wait(ctx)
}

func (e *endpoint) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	if e.j.closedEps.Add(1) == int64(e.j.job.Ranks) {
		close(e.j.stopped)
		return e.j.unmap()
	}
	return nil
}
