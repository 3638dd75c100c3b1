package model

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Pattern is a reference pattern of seeds/001 §6.4, or private memory.
type Pattern int

// The patterns. The first four are seeds/001's microbenchmarks; Private is
// S_private (§6.6), the cost the degree of concurrency G is taken against.
const (
	// Baseline is uniformly random accesses to elements of other ranks,
	// every rank loaded alike, no cache: scalar remote latency.
	Baseline Pattern = iota
	// Vector is consecutive elements from a random start in another
	// rank's block (detects vectorisation or caching).
	Vector
	// Coalesce is small irregular strides in another rank's block
	// (detects pipelining or aggregation).
	Coalesce
	// Local is random accesses to shared elements the rank owns (the
	// shared-address overhead over Private).
	Local
	// Private is random accesses to the rank's private memory.
	Private
	numPatterns
)

func (p Pattern) String() string {
	switch p {
	case Baseline:
		return "baseline"
	case Vector:
		return "vector"
	case Coalesce:
		return "coalesce"
	case Local:
		return "local"
	case Private:
		return "private"
	}
	return fmt.Sprintf("Pattern(%d)", int(p))
}

// Op is a read or a write.
type Op int

// The operations.
const (
	Read Op = iota
	Write
)

func (o Op) String() string {
	if o == Write {
		return "write"
	}
	return "read"
}

// RatePoint is the cost of one access when N accesses of a pattern are
// made in a row.
type RatePoint struct {
	N   int64   `json:"n"`
	Sec float64 `json:"sec"`
}

// RateCurve is r(N, pattern) of seeds/001 eq. 6.1 for one pattern and
// operation, as seconds per access (the inverse of the rate; Tables 6.1-6.4
// print it in µs per double word) at increasing N.
type RateCurve []RatePoint

// At returns the cost of one access when n are made: linear in log N
// between the points, the end value beyond them. It returns NaN for an
// empty curve, so that a prediction that needs an unmeasured pattern shows.
func (c RateCurve) At(n int64) float64 {
	if len(c) == 0 {
		return math.NaN()
	}
	if n <= c[0].N {
		return c[0].Sec
	}
	k := sort.Search(len(c), func(i int) bool { return c[i].N >= n })
	if k == len(c) {
		return c[len(c)-1].Sec
	}
	a, b := c[k-1], c[k]
	f := (math.Log(float64(n)) - math.Log(float64(a.N))) / (math.Log(float64(b.N)) - math.Log(float64(a.N)))
	return a.Sec + f*(b.Sec-a.Sec)
}

func (c RateCurve) validate(name string) error {
	for i, pt := range c {
		if pt.N < 1 || (i > 0 && pt.N <= c[i-1].N) {
			return fmt.Errorf("model: %s curve: N must increase from 1: %v", name, c)
		}
		if !(pt.Sec >= 0) || math.IsInf(pt.Sec, 0) {
			return fmt.Errorf("model: %s curve: cost %v at N=%d, want finite >= 0", name, pt.Sec, pt.N)
		}
	}
	return nil
}

// OpCurves are a pattern's read and write curves.
type OpCurves struct {
	Read  RateCurve `json:"read,omitempty"`
	Write RateCurve `json:"write,omitempty"`
}

// PatternRates are the platform's pattern costs (seeds/001 §6.3-6.4).
type PatternRates struct {
	Baseline OpCurves `json:"baseline,omitzero"`
	Vector   OpCurves `json:"vector,omitzero"`
	Coalesce OpCurves `json:"coalesce,omitzero"`
	Local    OpCurves `json:"local,omitzero"`
	Private  OpCurves `json:"private,omitzero"`
}

func (r *PatternRates) curves(p Pattern) *OpCurves {
	switch p {
	case Baseline:
		return &r.Baseline
	case Vector:
		return &r.Vector
	case Coalesce:
		return &r.Coalesce
	case Local:
		return &r.Local
	case Private:
		return &r.Private
	}
	panic(fmt.Sprintf("model: unknown pattern %d", int(p)))
}

// Curve returns the curve of pattern p and operation op. It panics if p is
// not a Pattern.
func (r PatternRates) Curve(p Pattern, op Op) RateCurve {
	c := r.curves(p)
	if op == Write {
		return c.Write
	}
	return c.Read
}

// SetCurve sets the curve of pattern p and operation op. It panics if p is
// not a Pattern.
func (r *PatternRates) SetCurve(p Pattern, op Op, c RateCurve) {
	oc := r.curves(p)
	if op == Write {
		oc.Write = c
	} else {
		oc.Read = c
	}
}

func (r PatternRates) validate() error {
	var errs []error
	for p := range numPatterns {
		for _, op := range []Op{Read, Write} {
			if err := r.Curve(p, op).validate(p.String() + " " + op.String()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Group is a reference partition of seeds/001 §6.5.1 reduced to what eq.
// 6.1 needs: N accesses of one pattern and operation, repeated locations
// counted once. A reference with a mixed pattern is split into one group
// per pattern (Cyclic does the usual split).
type Group struct {
	Pattern Pattern `json:"pattern"`
	Op      Op      `json:"op"`
	N       int64   `json:"n"`
}

// Cyclic splits n accesses of a reference to a cyclically distributed
// array over ranks ranks, at uniformly spread indices, into (ranks-1)/ranks
// accesses of pattern remote and the rest Local (seeds/001 §6.5.1: 75%
// baseline, 25% local at 4 threads). It panics if ranks < 1.
func Cyclic(n int64, ranks int, remote Pattern, op Op) []Group {
	if ranks < 1 {
		panic(fmt.Sprintf("model: Cyclic: %d ranks", ranks))
	}
	local := n / int64(ranks)
	return []Group{{Pattern: remote, Op: op, N: n - local}, {Pattern: Local, Op: op, N: local}}
}

// CommTime is the communication time of one interval, seeds/001 eq. 6.1:
//
//	T_comm = Σ_j N_j / r(N_j, pattern_j)
//
// with 1/r the cost per access of rates.
func CommTime(rates PatternRates, groups ...Group) float64 {
	var t float64
	for _, g := range groups {
		t += times(g.N, rates.Curve(g.Pattern, g.Op).At(g.N))
	}
	return t
}

// Interval is the code between two sequence points (strict accesses,
// barriers, fences, collectives) of one thread, seeds/001 §6.5.
type Interval struct {
	// Groups are the interval's reference partitions.
	Groups []Group `json:"groups"`
	// Comp is the interval's computation time with every shared access
	// made private (§6.6), in seconds.
	Comp float64 `json:"comp"`
	// Barriers is the number of barriers that end the interval, priced at
	// Params.Barrier.
	Barriers int `json:"barriers"`
}

// ThreadTime is one thread's predicted time (seeds/001 §6.6): the sum over
// its intervals of T_comm (eq. 6.1) + T_comp, plus the barriers.
func ThreadTime(p Params, ivs []Interval) float64 {
	var t float64
	for _, iv := range ivs {
		t += CommTime(p.Patterns, iv.Groups...) + iv.Comp + times(int64(iv.Barriers), p.Barrier)
	}
	return t
}

// ProgramTime is the predicted time of a program (seeds/001 §6.6): the
// largest ThreadTime, with the thread that has it. threads[t] are thread
// t's intervals on the critical path.
func ProgramTime(p Params, threads [][]Interval) (t float64, thread int) {
	for i, ivs := range threads {
		if x := ThreadTime(p, ivs); i == 0 || x > t {
			t, thread = x, i
		}
	}
	return t, thread
}

// Concurrency is G_pattern of seeds/001 §6.6 for n accesses: the cost of
// one access of pattern p over that of one private access (a cost ratio,
// so G >= 1 where shared access is slower).
func Concurrency(rates PatternRates, p Pattern, op Op, n int64) float64 {
	return rates.Curve(p, op).At(n) / rates.Curve(Private, op).At(n)
}
