package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/internal/size"
)

// TestModel: mrrun model calibrates (once: the second run finds the saved
// calibration), predicts and measures the three strategies, in JSON and
// as a table; bad flags are usage errors.
func TestModel(t *testing.T) {
	dir := t.TempDir()
	args := []string{"model", "-np", "2", "--n", "8192", "--block", "512", "--steps", "3", "--calibrations", dir}
	for i, want := range []string{"measured now", "saved"} {
		r := mrrun(t, append(args, "--format", "json")...).want(t, 0)
		var rep modelReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("run %d: not JSON: %v\n%s", i, err, r.stdout)
		}
		if !strings.Contains(rep.Calibration, want) {
			t.Errorf("run %d: calibration %q, want it %s", i, rep.Calibration, want)
		}
		if len(rep.Rows) != 3 {
			t.Fatalf("run %d: %d strategies, want v1, v2, v3", i, len(rep.Rows))
		}
		for k, row := range rep.Rows {
			if row.Strategy != []string{"v1", "v2", "v3"}[k] || !(row.PredictedS > 0) || !(row.MeasuredS > 0) {
				t.Errorf("run %d: row %+v", i, row)
			}
		}
	}
	// --cache adds v1 run with the cache, whose line loads the model
	// prices: predicted and measured.
	r := mrrun(t, append(args, "--cache", "lines=64,line=512", "--format", "json")...).want(t, 0)
	var rep modelReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--cache: not JSON: %v\n%s", err, r.stdout)
	}
	if n := len(rep.Rows); n != 4 || rep.Rows[3].Strategy != "v1+cache" || !(rep.Rows[3].PredictedS > 0) || !(rep.Rows[3].MeasuredS > 0) || rep.Cache != "lines=64,line=512,victim=16" {
		t.Errorf("--cache: cache %q, rows %+v; want a fourth, v1+cache", rep.Cache, rep.Rows)
	}
	// --transport shm: the command launches its ranks as processes; rank
	// 0's prints the report, of the shm transport's calibration.
	r = mrrun(t, append(args, "--transport", "shm", "--format", "json")...).want(t, 0)
	rep = modelReport{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--transport shm: not one JSON report: %v\n%s", err, r.stdout)
	}
	if rep.Transport != "shm" || len(rep.Rows) != 3 || !strings.Contains(rep.Calibration, "shm-np2") {
		t.Errorf("--transport shm: transport %q, calibration %q, %d rows", rep.Transport, rep.Calibration, len(rep.Rows))
	}
	r = mrrun(t, args...).want(t, 0)
	for _, s := range []string{"predicted", "measured", "v1", "v2", "v3", "W_priv"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("table lacks %q:\n%s", s, r.stdout)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"model", "-np", "0"}, "-np"},
		{[]string{"model", "--far", "2"}, "--far"},
		{[]string{"model", "--link", "5us"}, "--ranks-per-node"},
		{[]string{"model", "--format", "xml"}, "--format"},
		{[]string{"model", "extra"}, "no arguments"},
		{[]string{"model", "--cache", "lines=4,line=3"}, "--cache lines=4,line=3"},
		{[]string{"model", "--transport", "tcp"}, "--transport"},
		{[]string{"model", "--transport", "shm", "--ranks-per-node", "1", "--link", "5us"}, "--link applies to --transport inproc"},
	} {
		if r := mrrun(t, c.args...).want(t, 2); !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q does not name %s", c.args, r.stderr, c.want)
		}
	}
}

// TestModelMemoryBudget: a problem that does not fit --memory (or the
// automatic budget) is refused before anything starts, with one line that
// gives what it needs, the budget and the largest --n that fits; one that
// fits runs.
func TestModelMemoryBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cal")
	r := mrrun(t, "model", "-np", "2", "--memory", "64MiB", "--n", "1000000", "--calibrations", dir).want(t, 2)
	need := size.String(modelBytes(1000000, 16, 2))
	for _, s := range []string{"mrrun: model: --n 1000000 needs about " + need, "840 B a row with --rnz 16", "over the memory budget of 64 MiB (--memory)", "at most --n "} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr %q does not say %q", r.stderr, s)
		}
	}
	if n := strings.Count(r.stderr, "\n"); n != 1 || r.stdout != "" {
		t.Errorf("want one line on stderr and nothing on stdout, got %d lines: %q, stdout %q", n, r.stderr, r.stdout)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the refused model made its calibrations directory %s", dir)
	}
	// The issue's --n 500000000 (it took 24 GB before the system's OOM
	// killer ended it) needs about 390 GiB.
	r = mrrun(t, "model", "--n", "500000000", "--memory", "1GiB", "--calibrations", dir).want(t, 2)
	if !strings.Contains(r.stderr, "--n 500000000 needs about 391.2 GiB") {
		t.Errorf("--n 500000000: stderr %q, want the figure", r.stderr)
	}
	if got := modelBytes(1<<62, 16, 2); got <= 0 {
		t.Errorf("modelBytes of 2^62 rows = %d: overflowed", got)
	}
}
