package linreg_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/pgas"
)

// Fit a line to int8 points on 2 ranks; the root prints the result. The
// points (0,1), (1,3), (2,5), (3,7) lie on y = 2x + 1.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "linreg-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "points.bin")
	if err := os.WriteFile(path, []byte{0, 1, 1, 3, 2, 5, 3, 7}, 0o644); err != nil {
		fmt.Println(err)
		return
	}
	err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		res, err := linreg.Run(ctx, r, []string{path}, linreg.Options{ChunkBytes: 16})
		if err != nil || res == nil { // res is nil except on the root
			return err
		}
		return res.Write(os.Stdout, "tsv")
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// n	4
	// slope	2
	// intercept	1
	// r2	1
}
