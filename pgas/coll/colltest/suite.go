// Package colltest is the conformance suite of package coll: SPMD checks,
// functions of *pgas.Rank, that compare every collective with a naive
// oracle each rank computes for itself from rank ids and indices. The same
// suite runs on every transport: in one process (inproc) or with one rank
// per process (shm, MPI), so checks share no Go memory between ranks.
//
// Checks are registered by the files of this package (movement, vector,
// reductions); Checks returns them sorted by name.
package colltest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

// Check is one conformance check. Run is called on every rank of a job
// with at least MinRanks ranks and returns nil if this rank saw what the
// collective promises, or an error saying what it saw instead.
type Check struct {
	Name     string
	MinRanks int
	Run      func(ctx context.Context, r *pgas.Rank) error
}

var registry []Check

// register adds checks to the suite; files of this package call it from
// init.
func register(cs ...Check) { registry = append(registry, cs...) }

// Checks returns the whole suite sorted by name (a new slice each call).
func Checks() []Check {
	cs := slices.Clone(registry)
	slices.SortFunc(cs, func(a, b Check) int { return strings.Compare(a.Name, b.Name) })
	return cs
}

// RunAll runs every check that fits the job's size, in order, with a
// barrier after each, and returns the first failure wrapped with the
// check's name. It is collective.
func RunAll(ctx context.Context, r *pgas.Rank) error {
	for _, c := range Checks() {
		if r.N() < c.MinRanks {
			continue
		}
		if err := c.Run(ctx, r); err != nil {
			return fmt.Errorf("colltest: %s: %w", c.Name, err)
		}
		if err := r.Barrier(ctx); err != nil {
			return fmt.Errorf("colltest: barrier after %s: %w", c.Name, err)
		}
	}
	return nil
}

// Test runs each check as a subtest in its own pgas.Run with cfg. A zero
// SyncTimeout becomes one minute so that a hang fails the check.
func Test(t *testing.T, cfg pgas.Config) {
	t.Helper()
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = time.Minute
	}
	n := cfg.Ranks
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	for _, c := range Checks() {
		t.Run(c.Name, func(t *testing.T) {
			if n < c.MinRanks {
				t.Skipf("needs %d ranks, job has %d", c.MinRanks, n)
			}
			if err := pgas.Run(t.Context(), cfg, c.Run); err != nil {
				t.Fatal(err)
			}
		})
	}
}
