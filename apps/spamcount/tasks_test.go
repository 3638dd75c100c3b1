package spamcount_test

import (
	"context"
	"slices"
	"testing"

	"github.com/pgasmr/pgasmr/apps/spamcount"
)

// TestCounter: counting every scanned message with a Counter gives Seq's
// result.
func TestCounter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := spamcount.Generate(dir, 40, 5); err != nil {
		t.Fatal(err)
	}
	words, err := spamcount.Words(spamcount.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := spamcount.Scan(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	files, err := spamcount.Files(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var perFile []spamcount.Message
	for _, f := range files {
		ms, err := spamcount.Scan(ctx, []string{f})
		if err != nil {
			t.Fatal(err)
		}
		perFile = append(perFile, ms...)
	}
	if !slices.Equal(perFile, msgs) {
		t.Errorf("Scan of each of Files = %v; want Scan's %v", perFile, msgs)
	}
	got := &spamcount.Result{Words: make([]spamcount.WordCount, len(words))}
	for i, w := range words {
		got.Words[i].Word = w
	}
	c := spamcount.NewCounter(words)
	for _, m := range msgs {
		bad, err := c.Count(ctx, m, func(w int, n int64) {
			got.Words[w].Occurrences += n
			got.Words[w].Messages++
		})
		if err != nil {
			t.Fatal(err)
		}
		got.Messages++
		if bad {
			got.Malformed++
		}
	}
	want, err := spamcount.Seq(ctx, []string{dir}, spamcount.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages != want.Messages || got.Malformed != want.Malformed {
		t.Errorf("Counter: %d messages, %d malformed; want %d, %d", got.Messages, got.Malformed, want.Messages, want.Malformed)
	}
	for i := range want.Words {
		if got.Words[i] != want.Words[i] {
			t.Errorf("Counter: %+v; want %+v", got.Words[i], want.Words[i])
		}
	}
}
