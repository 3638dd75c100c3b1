package wrap

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/pgasmr/pgasmr/internal/size"
	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Latency is a transport that models a network with a one-way latency per
// operation on top of the inner transport:
//
//   - Get, FetchAdd, CompareAndSwap and Load perform the operation and then
//     take the latency longer to return.
//   - Put performs the operation and returns at once, but the put counts as
//     complete only one latency after it was issued. Fence blocks until the
//     latest completion time of the rank's puts (PutAsync included); Notify
//     and Barrier fence first. Notify does not otherwise wait.
//   - PutAsync and GetAsync perform the operation at once and return a
//     handle whose Wait returns one latency after the call was issued, so
//     any number of outstanding async operations complete in about one
//     latency.
//   - Wait and Barrier take the latency longer than the inner call.
//   - The native collectives of an inner endpoint that has them (passed
//     on, see transport.Extended) take the latency longer than the inner
//     call, like Wait.
//
// Every wait stops early with ctx.Err() when ctx is cancelled. Errors of the
// inner transport are returned at once, without the latency.
//
// A Latency made by NewNodeLatency delays only what crosses a node
// boundary, by the link's latency plus the bytes moved at its bandwidth
// (see NodeLink).
//
// A Latency is safe for concurrent use.
type Latency struct {
	inner transport.Transport
	link  NodeLink // RanksPerNode 0: every operation is remote
}

var _ transport.Transport = (*Latency)(nil)

// NewLatency returns a transport that adds the one-way latency d to every
// operation of inner's endpoints. A d of zero or less adds nothing. It
// panics if inner is nil.
func NewLatency(inner transport.Transport, d time.Duration) *Latency {
	mustInner("NewLatency", inner)
	return &Latency{inner: inner, link: NodeLink{Latency: max(d, 0)}}
}

// A NodeLink is the network between the nodes of a cluster that a
// one-host job emulates (NewNodeLatency): ranks r and s share a node if
// r/RanksPerNode == s/RanksPerNode (pgas.Config.RanksPerNode's layout),
// and an operation between ranks of different nodes takes Latency plus
// its bytes at BytesPerSec (0: no cap). A node's ranks share its link:
// the transfers its ranks in this process start go through it one after
// the other, so concurrent transfers share the bandwidth instead of each
// having all of it. Operations within a node cost what the inner
// transport costs.
type NodeLink struct {
	RanksPerNode int
	Latency      time.Duration
	BytesPerSec  float64
}

// ParseLink reads a link as LATENCY[,BANDWIDTH]: a duration (5us) and a
// byte count a second (5GB/s, 100MiB; the /s may be left out). The
// result's RanksPerNode is zero: the caller says how its ranks group.
func ParseLink(v string) (NodeLink, error) {
	lat, bw, hasBW := strings.Cut(v, ",")
	d, err := time.ParseDuration(strings.TrimSpace(lat))
	if err != nil || d < 0 {
		return NodeLink{}, fmt.Errorf("want a latency such as 5us, then optionally a bandwidth such as 5GB/s")
	}
	link := NodeLink{Latency: d}
	if hasBW {
		b, err := size.Parse(strings.TrimSuffix(strings.TrimSpace(bw), "/s"))
		if err != nil || b <= 0 {
			return NodeLink{}, fmt.Errorf("bandwidth %q: want bytes a second such as 5GB/s", bw)
		}
		link.BytesPerSec = float64(b)
	}
	return link, nil
}

// NewNodeLatency returns a transport that delays the operations of
// inner's endpoints that cross a node boundary as link says, and no
// other: a Get or an atomic from another node returns Latency plus its
// bytes' transfer time later, a Put to another node completes (Fence)
// that much after it was issued, and Wait, Barrier and the native
// collectives take Latency longer (a collective also the bytes it brings
// from other nodes) when the job spans more than one node. It panics if
// inner is nil or link.RanksPerNode is below 1.
func NewNodeLatency(inner transport.Transport, link NodeLink) *Latency {
	mustInner("NewNodeLatency", inner)
	if link.RanksPerNode < 1 {
		panic(fmt.Sprintf("wrap: NewNodeLatency with %d ranks per node", link.RanksPerNode))
	}
	link.Latency, link.BytesPerSec = max(link.Latency, 0), max(link.BytesPerSec, 0)
	return &Latency{inner: inner, link: link}
}

// Name returns the inner transport's name followed by "+latency", or
// "+nodelatency" for a NewNodeLatency.
func (l *Latency) Name() string {
	if l.link.RanksPerNode > 0 {
		return l.inner.Name() + "+nodelatency"
	}
	return l.inner.Name() + "+latency"
}

// Open opens job on the inner transport and wraps every endpoint it returns.
func (l *Latency) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	eps, err := l.inner.Open(ctx, job)
	if err != nil {
		return nil, err
	}
	out := make([]transport.Endpoint, len(eps))
	nics := map[int]*nic{}
	for i, ep := range eps {
		le := &latencyEndpoint{base: base{inner: transport.Extend(ep)}, link: l.link}
		node := ep.Rank()
		if l.link.RanksPerNode > 0 {
			node /= l.link.RanksPerNode
		}
		if nics[node] == nil {
			nics[node] = &nic{}
		}
		le.nic = nics[node]
		le.multi = l.link.RanksPerNode == 0 || job.Ranks > l.link.RanksPerNode
		if nat := le.inner.Collectives(); nat != nil {
			le.nat = &latencyColl{e: le, inner: nat}
		}
		out[i] = le
	}
	return out, nil
}

// sleepUntil waits until t, or returns ctx.Err() if ctx is done first. It
// sleeps on a timer until spinBelow before t and yields the processor in a
// loop from there: a Go timer can fire a quarter of a millisecond or more
// late, which would turn a 5 µs link into a 300 µs one.
func sleepUntil(ctx context.Context, t time.Time) error {
	for {
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		if d > spinBelow {
			timer := time.NewTimer(d - spinBelow)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
	}
}

// spinBelow is how long before its end sleepUntil stops sleeping on a
// timer and yields in a loop instead.
const spinBelow = 2 * time.Millisecond

// nic is a node's link to the others: the time until which it is busy
// with the transfers started so far, shared by the node's endpoints in
// this process.
type nic struct {
	mu   sync.Mutex
	free time.Time
}

// latencyEndpoint delays the calls of one rank.
type latencyEndpoint struct {
	base
	link  NodeLink
	nic   *nic
	multi bool // the job spans more than one node: synchronisation is remote

	mu      sync.Mutex
	putDone time.Time // latest completion time of the puts issued
}

var _ transport.Extended = (*latencyEndpoint)(nil)

// MemoryMapped is false: every operation pays the delay, as over a
// network, whatever the inner transport is.
func (e *latencyEndpoint) MemoryMapped() bool { return false }

// notePut records a put that completes at t.
func (e *latencyEndpoint) notePut(t time.Time) {
	e.mu.Lock()
	if t.After(e.putDone) {
		e.putDone = t
	}
	e.mu.Unlock()
}

// fence waits until every put issued so far is complete.
func (e *latencyEndpoint) fence(ctx context.Context) error {
	e.mu.Lock()
	t := e.putDone
	e.mu.Unlock()
	return sleepUntil(ctx, t)
}

// remote reports whether rank is on another node than this endpoint's
// (every rank is, without nodes).
func (e *latencyEndpoint) remote(rank int) bool {
	per := e.link.RanksPerNode
	return per == 0 || rank/per != e.Rank()/per
}

// doneAt returns when moving n bytes from or to rank, starting now,
// completes: now within a node.
func (e *latencyEndpoint) doneAt(rank, n int) time.Time {
	if !e.remote(rank) {
		return time.Time{}
	}
	return e.transfer(n)
}

// transfer starts moving n bytes over the node's link and returns when
// they arrive: after the transfers before them and their own time at the
// link's bandwidth, plus its latency.
func (e *latencyEndpoint) transfer(n int) time.Time {
	now := time.Now()
	if e.link.BytesPerSec <= 0 || n <= 0 {
		return now.Add(e.link.Latency)
	}
	busy := time.Duration(float64(n) / e.link.BytesPerSec * float64(time.Second))
	e.nic.mu.Lock()
	start := now
	if e.nic.free.After(start) {
		start = e.nic.free
	}
	e.nic.free = start.Add(busy)
	end := e.nic.free
	e.nic.mu.Unlock()
	return end.Add(e.link.Latency)
}

// syncDone returns when a synchronisation started now completes: one
// latency later if the job spans nodes.
func (e *latencyEndpoint) syncDone() time.Time {
	if !e.multi {
		return time.Time{}
	}
	return time.Now().Add(e.link.Latency)
}

// after waits until t after a successful inner call.
func (e *latencyEndpoint) after(ctx context.Context, err error, t time.Time) error {
	if err != nil || t.IsZero() {
		return err
	}
	return sleepUntil(ctx, t)
}

func (e *latencyEndpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	done := e.doneAt(rank, len(src))
	if err := e.inner.Put(ctx, rank, off, src); err != nil {
		return err
	}
	if !done.IsZero() {
		e.notePut(done)
	}
	return nil
}

func (e *latencyEndpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	done := e.doneAt(rank, len(dst))
	return e.after(ctx, e.inner.Get(ctx, rank, off, dst), done)
}

// GetStrided and PutStrided pay as one Get or Put of the packed bytes.
func (e *latencyEndpoint) GetStrided(ctx context.Context, rank int, st transport.Strided, dst []byte) error {
	done := e.doneAt(rank, len(dst))
	return e.after(ctx, e.inner.GetStrided(ctx, rank, st, dst), done)
}

func (e *latencyEndpoint) PutStrided(ctx context.Context, rank int, st transport.Strided, src []byte) error {
	done := e.doneAt(rank, len(src))
	if err := e.inner.PutStrided(ctx, rank, st, src); err != nil {
		return err
	}
	if !done.IsZero() {
		e.notePut(done)
	}
	return nil
}

func (e *latencyEndpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	done := e.doneAt(rank, len(src))
	h := e.inner.PutAsync(ctx, rank, off, src)
	if !done.IsZero() {
		e.notePut(done)
	}
	return &latencyHandle{inner: h, done: done}
}

func (e *latencyEndpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	done := e.doneAt(rank, len(dst))
	return &latencyHandle{inner: e.inner.GetAsync(ctx, rank, off, dst), done: done}
}

func (e *latencyEndpoint) Fence(ctx context.Context) error {
	if err := e.fence(ctx); err != nil {
		return err
	}
	return e.inner.Fence(ctx)
}

func (e *latencyEndpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	done := e.doneAt(rank, 8)
	v, err := e.inner.FetchAdd(ctx, rank, off, delta)
	return v, e.after(ctx, err, done)
}

func (e *latencyEndpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	done := e.doneAt(rank, 8)
	v, err := e.inner.CompareAndSwap(ctx, rank, off, old, new)
	return v, e.after(ctx, err, done)
}

func (e *latencyEndpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	done := e.doneAt(rank, 8)
	v, err := e.inner.Load(ctx, rank, off)
	return v, e.after(ctx, err, done)
}

// Notify fences and notifies; it does not wait for other ranks.
func (e *latencyEndpoint) Notify(ctx context.Context) error {
	if err := e.fence(ctx); err != nil {
		return err
	}
	return e.inner.Notify(ctx)
}

func (e *latencyEndpoint) Wait(ctx context.Context) error {
	return e.after(ctx, e.inner.Wait(ctx), e.syncDone())
}

func (e *latencyEndpoint) Barrier(ctx context.Context) error {
	if err := e.fence(ctx); err != nil {
		return err
	}
	return e.after(ctx, e.inner.Barrier(ctx), e.syncDone())
}

// latencyHandle completes when the inner handle does and not before done.
type latencyHandle struct {
	inner transport.Handle
	done  time.Time
}

func (h *latencyHandle) Wait(ctx context.Context) error {
	if err := h.inner.Wait(ctx); err != nil {
		return err
	}
	return sleepUntil(ctx, h.done)
}

// latencyColl delays the native collective calls of one rank.
type latencyColl struct {
	e     *latencyEndpoint
	inner transport.Collectives
}

// doneAt returns when a collective started now completes: if the job
// spans nodes, after the bytes this rank receives from other nodes
// (counts(j) from rank j) went over the node's link, plus its latency.
func (c *latencyColl) doneAt(counts func(j int) int) time.Time {
	e := c.e
	if !e.multi {
		return time.Time{}
	}
	n := 0
	for j := range e.Size() {
		if j != e.Rank() && e.remote(j) {
			n += counts(j)
		}
	}
	return e.transfer(n)
}

func (c *latencyColl) Broadcast(ctx context.Context, root int, buf []byte) error {
	done := c.doneAt(func(j int) int {
		if j == root {
			return len(buf)
		}
		return 0
	})
	return c.e.after(ctx, c.inner.Broadcast(ctx, root, buf), done)
}

func (c *latencyColl) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	done := c.doneAt(func(j int) int { return counts[j] })
	return c.e.after(ctx, c.inner.Allgatherv(ctx, send, recv, counts, displs), done)
}

func (c *latencyColl) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	done := c.doneAt(func(j int) int { return rcounts[j] })
	return c.e.after(ctx, c.inner.Alltoallv(ctx, send, scounts, sdispls, recv, rcounts, rdispls), done)
}
