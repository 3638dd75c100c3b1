package mr_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/internal/zio"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// line is a line read by Split.Lines, kept past the call.
type line struct {
	Off  int64
	Text string
}

// lineOracle returns the lines of text as Lines defines them, by
// strings.Split of the whole text: pieces between '\n's, the empty piece
// after a final '\n' (or of an empty text) dropped, "\r" before '\n'
// dropped.
func lineOracle(text string) []line {
	var out []line
	off := 0
	pieces := strings.Split(text, "\n")
	for i, p := range pieces {
		last := i == len(pieces)-1
		if last && p == "" {
			break
		}
		t := p
		if !last {
			t = strings.TrimSuffix(p, "\r")
		}
		out = append(out, line{int64(off), t})
		off += len(p) + 1
	}
	return out
}

// writeText writes text to a new file under dir and returns its path.
func writeText(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// splitsOf cuts the files with mr.Files and returns the splits.
func splitsOf(t *testing.T, opts mr.FileOptions, paths ...string) []mr.Split {
	t.Helper()
	in, skips, err := mr.Files(context.Background(), opts, paths...)
	if err != nil || skips != nil {
		t.Fatalf("Files(%+v, %q) = %v, %v", opts, paths, skips, err)
	}
	return allSplits(t, in)
}

// readLines reads the lines of every split in order.
func readLines(ss []mr.Split) ([]line, error) {
	var got []line
	for _, s := range ss {
		err := s.Lines(context.Background(), func(l mr.Line) error {
			if l.Path != s.Path {
				return fmt.Errorf("line of %s from split %v", l.Path, s)
			}
			got = append(got, line{l.Off, string(l.Text)})
			return nil
		})
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// lineTexts are the files of the line tests: every kind of line ending,
// empty lines and files, words.
var lineTexts = map[string]string{
	"empty":         "",
	"one":           "a",
	"one-nl":        "a\n",
	"nl":            "\n",
	"nls":           "\n\n\n",
	"no-trailing":   "ab\ncd\nef",
	"crlf":          "ab\r\ncd\r\n\r\nef\r\n",
	"crlf-no-trail": "ab\r\ncd",
	"cr-alone":      "a\rb\nc\r",
	"empty-lines":   "x\n\ny\n\n\nz\n",
	"words":         strings.Join(lines(60), "\n") + "\n",
}

// TestSplitLines: for every split size from 1 byte to more than the
// file, the splits' lines, in order, are the file's lines, each once,
// with their offsets; with Header, all but the first.
func TestSplitLines(t *testing.T) {
	dir := t.TempDir()
	for name, text := range lineTexts {
		p := writeText(t, dir, name, text)
		for _, header := range []bool{false, true} {
			want := lineOracle(text)
			if header && len(want) > 0 {
				want = want[1:]
			}
			for size := int64(0); size <= int64(len(text))+1; size++ {
				ss := splitsOf(t, mr.FileOptions{SplitBytes: size, Header: header}, p)
				got, err := readLines(ss)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("%s, header %v, split size %d: Lines = %v, %v\nwant %v", name, header, size, got, err, want)
				}
			}
		}
	}
}

// TestSplitLinesLong: lines longer than any buffer, read whole, at split
// sizes around the buffers' sizes.
func TestSplitLinesLong(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 70000)
	for name, text := range map[string]string{
		"one long line":     long,
		"long lines around": long + "\nshort\n" + strings.Repeat("y", 70001) + "\r\n\nz",
	} {
		p := writeText(t, dir, "f", text)
		want := lineOracle(text)
		for _, size := range []int64{997, 4095, 4096, 4097, 65535, 65536, 65537, 69999, 70000, 70001, 70007, 1 << 20} {
			got, err := readLines(splitsOf(t, mr.FileOptions{SplitBytes: size}, p))
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s, split size %d: %d lines, %v; want %d", name, size, len(got), err, len(want))
			}
		}
	}
}

// TestSplitLinesErrors: fn's error names the file and the line's offset
// and wraps fn's; a file that shrank below a split is an error naming it;
// a cancelled context stops Lines.
func TestSplitLinesErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeText(t, dir, "f", "one\ntwo\nthree\n")
	stop := errors.New("stop")
	err := mr.Split{Path: p, Len: 14}.Lines(context.Background(), func(l mr.Line) error {
		if string(l.Text) == "two" {
			return stop
		}
		return nil
	})
	if want := "mr: " + p + ": line at offset 4: stop"; err == nil || err.Error() != want || !errors.Is(err, stop) {
		t.Errorf("Lines with fn failing = %v; want %q wrapping fn's error", err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (mr.Split{Path: p, Len: 14}).Lines(ctx, func(mr.Line) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Lines with a cancelled context = %v", err)
	}
	for _, s := range []mr.Split{{Path: p, Off: 10, Len: 10}, {Path: filepath.Join(dir, "missing"), Len: 1}, {Path: p, Off: -1, Len: 1}, {Path: p, Off: 1, Len: 3, Codec: "gzip"}, {Path: p, Len: 3, Codec: "lzma"}} {
		err := s.Lines(context.Background(), func(mr.Line) error { return nil })
		if err == nil || !strings.Contains(err.Error(), s.Path) {
			t.Errorf("Lines of %v = %v; want an error naming the file", s, err)
		}
	}
}

// TestSplitRecords: for every split size, the splits' records are the
// file's, each once, with their offsets; a file that is not a whole
// number of records is an error, from exactly one split, naming it and
// its length.
func TestSplitRecords(t *testing.T) {
	dir := t.TempDir()
	for _, rec := range []int{1, 3, 8, 16} {
		for _, n := range []int{0, 1, 2, 7, 13} {
			data := make([]byte, n*rec)
			for i := range data {
				data[i] = byte('a' + (i*7+i/rec)%26)
			}
			p := writeText(t, dir, fmt.Sprintf("r%d-%d", rec, n), string(data))
			for size := int64(0); size <= int64(len(data))+1; size++ {
				var got []string
				for _, s := range splitsOf(t, mr.FileOptions{SplitBytes: size}, p) {
					err := s.Records(context.Background(), rec, func(off int64, b []byte) error {
						if len(b) != rec || off%int64(rec) != 0 {
							return fmt.Errorf("record of %d bytes at offset %d", len(b), off)
						}
						got = append(got, fmt.Sprintf("%d:%s", off, b))
						return nil
					})
					if err != nil {
						t.Fatalf("record size %d, split size %d: %v", rec, size, err)
					}
				}
				var want []string
				for off := 0; off < len(data); off += rec {
					want = append(want, fmt.Sprintf("%d:%s", off, data[off:off+rec]))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("record size %d, split size %d: %q\nwant %q", rec, size, got, want)
				}
			}
		}
		if rec == 1 {
			continue
		}
		p := writeText(t, dir, "partial", strings.Repeat("z", 5*rec+1))
		for size := int64(0); size <= int64(5*rec+2); size++ {
			var errs []error
			for _, s := range splitsOf(t, mr.FileOptions{SplitBytes: size}, p) {
				if err := s.Records(context.Background(), rec, func(int64, []byte) error { return nil }); err != nil {
					errs = append(errs, err)
				}
			}
			want := fmt.Sprintf("mr: %s: %d bytes, not a multiple of the %d-byte record size", p, 5*rec+1, rec)
			if len(errs) != 1 || errs[0].Error() != want {
				t.Fatalf("record size %d, split size %d, %d bytes: errors %v; want one, %q", rec, size, 5*rec+1, errs, want)
			}
		}
	}
	s := mr.Split{Path: filepath.Join(dir, "partial"), Len: 1}
	for _, rec := range []int{0, -2} {
		if err := s.Records(context.Background(), rec, func(int64, []byte) error { return nil }); err == nil || !strings.Contains(err.Error(), fmt.Sprint(rec)) {
			t.Errorf("Records of size %d = %v; want an error naming the size", rec, err)
		}
	}
}

// csvOracle reads text whole with encoding/csv.
func csvOracle(t *testing.T, text string, opts mr.CSVOptions) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(text))
	if opts.Comma != 0 {
		r.Comma = opts.Comma
	}
	r.FieldsPerRecord = opts.FieldsPerRecord
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	return rows
}

// readCSV reads the rows of every split in order, and the splits' errors.
func readCSV(ss []mr.Split, opts mr.CSVOptions) ([][]string, []error) {
	var rows [][]string
	var errs []error
	for _, s := range ss {
		err := s.CSV(context.Background(), opts, func(row []string) error {
			rows = append(rows, slices.Clone(row))
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return rows, errs
}

var csvTexts = map[string]string{
	"empty":       "",
	"simple":      "a,b,c\n1,2,3\n4,5,6\n",
	"no-trailing": "a,b\n1,2",
	"crlf":        "a,b\r\n1,2\r\n\r\n3,4\r\n",
	"blank lines": "\n\na,b\n\n\n1,2\n\n",
	"quoted":      "name,quote\n\"Smith, J\",\"say \"\"hi\"\"\"\n\"\",x\n,\n",
	"one column":  "x\ny\n\nz",
	"long":        strings.Repeat("\"f,"+strings.Repeat("w", 5000)+"\",2\n", 3) + "a,b\n",
}

// TestSplitCSV: for every split size, the splits' rows, in order, are
// encoding/csv's rows of the whole file, each once; with Header, all but
// the first.
func TestSplitCSV(t *testing.T) {
	dir := t.TempDir()
	for name, text := range csvTexts {
		p := writeText(t, dir, strings.ReplaceAll(name, " ", "-"), text)
		opts := mr.CSVOptions{FieldsPerRecord: -1}
		for _, header := range []bool{false, true} {
			want := csvOracle(t, text, opts)
			if header && len(want) > 0 {
				want = want[1:]
			}
			step := int64(1)
			if len(text) > 1000 {
				step = 97
			}
			for size := int64(0); size <= int64(len(text))+1; size += step {
				rows, errs := readCSV(splitsOf(t, mr.FileOptions{SplitBytes: size, Header: header}, p), opts)
				if errs != nil || fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", want) {
					t.Fatalf("%s, header %v, split size %d: CSV = %q, %v\nwant %q", name, header, size, rows, errs, want)
				}
			}
		}
	}
	t.Run("semicolons", func(t *testing.T) {
		text := "a;b\n\"x;y\";2\n"
		p := writeText(t, dir, "semi", text)
		opts := mr.CSVOptions{Comma: ';', FieldsPerRecord: 2}
		want := csvOracle(t, text, opts)
		for size := range int64(len(text)) + 1 {
			rows, errs := readCSV(splitsOf(t, mr.FileOptions{SplitBytes: size}, p), opts)
			if errs != nil || fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", want) {
				t.Fatalf("split size %d: %q, %v; want %q", size, rows, errs, want)
			}
		}
	})
	t.Run("field count", func(t *testing.T) {
		p := writeText(t, dir, "count", "a,b\nc\n")
		_, errs := readCSV(splitsOf(t, mr.FileOptions{}, p), mr.CSVOptions{FieldsPerRecord: 2})
		want := "mr: " + p + ": CSV row at offset 4: wrong number of fields"
		if len(errs) != 1 || errs[0].Error() != want || !errors.Is(errs[0], csv.ErrFieldCount) {
			t.Fatalf("CSV with a short row: %v; want %q wrapping csv.ErrFieldCount", errs, want)
		}
	})
}

// TestSplitCSVQuotedNewline: a file whose rows have line breaks inside
// quotes reads right whole, and cut into splits it is an error from the
// split that owns the first such row, naming the file and the row's
// offset, at every split size: never rows read wrong without an error.
func TestSplitCSVQuotedNewline(t *testing.T) {
	dir := t.TempDir()
	text := "h1,h2\nplain,row\na,\"b\nc\"\n\"d\r\ne\",f\ng,h\n"
	first := int64(strings.Index(text, "a,\"b"))
	p := writeText(t, dir, "multi", text)
	opts := mr.CSVOptions{FieldsPerRecord: 2}
	want := csvOracle(t, text, opts)
	for _, header := range []bool{false, true} {
		w := want
		if header {
			w = want[1:]
		}
		for _, size := range []int64{0, int64(len(text)), int64(len(text)) + 1} {
			rows, errs := readCSV(splitsOf(t, mr.FileOptions{SplitBytes: size, Header: header}, p), opts)
			if errs != nil || fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", w) {
				t.Fatalf("whole file (split size %d): %q, %v; want %q", size, rows, errs, w)
			}
		}
		for size := int64(1); size < int64(len(text)); size++ {
			_, errs := readCSV(splitsOf(t, mr.FileOptions{SplitBytes: size, Header: header}, p), opts)
			wantErr := fmt.Sprintf("mr: %s: CSV row at offset %d has a line break inside quotes, which splits of part of a file cannot align to: read the file whole (FileOptions.SplitBytes 0)", p, first)
			found := false
			for _, err := range errs {
				found = found || err.Error() == wantErr
			}
			if !found {
				t.Fatalf("split size %d: errors %v; want one %q", size, errs, wantErr)
			}
		}
	}
}

// compressed writes text to dir/name compressed with format f.
func compressed(t *testing.T, dir, name, text string, f zio.Format) string {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch f {
	case zio.Gzip:
		w = gzip.NewWriter(&b)
	case zio.Zstd:
		zw, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	default:
		t.Fatalf("no writer for %v", f)
	}
	if _, err := io.WriteString(w, text); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return writeText(t, dir, name, b.String())
}

// TestSplitCompressed: a gzip or zstd file, detected by its content, is
// one split weighing its size on disk, whatever the split size, and every
// reader of a split gives its decompressed bytes; a corrupt file is an
// error naming it.
func TestSplitCompressed(t *testing.T) {
	dir := t.TempDir()
	text := "id,text\n1,\"two\nlines\"\n2,plain\r\n\n3,last"
	gz := compressed(t, dir, "a.csv.gz", text, zio.Gzip)
	zst := compressed(t, dir, "b.zst", text, zio.Zstd)
	hidden := compressed(t, dir, "c.txt", text, zio.Gzip) // content decides
	plain := writeText(t, dir, "d.txt", text)
	codecs := map[string]string{gz: "gzip", zst: "zstd", hidden: "gzip", plain: ""}
	for _, header := range []bool{false, true} {
		in, skips, err := mr.Files(context.Background(), mr.FileOptions{SplitBytes: 5, Header: header}, dir)
		if err != nil || skips != nil {
			t.Fatal(skips, err)
		}
		ss := allSplits(t, in)
		byFile := map[string][]mr.Split{}
		for i, s := range ss {
			byFile[s.Path] = append(byFile[s.Path], s)
			if w := in.(mr.Weighter).Weight(int64(i)); w != float64(s.Len) {
				t.Errorf("split %v weighs %v", s, w)
			}
			if s.Codec != codecs[s.Path] || s.Header != header {
				t.Errorf("split %v: codec %q, header %v; want %q, %v", s, s.Codec, s.Header, codecs[s.Path], header)
			}
		}
		for path, fs := range byFile {
			if codecs[path] == "" {
				if len(fs) < 2 {
					t.Errorf("plain file %s in %d splits", path, len(fs))
				}
				continue
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != 1 || fs[0].Off != 0 || fs[0].Len != fi.Size() {
				t.Fatalf("compressed file %s of %d bytes: splits %v; want one, whole", path, fi.Size(), fs)
			}
			s := fs[0]
			b, err := s.Read([]byte("reused"))
			if err != nil || string(b) != text {
				t.Errorf("Read of %v = %q, %v", s, b, err)
			}
			rc, err := s.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err = io.ReadAll(rc)
			if cerr := rc.Close(); err != nil || cerr != nil || string(b) != text {
				t.Errorf("Open of %v: %q, %v, %v", s, b, err, cerr)
			}
			var rec []byte
			if err := s.Records(context.Background(), 1, func(off int64, r []byte) error {
				if off != int64(len(rec)) {
					return fmt.Errorf("record at %d after %d bytes", off, len(rec))
				}
				rec = append(rec, r...)
				return nil
			}); err != nil || string(rec) != text {
				t.Errorf("Records of %v = %q, %v", s, rec, err)
			}
		}
		for path, fs := range byFile {
			want := lineOracle(text)
			if header {
				want = want[1:]
			}
			if got, err := readLines(fs); err != nil || !slices.Equal(got, want) {
				t.Errorf("Lines of %s = %v, %v; want %v", path, got, err, want)
			}
			opts := mr.CSVOptions{FieldsPerRecord: 2}
			rows, errs := readCSV(fs, opts)
			if codecs[path] == "" {
				if errs == nil {
					t.Errorf("CSV of plain %s cut into splits: no error for its quoted line break", path)
				}
				continue
			}
			wantRows := csvOracle(t, text, opts)
			if header {
				wantRows = wantRows[1:]
			}
			if errs != nil || fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", wantRows) {
				t.Errorf("CSV of %s = %q, %v; want %q", path, rows, errs, wantRows)
			}
		}
	}

	t.Run("corrupt", func(t *testing.T) {
		dir := t.TempDir()
		full := compressed(t, dir, "full.gz", strings.Repeat("line\n", 1000), zio.Gzip)
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		cut := writeText(t, dir, "cut.gz", string(b[:len(b)/2]))
		ss := splitsOf(t, mr.FileOptions{}, cut)
		for name, read := range map[string]func(mr.Split) error{
			"Read":  func(s mr.Split) error { _, err := s.Read(nil); return err },
			"Lines": func(s mr.Split) error { return s.Lines(context.Background(), func(mr.Line) error { return nil }) },
			"Records": func(s mr.Split) error {
				return s.Records(context.Background(), 5, func(int64, []byte) error { return nil })
			},
			"CSV": func(s mr.Split) error {
				return s.CSV(context.Background(), mr.CSVOptions{}, func([]string) error { return nil })
			},
		} {
			if err := read(ss[0]); err == nil || !strings.Contains(err.Error(), cut) || !errors.Is(err, zio.ErrCorrupt) {
				t.Errorf("%s of a truncated gzip file = %v; want an error naming it wrapping zio.ErrCorrupt", name, err)
			}
		}
		liar := writeText(t, dir, "liar.gz", "not gzip at all\n")
		if _, _, err := mr.Files(context.Background(), mr.FileOptions{}, liar); err == nil || !strings.Contains(err.Error(), liar) || !errors.Is(err, zio.ErrCorrupt) {
			t.Errorf("Files with text named .gz = %v; want an error naming it wrapping zio.ErrCorrupt", err)
		}
		in, skips, err := mr.Files(context.Background(), mr.FileOptions{SkipUnreadable: true}, liar, full)
		if err != nil || in.Len() != 1 || len(skips) != 1 || skips[0].Path != liar || !strings.Contains(skips[0].Reason, "not gzip data") {
			t.Errorf("Files(SkipUnreadable) with text named .gz = %v, %v; want it skipped", skips, err)
		}
	})
}

// TestLineMap counts words with LineMap over files cut at every kind of
// split size, at 1, 2 and 3 ranks: the counts are the whole files'.
func TestLineMap(t *testing.T) {
	dir := t.TempDir()
	var texts []string
	for i, n := range []int{40, 1, 0, 77} {
		text := strings.Join(lines(n), "\r\n")
		texts = append(texts, text)
		writeText(t, dir, fmt.Sprintf("f%d", i), text)
	}
	gzText := strings.Join(lines(30), "\n")
	texts = append(texts, gzText)
	compressed(t, dir, "g.gz", gzText, zio.Gzip)
	want := wordOracle(texts)
	for _, ranks := range []int{1, 2, 3} {
		for _, size := range []int64{0, 1, 13, 200, 1 << 20} {
			t.Run(fmt.Sprintf("ranks=%d/size=%d", ranks, size), func(t *testing.T) {
				var mu sync.Mutex
				var outs []string
				err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, SegmentBytes: 1 << 20}, func(ctx context.Context, r *pgas.Rank) error {
					in, _, err := mr.AllFiles(ctx, r, mr.FileOptions{SplitBytes: size}, dir)
					if err != nil {
						return err
					}
					st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
					if err != nil {
						return err
					}
					words := mr.LineMap(func(ctx context.Context, l mr.Line, emit func(string, int64)) error {
						for _, w := range strings.Fields(string(l.Text)) {
							emit(w, 1)
						}
						return nil
					})
					if _, err := mr.ApplyMap(ctx, r, in, words, st, mr.WithDistribution(distrib.Balanced)); err != nil {
						return err
					}
					out, err := mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
						var b strings.Builder
						for i := range p.Len() {
							fmt.Fprintf(&b, "%s %d\n", p.Keys[i], p.Value(i))
						}
						return b.String(), nil
					}, mr.Gather(reduce.GatherAll))
					mu.Lock()
					outs = append(outs, out.Value)
					mu.Unlock()
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				for _, out := range outs {
					if out != want {
						t.Fatalf("word counts\n%s\nwant\n%s", out, want)
					}
				}
			})
		}
	}
}

// TestCSVMap sums a column with CSVMap over a file with a header.
func TestCSVMap(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("name,count\n")
	var sum int64
	for i := range 200 {
		fmt.Fprintf(&b, "\"n,%d\",%d\n", i, i*3)
		sum += int64(i * 3)
	}
	p := writeText(t, dir, "counts.csv", b.String())
	for _, size := range []int64{0, 7, 100} {
		err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
			in, _, err := mr.AllFiles(ctx, r, mr.FileOptions{SplitBytes: size, Header: true}, p)
			if err != nil {
				return err
			}
			st, err := reduce.NewHashStore[string, int64](reduce.Sum[int64]())
			if err != nil {
				return err
			}
			f := mr.CSVMap(mr.CSVOptions{FieldsPerRecord: 2}, func(ctx context.Context, row []string, emit func(string, int64)) error {
				var n int64
				if _, err := fmt.Sscan(row[1], &n); err != nil {
					return err
				}
				emit("sum", n)
				emit("rows", 1)
				return nil
			})
			if _, err := mr.ApplyMap(ctx, r, in, f, st); err != nil {
				return err
			}
			res, err := mr.ApplyReduce(ctx, r, st, show, mr.Gather(reduce.GatherRoot))
			if err != nil {
				return err
			}
			if want := fmt.Sprintf("rows=200 sum=%d", sum); res.OK && res.Value != want {
				return fmt.Errorf("split size %d: %s; want %s", size, res.Value, want)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// TestSplitCSVRandom: random CSV files (quoted commas, quotes, blank
// lines, CRLF, and in some files line breaks inside quotes), written by
// encoding/csv, cut at random sizes: the splits read encoding/csv's rows
// of the whole file, or, only if a row has a line break inside quotes and
// the file is cut, fail. Seeded: a failure names the seed.
func TestSplitCSVRandom(t *testing.T) {
	dir := t.TempDir()
	fields := []string{"a", "b c", "x,y", `q"q`, "", " ", "n\nl", "r\r\nn", "long field with words"}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 34))
		multiline := seed%3 == 0 // only these files may have line breaks in fields
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.UseCRLF = seed%2 == 0
		for range rng.IntN(30) {
			row := make([]string, 1+rng.IntN(4))
			for i := range row {
				f := fields[rng.IntN(len(fields))]
				for !multiline && strings.Contains(f, "\n") {
					f = fields[rng.IntN(len(fields))]
				}
				row[i] = f
			}
			if err := w.Write(row); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if rng.IntN(5) == 0 {
				b.WriteString("\n")
			}
		}
		if err := w.Error(); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		if rng.IntN(2) == 0 {
			text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
		}
		p := writeText(t, dir, fmt.Sprintf("r%d.csv", seed), text)
		opts := mr.CSVOptions{FieldsPerRecord: -1}
		header := rng.IntN(2) == 0
		want := csvOracle(t, text, opts)
		if header && len(want) > 0 {
			want = want[1:]
		}
		quoted := false
		for _, row := range csvOracle(t, text, opts) {
			for _, f := range row {
				quoted = quoted || strings.Contains(f, "\n")
			}
		}
		for range 5 {
			size := 1 + rng.Int64N(int64(len(text))+2)
			ss := splitsOf(t, mr.FileOptions{SplitBytes: size, Header: header}, p)
			rows, errs := readCSV(ss, opts)
			switch {
			case quoted && len(ss) > 1:
				if errs == nil {
					t.Fatalf("seed %d, split size %d: %d splits of a file with quoted line breaks read %q without an error", seed, size, len(ss), rows)
				}
			case errs != nil || fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", want):
				t.Fatalf("seed %d, split size %d, header %v: %q, %v\nwant %q\nfile %q", seed, size, header, rows, errs, want, text)
			}
		}
	}
}
