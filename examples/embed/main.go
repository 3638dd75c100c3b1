// Command embed is a user's own SPMD program on pgasmr: it calls pgas.Run
// in its main and uses ApplyMap, ApplyReduce and a collective. The same
// binary runs unchanged
//
//	in one process:              go run ./examples/embed -np 4 FILE...
//	as processes on one host:    mrrun exec --transport shm -np 4 -- ./embed FILE...
//
// because it takes its pgas.Config from launch.FromEnv, which picks the
// transport a launcher set up (and keeps -np's in-process ranks when none
// did). It counts the lines of the files that contain each word, reduced
// over the ranks, and checks the total number of lines with an Allreduce;
// rank 0 prints the 10 most common words (the output does not depend on
// the rank count or the transport).
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/reduce"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run() error {
	np := flag.Int("np", runtime.NumCPU(), "in-process ranks (ignored when a launcher started this process as a rank)")
	top := flag.Int("top", 10, "words to print")
	flag.Parse()
	if flag.NArg() == 0 {
		return fmt.Errorf("usage: embed [-np N] FILE...")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg, err := launch.FromEnv(pgas.Config{Ranks: *np})
	if err != nil {
		return err
	}
	defer launch.Done(cfg) // finalises MPI under mpirun
	// Every rank reads the same list of lines: a real program would map
	// over file splits (mr.FileSplits) instead.
	var lines []string
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		ms, err := mr.ApplyMap(ctx, r, mr.Slice(lines), func(_ context.Context, line string, emit func(string, int64)) error {
			words := strings.FieldsFunc(strings.ToLower(line), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsNumber(c) })
			slices.Sort(words)
			for _, w := range slices.Compact(words) {
				emit(w, 1) // one per line containing w
			}
			return nil
		}, st, mr.WithDistribution(distrib.Cyclic))
		if err != nil {
			return err
		}
		// A collective beside the MapReduce calls: every rank learns how
		// many lines all the ranks mapped.
		total := make([]int64, 1)
		if err := coll.Allreduce(ctx, r.World(), coll.Private(total), coll.Private([]int64{ms.Elements}), 1, coll.Add[int64]()); err != nil {
			return err
		}
		if total[0] != int64(len(lines)) {
			return fmt.Errorf("ranks mapped %d lines, want %d", total[0], len(lines))
		}
		type wc struct {
			w string
			n int64
		}
		res, err := mr.ApplyReduce(ctx, r, st, func(_ context.Context, p *reduce.Pairs[string, int64]) ([]wc, error) {
			out := make([]wc, p.Len())
			for i, k := range p.Keys {
				out[i] = wc{k, p.Value(i)}
			}
			return out, nil
		}, mr.Gather(reduce.GatherRoot))
		if err != nil || !res.OK {
			return err
		}
		slices.SortFunc(res.Value, func(a, b wc) int {
			if c := cmp.Compare(b.n, a.n); c != 0 {
				return c
			}
			return strings.Compare(a.w, b.w)
		})
		fmt.Printf("%d lines, %d distinct words\n", total[0], len(res.Value))
		for _, x := range res.Value[:min(*top, len(res.Value))] {
			fmt.Printf("%s\t%d\n", x.w, x.n)
		}
		return nil
	})
}
