package histogram

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/pgasmr/pgasmr/apps/internal/appjob"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Options configures a histogram job: the job options every MapReduce
// job has (mr.Options; histogram's defaults are Defaults) and the chunk
// size. The zero value maps with the array fast path over contiguous
// shares and gathers to Root; DefaultOptions also sets the chunk size.
// Whatever the gather mode, Run returns the result on Root only (under
// GatherAll every rank computes it, but only Root returns it). Dist deals
// the chunks: to the element map (three pairs per pixel) and, with Map set
// to mr.MapArray, to the array map, which otherwise takes contiguous
// shares.
type Options struct {
	mr.Options
	// ChunkBytes is the size of an input element, a run of whole pixel
	// rows (at least one row); zero means DefaultChunkBytes.
	ChunkBytes int64
}

// Defaults are histogram's job defaults: the array map (local counts, one
// pair per value) and GatherRoot.
func Defaults() mr.Defaults {
	return mr.Defaults{ArrayMap: true, Gather: reduce.GatherRoot}
}

// DefaultOptions returns the app's defaults: the array map, GatherRoot to
// rank 0, collective transfer, DefaultChunkBytes.
func DefaultOptions() Options {
	return Options{Options: mr.Options{Gather: reduce.GatherRoot}, ChunkBytes: DefaultChunkBytes}
}

// Validate reports every problem with o.
func (o Options) Validate() error {
	var err error
	if o.ChunkBytes < 0 {
		err = fmt.Errorf("ChunkBytes = %d, want ≥ 0", o.ChunkBytes)
	}
	return o.job().Validate(err)
}

// job is o's job options with histogram's defaults.
func (o Options) job() appjob.Job { return appjob.New("histogram", o.Options, Defaults()) }

// Run is collective: every rank calls it with the same files and options.
// It returns the histogram of all the files on o.Root and nil on the other
// ranks. Errors name the file and the reason.
func Run(ctx context.Context, r *pgas.Rank, files []string, o Options) (*Result, error) {
	j := o.job()
	if err := j.Check(r, o.Validate()); err != nil {
		return nil, err
	}
	p, err := newPlan(ctx, files, o.ChunkBytes)
	if err != nil {
		return nil, err
	}
	st, err := reduce.NewArrayStore[uint16, int64](768, reduce.Sum[int64]())
	if err != nil {
		return nil, err
	}
	rd := newReader(p)
	defer rd.Close()
	err = appjob.Map(ctx, r, j, mr.Input[chunk](newInput(p)),
		func(ctx context.Context, c chunk, emit func(uint16, int64)) error {
			return rd.each(ctx, c, func(px []byte) {
				for i := 0; i+2 < len(px); i += 3 {
					emit(512+uint16(px[i]), 1)
					emit(256+uint16(px[i+1]), 1)
					emit(uint16(px[i+2]), 1)
				}
			})
		},
		func(ctx context.Context, s mr.Share[chunk], emit func(uint16, int64)) error {
			c := new(counter)
			for i := range s.Elements() {
				ch, err := s.Input.At(ctx, i)
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
	if err != nil {
		return nil, err
	}
	if err := rd.Close(); err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	res, err := appjob.Reduce(ctx, r, j, st, func(ctx context.Context, pr *reduce.Pairs[uint16, int64]) (*Result, error) {
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
	})
	if err != nil {
		return nil, err
	}
	if !j.OnRoot(r) {
		return nil, nil
	}
	if res == nil {
		return nil, fmt.Errorf("histogram: rank %d: the root reduced nothing", r.ID())
	}
	return res, nil
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
