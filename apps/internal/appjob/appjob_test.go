package appjob

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

func TestValidateAndCheck(t *testing.T) {
	j := New("app", mr.Options{Dist: distrib.Custom, Root: 5}, mr.Defaults{})
	err := j.Validate(errors.New("Top -1"), nil)
	if err == nil || err.Error() != "app: distribution custom: want block, cyclic, balanced or bestfit\napp: Top -1" {
		t.Errorf("Validate = %q", err)
	}
	if err := New("app", mr.Options{}, mr.Defaults{}).Validate(); err != nil {
		t.Errorf("Validate of the zero options = %v", err)
	}
	pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		err := j.Check(r, j.Validate())
		if err == nil || !strings.HasSuffix(err.Error(), "\napp: root 5 is not a rank (ranks are 0 to 1)") || strings.Count(err.Error(), "app: ") != 2 {
			t.Errorf("Check = %q", err)
		}
		if err := New("app", mr.Options{Root: 1}, mr.Defaults{}).Check(r, nil); err != nil {
			t.Errorf("Check of root 1 of 2 = %v", err)
		}
		return nil
	})
}

// TestMapReduce runs a count of 0..9 mod 3 with each map the options
// select, and checks where Reduce returns the result.
func TestMapReduce(t *testing.T) {
	in := mr.Slice([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	for _, c := range []struct {
		o     mr.Options
		d     mr.Defaults
		array bool
		all   bool
	}{
		{mr.Options{}, mr.Defaults{ArrayMap: true}, true, false},
		{mr.Options{}, mr.Defaults{}, false, false},
		{mr.Options{Dist: distrib.Cyclic, Root: 1}, mr.Defaults{ArrayMap: true}, false, false},
		{mr.Options{Gather: reduce.GatherAll}, mr.Defaults{ArrayMap: true, Gather: reduce.GatherRoot}, true, true},
	} {
		j := New("app", c.o, c.d)
		var mu sync.Mutex
		used := map[string]int{}
		got := map[int]map[int]int64{}
		err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
			st, err := reduce.NewHashStore[int, int64](reduce.Sum[int64]())
			if err != nil {
				return err
			}
			note := func(m string) {
				mu.Lock()
				used[m]++
				mu.Unlock()
			}
			err = Map(ctx, r, j, in,
				func(ctx context.Context, x int, emit func(int, int64)) error {
					note("element")
					emit(x%3, 1)
					return nil
				},
				func(ctx context.Context, s mr.Share[int], emit func(int, int64)) error {
					note("array")
					for i := range s.Elements() {
						emit(int(i)%3, 1)
					}
					return nil
				}, st)
			if err != nil {
				return err
			}
			res, err := Reduce(ctx, r, j, st, func(ctx context.Context, p *reduce.Pairs[int, int64]) (map[int]int64, error) {
				m := map[int]int64{}
				for i, k := range p.Keys {
					m[k] = p.Value(i)
				}
				return m, nil
			})
			if res != nil {
				mu.Lock()
				got[r.ID()] = res
				mu.Unlock()
			}
			return err
		})
		if err != nil {
			t.Fatalf("%v: %v", c.o, err)
		}
		if (used["array"] > 0) != c.array || (used["element"] > 0) == c.array {
			t.Errorf("%v: maps used %v; want array %v", c.o, used, c.array)
		}
		want := 1
		if c.all {
			want = 3
		}
		if len(got) != want || (!c.all && got[c.o.Root] == nil) {
			t.Errorf("%v: results on ranks %v; want on %d ranks, the root among them", c.o, got, want)
		}
		for rank, m := range got {
			if m[0] != 4 || m[1] != 3 || m[2] != 3 {
				t.Errorf("%v: rank %d got %v", c.o, rank, m)
			}
		}
	}
	// A map error is the app's.
	j := New("app", mr.Options{}, mr.Defaults{})
	pgas.Run(context.Background(), pgas.Config{Ranks: 1}, func(ctx context.Context, r *pgas.Rank) error {
		st, _ := reduce.NewHashStore[int, int64](reduce.Sum[int64]())
		err := Map(ctx, r, j, in, func(ctx context.Context, x int, emit func(int, int64)) error {
			return errors.New("app: bad input")
		}, nil, st)
		if err == nil || err.Error() != "app: bad input" {
			t.Errorf("map error = %v; want the app's own", err)
		}
		return nil
	})
}
