//go:build unix

package inproc

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Segments live outside the Go heap, in anonymous private mappings: a
// 16 MiB segment a job never touches costs address space, not memory, and
// the garbage collector's goal follows the program's live data instead of
// rising by every segment (with 64 ranks, 1 GiB of segments in the heap
// let 1 GiB of garbage pile up before a collection). Each segment is its
// own page-aligned mapping.
//
// A job's segments go back to a process-wide pool when its last endpoint
// closes, so that a program running many jobs does not fault fresh pages
// in for every one: only the pages the job touched (resident, as mincore
// says) are zeroed again, with memclr while the pool's resident memory is
// under poolWarm, else released to the kernel (MADV_DONTNEED, which zeroes
// them too). Segment memory must not be used after the job (pgas.Run
// returns only once every rank has).

// poolWarm bounds the resident memory the pool keeps; poolMax bounds the
// segments it keeps, resident or not.
const (
	poolWarm = 256 << 20
	poolMax  = 4 << 30
)

var segPool struct {
	sync.Mutex
	free     map[int][][]byte // by mapping length
	mapped   int64            // bytes of the mappings in free
	resident int64            // of which resident (zeroed, warm)
	warm     map[*byte]int64  // resident bytes of each pooled mapping
}

// mapSegments returns ranks zeroed segments of n bytes each, or ctx's
// error if it ends first (a hundred thousand mappings take a while).
func mapSegments(ctx context.Context, ranks int, n int64) (segs [][]byte, unmap func() error, err error) {
	segs = make([][]byte, ranks)
	if n == 0 {
		for r := range segs {
			segs[r] = []byte{}
		}
		return segs, func() error { return nil }, nil
	}
	page := int64(os.Getpagesize())
	length := (n + page - 1) / page * page
	if length > 1<<46 {
		return nil, nil, fmt.Errorf("inproc: a segment of %d bytes does not fit in the address space", n)
	}
	maps := make([][]byte, ranks)
	for r := range maps {
		if r%1024 == 1023 {
			err = ctx.Err()
		}
		if err == nil {
			maps[r], err = getMapping(int(length))
		}
		if err != nil {
			for _, m := range maps[:r] {
				putMapping(m)
			}
			return nil, nil, fmt.Errorf("inproc: mapping %d segments of %d bytes: %w", ranks, n, err)
		}
		segs[r] = maps[r][:n:n]
	}
	return segs, func() error {
		for _, m := range maps {
			putMapping(m)
		}
		return nil
	}, nil
}

func getMapping(length int) ([]byte, error) {
	p := &segPool
	p.Lock()
	if l := p.free[length]; len(l) > 0 {
		m := l[len(l)-1]
		p.free[length] = l[:len(l)-1]
		p.mapped -= int64(length)
		p.resident -= p.warm[&m[0]]
		delete(p.warm, &m[0])
		p.Unlock()
		return m, nil
	}
	p.Unlock()
	return syscall.Mmap(-1, 0, length, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
}

// putMapping zeroes what a job touched of m and pools it, or unmaps it
// when the pool is full.
func putMapping(m []byte) {
	p := &segPool
	p.Lock()
	defer p.Unlock()
	if p.mapped+int64(len(m)) > poolMax {
		syscall.Munmap(m)
		return
	}
	warm := p.resident < poolWarm
	res, err := zeroTouched(m, warm)
	if err != nil {
		syscall.Munmap(m)
		return
	}
	if p.free == nil {
		p.free, p.warm = map[int][][]byte{}, map[*byte]int64{}
	}
	p.free[len(m)] = append(p.free[len(m)], m)
	p.mapped += int64(len(m))
	p.resident += res
	p.warm[&m[0]] = res
}

// zeroTouched zeroes m: its resident pages in place (they stay resident)
// if warm, else by releasing them, and the rest by releasing them too: a
// page mincore calls not resident is either untouched (zero already) or
// swapped out with the job's data in it, which only MADV_DONTNEED drops.
// pgas clears only what it handed out before (the transport contract is
// zeroed segments), so a stale swapped page would reach the next job. It
// returns the resident bytes left.
func zeroTouched(m []byte, warm bool) (int64, error) {
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, e
	}
	var res int64
	for i := 0; i < len(vec); {
		resident := vec[i]&1 != 0
		j := i
		for j < len(vec) && (vec[j]&1 != 0) == resident {
			j++
		}
		run := m[i*page : min(j*page, len(m))]
		if resident && warm {
			clear(run)
			res += int64(len(run))
		} else if err := syscall.Madvise(run, syscall.MADV_DONTNEED); err != nil {
			return 0, err
		}
		i = j
	}
	return res, nil
}
