package mr

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Observers: a launcher (mrrun) or a user's program attaches a JobStats
// and a Progress to the context it gives a rank; ApplyMap, ApplyMapArray and
// ApplyReduce add their figures to the JobStats, and input readers report
// what they consumed to the Progress. Both are optional: without them the
// calls cost one context lookup.

type statsKey struct{}
type progressKey struct{}

// JobStats accumulates one rank's figures over every ApplyMap,
// ApplyMapArray and ApplyReduce called with a context from WithStats. It
// belongs to one rank: give each rank its own. It composes the layers'
// own stats: mr's map and user-reduce times, the reduce stage's
// reduce.Stats (summed over ApplyReduce calls) and the runtime's
// pgas.Stats.
type JobStats struct {
	Map time.Duration // time in map calls
	// Reduce is the reduce stage's figures: pairs emitted (as the maps
	// counted them), pairs and bytes moved, and the combine, exchange and
	// merge times.
	Reduce reduce.Stats
	User   time.Duration // time in the user's reduce functions
	// Runtime is the rank's runtime counters (its traffic), set by
	// GatherStats.
	Runtime pgas.Stats
}

// ReduceTime is the time spent after the exchange: merging received pairs
// and the user's reduce.
func (s JobStats) ReduceTime() time.Duration { return s.Reduce.Merge + s.User }

// GatherStats is collective: every rank passes the JobStats its mr calls
// filled, and root gets every rank's, in rank order, each with the rank's
// runtime counters as they were when it called GatherStats (the gather's
// own traffic is not counted). Other ranks get nil.
func GatherStats(ctx context.Context, r *pgas.Rank, js JobStats, root int) ([]JobStats, error) {
	js.Runtime = r.Stats()
	all, err := GatherValues(ctx, r, js, root)
	if err != nil {
		return nil, fmt.Errorf("mr: gathering job stats: %w", err)
	}
	return all, nil
}

// WithStats returns a context that makes the mr calls of the rank using it
// add their figures to s.
func WithStats(ctx context.Context, s *JobStats) context.Context {
	return context.WithValue(ctx, statsKey{}, s)
}

func statsFrom(ctx context.Context) *JobStats {
	s, _ := ctx.Value(statsKey{}).(*JobStats)
	return s
}

func (s *JobStats) addMap(ms MapStats) {
	if s == nil {
		return
	}
	s.Map += ms.Time
	s.Reduce.PairsEmitted += ms.Emitted
}

// addReduce adds one ApplyReduce's figures; the pairs it found emitted
// are the maps' (addMap), not counted again.
func (s *JobStats) addReduce(st reduce.Stats, user time.Duration) {
	if s == nil {
		return
	}
	st.PairsEmitted = 0
	s.Reduce.Add(st)
	s.User += user
}

// Progress counts the input a job has consumed, for progress displays. It is
// safe for concurrent use by every rank of a process, and its methods do
// nothing on a nil *Progress, so readers can call them unconditionally on
// ProgressFrom's result.
type Progress struct {
	files, bytes           atomic.Int64
	totalFiles, totalBytes atomic.Int64
}

// WithProgress returns a context whose readers report to p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the Progress attached to ctx, or nil.
func ProgressFrom(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

// SetTotal records the size of the whole input: every rank may call it with
// the same values.
func (p *Progress) SetTotal(files, bytes int64) {
	if p == nil {
		return
	}
	p.totalFiles.Store(files)
	p.totalBytes.Store(bytes)
}

// Add records input consumed: bytes read and files finished (a file counts
// as finished when the piece of it that ends it has been read).
func (p *Progress) Add(files, bytes int64) {
	if p == nil {
		return
	}
	if files != 0 {
		p.files.Add(files)
	}
	p.bytes.Add(bytes)
}

// Snapshot returns the counts so far and the totals (zero until SetTotal).
func (p *Progress) Snapshot() (files, bytes, totalFiles, totalBytes int64) {
	if p == nil {
		return 0, 0, 0, 0
	}
	return p.files.Load(), p.bytes.Load(), p.totalFiles.Load(), p.totalBytes.Load()
}
