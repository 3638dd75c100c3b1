package distrib

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fig41 is the test vector of UPC-MR's Figure 4.1 (9 elements, 3 ranks).
var fig41 = []float64{2, 9, 3, 1, 8, 7, 9, 8, 8}

// byRank lists, for each rank, the weights of its elements in order.
func byRank(p *Plan, weights []float64) [][]float64 {
	out := make([][]float64, p.Ranks())
	for k := range out {
		out[k] = []float64{}
		for i := range p.Elements(k) {
			out[k] = append(out[k], weights[i])
		}
	}
	return out
}

func TestFigure41(t *testing.T) {
	n := int64(len(fig41))
	tests := []struct {
		name    string
		p       *Plan
		kind    Kind
		loads   []float64
		maxDiff float64
		ranks   [][]float64
	}{
		{"block", NewBlock(n, 3).Weighted(fig41), Block, []float64{14, 16, 25}, 11,
			[][]float64{{2, 9, 3}, {1, 8, 7}, {9, 8, 8}}},
		{"cyclic", NewCyclic(n, 3).Weighted(fig41), Cyclic, []float64{12, 25, 18}, 13,
			[][]float64{{2, 1, 9}, {9, 8, 8}, {3, 7, 8}}},
		{"balanced", NewBalanced(fig41, 3), Balanced, []float64{19, 18, 18}, 1,
			[][]float64{{2, 1, 8, 8}, {9, 9}, {3, 7, 8}}},
		{"bestfit/5", NewBestFit(n, fig41, 3, 5), Balanced, []float64{19, 18, 18}, 1,
			[][]float64{{2, 1, 8, 8}, {9, 9}, {3, 7, 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Kind(); got != tt.kind {
				t.Errorf("Kind() = %v; want %v", got, tt.kind)
			}
			if got := tt.p.Loads(); !slices.Equal(got, tt.loads) {
				t.Errorf("Loads() = %v; want %v", got, tt.loads)
			}
			if got := tt.p.MaxDiff(); got != tt.maxDiff {
				t.Errorf("MaxDiff() = %v; want %v", got, tt.maxDiff)
			}
			if got := byRank(tt.p, fig41); !slices.EqualFunc(got, tt.ranks, slices.Equal) {
				t.Errorf("weights by rank = %v; want %v", got, tt.ranks)
			}
		})
	}
}

func TestBestFitThresholds(t *testing.T) {
	// Figure 4.1: block 11, cyclic 13, balanced 1.
	// cyclicWins: block loads 2 6 10 (diff 8), cyclic 6 6 6 (diff 0).
	cyclicWins := []float64{1, 1, 1, 5, 5, 5}
	tests := []struct {
		weights   []float64
		threshold float64
		want      Kind
	}{
		{fig41, 5, Balanced},
		{fig41, 11, Balanced}, // strictly below: 11 does not pass 11
		{fig41, 11.5, Block},
		{fig41, 13, Block},
		{fig41, 14, Block}, // both pass: block wins
		{fig41, math.Inf(1), Block},
		{fig41, math.Inf(-1), Balanced},
		{cyclicWins, 0, Balanced}, // nothing is below 0
		{cyclicWins, 0.5, Cyclic},
		{cyclicWins, 8, Cyclic}, // block's 8 does not pass 8
		{cyclicWins, 8.5, Block},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/%v", tt.weights, tt.threshold), func(t *testing.T) {
			p := NewBestFit(int64(len(tt.weights)), tt.weights, 3, tt.threshold)
			if p.Kind() != tt.want {
				t.Errorf("NewBestFit(%v, 3, %v).Kind() = %v; want %v", tt.weights, tt.threshold, p.Kind(), tt.want)
			}
			var ref *Plan
			switch tt.want {
			case Block:
				ref = NewBlock(p.Len(), 3).Weighted(tt.weights)
			case Cyclic:
				ref = NewCyclic(p.Len(), 3).Weighted(tt.weights)
			default:
				ref = NewBalanced(tt.weights, 3)
			}
			checkSame(t, p, ref)
		})
	}
}

// checkSame reports whether p and want assign and load identically.
func checkSame(t *testing.T, p, want *Plan) {
	t.Helper()
	if p.Len() != want.Len() || p.Ranks() != want.Ranks() {
		t.Fatalf("plan %v; want %v", p, want)
	}
	for i := range p.Len() {
		if p.Owner(i) != want.Owner(i) {
			t.Fatalf("%v: Owner(%d) = %d; want %d", p, i, p.Owner(i), want.Owner(i))
		}
	}
	if !slices.Equal(p.Loads(), want.Loads()) || p.MaxDiff() != want.MaxDiff() {
		t.Fatalf("%v: Loads() = %v, MaxDiff() = %v; want %v, %v", p, p.Loads(), p.MaxDiff(), want.Loads(), want.MaxDiff())
	}
}

func TestBestFitUnitWeights(t *testing.T) {
	tests := []struct {
		n         int64
		threshold float64
		want      Kind
	}{
		{12, 0.5, Block}, // 12 mod 4 = 0: block diff 0
		{12, 0, Balanced},
		{10, 1, Balanced}, // both diff 1
		{10, 1.5, Block},
		{0, 0.5, Block},
		{3, 2, Block},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d/%v", tt.n, tt.threshold), func(t *testing.T) {
			p := NewBestFit(tt.n, nil, 4, tt.threshold)
			if p.Kind() != tt.want {
				t.Errorf("NewBestFit(%d, nil, 4, %v).Kind() = %v; want %v", tt.n, tt.threshold, p.Kind(), tt.want)
			}
			ones := make([]float64, tt.n)
			for i := range ones {
				ones[i] = 1
			}
			checkSame(t, p, NewBestFit(tt.n, ones, 4, tt.threshold))
		})
	}
}

func TestBlockCounts(t *testing.T) {
	tests := []struct {
		n     int64
		ranks int
		want  []int64
	}{
		{10, 4, []int64{3, 3, 2, 2}},
		{12, 4, []int64{3, 3, 3, 3}},
		{3, 5, []int64{1, 1, 1, 0, 0}},
		{0, 3, []int64{0, 0, 0}},
		{7, 1, []int64{7}},
	}
	for _, tt := range tests {
		p := NewBlock(tt.n, tt.ranks)
		var got []int64
		var lo int64
		for k := range tt.ranks {
			got = append(got, p.Count(k))
			l, h := BlockRange(tt.n, tt.ranks, k)
			if l != lo || h-l != p.Count(k) {
				t.Errorf("BlockRange(%d, %d, %d) = [%d,%d); want [%d,%d)", tt.n, tt.ranks, k, l, h, lo, lo+p.Count(k))
			}
			lo = h
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("NewBlock(%d, %d) counts = %v; want %v", tt.n, tt.ranks, got, tt.want)
		}
	}
}

func TestCyclicCounts(t *testing.T) {
	p := NewCyclic(10, 4)
	var got []int64
	for k := range 4 {
		got = append(got, p.Count(k))
	}
	if want := []int64{3, 3, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("NewCyclic(10, 4) counts = %v; want %v", got, want)
	}
	if got, want := slices.Collect(p.Elements(1)), []int64{1, 5, 9}; !slices.Equal(got, want) {
		t.Errorf("NewCyclic(10, 4).Elements(1) = %v; want %v", got, want)
	}
}

// With unit weights the balanced rule deals round-robin, which NewBestFit
// relies on.
func TestBalancedUnitIsCyclic(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100} {
		for _, ranks := range []int{1, 3, 8} {
			ones := make([]float64, n)
			for i := range ones {
				ones[i] = 1
			}
			checkSame(t, NewBalanced(ones, ranks), NewCyclic(int64(n), ranks))
		}
	}
}

func TestCustom(t *testing.T) {
	owner := []int{2, 0, 2, 2, 1, 0}
	p, err := NewCustom(owner, 3)
	if err != nil {
		t.Fatalf("NewCustom(%v, 3) error: %v", owner, err)
	}
	q, err := NewCustomFunc(6, 3, func(i int64) int { return owner[i] })
	if err != nil {
		t.Fatalf("NewCustomFunc error: %v", err)
	}
	checkSame(t, p, q)
	if p.Kind() != Custom {
		t.Errorf("Kind() = %v; want custom", p.Kind())
	}
	if got, want := p.Loads(), []float64{2, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("Loads() = %v; want %v", got, want)
	}
	w := []float64{1, 2, 4, 8, 16, 32}
	pw := p.Weighted(w)
	if got, want := pw.Loads(), []float64{34, 16, 13}; !slices.Equal(got, want) || pw.MaxDiff() != 21 {
		t.Errorf("Weighted(%v): Loads() = %v, MaxDiff() = %v; want %v, 21", w, got, pw.MaxDiff(), want)
	}
	if !slices.Equal(p.Loads(), []float64{2, 1, 3}) {
		t.Errorf("Weighted changed the original plan's loads: %v", p.Loads())
	}

	for _, tt := range []struct {
		owner []int
		want  string
	}{
		{[]int{0, 1, 3}, "owner[2] = 3, want [0,3)"},
		{[]int{-1}, "owner[0] = -1, want [0,3)"},
	} {
		_, err := NewCustom(tt.owner, 3)
		if !errors.Is(err, ErrOwner) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewCustom(%v, 3) error = %v; want ErrOwner with %q", tt.owner, err, tt.want)
		}
	}
	calls := 0
	_, err = NewCustomFunc(10, 3, func(i int64) int {
		calls++
		if i == 4 {
			return 7
		}
		return 0
	})
	if !errors.Is(err, ErrOwner) || !strings.Contains(err.Error(), "owner(4) = 7") || calls != 5 {
		t.Errorf("NewCustomFunc error = %v after %d calls; want ErrOwner naming owner(4) = 7 after 5", err, calls)
	}
}

func TestCheckWeights(t *testing.T) {
	for _, tt := range []struct {
		w    []float64
		want string
	}{
		{nil, ""},
		{[]float64{0, 1, 1e300}, ""},
		{[]float64{1, -2}, "weights[1] = -2"},
		{[]float64{math.NaN()}, "weights[0] = NaN"},
		{[]float64{0, 0, math.Inf(1)}, "weights[2] = +Inf"},
	} {
		err := CheckWeights(tt.w)
		if tt.want == "" && err != nil || tt.want != "" && (!errors.Is(err, ErrWeight) || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckWeights(%v) = %v; want %q", tt.w, err, tt.want)
		}
	}
}

func TestKind(t *testing.T) {
	for k := Block; k <= Custom; k++ {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", k.String(), got, err, k)
		}
	}
	if s := Kind(9).String(); s != "Kind(9)" {
		t.Errorf("Kind(9).String() = %q", s)
	}
	if _, err := ParseKind("round-robin"); err == nil {
		t.Errorf("ParseKind(round-robin) succeeded")
	}
}

func TestPanics(t *testing.T) {
	p := NewBlock(10, 4)
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"ranks=0", func() { NewBlock(5, 0) }, "ranks=0"},
		{"n<0", func() { NewCyclic(-1, 2) }, "n=-1"},
		{"owner", func() { p.Owner(10) }, "element 10 out of range [0,10)"},
		{"owner<0", func() { p.Owner(-1) }, "element -1 out of range"},
		{"count", func() { p.Count(4) }, "rank 4 out of range [0,4)"},
		{"elements", func() { p.Elements(-1) }, "rank -1 out of range"},
		{"load", func() { p.Load(4) }, "rank 4 out of range"},
		{"blockrange", func() { BlockRange(10, 4, 4) }, "rank 4 out of range"},
		{"weighted-len", func() { p.Weighted(make([]float64, 9)) }, "len(weights) = 9"},
		{"weighted-neg", func() { p.Weighted([]float64{0, 0, 0, -1, 0, 0, 0, 0, 0, 0}) }, "weights[3] = -1"},
		{"balanced-nan", func() { NewBalanced([]float64{1, math.NaN()}, 2) }, "weights[1] = NaN"},
		{"balanced-ranks", func() { NewBalanced(nil, math.MaxInt32+1) }, "too large"},
		{"bestfit-len", func() { NewBestFit(3, []float64{1}, 2, 1) }, "len(weights) = 1, n = 3"},
		{"bestfit-nan", func() { NewBestFit(3, nil, 2, math.NaN()) }, "threshold is NaN"},
		{"custom-ranks", func() { _, _ = NewCustom(nil, 0) }, "ranks=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, "distrib: ") || !strings.Contains(s, tt.want) {
					t.Errorf("panic %v; want a distrib: panic containing %q", r, tt.want)
				}
			}()
			tt.f()
		})
	}
}

// TestHuge creates and queries block, cyclic and unit-weight best-fit plans
// over 10^9 elements in a few hundred bytes.
func TestHuge(t *testing.T) {
	const n, ranks = 1_000_000_000, 7
	var sink int64
	use := func(p *Plan) {
		sink += int64(p.Owner(0) + p.Owner(n-1) + p.Owner(n/2))
		for k := range ranks {
			sink += p.Count(k)
			j := 0
			for i := range p.Elements(k) {
				sink += i
				if j++; j == 3 {
					break
				}
			}
		}
		sink += int64(p.Load(ranks-1) + p.MaxDiff())
	}
	build := []func() *Plan{
		func() *Plan { return NewBlock(n, ranks) },
		func() *Plan { return NewCyclic(n, ranks) },
		func() *Plan { return NewBestFit(n, nil, ranks, 0) }, // picks balanced
	}
	for _, b := range build {
		p := b()
		use(p) // warm up
		const runs = 100
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range runs {
			use(b())
		}
		runtime.ReadMemStats(&after)
		if d := (after.TotalAlloc - before.TotalAlloc) / runs; d > 4096 {
			t.Errorf("%v: allocated %d bytes per plan; want at most 4 KB", p, d)
		} else {
			t.Logf("%v: %d bytes per plan and queries", p, d)
		}
		// The plan, and a few small closures per Elements call.
		if a := testing.AllocsPerRun(10, func() { use(b()) }); a > 4*ranks+4 {
			t.Errorf("%v: %v allocations per run; want at most %d", p, a, 4*ranks+4)
		}
	}

	p := NewBlock(n, ranks)
	lo, hi := BlockRange(n, ranks, 6)
	if p.Owner(n-1) != 6 || p.Owner(lo) != 6 || p.Owner(lo-1) != 5 || hi != n || p.Count(0) != 142857143 || p.Count(6) != 142857142 {
		t.Errorf("NewBlock(%d, %d): Owner(n-1)=%d Owner(%d)=%d Owner(%d)=%d BlockRange(6)=[%d,%d) Count(0)=%d Count(6)=%d",
			n, ranks, p.Owner(n-1), lo, p.Owner(lo), lo-1, p.Owner(lo-1), lo, hi, p.Count(0), p.Count(6))
	}
	c := NewCyclic(n, ranks)
	if got := c.Owner(n - 1); got != (n-1)%ranks {
		t.Errorf("NewCyclic(%d, %d).Owner(n-1) = %d; want %d", n, ranks, got, (n-1)%ranks)
	}
	if got := NewBestFit(n, nil, ranks, 0); got.Kind() != Balanced || got.Owner(n-1) != (n-1)%ranks {
		t.Errorf("NewBestFit(%d, nil, %d, 0) = %v, Owner(n-1) = %d; want balanced dealt round-robin", n, ranks, got, got.Owner(n-1))
	}
	_ = sink
}
