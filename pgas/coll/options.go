package coll

import (
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
)

// Sync is a collective's synchronisation mode, an IN flag or'ed with an OUT
// flag, as UPC's upc_flag_t. The zero value is InAll|OutAll.
//
//   - InAll: no data is read or written before every member has entered.
//   - InNo: the collective may start at once; the caller guarantees that
//     the data is ready on every member.
//   - OutAll: a member returns only after the whole collective is complete.
//   - OutNo: a member may return while others still move data; the caller
//     must synchronise before touching the destination elsewhere.
//
// InMy and OutMy (synchronise only with ranks whose data this rank touches)
// are implemented as InAll and OutAll, which UPC permits.
type Sync uint8

// The synchronisation flags.
const (
	InAll  Sync = 0
	InMy   Sync = 1
	InNo   Sync = 2
	OutAll Sync = 0
	OutMy  Sync = 4
	OutNo  Sync = 8
)

func (s Sync) inSync() bool  { return s&InNo == 0 }
func (s Sync) outSync() bool { return s&OutNo == 0 }

func (s Sync) String() string {
	in, out := "InAll", "OutAll"
	switch {
	case s&InNo != 0:
		in = "InNo"
	case s&InMy != 0:
		in = "InMy"
	}
	switch {
	case s&OutNo != 0:
		out = "OutNo"
	case s&OutMy != 0:
		out = "OutMy"
	}
	return in + "|" + out
}

// Algo selects the communication tree of rooted collectives (broadcast,
// scatter, gather, reduce).
type Algo uint8

// The algorithms of seeds/002 §3.2.4.
const (
	// Auto picks Flat on one node, Binomial with one rank per node and
	// BinomialFlat otherwise.
	Auto Algo = iota
	// Flat: the root talks to every member directly, all in one step.
	Flat
	// Binomial: recursive halving over all members, ceil(log2 n) steps.
	Binomial
	// BinomialFlat: binomial over one leader per node, then flat inside
	// each node.
	BinomialFlat
	// FlatFlat: the flat-tree hierarchical algorithm (seeds/002 Fig.
	// 3.8): the root to one leader per node, then each leader to the
	// members of its node; one message between nodes per node.
	FlatFlat
	// Chain: a broadcast between private buffers passes the message along
	// the members from the root in chunks, each member copying a chunk
	// out of its ring while its predecessor writes the next (on
	// transports whose segments are mapped in memory, inproc and shm;
	// see chain.go). Auto takes it for private broadcasts of 512 KiB or
	// more on one node. Every other collective, and a broadcast it does
	// not apply to, treats Chain as Flat.
	Chain
)

func (a Algo) String() string {
	switch a {
	case Auto:
		return "auto"
	case Flat:
		return "flat"
	case Binomial:
		return "binomial"
	case BinomialFlat:
		return "binomial-flat"
	case FlatFlat:
		return "flat-flat"
	case Chain:
		return "chain"
	}
	return fmt.Sprintf("Algo(%d)", int(a))
}

type options struct {
	sync     Sync
	root     int
	algo     Algo
	segment  int64
	allThr   bool
	noNative bool
	cyclic   bool
	// Tests: run from the global plan even where a structured one
	// serves; hand both plans to verify before running the structured
	// one.
	global bool
	verify func(t *pgas.Team, esz int64, p *pairPlan, global []move)
}

// Option configures one collective call. Options are single-valued: every
// member must pass the same ones.
type Option func(*options)

// WithSync sets the synchronisation mode (default InAll|OutAll).
func WithSync(s Sync) Option { return func(o *options) { o.sync = s } }

// Root sets the root of a rooted collective, as a team id (default 0).
func Root(tid int) Option { return func(o *options) { o.root = tid } }

// WithAlgo selects the tree of a rooted collective (default Auto).
func WithAlgo(a Algo) Option { return func(o *options) { o.algo = a } }

// Segment splits every transfer into messages of at most bytes bytes
// (default Config.FragmentBytes).
func Segment(bytes int64) Option {
	if bytes < 1 {
		panic(fmt.Sprintf("coll: Segment(%d)", bytes))
	}
	return func(o *options) { o.segment = bytes }
}

// AllThr selects the team_allthr form: chunks are placed by global rank
// (chunk i belongs to rank i, THREADS chunks in all) instead of by team id,
// and ranks outside the team simply take no part.
func AllThr() Option { return func(o *options) { o.allThr = true } }

// NoNative makes the call use the library's own algorithm even where the
// transport offers a native collective.
func NoNative() Option { return func(o *options) { o.noNative = true } }

// CyclicChunks declares that chunk i of a chunked reduction (ReduceV,
// AllreduceV, PrefixReduceV) lies on the rank of team id i mod Size, so
// each member reduces its own chunks without scanning the others
// (UPC_EXTCOLLS_VV_CHUNKS).
func CyclicChunks() Option { return func(o *options) { o.cyclic = true } }

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

func (o options) String() string {
	return fmt.Sprintf("sync=%v root=%d algo=%v seg=%d allthr=%v native=%v cyclic=%v",
		o.sync, o.root, o.algo, o.segment, o.allThr, !o.noNative, o.cyclic)
}
