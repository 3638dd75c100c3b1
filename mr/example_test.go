package mr_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

var text = []string{"the cat", "the dog and the cat", "a dog"}

// wordCount is a map function: one line in, one (word, 1) pair per word.
func wordCount(ctx context.Context, line string, emit func(string, int64)) error {
	for _, w := range strings.Fields(line) {
		emit(w, 1)
	}
	return nil
}

// show formats a rank's pairs.
func show(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
	var out []string
	for i := range p.Len() {
		out = append(out, fmt.Sprintf("%s=%d", p.Keys[i], p.Value(i)))
	}
	return strings.Join(out, " "), nil
}

// An element-by-element map over lines distributed cyclically; the reduce
// runs on every rank with every pair (GatherAll).
func ExampleApplyMap() {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		if _, err := mr.ApplyMap(ctx, r, mr.Slice(text), wordCount, st, mr.WithDistribution(distrib.Cyclic)); err != nil {
			return err
		}
		res, err := mr.ApplyReduce(ctx, r, st, show, mr.Gather(reduce.GatherAll))
		if err != nil {
			return err
		}
		if r.ID() == 2 {
			fmt.Println(res.Value)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: a=1 and=1 cat=2 dog=2 the=3
}

// An array-based map: each rank takes its contiguous share of a byte
// stream and counts byte values into an array container; only the root
// reduces (GatherRoot).
func ExampleApplyMapArray() {
	data := []byte("abracadabra")
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewArrayStore[byte, int64](256, reduce.Sum[int64]())
		if err != nil {
			return err
		}
		if _, err := mr.ApplyMapArray(ctx, r, mr.Slice(data), func(ctx context.Context, s mr.Share[byte], emit func(byte, int64)) error {
			for i := range s.Elements() {
				b, _ := s.Input.At(ctx, i)
				emit(b, 1)
			}
			return nil
		}, st); err != nil {
			return err
		}
		res, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[byte, int64]) (string, error) {
			var out []string
			for i := range p.Len() {
				out = append(out, fmt.Sprintf("%c=%d", p.Keys[i], p.Value(i)))
			}
			return strings.Join(out, " "), nil
		}, mr.Gather(reduce.GatherRoot), mr.Root(0))
		if err != nil {
			return err
		}
		if res.OK {
			fmt.Println(res.Value)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: a=5 b=2 c=1 d=1 r=2
}

// The gather modes side by side: partitioned gives each rank its own key
// range (and Merge brings them together on the root); none reduces each
// rank's own pairs.
func ExampleApplyReduce() {
	for _, mode := range []struct {
		name  string
		opts  []mr.ReduceOption
		ranks []int // ranks whose results to print
	}{
		{"all", []mr.ReduceOption{mr.Gather(reduce.GatherAll)}, []int{0}},
		{"root", []mr.ReduceOption{mr.Gather(reduce.GatherRoot)}, []int{0}},
		{"none", []mr.ReduceOption{mr.Gather(reduce.GatherNone)}, []int{0, 1}},
		{"none+merge", []mr.ReduceOption{mr.Gather(reduce.GatherNone), mr.Merge()}, []int{0}},
		{"partitioned", []mr.ReduceOption{mr.Gather(reduce.GatherPartitioned)}, []int{0, 1}},
		{"partitioned+merge", []mr.ReduceOption{mr.Gather(reduce.GatherPartitioned), mr.Merge()}, []int{0}},
	} {
		out := make([]string, 2)
		err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
			st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				return err
			}
			if _, err := mr.ApplyMap(ctx, r, mr.Slice(text), wordCount, st); err != nil {
				return err
			}
			res, err := mr.ApplyReduce(ctx, r, st, show, mode.opts...)
			out[r.ID()] = res.Value
			return err
		})
		if err != nil {
			fmt.Println(err)
		}
		for _, q := range mode.ranks {
			fmt.Printf("%-18s rank %d: %s\n", mode.name, q, out[q])
		}
	}
	// Output:
	// all                rank 0: a=1 and=1 cat=2 dog=2 the=3
	// root               rank 0: a=1 and=1 cat=2 dog=2 the=3
	// none               rank 0: and=1 cat=2 dog=1 the=3
	// none               rank 1: a=1 dog=1
	// none+merge         rank 0: a=1 and=1 cat=2 dog=2 the=3
	// partitioned        rank 0: a=1 and=1 dog=2 the=3
	// partitioned        rank 1: cat=2
	// partitioned+merge  rank 0: a=1 and=1 cat=2 dog=2 the=3
}

// Options print in the one-word form mrrun's --mode takes, and parse back.
func ExampleParseOptions() {
	o, err := mr.ParseOptions("root=1+cyclic+gather-root+no-collectives")
	if err != nil {
		panic(err)
	}
	fmt.Println(o)
	fmt.Println(o.Resolve(mr.Defaults{ArrayMap: true}).Map)
	fmt.Println(mr.Options{}, mr.Options{}.Resolve(mr.Defaults{ArrayMap: true}))
	_, err = mr.ParseOptions("cyclic+balanced")
	fmt.Println(err)
	// Output:
	// cyclic+gather-root+no-collectives+root=1
	// element
	// default array+gather-partitioned
	// two distributions (cyclic and balanced)
}

// The three most frequent words without gathering every pair: each rank
// reduces its partition of the keys (ReduceKeys), and TopK gathers only
// each rank's three best to the root.
func ExampleTopK() {
	text := []string{"the cat", "the dog and the cat", "a dog", "the end"}
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 3}, func(ctx context.Context, r *pgas.Rank) error {
		st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
		if err != nil {
			return err
		}
		if _, err := mr.ApplyMap(ctx, r, mr.Slice(text), func(ctx context.Context, line string, emit func(string, int64)) error {
			for _, w := range strings.Fields(line) {
				emit(w, 1)
			}
			return nil
		}, st); err != nil {
			return err
		}
		counts, err := mr.ReduceKeys(ctx, r, st, func(ctx context.Context, w string, n []int64) (int64, error) {
			return n[0], nil
		}, mr.Gather(reduce.GatherPartitioned))
		if err != nil {
			return err
		}
		top, err := mr.TopK(ctx, r, counts.Value, 3, func(a, b mr.KV[string, int64]) int {
			if a.Value != b.Value {
				return int(b.Value - a.Value) // more frequent first
			}
			return strings.Compare(a.Key, b.Key)
		}, 0)
		for _, kv := range top { // only on the root
			fmt.Println(kv.Key, kv.Value)
		}
		return err
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// the 4
	// cat 2
	// dog 2
}
