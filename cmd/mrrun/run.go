package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/pgasmr/pgasmr/apps/mrmpi"
	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/memlimit"
	"github.com/pgasmr/pgasmr/internal/tmpdir"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/mpi"
	"github.com/pgasmr/pgasmr/pgas/shmem"
	"github.com/pgasmr/pgasmr/pgas/wrap"
	"github.com/pgasmr/pgasmr/reduce"
)

// jobSpec is one job: an app, its inputs and how to run it.
type jobSpec struct {
	app          *app
	inputs       []string
	transport    string // "inproc"
	ranks        int
	ranksPerNode int
	segmentBytes int64            // 0: pgas.DefaultSegmentBytes
	cache        pgas.CacheConfig // the remote-reference cache (--cache)
	memoryBytes  int64            // pgas.Config.MemoryBytes: 0 no bound
	memoryFrom   string           // where memoryBytes comes from, for --stats
	tmpDir       string           // pgas.Config.TmpDir
	turns        int              // pgas.Config.Turns
	link         *wrap.NodeLink   // --link: the emulated network between inproc's logical nodes
	baseline     string           // "", "seq" or "goroutines"
	noCheck      bool             // pgas.Config.NoCheck (--no-check)
	opts         jobOpts
	// rankHook, if not nil, runs on every rank before its job (see
	// stallHook).
	rankHook func()
}

// observers collects what a job reports while it runs; any field may be
// nil.
type observers struct {
	progress *mr.Progress
	stats    *jobStats // filled by runJob when non-nil
}

// jobStats is what --stats prints.
type jobStats struct {
	Transport    string
	Ranks        int
	RanksPerNode int
	Wall         time.Duration
	PerRank      []mr.JobStats
	MemoryBytes  int64         // the job's memory budget (--memory), 0: none
	MemoryFrom   string        // what set it
	Turns        int           // how many of a process's ranks map at once (pgas.Rank.Turns), 0: all
	CPU          time.Duration // the processor time of the job's process over Wall (inproc: every rank's); 0: unknown
	Procs        int           // GOMAXPROCS: the processors the process may use at once
}

// cacheHelp is the help of --cache.
const cacheHelp = "the remote-reference cache of every rank for element gets and puts to other ranks (seeds/001's MuPC cache): on (256 lines of 1KiB per remote rank, 16 victim lines), off, or lines=N,line=BYTES,victim=N"

// transports lists the transports this build has.
var transports = []string{"inproc", "shm", "mpi", "shmem"}

// buildHooks has as methods the hooks that test builds of mrrun add, each
// in a file with a build tag of its own; an ordinary build has none.
type buildHooks struct{}

// stallHook returns the rank hook of a binary built with the tag
// mrrun_stallhook (stallhook.go), for the interrupt tests: it stands for a
// read that no context can cancel. Other builds get nil.
func stallHook() func() {
	if h, ok := any(buildHooks{}).(interface{ stallRank() }); ok {
		return h.stallRank
	}
	return nil
}

// runJob runs spec and returns the result: in this process for inproc and
// the baselines, or this process's rank when a launcher started it as one
// (then only the root's process gets a result; the others get nil).
func runJob(ctx context.Context, spec jobSpec, obs observers) (result, error) {
	if obs.progress != nil {
		ctx = mr.WithProgress(ctx, obs.progress)
	}
	a := spec.app
	switch spec.baseline {
	case "seq":
		return a.seq(ctx, spec.inputs, spec.opts)
	case "goroutines":
		return a.goroutines(ctx, spec.inputs, spec.opts)
	case "mrmpi":
		return runMRMPI(ctx, spec)
	case "":
	default:
		return nil, usagef("unknown baseline %q (want seq, goroutines or mrmpi)", spec.baseline)
	}
	cfg := pgas.Config{Ranks: spec.ranks, RanksPerNode: spec.ranksPerNode, SegmentBytes: spec.segmentBytes,
		MemoryBytes: spec.memoryBytes, TmpDir: spec.tmpDir, Turns: spec.turns, Cache: spec.cache, NoCheck: spec.noCheck}
	// A job that does not answer an interrupt in time is left running
	// when mrrun exits (runWithDeadline): its spill files go first.
	defer atForcedExit(ctx, func() { reduce.RemoveSpills(spec.tmpDir) })()
	procRank := -1 // the rank this process is, under shm and mpi
	switch spec.transport {
	case "inproc":
		if spec.link != nil {
			cfg.Transport = wrap.NewNodeLatency(inproc.New(), *spec.link)
		}
	case "shm", "mpi", "shmem":
		var err error
		if cfg, err = launch.FromEnv(cfg); err != nil {
			return nil, err
		}
		if cfg.Transport == nil || cfg.Transport.Name() != spec.transport {
			switch spec.transport {
			case "mpi":
				how := "it was built with MPI"
				if !mpi.Built {
					how = "this mrrun was built without MPI: go build -tags mpi ./cmd/mrrun (OpenMPI) or -tags mpich"
				}
				return nil, usagef("--transport mpi: start mrrun under an MPI launcher (mpirun -np N mrrun --transport mpi ...); %s", how)
			case "shmem":
				how := "it was built with OpenSHMEM"
				if !shmem.Built {
					how = "this mrrun was built without OpenSHMEM: go build -tags shmem ./cmd/mrrun"
				}
				return nil, usagef("--transport shmem: start mrrun under oshrun (oshrun -np N mrrun --transport shmem ...); %s", how)
			}
			return nil, fmt.Errorf("--transport shm: this process was not started as a rank (mrrun launches its ranks itself)")
		}
		if spec.transport != "shm" {
			defer launch.Done(cfg)
			if spec.opts.Root >= cfg.Ranks {
				return nil, usagef("--root %d is not a rank (ranks are 0 to %d)", spec.opts.Root, cfg.Ranks-1)
			}
		} else if cfg.Ranks != spec.ranks {
			return nil, fmt.Errorf("--transport shm: launched with %d ranks, asked for %d", cfg.Ranks, spec.ranks)
		}
		if r, ok := cfg.Transport.(interface{ Rank() int }); ok {
			procRank = r.Rank()
		}
	default:
		return nil, usagef("transport %q is not available in this build (want %s)", spec.transport, strings.Join(transports, ", "))
	}
	if err := cfg.Validate(); err != nil {
		return nil, usagef("%v", err)
	}
	var (
		mu  sync.Mutex
		res result
	)
	t0 := time.Now()
	cpu0, cpuOK := processCPU()
	err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		var js mr.JobStats
		if obs.stats != nil {
			ctx = mr.WithStats(ctx, &js)
		}
		if spec.rankHook != nil {
			spec.rankHook()
		}
		out, err := a.run(ctx, r, spec.inputs, spec.opts)
		if out != nil && (err != nil || r.ID() != spec.opts.Root) {
			// Not the result this process writes (GatherAll gives every
			// rank one): its files, past the memory budget, go now.
			closeResult(out)
		}
		if err != nil {
			return err
		}
		if obs.stats != nil {
			per, err := mr.GatherStats(ctx, r, js, spec.opts.Root)
			if err != nil {
				return fmt.Errorf("gathering --stats: %w", err)
			}
			if r.ID() == spec.opts.Root {
				*obs.stats = jobStats{Transport: spec.transport, Ranks: r.N(), RanksPerNode: spec.ranksPerNode,
					Wall: time.Since(t0), PerRank: per, MemoryBytes: cfg.MemoryBytes, MemoryFrom: spec.memoryFrom, Turns: r.Turns(),
					Procs: runtime.GOMAXPROCS(0)}
				// One process holds every rank only in process: elsewhere
				// this process's time is one rank's.
				if cpu, ok := processCPU(); ok && cpuOK && spec.transport == "inproc" {
					obs.stats.CPU = cpu - cpu0
				}
			}
		}
		if out != nil && r.ID() == spec.opts.Root {
			mu.Lock()
			res = out
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		if res != nil {
			closeResult(res) // the root's, when another rank failed: its files
		}
		return nil, err
	}
	if res == nil && (spec.transport == "inproc" || procRank == spec.opts.Root) {
		return nil, fmt.Errorf("%s: rank %d returned no result", a.name, spec.opts.Root)
	}
	return res, nil
}

// nodeLink is the link --link gives between --ranks-per-node's nodes.
func nodeLink(v string, ranksPerNode int) (wrap.NodeLink, error) {
	link, err := wrap.ParseLink(v)
	if err != nil {
		return link, err
	}
	if ranksPerNode < 1 {
		return link, fmt.Errorf("needs --ranks-per-node N (N >= 1), whose logical nodes it links")
	}
	link.RanksPerNode = ranksPerNode
	return link, nil
}

// runFlags are the flags of the run command.
type runFlags struct {
	np, ranksPerNode, root, top    int
	segmentBytes, memory, tmp      string
	link, cache                    string
	transport, dist, mapMode, mode string
	gather, baseline, words        string
	inputFormat, png, output       string
	outputFormat, statsFormat      string
	nodeCombine, checkpoint        string
	nodeBudget, turns              int
	cpuprofile, memprofile         string
	threshold                      float64
	noCollectives, stats, quiet    bool
	noCheck, verbose               bool
	compress                       bool
	stopGrace                      time.Duration
	progress, version, skipUnread  bool
}

func (f *runFlags) define(fs *pflag.FlagSet) {
	fs.IntVar(&f.np, "np", runtime.NumCPU(), "number of ranks (mpirun's -np N works too)")
	fs.StringVar(&f.transport, "transport", "inproc", "how ranks communicate: "+strings.Join(transports, ", "))
	fs.IntVar(&f.ranksPerNode, "ranks-per-node", 0, "ranks per logical node (0: all on one node)")
	fs.StringVar(&f.link, "link", "", "inproc: emulate a network between the logical nodes of --ranks-per-node: LATENCY[,BANDWIDTH], e.g. 5us,5GB/s; an operation between ranks of different nodes takes the latency plus its bytes at the bandwidth (shared by a node's ranks), one within a node nothing more")
	fs.StringVar(&f.cache, "cache", "", cacheHelp)
	fs.StringVar(&f.segmentBytes, "segment-bytes", "16MiB", "shared segment of each rank (k, MB, MiB, ... suffixes): the room for collectives' staging and node tables; inproc maps it untouched (pages nobody uses cost no memory), shm reserves all of it in /dev/shm at launch")
	fs.StringVar(&f.memory, "memory", "auto", "memory the job's pairs may hold on a node, shared by its ranks; past it they spill to files in --tmp (k, MB, MiB, ... suffixes; auto: half the memory the process can have; 0: no bound). The segments (--segment-bytes) are apart from it")
	fs.StringVar(&f.tmp, "tmp", "", "directory for the files pairs spill to under --memory (default: $TMPDIR or /tmp)")
	fs.IntVar(&f.turns, "turns", 0, "how many of a process's ranks map at once when it hosts more ranks than processors (0: GOMAXPROCS; -1: all, the Go scheduler shares the processors)")
	fs.DurationVar(&f.stopGrace, "stop-grace", defaultStopGrace, "--transport shm: "+stopGraceHelp)
	fs.StringVar(&f.mode, "mode", "", "the job options in one word, modes joined by + as in mrrun bench --modes (e.g. cyclic+no-collectives+root=1); not with --dist, --threshold, --map, --gather, --root, --no-collectives, --node-combine or --node-budget")
	fs.StringVar(&f.dist, "dist", "block", "distribution of the element map: block, cyclic, balanced or bestfit (implies --map element)")
	fs.Float64Var(&f.threshold, "threshold", 0, "best-fit's threshold on the load difference, in bytes")
	fs.StringVar(&f.mapMode, "map", "", "element or array (default: the app's fast path, array except for spamcount)")
	fs.StringVar(&f.gather, "gather", "", "all, root, none or partitioned (default: partitioned for wordcount and spamcount, root for histogram and linreg)")
	fs.IntVar(&f.root, "root", 0, "the rank that gets the result")
	fs.BoolVar(&f.noCollectives, "no-collectives", false, "move pairs element by element instead of with collectives")
	fs.BoolVar(&f.noCheck, "no-check", false, "skip the cross-rank checks of collective calls and inputs (on by default: a mismatch is an error naming the ranks); for measuring what they cost")
	fs.StringVar(&f.nodeCombine, "node-combine", "auto", "combine the pairs of the ranks of a node in one node-level table before they move: auto (where the transport maps every segment: inproc, shm), on or off")
	fs.IntVar(&f.nodeBudget, "node-budget", 0, "with node combining, the pairs the ranks of a node hold in their own tables while they map, together (0: 262144; negative: no bound, memory grows with ranks x keys)")
	fs.StringVar(&f.baseline, "baseline", "", "run a built-in baseline instead of pgasmr: seq, goroutines, or mrmpi (MapReduce-MPI under mpirun, built with -tags mpi,mrmpi); same output")
	fs.BoolVar(&f.compress, "compress", false, "--baseline mrmpi: combine each rank's pairs locally (MR_compress) before the collate")
	fs.IntVar(&f.top, "top", 0, appFlags["top"])
	fs.BoolVar(&f.skipUnread, "skip-unreadable", false, appFlags["skip-unreadable"])
	fs.StringVar(&f.words, "words", "", appFlags["words"])
	fs.StringVar(&f.inputFormat, "input-format", "", appFlags["input-format"])
	fs.StringVar(&f.png, "png", "", appFlags["png"])
	fs.StringVar(&f.checkpoint, "checkpoint", "", appFlags["checkpoint"])
	fs.StringVarP(&f.output, "output", "o", "", "write the result to FILE (default: stdout)")
	fs.StringVar(&f.outputFormat, "output-format", "text", "text, tsv, csv or json")
	fs.BoolVar(&f.stats, "stats", false, "print per-phase times, pairs and bytes per rank to stderr")
	fs.StringVar(&f.statsFormat, "stats-format", "table", "table or json")
	fs.BoolVar(&f.progress, "progress", false, "show a progress bar on stderr (default: on when stderr is a terminal)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar and no summaries on stderr")
	fs.BoolVar(&f.verbose, "verbose", false, "list every skipped file in the summaries on stderr (default: the first 5 and how many more)")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile to FILE")
	fs.StringVar(&f.memprofile, "memprofile", "", "write a heap profile to FILE at the end")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
}

const runHelp = `Usage: mrrun [flags] APP INPUT...

Runs APP (histogram, linreg, wordcount, spamcount; see mrrun list) on INPUT
(files or directories) with -np ranks and writes the result to stdout or -o.

Flags:
`

// spec checks the flags against the app and builds the job.
func (f *runFlags) spec(fs *pflag.FlagSet, a *app, inputs []string) (jobSpec, error) {
	s := jobSpec{app: a, inputs: inputs, transport: f.transport, ranks: f.np, ranksPerNode: f.ranksPerNode, baseline: f.baseline,
		noCheck: f.noCheck, rankHook: stallHook()}
	for name := range appFlags {
		if fs.Changed(name) && !a.hasFlag(name) {
			return s, usagef("--%s does not apply to %s (%s)", name, a.name, appFlags[name])
		}
	}
	if f.np < 1 {
		return s, usagef("-np %d: need at least 1 rank", f.np)
	}
	if f.ranksPerNode < 0 {
		return s, usagef("--ranks-per-node %d: must not be negative", f.ranksPerNode)
	}
	if f.link != "" {
		if f.transport != "inproc" {
			return s, usagef("--link applies to --transport inproc, whose logical nodes it links")
		}
		link, err := nodeLink(f.link, f.ranksPerNode)
		if err != nil {
			return s, usagef("--link %s: %v", f.link, err)
		}
		s.link = &link
	}
	if f.cache != "" {
		cc, err := pgas.ParseCacheConfig(f.cache)
		if err != nil {
			return s, usagef("--cache %s: %v", f.cache, err)
		}
		s.cache = cc
	}
	if f.turns < -1 {
		return s, usagef("--turns %d: want -1 (none), 0 (GOMAXPROCS) or a number of ranks", f.turns)
	}
	s.turns = f.turns
	if seg, err := parseSize(f.segmentBytes); err != nil || seg <= 0 || seg%8 != 0 {
		return s, usagef("--segment-bytes %s: want a positive multiple of 8 bytes (k, MB, MiB, ... suffixes)", f.segmentBytes)
	} else if fs.Changed("segment-bytes") {
		s.segmentBytes = seg
	}
	var err error
	if s.memoryBytes, s.memoryFrom, err = memlimit.ParseBudget(f.memory); err != nil {
		return s, usagef("--memory %s: %v", f.memory, err)
	}
	if f.baseline == "" && (f.transport == "inproc" || f.transport == "shm") {
		// Ranks that cannot fit the budget: refused now, with the figure.
		if err := budgetLine(f.np, f.ranksPerNode, s.memoryBytes, s.memoryFrom); err != nil {
			return s, err
		}
	}
	if f.tmp != "" {
		if fi, err := os.Stat(f.tmp); err != nil {
			return s, usagef("--tmp %s: %v", f.tmp, err)
		} else if !fi.IsDir() {
			return s, usagef("--tmp %s: not a directory", f.tmp)
		}
		s.tmpDir = f.tmp
	} else if d := os.Getenv("TMPDIR"); d != "" {
		// Where pairs spill by default: refused now, not at the first
		// spill deep into a job.
		if fi, err := os.Stat(d); err != nil {
			return s, usagef("TMPDIR=%s: %v (the directory pairs spill to; set TMPDIR or --tmp to one that exists)", d, err)
		} else if !fi.IsDir() {
			return s, usagef("TMPDIR=%s: not a directory (the directory pairs spill to; set TMPDIR or --tmp to one)", d)
		}
	}
	if !slices.Contains(transports, f.transport) {
		if f.transport == "shm" || f.transport == "mpi" || f.transport == "shmem" {
			return s, usagef("--transport %s is not available in this build (have: %s)", f.transport, strings.Join(transports, ", "))
		}
		return s, usagef("--transport %q: unknown (want %s)", f.transport, strings.Join(transports, ", "))
	}
	if fs.Changed("stop-grace") && f.transport != "shm" {
		return s, usagef("--stop-grace applies to --transport shm only")
	}
	if err := checkStopGrace(f.stopGrace); err != nil {
		return s, err
	}
	switch f.baseline {
	case "", "seq", "goroutines":
	case "mrmpi":
		if !mrmpi.Built {
			return s, usagef("--baseline mrmpi: %v (and start it with mpirun -np N mrrun --baseline mrmpi ...)", mrmpi.ErrNotBuilt)
		}
	default:
		return s, usagef("--baseline %q: want seq, goroutines or mrmpi", f.baseline)
	}
	if fs.Changed("compress") && f.baseline != "mrmpi" {
		return s, usagef("--compress applies to --baseline mrmpi only (MR-MPI's local combining)")
	}
	if f.baseline != "" {
		names := []string{"np", "mode"}
		for _, of := range optionFlags {
			names = append(names, of.flag)
		}
		for _, name := range append(names, "transport", "ranks-per-node", "link", "checkpoint") {
			if fs.Changed(name) {
				return s, usagef("--%s has no effect with --baseline %s", name, f.baseline)
			}
		}
	}
	o := &s.opts
	mo, err := f.jobOptions(fs, a)
	if err != nil {
		return s, err
	}
	o.Options = mo.Resolve(a.defaults)
	if o.Root < 0 || o.Root >= f.np && (f.transport != "mpi" && f.transport != "shmem" || fs.Changed("np")) {
		return s, usagef("--root %d is not a rank (ranks are 0 to %d)", o.Root, f.np-1)
	}
	if f.top < 0 {
		return s, usagef("--top %d: must not be negative", f.top)
	}
	o.Top, o.SkipUnread, o.WordsFile, o.Compress = f.top, f.skipUnread, f.words, f.compress
	if f.checkpoint != "" {
		if f.checkpoint == f.output || f.checkpoint == f.png {
			return s, usagef("--checkpoint %s: the same path as an output", f.checkpoint)
		}
		o.Checkpoint = f.checkpoint
	}
	switch f.inputFormat {
	case "", "int8", "f64", "csv":
		o.InputFormat = f.inputFormat
	default:
		return s, usagef("--input-format %q: want int8, f64 or csv", f.inputFormat)
	}
	if !slices.Contains([]string{"text", "tsv", "csv", "json"}, f.outputFormat) {
		return s, usagef("--output-format %q: want text, tsv, csv or json", f.outputFormat)
	}
	if f.statsFormat != "table" && f.statsFormat != "json" {
		return s, usagef("--stats-format %q: want table or json", f.statsFormat)
	}
	return s, nil
}

// optionFlags are the run flags that set the job options one by one, and
// the field of mr.Options each sets (mr.Setting).
var optionFlags = []struct{ flag, field string }{
	{"dist", "dist"}, {"threshold", "threshold"}, {"map", "map"},
	{"gather", "gather"}, {"root", "root"}, {"no-collectives", "transfer"}, {"node-combine", "node"},
	{"node-budget", "node-budget"},
}

// jobOptions returns the job options the flags set for app a: from --mode
// (mr.ParseOptions), or from the flags of optionFlags (mr.Options.Set,
// with the same rules). The options are checked against the app,
// unresolved.
func (f *runFlags) jobOptions(fs *pflag.FlagSet, a *app) (mr.Options, error) {
	var o mr.Options
	if fs.Changed("mode") {
		for _, of := range optionFlags {
			if fs.Changed(of.flag) {
				return o, usagef("--%s with --mode: --mode sets every job option (drop one of them)", of.flag)
			}
		}
		o, err := mr.ParseOptions(f.mode)
		if err == nil {
			err = checkArrayMap(o)
		}
		if err != nil {
			return o, usagef("--mode %s: %v", f.mode, err)
		}
		if err := o.Validate(a.defaults); err != nil {
			return o, usagef("--mode %s: %s: %v", f.mode, a.name, err)
		}
		return o, nil
	}
	var settings []mr.Setting
	for _, of := range optionFlags {
		fl := fs.Lookup(of.flag)
		v := fl.Value.String()
		if !fl.Changed || v == "" && fl.DefValue == "" { // --map "" or --gather "": the app's default
			continue
		}
		if of.flag == "no-collectives" {
			v = reduce.Collective.String()
			if f.noCollectives {
				v = reduce.ElementByElement.String()
			}
		}
		settings = append(settings, mr.Setting{Field: of.field, Value: v})
	}
	if err := o.Set(settings...); err != nil {
		var se *mr.SettingError
		if !errors.As(err, &se) {
			return o, err
		}
		name := optionFlag(se.Field)
		switch {
		case se.Want == "":
			return o, usagef("--%s applies to --%s %s only", name, optionFlag(se.Needs.Field), se.Needs.Value)
		case fs.Lookup(name).Value.Type() == "string":
			return o, usagef("--%s %q: want %s", name, se.Value, se.Want)
		default:
			return o, usagef("--%s %s: want %s", name, se.Value, se.Want)
		}
	}
	if err := o.Validate(a.defaults); errors.Is(err, mr.ErrNoArrayMap) {
		return o, usagef("--map array: %s has only the element-by-element map", a.name)
	} else if err != nil {
		return o, usagef("%s: %v", a.name, err)
	}
	if checkArrayMap(o) != nil {
		return o, usagef("--dist %s needs the element map: the array map gives each rank a contiguous share (drop --map array or --dist)", f.dist)
	}
	return o, nil
}

// optionFlag returns the run flag that sets the field of mr.Options.
func optionFlag(field string) string {
	for _, of := range optionFlags {
		if of.field == field {
			return of.flag
		}
	}
	return field
}

// checkArrayMap refuses the array map with a distribution other than
// block, for mrrun run and bench alike: mrrun's array map is the apps'
// fast path over contiguous shares.
func checkArrayMap(o mr.Options) error {
	if o.Map == mr.MapArray && o.Dist != distrib.Block {
		return fmt.Errorf("the array map gives each rank a contiguous share; it does not combine with %v", o.Dist)
	}
	return nil
}

// cmdRun is mrrun [flags] APP INPUT...
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mrrun")
	var f runFlags
	f.define(fs)
	if err := parseFlags(fs, args, stdout, runHelp); err != nil {
		return err
	}
	if f.version {
		fmt.Fprintln(stdout, versionLine())
		return nil
	}
	if fs.NArg() == 0 {
		return usagef("no app given (usage: mrrun [flags] APP INPUT...; apps: histogram, linreg, wordcount, spamcount)")
	}
	a, err := findApp(fs.Arg(0))
	if err != nil {
		return err
	}
	inputs := fs.Args()[1:]
	if len(inputs) == 0 {
		return usagef("%s: no input given (usage: mrrun [flags] %s INPUT...)", a.name, a.name)
	}
	if inputs, err = a.inputFiles(ctx, inputs); err != nil {
		return err
	}
	spec, err := f.spec(fs, a, inputs)
	if err != nil {
		return err
	}
	if spec.transport == "inproc" && spec.baseline == "" {
		// mpirun -np 4 mrrun wordcount ...: every process would run the
		// whole job and print it.
		if by, n := pgas.LaunchedProcesses(); n > 1 {
			return usagef("%s started this mrrun as one of %d processes, but --transport is inproc: each would run the whole job; add --transport mpi, or run mrrun alone", by, n)
		}
	}
	if err := f.checkOutputs(ctx, inputs); err != nil {
		return err
	}
	showBar := !f.quiet && (f.progress || (!fs.Changed("progress") && isTerminal(stderr)))
	launcher, rank := rankProcess()
	if spec.transport == "shm" && launcher == "" {
		// This process is the launcher: the ranks are copies of it, run
		// with the same arguments; it draws the bar from their reports.
		var bar *mr.Progress
		if showBar {
			bar = new(mr.Progress)
			stop := startProgress(stderr, bar, a.unit)
			defer stop()
			stdout = &stopOnWrite{w: stdout, stop: stop} // the bar goes before the result comes
		}
		err := launchJob(ctx, spec.tmpDir, f.output, func(ctx context.Context) error { // nothing left behind (leftover.go)
			return launchRanks(ctx, spec.ranks, spec.segmentBytes, f.stopGrace, args, stdout, stderr, bar)
		})
		if err == nil {
			// The launcher committed the result (the root rank wrote it).
			dropCheckpoint(stderr, f.checkpoint)
		}
		return err
	}
	if launcher != "" {
		// A rank process: profiles are per rank.
		for _, p := range []*string{&f.cpuprofile, &f.memprofile} {
			if *p != "" {
				*p = fmt.Sprintf("%s.rank%d", *p, rank)
			}
		}
	}
	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}

	obs := observers{progress: new(mr.Progress)}
	if f.stats {
		obs.stats = new(jobStats)
	}
	var stop func()
	switch {
	case launcher == "" && showBar:
		stop = startProgress(stderr, obs.progress, a.unit)
		defer atForcedExit(ctx, stop)() // clears the bar before "mrrun: interrupted"
	case launcher != "" && os.Getenv(envReportProgress) != "":
		stop = reportProgress(stderr, obs.progress)
	}
	if !f.quiet {
		spec.opts.Notes = stderr
	}
	ctx, mem := watchMemory(ctx, stderr) // at the memory limit: one line, not the runtime's crash
	defer mem.stop()
	defer jobSpills(ctx, &spec)() // an shm rank spills where its launcher says; none is left on any exit
	res, err := runJob(ctx, spec, obs)
	if res != nil {
		defer closeResult(res) // a result past the memory budget: its files
	}
	err = mem.jobErr(err)
	if stop != nil {
		stop()
	}
	if err != nil {
		return err
	}
	if f.memprofile != "" {
		if err := writeFileAtomic(ctx, f.memprofile, func(w io.Writer) error {
			runtime.GC()
			return pprof.WriteHeapProfile(w)
		}); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}
	if res == nil {
		return nil // a rank process other than the root's: the root writes the result
	}
	if !f.quiet && a.report != nil {
		a.report(stderr, res, f.verbose)
	}
	if f.stats && spec.baseline == "" {
		if err := writeStats(stderr, *obs.stats, f.statsFormat); err != nil {
			return err
		}
	}
	if f.png != "" {
		if err := writeFileAtomic(ctx, f.png, func(w io.Writer) error { return a.png(ctx, w, inputs, spec.opts, res) }); err != nil {
			return fmt.Errorf("--png %s: %w", f.png, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.output == "" {
		if err := res.Write(stdout, f.outputFormat); err != nil {
			return err
		}
	} else if err := writeFileAtomic(resultCtx(ctx), f.output, func(w io.Writer) error { return res.Write(w, f.outputFormat) }); err != nil {
		return fmt.Errorf("-o %s: %w", f.output, err)
	}
	if launcher == "" || spec.transport != "shm" {
		// The result is in place (under shm the launcher commits it,
		// and drops the checkpoint then).
		dropCheckpoint(stderr, f.checkpoint)
	}
	return nil
}

// dropCheckpoint removes the checkpoint dir (--checkpoint, if any) of a
// job whose result is in place: the job succeeded, so a failure to
// remove it is a warning line, not the job's failure.
func dropCheckpoint(stderr io.Writer, dir string) {
	if dir == "" {
		return
	}
	if err := wordcount.RemoveCheckpoint(dir); err != nil {
		fmt.Fprintf(stderr, "mrrun: warning: --checkpoint %s: the result is written, but removing the checkpoint failed: %v\n", escapeControls(dir), err)
	}
}

// checkOutputs checks, before the job, that -o and --png can be written
// (resolveOutput: the directory exists and is writable, no planted link),
// that they are not the same file, and that neither is an input, which it
// would overwrite.
func (f *runFlags) checkOutputs(ctx context.Context, inputs []string) error {
	outs := []struct{ flag, path string }{{"-o", f.output}, {"--png", f.png}}
	var targets []outputTarget
	for _, o := range outs {
		if o.path == "" {
			targets = append(targets, outputTarget{})
			continue
		}
		t, err := resolveOutput(o.path)
		if err != nil {
			return usagef("%s %s: %v", o.flag, o.path, err)
		}
		targets = append(targets, t)
	}
	if f.output != "" && f.png != "" && (targets[0].path == targets[1].path || sameFile(targets[0].path, targets[1].path)) {
		return usagef("-o %s and --png %s are the same file: the text would replace the image", f.output, f.png)
	}
	for i, t := range targets {
		if !t.exists {
			continue
		}
		files, _, err := mr.ListFiles(ctx, inputs, mr.ListOptions{SkipUnreadable: true})
		if err != nil {
			return err
		}
		for _, in := range files {
			if sameFile(t.path, in.Path) {
				return usagef("%s %s is the input %s: the result would overwrite it", outs[i].flag, outs[i].path, in.Path)
			}
		}
	}
	return nil
}

// closeResult removes the files of a result past the memory budget
// (wordcount.Result.Close); other results have none.
func closeResult(res result) {
	if c, ok := res.(io.Closer); ok {
		c.Close()
	}
}

// writeFileAtomic writes path through a temporary file in the same
// directory, renamed over path only when write succeeded, so an
// interrupted or failed write never leaves a file that looks complete
// (and a forced exit of ctx's command removes it). Where it goes is
// resolveOutput's: a symbolic link followed (the file it names replaced,
// the link kept) unless another user planted it in /tmp, an existing
// file's mode and owner kept, a new file's 0666 less the umask. A device
// or a named pipe is written directly: it cannot be replaced atomically
// and must not be replaced at all.
func writeFileAtomic(ctx context.Context, path string, write func(w io.Writer) error) error {
	t, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if t.direct {
		return writeFileDirect(t.path, write) // a device or a named pipe: never replace it
	}
	path = t.path
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// The temporary files of writers killed before their rename go first:
	// the name says whose they were, and only a dead process's are removed.
	prefix := "." + base + ".tmp-"
	tmpdir.CleanStale(dir, prefix)
	tmp, err := createOutputTmp(ctx, dir, prefix) // tmpdir.CreateFile, or an shm launcher's file
	if err != nil {
		return err
	}
	defer atForcedExit(ctx, func() { os.Remove(tmp.Name()) })() // an interrupted write that never returns
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(cancelWriter(ctx, tmp)); err != nil { // an interrupt stops it
		return err
	}
	if err := tmp.Chmod(t.mode); err != nil {
		return err
	}
	if err := chown(tmp, t.uid, t.gid); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := commitOutput(ctx, tmp.Name(), path); err != nil { // the rename, against a forced exit
		return err
	}
	ok = true
	return nil
}

// writeFileDirect writes to path, an existing device or named pipe
// (mrrun -o /dev/null, -o /dev/stdout, a FIFO a reader waits on), which
// cannot be replaced atomically and must not be replaced at all.
func writeFileDirect(path string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return writeClose(f, write)
}

// writeClose runs write on f and closes f, returning the first error.
func writeClose(f *os.File, write func(w io.Writer) error) error {
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runMRMPI runs the MapReduce-MPI baseline: this process is one MPI rank
// (mpirun started it); rank 0 gets the result, the others nil.
func runMRMPI(ctx context.Context, spec jobSpec) (result, error) {
	if launcher, _ := rankProcess(); launcher != "mpi" {
		return nil, usagef("--baseline mrmpi: start mrrun under an MPI launcher (mpirun -np N mrrun --baseline mrmpi ...)")
	}
	o := spec.opts
	res, err := mrmpi.Run(ctx, spec.app.name, spec.inputs, mrmpi.Options{Compress: o.Compress, Top: o.Top,
		SkipUnreadable: o.SkipUnread, WordsFile: o.WordsFile, InputFormat: o.InputFormat})
	if ferr := mrmpi.Finalize(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil || res == nil {
		return nil, err
	}
	return res, nil
}
