package linreg

import (
	"context"
	"fmt"
)

// Tasks is the input of a job cut into map tasks as Run, Seq and
// Goroutines cut it (chunks of Options.ChunkBytes), for MapReduce
// frameworks other than pgasmr (apps/mrmpi): each task yields the Sums
// of its points, read with the package's reader. A Tasks belongs to one
// goroutine, and keeps the files it mapped until Close.
//
// Summing the tasks' Sums with Sums.Add in task order, from zero, and
// calling Fit gives the bytes Seq gives; for int8 input (Integer) the
// sums are exact and any order will do. A compressed file is one task,
// whose Sums are those of the chunks its decompressed bytes are cut into,
// added in order: for float input, the sum may then differ from Seq's in
// the last bits (Seq adds each chunk's sums to the running total).
type Tasks struct {
	format int
	in     *chunks
	rd     *reader
}

// NewTasks validates o and cuts files into tasks; it reads no data.
func NewTasks(files []string, o Options) (*Tasks, error) {
	format, in, err := prepare(context.Background(), files, o) // no progress to report to
	if err != nil {
		return nil, err
	}
	return &Tasks{format: format, in: in, rd: newReader(format)}, nil
}

// Len is the number of tasks.
func (t *Tasks) Len() int64 { return t.in.Len() }

// Integer reports whether the input format is int8, whose sums are exact
// integers (the int64 fields of Sums).
func (t *Tasks) Integer() bool { return t.format == fmtInt8 }

// Sums returns the sums of the points of task i. Bad input is an error
// naming the file and offset, as in Run.
func (t *Tasks) Sums(ctx context.Context, i int64) (Sums, error) {
	c, err := t.in.At(ctx, i)
	if err != nil {
		return Sums{}, err
	}
	return t.rd.sums(ctx, c)
}

// Close unmaps the files the tasks mapped.
func (t *Tasks) Close() error {
	if err := t.rd.Close(); err != nil {
		return fmt.Errorf("linreg: %w", err)
	}
	return nil
}

// Fit computes the result from the sums of all the points with the
// package's one formula (see the package documentation); integer says the
// sums are exact integers (int8 input).
func Fit(s Sums, integer bool) (*Result, error) { return fit(s, integer) }
