package coll_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/coll"
	"github.com/pgasmr/pgasmr/pgas/inproc"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// nativeTransport wraps inproc with fake native collectives, standing in
// for MPI's: the transport moves the bytes between ranks' buffers itself.
type nativeTransport struct {
	inner transport.Transport
	calls atomic.Int64
	mu    sync.Mutex
	rdv   map[int64]*rendezvous
}

type rendezvous struct {
	parts   []any
	arrived int
	done    chan struct{}
}

func (nt *nativeTransport) Name() string { return "native-test" }

func (nt *nativeTransport) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	eps, err := nt.inner.Open(ctx, job)
	if err != nil {
		return nil, err
	}
	nt.rdv = map[int64]*rendezvous{}
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = &nativeEndpoint{Endpoint: ep, nt: nt}
	}
	return out, nil
}

type nativeEndpoint struct {
	transport.Endpoint
	nt  *nativeTransport
	seq int64
}

// exchange deposits mine and returns every rank's deposit once all have
// arrived.
func (e *nativeEndpoint) exchange(ctx context.Context, mine any) ([]any, error) {
	nt, n := e.nt, e.Size()
	nt.calls.Add(1)
	e.seq++
	nt.mu.Lock()
	rv := nt.rdv[e.seq]
	if rv == nil {
		rv = &rendezvous{parts: make([]any, n), done: make(chan struct{})}
		nt.rdv[e.seq] = rv
	}
	rv.parts[e.Rank()] = mine
	rv.arrived++
	if rv.arrived == n {
		close(rv.done)
	}
	nt.mu.Unlock()
	select {
	case <-rv.done:
		return rv.parts, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (e *nativeEndpoint) Broadcast(ctx context.Context, root int, buf []byte) error {
	parts, err := e.exchange(ctx, append([]byte(nil), buf...))
	if err == nil {
		copy(buf, parts[root].([]byte))
	}
	return err
}

func (e *nativeEndpoint) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	parts, err := e.exchange(ctx, append([]byte(nil), send...))
	for q, p := range parts {
		copy(recv[displs[q]:displs[q]+counts[q]], p.([]byte))
	}
	return err
}

func (e *nativeEndpoint) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	pieces := make([][]byte, len(scounts))
	for j := range pieces {
		pieces[j] = append([]byte(nil), send[sdispls[j]:sdispls[j]+scounts[j]]...)
	}
	parts, err := e.exchange(ctx, pieces)
	if err != nil {
		return err
	}
	for i, p := range parts {
		piece := p.([][]byte)[e.Rank()]
		if len(piece) != rcounts[i] {
			return fmt.Errorf("rank %d expects %d bytes from rank %d, which sends %d", e.Rank(), rcounts[i], i, len(piece))
		}
		copy(recv[rdispls[i]:], piece)
	}
	return nil
}

func TestNativeBroadcastSwitch(t *testing.T) {
	for _, noNative := range []bool{false, true} {
		nt := &nativeTransport{inner: inproc.New()}
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
		if got := nt.calls.Load(); got != want {
			t.Errorf("NoNative=%v: %d native calls; want %d", noNative, got, want)
		}
	}
}

func TestNativeAlltoallvSwitch(t *testing.T) {
	const ranks = 3
	results := make([][2]string, ranks)
	for k, noNative := range []bool{false, true} {
		nt := &nativeTransport{inner: inproc.New()}
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
		if got := nt.calls.Load(); got != want {
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
