//go:build unix

package inproc

import (
	"fmt"
	"os"
	"syscall"
)

// Segments live outside the Go heap, in one anonymous private mapping per
// job: a 16 MiB segment the job never touches costs address space, not
// memory, and the garbage collector's goal follows the program's live
// data instead of rising by every segment (with 64 ranks, 1 GiB of
// segments in the heap let 1 GiB of garbage pile up before a collection).
// Each rank's segment starts on a page boundary. The mapping is removed
// when the job's last endpoint closes: segment memory must not be used
// after the job (pgas.Run returns only once every rank has).

// mapSegments maps ranks zeroed segments of n bytes each.
func mapSegments(ranks int, n int64) (segs [][]byte, unmap func() error, err error) {
	page := int64(os.Getpagesize())
	stride := (n + page - 1) / page * page
	total := stride * int64(ranks)
	segs = make([][]byte, ranks)
	if total == 0 {
		for r := range segs {
			segs[r] = []byte{}
		}
		return segs, func() error { return nil }, nil
	}
	if total/int64(ranks) != stride || total > 1<<47 {
		return nil, nil, fmt.Errorf("inproc: %d segments of %d bytes do not fit in the address space", ranks, n)
	}
	mem, err := syscall.Mmap(-1, 0, int(total), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, nil, fmt.Errorf("inproc: mapping %d segments of %d bytes: %w", ranks, n, err)
	}
	for r := range segs {
		off := int64(r) * stride
		segs[r] = mem[off : off+n : off+n]
	}
	return segs, func() error { return syscall.Munmap(mem) }, nil
}
