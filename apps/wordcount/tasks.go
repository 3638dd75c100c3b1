package wordcount

import (
	"context"

	"github.com/pgasmr/pgasmr/reduce"
)

// Task is one map task of a count, a chunk of a file as Run cuts it, for
// MapReduce frameworks other than pgasmr (apps/mrmpi).
type Task struct{ c chunk }

// Tasks validates o, lists paths and cuts the files into tasks of
// o.ChunkBytes, as Run does. Under o.SkipUnreadable, inputs that could not
// be listed are returned as skipped.
func Tasks(ctx context.Context, paths []string, o Options) ([]Task, []Skip, error) {
	cs, skipped, err := prepare(ctx, nil, paths, o)
	if err != nil {
		return nil, nil, err
	}
	ts := make([]Task, len(cs))
	for i, c := range cs {
		c.idx = int64(i)
		ts[i] = Task{c}
	}
	return ts, skipped, nil
}

// Path is the task's file.
func (t Task) Path() string { return t.c.path }

// First reports whether the task is its file's first chunk: the one that
// reports the file's status (read, binary or unreadable), once per file.
func (t Task) First() bool { return t.c.firstChunk }

// A TaskReader counts tasks with the package's reader and word rule
// (Words); it keeps its buffers between tasks and belongs to one
// goroutine.
type TaskReader struct{ rd reader }

// NewTaskReader returns a reader; skipUnreadable is Options.SkipUnreadable.
func NewTaskReader(skipUnreadable bool) *TaskReader {
	return &TaskReader{reader{skip: skipUnreadable}}
}

// Count calls add with every word of task t (add must not retain the
// slice). A binary file gives binary = true and no words; a file that
// cannot be read gives its error, or with skipUnreadable the error's text
// as skipReason (words counted before a failed read stay counted).
func (r *TaskReader) Count(ctx context.Context, t Task, add func(word []byte)) (binary bool, skipReason string, err error) {
	st, reason, err := r.rd.count(ctx, t.c, func(words [][]byte) {
		for _, w := range words {
			add(w)
		}
	})
	switch {
	case err != nil:
		return false, "", err
	case st == binaryFile:
		return true, "", nil
	case st == unreadable:
		return false, reason, nil
	}
	return false, "", nil
}

// NewResult builds the Result of a count done by other means (the
// MapReduce-MPI baseline): the words and their counts, the files read
// and the ones skipped, sorted as Result documents and cut to top words
// (0: all).
func NewResult(words *reduce.CountTable, read int64, binary []string, unreadable []Skip, top int) *Result {
	t := &tally{words: words, files: files{Read: read, Binary: binary, Unreadable: unreadable}}
	return t.result(top)
}
