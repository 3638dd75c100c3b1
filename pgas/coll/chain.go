package coll

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pgasmr/pgasmr/pgas"
)

// The pipelined chain broadcast between private buffers (Algo Chain).
//
// The staged broadcast moves a private message twice one after the other:
// the root puts it whole into every receiver's staging area, and only
// after a barrier does each receiver copy it out, so a large message costs
// two copies end to end where a shared one costs one (556 against 263 us
// at 8 MiB on 2 ranks). The chain cuts the message into chunks and passes
// them along the members from the root (root, root+1, ...): a member
// copies chunk k out of its ring while its predecessor writes chunk k+1,
// and forwards chunk k to its successor's ring from its own destination.
// With enough chunks the copies overlap and a broadcast costs about one
// copy plus a chunk per member.
//
// Each member has, in its segment, a ring of chainSlots slots of chunk
// bytes and two counters: arrived (chunks its predecessor has written,
// incremented by that predecessor after a Fence) and acked (chunks its
// successor has copied out). Both only grow, over every chain broadcast of
// the team; a member knows how many chunks it has received and sent
// before (the state's chainRecv and chainSent), so a call waits for
// arrived > chainRecv+k and for chainSent-acked < chainSlots. A sender
// returns only once its successor has acknowledged every chunk, so the
// next call, whoever its root, finds every ring empty. Counters are polled
// in the member's own segment with atomic loads, which is why the chain
// needs a transport that maps segments into memory (inproc, shm).

const (
	// chainChunk is the chunk size, at most (Config.FragmentBytes or the
	// call's Segment option bound it too).
	chainChunk = 256 << 10
	// chainSlots is the ring's length in chunks.
	chainSlots = 8
	// chainMinBytes is the smallest message Auto sends along the chain:
	// below it the staged broadcast's one barrier costs less than the
	// chain's per-chunk signals.
	chainMinBytes = 512 << 10
	// chainHeader is the bytes before the ring: arrived, acked, padding
	// to a cache line.
	chainHeader = 64
	// chainMinChunk is the smallest slot the ring settles for when the
	// segment is short of room.
	chainMinChunk = 4 << 10
)

// chainRing is a team's ring area, allocated on first use.
type chainRing struct {
	reg       pgas.Region
	chunk     int64 // bytes per slot
	sent      int64 // chunks this member has forwarded, over all calls
	recv      int64 // chunks this member has received, over all calls
	allocated bool
}

// chainable reports whether this broadcast of n elements goes along the
// chain: private buffers on a memory-mapped transport, a team of at least
// two, and either Chain asked for or Auto with a large message on one node.
func (c *call[T]) chainable(n int64) bool {
	if !c.privOnly() || c.t.Size() < 2 || n == 0 || !c.r.MemoryMapped() {
		return false
	}
	switch c.o.algo {
	case Chain:
		return true
	case Auto:
		return n*c.esz >= chainMinBytes && resolve(c.t, Auto) == Flat
	}
	return false
}

// ring returns the team's ring area, allocating it (collectively) the
// first time: chainSlots slots of the chunk size, bounded by the staging
// limit, in halves down to chainMinChunk if the segment is short of room.
// If even that does not fit it returns nil and no error: the broadcast
// takes the staged path, which needs less (every member learns the same
// from AllAlloc, so all take it).
func (c *call[T]) ring(ctx context.Context) (*chainRing, error) {
	cr := &c.st.chain
	if cr.allocated {
		return cr, nil
	}
	floor := max(chainMinChunk/c.esz*c.esz, c.esz)
	chunk := max(min(chainChunk, stageLimit(c.r)/chainSlots)/c.esz*c.esz, floor)
	for {
		reg, err := c.t.AllAlloc(ctx, chainHeader+chainSlots*chunk)
		if err == nil {
			cr.reg, cr.chunk, cr.allocated = reg, chunk, true
			return cr, nil
		}
		var oom *pgas.OutOfMemoryError
		switch {
		case !errors.As(err, &oom):
			return nil, fmt.Errorf("coll: chain ring: %w", err)
		case chunk == floor:
			return nil, nil
		}
		chunk = max(chunk/2/c.esz*c.esz, floor)
	}
}

// chainBroadcast sends the root's message (src, or dst in place) into
// every member's private dst along the chain. It reports false, having
// done nothing, when no ring fits in the segments.
func (c *call[T]) chainBroadcast(ctx context.Context, inPlace bool, n int64) (bool, error) {
	cr, err := c.ring(ctx)
	if err != nil || cr == nil {
		return false, c.wrap(err)
	}
	size, root, tid := c.t.Size(), c.o.root, c.t.ID()
	pos := (tid - root + size) % size
	dst := c.privSlice(c.chunk(bufDst, tid, n), n)
	data := pgas.Bytes(dst)
	if pos == 0 && !inPlace {
		data = pgas.Bytes(c.privSlice(c.area(bufSrc, root, 0, n), n)) // forwarded from src; copied to dst at the end
	}
	total := int64(len(data))
	chunk := min(cr.chunk, c.segE*c.esz) // the Segment option or FragmentBytes, as every message
	chunks := (total + chunk - 1) / chunk
	seg := c.r.Segment()
	base := cr.reg.Off
	arrived := (*int64)(unsafe.Pointer(&seg[base]))
	acked := (*int64)(unsafe.Pointer(&seg[base+8]))
	ringOff := base + chainHeader
	next := -1
	if pos < size-1 {
		next = c.t.RankOf((tid + 1) % size)
	}
	prev := c.t.RankOf((tid - 1 + size) % size)
	w := c.newWaiter(ctx)
	for k := range chunks {
		lo, hi := k*chunk, min((k+1)*chunk, total)
		slot := ringOff + (k%chainSlots)*cr.chunk
		if pos > 0 {
			if err := w.until(arrived, cr.recv+k+1, "chunk from its predecessor"); err != nil {
				return true, c.wrap(err)
			}
			copy(data[lo:hi], seg[slot:slot+hi-lo])
			if _, err := c.r.FetchAdd(ctx, prev, base+8, 1); err != nil {
				return true, c.wrap(err)
			}
		}
		if next >= 0 {
			if err := w.until(acked, cr.sent+k+1-chainSlots, "its successor's room"); err != nil {
				return true, c.wrap(err)
			}
			if err := c.r.PutBytes(ctx, next, slot, data[lo:hi]); err != nil {
				return true, c.wrap(err)
			}
			if err := c.r.Fence(ctx); err != nil {
				return true, c.wrap(err)
			}
			if _, err := c.r.FetchAdd(ctx, next, base, 1); err != nil {
				return true, c.wrap(err)
			}
		}
	}
	if pos > 0 {
		cr.recv += chunks
	}
	if pos == 0 && !inPlace {
		copy(pgas.Bytes(dst), data) // while the successor copies the last chunk out
	}
	if next >= 0 {
		cr.sent += chunks
		if err := w.until(acked, cr.sent, "its successor's last acknowledgement"); err != nil {
			return true, c.wrap(err)
		}
	}
	return true, nil
}

// A waiter spins, then yields, and after chainSpinFor sleeps chainSleep
// between polls.
const (
	chainSpinFor = 5 * time.Millisecond
	chainSleep   = 50 * time.Microsecond
)

// waiter polls a counter in this rank's own segment until it reaches a
// value: spinning at first, then yielding, then sleeping briefly, and checking the
// context and the job's SyncTimeout as a barrier does.
type waiter struct {
	ctx     context.Context
	timeout time.Duration
	rank    int
}

func (c *call[T]) newWaiter(ctx context.Context) waiter {
	return waiter{ctx: ctx, timeout: c.r.Config().SyncTimeout, rank: c.me}
}

func (w waiter) until(p *int64, want int64, what string) error {
	if atomic.LoadInt64(p) >= want {
		return nil
	}
	start := time.Now()
	for i := 0; atomic.LoadInt64(p) < want; i++ {
		if i < 1024 {
			continue
		}
		runtime.Gosched()
		if i%64 != 0 {
			continue
		}
		if err := w.ctx.Err(); err != nil {
			return err
		}
		waited := time.Since(start)
		if w.timeout > 0 && waited > w.timeout {
			return fmt.Errorf("rank %d waited %v for %s: %w", w.rank, waited.Round(time.Millisecond), what, pgas.ErrTimeout)
		}
		if waited > chainSpinFor {
			// Short sleeps: a longer one would add its oversleep to a
			// transfer whose sender was only descheduled for a while.
			time.Sleep(chainSleep)
		}
	}
	return nil
}
