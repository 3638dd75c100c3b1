// Package bench is the harness of mrrun bench: it runs configurations of
// one app on one input in interleaved rounds, checks that every run prints
// the reference's bytes, and reports medians, throughput and speed-ups as
// a table, JSON or charts. What a configuration runs (a job in this
// process, a fresh process, MapReduce-MPI under mpirun) is the caller's.
package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// Result is one configuration's figures: what mrrun bench --json prints.
// Baselines have an empty mode, transport, dist, map and gather; ranks is 1
// for seq and GOMAXPROCS for goroutines. Baseline is "" for pgasmr jobs.
type Result struct {
	App          string  `json:"app"`
	Mode         string  `json:"mode"`
	InputBytes   int64   `json:"input_bytes"`
	Transport    string  `json:"transport"`
	Ranks        int     `json:"ranks"`
	Dist         string  `json:"dist"`
	Map          string  `json:"map"`
	Gather       string  `json:"gather"`
	Collectives  bool    `json:"collectives"`
	Baseline     string  `json:"baseline"`
	Reps         int     `json:"reps"`
	MedianS      float64 `json:"median_s"`
	MBPerS       float64 `json:"mb_per_s"`
	SpeedupVsSeq float64 `json:"speedup_vs_seq"`
}

// Config names r's configuration: the baseline or the mode.
func (r Result) Config() string {
	if r.Baseline != "" {
		return r.Baseline
	}
	return r.Mode
}

// Config is one configuration to measure: Run runs it once and returns its
// output and wall time; Result describes it (Measure fills the figures).
type Config struct {
	Label  string // in progress lines: "ranks=2 default"
	Result Result
	Run    func(ctx context.Context) (out []byte, took time.Duration, err error)
	// Unchecked: the run's output is not compared with the reference's
	// (another tool's, whose output format is its own); only its error
	// counts. It cannot be the reference.
	Unchecked bool
}

// Measure runs every configuration warmup times untimed, then reps timed
// times in rounds (one run of every configuration per round, so a machine
// whose speed drifts slows them alike), and returns their results in
// order. The first configuration is the reference: every run's output must
// be byte-identical to its first output, and speed-ups are relative to it
// (it should be seq). progress, if not nil, gets a line before every run.
func Measure(ctx context.Context, app string, inputBytes int64, configs []*Config, warmup, reps int, progress func(format string, args ...any)) ([]Result, error) {
	if len(configs) == 0 || reps < 1 {
		return nil, fmt.Errorf("bench: %d configurations, %d repetitions", len(configs), reps)
	}
	if configs[0].Unchecked {
		return nil, fmt.Errorf("bench: the reference %s is unchecked", configs[0].Label)
	}
	if progress == nil {
		progress = func(string, ...any) {}
	}
	var want []byte
	once := func(c *Config, what string) (time.Duration, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		progress("%s %s %s", app, c.Label, what)
		out, took, err := c.Run(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, fmt.Errorf("bench: %s %s: %w", app, c.Label, err)
		}
		if c.Unchecked {
			return took, nil
		}
		if want == nil {
			want = bytes.Clone(out)
			if want == nil {
				want = []byte{}
			}
		} else if err := sameOutput(want, out); err != nil {
			return 0, fmt.Errorf("bench: %s %s %s: output differs from %s's: %v", app, c.Label, what, configs[0].Label, err)
		}
		return took, nil
	}
	times := make([][]time.Duration, len(configs))
	for _, c := range configs {
		for i := range warmup {
			if _, err := once(c, fmt.Sprintf("warm-up %d/%d", i+1, warmup)); err != nil {
				return nil, err
			}
		}
	}
	for i := range reps {
		for j, c := range configs {
			took, err := once(c, fmt.Sprintf("rep %d/%d", i+1, reps))
			if err != nil {
				return nil, err
			}
			times[j] = append(times[j], took)
		}
	}
	results := make([]Result, len(configs))
	var refS float64
	for j, c := range configs {
		r := c.Result
		r.App, r.InputBytes, r.Reps = app, inputBytes, reps
		r.MedianS = Median(times[j]).Seconds()
		if j == 0 {
			refS = r.MedianS
		}
		r.MBPerS = float64(inputBytes) / 1e6 / r.MedianS
		r.SpeedupVsSeq = refS / r.MedianS
		results[j] = r
	}
	return results, nil
}

// sameOutput says where got first differs from want.
func sameOutput(want, got []byte) error {
	if bytes.Equal(want, got) {
		return nil
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	line := bytes.Count(want[:i], []byte("\n")) + 1
	return fmt.Errorf("%d bytes, seq %d; first difference on line %d", len(got), len(want), line)
}

// Median returns the median of d (the mean of the middle two for an even
// count), leaving d as it is. It panics if d is empty.
func Median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// WriteTable prints results as a right-aligned table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "app\tconfig\tranks\tdist\tmap\tgather\tcollectives\treps\tinput MB\tmedian s\tMB/s\tspeedup vs seq\t")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, r := range results {
		coll := "-"
		if r.Baseline == "" {
			coll = strconv.FormatBool(r.Collectives)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%.2f\t%.4f\t%.1f\t%.2f\t\n", r.App, r.Config(), r.Ranks,
			dash(r.Dist), dash(r.Map), dash(r.Gather), coll, r.Reps, float64(r.InputBytes)/1e6, r.MedianS, r.MBPerS, r.SpeedupVsSeq)
	}
	return tw.Flush()
}
