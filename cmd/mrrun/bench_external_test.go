package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/internal/bench"
)

// planOf parses args as mrrun bench's flags and returns their plan.
func planOf(t *testing.T, args ...string) (benchPlan, error) {
	t.Helper()
	fs := newFlagSet("mrrun bench")
	var f benchFlags
	f.define(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	return f.plan(fs)
}

func TestBenchExternalFlag(t *testing.T) {
	ext := func(v ...string) []string {
		var args []string
		for _, s := range v {
			args = append(args, "--external", s)
		}
		return args
	}
	for _, tc := range []struct {
		args []string
		want []benchExternal
	}{
		{ext("phoenix=MR_NUMTHREADS={ranks} ./word_count {input}"),
			[]benchExternal{{name: "phoenix", command: "MR_NUMTHREADS={ranks} ./word_count {input}"}}},
		{ext("wordcount:phoenix=./wc {input} {ranks}"),
			[]benchExternal{{app: "wordcount", name: "phoenix", command: "./wc {input} {ranks}"}}},
		// The first = ends the name; the command keeps =, : and commas.
		{ext(" histogram : p.x-1_ = awk -F, '{print $1}' {input} | a=b:c "),
			[]benchExternal{{app: "histogram", name: "p.x-1_", command: "awk -F, '{print $1}' {input} | a=b:c"}}},
		// One name for several apps, each with its own command.
		{ext("wordcount:p=x {input}", "histogram:p=y {input}", "q=z {input}"),
			[]benchExternal{{app: "wordcount", name: "p", command: "x {input}"}, {app: "histogram", name: "p", command: "y {input}"},
				{name: "q", command: "z {input}"}}},
		{append([]string{"--apps", "linreg"}, ext("linreg:7zip=cat {input}")...),
			[]benchExternal{{app: "linreg", name: "7zip", command: "cat {input}"}}},
		{nil, nil},
	} {
		p, err := planOf(t, tc.args...)
		if err != nil || !slices.Equal(p.externals, tc.want) {
			t.Errorf("plan(%q).externals = %+v, %v; want %+v", tc.args, p.externals, err, tc.want)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{ext("phoenix"), `--external "phoenix": want [APP:]NAME=COMMAND (like wordcount:phoenix='word_count {input}')`},
		{ext("=cat {input}"), `--external "=cat {input}": no name before = (want [APP:]NAME=COMMAND)`},
		{ext("wordcount:=cat {input}"), `--external "wordcount:=cat {input}": no name before = (want [APP:]NAME=COMMAND)`},
		{ext("p="), `--external "p=": no command after =`},
		{ext("p=  "), `--external "p=  ": no command after =`},
		{ext("p=cat input {ranks}"), `--external "p=cat input {ranks}": the command has no {input} (the app's input path goes there)`},
		{ext("p=cat {INPUT}"), `--external "p=cat {INPUT}": the command has no {input} (the app's input path goes there)`},
		{ext("a b=cat {input}"), `--external "a b=cat {input}": name "a b": want letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{ext("-p=cat {input}"), `--external "-p=cat {input}": name "-p": want letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{ext("a:b:c=cat {input}"), `--external "a:b:c=cat {input}": unknown app "a" (want histogram, linreg, wordcount, spamcount; see mrrun list)`},
		{ext("nosuch:p=cat {input}"), `--external "nosuch:p=cat {input}": unknown app "nosuch" (want histogram, linreg, wordcount, spamcount; see mrrun list)`},
		{ext("seq=cat {input}"), `--external "seq=cat {input}": name "seq" is a built-in configuration (seq, goroutines, mrmpi, none or a mode); pick another`},
		{ext("mrmpi=cat {input}"), `--external "mrmpi=cat {input}": name "mrmpi" is a built-in configuration (seq, goroutines, mrmpi, none or a mode); pick another`},
		{ext("default=cat {input}"), `--external "default=cat {input}": name "default" is a built-in configuration (seq, goroutines, mrmpi, none or a mode); pick another`},
		{ext("wordcount:cyclic=cat {input}"), `--external "wordcount:cyclic=cat {input}": name "cyclic" is a built-in configuration (seq, goroutines, mrmpi, none or a mode); pick another`},
		{ext("wordcount=cat {input}"), `--external "wordcount=cat {input}": name "wordcount" is an app; to run the command for wordcount only, write wordcount:NAME=COMMAND`},
		{append([]string{"--apps", "wordcount"}, ext("histogram:p=cat {input}")...), `--external "histogram:p=cat {input}": histogram is not in --apps`},
		{ext("p=cat {input}", "p=wc {input}"), `--external "p=wc {input}": p is given twice for the same apps`},
		{ext("p=cat {input}", "wordcount:p=wc {input}"), `--external "wordcount:p=wc {input}": p is given twice for wordcount`},
		{ext("linreg:p=cat {input}", "p=wc {input}"), `--external "p=wc {input}": p is given twice for linreg`},
	} {
		_, err := planOf(t, tc.args...)
		var ee *exitError
		if err == nil || err.Error() != tc.want || !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("plan(%q) = %v; want the usage error %s", tc.args, err, tc.want)
		}
	}
}

func TestBenchExternalExpand(t *testing.T) {
	e := benchExternal{name: "p", command: "MR_NUMTHREADS={ranks} tool {input} -n {ranks}"}
	for _, tc := range []struct {
		inputs []string
		ranks  int
		want   string
	}{
		{[]string{"/data/a.txt"}, 2, "MR_NUMTHREADS=2 tool /data/a.txt -n 2"},
		{[]string{"/data/a b", "x"}, 16, "MR_NUMTHREADS=16 tool '/data/a b' x -n 16"},
		{[]string{"it's {ranks}$HOME"}, 1, `MR_NUMTHREADS=1 tool 'it'\''s {ranks}$HOME' -n 1`},
		{[]string{""}, 1, "MR_NUMTHREADS=1 tool '' -n 1"},
	} {
		if got := e.expand(tc.inputs, tc.ranks); got != tc.want {
			t.Errorf("expand(%q, %d) = %s; want %s", tc.inputs, tc.ranks, got, tc.want)
		}
	}

	// sh gives the command each path back as one word, unchanged.
	paths := []string{"/tmp/a b", "it's", `"q" $x`, "`x`;|&<>*?~#!\\", "a\nb", "", "ü{ranks}"}
	cmd := benchExternal{command: `printf '%s\0' {input}`}.expand(paths, 1)
	out, err := exec.Command("sh", "-c", cmd).Output()
	if err != nil {
		t.Fatalf("sh -c %s: %v", cmd, err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); !slices.Equal(got, paths) {
		t.Errorf("sh -c %s printed %q; want %q", cmd, got, paths)
	}
}

// benchRows decodes mrrun bench --json's output with its external rows,
// and checks the binary it names.
func benchRows(t *testing.T, stdout string) []benchRow {
	t.Helper()
	var out struct {
		Build   buildInfo  `json:"build"`
		Results []benchRow `json:"results"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decoding bench --json: %v\n%s", err, stdout)
	}
	// The binary the tests built: this toolchain, -race as the test is.
	if want := (buildInfo{Go: runtime.Version(), Cgo: out.Build.Cgo, Race: raceEnabled}); out.Build != want {
		t.Errorf("bench --json build %+v, want %+v", out.Build, want)
	}
	return out.Results
}

// TestBenchExternal runs two external commands beside pgasmr: one for
// every app, which logs its rank count on every run, and one for
// histogram only.
func TestBenchExternal(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "runs log")
	all := "lines=cat {input} | wc -l >/dev/null && echo {ranks} >>" + shellQuote(logPath)
	hist := "histogram:bytes=wc -c {input}"
	r := mrrun(t, "bench", "--json", "--apps", "histogram,linreg", "--size", "50KB", "--ranks", "1,2", "--reps", "2", "--warmup", "1",
		"--baselines", "seq", "--modes", "default", "--dir", dir, "--external", all, "--external", hist).want(t, 0)
	rows := benchRows(t, r.stdout)

	type key struct {
		app, config string
		ranks       int
		command     string
	}
	var got []key
	for _, row := range rows {
		k := key{row.App, row.Config(), row.Ranks, ""}
		if row.External != nil {
			k.command = row.External.Command
			if row.External.OutputCompared {
				t.Errorf("%+v: output_compared true", k)
			}
			if row.Transport != "" || row.Mode != "" || row.Map != "" || row.Dist != "" || row.Gather != "" || row.Collectives {
				t.Errorf("%+v: external with pgasmr fields %+v", k, row.Result)
			}
		}
		if row.Reps != 2 || row.MedianS <= 0 || row.MBPerS <= 0 || row.SpeedupVsSeq <= 0 {
			t.Errorf("%+v: reps %d, median_s %v, mb_per_s %v, speedup %v; want 2 and > 0", k, row.Reps, row.MedianS, row.MBPerS, row.SpeedupVsSeq)
		}
		got = append(got, k)
	}
	lines := strings.TrimPrefix(all, "lines=")
	want := []key{
		{"histogram", "seq", 1, ""}, {"histogram", "lines", 1, lines}, {"histogram", "lines", 2, lines},
		{"histogram", "bytes", 1, "wc -c {input}"}, {"histogram", "bytes", 2, "wc -c {input}"},
		{"histogram", "default", 1, ""}, {"histogram", "default", 2, ""},
		{"linreg", "seq", 1, ""}, {"linreg", "lines", 1, lines}, {"linreg", "lines", 2, lines},
		{"linreg", "default", 1, ""}, {"linreg", "default", 2, ""},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows = %v;\nwant %v", got, want)
	}

	// lines ran warm-up + reps times at each rank count of each app.
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(log)), strings.Fields("1 2 1 2 1 2  1 2 1 2 1 2"); !slices.Equal(got, want) {
		t.Errorf("lines ran with {ranks} = %v; want %v", got, want)
	}
	// Interleaved with the others, round by round, after the same
	// warm-up (one run of each configuration, here).
	var order, wantOrder []string
	for line := range strings.Lines(r.stderr) {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "bench: histogram "); ok && strings.Contains(s, "/") {
			order = append(order, s)
		}
	}
	for _, round := range []string{"warm-up 1/1", "rep 1/2", "rep 2/2"} {
		for _, c := range []string{"seq", "external lines ranks=1", "external lines ranks=2", "external bytes ranks=1",
			"external bytes ranks=2", "ranks=1 default", "ranks=2 default"} {
			wantOrder = append(wantOrder, c+" "+round)
		}
	}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("histogram runs in order\n%s\nwant\n%s", strings.Join(order, "\n"), strings.Join(wantOrder, "\n"))
	}
	if !strings.Contains(r.stderr, "bench: note: external commands are timed as whole processes") {
		t.Errorf("no note on --exec in stderr:\n%s", r.stderr)
	}

	// The table marks the external rows and says what they ran.
	r = mrrun(t, "bench", "-q", "--exec", "--apps", "histogram", "--size", "50KB", "--ranks", "2", "--reps", "1", "--warmup", "0",
		"--baselines", "seq", "--dir", dir, "--external", hist).want(t, 0)
	table := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(table) != 1+3+2+1 {
		t.Fatalf("table has %d lines; want a header, 3 rows, a 2-line footnote and the binary's version:\n%s", len(table), r.stdout)
	}
	if f := strings.Fields(table[2]); len(f) < 3 || f[0] != "histogram" || f[1] != "bytes*" || f[2] != "2" {
		t.Errorf("row %q: want histogram bytes* 2", table[2])
	}
	wantNote := []string{
		"* external command, run by sh -c and timed as a whole process; exit status checked, output not compared with seq's:",
		"  bytes (histogram): wc -c {input}",
		"ran by " + versionLine(),
	}
	if !slices.Equal(table[4:], wantNote) {
		t.Errorf("footnote %q; want %q", table[4:], wantNote)
	}
}

// TestBenchExternalFails: a failing external command fails the bench (exit
// 1) with one line naming it, the command as run and its stderr.
func TestBenchExternalFails(t *testing.T) {
	sample, err := filepath.Abs(filepath.Join("..", "..", "testdata", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command(binPath, "bench", "-q", "--apps", "wordcount", "--input", "wordcount="+sample, "--ranks", "1,2", "--reps", "1",
		"--baselines", "seq", "--external", `broken=echo "no threads: {ranks}" >&2; echo >&2; echo "cannot read {input}" >&2; exit 3`)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v; want status 1\nstderr: %s", err, stderr.String())
	}
	want := `mrrun: bench: wordcount external broken ranks=1: sh -c 'echo "no threads: 1" >&2; echo >&2; echo "cannot read ` + sample +
		`" >&2; exit 3': exit status 3; stderr: no threads: 1; cannot read ` + sample + "\n"
	if stderr.String() != want {
		t.Errorf("stderr\n%q\nwant\n%q", stderr.String(), want)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q; want nothing", stdout.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left behind in TMPDIR: %v", left)
	}

	// The whole of a long stderr is not quoted: its first lines, cut.
	r := mrrun(t, "bench", "-q", "--apps", "wordcount", "--input", "wordcount="+sample, "--ranks", "1", "--reps", "1", "--warmup", "0",
		"--baselines", "seq", "--external", `noisy=: {input}; for i in 1 2 3 4 5 6 7 8; do printf "line $i %0300d\n" 0 >&2; done; kill -9 $$`).want(t, 1)
	m := regexp.MustCompile(`^mrrun: bench: wordcount external noisy ranks=1: sh -c '.*': signal: killed; stderr: (.*)\n$`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("stderr %q; want the error of a killed command", r.stderr)
	}
	var lines []string
	for i := 1; i <= externalStderrLines; i++ {
		lines = append(lines, "line "+string(rune('0'+i))+" "+strings.Repeat("0", externalLineMax-7)+"...")
	}
	if got := strings.Split(m[1], "; "); !slices.Equal(got, lines) {
		t.Errorf("stderr lines quoted: %q; want %q", got, lines)
	}
}

// Checks that benchRow's JSON is bench.Result's for pgasmr's rows.
func TestBenchRowJSON(t *testing.T) {
	r := bench.Result{App: "wordcount", Baseline: "seq", Ranks: 1}
	a, err := json.Marshal(benchRow{Result: r})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("benchRow JSON %s; want bench.Result's %s", a, b)
	}
	a, err = json.Marshal(benchRow{Result: r, External: &benchExternalJSON{Command: "x {input}"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(string(b), "}") + `,"external":{"command":"x {input}","output_compared":false}}`; string(a) != want {
		t.Errorf("external row JSON %s; want %s", a, want)
	}
}
