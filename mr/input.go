package mr

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"
	"github.com/vmihailenco/msgpack/v5"
)

// Input is a list of map inputs read lazily by index. An input made by
// Slice, WeightedSlice or the file constructors is the same list on every
// rank, each rank mapping the elements the distribution gives it; an input
// made by Local is each rank's own list, mapped where it lies.
type Input[I any] interface {
	Len() int64
	At(ctx context.Context, i int64) (I, error)
}

// Weighter is implemented by inputs whose elements have weights (such as
// file sizes), used by the balanced and best-fit distributions.
type Weighter interface {
	Weight(i int64) float64
}

// Hasher is implemented by inputs that can hash their contents: ApplyMap
// and ApplyMapArray compare the hash across ranks (unless
// pgas.Config.NoCheck), so that ranks passing different lists fail at once
// instead of mapping some elements twice and others never. The hash may be
// of a sample of the elements when hashing them all would cost more than a
// small part of a map.
type Hasher interface {
	Hash() uint64
}

type sliceInput[I any] struct {
	xs []I
	w  []float64
}

// Slice returns an Input over xs, which must be the same list on every
// rank: the ranks share its elements out by the distribution. A list that
// differs between ranks (different lengths, or elements that differ where
// the check samples them) is an error of the map call, unless
// pgas.Config.NoCheck. To map each rank's own data, use Local.
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

// hashSample is the most elements a slice input's Hash reads: all of a
// list up to this length, evenly spaced ones (the first and the last
// among them) of a longer one.
const hashSample = 4096

// Hash hashes the length and up to hashSample elements (all of a shorter
// list), with their weights: strings, byte slices and numbers by their
// bytes, anything else by its msgpack encoding with map keys sorted (so
// that equal values hash alike in every process; an element msgpack
// cannot encode counts by its position only).
func (s *sliceInput[I]) Hash() uint64 {
	h := xxhash.New()
	n := len(s.xs)
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	h.Write(b)
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	for _, i := range sampleIndices(n) {
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(i))
		b = appendElem(b, s.xs[i], enc, &buf)
		if s.w != nil {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.w[i]))
		}
		h.Write(b)
	}
	return h.Sum64()
}

// sampleIndices returns the indices of a list of n elements that Hash
// reads: all of them up to hashSample, else hashSample evenly spaced ones
// from the first to the last.
func sampleIndices(n int) []int {
	if n <= hashSample {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, hashSample)
	for k := range idx {
		idx[k] = int(int64(k) * int64(n-1) / (hashSample - 1))
	}
	return idx
}

// appendElem appends x's bytes for hashing.
func appendElem[I any](b []byte, x I, enc *msgpack.Encoder, buf *bytes.Buffer) []byte {
	switch v := any(x).(type) {
	case string:
		b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
		return append(b, v...)
	case []byte:
		b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
		return append(b, v...)
	case int:
		return binary.LittleEndian.AppendUint64(b, uint64(v))
	case int64:
		return binary.LittleEndian.AppendUint64(b, uint64(v))
	case uint64:
		return binary.LittleEndian.AppendUint64(b, v)
	case int32:
		return binary.LittleEndian.AppendUint32(b, uint32(v))
	case float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	buf.Reset()
	if err := enc.Encode(x); err != nil {
		return append(b, 0xff)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(buf.Len()))
	return append(b, buf.Bytes()...)
}

// localInput is the Input of Local.
type localInput[I any] struct{ xs []I }

// Local returns an Input over this rank's own xs: each rank passes its own
// list (of any length, empty too) and maps all of it, where it lies; no
// element moves and no distribution applies (WithDistribution, WithPlan or
// WithWeights with a Local input is an error). It is the input of an SPMD
// program whose ranks hold their own data, and of a stage chained after a
// partitioned reduce: map each rank's part of the previous result where it
// lies,
//
//	part, err := mr.ReduceKeys(ctx, r, st1, f, mr.Gather(reduce.GatherPartitioned))
//	...
//	_, err = mr.ApplyMap(ctx, r, mr.Local(part.Value), g, st2)
//
// Values a store keeps in order (reduce.KeepAll) are ordered as if the
// ranks' lists were one list, rank 0's first.
func Local[I any](xs []I) Input[I] { return &localInput[I]{xs: xs} }

func (l *localInput[I]) Len() int64 { return int64(len(l.xs)) }

func (l *localInput[I]) At(_ context.Context, i int64) (I, error) { return l.xs[i], nil }

func (l *localInput[I]) local() {}

// isLocal reports whether in is each rank's own (Local).
func isLocal[I any](in Input[I]) bool {
	_, ok := in.(interface{ local() })
	return ok
}
