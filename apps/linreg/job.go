package linreg

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/pgasmr/pgasmr/apps/internal/appjob"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// prepare validates the options and cuts the files into chunks; it
// reports the input's size to the context's mr.Progress.
func prepare(ctx context.Context, files []string, o Options) (int, *chunks, error) {
	if err := o.Validate(); err != nil {
		return 0, nil, err
	}
	format, _ := parseFormat(o.Format)
	in, err := inputChunks(files, format, cmp.Or(o.ChunkBytes, DefaultChunkBytes))
	if err == nil {
		mr.ProgressFrom(ctx).SetTotal(in.files, in.bytes)
	}
	return format, in, err
}

// sumsCombiner adds Sums. The int64 fields add exactly in any order; the
// float fields are only ever combined in chunk order: each chunk is one
// key (chunk.Key; a compressed file's chunks, several), emitted once, and
// the reduce folds the keys in ascending order.
func sumsCombiner() reduce.Combiner[Sums] {
	return reduce.Func("linreg-sums", Sums.Add, true)
}

// Run is collective: it fits a line to the points of files with pgasmr on
// every rank of r's job and returns the result on the root (o.Root), nil
// elsewhere. Every rank must pass the same files and options.
//
// With the array map (the default), each rank sums its contiguous share
// of the chunks locally and emits one pair for int8 input (key 0) or one
// per chunk for float input (key = chunk index); the element map emits one
// pair per chunk. The reduce folds the pairs in key order.
func Run(ctx context.Context, r *pgas.Rank, files []string, o Options) (*Result, error) {
	j := o.job()
	format, in, err := prepare(ctx, files, o)
	if err == nil {
		err = j.Check(r, nil) // o is valid: only the root is left to check
	}
	if err != nil {
		return nil, err
	}
	st, err := reduce.NewHashStore[int64](sumsCombiner())
	if err != nil {
		return nil, fmt.Errorf("linreg: %w", err)
	}
	rd := newReader(format)
	defer rd.Close() // unmaps the files it mapped; the sums are made
	err = appjob.Map(ctx, r, j, mr.Input[chunk](in),
		func(ctx context.Context, c chunk, emit func(int64, Sums)) error {
			return rd.chunkSums(ctx, c, func(key int64, s Sums) error {
				emit(key, s)
				return nil
			})
		},
		func(ctx context.Context, s mr.Share[chunk], emit func(int64, Sums)) error {
			var local Sums // int8: the rank's exact sums, folded once
			some := false
			for i := range s.Elements() {
				some = true
				c, err := s.Input.At(ctx, i)
				if err != nil {
					return err
				}
				if format == fmtInt8 {
					if err := rd.add(ctx, c, &local); err != nil {
						return err
					}
					continue
				}
				err = rd.chunkSums(ctx, c, func(key int64, s Sums) error {
					emit(key, s)
					return nil
				})
				if err != nil {
					return err
				}
			}
			if format == fmtInt8 && some {
				rd.flush(&local)
				emit(0, local)
			}
			return nil
		}, st)
	if err != nil {
		return nil, err
	}
	sums, err := appjob.Reduce(ctx, r, j, st, func(ctx context.Context, p *reduce.Pairs[int64, Sums]) (*Sums, error) {
		var acc Sums
		for i := range p.Len() {
			acc = acc.Add(p.Value(i))
		}
		return &acc, nil
	})
	if err != nil {
		return nil, fmt.Errorf("linreg: %w", err)
	}
	if sums == nil || !j.OnRoot(r) {
		return nil, nil
	}
	return fit(*sums, format == fmtInt8)
}

// Seq is the sequential baseline: one goroutine reads the chunks in order
// and adds their sums, with no pgasmr. It writes the same bytes as Run.
func Seq(ctx context.Context, files []string, o Options) (*Result, error) {
	format, acc, err := seqSums(ctx, files, o)
	if err != nil {
		return nil, err
	}
	return fit(acc, format == fmtInt8)
}

// seqSums returns the input format and the sums of the points of files.
func seqSums(ctx context.Context, files []string, o Options) (int, Sums, error) {
	var acc Sums
	format, in, err := prepare(ctx, files, o)
	if err != nil {
		return 0, acc, err
	}
	rd := newReader(format)
	defer rd.Close()
	for i := range in.Len() {
		c, err := in.At(ctx, i)
		if err != nil {
			return 0, acc, err
		}
		if format == fmtInt8 { // exact: count every chunk, fold once
			if err := rd.add(ctx, c, &acc); err != nil {
				return 0, acc, err
			}
			continue
		}
		err = rd.chunkSums(ctx, c, func(_ int64, s Sums) error {
			acc = acc.Add(s)
			return nil
		})
		if err != nil {
			return 0, acc, err
		}
	}
	rd.flush(&acc)
	return format, acc, nil
}

// Goroutines is the fan-out baseline with the standard library only:
// GOMAXPROCS workers take chunks from a shared counter; for float input
// they store each chunk's sums by index (a compressed file's, the sums of
// each of its chunks) and the caller adds them in chunk order, for int8
// input each worker keeps its own exact sums. The first error stops the
// workers. It writes the same bytes as Run.
func Goroutines(ctx context.Context, files []string, o Options) (*Result, error) {
	format, in, err := prepare(ctx, files, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := in.Len()
	workers := min(int64(runtime.GOMAXPROCS(0)), max(n, 1))
	sums := make([]Sums, max(n, workers)) // float input: by chunk; int8: by worker
	var more [][]Sums                     // float input: a compressed file's chunks' sums, instead
	if format != fmtInt8 {
		more = make([][]Sums, n)
	}
	var (
		mu    sync.Mutex
		next  int64
		first error
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			rd := newReader(format)
			defer rd.Close()
			defer rd.flush(&sums[w])
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || i >= n {
					return
				}
				c, err := in.At(ctx, i)
				if err == nil && format == fmtInt8 {
					err = rd.add(ctx, c, &sums[w])
				} else if err == nil && c.Codec != "" {
					err = rd.chunkSums(ctx, c, func(_ int64, s Sums) error {
						more[i] = append(more[i], s)
						return nil
					})
				} else if err == nil {
					sums[i], err = rd.sums(ctx, c)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	var acc Sums
	for i, s := range sums {
		if i < len(more) && more[i] != nil {
			for _, s := range more[i] {
				acc = acc.Add(s)
			}
			continue
		}
		acc = acc.Add(s)
	}
	return fit(acc, format == fmtInt8)
}
