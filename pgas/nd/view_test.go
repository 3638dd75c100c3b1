package nd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

// tag is the value the source grids hold at byte address addr of rank
// p's segment, so that a copied value says where it came from.
func tag(p int, addr int64) float64 { return float64(p)*1e9 + float64(addr) }

// randomView is a view of g's box on rank p, constricted, translated,
// transposed or sliced at random; it keeps at least one point when it
// can.
func randomView(rng *rand.Rand, g *Grid[float64], p int) View[float64] {
	v := g.View(p)
	for range rng.IntN(3) {
		switch rng.IntN(4) {
		case 0:
			d := v.Domain()
			box := Box(d.Lo, d.Hi)
			for k := range box.Lo {
				box.Lo[k] += rng.Int64N(2)
				box.Hi[k] -= rng.Int64N(2)
			}
			v = v.Constrict(box)
		case 1:
			t := make(Point, v.Domain().Dims())
			for k := range t {
				t[k] = rng.Int64N(3) - 1
			}
			v = v.Translate(t)
		case 2:
			v = v.Transpose(rng.Perm(v.Domain().Dims())...)
		case 3:
			if d := v.Domain(); d.Dims() > 1 && !d.Empty() {
				k := rng.IntN(d.Dims())
				v = v.Slice(k, d.Lo[k]+rng.Int64N(d.Hi[k]-d.Lo[k]))
			}
		}
	}
	return v
}

// TestCopyFrom: on 3 ranks, each rank copies (CopyFrom, or CopyFromAsync
// and Wait, in turn) between random views of
// a source grid (every element tagged with its rank and address) and a
// destination grid, of any owners (its own, another's, two others'); the
// views are the same dimension count (both whole grids or both slices).
// After a barrier every destination element in a copy holds the tag of
// the source element at the same point, and the copies counted one
// message per rank pair.
func TestCopyFrom(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	const ranks = 3
	err := pgas.Run(ctx, pgas.Config{Ranks: ranks, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		doms := []Rect{Box(Point{0, 0, 0}, Point{4, 5, 6}), Box(Point{2, 1, 3}, Point{7, 6, 8}), Box(Point{-1, 2, 0}, Point{3, 9, 5})}
		src, err := AllAllocGrid[float64](ctx, r, doms)
		if err != nil {
			return err
		}
		crossCopies := 0 // this rank's copies that moved points between two ranks
		for round := range 30 {
			dst, err := AllAllocGrid[float64](ctx, r, doms)
			if err != nil {
				return err
			}
			me := r.ID()
			sv := src.View(me)
			for p := range sv.Domain().Points() {
				*sv.At(p) = tag(me, sv.addr(p))
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			// Rank `me` writes only into dst boxes of rank (me+round)%ranks,
			// one copy, so no two copies write the same box.
			rng := rand.New(rand.NewPCG(uint64(me), uint64(round)))
			from, to := rng.IntN(ranks), (me+round)%ranks
			var sview, dview View[float64]
			for {
				sview, dview = randomView(rng, src, from), randomView(rng, dst, to)
				if sview.Domain().Dims() == dview.Domain().Dims() {
					break
				}
			}
			before := r.Stats()
			if round%2 == 0 {
				err = dview.CopyFrom(ctx, sview)
			} else { // the async form, waited at once
				err = dview.CopyFromAsync(ctx, sview).Wait(ctx)
			}
			if err != nil {
				return err
			}
			after := r.Stats()
			in := dview.Domain().Intersect(sview.Domain())
			if !in.Empty() && from != to {
				crossCopies++
			}
			msgs := 0
			if !in.Empty() {
				msgs = map[bool]int{false: 0, true: 1}[from != me] + map[bool]int{false: 0, true: 1}[to != me]
			}
			if got := after.Messages() - before.Messages(); got != int64(msgs) {
				return fmt.Errorf("round %d: a copy of %v from rank %d to rank %d counted %d messages, want %d", round, in, from, to, got, msgs)
			}
			// Each rank checks its own box against every rank's copy,
			// replayed from the same seeds.
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			want := map[int64]float64{}
			for w := range ranks {
				rng := rand.New(rand.NewPCG(uint64(w), uint64(round)))
				from, to := rng.IntN(ranks), (w+round)%ranks
				var sv, dv View[float64]
				for {
					sv, dv = randomView(rng, src, from), randomView(rng, dst, to)
					if sv.Domain().Dims() == dv.Domain().Dims() {
						break
					}
				}
				if to != me {
					continue
				}
				for p := range dv.Domain().Intersect(sv.Domain()).Points() {
					want[dv.addr(p)] = tag(from, sv.addr(p))
				}
			}
			dl := dst.View(me)
			for p := range dl.Domain().Points() {
				got := *dl.At(p)
				if w, ok := want[dl.addr(p)]; ok && got != w || !ok && got != 0 {
					return fmt.Errorf("round %d: rank %d's destination at %v holds %v, want %v (copied: %v)", round, me, p, got, w, ok)
				}
			}
			if err := dst.AllFree(ctx); err != nil {
				return err
			}
		}
		if crossCopies < 8 {
			return fmt.Errorf("only %d of 30 copies moved points between ranks: the test proves little", crossCopies)
		}
		return src.AllFree(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestViewOps: Constrict, Translate, Slice and Transpose address the
// elements they should, checked through At and Get against the row-major
// address of the original point.
func TestViewOps(t *testing.T) {
	ctx := t.Context()
	err := pgas.Run(ctx, pgas.Config{Ranks: 2, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
		dom := Box(Point{1, 2, 3}, Point{4, 6, 8})
		g, err := AllAllocGrid[float64](ctx, r, []Rect{dom, dom})
		if err != nil {
			return err
		}
		val := func(p Point) float64 { return float64(p[0]*100 + p[1]*10 + p[2]) }
		v := g.View(r.ID())
		for p := range dom.Points() {
			*v.At(p) = val(p)
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		o := g.View(1 - r.ID()) // the other rank's: through Get
		check := func(name string, w View[float64], orig func(Point) Point) error {
			for p := range w.Domain().Points() {
				got, err := w.Get(ctx, p)
				if err != nil {
					return err
				}
				if want := val(orig(p)); got != want {
					return fmt.Errorf("%s: point %v = %v, want %v (the original %v)", name, p, got, want, orig(p))
				}
			}
			return nil
		}
		id := func(p Point) Point { return p }
		if err := check("constrict", o.Constrict(Box(Point{2, 0, 5}, Point{9, 4, 6})), id); err != nil {
			return err
		}
		if got := o.Constrict(Box(Point{2, 0, 5}, Point{9, 4, 6})).Domain(); !got.Equal(Box(Point{2, 2, 5}, Point{4, 4, 6})) {
			return fmt.Errorf("constricted domain %v", got)
		}
		if err := check("translate", o.Translate(Point{10, -2, 0}), func(p Point) Point { return Point{p[0] - 10, p[1] + 2, p[2]} }); err != nil {
			return err
		}
		if err := check("slice", o.Slice(1, 4), func(p Point) Point { return Point{p[0], 4, p[1]} }); err != nil {
			return err
		}
		if err := check("transpose", o.Transpose(2, 0, 1), func(p Point) Point { return Point{p[1], p[2], p[0]} }); err != nil {
			return err
		}
		if err := check("all", o.Transpose(1, 2, 0).Slice(0, 3).Translate(Point{1, 1}), func(p Point) Point { return Point{p[1] - 1, 3, p[0] - 1} }); err != nil {
			return err
		}
		return r.Barrier(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
}
