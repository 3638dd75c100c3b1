package kernels

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// ISParams describes an NPB-IS-style integer sort: Keys keys, uniform in
// [0, MaxKey), generated from Seed. Key i (a global index) is the same
// whatever the rank count, so the sorted result is too.
type ISParams struct {
	Keys   int
	MaxKey int32
	Seed   uint64
}

func (p ISParams) check() {
	if p.Keys < 0 || p.MaxKey < 1 {
		panic(fmt.Sprintf("kernels: IS parameters %+v: need Keys >= 0 and MaxKey >= 1", p))
	}
}

// Key returns key i.
func (p ISParams) Key(i int) int32 {
	return int32(mix64(p.Seed*0x9e3779b97f4a7c15^uint64(i)) % uint64(p.MaxKey))
}

// KeyRange returns the indices [lo, hi) of the keys rank generates out of
// ranks: a block of Keys/ranks, the first Keys%ranks ranks one more.
func (p ISParams) KeyRange(rank, ranks int) (lo, hi int) {
	q, rem := p.Keys/ranks, p.Keys%ranks
	lo = rank*q + min(rank, rem)
	hi = lo + q
	if rank < rem {
		hi++
	}
	return lo, hi
}

// RankKeys returns the keys rank generates out of ranks.
func (p ISParams) RankKeys(rank, ranks int) []int32 {
	p.check()
	lo, hi := p.KeyRange(rank, ranks)
	keys := make([]int32, hi-lo)
	for i := range keys {
		keys[i] = p.Key(lo + i)
	}
	return keys
}

// Bucket returns the first key of rank j's range out of ranks: rank j owns
// keys in [Bucket(j), Bucket(j+1)), that is [j*MaxKey/ranks,
// (j+1)*MaxKey/ranks).
func (p ISParams) Bucket(j, ranks int) int32 {
	return int32(int64(j) * int64(p.MaxKey) / int64(ranks))
}

// Owner returns the rank whose range holds key k.
func (p ISParams) Owner(k int32, ranks int) int {
	j := int(int64(k) * int64(ranks) / int64(p.MaxKey))
	for j+1 < ranks && p.Bucket(j+1, ranks) <= k {
		j++
	}
	for j > 0 && p.Bucket(j, ranks) > k {
		j--
	}
	return j
}

// Sequential returns all Keys keys, sorted: the oracle.
func (p ISParams) Sequential() []int32 {
	all := p.RankKeys(0, 1)
	slices.Sort(all)
	return all
}

// Verify checks rank's result out of ranks against the oracle sorted (from
// Sequential): every key in the rank's range, sorted, and equal to the
// oracle's keys in that range (which start at the number of keys below
// it). Together the ranks' checks make the multiset over all ranks equal
// to the oracle's.
func (p ISParams) Verify(rank, ranks int, got, sorted []int32) error {
	lo, hi := p.Bucket(rank, ranks), p.Bucket(rank+1, ranks)
	for i, k := range got {
		if k < lo || k >= hi {
			return fmt.Errorf("IS rank %d: key %d = %d outside its range [%d,%d)", rank, i, k, lo, hi)
		}
		if i > 0 && k < got[i-1] {
			return fmt.Errorf("IS rank %d: keys %d and %d = %d, %d out of order", rank, i-1, i, got[i-1], k)
		}
	}
	from := sort.Search(len(sorted), func(i int) bool { return sorted[i] >= lo })
	to := sort.Search(len(sorted), func(i int) bool { return sorted[i] >= hi })
	want := sorted[from:to]
	if len(got) != len(want) {
		return fmt.Errorf("IS rank %d: %d keys in [%d,%d); want %d", rank, len(got), lo, hi, len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("IS rank %d: key %d = %d; want %d (global position %d)", rank, i, got[i], want[i], from+i)
		}
	}
	return nil
}

// isPack buckets keys by owner: it returns the count of keys for each rank
// and the keys packed in rank order (stable within a rank).
func (p ISParams) isPack(keys []int32, ranks int) (counts []int, send []int32) {
	counts = make([]int, ranks)
	dest := make([]int32, len(keys))
	for i, k := range keys {
		d := p.Owner(k, ranks)
		dest[i] = int32(d)
		counts[d]++
	}
	pos := make([]int, ranks)
	for j := 1; j < ranks; j++ {
		pos[j] = pos[j-1] + counts[j-1]
	}
	send = make([]int32, len(keys))
	for i, k := range keys {
		d := dest[i]
		send[pos[d]] = k
		pos[d]++
	}
	return counts, send
}

// IntSortExtended sorts the keys of all ranks by range: keys is this
// rank's share (RankKeys), which is left unchanged, and the result is the
// keys of this rank's range, [Bucket(me), Bucket(me+1)), sorted. The count
// rows are exchanged with one Allgather and the keys with one
// ExchangeVMerge, private source to private destination, packed by source
// (seeds/002 listing 3.18).
func IntSortExtended(ctx context.Context, r *pgas.Rank, p ISParams, keys []int32, opts ...coll.Option) ([]int32, error) {
	p.check()
	w, T, me := r.World(), r.N(), r.ID()
	row, send := p.isPack(keys, T)
	counts := make([]int, T*T) // row i: what rank i sends to each rank
	if err := coll.Allgather(ctx, w, coll.Private(counts), coll.Private(row), T, opts...); err != nil {
		return nil, err
	}
	n := 0
	for i := range T {
		n += counts[i*T+me]
	}
	recv := make([]int32, n)
	if err := coll.ExchangeVMerge(ctx, w, coll.Private(recv), coll.Private(send), counts, nil, nil, opts...); err != nil {
		return nil, err
	}
	slices.Sort(recv)
	return recv, nil
}

// IntSortStandard computes the same as IntSortExtended with the standard
// library (seeds/002 listing 3.17): every rank publishes its packed keys in
// its block of a shared send buffer and its (count, displacement) per
// receiver in its block of a shared info array; after a barrier each rank
// reads, from every source, its info entry and then its keys with
// GetRange (a plain copy from its own block), and a barrier ends the
// exchange.
func IntSortStandard(ctx context.Context, r *pgas.Rank, p ISParams, keys []int32) ([]int32, error) {
	p.check()
	T, me := r.N(), r.ID()
	row, send := p.isPack(keys, T)
	var blk int64 // the largest share, known to every rank from p
	for q := range T {
		lo, hi := p.KeyRange(q, T)
		blk = max(blk, int64(hi-lo))
	}
	blk = max(blk, 1)
	tKeys, err := pgas.AllAllocArray[int32](ctx, r, blk*int64(T), blk)
	if err != nil {
		return nil, err
	}
	ib := int64(2 * T)
	tInfo, err := pgas.AllAllocArray[int](ctx, r, ib*int64(T), ib)
	if err != nil {
		return nil, err
	}
	copy(tKeys.Local(), send) // privatised: my block
	info := tInfo.Local()
	displ := 0
	for j := range T {
		info[2*j], info[2*j+1] = row[j], displ
		displ += row[j]
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	infos := make([]int, 2*T) // (count, displ) of my keys at each source
	for i := range T {
		if i == me {
			copy(infos[2*i:2*i+2], info[2*me:2*me+2])
			continue
		}
		if err := tInfo.GetRange(ctx, infos[2*i:2*i+2], int64(i)*ib+int64(2*me)); err != nil {
			return nil, err
		}
	}
	n := 0
	for i := range T {
		n += infos[2*i]
	}
	recv := make([]int32, n)
	at := 0
	for i := range T {
		cnt, d := infos[2*i], infos[2*i+1]
		if i == me {
			copy(recv[at:at+cnt], tKeys.Local()[d:d+cnt])
		} else if err := tKeys.GetRange(ctx, recv[at:at+cnt], int64(i)*blk+int64(d)); err != nil {
			return nil, err
		}
		at += cnt
	}
	// AllFree's barrier is the closing barrier: nobody reuses the
	// buffers until every rank has read its keys.
	if err := tKeys.AllFree(ctx); err != nil {
		return nil, err
	}
	if err := tInfo.AllFree(ctx); err != nil {
		return nil, err
	}
	slices.Sort(recv)
	return recv, nil
}
