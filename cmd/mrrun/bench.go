package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/apps/mrmpi"
	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/internal/bench"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas/mpi"
	"github.com/pgasmr/pgasmr/reduce"
)

const benchHelp = `Usage: mrrun bench [flags]

Runs every app of --apps on every rank count of --ranks in every mode of
--modes, and the baselines of --baselines, on generated inputs of --size
bytes (or the inputs of --input). Each configuration runs --warmup untimed
and --reps timed times (the timed runs interleaved, one round over every
configuration per repetition, so a drifting machine slows them alike); the table (or --json) gives the median wall time
of the job (reading included), the throughput in MB/s (10^6 input bytes
per second) and the speed-up against seq (seq's median / this median,
same app and input). seq always runs: it is the reference for the
speed-up, and every run's output must be byte-identical to seq's (a
mismatch is an error; --external commands' outputs are not compared: see
below). Baselines report ranks 1 (seq) and GOMAXPROCS
(goroutines). Under the table (or as "build" in the JSON) the binary
that ran the jobs says how it was built (mrrun --version): a static build,
CGO_ENABLED=0, starts about 2 ms sooner than a cgo one, which counts in
--exec's whole-process times.

Modes (combine with +, e.g. cyclic+no-collectives; the form mrrun --mode
takes and that every job's options print as):
  default          the app's fast path and default gather
  array, element   the array map (not spamcount) or the element map (block)
  cyclic, balanced, bestfit
                   the element map with that distribution
  threshold=T      best-fit's threshold on the load difference, in bytes
  no-collectives   move pairs element by element
  gather-all, gather-root, gather-none, gather-partitioned
                   the gather mode
  root=N           the rank that gets the result

External commands (--external [APP:]NAME=COMMAND, repeatable) put any
tool beside pgasmr in the same rounds (same warm-up, reps and order) and
the same table, JSON and plot: NAME gets a row per rank count of --ranks,
for every app of --apps, or for APP only. COMMAND runs under sh -c with
{input} replaced by the app's input path (several --input paths: each,
separated by spaces), already quoted for sh (so write {input}, not
'{input}'), and {ranks} by the row's rank count; {input} is required.
Like an --exec run it is timed as a whole process (sh's start included),
from start to exit; its exit status is checked (a failure stops the bench,
naming NAME, the command and its stderr's first lines), its output is
discarded and not compared with seq's: its rows say so (NAME* and a
footnote in the table, "external" in the JSON). NAME (letters, digits,
'.', '_', '-') must not be a baseline, a mode or an app, and is given
once per app. For example Phoenix++, which takes its thread count from
MR_NUMTHREADS:
  mrrun bench --exec --apps wordcount --ranks 1,2 --input wordcount=big.txt \
      --external 'wordcount:phoenix=MR_NUMTHREADS={ranks} ./word_count {input}'

Flags:
`

// benchFlags are the flags of mrrun bench.
type benchFlags struct {
	apps, modes, baselines, inputs []string
	externals                      []string
	ranks, size, dir, plot         string
	transport                      string
	reps, warmup, messages         int
	seed                           uint64
	json, quiet, exec              bool
}

func (f *benchFlags) define(fs *pflag.FlagSet) {
	var names []string
	for _, a := range apps {
		names = append(names, a.name)
	}
	fs.StringSliceVar(&f.apps, "apps", names, "apps to run, comma-separated")
	fs.StringVar(&f.ranks, "ranks", "", "rank counts, comma-separated (default 1, 2 and the CPU count)")
	fs.StringSliceVar(&f.modes, "modes", []string{"default"}, "modes, comma-separated; each a mode name or names joined by + (see above)")
	baselines := []string{"seq", "goroutines"}
	if mrmpi.Built {
		baselines = append(baselines, "mrmpi")
	}
	fs.StringSliceVar(&f.baselines, "baselines", baselines, "baselines: seq, goroutines, mrmpi (MapReduce-MPI at every --ranks count under mpirun; in builds with -tags mpi,mrmpi) or none (seq runs anyway: speed-ups are relative to it)")
	fs.IntVar(&f.reps, "reps", 3, "timed repetitions of each configuration (the median is reported)")
	fs.IntVar(&f.warmup, "warmup", 1, "untimed runs of each configuration before the timed ones (their output is checked too)")
	fs.StringVar(&f.size, "size", "32MB", "size of each app's generated input (k, MB, MiB, ... suffixes)")
	fs.IntVar(&f.messages, "messages", 0, "spamcount: messages to generate (default: --size / 4000, about 4 kB each)")
	fs.StringArrayVar(&f.inputs, "input", nil, "APP=PATH: use PATH (file or directory) as APP's input instead of generating one (repeatable)")
	fs.StringArrayVar(&f.externals, "external", nil, "[APP:]NAME=COMMAND: also time COMMAND (run by sh -c; {input}: the app's input path, quoted; {ranks}: the row's rank count) at every --ranks count, as rows NAME, output not compared (repeatable; APP: for that app only; see above)")
	fs.StringVar(&f.dir, "dir", "", "keep generated inputs in DIR and reuse them on the next run (default: a temporary directory, removed at the end)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the generated inputs")
	fs.StringVar(&f.transport, "transport", "inproc", "how ranks communicate: "+strings.Join(transports, ", "))
	fs.BoolVar(&f.exec, "exec", false, "run every job as a fresh mrrun process (as a user runs it) instead of in this process; implied by --transport shm")
	fs.BoolVar(&f.json, "json", false, `print {"results":[...]} as JSON instead of a table`)
	fs.StringVar(&f.plot, "plot", "", "also draw throughput and speed-up against ranks to FILE.png or FILE.svg")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines on stderr")
}

// benchMode is one parsed --modes entry: job options (mr.Options) and
// their String form, which names the mode in the results whatever the
// order of the parts the user wrote.
type benchMode struct {
	name string
	opts mr.Options
}

// parseBenchMode parses one --modes entry, with the checks of mrrun's
// --mode (checkArrayMap).
func parseBenchMode(entry string) (benchMode, error) {
	o, err := mr.ParseOptions(entry)
	if err == nil {
		err = checkArrayMap(o)
	}
	if err != nil {
		return benchMode{}, usagef("--modes %s: %v", entry, err)
	}
	return benchMode{name: o.String(), opts: o}, nil
}

// jobOpts returns the job options of mode m for app a, resolved with the
// app's defaults as a run's flags are; ok is false if a cannot run in m
// (the array map of an app without one).
func (m benchMode) jobOpts(a *app) (o jobOpts, ok bool) {
	if m.opts.Validate(a.defaults) != nil {
		return o, false
	}
	o.Options = m.opts.Resolve(a.defaults)
	return o, true
}

// parseRanks parses --ranks; "" gives 1, 2 and the CPU count. The result
// is sorted and without duplicates.
func parseRanks(s string) ([]int, error) {
	if s == "" {
		return dedupSorted([]int{1, 2, runtime.NumCPU()}), nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, usagef("--ranks %q: want comma-separated rank counts of at least 1 (like 1,2,4)", s)
		}
		out = append(out, n)
	}
	return dedupSorted(out), nil
}

func dedupSorted(v []int) []int {
	slices.Sort(v)
	return slices.Compact(v)
}

// benchPlan is the checked configuration of a bench run.
type benchPlan struct {
	apps      []*app
	ranks     []int
	modes     []benchMode
	baselines []string // always starts with seq
	inputs    map[string][]string
	size      int64
	messages  int
	reps      int    // timed runs per configuration
	warmup    int    // untimed runs before them
	plotFmt   string // "", "png" or "svg"
	exec      bool   // every job a fresh mrrun process
	externals []benchExternal
}

// plan checks the flags.
func (f *benchFlags) plan(fs *pflag.FlagSet) (benchPlan, error) {
	var p benchPlan
	if fs.NArg() > 0 {
		return p, usagef("bench takes no arguments (got %q; inputs go in --input APP=PATH)", strings.Join(fs.Args(), " "))
	}
	for _, name := range f.apps {
		a, err := findApp(strings.TrimSpace(name))
		if err != nil {
			return p, usagef("--apps: %v", err)
		}
		if !slices.Contains(p.apps, a) {
			p.apps = append(p.apps, a)
		}
	}
	if len(p.apps) == 0 {
		return p, usagef("--apps: no app given")
	}
	var err error
	if p.ranks, err = parseRanks(f.ranks); err != nil {
		return p, err
	}
	if len(f.modes) == 0 {
		return p, usagef("--modes: no mode given (want %s)", strings.Join(mr.ModeNames, ", "))
	}
	for _, entry := range f.modes {
		entry = strings.TrimSpace(entry)
		m, err := parseBenchMode(entry)
		if err != nil {
			return p, err
		}
		if !slices.ContainsFunc(p.apps, func(a *app) bool { _, ok := m.jobOpts(a); return ok }) {
			return p, usagef("--modes %s: none of the apps has the array map", entry)
		}
		if !slices.ContainsFunc(p.modes, func(o benchMode) bool { return o.name == m.name }) { // the same options, in any order
			p.modes = append(p.modes, m)
		}
	}
	p.baselines = []string{"seq"}
	for _, b := range f.baselines {
		switch b = strings.TrimSpace(b); b {
		case "seq", "none":
		case "goroutines", "mrmpi":
			if b == "mrmpi" && !mrmpi.Built {
				return p, usagef("--baselines mrmpi: %v", mrmpi.ErrNotBuilt)
			}
			if !slices.Contains(p.baselines, b) {
				p.baselines = append(p.baselines, b)
			}
		default:
			return p, usagef("--baselines %q: want seq, goroutines, mrmpi or none (seq runs anyway: it is the reference)", b)
		}
	}
	if f.reps < 1 {
		return p, usagef("--reps %d: need at least 1", f.reps)
	}
	if f.warmup < 0 {
		return p, usagef("--warmup %d: must not be negative", f.warmup)
	}
	p.reps, p.warmup = f.reps, f.warmup
	if p.size, err = parseSize(f.size); err != nil {
		return p, usagef("--size: %v", err)
	}
	if p.size < 1 {
		return p, usagef("--size %s: need at least 1 byte", f.size)
	}
	if f.messages < 0 {
		return p, usagef("--messages %d: must not be negative", f.messages)
	}
	p.messages = f.messages
	if p.messages == 0 {
		p.messages = int(max(1, p.size/4000))
	}
	if !slices.Contains(transports, f.transport) {
		return p, usagef("--transport %q: not available in this build (have: %s)", f.transport, strings.Join(transports, ", "))
	}
	if f.transport == "mpi" && !mpi.Built {
		return p, usagef("--transport mpi: this mrrun was built without MPI (go build -tags mpi ./cmd/mrrun); bench then starts every job with mpirun")
	}
	p.exec = f.exec || f.transport != "inproc"
	p.inputs = map[string][]string{}
	for _, in := range f.inputs {
		name, path, ok := strings.Cut(in, "=")
		if !ok || path == "" {
			return p, usagef("--input %q: want APP=PATH", in)
		}
		a, err := findApp(name)
		if err != nil {
			return p, usagef("--input %s: %v", in, err)
		}
		if !slices.Contains(p.apps, a) {
			return p, usagef("--input %s: %s is not in --apps", in, a.name)
		}
		if _, err := os.Stat(path); err != nil {
			return p, fmt.Errorf("--input %s: %w", in, err)
		}
		p.inputs[a.name] = append(p.inputs[a.name], path)
	}
	for _, v := range f.externals {
		e, err := parseExternal(v)
		if err != nil {
			return p, err
		}
		if e.app != "" && !slices.ContainsFunc(p.apps, func(a *app) bool { return a.name == e.app }) {
			return p, usagef("--external %q: %s is not in --apps", v, e.app)
		}
		for _, o := range p.externals {
			if o.name == e.name && (o.app == "" || e.app == "" || o.app == e.app) {
				return p, usagef("--external %q: %s is given twice for %s", v, e.name, cmp.Or(e.app, o.app, "the same apps"))
			}
		}
		p.externals = append(p.externals, e)
	}
	if f.plot != "" {
		switch strings.ToLower(filepath.Ext(f.plot)) {
		case ".png":
			p.plotFmt = "png"
		case ".svg":
			p.plotFmt = "svg"
		default:
			return p, usagef("--plot %s: want a .png or .svg file name", f.plot)
		}
		if st, err := os.Stat(filepath.Dir(f.plot)); err != nil || !st.IsDir() {
			return p, usagef("--plot %s: directory %s does not exist", f.plot, filepath.Dir(f.plot))
		}
	}
	return p, nil
}

// cmdBench is mrrun bench.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mrrun bench")
	var f benchFlags
	f.define(fs)
	if err := parseFlags(fs, args, stdout, benchHelp); err != nil {
		return err
	}
	p, err := f.plan(fs)
	if err != nil {
		return err
	}
	progress := func(format string, args ...any) {
		if !f.quiet {
			fmt.Fprintf(stderr, "bench: "+format+"\n", args...)
		}
	}

	dir := f.dir
	if dir == "" {
		if len(p.inputs) < len(p.apps) {
			if dir, err = os.MkdirTemp("", "mrrun-bench"); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			defer os.RemoveAll(dir)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--dir: %w", err)
	}

	if len(p.externals) > 0 && !p.exec {
		progress("note: external commands are timed as whole processes, pgasmr's jobs in this process; --exec times both alike")
	}
	var rows []benchRow
	for _, a := range p.apps {
		inputs := p.inputs[a.name]
		if inputs == nil {
			in, err := benchInput(ctx, a, dir, p, f.seed, progress)
			if err != nil {
				return err
			}
			inputs = []string{in}
		}
		rs, err := benchApp(ctx, a, inputs, p, f.transport, progress)
		if err != nil {
			return err
		}
		rows = append(rows, rs...)
	}

	// The numbers first: a plot that cannot be written must not lose them.
	if f.json {
		b, err := json.MarshalIndent(struct {
			Build   buildInfo  `json:"build"` // the mrrun binary that ran the jobs
			Results []benchRow `json:"results"`
		}{readBuildInfo(), rows}, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	} else if err := writeBenchTable(stdout, rows); err != nil {
		return err
	} else if _, err := fmt.Fprintf(stdout, "ran by %s\n", versionLine()); err != nil {
		return err
	}
	if p.plotFmt != "" {
		if err := writeFileAtomic(ctx, f.plot, func(w io.Writer) error { return bench.WritePlot(w, p.plotFmt, plotResults(rows)) }); err != nil {
			return fmt.Errorf("--plot %s: %w", f.plot, err)
		}
	}
	return nil
}

// benchInput returns the generated input of a in dir, generating it if it
// is not there: into a temporary name renamed at the end, so an input
// that exists is complete.
func benchInput(ctx context.Context, a *app, dir string, p benchPlan, seed uint64, progress func(string, ...any)) (string, error) {
	var name string
	switch a.name {
	case "histogram":
		name = fmt.Sprintf("histogram-%d-s%d.bmp", p.size, seed)
	case "linreg":
		name = fmt.Sprintf("linreg-%d-s%d.int8", p.size, seed)
	case "wordcount":
		name = fmt.Sprintf("wordcount-%d-s%d", p.size, seed)
	case "spamcount":
		name = fmt.Sprintf("spamcount-%d-s%d", p.messages, seed)
	default:
		return "", fmt.Errorf("bench: no generator for %s (give its input with --input %s=PATH)", a.name, a.name)
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		progress("%s: reusing %s", a.name, path)
		return path, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("bench: %s: %w", a.name, err)
	}
	writeFile := func(gen func(w io.Writer) error) error {
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		return writeClose(f, gen)
	}
	var err error
	switch a.name {
	case "histogram":
		progress("%s: generating a %d-byte BMP image", a.name, p.size)
		err = writeFile(func(w io.Writer) error { return histogram.GenerateBytes(w, p.size, seed) })
	case "linreg":
		points := max(1, p.size/2)
		progress("%s: generating %d int8 points", a.name, points)
		err = writeFile(func(w io.Writer) error { return linreg.Generate(w, points, "int8", seed) })
	case "wordcount":
		files := int(min(256, max(8, p.size>>20)))
		progress("%s: generating %d bytes of text in %d files", a.name, p.size, files)
		err = wordcount.Generate(tmp, p.size, files, seed)
	case "spamcount":
		progress("%s: generating %d messages", a.name, p.messages)
		err = spamcount.Generate(tmp, p.messages, seed)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("bench: generating the %s input: %w", a.name, err)
	}
	return path, nil
}

// inputBytes is the total size of the regular files under paths, as the
// apps list them (mr.ListFiles).
func inputBytes(paths []string) (int64, error) {
	files, _, err := mr.ListFiles(context.Background(), paths, mr.ListOptions{})
	var n int64
	for _, f := range files {
		n += f.Size
	}
	return n, err
}

// benchApp runs every configuration of a on inputs: the baselines (seq
// first), the external commands, then every mode on every rank count.
// Repetitions are interleaved, round by round over all the
// configurations, so that a machine whose speed drifts (a shared host)
// slows every configuration alike instead of the ones that happened to run
// last.
func benchApp(ctx context.Context, a *app, inputs []string, p benchPlan, transport string, progress func(string, ...any)) ([]benchRow, error) {
	size, err := inputBytes(inputs)
	if err != nil {
		return nil, fmt.Errorf("bench: %s input: %w", a.name, err)
	}
	base := jobOpts{Options: mr.Options{}.Resolve(a.defaults)}
	var (
		configs []*bench.Config
		exts    []*benchExternal // configs[i]'s external command, nil for pgasmr's and the baselines
	)
	add := func(label string, spec jobSpec, r bench.Result) {
		configs = append(configs, &bench.Config{Label: label, Result: r, Run: func(ctx context.Context) ([]byte, time.Duration, error) {
			return benchRun(ctx, spec, p.exec)
		}})
		exts = append(exts, nil)
	}
	for _, b := range p.baselines {
		if b == "mrmpi" {
			continue // with the modes, at every rank count
		}
		ranks := 1
		if b == "goroutines" {
			ranks = runtime.GOMAXPROCS(0)
		}
		add(b, jobSpec{app: a, inputs: inputs, baseline: b, opts: base}, bench.Result{Ranks: ranks, Baseline: b})
	}
	if slices.Contains(p.baselines, "mrmpi") {
		for _, n := range p.ranks {
			add(fmt.Sprintf("mrmpi ranks=%d", n), jobSpec{app: a, inputs: inputs, baseline: "mrmpi", ranks: n, opts: base},
				bench.Result{Ranks: n, Baseline: "mrmpi", Transport: "mpi"})
		}
	}
	for i := range p.externals {
		e := &p.externals[i]
		if !e.forApp(a.name) {
			continue
		}
		for _, n := range p.ranks {
			command := e.expand(inputs, n)
			// An external's output is its own tool's: not compared with
			// seq's, only its exit status counts.
			configs = append(configs, &bench.Config{Label: fmt.Sprintf("external %s ranks=%d", e.name, n),
				Result: bench.Result{Ranks: n, Baseline: e.name}, Unchecked: true,
				Run: func(ctx context.Context) ([]byte, time.Duration, error) {
					took, err := runExternal(ctx, command)
					return nil, took, err
				}})
			exts = append(exts, e)
		}
	}
	for _, m := range p.modes {
		o, ok := m.jobOpts(a)
		if !ok {
			progress("%s: skipping mode %s: %s has only the element-by-element map", a.name, m.name, a.name)
			continue
		}
		for _, n := range p.ranks {
			add(fmt.Sprintf("ranks=%d %s", n, m.name), jobSpec{app: a, inputs: inputs, transport: transport, ranks: n, opts: o},
				bench.Result{Mode: m.name, Transport: transport, Ranks: n, Dist: o.Dist.String(), Map: o.Map.String(),
					Gather: o.Gather.String(), Collectives: o.Transfer == reduce.Collective})
		}
	}
	results, err := bench.Measure(ctx, a.name, size, configs, p.warmup, p.reps, progress)
	if err != nil {
		return nil, err
	}
	rows := make([]benchRow, len(results))
	for i, r := range results {
		rows[i].Result = r
		if e := exts[i]; e != nil {
			rows[i].External = &benchExternalJSON{Command: e.command}
		}
	}
	return rows, nil
}

// benchRun runs spec once, as a fresh process (exec, or MapReduce-MPI,
// which needs mpirun) or in this process, and returns its tsv output and
// wall time.
func benchRun(ctx context.Context, spec jobSpec, exec bool) ([]byte, time.Duration, error) {
	var buf bytes.Buffer
	if exec || spec.baseline == "mrmpi" {
		took, err := runProcess(ctx, spec, &buf)
		return buf.Bytes(), took, err
	}
	runtime.GC()
	t0 := time.Now()
	res, err := runJob(ctx, spec, observers{})
	took := time.Since(t0)
	if err != nil {
		return nil, took, err
	}
	defer closeResult(res)
	if err := res.Write(&buf, "tsv"); err != nil {
		return nil, took, fmt.Errorf("writing the result: %w", err)
	}
	return buf.Bytes(), took, nil
}

// runProcess runs spec as a fresh mrrun process writing tsv to out, and
// returns its wall time (process start and exit included).
func runProcess(ctx context.Context, spec jobSpec, out *bytes.Buffer) (time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	args := append(specArgs(spec), "-q", "--output-format", "tsv", spec.app.name)
	args = append(args, spec.inputs...)
	name := exe
	if spec.transport == "mpi" && spec.baseline == "" || spec.baseline == "mrmpi" {
		// Every rank a process started by the MPI launcher.
		name, args = "mpirun", append([]string{"-np", strconv.Itoa(spec.ranks), exe}, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errb
	t0 := time.Now()
	err = cmd.Run()
	took := time.Since(t0)
	if err != nil {
		return took, fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return took, nil
}

// specArgs returns the mrrun flags that run spec (without -q, the output
// format, the app and the inputs).
func specArgs(spec jobSpec) []string {
	if spec.baseline != "" {
		return []string{"--baseline", spec.baseline}
	}
	args := []string{"--transport", spec.transport, "--np", strconv.Itoa(spec.ranks), "--mode", spec.opts.Options.String()}
	if spec.ranksPerNode > 0 {
		args = append(args, "--ranks-per-node", strconv.Itoa(spec.ranksPerNode))
	}
	if spec.segmentBytes > 0 {
		args = append(args, "--segment-bytes", strconv.FormatInt(spec.segmentBytes, 10))
	}
	return args
}
