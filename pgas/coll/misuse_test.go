package coll_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// errMisuseSkip is returned by a misuse case on a rank that takes no part.
var errMisuseSkip = errors.New("not a member")

// misuseCatch runs f and returns the value it panicked with, formatted.
func misuseCatch(f func() error) (msg string, err error) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	return "", f()
}

// TestMisusePanics: arguments that are wrong on their face panic, on
// every rank and before any communication, with a message that names the
// function and the bad value.
func TestMisusePanics(t *testing.T) {
	type tc struct {
		name string
		call func(ctx context.Context, r *pgas.Rank) error
		want []string
	}
	p := func(n int) coll.Buf[int64] { return coll.Private(make([]int64, n)) }
	const S = 3 // ranks
	cases := []tc{
		{"permute-repeat", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Permute(ctx, r.World(), p(2), p(2), []int{0, 0, 1}, 2)
		}, []string{"coll: Permute", "perm [0 0 1] is not a permutation of [0,3)"}},
		{"permute-out-of-range", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Permute(ctx, r.World(), p(2), p(2), []int{0, 1, 3}, 2)
		}, []string{"coll: Permute", "not a permutation", "entry 2 = 3"}},
		{"permute-short", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Permute(ctx, r.World(), p(2), p(2), []int{1, 0}, 2)
		}, []string{"coll: Permute", "perm has 2 entries, want 3"}},
		{"permute-in-place-negative-entry", func(ctx context.Context, r *pgas.Rank) error {
			return coll.PermuteInPlace(ctx, r.World(), p(2), []int{2, -1, 0}, 2)
		}, []string{"coll: PermuteInPlace", "not a permutation"}},
		{"permute-allthr-to-non-member", func(ctx context.Context, r *pgas.Rank) error {
			team, err := r.NewTeam(ctx, []int{0, 2})
			if err != nil || team == nil {
				return errors.Join(err, errMisuseSkip)
			}
			// A permutation of the ranks that sends member 0 to rank 1.
			return coll.Permute(ctx, team, p(2), p(2), []int{1, 0, 2}, 2, coll.AllThr())
		}, []string{"coll: Permute", "rank 0 to rank 1, which is not in the team"}},
		{"root-too-large", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Broadcast(ctx, r.World(), p(2), p(2), 2, coll.Root(S))
		}, []string{"coll: Broadcast", "root 3 is not a team id in [0,3)"}},
		{"root-negative", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Gather(ctx, r.World(), p(2*S), p(2), 2, coll.Root(-1))
		}, []string{"coll: Gather", "root -1 is not a team id in [0,3)"}},
		{"root-outside-team", func(ctx context.Context, r *pgas.Rank) error {
			team, err := r.NewTeam(ctx, []int{0, 2})
			if err != nil || team == nil {
				return errors.Join(err, errMisuseSkip)
			}
			return coll.ScatterInPlace(ctx, team, p(4), 2, coll.Root(2)) // a rank, not a team id
		}, []string{"coll: ScatterInPlace", "root 2 is not a team id in [0,2)"}},
		{"zero-buf", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Allgather(ctx, r.World(), coll.Buf[int64]{}, p(2), 2)
		}, []string{"coll: Allgather", "zero Buf"}},
		{"nil-team", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Exchange(ctx, nil, p(6), p(6), 2)
		}, []string{"coll: Exchange", "nil team"}},
		{"shared-start-outside", func(ctx context.Context, r *pgas.Rank) error {
			a, err := pgas.AllAllocArray[int64](ctx, r, 10, pgas.Cyclic)
			if err != nil {
				return err
			}
			_ = coll.Shared(a, 11)
			return nil
		}, []string{"coll: Shared at 11 outside array of 10 elements"}},
		{"shared-chunk-outside", func(ctx context.Context, r *pgas.Rank) error {
			src, err := pgas.AllAllocArray[int64](ctx, r, 2*S, pgas.Cyclic)
			if err != nil {
				return err
			}
			dst, err := pgas.AllAllocArray[int64](ctx, r, 2*S*S-1, pgas.Cyclic) // one short
			if err != nil {
				return err
			}
			return coll.Allgather(ctx, r.World(), coll.Shared(dst, 0), coll.Shared(src, 0), 2)
		}, []string{"coll: Allgather", "shared destination elements [16,18) outside array of 17"}},
		{"segment-zero", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Broadcast(ctx, r.World(), p(2), p(2), 2, coll.Segment(0))
		}, []string{"coll: Segment(0)"}},
	}
	// A negative count, for every function.
	neg := map[string]func(ctx context.Context, w *pgas.Team) error{
		"Broadcast":        func(ctx context.Context, w *pgas.Team) error { return coll.Broadcast(ctx, w, p(1), p(1), -1) },
		"BroadcastInPlace": func(ctx context.Context, w *pgas.Team) error { return coll.BroadcastInPlace(ctx, w, p(1), -1) },
		"Scatter":          func(ctx context.Context, w *pgas.Team) error { return coll.Scatter(ctx, w, p(1), p(1), -1) },
		"ScatterInPlace":   func(ctx context.Context, w *pgas.Team) error { return coll.ScatterInPlace(ctx, w, p(1), -1) },
		"Gather":           func(ctx context.Context, w *pgas.Team) error { return coll.Gather(ctx, w, p(1), p(1), -1) },
		"GatherInPlace":    func(ctx context.Context, w *pgas.Team) error { return coll.GatherInPlace(ctx, w, p(1), -1) },
		"Allgather":        func(ctx context.Context, w *pgas.Team) error { return coll.Allgather(ctx, w, p(1), p(1), -1) },
		"AllgatherInPlace": func(ctx context.Context, w *pgas.Team) error { return coll.AllgatherInPlace(ctx, w, p(1), -1) },
		"Exchange":         func(ctx context.Context, w *pgas.Team) error { return coll.Exchange(ctx, w, p(1), p(1), -1) },
		"ExchangeInPlace":  func(ctx context.Context, w *pgas.Team) error { return coll.ExchangeInPlace(ctx, w, p(1), -1) },
		"Permute": func(ctx context.Context, w *pgas.Team) error {
			return coll.Permute(ctx, w, p(1), p(1), []int{0, 1, 2}, -1)
		},
		"PermuteInPlace": func(ctx context.Context, w *pgas.Team) error {
			return coll.PermuteInPlace(ctx, w, p(1), []int{0, 1, 2}, -1)
		},
	}
	for name, f := range neg {
		cases = append(cases, tc{"negative-count-" + name, func(ctx context.Context, r *pgas.Rank) error {
			return f(ctx, r.World())
		}, []string{"coll: " + name + ": negative count -1"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := pgas.Run(t.Context(), pgas.Config{Ranks: S, SyncTimeout: 10 * time.Second}, func(ctx context.Context, r *pgas.Rank) error {
				msg, err := misuseCatch(func() error { return c.call(ctx, r) })
				if errors.Is(err, errMisuseSkip) {
					return nil
				}
				if msg == "" {
					return fmt.Errorf("rank %d: no panic; the call returned %v", r.ID(), err)
				}
				for _, w := range c.want {
					if !strings.Contains(msg, w) {
						return fmt.Errorf("rank %d: panic %q does not say %q", r.ID(), msg, w)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMisuseSmallPrivate: a private buffer too small for its part of the
// call panics on its rank with a message naming the buffer and the range
// needed; the job fails promptly instead of hanging or writing past it.
func TestMisuseSmallPrivate(t *testing.T) {
	const S, n = 3, 2
	for _, c := range []struct {
		name string
		call func(ctx context.Context, r *pgas.Rank) error
		want []string
	}{
		{"gather-priv-root-dst", func(ctx context.Context, r *pgas.Rank) error {
			dst := make([]int64, S*n-1)
			return coll.Gather(ctx, r.World(), coll.Private(dst), coll.Private(make([]int64, n)), n, coll.Root(1))
		}, []string{"coll: Gather", "rank 1's private destination buffer has 5 elements"}},
		{"scatter-put-root-src", func(ctx context.Context, r *pgas.Rank) error {
			dst, err := pgas.AllAllocArray[int64](ctx, r, S*n, pgas.Cyclic)
			if err != nil {
				return err
			}
			return coll.Scatter(ctx, r.World(), coll.Shared(dst, 0), coll.Private(make([]int64, S*n-2)), n)
		}, []string{"coll: Scatter", "rank 0's private source buffer has 4 elements, needs [4,6)"}},
		{"broadcast-get-one-dst", func(ctx context.Context, r *pgas.Rank) error {
			src, err := pgas.AllAllocArray[int64](ctx, r, n, pgas.Cyclic)
			if err != nil {
				return err
			}
			dst := make([]int64, n)
			if r.ID() == 2 {
				dst = dst[:n-1]
			}
			return coll.Broadcast(ctx, r.World(), coll.Private(dst), coll.Shared(src, 0), n)
		}, []string{"coll: Broadcast", "rank 2's private destination buffer has 1 elements, needs [0,2)"}},
		{"allgather-priv-dst", func(ctx context.Context, r *pgas.Rank) error {
			return coll.Allgather(ctx, r.World(), coll.Private(make([]int64, n)), coll.Private(make([]int64, n)), n)
		}, []string{"coll: Allgather", "private destination buffer has 2 elements"}},
		{"exchange-in-place-priv", func(ctx context.Context, r *pgas.Rank) error {
			return coll.ExchangeInPlace(ctx, r.World(), coll.Private(make([]int64, n)), n)
		}, []string{"coll: ExchangeInPlace", "private source buffer has 2 elements"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			err := pgas.Run(t.Context(), pgas.Config{Ranks: S, SyncTimeout: 20 * time.Second}, c.call)
			el := time.Since(t0)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, misuseFirstLines(err, 4))
				}
			}
			if el > 10*time.Second {
				t.Errorf("the job took %v to fail", el)
			}
			t.Logf("after %v: %v", el.Round(time.Millisecond), misuseFirstLines(err, 1))
		})
	}
}

func misuseFirstLines(err error, k int) string {
	lines := strings.Split(err.Error(), "\n")
	return strings.Join(lines[:min(k, len(lines))], "\n")
}

// misuseMismatch makes the ranks call different collectives: rank odd
// calls Scatter, the others Broadcast with the binomial tree (more rounds,
// so more synchronisation, than Scatter).
func misuseMismatch(odd int) func(ctx context.Context, r *pgas.Rank) error {
	return func(ctx context.Context, r *pgas.Rank) error {
		const n = 4
		S := r.N()
		dst, src := make([]int64, S*n), make([]int64, S*n)
		if r.ID() == odd {
			return coll.Scatter(ctx, r.World(), coll.Private(dst), coll.Private(src), n)
		}
		return coll.Broadcast(ctx, r.World(), coll.Private(dst), coll.Private(src), n, coll.WithAlgo(coll.Binomial))
	}
}

// TestMisuseMismatchCheck: by default, ranks that call different
// collectives get an error naming both calls at once, whichever rank is
// the odd one (a member or the team's leader); so do ranks that pass
// different counts.
func TestMisuseMismatchCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func(ctx context.Context, r *pgas.Rank) error
		want []string
	}{
		{"member-differs", misuseMismatch(2), []string{"mismatch", "rank 2 called Scatter(", "rank 0 (the leader) called Broadcast("}},
		{"leader-differs", misuseMismatch(0), []string{"mismatch", "called Broadcast(", "rank 0 (the leader) called Scatter("}},
		{"count-differs", func(ctx context.Context, r *pgas.Rank) error {
			n := 3
			if r.ID() == 1 {
				n = 4
			}
			return coll.Allgather(ctx, r.World(), coll.Private(make([]int64, 3*n)), coll.Private(make([]int64, n)), n)
		}, []string{"mismatch", "rank 1 called Allgather(n=4", "rank 0 (the leader) called Allgather(n=3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			err := pgas.Run(t.Context(), pgas.Config{Ranks: 3, SyncTimeout: time.Minute}, c.fn)
			el := time.Since(t0)
			if err == nil {
				t.Fatal("mismatched calls succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if el > time.Second {
				t.Errorf("the mismatch was reported after %v; want within a second", el)
			}
			t.Logf("after %v: %v", el.Round(time.Millisecond), err)
		})
	}
}

// TestMisuseMismatchTimeout: under Config.NoCheck the same mismatch makes
// ranks wait for each other; the wait ends with an error wrapping
// pgas.ErrTimeout after Config.SyncTimeout instead of hanging, or sooner,
// wrapping pgas.ErrReturned, when the rank waited for has returned.
func TestMisuseMismatchTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	t0 := time.Now()
	err := pgas.Run(t.Context(), pgas.Config{Ranks: 3, SyncTimeout: timeout, NoCheck: true}, misuseMismatch(2))
	el := time.Since(t0)
	if err == nil {
		t.Fatal("mismatched calls succeeded")
	}
	if !errors.Is(err, pgas.ErrTimeout) && !errors.Is(err, pgas.ErrReturned) {
		t.Errorf("error wraps neither pgas.ErrTimeout nor pgas.ErrReturned:\n%v", err)
	}
	if el > timeout+2*time.Second {
		t.Errorf("the mismatch failed after %v; want about %v", el, timeout)
	}
	t.Logf("after %v: %v", el.Round(time.Millisecond), err)
}
