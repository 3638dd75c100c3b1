// Package nd holds multidimensional shared arrays on top of package pgas:
// the multiblocked arrays of seeds/004 (Barton et al., "Multidimensional
// Blocking in UPC") and the boxes of seeds/003 (UPC++'s ND domains).
//
// # Boxes
//
// A Rect is a box of integer points, [Lo, Hi) in every dimension. Boxes
// intersect, grow, shrink and translate, and iterate their points in
// row-major order.
//
// # Tiled arrays
//
// A TiledArray is the UPC declaration
//
//	shared [b0][b1]...[bn-1] T A[d0][d1]...[dn-1];
//
// The array is cut into tiles of b0 x b1 x ... elements, padded in every
// dimension where a block does not divide it (D_k = ceil(d_k/b_k) tiles
// along dimension k), and the tiles are dealt to the ranks cyclically in
// row-major tile order. Layout holds the arithmetic of seeds/004 eqs.
// 2-4 and Table 1, with the erratum of the notes applied (eq. 4 divides
// the tile index, not an element index, by nothing):
//
//	B_k    = v_k / b_k                      tile coordinate
//	L      = sum_k B_k * prod_{j>k} D_j     linear tile index (eq. 3)
//	phase  = sum_k (v_k mod b_k) * prod_{j>k} b_j   (eq. 2)
//	thread = L mod T,  course = L / T,  offset = course*prod(b) + phase
//	node   = (L mod T) / t,  block offset in the node = (L mod T) mod t
//
// with T ranks and t ranks per node (pgas.Config.RanksPerNode). A rank
// stores its tiles one after another, each whole (padding included), in
// its part of one pgas array, so element accesses of other ranks go
// through the runtime (counted, cached if the cache is on) and a rank's
// own tiles are plain slices (Tile, Local).
//
// # Locality cuts
//
// seeds/004's compiler splits a loop over the elements a rank owns, whose
// body reads A[v+k], where the owner of v+k changes: a tile shifted by k
// overlaps at most two tiles along each dimension, so each dimension of
// a tile is cut at most once, at b_i - k_i mod b_i (eq. 5), and each of
// the at most 2^n pieces reads from one rank. Layout.Split is that
// analysis at run time: it cuts a box of the iteration space into pieces
// owned by one rank, each classed Private (v+k is the rank's own: read
// the slice), OnNode (another rank of its node), Remote (another node) or
// Outside (v+k is not in the array).
//
// # Views and copies
//
// A View is an ND array over memory of one rank's segment (UPC++'s
// ndarray, seeds/003 §4): Constrict, Translate, Slice and Transpose make
// new views of the same elements, and CopyFrom copies the points two
// views share (UPC++'s A.copy(B)), packed into one strided transfer per
// rank pair (pgas.Rank.GetStrided, PutStrided). A Grid is one box per
// rank, the storage of a block-distributed structured grid; its views
// are what a ghost-zone exchange copies:
//
//	ghost := dst.Domain().Intersect(src.Domain().Shrink(1))
//	g.View(me).Constrict(ghost).CopyFrom(ctx, g.View(neighbour))
package nd
