package wordcount

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pgasmr/pgasmr/apps/internal/appjob"
	"github.com/pgasmr/pgasmr/apps/internal/joberr"
	"github.com/pgasmr/pgasmr/internal/checkpoint"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// DefaultChunkBytes is the default nominal size of a chunk of a file.
const DefaultChunkBytes = 4 << 20

// Options configures a count: the job options every MapReduce job has
// (mr.Options; wordcount's defaults are Defaults) and wordcount's own. The
// zero value counts every word with the array map over block shares of
// the chunks, the partitioned gather merged to Root, and collective
// transfer.
type Options struct {
	mr.Options
	// Top keeps the first Top words of the result (0: all).
	Top int
	// SkipUnreadable turns a file that cannot be listed, opened or read,
	// or whose compressed data is bad, into a Result.Unreadable entry
	// instead of an error.
	SkipUnreadable bool
	// ChunkBytes is the nominal size of the chunks large files are cut
	// into (0: DefaultChunkBytes).
	ChunkBytes int64
	// Checkpoint, if not "", is a directory where Run keeps the chunks
	// each rank has counted, so that the same count run again after a
	// failure redoes only the rest (see internal/checkpoint for its
	// files). Run makes it, resumes from it when it holds a checkpoint
	// of the same count (same inputs, sizes and modification times, same
	// options and rank count), and starts it over otherwise. Run leaves
	// it: the caller removes it (RemoveCheckpoint) once the result is
	// safe. While checkpointing, a rank keeps its whole table until its
	// map ends instead of handing words to the node's table.
	Checkpoint string
	// CheckpointNote, if not nil, is called on the root with one line when
	// Run resumes a checkpoint, or starts over one of another count (the
	// line says why).
	CheckpointNote func(line string)
}

// RemoveCheckpoint removes the checkpoint directory dir that Run kept
// (Options.Checkpoint): its files, and dir itself unless other files are
// in it.
func RemoveCheckpoint(dir string) error { return checkpoint.Remove(dir) }

// Defaults are wordcount's job defaults: the array map (each rank counts
// its chunks in one table and emits one pair per distinct word), and the
// partitioned gather.
func Defaults() mr.Defaults {
	return mr.Defaults{ArrayMap: true, Gather: reduce.GatherPartitioned}
}

// Validate reports every problem with o.
func (o Options) Validate() error {
	var errs []error
	if o.Top < 0 {
		errs = append(errs, fmt.Errorf("Top %d, want >= 0", o.Top))
	}
	if o.ChunkBytes < 0 {
		errs = append(errs, fmt.Errorf("ChunkBytes %d, want >= 0", o.ChunkBytes))
	}
	return o.job().Validate(errs...)
}

// job is o's job options with wordcount's defaults.
func (o Options) job() appjob.Job { return appjob.New("wordcount", o.Options, Defaults()) }

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
	// Options.Top > 0. A result past the job's memory budget
	// (pgas.Config.MemoryBytes) holds its words in files instead, and
	// Words is empty: Each reads them, and Close removes them.
	Words []WordCount

	spilled *spilledWords
}

// Each calls f with the result's words in order (Words, or the words in
// files of a result past the memory budget), and stops at f's first
// error.
func (r *Result) Each(f func(WordCount) error) error {
	if r.spilled != nil {
		return r.spilled.each(f)
	}
	for _, wc := range r.Words {
		if err := f(wc); err != nil {
			return err
		}
	}
	return nil
}

// InFiles reports whether the result's words are in files (it was past the
// memory budget): Words is then empty, and Each reads them.
func (r *Result) InFiles() bool { return r.spilled != nil }

// Close removes the files of a result past the memory budget, after
// which Each fails; it does nothing to a result in memory.
func (r *Result) Close() error {
	if r == nil || r.spilled == nil {
		return nil
	}
	return r.spilled.Close()
}

// tally is a count before sorting: what every mode produces.
type tally struct {
	words *reduce.CountTable
	files
}

// files is what a count learns about its files besides their words: in
// Run, each rank's side result, gathered to the ranks that build the
// Result (mr.GatherValues).
type files struct {
	Read       int64    // files counted
	Binary     []string // files skipped as binary
	Unreadable []Skip   // files skipped as unreadable
}

// record notes the status of c's file, once per file (at its first chunk).
func (f *files) record(c chunk, st status, reason string) {
	if !c.firstChunk {
		return
	}
	switch st {
	case counted:
		f.Read++
	case binaryFile:
		f.Binary = append(f.Binary, c.path)
	case unreadable:
		f.Unreadable = append(f.Unreadable, Skip{Path: c.path, Reason: reason})
	}
}

// add adds o's files to f.
func (f *files) add(o files) {
	f.Read += o.Read
	f.Binary = append(f.Binary, o.Binary...)
	f.Unreadable = append(f.Unreadable, o.Unreadable...)
}

func (t *tally) result(top int) *Result {
	return t.files.result(top, t.words.Len(), t.words.All())
}

// result builds the Result of files and words, n distinct words that each
// come once.
func (t *files) result(top, n int, words iter.Seq2[string, int64]) *Result {
	ws := make([]WordCount, 0, n)
	for w, n := range words {
		ws = append(ws, WordCount{w, n})
	}
	return t.sorted(top, ws)
}

func prepare(ctx context.Context, r *pgas.Rank, paths []string, o Options) ([]chunk, []Skip, error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	files, skipped, err := list(ctx, r, paths, o.SkipUnreadable)
	if err != nil {
		return nil, nil, err
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	mr.ProgressFrom(ctx).SetTotal(int64(len(files)), total)
	return chunks(files, cmp.Or(o.ChunkBytes, DefaultChunkBytes)), skipped, nil
}

// Seq counts the words of paths on one goroutine, file by file: the
// sequential baseline. Options' distribution and gather fields are unused.
func Seq(ctx context.Context, paths []string, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Checkpoint != "" {
		return nil, errNoCheckpoint("Seq")
	}
	// Whole files, not chunks: the chunk cutting of the other modes is
	// checked against it.
	o.ChunkBytes = math.MaxInt64
	cs, skipped, err := prepare(ctx, nil, paths, o)
	if err != nil {
		return nil, err
	}
	t := &tally{words: reduce.NewCountTable(), files: files{Unreadable: skipped}}
	rd := &reader{skip: o.SkipUnreadable}
	for _, c := range cs {
		st, reason, err := rd.count(ctx, c, t.words.AddAll)
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
	if o.Checkpoint != "" {
		return nil, errNoCheckpoint("Goroutines")
	}
	cs, skipped, err := prepare(ctx, nil, paths, o)
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
		t := &tally{words: reduce.NewCountTable()}
		tallies[w] = t
		wg.Go(func() {
			rd := &reader{skip: o.SkipUnreadable}
			for {
				i := next.Add(1) - 1
				if i >= int64(len(cs)) {
					return
				}
				st, reason, err := rd.count(ctx, cs[i], t.words.AddAll)
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
	all.Unreadable = append(all.Unreadable, skipped...)
	for _, t := range tallies[1:] {
		for w, n := range t.words.All() {
			all.words.AddN(w, n)
		}
		all.add(t.files)
	}
	return all.result(o.Top), nil
}

// Run is collective: every rank calls it with the same paths and options.
// The chunks of the files are mapped over the ranks as o says, and the
// complete result is returned on o.Root (nil, nil elsewhere), or on every
// rank under reduce.GatherAll.
func Run(ctx context.Context, r *pgas.Rank, paths []string, o Options) (*Result, error) {
	j := o.job()
	err := checkpointOutsideInputs(o.Checkpoint, paths)
	var cs []chunk
	var skipped []Skip
	if err == nil {
		cs, skipped, err = prepare(ctx, r, paths, o)
	}
	if err == nil {
		err = j.Check(r, nil) // o is valid: only the root is left to check
	}
	if err != nil {
		return nil, err
	}
	st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
	if err != nil {
		return nil, err
	}
	rd := &reader{skip: o.SkipUnreadable}
	// A rank counts its chunks in one table, handed to the store after its
	// last chunk; while the node's table takes pairs during the map
	// (reduce.Store.SinkBudget), the table hands its colder words over
	// whenever it holds the budget, so that a rank's memory is bounded by
	// the budget instead of its input's vocabulary. Its files' statuses are
	// its side result.
	c := reduce.NewCountTable()
	var handed func() error // c.HandOver's errors, once the map has started
	rd.block = func() error {
		if handed == nil {
			return nil
		}
		return handed()
	}
	var mine files
	for i := range cs {
		cs[i].idx = int64(i)
	}
	todo := cs             // the chunks to count
	var ck *rankCheckpoint // nil unless o.Checkpoint
	if o.Checkpoint != "" {
		if ck, err = openCheckpoint(ctx, r, o, cs, st, c, &mine); err == nil {
			todo, err = ck.todo(ctx, r, cs)
		}
		if err != nil {
			ck.wait()
			return nil, joberr.Wrap("wordcount", err)
		}
		defer ck.wait() // a failed map's last save, still writing
	}
	count := func(ctx context.Context, ch chunk) error {
		if handed == nil && ck == nil { // the map has started: the store has its sink, if any
			handed = c.HandOver(st)
		}
		fs, reason, err := rd.count(ctx, ch, c.AddAll)
		if err != nil {
			return err
		}
		mine.record(ch, fs, reason)
		return ck.counted(ch.idx, st, c, mine, false)
	}
	err = appjob.Map(ctx, r, j, mr.Input[chunk](&chunkInput{todo}),
		func(ctx context.Context, ch chunk, emit func(string, int64)) error {
			return count(ctx, ch)
		},
		func(ctx context.Context, s mr.Share[chunk], emit func(string, int64)) error {
			for i := range s.Elements() {
				if err := count(ctx, todo[i]); err != nil {
					return err
				}
			}
			return nil
		}, st, mr.WithFinish(func(ctx context.Context, _ func(string, int64)) error {
			if err := ck.counted(-1, st, c, mine, true); err != nil {
				return err
			}
			return st.AddPairs(c.Pairs()) // the table is combined already: no second hash table
		}))
	if err != nil {
		return nil, err
	}
	// The files' statuses go where the result is built: to Root, or to
	// every rank under GatherAll.
	var sides []files
	if j.Resolved().Gather == reduce.GatherAll {
		sides, err = mr.AllGatherValues(ctx, r, mine)
	} else {
		sides, err = mr.GatherValues(ctx, r, mine, o.Root)
	}
	if err != nil {
		return nil, joberr.Wrap("wordcount", err)
	}
	return appjob.ReduceStream(ctx, r, j, st, func(ctx context.Context, rd reduce.RunReader[string, int64]) (*Result, error) {
		// The pairs hold each word once, combined: no table to count into.
		// Under a memory budget the words past the store's part of the
		// rank's share go to files, sorted (builder).
		b := &builder{files: files{Unreadable: skipped}, top: o.Top, budget: r.MemoryShare() / mr.StoreShare, tmp: r.Config().TmpDir}
		for _, s := range sides {
			b.files.add(s)
		}
		err := func() error {
			for w, n := range reduce.All(rd) {
				if err := b.add(w, n[0]); err != nil {
					return err
				}
			}
			return rd.Err()
		}()
		if err != nil {
			if b.spilled != nil {
				b.spilled.Close()
			}
			return nil, err
		}
		return b.result(), nil
	})
}
