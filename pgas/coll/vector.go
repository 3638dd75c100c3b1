package coll

import (
	"context"
	"fmt"
	"github.com/pgasmr/pgasmr/pgas"
)

// Vector variants. Counts are in elements; displacements are element
// offsets. Counts and displacement arrays are ordinary private slices that
// every member passes with the same values (UPC's privparam form, with no
// hidden remote reads; Config.Check compares them across members). A
// displacement for a private buffer is an offset into the owning member's
// slice; for a shared buffer it is relative to the Buf's start (absolute
// within the view that starts there; use coll.Local... helpers to build
// block-local ones). A nil displacement slice means "packed": the natural
// consecutive layout each function documents.

func prefix(counts []int) []int {
	d := make([]int, len(counts))
	s := 0
	for i, c := range counts {
		d[i] = s
		s += c
	}
	return d
}

func sum(counts []int) int {
	s := 0
	for _, c := range counts {
		s += c
	}
	return s
}

func checkCounts(name, what string, counts []int, want int) {
	if len(counts) != want {
		panic(fmt.Sprintf("coll: %s: %s has %d entries, want %d", name, what, len(counts), want))
	}
	for i, c := range counts {
		if c < 0 {
			panic(fmt.Sprintf("coll: %s: %s[%d] = %d is negative", name, what, i, c))
		}
	}
}

func checkDispls(name, what string, d []int, want int) {
	if d != nil && len(d) != want {
		panic(fmt.Sprintf("coll: %s: %s has %d entries, want %d", name, what, len(d), want))
	}
}

// srcAt returns where slot j's data starts for member tid in buffer b: in a
// private buffer an offset into tid's slice, in a shared buffer an element
// index.
func (c *call[T]) vloc(b uint8, tid int, off int) loc {
	if c.bufs[b].isPr {
		return loc{buf: b, rank: c.t.RankOf(tid), idx: int64(off)}
	}
	return loc{buf: b, idx: c.bufs[b].at + int64(off)}
}

// AllgatherV gathers counts[m] elements from every member m onto every
// member (upc_all_gather_all_v and its forms; UPC-MR's ApplyReduce
// collective). Member m's contribution starts at sdispls[m] of src (nil:
// private sources start at 0, shared ones are packed in slot order from
// the Buf's start). On member k the contributions are laid out
// consecutively in slot order starting at ddispls[k] of dst (nil: private
// destinations start at 0; shared ones give member k the region starting at
// k*sum(counts)). counts and the displacements have one entry per slot.
func AllgatherV[T any](ctx context.Context, t *pgas.Team, dst, src Buf[T], counts, sdispls, ddispls []int, opts ...Option) error {
	needValid("AllgatherV", dst, src)
	c := newCall(t, "AllgatherV", dst, src, opts)
	ns := c.nslots()
	checkCounts("AllgatherV", "counts", counts, ns)
	checkDispls("AllgatherV", "sdispls", sdispls, ns)
	checkDispls("AllgatherV", "ddispls", ddispls, ns)
	total := sum(counts)
	packed := prefix(counts)
	sd := func(slot int) int {
		if sdispls != nil {
			return sdispls[slot]
		}
		if src.isPr {
			return 0
		}
		return packed[slot]
	}
	dd := func(slot int) int {
		if ddispls != nil {
			return ddispls[slot]
		}
		if dst.isPr {
			return 0
		}
		return slot * total
	}
	sig := func() string { return fmt.Sprintf("counts=%v sdispls=%v ddispls=%v", counts, sdispls, ddispls) }
	return c.flat(ctx, sig, false, func(add func(move)) {
		for m := range c.t.Size() {
			sm := c.slot(m)
			for k := range c.t.Size() {
				add(move{c.vloc(bufSrc, m, sd(sm)), c.vloc(bufDst, k, dd(c.slot(k))+packed[sm]), int64(counts[sm])})
			}
		}
	})
}
