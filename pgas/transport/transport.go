// Package transport defines the contract between the pgas runtime and the
// layers that move bytes between ranks.
//
// A Transport starts a job and hands back the endpoints of the ranks the
// calling process hosts: all of them for the in-process transport, one for a
// transport whose ranks are processes. Every rank owns one segment of
// Job.SegmentBytes bytes; segments are addressed by (rank, offset) and are
// the only memory a transport reads or writes on behalf of another rank.
//
// # The contract
//
//   - Reliable and FIFO per rank pair: operations a rank issues to one peer
//     take effect in issue order, and none is lost.
//   - One-sided: Put and Get on a peer's segment do not involve the peer's
//     goroutines. A Put returns once its source may be reused; its data is
//     guaranteed visible to other ranks only after the issuing rank's next
//     Fence, Notify or Barrier. A Get returns with its destination filled.
//   - Atomics (FetchAdd, CompareAndSwap, Load) execute at the owner of the
//     word and are atomic with respect to every other atomic on that word,
//     from any rank. They must not be mixed with Put/Get on the same word
//     without synchronisation.
//   - Synchronisation: Notify/Wait is a split-phase barrier over all ranks
//     of the job; Barrier is Notify then Wait. Both imply a Fence.
//   - Failure: when any rank fails (Fail is called, its process dies, or
//     the job's context is cancelled), every blocking call on every rank
//     returns, within a bounded time, an error that wraps a *RankFailedError
//     naming the failed rank (or the context's error). Nothing hangs.
//   - Time-outs: a synchronisation call that waits longer than
//     Job.SyncTimeout for other ranks returns an error wrapping ErrTimeout.
//   - Arguments: callers pass valid ranks, offsets and lengths; pgas checks
//     them. Every (rank, offset) a pgas caller names is checked once, by
//     pgas, before it reaches an endpoint (a rank in [0, Size()), bytes
//     inside the segment, atomics 8-byte aligned), so a transport need not
//     check again on its hot paths. It must still not corrupt memory on a
//     bad call: the in-process and shm transports copy through bounded
//     slice expressions, which panic; mpi, whose calls go to C, checks
//     with CheckRange and CheckAtomic. What a transport returns for a bad
//     call is otherwise unspecified.
//
// # Optional capabilities
//
// Some transports can do more than the Endpoint methods: native
// collectives (MPI_Allgatherv, ...), and learning of another rank's
// failure while no call is in progress. Extended names both; an Endpoint
// is upgraded to one by Extend, once, when the job opens (pgas.Run does
// it for every endpoint), so nobody type-asserts optional interfaces at
// each use. Wrapper transports (package wrap) implement Extended and pass
// on what their inner endpoint offers, so wrapping does not lose it.
//
// Endpoints are used by the goroutine of their rank. Put, Get, their async
// forms and the atomics may also be called from other goroutines working for
// the same rank; Notify, Wait and Barrier may not be called concurrently.
package transport

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Job describes a job to a Transport.
type Job struct {
	// ID names the job (used for shared-memory segment names and logs).
	ID string
	// Ranks is the number of ranks in the job.
	Ranks int
	// SegmentBytes is the size of every rank's segment, a multiple of 8.
	SegmentBytes int64
	// SyncTimeout bounds how long a synchronisation call waits for other
	// ranks before it fails with ErrTimeout. Zero means no bound.
	SyncTimeout time.Duration
}

// Transport starts jobs.
type Transport interface {
	// Name is a short lowercase name such as "inproc".
	Name() string
	// Open starts job and returns the endpoints of the ranks this process
	// hosts, in increasing rank order. The segments are zeroed. ctx bounds
	// the life of the job: cancelling it fails every blocking call.
	Open(ctx context.Context, job Job) ([]Endpoint, error)
}

// Handle is an outstanding non-blocking operation.
type Handle interface {
	// Wait blocks until the operation is complete (a Get's destination is
	// filled; a Put's source may be reused) and returns its error.
	Wait(ctx context.Context) error
}

// Endpoint is one rank's view of a job.
type Endpoint interface {
	// Rank is this endpoint's rank in [0, Size()).
	Rank() int
	// Size is the number of ranks in the job.
	Size() int
	// Segment is this rank's own segment. The slice aliases the memory that
	// other ranks reach with Put and Get; it is valid until Close.
	Segment() []byte

	// Put copies src to [off, off+len(src)) of rank's segment. It returns
	// when src may be reused; completion at the target is guaranteed only
	// at the next Fence, Notify or Barrier of this rank.
	Put(ctx context.Context, rank int, off int64, src []byte) error
	// Get copies [off, off+len(dst)) of rank's segment into dst and returns
	// when dst is filled.
	Get(ctx context.Context, rank int, off int64, dst []byte) error
	// PutAsync starts a Put; src must not be modified until the handle's
	// Wait returns.
	PutAsync(ctx context.Context, rank int, off int64, src []byte) Handle
	// GetAsync starts a Get; dst must not be read until the handle's Wait
	// returns.
	GetAsync(ctx context.Context, rank int, off int64, dst []byte) Handle
	// Fence blocks until every Put this rank issued is complete at its
	// target.
	Fence(ctx context.Context) error

	// FetchAdd atomically adds delta to the int64 at (rank, off), which must
	// be 8-byte aligned, and returns the old value.
	FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error)
	// CompareAndSwap atomically replaces the int64 at (rank, off) with new
	// if it equals old, and returns the value it held before the call.
	CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error)
	// Load atomically reads the int64 at (rank, off).
	Load(ctx context.Context, rank int, off int64) (int64, error)

	// Notify announces that this rank reached the current barrier phase. It
	// implies a Fence and does not wait for other ranks.
	Notify(ctx context.Context) error
	// Wait blocks until every rank has notified the current phase, then
	// moves this rank to the next phase.
	Wait(ctx context.Context) error
	// Barrier is Notify followed by Wait.
	Barrier(ctx context.Context) error

	// Fail marks this rank as failed with err: every other rank's blocking
	// calls return an error naming it. Fail may be called more than once;
	// the first cause wins.
	Fail(err error)
	// Close releases the endpoint. Calls after Close return ErrClosed.
	Close() error
}

// Sentinel errors shared by every transport.
var (
	// ErrTimeout is wrapped by a synchronisation call that waited longer
	// than Job.SyncTimeout.
	ErrTimeout = errors.New("timed out waiting for other ranks")
	// ErrReturned is wrapped by a synchronisation call that waits for a
	// rank whose job has already returned (Extended.Depart): it will never
	// arrive.
	ErrReturned = errors.New("has already returned from its job")
	// ErrClosed is returned by calls on a closed endpoint.
	ErrClosed = errors.New("endpoint closed")
	// ErrOutOfRange is wrapped by accesses outside a segment or to a rank
	// that does not exist (reported by pgas; see the contract).
	ErrOutOfRange = errors.New("out of range")
	// ErrMisaligned is wrapped by an atomic on an address that is not a
	// multiple of 8 (reported by pgas).
	ErrMisaligned = errors.New("atomic address not 8-byte aligned")
)

// RankFailedError reports that a rank of the job failed. Every rank's
// blocking calls return it (possibly wrapped) once any rank has failed.
type RankFailedError struct {
	Rank  int
	Cause error
}

func (e *RankFailedError) Error() string {
	return fmt.Sprintf("rank %d failed: %v", e.Rank, e.Cause)
}

func (e *RankFailedError) Unwrap() error { return e.Cause }

// CheckRange returns an error wrapping ErrOutOfRange unless rank is in
// [0, ranks) and [off, off+n) lies within a segment of segBytes bytes.
// pgas calls it for every access; a transport that cannot bound a bad
// access itself (one that hands addresses to C) calls it too.
func CheckRange(ranks int, segBytes int64, rank int, off, n int64) error {
	if rank < 0 || rank >= ranks {
		return fmt.Errorf("rank %d not in [0,%d): %w", rank, ranks, ErrOutOfRange)
	}
	if off < 0 || n < 0 || off > segBytes || n > segBytes-off {
		return fmt.Errorf("bytes [%d,%d) of rank %d outside segment of %d bytes: %w", off, off+n, rank, segBytes, ErrOutOfRange)
	}
	return nil
}

// CheckAtomic is CheckRange for an 8-byte word plus an alignment check.
func CheckAtomic(ranks int, segBytes int64, rank int, off int64) error {
	if err := CheckRange(ranks, segBytes, rank, off, 8); err != nil {
		return err
	}
	if off%8 != 0 {
		return fmt.Errorf("offset %d of rank %d: %w", off, rank, ErrMisaligned)
	}
	return nil
}

// Done is a Handle that is already complete with Err.
type Done struct{ Err error }

// Wait returns h.Err.
func (h Done) Wait(context.Context) error { return h.Err }

// Completed is the Handle of an operation that completed without error:
// a transport returns it (rather than a new Done) so that a blocking put
// costs no allocation, and callers may pass over it instead of keeping it
// to wait on. At 1,024 in-process ranks an all-to-all makes a million
// puts.
var Completed Handle = Done{}

// DoneWith returns Completed if err is nil, else a Done with err.
func DoneWith(err error) Handle {
	if err == nil {
		return Completed
	}
	return Done{Err: err}
}

// FailureNotifier is the optional interface of an endpoint that learns of
// a job's failure while no call is in progress (a process transport
// watching a shared failure record). Failed returns a channel closed once
// any rank of the job has failed. Callers reach it through Extend.
type FailureNotifier interface {
	Failed() <-chan struct{}
}

// Collectives is implemented by endpoints whose transport offers native
// collectives over all the ranks of a job (MPI does). Package coll uses
// them for the world team where the call's semantics match, unless the
// call passes coll.NoNative. Buffers are the caller's private memory; every
// call is collective over all ranks, blocking, and complete when it
// returns. Callers reach it through Extend.
type Collectives interface {
	// Broadcast copies root's buf into buf on every rank; every rank passes
	// a buf of the same length.
	Broadcast(ctx context.Context, root int, buf []byte) error
	// Allgatherv: rank q contributes send (counts[q] bytes); on every rank
	// recv[displs[q] : displs[q]+counts[q]] receives rank q's contribution.
	Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error
	// Alltoallv: rank i sends send[sdispls[j] : +scounts[j]] to rank j,
	// which receives it at recv[rdispls[i] : +rcounts[i]].
	Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error
}

// Extended is an Endpoint with its optional capabilities made explicit:
// every caller can ask for them without a type assertion, and a wrapper
// can pass them on. Extend upgrades any Endpoint to one.
//
// Transports in this module return endpoints that implement Extended
// themselves; a transport that implements only Endpoint, or the optional
// Collectives and FailureNotifier interfaces, is upgraded by Extend.
type Extended interface {
	Endpoint

	// Collectives returns the endpoint's native collectives, or nil if
	// its transport has none. The result is the same on every call.
	Collectives() Collectives

	// Failed returns a channel that is closed once any rank of the job
	// has failed, or nil if the endpoint does not learn of failures
	// between calls (every blocking call still reports them). pgas.Run
	// uses it to cancel the context of the ranks it hosts, so that rank
	// code busy outside the transport (a long map loop checking ctx)
	// stops promptly instead of at its next blocking call. The result is
	// the same on every call.
	Failed() <-chan struct{}

	// MemoryMapped reports whether every segment of the job is mapped in
	// this process (the in-process and shm transports), so that a
	// one-sided operation to any rank is a memory access: fine-grained
	// algorithms (the reduce stage's node-level combining table) may use
	// one operation per element there, where over a network (mpi) they
	// would pay a message each. The result is the same on every call. A
	// wrapper that delays or throttles operations reports false.
	MemoryMapped() bool

	// Mapped returns rank's segment as memory of this process, for direct
	// loads and stores (UPC's upc_cast, UPC++'s local()), or nil: when
	// the segment is not mapped here, and always from a wrapper, which
	// must see every access (to count it, fail it or delay it). A caller
	// writing through it synchronises as a one-sided operation would
	// (under a lock, or between barriers) and reports its accesses for
	// counting (pgas.Rank.Cast). The result is the same on every call.
	Mapped(rank int) []byte

	// Depart says that this rank's job has returned and that the rank
	// will call nothing more but Close. A transport that can tell the
	// ranks still waiting for it in a barrier fails those waits at once
	// with an error wrapping ErrReturned and naming the rank, instead of
	// when Job.SyncTimeout runs out (a job whose non-root ranks return
	// before the root's last collective). Others do nothing.
	Depart()

	// GetStrided fills dst (s.Bytes() bytes) with the elements of s in
	// rank's segment, packed in row-major order, and PutStrided stores
	// src's packed elements into them (complete at the target at the
	// next Fence, as a Put). Each is one operation of the caller (one
	// message, as the runtime counts it); a transport that has no
	// strided transfer of its own moves one Get or Put per contiguous run
	// (GetStridedRuns, PutStridedRuns: what Extend's shim does). pgas
	// checks s (Strided.Check) before the call.
	GetStrided(ctx context.Context, rank int, s Strided, dst []byte) error
	PutStrided(ctx context.Context, rank int, s Strided, src []byte) error
}

// Strider is the optional interface of an endpoint with strided
// transfers of its own (Extended.GetStrided, PutStrided); Extend reads
// it.
type Strider interface {
	GetStrided(ctx context.Context, rank int, s Strided, dst []byte) error
	PutStrided(ctx context.Context, rank int, s Strided, src []byte) error
}

// Departer is the optional interface of an endpoint that acts on
// Extended.Depart; Extend reads it.
type Departer interface {
	Depart()
}

// MemoryMapper is the optional interface of an endpoint whose job's
// segments are all mapped in its process; Extend reads it.
type MemoryMapper interface {
	MemoryMapped() bool
}

// SegmentMapper is the optional interface of an endpoint that hands out
// the other ranks' segments as memory (Extended.Mapped); Extend reads it.
type SegmentMapper interface {
	Mapped(rank int) []byte
}

// Extend returns ep as an Extended endpoint: ep itself if it already is
// one, else a shim whose Collectives, Failed, MemoryMapped, Mapped and
// strided transfers report what ep implements of Collectives,
// FailureNotifier, MemoryMapper, SegmentMapper and Strider (nil, false or
// one transfer per run where it implements none) and whose other methods
// are ep's. Call it once per endpoint, at Open,
// and use the result from then on; it is the one place the optional
// interfaces are type-asserted.
func Extend(ep Endpoint) Extended {
	if x, ok := ep.(Extended); ok {
		return x
	}
	s := &shim{Endpoint: ep}
	s.coll, _ = ep.(Collectives)
	if fn, ok := ep.(FailureNotifier); ok {
		s.failed = fn.Failed()
	}
	if m, ok := ep.(MemoryMapper); ok {
		s.mapped = m.MemoryMapped()
	}
	s.segs, _ = ep.(SegmentMapper)
	s.dep, _ = ep.(Departer)
	s.strider, _ = ep.(Strider)
	return s
}

// shim upgrades a plain Endpoint to Extended.
type shim struct {
	Endpoint
	coll   Collectives
	failed <-chan struct{}
	mapped bool
	segs   SegmentMapper // nil if ep is none
	dep    Departer      // nil if ep is none
	// strider is ep's strided transfers, or nil: runs then.
	strider Strider
}

func (s *shim) GetStrided(ctx context.Context, rank int, st Strided, dst []byte) error {
	if s.strider != nil {
		return s.strider.GetStrided(ctx, rank, st, dst)
	}
	return GetStridedRuns(ctx, s.Endpoint, rank, st, dst)
}

func (s *shim) PutStrided(ctx context.Context, rank int, st Strided, src []byte) error {
	if s.strider != nil {
		return s.strider.PutStrided(ctx, rank, st, src)
	}
	return PutStridedRuns(ctx, s.Endpoint, rank, st, src)
}

func (s *shim) Depart() {
	if s.dep != nil {
		s.dep.Depart()
	}
}

func (s *shim) Collectives() Collectives { return s.coll }
func (s *shim) Failed() <-chan struct{}  { return s.failed }
func (s *shim) MemoryMapped() bool       { return s.mapped }

func (s *shim) Mapped(rank int) []byte {
	if s.segs == nil {
		return nil
	}
	return s.segs.Mapped(rank)
}

// WithCause returns err, a context's error, with ctx's cause when the
// context was cancelled with one (context.WithCancelCause: a signal, as
// mrrun gives it): the error says the cause ("interrupted by SIGTERM")
// and is still context.Canceled and the cause for errors.Is. Otherwise
// it returns err as it is.
func WithCause(ctx context.Context, err error) error {
	cause := context.Cause(ctx)
	if err == nil || cause == nil || errors.Is(cause, context.Canceled) || errors.Is(err, cause) {
		return err
	}
	return &causeError{cause: cause, err: err}
}

type causeError struct{ cause, err error }

func (e *causeError) Error() string   { return e.cause.Error() }
func (e *causeError) Unwrap() []error { return []error{e.cause, e.err} }
