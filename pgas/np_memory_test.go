package pgas_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// rankHeap runs a job of ranks in-process ranks that makes the calls a
// MapReduce job makes (remote puts and gets, the collectives of package
// mr's shuffle and gathers, Stats), and returns the heap and stack bytes
// in use per rank while every rank is alive at its end, after a
// collection: what the runtime keeps for a rank between calls.
func rankHeap(t *testing.T, ranks int) float64 {
	t.Helper()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var held uint64
	cfg := pgas.Config{Ranks: ranks, SegmentBytes: 1 << 20, Turns: -1}
	err := pgas.Run(t.Context(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		w, me, n := r.World(), r.ID(), r.N()
		// What mr's gathers and shuffle call.
		lens := make([]int64, n)
		if err := coll.Allgather(ctx, w, coll.Private(lens), coll.Private([]int64{int64(me % 3)}), 1); err != nil {
			return fmt.Errorf("allgather: %w", err)
		}
		counts := make([]int, n)
		var total int
		for i, l := range lens {
			counts[i] = int(l)
			total += int(l)
		}
		var recv []byte
		if me == 0 {
			recv = make([]byte, total)
		}
		if err := coll.GatherV(ctx, w, coll.Private(recv), coll.Private(make([]byte, counts[me])), counts, nil, nil); err != nil {
			return fmt.Errorf("gatherv: %w", err)
		}
		one := []int64{int64(me)}
		if err := coll.Broadcast(ctx, w, coll.Private(one), coll.Private(one), 1); err != nil {
			return fmt.Errorf("broadcast: %w", err)
		}
		if err := coll.AllreduceInPlace(ctx, w, coll.Private(one), 1, coll.Max[int64]()); err != nil {
			return fmt.Errorf("allreduce: %w", err)
		}
		row := make([]int64, n)
		row[(me+1)%n] = 1
		col := make([]int64, n)
		if err := coll.Exchange(ctx, w, coll.Private(col), coll.Private(row), 1); err != nil {
			return fmt.Errorf("exchange: %w", err)
		}
		sendCounts, recvCounts := make([]int, n), make([]int, n)
		for i := range n {
			sendCounts[i], recvCounts[i] = int(row[i]), int(col[i])
		}
		if err := coll.AlltoallV(ctx, w, coll.Private(make([]byte, 1)), coll.Private([]byte{1}), sendCounts, recvCounts); err != nil {
			return fmt.Errorf("alltoallv: %w", err)
		}
		_ = r.Stats()
		lens, counts, recv, row, col, sendCounts, recvCounts = nil, nil, nil, nil, nil, nil, nil
		// The all-to-all collectives made every rank count traffic with
		// every other (24 bytes a peer, the record of an all-to-all,
		// kept until ResetStats). Past them, one-sided traffic with two
		// peers: the counters of two peers, where a table of every
		// peer made from the start was a cost of every rank in the
		// square of the ranks.
		r.ResetStats()
		reg, err := r.AllAlloc(ctx, 64)
		if err != nil {
			return err
		}
		var b [8]byte
		for _, p := range []int{(me + 1) % n, (me + n/2) % n} {
			if err := r.PutBytes(ctx, p, reg.Off, b[:]); err != nil {
				return err
			}
			if err := r.GetBytes(ctx, p, reg.Off, b[:]); err != nil {
				return err
			}
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if me == 0 {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			held = ms.HeapInuse + ms.StackInuse
		}
		return r.Barrier(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	base := before.HeapInuse + before.StackInuse
	if held < base {
		return 0
	}
	return float64(held-base) / float64(ranks)
}

// TestNPRankMemoryLinear: what the runtime keeps for a rank does not grow
// with the number of ranks. A table of an entry per rank on every rank
// (per-peer counters, the world team's member list, collective plans and
// broadcast trees per member) is memory in the square of the ranks over a
// process that hosts them all: 0.8 GB at 1,000 in-process ranks, 11 GB at
// 4,000. Such tables made a rank of an 800-rank job hold about 4 times
// what a rank of a 200-rank job holds; a constant cost holds the same.
func TestNPRankMemoryLinear(t *testing.T) {
	small := rankHeap(t, 200)
	large := rankHeap(t, 800)
	t.Logf("heap and stacks per rank: %.1f KiB at 200 ranks, %.1f KiB at 800", small/1024, large/1024)
	if small <= 0 {
		t.Fatalf("measured %.0f bytes a rank at 200 ranks: nothing to compare", small)
	}
	if large > 1.5*small {
		t.Errorf("a rank holds %.1f KiB at 800 ranks, %.1f× its %.1f KiB at 200: per-rank state grows with the ranks",
			large/1024, large/small, small/1024)
	}
}

// TestNPRankCostMeasure measures what the runtime costs a rank in resident
// memory (VmRSS: Go heap, stacks and the segment pages a rank touches),
// the figure behind rankCostBytes: set PGAS_NP_MEASURE=1 to run it
// (it starts thousands of ranks and is a measurement, not a check).
func TestNPRankCostMeasure(t *testing.T) {
	if os.Getenv("PGAS_NP_MEASURE") == "" {
		t.Skip("set PGAS_NP_MEASURE=1 to measure")
	}
	for _, n := range []int{1000, 3000} {
		rss0 := vmRSS(t)
		var peak int64
		err := pgas.Run(t.Context(), pgas.Config{Ranks: n}, func(ctx context.Context, r *pgas.Rank) error {
			w, me := r.World(), r.ID()
			one := []int64{int64(me)}
			if err := coll.Broadcast(ctx, w, coll.Private(one), coll.Private(one), 1); err != nil {
				return err
			}
			if err := coll.AllreduceInPlace(ctx, w, coll.Private(one), 1, coll.Max[int64]()); err != nil {
				return err
			}
			counts := make([]int, n)
			for i := range counts {
				counts[i] = 8
			}
			var recv []byte
			if me == 0 {
				recv = make([]byte, 8*n)
			}
			if err := coll.GatherV(ctx, w, coll.Private(recv), coll.Private(make([]byte, 8)), counts, nil, nil); err != nil {
				return err
			}
			counts, recv = nil, nil
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			if me == 0 {
				peak = vmRSS(t)
			}
			return r.Barrier(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d ranks: %.1f KiB of resident memory a rank", n, float64(peak-rss0)/float64(n)/1024)
	}
}

// vmRSS returns the process's resident memory in bytes.
func vmRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}
