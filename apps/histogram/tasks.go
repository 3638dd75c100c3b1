package histogram

import (
	"context"
	"fmt"
)

// Tasks is the input of a job cut into map tasks as Run, Seq and
// Goroutines cut it (runs of whole pixel rows of about a chunk size), for
// MapReduce frameworks other than pgasmr (apps/mrmpi): each task counts
// its pixels with the package's reader and counter. A Tasks keeps the
// files it opened until Close and belongs to one goroutine.
type Tasks struct {
	p  *plan
	rd *reader
}

// NewTasks parses every file's header (an unsupported file is an error,
// as in Run) and cuts the files into tasks of about chunkBytes (0 means
// DefaultChunkBytes).
func NewTasks(ctx context.Context, files []string, chunkBytes int64) (*Tasks, error) {
	p, err := newPlan(ctx, files, chunkBytes)
	if err != nil {
		return nil, err
	}
	return &Tasks{p: p, rd: newReader(p)}, nil
}

// Len is the number of tasks.
func (t *Tasks) Len() int { return len(t.p.chunks) }

// Pixels is the number of pixels of all the files.
func (t *Tasks) Pixels() int64 { return t.p.pixels }

// Count returns the counts of the pixels of task i, keyed as Run's map
// emits them: red values at [0,256), green at [256,512), blue at
// [512,768). It panics if i is not in [0, Len()).
func (t *Tasks) Count(ctx context.Context, i int) (*[768]int64, error) {
	c := new(counter)
	if err := t.rd.each(ctx, t.p.chunks[i], c.add); err != nil {
		return nil, err
	}
	return c.totals(), nil
}

// Close closes the files the tasks opened.
func (t *Tasks) Close() error {
	if err := t.rd.Close(); err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	return nil
}

// NewResult returns the result of a job over images files and pixels
// pixels with the given counts, keyed as Count returns them.
func NewResult(images int, pixels int64, counts *[768]int64) *Result {
	r := &Result{Images: images, Pixels: pixels}
	r.fromCounts(counts)
	return r
}
