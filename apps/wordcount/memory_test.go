package wordcount

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestMemoryBudget: under a memory budget far below the job's pairs the
// ranks spill their words, move them in rounds, and build a result whose
// words are in files (Result.InFiles), and every format of it, whole or
// a top, is Seq's, byte for byte, in every gather mode and transfer at 1,
// 2 and 3 ranks; Close leaves nothing in the temporary directory.
func TestMemoryBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	if err := Generate(dir, 300_000, 7, 5); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := map[string]map[string]string{} // top, format
	for _, top := range []int{0, 50} {
		seq, err := Seq(ctx, []string{dir}, Options{Top: top})
		if err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprint(top)] = map[string]string{}
		for _, f := range Formats {
			want[fmt.Sprint(top)][f] = render(t, seq, f)
		}
	}
	for _, ranks := range []int{1, 2, 3} {
		for _, g := range []reduce.Gather{reduce.GatherPartitioned, reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone} {
			for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
				for _, array := range []bool{true, false} {
					for _, top := range []int{0, 50} {
						if top > 0 && (tr == reduce.ElementByElement || !array) {
							continue
						}
						o := Options{Options: mr.Options{Gather: g, Transfer: tr, Map: apptest.MapMode(!array), Root: ranks - 1}, Top: top, ChunkBytes: 16 << 10}
						name := fmt.Sprintf("ranks=%d/%v/%v/array=%v/top=%d", ranks, g, tr, array, top)
						t.Run(name, func(t *testing.T) {
							tmp := t.TempDir()
							res := runBudget(t, ranks, pgas.Config{MemoryBytes: 96 << 10, TmpDir: tmp}, dir, o)
							if !res.InFiles() && top == 0 {
								t.Errorf("the result of %d words is in memory under a 96 KiB budget", res.DistinctWords)
							}
							for _, f := range Formats {
								if got := render(t, res, f); got != want[fmt.Sprint(top)][f] {
									t.Fatalf("%s output (%d bytes) differs from Seq's (%d bytes)", f, len(got), len(want[fmt.Sprint(top)][f]))
								}
							}
							if err := res.Close(); err != nil {
								t.Fatal(err)
							}
							if res.InFiles() {
								if err := res.Each(func(WordCount) error { return nil }); err == nil {
									t.Errorf("Each after Close succeeded")
								}
							}
							if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
								t.Errorf("%s holds %d entries after Close (%v)", tmp, len(left), err)
							}
						})
					}
				}
			}
		}
	}
}

// runBudget runs Run on ranks ranks of cfg and returns the root's result,
// closing the others' (GatherAll gives every rank one).
func runBudget(t *testing.T, ranks int, cfg pgas.Config, dir string, o Options) *Result {
	t.Helper()
	cfg.Ranks = ranks
	var mu sync.Mutex
	res := make([]*Result, ranks)
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		x, err := Run(ctx, r, []string{dir}, o)
		mu.Lock()
		res[r.ID()] = x
		mu.Unlock()
		return err
	})
	for q, x := range res {
		if q != o.Root && x != nil {
			if err := x.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if res[o.Root] == nil {
		t.Fatalf("root %d has no result", o.Root)
	}
	return res[o.Root]
}

// TestWriteJSONOracle: the JSON Write streams a word at a time is what
// json.Encoder writes of the whole result (2-space indent, no HTML
// escaping), for no words, one, and words json must escape.
func TestWriteJSONOracle(t *testing.T) {
	for _, words := range [][]WordCount{
		nil,
		{{"one", 1}},
		{{"a<b>&c", 3}, {"quote\"back\\slash", 2}, {"数据\u2028", 2}, {"tab\tnl\n", 1}},
	} {
		r := &Result{Files: 2, SkippedBinary: []string{"x"}, TotalWords: 9, DistinctWords: int64(len(words)), Words: words}
		out := jsonResult{App: "wordcount", Files: 2, SkippedBinary: 1, TotalWords: 9, DistinctWords: int64(len(words)), Words: make([]jsonWord, len(words))}
		for i, wc := range words {
			out.Words[i] = jsonWord(wc)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			t.Fatal(err)
		}
		if got := render(t, r, "json"); got != want.String() {
			t.Errorf("%d words: json\n%s\nwant\n%s", len(words), got, want.String())
		}
	}
}
