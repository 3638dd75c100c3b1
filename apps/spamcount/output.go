package spamcount

import (
	"bufio"
	"encoding/json"
	"fmt"
	tabular "github.com/pgasmr/pgasmr/apps/internal/table"
	"io"
	"strconv"
	"strings"
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
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "", "text", "tsv", "csv":
		rows := make([][]string, len(r.Words))
		for i, wc := range r.Words {
			rows[i] = []string{wc.Word, strconv.FormatInt(wc.Occurrences, 10), strconv.FormatInt(wc.Messages, 10)}
		}
		err = tabular.Write(bw, format, []tabular.Column{{Name: "word"}, {Name: "occurrences", Number: true}, {Name: "messages", Number: true}}, rows)
	case "json":
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
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
	default:
		return fmt.Errorf("spamcount: unknown format %q (want %s)", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return fmt.Errorf("spamcount: writing %s: %w", format, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("spamcount: writing %s: %w", format, err)
	}
	return nil
}
