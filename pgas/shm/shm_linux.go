package shm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Waiting: a blocking call spins on the shared word for spinLoads loads,
// yields the CPU up to yields times, then sleeps on a futex for at most
// sleepSlice at a time, re-checking the job's failure record, the context
// and the time-out between sleeps.
const (
	spinLoads  = 2000
	yields     = 20
	sleepSlice = 20 * time.Millisecond
	// launcherCheck is how often a waiting rank checks that its launcher
	// is alive.
	launcherCheck = 200 * time.Millisecond
)

// Transport is the shared-memory transport of one rank process: the rank a
// launcher started this process as. Get it with FromEnv. Its Open hosts
// exactly that rank and returns one endpoint; a process may run several
// jobs one after another (each Open after the previous endpoint's Close),
// all with the launch's number of ranks.
type Transport struct {
	m           *mapping
	rank, size  int
	jobID       string
	path        string
	launcherPID int
	launcherT0  int64

	mu struct {
		sync.Mutex
		open bool
	}
	fail atomic.Pointer[error] // the job's failure, once seen
}

var _ transport.Transport = (*Transport)(nil)

// FromEnv returns the transport of this process if a launcher started it
// as a rank of an shm job (the variables EnvRank ... EnvSegmentBytes are
// set); ok is false, with no error, if EnvSegment is not set. It maps the
// job's file and checks it against the variables.
func FromEnv() (t *Transport, ok bool, err error) {
	path := os.Getenv(EnvSegment)
	if path == "" {
		return nil, false, nil
	}
	num := func(name string) int64 {
		v, perr := strconv.ParseInt(os.Getenv(name), 10, 64)
		if perr != nil && err == nil {
			err = fmt.Errorf("shm: environment variable %s=%q: not a number", name, os.Getenv(name))
		}
		return v
	}
	rank, size, capacity := int(num(EnvRank)), int(num(EnvSize)), num(EnvSegmentBytes)
	if err != nil {
		return nil, true, err
	}
	if size < 1 || size > MaxRanks || rank < 0 || rank >= size || capacity < 0 || capacity%8 != 0 {
		return nil, true, fmt.Errorf("shm: environment gives rank %d of %d with %d-byte segments", rank, size, capacity)
	}
	m, err := attach(path, size, capacity)
	if err != nil {
		return nil, true, err
	}
	m.rankWord(rank, rPID).Store(int64(os.Getpid()))
	t = &Transport{
		m: m, rank: rank, size: size, jobID: os.Getenv(EnvJob), path: path,
		launcherPID: int(m.word(offLauncherPID).Load()),
		launcherT0:  m.word(offLauncherT0).Load(),
	}
	return t, true, nil
}

// Name returns "shm".
func (*Transport) Name() string { return "shm" }

// Rank is the rank this process was launched as.
func (t *Transport) Rank() int { return t.rank }

// Size is the number of ranks of the launch.
func (t *Transport) Size() int { return t.size }

// JobID is the launch's job id.
func (t *Transport) JobID() string { return t.jobID }

// SegmentBytes is the capacity of every rank's segment: the largest
// Job.SegmentBytes (pgas.Config.SegmentBytes) that Open accepts.
func (t *Transport) SegmentBytes() int64 { return t.m.capacity }

// Open starts a job on the launch's segment and returns the endpoint of
// this process's rank. It is collective: it returns once every rank has
// opened the job. job.Ranks must be the launch's number of ranks and
// job.SegmentBytes at most SegmentBytes, the same on every rank. The
// segment is zeroed. Open fails if the launch's job has failed or an
// endpoint of this transport is open.
func (t *Transport) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	if err := t.checkJob(job); err != nil {
		// The other ranks wait for this one in Open: fail the job, so
		// that they learn why at once.
		t.m.claimFailure(int64(t.rank)+2, kindError, err.Error())
		return nil, err
	}
	if err := t.err(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.mu.open {
		t.mu.Unlock()
		return nil, fmt.Errorf("shm: rank %d already has an open endpoint", t.rank)
	}
	t.mu.open = true
	t.mu.Unlock()

	m := t.m
	// Zero what earlier jobs may have written; a new file is zero.
	used := m.rankWord(t.rank, rUsed)
	clear(m.segment(t.rank, min(used.Load(), job.SegmentBytes)))
	used.Store(max(used.Load(), job.SegmentBytes))
	m.rankWord(t.rank, rJobSeg).Store(job.SegmentBytes)
	m.rankWord(t.rank, rJobN).Store(int64(job.Ranks))
	m.rankWord(t.rank, rOpen).Store(1)

	e := &endpoint{t: t, job: job, rank: t.rank, size: t.size, stop: make(chan struct{}), failed: make(chan struct{})}
	e.segs = make([][]byte, t.size)
	for r := range e.segs {
		e.segs[r] = m.segment(r, job.SegmentBytes)
	}
	// A cancelled job context fails the job on every rank.
	go func() {
		select {
		case <-ctx.Done():
			// After Close, the job is over: pgas.Run cancels its
			// context once the endpoint is closed.
			if !e.closed.Load() {
				e.Fail(transport.WithCause(ctx, ctx.Err()))
			}
		case <-e.stop:
		}
	}()
	go e.watch()
	if err := e.Barrier(ctx); err != nil {
		e.Close()
		return nil, fmt.Errorf("shm: open: %w", err)
	}
	for r := range t.size {
		seg, n := m.rankWord(r, rJobSeg).Load(), m.rankWord(r, rJobN).Load()
		if seg != job.SegmentBytes || n != int64(job.Ranks) {
			err := fmt.Errorf("shm: rank %d opened a job of %d ranks with %d-byte segments, rank %d one of %d ranks with %d-byte segments",
				t.rank, job.Ranks, job.SegmentBytes, r, n, seg)
			e.Fail(err)
			e.Close()
			return nil, err
		}
	}
	return []transport.Endpoint{e}, nil
}

// checkJob reports why this process cannot host a rank of job.
func (t *Transport) checkJob(job transport.Job) error {
	if job.Ranks != t.size {
		return fmt.Errorf("shm: job has %d ranks, but this process was launched as rank %d of %d ranks (%s)", job.Ranks, t.rank, t.size, EnvSize)
	}
	if job.SegmentBytes < 0 || job.SegmentBytes%8 != 0 {
		return fmt.Errorf("shm: segment size %d is not a non-negative multiple of 8", job.SegmentBytes)
	}
	if job.SegmentBytes > t.m.capacity {
		return fmt.Errorf("shm: job wants %d-byte segments, the launcher reserved %d per rank (%s; launch with a larger segment size)", job.SegmentBytes, t.m.capacity, EnvSegmentBytes)
	}
	return nil
}

// err returns the launch's failure, or nil.
func (t *Transport) err() error {
	if p := t.fail.Load(); p != nil {
		return *p
	}
	who, kind, text := t.m.failure()
	if who == 0 {
		return nil
	}
	err := failureError(t.jobID, who, kind, text)
	t.fail.CompareAndSwap(nil, &err)
	return *t.fail.Load()
}

// failureError is the error every blocking call returns once the job's
// failure record says who failed.
func failureError(jobID string, who, kind int64, text string) error {
	if text == "" {
		text = "no reason recorded"
	}
	cause := &RemoteError{Text: text}
	switch kind {
	case kindCanceled:
		cause.sentinel = context.Canceled
	case kindDeadline:
		cause.sentinel = context.DeadlineExceeded
	case kindTimeout:
		cause.sentinel = transport.ErrTimeout
	}
	if who == 1 {
		return fmt.Errorf("shm: job %s stopped by its launcher: %w", jobID, cause)
	}
	return &transport.RankFailedError{Rank: int(who - 2), Cause: cause}
}

func kindOf(err error) int64 {
	switch {
	case errors.Is(err, context.Canceled):
		return kindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return kindDeadline
	case errors.Is(err, transport.ErrTimeout):
		return kindTimeout
	}
	return kindError
}

// launcherAlive reports whether the process that launched this one is
// still running.
func (t *Transport) launcherAlive() bool { return alive(t.launcherPID, t.launcherT0) }

type endpoint struct {
	t          *Transport
	job        transport.Job
	rank, size int
	segs       [][]byte // every rank's segment, job.SegmentBytes long

	// Barrier state, used by the rank's goroutine only.
	goal     int64 // the barrier count that completes the notified phase
	notified bool

	closed atomic.Bool
	stop   chan struct{} // closed by Close
	failed chan struct{} // closed by watch when the job has failed
}

// Failed returns a channel that is closed when the job has failed, on any
// rank, while the endpoint is open. A runtime can cancel the context of
// the rank's code with it, so that code which is not in a transport call
// learns of the failure too.
func (e *endpoint) Failed() <-chan struct{} { return e.failed }

// MemoryMapped is true: the job's segment file is mapped whole in every
// process.
func (e *endpoint) MemoryMapped() bool { return true }

// Depart does nothing: a rank process that has returned exits, and the
// ranks still waiting for it in a barrier fail when they see that it
// exited before arriving (checkPeers).
func (e *endpoint) Depart() {}

// Mapped returns rank's segment, mapped in this process.
func (e *endpoint) Mapped(rank int) []byte { return e.segs[rank] }

// watch sleeps on the failure record's word until a failure is recorded
// or the endpoint is closed.
func (e *endpoint) watch() {
	claim := e.t.m.word(offFailClaim)
	for !e.closed.Load() {
		if claim.Load() != 0 {
			close(e.failed)
			return
		}
		futexSleep(claim, 0, 100*time.Millisecond)
	}
}

var _ transport.Extended = (*endpoint)(nil)

// Collectives returns nil: the shm transport has no native collectives.
func (e *endpoint) Collectives() transport.Collectives { return nil }

func (e *endpoint) Rank() int       { return e.rank }
func (e *endpoint) Size() int       { return e.size }
func (e *endpoint) Segment() []byte { return e.segs[e.rank] }
func (e *endpoint) String() string  { return fmt.Sprintf("shm rank %d/%d", e.rank, e.size) }

// Fail records err as the job's failure, naming this rank, unless the job
// has already failed; every rank's blocking calls then return it.
func (e *endpoint) Fail(err error) {
	if err == nil {
		err = errors.New("failed")
	}
	e.t.m.claimFailure(int64(e.rank)+2, kindOf(err), err.Error())
}

// pre is the check every operation makes first.
func (e *endpoint) pre(ctx context.Context) error {
	if e.closed.Load() {
		return fmt.Errorf("shm rank %d: %w", e.rank, transport.ErrClosed)
	}
	if err := e.t.err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		if ferr := e.t.err(); ferr != nil {
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
	copy(e.segs[rank][off:off+int64(len(src))], src)
	return nil
}

func (e *endpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	copy(dst, e.segs[rank][off:off+int64(len(dst))])
	return nil
}

// GetStrided and PutStrided copy the elements of st straight between
// the segment and the packed buffer: one operation, like Get and Put.
func (e *endpoint) GetStrided(ctx context.Context, rank int, st transport.Strided, dst []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	transport.CopyStrided(e.segs[rank], st, dst, true)
	return nil
}

func (e *endpoint) PutStrided(ctx context.Context, rank int, st transport.Strided, src []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	transport.CopyStrided(e.segs[rank], st, src, false)
	return nil
}

// PutAsync is Put: the copy is done before it returns.
func (e *endpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	return transport.DoneWith(e.Put(ctx, rank, off, src))
}

// GetAsync is Get: the copy is done before it returns.
func (e *endpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	return transport.DoneWith(e.Get(ctx, rank, off, dst))
}

// fenceWord is the target of Fence's atomic operation.
var fenceWord atomic.Int64

// Fence: puts are copies done before they return, so their stores only
// need ordering before whatever this rank does next; an atomic
// read-modify-write is a full memory barrier.
func (e *endpoint) Fence(ctx context.Context) error {
	fenceWord.Add(1)
	return e.pre(ctx)
}

// word is the int64 at (rank, off). Callers pass a valid rank and an
// aligned offset inside the segment (pgas checks them); a bad one panics
// on Go's bounds check of the 8 bytes, it cannot reach memory outside a
// segment.
func (e *endpoint) word(ctx context.Context, rank int, off int64) (*atomic.Int64, error) {
	if err := e.pre(ctx); err != nil {
		return nil, err
	}
	return toWord(&e.segs[rank][off : off+8 : off+8][0]), nil
}

func (e *endpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	w, err := e.word(ctx, rank, off)
	if err != nil {
		return 0, err
	}
	return w.Add(delta) - delta, nil
}

func (e *endpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	w, err := e.word(ctx, rank, off)
	if err != nil {
		return 0, err
	}
	for {
		if w.CompareAndSwap(old, new) {
			return old, nil
		}
		if cur := w.Load(); cur != old {
			return cur, nil
		}
	}
}

func (e *endpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	w, err := e.word(ctx, rank, off)
	if err != nil {
		return 0, err
	}
	return w.Load(), nil
}

// Notify adds this rank's arrival to the launch's barrier count; the
// arrival that completes the phase wakes the sleeping waiters.
func (e *endpoint) Notify(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if e.notified {
		return fmt.Errorf("shm rank %d: notify called twice without wait", e.rank)
	}
	m := e.t.m
	// Every rank has notified the same number of phases when it starts a
	// new one, so phase k completes when the count reaches k*size.
	phase := m.rankWord(e.rank, rArrive).Add(1)
	e.goal = phase * int64(e.size)
	e.notified = true
	if n := m.word(offCount).Add(1); n == e.goal && m.word(offSleepers).Load() > 0 {
		futexWakeAll(m.word(offCount))
	}
	return nil
}

// Wait spins, then sleeps on a futex, until every rank has notified.
func (e *endpoint) Wait(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if !e.notified {
		return fmt.Errorf("shm rank %d: wait without notify", e.rank)
	}
	if err := e.await(ctx); err != nil {
		return err
	}
	e.notified = false
	return nil
}

func (e *endpoint) await(ctx context.Context) error {
	m := e.t.m
	count := m.word(offCount)
	for range spinLoads {
		if count.Load() >= e.goal {
			return nil
		}
	}
	for range yields {
		unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		if count.Load() >= e.goal {
			return nil
		}
	}
	start := time.Now()
	lastCheck := start
	sleepers := m.word(offSleepers)
	for {
		if err := e.t.err(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		if d := e.job.SyncTimeout; d > 0 && now.Sub(start) >= d {
			return fmt.Errorf("shm rank %d: barrier phase %d: waited %v for ranks %v: %w",
				e.rank, e.goal/int64(e.size), d, e.missing(), transport.ErrTimeout)
		}
		if err := e.checkPeers(); err != nil {
			return err
		}
		if now.Sub(lastCheck) >= launcherCheck {
			lastCheck = now
			if !e.t.launcherAlive() {
				err := fmt.Errorf("shm: launcher (pid %d) of job %s is gone", e.t.launcherPID, e.t.jobID)
				e.Fail(err)
				return err
			}
		}
		sleepers.Add(1)
		v := count.Load()
		if v >= e.goal {
			sleepers.Add(-1)
			return nil
		}
		futexSleep(count, uint32(v), sleepSlice)
		sleepers.Add(-1)
		if count.Load() >= e.goal {
			return nil
		}
		runtime.Gosched()
	}
}

// missing lists the ranks that have not notified the phase being waited
// for.
func (e *endpoint) missing() []int {
	var out []int
	phase := e.goal / int64(e.size)
	for r := range e.size {
		if e.t.m.rankWord(r, rArrive).Load() < phase {
			out = append(out, r)
		}
	}
	return out
}

// checkPeers fails the job if a rank this one waits for has exited with
// status 0 without notifying. (The launcher records other exits itself.)
func (e *endpoint) checkPeers() error {
	m := e.t.m
	phase := e.goal / int64(e.size)
	for r := range e.size {
		if m.rankWord(r, rState).Load() == stateExited && m.rankWord(r, rArrive).Load() < phase {
			m.claimFailure(int64(r)+2, kindDied, fmt.Sprintf("process %d exited before barrier phase %d", m.rankWord(r, rPID).Load(), phase))
			return e.t.err()
		}
	}
	return nil
}

func (e *endpoint) Barrier(ctx context.Context) error {
	if err := e.Notify(ctx); err != nil {
		return err
	}
	return e.Wait(ctx)
}

// Close releases the endpoint; the transport may then open another job.
func (e *endpoint) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	close(e.stop)
	e.t.m.rankWord(e.rank, rOpen).Store(0)
	futexWakeAll(e.t.m.word(offFailClaim)) // ends watch
	e.t.mu.Lock()
	e.t.mu.open = false
	e.t.mu.Unlock()
	return nil
}
