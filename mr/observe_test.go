package mr_test

import (
	"context"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestJobStats checks that ApplyMap and ApplyReduce add their figures to the
// context's JobStats: every pair emitted is counted once, and with cyclic
// keys over 3 ranks some pairs move.
func TestJobStats(t *testing.T) {
	const ranks, n = 3, 300
	stats := make([]mr.JobStats, ranks)
	err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
		ctx = mr.WithStats(ctx, &stats[r.ID()])
		st, err := reduce.NewHashStore[int64, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = int64(i)
		}
		if _, err := mr.ApplyMap(ctx, r, mr.Slice(xs), func(_ context.Context, x int64, emit func(int64, int64)) error {
			emit(x%50, 1)
			return nil
		}, st); err != nil {
			return err
		}
		_, err = mr.ApplyReduce(ctx, r, st, func(_ context.Context, p *reduce.Pairs[int64, int64]) (int, error) {
			return p.Len(), nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var emitted, moved, sent, recv int64
	for _, s := range stats {
		emitted += s.Reduce.PairsEmitted
		moved += s.Reduce.PairsMoved
		sent += s.Reduce.BytesSent
		recv += s.Reduce.BytesReceived
		if s.Map <= 0 || s.Reduce.Exchange <= 0 {
			t.Errorf("phase times not recorded: %+v", s)
		}
	}
	if emitted != n {
		t.Errorf("pairs emitted = %d, want %d", emitted, n)
	}
	if moved == 0 || sent == 0 || sent != recv {
		t.Errorf("pairs moved %d, bytes sent %d, received %d: want moved > 0 and sent == received > 0", moved, sent, recv)
	}
}

func TestProgressNil(t *testing.T) {
	p := mr.ProgressFrom(context.Background())
	p.Add(1, 10) // no-op on nil
	p.SetTotal(2, 20)
	if f, b, tf, tb := p.Snapshot(); f|b|tf|tb != 0 {
		t.Fatal("nil Progress reported counts")
	}
	var q mr.Progress
	ctx := mr.WithProgress(context.Background(), &q)
	mr.ProgressFrom(ctx).SetTotal(2, 20)
	mr.ProgressFrom(ctx).Add(1, 10)
	mr.ProgressFrom(ctx).Add(0, 5)
	if f, b, tf, tb := q.Snapshot(); f != 1 || b != 15 || tf != 2 || tb != 20 {
		t.Fatalf("Snapshot = %d %d %d %d, want 1 15 2 20", f, b, tf, tb)
	}
}
