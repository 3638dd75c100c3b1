package pgas_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
)

// TestCleanup: the functions a rank registers run last first when its
// function returns, whether it returns nil, an error or panics, and a
// panicking cleanup neither stops the others nor goes unreported.
func TestCleanup(t *testing.T) {
	for _, end := range []string{"nil", "error", "panic", "cleanup-panic"} {
		t.Run(end, func(t *testing.T) {
			var mu sync.Mutex
			ran := map[int][]string{}
			started := map[int]bool{}
			err := pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
				mu.Lock()
				started[r.ID()] = true
				mu.Unlock()
				for _, name := range []string{"a", "b", "c"} {
					r.Cleanup(func() {
						mu.Lock()
						ran[r.ID()] = append(ran[r.ID()], name)
						mu.Unlock()
						if end == "cleanup-panic" && name == "b" {
							panic("cleanup b")
						}
					})
				}
				switch end {
				case "error":
					return errors.New("job failed")
				case "panic":
					panic("job panicked")
				}
				return nil
			})
			switch end {
			case "nil":
				if err != nil {
					t.Fatal(err)
				}
			case "error", "panic", "cleanup-panic":
				want := map[string]string{"error": "job failed", "panic": "job panicked", "cleanup-panic": "cleanup b"}[end]
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error %v, want one that says %q", err, want)
				}
			}
			// A rank whose peer failed first may fail its start barrier
			// and never run its function: it registered nothing.
			if len(started) == 0 {
				t.Fatal("no rank ran its function")
			}
			for id := range started {
				if got := ran[id]; !slices.Equal(got, []string{"c", "b", "a"}) {
					t.Errorf("rank %d ran cleanups %v, want [c b a]", id, got)
				}
			}
		})
	}
}

// TestMemoryShare: Config.MemoryBytes is shared evenly by the ranks of
// a node, the last node's fewer ranks getting more each.
func TestMemoryShare(t *testing.T) {
	for _, c := range []struct {
		ranks, perNode int
		mem            int64
		want           []int64
	}{
		{2, 0, 0, []int64{0, 0}},
		{2, 0, 1 << 20, []int64{1 << 19, 1 << 19}},
		{3, 2, 600, []int64{300, 300, 600}},
		{4, 1, 1000, []int64{1000, 1000, 1000, 1000}},
	} {
		t.Run(fmt.Sprintf("%d/%d/%d", c.ranks, c.perNode, c.mem), func(t *testing.T) {
			got := make([]int64, c.ranks)
			err := pgas.Run(context.Background(), pgas.Config{Ranks: c.ranks, RanksPerNode: c.perNode, MemoryBytes: c.mem}, func(ctx context.Context, r *pgas.Rank) error {
				got[r.ID()] = r.MemoryShare()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("shares %v, want %v", got, c.want)
			}
		})
	}
	if err := (pgas.Config{MemoryBytes: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "MemoryBytes") {
		t.Fatalf("Validate of a negative MemoryBytes: %v, want an error naming it", err)
	}
}
