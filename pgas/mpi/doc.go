// Package mpi is the MPI transport: the ranks of a job are the processes
// of an MPI job (MPI_COMM_WORLD), on one machine or many, and every rank's
// segment is memory of an MPI window allocated with MPI_Win_allocate.
//
// It is a cgo package behind a build tag: -tags mpi builds it against
// OpenMPI (pkg-config ompi), -tags mpich against MPICH (pkg-config mpich);
// each flavour's #cgo directive sits in a file of its own so that the build
// cache cannot link one into the other (golang/go#73033). Built without a
// tag the package still compiles, and FromEnv and Init return ErrNotBuilt,
// which says how to rebuild.
//
// # Launching
//
// An MPI launcher starts the processes: mpirun -np N prog, mpiexec -n N
// prog, or srun --mpi=pmix prog. Each finds out that it is a rank with
// FromEnv (Launched looks for OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK)
// and runs its one rank with pgas.Run; package launch does this for any
// program:
//
//	tr, ok, err := mpi.FromEnv()
//	if err != nil { ... }
//	if ok {
//		defer tr.Finalize()
//		cfg := pgas.Config{Ranks: tr.Size(), Transport: tr}
//		err = pgas.Run(ctx, cfg, body) // runs rank tr.Rank()
//	}
//
// As root, OpenMPI's mpirun needs OMPI_ALLOW_RUN_AS_ROOT=1 and
// OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; more ranks than cores need
// OMPI_MCA_rmaps_base_oversubscribe=1; in containers,
// OMPI_MCA_btl_vader_single_copy_mechanism=none avoids a known failure of
// the shared-memory transport's single-copy mechanism.
//
// # How operations map onto MPI
//
// Init calls MPI_Init_thread asking for MPI_THREAD_MULTIPLE, on an OS
// thread locked for MPI, which later calls MPI_Finalize (Finalize). If MPI
// is already initialised, the transport uses it and leaves finalising to
// its owner. If the library provides less than MPI_THREAD_MULTIPLE, every
// MPI call of the transport takes one mutex, and Init says so on standard
// error (Options.Serialize, or PGASMR_MPI_SERIALIZE=1, forces this mode). Every job (Open) allocates a window on a duplicate of
// MPI_COMM_WORLD and locks it for passive-target access to all ranks
// (MPI_Win_lock_all) until Close:
//
//	Put             MPI_Put + MPI_Win_flush_local
//	Get             MPI_Get + MPI_Win_flush
//	Fence           MPI_Win_flush_all + MPI_Win_sync
//	FetchAdd        MPI_Fetch_and_op(MPI_SUM, MPI_INT64_T) + MPI_Win_flush
//	CompareAndSwap  MPI_Compare_and_swap(MPI_INT64_T) + MPI_Win_flush
//	Load            MPI_Fetch_and_op(MPI_NO_OP) + MPI_Win_flush
//	Notify          MPI_Win_flush_all + MPI_Ibarrier
//	Wait            MPI_Test until done, honouring ctx and SyncTimeout
//
// The async forms complete before they return (MPI request-based RMA would
// keep Go memory across calls). Transfers larger than Options.ChunkBytes
// (1 GiB; MPI counts are C ints) are split. When the ranks span several
// nodes, a progress goroutine enters MPI every Options.Progress
// (MPI_Iprobe) for libraries whose one-sided operations need the target to
// progress; on one node the windows are shared memory and need none.
//
// Endpoints offer native collectives (their Collectives method, see
// transport.Extended, returns them) unless Options.NoNative (or
// PGASMR_MPI_NATIVE=0): package coll then serves Broadcast, AllgatherV and
// the private-to-private exchanges of the world team with MPI_Bcast,
// MPI_Allgatherv and MPI_Alltoallv. These block in MPI, so that MPI's
// tuned algorithms run at full speed; a watchdog goroutine of the endpoint
// fails the job if one waits longer than Job.SyncTimeout, or if the job's
// context ends meanwhile. Counts or displacements too large for one MPI
// call go as point-to-point transfers (MPI_Isend, MPI_Irecv) in chunks,
// tested to completion like a barrier, with their buffers pinned; for
// Alltoallv, whose counts differ from rank to rank, the ranks first agree
// with one MPI_Allreduce whether any of them has such a count.
//
// # Failure
//
// MPI has no way to tell the other ranks that one failed and let them
// return: Fail prints the rank's error on standard error and calls
// MPI_Abort(MPI_COMM_WORLD, 1), and the launcher ends every rank. A rank
// that dies (SIGKILL included) is noticed by the launcher, which ends the
// others (OpenMPI's mpirun does so within about a second). A cancelled job
// context fails the job the same way. Synchronisation calls return an
// error wrapping transport.ErrTimeout after Job.SyncTimeout.
//
// A job cancelled by a signal is interrupted, not failed: when the cause
// of the job's context (context.Cause) has a method Signal() os.Signal,
// as mrrun's has, Fail prints nothing, does not abort, and returns, and
// Close and Finalize skip MPI_Win_free and MPI_Finalize, which would wait
// for ranks that are ending too (Finalize says so in its error); so does
// Finalize after a signal cancelled Open, whose window and handshake
// MPI_Finalize would trip on (MPICH's UCX asserts). The
// program exits on its own (mrrun: rank 0 says "mrrun: interrupted by
// SIGTERM" as the signal comes, the others nothing, and each exits with
// status 130), and the launcher ends any rank left. The launchers differ:
//
//   - OpenMPI's mpirun puts every rank in a process group of its own, so a
//     terminal's Ctrl-C reaches mpirun alone. mpirun takes SIGINT, SIGTERM
//     and SIGHUP for an abort: it sends the ranks SIGCONT, SIGTERM a
//     second later and SIGKILL as soon as one of them has exited, prints
//     nothing, and exits with status 1 whatever the ranks do (OpenMPI 4.1:
//     its handler sets the status before it signals anyone). Ranks
//     signalled directly exit with 130, which mpirun passes on, with its
//     boxes on non-zero statuses unless it runs with --quiet.
//   - MPICH's mpiexec (Hydra) passes SIGINT on to every rank, saying so on
//     its standard output, and exits with the ranks' status, 130; but it
//     kills the ranks left with SIGKILL as soon as one exits without
//     MPI_Finalize, and a rank still on its way out then makes it print
//     its "BAD TERMINATION" box and exit with status 9.
//
// A cancellation without such a cause (signal.NotifyContext's cause has
// no Signal method) still aborts the job.
//
// # Shared-memory files
//
// OpenMPI keeps each rank's shared-memory segment (the vader BTL's,
// vader_segment.HOST.UID.JOB.RANK, 4 MiB and more) as a file in /dev/shm
// until MPI_Finalize removes it, or mpirun does at the end of the job;
// after a SIGKILL of mpirun nobody does. Under OpenMPI, Init (before
// MPI_Init, when it initialises MPI) points the parameters
// btl_vader_backing_directory, btl_sm_backing_directory,
// osc_rdma_backing_directory and osc_sm_backing_directory at a directory
// of the job's own, /dev/shm/pgasmr-ompi-UID-JOB (JOB: the PMIx
// namespace, which every rank of the job shares), on which each rank of
// the node holds a shared flock(2) lock while it lives. Segments are found
// by the paths the ranks exchange, so ranks that do not go through Init
// (another program of the same job) still reach them. The last rank of a
// node to finalise removes the directory; and every Init removes this
// user's directories in /dev/shm that no process holds a lock on: those
// of jobs that are over, killed with SIGKILL or interrupted (mpirun
// removes an interrupted job's segments, not its directory).
// TestShmDir and cmd/mrrun/mpi_check.sh check this.
//
// What remains:
//
//   - A killed or interrupted job's directory stays until the next launch
//     of a pgasmr program under OpenMPI on that node.
//   - OpenMPI's session directory, /tmp/ompi.HOST.UID/pid.PID of mpirun,
//     with the PMIx store's shared memory (about 8 MiB), stays after a
//     SIGKILL of mpirun: mpirun makes it before any rank starts, so no
//     rank can move it. Init marks it (pgasmr-ranks.lock, locked while the
//     process lives) and removes the marked pid.PID directories whose
//     mpirun no longer runs and whose ranks are all gone; so a killed
//     job's goes at the next launch on mpirun's node. The session
//     directories of the other nodes (jf.N, an orted's, whose name says no
//     process to check) stay, as do those of other programs' jobs.
//   - /dev/shm/open_mpi.NNNN, which OpenMPI's shmem posix component makes
//     with shm_open (always in /dev/shm) and unlinks at once, stays if the
//     process dies in between.
//   - Nothing is moved when the user chose where the files go (any of the
//     four parameters set, on mpirun's command line or in the
//     environment), when /dev/shm is not writable, when the program
//     initialised MPI before Init, and in MPI programs that do not use this
//     package: their segments stay in /dev/shm after a SIGKILL of mpirun.
//   - MPICH is left alone: its shared-memory files (mpich_shar_tmp*,
//     ucx_shm_posix_* in /dev/shm) are unlinked as soon as every rank has
//     mapped them, and nothing stays after a SIGKILL of mpiexec and every
//     rank.
//
// # Rules
//
// A process hosts one rank and opens one job at a time; it may run several
// jobs one after another (each Open is collective and zeroes the segment).
// Put, Get, their async forms, Fence and the atomics may be called from
// several goroutines of the rank; Notify, Wait, Barrier and the
// collectives may not be called concurrently.
package mpi
