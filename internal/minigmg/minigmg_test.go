package minigmg

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

func TestProcGrid(t *testing.T) {
	for ranks, want := range map[int][3]int{1: {1, 1, 1}, 2: {2, 1, 1}, 4: {2, 2, 1}, 8: {2, 2, 2}, 12: {2, 2, 3}, 7: {7, 1, 1}, 16: {4, 2, 2}} {
		if got := ProcGrid(ranks); got != want {
			t.Errorf("ProcGrid(%d) = %v, want %v", ranks, got, want)
		}
	}
	// The interiors tile the cube.
	for _, ranks := range []int{1, 2, 3, 4, 8} {
		var cells int64
		for _, b := range Decompose(10, ranks) {
			cells += b.Size()
		}
		if cells != 1000 {
			t.Errorf("Decompose(10, %d) covers %d cells", ranks, cells)
		}
	}
}

// run smooths an n^3 cube steps times on ranks ranks in style st,
// counting the transport's operations, and checks every rank's cells
// against the sequential result.
func run(t testing.TB, n int64, ranks, steps int, st Style) wrap.Counts {
	want := Sequential(n, steps)
	c := wrap.NewCounting(inproc.New())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var counts wrap.Counts
	err := pgas.Run(ctx, pgas.Config{Ranks: ranks, SegmentBytes: 8 << 20, Transport: c}, func(ctx context.Context, r *pgas.Rank) error {
		s, err := NewSolver(ctx, r, n, st)
		if err != nil {
			return err
		}
		if r.ID() == 0 {
			c.Reset()
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		for range steps {
			if err := s.Smooth(ctx); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			counts = c.Total()
		}
		if err := s.Check(want); err != nil {
			return err
		}
		return s.Free(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// TestStyles: every style gives the sequential cells bit for bit at 1,
// 2, 4 and 8 ranks, and the counted traffic has the seed's profile: the
// fine style one 8-byte put per ghost cell, bulk and array one message
// per neighbour per exchange.
func TestStyles(t *testing.T) {
	const n, steps = 12, 3
	for _, ranks := range []int{1, 2, 4, 8} {
		// Ghost cells and neighbour pairs over all ranks, from the
		// decomposition.
		var cells, pairs int64
		in := Decompose(n, ranks)
		for p := range in {
			for _, f := range faces(in, p) {
				cells += f.box.Size()
				pairs++
			}
		}
		for _, st := range Styles {
			t.Run(fmt.Sprintf("ranks=%d/%v", ranks, st), func(t *testing.T) {
				c := run(t, n, ranks, steps, st)
				puts, strided := c.Ops[wrap.OpPut], c.Ops[wrap.OpPutStrided]
				t.Logf("%d ghost cells, %d neighbour pairs: puts %d (%d bytes), strided puts %d", cells, pairs, puts, c.BytesSent(), strided)
				var wantPuts, wantStrided int64
				switch st {
				case Fine:
					wantPuts = cells * steps
					if c.BytesSent() != 8*cells*steps {
						t.Errorf("fine: %d bytes sent, want 8 per ghost cell", c.BytesSent())
					}
				case Bulk:
					wantPuts = pairs * steps
				case Array:
					wantStrided = pairs * steps
				}
				if puts != wantPuts || strided != wantStrided {
					t.Errorf("%v: %d puts and %d strided puts, want %d and %d", st, puts, strided, wantPuts, wantStrided)
				}
				if c.Ops[wrap.OpGet]+c.Ops[wrap.OpGetStrided]+c.Ops[wrap.OpGetAsync] != 0 {
					t.Errorf("%v: gets %v; the exchange only puts", st, c.Ops)
				}
			})
		}
	}
}

// BenchmarkExchange times one ghost-zone exchange of a 64^3 cube on 4
// in-process ranks (2x2x1 boxes), per style, on one node and on the
// emulated cluster of 2 nodes (5 us, 5 GB/s between them).
func BenchmarkExchange(b *testing.B) {
	for _, cluster := range []bool{false, true} {
		for _, st := range Styles {
			b.Run(fmt.Sprintf("%s/%v", map[bool]string{false: "inproc", true: "cluster"}[cluster], st), func(b *testing.B) {
				cfg := pgas.Config{Ranks: 4, SegmentBytes: 16 << 20}
				if cluster {
					cfg.RanksPerNode = 2
					cfg.Transport = wrap.NewNodeLatency(inproc.New(), wrap.NodeLink{RanksPerNode: 2, Latency: 5 * time.Microsecond, BytesPerSec: 5e9})
				}
				err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
					s, err := NewSolver(ctx, r, 64, st)
					if err != nil {
						return err
					}
					if r.ID() == 0 {
						b.ResetTimer()
					}
					for range b.N {
						if err := s.Exchange(ctx); err != nil {
							return err
						}
					}
					if r.ID() == 0 {
						b.StopTimer()
					}
					return s.Free(ctx)
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
