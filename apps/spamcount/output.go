package spamcount

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	tabular "github.com/pgasmr/pgasmr/apps/internal/table"
)

// Formats lists the output formats of Write.
var Formats = []string{"text", "tsv", "csv", "json"}

// Write writes r in format ("text", "tsv", "csv" or "json"; "" is text):
// one row per listed word in list order, zeros included.
//
//   - text: the columns word, occurrences, messages under a header line,
//     words left-aligned and numbers right-aligned, two spaces apart;
//   - tsv: word<TAB>occurrences<TAB>messages, no header;
//   - csv: RFC 4180 with the header word,occurrences,messages;
//   - json: {"app":"spamcount","messages":M,"words":[{"word":...,
//     "occurrences":...,"messages":...},...]}, 2-space indent, trailing
//     newline.
func (r *Result) Write(w io.Writer, format string) error {
	return tabular.Output{
		App:     "spamcount",
		Columns: []tabular.Column{{Name: "word"}, {Name: "occurrences", Number: true}, {Name: "messages", Number: true}},
		Rows: func() [][]string {
			rows := make([][]string, len(r.Words))
			for i, wc := range r.Words {
				rows[i] = []string{wc.Word, strconv.FormatInt(wc.Occurrences, 10), strconv.FormatInt(wc.Messages, 10)}
			}
			return rows
		},
		JSON: r.writeJSON,
		Unknown: func(format string) error {
			return fmt.Errorf("spamcount: unknown format %q (want %s)", format, strings.Join(Formats, ", "))
		},
	}.Write(w, format)
}

func (r *Result) writeJSON(w io.Writer) error {
	type word struct {
		Word        string `json:"word"`
		Occurrences int64  `json:"occurrences"`
		Messages    int64  `json:"messages"`
	}
	out := struct {
		App      string `json:"app"`
		Messages int64  `json:"messages"`
		Words    []word `json:"words"`
	}{App: "spamcount", Messages: r.Messages, Words: make([]word, len(r.Words))}
	for i, wc := range r.Words {
		out.Words[i] = word(wc)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out) // ends with a newline
}
