package pgas

import "fmt"

// Block sizes with a special meaning in a layout, as in UPC's
// shared [b] T a[n] declarations.
const (
	// Indefinite is shared [] T[n]: the whole array in one block on one rank.
	Indefinite int64 = 0
	// Star is shared [*] T[n]: blocks of ceil(n/THREADS), one per rank.
	Star int64 = -1
	// Cyclic is shared [1] T[n]: element i on rank i mod THREADS.
	Cyclic int64 = 1
)

// Layout is the block-cyclic distribution of shared [Block] T[N] over
// Ranks ranks: block b (elements [b*Block, (b+1)*Block)) lives on rank
// (First + b) mod Ranks, and each rank stores its blocks contiguously in
// increasing order. The last block may be partial. First is 0 except for
// arrays allocated with affinity to one rank.
type Layout struct {
	N     int64
	Block int64
	Ranks int
	First int
}

// NewLayout returns the layout of shared [blk] T[n] over ranks ranks.
// blk may be Indefinite (the whole array on rank home) or Star; home is
// ignored otherwise. It panics if n < 0, ranks < 1, blk < Star or home is
// not a rank.
func NewLayout(n, blk int64, ranks, home int) Layout {
	if n < 0 || ranks < 1 || blk < Star || home < 0 || home >= ranks {
		panic(fmt.Sprintf("pgas: invalid layout n=%d blk=%d ranks=%d home=%d", n, blk, ranks, home))
	}
	l := Layout{N: n, Block: blk, Ranks: ranks}
	switch blk {
	case Indefinite:
		l.Block = max(n, 1)
		l.First = home
	case Star:
		l.Block = max((n+int64(ranks)-1)/int64(ranks), 1)
	}
	return l
}

// Blocks returns the number of blocks, ceil(N/Block).
func (l Layout) Blocks() int64 { return (l.N + l.Block - 1) / l.Block }

// Owner returns the rank with affinity to element i (upc_threadof).
func (l Layout) Owner(i int64) int {
	return int((int64(l.First) + i/l.Block) % int64(l.Ranks))
}

// Phase returns i's position in its block (upc_phaseof).
func (l Layout) Phase(i int64) int64 { return i % l.Block }

// LocalIndex returns i's index in its owner's partition.
func (l Layout) LocalIndex(i int64) int64 {
	return (i/l.Block/int64(l.Ranks))*l.Block + i%l.Block
}

// rel returns rank's distance from First in the dealing order.
func (l Layout) rel(rank int) int64 {
	return int64((rank - l.First + l.Ranks) % l.Ranks)
}

// LocalBlocks returns the number of blocks rank owns.
func (l Layout) LocalBlocks(rank int) int64 {
	nb, p := l.Blocks(), int64(l.Ranks)
	c := nb / p
	if l.rel(rank) < nb%p {
		c++
	}
	return c
}

// LocalLen returns the number of elements rank owns (upc_affinitysize),
// counting a partial last block exactly.
func (l Layout) LocalLen(rank int) int64 {
	c := l.LocalBlocks(rank)
	if c == 0 {
		return 0
	}
	n := c * l.Block
	nb := l.Blocks()
	if last := (nb - 1) % int64(l.Ranks); l.rel(rank) == last {
		n -= nb*l.Block - l.N
	}
	return n
}

// LocalCap returns the number of elements every rank reserves for its
// partition in a symmetric allocation: ceil(Blocks/Ranks) blocks.
func (l Layout) LocalCap() int64 {
	nb, p := l.Blocks(), int64(l.Ranks)
	return (nb + p - 1) / p * l.Block
}

// GlobalIndex returns the global index of local element li of rank.
func (l Layout) GlobalIndex(rank int, li int64) int64 {
	return ((li/l.Block)*int64(l.Ranks)+l.rel(rank))*l.Block + li%l.Block
}

// Ptr is a pointer-to-shared into an array: the owning rank, the phase
// (the element's position in its block) and the byte offset of the element
// in the owner's segment. It is plain data and can be stored in shared
// memory. Arithmetic on it needs the array's layout (Array.Add).
type Ptr struct {
	Rank  int
	Phase int64
	Off   int64
}
