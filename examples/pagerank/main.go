// Command pagerank ranks the nodes of a directed graph with PageRank, an
// iterative job of chained MapReduce stages. It is a user's own job on
// pgasmr, written with the public API only:
//
//	go run ./examples/pagerank -np 4 -iter 30 -top 10 edges.txt
//	mrrun exec -np 4 -- ./pagerank edges.txt.gz     # ranks as processes
//
// Input: text files or directories of them (.gz, .bz2 and .zst read as
// they are), one edge a line: two node names separated by blanks, FROM
// TO. Blank lines and lines starting with # are skipped; any other line
// without exactly two names is an error naming the file and the offset.
// A node is every name that appears; an edge given twice counts twice.
//
// The stages:
//   - the graph: the map reads the lines (mr.LineMap over split-aligned
//     file splits) and emits (FROM, TO) and (TO, "") for each edge; the
//     reduce gathers each node's out-links in input order, partitioned:
//     each node on the rank that owns it (mr.Gather(GatherPartitioned)).
//   - each iteration maps every rank's own part where it lies (mr.Local):
//     a node sends its rank divided by its out-degree along each link, and
//     its links to itself; the reduce, partitioned again, adds what each
//     node receives into its next rank. The rank of the nodes without
//     out-links (dangling) is spread over all nodes.
//   - the result: the last part's ranks are collected where the job's
//     mode says (mr.Collect without options: every rank; -mode
//     gather-root: the root), and sorted.
//
// Ranks are fixed-point integers, Scale (10^12) being the whole graph's
// mass: integer sums do not depend on their order, so every rank count,
// distribution and gather mode computes the same bits, as the sequential
// oracle of the tests does. Each iteration computes
//
//	next(v) = (100-d)·Scale/(100·N) + d·(Σ_{u→v} rank(u)/outdeg(u) + dangling/N)/100
//
// with the damping d in percent (-damping, 85) and integer division; the
// job stops after -iter iterations or once no rank changes.
//
// Output: a line saying how many nodes and iterations, then one line per
// node (the -top first, or all), highest rank first, ties by name: the
// rank as a decimal fraction of the whole, and the name, tab-separated.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/mr/job"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pagerank:", err)
		os.Exit(1)
	}
}

// Scale is the fixed-point rank of the whole graph.
const Scale = 1_000_000_000_000

// Options configure PageRank.
type Options struct {
	Iter      int   // iterations at most
	Damping   int64 // percent
	SplitSize int64 // bytes of input a map call reads (0: whole files)
}

// Node is a node's state between iterations.
type Node struct {
	Rank  int64
	Links []string // out-links, in input order
}

// Msg is what a node receives in an iteration: a share of a node's rank
// along a link, or its own links.
type Msg struct {
	Share int64
	Links []string
	Self  bool // Links are the receiver's own
}

// Result is the outcome of PageRank.
type Result struct {
	Ranks      []mr.KV[string, int64] // highest first, ties by name
	Iterations int
}

// PageRank is the job every rank runs; the result is whole where the
// job's mode gathers it (every rank by default).
func PageRank(ctx context.Context, r *pgas.Rank, paths []string, o Options) (Result, error) {
	in, _, err := mr.AllFiles(ctx, r, mr.FileOptions{SplitBytes: o.SplitSize}, paths...)
	if err != nil {
		return Result{}, err
	}
	edges, err := reduce.NewHashStore[string, string](reduce.KeepAll[string]())
	if err != nil {
		return Result{}, err
	}
	if _, err := mr.ApplyMap(ctx, r, in, mr.LineMap(readEdge), edges); err != nil {
		return Result{}, err
	}
	graph, err := mr.ReduceKeys(ctx, r, edges, func(_ context.Context, _ string, to []string) (Node, error) {
		return Node{Links: slices.DeleteFunc(to, func(s string) bool { return s == "" })}, nil
	}, mr.Gather(reduce.GatherPartitioned))
	if err != nil {
		return Result{}, err
	}
	part := graph.Value // this rank's nodes
	counts, err := mr.AllGatherValues(ctx, r, int64(len(part)))
	if err != nil {
		return Result{}, err
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return Result{}, fmt.Errorf("no edges in %s", strings.Join(paths, " "))
	}
	for i := range part {
		part[i].Value.Rank = Scale / n
	}
	msgs, err := reduce.NewHashStore[string, Msg](reduce.KeepAll[Msg]())
	if err != nil {
		return Result{}, err
	}
	send := func(_ context.Context, kv mr.KV[string, Node], emit func(string, Msg)) error {
		emit(kv.Key, Msg{Links: kv.Value.Links, Self: true})
		for _, to := range kv.Value.Links {
			emit(to, Msg{Share: kv.Value.Rank / int64(len(kv.Value.Links))})
		}
		return nil
	}
	res := Result{}
	for changed := true; changed && res.Iterations < o.Iter; res.Iterations++ {
		var dangling int64
		for _, kv := range part {
			if len(kv.Value.Links) == 0 {
				dangling += kv.Value.Rank
			}
		}
		all, err := mr.AllGatherValues(ctx, r, dangling)
		if err != nil {
			return Result{}, err
		}
		dangling = 0
		for _, d := range all {
			dangling += d
		}
		base := (100 - o.Damping) * Scale / (100 * n)
		if _, err := mr.ApplyMap(ctx, r, mr.Local(part), send, msgs); err != nil {
			return Result{}, err
		}
		next, err := mr.ReduceKeys(ctx, r, msgs, func(_ context.Context, _ string, ms []Msg) (Node, error) {
			var nd Node
			sum := dangling / n
			for _, m := range ms {
				if m.Self {
					nd.Links = m.Links
				}
				sum += m.Share
			}
			nd.Rank = base + o.Damping*sum/100
			return nd, nil
		}, mr.Gather(reduce.GatherPartitioned))
		if err != nil {
			return Result{}, err
		}
		same := slices.EqualFunc(part, next.Value, func(a, b mr.KV[string, Node]) bool { return a.Value.Rank == b.Value.Rank })
		flags, err := mr.AllGatherValues(ctx, r, same)
		if err != nil {
			return Result{}, err
		}
		changed = slices.Contains(flags, false)
		part = next.Value
	}
	ranks, err := reduce.NewHashStore[string, int64](reduce.Max[int64]())
	if err != nil {
		return Result{}, err
	}
	if _, err := mr.ApplyMap(ctx, r, mr.Local(part), func(_ context.Context, kv mr.KV[string, Node], emit func(string, int64)) error {
		emit(kv.Key, kv.Value.Rank)
		return nil
	}, ranks); err != nil {
		return Result{}, err
	}
	final, err := mr.Collect(ctx, r, ranks) // where the job's mode says
	if err != nil {
		return Result{}, err
	}
	res.Ranks = final.Value
	slices.SortFunc(res.Ranks, func(a, b mr.KV[string, int64]) int {
		return cmp.Or(cmp.Compare(b.Value, a.Value), strings.Compare(a.Key, b.Key))
	})
	return res, nil
}

// readEdge emits an edge's source with its target, and its target with
// "" (so that a node with no out-link is a node too).
func readEdge(_ context.Context, l mr.Line, emit func(string, string)) error {
	text := bytes.TrimSpace(l.Text)
	if len(text) == 0 || text[0] == '#' {
		return nil
	}
	f := strings.Fields(string(text))
	if len(f) != 2 {
		return fmt.Errorf("%s: line at offset %d has %d names, want two (FROM TO): %q", l.Path, l.Off, len(f), text)
	}
	emit(f[0], f[1])
	emit(f[1], "")
	return nil
}

// run is main with its arguments and output.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pagerank", flag.ContinueOnError)
	jo := job.Flags(fs)
	var o Options
	fs.IntVar(&o.Iter, "iter", 50, "iterations at most")
	fs.Int64Var(&o.Damping, "damping", 85, "damping factor, in percent")
	fs.Int64Var(&o.SplitSize, "split", 1<<20, "`bytes` of input a map call reads (0: whole files)")
	top := fs.Int("top", 0, "print the `k` highest ranked nodes only (0: all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("usage: pagerank [-np N] [-mode M] [-iter N] [-damping PCT] [-split BYTES] [-top K] PATH...")
	}
	if o.Iter < 0 || o.Damping < 0 || o.Damping > 100 || *top < 0 {
		return fmt.Errorf("-iter %d, -damping %d, -top %d: want iter >= 0, 0 <= damping <= 100, top >= 0", o.Iter, o.Damping, *top)
	}
	res, ok, err := job.Run(*jo, func(ctx context.Context, r *pgas.Rank) (Result, error) {
		return PageRank(ctx, r, fs.Args(), o)
	})
	if err != nil || !ok {
		return err
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "%d nodes, %d iterations\n", len(res.Ranks), res.Iterations)
	if *top > 0 && *top < len(res.Ranks) {
		res.Ranks = res.Ranks[:*top]
	}
	for _, kv := range res.Ranks {
		fmt.Fprintf(w, "%d.%012d\t%s\n", kv.Value/Scale, kv.Value%Scale, kv.Key)
	}
	return w.Flush()
}
