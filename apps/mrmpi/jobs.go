package mrmpi

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/reduce"
)

// A job is one app written for a MapReduce engine with MR-MPI's shape:
// map tasks that emit key/value pairs, values of one fixed size combined
// by addition (in MR_compress and MR_reduce), and the reduced pairs
// collected on rank 0. Jobs are pure Go: the engine (cgo, MR-MPI) moves
// the bytes, and the tests drive them with a sequential engine too.
type job interface {
	// prepare lists the inputs and cuts them into tasks (every rank).
	prepare(ctx context.Context) error
	// tasks is the number of map tasks.
	tasks() int
	// mapTask runs task i, calling emit with pairs; emit copies them.
	mapTask(ctx context.Context, i int, emit func(key, value []byte)) error
	// valueBytes is the size of every value.
	valueBytes() int
	// add adds value v to acc, both valueBytes long.
	add(acc, v []byte)
	// collect takes one reduced pair (rank 0, after the gather).
	collect(key, value []byte)
	// result builds the Result from the collected pairs (rank 0).
	result() (Result, error)
	// close releases what prepare opened.
	close() error
}

func newJob(app string, inputs []string, o Options) (job, error) {
	if err := o.Validate(app); err != nil {
		return nil, err
	}
	switch app {
	case "histogram":
		return &histJob{files: inputs, o: o}, nil
	case "linreg":
		return &linregJob{files: inputs, o: o}, nil
	case "wordcount":
		return &wcJob{paths: inputs, o: o}, nil
	}
	return &spamJob{paths: inputs, o: o}, nil
}

var le = binary.LittleEndian

// addInt64s adds the little-endian int64s of v to those of acc.
func addInt64s(acc, v []byte) {
	for i := 0; i+8 <= len(acc); i += 8 {
		le.PutUint64(acc[i:], le.Uint64(acc[i:])+le.Uint64(v[i:]))
	}
}

// histogram: per task, (channel value as uint16, count as int64) for
// every non-zero count.

type histJob struct {
	files  []string
	o      Options
	t      *histogram.Tasks
	counts [768]int64
}

func (j *histJob) prepare(ctx context.Context) (err error) {
	j.t, err = histogram.NewTasks(ctx, j.files, j.o.ChunkBytes)
	return err
}

func (j *histJob) tasks() int { return j.t.Len() }

func (j *histJob) mapTask(ctx context.Context, i int, emit func(key, value []byte)) error {
	c, err := j.t.Count(ctx, i)
	if err != nil {
		return err
	}
	var k [2]byte
	var v [8]byte
	for key, n := range c {
		if n != 0 {
			le.PutUint16(k[:], uint16(key))
			le.PutUint64(v[:], uint64(n))
			emit(k[:], v[:])
		}
	}
	return nil
}

func (j *histJob) valueBytes() int   { return 8 }
func (j *histJob) add(acc, v []byte) { addInt64s(acc, v) }

func (j *histJob) collect(key, value []byte) {
	j.counts[le.Uint16(key)%768] += int64(le.Uint64(value))
}

func (j *histJob) result() (Result, error) {
	return histogram.NewResult(len(j.files), j.t.Pixels(), &j.counts), nil
}

func (j *histJob) close() error {
	if j.t == nil {
		return nil
	}
	return j.t.Close()
}

// linreg: per task, (0, Sums) for int8 input and (task index, Sums) for
// float input, keys as int64.

type linregJob struct {
	files []string
	o     Options
	t     *linreg.Tasks
	sums  map[int64]linreg.Sums
}

// sumsBytes is the encoded size of linreg.Sums: six int64 and five
// float64 fields.
const sumsBytes = 11 * 8

func putSums(b []byte, s linreg.Sums) {
	for i, v := range []int64{s.N, s.X, s.Y, s.XX, s.YY, s.XY} {
		le.PutUint64(b[8*i:], uint64(v))
	}
	for i, v := range []float64{s.FX, s.FY, s.FXX, s.FYY, s.FXY} {
		le.PutUint64(b[48+8*i:], math.Float64bits(v))
	}
}

func getSums(b []byte) linreg.Sums {
	i := func(k int) int64 { return int64(le.Uint64(b[8*k:])) }
	f := func(k int) float64 { return math.Float64frombits(le.Uint64(b[48+8*k:])) }
	return linreg.Sums{N: i(0), X: i(1), Y: i(2), XX: i(3), YY: i(4), XY: i(5),
		FX: f(0), FY: f(1), FXX: f(2), FYY: f(3), FXY: f(4)}
}

func (j *linregJob) prepare(context.Context) (err error) {
	j.t, err = linreg.NewTasks(j.files, linreg.Options{Format: j.o.InputFormat, ChunkBytes: j.o.ChunkBytes})
	j.sums = map[int64]linreg.Sums{}
	return err
}

func (j *linregJob) tasks() int { return int(j.t.Len()) }

func (j *linregJob) mapTask(ctx context.Context, i int, emit func(key, value []byte)) error {
	s, err := j.t.Sums(ctx, int64(i))
	if err != nil {
		return err
	}
	var k [8]byte
	var v [sumsBytes]byte
	if !j.t.Integer() {
		le.PutUint64(k[:], uint64(i))
	}
	putSums(v[:], s)
	emit(k[:], v[:])
	return nil
}

func (j *linregJob) valueBytes() int { return sumsBytes }

// add adds Sums; float sums are only ever added for one key, the task
// index, which has one value.
func (j *linregJob) add(acc, v []byte) { putSums(acc, getSums(acc).Add(getSums(v))) }

func (j *linregJob) collect(key, value []byte) {
	k := int64(le.Uint64(key))
	j.sums[k] = j.sums[k].Add(getSums(value))
}

func (j *linregJob) result() (Result, error) {
	keys := make([]int64, 0, len(j.sums))
	for k := range j.sums {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var acc linreg.Sums
	for _, k := range keys { // task order, as Seq adds them
		acc = acc.Add(j.sums[k])
	}
	return linreg.Fit(acc, j.t.Integer())
}

func (j *linregJob) close() error {
	if j.t == nil {
		return nil
	}
	return j.t.Close()
}

// wordcount: (word, 1) per occurrence, and file statuses under keys that
// cannot be words (bytes below 0x20): MR-MPI has only key/value pairs to
// carry them, where wordcount.Run gathers them as each rank's side
// result (mr.GatherValues).

const (
	keyFiles      = "\x00files" // value: files read
	keyBinary     = "\x01"      // + path: a binary file
	keyUnreadable = "\x02"      // + path + "\x00" + reason: an unreadable file
)

type wcJob struct {
	paths   []string
	o       Options
	ts      []wordcount.Task
	skipped []wordcount.Skip
	rd      *wordcount.TaskReader
	res     wordcount.Result
	words   *reduce.CountTable
	local   *reduce.CountTable // a task's counts (TaskCombine)
}

func (j *wcJob) prepare(ctx context.Context) (err error) {
	j.ts, j.skipped, err = wordcount.Tasks(ctx, j.paths, wordcount.Options{Top: j.o.Top, SkipUnreadable: j.o.SkipUnreadable, ChunkBytes: j.o.ChunkBytes})
	j.rd = wordcount.NewTaskReader(j.o.SkipUnreadable)
	j.words = reduce.NewCountTable()
	j.local = reduce.NewCountTable()
	return err
}

func (j *wcJob) tasks() int { return len(j.ts) }

var one = [8]byte{1}

func (j *wcJob) mapTask(ctx context.Context, i int, emit func(key, value []byte)) error {
	t := j.ts[i]
	add := func(w []byte) { emit(w, one[:]) }
	if j.o.TaskCombine {
		add = j.local.Add
	}
	binary, reason, err := j.rd.Count(ctx, t, add)
	if j.o.TaskCombine {
		var v [8]byte
		for w, n := range j.local.All() {
			le.PutUint64(v[:], uint64(n))
			emit([]byte(w), v[:])
		}
		j.local.Reset()
	}
	if err != nil || !t.First() {
		return err
	}
	switch {
	case binary:
		emit([]byte(keyBinary+t.Path()), one[:])
	case reason != "":
		emit([]byte(keyUnreadable+t.Path()+"\x00"+reason), one[:])
	default:
		emit([]byte(keyFiles), one[:])
	}
	return nil
}

func (j *wcJob) valueBytes() int   { return 8 }
func (j *wcJob) add(acc, v []byte) { addInt64s(acc, v) }

func (j *wcJob) collect(key, value []byte) {
	n := int64(le.Uint64(value))
	switch k := string(key); {
	case k == keyFiles:
		j.res.Files += n
	case strings.HasPrefix(k, keyBinary):
		j.res.SkippedBinary = append(j.res.SkippedBinary, k[len(keyBinary):])
	case strings.HasPrefix(k, keyUnreadable):
		path, reason, _ := strings.Cut(k[len(keyUnreadable):], "\x00")
		j.res.Unreadable = append(j.res.Unreadable, wordcount.Skip{Path: path, Reason: reason})
	default:
		j.words.AddN(k, n)
	}
}

// result sorts as wordcount's Result documents (wordcount.NewResult).
func (j *wcJob) result() (Result, error) {
	r := j.res
	return wordcount.NewResult(j.words, r.Files, r.SkippedBinary, append(r.Unreadable, j.skipped...), j.o.Top), nil
}

func (j *wcJob) close() error { return nil }

// spamcount: per file, per message, (word index, {occurrences, 1}) per
// listed word found and (len(words), {1, malformed}); keys as uint32.

type spamJob struct {
	paths  []string
	o      Options
	words  []string
	files  []string
	c      *spamcount.Counter
	counts [][2]int64 // by word; the last: messages, malformed
}

func (j *spamJob) prepare(ctx context.Context) (err error) {
	if j.words, err = spamcount.Words(spamcount.Options{WordsFile: j.o.WordsFile}); err != nil {
		return err
	}
	if j.files, err = spamcount.Files(ctx, j.paths); err != nil {
		return err
	}
	j.c = spamcount.NewCounter(j.words)
	j.counts = make([][2]int64, len(j.words)+1)
	return nil
}

// tasks are files: a task lists its file's messages (one, or an mbox's)
// and counts them.
func (j *spamJob) tasks() int { return len(j.files) }

func (j *spamJob) mapTask(ctx context.Context, i int, emit func(key, value []byte)) error {
	msgs, err := spamcount.Scan(ctx, j.files[i:i+1])
	if err != nil {
		return err
	}
	var k [4]byte
	var v [16]byte
	for _, m := range msgs {
		malformed, err := j.c.Count(ctx, m, func(w int, n int64) {
			le.PutUint32(k[:], uint32(w))
			le.PutUint64(v[:], uint64(n))
			le.PutUint64(v[8:], 1)
			emit(k[:], v[:])
		})
		if err != nil {
			return err
		}
		le.PutUint32(k[:], uint32(len(j.words)))
		le.PutUint64(v[:], 1)
		le.PutUint64(v[8:], 0)
		if malformed {
			le.PutUint64(v[8:], 1)
		}
		emit(k[:], v[:])
	}
	return nil
}

func (j *spamJob) valueBytes() int   { return 16 }
func (j *spamJob) add(acc, v []byte) { addInt64s(acc, v) }

func (j *spamJob) collect(key, value []byte) {
	k := le.Uint32(key)
	if int(k) >= len(j.counts) {
		return // not a key this job emits
	}
	j.counts[k][0] += int64(le.Uint64(value))
	j.counts[k][1] += int64(le.Uint64(value[8:]))
}

func (j *spamJob) result() (Result, error) {
	n := len(j.words)
	r := &spamcount.Result{Messages: j.counts[n][0], Malformed: j.counts[n][1], Words: make([]spamcount.WordCount, n)}
	for i, w := range j.words {
		r.Words[i] = spamcount.WordCount{Word: w, Occurrences: j.counts[i][0], Messages: j.counts[i][1]}
	}
	return r, nil
}

func (j *spamJob) close() error { return nil }

// reduceValues combines the values of one key, concatenated in mv with
// the sizes in sizes, into dst (valueBytes long) by j's addition. It
// returns an error for a value of the wrong size.
func reduceValues(j job, dst, mv []byte, sizes []int32, first bool) error {
	vb := j.valueBytes()
	for _, n := range sizes {
		if int(n) != vb || len(mv) < vb {
			return fmt.Errorf("mrmpi: value of %d bytes, want %d", n, vb)
		}
		if first {
			copy(dst, mv[:vb])
			first = false
		} else {
			j.add(dst, mv[:vb])
		}
		mv = mv[vb:]
	}
	return nil
}
