package ranktest

import (
	"context"
	"sync/atomic"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll/colltest"
	"github.com/pgasmr/pgasmr/pgas/pgastest"
)

// Conformance runs the pgas conformance suite (pgastest.RunAll) in one job
// of cfg: every rank calls it.
func Conformance(ctx context.Context, cfg pgas.Config) error {
	return pgas.Run(ctx, cfg, pgastest.RunAll)
}

// Collectives runs the collectives' suite (colltest.RunAll) in one job of
// cfg and reports whether this process's ranks had native collectives.
func Collectives(ctx context.Context, cfg pgas.Config) (native bool, err error) {
	var nat atomic.Bool
	err = pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
		nat.Store(r.Native() != nil)
		return colltest.RunAll(ctx, r)
	})
	return nat.Load(), err
}
