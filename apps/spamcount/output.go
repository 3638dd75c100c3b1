package spamcount

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
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
	case "", "text":
		r.writeText(bw)
	case "tsv":
		for _, wc := range r.Words {
			fmt.Fprintf(bw, "%s\t%d\t%d\n", wc.Word, wc.Occurrences, wc.Messages)
		}
	case "csv":
		cw := csv.NewWriter(bw)
		cw.Write([]string{"word", "occurrences", "messages"})
		for _, wc := range r.Words {
			cw.Write([]string{wc.Word, strconv.FormatInt(wc.Occurrences, 10), strconv.FormatInt(wc.Messages, 10)})
		}
		cw.Flush()
		err = cw.Error()
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

func (r *Result) writeText(w *bufio.Writer) {
	head := [3]string{"word", "occurrences", "messages"}
	rows := make([][3]string, len(r.Words))
	width := [3]int{}
	for c, h := range head {
		width[c] = len(h)
	}
	for i, wc := range r.Words {
		rows[i] = [3]string{wc.Word, strconv.FormatInt(wc.Occurrences, 10), strconv.FormatInt(wc.Messages, 10)}
		for c, s := range rows[i] {
			width[c] = max(width[c], utf8.RuneCountInString(s))
		}
	}
	line := func(row [3]string) {
		pad := width[0] - utf8.RuneCountInString(row[0])
		w.WriteString(row[0])
		w.WriteString(strings.Repeat(" ", pad+2+width[1]-len(row[1])))
		w.WriteString(row[1])
		w.WriteString(strings.Repeat(" ", 2+width[2]-len(row[2])))
		w.WriteString(row[2])
		w.WriteByte('\n')
	}
	line(head)
	for _, row := range rows {
		line(row)
	}
}
