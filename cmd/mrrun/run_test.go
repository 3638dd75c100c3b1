package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/apps/mrmpi"
	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// inputs are small generated inputs of each app, made once and removed by
// TestMain.
var (
	inputsOnce sync.Once
	inputsDir  string
	inputsErr  error
	appInputs  = map[string]string{}
)

// testInput returns the path of a small input of app.
func testInput(t *testing.T, app string) string {
	t.Helper()
	inputsOnce.Do(func() {
		inputsDir, inputsErr = os.MkdirTemp("", "mrrun-inputs")
		if inputsErr != nil {
			return
		}
		gen := map[string]func(path string) error{
			"histogram": func(p string) error {
				return writeWith(p, func(f *os.File) error { return histogram.GenerateBytes(f, 300_000, 1) })
			},
			"linreg": func(p string) error {
				return writeWith(p, func(f *os.File) error { return linreg.Generate(f, 100_000, "int8", 1) })
			},
			"wordcount": func(p string) error { return wordcount.Generate(p, 400_000, 30, 1) },
			"spamcount": func(p string) error { return spamcount.Generate(p, 60, 1) },
		}
		for name, g := range gen {
			p := filepath.Join(inputsDir, name)
			if inputsErr = g(p); inputsErr != nil {
				return
			}
			appInputs[name] = p
		}
	})
	if inputsErr != nil {
		t.Fatal(inputsErr)
	}
	return appInputs[app]
}

func writeWith(path string, fn func(f *os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// libSeq is the oracle: the app library's own Seq, written as tsv,
// without mrrun.
func libSeq(t *testing.T, app, in string) string {
	t.Helper()
	ctx := context.Background()
	var (
		res result
		err error
	)
	switch app {
	case "histogram":
		res, err = nilResult(histogram.Seq(ctx, []string{in}, histogram.Options{}))
	case "linreg":
		res, err = nilResult(linreg.Seq(ctx, []string{in}, linreg.Options{}))
	case "wordcount":
		res, err = nilResult(wordcount.Seq(ctx, []string{in}, wordcount.Options{}))
	case "spamcount":
		res, err = nilResult(spamcount.Seq(ctx, []string{in}, spamcount.Options{}))
	}
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.Write(&b, "tsv"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSameOutput runs every app through the binary in many configurations
// and baselines and checks each gives the bytes of the library's Seq.
func TestSameOutput(t *testing.T) {
	configs := [][]string{
		{"--baseline", "seq"},
		{"--baseline", "goroutines"},
		{"-np", "1"},
		{"-np", "3"},
		{"-np=2", "--map", "element"},
		{"-np", "3", "--dist", "cyclic"},
		{"-np", "2", "--dist", "balanced"},
		{"-np", "3", "--dist", "bestfit", "--threshold", "1000"},
		{"-np", "2", "--gather", "all"},
		{"-np", "3", "--gather", "root", "--root", "2"},
		{"-np", "3", "--gather", "none"},
		{"-np", "2", "--gather", "partitioned", "--no-collectives"},
		{"-np", "4", "--ranks-per-node", "2"},
		{"--transport", "shm", "-np", "2"},
		{"--transport", "shm", "-np", "4", "--map", "element", "--dist", "cyclic", "--gather", "all"},
		{"-np", "3", "--mode", "cyclic+no-collectives+gather-root+root=2"},
		{"-np", "2", "--mode", "bestfit+threshold=1000+gather-none"},
		{"-np", "64"},
		{"-np", "64", "--map", "element", "--dist", "cyclic", "--gather", "root", "--root", "63"},
		{"-np", "64", "--node-budget", "1"},
		{"-np", "64", "--turns", "-1"},
		{"-np", "16", "--turns", "1", "--map", "element", "--gather", "all"},
		{"-np", "3", "--segment-bytes", "200KiB"},
		{"--transport", "shm", "-np", "2", "--segment-bytes", "1MiB"},
		{"-np", "1", "--memory", "32KiB"},
		{"-np", "2", "--memory", "64KiB"},
		{"-np", "3", "--memory", "64KiB", "--gather", "all"},
		{"-np", "3", "--memory", "64KiB", "--map", "element", "--gather", "root", "--root", "1"},
		{"-np", "3", "--memory", "64KiB", "--node-combine", "off"},
		{"--transport", "shm", "-np", "2", "--memory", "64KiB"},
	}
	for _, app := range []string{"histogram", "linreg", "wordcount", "spamcount"} {
		t.Run(app, func(t *testing.T) {
			in := testInput(t, app)
			want := libSeq(t, app, in)
			if len(want) < 10 {
				t.Fatalf("oracle output too short: %q", want)
			}
			for _, c := range configs {
				args := append(append([]string{}, c...), "-q", "--output-format", "tsv", app, in)
				r := mrrun(t, args...).want(t, 0)
				if r.stdout != want {
					t.Errorf("mrrun %s: output differs from %s.Seq:\n got %.200q\nwant %.200q", strings.Join(c, " "), app, r.stdout, want)
				}
				if r.stderr != "" {
					t.Errorf("mrrun %s -q: stderr %q, want nothing", strings.Join(c, " "), r.stderr)
				}
			}
		})
	}
}

// TestMemorySpill: under a --memory far below a job's pairs, the ranks
// spill to files in --tmp and move their pairs in rounds (--stats says
// so), the output is the oracle's, and --tmp holds nothing afterwards.
// Node combining is off: the node's table, in the segments, would take
// every word of this small input.
// Of the apps only wordcount has a key space that grows with its input:
// histogram, linreg and spamcount keep array stores of a fixed size (256
// values, one key, the spam word list), which never pass a budget.
func TestMemorySpill(t *testing.T) {
	for _, app := range []string{"wordcount"} {
		t.Run(app, func(t *testing.T) {
			in := testInput(t, app)
			want := libSeq(t, app, in)
			for _, tr := range []string{"inproc", "shm"} {
				tmp := t.TempDir()
				r := mrrun(t, "--transport", tr, "-np", "2", "--memory", "64KiB", "--node-combine", "off", "--tmp", tmp, "--stats", "--stats-format", "json",
					"-q", "--output-format", "tsv", app, in).want(t, 0)
				if r.stdout != want {
					t.Errorf("%s: output differs from %s.Seq", tr, app)
				}
				var st statsJSON
				if err := json.Unmarshal([]byte(r.stderr), &st); err != nil {
					t.Fatalf("%s: --stats json: %v\n%s", tr, err, r.stderr)
				}
				if st.MemoryBudgetBytes != 64<<10 || st.MemoryBudget != "--memory" {
					t.Errorf("%s: stats say a budget of %d bytes from %q, want 65536 from --memory", tr, st.MemoryBudgetBytes, st.MemoryBudget)
				}
				var files, rounds int64
				for _, pr := range st.PerRank {
					files += pr.SpillFiles
					rounds = max(rounds, pr.Rounds)
				}
				if files == 0 || rounds < 2 {
					t.Errorf("%s: %d spill files and %d exchange rounds under --memory 64KiB, want some of each", tr, files, rounds)
				}
				if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
					t.Errorf("%s: --tmp holds %d entries after the job (%v)", tr, len(left), err)
				}
			}
		})
	}
}

// TestNPSpellings checks mpirun's -np N and -np=N and pflag's --np.
func TestNPSpellings(t *testing.T) {
	in := testInput(t, "wordcount")
	for _, np := range [][]string{{"-np", "3"}, {"-np=3"}, {"--np", "3"}, {"--np=3"}} {
		args := append(append([]string{}, np...), "-q", "--stats", "--stats-format", "json", "--top", "1", "wordcount", in)
		r := mrrun(t, args...).want(t, 0)
		var s statsJSON
		if err := json.Unmarshal([]byte(r.stderr), &s); err != nil {
			t.Fatalf("%v: stats not JSON: %v\n%s", np, err, r.stderr)
		}
		if s.Ranks != 3 || len(s.PerRank) != 3 {
			t.Errorf("%v: ranks %d (%d per-rank entries), want 3", np, s.Ranks, len(s.PerRank))
		}
	}
}

// TestStatsTurns: --stats reports the turns of a process hosting more
// ranks than turns (--turns), and none when they are off.
func TestStatsTurns(t *testing.T) {
	in := testInput(t, "wordcount")
	for _, c := range []struct {
		turns string
		want  int
	}{{"3", 3}, {"-1", 0}} {
		r := mrrun(t, "-np", "8", "--turns", c.turns, "-q", "--stats", "--stats-format", "json", "wordcount", in).want(t, 0)
		var s statsJSON
		if err := json.Unmarshal([]byte(r.stderr), &s); err != nil {
			t.Fatalf("stats not JSON: %v\n%s", err, r.stderr)
		}
		if s.Turns != c.want {
			t.Errorf("--turns %s: stats say %d turns, want %d", c.turns, s.Turns, c.want)
		}
	}
	r := mrrun(t, "-np", "8", "--turns", "2", "-q", "--stats", "wordcount", in).want(t, 0)
	if !strings.Contains(r.stderr, "turns: 2 ") {
		t.Errorf("--stats table lacks the turns:\n%s", r.stderr)
	}
}

// TestStatsJSON checks the --stats JSON shape and that its counts add up.
func TestStatsJSON(t *testing.T) {
	r := mrrun(t, "-np", "2", "-q", "--stats", "--stats-format", "json", "wordcount", testInput(t, "wordcount")).want(t, 0)
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stderr), &m); err != nil {
		t.Fatalf("stats not JSON: %v\n%s", err, r.stderr)
	}
	for _, k := range []string{"transport", "ranks", "ranks_per_node", "phases_s", "per_rank"} {
		if _, ok := m[k]; !ok {
			t.Errorf("stats JSON lacks %q", k)
		}
	}
	for _, k := range []string{"map", "combine", "exchange", "reduce"} {
		if _, ok := m["phases_s"].(map[string]any)[k]; !ok {
			t.Errorf("phases_s lacks %q", k)
		}
	}
	var s statsJSON
	if err := json.Unmarshal([]byte(r.stderr), &s); err != nil {
		t.Fatal(err)
	}
	var sent, recv, emitted int64
	for i, p := range s.PerRank {
		if p.Rank != i {
			t.Errorf("per_rank[%d].rank = %d", i, p.Rank)
		}
		sent += p.BytesSent
		recv += p.BytesReceived
		emitted += p.PairsEmitted
	}
	if s.Transport != "inproc" || sent == 0 || sent != recv || emitted == 0 {
		t.Errorf("transport %q, bytes sent %d received %d, pairs emitted %d: want inproc, sent == received > 0, pairs > 0", s.Transport, sent, recv, emitted)
	}
	for _, p := range s.PerRank {
		if p.BytesSentOffNode != 0 || p.BytesReceivedOffNode != 0 {
			t.Errorf("one node, yet rank %d moved %d, %d bytes off it", p.Rank, p.BytesSentOffNode, p.BytesReceivedOffNode)
		}
	}
	// Over two nodes, part of the traffic crosses them, and as much is
	// received off node as is sent.
	r = mrrun(t, "-np", "4", "--ranks-per-node", "2", "-q", "--stats", "--stats-format", "json", "wordcount", testInput(t, "wordcount")).want(t, 0)
	s = statsJSON{}
	if err := json.Unmarshal([]byte(r.stderr), &s); err != nil {
		t.Fatal(err)
	}
	var offSent, offRecv, all int64
	for _, p := range s.PerRank {
		offSent += p.BytesSentOffNode
		offRecv += p.BytesReceivedOffNode
		all += p.BytesSent
	}
	if offSent == 0 || offSent != offRecv || offSent > all {
		t.Errorf("2 nodes: %d bytes sent off node, %d received, of %d: want 0 < sent == received <= all", offSent, offRecv, all)
	}
	if r := mrrun(t, "-np", "4", "--ranks-per-node", "2", "-q", "--stats", "wordcount", testInput(t, "wordcount")).want(t, 0); !strings.Contains(r.stderr, "sent off node") {
		t.Errorf("2 nodes: the table has no off-node columns:\n%s", r.stderr)
	}
	// The table form names the phases.
	r = mrrun(t, "-np", "2", "-q", "--stats", "histogram", testInput(t, "histogram")).want(t, 0)
	for _, w := range []string{"phases", "map", "exchange", "bytes sent", "rank"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stats table lacks %q:\n%s", w, r.stderr)
		}
	}
}

// TestUsageErrors checks that bad command lines exit 2 with one line
// naming the problem.
func TestUsageErrors(t *testing.T) {
	wc, hist := testInput(t, "wordcount"), testInput(t, "histogram")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus", "wordcount", wc}, "unknown flag: --bogus"},
		{[]string{"-x", "wordcount", wc}, "unknown shorthand flag: 'x'"},
		{[]string{}, "no app given"},
		{[]string{"nosuchapp", wc}, `unknown app "nosuchapp"`},
		{[]string{"wordcount"}, "no input given"},
		{[]string{"-np", "0", "wordcount", wc}, "-np 0"},
		{[]string{"-np", "x", "wordcount", wc}, "invalid argument \"x\""},
		{[]string{"--dist", "zigzag", "wordcount", wc}, `--dist "zigzag"`},
		{[]string{"--dist", "cyclic", "--map", "array", "wordcount", wc}, "--dist cyclic needs the element map"},
		{[]string{"--map", "array", "spamcount", wc}, "spamcount has only the element-by-element map"},
		{[]string{"--map", "tree", "wordcount", wc}, `--map "tree"`},
		{[]string{"--gather", "most", "wordcount", wc}, `--gather "most"`},
		{[]string{"-np", "2", "--root", "2", "wordcount", wc}, "--root 2 is not a rank"},
		{[]string{"--top", "3", "histogram", hist}, "--top does not apply to histogram"},
		{[]string{"--words", "w.txt", "wordcount", wc}, "--words does not apply to wordcount"},
		{[]string{"--png", "x.png", "spamcount", wc}, "--png does not apply to spamcount"},
		{[]string{"--input-format", "xml", "linreg", wc}, `--input-format "xml"`},
		{[]string{"--output-format", "xml", "wordcount", wc}, `--output-format "xml"`},
		{[]string{"--stats-format", "xml", "wordcount", wc}, `--stats-format "xml"`},
		{[]string{"--transport", "carrier-pigeon", "wordcount", wc}, `--transport "carrier-pigeon"`},
		{[]string{"--baseline", "magic", "wordcount", wc}, `--baseline "magic"`},
		{[]string{"--baseline", "seq", "--dist", "cyclic", "wordcount", wc}, "--dist has no effect with --baseline seq"},
		{[]string{"--threshold", "5", "wordcount", wc}, "--threshold applies to --dist bestfit only"},
		{[]string{"--mode", "cyclic+fast", "wordcount", wc}, `--mode cyclic+fast: unknown mode "fast"`},
		{[]string{"--mode", "cyclic", "--gather", "root", "wordcount", wc}, "--gather with --mode"},
		{[]string{"--mode", "array", "spamcount", wc}, "--mode array: spamcount: map array: the job has only the element-by-element map"},
		{[]string{"--mode", "array+balanced", "wordcount", wc}, "--mode array+balanced: the array map gives each rank a contiguous share"},
		{[]string{"-np", "2", "--mode", "root=2", "wordcount", wc}, "--root 2 is not a rank"},
		{[]string{"--baseline", "seq", "--mode", "cyclic", "wordcount", wc}, "--mode has no effect with --baseline seq"},
		{[]string{"list", "extra"}, "list takes no arguments"},
		{[]string{"--compress", "wordcount", wc}, "--compress applies to --baseline mrmpi only"},
		{[]string{"--transport", "mpi", "wordcount", wc}, "--transport mpi: start mrrun under an MPI launcher"},
		{[]string{"--segment-bytes", "7", "wordcount", wc}, "--segment-bytes 7: want a positive multiple of 8 bytes"},
		{[]string{"--segment-bytes", "lots", "wordcount", wc}, "--segment-bytes lots"},
		{[]string{"--node-budget", "x", "wordcount", wc}, `invalid argument "x"`},
		{[]string{"--turns", "-2", "wordcount", wc}, "--turns -2: want -1 (none), 0 (GOMAXPROCS) or a number of ranks"},
		{[]string{"--memory", "lots", "wordcount", wc}, "--memory lots: want a size"},
		{[]string{"--memory", "-1", "wordcount", wc}, "--memory -1: want a size"},
		{[]string{"--memory", "1EiB", "wordcount", wc}, "--memory 1EiB: too big: more than the"},
		{[]string{"--memory", "9EiB", "wordcount", wc}, "--memory 9EiB: too big: at most 4 EiB"},
		{[]string{"--tmp", "/no/such/dir", "wordcount", wc}, "--tmp /no/such/dir: stat /no/such/dir: no such file or directory"},
		{[]string{"--tmp", hist, "wordcount", wc}, "not a directory"},
	}
	if !mrmpi.Built { // the binary under test is built without tags
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"--baseline", "mrmpi", "wordcount", wc}, "built without MR-MPI"})
	}
	for _, c := range cases {
		r := mrrun(t, c.args...)
		if r.code != 2 {
			t.Errorf("mrrun %q: exit %d, want 2 (stderr %q)", c.args, r.code, r.stderr)
			continue
		}
		checkOneLine(t, c.args, r.stderr, c.want)
		if r.stdout != "" {
			t.Errorf("mrrun %q: stdout %q, want nothing", c.args, r.stdout)
		}
	}
}

// checkOneLine checks stderr is one "mrrun: " line containing want.
func checkOneLine(t *testing.T, args []string, stderr, want string) {
	t.Helper()
	if !strings.HasPrefix(stderr, "mrrun: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("mrrun %q: stderr %q, want one line \"mrrun: ...%s...\"", args, stderr, want)
	}
}

// TestInputErrors checks failed jobs: exit 1, one line naming the file.
func TestInputErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.bmp")
	if err := os.WriteFile(bad, []byte("BMnot really a bitmap"), 0o644); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(dir, "odd.bin")
	if err := os.WriteFile(odd, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-np", "2", "wordcount", missing}, missing},
		{[]string{"-np", "2", "histogram", bad}, bad},
		{[]string{"-np", "2", "linreg", odd}, odd},
		{[]string{"-np", "2", "spamcount", "--words", missing, testInput(t, "spamcount")}, missing},
	} {
		r := mrrun(t, c.args...)
		if r.code != 1 {
			t.Errorf("mrrun %q: exit %d, want 1 (stderr %q)", c.args, r.code, r.stderr)
			continue
		}
		checkOneLine(t, c.args, r.stderr, c.want)
		if r.stdout != "" {
			t.Errorf("mrrun %q: stdout %q, want nothing", c.args, r.stdout)
		}
	}
}

// TestUnreadable checks a file the job cannot read: an error naming it,
// or with --skip-unreadable a count of the rest and the file on stderr.
// Root reads any file, so as root the binary runs as user nobody.
func TestUnreadable(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello world hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "b.txt")
	if err := os.WriteFile(secret, []byte("secret words\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) execResult {
		cmd := exec.Command(binPath, args...)
		if os.Geteuid() == 0 {
			if err := os.Chmod(filepath.Dir(binPath), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := execResult{stdout: out.String(), stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Skipf("cannot run mrrun as another user: %v", err)
		}
		return r
	}
	r := run("-np", "2", "--output-format", "tsv", "wordcount", dir)
	if r.code != 1 {
		t.Fatalf("unreadable file: exit %d, want 1; stderr %q", r.code, r.stderr)
	}
	checkOneLine(t, nil, r.stderr, secret)
	r = run("-np", "2", "--output-format", "tsv", "--skip-unreadable", "wordcount", dir)
	if r.code != 0 || r.stdout != "hello\t2\nworld\t1\n" || !strings.Contains(r.stderr, "skipped unreadable "+secret) {
		t.Fatalf("--skip-unreadable: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestOutputFile checks -o and --output-format: the file gets the result
// and no temporary file is left.
// TestOutputNotReplaced: -o naming a named pipe writes into it (a device
// such as /dev/null is the same case) instead of renaming a regular file
// over it, which had turned /dev/null into a file; -o naming a symbolic
// link replaces the file the link names and keeps the link.
func TestOutputNotReplaced(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until mrrun opens the pipe
		got <- b
	}()
	want := mrrun(t, "-np", "2", "-q", "wordcount", testInput(t, "wordcount")).want(t, 0).stdout
	mrrun(t, "-np", "2", "-q", "-o", fifo, "wordcount", testInput(t, "wordcount")).want(t, 0)
	select {
	case b := <-got:
		if string(b) != want {
			t.Errorf("read %d bytes from the pipe, want the %d of stdout", len(b), len(want))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nothing came through the pipe")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("-o %s: the pipe is now %v (%v)", fifo, fi.Mode(), err)
	}
	target := filepath.Join(dir, "target.txt")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	mrrun(t, "-np", "2", "-q", "-o", link, "wordcount", testInput(t, "wordcount")).want(t, 0)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("-o %s: the link is now %v (%v)", link, fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != want {
		t.Errorf("the link's target holds %d bytes, want the %d of stdout", len(b), len(want))
	}
}

func TestOutputFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	r := mrrun(t, "-np", "2", "-q", "-o", out, "--output-format", "json", "--top", "5", "wordcount", testInput(t, "wordcount")).want(t, 0)
	if r.stdout != "" {
		t.Errorf("stdout %q with -o", r.stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		App   string
		Words []struct {
			Word  string
			Count int64
		}
	}
	if err := json.Unmarshal(b, &v); err != nil || v.App != "wordcount" || len(v.Words) != 5 {
		t.Fatalf("output %s: %v, %+v", b, err, v)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only out.json", len(entries))
	}
	for _, f := range []string{"text", "csv"} {
		r := mrrun(t, "-np", "2", "-q", "--output-format", f, "linreg", testInput(t, "linreg")).want(t, 0)
		if !strings.HasPrefix(strings.TrimSpace(r.stdout), "n") || !strings.Contains(r.stdout, "slope") {
			t.Errorf("--output-format %s: %q", f, r.stdout)
		}
	}
}

// TestPNG checks --png for histogram and linreg.
func TestPNG(t *testing.T) {
	for _, app := range []string{"histogram", "linreg"} {
		p := filepath.Join(t.TempDir(), app+".png")
		mrrun(t, "-np", "2", "-q", "--png", p, app, testInput(t, app)).want(t, 0)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s --png: %v", app, err)
		}
		if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Errorf("%s --png: %v image", app, b)
		}
	}
}

// TestSummaries checks the stderr summaries and that -q drops them.
func TestSummaries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one two two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.bin"), []byte("x\x00y"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mrrun(t, "-np", "2", "--output-format", "tsv", "wordcount", dir).want(t, 0)
	if r.stdout != "two\t2\none\t1\n" || !strings.Contains(r.stderr, "skipped 1 binary file: "+filepath.Join(dir, "b.bin")) {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = mrrun(t, "-np", "2", "-q", "wordcount", dir).want(t, 0)
	if r.stderr != "" {
		t.Errorf("-q: stderr %q", r.stderr)
	}
	// Many binary files: the first five and a count, all with --verbose;
	// a name with an escape sequence goes quoted, never raw.
	for i := range 7 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("c%d.bin", i)), []byte("x\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	evil := filepath.Join(dir, "z\x1b[2J.bin")
	if err := os.WriteFile(evil, []byte("x\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = mrrun(t, "-np", "2", "wordcount", dir).want(t, 0)
	if !strings.Contains(r.stderr, "skipped 9 binary files: ") || !strings.Contains(r.stderr, " and 4 more (--verbose lists them all)") || strings.Count(r.stderr, ".bin") != 5 {
		t.Errorf("9 binary files: stderr %q", r.stderr)
	}
	r = mrrun(t, "-np", "2", "--verbose", "wordcount", dir).want(t, 0)
	if strings.Count(r.stderr, ".bin") != 9 || strings.Contains(r.stderr, "\x1b") || !strings.Contains(r.stderr, `"`+filepath.Join(dir, `z\x1b[2J.bin`)+`"`) {
		t.Errorf("--verbose: stderr %q", r.stderr)
	}
	r = mrrun(t, "-np", "2", "wordcount", evil+".missing").want(t, 1)
	if strings.Contains(r.stderr, "\x1b") || !strings.Contains(r.stderr, `z\x1b[2J.bin.missing`) {
		t.Errorf("an error naming a file with an escape sequence: stderr %q", r.stderr)
	}
}

// TestInfo checks --version, list and help.
func TestInfo(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		// mrrun VERSION (GO, OS/ARCH, CGO_ENABLED=0|1[, race])
		r := mrrun(t, args...).want(t, 0)
		want := "mrrun " + version + " (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ", CGO_ENABLED="
		if !strings.HasPrefix(r.stdout, want) || strings.HasSuffix(r.stdout, ", race)\n") != raceEnabled {
			t.Errorf("%v: %q, want %q...", args, r.stdout, want)
		}
	}
	r := mrrun(t, "list").want(t, 0)
	for _, w := range []string{"histogram:", "linreg:", "wordcount:", "spamcount:", "--top", "--words", "--input-format", "--png", "BMP", "mbox"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("list lacks %q", w)
		}
	}
	r = mrrun(t, "--help").want(t, 0)
	for _, w := range []string{"Usage: mrrun", "--np", "--dist", "--gather", "--output-format", "--stats", "--progress"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
}

// TestSIGINT interrupts a job in its map phase: every rank stops, mrrun
// exits 130 within a bounded time and leaves no output file. The signal
// goes out once the progress bar (forced on a pipe) shows input read.
func TestSIGINT(t *testing.T) { testInterrupt(t, os.Interrupt) }

// TestSIGHUP: a closed terminal or a dropped ssh session (SIGHUP) ends a
// job as SIGINT does: one line, exit 130, and nothing left in the output
// directory or where pairs spill.
func TestSIGHUP(t *testing.T) { testInterrupt(t, syscall.SIGHUP) }

// testInterrupt sends sig to a wordcount job that spills, once it shows
// progress, and checks that it stops within 3 s, exits 130 with one line,
// and leaves no output and no spill files.
func testInterrupt(t *testing.T, sig os.Signal) {
	if testing.Short() {
		t.Skip("generates a large corpus")
	}
	size := int64(40 << 20) // the -race binary reads about 20 MB/s
	if !raceEnabled {
		size = 150 << 20
	}
	in := t.TempDir()
	if err := wordcount.Generate(in, size, 8, 2); err != nil {
		t.Fatal(err)
	}
	outDir, spill := t.TempDir(), t.TempDir()
	out := filepath.Join(outDir, "out.tsv")
	cmd := exec.Command(binPath, "-np", "4", "--progress", "--memory", "8MiB", "--tmp", spill, "-o", out, "wordcount", in)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	started := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		once := sync.Once{}
		for {
			n, err := stderr.Read(buf)
			errb.Write(buf[:n])
			if strings.Contains(errb.String(), " MB/") {
				once.Do(func() { close(started) })
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no progress within 30 s")
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { <-copied; done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("mrrun still running 10 s after %v", sig)
	}
	took := time.Since(sent)
	t.Logf("mrrun exited %v after %v", took.Round(time.Millisecond), sig)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130; stderr %q", err, errb.String())
	}
	if !strings.HasSuffix(errb.String(), "\r\x1b[Kmrrun: interrupted\n") {
		t.Errorf("stderr ends %q, want the bar cleared and then \"mrrun: interrupted\"", errb.String()[max(0, errb.Len()-120):])
	}
	if took > 3*time.Second {
		t.Errorf("took %v to stop after %v", took, sig)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Errorf("output dir holds %d entries after the interrupt, want none", len(entries))
	}
	if entries, _ := os.ReadDir(spill); len(entries) != 0 {
		t.Errorf("--tmp holds %d entries after the interrupt, want none", len(entries))
	}
}

// TestProfiles checks --cpuprofile and --memprofile write profiles.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	mrrun(t, "-np", "2", "-q", "--cpuprofile", cpu, "--memprofile", mem, "--top", "1", "wordcount", testInput(t, "wordcount")).want(t, 0)
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // profiles are gzipped protobufs
			t.Errorf("%s: %d bytes, %v: want a gzipped profile", p, len(b), err)
		}
	}
	r := mrrun(t, "--baseline", "seq", "-np", "2", "wordcount", testInput(t, "wordcount")).want(t, 2)
	checkOneLine(t, nil, r.stderr, "--np has no effect with --baseline seq")
}

// children returns the pids of the processes whose parent is pid.
func children(pid int) []int { return childPIDs(pid) }

// shmLeft returns the shm segment files of launcher pid still in /dev/shm.
func shmLeft(pid int) []string {
	m, _ := filepath.Glob(fmt.Sprintf("/dev/shm/pgasmr-shm-%d-*", pid))
	return m
}

// startShmJob starts a 3-rank shm wordcount job long enough to be
// interrupted and returns it once its ranks run.
func startShmJob(t *testing.T) (*exec.Cmd, *bytes.Buffer, []int) {
	t.Helper()
	size := int64(40 << 20)
	if !raceEnabled {
		size = 150 << 20
	}
	in := t.TempDir()
	if err := wordcount.Generate(in, size, 8, 3); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "--transport", "shm", "-np", "3", "-q", "wordcount", in)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var kids []int
	for deadline := time.Now().Add(20 * time.Second); len(kids) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("found %d rank processes, want 3", len(kids))
		}
		kids = children(cmd.Process.Pid)
	}
	time.Sleep(300 * time.Millisecond) // into the map
	return cmd, &errb, kids
}

// waitExit waits at most limit for cmd and returns its exit status and how
// long it took.
func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, time.Since(start)
	case <-time.After(limit):
		cmd.Process.Kill()
		t.Fatalf("mrrun still running %v later", limit)
	}
	return 0, 0
}

// checkNothingLeft checks that no rank process and no segment remains.
func checkNothingLeft(t *testing.T, launcher int, kids []int) {
	t.Helper()
	for _, k := range kids {
		if err := syscall.Kill(k, 0); err == nil {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", k))
			if !strings.Contains(string(b), ") Z ") {
				t.Errorf("rank process %d still running", k)
			}
		}
	}
	if left := shmLeft(launcher); len(left) > 0 {
		t.Errorf("segments left: %v", left)
	}
}

// TestShmKill: SIGKILL one rank process of an shm job in the middle of
// its map: mrrun exits 1 within 5 s with one line naming the rank, and
// leaves no process and no segment.
// TestShmRankSignal: a rank process stopped by a signal (SIGTERM) fails
// the job with one line that names the signal, not "context canceled".
func TestShmRankSignal(t *testing.T) {
	cmd, errb, kids := startShmJob(t)
	if err := syscall.Kill(kids[1], syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, took := waitExit(t, cmd, 10*time.Second)
	t.Logf("mrrun exited %d %v after the signal: %q", code, took.Round(time.Millisecond), errb.String())
	if code != 1 || took > 5*time.Second {
		t.Errorf("exit %d after %v, want 1 within 5 s", code, took)
	}
	checkOneLine(t, nil, errb.String(), "interrupted by SIGTERM")
	checkNothingLeft(t, cmd.Process.Pid, kids)
}

func TestShmKill(t *testing.T) {
	cmd, errb, kids := startShmJob(t)
	if err := syscall.Kill(kids[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code, took := waitExit(t, cmd, 10*time.Second)
	t.Logf("mrrun exited %d %v after the kill: %q", code, took.Round(time.Millisecond), errb.String())
	if code != 1 || took > 5*time.Second {
		t.Errorf("exit %d after %v, want 1 within 5 s", code, took)
	}
	checkOneLine(t, nil, errb.String(), "killed")
	if !strings.Contains(errb.String(), "rank ") {
		t.Errorf("stderr %q does not name the rank", errb.String())
	}
	checkNothingLeft(t, cmd.Process.Pid, kids)
}

// TestShmInterrupt: SIGINT to the launcher stops every rank: exit 130,
// one line, nothing left.
func TestShmInterrupt(t *testing.T) {
	cmd, errb, kids := startShmJob(t)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code, took := waitExit(t, cmd, 10*time.Second)
	t.Logf("mrrun exited %d %v after SIGINT", code, took.Round(time.Millisecond))
	if code != 130 || errb.String() != "mrrun: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want 130 and \"mrrun: interrupted\"", code, errb.String())
	}
	if took > 3*time.Second {
		t.Errorf("took %v to stop", took)
	}
	checkNothingLeft(t, cmd.Process.Pid, kids)
}

// TestShmErrors: a bad input under shm is one line naming the rank and
// the file, exit 1; --stats names the transport.
func TestShmErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.bmp")
	if err := os.WriteFile(bad, []byte("BMnot a bitmap"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mrrun(t, "--transport", "shm", "-np", "2", "histogram", bad).want(t, 1)
	checkOneLine(t, nil, r.stderr, bad)
	if !strings.HasPrefix(r.stderr, "mrrun: rank ") {
		t.Errorf("stderr %q does not start by naming the rank", r.stderr)
	}
	r = mrrun(t, "--transport", "shm", "-np", "2", "-q", "--stats", "--stats-format", "json", "linreg", testInput(t, "linreg")).want(t, 0)
	var s statsJSON
	i := strings.Index(r.stderr, "{")
	if i < 0 || json.Unmarshal([]byte(r.stderr[i:]), &s) != nil || s.Transport != "shm" || s.Ranks != 2 || len(s.PerRank) != 2 {
		t.Errorf("stats under shm: %q", r.stderr)
	}
}

// TestExec checks mrrun exec's usage errors and its exit status for
// programs that are not pgas programs at all.
func TestExec(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "-np", "2"}, "no program given"},
		{[]string{"exec", "-np", "0", "--", "true"}, "-np 0"},
		{[]string{"exec", "--transport", "inproc", "--", "true"}, `--transport "inproc"`},
		{[]string{"exec", "--segment-bytes", "7", "--", "true"}, "--segment-bytes 7"},
		{[]string{"exec", "--cache", "lines=3,line=100", "--", "true"}, "--cache lines=3,line=100: pgas: cache line = 100 bytes"},
		{[]string{"--cache", "lines=x", "wordcount", "."}, `--cache lines=x: pgas: cache setting "lines=x"`},
	} {
		r := mrrun(t, c.args...).want(t, 2)
		checkOneLine(t, c.args, r.stderr, c.want)
	}
	mrrun(t, "exec", "-np", "2", "--", "true").want(t, 0)
	// --cache reaches the ranks as launch.EnvCache, which FromEnv reads.
	if r := mrrun(t, "exec", "-np", "2", "--cache", "lines=8", "--", "sh", "-c", "echo $"+launch.EnvCache).want(t, 0); r.stdout != "lines=8\nlines=8\n" {
		t.Errorf("ranks' %s: %q; want lines=8 from each", launch.EnvCache, r.stdout)
	}
	r := mrrun(t, "exec", "-np", "2", "--", "false").want(t, 1)
	checkOneLine(t, nil, r.stderr, "exit status 1")
	r = mrrun(t, "exec", "-np", "2", "--", "/nonexistent/prog").want(t, 1)
	checkOneLine(t, nil, r.stderr, "/nonexistent/prog")
}

// TestShmProgress: under shm the launcher draws the bar from its ranks'
// reports, which never reach the user's stderr; without a bar the ranks
// send none.
func TestShmProgress(t *testing.T) {
	in := testInput(t, "wordcount")
	r := mrrun(t, "--transport", "shm", "-np", "2", "--progress", "--output-format", "tsv", "wordcount", in).want(t, 0)
	if strings.Contains(r.stderr, "mrrun-progress") || strings.Contains(r.stderr, "\x00") {
		t.Errorf("rank progress reports leaked to stderr: %q", r.stderr)
	}
	if !strings.HasSuffix(r.stderr, "\r\x1b[K") {
		t.Errorf("stderr %q: want the bar cleared at the end", r.stderr)
	}
	if want := libSeq(t, "wordcount", in); r.stdout != want {
		t.Errorf("stdout differs from Seq's")
	}
	r = mrrun(t, "--transport", "shm", "-np", "2", "--top", "1", "wordcount", in).want(t, 0)
	if r.stderr != "" {
		t.Errorf("piped stderr %q, want nothing", r.stderr)
	}
}

// TestRankStderr checks the launcher's filter of its ranks' stderr: error
// lines kept per rank, progress reports summed, the rest passed through.
func TestRankStderr(t *testing.T) {
	var out bytes.Buffer
	bar := new(mr.Progress)
	s := &rankStderr{w: &out, lines: map[int]string{}, bar: bar, seen: map[int][2]int64{}}
	in := progressPrefix + "0 1 100 5 1000\n" + progressPrefix + "1 0 50 5 1000\nwordcount: skipped 1 binary file: x\n" +
		progressPrefix + "0 2 300 5 1000\nmrrun: rank 1: boom\nmrrun: rank 1: echo\nmrrun: interrupted\npartial"
	for len(in) > 0 { // in pieces that cut lines
		n := min(7, len(in))
		s.Write([]byte(in[:n]))
		in = in[n:]
	}
	s.flush()
	if f, b, tf, tb := bar.Snapshot(); f != 2 || b != 350 || tf != 5 || tb != 1000 {
		t.Errorf("progress = %d files %d bytes of %d, %d; want 2, 350 of 5, 1000", f, b, tf, tb)
	}
	if got := out.String(); got != "wordcount: skipped 1 binary file: x\npartial" {
		t.Errorf("passed through %q", got)
	}
	if len(s.lines) != 1 || s.lines[1] != "rank 1: boom" {
		t.Errorf("error lines %v", s.lines)
	}
}

// TestSpillInterruptAndKill: a job spilling under --memory that is
// interrupted (SIGINT) exits 130 and leaves nothing in --tmp; one killed
// outright (SIGKILL) leaves its spill directory, which the next job that
// spills there removes, since its name proves its process dead.
func TestSpillInterruptAndKill(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a corpus")
	}
	in := t.TempDir()
	if err := wordcount.GenerateVocabulary(in, 30<<20, 6, 3, 4_000_000_000); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// start runs the job and returns once it has spilled.
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command(binPath, "-np", "2", "--memory", "1MiB", "--tmp", tmp, "-q", "-o", filepath.Join(t.TempDir(), "out.tsv"), "wordcount", in)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
				return cmd
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("no spill directory in %s within 30 s", tmp)
			}
		}
	}
	wait := func(cmd *exec.Cmd) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatal("mrrun still running 10 s after the signal")
			return nil
		}
	}

	cmd := start()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if ee, ok := wait(cmd).(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("interrupted: exit %v, want status 130", cmd.ProcessState)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Fatalf("interrupted: --tmp holds %s", ents[0].Name())
	}

	cmd = start()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	wait(cmd)
	ents, _ := os.ReadDir(tmp)
	if len(ents) == 0 {
		t.Fatal("killed: no spill directory left to clean (the test proves nothing)")
	}
	left := ents[0].Name()
	// The next job that spills there removes it.
	mrrun(t, "-np", "2", "--memory", "16KiB", "--node-combine", "off", "--tmp", tmp, "-q", "-o", filepath.Join(t.TempDir(), "out.tsv"),
		"wordcount", testInput(t, "wordcount")).want(t, 0)
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Fatalf("the next job left %s in --tmp (the killed job's was %s)", ents[0].Name(), left)
	}
}

// TestSpillDiskFull: a job that spills onto a full disk (a 64 KiB tmpfs,
// where this test may mount one) fails with exit 1 and one line naming
// the file and "no space left on device", writes no output, and leaves
// nothing on the disk.
func TestSpillDiskFull(t *testing.T) {
	tmp := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", tmp).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v %s", err, out)
	}
	defer exec.Command("umount", tmp).Run()
	out := filepath.Join(t.TempDir(), "out.tsv")
	r := mrrun(t, "-np", "2", "--memory", "16KiB", "--node-combine", "off", "--tmp", tmp, "-o", out, "wordcount", testInput(t, "wordcount")).want(t, 1)
	checkOneLine(t, nil, r.stderr, "no space left on device")
	if !strings.Contains(r.stderr, tmp+"/pgasmr-spill-") {
		t.Errorf("stderr %q does not name the spill file in %s", r.stderr, tmp)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-o %s exists after the failure (%v)", out, err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("the full disk holds %s after the job", ents[0].Name())
	}
}

// TestLink: --link emulates a network between --ranks-per-node's logical
// nodes on inproc, with the same output, and is refused where it has no
// nodes to link or cannot be parsed.
func TestLink(t *testing.T) {
	for _, app := range []string{"histogram", "wordcount"} {
		in := testInput(t, app)
		want := mrrun(t, "-np", "4", "-q", app, in).want(t, 0).stdout
		got := mrrun(t, "-np", "4", "--ranks-per-node", "2", "--link", "20us,1GB/s", "-q", app, in).want(t, 0).stdout
		if got != want {
			t.Errorf("%s: output with --link differs from without", app)
		}
	}
	in := testInput(t, "wordcount")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-np", "4", "--link", "5us"}, "--ranks-per-node"},
		{[]string{"-np", "4", "--ranks-per-node", "2", "--link", "soon"}, "latency"},
		{[]string{"-np", "4", "--ranks-per-node", "2", "--link", "5us,fast"}, "bandwidth"},
		{[]string{"-np", "4", "--ranks-per-node", "2", "--link", "-5us"}, "latency"},
		{[]string{"--baseline", "seq", "--ranks-per-node", "2", "--link", "5us"}, "no effect"},
	} {
		r := mrrun(t, append(c.args, "wordcount", in)...).want(t, 2)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q does not say %q", c.args, r.stderr, c.want)
		}
	}
	for v, want := range map[string]wrap.NodeLink{
		"5us":         {Latency: 5 * time.Microsecond},
		"5us,5GB/s":   {Latency: 5 * time.Microsecond, BytesPerSec: 5e9},
		"1ms, 100MiB": {Latency: time.Millisecond, BytesPerSec: 100 << 20},
	} {
		if got, err := wrap.ParseLink(v); err != nil || got != want {
			t.Errorf("wrap.ParseLink(%q) = %+v, %v; want %+v", v, got, err, want)
		}
	}
}
