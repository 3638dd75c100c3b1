package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBenchMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{[]time.Duration{5}, 5},
		{[]time.Duration{9, 1, 5}, 5},
		{[]time.Duration{4, 1, 2, 8}, 3},
	} {
		in := slices.Clone(tc.in)
		if got := Median(tc.in); got != tc.want || !slices.Equal(tc.in, in) {
			t.Errorf("Median(%v) = %v (input now %v); want %v, input unchanged", in, got, tc.in, tc.want)
		}
	}
}

func TestBenchSameOutput(t *testing.T) {
	if err := sameOutput([]byte("a\t1\nb\t2\n"), []byte("a\t1\nb\t2\n")); err != nil {
		t.Errorf("equal outputs: %v", err)
	}
	err := sameOutput([]byte("a\t1\nb\t2\n"), []byte("a\t1\nb\t3\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("differing outputs: %v; want an error naming line 2", err)
	}
}

func TestPlotNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 2.2, []string{"0.0", "0.5", "1.0", "1.5", "2.0"}},
		{0, 2200, []string{"0", "500", "1000", "1500", "2000"}},
		{0, 11, []string{"0.0", "2.5", "5.0", "7.5", "10.0"}},
		{0, 0.09, []string{"0.00", "0.02", "0.04", "0.06", "0.08"}},
	} {
		var got []string
		for _, tk := range (niceTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("niceTicks(%v, %v) = %v; want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestMeasure: warm-ups first, then rounds over every configuration;
// medians, throughput and speed-ups from the reported times; an output
// that differs from the reference's, a failing run and a cancelled
// context end the measurement with an error.
func TestMeasure(t *testing.T) {
	var order []string
	mk := func(label string, out string, times ...time.Duration) *Config {
		i := 0
		return &Config{Label: label, Result: Result{Mode: label}, Run: func(context.Context) ([]byte, time.Duration, error) {
			order = append(order, label)
			d := times[i%len(times)]
			i++
			return []byte(out), d, nil
		}}
	}
	cs := []*Config{
		mk("seq", "a 1\n", 0, 4*time.Second, 2*time.Second, 3*time.Second),
		mk("fast", "a 1\n", 0, time.Second, 3*time.Second, time.Second),
	}
	var lines []string
	rs, err := Measure(context.Background(), "app", 8e6, cs, 1, 3, func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"seq", "fast", "seq", "fast", "seq", "fast", "seq", "fast"}; !slices.Equal(order, want) {
		t.Errorf("run order %v, want %v", order, want)
	}
	if lines[0] != "app seq warm-up 1/1" || lines[2] != "app seq rep 1/3" {
		t.Errorf("progress lines %q", lines)
	}
	want := []Result{
		{App: "app", Mode: "seq", InputBytes: 8e6, Reps: 3, MedianS: 3, MBPerS: 8.0 / 3, SpeedupVsSeq: 1},
		{App: "app", Mode: "fast", InputBytes: 8e6, Reps: 3, MedianS: 1, MBPerS: 8, SpeedupVsSeq: 3},
	}
	if !slices.Equal(rs, want) {
		t.Errorf("results %+v, want %+v", rs, want)
	}

	cs = []*Config{mk("seq", "a 1\n", time.Second), mk("wrong", "a 2\n", time.Second)}
	if _, err := Measure(context.Background(), "app", 1, cs, 0, 1, nil); err == nil || !strings.Contains(err.Error(), "app wrong rep 1/1: output differs from seq's: 4 bytes, seq 4; first difference on line 1") {
		t.Errorf("differing output: %v", err)
	}
	// An unchecked run's output is its own: not compared, still timed.
	cs[1].Unchecked = true
	if rs, err := Measure(context.Background(), "app", 1, cs, 0, 1, nil); err != nil || len(rs) != 2 || rs[1].MedianS != 1 {
		t.Errorf("unchecked run: %+v, %v", rs, err)
	}
	cs[0].Unchecked = true
	if _, err := Measure(context.Background(), "app", 1, cs, 0, 1, nil); err == nil || !strings.Contains(err.Error(), "reference seq is unchecked") {
		t.Errorf("unchecked reference: %v", err)
	}
	boom := errors.New("boom")
	cs = []*Config{{Label: "seq", Run: func(context.Context) ([]byte, time.Duration, error) { return nil, 0, boom }}}
	if _, err := Measure(context.Background(), "app", 1, cs, 0, 1, nil); !errors.Is(err, boom) || !strings.Contains(err.Error(), "bench: app seq: boom") {
		t.Errorf("failing run: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, "app", 1, []*Config{mk("seq", "", time.Second)}, 0, 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
