//go:build mpi || mpich

package mpi

/*
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Handles and constants whose representation differs between MPI
// libraries (pointers in OpenMPI, integers in MPICH) stay on the C side:
// Go sees them only through these helpers.

typedef struct { int rc; int flag; MPI_Request req; } pg_req;
typedef struct { int rc; int64_t v; } pg_i64;
typedef struct { int rc; void *base; MPI_Win win; } pg_win;
typedef struct { int rc; MPI_Comm comm; int rank, size; } pg_comm;

static int pg_init(int required, int *provided, int *already) {
	int flag = 0;
	int rc = MPI_Initialized(&flag);
	if (rc != MPI_SUCCESS) return rc;
	*already = flag;
	if (flag) return MPI_Query_thread(provided);
	return MPI_Init_thread(NULL, NULL, required, provided);
}

static int pg_finalized(void) { int f = 0; MPI_Finalized(&f); return f; }
static int pg_initialized(void) { int f = 0; MPI_Initialized(&f); return f; }
static int pg_thread_multiple(void) { return MPI_THREAD_MULTIPLE; }
static int pg_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
static int pg_thread_funneled(void) { return MPI_THREAD_FUNNELED; }

// pg_dup_world makes the transport's private communicator, whose errors
// are returned rather than fatal.
static pg_comm pg_dup_world(void) {
	pg_comm c;
	memset(&c, 0, sizeof c);
	c.rc = MPI_Comm_dup(MPI_COMM_WORLD, &c.comm);
	if (c.rc != MPI_SUCCESS) return c;
	MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(c.comm, &c.rank);
	c.rc = MPI_Comm_size(c.comm, &c.size);
	return c;
}

static int pg_comm_free(MPI_Comm c) { return MPI_Comm_free(&c); }

// pg_node_size is the number of ranks of c on this rank's node.
static int pg_node_size(MPI_Comm c) {
	MPI_Comm node;
	int n = 0;
	if (MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return -1;
	MPI_Comm_size(node, &n);
	MPI_Comm_free(&node);
	return n;
}

static void pg_error_string(int rc, char *buf) {
	int n = 0;
	if (MPI_Error_string(rc, buf, &n) != MPI_SUCCESS) n = 0;
	buf[n] = 0;
}

static void pg_library(char *buf) {
	int n = 0;
	MPI_Get_library_version(buf, &n);
	buf[n] = 0;
}

static int pg_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int pg_finalize(void) { return MPI_Finalize(); }

static int pg_iprobe(MPI_Comm c) {
	int flag = 0;
	return MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, MPI_STATUS_IGNORE);
}

static pg_win pg_win_allocate(MPI_Comm c, MPI_Aint size) {
	pg_win w;
	memset(&w, 0, sizeof w);
	w.rc = MPI_Win_allocate(size, 1, MPI_INFO_NULL, c, &w.base, &w.win);
	if (w.rc != MPI_SUCCESS) return w;
	MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
	w.rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win);
	return w;
}

static int pg_win_free(MPI_Win w) {
	int rc = MPI_Win_unlock_all(w);
	int rc2 = MPI_Win_free(&w);
	return rc != MPI_SUCCESS ? rc : rc2;
}

// pg_put puts n bytes in chunks of at most chunk bytes, then waits until
// src may be reused.
static int pg_put(MPI_Win w, int rank, MPI_Aint off, uintptr_t src, int64_t n, int64_t chunk) {
	const char *p = (const char *)src;
	while (n > 0) {
		int m = n > chunk ? (int)chunk : (int)n;
		int rc = MPI_Put(p, m, MPI_BYTE, rank, off, m, MPI_BYTE, w);
		if (rc != MPI_SUCCESS) return rc;
		p += m; off += m; n -= m;
	}
	return MPI_Win_flush_local(rank, w);
}

// pg_get gets n bytes in chunks and waits until dst is filled.
static int pg_get(MPI_Win w, int rank, MPI_Aint off, uintptr_t dst, int64_t n, int64_t chunk) {
	char *p = (char *)dst;
	while (n > 0) {
		int m = n > chunk ? (int)chunk : (int)n;
		int rc = MPI_Get(p, m, MPI_BYTE, rank, off, m, MPI_BYTE, w);
		if (rc != MPI_SUCCESS) return rc;
		p += m; off += m; n -= m;
	}
	return MPI_Win_flush(rank, w);
}

// pg_strided gets (put == 0) or puts the elements of a strided box of
// the target's window as one MPI_Get or MPI_Put: the target side is a
// derived datatype (hvectors nested from the last dimension out, over
// elem bytes), the origin side n packed bytes.
static int pg_strided(MPI_Win w, int rank, MPI_Aint off, uintptr_t buf, int64_t n, int nd,
		const int64_t *shape, const int64_t *strides, int64_t elem, int put) {
	MPI_Datatype t, u;
	int rc = MPI_Type_contiguous((int)elem, MPI_BYTE, &t);
	if (rc != MPI_SUCCESS) return rc;
	for (int k = nd - 1; k >= 0; k--) {
		rc = MPI_Type_create_hvector((int)shape[k], 1, (MPI_Aint)strides[k], t, &u);
		MPI_Type_free(&t);
		if (rc != MPI_SUCCESS) return rc;
		t = u;
	}
	rc = MPI_Type_commit(&t);
	if (rc != MPI_SUCCESS) { MPI_Type_free(&t); return rc; }
	if (put) {
		rc = MPI_Put((const void *)buf, (int)n, MPI_BYTE, rank, off, 1, t, w);
		if (rc == MPI_SUCCESS) rc = MPI_Win_flush_local(rank, w);
	} else {
		rc = MPI_Get((void *)buf, (int)n, MPI_BYTE, rank, off, 1, t, w);
		if (rc == MPI_SUCCESS) rc = MPI_Win_flush(rank, w);
	}
	MPI_Type_free(&t);
	return rc;
}

static int pg_flush_all(MPI_Win w) {
	int rc = MPI_Win_flush_all(w);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Win_sync(w);
}

static int pg_win_sync(MPI_Win w) { return MPI_Win_sync(w); }

static pg_i64 pg_fetch_add(MPI_Win w, int rank, MPI_Aint off, int64_t delta) {
	pg_i64 r = {0, 0};
	r.rc = MPI_Fetch_and_op(&delta, &r.v, MPI_INT64_T, rank, off, MPI_SUM, w);
	if (r.rc == MPI_SUCCESS) r.rc = MPI_Win_flush(rank, w);
	return r;
}

static pg_i64 pg_load(MPI_Win w, int rank, MPI_Aint off) {
	pg_i64 r = {0, 0};
	int64_t none = 0;
	r.rc = MPI_Fetch_and_op(&none, &r.v, MPI_INT64_T, rank, off, MPI_NO_OP, w);
	if (r.rc == MPI_SUCCESS) r.rc = MPI_Win_flush(rank, w);
	return r;
}

static pg_i64 pg_cas(MPI_Win w, int rank, MPI_Aint off, int64_t old, int64_t new) {
	pg_i64 r = {0, 0};
	r.rc = MPI_Compare_and_swap(&new, &old, &r.v, MPI_INT64_T, rank, off, w);
	if (r.rc == MPI_SUCCESS) r.rc = MPI_Win_flush(rank, w);
	return r;
}

static pg_req pg_ibarrier(MPI_Comm c) {
	pg_req r = {0, 0, MPI_REQUEST_NULL};
	r.rc = MPI_Ibarrier(c, &r.req);
	return r;
}

// pg_test tests req, yielding the processor first if yield is set and
// the request is not complete.
static pg_req pg_test(MPI_Request req, int yield) {
	pg_req r = {0, 0, req};
	r.rc = MPI_Test(&r.req, &r.flag, MPI_STATUS_IGNORE);
	if (r.rc == MPI_SUCCESS && !r.flag && yield) sched_yield();
	return r;
}

static pg_req pg_iallgather_i64(const int64_t *mine, int n, int64_t *all, MPI_Comm c) {
	pg_req r = {0, 0, MPI_REQUEST_NULL};
	r.rc = MPI_Iallgather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, c, &r.req);
	return r;
}

// Blocking collectives: buffers are passed as addresses (see bufAddr).
static int pg_bcast(uintptr_t buf, int n, int root, MPI_Comm c) {
	return MPI_Bcast((void *)buf, n, MPI_BYTE, root, c);
}

static int pg_allgatherv(uintptr_t send, int n, uintptr_t recv, const int *counts, const int *displs, MPI_Comm c) {
	return MPI_Allgatherv((const void *)send, n, MPI_BYTE, (void *)recv, counts, displs, MPI_BYTE, c);
}

static int pg_alltoallv(uintptr_t send, const int *sc, const int *sd, uintptr_t recv, const int *rc, const int *rd, MPI_Comm c) {
	return MPI_Alltoallv((const void *)send, sc, sd, MPI_BYTE, (void *)recv, rc, rd, MPI_BYTE, c);
}

// pg_all_true sets *flag to whether it is nonzero on every rank of c.
static int pg_all_true(int *flag, MPI_Comm c) {
	return MPI_Allreduce(MPI_IN_PLACE, flag, 1, MPI_INT, MPI_LAND, c);
}

// Point-to-point transfers for collectives whose counts do not fit in a
// C int: requests live in C memory.
static MPI_Request *pg_reqs(int n) {
	MPI_Request *r = calloc(n > 0 ? n : 1, sizeof(MPI_Request));
	for (int i = 0; i < n; i++) r[i] = MPI_REQUEST_NULL;
	return r;
}

static int pg_isend(MPI_Request *reqs, int i, const void *buf, int n, int peer, int tag, MPI_Comm c) {
	return MPI_Isend(buf, n, MPI_BYTE, peer, tag, c, &reqs[i]);
}

static int pg_irecv(MPI_Request *reqs, int i, void *buf, int n, int peer, int tag, MPI_Comm c) {
	return MPI_Irecv(buf, n, MPI_BYTE, peer, tag, c, &reqs[i]);
}

// MPICH's MPI_STATUSES_IGNORE is a sentinel address that GCC's
// -Wstringop-overflow takes for a too-small array.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static pg_req pg_testall(MPI_Request *reqs, int n, int yield) {
	pg_req r = {0, 0, MPI_REQUEST_NULL};
	r.rc = MPI_Testall(n, reqs, &r.flag, MPI_STATUSES_IGNORE);
	if (r.rc == MPI_SUCCESS && !r.flag && yield) sched_yield();
	return r;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas/internal/osthread"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Built reports whether this binary was compiled with MPI (the mpi or
// mpich build tag).
const Built = true

// Waiting: a blocking call tests its MPI request in a loop, yielding the
// processor between tests after spinTests tests, and after spinFor it
// sleeps between tests, from sleepMin doubling to sleepMax. The context
// and the time-out are checked every checkEvery tests.
const (
	spinTests  = 256
	spinFor    = 5 * time.Millisecond
	sleepMin   = 20 * time.Microsecond
	sleepMax   = time.Millisecond
	checkEvery = 32
	p2pTag     = 7401
)

// Transport is the MPI transport of this process: one rank of the MPI job
// an MPI launcher started (MPI_COMM_WORLD). Get it with FromEnv or Init.
// Its Open hosts exactly that rank and returns one endpoint; a process may
// run several jobs one after another, all with the world's size.
type Transport struct {
	opts       Options
	comm       C.MPI_Comm // a duplicate of MPI_COMM_WORLD, errors returned
	rank, size int
	nodeSize   int // ranks on this rank's node
	level      string
	serial     bool // the library is not MPI_THREAD_MULTIPLE: calls take mu
	owner      bool // this package initialised MPI and finalises it
	library    string

	mu   sync.Mutex // serialises MPI calls when serial
	open struct {
		sync.Mutex
		ep        *endpoint
		finalized bool
	}
	nativeCalls atomic.Int64
	largeCalls  atomic.Int64     // collectives carried by exchange
	thread      *osthread.Thread // the thread that initialised MPI (and finalises it)
	progressEnd chan struct{}    // closed to stop the progress goroutine
	progressWG  sync.WaitGroup
	// fail is how this process's part of the job ended, if it did: the
	// first real failure aborts the job (Fail calls MPI_Abort); a signal
	// (interrupted) ends it without: Fail returns, and Close and Finalize
	// skip their collective calls, which would wait for ranks that are
	// ending too.
	fail struct {
		sync.Mutex
		aborting    bool
		interrupted error
	}
	shmDir      *jobDir  // the job's directory of shared-memory files on this node, if Init made one
	sessionMark *os.File // the mark of mpirun's session directory, if Init made one, locked while the process lives
}

var _ transport.Transport = (*Transport)(nil)

// The process's transport: MPI is initialised once per process.
var global struct {
	sync.Mutex
	t   *Transport
	err error
}

// Init initialises MPI, if it is not yet, asking for MPI_THREAD_MULTIPLE
// on an OS thread locked for the purpose, and returns the transport of
// this process. If MPI was already initialised by someone else, Init uses
// it and leaves finalising it to them. With a thread level below
// MPI_THREAD_MULTIPLE the transport serialises all its MPI calls with a
// mutex (ThreadLevel says which level the library gave). Later calls
// return the same transport; o is used by the first.
func Init(o Options) (*Transport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	global.Lock()
	defer global.Unlock()
	if global.t != nil || global.err != nil {
		return global.t, global.err
	}
	// OpenMPI may catch SIGSEGV, SIGBUS, SIGFPE and SIGABRT to print its
	// own backtrace; Go must keep them (its nil-pointer panics are SIGSEGV).
	// TestPanic checks that a nil dereference stays a Go panic.
	if _, set := os.LookupEnv("OMPI_MCA_opal_signal"); !set {
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	t := &Transport{opts: o.withDefaults(), progressEnd: make(chan struct{})}
	th, err := osthread.Start(t.initMPI)
	if err != nil {
		global.err = err
		return nil, err
	}
	t.thread = th
	if t.opts.Progress == 0 {
		t.opts.Progress = -1
		if t.nodeSize != t.size {
			t.opts.Progress = DefaultProgress
		}
	}
	if t.opts.Progress > 0 {
		t.progressWG.Add(1)
		go t.progress()
	}
	global.t = t
	return t, nil
}

// initMPI initialises MPI, on the thread that will finalise it
// (osthread).
func (t *Transport) initMPI() error {
	var provided, already C.int
	// Serialize asks for MPI_THREAD_SERIALIZED, not only serialises:
	// some components refuse a library initialised for
	// MPI_THREAD_MULTIPLE (OpenMPI 4's osc pt2pt, one-sided operations
	// over TCP).
	required := C.pg_thread_multiple()
	if t.opts.Serialize {
		required = C.pg_thread_serialized()
	}
	if flavour == "OpenMPI" && C.pg_initialized() == 0 {
		// Before MPI_Init, which reads where its files go.
		t.shmDir = setupOMPIShmDir()
		t.sessionMark = markOMPISession()
	}
	if rc := C.pg_init(required, &provided, &already); rc != C.MPI_SUCCESS {
		t.shmDir.release()
		return fmt.Errorf("mpi: MPI_Init_thread: %s", errorString(rc))
	}
	t.owner = already == 0
	switch {
	case provided >= C.pg_thread_multiple():
		t.level = "MPI_THREAD_MULTIPLE"
	case provided >= C.pg_thread_serialized():
		t.level, t.serial = "MPI_THREAD_SERIALIZED", true
	case provided >= C.pg_thread_funneled():
		t.level, t.serial = "MPI_THREAD_FUNNELED", true
	default:
		t.level, t.serial = "MPI_THREAD_SINGLE", true
	}
	c := C.pg_dup_world()
	if c.rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: MPI_Comm_dup: %s", errorString(c.rc))
	}
	t.comm, t.rank, t.size = c.comm, int(c.rank), int(c.size)
	t.nodeSize = int(C.pg_node_size(t.comm))
	buf := (*C.char)(C.malloc(C.MPI_MAX_LIBRARY_VERSION_STRING + 1))
	C.pg_library(buf)
	t.library = strings.TrimSpace(C.GoString(buf))
	C.free(unsafe.Pointer(buf))
	if t.serial && !t.opts.Serialize {
		fmt.Fprintf(os.Stderr, "pgasmr: mpi: the MPI library provides %s, not MPI_THREAD_MULTIPLE: all MPI calls are serialised\n", t.level)
	}
	t.serial = t.serial || t.opts.Serialize
	return nil
}

// progress enters MPI every Options.Progress until Finalize.
func (t *Transport) progress() {
	defer t.progressWG.Done()
	tick := time.NewTicker(t.opts.Progress)
	defer tick.Stop()
	for {
		select {
		case <-t.progressEnd:
			return
		case <-tick.C:
			t.enter()
			C.pg_iprobe(t.comm)
			t.exit()
		}
	}
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

// Name returns "mpi".
func (*Transport) Name() string { return "mpi" }

// Rank is this process's rank in MPI_COMM_WORLD.
func (t *Transport) Rank() int { return t.rank }

// Size is the size of MPI_COMM_WORLD.
func (t *Transport) Size() int { return t.size }

// ThreadLevel names the thread level the MPI library provided.
func (t *Transport) ThreadLevel() string { return t.level }

// Serialized reports whether the transport serialises its MPI calls with
// a mutex (the library is not MPI_THREAD_MULTIPLE, or Options.Serialize).
func (t *Transport) Serialized() bool { return t.serial }

// Library is the MPI library's version string (MPI_Get_library_version).
func (t *Transport) Library() string { return t.library }

// Options returns the options in effect, with defaults applied.
func (t *Transport) Options() Options { return t.opts }

// NativeCalls counts the native collectives this process's endpoints
// have served.
func (t *Transport) NativeCalls() int64 { return t.nativeCalls.Load() }

// Finalize ends the use of MPI: it stops the progress goroutine and, if
// Init initialised MPI, calls MPI_Finalize on the thread that initialised
// it. It fails if an endpoint is open. It is collective over the world.
// After Finalize, Init fails.
func (t *Transport) Finalize() error {
	t.open.Lock()
	defer t.open.Unlock()
	if t.open.finalized {
		return nil
	}
	if cause := t.interrupted(); cause != nil {
		// MPI_Finalize waits for every rank, and the others are ending
		// without it: the process exits unfinalised, which the launcher
		// takes as the end of the job. The progress goroutine may wait
		// for a call stuck in MPI: it is not waited for.
		t.open.finalized = true
		close(t.progressEnd)
		t.shmDir.release()
		global.Lock()
		global.t, global.err = nil, errors.New("mpi: the job was interrupted")
		global.Unlock()
		return fmt.Errorf("mpi: MPI_Finalize skipped: the job was interrupted (%v)", cause)
	}
	if t.open.ep != nil {
		return errors.New("mpi: Finalize with an open endpoint")
	}
	t.open.finalized = true
	close(t.progressEnd)
	t.progressWG.Wait()
	var rc C.int = C.MPI_SUCCESS
	t.thread.Do(func() {
		C.pg_comm_free(t.comm)
		if t.owner {
			rc = C.pg_finalize()
		}
	})
	t.thread.Stop()
	if t.owner {
		// MPI_Finalize removed this rank's files; the last rank of the
		// node removes the directory.
		t.shmDir.release()
	}
	global.Lock()
	global.t, global.err = nil, errors.New("mpi: MPI was finalized")
	global.Unlock()
	if rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: MPI_Finalize: %s", errorString(rc))
	}
	return nil
}

// Abort ends the whole MPI job with MPI_Abort(MPI_COMM_WORLD, code): the
// launcher kills every rank. It does not return.
func (t *Transport) Abort(code int) {
	C.pg_abort(C.int(code))
	os.Exit(code) // not reached with a conforming library
}

// errorString is MPI_Error_string of rc.
func errorString(rc C.int) string {
	buf := (*C.char)(C.malloc(C.MPI_MAX_ERROR_STRING + 1))
	defer C.free(unsafe.Pointer(buf))
	C.pg_error_string(rc, buf)
	s := C.GoString(buf)
	if s == "" {
		s = fmt.Sprintf("MPI error %d", int(rc))
	}
	return s
}

// Open starts a job and returns the endpoint of this process's rank. It is
// collective over MPI_COMM_WORLD: job.Ranks must be its size, and
// job.SegmentBytes the same on every rank (Open fails on every rank if it
// is not). The segment is allocated with MPI_Win_allocate, zeroed, and the
// window locked for passive-target access to every rank
// (MPI_Win_lock_all) until Close. Open fails if an endpoint is open, and
// after a job was interrupted (see Fail).
func (t *Transport) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	if job.Ranks != t.size {
		return nil, fmt.Errorf("mpi: job has %d ranks, but MPI_COMM_WORLD has %d (start it with mpirun -np %d)", job.Ranks, t.size, job.Ranks)
	}
	if job.SegmentBytes < 0 || job.SegmentBytes%8 != 0 {
		return nil, fmt.Errorf("mpi: segment size %d is not a non-negative multiple of 8", job.SegmentBytes)
	}
	t.open.Lock()
	defer t.open.Unlock()
	if t.open.finalized {
		return nil, errors.New("mpi: Open after Finalize")
	}
	if t.open.ep != nil {
		return nil, fmt.Errorf("mpi: rank %d already has an open endpoint", t.rank)
	}
	if cause := t.interrupted(); cause != nil {
		return nil, fmt.Errorf("mpi: Open after the job was interrupted (%v)", cause)
	}
	e := &endpoint{t: t, ctx: ctx, job: job, rank: t.rank, size: t.size, chunk: t.opts.ChunkBytes, stop: make(chan struct{})}
	// Every rank must open the same job.
	mine := []int64{job.SegmentBytes, int64(job.Ranks)}
	all := make([]int64, 2*t.size)
	var pin runtime.Pinner
	pin.Pin(&mine[0])
	pin.Pin(&all[0])
	t.enter()
	r := C.pg_iallgather_i64((*C.int64_t)(unsafe.Pointer(&mine[0])), 2, (*C.int64_t)(unsafe.Pointer(&all[0])), t.comm)
	t.exit()
	if err := e.finish(ctx, &pin, r, "open: MPI_Iallgather"); err != nil {
		t.interruptedOpen(ctx, err)
		return nil, err
	}
	for q := range t.size {
		if all[2*q] != job.SegmentBytes || all[2*q+1] != int64(job.Ranks) {
			return nil, fmt.Errorf("mpi: rank %d opened a job of %d ranks with %d-byte segments, rank %d one of %d ranks with %d-byte segments",
				t.rank, job.Ranks, job.SegmentBytes, q, all[2*q+1], all[2*q])
		}
	}
	t.enter()
	w := C.pg_win_allocate(t.comm, C.MPI_Aint(job.SegmentBytes))
	t.exit()
	if w.rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("mpi: MPI_Win_allocate of %d bytes: %s", job.SegmentBytes, errorString(w.rc))
	}
	e.win = w.win
	if job.SegmentBytes > 0 {
		e.seg = unsafe.Slice((*byte)(w.base), job.SegmentBytes)
		clear(e.seg)
	} else {
		e.seg = []byte{}
	}
	// Nobody writes to a segment before its owner has zeroed it.
	if err := e.Barrier(ctx); err != nil {
		t.interruptedOpen(ctx, err)
		return nil, fmt.Errorf("mpi: open: %w", err)
	}
	e.phase, e.notified = 0, false
	go e.watch(ctx)
	t.open.ep = e
	if t.opts.NoNative {
		return []transport.Endpoint{e}, nil
	}
	return []transport.Endpoint{nativeEndpoint{e}}, nil
}

// endpoint is one rank's view of a job.
type endpoint struct {
	t          *Transport
	ctx        context.Context // the job's, as Open got it: its cause says whether a signal ended it
	job        transport.Job
	rank, size int
	win        C.MPI_Win
	seg        []byte
	chunk      int64
	closed     atomic.Bool
	stop       chan struct{}

	phase    uint64
	notified bool
	bar      C.MPI_Request // the barrier of the current phase, between Notify and Wait

	// The blocking native collective in progress, if any, for the
	// watchdog: seq is odd while one runs, and grows by 2 per call.
	inColl struct {
		name atomic.Pointer[string]
		seq  atomic.Uint64
	}
	cints []C.int // scratch for counts and displacements
}

var nameBcast, nameAllgatherv, nameAlltoallv = "MPI_Bcast", "MPI_Allgatherv", "MPI_Alltoallv"

// blocking records that a blocking collective called name starts, or,
// with nil, that it ended.
func (e *endpoint) blocking(name *string) {
	if name != nil {
		e.inColl.name.Store(name)
	}
	e.inColl.seq.Add(1)
}

// cInts converts up to 4 int slices to C ints in the endpoint's scratch
// space, valid until the next call.
func (e *endpoint) cInts(vs ...[]int) (out [4][]C.int) {
	n := 0
	for _, v := range vs {
		n += len(v)
	}
	if cap(e.cints) < n {
		e.cints = make([]C.int, n)
	}
	buf := e.cints[:n]
	for i, v := range vs {
		out[i] = buf[:len(v):len(v)]
		for j, x := range v {
			out[i][j] = C.int(x)
		}
		buf = buf[len(v):]
	}
	return out
}

// watch fails the job when its context ends, and when a blocking
// collective has waited longer than Job.SyncTimeout, until Close.
func (e *endpoint) watch(ctx context.Context) {
	var tick <-chan time.Time
	var seen uint64
	var since time.Time
	if d := e.job.SyncTimeout; d > 0 {
		t := time.NewTicker(min(d/4, 100*time.Millisecond))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			if !e.closed.Load() {
				e.Fail(transport.WithCause(ctx, ctx.Err()))
			}
			return
		case <-e.stop:
			return
		case now := <-tick:
			// A collective that is still the one seen at an earlier tick
			// has waited at least since then.
			seq := e.inColl.seq.Load()
			if seq%2 == 0 || seq != seen {
				seen, since = seq, now
				continue
			}
			if waited := now.Sub(since); waited > e.job.SyncTimeout {
				e.Fail(fmt.Errorf("mpi rank %d: %s: waited %v for other ranks: %w", e.rank, *e.inColl.name.Load(), waited.Round(time.Millisecond), transport.ErrTimeout))
			}
		}
	}
}

var _ transport.Extended = (*endpoint)(nil)

// Collectives returns nil: this endpoint's transport was opened with
// Options.NoNative. (nativeEndpoint returns itself.)
func (e *endpoint) Collectives() transport.Collectives { return nil }

// Failed returns nil: a failing MPI rank aborts the whole job
// (MPI_Abort), so there is no failure to learn of between calls.
func (e *endpoint) Failed() <-chan struct{} { return nil }

// MemoryMapped is false: one-sided operations are MPI RMA calls.
func (e *endpoint) MemoryMapped() bool { return false }

// Depart does nothing: MPI has no way to tell the other ranks.
func (e *endpoint) Depart() {}

// Mapped is nil: segments are reached through MPI windows.
func (e *endpoint) Mapped(int) []byte { return nil }

func (e *endpoint) Rank() int       { return e.rank }
func (e *endpoint) Size() int       { return e.size }
func (e *endpoint) Segment() []byte { return e.seg }
func (e *endpoint) String() string  { return fmt.Sprintf("mpi rank %d/%d", e.rank, e.size) }

// pre is the check every operation makes first.
func (e *endpoint) pre(ctx context.Context) error {
	if e.closed.Load() {
		return fmt.Errorf("mpi rank %d: %w", e.rank, transport.ErrClosed)
	}
	return ctx.Err()
}

func (e *endpoint) mpiErr(rc C.int, format string, args ...any) error {
	return fmt.Errorf("mpi rank %d: %s: %s", e.rank, fmt.Sprintf(format, args...), errorString(rc))
}

// Put is MPI_Put (in chunks of at most Options.ChunkBytes) followed by
// MPI_Win_flush_local: it returns when src may be reused; the data is at
// the target after the next Fence, Notify or Barrier.
func (e *endpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	// pgas has checked the range; an MPI call goes to C, where nothing
	// would stop a bad offset from writing past the window, so it is
	// checked again (a few compares against a call of microseconds).
	if err := transport.CheckRange(e.size, e.job.SegmentBytes, rank, off, int64(len(src))); err != nil {
		return fmt.Errorf("mpi: put: %w", err)
	}
	if len(src) == 0 {
		return nil
	}
	e.t.enter()
	rc := C.pg_put(e.win, C.int(rank), C.MPI_Aint(off), bufAddr(src), C.int64_t(len(src)), C.int64_t(e.chunk))
	e.t.exit()
	runtime.KeepAlive(src)
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "put %d bytes to rank %d at %d", len(src), rank, off)
	}
	return nil
}

// Get is MPI_Get (in chunks) followed by MPI_Win_flush.
func (e *endpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if err := transport.CheckRange(e.size, e.job.SegmentBytes, rank, off, int64(len(dst))); err != nil {
		return fmt.Errorf("mpi: get: %w", err)
	}
	if len(dst) == 0 {
		return nil
	}
	e.t.enter()
	rc := C.pg_get(e.win, C.int(rank), C.MPI_Aint(off), bufAddr(dst), C.int64_t(len(dst)), C.int64_t(e.chunk))
	e.t.exit()
	runtime.KeepAlive(dst)
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "get %d bytes from rank %d at %d", len(dst), rank, off)
	}
	return nil
}

// GetStrided is one MPI_Get whose target side is a derived datatype
// describing st (nested MPI_Type_create_hvector), then MPI_Win_flush;
// transfers larger than a chunk (or than an int counts) go one run at a
// time.
func (e *endpoint) GetStrided(ctx context.Context, rank int, st transport.Strided, dst []byte) error {
	return e.strided(ctx, rank, st, dst, false)
}

// PutStrided is GetStrided's MPI_Put, then MPI_Win_flush_local.
func (e *endpoint) PutStrided(ctx context.Context, rank int, st transport.Strided, src []byte) error {
	return e.strided(ctx, rank, st, src, true)
}

func (e *endpoint) strided(ctx context.Context, rank int, st transport.Strided, buf []byte, put bool) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	op := map[bool]string{false: "get", true: "put"}[put]
	if err := st.Check(e.job.SegmentBytes); err != nil {
		return fmt.Errorf("mpi: strided %s: %w", op, err)
	}
	if err := transport.CheckRange(e.size, e.job.SegmentBytes, rank, st.Off, 0); err != nil {
		return fmt.Errorf("mpi: strided %s: %w", op, err)
	}
	n := st.Bytes()
	if int64(len(buf)) != n {
		return fmt.Errorf("mpi: strided %s of %d bytes with a buffer of %d", op, n, len(buf))
	}
	if n == 0 {
		return nil
	}
	if n > e.chunk || n > math.MaxInt32 || st.Elem > math.MaxInt32 || slices.ContainsFunc(st.Shape, func(x int64) bool { return x > math.MaxInt32 }) {
		if put {
			return transport.PutStridedRuns(ctx, e, rank, st, buf)
		}
		return transport.GetStridedRuns(ctx, e, rank, st, buf)
	}
	shape, strides := make([]C.int64_t, len(st.Shape)), make([]C.int64_t, len(st.Shape))
	for k := range st.Shape {
		shape[k], strides[k] = C.int64_t(st.Shape[k]), C.int64_t(st.Strides[k])
	}
	var put32 C.int
	if put {
		put32 = 1
	}
	e.t.enter()
	rc := C.pg_strided(e.win, C.int(rank), C.MPI_Aint(st.Off), bufAddr(buf), C.int64_t(n), C.int(len(shape)),
		unsafe.SliceData(shape), unsafe.SliceData(strides), C.int64_t(st.Elem), put32)
	e.t.exit()
	runtime.KeepAlive(buf)
	runtime.KeepAlive(shape)
	runtime.KeepAlive(strides)
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "strided %s of %d bytes of rank %d at %d", op, n, rank, st.Off)
	}
	return nil
}

// PutAsync completes the put before it returns: MPI request-based RMA
// would keep a Go buffer across calls.
func (e *endpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	return transport.DoneWith(e.Put(ctx, rank, off, src))
}

// GetAsync completes the get before it returns.
func (e *endpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	return transport.DoneWith(e.Get(ctx, rank, off, dst))
}

// Fence is MPI_Win_flush_all and MPI_Win_sync.
func (e *endpoint) Fence(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	e.t.enter()
	rc := C.pg_flush_all(e.win)
	e.t.exit()
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "fence")
	}
	return nil
}

func (e *endpoint) atomicPre(ctx context.Context, rank int, off int64) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if err := transport.CheckAtomic(e.size, e.job.SegmentBytes, rank, off); err != nil {
		return fmt.Errorf("mpi: atomic: %w", err)
	}
	return nil
}

// FetchAdd is MPI_Fetch_and_op(MPI_SUM) on MPI_INT64_T and MPI_Win_flush.
func (e *endpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	if err := e.atomicPre(ctx, rank, off); err != nil {
		return 0, err
	}
	e.t.enter()
	r := C.pg_fetch_add(e.win, C.int(rank), C.MPI_Aint(off), C.int64_t(delta))
	e.t.exit()
	if r.rc != C.MPI_SUCCESS {
		return 0, e.mpiErr(r.rc, "fetch-add at rank %d offset %d", rank, off)
	}
	return int64(r.v), nil
}

// CompareAndSwap is MPI_Compare_and_swap on MPI_INT64_T and MPI_Win_flush.
func (e *endpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	if err := e.atomicPre(ctx, rank, off); err != nil {
		return 0, err
	}
	e.t.enter()
	r := C.pg_cas(e.win, C.int(rank), C.MPI_Aint(off), C.int64_t(old), C.int64_t(new))
	e.t.exit()
	if r.rc != C.MPI_SUCCESS {
		return 0, e.mpiErr(r.rc, "compare-and-swap at rank %d offset %d", rank, off)
	}
	return int64(r.v), nil
}

// Load is MPI_Fetch_and_op(MPI_NO_OP) and MPI_Win_flush.
func (e *endpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	if err := e.atomicPre(ctx, rank, off); err != nil {
		return 0, err
	}
	e.t.enter()
	r := C.pg_load(e.win, C.int(rank), C.MPI_Aint(off))
	e.t.exit()
	if r.rc != C.MPI_SUCCESS {
		return 0, e.mpiErr(r.rc, "atomic load at rank %d offset %d", rank, off)
	}
	return int64(r.v), nil
}

// Notify flushes this rank's puts (MPI_Win_flush_all, MPI_Win_sync) and
// starts the phase's MPI_Ibarrier.
func (e *endpoint) Notify(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if e.notified {
		return fmt.Errorf("mpi rank %d: notify of phase %d called twice without wait", e.rank, e.phase)
	}
	e.t.enter()
	rc := C.pg_flush_all(e.win)
	var r C.pg_req
	if rc == C.MPI_SUCCESS {
		r = C.pg_ibarrier(e.t.comm)
		rc = r.rc
	}
	e.t.exit()
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "notify of phase %d", e.phase)
	}
	e.bar, e.notified = r.req, true
	return nil
}

// Wait tests the phase's barrier until every rank has notified, the
// context ends or Job.SyncTimeout passes.
func (e *endpoint) Wait(ctx context.Context) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if !e.notified {
		return fmt.Errorf("mpi rank %d: wait of phase %d without notify", e.rank, e.phase)
	}
	if err := e.wait(ctx, e.bar, fmt.Sprintf("barrier phase %d", e.phase)); err != nil {
		return err
	}
	e.t.enter()
	rc := C.pg_win_sync(e.win)
	e.t.exit()
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "barrier phase %d: MPI_Win_sync", e.phase)
	}
	e.phase++
	e.notified = false
	return nil
}

// Barrier is Notify followed by Wait.
func (e *endpoint) Barrier(ctx context.Context) error {
	if err := e.Notify(ctx); err != nil {
		return err
	}
	return e.Wait(ctx)
}

// wait tests req until it completes. It returns ctx's error if ctx ends
// and an error wrapping ErrTimeout after Job.SyncTimeout; the request is
// then abandoned (the job is failing, and MPI_Abort will end it).
func (e *endpoint) wait(ctx context.Context, req C.MPI_Request, what string) error {
	start := time.Now()
	sleep := sleepMin
	for i := 0; ; i++ {
		e.t.enter()
		r := C.pg_test(req, boolInt(i >= spinTests))
		e.t.exit()
		if r.rc != C.MPI_SUCCESS {
			return e.mpiErr(r.rc, "%s", what)
		}
		if r.flag != 0 {
			return nil
		}
		req = r.req
		if i%checkEvery != checkEvery-1 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		waited := time.Since(start)
		if d := e.job.SyncTimeout; d > 0 && waited > d {
			return fmt.Errorf("mpi rank %d: %s: waited %v for other ranks: %w", e.rank, what, d, transport.ErrTimeout)
		}
		if waited > spinFor {
			time.Sleep(sleep)
			sleep = min(2*sleep, sleepMax)
		}
	}
}

// finish waits for a started non-blocking operation whose buffers p pins,
// and unpins them once MPI is done with them.
func (e *endpoint) finish(ctx context.Context, p *runtime.Pinner, r C.pg_req, what string) error {
	if r.rc != C.MPI_SUCCESS {
		p.Unpin()
		return e.mpiErr(r.rc, "%s", what)
	}
	if err := e.wait(ctx, r.req, what); err != nil {
		leak(p)
		return err
	}
	p.Unpin()
	return nil
}

// leaked keeps the pinners of abandoned requests: MPI may still write to
// their buffers until the job is aborted.
var leaked struct {
	sync.Mutex
	p []*runtime.Pinner
}

func leak(p *runtime.Pinner) {
	leaked.Lock()
	leaked.p = append(leaked.p, p)
	leaked.Unlock()
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// abortGrace is how long Fail waits between reporting its error and
// aborting the job under MPICH.
const abortGrace = 100 * time.Millisecond

// Fail reports err on standard error and aborts the MPI job
// (MPI_Abort(MPI_COMM_WORLD, 1)): the launcher ends every rank, which is
// how the other ranks learn of the failure. Fail does not return then.
//
// A job interrupted by a signal is not aborted: when err, or the cause of
// the job's context that err says was cancelled, has a method
// Signal() os.Signal (mrrun's cause for a signal has one), Fail records
// the interruption, prints nothing and returns; so does every later Fail
// of the process. The launcher has signalled every rank (OpenMPI's mpirun
// passes a SIGINT or SIGTERM on to the ranks as SIGTERM, MPICH's mpiexec
// passes it on as it is), or ends the others when this one exits: the
// program exits on its own, with its own status and its own line, without
// an MPI_Abort line from every rank. Close and Finalize then skip their
// collective calls.
func (e *endpoint) Fail(err error) {
	t := e.t
	t.fail.Lock()
	switch {
	case t.fail.aborting:
		t.fail.Unlock()
		select {} // another goroutine is aborting the job
	case t.fail.interrupted != nil:
		t.fail.Unlock()
		return // what fails now echoes the interruption
	}
	if cause := e.interruption(err); cause != nil {
		t.fail.interrupted = cause
		t.fail.Unlock()
		return
	}
	t.fail.aborting = true
	t.fail.Unlock()
	fmt.Fprintf(os.Stderr, "pgasmr: mpi rank %d of %d failed: %v (calling MPI_Abort)\n", e.rank, e.size, err)
	if flavour == "MPICH" {
		// Hydra forwards a rank's output through its proxy, which
		// MPI_Abort can kill before the line above is forwarded (1
		// run in 10 lost it): let it through first.
		time.Sleep(abortGrace)
	}
	t.Abort(1)
	select {} // not reached
}

// signaller is an error that says which signal stopped the program, as
// the cause of a cancelled context (mrrun's has this method).
type signaller interface {
	error
	Signal() os.Signal
}

// interruption returns the error that says which signal ended the job, if
// err holds one or is the cancellation of the job's context by one; nil
// if err is a failure.
func (e *endpoint) interruption(err error) error { return interruption(e.ctx, err) }

// interruption returns the error that says which signal ended the job of
// context ctx, if err holds one or is the cancellation of ctx by one; nil
// if err is a failure.
func interruption(ctx context.Context, err error) error {
	var s signaller
	if errors.As(err, &s) {
		return s
	}
	if errors.Is(err, context.Canceled) && ctx != nil && errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}

// interruptedOpen records that a signal interrupted Open, if one did (err
// is Open's error): the window or the handshake it leaves pending are not
// for MPI_Finalize, which OpenMPI and MPICH (UCX asserts) fail on.
func (t *Transport) interruptedOpen(ctx context.Context, err error) {
	if cause := interruption(ctx, err); cause != nil {
		t.fail.Lock()
		if !t.fail.aborting && t.fail.interrupted == nil {
			t.fail.interrupted = cause
		}
		t.fail.Unlock()
	}
}

// interrupted returns the interruption Fail recorded, or nil.
func (t *Transport) interrupted() error {
	t.fail.Lock()
	defer t.fail.Unlock()
	return t.fail.interrupted
}

// Close unlocks and frees the job's window (collective, like
// MPI_Win_free). Calls after Close return ErrClosed.
func (e *endpoint) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	close(e.stop)
	if e.t.interrupted() != nil {
		// MPI_Win_free waits for the other ranks, which are ending: the
		// window goes with the process.
		e.seg = nil
		e.t.open.Lock()
		e.t.open.ep = nil
		e.t.open.Unlock()
		return nil
	}
	e.t.enter()
	rc := C.pg_win_free(e.win)
	e.t.exit()
	e.seg = nil
	e.t.open.Lock()
	e.t.open.ep = nil
	e.t.open.Unlock()
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "close: MPI_Win_free")
	}
	return nil
}

// nativeEndpoint is an endpoint that offers MPI's collectives.
type nativeEndpoint struct{ *endpoint }

var (
	_ transport.Collectives = nativeEndpoint{}
	_ transport.Extended    = nativeEndpoint{}
)

// Collectives returns e: MPI's collectives.
func (e nativeEndpoint) Collectives() transport.Collectives { return e }

func fitsInt(v int, chunk int64) bool { return v >= 0 && int64(v) <= chunk && v <= math.MaxInt32 }

func cInts(v []int) []C.int {
	out := make([]C.int, len(v))
	for i, x := range v {
		out[i] = C.int(x)
	}
	return out
}

// bufAddr is the address of b's memory for a blocking MPI call, passed as
// an integer so that cgo does not check the buffer for Go pointers on
// every call (it holds bytes; the check costs as much as an 8-byte put).
// The caller keeps b alive across the call (runtime.KeepAlive); Go does
// not move heap objects, nor the stack of a goroutine while it is in a
// cgo call.
func bufAddr(b []byte) C.uintptr_t {
	return C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

func pinBytes(p *runtime.Pinner, bs ...[]byte) {
	for _, b := range bs {
		if len(b) > 0 {
			p.Pin(unsafe.SliceData(b))
		}
	}
}

// overlap reports whether a and b share memory.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

func (e nativeEndpoint) checkBlocks(what string, buf []byte, counts, displs []int) error {
	if len(counts) != e.size || len(displs) != e.size {
		return fmt.Errorf("mpi rank %d: %s: %d counts and %d displacements for %d ranks", e.rank, what, len(counts), len(displs), e.size)
	}
	for q := range counts {
		if counts[q] < 0 || displs[q] < 0 || displs[q]+counts[q] > len(buf) {
			return fmt.Errorf("mpi rank %d: %s: block of rank %d [%d,%d) outside a buffer of %d bytes: %w",
				e.rank, what, q, displs[q], displs[q]+counts[q], len(buf), transport.ErrOutOfRange)
		}
	}
	return nil
}

// Broadcast is MPI_Bcast (in chunks of at most Options.ChunkBytes).
func (e nativeEndpoint) Broadcast(ctx context.Context, root int, buf []byte) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if root < 0 || root >= e.size {
		return fmt.Errorf("mpi rank %d: broadcast: root %d not in [0,%d): %w", e.rank, root, e.size, transport.ErrOutOfRange)
	}
	e.t.nativeCalls.Add(1)
	e.blocking(&nameBcast)
	defer e.blocking(nil)
	for b := buf; len(b) > 0; {
		n := min(int64(len(b)), e.chunk)
		e.t.enter()
		rc := C.pg_bcast(bufAddr(b), C.int(n), C.int(root), e.t.comm)
		e.t.exit()
		if rc != C.MPI_SUCCESS {
			return e.mpiErr(rc, "MPI_Bcast of %d bytes from rank %d", n, root)
		}
		b = b[n:]
	}
	runtime.KeepAlive(buf)
	return nil
}

// Allgatherv is MPI_Allgatherv, or point-to-point transfers in chunks
// when a count or displacement does not fit in one MPI call.
func (e nativeEndpoint) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if err := e.checkBlocks("allgatherv", recv, counts, displs); err != nil {
		return err
	}
	if counts[e.rank] != len(send) {
		return fmt.Errorf("mpi rank %d: allgatherv: sends %d bytes, counts say %d", e.rank, len(send), counts[e.rank])
	}
	e.t.nativeCalls.Add(1)
	if overlap(send, recv) {
		send = append([]byte(nil), send...)
	}
	fits := true
	for q := range counts {
		fits = fits && fitsInt(counts[q], e.chunk) && fitsInt(displs[q]+counts[q], math.MaxInt32)
	}
	if !fits {
		var x exchange
		for q := range e.size {
			if q != e.rank {
				x.send(q, send)
				x.recv(q, recv[displs[q]:displs[q]+counts[q]])
			}
		}
		copy(recv[displs[e.rank]:], send)
		return e.exchange(ctx, &x, "allgatherv")
	}
	ci := e.cInts(counts, displs)
	cc, cd := ci[0], ci[1]
	e.blocking(&nameAllgatherv)
	e.t.enter()
	rc := C.pg_allgatherv(bufAddr(send), C.int(len(send)), bufAddr(recv), &cc[0], &cd[0], e.t.comm)
	e.t.exit()
	e.blocking(nil)
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "MPI_Allgatherv")
	}
	return nil
}

// Alltoallv is MPI_Alltoallv, or point-to-point transfers in chunks when
// a count or displacement does not fit in one MPI call.
func (e nativeEndpoint) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	if err := e.pre(ctx); err != nil {
		return err
	}
	if err := e.checkBlocks("alltoallv send", send, scounts, sdispls); err != nil {
		return err
	}
	if err := e.checkBlocks("alltoallv receive", recv, rcounts, rdispls); err != nil {
		return err
	}
	e.t.nativeCalls.Add(1)
	if overlap(send, recv) {
		send = append([]byte(nil), send...)
	}
	fits := true
	for q := range scounts {
		fits = fits && fitsInt(scounts[q], e.chunk) && fitsInt(sdispls[q]+scounts[q], math.MaxInt32) &&
			fitsInt(rcounts[q], e.chunk) && fitsInt(rdispls[q]+rcounts[q], math.MaxInt32)
	}
	// Every rank must take the same path, and a rank's counts say nothing
	// of the others' (a rank with nothing to move in a tree's round would
	// enter MPI_Alltoallv while the others exchange point to point, and
	// both wait forever): the ranks agree on it first.
	all := C.int(boolInt(fits))
	e.blocking(&nameAlltoallv)
	e.t.enter()
	res := C.pg_all_true(&all, e.t.comm)
	e.t.exit()
	e.blocking(nil)
	if res != C.MPI_SUCCESS {
		return e.mpiErr(res, "alltoallv: MPI_Allreduce")
	}
	if fits = all != 0; !fits {
		me := e.rank
		if scounts[me] != rcounts[me] {
			return fmt.Errorf("mpi rank %d: alltoallv: sends itself %d bytes but expects %d", me, scounts[me], rcounts[me])
		}
		var x exchange
		for q := range e.size {
			if q != me {
				x.send(q, send[sdispls[q]:sdispls[q]+scounts[q]])
				x.recv(q, recv[rdispls[q]:rdispls[q]+rcounts[q]])
			}
		}
		copy(recv[rdispls[me]:rdispls[me]+rcounts[me]], send[sdispls[me]:])
		return e.exchange(ctx, &x, "alltoallv")
	}
	ci := e.cInts(scounts, sdispls, rcounts, rdispls)
	sc, sd, rc, rd := ci[0], ci[1], ci[2], ci[3]
	e.blocking(&nameAlltoallv)
	e.t.enter()
	res = C.pg_alltoallv(bufAddr(send), &sc[0], &sd[0], bufAddr(recv), &rc[0], &rd[0], e.t.comm)
	e.t.exit()
	e.blocking(nil)
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	if res != C.MPI_SUCCESS {
		return e.mpiErr(res, "MPI_Alltoallv")
	}
	return nil
}

// exchange is a set of point-to-point transfers, one buffer per peer and
// direction.
type exchange struct {
	sends, recvs []xfer
}

type xfer struct {
	peer int
	buf  []byte
}

func (x *exchange) send(peer int, b []byte) { x.sends = append(x.sends, xfer{peer, b}) }
func (x *exchange) recv(peer int, b []byte) { x.recvs = append(x.recvs, xfer{peer, b}) }

// exchange carries x with MPI_Isend and MPI_Irecv in chunks of at most
// Options.ChunkBytes (sender and receiver cut a buffer alike, and MPI
// keeps messages between two ranks in order) and waits for all of them.
func (e nativeEndpoint) exchange(ctx context.Context, x *exchange, what string) error {
	chunks := func(n int) int { return int((int64(n) + e.chunk - 1) / e.chunk) }
	total := 0
	for _, l := range [][]xfer{x.recvs, x.sends} {
		for _, t := range l {
			total += chunks(len(t.buf))
		}
	}
	e.t.largeCalls.Add(1)
	if total == 0 {
		return nil
	}
	var p runtime.Pinner
	for _, l := range [][]xfer{x.recvs, x.sends} {
		for _, t := range l {
			pinBytes(&p, t.buf)
		}
	}
	reqs := C.pg_reqs(C.int(total))
	i := 0
	e.t.enter()
	var rc C.int = C.MPI_SUCCESS
	for k, l := range [][]xfer{x.recvs, x.sends} {
		for _, t := range l {
			for b := t.buf; len(b) > 0 && rc == C.MPI_SUCCESS; i++ {
				n := min(int64(len(b)), e.chunk)
				if k == 0 {
					rc = C.pg_irecv(reqs, C.int(i), ptr(b[:n]), C.int(n), C.int(t.peer), p2pTag, e.t.comm)
				} else {
					rc = C.pg_isend(reqs, C.int(i), ptr(b[:n]), C.int(n), C.int(t.peer), p2pTag, e.t.comm)
				}
				b = b[n:]
			}
		}
	}
	e.t.exit()
	if rc != C.MPI_SUCCESS {
		leak(&p)
		return e.mpiErr(rc, "%s: posting transfers", what)
	}
	start := time.Now()
	sleep := sleepMin
	for it := 0; ; it++ {
		e.t.enter()
		r := C.pg_testall(reqs, C.int(total), boolInt(it >= spinTests))
		e.t.exit()
		if r.rc != C.MPI_SUCCESS {
			leak(&p)
			return e.mpiErr(r.rc, "%s", what)
		}
		if r.flag != 0 {
			break
		}
		if it%checkEvery != checkEvery-1 {
			continue
		}
		if err := ctx.Err(); err != nil {
			leak(&p)
			return err
		}
		waited := time.Since(start)
		if d := e.job.SyncTimeout; d > 0 && waited > d {
			leak(&p)
			return fmt.Errorf("mpi rank %d: %s: waited %v for other ranks: %w", e.rank, what, d, transport.ErrTimeout)
		}
		if waited > spinFor {
			time.Sleep(sleep)
			sleep = min(2*sleep, sleepMax)
		}
	}
	C.free(unsafe.Pointer(reqs))
	p.Unpin()
	return nil
}
