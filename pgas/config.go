package pgas

import (
	"errors"
	"fmt"
	"runtime"
	"time"

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
	// segments (SegmentBytes) are apart from it. Zero means no bound.
	MemoryBytes int64
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
	if c.FragmentBytes < 8 {
		errs = append(errs, fmt.Errorf("pgas: FragmentBytes = %d, want at least 8", c.FragmentBytes))
	}
	if err := c.Cache.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c Config) job() transport.Job {
	j := transport.Job{ID: c.JobID, Ranks: c.Ranks, SegmentBytes: c.SegmentBytes}
	if c.SyncTimeout > 0 {
		j.SyncTimeout = c.SyncTimeout
	}
	return j
}
