package pgas_test

import (
	"context"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/wrap"
)

// TestCastWhereMapped: in-process ranks cast every rank's segment (the
// conformance check "cast" then exercises the stores), and under a
// wrapper, which must see every access, no other rank's.
func TestCastWhereMapped(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tr     func() pgas.Config
		mapped bool
	}{
		{"inproc", func() pgas.Config { return pgas.Config{Ranks: 3, Transport: inproc.New()} }, true},
		{"counting", func() pgas.Config { return pgas.Config{Ranks: 3, Transport: wrap.NewCounting(inproc.New())} }, false},
		{"latency", func() pgas.Config { return pgas.Config{Ranks: 3, Transport: wrap.NewLatency(inproc.New(), 0)} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runJob(t, tc.tr(), func(ctx context.Context, r *pgas.Rank) error {
				for q := range r.N() {
					seg := r.Cast(q)
					switch {
					case q == r.ID() && len(seg) != len(r.Segment()):
						t.Errorf("rank %d: Cast(self) is %d bytes; want its segment", q, len(seg))
					case q != r.ID() && (seg != nil) != tc.mapped:
						t.Errorf("rank %d: Cast(%d) mapped %v; want %v", r.ID(), q, seg != nil, tc.mapped)
					}
				}
				return nil
			})
		})
	}
}
