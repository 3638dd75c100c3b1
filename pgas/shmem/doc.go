// Package shmem is the OpenSHMEM transport: the ranks of a job are the
// processing elements (PEs) of an OpenSHMEM program, and every rank's
// segment is memory of the symmetric heap, so that a rank names another's
// bytes by its own address of them, as OpenSHMEM intends.
//
// It is a cgo package behind the build tag shmem, built against OpenMPI's
// OSHMEM (Debian: apt-get install libopenmpi-dev openmpi-bin; the headers
// and liboshmem live under /usr/lib/x86_64-linux-gnu/openmpi, which the
// #cgo lines name; elsewhere set CGO_CFLAGS and CGO_LDFLAGS from `oshcc
// -showme:compile` and `oshcc -showme:link`). Built without the tag the
// package still compiles, and FromEnv and Init return ErrNotBuilt.
//
// # Launching
//
// oshrun -np N prog starts the PEs (oshrun is OpenMPI's mpirun; as root it
// needs OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and
// more PEs than cores --oversubscribe). Each process finds out that it is
// a PE with Launched and FromEnv, and package launch does so for any
// program built with the tag:
//
//	tr, ok, err := shmem.FromEnv()
//	if ok && err == nil {
//		defer tr.Finalize()
//		err = pgas.Run(ctx, pgas.Config{Ranks: tr.Size(), Transport: tr}, body)
//	}
//
// Init sets, where the environment does not already, what OSHMEM needs to
// live in a Go process: OMPI_MCA_opal_signal and UCX_ERROR_SIGNALS empty
// (the Go runtime keeps SIGSEGV and friends, so a nil dereference stays a
// Go panic), OMPI_MCA_osc=^rdma (OpenMPI 4.1.4's one-sided component,
// which OSHMEM does not use, crashes every PE in shmem_finalize through a
// memory hook UCX left behind), and SHMEM_SYMMETRIC_SIZE (Options.HeapBytes,
// the symmetric heap every job's segment comes from).
//
// # How operations map onto OpenSHMEM
//
//	Put             shmem_putmem (returns when src may be reused)
//	Get             shmem_getmem
//	Fence           shmem_quiet
//	FetchAdd        shmem_long_atomic_fetch_add
//	CompareAndSwap  shmem_long_atomic_compare_swap
//	Load            shmem_long_atomic_fetch
//	Notify          shmem_quiet, then shmem_long_atomic_add of 1 to the
//	                arrival counter of every PE
//	Wait            polls this PE's counter until all N PEs arrived,
//	                honouring ctx and Job.SyncTimeout
//
// The barrier is a counter rather than shmem_barrier_all because a job
// must be able to give up on a barrier (its context ends, or a peer is
// slower than Job.SyncTimeout), and shmem_barrier_all cannot be
// interrupted. Counters only grow: phase k of the process's life is
// complete at a PE once its counter reaches (k+1)·N, and no PE can start
// phase k+1 before every PE has arrived at phase k, so a count can never
// run ahead into the next phase. The async forms complete before they
// return. Endpoints have no native collectives: package coll runs its own
// algorithms over the one-sided operations.
//
// # Failure
//
// OpenSHMEM cannot tell the other PEs that one failed: Fail prints the
// rank's error on standard error and calls shmem_global_exit(1), and
// oshrun ends every PE. A PE that dies (SIGKILL included) is noticed by
// oshrun, which ends the others. A cancelled job context fails the job the
// same way; a Wait that runs out of Job.SyncTimeout returns an error
// wrapping transport.ErrTimeout.
//
// # Rules
//
// A process hosts one rank and opens one job at a time; it may run several
// jobs one after another (each Open is collective, checks that every PE
// opened the same job, and zeroes the segment). Put, Get, their async
// forms, Fence and the atomics may be called from several goroutines of
// the rank (the library is asked for SHMEM_THREAD_MULTIPLE; with less,
// every call takes one mutex); Notify, Wait, Barrier may not be called
// concurrently.
package shmem
