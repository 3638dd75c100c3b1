package wordcount_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pgasmr/pgasmr/apps/wordcount"
)

// TestTasks: counting every task of small chunks gives Seq's words, and
// file statuses come once per file, from its first task.
func TestTasks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := wordcount.Generate(dir, 50_000, 3, 2); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin"), []byte("x\x00y"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := wordcount.Options{ChunkBytes: 1000}
	ts, _, err := wordcount.Tasks(ctx, []string{dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	var files int64
	var binary []string
	rd := wordcount.NewTaskReader(false)
	for _, task := range ts {
		bin, reason, err := rd.Count(ctx, task, func(w []byte) { counts[string(w)]++ })
		if err != nil || reason != "" {
			t.Fatalf("Count(%s) = %v, %q", task.Path(), err, reason)
		}
		switch {
		case !task.First():
		case bin:
			binary = append(binary, task.Path())
		default:
			files++
		}
	}
	want, err := wordcount.Seq(ctx, []string{dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	if files != want.Files || !slices.Equal(binary, want.SkippedBinary) {
		t.Errorf("tasks: %d files, binary %q; want %d, %q", files, binary, want.Files, want.SkippedBinary)
	}
	if len(counts) != len(want.Words) {
		t.Errorf("tasks: %d distinct words; want %d", len(counts), len(want.Words))
	}
	for _, wc := range want.Words {
		if counts[wc.Word] != wc.Count {
			t.Errorf("tasks: %q counted %d times; want %d", wc.Word, counts[wc.Word], wc.Count)
		}
	}
}
