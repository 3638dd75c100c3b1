// Command kernels runs the case-study kernels of seeds/002 §3.4 (package
// internal/kernels) in their standard version (shared temporaries,
// GetRange/PutRange, barriers) and extended version (collectives of
// package coll on private buffers) on the in-process transport, checks
// every run against the sequential result, and prints the median time of
// each and the extended/standard ratio.
//
//	go run ./examples/kernels -np 4
//	go run ./examples/kernels -kernel sparsemm -size 4 -reps 9
//
// Sizes default to a few seconds in all on two cores; -size multiplies
// every default (dense N, sparse M and K, IS keys, and each FFT dimension
// by the largest power of two not above it), and the per-kernel flags set
// sizes directly. A result that differs from the sequential one ends the
// command with exit status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pgasmr/pgasmr/internal/kernels"
	"github.com/pgasmr/pgasmr/pgas"
)

// errCheck marks a result that differs from the sequential one.
var errCheck = errors.New("result differs from the sequential computation")

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kernels:", err)
		os.Exit(1)
	}
}

type options struct {
	np, perNode, reps int
	dense             int
	sparseM, sparseN  int
	density           float64
	keys              int
	maxKey            int
	fft               kernels.FFTGrid
}

// version is one way to run a kernel: run runs it once on rank r and
// returns the check of its result on this rank (against the sequential
// result), which the caller runs outside the timed interval.
type version struct {
	name string
	run  func(ctx context.Context, r *pgas.Rank) (check func() error, err error)
}

// kernel is one kernel: its versions (the first is the standard one, the
// baseline of the ratios) and the segment size they need.
type kernel struct {
	name, size string
	segment    int64
	versions   []version
}

type result struct {
	kernel, size, version string
	median, min           time.Duration
	ratio                 float64 // median / the standard version's median; 0 for the standard version
}

func run() error {
	var o options
	var size int
	var which, fftDims string
	flag.IntVar(&o.np, "np", runtime.NumCPU(), "number of ranks")
	flag.IntVar(&o.perNode, "pernode", 0, "ranks per logical node (0: all on one node)")
	flag.StringVar(&which, "kernel", "all", "kernel to run: densemm, sparsemm, intsort, fft or all (or a comma-separated list)")
	flag.IntVar(&size, "size", 1, "multiply every default size by this factor")
	flag.IntVar(&o.reps, "reps", 5, "timed runs of each version (after one warm-up run)")
	flag.IntVar(&o.dense, "dense", 0, "dense MM: N for N×N matrices (default 256×size)")
	flag.IntVar(&o.sparseM, "sparse", 0, "sparse MM: M for an M×M sparse matrix (default 4000×size)")
	flag.IntVar(&o.sparseN, "sparsecols", 64, "sparse MM: columns of the dense matrix")
	flag.Float64Var(&o.density, "density", 0.004, "sparse MM: density of the sparse matrix")
	flag.IntVar(&o.keys, "keys", 0, "IS: number of keys (default 2^20×size)")
	flag.IntVar(&o.maxKey, "maxkey", 1<<19, "IS: keys are in [0, maxkey)")
	flag.StringVar(&fftDims, "fft", "", "FFT: grid N1xN2xN3, powers of two (default 32x32x32, each times size's power of two)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if o.np < 1 || o.perNode < 0 || o.reps < 1 || size < 1 {
		return fmt.Errorf("need -np, -reps, -size >= 1 and -pernode >= 0")
	}
	if o.dense == 0 {
		o.dense = 256 * size
	}
	if o.sparseM == 0 {
		o.sparseM = 4000 * size
	}
	if o.keys == 0 {
		o.keys = (1 << 20) * size
	}
	if o.dense < 1 || o.sparseM < 1 || o.sparseN < 1 || o.density < 0 || o.density > 1 || o.keys < 1 || o.maxKey < 1 || o.maxKey > 1<<31-1 {
		return fmt.Errorf("need -dense, -sparse, -sparsecols, -keys >= 1, 0 <= -density <= 1 and 1 <= -maxkey < 2^31")
	}
	p2 := 1 << (bits.Len(uint(size)) - 1)
	o.fft = kernels.FFTGrid{N1: 32 * p2, N2: 32 * p2, N3: 32 * p2}
	if fftDims != "" {
		var err error
		if o.fft, err = parseGrid(fftDims); err != nil {
			return err
		}
	}

	g := o.fft
	fftFits := g.N1%o.np == 0 && g.N2%o.np == 0
	var names []string
	for _, k := range strings.Split(which, ",") {
		switch k = strings.TrimSpace(k); k {
		case "all":
			names = append(names, "densemm", "sparsemm", "intsort")
			if fftFits {
				names = append(names, "fft")
			} else {
				fmt.Printf("skipping fft: grid %dx%dx%d needs N1 and N2 to be multiples of -np %d\n", g.N1, g.N2, g.N3, o.np)
			}
		case "fft":
			if !fftFits {
				return fmt.Errorf("FFT grid %dx%dx%d: N1 and N2 must be multiples of -np %d", g.N1, g.N2, g.N3, o.np)
			}
			names = append(names, k)
		case "densemm", "sparsemm", "intsort":
			names = append(names, k)
		default:
			return fmt.Errorf("unknown kernel %q (want densemm, sparsemm, intsort, fft or all)", k)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	fmt.Printf("%d ranks (%s), GOMAXPROCS %d, inproc transport, median of %d runs after a warm-up\n",
		o.np, nodesDesc(o), runtime.GOMAXPROCS(0), o.reps)
	var results []result
	for _, name := range names {
		k := build(name, o)
		var base time.Duration
		for i, v := range k.versions {
			ts, err := timeVersion(ctx, o, k, v)
			if err != nil {
				if errors.Is(err, errCheck) {
					return fmt.Errorf("%s %s: MISMATCH: %w", k.name, v.name, err)
				}
				return fmt.Errorf("%s %s: %w", k.name, v.name, err)
			}
			res := result{kernel: k.name, size: k.size, version: v.name, median: median(ts), min: slices.Min(ts)}
			if i == 0 {
				base = res.median
			} else if base > 0 {
				res.ratio = float64(res.median) / float64(base)
			}
			results = append(results, res)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tsize\tversion\tmedian\tmin\text/std\t")
	for _, r := range results {
		ratio := "-"
		if r.ratio > 0 {
			ratio = fmt.Sprintf("%.2f", r.ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", r.kernel, r.size, r.version, fmtDur(r.median), fmtDur(r.min), ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Println("all results match the sequential computation")
	return nil
}

func nodesDesc(o options) string {
	if o.perNode == 0 || o.perNode >= o.np {
		return "one node"
	}
	return fmt.Sprintf("%d per node", o.perNode)
}

func parseGrid(s string) (kernels.FFTGrid, error) {
	parts := strings.Split(s, "x")
	if len(parts) != 3 {
		return kernels.FFTGrid{}, fmt.Errorf("-fft %q: want N1xN2xN3", s)
	}
	var d [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 || v&(v-1) != 0 {
			return kernels.FFTGrid{}, fmt.Errorf("-fft %q: %q is not a power of two", s, p)
		}
		d[i] = v
	}
	return kernels.FFTGrid{N1: d[0], N2: d[1], N3: d[2]}, nil
}

// segmentFor returns a segment size for kernels moving data bytes in all:
// room for the shared temporaries and the collectives' double-buffered
// staging areas.
func segmentFor(data int64) int64 {
	s := 4*data + 8<<20
	return (s + 1<<20 - 1) &^ (1<<20 - 1)
}

func build(name string, o options) kernel {
	switch name {
	case "densemm":
		return buildDense(o)
	case "sparsemm":
		return buildSparse(o)
	case "intsort":
		return buildIS(o)
	}
	return buildFFT(o)
}

func checkC(r *pgas.Rank, c, want []float64) func() error {
	return func() error {
		if r.ID() != 0 {
			return nil
		}
		if i := kernels.Equal(c, want); i >= 0 {
			if i >= len(c) || i >= len(want) {
				return fmt.Errorf("%w: C has %d elements; want %d", errCheck, len(c), len(want))
			}
			return fmt.Errorf("%w: C[%d] = %v; want %v", errCheck, i, c[i], want[i])
		}
		return nil
	}
}

func buildDense(o options) kernel {
	n := o.dense
	a, b := kernels.RandomMatrix(n, n, 1), kernels.RandomMatrix(n, n, 2)
	want := make([]float64, n*n)
	kernels.MatMul(want, a, b, n, n, n)
	mm := func(f func(context.Context, *pgas.Rank, []float64, []float64, int) ([]float64, error)) func(context.Context, *pgas.Rank) (func() error, error) {
		return func(ctx context.Context, r *pgas.Rank) (func() error, error) {
			var ma, mb []float64
			if r.ID() == 0 {
				ma, mb = a, b
			}
			c, err := f(ctx, r, ma, mb, n)
			return checkC(r, c, want), err
		}
	}
	ext := func(ctx context.Context, r *pgas.Rank, a, b []float64, n int) ([]float64, error) {
		return kernels.DenseMMExtended(ctx, r, a, b, n)
	}
	return kernel{
		name: "densemm", size: fmt.Sprintf("%dx%d", n, n), segment: segmentFor(int64(8 * n * n)),
		versions: []version{{"standard", mm(kernels.DenseMMStandard)}, {"extended", mm(ext)}},
	}
}

func buildSparse(o options) kernel {
	m, n := o.sparseM, o.sparseN
	s := kernels.RandomSymmetricCSR(m, o.density, 1)
	b := kernels.RandomMatrix(m, n, 2)
	want := kernels.CSRMul(s, b, n)
	mm := func(f func(context.Context, *pgas.Rank, *kernels.CSR, []float64, int, int, int) ([]float64, error)) func(context.Context, *pgas.Rank) (func() error, error) {
		return func(ctx context.Context, r *pgas.Rank) (func() error, error) {
			var ms *kernels.CSR
			var mb []float64
			if r.ID() == 0 {
				ms, mb = s, b
			}
			c, err := f(ctx, r, ms, mb, m, m, n)
			return checkC(r, c, want), err
		}
	}
	ext := func(ctx context.Context, r *pgas.Rank, s *kernels.CSR, b []float64, m, k, n int) ([]float64, error) {
		return kernels.SparseMMExtended(ctx, r, s, b, m, k, n)
	}
	data := int64(16*s.NNZ() + 8*(m+1) + 8*m*n + 8*m*n)
	return kernel{
		name: "sparsemm", size: fmt.Sprintf("%dx%d (%d nz) x %dx%d", m, m, s.NNZ(), m, n), segment: segmentFor(data),
		versions: []version{{"standard", mm(kernels.SparseMMStandard)}, {"extended", mm(ext)}},
	}
}

func buildIS(o options) kernel {
	p := kernels.ISParams{Keys: o.keys, MaxKey: int32(o.maxKey), Seed: 1}
	sorted := p.Sequential()
	// Each rank's keys are generated once, outside the timed runs.
	shares := make([][]int32, o.np)
	for q := range o.np {
		shares[q] = p.RankKeys(q, o.np)
	}
	sort := func(f func(context.Context, *pgas.Rank, kernels.ISParams, []int32) ([]int32, error)) func(context.Context, *pgas.Rank) (func() error, error) {
		return func(ctx context.Context, r *pgas.Rank) (func() error, error) {
			got, err := f(ctx, r, p, shares[r.ID()])
			return func() error {
				if err := p.Verify(r.ID(), r.N(), got, sorted); err != nil {
					return fmt.Errorf("%w: %v", errCheck, err)
				}
				return nil
			}, err
		}
	}
	ext := func(ctx context.Context, r *pgas.Rank, p kernels.ISParams, keys []int32) ([]int32, error) {
		return kernels.IntSortExtended(ctx, r, p, keys)
	}
	return kernel{
		name: "intsort", size: fmt.Sprintf("%d keys < %d", o.keys, o.maxKey), segment: segmentFor(int64(4 * o.keys)),
		versions: []version{{"standard", sort(kernels.IntSortStandard)}, {"extended", sort(ext)}},
	}
}

func buildFFT(o options) kernel {
	g := o.fft
	want := g.Sequential()
	fft := func(tr kernels.FFTTranspose) func(context.Context, *pgas.Rank) (func() error, error) {
		return func(ctx context.Context, r *pgas.Rank) (func() error, error) {
			out, err := kernels.FFT3D(ctx, r, g, tr)
			return func() error {
				part := want[r.ID()*len(out) : (r.ID()+1)*len(out)]
				for i := range out {
					if out[i] != part[i] {
						return fmt.Errorf("%w: rank %d: element %d = %v; want %v", errCheck, r.ID(), i, out[i], part[i])
					}
				}
				return nil
			}, err
		}
	}
	return kernel{
		name: "fft", size: fmt.Sprintf("%dx%dx%d", g.N1, g.N2, g.N3), segment: segmentFor(int64(16 * g.N1 * g.N2 * g.N3)),
		versions: []version{
			{"standard", fft(kernels.TransposeStandard)},
			{"extended", fft(kernels.TransposeExchange)},
			{"extended in-place", fft(kernels.TransposeExchangeInPlace)},
		},
	}
}

// timeVersion runs v once to warm up and then o.reps times in one job,
// checking every run, and returns the times rank 0 measured from the
// barrier before each run to the barrier after it. The checks run after
// that interval.
func timeVersion(ctx context.Context, o options, k kernel, v version) ([]time.Duration, error) {
	cfg := pgas.Config{Ranks: o.np, RanksPerNode: o.perNode, SegmentBytes: k.segment}
	times := make([]time.Duration, 0, o.reps)
	err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		for rep := range o.reps + 1 {
			if r.ID() == 0 {
				runtime.GC() // the previous run's garbage is not charged to this one
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			start := time.Now()
			check, err := v.run(ctx, r)
			if err != nil {
				return err
			}
			if err := r.Barrier(ctx); err != nil {
				return err
			}
			if r.ID() == 0 && rep > 0 {
				times = append(times, time.Since(start))
			}
			if err := check(); err != nil {
				return err
			}
		}
		return nil
	})
	return times, err
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}
