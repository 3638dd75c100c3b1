package linreg

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/pgasmr/pgasmr/apps/internal/table"
)

// Formats lists the output formats of Result.Write.
var Formats = []string{"text", "tsv", "csv", "json"}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// columns returns the output's column names and values.
func (r *Result) columns() (names, vals []string) {
	return []string{"n", "slope", "intercept", "r2"},
		[]string{strconv.FormatInt(r.N, 10), ftoa(r.Slope), ftoa(r.Intercept), ftoa(r.R2)}
}

// sums returns the five sums as printed: integers for int8 input.
func (r *Result) sums() []string {
	s := r.Sums
	if r.Integer {
		return []string{strconv.FormatInt(s.X, 10), strconv.FormatInt(s.Y, 10),
			strconv.FormatInt(s.XX, 10), strconv.FormatInt(s.YY, 10), strconv.FormatInt(s.XY, 10)}
	}
	return []string{ftoa(s.FX), ftoa(s.FY), ftoa(s.FXX), ftoa(s.FYY), ftoa(s.FXY)}
}

// Write writes the result in format "text" (the default when empty: the
// CSV columns right-aligned, two spaces apart, under a header line),
// "tsv" (rows n, slope, intercept, r2, each name<TAB>value), "csv" (header
// n,slope,intercept,r2 and one row) or "json" (one object, 2-space indent,
// r2 null when NaN). Floats are printed with strconv.FormatFloat(v, 'g',
// -1, 64); every line ends with LF.
func (r *Result) Write(w io.Writer, format string) error {
	names, vals := r.columns()
	cols := make([]table.Column, len(names))
	for i, n := range names {
		cols[i] = table.Column{Name: n, Number: true}
	}
	return table.Output{
		App:     "linreg",
		Columns: cols,
		Rows:    func() [][]string { return [][]string{vals} },
		TSV:     r.writeTSV,
		JSON:    r.writeJSON,
		Unknown: func(format string) error {
			return fmt.Errorf("linreg: unknown output format %q (want text, tsv, csv or json)", format)
		},
	}.Write(w, format)
}

// writeTSV writes one line name<TAB>value per column.
func (r *Result) writeTSV(w io.Writer) error {
	names, vals := r.columns()
	for i := range names {
		if _, err := io.WriteString(w, names[i]+"\t"+vals[i]+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func (r *Result) writeJSON(w io.Writer) error {
	_, vals := r.columns()
	r2 := vals[3]
	if math.IsNaN(r.R2) {
		r2 = "null"
	}
	s := r.sums()
	if _, err := fmt.Fprintf(w, "{\n  \"app\": \"linreg\",\n  \"n\": %s,\n  \"slope\": %s,\n  \"intercept\": %s,\n  \"r2\": %s,\n", vals[0], vals[1], vals[2], r2); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "  \"sums\": {\n    \"x\": %s,\n    \"y\": %s,\n    \"xx\": %s,\n    \"yy\": %s,\n    \"xy\": %s\n  }\n}\n", s[0], s[1], s[2], s[3], s[4])
	return err
}
