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
	parts   [][]byte
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

// exchange deposits a copy of mine and returns every rank's deposit once
// all have arrived.
func (e *nativeEndpoint) exchange(ctx context.Context, mine []byte) ([][]byte, error) {
	nt, n := e.nt, e.Size()
	nt.calls.Add(1)
	e.seq++
	nt.mu.Lock()
	rv := nt.rdv[e.seq]
	if rv == nil {
		rv = &rendezvous{parts: make([][]byte, n), done: make(chan struct{})}
		nt.rdv[e.seq] = rv
	}
	rv.parts[e.Rank()] = append([]byte(nil), mine...)
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
	parts, err := e.exchange(ctx, buf)
	if err == nil {
		copy(buf, parts[root])
	}
	return err
}

func (e *nativeEndpoint) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	parts, err := e.exchange(ctx, send)
	for q, p := range parts {
		copy(recv[displs[q]:displs[q]+counts[q]], p)
	}
	return err
}

func (e *nativeEndpoint) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	return fmt.Errorf("not used")
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
