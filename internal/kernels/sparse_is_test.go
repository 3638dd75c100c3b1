package kernels

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// kernelConfigs are the job shapes every kernel runs on: 1 to 4 ranks on
// one node, and 4 ranks two per node (so the binomial-flat tree is used).
var kernelConfigs = []pgas.Config{
	{Ranks: 1}, {Ranks: 2}, {Ranks: 3}, {Ranks: 4}, {Ranks: 4, RanksPerNode: 2},
}

func cfgName(c pgas.Config) string {
	if c.RanksPerNode > 0 {
		return fmt.Sprintf("ranks=%d,perNode=%d", c.Ranks, c.RanksPerNode)
	}
	return fmt.Sprintf("ranks=%d", c.Ranks)
}

func TestRandomSymmetricCSR(t *testing.T) {
	for _, tc := range []struct {
		n       int
		density float64
	}{{0, 0.5}, {1, 1}, {10, 0}, {10, 1}, {50, 0.1}, {300, 0.004}} {
		s := RandomSymmetricCSR(tc.n, tc.density, 7)
		if err := s.Check(); err != nil {
			t.Fatalf("n=%d density=%v: %v", tc.n, tc.density, err)
		}
		// Symmetric, no stored zeros.
		dense := make([]float64, tc.n*tc.n)
		for i := range s.Rows {
			for p := s.RowPtr[i]; p < s.RowPtr[i+1]; p++ {
				if s.Val[p] == 0 {
					t.Fatalf("n=%d: stored zero at (%d,%d)", tc.n, i, s.ColInd[p])
				}
				dense[i*tc.n+s.ColInd[p]] = s.Val[p]
			}
		}
		for i := range tc.n {
			for j := range tc.n {
				if dense[i*tc.n+j] != dense[j*tc.n+i] {
					t.Fatalf("n=%d: (%d,%d) = %v but (%d,%d) = %v", tc.n, i, j, dense[i*tc.n+j], j, i, dense[j*tc.n+i])
				}
			}
		}
		if tc.density == 1 && s.NNZ() != tc.n*tc.n {
			t.Fatalf("n=%d density 1: %d non-zeros", tc.n, s.NNZ())
		}
		if tc.density == 0 && s.NNZ() != 0 {
			t.Fatalf("n=%d density 0: %d non-zeros", tc.n, s.NNZ())
		}
		// The oracle agrees with a dense multiply (exact: small integers).
		const n = 3
		b := RandomMatrix(tc.n, n, 3)
		want := make([]float64, tc.n*n)
		MatMul(want, dense, b, tc.n, tc.n, n)
		if err := mismatch("CSRMul", CSRMul(s, b, n), want); err != nil {
			t.Fatalf("n=%d density=%v: %v", tc.n, tc.density, err)
		}
	}
	// About density*n*n non-zeros.
	s := RandomSymmetricCSR(2000, 0.004, 1)
	if nnz, want := s.NNZ(), 0.004*2000*2000; float64(nnz) < 0.9*want || float64(nnz) > 1.1*want {
		t.Fatalf("2000×2000 at 0.4%%: %d non-zeros, want about %v", nnz, want)
	}
}

func TestSplitRows(t *testing.T) {
	s := RandomSymmetricCSR(500, 0.02, 5)
	for _, ranks := range []int{1, 2, 3, 4, 7, 600} {
		b := SplitRows(s.RowPtr, ranks)
		if len(b) != ranks+1 || b[0] != 0 || b[ranks] != s.Rows || !slices.IsSorted(b) {
			t.Fatalf("ranks=%d: bounds %v", ranks, b)
		}
		if ranks > s.Rows {
			continue
		}
		for q := range ranks {
			nz := s.RowPtr[b[q+1]] - s.RowPtr[b[q]]
			ideal := s.NNZ() / ranks
			if d := nz - ideal; d < -40 || d > 40 { // rows have about 10 non-zeros
				t.Fatalf("ranks=%d: rank %d has %d non-zeros, ideal %d", ranks, q, nz, ideal)
			}
		}
	}
	// Empty matrix and rows.
	if b := SplitRows([]int{0, 0, 0}, 3); !slices.Equal(b, []int{0, 0, 0, 2}) {
		t.Fatalf("empty: %v", b)
	}
}

func TestSparseMM(t *testing.T) {
	cases := []struct {
		m, k, n int
		density float64
	}{
		{0, 0, 3, 0.1}, // empty
		{1, 1, 1, 1},   // one element
		{5, 5, 2, 0},   // all zero: nothing to scatter
		{40, 40, 6, 0.05},
		{120, 120, 5, 0.01}, // a rank may get few rows
	}
	for _, cfg := range kernelConfigs {
		for _, tc := range cases {
			s := RandomSymmetricCSR(tc.m, tc.density, uint64(tc.m))
			b := RandomMatrix(tc.k, tc.n, 9)
			want := CSRMul(s, b, tc.n)
			for _, ext := range []bool{false, true} {
				name := fmt.Sprintf("%s/%dx%dx%d/extended=%v", cfgName(cfg), tc.m, tc.k, tc.n, ext)
				t.Run(name, func(t *testing.T) {
					cfg := cfg
					cfg.NoCheck = !ext // cross-rank argument checks of the collectives
					err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
						var ms *CSR
						var mb []float64
						if r.ID() == 0 {
							ms, mb = s, b
						}
						var c []float64
						var err error
						if ext {
							c, err = SparseMMExtended(ctx, r, ms, mb, tc.m, tc.k, tc.n)
						} else {
							c, err = SparseMMStandard(ctx, r, ms, mb, tc.m, tc.k, tc.n)
						}
						if err != nil {
							return err
						}
						if r.ID() != 0 {
							if c != nil {
								return fmt.Errorf("rank %d got a result", r.ID())
							}
							return nil
						}
						return mismatch("C", c, want)
					})
					if err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

func TestSparseMMRepeated(t *testing.T) {
	// Several multiplies in one job: the staging areas and temporaries are
	// reused, grown and freed correctly.
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		for it, m := range []int{30, 80, 10, 80} {
			s := RandomSymmetricCSR(m, 0.05, uint64(it))
			b := RandomMatrix(m, 4, uint64(it))
			want := CSRMul(s, b, 4)
			for _, ext := range []bool{true, false} {
				var c []float64
				var err error
				if ext {
					c, err = SparseMMExtended(ctx, r, s, b, m, m, 4, coll.WithAlgo(coll.Binomial))
				} else {
					c, err = SparseMMStandard(ctx, r, s, b, m, m, 4)
				}
				if err != nil {
					return err
				}
				if r.ID() == 0 {
					if err := mismatch(fmt.Sprintf("iteration %d extended=%v: C", it, ext), c, want); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestISParams(t *testing.T) {
	p := ISParams{Keys: 1000, MaxKey: 97, Seed: 3}
	for _, ranks := range []int{1, 2, 3, 4, 7, 97, 200} {
		// Shares cover all keys once.
		var all []int32
		for q := range ranks {
			all = append(all, p.RankKeys(q, ranks)...)
		}
		if !slices.Equal(all, p.RankKeys(0, 1)) {
			t.Fatalf("ranks=%d: shares do not concatenate to all keys", ranks)
		}
		// Owner agrees with Bucket.
		for k := range p.MaxKey {
			j := p.Owner(k, ranks)
			if k < p.Bucket(j, ranks) || k >= p.Bucket(j+1, ranks) {
				t.Fatalf("ranks=%d: Owner(%d) = %d, whose range is [%d,%d)", ranks, k, j, p.Bucket(j, ranks), p.Bucket(j+1, ranks))
			}
		}
	}
	for _, k := range p.RankKeys(0, 1) {
		if k < 0 || k >= p.MaxKey {
			t.Fatalf("key %d outside [0,%d)", k, p.MaxKey)
		}
	}
	// Verify catches a wrong result.
	sorted := p.Sequential()
	lo := slices.Index(sorted, p.Bucket(1, 2))
	good := slices.Clone(sorted[lo:])
	if err := p.Verify(1, 2, good, sorted); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(good)
	bad[len(bad)-1]--
	bad[len(bad)-2]++
	if p.Verify(1, 2, bad, sorted) == nil {
		t.Fatal("Verify accepted a wrong multiset")
	}
	if p.Verify(1, 2, good[1:], sorted) == nil {
		t.Fatal("Verify accepted a missing key")
	}
	if p.Verify(0, 2, good, sorted) == nil {
		t.Fatal("Verify accepted keys outside the rank's range")
	}
}

func TestIntSort(t *testing.T) {
	params := []ISParams{
		{Keys: 0, MaxKey: 16, Seed: 1},
		{Keys: 1, MaxKey: 1, Seed: 1},   // every key 0, owned by rank 0
		{Keys: 100, MaxKey: 3, Seed: 2}, // fewer key values than ranks: empty ranges
		{Keys: 5000, MaxKey: 1 << 11, Seed: 3},
		{Keys: 3001, MaxKey: 1 << 30, Seed: 4},
	}
	for _, cfg := range kernelConfigs {
		for _, p := range params {
			sorted := p.Sequential()
			for _, ext := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%+v/extended=%v", cfgName(cfg), p, ext), func(t *testing.T) {
					cfg := cfg
					cfg.NoCheck = !ext
					err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
						keys := p.RankKeys(r.ID(), r.N())
						orig := slices.Clone(keys)
						var got []int32
						var err error
						if ext {
							got, err = IntSortExtended(ctx, r, p, keys)
						} else {
							got, err = IntSortStandard(ctx, r, p, keys)
						}
						if err != nil {
							return err
						}
						if !slices.Equal(keys, orig) {
							return fmt.Errorf("rank %d: input keys modified", r.ID())
						}
						return p.Verify(r.ID(), r.N(), got, sorted)
					})
					if err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

func TestIntSortRepeated(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4, RanksPerNode: 2}, func(ctx context.Context, r *pgas.Rank) error {
		for it, n := range []int{200, 4000, 50} {
			p := ISParams{Keys: n, MaxKey: 1000, Seed: uint64(it)}
			sorted := p.Sequential()
			keys := p.RankKeys(r.ID(), r.N())
			for _, ext := range []bool{true, false} {
				var got []int32
				var err error
				if ext {
					got, err = IntSortExtended(ctx, r, p, keys, coll.WithSync(coll.InNo|coll.OutNo))
				} else {
					got, err = IntSortStandard(ctx, r, p, keys)
				}
				if err != nil {
					return err
				}
				if err := p.Verify(r.ID(), r.N(), got, sorted); err != nil {
					return fmt.Errorf("iteration %d extended=%v: %w", it, ext, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
