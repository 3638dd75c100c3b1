package table

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	header := []Column{{"word", false}, {"count", true}}
	rows := [][]string{{"the", "12"}, {"données", "3"}, {"a,b", "100"}}
	for _, tc := range []struct{ format, want string }{
		{"text", "word     count\nthe         12\ndonnées      3\na,b        100\n"},
		{"tsv", "the\t12\ndonnées\t3\na,b\t100\n"},
		{"csv", "word,count\nthe,12\ndonnées,3\n\"a,b\",100\n"},
	} {
		var b strings.Builder
		if err := Write(&b, tc.format, header, rows); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("Write(%s) =\n%q\nwant\n%q", tc.format, b.String(), tc.want)
		}
	}
	// A text last column is not padded; number columns are right-aligned.
	var b strings.Builder
	Write(&b, "text", []Column{{"n", true}, {"r2", true}, {"name", false}}, [][]string{{"5", "NaN", "x"}, {"10", "0.25", "long"}})
	if want := " n    r2  name\n 5   NaN  x\n10  0.25  long\n"; b.String() != want {
		t.Errorf("text = %q; want %q", b.String(), want)
	}
	if err := Write(&b, "xml", header, rows); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestOutput(t *testing.T) {
	o := Output{
		App:     "app",
		Columns: []Column{{"k", false}, {"n", true}},
		Rows:    func() [][]string { return [][]string{{"a", "1"}} },
		JSON:    func(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err },
		Unknown: func(format string) error { return fmt.Errorf("app: no format %q", format) },
	}
	for _, tc := range []struct{ format, want string }{
		{"", "k  n\na  1\n"}, {"text", "k  n\na  1\n"}, {"tsv", "a\t1\n"}, {"csv", "k,n\na,1\n"}, {"json", "{}\n"},
	} {
		var b strings.Builder
		if err := o.Write(&b, tc.format); err != nil || b.String() != tc.want {
			t.Errorf("Write(%q) = %q, %v; want %q", tc.format, b.String(), err, tc.want)
		}
	}
	var b strings.Builder
	if err := o.Write(&b, "xml"); err == nil || err.Error() != `app: no format "xml"` || b.Len() != 0 {
		t.Errorf("Write(xml) = %q, %v; want Unknown's error and no output", b.String(), err)
	}
	o.TSV = func(w io.Writer) error { _, err := io.WriteString(w, "k\ta\n"); return err }
	if err := o.Write(&b, "tsv"); err != nil || b.String() != "k\ta\n" {
		t.Errorf("Write(tsv) with TSV = %q, %v", b.String(), err)
	}
	broken := errors.New("disk full")
	err := o.Write(failWriter{broken}, "json")
	if !errors.Is(err, broken) || err.Error() != "app: writing json: disk full" {
		t.Errorf("Write to a failing writer = %v; want the app's wording around the cause", err)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestHugeCellLinear: one cell far wider than MaxAlign overflows its column
// instead of widening it, so the text output stays about as large as its
// cells (a 1 MiB word among 1,000 short ones once padded every line to a
// MiB).
func TestHugeCellLinear(t *testing.T) {
	huge := strings.Repeat("a", 1<<20)
	rows := [][]string{{huge, "1"}}
	for i := range 1000 {
		rows = append(rows, []string{fmt.Sprintf("w%d", i), "2"})
	}
	var b bytes.Buffer
	if err := Write(&b, "text", []Column{{Name: "word"}, {Name: "count", Number: true}}, rows); err != nil {
		t.Fatal(err)
	}
	if max := len(huge) + 1002*(MaxAlign+2+5+1); b.Len() > max { // the header and 1,001 rows
		t.Fatalf("text output of %d bytes, want at most %d", b.Len(), max)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "word"+strings.Repeat(" ", MaxAlign-4)+"  count" || lines[2] != "w0"+strings.Repeat(" ", MaxAlign-2)+"      2" {
		t.Fatalf("header %q, line %q: want columns %d runes wide", lines[0], lines[2], MaxAlign)
	}
	if lines[1] != huge+"      1" {
		t.Fatalf("the huge cell's line is not the cell then its count right-aligned: %.40q...", lines[1][len(huge)-5:])
	}
}
