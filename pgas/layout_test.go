package pgas_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

// dealt is the block-cyclic distribution of n elements computed the slow,
// obvious way: walk the global indices in order, hand out blocks of blk
// elements to ranks first, first+1, ... (wrapping around), and give every
// rank its elements' local indices in the order it receives them. It uses
// no division, so it shares no arithmetic with pgas.Layout.
type dealt struct {
	n, blk    int64
	p, first  int
	owner     []int     // by global index
	phase     []int64   // by global index
	local     []int64   // by global index
	global    [][]int64 // by rank, then local index
	blocks    []int64   // by rank: number of blocks (full or partial)
	maxBlocks int64
}

func deal(n, blk int64, p, first int) dealt {
	d := dealt{n: n, blk: blk, p: p, first: first,
		owner: make([]int, n), phase: make([]int64, n), local: make([]int64, n),
		global: make([][]int64, p), blocks: make([]int64, p)}
	rank, ph := first, int64(0)
	for i := int64(0); i < n; i++ {
		if ph == blk {
			ph = 0
			rank++
			if rank == p {
				rank = 0
			}
		}
		if ph == 0 {
			d.blocks[rank]++
		}
		d.owner[i] = rank
		d.phase[i] = ph
		d.local[i] = int64(len(d.global[rank]))
		d.global[rank] = append(d.global[rank], i)
		ph++
	}
	d.maxBlocks = slices.Max(d.blocks)
	return d
}

// effBlock is the block size a layout declared with blk uses, computed
// without pgas: Star is the smallest b >= 1 with b*p >= n, Indefinite is the
// whole array (at least 1).
func effBlock(n, blk int64, p int) int64 {
	switch blk {
	case pgas.Star:
		b := int64(1)
		for b*int64(p) < n {
			b++
		}
		return b
	case pgas.Indefinite:
		return max(n, 1)
	}
	return blk
}

// dealFor is the oracle for NewLayout(n, blk, p, home).
func dealFor(n, blk int64, p, home int) dealt {
	first := 0
	if blk == pgas.Indefinite {
		first = home
	}
	return deal(n, effBlock(n, blk, p), p, first)
}

// checkLayout compares every Layout query with the oracle.
func checkLayout(t *testing.T, l pgas.Layout, d dealt) {
	t.Helper()
	if l.N != d.n || l.Block != d.blk || l.Ranks != d.p || l.First != d.first {
		t.Fatalf("layout = %+v; want {N:%d Block:%d Ranks:%d First:%d}", l, d.n, d.blk, d.p, d.first)
	}
	var nblocks int64
	for _, b := range d.blocks {
		nblocks += b
	}
	if got := l.Blocks(); got != nblocks {
		t.Errorf("Blocks() = %d; want %d", got, nblocks)
	}
	bad := 0
	for i := int64(0); i < d.n && bad < 10; i++ {
		if got := l.Owner(i); got != d.owner[i] {
			t.Errorf("Owner(%d) = %d; want %d", i, got, d.owner[i])
			bad++
		}
		if got := l.Phase(i); got != d.phase[i] {
			t.Errorf("Phase(%d) = %d; want %d", i, got, d.phase[i])
			bad++
		}
		if got := l.LocalIndex(i); got != d.local[i] {
			t.Errorf("LocalIndex(%d) = %d; want %d", i, got, d.local[i])
			bad++
		}
	}
	var maxLen int64
	for r := range d.p {
		if got, want := l.LocalBlocks(r), d.blocks[r]; got != want {
			t.Errorf("LocalBlocks(%d) = %d; want %d", r, got, want)
		}
		want := int64(len(d.global[r]))
		maxLen = max(maxLen, want)
		if got := l.LocalLen(r); got != want {
			t.Errorf("LocalLen(%d) = %d; want %d", r, got, want)
		}
		for li, g := range d.global[r] {
			if got := l.GlobalIndex(r, int64(li)); got != g {
				t.Errorf("GlobalIndex(%d, %d) = %d; want %d", r, li, got, g)
				break
			}
		}
	}
	capWant := d.maxBlocks * d.blk
	if got := l.LocalCap(); got != capWant || got < maxLen {
		t.Errorf("LocalCap() = %d; want %d (max LocalLen %d)", got, capWant, maxLen)
	}
}

func TestLayoutRandomAgainstDealing(t *testing.T) {
	rng := rand.New(rand.NewPCG(20240601, 7))
	for c := range 400 {
		var n int64
		switch c % 8 {
		case 0:
			n = 0
		case 1:
			n = 1
		default:
			n = rng.Int64N(400)
		}
		p := 1 + rng.IntN(70)
		home := rng.IntN(p)
		var blk int64
		switch k := rng.IntN(10); k {
		case 0:
			blk = pgas.Star
		case 1:
			blk = pgas.Indefinite
		case 2:
			blk = pgas.Cyclic
		default:
			blk = 1 + rng.Int64N(70)
		}
		t.Run(fmt.Sprintf("%d/n=%d/blk=%d/P=%d/home=%d", c, n, blk, p, home), func(t *testing.T) {
			checkLayout(t, pgas.NewLayout(n, blk, p, home), dealFor(n, blk, p, home))
		})
	}
}

// TestLayoutRandomFirst checks layouts whose First is not 0 for ordinary
// block sizes, which the Layout type describes (block b on rank
// (First+b) mod Ranks) although NewLayout only makes them for Indefinite.
func TestLayoutRandomFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(99, 1))
	for c := range 150 {
		n := rng.Int64N(300)
		p := 1 + rng.IntN(70)
		blk := 1 + rng.Int64N(70)
		first := rng.IntN(p)
		t.Run(fmt.Sprintf("%d/n=%d/blk=%d/P=%d/first=%d", c, n, blk, p, first), func(t *testing.T) {
			checkLayout(t, pgas.Layout{N: n, Block: blk, Ranks: p, First: first}, deal(n, blk, p, first))
		})
	}
}

// TestLayoutWorkedExamples spells out distributions by hand.
func TestLayoutWorkedExamples(t *testing.T) {
	tests := []struct {
		name      string
		lay       pgas.Layout
		block     int64 // effective block size
		first     int
		owner     []int
		local     []int64
		phase     []int64
		localLen  []int64
		localBlks []int64
		cap       int64
	}{
		{
			// UPC: #define N 12; shared [N/THREADS] int x[N]; THREADS = 4.
			name:     "shared [N/THREADS] int x[12] on 4",
			lay:      pgas.NewLayout(12, 12/4, 4, 0),
			block:    3,
			owner:    []int{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3},
			local:    []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2},
			phase:    []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2},
			localLen: []int64{3, 3, 3, 3}, localBlks: []int64{1, 1, 1, 1},
			cap: 3,
		},
		{
			// shared [3] int A[10] on 4 threads: the last block, {9}, is
			// partial and rank 3 owns just it.
			name:     "shared [3] int A[10] on 4",
			lay:      pgas.NewLayout(10, 3, 4, 0),
			block:    3,
			owner:    []int{0, 0, 0, 1, 1, 1, 2, 2, 2, 3},
			local:    []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0},
			phase:    []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0},
			localLen: []int64{3, 3, 3, 1}, localBlks: []int64{1, 1, 1, 1},
			cap: 3,
		},
		{
			// shared [3] int A[10] on 2 threads: blocks {0,1,2} {3,4,5}
			// {6,7,8} {9} go to ranks 0 1 0 1.
			name:     "shared [3] int A[10] on 2",
			lay:      pgas.NewLayout(10, 3, 2, 0),
			block:    3,
			owner:    []int{0, 0, 0, 1, 1, 1, 0, 0, 0, 1},
			local:    []int64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3},
			phase:    []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0},
			localLen: []int64{6, 4}, localBlks: []int64{2, 2},
			cap: 6,
		},
		{
			// shared [2] int A[10] on 3 threads: blocks go to 0 1 2 0 1.
			name:     "shared [2] int A[10] on 3",
			lay:      pgas.NewLayout(10, 2, 3, 0),
			block:    2,
			owner:    []int{0, 0, 1, 1, 2, 2, 0, 0, 1, 1},
			local:    []int64{0, 1, 0, 1, 0, 1, 2, 3, 2, 3},
			phase:    []int64{0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
			localLen: []int64{4, 4, 2}, localBlks: []int64{2, 2, 1},
			cap: 4,
		},
		{
			name:     "cyclic int A[7] on 3",
			lay:      pgas.NewLayout(7, pgas.Cyclic, 3, 0),
			block:    1,
			owner:    []int{0, 1, 2, 0, 1, 2, 0},
			local:    []int64{0, 0, 0, 1, 1, 1, 2},
			phase:    []int64{0, 0, 0, 0, 0, 0, 0},
			localLen: []int64{3, 2, 2}, localBlks: []int64{3, 2, 2},
			cap: 3,
		},
		{
			// shared [*] int A[10] on 4: block ceil(10/4) = 3, rank 3 owns
			// one element.
			name:     "shared [*] int A[10] on 4",
			lay:      pgas.NewLayout(10, pgas.Star, 4, 0),
			block:    3,
			owner:    []int{0, 0, 0, 1, 1, 1, 2, 2, 2, 3},
			local:    []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0},
			phase:    []int64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0},
			localLen: []int64{3, 3, 3, 1}, localBlks: []int64{1, 1, 1, 1},
			cap: 3,
		},
		{
			// shared [*] int A[10] on 6: block 2, five blocks, rank 5 owns
			// nothing.
			name:     "shared [*] int A[10] on 6",
			lay:      pgas.NewLayout(10, pgas.Star, 6, 0),
			block:    2,
			owner:    []int{0, 0, 1, 1, 2, 2, 3, 3, 4, 4},
			local:    []int64{0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
			phase:    []int64{0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
			localLen: []int64{2, 2, 2, 2, 2, 0}, localBlks: []int64{1, 1, 1, 1, 1, 0},
			cap: 2,
		},
		{
			name:  "shared [] int A[5] on 4, home 2",
			lay:   pgas.NewLayout(5, pgas.Indefinite, 4, 2),
			block: 5, first: 2,
			owner:    []int{2, 2, 2, 2, 2},
			local:    []int64{0, 1, 2, 3, 4},
			phase:    []int64{0, 1, 2, 3, 4},
			localLen: []int64{0, 0, 5, 0}, localBlks: []int64{0, 0, 1, 0},
			cap: 5,
		},
		{
			// Block 2 dealt from rank 1: blocks {0,1} {2,3} {4,5} {6} go to
			// ranks 1 2 0 1.
			name:  "Layout{N:7 Block:2 Ranks:3 First:1}",
			lay:   pgas.Layout{N: 7, Block: 2, Ranks: 3, First: 1},
			block: 2, first: 1,
			owner:    []int{1, 1, 2, 2, 0, 0, 1},
			local:    []int64{0, 1, 0, 1, 0, 1, 2},
			phase:    []int64{0, 1, 0, 1, 0, 1, 0},
			localLen: []int64{2, 3, 2}, localBlks: []int64{1, 2, 1},
			cap: 4,
		},
		{
			name:     "empty [*] on 3",
			lay:      pgas.NewLayout(0, pgas.Star, 3, 0),
			block:    1,
			localLen: []int64{0, 0, 0}, localBlks: []int64{0, 0, 0},
			cap: 0,
		},
		{
			name:  "empty [] on 3, home 1",
			lay:   pgas.NewLayout(0, pgas.Indefinite, 3, 1),
			block: 1, first: 1,
			localLen: []int64{0, 0, 0}, localBlks: []int64{0, 0, 0},
			cap: 0,
		},
		{
			// home is ignored for ordinary block sizes.
			name:     "shared [2] int A[3] on 2, home 1 ignored",
			lay:      pgas.NewLayout(3, 2, 2, 1),
			block:    2,
			owner:    []int{0, 0, 1},
			local:    []int64{0, 1, 0},
			phase:    []int64{0, 1, 0},
			localLen: []int64{2, 1}, localBlks: []int64{1, 1},
			cap: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.lay
			if l.Block != tt.block || l.First != tt.first {
				t.Errorf("Block, First = %d, %d; want %d, %d", l.Block, l.First, tt.block, tt.first)
			}
			if int64(len(tt.owner)) != l.N {
				t.Fatalf("test table: %d owners for N = %d", len(tt.owner), l.N)
			}
			for i, want := range tt.owner {
				if got := l.Owner(int64(i)); got != want {
					t.Errorf("Owner(%d) = %d; want %d", i, got, want)
				}
				if got := l.LocalIndex(int64(i)); got != tt.local[i] {
					t.Errorf("LocalIndex(%d) = %d; want %d", i, got, tt.local[i])
				}
				if got := l.Phase(int64(i)); got != tt.phase[i] {
					t.Errorf("Phase(%d) = %d; want %d", i, got, tt.phase[i])
				}
				if got := l.GlobalIndex(want, tt.local[i]); got != int64(i) {
					t.Errorf("GlobalIndex(%d, %d) = %d; want %d", want, tt.local[i], got, i)
				}
			}
			for r, want := range tt.localLen {
				if got := l.LocalLen(r); got != want {
					t.Errorf("LocalLen(%d) = %d; want %d", r, got, want)
				}
				if got := l.LocalBlocks(r); got != tt.localBlks[r] {
					t.Errorf("LocalBlocks(%d) = %d; want %d", r, got, tt.localBlks[r])
				}
			}
			if got := l.LocalCap(); got != tt.cap {
				t.Errorf("LocalCap() = %d; want %d", got, tt.cap)
			}
			// The table must agree with the dealing oracle too.
			checkLayout(t, l, deal(l.N, tt.block, l.Ranks, tt.first))
		})
	}
}

func TestNewLayoutPanics(t *testing.T) {
	tests := []struct {
		n, blk      int64
		ranks, home int
	}{
		{-1, 2, 4, 0},
		{10, -2, 4, 0},
		{10, 2, 0, 0},
		{10, 2, -3, 0},
		{10, pgas.Indefinite, 4, 4},
		{10, pgas.Indefinite, 4, -1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d/blk=%d/ranks=%d/home=%d", tt.n, tt.blk, tt.ranks, tt.home), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewLayout(%d, %d, %d, %d) did not panic", tt.n, tt.blk, tt.ranks, tt.home)
				}
			}()
			_ = pgas.NewLayout(tt.n, tt.blk, tt.ranks, tt.home)
		})
	}
}
