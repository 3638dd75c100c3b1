package mr

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"
	"time"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/reduce"
	"github.com/pgasmr/pgasmr/reduce/shuffle"
)

// MapFunc is an element-by-element map function: it gets one input
// element and emits pairs.
type MapFunc[I, K, V any] func(ctx context.Context, in I, emit func(K, V)) error

// ArrayMapFunc is an array-based map function: it gets its rank's share
// of the input (the whole list and the plan that deals it), reads its
// elements as it likes, and emits pairs.
type ArrayMapFunc[I, K, V any] func(ctx context.Context, s Share[I], emit func(K, V)) error

// Share is what an array-based map gets on its rank: the whole input and
// the plan ApplyMapArray's options make (block unless they say otherwise;
// nil for a Local input, all of which is the rank's),
// so that the map reads its own elements without rebuilding the
// distribution.
type Share[I any] struct {
	Rank  *pgas.Rank
	Input Input[I]
	Plan  *distrib.Plan
}

// Elements yields the indices of the rank's elements in increasing order
// (a contiguous range under the block plan; all of a Local input, whose
// Plan is nil).
func (s Share[I]) Elements() iter.Seq[int64] {
	if s.Plan == nil {
		return func(yield func(int64) bool) {
			for i := range s.Input.Len() {
				if !yield(i) {
					return
				}
			}
		}
	}
	return s.Plan.Elements(s.Rank.ID())
}

// ReduceFunc is called once per rank with all the pairs the rank reduces.
type ReduceFunc[K, V, R any] func(ctx context.Context, p *reduce.Pairs[K, V]) (R, error)

// MapStats describes one rank's map phase.
type MapStats struct {
	Elements int64 // input elements this rank mapped
	Emitted  int64 // pairs emitted
	Time     time.Duration
	Plan     distrib.Kind // the distribution used (best-fit reports its pick)
	Load     float64      // this rank's load under the plan
}

type mapOpts struct {
	kind      distrib.Kind
	threshold float64
	weights   []float64
	plan      *distrib.Plan
	finish    any // func(context.Context, func(K, V)) error of the map's K, V
	reduce    []ReduceOption
	hasReduce bool
}

// MapOption configures ApplyMap.
type MapOption func(*mapOpts)

// WithReduce tells the map the options of the ApplyReduce that will
// follow it (the same ones), so that the reduce stage can start while the
// ranks map: with node-level combining (reduce.NodeCombine), each rank
// folds its pairs into its node's table as it goes and holds no more than
// a budget of them, instead of every key of its input until the map ends
// (reduce.Store.SinkBudget tells a map's own combining table when to hand
// its pairs over). ApplyReduce must then be called with the same gather
// mode and node combining, or it fails.
func WithReduce(opts ...ReduceOption) MapOption {
	return func(o *mapOpts) { o.reduce, o.hasReduce = opts, true }
}

// WithDistribution selects the work distribution (default distrib.Block).
func WithDistribution(k distrib.Kind) MapOption { return func(o *mapOpts) { o.kind = k } }

// WithPlan distributes the elements with a user-defined plan (for example
// from distrib.NewCustom); it must cover the input's length and the job's
// ranks.
func WithPlan(p *distrib.Plan) MapOption {
	return func(o *mapOpts) { o.plan, o.kind = p, distrib.Custom }
}

// WithThreshold sets best-fit's threshold on the largest load difference.
func WithThreshold(t float64) MapOption { return func(o *mapOpts) { o.threshold = t } }

// WithWeights sets element weights for the balanced and best-fit
// distributions (default: the input's weights if it is a Weighter, else
// 1 each).
func WithWeights(w []float64) MapOption { return func(o *mapOpts) { o.weights = w } }

// WithFinish runs finish once on every rank after the rank's last element
// (on a rank with no element too), with the map's emit, before ApplyMap or
// ApplyMapArray returns: where a map that combines in a table of its own
// over the rank's elements emits it. K and V must be the map's.
func WithFinish[K, V any](finish func(ctx context.Context, emit func(K, V)) error) MapOption {
	return func(o *mapOpts) { o.finish = finish }
}

// finishOf returns the map's finish function of o, if any.
func finishOf[K, V any](o mapOpts) (func(context.Context, func(K, V)) error, error) {
	if o.finish == nil {
		return nil, nil
	}
	f, ok := o.finish.(func(context.Context, func(K, V)) error)
	if !ok || f == nil {
		var k K
		var v V
		return nil, fmt.Errorf("mr: WithFinish of %T given to a map that emits (%T, %T)", o.finish, k, v)
	}
	return f, nil
}

// Plan returns the distribution ApplyMap would use for n elements with
// these options on ranks ranks.
func plan[I any](in Input[I], ranks int, o mapOpts) (*distrib.Plan, error) {
	n := in.Len()
	if o.plan != nil {
		if o.plan.Len() != n || o.plan.Ranks() != ranks {
			return nil, fmt.Errorf("mr: plan for %d elements on %d ranks, input has %d elements on %d ranks", o.plan.Len(), o.plan.Ranks(), n, ranks)
		}
		return o.plan, nil
	}
	weights := o.weights
	if weights == nil && (o.kind == distrib.Balanced || o.kind == distrib.BestFit) {
		weights = make([]float64, n)
		w, ok := in.(Weighter)
		for i := range weights {
			weights[i] = 1
			if ok {
				weights[i] = w.Weight(int64(i))
			}
		}
	}
	if weights != nil && int64(len(weights)) != n {
		return nil, fmt.Errorf("mr: %d weights for %d input elements", len(weights), n)
	}
	if weights != nil {
		if err := distrib.CheckWeights(weights); err != nil {
			return nil, fmt.Errorf("mr: %w", err)
		}
	}
	switch o.kind {
	case distrib.Block:
		return distrib.NewBlock(n, ranks), nil
	case distrib.Cyclic:
		return distrib.NewCyclic(n, ranks), nil
	case distrib.Balanced:
		return distrib.NewBalanced(weights, ranks), nil
	case distrib.BestFit:
		return distrib.NewBestFit(n, weights, ranks, o.threshold), nil
	}
	return nil, fmt.Errorf("mr: distribution %v is not available to ApplyMap", o.kind)
}

// check compares the call and its input across ranks, unless
// pgas.Config.NoCheck: its name and options,
// and, for an input that is the same list on every rank, its length and
// (for a Hasher) its hash. A mismatch is an error naming the ranks and the
// call.
func check[I any](ctx context.Context, r *pgas.Rank, what string, in Input[I], extra string) error {
	if r.Config().NoCheck {
		return nil
	}
	sig := fmt.Sprintf("%s(%s", what, extra)
	if isLocal(in) {
		sig += " Local"
	} else {
		sig += fmt.Sprintf(" len=%d", in.Len())
		if h, ok := in.(Hasher); ok {
			sig += fmt.Sprintf(" hash=%016x", h.Hash())
		}
	}
	if err := r.World().CheckSame(ctx, sig+")"); err != nil {
		return fmt.Errorf("mr: %s: %w (the input and options must be the same on every rank; to map each rank's own data use mr.Local)", what, err)
	}
	return nil
}

// mapSetup is what a map call's options and input make of it.
type mapSetup[K, V any] struct {
	plan   *distrib.Plan // nil for a Local input
	local  bool
	base   int64 // a Local input's index of its first element in the ranks' lists as one
	finish func(context.Context, func(K, V)) error
	reduce *reduce.Options // the reduce the map was told of (WithReduce)
}

// prepareMap applies a map call's options, the job's (WithJobOptions)
// first: it checks the call and the input across ranks, and returns the
// plan (or a Local input's offset), the finish function and the reduce
// options the map was told of.
func prepareMap[I, K, V any](ctx context.Context, r *pgas.Rank, what string, in Input[I], opts []MapOption) (mapSetup[K, V], error) {
	var ms mapSetup[K, V]
	ms.local = isLocal(in)
	var o mapOpts
	if jo, ok := JobOptionsFrom(ctx); ok {
		switch {
		case jo.Map == MapArray && what == "ApplyMap":
			return ms, fmt.Errorf("mr: ApplyMap: the job's mode says map array, but this map is element by element")
		case jo.Map == MapElement && what == "ApplyMapArray":
			return ms, fmt.Errorf("mr: ApplyMapArray: the job's mode says map element, but this map is array-based")
		}
		if !ms.local { // a Local input is mapped where it lies
			for _, opt := range jo.MapOptions() {
				opt(&o)
			}
		}
	}
	var given mapOpts
	for _, opt := range opts {
		opt(&o)
		opt(&given)
	}
	if ms.local && (given.kind != distrib.Block || given.plan != nil || given.weights != nil) {
		return ms, fmt.Errorf("mr: %s: a Local input is mapped where it lies; a distribution (%v), plan or weights does not apply to it", what, given.kind)
	}
	dist := o.kind.String()
	if o.kind == distrib.BestFit {
		dist += fmt.Sprintf(" threshold=%v", o.threshold)
	}
	if err := check(ctx, r, what, in, dist); err != nil {
		return ms, err
	}
	var err error
	if ms.local {
		if what == "ApplyMap" {
			if ms.base, err = localBase(ctx, r, in.Len()); err != nil {
				return ms, err
			}
		}
	} else if ms.plan, err = plan(in, r.N(), o); err != nil {
		return ms, err
	}
	if ms.finish, err = finishOf[K, V](o); err != nil {
		return ms, err
	}
	if o.hasReduce {
		ro, err := reduceOptions(ctx, r, what+" WithReduce", o.reduce, true)
		if err != nil {
			return ms, err
		}
		ms.reduce = &ro
	}
	return ms, nil
}

// localBase is collective: it returns the index of this rank's first
// element of a Local input of n elements in the ranks' lists as one (the
// sum of the lower ranks' lengths).
func localBase(ctx context.Context, r *pgas.Rank, n int64) (int64, error) {
	lens := make([]int64, r.N())
	if err := coll.Allgather(ctx, r.World(), coll.Private(lens), coll.Private([]int64{n}), 1); err != nil {
		return 0, fmt.Errorf("mr: gathering the lengths of the ranks' Local inputs: %w", err)
	}
	var base int64
	for _, l := range lens[:r.ID()] {
		base += l
	}
	return base, nil
}

// beginReduce bounds the store's memory under the job's budget (Spill)
// and starts the reduce stage the map was told of (WithReduce).
func beginReduce[K comparable, V any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, V], ro *reduce.Options) error {
	Spill(r, st)
	if ro == nil {
		return nil
	}
	if err := shuffle.Begin(ctx, r, st, *ro); err != nil {
		return fmt.Errorf("mr: node-level table: %w", err)
	}
	return nil
}

// Spill makes st keep to r's share of the job's memory budget
// (pgas.Config.MemoryBytes, Rank.MemoryShare): past a quarter of it, the
// store writes sorted runs to temporary files in pgas.Config.TmpDir
// (reduce.Store.SetSpill), which ApplyReduce merges back, and which are
// removed when the rank returns, on every path (pgas.Rank.Cleanup). It
// does nothing if the job has no budget or st already spills. ApplyMap
// and ApplyMapArray call it; a job that fills a store by other means
// (Store.AddRun, a table of its own) calls it before.
//
// The quarter is the store's: the store's estimate counts encoded pairs,
// which take about 1.5 times that in a hash container, and the rest of
// the share is for a map's own table (reduce.Store.SinkBudget keeps it
// to about as much), the rounds of the reduce stage's moves (a quarter
// of the store's budget a round) and what the reduce keeps.
func Spill[K comparable, V any](r *pgas.Rank, st *reduce.Store[K, V]) {
	share := r.MemoryShare()
	if share <= 0 || st.Spilling() {
		return
	}
	sp := &reduce.Spill{Dir: r.Config().TmpDir}
	r.Cleanup(func() { sp.Close() })
	st.SetSpill(sp, max(share/StoreShare, 1))
}

// StoreShare is the part of a rank's memory share a store keeps in
// memory (Spill): 1/StoreShare of it.
const StoreShare = 4

// ApplyMap is collective: it runs f on this rank's share of the input
// elements, chosen by the distribution, emitting into st. It returns when
// this rank's elements are mapped (no barrier: ApplyReduce synchronises).
func ApplyMap[I any, K comparable, V any](ctx context.Context, r *pgas.Rank, in Input[I], f MapFunc[I, K, V], st *reduce.Store[K, V], opts ...MapOption) (MapStats, error) {
	setup, err := prepareMap[I, K, V](ctx, r, "ApplyMap", in, opts)
	if err != nil {
		return MapStats{}, err
	}
	if err := beginReduce(ctx, r, st, setup.reduce); err != nil {
		return MapStats{}, err
	}
	// The map's time includes the wait for a turn, as it includes the
	// time the scheduler gives other ranks without turns.
	t0 := time.Now()
	release, err := r.TakeTurn(ctx)
	if err != nil {
		return MapStats{}, fmt.Errorf("mr: waiting for a turn to map: %w", err)
	}
	defer release()
	defer st.EndMap()
	me := r.ID()
	var ms MapStats
	elems := iter.Seq[int64](func(yield func(int64) bool) {
		for i := range in.Len() {
			if !yield(i) {
				return
			}
		}
	})
	if p := setup.plan; p != nil {
		ms.Plan, ms.Load, elems = p.Kind(), p.Load(me), p.Elements(me)
	} else {
		ms.Plan, ms.Load = distrib.Custom, float64(in.Len())
	}
	emitted := st.Emitted()
	emit := st.Emitter()
	st.BeginMap()
	for i := range elems {
		if ms.Elements&63 == 0 {
			if err := ctx.Err(); err != nil {
				return ms, fmt.Errorf("mr: map stopped at element %d: %w", i, err)
			}
		}
		x, err := in.At(ctx, i)
		if err != nil {
			return ms, fmt.Errorf("mr: reading input element %d: %w", i, err)
		}
		st.SetTag(setup.base + i)
		if err := callMap(ctx, f, x, emit); err != nil {
			return ms, &MapError{Element: i, Local: setup.local, Err: err}
		}
		if err := st.Err(); err != nil {
			return ms, fmt.Errorf("mr: map of input element %d: %w", i, err)
		}
		ms.Elements++
	}
	if err := callFinish(ctx, setup.finish, st); err != nil {
		return ms, err
	}
	ms.Emitted = st.Emitted() - emitted
	ms.Time = time.Since(t0)
	statsFrom(ctx).addMap(ms)
	return ms, nil
}

// callFinish runs a map's finish function, if any, into st.
func callFinish[K comparable, V any](ctx context.Context, finish func(context.Context, func(K, V)) error, st *reduce.Store[K, V]) (err error) {
	if finish == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = &MapError{Element: -1, Finish: true, Err: &pgas.PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	if err := finish(ctx, st.Emitter()); err != nil {
		return &MapError{Element: -1, Finish: true, Err: err}
	}
	if err := st.Err(); err != nil {
		return &MapError{Element: -1, Finish: true, Err: err}
	}
	return nil
}

func callMap[I, K, V any](ctx context.Context, f MapFunc[I, K, V], x I, emit func(K, V)) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &pgas.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return f(ctx, x, emit)
}

// ApplyMapArray is collective: it calls f once on this rank with its
// share of the input (the whole list and the plan the options make: block,
// contiguous shares, unless they say otherwise), and f maps the elements
// it chooses, normally Share.Elements. Values are ordered by (rank, emit
// order), which is input order when shares are contiguous in rank order.
func ApplyMapArray[I any, K comparable, V any](ctx context.Context, r *pgas.Rank, in Input[I], f ArrayMapFunc[I, K, V], st *reduce.Store[K, V], opts ...MapOption) (MapStats, error) {
	setup, err := prepareMap[I, K, V](ctx, r, "ApplyMapArray", in, opts)
	if err != nil {
		return MapStats{}, err
	}
	if err := beginReduce(ctx, r, st, setup.reduce); err != nil {
		return MapStats{}, err
	}
	// The map's time includes the wait for a turn, as it includes the
	// time the scheduler gives other ranks without turns.
	t0 := time.Now()
	release, err := r.TakeTurn(ctx)
	if err != nil {
		return MapStats{}, fmt.Errorf("mr: waiting for a turn to map: %w", err)
	}
	defer release()
	defer st.EndMap()
	emitted := st.Emitted()
	st.BeginMap()
	st.SetTag(int64(r.ID()))
	err = func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &pgas.PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		return f(ctx, Share[I]{Rank: r, Input: in, Plan: setup.plan}, st.Emitter())
	}()
	if err == nil {
		err = st.Err()
	}
	if err != nil {
		err = &MapError{Element: -1, Err: err}
	} else {
		err = callFinish(ctx, setup.finish, st)
	}
	ms := MapStats{Emitted: st.Emitted() - emitted, Time: time.Since(t0), Plan: distrib.Custom, Load: float64(in.Len())}
	if p := setup.plan; p != nil {
		ms.Plan, ms.Load = p.Kind(), p.Load(r.ID())
	}
	statsFrom(ctx).addMap(ms)
	return ms, err
}

type redOpts struct{ o reduce.Options }

// ReduceOption configures ApplyReduce.
type ReduceOption func(*redOpts)

// Gather selects the gather mode. Without it (or with
// reduce.GatherDefault) a reduce call gathers every pair to every rank
// (reduce.GatherAll): each rank gets the whole result, where any rank
// reads it. Under the job's options (WithJobOptions) the job's gather
// mode applies, merged to its root. GatherPartitioned, which reduces each
// key once, on the rank that owns it, is for callers that ask for a
// partitioned result: Result.Part then says the Value is the rank's part.
func Gather(g reduce.Gather) ReduceOption { return func(o *redOpts) { o.o.Gather = g } }

// Root sets the root rank of GatherRoot and Merge (default 0).
func Root(rank int) ReduceOption { return func(o *redOpts) { o.o.Root = rank } }

// WithTransfer selects collective or element-by-element transfer.
func WithTransfer(t reduce.Transfer) ReduceOption { return func(o *redOpts) { o.o.Transfer = t } }

// WithNodeCombine says whether the ranks of a node combine their pairs
// into a node-level table first (reduce.NodeCombine; default NodeAuto).
func WithNodeCombine(n reduce.NodeCombine) ReduceOption {
	return func(o *redOpts) { o.o.Node = n }
}

// WithNodeBudget bounds the pairs the ranks of a node hold while they
// map with node-level combining (reduce.Options.NodeBudget; with
// WithReduce).
func WithNodeBudget(n int) ReduceOption { return func(o *redOpts) { o.o.NodeBudget = n } }

// Merge makes GatherNone and GatherPartitioned gather every rank's pairs
// to the root afterwards, so that the root's reduce sees all keys.
func Merge() ReduceOption { return func(o *redOpts) { o.o.Merge = true } }

// NoMerge undoes Merge (options apply in order): a job that gathers its
// own result after a partitioned reduce (mr.TopK, say) appends it to
// Options.ReduceOptions, which merges to the root for jobs that return
// every pair.
func NoMerge() ReduceOption { return func(o *redOpts) { o.o.Merge = false } }

// Result is one rank's outcome of ApplyReduce.
type Result[R any] struct {
	Value R
	// OK is false on ranks that reduced nothing (non-roots under
	// GatherRoot or Merge); Value is then the zero value.
	OK bool
	// Part is true where Value is this rank's part of the result, not the
	// whole: under GatherPartitioned or GatherNone without Merge, which
	// the caller asked for. The whole result is the union of every rank's
	// part (Local maps over it where it lies).
	Part   bool
	Stats  reduce.Stats
	Reduce time.Duration // time in the user's reduce function
}

// ApplyReduce is collective: it moves the pairs of every rank's store as
// the gather mode says, then calls f once on each rank that has pairs to
// reduce (all ranks except non-roots under GatherRoot or Merge), with the
// keys in ascending order. The store is emptied. f gets the rank's pairs
// in memory, whatever the job's memory budget; ApplyReduceStream reads
// them as a stream instead.
func ApplyReduce[K comparable, V, R any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, V], f ReduceFunc[K, V, R], opts ...ReduceOption) (Result[R], error) {
	o, err := reduceOptions(ctx, r, "ApplyReduce", opts, false)
	if err != nil {
		return Result[R]{}, err
	}
	p, ok, stats, err := shuffle.Collect(ctx, r, st, o)
	res := Result[R]{OK: ok, Part: isPart(o), Stats: stats}
	defer func() { statsFrom(ctx).addReduce(res.Stats, res.Reduce) }()
	if err := reduceReady(ctx, ok, err); err != nil || !ok {
		return res, err
	}
	t0 := time.Now()
	res.Value, err = callReduce(ctx, p, f)
	res.Reduce = time.Since(t0)
	if err != nil {
		return res, fmt.Errorf("mr: reduce of %d keys: %w", p.Len(), err)
	}
	return res, nil
}

// StreamFunc is called once per rank with the pairs the rank reduces as
// a stream, keys ascending (reduce.RunReader: Next, Key, Values; or
// reduce.All): it reads as many as it likes. The reader is closed, and
// its error checked, after the function returns.
type StreamFunc[K, V, R any] func(ctx context.Context, rd reduce.RunReader[K, V]) (R, error)

// ApplyReduceStream is ApplyReduce with the pairs as a stream: under a
// memory budget (pgas.Config.MemoryBytes), where the stores spilled, the
// rank's pairs are merged from their files as f reads them, so that the
// reduce holds no more than f keeps. An error reading the stream (a
// spilled file cut short) fails the call even if f returned nil.
func ApplyReduceStream[K comparable, V, R any](ctx context.Context, r *pgas.Rank, st *reduce.Store[K, V], f StreamFunc[K, V, R], opts ...ReduceOption) (Result[R], error) {
	return reduceStream(ctx, r, "ApplyReduceStream", st, f, opts)
}

// reduceStream is ApplyReduceStream for the call what (the user's call,
// which its errors name).
func reduceStream[K comparable, V, R any](ctx context.Context, r *pgas.Rank, what string, st *reduce.Store[K, V], f StreamFunc[K, V, R], opts []ReduceOption) (Result[R], error) {
	o, err := reduceOptions(ctx, r, what, opts, false)
	if err != nil {
		return Result[R]{}, err
	}
	rd, ok, stats, err := shuffle.CollectStream(ctx, r, st, o)
	res := Result[R]{OK: ok, Part: isPart(o), Stats: stats}
	defer func() { statsFrom(ctx).addReduce(res.Stats, res.Reduce) }()
	if err := reduceReady(ctx, ok, err); err != nil || !ok {
		if rd != nil {
			rd.Close()
		}
		return res, err
	}
	t0 := time.Now()
	res.Value, err = callReduce(ctx, rd, f)
	err = errors.Join(err, rd.Err(), rd.Close())
	res.Reduce = time.Since(t0)
	if err != nil {
		return res, fmt.Errorf("mr: reduce: %w", err)
	}
	return res, nil
}

// reduceOptions applies a reduce call's options after the job's
// (WithJobOptions), resolves the gather mode (GatherAll when none is
// given), and checks the call's options across ranks (unless
// pgas.Config.NoCheck; noCheck skips it where the caller checks them
// with its own call), naming what, the user's call.
func reduceOptions(ctx context.Context, r *pgas.Rank, what string, opts []ReduceOption, noCheck bool) (reduce.Options, error) {
	var o, given redOpts
	for _, opt := range opts {
		opt(&given)
	}
	if jo, ok := JobOptionsFrom(ctx); ok {
		for _, opt := range jo.ReduceOptions(Defaults{Gather: reduce.GatherAll}) {
			opt(&o)
		}
		// The job's merge to its root goes with the job's gather mode:
		// a call that asks for its own gets it as asked.
		if given.o.Gather != reduce.GatherDefault {
			o.o.Merge = false
		}
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.o.Gather == reduce.GatherDefault {
		o.o.Gather = reduce.GatherAll
	}
	if o.o.Root < 0 || o.o.Root >= r.N() {
		return o.o, fmt.Errorf("mr: %s: root %d is not a rank (ranks are 0 to %d)", what, o.o.Root, r.N()-1)
	}
	if !r.Config().NoCheck && !noCheck {
		if err := r.World().CheckSame(ctx, fmt.Sprintf("%s(%v root=%d %v merge=%v node=%v)", what, o.o.Gather, o.o.Root, o.o.Transfer, o.o.Merge, o.o.Node)); err != nil {
			return o.o, fmt.Errorf("mr: %s: %w", what, err)
		}
	}
	return o.o, nil
}

// isPart reports whether a reduce with options o leaves each rank a part
// of the result.
func isPart(o reduce.Options) bool {
	return !o.Merge && (o.Gather == reduce.GatherPartitioned || o.Gather == reduce.GatherNone)
}

// reduceReady returns the error that stops a reduce before its function:
// the movement's, or the job's cancellation.
func reduceReady(ctx context.Context, ok bool, err error) error {
	if err != nil {
		return fmt.Errorf("mr: reduce stage: %w", err)
	}
	if !ok {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mr: reduce: %w", err)
	}
	return nil
}

// callReduce calls a user's reduce function, turning a panic into an
// error.
func callReduce[P, R any](ctx context.Context, p P, f func(context.Context, P) (R, error)) (v R, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = &pgas.PanicError{Value: x, Stack: debug.Stack()}
		}
	}()
	return f(ctx, p)
}

// MapError is the error of a user's map function (or of a store it emitted
// into), with the input element it was mapping: Element is the element's
// index for ApplyMap, -1 for ApplyMapArray and for the finish function
// (Finish). The rank is not repeated here:
// pgas.Run names it. An application whose map errors already name their
// input (a file and line) may unwrap a MapError to report its own error
// alone.
type MapError struct {
	Element int64
	Finish  bool // the error is the map's finish function's (WithFinish)
	Local   bool // Element indexes the rank's own list (Local)
	Err     error
}

func (e *MapError) Error() string {
	if e.Finish {
		return "mr: map finish: " + e.Err.Error()
	}
	if e.Element < 0 {
		return "mr: array map: " + e.Err.Error()
	}
	if e.Local {
		return fmt.Sprintf("mr: map of local input element %d: %v", e.Element, e.Err)
	}
	return fmt.Sprintf("mr: map of input element %d: %v", e.Element, e.Err)
}

func (e *MapError) Unwrap() error { return e.Err }
