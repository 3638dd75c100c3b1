package histogram_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgasmr/pgasmr/apps/histogram"
)

// TestTasks: counting every task and adding the counts gives Seq's result.
func TestTasks(t *testing.T) {
	ctx := context.Background()
	var img bytes.Buffer
	if err := histogram.GenerateBytes(&img, 200_000, 3); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.bmp")
	if err := os.WriteFile(path, img.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{path, path}
	ts, err := histogram.NewTasks(ctx, files, 30_000)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Len() < 2 {
		t.Fatalf("Len() = %d; want several tasks", ts.Len())
	}
	var tot [768]int64
	for i := range ts.Len() {
		c, err := ts.Count(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range c {
			tot[k] += n
		}
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	got := histogram.NewResult(len(files), ts.Pixels(), &tot)
	want, err := histogram.Seq(ctx, files, histogram.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if *got != *want {
		t.Errorf("NewResult(tasks' counts) = %+v; want Seq's %+v", got, want)
	}
}
