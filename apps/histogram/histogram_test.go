package histogram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// handPicture's counts are worked out by hand in TestHandCounted.
var handPicture = picture{
	{{1, 2, 3}, {1, 9, 3}, {200, 2, 0}},
	{{1, 1, 1}, {255, 255, 255}, {0, 0, 0}},
}

func format(t *testing.T, r *Result, f string) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHandCounted(t *testing.T) {
	dir := t.TempDir()
	files := []string{writeFile(t, dir, "hand.bmp", encodeBMP(handPicture, encoding{info: 40, topDown: true}))}
	res, err := Seq(context.Background(), files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Red: 1 three times, 200, 255, 0. Green: 2 twice, 9, 1, 255, 0.
	// Blue: 3 twice, 0 twice, 1, 255.
	nonzero := map[int]string{
		0: "0\t1\t1\t2", 1: "1\t3\t1\t1", 2: "2\t0\t2\t0", 3: "3\t0\t0\t2",
		9: "9\t0\t1\t0", 200: "200\t1\t0\t0", 255: "255\t1\t1\t1",
	}
	var want strings.Builder
	for v := range 256 {
		if s, ok := nonzero[v]; ok {
			want.WriteString(s + "\n")
		} else {
			fmt.Fprintf(&want, "%d\t0\t0\t0\n", v)
		}
	}
	if got := format(t, res, "tsv"); got != want.String() {
		t.Errorf("tsv = %q; want %q", got, want.String())
	}
	text := strings.Split(format(t, res, "text"), "\n")
	if len(text) != 258 || text[0] != "value  red  green  blue" || text[1] != "    0    1      1     2" || text[256] != "  255    1      1     1" || text[257] != "" {
		t.Errorf("text = %q ... %q", text[:3], text[255:])
	}
	if got := format(t, res, "csv"); !strings.HasPrefix(got, "value,red,green,blue\n0,1,1,2\n1,3,1,1\n2,0,2,0\n") || !strings.HasSuffix(got, "\n255,1,1,1\n") {
		t.Errorf("csv = %q...", got[:60])
	}
	js := format(t, res, "json")
	if !strings.HasPrefix(js, "{\n  \"app\": \"histogram\",\n  \"images\": 1,\n  \"pixels\": 6,\n  \"red\": [\n    1,\n    3,\n    0,") || !strings.HasSuffix(js, "]\n}\n") {
		t.Errorf("json = %q...", js[:80])
	}
	var back struct {
		App              string
		Images           int
		Pixels           int64
		Red, Green, Blue []int64
	}
	if err := json.Unmarshal([]byte(js), &back); err != nil {
		t.Fatal(err)
	}
	if back.App != "histogram" || back.Images != 1 || back.Pixels != 6 || len(back.Red) != 256 || back.Green[2] != 2 || back.Blue[255] != 1 {
		t.Errorf("json decodes to %+v", back)
	}
	if err := res.Write(&bytes.Buffer{}, "xml"); err == nil {
		t.Error("Write(xml): no error")
	}
}

// testFiles writes BMPs of every layout and returns them with the
// oracle's result.
func testFiles(t *testing.T) ([]string, *Result) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	want := &Result{}
	var files []string
	for i, c := range []struct {
		w, h int
		e    encoding
	}{
		{5, 4, encoding{info: 40}},                 // 15-byte rows, 1 byte of padding
		{6, 3, encoding{info: 124, topDown: true}}, // V5, 2 bytes of padding
		{1, 7, encoding{info: 108, gap: 5}},        // V4, a gap before the pixels
		{4, 2, encoding{info: 52}},                 // no padding
		{7, 5, encoding{info: 56, topDown: true}},  // 3 bytes of padding
		{2, 1, encoding{info: 40}},
	} {
		pic := randomPicture(rng, c.w, c.h)
		files = append(files, writeFile(t, dir, fmt.Sprintf("f%d.bmp", i), encodeBMP(pic, c.e)))
		oracle(want, pic)
		if i == 0 { // a file listed twice counts twice
			files = append(files, files[0])
			oracle(want, pic)
		}
	}
	return files, want
}

type config struct {
	ranks   int
	element bool
	dist    distrib.Kind
	gather  reduce.Gather
	tr      reduce.Transfer
	root    int
}

func (c config) String() string {
	m := "array"
	if c.element {
		m = "element/" + c.dist.String()
	}
	return fmt.Sprintf("ranks=%d/%s/%v/%v/root=%d", c.ranks, m, c.gather, c.tr, c.root)
}

func configs() []config {
	var cs []config
	for _, ranks := range []int{1, 2, 3} {
		for _, element := range []bool{false, true} {
			dists := []distrib.Kind{distrib.Block}
			if element {
				dists = []distrib.Kind{distrib.Block, distrib.Cyclic, distrib.Balanced, distrib.BestFit}
			}
			for _, d := range dists {
				for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned} {
					for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
						cs = append(cs, config{ranks, element, d, g, tr, len(cs) % ranks})
					}
				}
			}
		}
	}
	return cs
}

// runJob runs Run on c.ranks ranks and returns the root's result, checking
// that the other ranks return nil.
func runJob(ctx context.Context, c config, files []string, chunk int64) (*Result, error) {
	var mu sync.Mutex
	var got *Result
	var others int
	err := pgas.Run(ctx, pgas.Config{Ranks: c.ranks, RanksPerNode: 2}, func(ctx context.Context, r *pgas.Rank) error {
		res, err := Run(ctx, r, files, Options{Options: mr.Options{Dist: c.dist, Threshold: 64, Map: apptest.MapMode(c.element), Gather: c.gather, Root: c.root, Transfer: c.tr}, ChunkBytes: chunk})
		mu.Lock()
		defer mu.Unlock()
		if r.ID() == c.root {
			got = res
		} else if res != nil {
			others++
		}
		return err
	})
	if err == nil && others > 0 {
		err = fmt.Errorf("%d non-root ranks returned a result", others)
	}
	if err == nil && got == nil {
		err = errors.New("no result on the root")
	}
	return got, err
}

// TestModes: every baseline and every framework configuration writes the
// oracle's bytes in every format, reading the files through maps and
// through reads.
func TestModes(t *testing.T) { bothReads(t, testModes) }

// bothReads runs test with files read through maps, then through reads.
func bothReads(t *testing.T, test func(t *testing.T)) {
	defer func(m bool) { useMmap = m }(useMmap)
	for _, m := range []bool{true, false} {
		useMmap = m
		t.Run(map[bool]string{true: "mmap", false: "pread"}[m], test)
	}
}

func testModes(t *testing.T) {
	files, want := testFiles(t)
	ctx := context.Background()
	check := func(t *testing.T, got *Result) {
		t.Helper()
		for _, f := range Formats {
			if g, w := format(t, got, f), format(t, want, f); g != w {
				t.Errorf("%s output differs from the oracle's:\n%s\nwant\n%s", f, g, w)
			}
		}
	}
	for _, chunk := range []int64{1, 40, 0} { // a row per chunk, a few rows, whole files
		t.Run(fmt.Sprintf("chunk=%d/seq", chunk), func(t *testing.T) {
			got, err := Seq(ctx, files, Options{ChunkBytes: chunk})
			if err != nil {
				t.Fatal(err)
			}
			check(t, got)
		})
		t.Run(fmt.Sprintf("chunk=%d/seq-naive", chunk), func(t *testing.T) {
			got, err := seqNaive(ctx, files, Options{ChunkBytes: chunk})
			if err != nil {
				t.Fatal(err)
			}
			check(t, got)
		})
		t.Run(fmt.Sprintf("chunk=%d/goroutines", chunk), func(t *testing.T) {
			got, err := Goroutines(ctx, files, Options{ChunkBytes: chunk})
			if err != nil {
				t.Fatal(err)
			}
			check(t, got)
		})
	}
	for _, c := range configs() {
		t.Run(c.String(), func(t *testing.T) {
			got, err := runJob(ctx, c, files, 40)
			if err != nil {
				t.Fatal(err)
			}
			check(t, got)
		})
	}
}

// TestWideRows reads rows wider than the read buffer in pieces.
func TestWideRows(t *testing.T) { bothReads(t, testWideRows) }

func testWideRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pic := randomPicture(rng, readBytes/3+5, 2)
	want := &Result{}
	oracle(want, pic)
	files := []string{writeFile(t, t.TempDir(), "wide.bmp", encodeBMP(pic, encoding{info: 40}))}
	ctx := context.Background()
	for name, f := range map[string]func() (*Result, error){
		"seq":        func() (*Result, error) { return Seq(ctx, files, Options{}) },
		"goroutines": func() (*Result, error) { return Goroutines(ctx, files, Options{ChunkBytes: 1}) },
		"array":      func() (*Result, error) { return runJob(ctx, config{ranks: 2, gather: reduce.GatherRoot}, files, 1) },
		"element": func() (*Result, error) {
			return runJob(ctx, config{ranks: 2, element: true, gather: reduce.GatherRoot}, files, 1)
		},
	} {
		got, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *got != *want {
			t.Errorf("%s: result differs from the oracle's", name)
		}
	}
}

// TestGenerated checks generated files against a count written in the
// test straight from the file's bytes.
func TestGenerated(t *testing.T) {
	dir := t.TempDir()
	var files []string
	want := &Result{}
	for i, wh := range [][2]int{{13, 9}, {64, 40}, {1, 1}} {
		var b bytes.Buffer
		if err := Generate(&b, wh[0], wh[1], uint64(i)); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := Generate(&again, wh[0], wh[1], uint64(i)); err != nil || !bytes.Equal(b.Bytes(), again.Bytes()) {
			t.Fatalf("Generate(%v, seed %d) is not deterministic (%v)", wh, i, err)
		}
		data := b.Bytes()
		stride := (3*wh[0] + 3) &^ 3
		if len(data) != 54+stride*wh[1] {
			t.Fatalf("Generate(%v) wrote %d bytes; want %d", wh, len(data), 54+stride*wh[1])
		}
		want.Images++
		for y := range wh[1] {
			for x := range wh[0] {
				p := data[54+y*stride+3*x:]
				want.Blue[p[0]]++
				want.Green[p[1]]++
				want.Red[p[2]]++
				want.Pixels++
			}
		}
		files = append(files, writeFile(t, dir, fmt.Sprintf("g%d.bmp", i), data))
	}
	got, err := runJob(context.Background(), config{ranks: 2, gather: reduce.GatherRoot}, files, 100)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *want {
		t.Error("result over generated files differs from the direct count")
	}
	// Non-uniform: no channel is flat.
	distinct := func(h *[256]int64) (n int) {
		for _, c := range h {
			if c > 0 {
				n++
			}
		}
		return n
	}
	if distinct(&got.Green) < 20 || got.Green[0] < 2*got.Green[200] {
		t.Errorf("green is not skewed towards dark values: %v", got.Green)
	}
	var b bytes.Buffer
	if err := GenerateBytes(&b, 100_000, 1); err != nil || b.Len() < 100_000 || b.Len() > 100_000+4*GenerateWidth {
		t.Errorf("GenerateBytes(100000) wrote %d bytes (%v)", b.Len(), err)
	}
}

func TestCancel(t *testing.T) {
	files, _ := testFiles(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Seq(ctx, files, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Seq(cancelled) = %v", err)
	}
	if _, err := Goroutines(ctx, files, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Goroutines(cancelled) = %v", err)
	}
	if _, err := runJob(ctx, config{ranks: 2}, files, 0); err == nil {
		t.Error("Run(cancelled): no error")
	}
}

func TestPNG(t *testing.T) {
	files, _ := testFiles(t)
	res, err := Seq(context.Background(), files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.PNG(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("PNG output does not decode: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X < 512 || sz.Y < 3*100 {
		t.Errorf("PNG is %v; want at least 512×300", sz)
	}
	// The tallest red bar reaches the top of the red panel.
	var peak int
	for v, n := range res.Red {
		if n > res.Red[peak] {
			peak = v
		}
	}
	if r, g, bl, _ := img.At(8+2*peak, 9).RGBA(); r>>8 != 220 || g>>8 != 40 || bl>>8 != 40 {
		t.Errorf("top of the red peak at value %d is (%d,%d,%d); want red", peak, r>>8, g>>8, bl>>8)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("DefaultOptions().Validate() = %v", err)
	}
	o := Options{Options: mr.Options{Root: -3, Dist: distrib.Custom}, ChunkBytes: -1}
	err := o.Validate()
	for _, want := range []string{"histogram: root -3", "histogram: ChunkBytes = -1", "histogram: distribution custom"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v; want it to report %q", err, want)
		}
	}
}

func TestNoFiles(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]func() (*Result, error){
		"seq":        func() (*Result, error) { return Seq(ctx, nil, Options{}) },
		"goroutines": func() (*Result, error) { return Goroutines(ctx, nil, Options{}) },
		"pgasmr": func() (*Result, error) {
			return runJob(ctx, config{ranks: 2, gather: reduce.GatherPartitioned}, nil, 0)
		},
	} {
		got, err := f()
		if err != nil || *got != (Result{}) {
			t.Errorf("%s(no files) = %+v, %v; want an empty result", name, got, err)
		}
	}
}

// TestTruncatedWhileRead: a file cut short after its header was read
// gives ErrTruncated naming it, through a map or reads, before or after
// the reader mapped it; nothing panics.
func TestTruncatedWhileRead(t *testing.T) { bothReads(t, testTruncatedWhileRead) }

func testTruncatedWhileRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, early := range []bool{true, false} {
		path := writeFile(t, t.TempDir(), "cut.bmp", encodeBMP(randomPicture(rng, 64, 64), encoding{info: 40}))
		ctx := context.Background()
		p, err := newPlan(ctx, []string{path}, 64*3*8) // 8 chunks of 8 rows
		if err != nil {
			t.Fatal(err)
		}
		rd := newReader(p)
		if !early { // the first chunk read (and the file mapped) before the cut
			if err := rd.each(ctx, p.chunks[0], func([]byte) {}); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Truncate(path, p.chunks[4].off); err != nil {
			t.Fatal(err)
		}
		err = nil
		for _, c := range p.chunks[1:] {
			if err = rd.each(ctx, c, func([]byte) {}); err != nil {
				break
			}
		}
		rd.Close()
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("early=%v: reading a file cut short: %v; want an error naming %s", early, err, path)
		}
		if early && !errors.Is(err, ErrTruncated) {
			t.Errorf("early=%v: %v; want ErrTruncated", early, err)
		}
	}
}
