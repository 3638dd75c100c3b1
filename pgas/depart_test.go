package pgas_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// TestRankReturnedEarly: when the ranks other than the root return while
// the root goes on with barriers (a common mistake: "if r.ID() != 0 {
// return nil }" before a collective), the root fails at once with an
// error naming a rank that returned, not after SyncTimeout. Through a
// wrapper too.
func TestRankReturnedEarly(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   func() transport.Transport
	}{
		{"inproc", func() transport.Transport { return inproc.New() }},
		{"counting", func() transport.Transport { return wrap.NewCounting(inproc.New()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			err := pgas.Run(t.Context(), pgas.Config{Ranks: 3, SegmentBytes: 1 << 20, SyncTimeout: time.Minute, Transport: tc.tr()}, func(ctx context.Context, r *pgas.Rank) error {
				if r.ID() != 0 {
					return nil
				}
				for range 3 {
					if err := r.Barrier(ctx); err != nil {
						return err
					}
				}
				return nil
			})
			if took := time.Since(t0); took > 10*time.Second {
				t.Errorf("the job took %v; want the root to learn at once", took)
			}
			if !errors.Is(err, transport.ErrReturned) || !strings.Contains(err.Error(), "has already returned") {
				t.Fatalf("err = %v; want one wrapping ErrReturned", err)
			}
			if !strings.Contains(err.Error(), "rank 1") && !strings.Contains(err.Error(), "rank 2") {
				t.Errorf("err = %v; want it to name rank 1 or 2", err)
			}
		})
	}
}
