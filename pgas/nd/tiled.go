package nd

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// TiledArray is a multiblocked shared array (see the package doc) of one
// job. Like a pgas.Array it belongs to the rank that made it.
type TiledArray[T any] struct {
	lay   Layout
	r     *pgas.Rank
	arr   *pgas.Array[T] // per elements a rank, rank p's storage its block p
	per   int64          // max(LocalElems, 1)
	local []T
}

// AllAlloc allocates a tiled array of dimensions dims and blocking
// factors blocks over the job of r, its tiles dealt to the ranks
// cyclically (nodes as r's RanksPerNode). It is collective: every rank
// calls it with the same dims and blocks. Elements start zeroed.
func AllAlloc[T any](ctx context.Context, r *pgas.Rank, dims, blocks Point) (*TiledArray[T], error) {
	lay, err := NewLayout(dims, blocks, r.N(), r.Config().RanksPerNode)
	if err != nil {
		return nil, err
	}
	per := max(lay.LocalElems(), 1)
	arr, err := pgas.AllAllocArray[T](ctx, r, per*int64(r.N()), per)
	if err != nil {
		return nil, fmt.Errorf("nd: tiled array %v in tiles %v: %w", dims, blocks, err)
	}
	return &TiledArray[T]{lay: lay, r: r, arr: arr, per: per, local: arr.Local()[:lay.LocalElems()]}, nil
}

// Layout is the array's layout.
func (a *TiledArray[T]) Layout() Layout { return a.lay }

// Rank is the rank the array belongs to.
func (a *TiledArray[T]) Rank() *pgas.Rank { return a.r }

// Local is this rank's storage: its tiles in course order, each
// TileElems elements in row-major order, padding included.
func (a *TiledArray[T]) Local() []T { return a.local }

// Tile returns the storage of tile t, which this rank must hold (it
// panics otherwise): TileElems elements, row-major over the whole b_0 x
// b_1 x ... tile.
func (a *TiledArray[T]) Tile(t Point) []T {
	li := a.lay.TileIndex(t)
	if int(li%int64(a.lay.ranks)) != a.r.ID() {
		panic(fmt.Sprintf("nd: Tile %v is rank %d's, not rank %d's", t, li%int64(a.lay.ranks), a.r.ID()))
	}
	c := li / int64(a.lay.ranks)
	return a.local[c*a.lay.tileElems : (c+1)*a.lay.tileElems]
}

// At returns a pointer to element v in this rank's storage; v must be
// this rank's (it panics otherwise). It is the privatised access.
func (a *TiledArray[T]) At(v Point) *T {
	o, off := a.lay.Locate(v)
	if o != a.r.ID() {
		panic(fmt.Sprintf("nd: At %v: the element is rank %d's, not rank %d's", v, o, a.r.ID()))
	}
	return &a.local[off]
}

// global is v's index in the underlying pgas array.
func (a *TiledArray[T]) global(v Point) int64 {
	rank, off := a.lay.Locate(v)
	return int64(rank)*a.per + off
}

// Get returns element v, from this rank's storage or through the
// runtime (a remote element Get, counted, cached if the cache is on).
func (a *TiledArray[T]) Get(ctx context.Context, v Point) (T, error) {
	return a.arr.Get(ctx, a.global(v))
}

// Put stores x as element v; a remote put is complete at the next Fence
// or Barrier.
func (a *TiledArray[T]) Put(ctx context.Context, v Point, x T) error {
	return a.arr.Put(ctx, a.global(v), x)
}

// Split is Layout().Split for this rank.
func (a *TiledArray[T]) Split(box Rect, k Point) []Piece { return a.lay.Split(a.r.ID(), box, k) }

// AllFree frees the array (collective).
func (a *TiledArray[T]) AllFree(ctx context.Context) error { return a.arr.AllFree(ctx) }
