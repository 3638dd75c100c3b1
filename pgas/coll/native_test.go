package coll_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport/transporttest"
)

func TestNativeBroadcastSwitch(t *testing.T) {
	for _, noNative := range []bool{false, true} {
		nt := transporttest.NewNative(inproc.New())
		err := pgas.Run(context.Background(), pgas.Config{Ranks: 3, Transport: nt}, func(ctx context.Context, r *pgas.Rank) error {
			if r.Native() == nil {
				return fmt.Errorf("endpoint has no native collectives")
			}
			src := []int32{7, 8, 9}
			if r.ID() != 1 {
				src = []int32{0, 0, 0}
			}
			dst := make([]int32, 3)
			opts := []coll.Option{coll.Root(1)}
			if noNative {
				opts = append(opts, coll.NoNative())
			}
			if err := coll.Broadcast(ctx, r.World(), coll.Private(dst), coll.Private(src), 3, opts...); err != nil {
				return err
			}
			if fmt.Sprint(dst) != "[7 8 9]" {
				return fmt.Errorf("dst = %v", dst)
			}
			// A team that is not the world never uses the native path.
			tm, err := r.Split(ctx, r.ID()%2)
			if err != nil {
				return err
			}
			return coll.Broadcast(ctx, tm, coll.Private(dst), coll.Private(src), 3)
		})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(3)
		if noNative {
			want = 0
		}
		if got := nt.Calls(); got != want {
			t.Errorf("NoNative=%v: %d native calls; want %d", noNative, got, want)
		}
	}
}

func TestNativeAlltoallvSwitch(t *testing.T) {
	const ranks = 3
	results := make([][2]string, ranks)
	for k, noNative := range []bool{false, true} {
		nt := transporttest.NewNative(inproc.New())
		err := pgas.Run(context.Background(), pgas.Config{Ranks: ranks, Transport: nt}, func(ctx context.Context, r *pgas.Rank) error {
			var opts []coll.Option
			if noNative {
				opts = append(opts, coll.NoNative())
			}
			counts := []int{2, 0, 3}
			mine := make([]int16, counts[r.ID()])
			for i := range mine {
				mine[i] = int16(10*r.ID() + i)
			}
			all := make([]int16, 7)
			if err := coll.AllgatherV(ctx, r.World(), coll.Private(all), coll.Private(mine), counts, nil, nil, opts...); err != nil {
				return err
			}
			// ExchangeVMerge: rank i sends i+j+1 elements to rank j.
			ec := make([]int, ranks*ranks)
			for i := range ranks {
				for j := range ranks {
					ec[i*ranks+j] = i + j + 1
				}
			}
			send := make([]int16, 0)
			for j := range ranks {
				for x := range r.ID() + j + 1 {
					send = append(send, int16(100*r.ID()+10*j+x))
				}
			}
			recv := make([]int16, 3*r.ID()+6)
			if err := coll.ExchangeVMerge(ctx, r.World(), coll.Private(recv), coll.Private(send), ec, nil, nil, opts...); err != nil {
				return err
			}
			results[r.ID()][k] = fmt.Sprint(all, recv)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(2 * ranks)
		if noNative {
			want = 0
		}
		if got := nt.Calls(); got != want {
			t.Errorf("NoNative=%v: %d native calls; want %d", noNative, got, want)
		}
	}
	for q, res := range results {
		if res[0] != res[1] {
			t.Errorf("rank %d: native %s; library %s", q, res[0], res[1])
		}
	}
	t.Log(results[1][0])
}
