// Package table writes the tabular output formats the applications share:
// text (columns aligned with spaces under a header line), tsv (no header)
// and csv (RFC 4180 with one header row). Each app writes its own json;
// Output dispatches an app's Write to the table or to its json.
//
// Text alignment: number columns are right-aligned, others left-aligned;
// widths count runes; columns are two spaces apart; no line has trailing
// spaces.
package table

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
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
	header := make([]string, len(cols))
	right := make([]bool, len(cols))
	for i, c := range cols {
		header[i], right[i] = c.Name, c.Number
	}
	bw := bufio.NewWriter(w)
	switch format {
	case "", "text":
		writeText(bw, header, right, rows)
	case "tsv":
		for _, row := range rows {
			bw.WriteString(strings.Join(row, "\t"))
			bw.WriteByte('\n')
		}
	case "csv":
		cw := csv.NewWriter(bw)
		if err := cw.Write(header); err != nil {
			return err
		}
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
	default:
		return fmt.Errorf("table: unknown format %q (want text, tsv or csv)", format)
	}
	return bw.Flush()
}

func writeText(w *bufio.Writer, header []string, right []bool, rows [][]string) {
	width := make([]int, len(header))
	for c, h := range header {
		width[c] = utf8.RuneCountInString(h)
	}
	for _, row := range rows {
		for c, s := range row {
			width[c] = max(width[c], utf8.RuneCountInString(s))
		}
	}
	line := func(row []string) {
		for c, s := range row {
			pad := width[c] - utf8.RuneCountInString(s)
			if c > 0 {
				w.WriteString("  ")
			}
			last := c == len(row)-1
			switch {
			case right[c]:
				w.WriteString(strings.Repeat(" ", pad))
				w.WriteString(s)
			case last:
				w.WriteString(s)
			default:
				w.WriteString(s)
				w.WriteString(strings.Repeat(" ", pad))
			}
		}
		w.WriteByte('\n')
	}
	line(header)
	for _, row := range rows {
		line(row)
	}
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
		if format == "tsv" && o.TSV != nil {
			err = o.TSV(bw)
		} else {
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
