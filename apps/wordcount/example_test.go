package wordcount_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pgasmr/pgasmr/apps/wordcount"
	"github.com/pgasmr/pgasmr/pgas"
)

// Count the words of a directory on two ranks; the root writes the result.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "wordcount-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("The cat and THE hat."), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("the Café, the café!"), 0o644)

	err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		res, err := wordcount.Run(ctx, r, []string{dir}, wordcount.Options{Top: 3})
		if err != nil || res == nil { // nil except on the root
			return err
		}
		return res.Write(os.Stdout, "text")
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// word  count
	// the       4
	// café      2
	// and       1
}

// The tokenizer on its own: invalid bytes separate words, case folds.
func ExampleWords() {
	wordcount.Words([]byte("Straße, STRASSE\xffdata 数据 x²"), func(w []byte) {
		fmt.Printf("%q ", w)
	})
	fmt.Println()
	// Output: "straße" "strasse" "data" "数据" "x²"
}
