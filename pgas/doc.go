// Package pgas is a partitioned global address space runtime: SPMD ranks,
// per-rank shared segments, block-cyclic shared arrays with affinity and
// privatisation, one-sided get and put, fences, barriers (also split-phase),
// atomics executed at the owner, and fair locks built on them.
//
// A job is started with Run, which calls the same function on every rank
// (SPMD): MYTHREAD is r.ID() and THREADS is r.N().
//
//	err := pgas.Run(ctx, pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
//		a, err := pgas.AllAllocArray[int64](ctx, r, 1000, pgas.Star) // collective
//		if err != nil {
//			return err
//		}
//		for _, blk := range a.MyBlocks() { // privatised: plain slices
//			for k := range blk {
//				blk[k] = int64(r.ID())
//			}
//		}
//		if err := r.Barrier(ctx); err != nil {
//			return err
//		}
//		v, err := a.Get(ctx, 999) // one-sided read from the owner
//		...
//	})
//
// # Memory model
//
// Every rank owns ordinary Go memory, which no other rank touches, and one
// shared segment of Config.SegmentBytes bytes. Segments are laid out
// symmetrically: after a header, the symmetric heap (AllAlloc, GlobalAlloc
// and the arrays made from them) reserves the same offsets on every rank,
// and each rank's local heap (Alloc) grows down from the segment's end.
// Shared memory is reached by (rank, offset): Region, Ptr and the methods of
// Array. A rank's own partition is reached through plain slices
// (Array.Local, Array.MyBlocks, Rank.Segment), the privatisation fast path;
// element access checks the owner and skips the transport when it is this
// rank. Everything else goes through the Transport, and is counted in
// Stats.
//
// Puts are one-sided and complete at the issuing rank's next Fence, Notify
// or Barrier; gets return with their data. Atomics (FetchAdd,
// CompareAndSwap, AtomicLoad) run at the owner of the word. Barrier, Notify
// and Wait synchronise all ranks and imply a fence.
//
// With Config.Cache on, element Get and Put to other ranks go through a
// per-rank software cache (CacheConfig), which keeps this model: what it
// holds is written back and dropped at every Fence, Barrier, Notify, Wait
// and atomic.
//
// # Collective calls
//
// AllAlloc, AllFree, AllAllocArray, AllLockAlloc, AllStats, Barrier, Notify,
// Wait and NewGatherPlan (and GatherPlan.Execute) are collective: every rank
// calls them, in the same order, with the same single-valued arguments.
// GlobalAlloc, GlobalAllocArray, Alloc, AllocArray, GlobalLockAlloc and the
// access methods are called by one rank.
//
// # Errors and failure
//
// Bad arguments that are programming errors (an index out of range, a rank
// that does not exist) panic with a message saying what is wrong. Everything
// that can fail at run time returns an error naming the rank, operation and
// size. When one rank fails (returns an error, panics, or its context is
// cancelled), every other rank's blocking calls return an error wrapping a
// *RankFailedError naming it, and Run returns the first cause.
//
// # Concurrency
//
// A *Rank and the arrays, locks and plans made from it belong to the
// goroutine Run started for the rank.
//
// # Turns
//
// A process may host more ranks than it has processors (mrrun -np 64 on
// a 2-core laptop). Its ranks can then take turns at work that waits for
// nobody: TakeTurn blocks until the rank holds one of Config.Turns turns
// (GOMAXPROCS by default), so that only as many ranks run as there are
// processors, and a rank holding a turn is never set aside for long by
// the Go scheduler. A rank that holds a turn and waits for other ranks
// in the runtime (Barrier, Notify and Wait, Lock, a team's barrier) gives
// its turn back for the wait, so turns never deadlock a program whose
// ranks wait for each other only through the runtime. Package mr's maps
// take a turn; package reduce/shuffle gives each turn a stripe of the
// node's table.
package pgas
