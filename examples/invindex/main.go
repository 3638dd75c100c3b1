// Command invindex builds an inverted index of text files: for every word,
// the (file, line) positions where it occurs, sorted. It is a user's own
// job on pgasmr, written with the public API only:
//
//	go run ./examples/invindex -np 4 DIR...              # the whole index
//	go run ./examples/invindex -np 4 -top 10 DIR...      # the 10 words on most lines
//	go run ./examples/invindex -word gopher DIR...       # one word's positions
//	mrrun exec -np 4 -- ./invindex -top 10 DIR...        # ranks as processes
//
// The map reads whole files (mr.AllFiles: line numbers count from a file's
// start) line by line (mr.Split.Lines) and emits (word, Pos) once for
// every line a word is on; the store keeps every value (reduce.KeepAll),
// Pos moves between ranks with msgpack (reduce.CodecFor's default for a
// struct), and the reduce sorts each word's positions. Words are maximal
// runs of letters and digits, lower-cased.
//
// Output: one line per word, in word order (with -top: most positions
// first, ties by word): the word, its number of positions and each
// position as FILE:LINE, tab-separated, sorted by file then line. It does
// not depend on the rank count or on -mode (mrrun's --mode: distribution,
// gather mode, transfer, root).
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/mr/job"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "invindex:", err)
		os.Exit(1)
	}
}

// Pos is where a word occurs: a file and a line of it (from 1).
type Pos struct {
	File string
	Line int
}

func comparePos(a, b Pos) int {
	return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
}

// Options configure Index.
type Options struct {
	Top  int    // only the Top words on most lines (0: every word)
	Word string // only this word ("": every word)
}

// defaults: the element map only.
var defaults = mr.Defaults{}

// Index is the job every rank runs: it indexes the files under paths and
// returns every word with its sorted positions, in word order (with o.Top,
// the o.Top words with most positions), on every rank that has the
// reduce's result: every rank by default, the root under -mode's other
// gather modes.
func Index(ctx context.Context, r *pgas.Rank, paths []string, o Options) ([]mr.KV[string, []Pos], error) {
	in, _, err := mr.AllFiles(ctx, r, mr.FileOptions{}, paths...)
	if err != nil {
		return nil, err
	}
	st, err := reduce.NewHashStore[string, Pos](reduce.KeepAll[Pos]())
	if err != nil {
		return nil, err
	}
	only := strings.ToLower(o.Word)
	lines := func(ctx context.Context, s mr.Split, emit func(string, Pos)) error {
		n := 0 // the line number: a split is a whole file
		return s.Lines(ctx, func(l mr.Line) error {
			n++
			words := strings.FieldsFunc(strings.ToLower(string(l.Text)), notWord)
			slices.Sort(words)
			for _, w := range slices.Compact(words) { // once per line
				if only == "" || w == only {
					emit(w, Pos{s.Path, n})
				}
			}
			return nil
		})
	}
	if _, err := mr.ApplyMap(ctx, r, in, lines, st); err != nil {
		return nil, err
	}
	res, err := mr.ReduceKeys(ctx, r, st, func(_ context.Context, _ string, ps []Pos) ([]Pos, error) {
		slices.SortFunc(ps, comparePos)
		return ps, nil
	})
	idx := res.Value
	if err != nil || o.Top <= 0 {
		return idx, err
	}
	slices.SortFunc(idx, func(a, b mr.KV[string, []Pos]) int {
		return cmp.Or(cmp.Compare(len(b.Value), len(a.Value)), strings.Compare(a.Key, b.Key))
	})
	return idx[:min(o.Top, len(idx))], nil
}

func notWord(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }

// run is main with its arguments and output.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("invindex", flag.ContinueOnError)
	jo := job.Flags(fs)
	var o Options
	fs.IntVar(&o.Top, "top", 0, "print only the `N` words on most lines")
	fs.StringVar(&o.Word, "word", "", "print only `WORD`'s positions")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("usage: invindex [-np N] [-mode M] [-top N | -word W] PATH...")
	}
	if err := jo.Mode.Validate(defaults); err != nil {
		return fmt.Errorf("-mode: %w", err)
	}
	idx, ok, err := job.Run(*jo, func(ctx context.Context, r *pgas.Rank) ([]mr.KV[string, []Pos], error) {
		return Index(ctx, r, fs.Args(), o)
	})
	if err != nil || !ok {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, kv := range idx {
		fmt.Fprintf(w, "%s\t%d", kv.Key, len(kv.Value))
		for _, p := range kv.Value {
			fmt.Fprintf(w, "\t%s:%d", p.File, p.Line)
		}
		w.WriteByte('\n')
	}
	return w.Flush()
}
