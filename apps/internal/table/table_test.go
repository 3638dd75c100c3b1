package table

import (
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
