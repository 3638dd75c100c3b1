package transport

import (
	"context"
	"errors"
	"fmt"
)

// Strided is a sub-box of a segment, the operand of the strided
// transfers (Extended.GetStrided, PutStrided): element (i_0, ...,
// i_{d-1}), 0 <= i_k < Shape[k], is the Elem bytes at Off + sum_k i_k *
// Strides[k]. The transfer packs the elements in row-major order (the
// last index fastest) on the side that is not the segment.
type Strided struct {
	Off     int64
	Shape   []int64
	Strides []int64 // in bytes, not negative
	Elem    int64
}

// Count is the number of elements.
func (s Strided) Count() int64 {
	n := int64(1)
	for _, x := range s.Shape {
		n *= x
	}
	return n
}

// Bytes is the size of the packed data, Count * Elem.
func (s Strided) Bytes() int64 { return s.Count() * s.Elem }

// Span is the bytes [lo, hi) of the segment the elements lie in (empty
// when there are none).
func (s Strided) Span() (lo, hi int64) {
	if s.Count() == 0 {
		return s.Off, s.Off
	}
	hi = s.Off + s.Elem
	for k, x := range s.Shape {
		hi += (x - 1) * s.Strides[k]
	}
	return s.Off, hi
}

// Check reports what is wrong with s for a segment of segBytes bytes:
// shape and strides of different lengths, a negative size, stride or
// offset, or elements outside the segment (wrapping ErrOutOfRange).
func (s Strided) Check(segBytes int64) error {
	if len(s.Shape) != len(s.Strides) {
		return fmt.Errorf("strided transfer with %d sizes and %d strides", len(s.Shape), len(s.Strides))
	}
	if s.Elem < 1 {
		return fmt.Errorf("strided transfer of %d-byte elements", s.Elem)
	}
	for k := range s.Shape {
		if s.Shape[k] < 0 || s.Strides[k] < 0 {
			return fmt.Errorf("strided transfer: dimension %d has size %d and stride %d, want neither negative", k, s.Shape[k], s.Strides[k])
		}
	}
	lo, hi := s.Span()
	if lo < 0 || hi > segBytes {
		return fmt.Errorf("strided transfer: bytes [%d,%d) outside a segment of %d bytes: %w", lo, hi, segBytes, ErrOutOfRange)
	}
	return nil
}

// Runs calls fn for each maximal contiguous run of s in row-major order:
// its offset in the segment and its place [lo, hi) in the packed data.
// Dimensions whose elements follow each other in the segment (stride
// equal to the size of the rest) make one run.
func (s Strided) Runs(fn func(off, lo, hi int64)) {
	if s.Count() == 0 {
		return
	}
	// The contiguous tail: dimensions from the last whose stride is the
	// size of everything after them.
	d := len(s.Shape)
	run := s.Elem
	for d > 0 && s.Strides[d-1] == run {
		run *= s.Shape[d-1]
		d--
	}
	idx := make([]int64, d)
	var pos int64
	for {
		off := s.Off
		for k := range d {
			off += idx[k] * s.Strides[k]
		}
		fn(off, pos, pos+run)
		pos += run
		k := d - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < s.Shape[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// CopyStrided moves the elements of s between seg (a segment in this
// process's memory) and packed: into packed if get, else out of it.
func CopyStrided(seg []byte, s Strided, packed []byte, get bool) {
	s.Runs(func(off, lo, hi int64) {
		if get {
			copy(packed[lo:hi], seg[off:off+hi-lo])
		} else {
			copy(seg[off:off+hi-lo], packed[lo:hi])
		}
	})
}

// GetStridedRuns is a strided get made of one GetAsync per contiguous
// run of s, all started before any is waited on: what a transport with
// no strided transfer of its own does (Extend's shim, and mpi).
func GetStridedRuns(ctx context.Context, ep Endpoint, rank int, s Strided, dst []byte) error {
	var hs []Handle
	s.Runs(func(off, lo, hi int64) {
		hs = append(hs, ep.GetAsync(ctx, rank, off, dst[lo:hi]))
	})
	var errs []error
	for _, h := range hs {
		if err := h.Wait(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// PutStridedRuns is a strided put made of one Put per contiguous run.
func PutStridedRuns(ctx context.Context, ep Endpoint, rank int, s Strided, src []byte) error {
	var err error
	s.Runs(func(off, lo, hi int64) {
		if err == nil {
			err = ep.Put(ctx, rank, off, src[lo:hi])
		}
	})
	return err
}
