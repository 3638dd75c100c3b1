package pgastest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/pgasmr/pgasmr/pgas"
)

// stridedBox returns a random sub-box of a d0 x d1 x d2 array of elem-byte
// elements at base, its dimensions perhaps permuted (a transposed view):
// elements never overlap.
func stridedBox(rng *rand.Rand, base int64, dims [3]int64, elem int64) pgas.Strided {
	strides := [3]int64{dims[1] * dims[2] * elem, dims[2] * elem, elem}
	s := pgas.Strided{Off: base, Elem: elem}
	order := rng.Perm(3)
	for _, k := range order {
		lo := rng.Int64N(dims[k])
		hi := lo + 1 + rng.Int64N(dims[k]-lo)
		s.Off += lo * strides[k]
		s.Shape = append(s.Shape, hi-lo)
		s.Strides = append(s.Strides, strides[k])
	}
	if rng.IntN(4) == 0 { // drop a dimension: a slice
		s.Shape, s.Strides = s.Shape[1:], s.Strides[1:]
	}
	return s
}

// eachElem calls fn with the segment offset of every element of s in
// row-major order, one index step at a time: the oracle's walk.
func eachElem(s pgas.Strided, fn func(off int64)) {
	if s.Count() == 0 {
		return
	}
	idx := make([]int64, len(s.Shape))
	for {
		off := s.Off
		for k := range idx {
			off += idx[k] * s.Strides[k]
		}
		fn(off)
		k := len(idx) - 1
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

// stridedNaive packs the elements of s from mem (a segment's bytes) one
// element at a time: the oracle.
func stridedNaive(mem []byte, s pgas.Strided) []byte {
	var out []byte
	eachElem(s, func(off int64) { out = append(out, mem[off:off+s.Elem]...) })
	return out
}

// checkStrided: GetStrided of random sub-boxes (some transposed, some
// sliced) of the next rank's array returns what an element-by-element
// packing of its contents gives, each as one counted message; PutStrided
// of random boxes into it leaves, after a barrier, exactly what the
// writer's own replay of the puts predicts; a box outside the segment
// and a buffer of the wrong size are errors.
func checkStrided(ctx context.Context, r *pgas.Rank) error {
	me, q := r.ID(), next(r)
	dims := [3]int64{5, 7, 6}
	const elem = 8
	size := dims[0] * dims[1] * dims[2] * elem
	reg, err := r.AllAlloc(ctx, size)
	if err != nil {
		return err
	}
	fill := func(p int) []byte {
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(p*37 + j*11 + j/251)
		}
		return b
	}
	copy(r.Segment()[reg.Off:], fill(me))
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	theirs := make([]byte, reg.Off+size)
	copy(theirs[reg.Off:], fill(q))
	rng := rand.New(rand.NewPCG(uint64(me), 7))
	before := r.Stats()
	gets := scaled(r, 40)
	for range gets {
		e := []int64{1, 2, 8}[rng.IntN(3)]
		d := dims
		d[2] *= elem / e
		s := stridedBox(rng, reg.Off, d, e)
		dst := make([]byte, s.Bytes())
		if err := r.GetStrided(ctx, q, s, dst); err != nil {
			return err
		}
		if want := stridedNaive(theirs, s); !bytes.Equal(dst, want) {
			return fmt.Errorf("GetStrided %+v from rank %d differs from the element-by-element packing", s, q)
		}
	}
	if q != me {
		after := r.Stats()
		if got := after.Peers[q].Messages - before.Peers[q].Messages; got != int64(gets) {
			return fmt.Errorf("%d strided gets counted as %d messages to rank %d, want one each", gets, got, q)
		}
	}
	// Puts: only this rank writes q's array until the next barrier.
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	for range scaled(r, 30) {
		s := stridedBox(rng, reg.Off, dims, elem)
		src := make([]byte, s.Bytes())
		for j := range src {
			src[j] = byte(rng.Uint32())
		}
		if err := r.PutStrided(ctx, q, s, src); err != nil {
			return err
		}
		// Replay into the model of q's memory, element by element.
		pos := int64(0)
		eachElem(s, func(off int64) {
			copy(theirs[off:off+s.Elem], src[pos:])
			pos += s.Elem
		})
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	got := make([]byte, size)
	if err := r.GetBytes(ctx, q, reg.Off, got); err != nil {
		return err
	}
	if !bytes.Equal(got, theirs[reg.Off:]) {
		return fmt.Errorf("rank %d's array after this rank's strided puts differs from their replay", q)
	}
	bad := pgas.Strided{Off: int64(len(r.Segment())) - 8, Shape: []int64{2}, Strides: []int64{8}, Elem: 8}
	if err := r.GetStrided(ctx, q, bad, make([]byte, 16)); err == nil {
		return fmt.Errorf("a strided get past the segment's end succeeded")
	}
	if err := r.PutStrided(ctx, q, pgas.Strided{Off: reg.Off, Shape: []int64{2}, Strides: []int64{8}, Elem: 8}, make([]byte, 8)); err == nil {
		return fmt.Errorf("a strided put of 2 elements from 8 bytes succeeded")
	}
	if err := r.Barrier(ctx); err != nil {
		return err
	}
	return r.AllFree(ctx, reg)
}
