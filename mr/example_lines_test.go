package mr_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Words per line: mr.AllFiles cuts the files into 8-byte splits (a
// compressed file stays whole, and is read decompressed), and mr.LineMap
// gives the map every line exactly once, whichever splits it straddles.
func ExampleLineMap() {
	dir, err := os.MkdirTemp("", "lines-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("the cat sat\nthe dog\n\na dog and the cat\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.Create(filepath.Join(dir, "b.txt.gz"))
	if err != nil {
		fmt.Println(err)
		return
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write([]byte("one\ntwo words\r\nthree more words")); err != nil {
		fmt.Println(err)
		return
	}
	if err := zw.Close(); err != nil {
		fmt.Println(err)
		return
	}
	if err := f.Close(); err != nil {
		fmt.Println(err)
		return
	}

	err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		in, skipped, err := mr.AllFiles(ctx, r, mr.FileOptions{SplitBytes: 8}, dir)
		if err != nil {
			return err
		}
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		perLine := mr.LineMap(func(ctx context.Context, l mr.Line, emit func(string, int64)) error {
			emit(fmt.Sprintf("%d-word lines", len(strings.Fields(string(l.Text)))), 1)
			return nil
		})
		if _, err := mr.ApplyMap(ctx, r, in, perLine, st, mr.WithDistribution(distrib.Balanced)); err != nil {
			return err
		}
		res, err := mr.ApplyReduce(ctx, r, st, show, mr.Gather(reduce.GatherRoot))
		if res.OK {
			fmt.Printf("%d splits, %d skipped\n%s\n", in.Len(), len(skipped), res.Value)
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 6 splits, 0 skipped
	// 0-word lines=1 1-word lines=1 2-word lines=2 3-word lines=2 5-word lines=1
}
