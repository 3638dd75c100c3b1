//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

// A program that is both the launcher and its ranks: started by a user it
// launches 4 copies of itself; started by Launch it runs its rank. (This
// example is compiled, not run.)
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	tr, ok, err := shm.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if ok { // a rank
		cfg := pgas.Config{Ranks: tr.Size(), Transport: tr, SegmentBytes: tr.SegmentBytes()}
		err := pgas.Run(ctx, cfg, func(ctx context.Context, r *pgas.Rank) error {
			fmt.Printf("rank %d of %d in process %d\n", r.ID(), r.N(), os.Getpid())
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}

	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = shm.Launch(ctx, shm.LaunchOptions{
		Ranks:        4,
		Argv:         append([]string{exe}, os.Args[1:]...),
		SegmentBytes: 64 << 20,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // e.g. "shm: job ...: rank 2 failed: process 4242 signal: killed"
		os.Exit(1)
	}
}
