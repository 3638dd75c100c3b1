// Package shm is the shared-memory transport: the ranks of a job are
// processes on one host, and every rank's segment lives in one file in
// /dev/shm that each of them maps. Puts and gets are memory copies into and
// out of the mapping, atomics are hardware atomics on it, and a barrier is
// a shared counter that waiters spin on briefly and then sleep on with a
// futex. No socket carries data.
//
// # Launching
//
// A launcher (mrrun --transport shm, or a test) calls Launch, which
// creates the job's file ("/dev/shm/pgasmr-shm-<launcher pid>-<job id>",
// mode 0600), starts Ranks copies of a program with the rank, size, job id,
// file and segment capacity in the environment (EnvRank ...
// EnvSegmentBytes), and supervises them. Each copy finds out that it is a
// rank with FromEnv and runs its one rank with pgas.Run:
//
//	tr, ok, err := shm.FromEnv()
//	if err != nil { ... }
//	if ok {
//		cfg := pgas.Config{Ranks: tr.Size(), Transport: tr, SegmentBytes: tr.SegmentBytes()}
//		err = pgas.Run(ctx, cfg, body) // runs rank tr.Rank()
//	}
//
// and in the launcher:
//
//	err := shm.Launch(ctx, shm.LaunchOptions{Ranks: 4, Argv: os.Args, SegmentBytes: 64 << 20})
//
// # Who sizes the segments
//
// The launcher: LaunchOptions.SegmentBytes is the capacity of every rank's
// segment, fixed when the file is created, and passed to the ranks in
// EnvSegmentBytes. Transport.SegmentBytes returns it; a job may use
// segments of any size up to it (pgas.Config.SegmentBytes), the same on
// every rank, and Open says so clearly if a job wants more. The file is
// reserved whole when it is created (fallocate, devshm_linux.go): a
// /dev/shm without room is one error line before any rank starts, and a
// /dev/shm that fills during the job cannot kill a rank with SIGBUS. The
// price is that the whole capacity is memory of /dev/shm while the job
// runs (ranks times SegmentBytes), not only the pages the ranks touch.
//
// # Failure
//
// The file holds a failure record: the first rank to fail (or the
// launcher, when its context is cancelled) writes its rank, the kind of
// failure and its error's text. Every blocking call of every rank checks
// it, so once any rank fails the others' calls return an error wrapping a
// *transport.RankFailedError naming it (its Cause a *RemoteError with the
// text) within one futex sleep (20 ms). When a rank's process dies (SIGKILL
// included), the launcher, which waits for it, writes the record for it;
// a rank that exits with status 0 while others wait for it in a barrier is
// found by the waiters. The launcher kills what is still running
// LaunchOptions.KillGrace after a failure, and removes the file whatever
// happened. The ranks die with the launcher (parent-death signal SIGKILL),
// and its file is then found by CleanStale, which Launch runs first: a
// file whose launcher pid is dead is removed.
//
// A rank process that is stopped (SIGSTOP, SIGTSTP, a debugger) neither
// fails nor progresses: the launcher polls for it (waitid with WSTOPPED
// and WCONTINUED), reports it through LaunchOptions.Notice within about a
// second, and fails the job with an *ExitError whose Stopped is set if the
// rank is not continued within LaunchOptions.StopGrace (default 30 s), so
// the others are not left waiting for the barrier time-out.
//
// # Rules
//
// A process hosts one rank and opens one job at a time; it may run several
// jobs one after another (each Open is collective and zeroes the
// segments). Put, Get, their async forms, Fence and the atomics may be
// called from several goroutines of the rank; Notify, Wait and Barrier may
// not be called concurrently. The transport needs Linux (futexes, /dev/shm).
package shm
