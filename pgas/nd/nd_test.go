package nd_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/nd"
)

func TestRect(t *testing.T) {
	a := nd.Box(nd.Point{0, 2}, nd.Point{4, 5})
	b := nd.Box(nd.Point{2, 0}, nd.Point{6, 3})
	if got, want := a.Intersect(b), nd.Box(nd.Point{2, 2}, nd.Point{4, 3}); !got.Equal(want) {
		t.Errorf("Intersect = %v, want %v", got, want)
	}
	if a.Size() != 12 || a.Intersect(b).Size() != 2 || !slices.Equal(a.Shape(), nd.Point{4, 3}) {
		t.Errorf("Size %d, %d, Shape %v", a.Size(), a.Intersect(b).Size(), a.Shape())
	}
	if got := a.Translate(nd.Point{-1, 10}); !got.Equal(nd.Box(nd.Point{-1, 12}, nd.Point{3, 15})) || !a.Equal(nd.Box(nd.Point{0, 2}, nd.Point{4, 5})) {
		t.Errorf("Translate = %v (receiver now %v)", got, a)
	}
	if got := a.Grow(1); !got.Equal(nd.Box(nd.Point{-1, 1}, nd.Point{5, 6})) || !got.Shrink(1).Equal(a) {
		t.Errorf("Grow(1) = %v, Shrink back %v", got, got.Shrink(1))
	}
	if !a.Shrink(2).Empty() || a.Shrink(2).Size() != 0 || !a.Shrink(2).Equal(nd.Box(nd.Point{5, 5}, nd.Point{0, 0})) {
		t.Errorf("Shrink(2) of a 4x3 box: %v, size %d; want empty", a.Shrink(2), a.Shrink(2).Size())
	}
	if !a.Contains(nd.Point{3, 4}) || a.Contains(nd.Point{4, 4}) || a.Contains(nd.Point{0, 1}) {
		t.Error("Contains is wrong at the edges")
	}
	if !a.Covers(a.Intersect(b)) || a.Covers(b) || !a.Covers(a.Shrink(5)) {
		t.Error("Covers")
	}
	var pts []string
	for p := range nd.Box(nd.Point{1, 0}, nd.Point{3, 2}).Points() {
		pts = append(pts, fmt.Sprint(p))
	}
	if got := fmt.Sprint(pts); got != "[[1 0] [1 1] [2 0] [2 1]]" {
		t.Errorf("Points = %s; want row-major", got)
	}
	for range a.Shrink(2).Points() {
		t.Error("an empty box yielded a point")
	}
	if s := a.String(); s != "[0,4)x[2,5)" {
		t.Errorf("String = %q", s)
	}
	if e := nd.Extent(3, 4); !e.Equal(nd.Box(nd.Point{0, 0}, nd.Point{3, 4})) {
		t.Errorf("Extent = %v", e)
	}
}

// oracle is the layout of seeds/004 built the long way: tiles enumerated
// in row-major order and dealt round robin, each filled in row-major
// order over its whole (padded) box.
type oracleElem struct {
	owner       int
	offset      int64
	tile        nd.Point
	phase       int64
	node, nodeO int
}

func buildOracle(dims, blocks nd.Point, ranks, perNode int) map[string]oracleElem {
	n := len(dims)
	tiles := make(nd.Point, n)
	for k := range dims {
		tiles[k] = (dims[k] + blocks[k] - 1) / blocks[k]
	}
	if perNode == 0 {
		perNode = ranks
	}
	out := map[string]oracleElem{}
	next := make([]int64, ranks) // next free offset per rank
	var li int64
	for t := range nd.Extent(tiles...).Points() {
		owner := int(li % int64(ranks))
		li++
		tb := make(nd.Point, n)
		te := make(nd.Point, n)
		for k := range t {
			tb[k], te[k] = t[k]*blocks[k], t[k]*blocks[k]+blocks[k]
		}
		var ph int64
		for v := range nd.Box(tb, te).Points() {
			in := true
			for k := range v {
				in = in && v[k] < dims[k]
			}
			if in {
				out[fmt.Sprint(v)] = oracleElem{owner, next[owner] + ph, append(nd.Point(nil), t...), ph, owner / perNode, owner % perNode}
			}
			ph++
		}
		next[owner] += ph
	}
	return out
}

type layoutCase struct {
	dims, blocks   nd.Point
	ranks, perNode int
}

func randomLayout(rng *rand.Rand) layoutCase {
	n := 1 + rng.IntN(3)
	c := layoutCase{dims: make(nd.Point, n), blocks: make(nd.Point, n), ranks: 1 + rng.IntN(9)}
	for k := range n {
		c.dims[k] = 1 + rng.Int64N(13)
		c.blocks[k] = 1 + rng.Int64N(6)
	}
	c.perNode = rng.IntN(c.ranks + 1)
	return c
}

func TestLayoutOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		c := randomLayout(rng)
		l, err := nd.NewLayout(c.dims, c.blocks, c.ranks, c.perNode)
		if err != nil {
			t.Fatal(err)
		}
		want := buildOracle(c.dims, c.blocks, c.ranks, c.perNode)
		seen := map[[2]int64]bool{}
		for v := range l.Extent().Points() {
			w := want[fmt.Sprint(v)]
			got := oracleElem{l.Owner(v), l.LocalOffset(v), l.Tile(v), l.Phase(v), l.Node(v), l.NodeOffset(v)}
			if fmt.Sprint(got) != fmt.Sprint(w) {
				t.Fatalf("%+v: element %v: %+v, want %+v", c, v, got, w)
			}
			if got.offset >= l.LocalElems() || seen[[2]int64{int64(got.owner), got.offset}] {
				t.Fatalf("%+v: element %v at offset %d of rank %d: beyond %d or taken", c, v, got.offset, got.owner, l.LocalElems())
			}
			seen[[2]int64{int64(got.owner), got.offset}] = true
			if !l.TileBox(got.tile).Contains(v) || l.TileOwner(got.tile) != got.owner || !slices.Equal(l.TileAt(l.TileIndex(got.tile)), got.tile) {
				t.Fatalf("%+v: element %v: tile %v box %v owner %d", c, v, got.tile, l.TileBox(got.tile), l.TileOwner(got.tile))
			}
		}
		var tiles int64
		for p := range c.ranks {
			tiles += l.TilesOf(p)
		}
		if tiles != l.NumTiles() {
			t.Fatalf("%+v: TilesOf sums to %d, want %d", c, tiles, l.NumTiles())
		}
	}
}

// TestSplitOracle: Split's pieces are exactly a rank's points of the box,
// once each, and every point's reference is in the piece's class, owner
// included; no piece straddles a change of owner.
func TestSplitOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 400 {
		c := randomLayout(rng)
		l, err := nd.NewLayout(c.dims, c.blocks, c.ranks, c.perNode)
		if err != nil {
			t.Fatal(err)
		}
		n := len(c.dims)
		box := nd.Rect{Lo: make(nd.Point, n), Hi: make(nd.Point, n)}
		k := make(nd.Point, n)
		for i := range n {
			box.Lo[i] = rng.Int64N(c.dims[i]+2) - 1
			box.Hi[i] = box.Lo[i] + rng.Int64N(c.dims[i]+2)
			k[i] = rng.Int64N(2*c.blocks[i]+3) - c.blocks[i] - 1
		}
		per := c.perNode
		if per == 0 {
			per = c.ranks
		}
		for rank := range c.ranks {
			covered := map[string]bool{}
			for _, p := range l.Split(rank, box, k) {
				for v := range p.Box.Points() {
					key := fmt.Sprint(v)
					if covered[key] {
						t.Fatalf("%+v box %v k %v rank %d: %v in two pieces", c, box, k, rank, v)
					}
					covered[key] = true
					if !box.Contains(v) || l.Owner(v) != rank {
						t.Fatalf("%+v box %v k %v rank %d: piece %v holds %v (owner %d)", c, box, k, rank, p.Box, v, l.Owner(v))
					}
					w := slices.Clone(v)
					for i := range w {
						w[i] += k[i]
					}
					class, owner := nd.Outside, -1
					if l.Extent().Contains(w) {
						owner = l.Owner(w)
						switch {
						case owner == rank:
							class = nd.Private
						case owner/per == rank/per:
							class = nd.OnNode
						default:
							class = nd.Remote
						}
					}
					if class != p.Class || owner != p.Owner {
						t.Fatalf("%+v box %v k %v rank %d: %v in piece %v (%v, rank %d); its reference %v is %v, rank %d", c, box, k, rank, v, p.Box, p.Class, p.Owner, w, class, owner)
					}
				}
			}
			for v := range box.Intersect(l.Extent()).Points() {
				if l.Owner(v) == rank && !covered[fmt.Sprint(v)] {
					t.Fatalf("%+v box %v k %v rank %d: %v in no piece", c, box, k, rank, v)
				}
			}
		}
	}
}

// TestSeedExample is seeds/004's worked example (§3, Figs. 3, 5, 6):
// shared [5][5] int A[20][20] on 8 threads, 4 a node, the loop over
// v0 < 19 with affinity &A[v0][v1] reading A[v0+1][v1] (k = [1, 0]).
// Cut_0 = 5 - 1 = 4: the first four rows of each tile read their own
// tile; the fifth reads the tile below, 4 tiles on (16 tiles, 4 a row),
// which is 4 ranks on: the other node.
func TestSeedExample(t *testing.T) {
	l, err := nd.NewLayout(nd.Point{20, 20}, nd.Point{5, 5}, 8, 4)
	if err != nil {
		t.Fatal(err)
	}
	box := nd.Box(nd.Point{0, 0}, nd.Point{19, 20})
	for rank := range 8 {
		var got []string
		for _, p := range l.Split(rank, box, nd.Point{1, 0}) {
			got = append(got, fmt.Sprintf("%v %v %d", p.Box, p.Class, p.Owner))
		}
		// Rank p holds tiles p and p+8: tile rows p/4 and p/4+2, column p%4.
		var want []string
		for _, tr := range []int64{int64(rank / 4), int64(rank/4 + 2)} {
			c0, c1 := int64(rank%4)*5, int64(rank%4)*5+5
			want = append(want, fmt.Sprintf("[%d,%d)x[%d,%d) private %d", tr*5, tr*5+4, c0, c1, rank))
			if tr < 3 {
				want = append(want, fmt.Sprintf("[%d,%d)x[%d,%d) remote %d", tr*5+4, tr*5+5, c0, c1, (rank+4)%8))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rank %d: pieces %v\nwant %v", rank, got, want)
		}
	}
	// With one rank a node, the same cut; with 8 on one node every
	// reference is on the node.
	l1, _ := nd.NewLayout(nd.Point{20, 20}, nd.Point{5, 5}, 8, 0)
	for _, p := range l1.Split(0, box, nd.Point{1, 0}) {
		if p.Class == nd.Remote {
			t.Errorf("one node: piece %v is remote", p.Box)
		}
	}
}

func TestNewLayoutErrors(t *testing.T) {
	for _, c := range []layoutCase{
		{nd.Point{}, nd.Point{}, 2, 0},
		{nd.Point{4}, nd.Point{2, 2}, 2, 0},
		{nd.Point{4, 0}, nd.Point{2, 2}, 2, 0},
		{nd.Point{4, 4}, nd.Point{2, -1}, 2, 0},
		{nd.Point{4}, nd.Point{2}, 0, 0},
		{nd.Point{4}, nd.Point{2}, 2, -1},
		{nd.Point{1 << 30, 1 << 30}, nd.Point{1, 1}, 2, 0},
	} {
		if _, err := nd.NewLayout(c.dims, c.blocks, c.ranks, c.perNode); err == nil {
			t.Errorf("NewLayout(%+v) succeeded", c)
		}
	}
}

// TestTiledArray: in a job of 4 ranks on 2 nodes, each rank writes its
// own elements through At, then every rank reads every element with Get
// and writes a band of other ranks' elements with Put; after a barrier
// the owners see them. With and without the cache.
func TestTiledArray(t *testing.T) {
	for _, cc := range []pgas.CacheConfig{{}, {Lines: 4, LineBytes: 64}} {
		t.Run("cache="+cc.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cfg := pgas.Config{Ranks: 4, RanksPerNode: 2, SegmentBytes: 1 << 20, Cache: cc}
			err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
				dims := nd.Point{7, 5, 6}
				a, err := nd.AllAlloc[int64](ctx, r, dims, nd.Point{3, 2, 4})
				if err != nil {
					return err
				}
				l := a.Layout()
				val := func(v nd.Point, round int64) int64 { return ((v[0]*10+v[1])*10+v[2])*10 + round }
				for v := range l.Extent().Points() {
					if l.Owner(v) == r.ID() {
						*a.At(v) = val(v, 1)
					}
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				for v := range l.Extent().Points() {
					got, err := a.Get(ctx, v)
					if err != nil {
						return err
					}
					if got != val(v, 1) {
						return fmt.Errorf("Get %v = %d, want %d", v, got, val(v, 1))
					}
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				// Rank p rewrites plane v0 = p (and p+4) of the array.
				for v := range l.Extent().Points() {
					if v[0]%4 == int64(r.ID()) {
						if err := a.Put(ctx, v, val(v, 2)); err != nil {
							return err
						}
					}
				}
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				for _, tile := range l.TilesOwnedBy(r.ID()) {
					tb := a.Tile(tile)
					box := l.TileBox(tile)
					for v := range box.Points() {
						if got := tb[l.Phase(v)]; got != val(v, 2) {
							return fmt.Errorf("tile %v element %v = %d after the puts, want %d", tile, v, got, val(v, 2))
						}
					}
				}
				return a.AllFree(ctx)
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
