// Command kmeans clusters the points of a CSV file with Lloyd's k-means,
// exactly: the centres it prints are the same bits at every rank count,
// distribution and gather mode. It is a user's own job on pgasmr, written
// with the public API only:
//
//	go run ./examples/kmeans -np 4 -k 5 points.csv
//	mrrun exec -np 4 -- ./kmeans -k 5 points.csv    # ranks as processes
//
// Input: one point a row, its coordinates as numbers, every row with as
// many; blank lines are skipped, and a first row with no number in it is
// a header. The first k points are the initial centres.
//
// Each iteration is one MapReduce: the map assigns every point of a chunk
// (-chunk consecutive points) to its nearest centre (the lowest id on a
// tie) and emits, for each centre, the chunk's sum vector and count of its
// points; the reduce adds a centre's chunk sums and divides. It stops when
// an iteration leaves every centre as it was (bit for bit: then no point
// changes centre any more) or after -iter iterations. Every rank ends with
// the same centres: by default the reduce gives every rank every centre
// (mr.ReduceKeys without a Gather option); under -mode's other gather
// modes the root reduces them and broadcasts them (mr.BroadcastValue).
//
// Why the result is exact: floating-point addition is not associative, so
// a sum must be made in the same order at every rank count. Chunks are
// cut by point index, not by rank, and a chunk sums its points in input
// order; the store keeps every chunk's sum (reduce.KeepAll), and KeepAll
// hands the reduce a key's values in input order (of the chunks) at any
// rank count, distribution and gather mode; the reduce adds them in that
// order. So every rank count performs the same float64 operations in the
// same order. (The result does depend on -chunk, which changes the order.)
//
// Output: a line saying how many iterations ran and whether they
// converged, then one line per centre: its id, the number of points
// nearest it in the last iteration and its coordinates (shortest exact
// decimal form), tab-separated.
package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/mr/job"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kmeans:", err)
		os.Exit(1)
	}
}

// Point is a point's coordinates.
type Point []float64

// Partial is the sum and the number of the points of one chunk (or, once
// reduced, of all chunks) nearest a centre.
type Partial struct {
	Sum []float64
	N   int64
}

// Options configure KMeans.
type Options struct {
	K       int // centres
	MaxIter int // iterations at most
	Chunk   int // points a map call sums
}

// defaults: the element map only.
var defaults = mr.Defaults{}

// Result is the outcome of KMeans.
type Result struct {
	Centres    []Point
	Sizes      []int64 // points nearest each centre in the last iteration
	Iterations int
	Converged  bool // the last iteration left every centre as it was
}

// span is a chunk of points: indices [Lo, Hi).
type span struct{ Lo, Hi int }

// KMeans is the job every rank runs, with the same points on every rank;
// every rank returns the same Result.
func KMeans(ctx context.Context, r *pgas.Rank, points []Point, o Options) (Result, error) {
	if o.K < 1 || o.K > len(points) || o.Chunk < 1 {
		return Result{}, fmt.Errorf("k = %d centres of %d points in chunks of %d: want 1 <= k <= points, chunk >= 1", o.K, len(points), o.Chunk)
	}
	var chunks []span
	for lo := 0; lo < len(points); lo += o.Chunk {
		chunks = append(chunks, span{lo, min(lo+o.Chunk, len(points))})
	}
	st, err := reduce.NewArrayStore[int, Partial](o.K, reduce.KeepAll[Partial]())
	if err != nil {
		return Result{}, err
	}
	res := Result{Centres: make([]Point, o.K)}
	for c := range res.Centres {
		res.Centres[c] = slices.Clone(points[c])
	}
	dim := len(points[0])
	assign := func(_ context.Context, s span, emit func(int, Partial)) error {
		sums := make([]Partial, o.K)
		for _, p := range points[s.Lo:s.Hi] {
			c := nearest(res.Centres, p)
			if sums[c].N == 0 {
				sums[c].Sum = make([]float64, dim)
			}
			for j, x := range p {
				sums[c].Sum[j] += x
			}
			sums[c].N++
		}
		for c, s := range sums {
			if s.N > 0 {
				emit(c, s)
			}
		}
		return nil
	}
	add := func(_ context.Context, _ int, parts []Partial) (Partial, error) {
		t := Partial{Sum: make([]float64, dim)}
		for _, p := range parts { // in chunk order, at every rank count
			for j, x := range p.Sum {
				t.Sum[j] += x
			}
			t.N += p.N
		}
		return t, nil
	}
	// Under -mode's gather modes other than all, only the root reduces.
	jo, _ := mr.JobOptionsFrom(ctx)
	rootOnly := jo.Gather != reduce.GatherDefault && jo.Gather != reduce.GatherAll
	for !res.Converged && res.Iterations < o.MaxIter {
		if _, err := mr.ApplyMap(ctx, r, mr.Slice(chunks), assign, st); err != nil {
			return Result{}, err
		}
		sums, err := mr.ReduceKeys(ctx, r, st, add)
		if err == nil && rootOnly {
			sums.Value, err = mr.BroadcastValue(ctx, r, sums.Value, jo.Root)
		}
		if err != nil {
			return Result{}, err
		}
		res.Iterations++
		res.Converged = true
		res.Sizes = make([]int64, o.K)
		for _, kv := range sums.Value { // none for an empty cluster: it keeps its centre
			c, t := kv.Key, kv.Value
			res.Sizes[c] = t.N
			next := make(Point, dim)
			for j, s := range t.Sum {
				next[j] = s / float64(t.N)
			}
			res.Converged = res.Converged && slices.Equal(next, res.Centres[c])
			res.Centres[c] = next
		}
	}
	return res, nil
}

// nearest returns the index of the centre nearest p, the lowest on a tie.
func nearest(centres []Point, p Point) int {
	best, bestD := 0, math.Inf(1)
	for c, q := range centres {
		d := 0.0
		for j, x := range p {
			e := x - q[j]
			d += float64(e * e) // the conversion forbids a fused multiply-add
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// readPoints reads the points of a CSV file. Its errors name the file,
// and the line and the value at fault.
func readPoints(path string) ([]Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1 // checked below, to say how many
	cr.TrimLeadingSpace = true
	var points []Point
	for first := true; ; first = false {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if first && !slices.ContainsFunc(rec, isNumber) {
			continue // a header
		}
		line, _ := cr.FieldPos(0)
		if len(points) > 0 && len(rec) != len(points[0]) {
			return nil, fmt.Errorf("%s:%d: %d coordinates, want %d as the rows before", path, line, len(rec), len(points[0]))
		}
		p := make(Point, len(rec))
		for i, s := range rec {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s:%d: coordinate %d is %q, not a finite number", path, line, i+1, s)
			}
			p[i] = x
		}
		points = append(points, p)
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("%s: no points", path)
	}
	return points, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// run is main with its arguments and output.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("kmeans", flag.ContinueOnError)
	jo := job.Flags(fs)
	var o Options
	fs.IntVar(&o.K, "k", 3, "`centres`: the first k points start them")
	fs.IntVar(&o.MaxIter, "iter", 100, "iterations at most")
	fs.IntVar(&o.Chunk, "chunk", 1024, "`points` a map call sums (the order of the sums: the result depends on it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: kmeans [-np N] [-mode M] [-k K] [-iter N] [-chunk N] FILE.csv")
	}
	if err := jo.Mode.Validate(defaults); err != nil {
		return fmt.Errorf("-mode: %w", err)
	}
	points, err := readPoints(fs.Arg(0)) // by every process, before the job
	if err != nil {
		return err
	}
	res, ok, err := job.Run(*jo, func(ctx context.Context, r *pgas.Rank) (Result, error) {
		return KMeans(ctx, r, points, o)
	})
	if err != nil || !ok {
		return err
	}
	w := bufio.NewWriter(stdout)
	verdict := "converged"
	if !res.Converged {
		verdict = "not converged"
	}
	fmt.Fprintf(w, "%d points, %d centres: %d iterations, %s\n", len(points), o.K, res.Iterations, verdict)
	for c, p := range res.Centres {
		fmt.Fprintf(w, "%d\t%d", c, res.Sizes[c])
		for _, x := range p {
			fmt.Fprintf(w, "\t%s", strconv.FormatFloat(x, 'g', -1, 64))
		}
		w.WriteByte('\n')
	}
	return w.Flush()
}
