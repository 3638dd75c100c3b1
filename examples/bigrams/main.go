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
// are emitted (reduce.Sum) and read with mr.Collect. The reduce is
// partitioned unless -mode names another gather mode: every bigram is
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

// defaults: the element map only; the partitioned gather (see Top).
var defaults = mr.Defaults{}

// Top is the job every rank runs: it returns, on the job's root, the k
// most frequent bigrams of the files under paths with their counts, in
// byCount order.
func Top(ctx context.Context, r *pgas.Rank, paths []string, k int) ([]mr.KV[Bigram, int64], error) {
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
	// Partitioned unless -mode asks for another gather: each rank keeps
	// the bigrams it owns, and TopK brings only its k best to the root.
	jo, _ := mr.JobOptionsFrom(ctx)
	var ro []mr.ReduceOption
	if jo.Resolve(defaults).Gather == reduce.GatherPartitioned {
		ro = append(ro, mr.Gather(reduce.GatherPartitioned))
	}
	if _, err := mr.ApplyMap(ctx, r, in, pairs, st, mr.WithReduce(ro...)); err != nil {
		return nil, err
	}
	counts, err := mr.Collect(ctx, r, st, ro...)
	if err != nil {
		return nil, err
	}
	return mr.TopK(ctx, r, counts.Value, k, byCount, jo.Root)
}

func notLetter(c rune) bool { return !unicode.IsLetter(c) }

// run is main with its arguments and output.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bigrams", flag.ContinueOnError)
	jo := job.Flags(fs)
	k := fs.Int("k", 20, "bigrams to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("usage: bigrams [-np N] [-mode M] [-k K] PATH...")
	}
	if err := jo.Mode.Validate(defaults); err != nil {
		return fmt.Errorf("-mode: %w", err)
	}
	top, ok, err := job.Run(*jo, func(ctx context.Context, r *pgas.Rank) ([]mr.KV[Bigram, int64], error) {
		return Top(ctx, r, fs.Args(), *k)
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
