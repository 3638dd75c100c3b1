package transport_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// naivePack packs the elements of s from seg one element at a time.
func naivePack(seg []byte, s transport.Strided) []byte {
	var out []byte
	var rec func(k int, off int64)
	rec = func(k int, off int64) {
		if k == len(s.Shape) {
			out = append(out, seg[off:off+s.Elem]...)
			return
		}
		for i := range s.Shape[k] {
			rec(k+1, off+i*s.Strides[k])
		}
	}
	rec(0, s.Off)
	return out
}

func randomStrided(rng *rand.Rand, segBytes int64) transport.Strided {
	d := rng.IntN(4)
	s := transport.Strided{Elem: 1 + rng.Int64N(9)}
	span := s.Elem
	for range d {
		n := rng.Int64N(5)
		st := span * (1 + rng.Int64N(2)) // contiguous or with gaps
		if rng.IntN(5) == 0 {
			st = 0 // the same elements again (reads only)
		}
		s.Shape = append([]int64{n}, s.Shape...)
		s.Strides = append([]int64{st}, s.Strides...)
		span += max(n-1, 0) * st
	}
	s.Off = rng.Int64N(segBytes - span + 1)
	return s
}

// TestStrided: Runs, CopyStrided and GetStridedRuns give what packing one
// element at a time gives; Span bounds the elements; Check rejects what
// it must.
func TestStrided(t *testing.T) {
	const segBytes = 4096
	eps, err := inproc.New().Open(context.Background(), transport.Job{Ranks: 2, SegmentBytes: segBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	seg := eps[1].Segment()
	for i := range seg {
		seg[i] = byte(i*7 + i/256)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		s := randomStrided(rng, segBytes)
		if err := s.Check(segBytes); err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		want := naivePack(seg, s)
		if int64(len(want)) != s.Bytes() {
			t.Fatalf("%+v: Bytes %d, packed %d", s, s.Bytes(), len(want))
		}
		got := make([]byte, s.Bytes())
		transport.CopyStrided(seg, s, got, true)
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: CopyStrided differs from element-by-element packing", s)
		}
		clear(got)
		// Through Extend's shim of an endpoint without strided transfers:
		// one get per run.
		shim := transport.Extend(plain{eps[0]})
		if err := shim.GetStrided(context.Background(), 1, s, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v: GetStrided by runs: %v or different bytes", s, err)
		}
		if !slices.Contains(s.Strides, 0) { // puts need elements that do not overlap
			src := make([]byte, s.Bytes())
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			model := slices.Clone(seg)
			transport.CopyStrided(model, s, src, false)
			if err := shim.PutStrided(context.Background(), 1, s, src); err != nil || !bytes.Equal(seg, model) {
				t.Fatalf("%+v: PutStrided by runs: %v or different bytes", s, err)
			}
			if !bytes.Equal(naivePack(seg, s), src) {
				t.Fatalf("%+v: the elements put do not read back", s)
			}
		}
		if lo, hi := s.Span(); s.Count() > 0 {
			mn, mx := int64(segBytes), int64(0)
			var rec func(k int, off int64)
			rec = func(k int, off int64) {
				if k == len(s.Shape) {
					mn, mx = min(mn, off), max(mx, off+s.Elem)
					return
				}
				for i := range s.Shape[k] {
					rec(k+1, off+i*s.Strides[k])
				}
			}
			rec(0, s.Off)
			if lo != mn || hi != mx {
				t.Fatalf("%+v: Span [%d,%d), elements in [%d,%d)", s, lo, hi, mn, mx)
			}
		}
		var runs, prev int64
		s.Runs(func(off, lo, hi int64) {
			if lo != prev || hi <= lo {
				t.Fatalf("%+v: run [%d,%d) after %d", s, lo, hi, prev)
			}
			prev = hi
			runs++
		})
		if prev != s.Bytes() {
			t.Fatalf("%+v: runs cover %d of %d bytes", s, prev, s.Bytes())
		}
	}
	// A row-major box of whole rows is one run.
	whole := transport.Strided{Off: 64, Shape: []int64{3, 4}, Strides: []int64{32, 8}, Elem: 8}
	n := 0
	whole.Runs(func(int64, int64, int64) { n++ })
	if n != 1 {
		t.Errorf("a contiguous 3x4 box made %d runs, want 1", n)
	}
	for _, bad := range []transport.Strided{
		{Off: 4090, Shape: []int64{2}, Strides: []int64{8}, Elem: 8},
		{Off: -1, Shape: []int64{1}, Strides: []int64{8}, Elem: 8},
		{Off: 0, Shape: []int64{1, 2}, Strides: []int64{8}, Elem: 8},
		{Off: 0, Shape: []int64{-1}, Strides: []int64{8}, Elem: 8},
		{Off: 0, Shape: []int64{2}, Strides: []int64{-8}, Elem: 8},
		{Off: 0, Shape: []int64{2}, Strides: []int64{8}, Elem: 0},
	} {
		if err := bad.Check(segBytes); err == nil {
			t.Errorf("Check(%+v) = nil", bad)
		}
	}
}
