package job

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/pgas"
)

func TestRun(t *testing.T) {
	got, ok, err := Run(Options{Ranks: 3, Root: 2}, func(ctx context.Context, r *pgas.Rank) (int, error) {
		if r.N() != 3 {
			t.Errorf("rank %d of %d ranks, want 3", r.ID(), r.N())
		}
		return 10 * r.ID(), r.Barrier(ctx)
	})
	if err != nil || !ok || got != 20 {
		t.Errorf("Run = %v, %v, %v; want rank 2's 20, true, nil", got, ok, err)
	}

	boom := errors.New("boom")
	got, ok, err = Run(Options{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) (int, error) {
		if r.ID() == 1 {
			return 0, boom
		}
		return 7, r.Barrier(ctx)
	})
	if !errors.Is(err, boom) || ok || got != 0 || errors.Is(err, ErrInterrupted) {
		t.Errorf("a failing rank: Run = %v, %v, %v; want 0, false and the rank's error", got, ok, err)
	}

	if _, _, err := Run(Options{Ranks: 2, Root: 2}, func(context.Context, *pgas.Rank) (int, error) { return 0, nil }); err == nil || !strings.Contains(err.Error(), "root 2 is not a rank") {
		t.Errorf("root 2 of 2: %v", err)
	}

	// The flags give the in-process ranks.
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	o := Flags(fs)
	if err := fs.Parse([]string{"-np", "4"}); err != nil || o.Ranks != 4 {
		t.Fatalf("-np 4: %v, Ranks %d", err, o.Ranks)
	}
	n, _, err := Run(*o, func(ctx context.Context, r *pgas.Rank) (int, error) { return r.N(), nil })
	if err != nil || n != 4 {
		t.Errorf("-np 4: %d ranks, %v", n, err)
	}

	// -mode gives the job's mr.Options, and its root is the result's.
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o = Flags(fs)
	if err := fs.Parse([]string{"-np", "3", "-mode", "cyclic+root=2"}); err != nil {
		t.Fatal(err)
	}
	if o.Mode.Dist != distrib.Cyclic || o.Mode.Root != 2 {
		t.Errorf("-mode cyclic+root=2: %v", o.Mode)
	}
	id, ok, err := Run(*o, func(ctx context.Context, r *pgas.Rank) (int, error) { return r.ID(), nil })
	if err != nil || !ok || id != 2 {
		t.Errorf("-mode root=2: rank %d's result, %v, %v; want rank 2's", id, ok, err)
	}
	o.Root = 1
	if _, _, err := Run(*o, func(ctx context.Context, r *pgas.Rank) (int, error) { return 0, nil }); err == nil || !strings.Contains(err.Error(), "mode's root is 2") {
		t.Errorf("Root 1 and root=2: %v", err)
	}
	if err := fs.Parse([]string{"-mode", "sideways"}); err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Errorf("-mode sideways: %v", err)
	}
}

// TestRunInterrupted: SIGINT and SIGTERM end a job whose ranks wait for
// their context, with an error wrapping ErrInterrupted.
func TestRunInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		started := make(chan struct{}, 2)
		go func() {
			<-started
			<-started
			syscall.Kill(syscall.Getpid(), sig)
		}()
		t0 := time.Now()
		_, ok, err := Run(Options{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) (int, error) {
			started <- struct{}{}
			<-ctx.Done()
			return 0, ctx.Err()
		})
		if !errors.Is(err, ErrInterrupted) || ok {
			t.Errorf("%v: Run = %v, %v; want ErrInterrupted", sig, ok, err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("%v: took %v", sig, d)
		}
	}
}

// TestRunZeroIsAnAnswer: a root whose result is the number 0 while other
// ranks return others is an answer, not an empty result; an empty slice on
// the root while another rank holds one is an error.
func TestRunZeroIsAnAnswer(t *testing.T) {
	got, ok, err := Run(Options{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) (int, error) {
		return r.ID(), nil
	})
	if err != nil || !ok || got != 0 {
		t.Errorf("Run = %v, %v, %v; want rank 0's 0", got, ok, err)
	}
	_, _, err = Run(Options{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) ([]int, error) {
		if r.ID() == 2 {
			return []int{1}, nil
		}
		return nil, nil
	})
	if err == nil || !strings.Contains(err.Error(), "empty result while rank 2") {
		t.Errorf("an empty root result: %v", err)
	}
}
