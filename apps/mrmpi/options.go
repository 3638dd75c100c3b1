package mrmpi

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ErrNotBuilt is returned by Run in a binary built without the mpi and
// mrmpi build tags.
var ErrNotBuilt = errors.New("mrmpi: built without MR-MPI: rebuild with -tags mpi,mrmpi")

// Apps are the applications Run knows.
var Apps = []string{"histogram", "linreg", "wordcount", "spamcount"}

// Result is an app's result: *histogram.Result, *linreg.Result,
// *wordcount.Result or *spamcount.Result.
type Result interface {
	Write(w io.Writer, format string) error
}

// Options configures Run. The zero value runs without local combining
// with the apps' default chunk sizes and MR-MPI's default page size.
type Options struct {
	// Compress combines each rank's pairs by key (MR_compress) before
	// MR_collate.
	Compress bool
	// TaskCombine makes wordcount's map count each task's words in a
	// table and emit one pair per distinct word per task (the combining
	// pgasmr's map does per rank) instead of one pair per occurrence.
	// The other apps' tasks always emit combined counts.
	TaskCombine bool
	// Top keeps the Top most frequent words (wordcount; 0: all).
	Top int
	// SkipUnreadable is wordcount.Options.SkipUnreadable.
	SkipUnreadable bool
	// WordsFile is spamcount's word list ("" for the built-in one).
	WordsFile string
	// InputFormat is linreg's input format: int8 (""), f64 or csv.
	InputFormat string
	// ChunkBytes is the size of a map task's chunk for histogram,
	// wordcount and linreg (0: the app's DefaultChunkBytes).
	ChunkBytes int64
	// MemsizeMB is MR-MPI's page size in MiB (MR_set_memsize; 0: the
	// library's default, 64).
	MemsizeMB int
	// Fpath is the directory where MR-MPI spills pages that do not fit in
	// memory (MR_set_fpath; "": os.TempDir()).
	Fpath string
	// Phases, if not nil, gets one line per phase (prepare, map,
	// compress, collate, reduce, gather) with the wall time rank 0 spent
	// in it.
	Phases io.Writer
}

// Validate reports every problem with o for app.
func (o Options) Validate(app string) error {
	var errs []error
	if !slices.Contains(Apps, app) {
		errs = append(errs, fmt.Errorf("mrmpi: unknown app %q, want one of %s", app, strings.Join(Apps, ", ")))
	}
	if o.Top < 0 {
		errs = append(errs, fmt.Errorf("mrmpi: Top %d, want >= 0", o.Top))
	}
	if o.ChunkBytes < 0 {
		errs = append(errs, fmt.Errorf("mrmpi: ChunkBytes %d, want >= 0", o.ChunkBytes))
	}
	if o.MemsizeMB < 0 {
		errs = append(errs, fmt.Errorf("mrmpi: MemsizeMB %d, want >= 0", o.MemsizeMB))
	}
	return errors.Join(errs...)
}
