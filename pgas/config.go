package pgas

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/pgasmr/pgasmr/internal/size"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// MaxHeapFloor caps the least heap goal pgas.Run keeps for the garbage
// collector while a job runs: the bytes of the segments the process
// hosts, up to MaxHeapFloor (see Run). It does not grow with the ranks a
// process hosts: at 8 in-process ranks a 128 MiB floor let a wordcount
// job's heap reach twice its live size for nothing (166 MB peak RSS
// against 79 MB at this floor, in the same time).
const MaxHeapFloor = 32 << 20

// MemorySlack is what a process running a job under a memory budget
// (Config.MemoryBytes) may hold beyond the budget of the ranks it hosts:
// the runtime, input buffers, a result being written. Run keeps Go's
// memory limit at the two together while the job runs (unless GOMEMLIMIT
// is set), so that garbage does not take the process past them.
const MemorySlack = 32 << 20

// The runtime's memory for a rank, in resident bytes: its goroutine's
// stack, its Rank with the state of its teams and collectives (which does
// not grow with the number of ranks: see TestNPRankMemoryLinear), and the
// pages of its segment that every job touches (the header's result and
// call-check slots, the world team's control block, the start of the
// collectives' staging area). TestNPRankCostMeasure (pgas/np_memory_test.go)
// measured 46 to 59 KiB of resident memory a rank over 1,000 and 3,000
// in-process ranks making a broadcast, an allreduce and a gather
// (linux/amd64, Go 1.26): about 30 KiB of heap and stack (of which
// TestNPRankMemoryLinear sees 26 to 37 KiB, per-peer counters of an
// all-to-all included) and 4 to 6 pages of segment. RankCostBytes rounds
// that up, with room for the pages a job's own collectives stage in.
const (
	rankStateBytes   = 32 << 10
	rankSegmentPages = 8
)

// RankCostBytes is what the runtime costs a rank in memory:
// rankStateBytes of heap and stack and rankSegmentPages pages of its
// segment, 64 KiB with 4 KiB pages. The ranks of a node pay it out of
// the node's MemoryBytes, beyond the MemorySlack a process may hold
// anyway: see Config.MemoryBytes.
var RankCostBytes = int64(rankStateBytes + rankSegmentPages*os.Getpagesize())

// DefaultPairBytes is Config.PairBytes where a Config leaves it zero: 0
// in the library. A program whose jobs hold memory for every pair of
// ranks (the counts and buffers of all-to-all exchanges, as every
// MapReduce shuffle makes) sets it to what they hold, so that Validate
// counts it for every job the program runs (mrrun does).
var DefaultPairBytes int64

// RuntimeBytes returns what the runtime costs ranks ranks in memory
// (RankCostBytes each).
func RuntimeBytes(ranks int) int64 { return mulSat(int64(ranks), RankCostBytes) }

// mulSat returns a*b for non-negative a and b, or math.MaxInt64 if that
// overflows.
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// BudgetError is Validate's error for a job whose ranks need more memory
// on a node, for the runtime and the pairs of ranks (Config.PairBytes),
// than the node's budget and MemorySlack allow.
type BudgetError struct {
	Ranks       int   // ranks on the node
	AllRanks    bool  // the node holds every rank of the job
	Need        int64 // what they need
	RankBytes   int64 // RankCostBytes
	PairBytes   int64 // Config.PairBytes (or DefaultPairBytes)
	MemoryBytes int64 // the node's budget
	SlackBytes  int64 // MemorySlack
	MaxRanks    int   // the most ranks on the node that fit
}

func (e *BudgetError) Error() string {
	what, need := fmt.Sprintf("%d ranks", e.Ranks), "needs"
	if e.Ranks != 1 {
		need = "need"
	}
	if !e.AllRanks {
		what += " on a node"
	}
	cost := fmt.Sprintf("for the runtime alone (%s a rank)", size.String(e.RankBytes))
	if e.PairBytes > 0 {
		cost = fmt.Sprintf("(%s a rank for the runtime, %d B for each pair of ranks)", size.String(e.RankBytes), e.PairBytes)
	}
	return fmt.Sprintf("pgas: %s %s about %s %s, over the memory budget of %s and the %s a process may hold beyond it; at most %d ranks fit",
		what, need, size.String(e.Need), cost, size.String(e.MemoryBytes), size.String(e.SlackBytes), e.MaxRanks)
}

// pairBytes returns PairBytes, or DefaultPairBytes where it is zero.
func (c Config) pairBytes() int64 {
	if c.PairBytes > 0 {
		return c.PairBytes
	}
	return max(DefaultPairBytes, 0)
}

// nodeNeed returns the memory the ranks of the largest node need: the
// runtime's (RuntimeBytes) and the pairs' they form with every rank
// (PairBytes each).
func (c Config) nodeNeed() int64 {
	node := int64(min(c.RanksPerNode, c.Ranks))
	pairs := mulSat(node, int64(c.Ranks))
	return min(RuntimeBytes(int(node))+mulSat(pairs, c.pairBytes()), math.MaxInt64/2)
}

// runtimeOver returns how much of a node's MemoryBytes its ranks' runtime
// and pairs take: what nodeNeed holds beyond MemorySlack, 0 if it fits
// in it (then the job's data has the whole budget).
func (c Config) runtimeOver() int64 {
	return max(0, c.nodeNeed()-MemorySlack)
}

// Defaults used where a Config field is zero.
const (
	DefaultSegmentBytes    = 16 << 20
	DefaultShutdownTimeout = 5 * time.Second
	DefaultFragmentBytes   = 1 << 20
	// MinSegmentBytes is the smallest segment Validate accepts: room for
	// the runtime's header and a little heap.
	MinSegmentBytes = 64 << 10
)

// Config describes a job. The zero value is valid: it runs GOMAXPROCS ranks
// on the in-process transport, all on one logical node.
type Config struct {
	// Ranks is THREADS, the number of ranks. Zero means runtime.GOMAXPROCS(0).
	Ranks int
	// RanksPerNode maps ranks to logical nodes: rank r is on node
	// r/RanksPerNode (the last node may be partly filled). Zero means all
	// ranks on one node. In one process the
	// nodes are logical; collectives use them to pick algorithms and the
	// counters report traffic per node class.
	RanksPerNode int
	// SegmentBytes is the size of each rank's shared segment, a multiple of
	// 8 of at least MinSegmentBytes plus the header's per-rank table.
	// Zero means DefaultSegmentBytes.
	SegmentBytes int64
	// Transport moves data between ranks. Nil means the in-process
	// transport (package inproc).
	Transport transport.Transport
	// NoCheck turns off the cross-rank argument checks of collective
	// calls, which are on by default: AllAlloc's sizes, the name and
	// single-valued arguments of every collective of package coll (an
	// Allreduce whose count differs between ranks, a Broadcast whose
	// ranks name different roots), and package mr's calls and inputs. A
	// mismatch is reported at once, naming the ranks and the values,
	// instead of a wrong result or a hang. The check costs a team barrier
	// and one small get per call where the call has no entry barrier of
	// its own; NoCheck is for programs that have shown their calls
	// agree and make many small collective calls.
	NoCheck bool
	// SyncTimeout bounds every wait for other ranks (barrier, lock, Wait).
	// Zero or a negative value means no bound, the default: a rank may
	// wait as long as the others work (a root reducing a large result
	// while the others wait at the end), and a rank that cannot come is
	// reported at once instead, where the transport can tell: one that
	// failed or returned (every transport), a rank process that died or a
	// launcher that is gone (shm), MPI's abort of the job (mpi). A bound
	// turns a hang the transport cannot see (a rank stuck in its own code)
	// into an error wrapping ErrTimeout.
	SyncTimeout time.Duration
	// ShutdownTimeout is how long Run waits, after the first failure, for
	// the other in-process ranks to return before it gives up on them and
	// reports them as stuck. Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// FragmentBytes is the largest single transfer; bulk operations split
	// larger ones. Zero means DefaultFragmentBytes.
	FragmentBytes int64
	// JobID names the job for transports that need a name. Empty means a
	// name made from the process id and time.
	JobID string
	// MemoryBytes bounds the memory the intermediate data of a node's
	// ranks may hold (a node as RanksPerNode defines it: the ranks of one
	// host, or of one process in-process). Each rank gets an equal share
	// (Rank.MemoryShare), which the layers above keep to by writing what
	// they cannot hold to temporary files in TmpDir (package mr sets it on
	// a job's stores: reduce.Store.SetSpill), and Run keeps Go's memory
	// limit at the shares of the ranks it hosts plus MemorySlack. The
	// segments (SegmentBytes) are apart from it. The runtime's own
	// memory for the ranks of a node (RankCostBytes each) comes out of
	// MemorySlack first and then out of MemoryBytes, before the shares:
	// a node whose ranks' runtime does not fit in the two together is an
	// error of Validate (a *BudgetError), before any rank starts, and so
	// is one whose pairs of ranks need more (PairBytes). Zero means no
	// bound.
	MemoryBytes int64
	// PairBytes is the memory the job holds on a node for each pair of
	// one of the node's ranks and any rank: the counts and buffers of
	// all-to-all exchanges, which every rank makes with every other in a
	// MapReduce shuffle. It counts against MemoryBytes with the runtime's
	// RankCostBytes. Zero means DefaultPairBytes.
	PairBytes int64
	// TmpDir is the directory temporary files are made in. Empty means
	// os.TempDir().
	TmpDir string
	// Turns is how many of the ranks a process hosts hold a turn at once
	// (Rank.TakeTurn: package mr's maps take one). Zero means
	// runtime.GOMAXPROCS(0); a negative value, or one no less than the
	// ranks the process hosts, means no turns: TakeTurn returns at once.
	Turns int
	// Cache turns on each rank's remote-reference cache for element
	// accesses (see CacheConfig). The zero value is no cache.
	Cache CacheConfig
}

// WithDefaults returns c with every zero field replaced by its default.
func (c Config) WithDefaults() Config {
	if c.Ranks == 0 {
		c.Ranks = runtime.GOMAXPROCS(0)
	}
	if c.RanksPerNode == 0 {
		c.RanksPerNode = c.Ranks
	}
	if c.SegmentBytes == 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.FragmentBytes == 0 {
		c.FragmentBytes = DefaultFragmentBytes
	}
	return c
}

// Validate reports every problem with c (after defaults are applied), joined
// into one error, or nil.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	if c.Ranks < 1 {
		errs = append(errs, fmt.Errorf("pgas: Ranks = %d, want at least 1", c.Ranks))
	}
	if c.RanksPerNode < 1 {
		errs = append(errs, fmt.Errorf("pgas: RanksPerNode = %d, want at least 1", c.RanksPerNode))
	}
	if c.SegmentBytes%8 != 0 {
		errs = append(errs, fmt.Errorf("pgas: SegmentBytes = %d is not a multiple of 8", c.SegmentBytes))
	}
	if c.Ranks >= 1 {
		if min := MinSegmentBytes + headerBytes(c.Ranks); c.SegmentBytes < min {
			errs = append(errs, fmt.Errorf("pgas: SegmentBytes = %d, want at least %d for %d ranks", c.SegmentBytes, min, c.Ranks))
		}
	}
	if c.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("pgas: ShutdownTimeout = %v is negative", c.ShutdownTimeout))
	}
	if c.MemoryBytes < 0 {
		errs = append(errs, fmt.Errorf("pgas: MemoryBytes = %d is negative", c.MemoryBytes))
	}
	if c.PairBytes < 0 {
		errs = append(errs, fmt.Errorf("pgas: PairBytes = %d is negative", c.PairBytes))
	}
	if err := c.checkBudget(); err != nil {
		errs = append(errs, err)
	}
	if c.FragmentBytes < 8 {
		errs = append(errs, fmt.Errorf("pgas: FragmentBytes = %d, want at least 8", c.FragmentBytes))
	}
	if err := c.Cache.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkBudget returns a *BudgetError if the runtime of the ranks of a
// node takes more than the node's MemoryBytes beyond MemorySlack (c has
// its defaults).
func (c Config) checkBudget() error {
	if c.MemoryBytes <= 0 || c.Ranks < 1 || c.RanksPerNode < 1 {
		return nil
	}
	over := c.runtimeOver()
	if over < c.MemoryBytes {
		return nil
	}
	node := min(c.RanksPerNode, c.Ranks)
	e := &BudgetError{Ranks: node, AllRanks: node == c.Ranks, Need: c.nodeNeed(), RankBytes: RankCostBytes,
		PairBytes: c.pairBytes(), MemoryBytes: c.MemoryBytes, SlackBytes: MemorySlack}
	// The most ranks that fit: n·R + n·N·P <= B, N being n itself when
	// the node holds every rank.
	b, r, p := float64(c.MemoryBytes+MemorySlack), float64(RankCostBytes), float64(e.PairBytes)
	if e.AllRanks && p > 0 {
		e.MaxRanks = int((-r + math.Sqrt(r*r+4*p*b)) / (2 * p))
	} else {
		e.MaxRanks = int(b / (r + float64(c.Ranks)*p))
	}
	return e
}

func (c Config) job() transport.Job {
	j := transport.Job{ID: c.JobID, Ranks: c.Ranks, SegmentBytes: c.SegmentBytes}
	if c.SyncTimeout > 0 {
		j.SyncTimeout = c.SyncTimeout
	}
	return j
}
