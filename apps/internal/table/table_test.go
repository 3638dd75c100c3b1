package table

import (
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
