package reduce

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// diffRuns describes the first difference between two runs, or "".
func diffRuns[K, V any](got, want Run[K, V]) string {
	if reflect.DeepEqual(got, want) {
		return ""
	}
	if len(got.Keys) != len(want.Keys) {
		return fmt.Sprintf("%d keys, want %d", len(got.Keys), len(want.Keys))
	}
	for i := range got.Keys {
		if !reflect.DeepEqual(got.Keys[i], want.Keys[i]) {
			return fmt.Sprintf("key %d: %v, want %v", i, got.Keys[i], want.Keys[i])
		}
	}
	return fmt.Sprintf("same keys; got %+v, want %+v", got, want)
}

func concat2(a, b string) string { return a + b }

// TestMergeReadersOracle checks the streaming merge against Merge.
func TestMergeReadersOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, all := range []bool{false, true} {
		comb := Func("concat", concat2, false)
		if all {
			comb = KeepAll[string]()
		}
		for k := 2; k <= 6; k++ {
			s, err := NewHashStore[string, string](comb)
			if err != nil {
				t.Fatal(err)
			}
			var runs []Run[string, string]
			var srcs []RunReader[string, string]
			for range k {
				for range rng.IntN(60) {
					s.SetTag(rng.Int64N(50))
					s.Emit(strKey(rng.IntN(40)), string(rune('a'+rng.IntN(26))))
				}
				e := s.Drain()
				runs = append(runs, e)
				srcs = append(srcs, ReadRun(e))
			}
			want := s.Merge(runs)
			got, err := s.ReadAll(s.MergeReaders(srcs...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := diffRuns(got, want); diff != "" {
				t.Errorf("all=%v k=%d: MergeReaders: %s", all, k, diff)
			}
		}
	}
}

func TestReadRun(t *testing.T) {
	e := Run[string, int]{Keys: []string{"a", "b"}, Vals: []int{1, 2, 3}, Tags: []Tag{{Seq: 0}, {Seq: 1}, {Seq: 2}}, Off: []int{0, 2, 3}}
	r := ReadRun(e)
	var got []string
	for r.Next() {
		got = append(got, fmt.Sprintf("%s %v %d", r.Key(), r.Values(), len(r.Tags())))
	}
	if want := []string{"a [1 2] 2", "b [3] 1"}; !reflect.DeepEqual(got, want) || r.Err() != nil {
		t.Errorf("ReadRun read %q, %v; want %q", got, r.Err(), want)
	}
	if r.Next() || r.Close() != nil || r.Next() {
		t.Error("Next after the end or Close")
	}
}
