package spamcount

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pgasmr/pgasmr/apps/internal/appjob"
	"github.com/pgasmr/pgasmr/apps/internal/joberr"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Options configures a run: the job options every MapReduce job has
// (mr.Options; spamcount's defaults are Defaults) and the word list. The
// zero value counts the built-in words with the element map over a block
// distribution of the messages (which weigh their size; best-fit's
// threshold is in bytes), the partitioned gather merged to Root, and
// collective transfer.
type Options struct {
	mr.Options
	WordsFile string // word list (see ParseWords); "" for the built-in list
}

// Defaults are spamcount's job defaults: the element map only (there is
// no array map), and the partitioned gather.
func Defaults() mr.Defaults {
	return mr.Defaults{Gather: reduce.GatherPartitioned}
}

// Validate reports every problem with o.
func (o Options) Validate() error {
	return o.job().Validate()
}

// job is o's job options with spamcount's defaults.
func (o Options) job() appjob.Job { return appjob.New("spamcount", o.Options, Defaults()) }

// WordCount is one listed word's counts.
type WordCount struct {
	Word        string
	Occurrences int64 // in all messages
	Messages    int64 // messages containing the word at least once
}

// Result is the outcome of a run.
type Result struct {
	Messages  int64       // messages read
	Malformed int64       // messages with a part counted undecoded (see the package doc)
	Words     []WordCount // every listed word, in list order
}

// counts is a key's value in the store: occurrences and messages for a
// word; messages and malformed messages for the extra key len(words).
type counts = [2]int64

func add2(a, b counts) counts { return counts{a[0] + b[0], a[1] + b[1]} }

// counter counts one message at a time. It belongs to one goroutine; its
// close closes a compressed file left open.
type counter struct {
	m   *matcher
	d   *decoder
	buf []byte
	z   zstream
}

func (c *counter) close() { c.z.close() }

func newCounter(words []string) *counter {
	return &counter{m: newMatcher(words), d: newDecoder()}
}

// message reads, decodes and counts message msg, calling emit once per
// word found (key = the word's index, value = {occurrences, 1}) and once
// with key len(words) and value {1, 1 if malformed}.
func (c *counter) message(ctx context.Context, msg Message, emit func(int32, counts)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var raw []byte
	var err error
	if msg.Compressed {
		raw, err = c.z.read(ctx, msg, c.buf)
	} else {
		raw, err = msg.read(c.buf)
	}
	if err != nil {
		return err
	}
	c.buf = raw[:0]
	if err := c.count(ctx, raw, emit); err != nil {
		return fmt.Errorf("spamcount: message %v: %w", msg, err)
	}
	mr.ProgressFrom(ctx).Add(1, msg.Len)
	return nil
}

// progressTotal reports the input's size to the context's mr.Progress:
// messages count as its files.
func progressTotal(ctx context.Context, msgs []Message) {
	var total int64
	for _, m := range msgs {
		total += m.Len
	}
	mr.ProgressFrom(ctx).SetTotal(int64(len(msgs)), total)
}

// count decodes and counts one raw message.
func (c *counter) count(ctx context.Context, raw []byte, emit func(int32, counts)) error {
	texts, malformed := c.d.decode(raw)
	var done int
	for _, t := range texts {
		for len(t) > 0 {
			// Check the context every checkEvery bytes, cutting t where
			// a word cannot straddle (after a byte below 'A' ... a
			// separator is simplest: an ASCII non-alphanumeric byte).
			n := min(len(t), checkEvery)
			for n < len(t) && isWordByte(t[n-1]) {
				n++
			}
			c.m.add(t[:n])
			t = t[n:]
			if done += n; done >= checkEvery {
				done = 0
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
	}
	c.m.flush(func(w int32, n int64) { emit(w, counts{n, 1}) })
	var bad int64
	if malformed {
		bad = 1
	}
	emit(int32(len(c.m.counts)), counts{1, bad})
	return nil
}

// isWordByte reports whether b may be inside a word: anything but an
// ASCII byte that is neither a letter nor a digit.
func isWordByte(b byte) bool {
	return b >= 0x80 || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// table accumulates counts in private memory: the baselines' store.
type table struct {
	words []counts // by word
	msgs  counts   // messages, malformed
}

func newTable(n int) *table { return &table{words: make([]counts, n)} }

func (t *table) emit(k int32, v counts) {
	if int(k) == len(t.words) {
		t.msgs = add2(t.msgs, v)
		return
	}
	t.words[k] = add2(t.words[k], v)
}

func (t *table) result(words []string) *Result {
	res := &Result{Messages: t.msgs[0], Malformed: t.msgs[1], Words: make([]WordCount, len(words))}
	for i, w := range words {
		res.Words[i] = WordCount{Word: w, Occurrences: t.words[i][0], Messages: t.words[i][1]}
	}
	return res
}

// Seq is the sequential baseline: one goroutine, no pgasmr.
func Seq(ctx context.Context, paths []string, o Options) (*Result, error) {
	words, msgs, err := prepare(ctx, paths, o, nil, scanFiles)
	if err != nil {
		return nil, err
	}
	t := newTable(len(words))
	c := newCounter(words)
	defer c.close()
	for _, m := range msgs {
		if err := c.message(ctx, m, t.emit); err != nil {
			return nil, err
		}
	}
	return t.result(words), nil
}

// Goroutines is the fan-out baseline: GOMAXPROCS workers take messages
// from a shared counter and count into private tables, summed at the end;
// standard library only.
func Goroutines(ctx context.Context, paths []string, o Options) (*Result, error) {
	words, msgs, err := prepare(ctx, paths, o, nil, scanParallel)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := max(1, min(runtime.GOMAXPROCS(0), len(msgs)))
	tables := make([]*table, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		tables[w] = newTable(len(words))
		wg.Add(1)
		go func(t *table) {
			defer wg.Done()
			c := newCounter(words)
			defer c.close()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(msgs)) {
					return
				}
				if err := c.message(ctx, msgs[i], t.emit); err != nil {
					cancel(err)
					return
				}
			}
		}(tables[w])
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	total := newTable(len(words))
	for _, t := range tables {
		total.msgs = add2(total.msgs, t.msgs)
		for i, v := range t.words {
			total.words[i] = add2(total.words[i], v)
		}
	}
	return total.result(words), nil
}

// scanParallel lists the messages of files, in order, scanning
// GOMAXPROCS blocks of the files in parallel: Goroutines' scan.
func scanParallel(ctx context.Context, files []string) ([]Message, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	parts := make([][]Message, max(1, min(runtime.GOMAXPROCS(0), len(files))))
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(files)/len(parts), (p+1)*len(files)/len(parts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms, err := scanFiles(ctx, files[lo:hi])
			if err != nil {
				cancel(err)
			}
			parts[p] = ms
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	var msgs []Message
	for _, ms := range parts {
		msgs = append(msgs, ms...)
	}
	return msgs, nil
}

// prepare is the start of every mode: it validates o, with the caller's
// further problem more (Run's root, reported with o's), loads the word
// list, lists the files under paths and finds their messages with scan
// (scanFiles, scanParallel or Run's shared scan), and reports the input's
// size to the context's mr.Progress.
func prepare(ctx context.Context, paths []string, o Options, more error, scan func(ctx context.Context, files []string) ([]Message, error)) ([]string, []Message, error) {
	if err := joberr.Prefix("spamcount", o.Validate(), more); err != nil {
		return nil, nil, err
	}
	words, err := loadWords(o)
	if err != nil {
		return nil, nil, err
	}
	files, err := listFiles(ctx, paths)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := scan(ctx, files)
	if err != nil {
		return nil, nil, err
	}
	progressTotal(ctx, msgs)
	return words, msgs, nil
}

// Run counts the words with pgasmr. It is collective: every rank calls it
// with the same paths and options. Every rank lists the files; each scans
// its block of them for mbox messages and the ranks allgather the message
// list.
// The result is returned on o.Root (on every rank under GatherAll) and is
// nil elsewhere. Messages are the input elements, weighted by size; each
// emits one pair per listed word it contains into an array container of
// len(words)+1 keys (the last counts messages), combined as emitted.
func Run(ctx context.Context, r *pgas.Rank, paths []string, o Options) (*Result, error) {
	j := o.job()
	words, msgs, err := prepare(ctx, paths, o, o.CheckRanks(r.N()), func(ctx context.Context, files []string) ([]Message, error) {
		return scanShared(ctx, r, files)
	})
	if err != nil {
		return nil, err
	}
	st, err := reduce.NewArrayStore[int32, counts](len(words)+1, reduce.Func("add2", add2, true))
	if err != nil {
		return nil, err
	}
	c := newCounter(words)
	defer c.close()
	if err := appjob.Map(ctx, r, j, mr.Input[Message](messages(msgs)), c.message, nil, st); err != nil {
		return nil, err
	}
	return appjob.Reduce(ctx, r, j, st, func(ctx context.Context, p *reduce.Pairs[int32, counts]) (*Result, error) {
		t := newTable(len(words))
		for i, k := range p.Keys {
			t.emit(k, p.Value(i))
		}
		return t.result(words), nil
	})
}
