// Package job runs a whole pgasmr program from its main in one call: the
// job's configuration from the environment (in-process ranks when the
// program is run directly, its one rank when mrrun exec or an MPI
// launcher started it), SIGINT and SIGTERM, MPI's finalisation, and the
// root rank's result handed back to main in the process that hosts it.
//
//	func main() {
//		o := job.Flags(flag.CommandLine) // -np
//		flag.Parse()
//		top, ok, err := job.Run(*o, func(ctx context.Context, r *pgas.Rank) ([]mr.KV[string, int64], error) {
//			... mr.ApplyMap, mr.ReduceKeys, mr.TopK ...
//		})
//		if err != nil {
//			log.Fatal(err)
//		}
//		if ok { // this process hosts the root
//			print(top)
//		}
//	}
package job

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"syscall"

	"github.com/pgasmr/pgasmr/internal/memlimit"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/launch"
)

// Options configure Run.
type Options struct {
	// Ranks is the number of in-process ranks when no launcher started
	// this process (0: runtime.NumCPU()). Under a launcher the launcher's
	// job decides.
	Ranks int
	// Root is the rank whose result Run returns; if it is 0, Mode's root
	// is (a job run with -mode root=N returns rank N's result). Run fails
	// if the two are set and differ.
	Root int
	// Mode is the job's MapReduce options, as mrrun's --mode gives them
	// (mr.ParseOptions; -mode of Flags). Run attaches them to the context
	// the body gets (mr.WithJobOptions), so that they take effect in every
	// map and reduce call of the body without further code.
	Mode mr.Options
	// Config is the rest of the job's configuration (its Ranks and
	// Transport are set by Run).
	Config pgas.Config
}

// Flags registers -np (the in-process ranks, as mrrun's), -mode (the
// job's mr.Options in their one-word form, as mrrun's --mode: block,
// cyclic+root, partitioned+node=off, ...), -memory and -tmp (the memory
// the job's pairs may hold on a node before they spill to files in the
// directory, Config.MemoryBytes and TmpDir, as mrrun's --memory and
// --tmp; by default half the memory the process can have) on fs and
// returns the Options they fill.
func Flags(fs *flag.FlagSet) *Options {
	o := new(Options)
	fs.IntVar(&o.Ranks, "np", runtime.NumCPU(), "ranks when run directly (a launcher's job decides otherwise)")
	fs.TextVar(&o.Mode, "mode", mr.Options{}, "the job's modes joined by + (mrrun's --mode; root=N returns rank N's result)")
	o.Config.MemoryBytes, _ = memlimit.DefaultBudget()
	fs.Func("memory", "memory the job's pairs may hold on a node before they spill to files (k, MB, MiB, ... suffixes; 0: no bound; default auto: half the memory the process can have)", func(s string) (err error) {
		o.Config.MemoryBytes, _, err = memlimit.ParseBudget(s)
		return err
	})
	fs.StringVar(&o.Config.TmpDir, "tmp", "", "directory for the files pairs spill to (default: $TMPDIR or /tmp)")
	return o
}

// ErrInterrupted is wrapped by Run's error when SIGINT or SIGTERM ended
// the job.
var ErrInterrupted = errors.New("job: interrupted")

// Run runs body on every rank of this program's job hosted by this process
// and returns the root rank's result: ok is true in the process that hosts
// the root (the only one for in-process ranks), false with the zero R in
// the others. SIGINT and SIGTERM cancel the job (the error then wraps
// ErrInterrupted); any rank's error fails the job, as pgas.Run says.
func Run[R any](o Options, body func(ctx context.Context, r *pgas.Rank) (R, error)) (res R, ok bool, err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, o, body)
}

func run[R any](ctx context.Context, o Options, body func(ctx context.Context, r *pgas.Rank) (R, error)) (res R, ok bool, err error) {
	cfg := o.Config
	cfg.Ranks = o.Ranks
	if cfg.Ranks == 0 {
		cfg.Ranks = runtime.NumCPU()
	}
	if cfg, err = launch.FromEnv(cfg); err != nil {
		return res, false, err
	}
	defer launch.Done(cfg)
	root := o.Root
	switch {
	case root == 0:
		root = o.Mode.Root
	case o.Mode.Root != 0 && o.Mode.Root != root:
		return res, false, fmt.Errorf("job: Options.Root is %d but the mode's root is %d", root, o.Mode.Root)
	}
	if root < 0 || root >= cfg.Ranks {
		return res, false, fmt.Errorf("job: root %d is not a rank (ranks are 0 to %d)", root, cfg.Ranks-1)
	}
	if err := o.Mode.Validate(mr.Defaults{ArrayMap: true}); err != nil {
		return res, false, fmt.Errorf("job: mode %v: %w", o.Mode, err)
	}
	ctx = mr.WithJobOptions(ctx, o.Mode)
	var mu sync.Mutex
	err = pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		v, err := body(ctx, r)
		if err != nil {
			return err
		}
		// The root's result is empty while another rank's is not: the
		// body put its result on another rank (a TopK or GatherValues
		// to a root of its own, a partitioned reduce read on one rank).
		// Returning the root's would be a wrong answer.
		if r.ID() == root && isZero(v) && r.N() > 1 {
			if other, err := nonEmptyRank(ctx, r, false); err != nil {
				return err
			} else if other >= 0 {
				return fmt.Errorf("job: the root, rank %d, returned an empty result while rank %d returned one: the body must leave its whole result on the root (mr.JobOptionsFrom(ctx) gives the job's Root; a reduce without a Gather option gives every rank the whole result)", root, other)
			}
		} else if r.N() > 1 {
			if _, err := nonEmptyRank(ctx, r, !isZero(v)); err != nil {
				return err
			}
		}
		if r.ID() == root {
			mu.Lock()
			res, ok = v, true
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		var zero R
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ErrInterrupted, err)
		}
		return zero, false, err
	}
	return res, ok, nil
}

// nonEmptyRank is collective: each rank says whether its result is not
// empty, and every rank gets the lowest rank whose result is not, or -1.
func nonEmptyRank(ctx context.Context, r *pgas.Rank, nonEmpty bool) (int, error) {
	flags := make([]int64, r.N())
	mine := []int64{0}
	if nonEmpty {
		mine[0] = 1
	}
	if err := coll.Allgather(ctx, r.World(), coll.Private(flags), coll.Private(mine), 1); err != nil {
		return -1, fmt.Errorf("job: comparing the ranks' results: %w", err)
	}
	return slices.Index(flags, 1), nil
}

// isZero reports whether v is empty: a slice, map or string of length 0,
// a nil pointer or interface, or a struct with every field zero. A number
// or a bool is never empty: 0 and false are answers.
func isZero(v any) bool {
	rv := reflect.ValueOf(v)
	switch k := rv.Kind(); {
	case !rv.IsValid():
		return true
	case k == reflect.Slice || k == reflect.Map || k == reflect.String:
		return rv.Len() == 0
	case k == reflect.Pointer || k == reflect.Interface || k == reflect.Struct || k == reflect.Array:
		return rv.IsZero()
	}
	return false
}
