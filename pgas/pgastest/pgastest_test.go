package pgastest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/pgastest"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

func TestSuiteInproc(t *testing.T) {
	pgastest.Test(t, pgas.Config{Ranks: 4, RanksPerNode: 2, JobID: "suite"})
}

func TestChecks(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range pgastest.Checks() {
		if c.Name == "" || strings.ContainsAny(c.Name, " /") || seen[c.Name] || c.MinRanks < 1 || c.Run == nil {
			t.Errorf("bad check %+v", c)
		}
		seen[c.Name] = true
	}
}

// TestRunAllReportsCheck: RunAll names the failing check.
func TestRunAllReportsCheck(t *testing.T) {
	cfg := pgas.Config{Ranks: 2, SyncTimeout: 10 * time.Second, Transport: &mutant{mode: "cas-lies"}}
	err := pgas.Run(t.Context(), cfg, pgastest.RunAll)
	if err == nil || !strings.Contains(err.Error(), "pgastest: compare-and-swap: ") {
		t.Fatalf("RunAll with a broken CompareAndSwap = %v; want an error naming check compare-and-swap", err)
	}
}

// TestWrapperTransparent: the mutant wrapper without a fault passes the
// suite, so the failures below come from the faults.
func TestWrapperTransparent(t *testing.T) {
	pgastest.Test(t, pgas.Config{Ranks: 3, Transport: &mutant{}})
}

// TestChecksFail: every check that a fault should break fails when the
// transport has that fault.
func TestChecksFail(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		checks []string
	}{
		{"rank-swap", []string{"ids"}},
		{"barrier-early", []string{"barrier-order"}},
		{"notify-waits", []string{"split-phase"}},
		{"get-corrupt", []string{"ids", "elements", "ranges", "get-range-async", "copy-set", "refs", "all-stats"}},
		{"put-drop", []string{"barrier-order", "split-phase", "put-fence", "elements", "atomic-load", "lock", "try-lock", "refs"}},
		{"range-drop", []string{"ranges", "copy-set", "alloc"}},
		{"fetchadd-double", []string{"fetch-add"}},
		{"cas-lies", []string{"compare-and-swap", "try-lock"}},
		{"load-stale", []string{"atomic-load"}},
		{"lock-free-for-all", []string{"lock", "refs"}},
	} {
		for _, name := range tc.checks {
			t.Run(tc.mode+"/"+name, func(t *testing.T) {
				if tc.mode == "lock-free-for-all" && raceEnabled {
					t.Skip("the race detector reports the races that a broken lock causes")
				}
				c := findCheck(t, name)
				cfg := pgas.Config{Ranks: 4, SyncTimeout: 3 * time.Second, Transport: &mutant{mode: tc.mode}}
				// A broken lock shows only when ranks overlap in the
				// critical section, which a loaded machine may not
				// schedule: such a fault gets a few runs to show.
				tries := 1
				if tc.mode == "lock-free-for-all" {
					tries = 5
				}
				var err error
				for range tries {
					if err = pgas.Run(t.Context(), cfg, c.Run); err != nil {
						break
					}
				}
				if err == nil {
					t.Fatalf("check %s passed %d times on a transport with fault %s", name, tries, tc.mode)
				}
				t.Logf("%v", firstLine(err))
			})
		}
	}
}

func findCheck(t *testing.T, name string) pgastest.Check {
	for _, c := range pgastest.Checks() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q", name)
	return pgastest.Check{}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// mutant wraps inproc with one deliberate fault, selected by mode:
//
//	rank-swap          endpoints 0 and 1 report each other's rank
//	barrier-early      rank 0's Barrier returns after Notify (its Wait is
//	                   done at its next synchronisation); puts of other
//	                   ranks are delayed 50ms
//	notify-waits       Notify is a full barrier
//	get-corrupt        gets from rank 1 by other ranks flip a bit
//	put-drop           8-byte puts to the last rank by other ranks are lost
//	range-drop         puts of more than 8 bytes to the last rank by other
//	                   ranks are lost
//	fetchadd-double    FetchAdd with a delta above 1 adds twice the delta
//	cas-lies           CompareAndSwap always swaps and reports success
//	load-stale         Load of a word holding more than 2^20 returns one less
//	lock-free-for-all  a Load 8 bytes past the word of the last FetchAdd of 1
//	                   returns that FetchAdd's old value, so a ticket lock's
//	                   "now serving" word always shows the ticket just taken
type mutant struct{ mode string }

func (m *mutant) Name() string { return "mutant-" + m.mode }

func (m *mutant) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	eps, err := inproc.New().Open(ctx, job)
	if err != nil {
		return nil, err
	}
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = &mutantEP{Endpoint: ep, mode: m.mode, rank: ep.Rank(), last: job.Ranks - 1}
	}
	if m.mode == "rank-swap" && len(out) > 1 {
		out[0].(*mutantEP).rank, out[1].(*mutantEP).rank = 1, 0
	}
	return out, nil
}

type mutantEP struct {
	transport.Endpoint
	mode       string
	rank, last int
	pending    bool // barrier-early: a Wait is owed
	lastAdd    struct {
		ok   bool
		rank int
		off  int64
		old  int64
	} // lock-free-for-all: the last FetchAdd of 1
}

func (e *mutantEP) Rank() int { return e.rank }

func (e *mutantEP) real() int { return e.Endpoint.Rank() }

func (e *mutantEP) Put(ctx context.Context, rank int, off int64, src []byte) error {
	switch {
	case e.mode == "barrier-early" && e.real() != 0:
		time.Sleep(50 * time.Millisecond)
	case e.mode == "put-drop" && rank == e.last && e.real() != e.last && len(src) == 8:
		return nil
	case e.mode == "range-drop" && rank == e.last && e.real() != e.last && len(src) > 8:
		return nil
	}
	return e.Endpoint.Put(ctx, rank, off, src)
}

func (e *mutantEP) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	return transport.Done{Err: e.Put(ctx, rank, off, src)}
}

func (e *mutantEP) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	err := e.Endpoint.Get(ctx, rank, off, dst)
	if e.mode == "get-corrupt" && rank == 1 && e.real() != 1 && len(dst) > 0 {
		dst[0] ^= 0x40
	}
	return err
}

func (e *mutantEP) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	return transport.Done{Err: e.Get(ctx, rank, off, dst)}
}

func (e *mutantEP) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	if e.mode == "fetchadd-double" && delta > 1 {
		delta *= 2
	}
	v, err := e.Endpoint.FetchAdd(ctx, rank, off, delta)
	if e.mode == "lock-free-for-all" && delta == 1 && err == nil {
		e.lastAdd.ok, e.lastAdd.rank, e.lastAdd.off, e.lastAdd.old = true, rank, off, v
	}
	return v, err
}

func (e *mutantEP) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	if e.mode == "cas-lies" {
		for {
			cur, err := e.Endpoint.Load(ctx, rank, off)
			if err != nil {
				return 0, err
			}
			if got, err := e.Endpoint.CompareAndSwap(ctx, rank, off, cur, new); err != nil || got == cur {
				return old, err
			}
		}
	}
	return e.Endpoint.CompareAndSwap(ctx, rank, off, old, new)
}

func (e *mutantEP) Load(ctx context.Context, rank int, off int64) (int64, error) {
	v, err := e.Endpoint.Load(ctx, rank, off)
	switch {
	case e.mode == "load-stale" && v > 1<<20:
		v--
	case e.mode == "lock-free-for-all" && e.lastAdd.ok && rank == e.lastAdd.rank && off == e.lastAdd.off+8:
		v = e.lastAdd.old
	}
	return v, err
}

func (e *mutantEP) Notify(ctx context.Context) error {
	if err := e.owed(ctx); err != nil {
		return err
	}
	if err := e.Endpoint.Notify(ctx); err != nil {
		return err
	}
	if e.mode == "notify-waits" {
		return e.Endpoint.Wait(ctx)
	}
	return nil
}

func (e *mutantEP) Wait(ctx context.Context) error {
	if e.mode == "notify-waits" {
		return nil // Notify waited
	}
	return e.Endpoint.Wait(ctx)
}

func (e *mutantEP) Barrier(ctx context.Context) error {
	if err := e.owed(ctx); err != nil {
		return err
	}
	if e.mode == "barrier-early" && e.real() == 0 {
		e.pending = true
		return e.Endpoint.Notify(ctx)
	}
	return e.Endpoint.Barrier(ctx)
}

// owed does the Wait that a barrier-early Barrier skipped.
func (e *mutantEP) owed(ctx context.Context) error {
	if e.pending {
		e.pending = false
		return e.Endpoint.Wait(ctx)
	}
	return nil
}
