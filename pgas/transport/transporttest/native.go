// Package transporttest provides test doubles for transports.
//
// Native adds the optional capabilities of transport.Extended, native
// collectives and failure notification, to an in-process transport, so
// that the code paths MPI takes (package coll's native collectives, a
// wrapper passing them on, pgas.Run cancelling ranks on a failure
// notice) run in an ordinary `go test`:
//
//	nt := transporttest.NewNative(inproc.New())
//	err := pgas.Run(ctx, pgas.Config{Ranks: 4, Transport: wrap.NewCounting(nt)}, body)
//	fmt.Println(nt.Calls()) // native collective calls of all ranks
package transporttest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Native is a transport that wraps an in-process transport and gives its
// endpoints native collectives and a Failed channel.
//
// The collectives are a rendezvous: each rank deposits a copy of what it
// sends and, once every rank of the job has deposited for the same call,
// copies out what it receives, the way a message-passing library moves
// bytes between processes; they touch no segment. Every rank must make
// the same sequence of collective calls. A call returns ctx's error if
// ctx ends, and a transport.RankFailedError if a rank fails, while it
// waits. Failed is closed when any endpoint of the job calls Fail.
//
// The inner transport must host every rank of the job in this process.
type Native struct {
	inner transport.Transport
	calls atomic.Int64
}

var _ transport.Transport = (*Native)(nil)

// NewNative returns a transport that adds native collectives and failure
// notification to inner's endpoints.
func NewNative(inner transport.Transport) *Native { return &Native{inner: inner} }

// Name returns the inner transport's name followed by "+native".
func (nt *Native) Name() string { return nt.inner.Name() + "+native" }

// Calls returns the number of native collective calls made on endpoints of
// nt, by all ranks of all jobs.
func (nt *Native) Calls() int64 { return nt.calls.Load() }

// Open opens job on the inner transport and wraps every endpoint.
func (nt *Native) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	eps, err := nt.inner.Open(ctx, job)
	if err != nil {
		return nil, err
	}
	j := &nativeJob{ranks: job.Ranks, rdv: map[int64]*rendezvous{}, failed: make(chan struct{})}
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = &endpoint{inner: ep, nt: nt, j: j}
	}
	return out, nil
}

// nativeJob is the state the endpoints of one job share.
type nativeJob struct {
	ranks int

	mu  sync.Mutex
	rdv map[int64]*rendezvous // by call sequence number

	failOnce sync.Once
	failRank int
	failErr  error
	failed   chan struct{}
}

type rendezvous struct {
	parts   []any
	arrived int
	done    chan struct{}
}

func (j *nativeJob) fail(rank int, err error) {
	j.failOnce.Do(func() {
		j.failRank, j.failErr = rank, err
		close(j.failed)
	})
}

// endpoint is an inner endpoint with native collectives.
type endpoint struct {
	inner transport.Endpoint
	nt    *Native
	j     *nativeJob
	seq   int64 // collective calls so far; used by the rank's goroutine only
}

var (
	_ transport.Extended    = (*endpoint)(nil)
	_ transport.Collectives = (*endpoint)(nil)
)

func (e *endpoint) Rank() int       { return e.inner.Rank() }
func (e *endpoint) Size() int       { return e.inner.Size() }
func (e *endpoint) Segment() []byte { return e.inner.Segment() }
func (e *endpoint) Close() error    { return e.inner.Close() }

func (e *endpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	return e.inner.Put(ctx, rank, off, src)
}

func (e *endpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	return e.inner.Get(ctx, rank, off, dst)
}

func (e *endpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	return e.inner.PutAsync(ctx, rank, off, src)
}

func (e *endpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	return e.inner.GetAsync(ctx, rank, off, dst)
}

func (e *endpoint) Fence(ctx context.Context) error { return e.inner.Fence(ctx) }

func (e *endpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	return e.inner.FetchAdd(ctx, rank, off, delta)
}

func (e *endpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	return e.inner.CompareAndSwap(ctx, rank, off, old, new)
}

func (e *endpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	return e.inner.Load(ctx, rank, off)
}

func (e *endpoint) Notify(ctx context.Context) error  { return e.inner.Notify(ctx) }
func (e *endpoint) Wait(ctx context.Context) error    { return e.inner.Wait(ctx) }
func (e *endpoint) Barrier(ctx context.Context) error { return e.inner.Barrier(ctx) }

// Fail closes the job's Failed channel and fails the inner endpoint.
func (e *endpoint) Fail(err error) {
	e.j.fail(e.Rank(), err)
	e.inner.Fail(err)
}

// Collectives returns e itself.
func (e *endpoint) Collectives() transport.Collectives { return e }

// MemoryMapped is the inner endpoint's.
func (e *endpoint) MemoryMapped() bool { return transport.Extend(e.inner).MemoryMapped() }

// Depart is the inner endpoint's.
func (e *endpoint) Depart() { transport.Extend(e.inner).Depart() }

// Mapped is the inner endpoint's.
func (e *endpoint) Mapped(rank int) []byte { return transport.Extend(e.inner).Mapped(rank) }

// GetStrided and PutStrided are the inner endpoint's.
func (e *endpoint) GetStrided(ctx context.Context, rank int, st transport.Strided, dst []byte) error {
	return transport.Extend(e.inner).GetStrided(ctx, rank, st, dst)
}

func (e *endpoint) PutStrided(ctx context.Context, rank int, st transport.Strided, src []byte) error {
	return transport.Extend(e.inner).PutStrided(ctx, rank, st, src)
}

// Failed returns a channel closed when any endpoint of the job has called
// Fail.
func (e *endpoint) Failed() <-chan struct{} { return e.j.failed }

// exchange deposits mine and returns every rank's deposit once all have
// arrived.
func (e *endpoint) exchange(ctx context.Context, mine any) ([]any, error) {
	e.nt.calls.Add(1)
	j := e.j
	e.seq++
	j.mu.Lock()
	rv := j.rdv[e.seq]
	if rv == nil {
		rv = &rendezvous{parts: make([]any, j.ranks), done: make(chan struct{})}
		j.rdv[e.seq] = rv
	}
	rv.parts[e.Rank()] = mine
	rv.arrived++
	if rv.arrived == j.ranks {
		close(rv.done)
		delete(j.rdv, e.seq) // the last to arrive; the others hold rv
	}
	j.mu.Unlock()
	select {
	case <-rv.done:
		return rv.parts, nil
	case <-j.failed:
		return nil, &transport.RankFailedError{Rank: j.failRank, Cause: j.failErr}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// blocks checks that counts and displs describe n blocks inside a buffer
// of size bytes.
func blocks(what string, n, size int, counts, displs []int) error {
	if len(counts) != n || len(displs) != n {
		return fmt.Errorf("transporttest: %s: %d counts and %d displacements for %d ranks", what, len(counts), len(displs), n)
	}
	for q := range counts {
		if counts[q] < 0 || displs[q] < 0 || displs[q]+counts[q] > size {
			return fmt.Errorf("transporttest: %s: block %d [%d,%d) outside %d bytes: %w", what, q, displs[q], displs[q]+counts[q], size, transport.ErrOutOfRange)
		}
	}
	return nil
}

// Broadcast copies root's buf into every rank's buf.
func (e *endpoint) Broadcast(ctx context.Context, root int, buf []byte) error {
	if root < 0 || root >= e.Size() {
		return fmt.Errorf("transporttest: broadcast: root %d not in [0,%d): %w", root, e.Size(), transport.ErrOutOfRange)
	}
	parts, err := e.exchange(ctx, append([]byte(nil), buf...))
	if err != nil {
		return err
	}
	from := parts[root].([]byte)
	if len(from) != len(buf) {
		return fmt.Errorf("transporttest: broadcast: rank %d passes %d bytes, root %d %d", e.Rank(), len(buf), root, len(from))
	}
	copy(buf, from)
	return nil
}

// Allgatherv gives every rank every rank's send, at displs in recv.
func (e *endpoint) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	if err := blocks("allgatherv", e.Size(), len(recv), counts, displs); err != nil {
		return err
	}
	if len(send) != counts[e.Rank()] {
		return fmt.Errorf("transporttest: allgatherv: rank %d sends %d bytes, counts say %d", e.Rank(), len(send), counts[e.Rank()])
	}
	parts, err := e.exchange(ctx, append([]byte(nil), send...))
	if err != nil {
		return err
	}
	for q, p := range parts {
		if got := p.([]byte); len(got) != counts[q] {
			return fmt.Errorf("transporttest: allgatherv: rank %d expects %d bytes from rank %d, which sends %d", e.Rank(), counts[q], q, len(got))
		}
		copy(recv[displs[q]:], p.([]byte))
	}
	return nil
}

// Alltoallv sends each rank its block of send and receives each rank's
// block for this one.
func (e *endpoint) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	n := e.Size()
	if err := blocks("alltoallv send", n, len(send), scounts, sdispls); err != nil {
		return err
	}
	if err := blocks("alltoallv receive", n, len(recv), rcounts, rdispls); err != nil {
		return err
	}
	pieces := make([][]byte, n)
	for q := range pieces {
		pieces[q] = append([]byte(nil), send[sdispls[q]:sdispls[q]+scounts[q]]...)
	}
	parts, err := e.exchange(ctx, pieces)
	if err != nil {
		return err
	}
	for q, p := range parts {
		piece := p.([][]byte)[e.Rank()]
		if len(piece) != rcounts[q] {
			return fmt.Errorf("transporttest: alltoallv: rank %d expects %d bytes from rank %d, which sends %d", e.Rank(), rcounts[q], q, len(piece))
		}
		copy(recv[rdispls[q]:], piece)
	}
	return nil
}
