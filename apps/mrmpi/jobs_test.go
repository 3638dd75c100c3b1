package mrmpi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pgasmr/pgasmr/apps/histogram"
	"github.com/pgasmr/pgasmr/apps/linreg"
	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/apps/wordcount"
)

// pair is a key/value pair as MR-MPI holds it.
type pair struct{ k, v string }

// simulate runs j the way the MR-MPI engine does, without MPI: ranks
// ranks take contiguous shares of the tasks (MR-MPI's mapstyle 0), each
// rank's pairs are optionally combined by key (MR_compress), every key's
// values are grouped (MR_collate) and reduced (MR_reduce) in an order
// that differs from emission order, and the reduced pairs are collected
// (MR_gather to rank 0 and a scan).
func simulate(ctx context.Context, t *testing.T, j job, ranks int, compress bool) Result {
	t.Helper()
	if err := j.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	defer j.close()
	var all []pair
	n := j.tasks()
	for r := range ranks {
		var kv []pair
		for i := n * r / ranks; i < n*(r+1)/ranks; i++ {
			if err := j.mapTask(ctx, i, func(k, v []byte) { kv = append(kv, pair{string(k), string(v)}) }); err != nil {
				t.Fatal(err)
			}
		}
		if compress {
			kv = reducePairs(t, j, kv)
		}
		all = append(all, kv...)
	}
	slices.Reverse(all)
	for _, p := range reducePairs(t, j, all) {
		j.collect([]byte(p.k), []byte(p.v))
	}
	res, err := j.result()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// reducePairs groups pairs by key (in first-seen order) and reduces each
// key's values with reduceValues.
func reducePairs(t *testing.T, j job, kv []pair) []pair {
	t.Helper()
	var keys []string
	vals := map[string][]byte{}
	sizes := map[string][]int32{}
	for _, p := range kv {
		if _, ok := vals[p.k]; !ok {
			keys = append(keys, p.k)
		}
		vals[p.k] = append(vals[p.k], p.v...)
		sizes[p.k] = append(sizes[p.k], int32(len(p.v)))
	}
	out := make([]pair, len(keys))
	for i, k := range keys {
		acc := make([]byte, j.valueBytes())
		if err := reduceValues(j, acc, vals[k], sizes[k], true); err != nil {
			t.Fatal(err)
		}
		out[i] = pair{k, string(acc)}
	}
	return out
}

// mbox is an mbox file of three messages.
const mbox = "From a@example.com Mon Jan  1 00:00:00 2024\nSubject: free money\n\nviagra viagra casino\n\n" +
	"From b@example.com Mon Jan  1 00:00:00 2024\nSubject: hello\n\nlottery winner\n\n" +
	"From c@example.com Mon Jan  1 00:00:00 2024\nSubject: =?utf-8?q?Free_bitcoin?=\n\nno words here\n"

func write(t *testing.T, r Result) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, f := range []string{"text", "tsv", "csv", "json"} {
		if err := r.Write(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func gen(t *testing.T, name string, f func(*os.File) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f(fh); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJobsMatchSeq: every job, at several rank counts, with and without
// compress and with small chunks, writes Seq's bytes.
func TestJobsMatchSeq(t *testing.T) {
	ctx := context.Background()
	img := gen(t, "img.bmp", func(f *os.File) error { return histogram.GenerateBytes(f, 300_000, 1) })
	pts := gen(t, "pts.bin", func(f *os.File) error { return linreg.Generate(f, 100_000, "int8", 1) })
	ptsf := gen(t, "pts.f64", func(f *os.File) error { return linreg.Generate(f, 20_000, "f64", 2) })
	wc := filepath.Join(t.TempDir(), "wc")
	if err := wordcount.Generate(wc, 200_000, 5, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wc, "zz.bin"), []byte("a\x00b"), 0o644); err != nil {
		t.Fatal(err)
	}
	mail := filepath.Join(t.TempDir(), "mail")
	if err := spamcount.Generate(mail, 60, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mail, "box.mbox"), []byte(mbox), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		app    string
		inputs []string
		o      Options
		seq    func() (Result, error)
	}{
		{"histogram", []string{img, img}, Options{ChunkBytes: 20_000}, func() (Result, error) {
			return histogram.Seq(ctx, []string{img, img}, histogram.DefaultOptions())
		}},
		{"linreg", []string{pts}, Options{ChunkBytes: 4096}, func() (Result, error) { return linreg.Seq(ctx, []string{pts}, linreg.Options{}) }},
		{"linreg", []string{ptsf}, Options{InputFormat: "f64"}, func() (Result, error) {
			return linreg.Seq(ctx, []string{ptsf}, linreg.Options{Format: "f64"})
		}},
		{"wordcount", []string{wc}, Options{ChunkBytes: 10_000}, func() (Result, error) { return wordcount.Seq(ctx, []string{wc}, wordcount.Options{}) }},
		{"wordcount", []string{wc}, Options{ChunkBytes: 10_000, TaskCombine: true}, func() (Result, error) { return wordcount.Seq(ctx, []string{wc}, wordcount.Options{}) }},
		{"wordcount", []string{wc}, Options{Top: 7}, func() (Result, error) { return wordcount.Seq(ctx, []string{wc}, wordcount.Options{Top: 7}) }},
		{"spamcount", []string{mail}, Options{}, func() (Result, error) { return spamcount.Seq(ctx, []string{mail}, spamcount.Options{}) }},
	}
	for _, c := range cases {
		want, err := c.seq()
		if err != nil {
			t.Fatal(err)
		}
		for _, ranks := range []int{1, 3} {
			for _, compress := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%+v/ranks=%d/compress=%v", c.app, c.o, ranks, compress), func(t *testing.T) {
					o := c.o
					o.Compress = compress
					j, err := newJob(c.app, c.inputs, o)
					if err != nil {
						t.Fatal(err)
					}
					got := simulate(ctx, t, j, ranks, compress)
					if g, w := write(t, got), write(t, want); !bytes.Equal(g, w) {
						t.Errorf("%s = \n%s\nwant (Seq)\n%s", c.app, g, w)
					}
				})
			}
		}
	}
}

func TestValidate(t *testing.T) {
	if err := (Options{}).Validate("nope"); err == nil {
		t.Error(`Validate("nope") = nil; want an error`)
	}
	if err := (Options{Top: -1, ChunkBytes: -1, MemsizeMB: -1}).Validate("wordcount"); err == nil {
		t.Error("Validate of negative sizes = nil; want an error")
	}
	for _, app := range Apps {
		if err := (Options{}).Validate(app); err != nil {
			t.Errorf("Validate(%q) = %v", app, err)
		}
	}
}
