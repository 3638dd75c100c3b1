package reduce

import (
	"fmt"
	"time"
)

// Gather says which ranks reduce which pairs.
type Gather int

// The gather modes.
const (
	// GatherDefault is the zero value: the caller's default. mr and
	// shuffle.Collect take it as GatherPartitioned (Resolve); each app has
	// its own default.
	GatherDefault Gather = iota
	// GatherPartitioned sends each pair to rank xxhash(encoded key) mod N,
	// through one all-to-all: each pair moves once and each rank reduces
	// its own key range. The default for large key spaces.
	GatherPartitioned
	// GatherAll gives every rank every pair (AllgatherV): each computes the
	// whole result.
	GatherAll
	// GatherRoot gives the root every pair (GatherV): only it reduces.
	GatherRoot
	// GatherNone keeps each rank's pairs where they are: each rank reduces
	// its own.
	GatherNone
)

// Resolve returns g, or GatherPartitioned for GatherDefault: the one
// place the library's default gather is decided.
func (g Gather) Resolve() Gather {
	if g == GatherDefault {
		return GatherPartitioned
	}
	return g
}

func (g Gather) String() string {
	switch g {
	case GatherDefault:
		return "default"
	case GatherPartitioned:
		return "partitioned"
	case GatherAll:
		return "all"
	case GatherRoot:
		return "root"
	case GatherNone:
		return "none"
	}
	return fmt.Sprintf("Gather(%d)", int(g))
}

// Transfer says how pairs move.
type Transfer int

// The transfer modes.
const (
	// Collective moves each rank's pairs with one extended collective
	// (AllgatherV, GatherV or ExchangeV on private buffers).
	Collective Transfer = iota
	// ElementByElement puts every pair separately into its destination's
	// receive area: UPC-MR's no-collectives mode, kept as a baseline.
	ElementByElement
)

func (t Transfer) String() string {
	if t == ElementByElement {
		return "element"
	}
	return "collective"
}

// NodeCombine says whether the ranks of a node combine their pairs into
// one node-level table before pairs move between ranks (shuffle.Collect),
// so that the pairs that move scale with nodes × distinct keys instead of
// ranks × distinct keys.
type NodeCombine int

// The node-combining settings.
const (
	// NodeAuto combines where it is correct and pays: the store combines
	// with a commutative combiner, the gather mode moves pairs (not
	// GatherNone), some node has more than one rank, and the transport
	// maps every segment in the process (pgas.Rank.MemoryMapped: inproc,
	// shm), so the table's fine-grained one-sided operations are memory
	// accesses.
	NodeAuto NodeCombine = iota
	// NodeOn combines wherever it is correct, on any transport.
	NodeOn
	// NodeOff never combines across ranks before the exchange.
	NodeOff
)

func (n NodeCombine) String() string {
	switch n {
	case NodeAuto:
		return "auto"
	case NodeOn:
		return "on"
	case NodeOff:
		return "off"
	}
	return fmt.Sprintf("NodeCombine(%d)", int(n))
}

// ParseNodeCombine parses "auto", "on" or "off".
func ParseNodeCombine(s string) (NodeCombine, error) {
	for _, n := range []NodeCombine{NodeAuto, NodeOn, NodeOff} {
		if s == n.String() {
			return n, nil
		}
	}
	return NodeAuto, fmt.Errorf("unknown node-combine setting %q (want auto, on or off)", s)
}

// Options configures the reduce stage's data movement (shuffle.Collect).
type Options struct {
	Gather   Gather
	Root     int // for GatherRoot and Merge
	Transfer Transfer
	// Node says whether the ranks of a node combine their pairs first.
	Node NodeCombine
	// NodeBudget bounds the pairs the ranks of a node hold in their own
	// tables while they map with node combining (mr.WithReduce): each
	// rank's share is NodeBudget divided by the ranks of its node (at
	// least MinRankBudget), and a rank hands its colder pairs to the
	// node's table whenever it holds its share, so that memory grows with
	// the node's keys, not with its ranks. 0 means DefaultNodeBudget; a
	// negative budget sets no bound (pairs go to the node's table when
	// the map has ended).
	NodeBudget int
	// Merge, with GatherNone or GatherPartitioned, gathers every rank's
	// (combined) pairs to Root afterwards, merged in key order, so that the
	// root can compute the whole result.
	Merge bool
}

// DefaultNodeBudget is Options.NodeBudget's zero value: at 64 ranks in a
// node 4,096 pairs a rank; at 2, 131,072.
const DefaultNodeBudget = 1 << 18

// MinRankBudget is the least share of a node's budget a rank gets.
const MinRankBudget = 64

// Stats counts one rank's reduce-stage work.
type Stats struct {
	// PairsEmitted counts the pairs this rank's map gave its store, and
	// the occurrences it counted straight into its node's table
	// (CountSink), each a pair (key, n).
	PairsEmitted  int64
	PairsMoved    int64 // pairs this rank sent to other ranks
	BytesSent     int64 // bytes of pairs this rank sent to other ranks
	BytesReceived int64 // bytes of pairs other ranks sent to this rank
	// NodePairs counts the pairs this rank folded into its node's table
	// (Options.Node), the occurrences it counted into it included, and
	// NodeOverflow those it could not (the table was full), which moved
	// as ordinary pairs instead.
	NodePairs    int64
	NodeOverflow int64
	// Rounds counts the rounds of a bounded exchange (the store spills:
	// package reduce/shuffle), 0 for one unbounded exchange.
	Rounds int64
	// SpillFiles and SpillBytes count what the rank's store wrote to
	// temporary files under its memory budget (Store.SetSpill), merges
	// of spilled files included: everything its Spill has written, since
	// it was made (package mr makes a store's at its first map).
	SpillFiles int64
	SpillBytes int64
	Combine    time.Duration
	Node       time.Duration // node-level combining, when it ran
	Exchange   time.Duration
	Merge      time.Duration
}

// Add adds o's counts and times into s.
func (s *Stats) Add(o Stats) {
	s.PairsEmitted += o.PairsEmitted
	s.PairsMoved += o.PairsMoved
	s.BytesSent += o.BytesSent
	s.BytesReceived += o.BytesReceived
	s.NodePairs += o.NodePairs
	s.NodeOverflow += o.NodeOverflow
	s.Rounds += o.Rounds
	s.SpillFiles += o.SpillFiles
	s.SpillBytes += o.SpillBytes
	s.Combine += o.Combine
	s.Node += o.Node
	s.Exchange += o.Exchange
	s.Merge += o.Merge
}
