package histogram_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/pgas"
)

// Run on two ranks over a generated image; the root writes the result.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "histogram-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	var img bytes.Buffer
	if err := histogram.Generate(&img, 64, 48, 1); err != nil {
		fmt.Println(err)
		return
	}
	path := filepath.Join(dir, "a.bmp")
	if err := os.WriteFile(path, img.Bytes(), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		o := histogram.DefaultOptions()
		o.ChunkBytes = 1024 // small chunks, so both ranks get rows
		res, err := histogram.Run(ctx, r, []string{path}, o)
		if err != nil || res == nil { // nil on ranks other than the root
			return err
		}
		var out strings.Builder
		if err := res.Write(&out, "text"); err != nil {
			return err
		}
		lines := strings.Split(out.String(), "\n")
		fmt.Printf("%d images, %d pixels\n", res.Images, res.Pixels)
		fmt.Println(strings.Join(lines[:4], "\n"))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 1 images, 3072 pixels
	// value  red  green  blue
	//     0   48    173     9
	//     1    5     97    12
	//     2    4     58     3
}
