package pgas_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// TestBadAccess: pgas checks every access it is given by (rank, offset),
// local or remote, before it reaches the transport (which relies on it):
// bytes outside the segment and misaligned atomics are errors wrapping the
// transport's sentinels, nothing is counted and nothing reaches the
// endpoint, and a rank out of range panics.
func TestBadAccess(t *testing.T) {
	const ranks, seg = 2, 1 << 20
	c := wrap.NewCounting(inproc.New())
	cfg := pgas.Config{Ranks: ranks, SegmentBytes: seg, Transport: c}
	err := pgas.Run(t.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		before, seen := r.Stats(), c.Counts(r.ID())
		buf := make([]byte, 8)
		for _, target := range []int{r.ID(), 1 - r.ID()} {
			for _, tc := range []struct {
				name string
				err  error
				want error
			}{
				{"PutBytes past the end", r.PutBytes(ctx, target, seg-4, buf), transport.ErrOutOfRange},
				{"GetBytes at a negative offset", r.GetBytes(ctx, target, -8, buf), transport.ErrOutOfRange},
				{"GetBytesAsync past the end", r.GetBytesAsync(ctx, target, seg, buf, nil).Wait(ctx), transport.ErrOutOfRange},
				{"PutBytesAsync past the end", r.PutBytesAsync(ctx, target, seg-1, buf, nil).Wait(ctx), transport.ErrOutOfRange},
				{"FetchAdd misaligned", errOf(r.FetchAdd(ctx, target, 4, 1)), transport.ErrMisaligned},
				{"CompareAndSwap at the end", errOf(r.CompareAndSwap(ctx, target, seg, 0, 1)), transport.ErrOutOfRange},
				{"AtomicLoad at a negative offset", errOf(r.AtomicLoad(ctx, target, -8)), transport.ErrOutOfRange},
			} {
				if !errors.Is(tc.err, tc.want) {
					return fmt.Errorf("%s of rank %d: %v; want %v", tc.name, target, tc.err, tc.want)
				}
			}
		}
		for _, bad := range []int{-1, ranks} {
			if !panics(func() { r.GetBytes(ctx, bad, 0, buf) }) || !panics(func() { r.FetchAdd(ctx, bad, 0, 1) }) {
				return fmt.Errorf("an access to rank %d did not panic", bad)
			}
		}
		if after := r.Stats(); !reflect.DeepEqual(after, before) {
			return fmt.Errorf("bad accesses were counted: Stats %+v, before %+v", after, before)
		}
		if got := c.Counts(r.ID()); !reflect.DeepEqual(got, seen) {
			return fmt.Errorf("bad accesses reached the transport: %+v, before %+v", got, seen)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func errOf(_ int64, err error) error { return err }

func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

// TestRunUnderLauncher: a process that a launcher started as one of
// several ranks, running a Config without a Transport, would run a whole
// in-process job in each process: Run refuses, saying what to call.
func TestRunUnderLauncher(t *testing.T) {
	for _, v := range []string{"PGASMR_SHM_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "2")
			ran := false
			err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
				ran = true
				return nil
			})
			if err == nil || ran || !strings.Contains(err.Error(), "launch.FromEnv") || !strings.Contains(err.Error(), v+"=2") {
				t.Fatalf("err = %v (ran %v); want a refusal naming %s and launch.FromEnv", err, ran, v)
			}
			// A launcher's job of one process, and in-process ranks asked
			// for by name, run.
			t.Setenv(v, "1")
			if err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error { return nil }); err != nil {
				t.Fatalf("%s=1: %v", v, err)
			}
			t.Setenv(v, "2")
			if err := pgas.Run(context.Background(), pgas.Config{Ranks: 2, Transport: inproc.New()}, func(ctx context.Context, r *pgas.Rank) error { return nil }); err != nil {
				t.Fatalf("an explicit inproc transport: %v", err)
			}
		})
	}
}
