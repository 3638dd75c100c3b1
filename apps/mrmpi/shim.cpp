//go:build mpi && mrmpi && !mpich

// The bridge between Go and MR-MPI's C++ classes. Debian's
// libMapReduceMPI.so ships cmapreduce.h but not the C interface behind it
// (the MR_* symbols), so these few extern "C" functions call the classes
// of mapreduce.h and keyvalue.h directly. MR-MPI calls the static
// callbacks below, which call the Go functions exported in mrmpi.go with
// the run's cgo.Handle, passed through MR-MPI's void *ptr.

// Only MPI's C interface: OpenMPI's C++ bindings would need -lmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1

#include <stdint.h>
#include <mpi.h>
#include <mrmpi/mapreduce.h>
#include <mrmpi/keyvalue.h>
#include "_cgo_export.h"
#include "shim.h"

using MAPREDUCE_NS::KeyValue;
using MAPREDUCE_NS::MapReduce;

static void map_cb(int itask, KeyValue *kv, void *ptr) {
	pgmMap(itask, kv, (uintptr_t)ptr);
}

static void reduce_cb(char *key, int keybytes, char *mv, int nvalues, int *valuebytes, KeyValue *kv, void *ptr) {
	pgmReduce(key, keybytes, mv, nvalues, valuebytes, kv, (uintptr_t)ptr);
}

static void scan_cb(char *key, int keybytes, char *value, int valuebytes, void *ptr) {
	pgmScan(key, keybytes, value, valuebytes, (uintptr_t)ptr);
}

static MapReduce *M(void *mr) { return static_cast<MapReduce *>(mr); }

extern "C" {

void *pgm_create(int memsize, const char *fpath) {
	MapReduce *mr = new MapReduce(MPI_COMM_WORLD);
	mr->verbosity = 0;
	mr->timer = 0;
	if (memsize > 0) mr->memsize = memsize;
	mr->set_fpath(fpath);
	return mr;
}

void pgm_destroy(void *mr) { delete M(mr); }

uint64_t pgm_map(void *mr, int n, uintptr_t h) { return M(mr)->map(n, map_cb, (void *)h); }

uint64_t pgm_compress(void *mr, uintptr_t h) { return M(mr)->compress(reduce_cb, (void *)h); }

uint64_t pgm_collate(void *mr) { return M(mr)->collate(NULL); }

uint64_t pgm_reduce(void *mr, uintptr_t h) { return M(mr)->reduce(reduce_cb, (void *)h); }

uint64_t pgm_gather(void *mr, int procs) { return M(mr)->gather(procs); }

uint64_t pgm_scan_kv(void *mr, uintptr_t h) { return M(mr)->scan(scan_cb, (void *)h); }

int pgm_multivalue_blocks(void *mr) {
	int n = 0;
	M(mr)->multivalue_blocks(n);
	return n;
}

int pgm_multivalue_block(void *mr, int i, char **mv, int **valuebytes) {
	return M(mr)->multivalue_block(i, mv, valuebytes);
}

void pgm_kv_add(void *kv, char *key, int keybytes, char *value, int valuebytes) {
	static_cast<KeyValue *>(kv)->add(key, keybytes, value, valuebytes);
}

void pgm_kv_add_multi(void *kv, int n, char *keys, int *keybytes, char *values, int *valuebytes) {
	static_cast<KeyValue *>(kv)->add(n, keys, keybytes, values, valuebytes);
}

int pgm_world(int *rank, int *size) {
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}

int pgm_failed(int mine) {
	int any = 0;
	MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return any;
}

} // extern "C"
