package model_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/pgasmr/pgasmr/pgas/model"
)

func TestRateCurveAt(t *testing.T) {
	c := model.RateCurve{{N: 100, Sec: 1e-6}, {N: 10000, Sec: 3e-6}}
	for _, tc := range []struct {
		n    int64
		want float64
	}{
		{1, 1e-6}, {100, 1e-6}, {1000, 2e-6}, {10000, 3e-6}, {1 << 30, 3e-6},
	} {
		if got := c.At(tc.n); !near(got, tc.want) {
			t.Errorf("At(%d) = %g; want %g", tc.n, got, tc.want)
		}
	}
	if got := (model.RateCurve{}).At(5); !math.IsNaN(got) {
		t.Errorf("empty curve At(5) = %g; want NaN", got)
	}
}

func TestCommTime(t *testing.T) {
	var r model.PatternRates
	r.SetCurve(model.Baseline, model.Read, model.RateCurve{{N: 1, Sec: 2e-6}})
	r.SetCurve(model.Local, model.Read, model.RateCurve{{N: 1, Sec: 1e-7}})
	gs := model.Cyclic(1000, 4, model.Baseline, model.Read) // 750 baseline + 250 local
	if gs[0].N != 750 || gs[1].N != 250 || gs[1].Pattern != model.Local {
		t.Fatalf("Cyclic(1000, 4) = %+v; want 750 baseline and 250 local", gs)
	}
	if got, want := model.CommTime(r, gs...), 750*2e-6+250*1e-7; !near(got, want) {
		t.Errorf("CommTime = %g; want %g", got, want)
	}
	if got := model.CommTime(r, model.Group{Pattern: model.Vector, Op: model.Read, N: 0}); got != 0 {
		t.Errorf("CommTime of an empty group of an unmeasured pattern = %g; want 0", got)
	}
	if got := model.CommTime(r, model.Group{Pattern: model.Vector, Op: model.Read, N: 3}); !math.IsNaN(got) {
		t.Errorf("CommTime of an unmeasured pattern = %g; want NaN", got)
	}
	r.SetCurve(model.Private, model.Read, model.RateCurve{{N: 1, Sec: 1e-8}})
	if got := model.Concurrency(r, model.Baseline, model.Read, 10); !near(got, 200) {
		t.Errorf("G_baseline = %g; want 200", got)
	}
}

func TestPatternRatesValidate(t *testing.T) {
	var r model.PatternRates
	r.SetCurve(model.Coalesce, model.Write, model.RateCurve{{N: 10, Sec: 1}, {N: 10, Sec: 2}})
	p := model.PaperParams(64)
	p.Patterns = r
	if err := p.Validate(); err == nil {
		t.Error("Validate accepted a curve whose N does not increase")
	}
}

// The histogram of seeds/001 §7.1.1 predicted with eq. 6.1 from the
// paper's own MuPC rates (Tables 6.1 and 6.4, no cache, 2 threads): each
// update array[loc]++ is a read and a write, half of them to the other
// thread (baseline), half local.
func ExampleProgramTime() {
	us := func(v float64) model.RateCurve { return model.RateCurve{{N: 1, Sec: v * 1e-6}} }
	var rates model.PatternRates
	rates.SetCurve(model.Baseline, model.Read, us(71.4))
	rates.SetCurve(model.Baseline, model.Write, us(28.1))
	rates.SetCurve(model.Local, model.Read, us(0.12))
	rates.SetCurve(model.Local, model.Write, us(0.12))
	p := model.Params{WPriv: 1e9, CacheLine: 64, Patterns: rates}

	const updates = 100000 // per thread
	iv := model.Interval{
		Groups: append(model.Cyclic(updates, 2, model.Baseline, model.Read),
			model.Cyclic(updates, 2, model.Baseline, model.Write)...),
		Barriers: 1, // upc_barrier; unpriced here
	}
	t, _ := model.ProgramTime(p, [][]model.Interval{{iv}, {iv}})
	fmt.Printf("%.3f s\n", t)
	// Output: 4.987 s
}
