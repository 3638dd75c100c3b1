package shuffle

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/reduce"
)

// Collect runs the reduce stage's data movement, collectively over all
// ranks: it returns the pairs this rank must reduce, or ok == false if it
// reduces nothing (non-roots under GatherRoot or Merge). Keys are in
// ascending order; equal keys from different ranks are combined in rank
// order (or, keeping all values, ordered by their tags). The store is
// drained.
func Collect[K comparable, V any](ctx context.Context, r *pgas.Rank, s *reduce.Store[K, V], o reduce.Options) (p *reduce.Pairs[K, V], ok bool, st reduce.Stats, err error) {
	e, rd, ok, st, err := collect(ctx, r, s, o)
	if err != nil || !ok {
		return nil, ok, st, err
	}
	if rd != nil {
		defer rd.Close()
		t0 := time.Now()
		e, err = s.ReadAll(rd)
		st.Merge += time.Since(t0)
		if err != nil {
			return nil, false, st, err
		}
	}
	return e.Pairs(), true, st, nil
}

// CollectStream is Collect with the pairs as a stream, keys ascending:
// where the stores spilled (a memory budget, reduce.Store.SetSpill), the
// merge of the rank's spilled runs, read from their files as the caller
// goes, so that a reduce over it holds no more than the budget; else a
// reader of the pairs in memory. The caller closes it, which removes the
// files.
func CollectStream[K comparable, V any](ctx context.Context, r *pgas.Rank, s *reduce.Store[K, V], o reduce.Options) (rd reduce.RunReader[K, V], ok bool, st reduce.Stats, err error) {
	e, rd, ok, st, err := collect(ctx, r, s, o)
	if err != nil || !ok {
		return nil, ok, st, err
	}
	if rd == nil {
		rd = reduce.ReadRun(e)
	}
	return rd, true, st, nil
}

// collect is Collect: its pairs are e, or, where they moved in bounded
// rounds, what rd yields.
func collect[K comparable, V any](ctx context.Context, r *pgas.Rank, s *reduce.Store[K, V], o reduce.Options) (e reduce.Run[K, V], rd reduce.RunReader[K, V], ok bool, st reduce.Stats, err error) {
	if o.Root < 0 || o.Root >= r.N() {
		panic(fmt.Sprintf("reduce: root %d not a rank in [0,%d)", o.Root, r.N()))
	}
	o.Gather = o.Gather.Resolve()
	st.PairsEmitted = s.Emitted()
	x := newXfer(r, s, &st, o.Transfer)
	node := x.nodeWanted(o)
	sunk := false
	if t, ok := s.Sink().(*nodeTable[K, V]); ok && t.x.r == r {
		node, sunk = true, true // the map folded pairs into the node table: they are there
	}
	if sp := s.SpillTo(); sp != nil {
		defer func() { st.SpillFiles, st.SpillBytes = sp.Written() }()
	}
	bounded, err := boundedWanted(ctx, r, s, o)
	if err != nil {
		return e, nil, false, st, err
	}
	if bounded {
		rd, ok, err := x.collectRounds(ctx, o, sunk)
		return e, rd, ok, st, err
	}
	t0 := time.Now()
	var local reduce.Run[K, V]
	if node {
		local = s.DrainCombined() // the node table needs no order
	} else {
		local = s.Drain()
	}
	if err := s.Err(); err != nil {
		// A spilled run that could not be read back (reduce.Spill): the
		// drained pairs are not all there.
		return e, nil, false, st, err
	}
	st.Combine = time.Since(t0)
	if node {
		t0 = time.Now()
		local, err = x.nodeCombine(ctx, local, o)
		st.Node = time.Since(t0)
		if err != nil {
			return e, nil, false, st, err
		}
	}
	t0 = time.Now()
	var runs []reduce.Run[K, V]
	switch o.Gather {
	case reduce.GatherNone:
		runs = []reduce.Run[K, V]{local}
	case reduce.GatherAll:
		runs, err = x.allgather(ctx, local)
	case reduce.GatherRoot:
		runs, err = x.gather(ctx, local, o.Root)
	case reduce.GatherPartitioned:
		runs, err = x.exchange(ctx, local)
	default:
		panic(fmt.Sprintf("reduce: unknown gather mode %d", o.Gather))
	}
	st.Exchange = time.Since(t0)
	if err != nil {
		return e, nil, false, st, err
	}
	if o.Gather == reduce.GatherRoot && r.ID() != o.Root {
		return e, nil, false, st, nil
	}
	t0 = time.Now()
	merged := s.Merge(runs)
	st.Merge = time.Since(t0)
	if o.Merge && (o.Gather == reduce.GatherNone || o.Gather == reduce.GatherPartitioned) {
		t0 = time.Now()
		runs, err := x.gather(ctx, merged, o.Root)
		st.Exchange += time.Since(t0)
		if err != nil {
			return e, nil, false, st, err
		}
		if r.ID() != o.Root {
			return e, nil, false, st, nil
		}
		t0 = time.Now()
		merged = s.Merge(runs)
		st.Merge += time.Since(t0)
	}
	return merged, nil, true, st, nil
}

// xfer moves encoded pairs between ranks.
type xfer[K comparable, V any] struct {
	r    *pgas.Rank
	s    *reduce.Store[K, V]
	kc   reduce.Codec[K]
	vc   reduce.Codec[V]
	all  bool // values keep their tags (KeepAll)
	st   *reduce.Stats
	mode reduce.Transfer
}

func newXfer[K comparable, V any](r *pgas.Rank, s *reduce.Store[K, V], st *reduce.Stats, mode reduce.Transfer) *xfer[K, V] {
	return &xfer[K, V]{r: r, s: s, kc: s.KeyCodec(), vc: s.ValueCodec(), all: s.Combiner().KeepsAll(), st: st, mode: mode}
}

// A buffer holds records (key, value, and in all-values mode the three tag
// words), followed, when either codec is variable-size, by the offset of
// every record and the record count (int64 each): the raw path's index.
// An encoded buffer also remembers its record count.
type buf struct {
	b []byte
	n int
}

func (x *xfer[K, V]) variable() bool { return x.kc.Fixed() == 0 || x.vc.Fixed() == 0 }

// encode encodes all of e into one buffer.
func (x *xfer[K, V]) encode(e reduce.Run[K, V]) buf {
	out, _, _ := x.encodeTo(e, 1, nil, -1)
	return out[0]
}

// partition splits a run by destination rank, xxhash of the encoded key
// mod N. The buffers are consecutive parts of the one returned, in rank
// order, which an exchange sends as it is. With own, the pairs that stay
// on this rank are not encoded: they come back as a run, and their
// buffer is empty (no index either).
func (x *xfer[K, V]) partition(e reduce.Run[K, V], own bool) ([]buf, []byte, reduce.Run[K, V]) {
	n := uint64(x.r.N())
	self := -1
	if own {
		self = x.r.ID()
	}
	return x.encodeTo(e, x.r.N(), func(key []byte) int { return int(xxhash.Sum64(key) % n) }, self)
}

// encodeTo encodes e's records for n destinations into one buffer laid
// out by destination: each destination's records in key order and, when
// a codec is variable-size, its index. A first pass finds each key's
// destination, dest of its encoding (0 for all if dest is nil), and
// groups the keys by it; a second writes each destination's records in
// turn, so nothing is concatenated or copied afterwards. The records for
// destination self go to the returned run as they are instead.
func (x *xfer[K, V]) encodeTo(e reduce.Run[K, V], n int, dest func(key []byte) int, self int) ([]buf, []byte, reduce.Run[K, V]) {
	out := make([]buf, n)
	var own reduce.Run[K, V]
	if x.all {
		own.Off = []int{0}
	}
	// Group the keys by destination, stably (key order within each).
	order := make([]int32, len(e.Keys))
	start := make([]int, n+1) // keys of destination d: order[start[d]:start[d+1]]
	if dest == nil || n == 1 {
		for i := range order {
			order[i] = int32(i)
		}
		start[1] = len(order)
		for d := 2; d <= n; d++ {
			start[d] = len(order)
		}
	} else {
		ds := make([]int32, len(e.Keys))
		var kb []byte
		for i, k := range e.Keys {
			kb = x.kc.Append(kb[:0], k)
			d := dest(kb)
			ds[i] = int32(d)
			start[d+1]++
		}
		for d := range n {
			start[d+1] += start[d]
		}
		next := slices.Clone(start[:n])
		for i, d := range ds {
			order[next[d]] = int32(i)
			next[d]++
		}
	}
	variable := x.variable()
	var data []byte
	if kf, vf := x.kc.Fixed(), x.vc.Fixed(); kf > 0 && vf > 0 {
		rec := kf + vf
		if x.all {
			rec += tagBytes
		}
		data = make([]byte, 0, len(e.Vals)*rec)
	}
	bounds := make([]int, n+1) // destination d's bytes: data[bounds[d]:bounds[d+1]]
	var kb []byte
	var offs []int64
	for d := range n {
		bounds[d] = len(data)
		keys := order[start[d]:start[d+1]]
		if d == self {
			for _, i := range keys {
				lo, hi := int(i), int(i)+1
				if x.all {
					lo, hi = e.Off[i], e.Off[i+1]
				}
				own.Keys = append(own.Keys, e.Keys[i])
				own.Vals = append(own.Vals, e.Vals[lo:hi]...)
				if x.all {
					own.Tags = append(own.Tags, e.Tags[lo:hi]...)
					own.Off = append(own.Off, len(own.Vals))
				}
			}
			continue
		}
		offs = offs[:0]
		base := len(data)
		for _, i := range keys {
			kb = x.kc.Append(kb[:0], e.Keys[i])
			lo, hi := int(i), int(i)+1
			if x.all {
				lo, hi = e.Off[i], e.Off[i+1]
			}
			for v := lo; v < hi; v++ {
				if variable {
					offs = append(offs, int64(len(data)-base))
				}
				data = append(data, kb...)
				data = x.vc.Append(data, e.Vals[v])
				if x.all {
					t := e.Tags[v]
					data = binary.LittleEndian.AppendUint64(data, uint64(t.Call))
					data = binary.LittleEndian.AppendUint64(data, uint64(t.Idx))
					data = binary.LittleEndian.AppendUint64(data, uint64(t.Seq))
				}
				out[d].n++
			}
		}
		if variable {
			for _, o := range offs {
				data = binary.LittleEndian.AppendUint64(data, uint64(o))
			}
			data = binary.LittleEndian.AppendUint64(data, uint64(len(offs)))
		}
	}
	bounds[n] = len(data)
	for d := range out {
		out[d].b = data[bounds[d]:bounds[d+1]:bounds[d+1]]
	}
	return out, data, own
}

// decode turns a buffer from rank src into a sorted run. indexed says
// whether the buffer carries the index (collective transfers do).
func (x *xfer[K, V]) decode(b []byte, src int, indexed bool) (reduce.Run[K, V], error) {
	var e reduce.Run[K, V]
	all := x.all
	if all {
		e.Off = []int{0}
	}
	end := len(b)
	want := -1 // records the index says, if indexed
	var offs []byte
	if indexed && x.variable() {
		if len(b) < 8 {
			return e, fmt.Errorf("reduce: %d-byte buffer from rank %d has no record count", len(b), src)
		}
		n := binary.LittleEndian.Uint64(b[len(b)-8:])
		if n > uint64(len(b)/8-1) {
			return e, fmt.Errorf("reduce: buffer from rank %d claims %d records in %d bytes", src, n, len(b))
		}
		want = int(n)
		end = len(b) - 8*(want+1)
		offs = b[end : len(b)-8]
	}
	rec := 0
	for pos := 0; pos < end; rec++ {
		if want >= 0 && rec >= want {
			return e, fmt.Errorf("reduce: buffer from rank %d holds more records than its index's %d", src, want)
		}
		if offs != nil && int(binary.LittleEndian.Uint64(offs[8*rec:])) != pos {
			return e, fmt.Errorf("reduce: record %d from rank %d at byte %d, index says %d", rec, src, pos, binary.LittleEndian.Uint64(offs[8*rec:]))
		}
		k, n, err := x.kc.Decode(b[pos:end])
		if err != nil {
			return e, fmt.Errorf("reduce: key of record %d from rank %d: %w", rec, src, err)
		}
		pos += n
		v, n, err := x.vc.Decode(b[pos:end])
		if err != nil {
			return e, fmt.Errorf("reduce: value of record %d from rank %d: %w", rec, src, err)
		}
		pos += n
		if !all {
			e.Keys = append(e.Keys, k)
			e.Vals = append(e.Vals, v)
			continue
		}
		if end-pos < tagBytes {
			return e, fmt.Errorf("reduce: record %d from rank %d is cut short", rec, src)
		}
		t := reduce.Tag{Call: int64(binary.LittleEndian.Uint64(b[pos:])), Idx: int64(binary.LittleEndian.Uint64(b[pos+8:])), Seq: int64(binary.LittleEndian.Uint64(b[pos+16:]))}
		pos += tagBytes
		if n := len(e.Keys); n == 0 || x.s.Compare(e.Keys[n-1], k) != 0 {
			if n > 0 {
				e.Off = append(e.Off, len(e.Vals))
			}
			e.Keys = append(e.Keys, k)
		}
		e.Vals = append(e.Vals, v)
		e.Tags = append(e.Tags, t)
	}
	if want >= 0 && rec != want {
		return e, fmt.Errorf("reduce: buffer from rank %d holds %d records, its index says %d", src, rec, want)
	}
	if all && len(e.Keys) > 0 {
		e.Off = append(e.Off, len(e.Vals))
	}
	return e, nil
}

func (x *xfer[K, V]) count(to int, b buf) {
	if to != x.r.ID() {
		x.st.PairsMoved += int64(b.n)
		x.st.BytesSent += int64(len(b.b))
	}
}

// allgather gives every rank every rank's run; a rank's own run is not
// decoded back from its encoding.
func (x *xfer[K, V]) allgather(ctx context.Context, local reduce.Run[K, V]) ([]reduce.Run[K, V], error) {
	n := x.r.N()
	mine := x.encode(local)
	if x.mode == reduce.ElementByElement {
		out := make([]buf, n)
		for d := range out {
			out[d] = mine
		}
		return x.elementwise(ctx, out, nil)
	}
	for d := range n {
		x.count(d, mine)
	}
	counts, err := x.lengths(ctx, len(mine.b))
	if err != nil {
		return nil, err
	}
	recv := make([]byte, sum(counts))
	if err := coll.AllgatherV(ctx, x.r.World(), coll.Private(recv), coll.Private(mine.b), counts, nil, nil); err != nil {
		return nil, err
	}
	return x.split(recv, counts, true, &local)
}

// gather gives the root every rank's run; the root's own is not encoded.
func (x *xfer[K, V]) gather(ctx context.Context, local reduce.Run[K, V], root int) ([]reduce.Run[K, V], error) {
	n := x.r.N()
	if x.mode == reduce.ElementByElement {
		out := make([]buf, n)
		out[root] = x.encode(local)
		return x.elementwise(ctx, out, []int{root})
	}
	var mine buf
	var own *reduce.Run[K, V]
	if x.r.ID() == root {
		own = &local
	} else {
		mine = x.encode(local)
	}
	x.count(root, mine)
	counts, err := x.lengths(ctx, len(mine.b))
	if err != nil {
		return nil, err
	}
	var recv []byte
	if x.r.ID() == root {
		recv = make([]byte, sum(counts))
	}
	if err := coll.GatherV(ctx, x.r.World(), coll.Private(recv), coll.Private(mine.b), counts, nil, nil, coll.Root(root)); err != nil {
		return nil, err
	}
	if x.r.ID() != root {
		return nil, nil
	}
	return x.split(recv, counts, true, own)
}

// exchange gives every rank the pairs of its key range from every rank;
// the pairs a rank keeps are neither encoded nor moved.
func (x *xfer[K, V]) exchange(ctx context.Context, local reduce.Run[K, V]) ([]reduce.Run[K, V], error) {
	n := x.r.N()
	if x.mode == reduce.ElementByElement {
		out, _, _ := x.partition(local, false)
		return x.elementwise(ctx, out, nil)
	}
	if n == 1 {
		return []reduce.Run[K, V]{local}, nil // every key is this rank's: nothing to group or copy
	}
	out, send, own := x.partition(local, true)
	for d, b := range out {
		x.count(d, b)
	}
	// Each rank knows its row of the length matrix (what it sends) and
	// learns its column (what it receives) from one int64 per rank pair;
	// nobody holds the whole matrix.
	row, col := make([]int64, n), make([]int64, n)
	for d, b := range out {
		row[d] = int64(len(b.b))
	}
	w := x.r.World()
	if err := coll.Exchange(ctx, w, coll.Private(col), coll.Private(row), 1); err != nil {
		return nil, err
	}
	sendCounts, recvCounts := make([]int, n), make([]int, n)
	for q := range n {
		sendCounts[q], recvCounts[q] = int(row[q]), int(col[q])
	}
	recv := make([]byte, sum(recvCounts))
	if err := coll.AlltoallV(ctx, w, coll.Private(recv), coll.Private(send), sendCounts, recvCounts); err != nil {
		return nil, err
	}
	return x.split(recv, recvCounts, true, &own)
}

// lengths allgathers one length per rank.
func (x *xfer[K, V]) lengths(ctx context.Context, mine int) ([]int, error) {
	all, err := x.rows(ctx, []int64{int64(mine)})
	if err != nil {
		return nil, err
	}
	out := make([]int, len(all))
	for i, v := range all {
		out[i] = int(v)
	}
	return out, nil
}

// rows allgathers one row of int64 per rank into a matrix (rank-major).
func (x *xfer[K, V]) rows(ctx context.Context, row []int64) ([]int64, error) {
	all := make([]int64, len(row)*x.r.N())
	if err := coll.Allgather(ctx, x.r.World(), coll.Private(all), coll.Private(row), len(row)); err != nil {
		return nil, err
	}
	return all, nil
}

// split decodes the consecutive per-source buffers of recv; with own,
// this rank's buffer is passed over and own is its run.
func (x *xfer[K, V]) split(recv []byte, counts []int, indexed bool, own *reduce.Run[K, V]) ([]reduce.Run[K, V], error) {
	runs := make([]reduce.Run[K, V], len(counts))
	pos := 0
	for src, c := range counts {
		if src != x.r.ID() {
			x.st.BytesReceived += int64(c)
		} else if own != nil {
			runs[src] = *own
			pos += c
			continue
		}
		e, err := x.decode(recv[pos:pos+c], src, indexed)
		if err != nil {
			return nil, err
		}
		runs[src] = e
		pos += c
	}
	return runs, nil
}

// elementwise moves every record with its own put into the destination's
// receive window, a symmetric region in the segment. The bytes a rank
// receives are its senders' records in sender order (a stream whose layout
// every rank knows from the length matrix); the window holds a slice of
// that stream at a time, so a transfer of any size moves in rounds through
// a window the segment can hold: round k carries stream bytes [kW, (k+1)W)
// to every destination, into half k%2 of a double-buffered window of 2W
// bytes. A record that straddles a round's end is put in two pieces. dests
// limits the destinations (nil: all).
func (x *xfer[K, V]) elementwise(ctx context.Context, out []buf, dests []int) ([]reduce.Run[K, V], error) {
	r := x.r
	n, me := r.N(), r.ID()
	// Records without the index: element transfers decode sequentially.
	recs := make([][]int, n) // record boundaries per destination
	row := make([]int64, n)
	for d, b := range out {
		body := b.b
		if x.variable() && len(body) >= 8 {
			body = body[:len(body)-8*(b.n+1)]
		}
		out[d].b = body
		row[d] = int64(len(body))
		recs[d] = x.boundaries(body)
		if dests == nil || slices.Contains(dests, d) {
			x.count(d, out[d])
		}
	}
	matrix, err := x.rows(ctx, row)
	if err != nil {
		return nil, err
	}
	var maxIn int64
	for d := range n {
		var in int64
		for s := range n {
			in += matrix[s*n+d]
		}
		maxIn = max(maxIn, in)
	}
	reg, window, err := allocWindow(ctx, r, maxIn)
	if err != nil {
		return nil, err
	}
	var recv []byte
	receives := dests == nil || slices.Contains(dests, me)
	if receives {
		var total int64
		for s := range n {
			total += matrix[s*n+me]
		}
		recv = make([]byte, total)
	}
	// Where this rank's records to d start in d's stream, and how far the
	// puts have got through them.
	start := make([]int64, n)
	next := make([]int, n) // per destination: the next record to put
	for d := range n {
		for s := range me {
			start[d] += matrix[s*n+d]
		}
	}
	rounds := (maxIn + window - 1) / window
	h := &pgas.Handle{}
	for k := range rounds {
		lo, hi := k*window, (k+1)*window // this round's slice of every stream
		half := reg.Off + (k%2)*window
		for d := range n {
			if dests != nil && !slices.Contains(dests, d) {
				continue
			}
			body, rb := out[d].b, recs[d]
			for next[d]+1 < len(rb) {
				i := next[d]
				a, b := start[d]+int64(rb[i]), start[d]+int64(rb[i+1])
				if a >= hi {
					break
				}
				pa, pb := max(a, lo), min(b, hi)
				r.PutBytesAsync(ctx, d, half+pa-lo, body[pa-start[d]:pb-start[d]], h)
				if b > hi {
					break // the rest of this record goes next round
				}
				next[d]++
			}
		}
		if err := h.Wait(ctx); err != nil {
			return nil, err
		}
		if err := r.Barrier(ctx); err != nil {
			return nil, err
		}
		if receives && lo < int64(len(recv)) {
			e := min(hi, int64(len(recv)))
			copy(recv[lo:e], r.Segment()[half:half+e-lo])
		}
	}
	var runs []reduce.Run[K, V]
	if receives {
		counts := make([]int, n)
		for s := range n {
			counts[s] = int(matrix[s*n+me])
		}
		runs, err = x.split(recv, counts, false, nil)
		if err != nil {
			return nil, err
		}
	}
	if err := r.AllFree(ctx, reg); err != nil {
		return nil, err
	}
	return runs, nil
}

// windowShare is the part of a segment a receive window may take: each of
// its two halves an eighth, as the collectives' staging area.
const windowShare = 8

// allocWindow allocates a double-buffered receive window for streams of
// at most maxIn bytes and returns it with the size of one half: maxIn
// rounded up if that fits in an eighth of a segment, else an eighth, or
// less if the segment cannot hold that, down to 4 KiB. It is collective,
// and every rank gets the same answer.
func allocWindow(ctx context.Context, r *pgas.Rank, maxIn int64) (pgas.Region, int64, error) {
	const minWindow = 4096
	w := min(max(maxIn, 8), max(minWindow, r.Config().SegmentBytes/windowShare))
	w = (w + 7) &^ 7
	for {
		reg, err := r.AllAlloc(ctx, 2*w)
		if err == nil {
			return reg, w, nil
		}
		var oom *pgas.OutOfMemoryError
		if !errors.As(err, &oom) || w <= minWindow {
			return pgas.Region{}, 0, fmt.Errorf("reduce: receive window of %d bytes: %w", 2*w, err)
		}
		w = max(minWindow, w/2&^7)
	}
}

// boundaries returns the start of every record in body and its end.
func (x *xfer[K, V]) boundaries(body []byte) []int {
	b := []int{0}
	for pos := 0; pos < len(body); {
		_, n, err := x.kc.Decode(body[pos:])
		if err != nil {
			panic(fmt.Sprintf("reduce: re-reading own record: %v", err))
		}
		pos += n
		_, n, err = x.vc.Decode(body[pos:])
		if err != nil {
			panic(fmt.Sprintf("reduce: re-reading own record: %v", err))
		}
		pos += n
		if x.all {
			pos += tagBytes
		}
		b = append(b, pos)
	}
	return b
}

// tagBytes is the size of an encoded order tag.
const tagBytes = 24

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
