package model

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// Class is a node class of a pair of ranks (seeds/000 §5.2.1).
type Class int

// The node classes.
const (
	// SameNode is two different ranks on one node ("local inter-thread").
	SameNode Class = iota
	// OtherNode is two ranks on different nodes ("remote inter-thread").
	OtherNode
	// Own is a rank and itself: MeasureRandomRead of the rank's own
	// elements through the runtime (Params.TauOwn). No pair of ranks is of
	// this class.
	Own
)

func (c Class) String() string {
	switch c {
	case OtherNode:
		return "other-node"
	case Own:
		return "own"
	}
	return "same-node"
}

// Defaults of CalibrateOptions.
const (
	DefaultReads    = 1 << 15
	DefaultBarriers = 2000
	DefaultReps     = 5
)

// DefaultPingSizes are the ping-pong message sizes: 8 B to 1 MiB by
// factors of 8.
var DefaultPingSizes = []int{8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20}

// DefaultPatternSizes are the N at which the pattern costs are measured.
var DefaultPatternSizes = []int64{256, 4096}

// CalibrateOptions size the calibration runs. Zero fields take defaults;
// every rank must pass the same options.
type CalibrateOptions struct {
	// StreamBytes is the size of the three STREAM arrays of all the ranks
	// of one host together. Zero means four times the last-level cache
	// (STREAM's rule), 128 MiB if it cannot be read. Size it like the
	// working set of the program to predict when that is smaller.
	StreamBytes int64
	// PingSizes are the ping-pong message sizes in bytes, increasing.
	// Zero means DefaultPingSizes.
	PingSizes []int
	// Reads is the number of random fine-grained reads per rank for τ.
	Reads int
	// Barriers is the number of barriers timed.
	Barriers int
	// PatternSizes are the N of the pattern curves, increasing. Zero
	// means DefaultPatternSizes.
	PatternSizes []int64
	// Reps is how often each measurement is repeated; the best is kept
	// (seeds/000 reports best times too).
	Reps int
	// Seed seeds the random indices.
	Seed uint64
}

// WithDefaults returns o with every zero field replaced by its default.
func (o CalibrateOptions) WithDefaults() CalibrateOptions {
	if o.StreamBytes == 0 {
		o.StreamBytes = 4 * lastLevelCache()
	}
	if len(o.PingSizes) == 0 {
		o.PingSizes = DefaultPingSizes
	}
	if o.Reads == 0 {
		o.Reads = DefaultReads
	}
	if o.Barriers == 0 {
		o.Barriers = DefaultBarriers
	}
	if len(o.PatternSizes) == 0 {
		o.PatternSizes = DefaultPatternSizes
	}
	if o.Reps == 0 {
		o.Reps = DefaultReps
	}
	return o
}

// Validate reports every problem with o (after defaults), or nil.
func (o CalibrateOptions) Validate() error {
	o = o.WithDefaults()
	var errs []error
	if o.StreamBytes < 0 || o.Reads < 0 || o.Barriers < 0 || o.Reps < 0 {
		errs = append(errs, fmt.Errorf("model: negative calibration size in %+v", o))
	}
	if !increasing(o.PingSizes) || o.PingSizes[0] < 1 {
		errs = append(errs, fmt.Errorf("model: PingSizes %v: want increasing sizes >= 1", o.PingSizes))
	}
	if !increasing(o.PatternSizes) || o.PatternSizes[0] < 1 {
		errs = append(errs, fmt.Errorf("model: PatternSizes %v: want increasing sizes >= 1", o.PatternSizes))
	}
	return errors.Join(errs...)
}

func increasing[T int | int64](s []T) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return len(s) > 0
}

// Calibrate is collective: it measures every parameter of Params on the
// transport the job runs on and returns the same Calibration on every
// rank, except Machine, which is the calling rank's (ranks on several
// hosts differ there; rank 0's is the one to key a cache by). Run it with the ranks, ranks per node and transport (wrappers
// included) of the program to predict: W_priv depends on how many ranks
// share a host and τ on how many communicate at once. It takes the segment
// space of its largest ping-pong message and pattern array for its
// duration; its traffic is counted in Stats.
func Calibrate(ctx context.Context, r *pgas.Rank, o CalibrateOptions) (*Calibration, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	start := []int64{time.Now().Unix(), int64(cacheLine())}
	if err := coll.BroadcastInPlace(ctx, r.World(), coll.Private(start), len(start)); err != nil {
		return nil, fmt.Errorf("model: rank %d: calibration start: %w", r.ID(), err)
	}
	cal := &Calibration{
		Transport:    r.TransportName(),
		Ranks:        r.N(),
		RanksPerNode: r.Config().RanksPerNode,
		Machine:      ThisMachine(),
		Time:         time.Unix(start[0], 0).UTC(),
		Options:      o,
	}
	p := &cal.Params
	p.CacheLine = int(start[1])
	var err error
	if p.WPriv, p.Workers, err = MeasureStream(ctx, r, o.StreamBytes, o.Reps); err != nil {
		return nil, err
	}
	if cal.PingSameNode, err = MeasurePingPong(ctx, r, SameNode, o.PingSizes, o.Reps); err != nil {
		return nil, err
	}
	if cal.PingOtherNode, err = MeasurePingPong(ctx, r, OtherNode, o.PingSizes, o.Reps); err != nil {
		return nil, err
	}
	if len(cal.PingSameNode) > 0 {
		w, ovh := FitLink(cal.PingSameNode)
		p.WLocal, p.MsgLocal = 2*w, ovh // a copy moves its bytes twice (eq. 11)
	}
	if len(cal.PingOtherNode) > 0 {
		p.WRem, p.MsgRemote = FitLink(cal.PingOtherNode)
	}
	if p.TauLocal, err = MeasureRandomRead(ctx, r, SameNode, o.Reads, o.Reps, o.Seed); err != nil {
		return nil, err
	}
	if p.Tau, err = MeasureRandomRead(ctx, r, OtherNode, o.Reads, o.Reps, o.Seed); err != nil {
		return nil, err
	}
	if p.TauOwn, err = MeasureRandomRead(ctx, r, Own, o.Reads, o.Reps, o.Seed); err != nil {
		return nil, err
	}
	if p.Barrier, err = MeasureBarrier(ctx, r, o.Barriers, o.Reps); err != nil {
		return nil, err
	}
	if p.Patterns, err = MeasurePatterns(ctx, r, o.PatternSizes, o.Reps, o.Seed); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("model: calibration on rank %d measured invalid parameters: %w", r.ID(), err)
	}
	return cal, nil
}

// allgather returns every rank's src, concatenated in rank order.
func allgather[T any](ctx context.Context, r *pgas.Rank, src []T) ([]T, error) {
	dst := make([]T, r.N()*len(src))
	if err := coll.Allgather(ctx, r.World(), coll.Private(dst), coll.Private(src), len(src)); err != nil {
		return nil, fmt.Errorf("model: rank %d: all-gather of %d words: %w", r.ID(), len(src), err)
	}
	return dst, nil
}

func hostHash() uint64 {
	h := fnv.New64a()
	h.Write([]byte(hostname())) // a hash.Hash never fails to write
	return h.Sum64()
}

// MeasureStream is collective: every rank runs the STREAM triad
// a[i] = b[i] + s*c[i] over three private arrays, all ranks at once after a
// barrier, reps times. Each host's ranks share bytes (the three arrays of
// all of them); a rank's arrays have at least 16 Ki elements. It returns
// W_priv (seeds/000 §5.1): per host, the bytes the host's ranks moved (24
// per element, STREAM's count) over the time from the first's start to the
// last's end, divided by their number, best of reps and averaged over
// hosts (ranks that share a processor get their share of it); and that number of workers
// (on rank 0's host). Hosts are told apart by host name.
func MeasureStream(ctx context.Context, r *pgas.Rank, bytes int64, reps int) (wpriv float64, workers int, err error) {
	hosts, err := allgather(ctx, r, []uint64{hostHash()})
	if err != nil {
		return 0, 0, err
	}
	mine := 0
	for _, h := range hosts {
		if h == hosts[r.ID()] {
			mine++
		}
	}
	elems := max(bytes/24/int64(mine), 16<<10)
	a, b, c := make([]float64, elems), make([]float64, elems), make([]float64, elems)
	for i := range a {
		a[i], b[i], c[i] = 1, 2, 0.5
	}
	// Each rep's start and end on the host's clock (wall time, which the
	// processes of one host share): a host's span runs from its first
	// rank's start to its last rank's end, so that ranks that wait for a
	// processor (more ranks than processors) count their wait, as they
	// do in the program the model predicts.
	reps = max(reps, 1)
	se := make([]float64, 1, 1+2*reps)
	se[0] = float64(elems)
	for range reps {
		if err := r.Barrier(ctx); err != nil {
			return 0, 0, err
		}
		t0 := time.Now().UnixNano()
		triad(a, b, c, 3)
		se = append(se, float64(t0), float64(time.Now().UnixNano()))
	}
	runtime.KeepAlive(a)
	all, err := allgather(ctx, r, se)
	if err != nil {
		return 0, 0, err
	}
	w := len(se)
	perHost := map[uint64]float64{} // best aggregate bandwidth per worker
	count := map[uint64]int{}
	for _, h := range hosts {
		count[h]++
	}
	for k := range reps {
		moved := map[uint64]float64{}
		first, last := map[uint64]float64{}, map[uint64]float64{}
		for q, h := range hosts {
			moved[h] += 24 * all[q*w]
			start, end := all[q*w+1+2*k], all[q*w+2+2*k]
			if f, ok := first[h]; !ok || start < f {
				first[h] = start
			}
			last[h] = max(last[h], end)
		}
		for h := range moved {
			span := max(last[h]-first[h], 1) / 1e9
			bw := moved[h] / span / float64(count[h])
			perHost[h] = max(perHost[h], bw)
		}
	}
	for _, bw := range perHost {
		wpriv += bw
	}
	return wpriv / float64(len(perHost)), count[hosts[0]], nil
}

func triad(a, b, c []float64, s float64) {
	b, c = b[:len(a)], c[:len(a)]
	for i := range a {
		a[i] = b[i] + s*c[i]
	}
}

// SizePoint is the time of one transfer of Bytes bytes.
type SizePoint struct {
	Bytes int     `json:"bytes"`
	Sec   float64 `json:"sec"`
}

// pair returns the lowest pair (0, b) of the class, or ok false. Rank 0
// pairs with the first other rank on its node (SameNode) or off it.
func pair(r *pgas.Rank, class Class) (b int, ok bool) {
	if class == Own {
		return 0, false
	}
	for q := 1; q < r.N(); q++ {
		if (r.NodeOf(q) == r.NodeOf(0)) == (class == SameNode) {
			return q, true
		}
	}
	return 0, false
}

// MeasurePingPong is collective: rank 0 reads sizes[i] bytes from the
// segment of the first rank of the class (SameNode: on its node; OtherNode:
// off it) with one-sided gets, reps times each after one warm-up, while
// the other ranks wait. A get is a round trip (request out, data back): in
// a one-sided runtime it is the ping-pong. It returns the best time of
// each size on every rank, or nil if no pair of the class exists.
func MeasurePingPong(ctx context.Context, r *pgas.Rank, class Class, sizes []int, reps int) ([]SizePoint, error) {
	b, ok := pair(r, class)
	if !ok || len(sizes) == 0 {
		return nil, nil
	}
	biggest := int64(slices.Max(sizes))
	reg, err := r.AllAlloc(ctx, biggest)
	if err != nil {
		return nil, err
	}
	best := make([]float64, len(sizes))
	if r.ID() == 0 {
		buf := make([]byte, biggest)
		for i, n := range sizes {
			best[i] = math.Inf(1)
			for k := range max(reps, 1) + 1 {
				t0 := time.Now()
				if err := r.GetBytes(ctx, b, reg.Off, buf[:n]); err != nil {
					return nil, fmt.Errorf("model: ping-pong with rank %d: %w", b, err)
				}
				if t := time.Since(t0).Seconds(); k > 0 { // k == 0 warms up
					best[i] = min(best[i], t)
				}
			}
		}
	}
	if err := coll.BroadcastInPlace(ctx, r.World(), coll.Private(best), len(best)); err != nil {
		return nil, fmt.Errorf("model: rank %d: broadcast of ping-pong times: %w", r.ID(), err)
	}
	if err := r.AllFree(ctx, reg); err != nil {
		return nil, err
	}
	out := make([]SizePoint, len(sizes))
	for i, n := range sizes {
		out[i] = SizePoint{Bytes: n, Sec: best[i]}
	}
	return out, nil
}

// FitLink fits t(n) = overhead + n/bandwidth to ping-pong points (sorted
// by size): the overhead is the time of the smallest transfer less its
// bytes' share, the bandwidth the slope between the smallest and the
// largest. If noise makes the slope not positive, the bandwidth is the
// largest size over its time. It returns zeros for no points.
func FitLink(pts []SizePoint) (bandwidth, overhead float64) {
	if len(pts) == 0 {
		return 0, 0
	}
	lo, hi := pts[0], pts[len(pts)-1]
	if dt := hi.Sec - lo.Sec; hi.Bytes > lo.Bytes && dt > 0 {
		bandwidth = float64(hi.Bytes-lo.Bytes) / dt
	} else {
		bandwidth = float64(hi.Bytes) / hi.Sec
	}
	overhead = max(lo.Sec-float64(lo.Bytes)/bandwidth, 0)
	return bandwidth, overhead
}

// MeasureRandomRead is collective: seeds/000 Listing 6. Every rank that
// has peers of the class reads n random elements of a shared float64 array
// owned by them, one fine-grained get each, all ranks at once; the time to
// traverse the index array alone is subtracted. It returns the mean over
// those ranks of the best per-read time of reps runs (τ for OtherNode,
// T_indv^local for SameNode, TauOwn for Own, the rank's own elements), or
// 0 if no rank has a peer of the class.
func MeasureRandomRead(ctx context.Context, r *pgas.Rank, class Class, n, reps int, seed uint64) (float64, error) {
	const blk = 1 << 12
	x, err := pgas.AllAllocArray[float64](ctx, r, int64(r.N())*blk, blk)
	if err != nil {
		return 0, err
	}
	var peers []int
	for q := range r.N() {
		if class == Own && q == r.ID() || class != Own && q != r.ID() && (r.NodeOf(q) == r.Node()) == (class == SameNode) {
			peers = append(peers, q)
		}
	}
	tau := math.NaN()
	if len(peers) > 0 && n > 0 {
		rng := rand.New(rand.NewPCG(seed, uint64(r.ID())))
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = int64(peers[rng.IntN(len(peers))])*blk + rng.Int64N(blk)
		}
		tau = math.Inf(1)
		for range max(reps, 1) {
			if err := r.Barrier(ctx); err != nil {
				return 0, err
			}
			var sum float64
			t0 := time.Now()
			for _, g := range idx {
				v, err := x.Get(ctx, g)
				if err != nil {
					return 0, fmt.Errorf("model: random read: %w", err)
				}
				sum += v
			}
			loop := time.Since(t0)
			t0 = time.Now()
			for _, g := range idx {
				sum += float64(g)
			}
			trav := time.Since(t0)
			runtime.KeepAlive(sum)
			tau = min(tau, max((loop-trav).Seconds(), 0)/float64(n))
		}
	} else {
		for range max(reps, 1) {
			if err := r.Barrier(ctx); err != nil {
				return 0, err
			}
		}
	}
	all, err := allgather(ctx, r, []float64{tau})
	if err != nil {
		return 0, err
	}
	if err := x.AllFree(ctx); err != nil {
		return 0, err
	}
	var sum float64
	var cnt int
	for _, v := range all {
		if !math.IsNaN(v) {
			sum += v
			cnt++
		}
	}
	if cnt == 0 {
		return 0, nil
	}
	return sum / float64(cnt), nil
}

// MeasureBarrier is collective: every rank times n barriers in a row, reps
// times, and keeps its best mean; it returns the mean over ranks.
func MeasureBarrier(ctx context.Context, r *pgas.Rank, n, reps int) (float64, error) {
	best := math.Inf(1)
	for range max(reps, 1) {
		if err := r.Barrier(ctx); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for range n {
			if err := r.Barrier(ctx); err != nil {
				return 0, err
			}
		}
		best = min(best, time.Since(t0).Seconds()/float64(max(n, 1)))
	}
	all, err := allgather(ctx, r, []float64{best})
	if err != nil {
		return 0, err
	}
	return mean(all), nil
}

func mean(s []float64) float64 {
	var t float64
	for _, v := range s {
		t += v
	}
	return t / float64(len(s))
}
