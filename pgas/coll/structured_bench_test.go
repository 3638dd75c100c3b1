package coll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
)

// BenchmarkStructured: the one-round collectives between private buffers
// at many in-process ranks, with tiny payloads, so that planning shows:
// an Allgather of two int64, and an all-to-all of 0-2 int64 per pair
// (AlltoallV from each rank's row and column; the global baseline is
// ExchangeV with the whole count matrix, as the partitioned gather of
// package shuffle used to call it). structured is this package's path,
// global the global plan of every chunk on every rank (ForceGlobalPlan),
// skipped at 1,024 ranks where it does not finish. ns/op and B/op are per
// collective, over all ranks.
func BenchmarkStructured(b *testing.B) {
	for _, op := range []string{"allgather", "alltoallv"} {
		for _, ranks := range []int{64, 256, 1024} {
			for _, path := range []string{"structured", "global"} {
				b.Run(fmt.Sprintf("%s/ranks=%d/%s", op, ranks, path), func(b *testing.B) {
					if path == "global" && ranks > 256 {
						b.Skip("the global plan lists a million chunks on each of 1,024 ranks")
					}
					b.ReportAllocs()
					cfg := pgas.Config{Ranks: ranks, SegmentBytes: 1 << 20}
					runCollCfg(b, cfg, func(ctx context.Context, r *pgas.Rank) (func() error, error) {
						if op == "allgather" {
							return benchAllgather(ctx, r, path == "global"), nil
						}
						return benchAlltoallv(ctx, r, path == "global"), nil
					})
				})
			}
		}
	}
}

func benchAllgather(ctx context.Context, r *pgas.Rank, global bool) func() error {
	var opts []coll.Option
	if global {
		opts = append(opts, coll.ForceGlobalPlan())
	}
	mine := []int64{int64(r.ID()), 1}
	all := make([]int64, 2*r.N())
	return func() error {
		return coll.Allgather(ctx, r.World(), coll.Private(all), coll.Private(mine), 2, opts...)
	}
}

func benchAlltoallv(ctx context.Context, r *pgas.Rank, global bool) func() error {
	S, me := r.N(), r.ID()
	cnt := func(i, j int) int { return (i + j) % 3 }
	send, recv := make([]int, S), make([]int, S)
	for q := range S {
		send[q], recv[q] = cnt(me, q), cnt(q, me)
	}
	_, slen := packed(send, noGap)
	_, rlen := packed(recv, noGap)
	src, dst := make([]int64, slen), make([]int64, rlen)
	if global {
		m := make([]int, S*S)
		for k := range m {
			m[k] = cnt(k/S, k%S)
		}
		return func() error {
			return coll.ExchangeV(ctx, r.World(), coll.Private(dst), coll.Private(src), m, nil, nil, coll.ForceGlobalPlan())
		}
	}
	return func() error {
		return coll.AlltoallV(ctx, r.World(), coll.Private(dst), coll.Private(src), send, recv)
	}
}
