// Command bigrams prints the k most frequent bigrams (pairs of consecutive
// words) of a corpus of text files. It is a user's own job on pgasmr,
// written with the public API only:
//
//	go run ./examples/bigrams -np 4 -k 20 DIR...
//	mrrun exec -np 4 -- ./bigrams -k 20 DIR...      # ranks as processes
//
// The map reads whole files (mr.AllFiles: listed once, on rank 0) and
// emits (Bigram, 1) for every two consecutive words of a file. The key is
// a struct: it moves between ranks with msgpack (reduce.CodecFor's
// default) and the store orders it by its words (reduce.NewHashStoreFunc;
// reduce.NewEncodedHashStore needs no compare function, but orders keys
// by their encodings, not by their words). Counts are summed as they
// are emitted (reduce.Sum). The reduce is partitioned: every bigram is
// counted on one rank (the ranks of a node first combine their counts in
// the node's table, which the map fills as it goes: mr.WithReduce), and
// mr.TopK gathers only each rank's k best to the root. Words are maximal
// runs of letters, lower-cased.
//
// Output: one line per bigram, most frequent first, ties in the order of
// the first word, then the second: the count, then the two words,
// tab-separated. It does not depend on the rank count or on -mode
// (mrrun's --mode: distribution, gather mode, transfer, node combining,
// root).
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/mr/job"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bigrams:", err)
		os.Exit(1)
	}
}

// Bigram is two consecutive words.
type Bigram struct{ First, Second string }

func compareBigrams(a, b Bigram) int {
	return cmp.Or(strings.Compare(a.First, b.First), strings.Compare(a.Second, b.Second))
}

// byCount orders bigrams by count, the most frequent first, then by their
// words: a total order, so that the top k is the same at any rank count.
func byCount(a, b mr.KV[Bigram, int64]) int {
	return cmp.Or(cmp.Compare(b.Value, a.Value), compareBigrams(a.Key, b.Key))
}

// Options configure Top.
type Options struct {
	mr.Options     // -mode
	K          int // bigrams to print
}

// defaults: the element map only; the partitioned gather.
var defaults = mr.Defaults{}

// Top is the job every rank runs: it returns, on o.Root, the o.K most
// frequent bigrams of the files under paths with their counts, in byCount
// order.
func Top(ctx context.Context, r *pgas.Rank, paths []string, o Options) ([]mr.KV[Bigram, int64], error) {
	in, _, err := mr.AllFiles(ctx, r, mr.FileOptions{}, paths...)
	if err != nil {
		return nil, err
	}
	st, err := reduce.NewHashStoreFunc(compareBigrams, reduce.Sum[int64]())
	if err != nil {
		return nil, err
	}
	pairs := func(ctx context.Context, s mr.Split, emit func(Bigram, int64)) error {
		text, err := s.Read(nil)
		if err != nil {
			return err
		}
		words := strings.FieldsFunc(strings.ToLower(string(text)), notLetter)
		for i := 1; i < len(words); i++ {
			emit(Bigram{words[i-1], words[i]}, 1)
		}
		return nil
	}
	// o's reduce options without the merge to the root that
	// Options.ReduceOptions adds to a partitioned gather: TopK brings only
	// candidates there. (Under GatherNone a key's counts are spread over
	// the ranks: they must merge.)
	g := o.Resolve(defaults).Gather
	ro := o.ReduceOptions(defaults)
	if g == reduce.GatherPartitioned {
		ro = append(ro, mr.NoMerge())
	}
	if _, err := mr.ApplyMap(ctx, r, in, pairs, st, append(o.MapOptions(), mr.WithReduce(ro...))...); err != nil {
		return nil, err
	}
	counts, err := mr.ReduceKeys(ctx, r, st, func(_ context.Context, _ Bigram, n []int64) (int64, error) {
		return n[0], nil
	}, ro...)
	if err != nil {
		return nil, err
	}
	mine := counts.Value
	if g == reduce.GatherAll && r.ID() != o.Root {
		mine = nil // every rank holds every key: the root's are all
	}
	return mr.TopK(ctx, r, mine, o.K, byCount, o.Root)
}

func notLetter(c rune) bool { return !unicode.IsLetter(c) }

// run is main with its arguments and output.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bigrams", flag.ContinueOnError)
	jo := job.Flags(fs)
	var o Options
	fs.IntVar(&o.K, "k", 20, "bigrams to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("usage: bigrams [-np N] [-mode M] [-k K] PATH...")
	}
	o.Options = jo.Mode
	if err := o.Validate(defaults); err != nil {
		return fmt.Errorf("-mode: %w", err)
	}
	top, ok, err := job.Run(*jo, func(ctx context.Context, r *pgas.Rank) ([]mr.KV[Bigram, int64], error) {
		return Top(ctx, r, fs.Args(), o)
	})
	if err != nil || !ok {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, kv := range top {
		fmt.Fprintf(w, "%d\t%s\t%s\n", kv.Value, kv.Key.First, kv.Key.Second)
	}
	return w.Flush()
}
