package wordcount

import (
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
// caller reports them.
func (r *Result) Write(w io.Writer, format string) error {
	return table.Output{
		App:     "wordcount",
		Columns: []table.Column{{Name: "word"}, {Name: "count", Number: true}},
		Rows: func() [][]string {
			rows := make([][]string, len(r.Words))
			for i, wc := range r.Words {
				rows[i] = []string{wc.Word, strconv.FormatInt(wc.Count, 10)}
			}
			return rows
		},
		JSON: r.writeJSON,
		Unknown: func(format string) error {
			return fmt.Errorf("wordcount: unknown output format %q, want one of %s", format, strings.Join(Formats, ", "))
		},
	}.Write(w, format)
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

func (r *Result) writeJSON(w io.Writer) error {
	out := jsonResult{
		App:           "wordcount",
		Files:         r.Files,
		SkippedBinary: len(r.SkippedBinary),
		TotalWords:    r.TotalWords,
		DistinctWords: r.DistinctWords,
		Words:         make([]jsonWord, len(r.Words)),
	}
	for i, wc := range r.Words {
		out.Words[i] = jsonWord(wc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out) // ends with a newline
}
