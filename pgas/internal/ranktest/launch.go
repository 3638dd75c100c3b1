package ranktest

import (
	"context"
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/launch"
)

// LaunchCount is the body that checks package launch under a launcher: it
// gets its configuration from launch.FromEnv, as any program does, which
// must give tr (the transport the harness made) and its size ranks, and
// counts the ranks with FetchAdd on rank 0, which prints "LAUNCH <what
// launch.Launched says> <transport name> <ranks> <count>".
func LaunchCount(ctx context.Context, tr pgas.Transport, size int) error {
	cfg, err := launch.FromEnv(pgas.Config{Ranks: 1})
	if err != nil {
		return err
	}
	kind, err := launch.Launched()
	if err != nil {
		return err
	}
	if cfg.Transport != tr || cfg.Ranks != size {
		return fmt.Errorf("launch.FromEnv = %+v; want the %s transport and %d ranks", cfg, tr.Name(), size)
	}
	return pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		a, err := pgas.AllAllocArray[int64](ctx, r, 1, 1)
		if err != nil {
			return err
		}
		if _, err := pgas.FetchAdd(ctx, a, 0, 1); err != nil {
			return err
		}
		if err := r.Barrier(ctx); err != nil {
			return err
		}
		if r.ID() == 0 {
			fmt.Printf("LAUNCH %s %s %d %d\n", kind, r.TransportName(), r.N(), a.Local()[0])
		}
		return nil
	})
}
