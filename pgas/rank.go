package pgas

import (
	"context"
	"fmt"
	"time"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Rank is one rank of a running job: MYTHREAD is ID(), THREADS is N().
//
// A Rank and the arrays, locks and plans made from it belong to the rank's
// goroutine (the one Run called fn on); methods documented as concurrent-safe
// are the exception. Ranks never touch each other's Go memory: data crosses
// ranks only through segments and the transport, and every such transfer is
// counted in Stats.
type Rank struct {
	ep    transport.Extended
	nat   transport.Collectives // ep.Collectives(), asked once
	cfg   Config
	id, n int
	seg   []byte // this rank's own segment

	heap    localHeap
	fresh   freshMarks // the parts of the segment never handed out, still zero
	allocs  int64      // number of AllAlloc calls, selects the result slot
	stats   Stats      // the counters but Peers, which are in peers
	peers   peerTable  // Stats.Peers
	scratch []uint64   // element staging for remote Get/Put
	world   *Team
	cleanup []func()      // Cleanup's, run last first when the rank returns
	turns   chan struct{} // its process's turns (TakeTurn), or nil
	turn    bool          // it holds one
	// spinResume, set by backoff in a spinning wait that gave the
	// rank's turn back, takes one again (waiting).
	spinResume func(ctx context.Context) error
	cache      *rcache     // the remote-reference cache, or nil (Config.Cache)
	shared     *procShared // what the ranks of this process share, or nil
}

func newRank(_ context.Context, cfg Config, ep transport.Extended) (*Rank, error) {
	if ep.Size() != cfg.Ranks {
		return nil, fmt.Errorf("transport reports %d ranks, config has %d", ep.Size(), cfg.Ranks)
	}
	seg := ep.Segment()
	if int64(len(seg)) != cfg.SegmentBytes {
		return nil, fmt.Errorf("transport segment is %d bytes, config has %d", len(seg), cfg.SegmentBytes)
	}
	r := &Rank{ep: ep, nat: ep.Collectives(), cfg: cfg, id: ep.Rank(), n: ep.Size(), seg: seg}
	r.stats.Rank = r.id
	r.heap.init(cfg.SegmentBytes)
	r.fresh = freshMarks{local: cfg.SegmentBytes}
	if cfg.Cache.On() {
		r.cache = newCache(r, cfg.Cache)
	}
	if r.id == 0 {
		r.initHeader()
	}
	return r, nil
}

// Native returns the transport's native collectives for this rank, or nil
// if it has none (see transport.Extended). Through a wrapper transport
// (package wrap) they are the wrapper's, which forwards them.
func (r *Rank) Native() transport.Collectives { return r.nat }

// ID returns this rank's number, MYTHREAD, in [0, N()).
func (r *Rank) ID() int { return r.id }

// N returns the number of ranks, THREADS.
func (r *Rank) N() int { return r.n }

// Config returns the job's configuration with defaults applied.
func (r *Rank) Config() Config { return r.cfg }

// MemoryShare returns this rank's share of Config.MemoryBytes: the
// node's budget, less what the runtime of its ranks takes of it (see
// Config.MemoryBytes), divided evenly among the ranks of its node, at
// least 1 byte; 0 if the job has no bound.
func (r *Rank) MemoryShare() int64 { return memoryShare(r.cfg, r.id) }

// memoryShare is the share of cfg.MemoryBytes (cfg with defaults) of
// rank.
func memoryShare(cfg Config, rank int) int64 {
	if cfg.MemoryBytes <= 0 {
		return 0
	}
	first := rank / cfg.RanksPerNode * cfg.RanksPerNode
	return max((cfg.MemoryBytes-cfg.runtimeOver())/int64(min(cfg.RanksPerNode, cfg.Ranks-first)), 1)
}

// Cleanup registers f to run when the rank's function returns, on every
// path (an error, a panic, a cancelled job), after the functions
// registered later: where a layer that makes temporary files for the
// rank removes them. f runs on the rank's goroutine after its function,
// before the rank's end barrier.
func (r *Rank) Cleanup(f func()) { r.cleanup = append(r.cleanup, f) }

// runCleanup runs the functions Cleanup registered, last first; a panic
// in one does not stop the others, and the first is returned.
func (r *Rank) runCleanup() (panicked any) {
	for len(r.cleanup) > 0 {
		f := r.cleanup[len(r.cleanup)-1]
		r.cleanup = r.cleanup[:len(r.cleanup)-1]
		func() {
			defer func() {
				if v := recover(); v != nil && panicked == nil {
					panicked = v
				}
			}()
			f()
		}()
	}
	return panicked
}

// Node returns the logical node of this rank.
func (r *Rank) Node() int { return r.NodeOf(r.id) }

// NodeOf returns the logical node of rank: rank / RanksPerNode.
func (r *Rank) NodeOf(rank int) int { return rank / r.cfg.RanksPerNode }

// Nodes returns the number of logical nodes.
func (r *Rank) Nodes() int { return (r.n + r.cfg.RanksPerNode - 1) / r.cfg.RanksPerNode }

// TransportName names the transport the job runs on.
func (r *Rank) TransportName() string {
	if r.cfg.Transport == nil {
		return "inproc"
	}
	return r.cfg.Transport.Name()
}

// MemoryMapped reports whether the transport maps every rank's segment in
// this process (inproc, shm), so that a one-sided operation costs about a
// memory access instead of a message (transport.Extended.MemoryMapped).
// Algorithms choose fine-grained access by it; the operations go through
// the transport and are counted all the same.
func (r *Rank) MemoryMapped() bool { return r.ep.MemoryMapped() }

// Cast returns rank's segment as memory of this process, for direct loads
// and stores (UPC's upc_cast of a castable pointer-to-shared, UPC++'s
// global_ptr::local()), or nil when it is not mapped here: over mpi, and
// under any wrapper (wrap.Counting, wrap.Faults...), which must see every
// access. Cast(ID()) is Segment().
//
// Accesses through the slice are not one-sided operations: the runtime
// neither checks, orders nor counts them. Order them as the memory model
// orders one-sided operations (a Lock held around them, or barriers
// between the writes and the reads), and report them with CountCast so
// that Stats keeps counting all remote traffic.
func (r *Rank) Cast(rank int) []byte {
	r.checkRank(rank)
	if rank == r.id {
		return r.seg
	}
	return r.ep.Mapped(rank)
}

// CountCast counts accesses made through Cast(rank): ops operations of
// kind moving bytes in all, as if made by as many gets or puts (local ones
// when rank is this rank).
func (r *Rank) CountCast(kind OpKind, rank int, ops, bytes int64) {
	r.checkRank(rank)
	if rank == r.id {
		r.stats.Local[kind] += ops
		r.stats.LocalBytes += bytes
		return
	}
	r.stats.Remote[kind] += ops
	p := r.peers.at(rank)
	p.Messages += ops
	if kind == OpPut {
		p.BytesSent += bytes
	} else {
		p.BytesReceived += bytes
	}
}

// Segment returns this rank's own shared segment. Offsets in it are the
// offsets of Region and Ptr. Writing to it races with other ranks' puts
// unless a barrier or lock orders them.
func (r *Rank) Segment() []byte { return r.seg }

func (r *Rank) checkRank(rank int) {
	if rank < 0 || rank >= r.n {
		panic(fmt.Sprintf("pgas: rank %d out of range [0,%d)", rank, r.n))
	}
}

// Every access a caller names by (rank, offset) is checked here, once,
// before it takes the local path or reaches the transport, which relies on
// it (see package transport): a rank out of range panics (checkRank), bytes
// outside the segment are an error wrapping transport.ErrOutOfRange, a
// misaligned atomic one wrapping transport.ErrMisaligned. Accesses pgas
// makes itself (array elements, allocation slots, exchange plans) address
// regions the allocator placed inside the segment, so they are valid by
// construction; array indexes are checked by the array.

// inBytes reports whether rank exists and [off, off+n) lies within its
// segment: the check of a get or put, small enough to inline into the hot
// paths. bytesError reports a failed one.
func (r *Rank) inBytes(rank int, off int64, n int) bool {
	return uint(rank) < uint(r.n) && off >= 0 && int64(n) <= int64(len(r.seg))-off
}

// bytesError panics if rank is out of range, else returns the error of a
// get or put (op) of n bytes at off outside the segment.
func (r *Rank) bytesError(op string, rank int, off int64, n int) error {
	r.checkRank(rank)
	return fmt.Errorf("pgas: %s: %w", op, transport.CheckRange(r.n, int64(len(r.seg)), rank, off, int64(n)))
}

// inWord reports whether rank exists and off is an aligned word within its
// segment: the check of an atomic. atomicError reports a failed one.
func (r *Rank) inWord(rank int, off int64) bool {
	return uint(rank) < uint(r.n) && off >= 0 && off <= int64(len(r.seg))-8 && off%8 == 0
}

// atomicError panics if rank is out of range, else returns the error of an
// atomic (op) at a bad offset.
func (r *Rank) atomicError(op string, rank int, off int64) error {
	r.checkRank(rank)
	return fmt.Errorf("pgas: %s at rank %d offset %d: %w", op, rank, off, transport.CheckAtomic(r.n, int64(len(r.seg)), rank, off))
}

// PutBytes copies src into [off, off+len(src)) of rank's segment, through
// the transport unless rank is this rank. The data is visible to others at
// this rank's next Fence or Barrier.
func (r *Rank) PutBytes(ctx context.Context, rank int, off int64, src []byte) error {
	if !r.inBytes(rank, off, len(src)) {
		return r.bytesError("put", rank, off, len(src))
	}
	if rank == r.id {
		copy(r.seg[off:], src)
		r.stats.countLocal(OpPut, len(src))
		return nil
	}
	if err := r.bypassCache(ctx, rank, off, len(src), true); err != nil {
		return err
	}
	for len(src) > 0 {
		n := min(int64(len(src)), r.cfg.FragmentBytes)
		r.countRemote(OpPut, rank, int(n), 0)
		if err := r.ep.Put(ctx, rank, off, src[:n]); err != nil {
			return fmt.Errorf("pgas: put %d bytes to rank %d at %d: %w", n, rank, off, err)
		}
		src, off = src[n:], off+n
	}
	return nil
}

// GetBytes fills dst from [off, off+len(dst)) of rank's segment.
func (r *Rank) GetBytes(ctx context.Context, rank int, off int64, dst []byte) error {
	if !r.inBytes(rank, off, len(dst)) {
		return r.bytesError("get", rank, off, len(dst))
	}
	if rank == r.id {
		copy(dst, r.seg[off:])
		r.stats.countLocal(OpGet, len(dst))
		return nil
	}
	if err := r.bypassCache(ctx, rank, off, len(dst), false); err != nil {
		return err
	}
	if n := int64(len(dst)); n <= r.cfg.FragmentBytes {
		// One fragment: a blocking get, without a handle to allocate.
		r.countRemote(OpGet, rank, 0, int(n))
		if err := r.ep.Get(ctx, rank, off, dst); err != nil {
			return fmt.Errorf("pgas: get %d bytes of rank %d at %d: %w", n, rank, off, err)
		}
		return nil
	}
	h := r.getBytesAsync(ctx, rank, off, dst, nil)
	return h.Wait(ctx)
}

// Handle is an outstanding non-blocking transfer.
type Handle struct {
	hs  []transport.Handle
	err error
}

// Wait blocks until every transfer of h is complete and returns the first
// error. Waiting on a zero Handle returns nil at once.
func (h *Handle) Wait(ctx context.Context) error {
	err := h.err
	for _, x := range h.hs {
		if e := x.Wait(ctx); e != nil && err == nil {
			err = e
		}
	}
	h.hs = h.hs[:0]
	h.err = nil
	return err
}

// GetBytesAsync starts filling dst from [off, off+len(dst)) of rank's
// segment and adds the transfers to h (a new Handle if h is nil), which it
// returns. A local get is done before it returns. dst must not be read until
// h.Wait returns.
func (r *Rank) GetBytesAsync(ctx context.Context, rank int, off int64, dst []byte, h *Handle) *Handle {
	if !r.inBytes(rank, off, len(dst)) {
		return h.fail(r.bytesError("get", rank, off, len(dst)))
	}
	if rank == r.id {
		if h == nil {
			h = &Handle{}
		}
		copy(dst, r.seg[off:])
		r.stats.countLocal(OpGet, len(dst))
		return h
	}
	return r.getBytesAsync(ctx, rank, off, dst, h)
}

// PutBytesAsync starts copying src into [off, off+len(src)) of rank's
// segment and adds the transfers to h (a new Handle if h is nil), which it
// returns. src must not be modified until h.Wait returns; the data is
// complete at the target at this rank's next Fence or Barrier.
func (r *Rank) PutBytesAsync(ctx context.Context, rank int, off int64, src []byte, h *Handle) *Handle {
	if !r.inBytes(rank, off, len(src)) {
		return h.fail(r.bytesError("put", rank, off, len(src)))
	}
	if rank == r.id {
		if h == nil {
			h = &Handle{}
		}
		copy(r.seg[off:], src)
		r.stats.countLocal(OpPut, len(src))
		return h
	}
	return r.putBytesAsync(ctx, rank, off, src, h)
}

// fail records err as h's error unless it has one, and returns h (a new
// Handle if h is nil).
func (h *Handle) fail(err error) *Handle {
	if h == nil {
		h = &Handle{}
	}
	if h.err == nil {
		h.err = err
	}
	return h
}

// Add moves o's outstanding transfers into h.
func (h *Handle) Add(o *Handle) {
	if o == nil || o == h {
		return
	}
	h.hs = append(h.hs, o.hs...)
	if h.err == nil {
		h.err = o.err
	}
	o.hs, o.err = nil, nil
}

func (r *Rank) getBytesAsync(ctx context.Context, rank int, off int64, dst []byte, h *Handle) *Handle {
	if h == nil {
		h = &Handle{}
	}
	if err := r.bypassCache(ctx, rank, off, len(dst), false); err != nil {
		return h.fail(err)
	}
	for len(dst) > 0 {
		n := min(int64(len(dst)), r.cfg.FragmentBytes)
		r.countRemote(OpGet, rank, 0, int(n))
		if th := r.ep.GetAsync(ctx, rank, off, dst[:n]); th != transport.Completed {
			h.hs = append(h.hs, errHandle{th, "get", rank, off, n})
		}
		dst, off = dst[n:], off+n
	}
	return h
}

func (r *Rank) putBytesAsync(ctx context.Context, rank int, off int64, src []byte, h *Handle) *Handle {
	if h == nil {
		h = &Handle{}
	}
	if err := r.bypassCache(ctx, rank, off, len(src), true); err != nil {
		return h.fail(err)
	}
	for len(src) > 0 {
		n := min(int64(len(src)), r.cfg.FragmentBytes)
		r.countRemote(OpPut, rank, int(n), 0)
		if th := r.ep.PutAsync(ctx, rank, off, src[:n]); th != transport.Completed {
			h.hs = append(h.hs, errHandle{th, "put", rank, off, n})
		}
		src, off = src[n:], off+n
	}
	return h
}

// errHandle adds the operation to a transport handle's error.
type errHandle struct {
	h    transport.Handle
	op   string
	rank int
	off  int64
	n    int64
}

func (e errHandle) Wait(ctx context.Context) error {
	if err := e.h.Wait(ctx); err != nil {
		return fmt.Errorf("pgas: %s %d bytes of rank %d at %d: %w", e.op, e.n, e.rank, e.off, err)
	}
	return nil
}

// FetchAdd atomically adds delta to the int64 at (rank, off) and returns
// the old value. The operation runs at the owner, also when rank is this
// rank, so it is atomic with every other rank's atomics on that word.
func (r *Rank) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	if !r.inWord(rank, off) {
		return 0, r.atomicError("fetch-add", rank, off)
	}
	if err := r.flushCache(ctx); err != nil {
		return 0, err
	}
	r.countAtomic(rank)
	v, err := r.ep.FetchAdd(ctx, rank, off, delta)
	if err != nil {
		return 0, fmt.Errorf("pgas: fetch-add at rank %d offset %d: %w", rank, off, err)
	}
	return v, nil
}

// CompareAndSwap atomically sets the int64 at (rank, off) to new if it
// holds old, and returns the value it held before.
func (r *Rank) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	if !r.inWord(rank, off) {
		return 0, r.atomicError("compare-and-swap", rank, off)
	}
	if err := r.flushCache(ctx); err != nil {
		return 0, err
	}
	r.countAtomic(rank)
	v, err := r.ep.CompareAndSwap(ctx, rank, off, old, new)
	if err != nil {
		return 0, fmt.Errorf("pgas: compare-and-swap at rank %d offset %d: %w", rank, off, err)
	}
	return v, nil
}

// AtomicLoad atomically reads the int64 at (rank, off).
func (r *Rank) AtomicLoad(ctx context.Context, rank int, off int64) (int64, error) {
	if !r.inWord(rank, off) {
		return 0, r.atomicError("atomic load", rank, off)
	}
	if err := r.flushCache(ctx); err != nil {
		return 0, err
	}
	r.countAtomic(rank)
	v, err := r.ep.Load(ctx, rank, off)
	if err != nil {
		return 0, fmt.Errorf("pgas: atomic load at rank %d offset %d: %w", rank, off, err)
	}
	return v, nil
}

func (r *Rank) countAtomic(rank int) {
	if rank == r.id {
		r.stats.Local[OpAtomic]++
		return
	}
	r.stats.Remote[OpAtomic]++
	r.peers.at(rank).Messages++
}

// Fence blocks until every put this rank issued is complete at its target.
func (r *Rank) Fence(ctx context.Context) error {
	r.stats.Fences++
	if err := r.flushCache(ctx); err != nil {
		return fmt.Errorf("pgas: fence: %w", err)
	}
	if err := r.ep.Fence(ctx); err != nil {
		return fmt.Errorf("pgas: fence: %w", err)
	}
	return nil
}

// Barrier blocks until every rank has called Barrier (upc_barrier). It
// implies a Fence: puts issued before it are visible to every rank after it.
func (r *Rank) Barrier(ctx context.Context) error {
	t0 := time.Now()
	if err := r.flushCache(ctx); err != nil {
		return fmt.Errorf("pgas: barrier: %w", err)
	}
	resume := r.pause()
	err := r.ep.Barrier(ctx)
	if e := resume(ctx); err == nil {
		err = e
	}
	r.stats.Barriers++
	r.stats.BarrierTime += time.Since(t0)
	if err != nil {
		return fmt.Errorf("pgas: barrier: %w", err)
	}
	return nil
}

// Notify is the first half of a split-phase barrier (upc_notify): it
// announces that this rank reached the barrier and returns at once, without
// waiting for other ranks. It implies a Fence. Every Notify must be followed
// by a Wait before the next Notify or Barrier.
func (r *Rank) Notify(ctx context.Context) error {
	if err := r.flushCache(ctx); err != nil {
		return fmt.Errorf("pgas: notify: %w", err)
	}
	if err := r.ep.Notify(ctx); err != nil {
		return fmt.Errorf("pgas: notify: %w", err)
	}
	return nil
}

// Wait is the second half of a split-phase barrier (upc_wait): it blocks
// until every rank has notified.
func (r *Rank) Wait(ctx context.Context) error {
	t0 := time.Now()
	resume := r.pause()
	err := r.ep.Wait(ctx)
	if e := resume(ctx); err == nil {
		err = e
	}
	// Lines read between Notify and Wait may predate other ranks' puts
	// made before their Notify; writes made there go home now.
	if e := r.flushCache(ctx); err == nil {
		err = e
	}
	r.stats.Barriers++
	r.stats.BarrierTime += time.Since(t0)
	if err != nil {
		return fmt.Errorf("pgas: wait: %w", err)
	}
	return nil
}

// flushCache writes the cache's dirty bytes home and drops its lines, if
// the rank has a cache.
func (r *Rank) flushCache(ctx context.Context) error {
	if r.cache == nil {
		return nil
	}
	return r.cache.flush(ctx)
}

// bypassCache prepares [off, off+n) of rank for a transfer around the
// cache (rcache.bypass), if the rank has one.
func (r *Rank) bypassCache(ctx context.Context, rank int, off int64, n int, put bool) error {
	if r.cache == nil {
		return nil
	}
	return r.cache.bypass(ctx, rank, off, n, put)
}

// Strided is a sub-box of a segment: see transport.Strided.
type Strided = transport.Strided

// GetStrided fills dst with the elements of s in rank's segment, packed in
// row-major order (len(dst) must be s.Bytes()), as one operation: one
// message, counted once, which the transport moves as one strided
// transfer where it has one (inproc and shm copy straight from the mapped
// segment; mpi uses a derived datatype) or one get per contiguous run. It
// goes around the cache, after writing back the lines it overlaps.
func (r *Rank) GetStrided(ctx context.Context, rank int, s Strided, dst []byte) error {
	return r.strided(ctx, rank, s, dst, false)
}

// PutStrided stores src's packed elements into the elements of s in
// rank's segment (len(src) must be s.Bytes()), as one operation, complete
// at the target at this rank's next Fence or Barrier. See GetStrided.
func (r *Rank) PutStrided(ctx context.Context, rank int, s Strided, src []byte) error {
	return r.strided(ctx, rank, s, src, true)
}

// GetStridedAsync starts GetStrided and adds it to h (a new Handle if h
// is nil), which it returns; dst must not be read until h.Wait returns.
// The transports move a strided box before the call returns (as their
// GetAsync does); the handle carries its error.
func (r *Rank) GetStridedAsync(ctx context.Context, rank int, s Strided, dst []byte, h *Handle) *Handle {
	return r.stridedAsync(ctx, rank, s, dst, false, h)
}

// PutStridedAsync starts PutStrided and adds it to h (a new Handle if h
// is nil); src must not be modified until h.Wait returns, and the data is
// complete at the target at this rank's next Fence or Barrier.
func (r *Rank) PutStridedAsync(ctx context.Context, rank int, s Strided, src []byte, h *Handle) *Handle {
	return r.stridedAsync(ctx, rank, s, src, true, h)
}

// stridedAsync is strided, its error carried by h (a new Handle if nil).
func (r *Rank) stridedAsync(ctx context.Context, rank int, s Strided, buf []byte, put bool, h *Handle) *Handle {
	if h == nil {
		h = &Handle{}
	}
	if err := r.strided(ctx, rank, s, buf, put); err != nil {
		return h.fail(err)
	}
	return h
}

// strided is GetStrided (put false) and PutStrided.
func (r *Rank) strided(ctx context.Context, rank int, s Strided, buf []byte, put bool) error {
	op, kind := "get", OpGet
	if put {
		op, kind = "put", OpPut
	}
	if err := r.stridedCheck(op, rank, s, len(buf)); err != nil {
		return err
	}
	n := int(s.Bytes())
	if rank == r.id {
		transport.CopyStrided(r.seg, s, buf, !put)
		r.stats.countLocal(kind, n)
		return nil
	}
	if n == 0 {
		return nil
	}
	lo, hi := s.Span()
	if err := r.bypassCache(ctx, rank, lo, int(hi-lo), put); err != nil {
		return err
	}
	var err error
	if put {
		r.countRemote(OpPut, rank, n, 0)
		err = r.ep.PutStrided(ctx, rank, s, buf)
	} else {
		r.countRemote(OpGet, rank, 0, n)
		err = r.ep.GetStrided(ctx, rank, s, buf)
	}
	if err != nil {
		return fmt.Errorf("pgas: strided %s of %d bytes at rank %d offset %d: %w", op, n, rank, s.Off, err)
	}
	return nil
}

// stridedCheck panics on a rank that does not exist and returns an error
// for a bad box or a buffer of the wrong size.
func (r *Rank) stridedCheck(op string, rank int, s Strided, buf int) error {
	r.checkRank(rank)
	if err := s.Check(int64(len(r.seg))); err != nil {
		return fmt.Errorf("pgas: strided %s at rank %d: %w", op, rank, err)
	}
	if int64(buf) != s.Bytes() {
		return fmt.Errorf("pgas: strided %s at rank %d: buffer of %d bytes for %d elements of %d", op, rank, buf, s.Count(), s.Elem)
	}
	return nil
}
