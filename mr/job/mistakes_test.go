package job_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/mr/job"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/launch"
	"github.com/pgasmr/pgasmr/pgas/shm"
	"github.com/pgasmr/pgasmr/reduce"
)

// The mistakes of issue 34 part 1, each written the way a user would write
// it with the public API, run at 1, 2 and 4 ranks in-process and as shm
// processes (the test binary is also the ranks' program: TestMain runs
// the mistake MISTAKE names under job.Run when shm launched it, and the
// root prints its result). Each either gives the right answer or fails
// with an error saying what is wrong.

const (
	envMistake = "PGASMR_TEST_MISTAKE"
	envMode    = "PGASMR_TEST_MODE"
	envDir     = "PGASMR_TEST_DIR" // the inputs of the file mistakes (mistakeInputs)
	envRaw     = "PGASMR_TEST_RAW" // run pgas.Run without launch.FromEnv (rawMain)
	resultTag  = "RESULT: "
)

func TestMain(m *testing.M) {
	if which, _ := launch.Launched(); which == "shm" {
		if os.Getenv(envRaw) != "" {
			os.Exit(rawMain())
		}
		os.Exit(rankMain())
	}
	os.Exit(m.Run())
}

// rankMain runs the mistake the environment names as this process's rank.
func rankMain() int {
	c, ok := mistakeByName(os.Getenv(envMistake))
	if !ok {
		fmt.Fprintln(os.Stderr, "no mistake named", os.Getenv(envMistake))
		return 2
	}
	mode, err := mr.ParseOptions(os.Getenv(envMode))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	res, ok, err := job.Run(job.Options{Mode: mode}, c.body)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if ok {
		fmt.Printf("%s%s\n", resultTag, res)
	}
	return 0
}

// rawMain is a program that a launcher started as one of several ranks
// but that calls pgas.Run without launch.FromEnv: it would run a whole
// 4-rank job in every process.
func rawMain() int {
	err := pgas.Run(context.Background(), pgas.Config{Ranks: 4}, func(ctx context.Context, r *pgas.Rank) error {
		if r.ID() == 0 {
			fmt.Println(resultTag + "a whole job")
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestLaunchedWithoutFromEnv: a program that calls pgas.Run without
// launch.FromEnv, started by a launcher as 2 or 4 processes, fails with a
// line saying what to call instead of printing N results.
func TestLaunchedWithoutFromEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	for _, n := range []int{2, 4} {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := shm.Launch(ctx, shm.LaunchOptions{
			Ranks:  n,
			Argv:   []string{os.Args[0], "-test.run=^$"},
			Env:    append(os.Environ(), envRaw+"=1"),
			Stdout: &stdout,
			Stderr: &stderr,
		})
		cancel()
		if err == nil || strings.Contains(stdout.String(), resultTag) || !strings.Contains(stderr.String(), "call launch.FromEnv(cfg) before pgas.Run") {
			t.Errorf("%d processes: err %v\nstdout:\n%s\nstderr:\n%s", n, err, stdout.String(), stderr.String())
		}
	}
}

// numbers is the data of the histogram mistakes: 1000 values in [0, 50).
func numbers() []int {
	xs := make([]int, 1000)
	x := uint32(1)
	for i := range xs {
		x = x*1664525 + 1013904223
		xs[i] = int(x>>16) % 50
	}
	return xs
}

// words is the text of the word-count mistakes: 1000 distinct words, word
// i appearing i%5+1 times.
func words() []string {
	var lines []string
	for i := range 1000 {
		lines = append(lines, strings.Repeat(fmt.Sprintf("w%03d ", i), i%5+1))
	}
	return lines
}

func histogramOracle() string {
	h := make(map[int]int64)
	for _, x := range numbers() {
		h[x]++
	}
	return fmtHist(h)
}

func fmtHist(h map[int]int64) string {
	var b strings.Builder
	var total int64
	for k := range 50 {
		fmt.Fprintf(&b, "%d:%d ", k, h[k])
		total += h[k]
	}
	fmt.Fprintf(&b, "total=%d", total)
	return b.String()
}

// myShare is rank r's own block of the numbers, as an SPMD program's ranks
// would each hold their data.
func myShare(r *pgas.Rank) []int {
	xs := numbers()
	lo, hi := distrib.BlockRange(int64(len(xs)), r.N(), r.ID())
	return xs[lo:hi]
}

func countInts(_ context.Context, x int, emit func(int, int64)) error {
	emit(x, 1)
	return nil
}

func countWords(_ context.Context, line string, emit func(string, int64)) error {
	for _, w := range strings.Fields(line) {
		emit(w, 1)
	}
	return nil
}

func sumInts(_ context.Context, _ int, vs []int64) (int64, error) {
	var s int64
	for _, v := range vs {
		s += v
	}
	return s, nil
}

func histOf(kvs []mr.KV[int, int64]) string {
	h := make(map[int]int64)
	for _, kv := range kvs {
		h[kv.Key] += kv.Value
	}
	return fmtHist(h)
}

// countsOfCounts is the second stage of the chained mistakes: how many
// words appear n times, for each n, from the first stage's word counts.
func countsOfCounts(ctx context.Context, r *pgas.Rank, in mr.Input[mr.KV[string, int64]]) (string, error) {
	st, err := reduce.NewArrayStore[int, int64](8, reduce.Sum[int64]())
	if err != nil {
		return "", err
	}
	if _, err := mr.ApplyMap(ctx, r, in, func(_ context.Context, kv mr.KV[string, int64], emit func(int, int64)) error {
		emit(int(kv.Value), 1)
		return nil
	}, st); err != nil {
		return "", err
	}
	res, err := mr.Collect(ctx, r, st)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(res.Value), nil
}

// wordCounts is the first stage of the chained mistakes.
func wordCounts(ctx context.Context, r *pgas.Rank, opts ...mr.ReduceOption) (mr.Result[[]mr.KV[string, int64]], error) {
	st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
	if err != nil {
		return mr.Result[[]mr.KV[string, int64]]{}, err
	}
	if _, err := mr.ApplyMap(ctx, r, mr.Slice(words()), countWords, st); err != nil {
		return mr.Result[[]mr.KV[string, int64]]{}, err
	}
	return mr.Collect(ctx, r, st, opts...)
}

// chainPartitionedLocal counts the words partitioned and maps each rank's
// part where it lies.
func chainPartitionedLocal(ctx context.Context, r *pgas.Rank) (string, error) {
	res, err := wordCounts(ctx, r, mr.Gather(reduce.GatherPartitioned))
	if err != nil {
		return "", err
	}
	if !res.Part && r.N() > 1 {
		return "", fmt.Errorf("a partitioned result does not say it is a part")
	}
	return countsOfCounts(ctx, r, mr.Local(res.Value))
}

const chainOracle = "[{1 200} {2 200} {3 200} {4 200} {5 200}]"

type mistake struct {
	name string
	mode string // the job's -mode
	body func(ctx context.Context, r *pgas.Rank) (string, error)
	// want is the right answer; err, if set, is what the error must say
	// at more than one rank (one rank has nothing to get wrong), unless
	// errAt1 says it must fail at one rank too.
	want   string
	err    []string
	errAt1 bool
}

var mistakes = []mistake{
	{
		// Each rank maps its own data with Slice, which says the list is
		// the same on every rank: an error, not half the data.
		name: "own-data-in-slice",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			st, err := reduce.NewArrayStore[int, int64](50, reduce.Sum[int64]())
			if err != nil {
				return "", err
			}
			if _, err := mr.ApplyMap(ctx, r, mr.Slice(myShare(r)), countInts, st); err != nil {
				return "", err
			}
			res, err := mr.ReduceKeys(ctx, r, st, sumInts)
			return histOf(res.Value), err
		},
		want: histogramOracle(),
		err:  []string{"ApplyMap", "mr.Local", "collective mismatch"},
	},
	{
		// The same with Local: every rank maps what it holds.
		name: "own-data-in-local",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			st, err := reduce.NewArrayStore[int, int64](50, reduce.Sum[int64]())
			if err != nil {
				return "", err
			}
			if _, err := mr.ApplyMap(ctx, r, mr.Local(myShare(r)), countInts, st); err != nil {
				return "", err
			}
			res, err := mr.Collect(ctx, r, st)
			return histOf(res.Value), err
		},
		want: histogramOracle(),
	},
	{
		// The same, array-based.
		name: "own-data-in-local-array",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			st, err := reduce.NewArrayStore[int, int64](50, reduce.Sum[int64]())
			if err != nil {
				return "", err
			}
			if _, err := mr.ApplyMapArray(ctx, r, mr.Local(myShare(r)), func(ctx context.Context, s mr.Share[int], emit func(int, int64)) error {
				for i := range s.Elements() {
					x, _ := s.Input.At(ctx, i)
					emit(x, 1)
				}
				return nil
			}, st); err != nil {
				return "", err
			}
			res, err := mr.Collect(ctx, r, st)
			return histOf(res.Value), err
		},
		want: histogramOracle(),
	},
	{
		// A second stage over the first stage's result, written the
		// obvious way: the result is whole on every rank.
		name: "chain-default",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			res, err := wordCounts(ctx, r)
			if err != nil {
				return "", err
			}
			if len(res.Value) != 1000 || res.Part {
				return "", fmt.Errorf("rank %d: %d keys (part %v), want all 1000", r.ID(), len(res.Value), res.Part)
			}
			return countsOfCounts(ctx, r, mr.Slice(res.Value))
		},
		want: chainOracle,
	},
	{
		// A partitioned first stage mapped with Slice: an error.
		name: "chain-partitioned-slice",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			res, err := wordCounts(ctx, r, mr.Gather(reduce.GatherPartitioned))
			if err != nil {
				return "", err
			}
			return countsOfCounts(ctx, r, mr.Slice(res.Value))
		},
		want: chainOracle,
		err:  []string{"ApplyMap", "mr.Local"},
	},
	{
		// A partitioned first stage mapped where it lies.
		name: "chain-partitioned-local",
		body: chainPartitionedLocal,
		want: chainOracle,
	},
	{
		// The same under a job mode whose gather merges to the root: the
		// stage that asks for a partitioned result gets it as asked.
		name: "chain-partitioned-local-mode-none",
		mode: "gather-none+root=1",
		body: chainPartitionedLocal,
		want: chainOracle,
	},
	{
		// Ranks passing different gather modes: an error naming the call
		// the user made.
		name: "gather-differs",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			g := reduce.GatherAll
			if r.ID() == 1 {
				g = reduce.GatherRoot
			}
			res, err := wordCounts(ctx, r, mr.Gather(g))
			return fmt.Sprint(len(res.Value)), err
		},
		want: "1000",
		err:  []string{"Collect(", "mismatch"},
	},
	{
		// ReduceKeys with no options inside job.Run: the whole result.
		name: "reducekeys-default",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				return "", err
			}
			if _, err := mr.ApplyMap(ctx, r, mr.Slice(words()), countWords, st); err != nil {
				return "", err
			}
			res, err := mr.ReduceKeys(ctx, r, st, func(_ context.Context, _ string, n []int64) (int64, error) { return n[0], nil })
			var total int64
			for _, kv := range res.Value {
				total += kv.Value
			}
			return fmt.Sprintf("%d keys, %d words", len(res.Value), total), err
		},
		want: "1000 keys, 3000 words",
	},
	{
		// The job's mode with another root: the root's result is whole.
		name: "mode-root",
		mode: "root=1",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			res, err := wordCounts(ctx, r)
			return fmt.Sprint(len(res.Value)), err
		},
		want: "1000",
	},
	{
		// The job's mode: partitioned, cyclic, with the root elsewhere;
		// the job's calls pass no options, and the mode takes effect.
		name: "mode-partitioned",
		mode: "cyclic+gather-partitioned+root=1",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				return "", err
			}
			ms, err := mr.ApplyMap(ctx, r, mr.Slice(words()), countWords, st)
			if err != nil {
				return "", err
			}
			if r.N() > 1 && ms.Plan != distrib.Cyclic {
				return "", fmt.Errorf("the mode's cyclic distribution was not applied: %v", ms.Plan)
			}
			res, err := mr.Collect(ctx, r, st)
			if err != nil {
				return "", err
			}
			if r.ID() == 1%r.N() && (!res.OK || len(res.Value) != 1000) {
				return "", fmt.Errorf("the root has %d keys", len(res.Value))
			}
			return fmt.Sprint(len(res.Value)), err
		},
		want: "1000",
	},
	{
		// TopK over the whole result every rank holds: each result once.
		name: "topk-default",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			res, err := wordCounts(ctx, r)
			if err != nil {
				return "", err
			}
			top, err := mr.TopK(ctx, r, res.Value, 3, byCount, 0)
			return fmt.Sprint(top), err
		},
		want: "[{w004 5} {w009 5} {w014 5}]",
	},
	{
		// TopK to rank 0 in a job whose root is rank 1: the root's result
		// would be empty; job.Run says so.
		name: "topk-other-root",
		mode: "root=1",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			res, err := wordCounts(ctx, r)
			if err != nil {
				return "", err
			}
			top, err := mr.TopK(ctx, r, res.Value, 3, byCount, 0)
			if top == nil {
				return "", err
			}
			return fmt.Sprint(top), err
		},
		want: "[{w004 5} {w009 5} {w014 5}]",
		err:  []string{"rank 1", "empty result"},
	},
	{
		// A mode the job's map cannot honour.
		name: "mode-array-element-map",
		mode: "array",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			res, err := wordCounts(ctx, r)
			return fmt.Sprint(len(res.Value)), err
		},
		err:    []string{"map array", "element by element"},
		errAt1: true,
	},
	{
		// A dangling symbolic link in a directory: an error naming it.
		name: "dangling-link",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			return countFiles(ctx, r, "linked", mr.FileOptions{SplitBytes: 7})
		},
		err:    []string{"b2.txt", "no such file"},
		errAt1: true,
	},
	{
		// The same, skipping what cannot be read: counted and reported.
		name: "dangling-link-skipped",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			return countFiles(ctx, r, "linked", mr.FileOptions{SplitBytes: 7, SkipUnreadable: true})
		},
		want: "12 words, skipped [b2.txt]",
	},
	{
		// Split size 0 is whole files, as everywhere.
		name: "whole-files",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			return countFiles(ctx, r, "plain", mr.FileOptions{})
		},
		want: "12 words, skipped []",
	},
	{
		// Compressed files read as their text, not as binary.
		name: "compressed-files",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			return countFiles(ctx, r, "packed", mr.FileOptions{SplitBytes: 5})
		},
		want: "12 words, skipped []",
	},
	{
		// The runtime's own collectives: an Allreduce whose count differs.
		name: "allreduce-count",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			n := 4
			if r.ID() == 1 {
				n = 3
			}
			dst := make([]int64, n)
			src := make([]int64, n)
			for i := range src {
				src[i] = int64(i + 1)
			}
			if err := coll.Allreduce(ctx, r.World(), coll.Private(dst), coll.Private(src), n, coll.Add[int64]()); err != nil {
				return "", err
			}
			return "ok", nil
		},
		want: "ok",
		err:  []string{"mismatch", "Allreduce"},
	},
	{
		// BroadcastValue where each rank names itself as the root.
		name: "broadcast-root",
		body: func(ctx context.Context, r *pgas.Rank) (string, error) {
			v, err := mr.BroadcastValue(ctx, r, fmt.Sprintf("from %d", r.ID()), r.ID())
			return v, err
		},
		want: "from 0",
		err:  []string{"mismatch", "root"},
	},
}

// mistakeInputs writes the inputs of the file mistakes under dir: plain/
// holds three text files, linked/ the same with a dangling symbolic link
// among them, packed/ the same files compressed (gzip, bzip2, zstd).
func mistakeInputs(t *testing.T, dir string) {
	texts := map[string]string{"a.txt": "one two three\nfour\n", "b.txt": "five six\r\nseven", "c.txt": "eight nine ten eleven\n\ntwelve\n"}
	for _, sub := range []string{"plain", "linked", "packed"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for name, text := range texts {
		for _, sub := range []string{"plain", "linked"} {
			if err := os.WriteFile(filepath.Join(dir, sub, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f := ziotest.Formats[i%len(ziotest.Formats)]
		ziotest.WriteFile(t, filepath.Join(dir, "packed", name+f.Ext()), f, []byte(text))
		i++
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "linked", "b2.txt")); err != nil {
		t.Fatal(err)
	}
}

// countFiles counts the words of the files under $PGASMR_TEST_DIR/sub, a
// line at a time, and says which inputs were skipped.
func countFiles(ctx context.Context, r *pgas.Rank, sub string, o mr.FileOptions) (string, error) {
	in, skipped, err := mr.AllFiles(ctx, r, o, filepath.Join(os.Getenv(envDir), sub))
	if err != nil {
		return "", err
	}
	st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
	if err != nil {
		return "", err
	}
	if _, err := mr.ApplyMap(ctx, r, in, mr.LineMap(func(_ context.Context, l mr.Line, emit func(string, int64)) error {
		for _, w := range strings.Fields(string(l.Text)) {
			emit(w, 1)
		}
		return nil
	}), st); err != nil {
		return "", err
	}
	res, err := mr.Collect(ctx, r, st)
	if err != nil {
		return "", err
	}
	var skips []string
	for _, s := range skipped {
		skips = append(skips, filepath.Base(s.Path))
	}
	return fmt.Sprintf("%d words, skipped %v", len(res.Value), skips), nil
}

func byCount(a, b mr.KV[string, int64]) int {
	if a.Value != b.Value {
		return int(b.Value - a.Value)
	}
	return strings.Compare(a.Key, b.Key)
}

func mistakeByName(name string) (mistake, bool) {
	i := slices.IndexFunc(mistakes, func(m mistake) bool { return m.name == name })
	if i < 0 {
		return mistake{}, false
	}
	return mistakes[i], true
}

func TestMistakes(t *testing.T) {
	dir := t.TempDir()
	mistakeInputs(t, dir)
	t.Setenv(envDir, dir)
	for _, c := range mistakes {
		for _, tr := range []string{"inproc", "shm"} {
			for _, n := range []int{1, 2, 4} {
				t.Run(fmt.Sprintf("%s/%s/np=%d", c.name, tr, n), func(t *testing.T) {
					if tr == "shm" && testing.Short() {
						t.Skip("shm launches processes")
					}
					want := c.want
					got, err := runMistake(t, c, tr, n)
					if wantErr := len(c.err) > 0 && (n > 1 || c.errAt1); wantErr {
						if err == nil {
							t.Fatalf("no error; result %q", got)
						}
						for _, w := range c.err {
							if !strings.Contains(err.Error(), w) {
								t.Errorf("the error does not say %q:\n%v", w, err)
							}
						}
						if lines := strings.Count(strings.TrimSpace(err.Error()), "\n"); lines > 0 && tr == "inproc" {
							t.Errorf("the error is %d lines:\n%v", lines+1, err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("got  %s\nwant %s", got, want)
					}
				})
			}
		}
	}
}

// runMistake runs c on n ranks of transport tr and returns the root's
// result.
func runMistake(t *testing.T, c mistake, tr string, n int) (string, error) {
	var mode mr.Options
	if c.mode != "" {
		var err error
		if mode, err = mr.ParseOptions(c.mode); err != nil {
			t.Fatal(err)
		}
	}
	if mode.Root >= n {
		mode.Root = n - 1
	}
	if tr == "inproc" {
		res, ok, err := job.Run(job.Options{Ranks: n, Mode: mode}, c.body)
		if err == nil && !ok {
			t.Fatal("job.Run in one process did not return the root's result")
		}
		return res, err
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := shm.Launch(ctx, shm.LaunchOptions{
		Ranks:  n,
		Argv:   []string{os.Args[0], "-test.run=^$"},
		Env:    append(os.Environ(), envMistake+"="+c.name, envMode+"="+mode.String()),
		Stdout: &stdout,
		Stderr: &stderr,
	})
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, stderr.String())
	}
	for line := range strings.Lines(stdout.String()) {
		if s, ok := strings.CutPrefix(line, resultTag); ok {
			return strings.TrimSuffix(s, "\n"), nil
		}
	}
	return "", fmt.Errorf("no result line in the ranks' output:\n%s%s", stdout.String(), stderr.String())
}
