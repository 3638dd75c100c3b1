// Command mrmpirun runs one of pgasmr's apps on MapReduce-MPI (package
// apps/mrmpi) under mpirun, for apps/mrmpi/check.sh and the comparison
// in the README until mrrun's --baseline mrmpi wires the same call:
//
//	go build -tags mpi,mrmpi -o mrmpirun ./apps/mrmpi/mrmpirun
//	mpirun -np 2 ./mrmpirun [-compress] [-output-format F] APP INPUT...
//
// Rank 0 writes the result to stdout (or -o) and, with -time, the wall
// time of the run (after MPI's initialisation) to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pgasmr/pgasmr/apps/mrmpi"
)

func main() {
	var o mrmpi.Options
	flag.BoolVar(&o.Compress, "compress", false, "combine each rank's pairs by key (MR_compress) before the collate")
	flag.BoolVar(&o.TaskCombine, "task-combine", false, "wordcount: one pair per distinct word per task instead of one per occurrence")
	flag.IntVar(&o.Top, "top", 0, "wordcount: keep the N most frequent words (0: all)")
	flag.BoolVar(&o.SkipUnreadable, "skip-unreadable", false, "wordcount: skip files that cannot be read")
	flag.StringVar(&o.WordsFile, "words", "", "spamcount: word list FILE")
	flag.StringVar(&o.InputFormat, "input-format", "", "linreg: int8 (default), f64 or csv")
	flag.Int64Var(&o.ChunkBytes, "chunk-bytes", 0, "bytes per map task (0: the app's default)")
	flag.IntVar(&o.MemsizeMB, "memsize", 0, "MR-MPI page size in MiB (0: 64)")
	format := flag.String("output-format", "text", "text, tsv, csv or json")
	out := flag.String("o", "", "write the result to FILE (default: stdout)")
	timed := flag.Bool("time", false, "print the run's wall time in seconds to stderr (rank 0)")
	phases := flag.Bool("phases", false, "print the wall time of each MR-MPI phase to stderr (rank 0)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mpirun -np N mrmpirun [flags] APP INPUT...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *phases {
		o.Phases = os.Stderr
	}
	if flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(flag.Arg(0), flag.Args()[1:], o, *format, *out, *timed))
}

func run(app string, inputs []string, o mrmpi.Options, format, out string, timed bool) int {
	start := time.Now()
	res, err := mrmpi.Run(context.Background(), app, inputs, o)
	elapsed := time.Since(start)
	if err == nil && res != nil {
		var w io.Writer = os.Stdout
		if out != "" {
			f, ferr := os.Create(out)
			if ferr != nil {
				err = ferr
			} else {
				defer f.Close()
				w = f
			}
		}
		if err == nil {
			err = res.Write(w, format)
		}
		if timed {
			fmt.Fprintf(os.Stderr, "mrmpirun: %s %.3f s\n", app, elapsed.Seconds())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mrmpirun:", err)
	}
	if ferr := mrmpi.Finalize(); ferr != nil && err == nil {
		fmt.Fprintln(os.Stderr, "mrmpirun:", ferr)
		err = ferr
	}
	if err != nil {
		return 1
	}
	return 0
}
