package histogram

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/pgasmr/pgasmr/apps/internal/joberr"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Options configures a histogram job. The zero value maps with the array
// fast path and gathers partitioned (then merged on rank 0);
// DefaultOptions gives the app's defaults.
type Options struct {
	// Dist distributes the chunks over the ranks in the element map
	// (the array map always takes contiguous shares).
	Dist distrib.Kind
	// Threshold is best-fit's threshold on the load difference, in bytes.
	Threshold float64
	// ElementMap selects the element-by-element map over pixels (three
	// pairs per pixel) instead of the array map (local counts, one pair
	// per value).
	ElementMap bool
	// Gather is the reduce stage's gather mode (the zero value,
	// reduce.GatherDefault, is GatherRoot); GatherNone and
	// GatherPartitioned are followed by a merge on Root. Whatever the
	// mode, Run returns the result on Root only (under GatherAll every
	// rank computes it, but only Root returns it).
	Gather reduce.Gather
	// Root is the rank that gets the result (only used by Run).
	Root int
	// Transfer moves the pairs with collectives or element by element.
	Transfer reduce.Transfer
	// ChunkBytes is the size of an input element, a run of whole pixel
	// rows (at least one row); zero means DefaultChunkBytes.
	ChunkBytes int64
}

// DefaultOptions returns the app's defaults: the array map, GatherRoot to
// rank 0, collective transfer, DefaultChunkBytes.
func DefaultOptions() Options {
	return Options{Gather: reduce.GatherRoot, ChunkBytes: DefaultChunkBytes}
}

// Validate reports every problem with o for a job of ranks ranks.
func (o Options) Validate(ranks int) error {
	var errs []error
	switch o.Dist {
	case distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit:
	default:
		errs = append(errs, fmt.Errorf("histogram: distribution %v, want block, cyclic, balanced or bestfit", o.Dist))
	}
	switch o.Gather {
	case reduce.GatherDefault, reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned:
	default:
		errs = append(errs, fmt.Errorf("histogram: unknown gather mode %v", o.Gather))
	}
	if o.Transfer != reduce.Collective && o.Transfer != reduce.ElementByElement {
		errs = append(errs, fmt.Errorf("histogram: unknown transfer mode %d", int(o.Transfer)))
	}
	if o.Root < 0 || o.Root >= ranks {
		errs = append(errs, fmt.Errorf("histogram: root %d not a rank in [0,%d)", o.Root, ranks))
	}
	if o.ChunkBytes < 0 {
		errs = append(errs, fmt.Errorf("histogram: ChunkBytes = %d, want ≥ 0", o.ChunkBytes))
	}
	if o.Threshold < 0 || o.Threshold != o.Threshold {
		errs = append(errs, fmt.Errorf("histogram: Threshold = %v, want ≥ 0", o.Threshold))
	}
	return errors.Join(errs...)
}

// Run is collective: every rank calls it with the same files and options.
// It returns the histogram of all the files on o.Root and nil on the other
// ranks. Errors name the file and the reason.
func Run(ctx context.Context, r *pgas.Rank, files []string, o Options) (*Result, error) {
	if o.Gather == reduce.GatherDefault {
		o.Gather = reduce.GatherRoot
	}
	if err := o.Validate(r.N()); err != nil {
		return nil, err
	}
	p, err := newPlan(ctx, files, o.ChunkBytes)
	if err != nil {
		return nil, err
	}
	in := newInput(p)
	st, err := reduce.NewArrayStore[uint16, int64](768, reduce.Sum[int64]())
	if err != nil {
		return nil, err
	}
	rd := newReader(p)
	defer rd.Close()
	if o.ElementMap {
		_, err = mr.ApplyMap(ctx, r, mr.Input[chunk](in), func(ctx context.Context, c chunk, emit func(uint16, int64)) error {
			return rd.each(ctx, c, func(px []byte) {
				for j := 0; j+2 < len(px); j += 3 {
					emit(512+uint16(px[j]), 1)
					emit(256+uint16(px[j+1]), 1)
					emit(uint16(px[j+2]), 1)
				}
			})
		}, st, mr.WithDistribution(o.Dist), mr.WithThreshold(o.Threshold))
	} else {
		_, err = mr.ApplyMapArray(ctx, r, mr.Input[chunk](in), func(ctx context.Context, r *pgas.Rank, in mr.Input[chunk], emit func(uint16, int64)) error {
			c := new(counter)
			lo, hi := distrib.BlockRange(in.Len(), r.N(), r.ID())
			for i := lo; i < hi; i++ {
				ch, err := in.At(ctx, i)
				if err != nil {
					return err
				}
				if err := rd.each(ctx, ch, c.add); err != nil {
					return err
				}
			}
			for k, n := range c.totals() {
				if n != 0 {
					emit(uint16(k), n)
				}
			}
			return nil
		}, st)
	}
	if err != nil {
		return nil, joberr.Wrap("histogram", err)
	}
	if err := rd.Close(); err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	ropts := []mr.ReduceOption{mr.Gather(o.Gather), mr.Root(o.Root), mr.WithTransfer(o.Transfer)}
	if o.Gather == reduce.GatherNone || o.Gather == reduce.GatherPartitioned {
		ropts = append(ropts, mr.Merge())
	}
	res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, pr *reduce.Pairs[uint16, int64]) (*Result, error) {
		var counts [768]int64
		for i, k := range pr.Keys {
			if k >= 768 {
				return nil, fmt.Errorf("histogram: key %d out of range", k)
			}
			counts[k] = pr.Value(i)
		}
		res := &Result{Images: len(files), Pixels: p.pixels}
		res.fromCounts(&counts)
		return res, nil
	}, ropts...)
	if err != nil {
		return nil, err
	}
	if r.ID() != o.Root {
		return nil, nil
	}
	if !res.OK || res.Value == nil {
		return nil, fmt.Errorf("histogram: rank %d: the root reduced nothing", r.ID())
	}
	return res.Value, nil
}

// Seq computes the histogram on one goroutine without pgasmr: the
// baseline a user would write. Only o.ChunkBytes is used.
func Seq(ctx context.Context, files []string, o Options) (*Result, error) {
	p, err := newPlan(ctx, files, o.ChunkBytes)
	if err != nil {
		return nil, err
	}
	rd := newReader(p)
	defer rd.Close()
	c := new(counter)
	for _, ch := range p.chunks {
		if err := rd.each(ctx, ch, c.add); err != nil {
			return nil, err
		}
	}
	if err := rd.Close(); err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	res := &Result{Images: len(files), Pixels: p.pixels}
	res.fromCounts(c.totals())
	return res, nil
}

// Goroutines computes the histogram with one goroutine per CPU
// (GOMAXPROCS), each counting a contiguous share of the chunks, without
// pgasmr. Only o.ChunkBytes is used.
func Goroutines(ctx context.Context, files []string, o Options) (*Result, error) {
	p, err := newPlan(ctx, files, o.ChunkBytes)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := max(1, min(runtime.GOMAXPROCS(0), len(p.chunks)))
	counts := make([]*[768]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rd := newReader(p)
			c := new(counter)
			n := len(p.chunks)
			for _, ch := range p.chunks[n*w/workers : n*(w+1)/workers] {
				if err := rd.each(ctx, ch, c.add); err != nil {
					errs[w] = err
					cancel()
					break
				}
			}
			if err := rd.Close(); err != nil && errs[w] == nil {
				errs[w] = fmt.Errorf("histogram: %w", err)
			}
			counts[w] = c.totals()
		})
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	var tot [768]int64
	for _, c := range counts {
		for k, n := range c {
			tot[k] += n
		}
	}
	res := &Result{Images: len(files), Pixels: p.pixels}
	res.fromCounts(&tot)
	return res, nil
}

// firstError returns the first error that is not a cancellation caused by
// another worker's failure, else the first error.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
