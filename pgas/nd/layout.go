package nd

import (
	"errors"
	"fmt"
	"iter"
	"slices"
)

// Layout is the arithmetic of a multiblocked array (see the package
// doc): dimensions, blocking factors, and the ranks the tiles are dealt
// to. It is a value; every method is a pure function of it.
type Layout struct {
	dims, blocks Point
	tiles        Point // D_k = ceil(d_k / b_k)
	tileElems    int64 // prod b_k
	ranks        int
	perNode      int
}

// NewLayout returns the layout of an array of dimensions dims cut into
// tiles of blocks, dealt to ranks ranks, perNode of them a node (0: all
// on one node). Every dimension and block must be positive; a block may
// exceed its dimension (one padded tile along it).
func NewLayout(dims, blocks Point, ranks, perNode int) (Layout, error) {
	var errs []error
	if len(dims) == 0 || len(dims) != len(blocks) {
		errs = append(errs, fmt.Errorf("nd: %d dimensions and %d blocking factors: want the same number, at least 1", len(dims), len(blocks)))
	}
	for k := range min(len(dims), len(blocks)) {
		if dims[k] < 1 || blocks[k] < 1 {
			errs = append(errs, fmt.Errorf("nd: dimension %d is %d with block %d: want both positive", k, dims[k], blocks[k]))
		}
	}
	if ranks < 1 {
		errs = append(errs, fmt.Errorf("nd: %d ranks, want at least 1", ranks))
	}
	if perNode < 0 {
		errs = append(errs, fmt.Errorf("nd: %d ranks per node, want 0 (one node) or more", perNode))
	}
	if len(errs) > 0 {
		return Layout{}, errors.Join(errs...)
	}
	if perNode == 0 || perNode > ranks {
		perNode = ranks
	}
	l := Layout{dims: clonePoint(dims), blocks: clonePoint(blocks), tiles: make(Point, len(dims)), tileElems: 1, ranks: ranks, perNode: perNode}
	total := int64(1)
	for k := range dims {
		l.tiles[k] = (dims[k] + blocks[k] - 1) / blocks[k]
		l.tileElems *= blocks[k]
		total *= l.tiles[k]
		if l.tileElems > 1<<40 || total > 1<<40 {
			return Layout{}, fmt.Errorf("nd: dims %v with blocks %v: too many elements", dims, blocks)
		}
	}
	return l, nil
}

// Dims returns the array's dimensions.
func (l Layout) Dims() Point { return clonePoint(l.dims) }

// Blocks returns the blocking factors.
func (l Layout) Blocks() Point { return clonePoint(l.blocks) }

// Tiles returns the number of tiles along each dimension, D_k.
func (l Layout) Tiles() Point { return clonePoint(l.tiles) }

// NumTiles is the number of tiles, prod D_k.
func (l Layout) NumTiles() int64 {
	n := int64(1)
	for _, t := range l.tiles {
		n *= t
	}
	return n
}

// TileElems is the number of elements of a tile, padding included.
func (l Layout) TileElems() int64 { return l.tileElems }

// Ranks and RanksPerNode are the ranks dealt to and their grouping.
func (l Layout) Ranks() int        { return l.ranks }
func (l Layout) RanksPerNode() int { return l.perNode }

// Extent is the box of the array's elements.
func (l Layout) Extent() Rect { return Extent(l.dims...) }

// TilesOf returns how many tiles rank holds.
func (l Layout) TilesOf(rank int) int64 {
	k, t := l.NumTiles(), int64(l.ranks)
	return max(0, (k-int64(rank)+t-1)/t)
}

// LocalElems is the storage every rank reserves: the tiles of the rank
// that holds most (rank 0), whole.
func (l Layout) LocalElems() int64 { return l.TilesOf(0) * l.tileElems }

func (l Layout) check(op string, v Point) {
	if len(v) != len(l.dims) {
		panic(fmt.Sprintf("nd: %s of a %d-index in a %d-dimensional array", op, len(v), len(l.dims)))
	}
	for k, x := range v {
		if x < 0 || x >= l.dims[k] {
			panic(fmt.Sprintf("nd: %s: index %v outside the array's %v", op, v, l.dims))
		}
	}
}

// Tile returns the tile coordinates of element v, B_k = v_k / b_k.
func (l Layout) Tile(v Point) Point {
	l.check("Tile", v)
	t := make(Point, len(v))
	for k := range v {
		t[k] = v[k] / l.blocks[k]
	}
	return t
}

// TileIndex is the linear (row-major) index of the tile of coordinates
// t, eq. 3.
func (l Layout) TileIndex(t Point) int64 {
	var li int64
	for k := range t {
		li = li*l.tiles[k] + t[k]
	}
	return li
}

// TileAt is the tile of linear index li, TileIndex's inverse.
func (l Layout) TileAt(li int64) Point {
	t := make(Point, len(l.tiles))
	for k := len(t) - 1; k >= 0; k-- {
		t[k] = li % l.tiles[k]
		li /= l.tiles[k]
	}
	return t
}

// Phase is element v's row-major offset in its tile, eq. 2.
func (l Layout) Phase(v Point) int64 {
	l.check("Phase", v)
	var ph int64
	for k := range v {
		ph = ph*l.blocks[k] + v[k]%l.blocks[k]
	}
	return ph
}

func (l Layout) linear(v Point) int64 {
	var li int64
	for k := range v {
		li = li*l.tiles[k] + v[k]/l.blocks[k]
	}
	return li
}

// Owner is the rank holding element v: its tile index mod the ranks.
func (l Layout) Owner(v Point) int {
	l.check("Owner", v)
	return int(l.linear(v) % int64(l.ranks))
}

// TileOwner is the rank holding the tile of coordinates t.
func (l Layout) TileOwner(t Point) int { return int(l.TileIndex(t) % int64(l.ranks)) }

// Course is the number of v's tile among its owner's tiles.
func (l Layout) Course(v Point) int64 {
	l.check("Course", v)
	return l.linear(v) / int64(l.ranks)
}

// LocalOffset is element v's offset in its owner's storage: course *
// TileElems + phase.
func (l Layout) LocalOffset(v Point) int64 {
	_, off := l.Locate(v)
	return off
}

// Locate is Owner and LocalOffset of element v, computed once.
func (l Layout) Locate(v Point) (rank int, off int64) {
	l.check("Locate", v)
	var li, ph int64
	for k := range v {
		li = li*l.tiles[k] + v[k]/l.blocks[k]
		ph = ph*l.blocks[k] + v[k]%l.blocks[k]
	}
	t := int64(l.ranks)
	return int(li % t), li/t*l.tileElems + ph
}

// Node is the node of element v's owner, N(v) of Table 1.
func (l Layout) Node(v Point) int { return l.Owner(v) / l.perNode }

// NodeOffset is O(v) of Table 1: the owner's place among its node's
// ranks.
func (l Layout) NodeOffset(v Point) int { return l.Owner(v) % l.perNode }

// TileBox is the box of the array's elements in tile t: the tile's
// b_0 x b_1 x ... box clipped to the array (padding is in no box).
func (l Layout) TileBox(t Point) Rect {
	r := Rect{Lo: make(Point, len(t)), Hi: make(Point, len(t))}
	for k := range t {
		r.Lo[k] = t[k] * l.blocks[k]
		r.Hi[k] = min(r.Lo[k]+l.blocks[k], l.dims[k])
	}
	return r
}

// TilesOwnedBy yields the coordinates of rank's tiles, in the order it
// stores them (course 0, 1, ...).
func (l Layout) TilesOwnedBy(rank int) iter.Seq2[int64, Point] {
	return func(yield func(int64, Point) bool) {
		var course int64
		for li := int64(rank); li < l.NumTiles(); li += int64(l.ranks) {
			if !yield(course, l.TileAt(li)) {
				return
			}
			course++
		}
	}
}

// Class says where a reference of a loop's piece lives, seen from the
// rank that runs the piece.
type Class int

// The classes of Split's pieces.
const (
	Private Class = iota // the rank's own element: a load from its slice
	OnNode               // another rank of its node
	Remote               // a rank of another node
	Outside              // not an element of the array
)

func (c Class) String() string {
	switch c {
	case Private:
		return "private"
	case OnNode:
		return "on-node"
	case Remote:
		return "remote"
	case Outside:
		return "outside"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Piece is a part of a loop's iteration space: every v in Box is an
// element of the running rank, and every v+k is held by Owner (-1 when
// Class is Outside) in the class Class.
type Piece struct {
	Box   Rect
	Class Class
	Owner int
}

// Split cuts the elements of box that rank holds into pieces whose
// reference A[v+k] has one owner, the locality analysis of seeds/004 §3
// at run time: within each of rank's tiles, dimension i is cut where
// v_i+k_i crosses a tile boundary (b_i - k_i mod b_i from the tile's
// corner, eq. 5) and where it leaves the array (d_i - k_i, which is not a
// tile boundary when the array is padded); each piece is classed by its
// corner. Pieces come tile by tile in storage order and row-major
// within a tile; together they are exactly the points v of box with
// Owner(v) == rank. It panics if box or k has the wrong number of
// dimensions or rank is not one of the layout's.
func (l Layout) Split(rank int, box Rect, k Point) []Piece {
	n := len(l.dims)
	if box.Dims() != n || len(k) != n {
		panic(fmt.Sprintf("nd: Split of a %d-dimensional box with a %d-displacement in a %d-dimensional array", box.Dims(), len(k), n))
	}
	if rank < 0 || rank >= l.ranks {
		panic(fmt.Sprintf("nd: Split for rank %d of %d", rank, l.ranks))
	}
	box = box.Intersect(l.Extent())
	if box.Empty() {
		return nil
	}
	var out []Piece
	cuts := make([][]int64, n) // per dimension: the piece boundaries, increasing
	idx := make([]int, n)
	corner := make(Point, n)
	for _, t := range l.TilesOwnedBy(rank) {
		part := l.TileBox(t).Intersect(box)
		if part.Empty() {
			continue
		}
		for i := range n {
			b := l.blocks[i]
			c := cuts[i][:0]
			c = append(c, part.Lo[i], part.Hi[i])
			// Where v_i + k_i reaches the next tile (its entering the
			// array, at 0, is such a place), and where it leaves the
			// array, inside a padded tile.
			for _, x := range []int64{t[i]*b + b - ((k[i]%b)+b)%b, l.dims[i] - k[i]} {
				if x > part.Lo[i] && x < part.Hi[i] {
					c = append(c, x)
				}
			}
			slices.Sort(c)
			cuts[i] = slices.Compact(c)
			idx[i] = 0
		}
		for {
			p := Piece{Box: Rect{Lo: make(Point, n), Hi: make(Point, n)}}
			inside := true
			for i := range n {
				p.Box.Lo[i], p.Box.Hi[i] = cuts[i][idx[i]], cuts[i][idx[i]+1]
				corner[i] = p.Box.Lo[i] + k[i]
				inside = inside && corner[i] >= 0 && corner[i] < l.dims[i]
			}
			p.Owner, p.Class = -1, Outside
			if inside {
				p.Owner = int(l.linear(corner) % int64(l.ranks))
				switch {
				case p.Owner == rank:
					p.Class = Private
				case p.Owner/l.perNode == rank/l.perNode:
					p.Class = OnNode
				default:
					p.Class = Remote
				}
			}
			out = append(out, p)
			i := n - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(cuts[i])-1 {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	return out
}
