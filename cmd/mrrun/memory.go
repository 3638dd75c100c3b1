package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/pgasmr/pgasmr/internal/memlimit"
	"github.com/pgasmr/pgasmr/internal/size"
	"github.com/pgasmr/pgasmr/pgas"
)

// memHint ends the error of a job stopped at the memory limit.
const memHint = "raise the limit or give the job less input per rank"

// memWatch is the memory watchdog of this process's job; nil when the
// process has no memory limit.
type memWatch struct {
	w      *memlimit.Watchdog
	cancel context.CancelCauseFunc
}

// watchMemory applies the memory limit logic of package memlimit to the
// job this process runs: the whole job for inproc and the baselines, one
// rank under --transport shm (each rank process runs this, with the same
// limits: RLIMIT_AS is inherited, the cgroup shared). It keeps Go's memory
// limit under the process's limit (unless GOMEMLIMIT is set) and returns a
// ctx that the watchdog cancels, with its error as the cause, when the
// job is about to cross the limit. Should the job not stop before it is
// within a margin of the limit (64 MiB of RLIMIT_AS, 16 MiB of a cgroup's),
// the watchdog prints the error and exits the process with status 1: one
// line rather than the runtime's crash.
//
// Limits that cannot be read (no /proc) leave the job unwatched, as it
// was before this watchdog existed.
func watchMemory(ctx context.Context, stderr io.Writer) (context.Context, *memWatch) {
	ls, err := memlimit.Limits()
	if err != nil || len(ls) == 0 {
		return ctx, nil
	}
	jobCtx, cancel := context.WithCancelCause(ctx)
	w, err := memlimit.System{}.Watch(ls, memlimit.Options{
		SetGoLimit: true,
		Hint:       memHint,
		Exceeded:   func(e *memlimit.ExceededError) { cancel(e) },
		Critical:   func(e *memlimit.ExceededError) { atLimit(ctx, stderr, e) }, // its files go first (leftover.go)
	})
	if err != nil {
		cancel(nil)
		return ctx, nil
	}
	return jobCtx, &memWatch{w: w, cancel: cancel}
}

// stop stops the watchdog and restores Go's memory limit.
func (m *memWatch) stop() {
	if m == nil {
		return
	}
	m.w.Stop()
	m.cancel(nil)
}

// jobErr returns the job's error to report: the watchdog's if it stopped
// the job (the job itself then fails with its ctx's cancellation, which
// main would take for an interrupt), err otherwise.
func (m *memWatch) jobErr(err error) error {
	if m != nil {
		if werr := m.w.Err(); werr != nil {
			return werr
		}
	}
	return err
}

// exitOverLimit prints e as main does ("mrrun: [rank N: ]...") and exits
// with status 1, from the watchdog's goroutine while the job still runs:
// the process is at its limit, so the line is built in one buffer.
func exitOverLimit(stderr io.Writer, e *memlimit.ExceededError) {
	var buf [512]byte
	b := append(buf[:0], "mrrun: "...)
	if launcher, rank := rankProcess(); launcher != "" {
		b = append(b, "rank "...)
		b = strconv.AppendInt(b, int64(rank), 10)
		b = append(b, ": "...)
	}
	b = append(append(b, e.Error()...), '\n')
	stderr.Write(b)
	os.Exit(1)
}

// memoryLimit names the effective memory limit of this process for
// --stats ("RLIMIT_AS 2.5 GiB (prlimit/ulimit -v)"), and gives its bytes;
// "" and 0 when there is none.
func memoryLimit() (string, int64) {
	ls, err := memlimit.Limits()
	if err != nil || len(ls) == 0 {
		return "", 0
	}
	return ls[0].String(), ls[0].Bytes
}

// pairBytes is what an app's job holds for each pair of ranks, on top of
// the runtime's pgas.RankCostBytes a rank: the counts and buffers of the
// all-to-all exchanges of package mr's gathers and shuffle (every rank
// holds a few words for every other rank) and the segment pages they
// stage in. Measured as the n² term of the peak resident memory of
// mrrun APP -np N at N = 1,000 and 2,000 on small inputs (264 KB; the
// n term is 50 to 110 KiB a rank): wordcount 279 B a pair, spamcount
// 239, linreg 56, histogram 52 (linux/amd64, Go 1.26). The largest,
// rounded up.
const pairBytes = 288

// init makes pgas count pairBytes for every pair of ranks of the jobs
// mrrun runs against their memory budget (--memory, or the automatic
// one), with the runtime's own cost a rank: a job that cannot fit is
// refused by pgas.Config.Validate, before any rank starts, with the
// figure (-np 100000 needs terabytes; -np 5000 under a 2 GiB cgroup
// 7 GiB), instead of being killed by the system when it gets there.
func init() { pgas.DefaultPairBytes = pairBytes }

// budgetLine returns the line mrrun gives for a job of np ranks that
// does not fit its memory budget (from says where the budget comes
// from, as jobSpec.memoryFrom), or nil if it fits: the check of
// pgas.Config.Validate, in mrrun's words.
func budgetLine(np, ranksPerNode int, memoryBytes int64, from string) error {
	cfg := pgas.Config{Ranks: np, RanksPerNode: ranksPerNode, MemoryBytes: memoryBytes}.WithDefaults()
	var be *pgas.BudgetError
	if err := cfg.Validate(); !errors.As(err, &be) {
		return nil
	}
	on := ""
	if !be.AllRanks {
		on = fmt.Sprintf(" (%d a node)", be.Ranks)
	}
	return usagef("-np %d%s needs about %s of memory (%s a rank for the runtime, %d B for each pair of ranks), over the memory budget of %s (%s); at most %d ranks fit",
		np, on, size.String(be.Need), size.String(be.RankBytes), be.PairBytes, size.String(be.MemoryBytes), from, be.MaxRanks)
}
