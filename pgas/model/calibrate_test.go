package model_test

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/model"
)

// quick sizes the calibration for tests: well under a second per run at
// two in-process ranks, -race included.
var quick = model.CalibrateOptions{
	StreamBytes:  6 << 20,
	PingSizes:    []int{8, 4 << 10, 1 << 20},
	Reads:        2000,
	Barriers:     200,
	PatternSizes: []int64{256, 2048},
	Reps:         3,
	Seed:         1,
}

// calibrate runs Calibrate on every rank of cfg and checks that they all
// return the same calibration.
func calibrate(t *testing.T, cfg pgas.Config, o model.CalibrateOptions) *model.Calibration {
	t.Helper()
	var mu sync.Mutex
	got := make([]*model.Calibration, cfg.Ranks)
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		c, err := model.Calibrate(ctx, r, o)
		mu.Lock()
		got[r.ID()] = c
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for q := 1; q < len(got); q++ {
		if !reflect.DeepEqual(got[q], got[0]) { // Machine too: one process
			t.Errorf("rank %d calibrated %+v; rank 0 %+v", q, got[q], got[0])
		}
	}
	return got[0]
}

func positive(t *testing.T, name string, v float64) {
	t.Helper()
	if !(v > 0) || math.IsInf(v, 0) {
		t.Errorf("%s = %g; want positive and finite", name, v)
	}
}

func checkPing(t *testing.T, pts []model.SizePoint) {
	t.Helper()
	if len(pts) != len(quick.PingSizes) {
		t.Fatalf("ping-pong points %v; want one per size %v", pts, quick.PingSizes)
	}
	for _, pt := range pts {
		positive(t, "ping-pong time", pt.Sec)
	}
	if first, last := pts[0], pts[len(pts)-1]; last.Sec <= first.Sec {
		t.Errorf("a get of %d B took %g s, of %d B %g s; want the larger slower", last.Bytes, last.Sec, first.Bytes, first.Sec)
	}
}

func checkPatterns(t *testing.T, r model.PatternRates) {
	t.Helper()
	for _, pat := range []model.Pattern{model.Baseline, model.Vector, model.Coalesce, model.Local, model.Private} {
		for _, op := range []model.Op{model.Read, model.Write} {
			c := r.Curve(pat, op)
			if len(c) != len(quick.PatternSizes) {
				t.Errorf("%v %v curve %v; want %d points", pat, op, c, len(quick.PatternSizes))
			}
			for _, pt := range c {
				if pt.Sec < 0 || math.IsInf(pt.Sec, 0) || math.IsNaN(pt.Sec) {
					t.Errorf("%v %v at N=%d: %g s", pat, op, pt.N, pt.Sec)
				}
			}
		}
	}
	for _, n := range quick.PatternSizes {
		b, p := r.Curve(model.Baseline, model.Read).At(n), r.Curve(model.Private, model.Read).At(n)
		if b <= p {
			t.Errorf("N=%d: a remote read %g s is no slower than a private one %g s", n, b, p)
		}
	}
}

// TestCalibrateOneNode: two in-process ranks on one node measure the
// intra-node link and leave the inter-node parameters zero.
func TestCalibrateOneNode(t *testing.T) {
	start := time.Now()
	c := calibrate(t, pgas.Config{Ranks: 2}, quick)
	p := c.Params
	t.Logf("calibrated in %v: %+v", time.Since(start), p)
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
	positive(t, "WPriv", p.WPriv)
	positive(t, "WLocal", p.WLocal)
	positive(t, "TauLocal", p.TauLocal)
	positive(t, "Barrier", p.Barrier)
	if p.Workers != 2 || p.CacheLine <= 0 {
		t.Errorf("Workers = %d, CacheLine = %d; want 2 and positive", p.Workers, p.CacheLine)
	}
	if p.WRem != 0 || p.Tau != 0 || p.MsgRemote != 0 || c.PingOtherNode != nil {
		t.Errorf("one node measured inter-node WRem=%g Tau=%g MsgRemote=%g ping %v; want none", p.WRem, p.Tau, p.MsgRemote, c.PingOtherNode)
	}
	checkPing(t, c.PingSameNode)
	checkPatterns(t, p.Patterns)
	if c.Transport != "inproc" || c.Ranks != 2 || c.RanksPerNode != 2 {
		t.Errorf("calibration of %q at %d ranks, %d per node; want inproc, 2, 2", c.Transport, c.Ranks, c.RanksPerNode)
	}
	if want := model.ThisMachine(); c.Machine != want || !c.Matches("inproc", 2, 2, want) {
		t.Errorf("calibration machine %+v; want %+v", c.Machine, want)
	}
	var buf bytes.Buffer
	if err := model.Save(&buf, c); err != nil {
		t.Fatal(err)
	}
	back, err := model.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("Load(Save(measured)) = %+v\nwant %+v", back, c)
	}
}

// TestCalibrateTwoNodes: with one rank per logical node the same pair is
// measured as an inter-node link (τ, W_rem), and nothing intra-node.
func TestCalibrateTwoNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("a second full calibration; -short runs TestCalibrateOneNode only")
	}
	c := calibrate(t, pgas.Config{Ranks: 2, RanksPerNode: 1}, quick)
	p := c.Params
	t.Logf("%+v", p)
	positive(t, "WRem", p.WRem)
	positive(t, "Tau", p.Tau)
	if p.WLocal != 0 || p.TauLocal != 0 || c.PingSameNode != nil {
		t.Errorf("two nodes of one rank measured intra-node WLocal=%g TauLocal=%g ping %v; want none", p.WLocal, p.TauLocal, c.PingSameNode)
	}
	checkPing(t, c.PingOtherNode)
}

// TestCalibrateDefaults runs the default sizes (the STREAM arrays four
// times the last-level cache).
func TestCalibrateDefaults(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("default calibration sizes are heavy (0.5 s, 5 s under -race)")
	}
	start := time.Now()
	c := calibrate(t, pgas.Config{Ranks: 2}, model.CalibrateOptions{})
	t.Logf("default calibration in %v: %v", time.Since(start), c.Params)
	for _, op := range []model.Op{model.Read, model.Write} {
		for _, pat := range []model.Pattern{model.Baseline, model.Vector, model.Coalesce, model.Local, model.Private} {
			t.Logf("%-8v %-5v %v", pat, op, c.Params.Patterns.Curve(pat, op))
		}
	}
	if err := c.Params.Validate(); err != nil {
		t.Error(err)
	}
}

func TestFitLink(t *testing.T) {
	pts := []model.SizePoint{{Bytes: 8, Sec: 1e-6 + 8/1e9}, {Bytes: 1 << 20, Sec: 1e-6 + (1<<20)/1e9}}
	w, o := model.FitLink(pts)
	if !near(w, 1e9) || math.Abs(o-1e-6) > 1e-15 {
		t.Errorf("FitLink(%v) = %g B/s, %g s; want 1e9, 1e-6", pts, w, o)
	}
	noisy := []model.SizePoint{{Bytes: 8, Sec: 2e-6}, {Bytes: 64, Sec: 1e-6}}
	if w, o := model.FitLink(noisy); !(w > 0) || o < 0 {
		t.Errorf("FitLink(%v) = %g, %g; want a positive bandwidth and overhead >= 0", noisy, w, o)
	}
	if w, o := model.FitLink(nil); w != 0 || o != 0 {
		t.Errorf("FitLink(nil) = %g, %g; want zeros", w, o)
	}
}

func TestCalibrateOptionsValidate(t *testing.T) {
	if err := (model.CalibrateOptions{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	bad := model.CalibrateOptions{PingSizes: []int{64, 8}, PatternSizes: []int64{0}, Reads: -1}
	if err := bad.Validate(); err == nil {
		t.Error("Validate accepted decreasing ping sizes, a zero pattern size and negative reads")
	}
}
