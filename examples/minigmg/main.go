// Command minigmg runs the ghost-zone exchange of seeds/003's miniGMG
// (package internal/minigmg) in its three styles, bulk, fine and array,
// on an n^3 grid of cells block-distributed over the ranks, checks the
// cells against a sequential run, and prints per style the time of one
// exchange and of one smoothing step (medians, timed on rank 0 between
// barriers) and the messages and bytes rank 0 sent per exchange.
//
//	go run ./examples/minigmg -np 8 -n 64
//	go run ./examples/minigmg -np 4 -ranks-per-node 2 -link 5us,5GB/s
//	go build -o minigmg ./examples/minigmg && mrrun exec -np 4 -- ./minigmg -n 64
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pgasmr/pgasmr/internal/minigmg"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "minigmg:", err)
		os.Exit(1)
	}
}

func run() error {
	np := flag.Int("np", runtime.NumCPU(), "number of ranks (in one process)")
	n := flag.Int64("n", 64, "cells along each side of the cube")
	steps := flag.Int("steps", 20, "smoothing steps a style")
	styles := flag.String("styles", "bulk,fine,array", "comma-separated styles")
	perNode := flag.Int("ranks-per-node", 0, "ranks per logical node (in one process; 0: one node)")
	link := flag.String("link", "", "in one process, emulate a network between the logical nodes: LATENCY[,BANDWIDTH] (e.g. 5us,5GB/s)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *n < 2 || *steps < 1 {
		return fmt.Errorf("need -n >= 2 and -steps >= 1")
	}
	var list []minigmg.Style
	for _, s := range strings.Split(*styles, ",") {
		st, err := minigmg.ParseStyle(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		list = append(list, st)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// Under a launcher (mrrun exec, mpirun) this process is one rank of
	// the launcher's job; otherwise -np ranks run here. Two grids of a
	// rank's box and its ghost zone, the bulk style's slots, room for the
	// allocator.
	cfg, err := launch.FromEnv(pgas.Config{Ranks: *np})
	if err != nil {
		return err
	}
	box := (*n + 2) * (*n + 2) * (*n + 2) * 8 / int64(cfg.Ranks)
	cfg.RanksPerNode, cfg.SegmentBytes = *perNode, (3*box+4<<20)&^7
	if cfg.Transport == nil && *link != "" {
		if *perNode < 1 {
			return fmt.Errorf("-link needs -ranks-per-node")
		}
		nl, err := wrap.ParseLink(*link)
		if err != nil {
			return fmt.Errorf("-link %s: %w", *link, err)
		}
		nl.RanksPerNode = *perNode
		cfg.Transport = wrap.NewNodeLatency(inproc.New(), nl)
	}
	if cfg, err = launch.FromEnv(cfg); err != nil {
		return fmt.Errorf("%w (mrrun exec: raise --segment-bytes)", err)
	}
	defer launch.Done(cfg)
	out := io.Discard
	if launch.Leader(cfg) {
		out = os.Stdout
	}
	want := minigmg.Sequential(*n, *steps)
	g := minigmg.ProcGrid(cfg.Ranks)
	fmt.Fprintf(out, "miniGMG ghost exchange: %d^3 cells on %d ranks (%dx%dx%d boxes), %d steps a style\n", *n, cfg.Ranks, g[0], g[1], g[2], *steps)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "style\texchange (median)\tstep (median)\tmessages an exchange\tbytes an exchange\t")
	for _, st := range list {
		var ex, sm time.Duration
		var msgs, bytes int64
		err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
			s, err := minigmg.NewSolver(ctx, r, *n, st)
			if err != nil {
				return err
			}
			exs, sms := make([]time.Duration, *steps), make([]time.Duration, *steps)
			r.ResetStats()
			for i := range *steps {
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				t0 := time.Now()
				if err := s.Exchange(ctx); err != nil {
					return err
				}
				t1 := time.Now()
				s.Step()
				if err := r.Barrier(ctx); err != nil {
					return err
				}
				exs[i], sms[i] = t1.Sub(t0), time.Since(t0)
			}
			stats := r.Stats()
			if err := s.Check(want); err != nil {
				return err
			}
			if r.ID() == 0 {
				slices.Sort(exs)
				slices.Sort(sms)
				ex, sm = exs[len(exs)/2], sms[len(sms)/2]
				msgs, bytes = stats.Messages()/int64(*steps), stats.BytesSent()/int64(*steps)
			}
			return s.Free(ctx)
		})
		if err != nil {
			return fmt.Errorf("%v: %w", st, err)
		}
		fmt.Fprintf(tw, "%v\t%v\t%v\t%d\t%d\t\n", st, ex.Round(time.Microsecond), sm.Round(time.Microsecond), msgs, bytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "every style's cells equal the sequential run's")
	return nil
}
