package pgastest

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
)

// Check is one conformance check. Run is called on every rank of a job
// with at least MinRanks ranks; it returns nil if this rank saw the
// behaviour the pgas contract promises, or an error saying what it saw
// instead.
type Check struct {
	Name     string
	MinRanks int
	Run      func(ctx context.Context, r *pgas.Rank) error
}

// Checks returns the whole suite, in the order RunAll runs it. The slice is
// new on every call. The checks are:
//
//	ids               ID, N, Node, NodeOf, Nodes agree with Config and across ranks
//	barrier-order     a put before a barrier is visible after it (ring of puts)
//	split-phase       Notify does not wait; work between Notify and Wait; puts visible after Wait
//	put-fence         puts complete at Fence (signalled by an atomic) and at Fence+Barrier
//	elements          Get/Put, ownership and pointers on cyclic, blocked, Star, Indefinite arrays
//	ranges            GetRange/PutRange across blocks and ranks, partial last block
//	get-range-async   many outstanding GetRangeAsync handles
//	copy-set          Set, and Copy between arrays of different layouts
//	fetch-add         exact FetchAdd totals from all ranks, growing old values
//	compare-and-swap  exactly one winner of a CompareAndSwap election
//	atomic-load       AtomicLoad after a barrier and of concurrent FetchAdds
//	lock              mutual exclusion of a non-atomic read-modify-write
//	try-lock          TryLock fails on a held lock, one winner on a free one
//	refs              LockRef and ArrayRef published in shared arrays, opened elsewhere
//	alloc             AllAlloc, GlobalAlloc, Alloc, Free: zeroed, disjoint, reusable; out of memory
//	stats             exact counters after a known pattern of local and remote operations
//	all-stats         AllStats returns every rank's counters and their exact sum
//	cast              Cast(q) is q's segment or nil; loads, stores under a lock and CountCast through it
//	stale-read        no read after a barrier or Notify/Wait returns a value from before it
//	split-phase-read  data read between Notify and Wait does not make later reads stale
//	false-sharing     ranks writing different bytes of one line lose none of them
//	locked-counter    Get+Put increments under a lock: none lost
//	strided           GetStrided/PutStrided of sub-boxes (transposed, sliced) against element-by-element packing
func Checks() []Check {
	return []Check{
		{"ids", 1, checkIDs},
		{"barrier-order", 1, checkBarrierOrder},
		{"split-phase", 1, checkSplitPhase},
		{"put-fence", 1, checkPutFence},
		{"elements", 1, checkElements},
		{"ranges", 1, checkRanges},
		{"get-range-async", 1, checkGetRangeAsync},
		{"copy-set", 1, checkCopySet},
		{"fetch-add", 1, checkFetchAdd},
		{"compare-and-swap", 1, checkCompareAndSwap},
		{"atomic-load", 1, checkAtomicLoad},
		{"lock", 1, checkLock},
		{"try-lock", 1, checkTryLock},
		{"refs", 1, checkRefs},
		{"alloc", 1, checkAlloc},
		{"stats", 1, checkStats},
		{"all-stats", 1, checkAllStats},
		{"cast", 1, checkCast},
		{"stale-read", 1, checkStaleRead},
		{"split-phase-read", 1, checkSplitPhaseRead},
		{"false-sharing", 1, checkFalseSharing},
		{"locked-counter", 1, checkLockedCounter},
		{"strided", 1, checkStrided},
	}
}

// RunAll runs every check that fits the job's size on this rank, in order,
// with a barrier after each. It returns the first failure, wrapped with the
// check's name. It is collective: every rank of the job calls it.
func RunAll(ctx context.Context, r *pgas.Rank) error {
	for _, c := range Checks() {
		if r.N() < c.MinRanks {
			continue
		}
		if err := c.Run(ctx, r); err != nil {
			return fmt.Errorf("pgastest: %s: %w", c.Name, err)
		}
		if err := r.Barrier(ctx); err != nil {
			return fmt.Errorf("pgastest: barrier after %s: %w", c.Name, err)
		}
	}
	return nil
}

// testSyncTimeout replaces a zero Config.SyncTimeout in Test.
const testSyncTimeout = time.Minute

// Test runs every check as a subtest named after it, each in its own
// pgas.Run with cfg, and then the whole suite in one job (subtest
// "RunAll"). Checks that need more ranks than cfg has are skipped. A zero
// cfg.SyncTimeout is replaced by one minute, so that a hang fails the check
// instead of the test binary. A non-empty cfg.JobID gets a suffix per job
// ("-03-elements"), the same in every process that runs Test, so that
// process-per-rank transports can pair up the jobs of their processes.
func Test(t *testing.T, cfg pgas.Config) {
	t.Helper()
	n := cfg.WithDefaults().Ranks
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = testSyncTimeout
	}
	job := func(k int, name string) pgas.Config {
		c := cfg
		if c.JobID != "" {
			c.JobID = fmt.Sprintf("%s-%02d-%s", cfg.JobID, k, name)
		}
		return c
	}
	checks := Checks()
	for k, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			if n < c.MinRanks {
				t.Skipf("needs %d ranks, job has %d", c.MinRanks, n)
			}
			if err := pgas.Run(t.Context(), job(k, c.Name), c.Run); err != nil {
				t.Fatalf("%s on %d ranks: %v", c.Name, n, err)
			}
		})
	}
	t.Run("RunAll", func(t *testing.T) {
		if err := pgas.Run(t.Context(), job(len(checks), "all"), RunAll); err != nil {
			t.Fatalf("RunAll on %d ranks: %v", n, err)
		}
	})
}

// scaled returns n at up to 8 ranks and proportionally less above, at
// least 1, so that a check's total work stays bounded.
func scaled(r *pgas.Rank, n int) int {
	if r.N() <= 8 {
		return n
	}
	return max(1, n*8/r.N())
}

// spinLimit bounds spinUntil: a condition that other ranks should make true
// promptly is reported as a failure after this long.
const spinLimit = 20 * time.Second

// spinUntil polls cond until it reports true, backing off, and fails after
// spinLimit or when ctx is done.
func spinUntil(ctx context.Context, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(spinLimit)
	for i := 0; ; i++ {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still not true after %v", what, spinLimit)
		}
		if i < 16 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// val is the value element i holds in phase salt of a check: distinct for
// distinct (i, salt) in the suite's ranges, never zero.
func val(i, salt int64) int64 { return i*7919 + salt*1_000_003 + 1 }

// span returns the bounds [lo, hi) of part p of n items cut into parts
// pieces of nearly equal size.
func span(n int64, p, parts int) (lo, hi int64) {
	return n * int64(p) / int64(parts), n * int64(p+1) / int64(parts)
}

// partOf returns the part of [0, n) cut into parts pieces that holds i.
func partOf(n, i int64, parts int) int {
	for p := range parts {
		if _, hi := span(n, p, parts); i < hi {
			return p
		}
	}
	return -1
}

// next and prev are the ring neighbours of this rank.
func next(r *pgas.Rank) int { return (r.ID() + 1) % r.N() }
func prev(r *pgas.Rank) int { return (r.ID() + r.N() - 1) % r.N() }
