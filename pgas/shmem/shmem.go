//go:build shmem

package shmem

/*
#cgo CFLAGS: -I/usr/lib/x86_64-linux-gnu/openmpi/include
#cgo LDFLAGS: -L/usr/lib/x86_64-linux-gnu/openmpi/lib -loshmem -lmpi
#include <sched.h>
#include <shmem.h>
#include <stdint.h>
#include <string.h>

_Static_assert(sizeof(long) == 8, "the transport's atomics are on 64-bit longs");

static int pg_thread_multiple(void) { return SHMEM_THREAD_MULTIPLE; }

static int pg_init(int *provided) {
	return shmem_init_thread(SHMEM_THREAD_MULTIPLE, provided);
}

static void *pg_malloc(int64_t n) { return shmem_malloc((size_t)n); }

static void pg_put(uintptr_t dst, uintptr_t src, int64_t n, int pe) {
	shmem_putmem((void *)dst, (const void *)src, (size_t)n, pe);
}

static void pg_get(uintptr_t dst, uintptr_t src, int64_t n, int pe) {
	shmem_getmem((void *)dst, (const void *)src, (size_t)n, pe);
}

static int64_t pg_fetch_add(uintptr_t a, int64_t d, int pe) {
	return shmem_long_atomic_fetch_add((long *)a, (long)d, pe);
}

static int64_t pg_cas(uintptr_t a, int64_t old, int64_t new, int pe) {
	return shmem_long_atomic_compare_swap((long *)a, (long)old, (long)new, pe);
}

static int64_t pg_load(uintptr_t a, int pe) {
	return shmem_long_atomic_fetch((long *)a, pe);
}

// pg_poll reads this PE's word at a; with yield set, it first gives the
// processor to other processes (more PEs than processors spin otherwise).
static int64_t pg_poll(uintptr_t a, int pe, int yield) {
	if (yield) sched_yield();
	return shmem_long_atomic_fetch((long *)a, pe);
}

// pg_arrive completes this PE's puts and atomics, then adds 1 to the
// arrival counter at a on every PE.
static void pg_arrive(uintptr_t a, int npes) {
	shmem_quiet();
	for (int pe = 0; pe < npes; pe++) shmem_long_atomic_add((long *)a, 1, pe);
	shmem_quiet();
}
*/
import "C"

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
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas/internal/osthread"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Built reports whether this binary was compiled with OpenSHMEM (the
// shmem build tag).
const Built = true

// Waiting: Wait polls the arrival counter, yielding the processor to other
// processes (sched_yield) before every poll after spinPolls polls; after
// spinFor it sleeps between polls, from
// sleepMin doubling to sleepMax. The context and the time-out are checked
// every checkEvery polls.
const (
	spinPolls  = 256
	spinFor    = 5 * time.Millisecond
	sleepMin   = 20 * time.Microsecond
	sleepMax   = time.Millisecond
	checkEvery = 32
)

// ctrlWords: the control area every PE allocates once from the symmetric
// heap: word 0 is the arrival counter of the barriers, then two words per
// PE for the job it opens (segment size, ranks).
func ctrlWords(npes int) int { return 1 + 2*npes }

// Transport is the OpenSHMEM transport of this process: one PE of the
// program oshrun started. Get it with FromEnv or Init. Its Open hosts
// exactly that PE's rank and returns one endpoint; a process may run
// several jobs one after another, all with every PE.
type Transport struct {
	opts       Options
	rank, size int
	level      string
	serial     bool // the library is not SHMEM_THREAD_MULTIPLE: calls take mu
	mu         sync.Mutex
	ctrl       unsafe.Pointer // the control area (ctrlWords), symmetric (C memory)
	arrivals   int64          // barriers this PE has completed, over all jobs

	open struct {
		sync.Mutex
		ep        *endpoint
		finalized bool
	}
	thread   *osthread.Thread // the thread that initialised OpenSHMEM (and finalises it)
	failOnce sync.Once
}

var _ transport.Transport = (*Transport)(nil)

// The process's transport: OpenSHMEM is initialised once per process.
var global struct {
	sync.Mutex
	t   *Transport
	err error
}

// setDefault sets the environment variable k to v unless it is set.
func setDefault(k, v string) {
	if _, set := os.LookupEnv(k); !set {
		os.Setenv(k, v)
	}
}

// Init initialises OpenSHMEM (shmem_init_thread, asking for
// SHMEM_THREAD_MULTIPLE) on an OS thread locked for the purpose and
// returns the transport of this process. Later calls return the same
// transport; o is used by the first.
func Init(o Options) (*Transport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	global.Lock()
	defer global.Unlock()
	if global.t != nil || global.err != nil {
		return global.t, global.err
	}
	o = o.withDefaults()
	setDefault("OMPI_MCA_opal_signal", "")
	setDefault("UCX_ERROR_SIGNALS", "")
	setDefault("OMPI_MCA_osc", "^rdma")
	setDefault("SHMEM_SYMMETRIC_SIZE", strconv.FormatInt(o.HeapBytes, 10))
	t := &Transport{opts: o}
	th, err := osthread.Start(t.initSHMEM)
	if err != nil {
		global.err = err
		return nil, err
	}
	t.thread, global.t = th, t
	return t, nil
}

// initSHMEM initialises OpenSHMEM, on the thread that will finalise it
// (osthread), and allocates the control area.
func (t *Transport) initSHMEM() error {
	var provided C.int
	if rc := C.pg_init(&provided); rc != 0 {
		return fmt.Errorf("shmem: shmem_init_thread failed (%d)", int(rc))
	}
	t.rank, t.size = int(C.shmem_my_pe()), int(C.shmem_n_pes())
	if provided >= C.pg_thread_multiple() {
		t.level = "SHMEM_THREAD_MULTIPLE"
	} else {
		t.level, t.serial = fmt.Sprintf("thread level %d", int(provided)), true
		fmt.Fprintf(os.Stderr, "pgasmr: shmem: the library provides %s, not SHMEM_THREAD_MULTIPLE: all calls are serialised\n", t.level)
	}
	n := int64(8 * ctrlWords(t.size))
	p := C.pg_malloc(C.int64_t(n))
	if p == nil {
		return fmt.Errorf("shmem: shmem_malloc of the %d-byte control area failed", n)
	}
	clear(unsafe.Slice((*byte)(p), n))
	C.shmem_barrier_all() // every control area is zero before anyone arrives
	t.ctrl = p
	return nil
}

func (t *Transport) enter() {
	if t.serial {
		t.mu.Lock()
	}
}

func (t *Transport) exit() {
	if t.serial {
		t.mu.Unlock()
	}
}

// Name returns "shmem".
func (*Transport) Name() string { return "shmem" }

// Rank is this process's PE number.
func (t *Transport) Rank() int { return t.rank }

// Size is the number of PEs.
func (t *Transport) Size() int { return t.size }

// ThreadLevel names the thread level the library provided.
func (t *Transport) ThreadLevel() string { return t.level }

// Options returns the options in effect, with defaults applied.
func (t *Transport) Options() Options { return t.opts }

// Finalize ends the use of OpenSHMEM: it frees the control area and calls
// shmem_finalize on the thread that initialised it. It fails if an
// endpoint is open. It is collective over every PE. After Finalize, Init
// fails.
func (t *Transport) Finalize() error {
	t.open.Lock()
	defer t.open.Unlock()
	if t.open.finalized {
		return nil
	}
	if t.open.ep != nil {
		return errors.New("shmem: Finalize with an open endpoint")
	}
	t.open.finalized = true
	t.thread.Do(func() {
		C.shmem_free(t.ctrl)
		C.shmem_finalize()
	})
	t.thread.Stop()
	global.Lock()
	global.t, global.err = nil, errors.New("shmem: OpenSHMEM was finalized")
	global.Unlock()
	return nil
}

// Abort ends every PE with shmem_global_exit(code). It does not return.
func (t *Transport) Abort(code int) {
	C.shmem_global_exit(C.int(code))
	os.Exit(code) // not reached
}

// word returns the address of word i of the control area.
func (t *Transport) word(i int) uintptr { return uintptr(t.ctrl) + uintptr(8*i) }

// Open starts a job and returns the endpoint of this process's rank. It is
// collective over every PE: each PE first publishes the job it opens in
// every PE's control area and waits for all (a barrier that honours ctx),
// so that a PE opening a different job fails on every PE rather than
// leaving the others in shmem_malloc. Then the segment is allocated from
// the symmetric heap (shmem_malloc) and zeroed.
func (t *Transport) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	if job.SegmentBytes < 0 || job.SegmentBytes%8 != 0 {
		return nil, fmt.Errorf("shmem: segment size %d is not a non-negative multiple of 8", job.SegmentBytes)
	}
	t.open.Lock()
	defer t.open.Unlock()
	if t.open.finalized {
		return nil, errors.New("shmem: Open after Finalize")
	}
	if t.open.ep != nil {
		return nil, fmt.Errorf("shmem: PE %d already has an open endpoint", t.rank)
	}
	e := &endpoint{t: t, job: job, rank: t.rank, size: t.size, stop: make(chan struct{})}
	mine := [2]int64{job.SegmentBytes, int64(job.Ranks)}
	t.enter()
	for q := range t.size {
		C.pg_put(C.uintptr_t(t.word(1+2*t.rank)), C.uintptr_t(uintptr(unsafe.Pointer(&mine[0]))), 16, C.int(q))
	}
	t.exit()
	if err := e.Barrier(ctx); err != nil {
		return nil, fmt.Errorf("shmem: open: %w", err)
	}
	for q := range t.size {
		seg, ranks := t.load(1+2*q), t.load(2+2*q)
		if seg != job.SegmentBytes || ranks != int64(job.Ranks) {
			return nil, fmt.Errorf("shmem: PE %d opened a job of %d ranks with %d-byte segments, PE %d one of %d ranks with %d-byte segments",
				t.rank, job.Ranks, job.SegmentBytes, q, ranks, seg)
		}
	}
	if job.Ranks != t.size {
		return nil, fmt.Errorf("shmem: job has %d ranks, but there are %d PEs (start it with oshrun -np %d)", job.Ranks, t.size, job.Ranks)
	}
	// Every PE asks for the same size: shmem_malloc is collective.
	t.enter()
	p := C.pg_malloc(C.int64_t(max(job.SegmentBytes, 8)))
	t.exit()
	if p == nil {
		return nil, fmt.Errorf("shmem: shmem_malloc of a %d-byte segment failed (the symmetric heap is %s bytes: set %s or SHMEM_SYMMETRIC_SIZE)",
			job.SegmentBytes, os.Getenv("SHMEM_SYMMETRIC_SIZE"), EnvHeapBytes)
	}
	e.base = p
	e.seg = unsafe.Slice((*byte)(p), job.SegmentBytes)
	clear(e.seg)
	// Nobody writes to a segment before its owner has zeroed it.
	if err := e.Barrier(ctx); err != nil {
		return nil, fmt.Errorf("shmem: open: %w", err)
	}
	go e.watch(ctx)
	t.open.ep = e
	return []transport.Endpoint{e}, nil
}

// load reads word i of this PE's control area atomically.
func (t *Transport) load(i int) int64 {
	t.enter()
	defer t.exit()
	return int64(C.pg_load(C.uintptr_t(t.word(i)), C.int(t.rank)))
}

// endpoint is one rank's view of a job.
type endpoint struct {
	t          *Transport
	job        transport.Job
	rank, size int
	base       unsafe.Pointer // the segment's address, the same on every PE (C memory)
	seg        []byte
	closed     atomic.Bool
	stop       chan struct{}
	notified   bool
}

func (e *endpoint) Rank() int       { return e.rank }
func (e *endpoint) Size() int       { return e.size }
func (e *endpoint) Segment() []byte { return e.seg }
func (e *endpoint) String() string  { return fmt.Sprintf("shmem PE %d/%d", e.rank, e.size) }

// watch fails the job when its context ends, until Close.
func (e *endpoint) watch(ctx context.Context) {
	select {
	case <-ctx.Done():
		if !e.closed.Load() {
			e.Fail(ctx.Err())
		}
	case <-e.stop:
	}
}

// addr is the address of byte off of the segment, on every PE.
func (e *endpoint) addr(off int64) uintptr { return uintptr(e.base) + uintptr(off) }

// pre is the check every operation makes first.
func (e *endpoint) pre(ctx context.Context) error {
	if e.closed.Load() {
		return fmt.Errorf("shmem PE %d: %w", e.rank, transport.ErrClosed)
	}
	return ctx.Err()
}

// check checks a range again: OpenSHMEM calls go to C, where nothing
// would stop a bad offset from writing past the segment.
func (e *endpoint) check(what string, rank int, off, n int64) error {
	if err := transport.CheckRange(e.size, e.job.SegmentBytes, rank, off, n); err != nil {
		return fmt.Errorf("shmem: %s: %w", what, err)
	}
	return nil
}

// Put is shmem_putmem: it returns when src may be reused; the data is at
// the target after the next Fence, Notify or Barrier.
func (e *endpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if err := e.check("put", rank, off, int64(len(src))); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	e.t.enter()
	C.pg_put(C.uintptr_t(e.addr(off)), C.uintptr_t(uintptr(unsafe.Pointer(&src[0]))), C.int64_t(len(src)), C.int(rank))
	e.t.exit()
	runtime.KeepAlive(src)
	return nil
}

// Get is shmem_getmem.
func (e *endpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if err := e.check("get", rank, off, int64(len(dst))); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	e.t.enter()
	C.pg_get(C.uintptr_t(uintptr(unsafe.Pointer(&dst[0]))), C.uintptr_t(e.addr(off)), C.int64_t(len(dst)), C.int(rank))
	e.t.exit()
	runtime.KeepAlive(dst)
	return nil
}

// PutAsync completes the put before it returns.
func (e *endpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	return transport.DoneWith(e.Put(ctx, rank, off, src))
}

// GetAsync completes the get before it returns.
func (e *endpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	return transport.DoneWith(e.Get(ctx, rank, off, dst))
}

// Fence is shmem_quiet.
func (e *endpoint) Fence(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	e.t.enter()
	C.shmem_quiet()
	e.t.exit()
	return nil
}

func (e *endpoint) atomicPre(ctx context.Context, rank int, off int64) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if err := transport.CheckAtomic(e.size, e.job.SegmentBytes, rank, off); err != nil {
		return fmt.Errorf("shmem: atomic: %w", err)
	}
	return nil
}

// FetchAdd is shmem_long_atomic_fetch_add.
func (e *endpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	if err := e.atomicPre(ctx, rank, off); err != nil {
		return 0, err
	}
	e.t.enter()
	v := C.pg_fetch_add(C.uintptr_t(e.addr(off)), C.int64_t(delta), C.int(rank))
	e.t.exit()
	return int64(v), nil
}

// CompareAndSwap is shmem_long_atomic_compare_swap.
func (e *endpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	if err := e.atomicPre(ctx, rank, off); err != nil {
		return 0, err
	}
	e.t.enter()
	v := C.pg_cas(C.uintptr_t(e.addr(off)), C.int64_t(old), C.int64_t(new), C.int(rank))
	e.t.exit()
	return int64(v), nil
}

// Load is shmem_long_atomic_fetch.
func (e *endpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	if err := e.atomicPre(ctx, rank, off); err != nil {
		return 0, err
	}
	e.t.enter()
	v := C.pg_load(C.uintptr_t(e.addr(off)), C.int(rank))
	e.t.exit()
	return int64(v), nil
}

// Notify completes this rank's puts (shmem_quiet) and adds one to every
// PE's arrival counter.
func (e *endpoint) Notify(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if e.notified {
		return fmt.Errorf("shmem PE %d: notify of phase %d called twice without wait", e.rank, e.t.arrivals)
	}
	e.t.enter()
	C.pg_arrive(C.uintptr_t(e.t.word(0)), C.int(e.size))
	e.t.exit()
	e.notified = true
	return nil
}

// Wait polls this PE's arrival counter until every PE has notified the
// phase, the context ends or Job.SyncTimeout passes.
func (e *endpoint) Wait(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if !e.notified {
		return fmt.Errorf("shmem PE %d: wait of phase %d without notify", e.rank, e.t.arrivals)
	}
	want := (e.t.arrivals + 1) * int64(e.size)
	start := time.Now()
	sleep := sleepMin
	for i := 0; ; i++ {
		e.t.enter()
		v := int64(C.pg_poll(C.uintptr_t(e.t.word(0)), C.int(e.rank), boolInt(i >= spinPolls)))
		e.t.exit()
		if v >= want {
			break
		}
		if i%checkEvery != checkEvery-1 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		waited := time.Since(start)
		if d := e.job.SyncTimeout; d > 0 && waited > d {
			return fmt.Errorf("shmem PE %d: barrier phase %d: waited %v for other ranks: %w", e.rank, e.t.arrivals, d, transport.ErrTimeout)
		}
		if waited > spinFor {
			time.Sleep(sleep)
			sleep = min(2*sleep, sleepMax)
		}
	}
	e.t.arrivals++
	e.notified = false
	return nil
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Barrier is Notify followed by Wait.
func (e *endpoint) Barrier(ctx context.Context) error {
	if err := e.Notify(ctx); err != nil {
		return err
	}
	return e.Wait(ctx)
}

// Fail reports err on standard error and ends every PE
// (shmem_global_exit(1)): oshrun ends them all, which is how the other
// ranks learn of the failure. Fail does not return.
func (e *endpoint) Fail(err error) {
	e.t.failOnce.Do(func() {
		fmt.Fprintf(os.Stderr, "pgasmr: shmem rank %d of %d failed: %v (calling shmem_global_exit)\n", e.rank, e.size, err)
		e.t.Abort(1)
	})
	select {} // another goroutine is ending the program
}

// Close frees the job's segment (shmem_free, collective). Calls after
// Close return ErrClosed.
func (e *endpoint) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	close(e.stop)
	e.t.enter()
	C.shmem_free(e.base)
	e.t.exit()
	e.seg = nil
	e.t.open.Lock()
	e.t.open.ep = nil
	e.t.open.Unlock()
	return nil
}
