// Package table writes the tabular output formats the applications share:
// text (columns aligned with spaces under a header line), tsv (no header)
// and csv (RFC 4180 with one header row). Each app writes its own json;
// Output dispatches an app's Write to the table or to its json.
//
// Text alignment: number columns are right-aligned, others left-aligned;
// widths count runes; columns are two spaces apart; no line has trailing
// spaces. A column is at most MaxAlign runes wide: a longer cell overflows
// it, so that one huge cell (a 1 GB "word") does not pad every line to
// its width and make the text output grow with lines times that width.
package table

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"unicode/utf8"
)

// Column describes one column: its header and whether it holds numbers
// (right-aligned in text).
type Column struct {
	Name   string
	Number bool
}

// Write writes rows under cols in format "text" (or ""), "tsv" or "csv".
func Write(w io.Writer, format string, cols []Column, rows [][]string) error {
	var width []int
	if format == "" || format == "text" {
		width = make([]int, len(cols))
		for _, row := range rows {
			for c, s := range row {
				width[c] = max(width[c], Width(s))
			}
		}
	}
	return WriteEach(w, format, cols, width, func(row func([]string) error) error {
		for _, r := range rows {
			if err := row(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteEach is Write with the rows given one at a time, by each calling
// row for every row in order, so that a table need not be in memory:
// text needs the width of each column's widest cell beforehand (in runes;
// the headers are counted here), which width gives.
func WriteEach(w io.Writer, format string, cols []Column, width []int, each func(row func([]string) error) error) error {
	header := make([]string, len(cols))
	right := make([]bool, len(cols))
	for i, c := range cols {
		header[i], right[i] = c.Name, c.Number
	}
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "", "text":
		if len(width) != len(cols) {
			return fmt.Errorf("table: %d column widths for %d columns", len(width), len(cols))
		}
		wd := make([]int, len(cols))
		for c, h := range header {
			wd[c] = max(min(width[c], MaxAlign), Width(h))
		}
		line := textLine(bw, right, wd)
		line(header)
		err = each(func(row []string) error {
			line(row)
			return nil
		})
	case "tsv":
		err = each(func(row []string) error {
			for c, s := range row {
				if c > 0 {
					bw.WriteByte('\t')
				}
				bw.WriteString(s)
			}
			return bw.WriteByte('\n')
		})
	case "csv":
		cw := csv.NewWriter(bw)
		if err := cw.Write(header); err != nil {
			return err
		}
		err = each(cw.Write)
		if err == nil {
			cw.Flush()
			err = cw.Error()
		}
	default:
		return fmt.Errorf("table: unknown format %q (want text, tsv or csv)", format)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// textLine returns the writer of one line of text: cells padded to width
// with spaces, right-aligned where right says, two spaces apart, none
// after the last.
func textLine(w *bufio.Writer, right []bool, width []int) func(row []string) {
	pad := func(n int) {
		for n > 0 {
			k := min(n, len(spaces))
			w.WriteString(spaces[:k])
			n -= k
		}
	}
	return func(row []string) {
		for c, s := range row {
			n := width[c] - Width(s)
			if c > 0 {
				w.WriteString("  ")
			}
			last := c == len(row)-1
			switch {
			case right[c]:
				pad(n)
				w.WriteString(s)
			case last:
				w.WriteString(s)
			default:
				w.WriteString(s)
				pad(n)
			}
		}
		w.WriteByte('\n')
	}
}

// MaxAlign is the widest a text column is aligned to, in runes.
const MaxAlign = 128

const spaces = "                                                                "

// Width returns the width of s in text output: its runes, counted only
// where s is not ASCII (every byte below 0x80 is one rune).
func Width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.RuneCountInString(s)
		}
	}
	return len(s)
}

// Output is an app's result as its Write writes it: a table in text, tsv
// and csv, the app's own json, and the app's wording of the errors.
type Output struct {
	// App names the write errors: "app: writing FORMAT: ...".
	App string
	// Columns and Rows are the table of text, tsv and csv; Rows is called
	// only for those formats.
	Columns []Column
	Rows    func() [][]string
	// Each, if not nil, gives the rows one at a time instead of Rows
	// (WriteEach), Widths their columns' widths for text.
	Each   func(row func([]string) error) error
	Widths func() []int
	// TSV, if not nil, writes tsv instead of the table's rows.
	TSV func(w io.Writer) error
	// JSON writes json.
	JSON func(w io.Writer) error
	// Unknown returns the error for a format that is none of these,
	// returned as it is, before anything is written.
	Unknown func(format string) error
}

// Write writes o in format ("" is text) to w through one buffer.
func (o Output) Write(w io.Writer, format string) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "", "text", "tsv", "csv":
		switch {
		case format == "tsv" && o.TSV != nil:
			err = o.TSV(bw)
		case o.Each != nil:
			var width []int
			if format == "" || format == "text" {
				width = o.Widths()
			}
			err = WriteEach(bw, format, o.Columns, width, o.Each)
		default:
			err = Write(bw, format, o.Columns, o.Rows())
		}
	case "json":
		err = o.JSON(bw)
	default:
		return o.Unknown(format)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("%s: writing %s: %w", o.App, format, err)
	}
	return nil
}
