package linreg_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgasmr/pgasmr/apps/linreg"
)

// TestTasks: adding the tasks' sums in task order and fitting gives Seq's
// bytes, for every input format.
func TestTasks(t *testing.T) {
	ctx := context.Background()
	for _, format := range []string{"int8", "f64", "csv"} {
		var b bytes.Buffer
		if err := linreg.Generate(&b, 5000, format, 7); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "pts")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		o := linreg.Options{Format: format, ChunkBytes: 1024}
		ts, err := linreg.NewTasks([]string{path}, o)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := ts.Close(); err != nil {
				t.Error(err)
			}
		}()
		if ts.Integer() != (format == "int8") {
			t.Errorf("%s: Integer() = %v", format, ts.Integer())
		}
		var acc linreg.Sums
		for i := range ts.Len() {
			s, err := ts.Sums(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			acc = acc.Add(s)
		}
		got, err := linreg.Fit(acc, ts.Integer())
		if err != nil {
			t.Fatal(err)
		}
		want, err := linreg.Seq(ctx, []string{path}, o)
		if err != nil {
			t.Fatal(err)
		}
		var gw, ww bytes.Buffer
		if err := got.Write(&gw, "json"); err != nil {
			t.Fatal(err)
		}
		if err := want.Write(&ww, "json"); err != nil {
			t.Fatal(err)
		}
		if gw.String() != ww.String() {
			t.Errorf("%s: Fit(tasks' sums) = %s; want Seq's %s", format, gw.String(), ww.String())
		}
	}
}
