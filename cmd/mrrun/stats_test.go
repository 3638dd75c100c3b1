package main

import (
	"strings"
	"testing"
	"time"
)

// TestParallelNotes: --stats says when ranks could not beat fewer ranks,
// and only then.
func TestParallelNotes(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name string
		s    jobStats
		mapS float64
		want []string // a substring of each note, in order
	}{
		{"one rank", jobStats{Ranks: 1, Wall: 10 * ms, CPU: 2 * ms, Procs: 2}, 0.001, nil},
		{"parallel", jobStats{Ranks: 2, Wall: 100 * ms, CPU: 190 * ms, Procs: 2}, 0.09, nil},
		{"little work", jobStats{Ranks: 2, Wall: 10 * ms, CPU: 19 * ms, Procs: 2}, 0.004, []string{"little work a rank"}},
		{"one at a time", jobStats{Ranks: 2, Wall: 100 * ms, CPU: 105 * ms, Procs: 2}, 0.095, []string{"no parallel speed-up"}},
		{"both", jobStats{Ranks: 4, Wall: 10 * ms, CPU: 11 * ms, Procs: 8}, 0.002, []string{"little work", "1.1 processors busy"}},
		{"one processor", jobStats{Ranks: 2, Wall: 100 * ms, CPU: 100 * ms, Procs: 1}, 0.095, nil},
		{"cpu unknown", jobStats{Ranks: 2, Wall: 100 * ms, Procs: 2}, 0.095, nil},
	} {
		got := parallelNotes(tt.s, tt.mapS)
		if len(got) != len(tt.want) {
			t.Errorf("%s: notes %q, want %d", tt.name, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: note %q does not say %q", tt.name, got[i], w)
			}
		}
	}
}
