// Package pgastest is the conformance suite of the pgas runtime: one set of
// SPMD checks that every transport runs unchanged.
//
// A check is a function of one *pgas.Rank, called on every rank of a job
// like any pgas program. It uses only the pgas API, shares no Go memory
// with other ranks, and decides on its own rank whether the job behaved:
// every value it reads is compared with a value the rank computes itself
// from rank ids, indices and the job's Config. So the same checks run as
// goroutines on the in-process transport and as one process per rank on
// the shm and MPI transports.
//
// A transport's tests run the suite with Test, one job per check:
//
//	func TestConformance(t *testing.T) {
//		pgastest.Test(t, pgas.Config{Ranks: 4, Transport: mytransport.New()})
//	}
//
// A process-per-rank launcher runs the whole suite in one job with RunAll:
//
//	err := pgas.Run(ctx, cfg, pgastest.RunAll)
//
// # Rules for checks
//
//   - Every collective call (allocation, Barrier, Notify/Wait, AllStats) is
//     made by every rank in the same order, so a failing rank makes the
//     others fail at their next collective call instead of hanging.
//   - A check frees what it allocates (except its locks: pgas has no way to
//     free a lock), so checks can run one after another in one job.
//   - A check's work scales down above 8 ranks so that the suite's total
//     time stays bounded as the number of ranks grows.
//   - Errors do not name the calling rank: pgas.Run adds it.
package pgastest
