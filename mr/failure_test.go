package mr_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

func TestMapFailureNamesRankAndElement(t *testing.T) {
	errBad := errors.New("bad record")
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			ls := lines(20)
			t0 := time.Now()
			err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
				st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
				if err != nil {
					return err
				}
				if _, err := mr.ApplyMap(ctx, r, mr.Slice(ls), func(ctx context.Context, l string, emit func(string, int64)) error {
					if l == ls[13] {
						if how == "panic" {
							panic("boom")
						}
						return errBad
					}
					emit(l, 1)
					return nil
				}, st, mr.WithDistribution(distrib.Cyclic)); err != nil {
					return err
				}
				_, err = mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (int, error) { return p.Len(), nil })
				return err
			})
			if err == nil {
				t.Fatal("job succeeded")
			}
			// Element 13 is on rank 13 mod 4 = 1 under cyclic.
			if !strings.Contains(err.Error(), "pgas: rank 1: mr: map of input element 13") {
				t.Fatalf("error does not name rank and element: %v", err)
			}
			if how == "error" && !errors.Is(err, errBad) {
				t.Fatalf("error does not wrap the map's: %v", err)
			}
			if time.Since(t0) > 5*time.Second {
				t.Fatalf("took %v", time.Since(t0))
			}
		})
	}
}

func TestReduceFailureAndCancel(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewArrayStore[uint8, int64](4, reduce.Sum[int64]())
		if err != nil {
			return err
		}
		if _, err := mr.ApplyMap(ctx, r, mr.Slice([]uint8{1, 2, 9}), func(ctx context.Context, k uint8, emit func(uint8, int64)) error {
			emit(k, 1)
			return nil
		}, st); err != nil {
			return err
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "key 9 outside the array container's keys [0,4)") || !strings.Contains(err.Error(), "input element 2") {
		t.Fatalf("out-of-range key: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	t0 := time.Now()
	err = pgas.Run(ctx, pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[int64, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		in := make([]int64, 1<<20)
		_, err = mr.ApplyMap(ctx, r, mr.Slice(in), func(ctx context.Context, x int64, emit func(int64, int64)) error {
			if r.ID() == 0 {
				cancel()
			}
			time.Sleep(time.Microsecond)
			emit(x, 1)
			return nil
		}, st)
		return err
	})
	if !errors.Is(err, context.Canceled) || time.Since(t0) > 5*time.Second {
		t.Fatalf("cancelled job: %v after %v", err, time.Since(t0))
	}
}
