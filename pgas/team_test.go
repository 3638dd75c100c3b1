package pgas_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

func TestSplitTeams(t *testing.T) {
	for _, ranks := range []int{1, 2, 5, 8} {
		t.Run(fmt.Sprintf("ranks=%d", ranks), func(t *testing.T) {
			err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
				color := r.ID() % 2
				if r.ID() == ranks-1 && ranks > 2 {
					color = -1 // joins no team
				}
				tm, err := r.Split(ctx, color)
				if err != nil {
					return err
				}
				if color < 0 {
					if tm != nil {
						return fmt.Errorf("rank with color -1 got a team")
					}
					return nil
				}
				var want []int
				for q := range ranks {
					if q%2 == color && !(q == ranks-1 && ranks > 2) {
						want = append(want, q)
					}
				}
				if fmt.Sprint(tm.Members()) != fmt.Sprint(want) {
					return fmt.Errorf("members %v; want %v", tm.Members(), want)
				}
				if tm.RankOf(tm.ID()) != r.ID() || tm.TeamID(r.ID()) != tm.ID() || tm.Leader() != want[0] {
					return fmt.Errorf("team ids inconsistent: id %d", tm.ID())
				}
				// Each team counts its barrier rounds in a word on its leader
				// while the other team does the same concurrently.
				reg, err := tm.AllAlloc(ctx, 8)
				if err != nil {
					return err
				}
				for round := range 50 {
					if tm.ID() == 0 {
						if _, err := r.FetchAdd(ctx, tm.Leader(), reg.Off, 1); err != nil {
							return err
						}
					}
					if err := tm.Barrier(ctx); err != nil {
						return err
					}
					v, err := r.AtomicLoad(ctx, tm.Leader(), reg.Off)
					if err != nil {
						return err
					}
					if v != int64(round+1) {
						return fmt.Errorf("round %d: leader's counter %d after the barrier", round, v)
					}
					if err := tm.Barrier(ctx); err != nil {
						return err
					}
				}
				lock, err := tm.AllLockAlloc(ctx)
				if err != nil {
					return err
				}
				for range 20 {
					if err := lock.Lock(ctx); err != nil {
						return err
					}
					var b [8]byte
					if err := r.GetBytes(ctx, tm.Leader(), reg.Off, b[:]); err != nil {
						return err
					}
					b[0]++
					if err := r.PutBytes(ctx, tm.Leader(), reg.Off, b[:]); err != nil {
						return err
					}
					if err := lock.Unlock(ctx); err != nil {
						return err
					}
				}
				if err := tm.Barrier(ctx); err != nil {
					return err
				}
				var b [8]byte
				if err := r.GetBytes(ctx, tm.Leader(), reg.Off, b[:]); err != nil {
					return err
				}
				if want := byte(50 + 20*tm.Size()); b[0] != want {
					return fmt.Errorf("locked counter %d; want %d", b[0], want)
				}
				return tm.AllFree(ctx, reg)
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNewTeamAndCheckSame(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		tm, err := r.NewTeam(ctx, []int{0, 1, 3})
		if err != nil {
			return err
		}
		if r.ID() == 2 {
			if tm != nil {
				return fmt.Errorf("non-member got a team")
			}
			return nil
		}
		if err := tm.CheckSame(ctx, "Broadcast(n=4)"); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		what := "Broadcast(n=4)"
		if r.ID() == 2 {
			what = "Scatter(n=4)"
		}
		return r.World().CheckSame(ctx, what)
	})
	if err == nil || !strings.Contains(err.Error(), "rank 2 called Scatter(n=4), rank 0 (the leader) called Broadcast(n=4)") {
		t.Fatalf("mismatch error = %v", err)
	}
}

func TestTeamBarrierTimeout(t *testing.T) {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4, SyncTimeout: 200 * time.Millisecond}, func(ctx context.Context, r *pgas.Rank) error {
		tm, err := r.Split(ctx, r.ID()/2)
		if err != nil {
			return err
		}
		if r.ID() != 2 {
			<-ctx.Done() // rank 3 never reaches its team barrier
			return ctx.Err()
		}
		return tm.Barrier(ctx)
	})
	if !errors.Is(err, pgas.ErrTimeout) || !strings.Contains(err.Error(), "rank 2") {
		t.Fatalf("err = %v; want rank 2's team barrier timeout", err)
	}
}
