package wrap

import (
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// mustInner panics unless inner is a transport: a wrapper of nothing is a
// programming error that would otherwise surface later as a nil dereference.
func mustInner(who string, inner transport.Transport) {
	if inner == nil {
		panic("wrap: " + who + ": nil inner transport")
	}
}

// hosted reports whether rank is a valid index into per-rank state of a job
// of n ranks.
func hosted(rank, n int) bool { return rank >= 0 && rank < n }
