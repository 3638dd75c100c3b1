package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/pgasmr/pgasmr/internal/memlimit"
	"github.com/pgasmr/pgasmr/internal/size"
	"github.com/pgasmr/pgasmr/internal/spmv"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/model"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

const modelHelp = `Usage: mrrun model [flags]

Predicts the time of one step y = Dx + Ax of a distributed sparse
matrix-vector product (internal/spmv) under the three communication
strategies of seeds/000, from the platform's parameters, then runs each
strategy and prints the predicted and the measured time a step and the
relative error:

  v1  every remote entry of x read with its own get
  v2  the whole blocks of x a rank needs copied to a private vector
  v3  the needed entries only, packed one message per rank pair

The parameters (private and remote bandwidth, latency, barrier and
message costs: pgas/model.Calibrate) are measured on the job's own
transport and shape and kept in --calibrations, one JSON file per
transport, ranks, ranks per node and machine; --recalibrate measures
again. With --ranks-per-node and --link the ranks run as an emulated
cluster (wrap.NewNodeLatency), whose inter-node link the calibration
measures like any other. The measured time is the best of --steps
steps timed on rank 0 between barriers, after one untimed step.

With --cache, v1 runs once more in a job with the remote-reference
cache on (row v1+cache), predicted after seeds/001 §7.2 from the hits
and line loads the cache counted in one step (pgas/model.PredictV1Cache).

On the default problem the link carries a small part of a step, and the
models predict v2 and v3 alike; the second example below, cheap rows in
large blocks of which few elements are needed, is the shape of seeds/000
Table 3's multi-node rows (predicted v1/v3 12, v2/v3 1.5).

  mrrun model -np 4 --ranks-per-node 2 --link 5us,5GB/s
  mrrun model -np 4 --ranks-per-node 2 --link 5us,5GB/s --n 1048576 --block 65536 --rnz 2 --far 0.015
  mrrun model -np 4 --ranks-per-node 2 --link 5us,5GB/s --cache on
  mrrun model -np 2 --transport shm
  mrrun model -np 2 --format json

Flags:
`

// stepTimes runs one untimed step of s and then steps timed on rank 0
// between barriers, and returns the best and the median in seconds.
func stepTimes(ctx context.Context, r *pgas.Rank, sv *spmv.Solver, s spmv.Strategy, steps int) (best, median float64, err error) {
	if err := sv.Step(ctx, s); err != nil { // untimed: first touches
		return 0, 0, err
	}
	times := make([]float64, steps)
	for k := range times {
		if err := r.Barrier(ctx); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		if err := sv.Step(ctx, s); err != nil { // ends with a barrier
			return 0, 0, err
		}
		times[k] = time.Since(t0).Seconds()
	}
	slices.Sort(times)
	return times[0], times[len(times)/2], nil
}

// newRow is a strategy's row: the prediction against the best and the
// median measured step.
func newRow(strategy string, predicted, best, median float64, slowest int) modelRow {
	return modelRow{Strategy: strategy, PredictedS: predicted, MeasuredS: best, MedianS: median,
		ErrorPct: 100 * (predicted - best) / best, MedianErrorPct: 100 * (predicted - median) / median, SlowestRank: slowest}
}

// modelCacheRow measures and predicts v1 in a job whose ranks have the
// remote-reference cache on: the prediction (model.PredictV1Cache) takes
// the hits and line loads every rank's cache counted in one step.
func modelCacheRow(ctx context.Context, r *pgas.Rank, dir string, p spmv.Params, blk int64, rnz, steps int) (modelRow, error) {
	cal, _, err := calibration(ctx, r, dir, false)
	if err != nil {
		return modelRow{}, err
	}
	sv, err := spmv.NewSolver(ctx, r, p, blk, spmv.V1)
	if err != nil {
		return modelRow{}, err
	}
	c, err := model.InspectAll(ctx, r, sv.X().Layout(), sv.Cols())
	if err != nil {
		return modelRow{}, err
	}
	params := cal.Params
	if params.TauHit, err = hitCost(ctx, r, sv.X()); err != nil {
		return modelRow{}, err
	}
	if err := sv.Step(ctx, spmv.V1); err != nil {
		return modelRow{}, err
	}
	r.ResetStats()
	if err := sv.Step(ctx, spmv.V1); err != nil {
		return modelRow{}, err
	}
	per, _, err := r.AllStats(ctx)
	if err != nil {
		return modelRow{}, err
	}
	rpn := r.Config().RanksPerNode
	cc := make([]model.CacheCounts, len(per))
	for i, st := range per {
		same, other := st.ByNode(rpn)
		cc[i] = model.CacheCounts{Hits: st.Cache.Hits, Fetches: model.Classes{Local: same.Messages, Remote: other.Messages},
			FetchBytes: model.Classes{Local: same.BytesReceived, Remote: other.BytesReceived}}
	}
	pd := model.PredictV1Cache(params, model.Problem{RNZ: rnz, ValueBytes: 8, IndexBytes: 8, StepBarriers: 1, Ranks: c}, cc)
	best, med, err := stepTimes(ctx, r, sv, spmv.V1, steps)
	if err != nil {
		return modelRow{}, err
	}
	return newRow("v1+cache", pd.Total, best, med, pd.Rank), nil
}

// hitCost measures on this rank the time of an element Get the cache
// serves: the next element of another rank's block, again and again,
// after the first load. It is collective (it ends with a barrier, which
// empties the cache).
func hitCost(ctx context.Context, r *pgas.Rank, x *pgas.Array[float64]) (float64, error) {
	const gets = 1 << 16
	i := int64(-1)
	for g := range x.Len() {
		if x.Layout().Owner(g) == (r.ID()+1)%r.N() {
			i = g
			break
		}
	}
	var d time.Duration
	if i >= 0 && r.N() > 1 {
		if _, err := x.Get(ctx, i); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for range gets {
			if _, err := x.Get(ctx, i); err != nil {
				return 0, err
			}
		}
		d = time.Since(t0)
	}
	return d.Seconds() / gets, r.Barrier(ctx)
}

// modelRow is one strategy's prediction and measurement.
type modelRow struct {
	Strategy   string  `json:"strategy"`
	PredictedS float64 `json:"predicted_s"`
	// MeasuredS is the best of the timed steps, as seeds/000 reports
	// (its Tables 2-4 show the best of repeated runs, and its parameters
	// are benchmark bests); MedianS is their median.
	MeasuredS float64 `json:"measured_s"`
	MedianS   float64 `json:"median_s"`
	// ErrorPct is (predicted - measured) / measured, in percent;
	// MedianErrorPct the same against the median.
	ErrorPct       float64 `json:"error_pct"`
	MedianErrorPct float64 `json:"median_error_pct"`
	// SlowestRank is the rank the model finds slowest.
	SlowestRank int `json:"slowest_rank"`
}

// modelReport is what mrrun model prints.
type modelReport struct {
	Transport    string             `json:"transport"`
	Ranks        int                `json:"ranks"`
	RanksPerNode int                `json:"ranks_per_node"`
	N            int64              `json:"n"`
	RNZ          int                `json:"rnz"`
	Far          float64            `json:"far"`
	Block        int64              `json:"block"`
	Steps        int                `json:"steps"`
	Calibration  string             `json:"calibration"`     // the file, and whether it was measured now
	Cache        string             `json:"cache,omitempty"` // the cache of the v1+cache row (--cache)
	Params       model.Params       `json:"params"`
	Rows         []modelRow         `json:"strategies"`
	Counts       []model.RankCounts `json:"counts_v3,omitempty"`
}

func cmdModel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mrrun model")
	np := fs.Int("np", 4, "number of ranks")
	rpn := fs.Int("ranks-per-node", 0, "ranks per logical node (0: all on one node)")
	linkFlag := fs.String("link", "", "emulate a network between the logical nodes: LATENCY[,BANDWIDTH], e.g. 5us,5GB/s (see mrrun --help)")
	n := fs.Int64("n", 1<<16, "matrix rows")
	rnz := fs.Int("rnz", 16, "off-diagonal entries a row")
	far := fs.Float64("far", 0.05, "fraction of the off-diagonal entries in random columns (the rest near the diagonal)")
	blk := fs.Int64("block", 4096, "rows a block of the block-cyclic vectors")
	steps := fs.Int("steps", 9, "timed steps a strategy")
	dir := fs.String("calibrations", defaultCalibrations(), "directory of the saved calibrations")
	recal := fs.Bool("recalibrate", false, "measure the parameters again even if a calibration is saved")
	format := fs.String("format", "text", "text or json")
	seg := fs.String("segment-bytes", "", "each rank's shared segment (default: sized to the matrix)")
	tr := fs.String("transport", "inproc", "how the ranks communicate: inproc, or shm (one process per rank, launched by this command)")
	cacheFlag := fs.String("cache", "", "also run v1 with the remote-reference cache: on or lines=N,line=BYTES,victim=N (see mrrun --help)")
	memFlag := fs.String("memory", "auto", "memory the model's matrix, vectors and plans may take (k, MB, MiB, ... suffixes; auto: half the memory the process can have; 0: no bound): a problem that needs more is refused before it starts")
	if err := parseFlags(fs, args, stdout, modelHelp); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("model takes no arguments (got %q)", fs.Arg(0))
	}
	switch {
	case *np < 1:
		return usagef("model: -np %d: need at least 1 rank", *np)
	case *rpn < 0:
		return usagef("model: --ranks-per-node %d: must not be negative", *rpn)
	case *n < 1 || *rnz < 1 || *blk < 1 || *steps < 1:
		return usagef("model: --n, --rnz, --block and --steps must be positive")
	case !(*far >= 0 && *far <= 1):
		return usagef("model: --far %v: want a fraction in [0, 1]", *far)
	case *format != "text" && *format != "json":
		return usagef("model: --format %q: want text or json", *format)
	case *tr != "inproc" && *tr != "shm":
		return usagef("model: --transport %q: want inproc or shm", *tr)
	case *tr == "shm" && *linkFlag != "":
		return usagef("model: --link applies to --transport inproc, whose logical nodes it links")
	}
	budget, from, err := memlimit.ParseBudget(*memFlag)
	if err != nil {
		return usagef("model: --memory %s: %v", *memFlag, err)
	}
	if need := modelBytes(*n, *rnz, *np); budget > 0 && need > budget {
		return usagef("model: --n %d needs about %s (%s a row with --rnz %d, %s a rank), over the memory budget of %s (%s); at most --n %d fits",
			*n, size.String(need), size.String(modelRowBytes(*rnz)), *rnz, size.String(pgas.RankCostBytes),
			size.String(budget), from, max(0, (budget-pgas.RuntimeBytes(*np))/modelRowBytes(*rnz)))
	}
	cfg := pgas.Config{Ranks: *np, RanksPerNode: *rpn}
	if *linkFlag != "" {
		link, err := nodeLink(*linkFlag, *rpn)
		if err != nil {
			return usagef("model: --link %s: %v", *linkFlag, err)
		}
		cfg.Transport = wrap.NewNodeLatency(inproc.New(), link)
	}
	// x, y, D, and A and J (RNZ a row) of a rank's share, in blocks, with
	// room for the allocator and the collectives.
	perRank := (*n/int64(*np) + *blk) * 8 * int64(3+2**rnz)
	cfg.SegmentBytes = max(pgas.DefaultSegmentBytes, (perRank*5/4+(16<<20))&^7)
	if *seg != "" {
		b, err := parseSize(*seg)
		if err != nil || b <= 0 || b%8 != 0 {
			return usagef("model: --segment-bytes %s: want a positive multiple of 8 bytes", *seg)
		}
		cfg.SegmentBytes = b
	}
	if *tr == "shm" {
		if launcher, _ := rankProcess(); launcher == "" {
			// This process launches the ranks: copies of it, run with the
			// same arguments; rank 0's process prints the report.
			return launchRanks(ctx, *np, cfg.SegmentBytes, defaultStopGrace, append([]string{"model"}, args...), stdout, stderr, nil)
		}
		var err error
		if cfg, err = launch.FromEnv(cfg); err != nil {
			return err
		}
		if !launch.Leader(cfg) {
			stdout = io.Discard
		}
	}
	var cache pgas.CacheConfig
	if *cacheFlag != "" {
		cc, err := pgas.ParseCacheConfig(*cacheFlag)
		if err != nil {
			return usagef("model: --cache %s: %v", *cacheFlag, err)
		}
		cache = cc
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("model: --calibrations %s: %w", *dir, err)
	}
	p := spmv.Params{N: *n, RNZ: *rnz, Far: *far, Seed: 1}
	rep := modelReport{Ranks: *np, RanksPerNode: *rpn, N: *n, RNZ: *rnz, Far: *far, Block: *blk, Steps: *steps}
	err = pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		cal, file, err := calibration(ctx, r, *dir, *recal)
		if err != nil {
			return err
		}
		var rows []modelRow
		var counts []model.RankCounts
		for i, s := range []spmv.Strategy{spmv.V1, spmv.V2, spmv.V3} {
			sv, err := spmv.NewSolver(ctx, r, p, *blk, s)
			if err != nil {
				return err
			}
			c, err := model.InspectAll(ctx, r, sv.X().Layout(), sv.Cols())
			if err != nil {
				return err
			}
			pd := model.Predict(cal.Params, model.Problem{RNZ: *rnz, ValueBytes: 8, IndexBytes: 8, StepBarriers: 1, Ranks: c}, model.Strategies[i])
			best, med, err := stepTimes(ctx, r, sv, s, *steps)
			if err != nil {
				return err
			}
			rows = append(rows, newRow(s.String(), pd.Total, best, med, pd.Rank))
			if err := sv.Free(ctx); err != nil {
				return err
			}
			counts = c
		}
		if r.ID() == 0 {
			rep.Transport, rep.Calibration, rep.Params, rep.Rows, rep.Counts = cal.Transport, file, cal.Params, rows, counts
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if cache.On() {
		ccfg := cfg
		ccfg.Cache = cache
		err := pgas.Run(ctx, ccfg, func(ctx context.Context, r *pgas.Rank) error {
			row, err := modelCacheRow(ctx, r, *dir, p, *blk, *rnz, *steps)
			if r.ID() == 0 && err == nil {
				rep.Rows = append(rep.Rows, row)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("model: v1 with the cache: %w", err)
		}
		rep.Cache = cache.String()
	}
	if *format == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	perNode := rep.RanksPerNode
	if perNode == 0 {
		perNode = rep.Ranks
	}
	fmt.Fprintf(stdout, "SpMV step, n = %d, %d off-diagonals a row (%.0f%% far), blocks of %d rows; %s, %d ranks, %d per node\n",
		rep.N, rep.RNZ, 100*rep.Far, rep.Block, rep.Transport, rep.Ranks, perNode)
	fmt.Fprintf(stdout, "parameters (%s): %s\n", rep.Calibration, rep.Params)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tpredicted\tmeasured (best)\terror\tmedian\terror\tslowest rank (model)\t")
	for _, row := range rep.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.1f%%\t%s\t%+.1f%%\t%d\t\n", row.Strategy, round(row.PredictedS), round(row.MeasuredS), row.ErrorPct,
			round(row.MedianS), row.MedianErrorPct, row.SlowestRank)
	}
	return tw.Flush()
}

// What mrrun model takes a row of the matrix, in resident bytes: its
// entries in the segments (x, y and D, 8 bytes each, and A and J, 16
// bytes an off-diagonal entry), the column list model.InspectAll copies
// (8 bytes an entry), the v3 strategy's gather plan (pgas.NewGatherPlan,
// about 13 bytes an entry) and the solver's private vectors. Measured
// as the slope of mrrun model -np 4's peak resident memory from --n
// 262144 to 1048576: 234 B a row with --rnz 4, 753 with 16, 1616 with
// 32 (linux/amd64, Go 1.26), which 40 B + 50 B an entry covers.
const (
	modelFixedRowBytes = 40
	modelEntryBytes    = 50
)

// modelRowBytes returns what a row with rnz off-diagonal entries takes.
func modelRowBytes(rnz int) int64 { return modelFixedRowBytes + modelEntryBytes*int64(rnz) }

// modelBytes returns what mrrun model takes for n rows of rnz entries on
// np ranks: the rows and the runtime's cost of the ranks.
func modelBytes(n int64, rnz, np int) int64 {
	row := modelRowBytes(rnz)
	if n > (math.MaxInt64/2)/row {
		return math.MaxInt64 / 2
	}
	return n*row + pgas.RuntimeBytes(np)
}

// defaultCalibrations is where mrrun model keeps calibrations: the user's
// cache directory, or the temporary directory.
func defaultCalibrations() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "pgasmr", "model")
	}
	return filepath.Join(os.TempDir(), "pgasmr-model")
}

// calibration is collective: it returns the calibration saved in dir for
// this job's transport, shape and machine, or measures one (recal, or none
// saved) and saves it from rank 0. file names the file and says which.
func calibration(ctx context.Context, r *pgas.Rank, dir string, recal bool) (*model.Calibration, string, error) {
	key := (&model.Calibration{Transport: r.TransportName(), Ranks: r.N(), RanksPerNode: r.Config().RanksPerNode, Machine: model.ThisMachine()}).Key()
	path := filepath.Join(dir, key+".json")
	// Every rank decides alike: rank 0 reads the file and tells the rest.
	var saved *model.Calibration
	found := []int64{0}
	if r.ID() == 0 && !recal {
		c, err := model.ReadFile(path)
		switch {
		case err == nil && c.Matches(r.TransportName(), r.N(), r.Config().RanksPerNode, model.ThisMachine()):
			saved, found[0] = c, 1
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return nil, "", err // a file that is there but unreadable: say so
		}
	}
	if err := coll.BroadcastInPlace(ctx, r.World(), coll.Private(found), 1); err != nil {
		return nil, "", err
	}
	if found[0] == 1 {
		// The parameters reach the other ranks through the file, which
		// rank 0 has read and which is in place.
		if r.ID() != 0 {
			c, err := model.ReadFile(path)
			if err != nil {
				return nil, "", err
			}
			saved = c
		}
		return saved, path + " (saved)", nil
	}
	c, err := model.Calibrate(ctx, r, model.CalibrateOptions{})
	if err != nil {
		return nil, "", err
	}
	if r.ID() == 0 {
		if err := model.WriteFile(path, c); err != nil {
			return nil, "", err
		}
	}
	return c, path + " (measured now)", nil
}
