package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/bench"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/reduce"
)

// benchJSON decodes mrrun bench --json's output (benchRows) into its
// results.
func benchJSON(t *testing.T, stdout string) []bench.Result {
	t.Helper()
	var results []bench.Result
	for _, r := range benchRows(t, stdout) {
		results = append(results, r.Result)
	}
	return results
}

func benchNear(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func TestBenchJSON(t *testing.T) {
	dir := t.TempDir()
	r := mrrun(t, "bench", "--apps", "wordcount,histogram", "--ranks", "2,1,2", "--modes", "default,cyclic",
		"--size", "200KB", "--reps", "2", "--warmup", "0", "--dir", dir, "--json").want(t, 0)
	results := benchJSON(t, r.stdout)

	// The inputs are kept in --dir: input_bytes must be their size.
	sizes := map[string]int64{}
	for _, app := range []string{"wordcount", "histogram"} {
		matches, err := filepath.Glob(filepath.Join(dir, app+"-*"))
		if err != nil || len(matches) != 1 {
			t.Fatalf("%s input in --dir: %v, %v", app, matches, err)
		}
		n, err := inputBytes(matches)
		if err != nil {
			t.Fatal(err)
		}
		if n < 190_000 || n > 260_000 {
			t.Errorf("%s input is %d bytes; want about 200 kB", app, n)
		}
		sizes[app] = n
	}

	type key struct {
		app, config string
		ranks       int
	}
	var got []key
	seq := map[string]float64{}
	for _, res := range results {
		got = append(got, key{res.App, res.Config(), res.Ranks})
		if res.Baseline == "seq" {
			seq[res.App] = res.MedianS
		}
	}
	gmp := runtime.GOMAXPROCS(0) // the binary's too: same machine, same environment
	want := []key{
		{"wordcount", "seq", 1}, {"wordcount", "goroutines", gmp},
		{"wordcount", "default", 1}, {"wordcount", "default", 2}, {"wordcount", "cyclic", 1}, {"wordcount", "cyclic", 2},
		{"histogram", "seq", 1}, {"histogram", "goroutines", gmp},
		{"histogram", "default", 1}, {"histogram", "default", 2}, {"histogram", "cyclic", 1}, {"histogram", "cyclic", 2},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("configurations = %v; want %v", got, want)
	}
	for _, res := range results {
		name := fmt.Sprintf("%s %s ranks=%d", res.App, res.Config(), res.Ranks)
		if res.InputBytes != sizes[res.App] {
			t.Errorf("%s: input_bytes = %d; want %d", name, res.InputBytes, sizes[res.App])
		}
		if res.Reps != 2 || res.MedianS <= 0 {
			t.Errorf("%s: reps = %d, median_s = %v; want 2 and > 0", name, res.Reps, res.MedianS)
		}
		if w := float64(res.InputBytes) / 1e6 / res.MedianS; !benchNear(res.MBPerS, w) {
			t.Errorf("%s: mb_per_s = %v; want input_bytes/1e6/median_s = %v", name, res.MBPerS, w)
		}
		if w := seq[res.App] / res.MedianS; !benchNear(res.SpeedupVsSeq, w) {
			t.Errorf("%s: speedup_vs_seq = %v; want seq's median / median = %v", name, res.SpeedupVsSeq, w)
		}
		if res.Baseline == "seq" && res.SpeedupVsSeq != 1 {
			t.Errorf("%s: speedup_vs_seq = %v; want 1", name, res.SpeedupVsSeq)
		}
		switch {
		case res.Baseline != "":
			if res.Transport != "" || res.Mode != "" || res.Dist != "" || res.Map != "" || res.Gather != "" {
				t.Errorf("%s: baseline with pgasmr fields %+v", name, res)
			}
		case res.Mode == "cyclic":
			if res.Transport != "inproc" || res.Dist != "cyclic" || res.Map != "element" || !res.Collectives {
				t.Errorf("%s: %+v; want inproc, cyclic, element map, collectives", name, res)
			}
		case res.Mode == "default":
			wantGather := map[string]string{"wordcount": "partitioned", "histogram": "root"}[res.App]
			if res.Transport != "inproc" || res.Dist != "block" || res.Map != "array" || res.Gather != wantGather || !res.Collectives {
				t.Errorf("%s: %+v; want inproc, block, array map, gather %s, collectives", name, res, wantGather)
			}
		}
	}
	for _, line := range []string{"bench: wordcount ranks=2 default rep 2/2", "bench: histogram seq rep 1/2"} {
		if !strings.Contains(r.stderr, line+"\n") {
			t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
		}
	}

	// A second run reuses the inputs in --dir.
	r = mrrun(t, "bench", "--apps", "histogram", "--ranks", "1", "--baselines", "none", "--size", "200KB",
		"--reps", "1", "--dir", dir, "--json").want(t, 0)
	if !strings.Contains(r.stderr, "bench: histogram: reusing") {
		t.Errorf("second run did not reuse the input:\n%s", r.stderr)
	}
	if got := benchJSON(t, r.stdout); len(got) != 2 || got[0].Baseline != "seq" || got[1].Mode != "default" {
		t.Errorf("--baselines none: results %+v; want seq and default", got)
	}
}

func TestBenchTableAndInput(t *testing.T) {
	sample := filepath.Join("..", "..", "testdata", "sample")
	r := mrrun(t, "bench", "-q", "--apps", "wordcount", "--input", "wordcount="+sample, "--ranks", "1,2",
		"--modes", "default,balanced+no-collectives,gather-all", "--baselines", "seq", "--reps", "1").want(t, 0)
	if r.stderr != "" {
		t.Errorf("-q: stderr = %q; want nothing", r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "ran by "+versionLine() {
		t.Errorf("last line %q; want the binary's version line", last)
	}
	lines = lines[:len(lines)-1]
	if len(lines) != 1+1+3*2 {
		t.Fatalf("table has %d lines; want a header and 7 rows:\n%s", len(lines), r.stdout)
	}
	if f := strings.Fields(lines[0]); f[0] != "app" || !strings.Contains(lines[0], "MB/s") || !strings.Contains(lines[0], "speedup vs seq") {
		t.Errorf("header %q", lines[0])
	}
	n, err := inputBytes([]string{sample})
	if err != nil {
		t.Fatal(err)
	}
	mb := fmt.Sprintf(" %.2f ", float64(n)/1e6)
	for i, line := range lines[1:] {
		if !strings.HasPrefix(strings.TrimSpace(line), "wordcount ") || !strings.Contains(line, mb) {
			t.Errorf("row %d %q: want wordcount and %s MB", i, line, mb)
		}
		if len(line) != len(lines[0]) {
			t.Errorf("row %d is %d wide, header %d: not aligned:\n%s", i, len(line), len(lines[0]), r.stdout)
		}
	}
	if !strings.Contains(lines[1], " seq ") || !strings.HasSuffix(lines[1], " 1.00") {
		t.Errorf("first row %q: want seq with speed-up 1.00", lines[1])
	}
	if !strings.Contains(r.stdout, "balanced+no-collectives") || !strings.Contains(r.stdout, " false ") {
		t.Errorf("no balanced+no-collectives row without collectives:\n%s", r.stdout)
	}
}

func TestBenchPlot(t *testing.T) {
	dir := t.TempDir()
	pngPath, svgPath := filepath.Join(dir, "b.png"), filepath.Join(dir, "b.svg")
	args := []string{"bench", "-q", "--apps", "histogram,linreg", "--ranks", "1,2", "--size", "100KB",
		"--reps", "1", "--warmup", "0", "--modes", "default,element"}
	mrrun(t, append(args, "--plot", pngPath)...).want(t, 0)
	mrrun(t, append(args, "--plot", svgPath)...).want(t, 0)

	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("--plot %s: %v", pngPath, err)
	}
	// Two apps: two rows of charts, each well over 300 pixels high.
	if b := img.Bounds(); b.Dx() < 1000 || b.Dx() > 3000 || b.Dy() < 600 || b.Dy() > 1500 {
		t.Errorf("PNG is %dx%d; want about 1300x700", b.Dx(), b.Dy())
	}

	b, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	dec := xml.NewDecoder(bytes.NewReader(b))
	inText, root := false, ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("--plot %s: not well-formed XML: %v", svgPath, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		case xml.EndElement:
			inText = false
		}
	}
	if root != "svg" {
		t.Errorf("SVG root element %q; want svg", root)
	}
	all := strings.Join(texts, "\n")
	for _, label := range []string{"histogram: throughput", "linreg: speed-up against seq", "MB/s", "speed-up (seq median / median)",
		"ranks (baselines: seq 1, goroutines GOMAXPROCS)", "seq (baseline)", "goroutines (baseline)",
		"pgasmr default [array map, gather root]", "pgasmr element [element map, block, gather root]", "ideal (speed-up = ranks)"} {
		if !strings.Contains(all, label) {
			t.Errorf("SVG lacks the text %q; has:\n%s", label, all)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--apps", "wordcount,nosuch"}, `unknown app "nosuch"`},
		{[]string{"--ranks", "0"}, "--ranks"},
		{[]string{"--ranks", "1,x"}, "--ranks"},
		{[]string{"--modes", "fast"}, `unknown mode "fast"`},
		{[]string{"--modes", "cyclic+bestfit"}, "two distributions"},
		{[]string{"--modes", "array+cyclic"}, "--modes array+cyclic"},
		{[]string{"--apps", "spamcount", "--modes", "array"}, "--modes array"},
		{[]string{"--baselines", "mpi"}, "--baselines"},
		{[]string{"--reps", "0"}, "--reps"},
		{[]string{"--size", "lots"}, "--size"},
		{[]string{"--plot", "out.gif"}, "--plot"},
		{[]string{"--plot", "no/such/dir/out.png"}, "--plot"},
		{[]string{"--input", "wordcount"}, "--input"},
		{[]string{"--apps", "histogram", "--input", "wordcount=x"}, "not in --apps"},
		{[]string{"--transport", "mpi"}, "built without MPI"},
		{[]string{"--external", "p=cat input"}, "the command has no {input}"},
		{[]string{"--external", "goroutines=cat {input}"}, `name "goroutines" is a built-in configuration`},
		{[]string{"--nosuch"}, "--nosuch"},
		{[]string{"extra"}, "no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := mrrun(t, append([]string{"bench"}, tc.args...)...).want(t, 2)
			if !strings.HasPrefix(r.stderr, "mrrun: ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q; want one line mrrun: ... %s", r.stderr, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q; want nothing", r.stdout)
			}
		})
	}
}

// TestBenchInterrupt checks that SIGINT stops a bench promptly, with exit
// status 130, and removes the generated inputs.
func TestBenchInterrupt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on windows")
	}
	tmp := t.TempDir()
	cmd := exec.Command(binPath, "bench", "--apps", "wordcount", "--size", "2MB", "--ranks", "1", "--reps", "1000")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var last string
	for sc.Scan() {
		last = sc.Text()
		if strings.Contains(last, "wordcount seq rep 3/") {
			break
		}
	}
	t0 := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("bench took %v to stop after SIGINT", d)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v; want status 130 (last line %q)", err, last)
	}
	if !strings.HasSuffix(rest.String(), "mrrun: interrupted\n") {
		t.Errorf("stderr ends %q; want mrrun: interrupted", rest.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}
}

func TestBenchModeOpts(t *testing.T) {
	wc, _ := findApp("wordcount")
	sc, _ := findApp("spamcount")
	opts := func(o mr.Options) jobOpts { return jobOpts{Options: o} }
	for _, tc := range []struct {
		app  *app
		mode string
		want jobOpts
		ok   bool
	}{
		{wc, "default", opts(mr.Options{Map: mr.MapArray, Gather: reduce.GatherPartitioned}), true},
		{sc, "default", opts(mr.Options{Map: mr.MapElement, Gather: reduce.GatherPartitioned}), true},
		{wc, "element", opts(mr.Options{Map: mr.MapElement, Gather: reduce.GatherPartitioned}), true},
		{wc, "cyclic", opts(mr.Options{Map: mr.MapElement, Dist: distrib.Cyclic, Gather: reduce.GatherPartitioned}), true},
		{wc, "bestfit+gather-root", opts(mr.Options{Map: mr.MapElement, Dist: distrib.BestFit, Gather: reduce.GatherRoot}), true},
		{wc, "no-collectives+gather-all", opts(mr.Options{Map: mr.MapArray, Gather: reduce.GatherAll, Transfer: reduce.ElementByElement}), true},
		{sc, "balanced+no-collectives", opts(mr.Options{Map: mr.MapElement, Dist: distrib.Balanced, Gather: reduce.GatherPartitioned, Transfer: reduce.ElementByElement}), true},
		{wc, "array", opts(mr.Options{Map: mr.MapArray, Gather: reduce.GatherPartitioned}), true},
		{wc, "bestfit+threshold=100+root=1", opts(mr.Options{Map: mr.MapElement, Dist: distrib.BestFit, Threshold: 100, Gather: reduce.GatherPartitioned, Root: 1}), true},
		{sc, "array", jobOpts{}, false},
	} {
		m, err := parseBenchMode(tc.mode)
		if err != nil {
			t.Errorf("mode %s: %v", tc.mode, err)
			continue
		}
		got, ok := m.jobOpts(tc.app)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("mode %s for %s = %+v, %v; want %+v, %v", tc.mode, tc.app.name, got, ok, tc.want, tc.ok)
		}
	}
	if _, err := parseBenchMode("array+cyclic"); err == nil || !strings.Contains(err.Error(), "contiguous share") {
		t.Errorf("array+cyclic: %v; want the array map's contiguous shares named", err)
	}
}

func TestBenchParseRanks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"4,1,2,2", []int{1, 2, 4}},
		{" 3 ", []int{3}},
		{"", dedupSorted([]int{1, 2, runtime.NumCPU()})},
	} {
		if got, err := parseRanks(tc.in); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseRanks(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"0", "-1", "1,,2", "x", "1.5"} {
		if _, err := parseRanks(in); err == nil {
			t.Errorf("parseRanks(%q) succeeded; want an error", in)
		}
	}
}

// TestBenchShm runs bench with --transport shm: every job is a fresh
// mrrun process (the ranks processes of their own), checked against seq.
func TestBenchShm(t *testing.T) {
	r := mrrun(t, "bench", "-q", "--json", "--apps", "wordcount,histogram", "--size", "200KB", "--reps", "1",
		"--warmup", "0", "--ranks", "2", "--baselines", "seq", "--modes", "default,cyclic", "--transport", "shm").want(t, 0)
	var out struct{ Results []bench.Result }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(out.Results) != 6 {
		t.Fatalf("%d results, want 6 (seq and 2 modes for 2 apps): %+v", len(out.Results), out.Results)
	}
	for _, res := range out.Results {
		if res.Baseline == "" && (res.Transport != "shm" || res.Ranks != 2) {
			t.Errorf("result %+v: want transport shm, 2 ranks", res)
		}
		if res.MedianS <= 0 {
			t.Errorf("result %+v: no time", res)
		}
	}
}
