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
// # Rules
//
// A process hosts one rank and opens one job at a time; it may run several
// jobs one after another (each Open is collective and zeroes the segment).
// Put, Get, their async forms, Fence and the atomics may be called from
// several goroutines of the rank; Notify, Wait, Barrier and the
// collectives may not be called concurrently.
package mpi
