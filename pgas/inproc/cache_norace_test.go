//go:build !race

package inproc_test

import (
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/pgastest"
)

// TestConformanceCache runs the conformance suite with the
// remote-reference cache on, in geometries from one 8-byte line per rank
// (every access evicts) to MuPC's defaults. Not under the race detector:
// a cache's line load reads bytes of the line the program did not ask
// for, which other ranks may be writing at that moment; the program never
// sees those bytes (the memory model allows the load), but in one process
// the detector reports the overlap.
func TestConformanceCache(t *testing.T) {
	for _, tc := range []struct {
		ranks, perNode int
		cache          pgas.CacheConfig
	}{
		{2, 0, pgas.CacheConfig{Lines: 1, LineBytes: 8, VictimLines: -1}},
		{3, 2, pgas.CacheConfig{Lines: 2, LineBytes: 64, VictimLines: 1}},
		{4, 2, pgas.CacheConfig{Lines: 16, LineBytes: 256}},
		{8, 4, pgas.CacheConfig{Lines: pgas.DefaultCacheLines}},
	} {
		t.Run(fmt.Sprintf("ranks=%d/%s", tc.ranks, tc.cache), func(t *testing.T) {
			pgastest.Test(t, pgas.Config{Ranks: tc.ranks, RanksPerNode: tc.perNode, SegmentBytes: 1 << 20, Cache: tc.cache})
		})
	}
}
