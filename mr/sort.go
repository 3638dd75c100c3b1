package mr

import (
	"bytes"
	"cmp"
	"context"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/vmihailenco/msgpack/v5"
)

// Sort is collective: every rank passes its items, and root gets the items
// of every rank in the order cmp gives, stable: items cmp finds equal come
// in the order (rank, index in the rank's local). That is
// slices.SortStableFunc of the ranks' items concatenated in rank order,
// whatever the rank count. Root's result is never nil; the other ranks get
// nil. Sort orders results by value, or by any order of the user's, where
// ReduceKeys gives them by key; TopK takes the first k without moving
// every item; SortPartitioned sorts what is too large for one rank.
//
// Each rank sorts its own items, and root merges the ranks' runs. Items
// move encoded with msgpack, as GatherValues moves them: a T that msgpack
// would not give back whole (a struct with unexported fields, at any
// depth, an interface, a channel or a function) is an error naming the
// part at fault. local is not modified. A list that every rank passes
// alike, such as the whole result that a reduce without a
// Gather option gives every rank, counts once; each rank's part of a
// partitioned result counts as its own.
func Sort[T any](ctx context.Context, r *pgas.Rank, local []T, cmp func(a, b T) int, root int) ([]T, error) {
	if err := movable[T](); err != nil {
		return nil, fmt.Errorf("mr: Sort: %w", err)
	}
	local, err := once(ctx, r, local)
	if err != nil {
		return nil, err
	}
	runs, err := GatherValues(ctx, r, sortedClone(local, cmp), root)
	if err != nil || runs == nil {
		return nil, err
	}
	return mergeRuns(runs, cmp), nil
}

// once is collective: it returns local, or nil on every rank but rank 0
// when every rank passed the same list (replicated), so that a list
// every rank holds counts once.
func once[T any](ctx context.Context, r *pgas.Rank, local []T) ([]T, error) {
	same, err := replicated(ctx, r, local)
	if err != nil {
		return nil, err
	}
	if same && r.ID() != 0 {
		return nil, nil
	}
	return local, nil
}

// SortAll is Sort with every rank getting every item, in the same order.
func SortAll[T any](ctx context.Context, r *pgas.Rank, local []T, cmp func(a, b T) int) ([]T, error) {
	if err := movable[T](); err != nil {
		return nil, fmt.Errorf("mr: SortAll: %w", err)
	}
	local, err := once(ctx, r, local)
	if err != nil {
		return nil, err
	}
	runs, err := AllGatherValues(ctx, r, sortedClone(local, cmp))
	if err != nil {
		return nil, err
	}
	return mergeRuns(runs, cmp), nil
}

// SortPartitioned is collective: every rank passes its items, and rank i
// gets the i-th contiguous range of Sort's order, so that the ranks'
// results concatenated in rank order are Sort's result, and no rank holds
// all of it. It is a sample sort: each rank sorts its items and picks 8
// samples per rank of the job at regular intervals of them, every rank
// gets every sample, the ranks agree on n-1 splitters that cut the
// samples into n parts of equal weight, and one all-to-all sends each
// rank the items between its splitters. Ties are cut by (rank, local
// index), so that equal items spread over the ranks too. The ranges are
// balanced to within the sampling's error: rank i gets about its share,
// give or take one sampling interval of each rank's items. Items move as
// in Sort; local is not modified; no rank's result is nil.
func SortPartitioned[T any](ctx context.Context, r *pgas.Rank, local []T, cmp func(a, b T) int) ([]T, error) {
	if err := movable[T](); err != nil {
		return nil, fmt.Errorf("mr: SortPartitioned: %w", err)
	}
	local, err := once(ctx, r, local)
	if err != nil {
		return nil, err
	}
	n, me := r.N(), r.ID()
	// order holds local's indices in the order (cmp, index): every
	// rank's part of the global order (cmp, rank, index).
	order := make([]int, len(local))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp(local[a], local[b]); c != 0 {
			return c
		}
		return a - b
	})
	samples, err := AllGatherValues(ctx, r, pickSamples(local, order, me, n))
	if err != nil {
		return nil, fmt.Errorf("mr: SortPartitioned: samples: %w", err)
	}
	split := splitters(slices.Concat(samples...), n, cmp)
	// bounds[j]: the first of order whose item is at or past splitter j
	// (rank j's range starts at splitter j), len(order) past the last.
	bounds := make([]int, n+1)
	for j := 1; j <= n; j++ {
		bounds[j] = len(order)
		if j < n && split[j-1] != nil {
			s := split[j-1]
			bounds[j] = sort.Search(len(order), func(p int) bool {
				return compareAt(local[order[p]], me, order[p], s, cmp) >= 0
			})
		}
	}
	var send bytes.Buffer
	enc := msgpack.NewEncoder(&send)
	sendCounts := make([]int, n)
	chunk := make([]T, 0)
	for j := range n {
		chunk = chunk[:0]
		for _, i := range order[bounds[j]:bounds[j+1]] {
			chunk = append(chunk, local[i])
		}
		before := send.Len()
		if err := enc.Encode(chunk); err != nil {
			return nil, fmt.Errorf("mr: SortPartitioned: encoding rank %d's %d items for rank %d: %w", me, len(chunk), j, err)
		}
		sendCounts[j] = send.Len() - before
	}
	sendLens := make([]int64, n)
	for j, c := range sendCounts {
		sendLens[j] = int64(c)
	}
	recvLens := make([]int64, n)
	if err := coll.Exchange(ctx, r.World(), coll.Private(recvLens), coll.Private(sendLens), 1); err != nil {
		return nil, fmt.Errorf("mr: SortPartitioned: exchanging sizes: %w", err)
	}
	recvCounts := make([]int, n)
	total := 0
	for i, l := range recvLens {
		recvCounts[i] = int(l)
		total += int(l)
	}
	recv := make([]byte, total)
	if err := coll.AlltoallV(ctx, r.World(), coll.Private(recv), coll.Private(send.Bytes()), sendCounts, recvCounts); err != nil {
		return nil, fmt.Errorf("mr: SortPartitioned: exchanging %d bytes of items: %w", send.Len(), err)
	}
	runs := make([][]T, n)
	off := 0
	for i, c := range recvCounts {
		if err := msgpack.Unmarshal(recv[off:off+c], &runs[i]); err != nil {
			return nil, fmt.Errorf("mr: SortPartitioned: decoding rank %d's items: %w", i, err)
		}
		off += c
	}
	return mergeRuns(runs, cmp), nil
}

// sample is one of a rank's items picked by SortPartitioned, with its
// place in the global order (Rank, Idx) and the number of the rank's
// items it stands for (itself and those up to the next sample).
type sample[T any] struct {
	V      T
	Rank   int
	Idx    int
	Weight int
}

// samplesPerRank is the number of samples each rank picks for every rank
// of the job: the more, the better balanced SortPartitioned's ranges.
const samplesPerRank = 8

// pickSamples picks up to samplesPerRank*n of local's items at regular
// intervals of their order.
func pickSamples[T any](local []T, order []int, me, n int) []sample[T] {
	m := len(order)
	s := min(m, samplesPerRank*n)
	out := make([]sample[T], s)
	for k := range s {
		p, next := k*m/s, (k+1)*m/s
		out[k] = sample[T]{V: local[order[p]], Rank: me, Idx: order[p], Weight: next - p}
	}
	return out
}

// splitters sorts every rank's samples and returns the n-1 that cut their
// weight into n about equal parts: splitter j-1 starts rank j's range, nil
// if the range is empty.
func splitters[T any](all []sample[T], n int, cmp func(a, b T) int) []*sample[T] {
	slices.SortFunc(all, func(a, b sample[T]) int { return compareAt(a.V, a.Rank, a.Idx, &b, cmp) })
	total := 0
	for _, s := range all {
		total += s.Weight
	}
	split := make([]*sample[T], n-1)
	j, cum := 1, 0 // cum: the weight of the samples before all[i]
	for i := range all {
		for j < n && cum*n >= j*total {
			split[j-1] = &all[i]
			j++
		}
		cum += all[i].Weight
	}
	return split
}

// compareAt compares item x of rank, at index idx of its local, with s in
// the order (cmp, rank, index).
func compareAt[T any](x T, rank, idx int, s *sample[T], cmpf func(a, b T) int) int {
	if c := cmpf(x, s.V); c != 0 {
		return c
	}
	if c := cmp.Compare(rank, s.Rank); c != 0 {
		return c
	}
	return cmp.Compare(idx, s.Idx)
}

// sortedClone returns a sorted copy of xs, stable.
func sortedClone[T any](xs []T, cmp func(a, b T) int) []T {
	out := slices.Clone(xs)
	slices.SortStableFunc(out, cmp)
	return out
}

// mergeRuns merges sorted runs given in rank order into one, stable: of
// equal items, those of earlier runs first. It merges neighbouring runs
// pairwise, log2(len(runs)) rounds. The result is never nil.
func mergeRuns[T any](runs [][]T, cmp func(a, b T) int) []T {
	if len(runs) == 0 {
		return []T{}
	}
	for len(runs) > 1 {
		next := runs[:0:0]
		for i := 0; i < len(runs); i += 2 {
			if i+1 == len(runs) {
				next = append(next, runs[i])
				break
			}
			next = append(next, merge2(runs[i], runs[i+1], cmp))
		}
		runs = next
	}
	if runs[0] == nil {
		return []T{}
	}
	return runs[0]
}

// merge2 merges sorted a and b, a's items first where they tie.
func merge2[T any](a, b []T, cmp func(a, b T) int) []T {
	out := make([]T, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			out = append(out, b[j])
			j++
		} else {
			out = append(out, a[i])
			i++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// movable reports why msgpack would not give values of T back whole after
// a move between ranks (GatherValues, Sort), or nil if it would: a struct
// field that is unexported (msgpack drops it silently: the value arrives
// with the field's zero value), an interface (it comes back as msgpack's
// own types), a channel or a function. Fields tagged `msgpack:"-"` are
// left out on purpose and not checked; types that encode themselves
// (msgpack.CustomEncoder or Marshaler, encoding.BinaryMarshaler or
// TextMarshaler: time.Time) are taken as they are.
func movable[T any]() error {
	t := reflect.TypeFor[T]()
	if err := movableType(t, t.String(), map[reflect.Type]bool{}); err != nil {
		return fmt.Errorf("msgpack cannot carry %v whole: %w", t, err)
	}
	return nil
}

var selfEncoders = []reflect.Type{
	reflect.TypeFor[msgpack.CustomEncoder](),
	reflect.TypeFor[msgpack.Marshaler](),
	reflect.TypeFor[encoding.BinaryMarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](),
}

// movableType is movable of t, naming the part of t at path.
func movableType(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	for _, e := range selfEncoders {
		if t.Implements(e) || reflect.PointerTo(t).Implements(e) {
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return movableType(t.Elem(), path+"[]", seen)
	case reflect.Map:
		if err := movableType(t.Key(), path+" key", seen); err != nil {
			return err
		}
		return movableType(t.Elem(), path+" value", seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("msgpack") == "-" {
				continue
			}
			// An embedded struct of an unexported type is inlined:
			// its exported fields move.
			if !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
				return fmt.Errorf("%s.%s is unexported (msgpack drops it)", path, f.Name)
			}
			if err := movableType(f.Type, path+"."+f.Name, seen); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return fmt.Errorf("%s has kind %v", path, t.Kind())
	}
	return nil
}
