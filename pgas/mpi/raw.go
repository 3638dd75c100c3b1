//go:build mpi || mpich

package mpi

/*
#include <mpi.h>
#include <stdint.h>

// Baselines for the benchmarks: the same operations as the transport's,
// called in a C loop with no Go in between.

static int pg_raw_put_loop(MPI_Win w, int rank, const void *src, int n, int64_t iters) {
	for (int64_t i = 0; i < iters; i++) {
		int rc = MPI_Put(src, n, MPI_BYTE, rank, 0, n, MPI_BYTE, w);
		if (rc != MPI_SUCCESS) return rc;
		rc = MPI_Win_flush_local(rank, w);
		if (rc != MPI_SUCCESS) return rc;
	}
	return MPI_Win_flush(rank, w);
}

static int pg_raw_get_loop(MPI_Win w, int rank, void *dst, int n, int64_t iters) {
	for (int64_t i = 0; i < iters; i++) {
		int rc = MPI_Get(dst, n, MPI_BYTE, rank, 0, n, MPI_BYTE, w);
		if (rc != MPI_SUCCESS) return rc;
		rc = MPI_Win_flush(rank, w);
		if (rc != MPI_SUCCESS) return rc;
	}
	return MPI_SUCCESS;
}

// For the test of a program that initialises MPI itself.
static int pg_raw_init(void) { int p; return MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &p); }
static int pg_raw_finalized(void) { int f = 0; MPI_Finalized(&f); return f; }
static int pg_raw_finalize(void) { return MPI_Finalize(); }

static int pg_raw_allgatherv_loop(MPI_Comm c, const void *send, int n, void *recv, const int *counts, const int *displs, int64_t iters) {
	for (int64_t i = 0; i < iters; i++) {
		int rc = MPI_Allgatherv(send, n, MPI_BYTE, recv, counts, displs, MPI_BYTE, c);
		if (rc != MPI_SUCCESS) return rc;
	}
	return MPI_SUCCESS;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

func rawEndpoint(ep transport.Endpoint) *endpoint {
	switch e := ep.(type) {
	case *endpoint:
		return e
	case nativeEndpoint:
		return e.endpoint
	}
	panic(fmt.Sprintf("mpi: %T is not an MPI endpoint", ep))
}

// rawPutLoop puts len(buf) bytes to offset 0 of rank's segment iters
// times with MPI_Put and MPI_Win_flush_local in a C loop.
func rawPutLoop(ep transport.Endpoint, rank int, buf []byte, iters int) error {
	e := rawEndpoint(ep)
	e.t.enter()
	rc := C.pg_raw_put_loop(e.win, C.int(rank), unsafe.Pointer(unsafe.SliceData(buf)), C.int(len(buf)), C.int64_t(iters))
	e.t.exit()
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "raw put loop")
	}
	return nil
}

// rawGetLoop is rawPutLoop for MPI_Get and MPI_Win_flush.
func rawGetLoop(ep transport.Endpoint, rank int, buf []byte, iters int) error {
	e := rawEndpoint(ep)
	e.t.enter()
	rc := C.pg_raw_get_loop(e.win, C.int(rank), unsafe.Pointer(unsafe.SliceData(buf)), C.int(len(buf)), C.int64_t(iters))
	e.t.exit()
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "raw get loop")
	}
	return nil
}

// rawAllgathervLoop calls the blocking MPI_Allgatherv iters times in a C
// loop.
func rawAllgathervLoop(ep transport.Endpoint, send, recv []byte, counts, displs []int, iters int) error {
	e := rawEndpoint(ep)
	cc, cd := cInts(counts), cInts(displs)
	e.t.enter()
	rc := C.pg_raw_allgatherv_loop(e.t.comm, unsafe.Pointer(unsafe.SliceData(send)), C.int(len(send)),
		unsafe.Pointer(unsafe.SliceData(recv)), &cc[0], &cd[0], C.int64_t(iters))
	e.t.exit()
	if rc != C.MPI_SUCCESS {
		return e.mpiErr(rc, "raw allgatherv loop")
	}
	return nil
}

// rawInit calls MPI_Init_thread, as a program that owns MPI would.
func rawInit() error {
	if rc := C.pg_raw_init(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("MPI_Init_thread: %s", errorString(rc))
	}
	return nil
}

// rawFinalized reports MPI_Finalized.
func rawFinalized() bool { return C.pg_raw_finalized() != 0 }

// rawFinalize calls MPI_Finalize.
func rawFinalize() error {
	if rc := C.pg_raw_finalize(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("MPI_Finalize: %s", errorString(rc))
	}
	return nil
}
