// Command embed is a user's own SPMD program on pgasmr: its main hands a
// job to job.Run and prints what the root rank returns. The same binary
// runs unchanged
//
//	in one process:              go run ./examples/embed -np 4 FILE...
//	as processes on one host:    mrrun exec --transport shm -np 4 -- ./embed FILE...
//
// because job.Run takes the job's configuration from the environment,
// which says whether a launcher started this process as a rank (and keeps
// -np's in-process ranks when none did). It counts the lines of the files
// that contain each word, reduced over the ranks (Collect under the
// partitioned gather, then TopK, which gathers only each rank's best),
// and checks the total number of lines with an Allreduce; the root prints
// the most common words (the output does not depend on the rank count or
// the transport).
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/mr/job"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/reduce"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// summary is what the root returns to main.
type summary struct {
	lines, distinct int64
	top             []mr.KV[string, int64]
}

// byCount orders words by count descending, then by word.
func byCount(a, b mr.KV[string, int64]) int {
	if c := cmp.Compare(b.Value, a.Value); c != 0 {
		return c
	}
	return strings.Compare(a.Key, b.Key)
}

func run() error {
	o := job.Flags(flag.CommandLine)
	top := flag.Int("top", 10, "words to print")
	flag.Parse()
	if flag.NArg() == 0 {
		return fmt.Errorf("usage: embed [-np N] FILE...")
	}
	// Every rank reads the same list of lines: a real program would map
	// over file splits (mr.Files) instead.
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
	s, ok, err := job.Run(*o, func(ctx context.Context, r *pgas.Rank) (summary, error) {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return summary{}, err
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
			return summary{}, err
		}
		counts, err := mr.Collect(ctx, r, st, mr.Gather(reduce.GatherPartitioned))
		if err != nil {
			return summary{}, err
		}
		// A collective beside the MapReduce calls: every rank learns how
		// many lines all the ranks mapped and how many words they reduced.
		// (Allreduce combines a sequence into one value: one call each.)
		sum := func(v int64) (int64, error) {
			out := make([]int64, 1)
			err := coll.Allreduce(ctx, r.World(), coll.Private(out), coll.Private([]int64{v}), 1, coll.Add[int64]())
			return out[0], err
		}
		mapped, err := sum(ms.Elements)
		if err != nil {
			return summary{}, err
		}
		if mapped != int64(len(lines)) {
			return summary{}, fmt.Errorf("ranks mapped %d lines, want %d", mapped, len(lines))
		}
		distinct, err := sum(int64(len(counts.Value)))
		if err != nil {
			return summary{}, err
		}
		jo, _ := mr.JobOptionsFrom(ctx) // -mode root=N: the root job.Run returns
		best, err := mr.TopK(ctx, r, counts.Value, *top, byCount, jo.Root)
		return summary{lines: mapped, distinct: distinct, top: best}, err
	})
	if err != nil || !ok {
		return err
	}
	fmt.Printf("%d lines, %d distinct words\n", s.lines, s.distinct)
	for _, kv := range s.top {
		fmt.Printf("%s\t%d\n", kv.Key, kv.Value)
	}
	return nil
}
