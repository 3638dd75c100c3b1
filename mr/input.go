package mr

import (
	"context"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// Input is a list of map inputs read lazily by index: every rank holds the
// same list and reads only the elements it is given.
type Input[I any] interface {
	Len() int64
	At(ctx context.Context, i int64) (I, error)
}

// Weighter is implemented by inputs whose elements have weights (such as
// file sizes), used by the balanced and best-fit distributions.
type Weighter interface {
	Weight(i int64) float64
}

// Hasher is implemented by inputs that can hash their contents, compared
// across ranks under pgas.Config.Check.
type Hasher interface {
	Hash() uint64
}

type sliceInput[I any] struct {
	xs []I
	w  []float64
}

// Slice returns an Input over xs.
func Slice[I any](xs []I) Input[I] { return &sliceInput[I]{xs: xs} }

// WeightedSlice returns an Input over xs whose element i weighs w[i]. It
// panics if the lengths differ.
func WeightedSlice[I any](xs []I, w []float64) Input[I] {
	if len(w) != len(xs) {
		panic(fmt.Sprintf("mr: WeightedSlice of %d elements with %d weights", len(xs), len(w)))
	}
	return &sliceInput[I]{xs: xs, w: w}
}

func (s *sliceInput[I]) Len() int64 { return int64(len(s.xs)) }

func (s *sliceInput[I]) At(_ context.Context, i int64) (I, error) { return s.xs[i], nil }

func (s *sliceInput[I]) Weight(i int64) float64 {
	if s.w == nil {
		return 1
	}
	return s.w[i]
}

// Hash hashes the elements' printed forms (only used under Check).
func (s *sliceInput[I]) Hash() uint64 {
	h := xxhash.New()
	var b []byte
	for i, x := range s.xs {
		b = fmt.Appendf(b[:0], "%d:%v;", i, x)
		if s.w != nil {
			b = fmt.Appendf(b, "%v;", s.w[i])
		}
		h.Write(b)
	}
	return h.Sum64()
}
