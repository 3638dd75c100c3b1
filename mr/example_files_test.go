package mr_test

import (
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

// A word count over a directory tree: mr.Files walks it and cuts its files
// into whole-file splits weighed by size, which the balanced distribution
// deals to the ranks; each split is read with Split.Read.
func ExampleFiles() {
	dir, err := os.MkdirTemp("", "files-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	for name, text := range map[string]string{
		"a.txt":         "the cat\nthe dog\n",
		"more/b.txt":    "a dog and the cat\n",
		"more/deep/c.x": "the end\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Println(err)
			return
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		in, _, err := mr.Files(ctx, mr.FileOptions{}, dir)
		if err != nil {
			return err
		}
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		words := func(ctx context.Context, s mr.Split, emit func(string, int64)) error {
			b, err := s.Read(nil)
			if err != nil {
				return err
			}
			for _, w := range strings.Fields(string(b)) {
				emit(w, 1)
			}
			return nil
		}
		if _, err := mr.ApplyMap(ctx, r, in, words, st, mr.WithDistribution(distrib.Balanced)); err != nil {
			return err
		}
		res, err := mr.ApplyReduce(ctx, r, st, show, mr.Gather(reduce.GatherRoot))
		if res.OK {
			fmt.Printf("%d files: %s\n", in.Len(), res.Value)
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 3 files: a=1 and=1 cat=2 dog=2 end=1 the=4
}

// A bigram count: struct keys need neither a codec nor a compare function
// (reduce.NewEncodedHashStore, msgpack's reflection as the key codec).
func ExampleApplyReduce_structKeys() {
	type bigram struct{ First, Second string }
	lines := []string{"the cat sat", "the cat ran", "a cat sat"}
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewEncodedHashStore[bigram, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		pairs := func(ctx context.Context, l string, emit func(bigram, int64)) error {
			w := strings.Fields(l)
			for i := 1; i < len(w); i++ {
				emit(bigram{w[i-1], w[i]}, 1)
			}
			return nil
		}
		if _, err := mr.ApplyMap(ctx, r, mr.Slice(lines), pairs, st); err != nil {
			return err
		}
		res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[bigram, int64]) (map[bigram]int64, error) {
			m := map[bigram]int64{}
			for i, k := range p.Keys {
				m[k] = p.Value(i)
			}
			return m, nil
		}, mr.Gather(reduce.GatherRoot))
		if res.OK {
			fmt.Println(res.Value[bigram{"the", "cat"}], res.Value[bigram{"cat", "sat"}], res.Value[bigram{"a", "cat"}], len(res.Value))
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2 2 1 4
}
