// Package mrmpi runs pgasmr's four applications on MapReduce-MPI (MR-MPI,
// Sandia's MapReduce library for MPI, the 2014-04-04 release Debian
// packages as libmrmpi-dev): the baseline UPC-MR was measured against
// (seeds/002 §4.3), built in.
//
// It is compiled only with the build tags mpi and mrmpi (cgo, OpenMPI,
// -lMapReduceMPI); without them Run returns ErrNotBuilt and Built is
// false. Run it under mpirun:
//
//	go build -tags mpi,mrmpi -o mrmpirun ./apps/mrmpi/mrmpirun
//	mpirun -np 2 ./mrmpirun wordcount corpus/
//
// Debian's libMapReduceMPI.so ships the header of MR-MPI's C interface
// (cmapreduce.h) but not its MR_* functions, so shim.cpp gives the few
// calls used here, as extern "C" functions over the C++ MapReduce and
// KeyValue classes, and the C callbacks that call back into Go with a
// cgo.Handle passed through MR-MPI's void *ptr.
//
// Each app is written the way an MR-MPI user would write it, with the
// app's own input reader, word rule and output: the input is cut into
// the same tasks as the app's Run (file chunks; files for spamcount),
// MR_map runs one task per map call (MR-MPI's default
// mapstyle: each rank takes a contiguous share of the tasks) and adds
// key/value pairs to MR-MPI's KeyValue (in batches of 4096, one cgo call
// each, with KeyValue::add(n, keys, keybytes, values, valuebytes)),
// MR_collate moves each key's values to one rank, MR_reduce combines
// them, and MR_gather brings the reduced pairs to rank 0, which builds the
// app's Result: the same bytes as the app's Seq in every format. Options.Compress adds MR_compress before the collate:
// MR-MPI's local combining of each rank's pairs by key.
//
// The pairs per app (keys and values are fixed-size little-endian
// integers, words are their bytes):
//
//   - wordcount: one pair (word, 1) per occurrence, as in MR-MPI's
//     wordfreq example, or with Options.TaskCombine one pair (word, n)
//     per distinct word of a task; plus file statuses under keys that
//     cannot be words (wordcount.Run gathers them as each rank's side
//     result instead; MR-MPI has only its key/value pairs).
//   - histogram: per task, one pair (channel value, count) per non-zero
//     count of the task's pixels (a per-pixel map would emit three pairs
//     per pixel).
//   - linreg: per task, one pair (0, Sums) for int8 input, whose sums are
//     exact integers, and (task index, Sums) for float input, added on
//     rank 0 in task order so that the float result is Seq's.
//   - spamcount: a task is a file (one message, or an mbox of several,
//     listed by spamcount.Scan in the task); per message, one pair (word
//     index, {occurrences, 1}) per listed word found and one (len(words),
//     {1, malformed}).
//
// MPI is initialised with pgas/mpi's Init (MPI_THREAD_MULTIPLE); MR-MPI
// runs on MPI_COMM_WORLD. Run does not finalise MPI: call Finalize once,
// after the last Run.
//
// Run is collective: every rank calls it with the same app, inputs and
// options, one Run at a time. A rank whose map fails stops mapping; the
// ranks agree after the map (MPI_Allreduce) and every rank returns an
// error. Errors inside MR-MPI itself abort the MPI job (MPI_Abort), as
// MR-MPI does.
package mrmpi
