package wordcount

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pgasmr/pgasmr/apps/internal/table"
)

// Formats are the output formats Write accepts ("" means text).
var Formats = []string{"text", "tsv", "csv", "json"}

// Write writes the result's words in format: "text" (or ""; columns
// aligned with spaces under a header line), "tsv" (word<TAB>count, no
// header), "csv" (RFC 4180, header word,count) or "json" (one object,
// 2-space indent, trailing newline). Skipped files are not written: the
// caller reports them. A result past the memory budget is written as it
// is read from its files (Each).
func (r *Result) Write(w io.Writer, format string) error {
	return table.Output{
		App:     "wordcount",
		Columns: []table.Column{{Name: "word"}, {Name: "count", Number: true}},
		Each: func(row func([]string) error) error {
			cells := make([]string, 2)
			return r.Each(func(wc WordCount) error {
				cells[0], cells[1] = wc.Word, strconv.FormatInt(wc.Count, 10)
				return row(cells)
			})
		},
		Widths: r.widths,
		JSON:   r.writeJSON,
		Unknown: func(format string) error {
			return fmt.Errorf("wordcount: unknown output format %q, want one of %s", format, strings.Join(Formats, ", "))
		},
	}.Write(w, format)
}

// widths returns the rune widths of the widest word and count: those a
// result in files noted as its words went in, or those of the words it
// holds or keeps (a top), read.
func (r *Result) widths() []int {
	if r.spilled != nil && r.spilled.top == 0 {
		return r.spilled.width[:]
	}
	var wd widths
	r.Each(func(wc WordCount) error { // an error fails the Each that writes next
		wd.widen(wc)
		return nil
	})
	return wd[:]
}

// widths are the rune widths of a table's word and count columns.
type widths [2]int

// widen makes wd take wc's cells.
func (wd *widths) widen(wc WordCount) {
	var b [20]byte
	wd[0] = max(wd[0], table.Width(wc.Word))
	wd[1] = max(wd[1], len(strconv.AppendInt(b[:0], wc.Count, 10)))
}

type jsonWord struct {
	Word  string `json:"word"`
	Count int64  `json:"count"`
}

type jsonResult struct {
	App           string     `json:"app"`
	Files         int64      `json:"files"`
	SkippedBinary int        `json:"skipped_binary"`
	TotalWords    int64      `json:"total_words"`
	DistinctWords int64      `json:"distinct_words"`
	Words         []jsonWord `json:"words"`
}

// writeJSON writes what json.Encoder (2-space indent, no HTML escaping)
// writes of a jsonResult, a word at a time: the words are not all in
// memory for a result past the memory budget.
func (r *Result) writeJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("    ", "  ")
	enc.SetEscapeHTML(false)
	fmt.Fprintf(w, "{\n  \"app\": \"wordcount\",\n  \"files\": %d,\n  \"skipped_binary\": %d,\n  \"total_words\": %d,\n  \"distinct_words\": %d,\n  \"words\": [",
		r.Files, len(r.SkippedBinary), r.TotalWords, r.DistinctWords)
	n := 0
	err := r.Each(func(wc WordCount) error {
		buf.Reset()
		if err := enc.Encode(jsonWord(wc)); err != nil {
			return err
		}
		sep := ",\n    "
		if n == 0 {
			sep = "\n    "
		}
		n++
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		_, err = io.WriteString(w, "\n  ]\n}\n")
	} else {
		_, err = io.WriteString(w, "]\n}\n")
	}
	return err
}
