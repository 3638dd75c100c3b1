//go:build mpi && mrmpi && !mpich

package mrmpi

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/cgo"
	"time"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas/mpi"
)

// Built reports whether this binary was compiled with MR-MPI (the mpi and
// mrmpi build tags).
const Built = true

// batchPairs is how many pairs a map task buffers before handing them to
// MR-MPI in one KeyValue::add call.
const batchPairs = 4096

// engine is the state of one Run on one rank; the callbacks find it
// through the cgo.Handle MR-MPI passes back.
type engine struct {
	ctx  context.Context
	j    job
	mr   unsafe.Pointer
	err  error // the first map or reduce error of this rank
	acc  []byte
	keys []byte
	vals []byte
	kb   []C.int
	vb   []C.int
}

// Run runs app (one of Apps) over inputs with MR-MPI on every rank of
// MPI_COMM_WORLD and returns its Result on rank 0 (nil elsewhere). It is
// collective: every rank calls it with the same arguments. MPI is
// initialised through pgas/mpi.Init if it is not yet; it stays
// initialised (see Finalize).
func Run(ctx context.Context, app string, inputs []string, o Options) (Result, error) {
	if err := o.Validate(app); err != nil {
		return nil, err
	}
	tr, err := mpi.Init(mpi.Options{Progress: -1})
	if err != nil {
		return nil, fmt.Errorf("mrmpi: %w", err)
	}
	if tr.Serialized() && tr.Options().Progress > 0 {
		return nil, fmt.Errorf("mrmpi: the MPI library provides %s and the MPI transport's progress goroutine runs: MR-MPI cannot call MPI beside it", tr.ThreadLevel())
	}
	// MR-MPI's calls and callbacks stay on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var rank, size C.int
	C.pgm_world(&rank, &size)

	ph := phases{w: o.Phases, rank: int(rank), t: time.Now()}
	j, err := newJob(app, inputs, o)
	if err == nil {
		err = j.prepare(ctx)
		defer j.close()
	}
	if err := agree(err, "preparing the input"); err != nil {
		return nil, err
	}
	ph.done("prepare")
	e := &engine{ctx: ctx, j: j, acc: make([]byte, j.valueBytes())}
	h := cgo.NewHandle(e)
	defer h.Delete()
	ch := C.uintptr_t(h)

	fpath := o.Fpath
	if fpath == "" {
		fpath = os.TempDir()
	}
	cpath := C.CString(fpath)
	defer C.free(unsafe.Pointer(cpath))
	e.mr = C.pgm_create(C.int(o.MemsizeMB), cpath)
	defer C.pgm_destroy(e.mr)

	ph.t = time.Now()
	pairs := C.pgm_map(e.mr, C.int(j.tasks()), ch)
	if err := agree(e.err, "map"); err != nil {
		return nil, err
	}
	ph.done(fmt.Sprintf("map (%d pairs)", uint64(pairs)))
	if o.Compress {
		pairs = C.pgm_compress(e.mr, ch)
		ph.done(fmt.Sprintf("compress (%d pairs)", uint64(pairs)))
	}
	keys := C.pgm_collate(e.mr)
	ph.done(fmt.Sprintf("collate (%d keys)", uint64(keys)))
	C.pgm_reduce(e.mr, ch)
	if err := agree(e.err, "reduce"); err != nil {
		return nil, err
	}
	ph.done("reduce")
	C.pgm_gather(e.mr, 1)
	C.pgm_scan_kv(e.mr, ch) // collective; the pairs are on rank 0
	if rank != 0 {
		return nil, nil
	}
	res, err := j.result()
	ph.done("gather and result")
	return res, err
}

// phases reports phase times on rank 0 (Options.Phases).
type phases struct {
	w    io.Writer
	rank int
	t    time.Time
}

func (p *phases) done(name string) {
	now := time.Now()
	if p.w != nil && p.rank == 0 {
		fmt.Fprintf(p.w, "mrmpi: %-28s %8.3f s\n", name, now.Sub(p.t).Seconds())
	}
	p.t = now
}

// Finalize finalises MPI if Run initialised it (through pgas/mpi's
// transport). It is collective; call it once, after the last Run.
func Finalize() error {
	tr, err := mpi.Init(mpi.Options{Progress: -1})
	if err != nil {
		return fmt.Errorf("mrmpi: %w", err)
	}
	return tr.Finalize()
}

// agree is collective: it tells every rank whether any rank has an error.
// A rank with an error returns it; the others return an error naming the
// highest failed rank.
func agree(err error, phase string) error {
	var rank, size C.int
	C.pgm_world(&rank, &size)
	mine := C.int(0)
	if err != nil {
		mine = rank + 1
	}
	failed := int(C.pgm_failed(mine))
	switch {
	case err != nil:
		return err
	case failed > 0:
		return fmt.Errorf("mrmpi: %s: rank %d failed", phase, failed-1)
	}
	return nil
}

// emit buffers one pair of a map task.
func (e *engine) emit(key, value []byte) {
	e.keys = append(e.keys, key...)
	e.kb = append(e.kb, C.int(len(key)))
	e.vals = append(e.vals, value...)
	e.vb = append(e.vb, C.int(len(value)))
}

// flush adds the buffered pairs to kv.
func (e *engine) flush(kv unsafe.Pointer) {
	if len(e.kb) == 0 {
		return
	}
	C.pgm_kv_add_multi(kv, C.int(len(e.kb)),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(e.keys))), (*C.int)(unsafe.SliceData(e.kb)),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(e.vals))), (*C.int)(unsafe.SliceData(e.vb)))
	e.keys, e.kb, e.vals, e.vb = e.keys[:0], e.kb[:0], e.vals[:0], e.vb[:0]
}

//export pgmMap
func pgmMap(itask C.int, kv unsafe.Pointer, h C.uintptr_t) {
	e := cgo.Handle(h).Value().(*engine)
	if e.err != nil {
		return // a task failed: the rest are skipped
	}
	err := e.j.mapTask(e.ctx, int(itask), func(key, value []byte) {
		e.emit(key, value)
		if len(e.kb) >= batchPairs {
			e.flush(kv)
		}
	})
	e.flush(kv)
	if err != nil {
		e.err = err
	}
}

// pgmReduce is the callback of MR_compress and MR_reduce: it adds the
// values of one key and adds the key with the sum to kv. A multivalue too
// large for a page comes in blocks (MR_multivalue_blocks).
//
//export pgmReduce
func pgmReduce(key *C.char, keybytes C.int, mv *C.char, nvalues C.int, valuebytes *C.int, kv unsafe.Pointer, h C.uintptr_t) {
	e := cgo.Handle(h).Value().(*engine)
	if e.err != nil {
		return
	}
	var err error
	if mv == nil && nvalues == 0 {
		nblocks := int(C.pgm_multivalue_blocks(e.mr))
		for b := range nblocks {
			var bmv *C.char
			var bvb *C.int
			n := C.pgm_multivalue_block(e.mr, C.int(b), &bmv, &bvb)
			if err = e.reduceBlock(bmv, n, bvb, b == 0); err != nil {
				break
			}
		}
	} else {
		err = e.reduceBlock(mv, nvalues, valuebytes, true)
	}
	if err != nil {
		e.err = err
		return
	}
	C.pgm_kv_add(kv, key, keybytes, (*C.char)(unsafe.Pointer(unsafe.SliceData(e.acc))), C.int(len(e.acc)))
}

func (e *engine) reduceBlock(mv *C.char, n C.int, vb *C.int, first bool) error {
	sizes := unsafe.Slice((*int32)(unsafe.Pointer(vb)), int(n))
	var total int
	for _, s := range sizes {
		total += int(s)
	}
	return reduceValues(e.j, e.acc, unsafe.Slice((*byte)(unsafe.Pointer(mv)), total), sizes, first)
}

//export pgmScan
func pgmScan(key *C.char, keybytes C.int, value *C.char, valuebytes C.int, h C.uintptr_t) {
	e := cgo.Handle(h).Value().(*engine)
	e.j.collect(unsafe.Slice((*byte)(unsafe.Pointer(key)), int(keybytes)), unsafe.Slice((*byte)(unsafe.Pointer(value)), int(valuebytes)))
}
