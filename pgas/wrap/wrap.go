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

// base is what every wrapper's endpoint forwards unchanged to the inner
// one: identity, segment, failure and close, and the native collectives,
// which the wrapper sets (wrapped in its own behaviour) when the inner
// endpoint has them. Embedding it keeps a wrapper from losing an
// optional capability of what it wraps.
type base struct {
	inner transport.Extended
	nat   transport.Collectives // nil if inner has no native collectives
}

func (b *base) Rank() int       { return b.inner.Rank() }
func (b *base) Size() int       { return b.inner.Size() }
func (b *base) Segment() []byte { return b.inner.Segment() }
func (b *base) Fail(err error)  { b.inner.Fail(err) }
func (b *base) Close() error    { return b.inner.Close() }

// Failed is the inner endpoint's.
func (b *base) Failed() <-chan struct{} { return b.inner.Failed() }

// MemoryMapped is the inner endpoint's.
func (b *base) MemoryMapped() bool { return b.inner.MemoryMapped() }

// Depart is the inner endpoint's.
func (b *base) Depart() { b.inner.Depart() }

// Mapped is nil: a wrapper sees every access to another rank's segment.
func (b *base) Mapped(int) []byte { return nil }

// Collectives returns the inner endpoint's native collectives as the
// wrapper wraps them, or nil if it has none.
func (b *base) Collectives() transport.Collectives { return b.nat }
