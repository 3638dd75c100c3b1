package wordcount

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pgasmr/pgasmr/apps/internal/joberr"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// DefaultChunkBytes is the default nominal size of a chunk of a file.
const DefaultChunkBytes = 4 << 20

// Options configures a count. The zero value counts every word with the
// block distribution, element-by-element map, partitioned gather merged
// to rank 0 and collective transfer.
type Options struct {
	// Top keeps the first Top words of the result (0: all).
	Top int
	// SkipUnreadable turns a file that cannot be listed, opened or read
	// into a Result.Unreadable entry instead of an error.
	SkipUnreadable bool
	// ChunkBytes is the nominal size of the chunks large files are cut
	// into (0: DefaultChunkBytes).
	ChunkBytes int64
	// Dist distributes the chunks over ranks (Run only; not Custom).
	Dist distrib.Kind
	// Threshold is best-fit's threshold on the largest load difference,
	// in bytes.
	Threshold float64
	// ElementMap uses the element-by-element map over the chunks
	// (mr.ApplyMap under mr.WithPlan with the plan Dist makes, so that a
	// rank knows its last chunk) instead of the default array-based map
	// (one call per rank over its share of the chunks). Either way a rank
	// counts its chunks in one table and emits one pair per distinct word,
	// after its last chunk.
	ElementMap bool
	// Gather selects the reduce stage's gather (the zero value,
	// reduce.GatherDefault, is GatherPartitioned); GatherNone and
	// GatherPartitioned are merged to Root so Root has the result.
	Gather reduce.Gather
	// Root is the rank that gets the result (except under GatherAll).
	Root int
	// Transfer selects collective or element-by-element transfer.
	Transfer reduce.Transfer
}

// Validate reports every problem with o.
func (o Options) Validate() error {
	var errs []error
	if o.Top < 0 {
		errs = append(errs, fmt.Errorf("wordcount: Top %d, want >= 0", o.Top))
	}
	if o.ChunkBytes < 0 {
		errs = append(errs, fmt.Errorf("wordcount: ChunkBytes %d, want >= 0", o.ChunkBytes))
	}
	switch o.Dist {
	case distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit:
	default:
		errs = append(errs, fmt.Errorf("wordcount: distribution %v, want block, cyclic, balanced or best-fit", o.Dist))
	}
	if math.IsNaN(o.Threshold) {
		errs = append(errs, errors.New("wordcount: Threshold is NaN"))
	}
	switch o.Gather {
	case reduce.GatherDefault, reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned:
	default:
		errs = append(errs, fmt.Errorf("wordcount: unknown gather %v", o.Gather))
	}
	if o.Root < 0 {
		errs = append(errs, fmt.Errorf("wordcount: Root %d, want >= 0", o.Root))
	}
	if o.Transfer != reduce.Collective && o.Transfer != reduce.ElementByElement {
		errs = append(errs, fmt.Errorf("wordcount: unknown transfer %v", o.Transfer))
	}
	return errors.Join(errs...)
}

func (o Options) chunkBytes() int64 {
	if o.ChunkBytes == 0 {
		return DefaultChunkBytes
	}
	return o.ChunkBytes
}

// WordCount is one word of the result.
type WordCount struct {
	Word  string
	Count int64
}

// Result is a complete count.
type Result struct {
	Files         int64    // files read (not skipped)
	SkippedBinary []string // files skipped as binary, sorted
	Unreadable    []Skip   // files skipped as unreadable (SkipUnreadable), sorted by path
	TotalWords    int64    // word occurrences
	DistinctWords int64    // distinct words, before Top
	// Words by count descending then word (bytes); the first Top if
	// Options.Top > 0.
	Words []WordCount
}

// tally is a count before sorting: what every mode produces.
type tally struct {
	words      *counter
	files      int64
	binary     []string
	unreadable []Skip
}

func (t *tally) record(c chunk, st status, reason string) {
	if !c.firstChunk {
		return
	}
	switch st {
	case counted:
		t.files++
	case binaryFile:
		t.binary = append(t.binary, c.path)
	case unreadable:
		t.unreadable = append(t.unreadable, Skip{Path: c.path, Reason: reason})
	}
}

func (t *tally) result(top int) *Result {
	r := &Result{Files: t.files, SkippedBinary: t.binary, Unreadable: t.unreadable}
	slices.Sort(r.SkippedBinary)
	slices.SortFunc(r.Unreadable, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	r.Words = make([]WordCount, 0, t.words.len())
	for w, n := range t.words.all {
		r.Words = append(r.Words, WordCount{w, n})
		r.TotalWords += n
	}
	r.DistinctWords = int64(len(r.Words))
	slices.SortFunc(r.Words, func(a, b WordCount) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Word, b.Word)
	})
	if top > 0 && len(r.Words) > top {
		r.Words = r.Words[:top:top]
	}
	return r
}

func prepare(ctx context.Context, paths []string, o Options) ([]chunk, []Skip, error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	files, skipped, err := list(paths, o.SkipUnreadable)
	if err != nil {
		return nil, nil, err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	mr.ProgressFrom(ctx).SetTotal(int64(len(files)), total)
	return chunks(files, o.chunkBytes()), skipped, nil
}

// Seq counts the words of paths on one goroutine, file by file: the
// sequential baseline. Options' distribution and gather fields are unused.
func Seq(ctx context.Context, paths []string, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	// Whole files, not chunks: the chunk cutting of the other modes is
	// checked against it.
	o.ChunkBytes = math.MaxInt64
	cs, skipped, err := prepare(ctx, paths, o)
	if err != nil {
		return nil, err
	}
	t := &tally{words: newCounter(), unreadable: skipped}
	rd := &reader{skip: o.SkipUnreadable}
	for _, c := range cs {
		st, reason, err := rd.count(ctx, c, t.words.add)
		if err != nil {
			return nil, err
		}
		t.record(c, st, reason)
	}
	return t.result(o.Top), nil
}

// Goroutines counts the words of paths with GOMAXPROCS goroutines taking
// chunks from a shared counter, each with its own table, merged at the
// end: the fan-out baseline without pgasmr.
func Goroutines(ctx context.Context, paths []string, o Options) (*Result, error) {
	cs, skipped, err := prepare(ctx, paths, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := min(runtime.GOMAXPROCS(0), max(len(cs), 1))
	tallies := make([]*tally, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		t := &tally{words: newCounter()}
		tallies[w] = t
		wg.Go(func() {
			rd := &reader{skip: o.SkipUnreadable}
			for {
				i := next.Add(1) - 1
				if i >= int64(len(cs)) {
					return
				}
				st, reason, err := rd.count(ctx, cs[i], t.words.add)
				if err != nil {
					cancel(err)
					return
				}
				t.record(cs[i], st, reason)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	all := tallies[0]
	all.unreadable = append(all.unreadable, skipped...)
	for _, t := range tallies[1:] {
		for w, n := range t.words.all {
			all.words.addN(w, n)
		}
		all.files += t.files
		all.binary = append(all.binary, t.binary...)
		all.unreadable = append(all.unreadable, t.unreadable...)
	}
	return all.result(o.Top), nil
}

// Keys of the store that are not words: words never contain bytes below
// 0x20, so these sort first and cannot collide with a word.
const (
	keyFiles      = "\x00files" // value: files read
	keyBinary     = "\x01"      // + path: a binary file
	keyUnreadable = "\x02"      // + path + "\x00" + reason: an unreadable file
)

// emitStatus emits a chunk's file status under the keys above.
func emitStatus(c chunk, st status, reason string, emit func(string, int64)) {
	if !c.firstChunk {
		return
	}
	switch st {
	case counted:
		emit(keyFiles, 1)
	case binaryFile:
		emit(keyBinary+c.path, 1)
	case unreadable:
		emit(keyUnreadable+c.path+"\x00"+reason, 1)
	}
}

// Run is collective: every rank calls it with the same paths and options.
// The chunks of the files are mapped over the ranks as o says, and the
// complete result is returned on o.Root (nil, nil elsewhere), or on every
// rank under reduce.GatherAll.
func Run(ctx context.Context, r *pgas.Rank, paths []string, o Options) (*Result, error) {
	if o.Gather == reduce.GatherDefault {
		o.Gather = reduce.GatherPartitioned
	}
	cs, skipped, err := prepare(ctx, paths, o)
	if err != nil {
		return nil, err
	}
	if o.Root >= r.N() {
		return nil, fmt.Errorf("wordcount: Root %d, want < %d ranks", o.Root, r.N())
	}
	st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
	if err != nil {
		return nil, err
	}
	in := &chunkInput{cs}
	rd := &reader{skip: o.SkipUnreadable}
	c := newCounter()
	if !o.ElementMap {
		_, err = mr.ApplyMapArray(ctx, r, mr.Input[chunk](in), func(ctx context.Context, r *pgas.Rank, in mr.Input[chunk], emit func(string, int64)) error {
			p := plan(cs, r.N(), o)
			for i := range p.Elements(r.ID()) {
				ch := cs[i]
				st, reason, err := rd.count(ctx, ch, c.add)
				if err != nil {
					return err
				}
				emitStatus(ch, st, reason, emit)
			}
			for w, n := range c.all {
				emit(w, n)
			}
			return nil
		}, st)
	} else {
		// The plan the distribution gives, made here so that each rank
		// knows its last chunk: the table of counts is kept over the
		// rank's chunks and emitted once, after the last.
		p := plan(cs, r.N(), o)
		last := int64(-1)
		for i := range p.Elements(r.ID()) {
			last = i
		}
		_, err = mr.ApplyMap(ctx, r, mr.Input[chunk](in), func(ctx context.Context, ch chunk, emit func(string, int64)) error {
			st, reason, err := rd.count(ctx, ch, c.add)
			if err != nil {
				return err
			}
			emitStatus(ch, st, reason, emit)
			if ch.idx == last {
				for w, n := range c.all {
					emit(w, n)
				}
			}
			return nil
		}, st, mr.WithPlan(p))
	}
	if err != nil {
		return nil, joberr.Wrap("wordcount", err)
	}
	ropts := []mr.ReduceOption{mr.Gather(o.Gather), mr.Root(o.Root), mr.WithTransfer(o.Transfer)}
	if o.Gather == reduce.GatherNone || o.Gather == reduce.GatherPartitioned {
		ropts = append(ropts, mr.Merge())
	}
	res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (*Result, error) {
		t := &tally{words: newCounter(), unreadable: skipped}
		for i, k := range p.Keys {
			v := p.Value(i)
			switch {
			case k == keyFiles:
				t.files = v
			case strings.HasPrefix(k, keyBinary):
				t.binary = append(t.binary, k[len(keyBinary):])
			case strings.HasPrefix(k, keyUnreadable):
				path, reason, _ := strings.Cut(k[len(keyUnreadable):], "\x00")
				t.unreadable = append(t.unreadable, Skip{Path: path, Reason: reason})
			default:
				t.words.addN(k, v)
			}
		}
		return t.result(o.Top), nil
	}, ropts...)
	if err != nil {
		return nil, err
	}
	if !res.OK {
		return nil, nil
	}
	return res.Value, nil
}

// plan is the distribution of the chunks by o.Dist, with chunk lengths as
// weights: what mr.WithDistribution would make.
func plan(cs []chunk, ranks int, o Options) *distrib.Plan {
	n := int64(len(cs))
	weights := func() []float64 {
		w := make([]float64, len(cs))
		for i, c := range cs {
			w[i] = float64(c.n)
		}
		return w
	}
	switch o.Dist {
	case distrib.Cyclic:
		return distrib.NewCyclic(n, ranks)
	case distrib.Balanced:
		return distrib.NewBalanced(weights(), ranks)
	case distrib.BestFit:
		return distrib.NewBestFit(n, weights(), ranks, o.Threshold)
	}
	return distrib.NewBlock(n, ranks)
}
