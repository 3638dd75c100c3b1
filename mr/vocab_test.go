package mr_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// TestKeepAllLargeVocabulary: a job that keeps every value of 300,000
// nearly distinct keys moves records many times the collectives' staging
// area (and, gathered, more than a default 16 MiB segment) on default
// settings, and every mode gives the oracle's keys and values in order.
//
// PGASMR_VOCAB_MB (comma-separated megabytes of 9-byte tokens, as in
// cmd/mrrun's TestLargeVocabulary) runs larger inputs instead; build
// without -race for them:
//
//	PGASMR_VOCAB_MB=5,50,200 go test -run TestKeepAllLargeVocabulary -timeout 2h ./mr
func TestKeepAllLargeVocabulary(t *testing.T) {
	if testing.Short() {
		t.Skip("large vocabulary")
	}
	sizes := []int{300_000}
	if s := os.Getenv("PGASMR_VOCAB_MB"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			mb, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || mb <= 0 {
				t.Fatalf("PGASMR_VOCAB_MB=%q: %q is not a positive number of megabytes", s, f)
			}
			sizes = append(sizes, mb<<20/9)
		}
	}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("%dkeys", n), func(t *testing.T) { keepAllLargeVocabulary(t, n) })
	}
}

func keepAllLargeVocabulary(t *testing.T, n int) {
	rng := rand.New(rand.NewPCG(19, 11))
	toks := make([]string, n)
	for i := range toks {
		var b [8]byte
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		toks[i] = string(b[:])
	}
	// Oracle: every key with the positions it occurs at, in order.
	occ, keys, idx := positions(toks)
	want := digest(keys, func(i int) []int64 { return occ[keys[i]] })

	for _, c := range []config{
		{ranks: 1, gather: reduce.GatherRoot},
		{ranks: 2, gather: reduce.GatherRoot, transfer: reduce.ElementByElement},
		{ranks: 8, gather: reduce.GatherRoot},
		{ranks: 8, gather: reduce.GatherPartitioned, merge: true},
	} {
		t.Run(c.String(), func(t *testing.T) {
			got := collect(t, c, func(ctx context.Context, r *pgas.Rank) (mr.Result[string], error) {
				st, err := reduce.NewHashStore[string, int64](reduce.KeepAll[int64]())
				if err != nil {
					return mr.Result[string]{}, err
				}
				if _, err := mr.ApplyMap(ctx, r, mr.Slice(idx), func(ctx context.Context, i int64, emit func(string, int64)) error {
					emit(toks[i], i)
					return nil
				}, st); err != nil {
					return mr.Result[string]{}, err
				}
				opts := []mr.ReduceOption{mr.Gather(c.gather), mr.WithTransfer(c.transfer)}
				if c.merge {
					opts = append(opts, mr.Merge())
				}
				return mr.ApplyReduce(ctx, r, st, func(ctx context.Context, p *reduce.Pairs[string, int64]) (string, error) {
					return digest(p.Keys, p.Values), nil
				}, opts...)
			})
			if got != want {
				t.Fatalf("digest %s, want %s", got, want)
			}
		})
	}
}

// digest hashes keys with their values, and counts them.
func digest(keys []string, values func(i int) []int64) string {
	h := fnv.New64a()
	nv := 0
	for i, k := range keys {
		fmt.Fprintf(h, "%s:%v;", k, values(i))
		nv += len(values(i))
	}
	return fmt.Sprintf("%d keys %d values %x", len(keys), nv, h.Sum64())
}

// positions returns where each of toks occurs, in order, the distinct
// tokens sorted, and the positions 0..len(toks)-1: a map over positions
// and its oracle.
func positions(toks []string) (occ map[string][]int64, keys []string, idx []int64) {
	occ = map[string][]int64{}
	idx = make([]int64, len(toks))
	for i, w := range toks {
		occ[w] = append(occ[w], int64(i))
		idx[i] = int64(i)
	}
	keys = slices.Sorted(maps.Keys(occ))
	return occ, keys, idx
}
