package linreg

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/apps/internal/apptest"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

type pt struct{ x, y float64 }

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func int8Bytes(ps []pt) []byte {
	var b []byte
	for _, p := range ps {
		b = append(b, byte(int8(p.x)), byte(int8(p.y)))
	}
	return b
}

func f64Bytes(ps []pt) []byte {
	var b []byte
	for _, p := range ps {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.x))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.y))
	}
	return b
}

func csvBytes(ps []pt) []byte {
	var b []byte
	for _, p := range ps {
		b = fmt.Appendf(b, "%v,%v\n", p.x, p.y)
	}
	return b
}

// render writes r in every output format.
func render(t testing.TB, r *Result) string {
	t.Helper()
	var b strings.Builder
	for _, f := range Formats {
		b.WriteString("== " + f + "\n")
		if err := r.Write(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func seq(t testing.TB, files []string, o Options) *Result {
	t.Helper()
	r, err := Seq(context.Background(), files, o)
	if err != nil {
		t.Fatalf("Seq: %v", err)
	}
	return r
}

// Points on y = 2x + 1, worked by hand: n = 5, Σx = 10, Σy = 25, Σx² = 30,
// Σy² = 165, Σxy = 70.
var line = []pt{{0, 1}, {1, 3}, {2, 5}, {3, 7}, {4, 9}}

const lineText = `n  slope  intercept  r2
5      2          1   1
`

const lineJSON = `{
  "app": "linreg",
  "n": 5,
  "slope": 2,
  "intercept": 1,
  "r2": 1,
  "sums": {
    "x": 10,
    "y": 25,
    "xx": 30,
    "yy": 165,
    "xy": 70
  }
}
`

func TestHandComputed(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		format string
		data   []byte
	}{
		{"int8", int8Bytes(line)},
		{"f64", f64Bytes(line)},
		{"csv", csvBytes(line)},
		{"csv", []byte("x,y\r\n 0 , 1\r\n\r\n1,3\n2,5\n\n3,7\n4,9")}, // header, CRLF, blanks, no final LF
	} {
		t.Run(tc.format, func(t *testing.T) {
			f := write(t, dir, "line."+tc.format, tc.data)
			r := seq(t, []string{f}, Options{Format: tc.format})
			for format, want := range map[string]string{
				"text": lineText,
				"tsv":  "n\t5\nslope\t2\nintercept\t1\nr2\t1\n",
				"csv":  "n,slope,intercept,r2\n5,2,1,1\n",
				"json": lineJSON,
			} {
				var b bytes.Buffer
				if err := r.Write(&b, format); err != nil {
					t.Fatal(err)
				}
				if b.String() != want {
					t.Errorf("Write(%s) = %q; want %q", format, b.String(), want)
				}
			}
		})
	}

	// (0,0), (1,1), (2,1): Dxx = 3·5 − 9 = 6, Dxy = 3·3 − 3·2 = 3,
	// Dyy = 3·2 − 4 = 2: slope 1/2, intercept (2·5 − 3·3)/6 = 1/6,
	// r² = 9/12.
	f := write(t, dir, "three", int8Bytes([]pt{{0, 0}, {1, 1}, {2, 1}}))
	r := seq(t, []string{f}, Options{})
	if r.N != 3 || r.Slope != 0.5 || r.Intercept != 1.0/6 || r.R2 != 0.75 {
		t.Errorf("fit = %+v; want n 3, slope 0.5, intercept 1/6, r2 0.75", r)
	}
	var b bytes.Buffer
	r.Write(&b, "text")
	if want := "n  slope            intercept    r2\n3    0.5  0.16666666666666666  0.75\n"; b.String() != want {
		t.Errorf("text = %q; want %q", b.String(), want)
	}
}

// ratOracle fits int8 points with the centred formulas in exact rational
// arithmetic: slope = Σ(x−x̄)(y−ȳ)/Σ(x−x̄)², intercept = ȳ − slope·x̄.
func ratOracle(data []byte) (n int64, slope, intercept, r2 float64) {
	n = int64(len(data) / 2)
	var mx, my big.Rat
	for i := 0; i < len(data); i += 2 {
		mx.Add(&mx, big.NewRat(int64(int8(data[i])), 1))
		my.Add(&my, big.NewRat(int64(int8(data[i+1])), 1))
	}
	mx.Quo(&mx, big.NewRat(n, 1))
	my.Quo(&my, big.NewRat(n, 1))
	var sxx, syy, sxy, dx, dy, t big.Rat
	for i := 0; i < len(data); i += 2 {
		dx.Sub(big.NewRat(int64(int8(data[i])), 1), &mx)
		dy.Sub(big.NewRat(int64(int8(data[i+1])), 1), &my)
		sxx.Add(&sxx, t.Mul(&dx, &dx))
		syy.Add(&syy, t.Mul(&dy, &dy))
		sxy.Add(&sxy, t.Mul(&dx, &dy))
	}
	var s, c, q big.Rat
	s.Quo(&sxy, &sxx)
	slope, _ = s.Float64()
	intercept, _ = c.Sub(&my, t.Mul(&s, &mx)).Float64()
	r2, _ = q.Quo(t.Mul(&sxy, &sxy), new(big.Rat).Mul(&sxx, &syy)).Float64()
	return
}

func TestOracle(t *testing.T) {
	dir := t.TempDir()
	for _, points := range []int64{2, 3, 17, 5000} {
		var b bytes.Buffer
		if err := Generate(&b, points, "int8", uint64(points)); err != nil {
			t.Fatal(err)
		}
		f := write(t, dir, fmt.Sprint(points), b.Bytes())
		n, slope, icpt, r2 := ratOracle(b.Bytes())
		r := seq(t, []string{f}, Options{ChunkBytes: 64})
		if r.N != n || r.Slope != slope || r.Intercept != icpt || r.R2 != r2 {
			t.Errorf("%d points: fit = %d %v %v %v; want %d %v %v %v", points, r.N, r.Slope, r.Intercept, r.R2, n, slope, icpt, r2)
		}
	}

	// float64: a two-pass float oracle on the same points.
	var b bytes.Buffer
	if err := Generate(&b, 3000, "f64", 9); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	f := write(t, dir, "f64", data)
	var ps []pt
	for i := 0; i < len(data); i += 16 {
		ps = append(ps, pt{math.Float64frombits(binary.LittleEndian.Uint64(data[i:])), math.Float64frombits(binary.LittleEndian.Uint64(data[i+8:]))})
	}
	var mx, my float64
	for _, p := range ps {
		mx += p.x
		my += p.y
	}
	mx /= float64(len(ps))
	my /= float64(len(ps))
	var sxx, syy, sxy float64
	for _, p := range ps {
		sxx += (p.x - mx) * (p.x - mx)
		syy += (p.y - my) * (p.y - my)
		sxy += (p.x - mx) * (p.y - my)
	}
	slope := sxy / sxx
	want := []float64{slope, my - slope*mx, sxy * sxy / (sxx * syy)}
	r := seq(t, []string{f}, Options{Format: "f64", ChunkBytes: 1024})
	for i, got := range []float64{r.Slope, r.Intercept, r.R2} {
		if math.Abs(got-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
			t.Errorf("f64 fit[%d] = %v; want %v", i, got, want[i])
		}
	}
	if r.N != 3000 || math.Abs(r.Slope-2.5) > 0.05 {
		t.Errorf("f64: n = %d, slope %v; want 3000 and about 2.5", r.N, r.Slope)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	nanData := f64Bytes([]pt{{1, 2}, {3, 4}, {math.NaN(), 1}})
	infData := f64Bytes([]pt{{1, 2}, {3, math.Inf(-1)}})
	for _, tc := range []struct {
		name, format string
		data         []byte
		want         []string // substrings of the error
		is           error
	}{
		{"odd.bin", "int8", []byte{1, 2, 3}, []string{"odd.bin", "offset 2", "1 trailing"}, nil},
		{"odd.f64", "f64", make([]byte, 40), []string{"odd.f64", "offset 32", "8 trailing"}, nil},
		{"nan.f64", "f64", nanData, []string{"nan.f64", "offset 32", "x is NaN"}, nil},
		{"inf.f64", "f64", infData, []string{"inf.f64", "offset 16", "y is -Inf"}, nil},
		{"bad.csv", "csv", []byte("1,2\n3,4\n5;6\n7,8\n"), []string{"bad.csv:3", "offset 8"}, nil},
		{"nan.csv", "csv", []byte("x,y\n1,2\n3,NaN\n"), []string{"nan.csv:3", `y "NaN"`}, nil},
		{"inf.csv", "csv", []byte("1,2\n\n+Inf,2\n"), []string{"inf.csv:3", `x "+Inf"`}, nil},
		{"late-header.csv", "csv", []byte("1,2\nx,y\n"), []string{"late-header.csv:2"}, nil},
		{"vertical", "int8", int8Bytes([]pt{{3, 1}, {3, 2}, {3, 5}}), []string{"zero variance"}, ErrZeroVariance},
		{"empty", "int8", nil, []string{"n = 0"}, ErrZeroVariance},
		{"one.csv", "csv", []byte("1,2\n"), []string{"n = 1"}, ErrZeroVariance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := write(t, dir, tc.name, tc.data)
			o := Options{Format: tc.format, ChunkBytes: 16}
			errs := map[string]error{}
			_, errs["seq"] = Seq(context.Background(), []string{f}, o)
			_, errs["goroutines"] = Goroutines(context.Background(), []string{f}, o)
			for _, em := range []bool{false, true} {
				o := o
				o.Map = apptest.MapMode(em)
				errs[fmt.Sprintf("pgasmr/element=%v", em)] = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
					_, err := Run(ctx, r, []string{f}, o)
					return err
				})
			}
			for mode, err := range errs {
				if err == nil {
					t.Errorf("%s: no error; want one containing %q", mode, tc.want)
					continue
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: error %q does not contain %q", mode, err, w)
					}
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("%s: error %v is not %v", mode, err, tc.is)
				}
			}
		})
	}
}

func TestNoFiles(t *testing.T) {
	for _, f := range []func(context.Context, []string, Options) (*Result, error){Seq, Goroutines} {
		if _, err := f(context.Background(), nil, Options{}); !errors.Is(err, ErrZeroVariance) {
			t.Errorf("no files: %v; want ErrZeroVariance", err)
		}
	}
}

func TestConstantY(t *testing.T) {
	f := write(t, t.TempDir(), "flat", int8Bytes([]pt{{1, 4}, {2, 4}, {5, 4}}))
	r := seq(t, []string{f}, Options{})
	if !math.IsNaN(r.R2) || r.Slope != 0 || r.Intercept != 4 {
		t.Fatalf("fit = %+v; want slope 0, intercept 4, r2 NaN", r)
	}
	want := "n  slope  intercept   r2\n3      0          4  NaN\n" +
		"n\t3\nslope\t0\nintercept\t4\nr2\tNaN\n" +
		"n,slope,intercept,r2\n3,0,4,NaN\n"
	var b bytes.Buffer
	for _, f := range []string{"text", "tsv", "csv", "json"} {
		if err := r.Write(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); !strings.HasPrefix(got, want) || !strings.Contains(got, `"r2": null,`) {
		t.Fatalf("output = %q; want %q and r2 null in json", got, want)
	}
}

func TestOptionsValidate(t *testing.T) {
	err := Options{Options: mr.Options{Dist: distrib.Custom, Threshold: -1, Gather: 9, Root: -1, Transfer: 5}, Format: "png", ChunkBytes: 10}.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad options")
	}
	for _, w := range []string{"png", "custom", "threshold", "gather", "root -1", "transfer", "chunk size 10"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %v; missing %q", err, w)
		}
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	var b bytes.Buffer
	if err := (&Result{}).Write(&b, "xml"); err == nil {
		t.Error("Write(xml) accepted")
	}
}

func TestCancel(t *testing.T) {
	var b bytes.Buffer
	Generate(&b, 1000, "csv", 1)
	f := write(t, t.TempDir(), "c.csv", b.Bytes())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, format := range []string{"int8", "csv"} {
		if _, err := Seq(ctx, []string{f}, Options{Format: format}); !errors.Is(err, context.Canceled) {
			t.Errorf("Seq(%s) on a cancelled context: %v", format, err)
		}
		if _, err := Goroutines(ctx, []string{f}, Options{Format: format}); !errors.Is(err, context.Canceled) {
			t.Errorf("Goroutines(%s) on a cancelled context: %v", format, err)
		}
	}
}

func TestGenerate(t *testing.T) {
	for _, format := range []string{"int8", "f64", "csv"} {
		var a, b, c bytes.Buffer
		for _, x := range []struct {
			w    *bytes.Buffer
			seed uint64
		}{{&a, 1}, {&b, 1}, {&c, 2}} {
			if err := Generate(x.w, 777, format, x.seed); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), c.Bytes()) {
			t.Errorf("%s: Generate is not a function of the seed", format)
		}
		if rec := recordSize(mustFormat(format)); rec > 0 && int64(a.Len()) != 777*rec {
			t.Errorf("%s: %d bytes for 777 points", format, a.Len())
		}
	}
	var b bytes.Buffer
	Generate(&b, 20000, "int8", 3)
	f := write(t, t.TempDir(), "g", b.Bytes())
	if r := seq(t, []string{f}, Options{}); math.Abs(r.Slope-0.5) > 0.05 || math.Abs(r.Intercept-10) > 1 {
		t.Errorf("int8 fit %+v; want about y = x/2 + 10", r)
	}
}

func mustFormat(s string) int {
	f, err := parseFormat(s)
	if err != nil {
		panic(err)
	}
	return f
}

type config struct {
	ranks    int
	element  bool
	dist     distrib.Kind
	gather   reduce.Gather
	transfer reduce.Transfer
}

func (c config) String() string {
	m := "array"
	if c.element {
		m = "element/" + c.dist.String()
	}
	return fmt.Sprintf("ranks=%d/%s/%v/%v", c.ranks, m, c.gather, c.transfer)
}

func configs() []config {
	var cs []config
	for _, ranks := range []int{1, 2, 3} {
		for _, m := range []struct {
			element bool
			dist    distrib.Kind
		}{{false, distrib.Block}, {true, distrib.Block}, {true, distrib.Cyclic}, {true, distrib.Balanced}, {true, distrib.BestFit}} {
			for _, g := range []reduce.Gather{reduce.GatherAll, reduce.GatherRoot, reduce.GatherNone, reduce.GatherPartitioned} {
				for _, tr := range []reduce.Transfer{reduce.Collective, reduce.ElementByElement} {
					cs = append(cs, config{ranks, m.element, m.dist, g, tr})
				}
			}
		}
	}
	return cs
}

// runJob runs Run on c.ranks ranks and returns the root's result, checking
// that the other ranks return nil.
func runJob(t *testing.T, files []string, o Options, ranks int) *Result {
	t.Helper()
	var mu sync.Mutex
	results := make([]*Result, ranks)
	err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks}, func(ctx context.Context, r *pgas.Rank) error {
		res, err := Run(ctx, r, files, o)
		mu.Lock()
		results[r.ID()] = res
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for q, res := range results {
		if (res != nil) != (q == o.Root) {
			t.Fatalf("rank %d: result %v; want one on the root %d only", q, res, o.Root)
		}
	}
	return results[o.Root]
}

// TestMetamorphic checks that the baselines and every framework
// configuration write the same bytes, for each input format, on several
// files cut into many small chunks.
func TestMetamorphic(t *testing.T) {
	dir := t.TempDir()
	inputs := map[string][]string{}
	for _, format := range []string{"int8", "f64", "csv"} {
		for i, points := range []int64{300, 0, 41, 1000} {
			var b bytes.Buffer
			if err := Generate(&b, points, format, uint64(i)); err != nil {
				t.Fatal(err)
			}
			inputs[format] = append(inputs[format], write(t, dir, fmt.Sprintf("%s%d", format, i), b.Bytes()))
		}
	}
	for _, format := range []string{"int8", "f64", "csv"} {
		files := inputs[format]
		base := Options{Format: format, ChunkBytes: 96}
		want := render(t, seq(t, files, base))
		t.Run(format+"/seq-mmap", func(t *testing.T) {
			defer func(m bool) { useMmap = m }(useMmap)
			useMmap = !useMmap
			if got := render(t, seq(t, files, base)); got != want {
				t.Fatalf("output:\n%s\nwant (seq, other read path):\n%s", got, want)
			}
		})
		t.Run(format+"/goroutines", func(t *testing.T) {
			r, err := Goroutines(context.Background(), files, base)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(t, r); got != want {
				t.Fatalf("output:\n%s\nwant (seq):\n%s", got, want)
			}
		})
		for _, c := range configs() {
			t.Run(format+"/"+c.String(), func(t *testing.T) {
				o := base
				o.Map, o.Dist, o.Threshold, o.Gather, o.Transfer = apptest.MapMode(c.element), c.dist, 500, c.gather, c.transfer
				o.Root = c.ranks - 1
				if got := render(t, runJob(t, files, o, c.ranks)); got != want {
					t.Fatalf("output:\n%s\nwant (seq):\n%s", got, want)
				}
			})
		}
	}
}

// TestCSVChunks: integer points give exact float sums in any order, so a
// CSV file cut at any chunk size (lines straddling chunks, chunks with no
// line start) must print the same bytes as the int8 file of the points.
func TestCSVChunks(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	Generate(&b, 2000, "int8", 5)
	var ps []pt
	for i := 0; i < b.Len(); i += 2 {
		ps = append(ps, pt{float64(int8(b.Bytes()[i])), float64(int8(b.Bytes()[i+1]))})
	}
	render := func(t *testing.T, r *Result) string {
		out, _, _ := strings.Cut(render(t, r), `"sums"`)
		return out
	}
	want := render(t, seq(t, []string{write(t, dir, "i8", b.Bytes())}, Options{}))
	csvFile := write(t, dir, "p.csv", csvBytes(ps))
	for _, size := range []int64{16, 32, 48, 64, 160, 4096, 0} {
		o := Options{Format: "csv", ChunkBytes: size}
		if got := render(t, seq(t, []string{csvFile}, o)); got != want {
			t.Errorf("chunk %d: output:\n%s\nwant (int8):\n%s", size, got, want)
		}
		o.Map, o.Dist = mr.MapElement, distrib.Cyclic
		if got := render(t, runJob(t, []string{csvFile}, o, 3)); got != want {
			t.Errorf("chunk %d, 3 ranks: output:\n%s\nwant (int8):\n%s", size, got, want)
		}
	}
}
