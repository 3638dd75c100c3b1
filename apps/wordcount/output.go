package wordcount

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

// Formats are the output formats Write accepts ("" means text).
var Formats = []string{"text", "tsv", "csv", "json"}

// Write writes the result's words in format: "text" (or ""; columns
// aligned with spaces under a header line), "tsv" (word<TAB>count, no
// header), "csv" (RFC 4180, header word,count) or "json" (one object,
// 2-space indent, trailing newline). Skipped files are not written: the
// caller reports them.
func (r *Result) Write(w io.Writer, format string) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "", "text":
		r.writeText(bw)
	case "tsv":
		var b []byte
		for _, wc := range r.Words {
			b = append(b[:0], wc.Word...)
			b = append(b, '\t')
			b = strconv.AppendInt(b, wc.Count, 10)
			b = append(b, '\n')
			bw.Write(b)
		}
	case "csv":
		cw := csv.NewWriter(bw)
		cw.Write([]string{"word", "count"})
		for _, wc := range r.Words {
			cw.Write([]string{wc.Word, strconv.FormatInt(wc.Count, 10)})
		}
		cw.Flush()
		err = cw.Error()
	case "json":
		err = r.writeJSON(bw)
	default:
		return fmt.Errorf("wordcount: unknown output format %q, want one of %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return fmt.Errorf("wordcount: writing %s: %w", format, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("wordcount: writing %s: %w", format, err)
	}
	return nil
}

// writeText aligns the word column to its widest entry in runes and the
// count column to the right.
func (r *Result) writeText(w *bufio.Writer) {
	ww, cw := len("word"), len("count")
	for _, wc := range r.Words {
		ww = max(ww, utf8.RuneCountInString(wc.Word))
		cw = max(cw, len(strconv.FormatInt(wc.Count, 10)))
	}
	line := func(word, count string) {
		w.WriteString(word)
		w.WriteString(strings.Repeat(" ", ww-utf8.RuneCountInString(word)+2+cw-len(count)))
		w.WriteString(count)
		w.WriteByte('\n')
	}
	line("word", "count")
	for _, wc := range r.Words {
		line(wc.Word, strconv.FormatInt(wc.Count, 10))
	}
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
