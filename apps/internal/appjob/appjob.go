// Package appjob is the frame the applications' Run functions share: an
// app's job options bound once to its defaults (mr.Defaults), the checks
// at the start, the map the options select and the reduce that ends the
// job, so that each Run reads as options, map, reduce, result. It calls
// mr as any job does and adds nothing to mr's API; the errors are worded
// with joberr.
package appjob

import (
	"context"

	"github.com/pgasmr/pgasmr/apps/internal/joberr"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Job is an app's job options with the app's name (its errors' prefix)
// and defaults: what mr.Options' Validate, Resolve and ReduceOptions
// take, given once.
type Job struct {
	app string
	o   mr.Options
	d   mr.Defaults
}

// New returns the job of app with options o and defaults d.
func New(app string, o mr.Options, d mr.Defaults) Job {
	return Job{app: app, o: o, d: d}
}

// Validate reports every problem with the job options (for the job's
// defaults), then own (the app's own problems, any of which may be nil or
// join several), each on its line with the app's name in front once; nil
// if there is none.
func (j Job) Validate(own ...error) error {
	return joberr.Prefix(j.app, append([]error{j.o.Validate(j.d)}, own...)...)
}

// Check is the start of a Run on r: valid (the app's Validate of its
// options, or nil where the caller has already validated them) and the
// problem with the options' root on r's job, if any, joined as Validate
// joins them.
func (j Job) Check(r *pgas.Rank, valid error) error {
	return joberr.Prefix(j.app, valid, j.o.CheckRanks(r.N()))
}

// Resolved returns the job options with the defaults applied
// (mr.Options.Resolve).
func (j Job) Resolved() mr.Options { return j.o.Resolve(j.d) }

// OnRoot reports whether r is the options' root.
func (j Job) OnRoot(r *pgas.Rank) bool { return r.ID() == j.o.Root }

// Map is the job's map on r: the array map array (mr.ApplyMapArray)
// where the options resolve to mr.MapArray, else the element map element
// (mr.ApplyMap), over in into st, with the options' distribution and
// threshold and then extra. array may be nil for a job without an array
// map (its defaults say so, and Validate refuses mr.MapArray). An error
// is returned as the app's (joberr.Wrap).
func Map[I any, K comparable, V any](ctx context.Context, r *pgas.Rank, j Job, in mr.Input[I], element mr.MapFunc[I, K, V], array mr.ArrayMapFunc[I, K, V], st *reduce.Store[K, V], extra ...mr.MapOption) error {
	opts := append(j.o.MapOptions(), mr.WithReduce(j.o.ReduceOptions(j.d)...))
	opts = append(opts, extra...)
	var err error
	if j.Resolved().Map == mr.MapArray {
		_, err = mr.ApplyMapArray(ctx, r, in, array, st, opts...)
	} else {
		_, err = mr.ApplyMap(ctx, r, in, element, st, opts...)
	}
	return joberr.Wrap(j.app, err)
}

// Reduce ends the job on r: mr.ApplyReduce of st with f under the
// options' gather, root and transfer (mr.Options.ReduceOptions, which
// merge to the root where the gather leaves the pairs spread). It returns
// f's result where the gather put the pairs (the root, or every rank
// under reduce.GatherAll) and the zero R elsewhere, so R is normally a
// pointer, nil where there is no result. ApplyReduce's error is returned
// as it is.
func Reduce[K comparable, V, R any](ctx context.Context, r *pgas.Rank, j Job, st *reduce.Store[K, V], f mr.ReduceFunc[K, V, R]) (R, error) {
	return value(mr.ApplyReduce(ctx, r, st, f, j.o.ReduceOptions(j.d)...))
}

// value is a reduce's result where the gather put the pairs, else the
// zero R.
func value[R any](res mr.Result[R], err error) (R, error) {
	if err != nil || !res.OK {
		var zero R
		return zero, err
	}
	return res.Value, nil
}

// ReduceStream is Reduce with the pairs as a stream
// (mr.ApplyReduceStream): under a memory budget the rank reads its pairs
// from files as f goes.
func ReduceStream[K comparable, V, R any](ctx context.Context, r *pgas.Rank, j Job, st *reduce.Store[K, V], f mr.StreamFunc[K, V, R]) (R, error) {
	return value(mr.ApplyReduceStream(ctx, r, st, f, j.o.ReduceOptions(j.d)...))
}
