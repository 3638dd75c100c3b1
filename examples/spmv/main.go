// Command spmv runs the sparse matrix-vector kernel of seeds/000 on the
// pgas runtime with each communication strategy (naive, v1, v2, v3),
// checks every result against a sequential oracle, and prints time per step
// and the traffic the runtime counted.
//
//	go run ./examples/spmv -np 4
//	go build -o spmv ./examples/spmv && mrrun exec -np 2 --segment-bytes 256MiB -- ./spmv
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pgasmr/pgasmr/internal/spmv"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/launch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "spmv:", err)
		os.Exit(1)
	}
}

func run() error {
	np := flag.Int("np", runtime.NumCPU(), "number of ranks")
	n := flag.Int64("n", 1<<16, "rows")
	blk := flag.Int64("blk", 4096, "rows per block (BLOCKSIZE)")
	iters := flag.Int("iters", 10, "steps per strategy")
	far := flag.Float64("far", 0.05, "fraction of off-diagonal entries with a random column")
	strategies := flag.String("strategies", "naive,v1,v2,v3", "comma-separated strategies")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *n < 1 || *blk < 1 || *iters < 1 || *far < 0 || *far > 1 {
		return fmt.Errorf("need -n, -blk, -iters >= 1 and 0 <= -far <= 1")
	}
	var list []spmv.Strategy
	for _, s := range strings.Split(*strategies, ",") {
		st, err := spmv.ParseStrategy(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		list = append(list, st)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	p := spmv.Params{N: *n, RNZ: 16, Far: *far, Seed: 1}
	want := spmv.Sequential(p, *iters)
	rowBytes := int64(p.RNZ)*16 + 24
	// Under a launcher (mrrun exec, mpirun) this process is one rank of
	// the launcher's job; otherwise -np ranks run here.
	cfg, err := launch.FromEnv(pgas.Config{Ranks: *np})
	if err != nil {
		return err
	}
	seg := 4*(*n/int64(cfg.Ranks)+*blk)*rowBytes + 32<<20
	if cfg, err = launch.FromEnv(pgas.Config{Ranks: cfg.Ranks, SegmentBytes: seg}); err != nil {
		return fmt.Errorf("%w (mrrun exec: raise --segment-bytes)", err)
	}
	defer launch.Done(cfg) // finalises MPI under mpirun
	out := io.Discard
	if launch.Leader(cfg) {
		out = os.Stdout
	}
	where := "the inproc transport (one process; all ranks on one logical node)"
	if cfg.Transport != nil {
		where = fmt.Sprintf("the %s transport (one process per rank)", cfg.Transport.Name())
	}
	fmt.Fprintf(out, "SpMV y = Dx + Ax, n=%d, 16 off-diagonals per row (%.0f%% random), BLOCKSIZE=%d, %d steps\n",
		*n, *far*100, *blk, *iters)
	fmt.Fprintf(out, "%d ranks on %s\n\n", cfg.Ranks, where)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tms/step\tmax |err|\tremote msgs/step\tremote MB/step\tlocal ops/step\t")
	for _, s := range list {
		var elapsed time.Duration
		var worst float64
		var sum pgas.Stats
		err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
			sv, err := spmv.NewSolver(ctx, r, p, *blk, s)
			if err != nil {
				return err
			}
			r.ResetStats()
			t0 := time.Now()
			for range *iters {
				if err := sv.Step(ctx, s); err != nil {
					return err
				}
			}
			d := time.Since(t0)
			_, total, err := r.AllStats(ctx)
			if err != nil {
				return err
			}
			w := sv.Compare(want)
			// Rank 0 reports; every rank checked its own rows.
			if w != 0 {
				return fmt.Errorf("%v: rank %d: result differs from the sequential oracle by %g", s, r.ID(), w)
			}
			if r.ID() == 0 {
				elapsed, worst, sum = d, w, total
			}
			return nil
		})
		if err != nil {
			return err
		}
		it := float64(*iters)
		local := sum.Local[pgas.OpGet] + sum.Local[pgas.OpPut]
		fmt.Fprintf(tw, "%v\t%.3f\t%g\t%.0f\t%.3f\t%.0f\t\n", s,
			float64(elapsed.Microseconds())/1000/it, worst,
			float64(sum.Messages())/it, float64(sum.BytesSent()+sum.BytesReceived())/1e6/it, float64(local)/it)
	}
	return tw.Flush()
}
