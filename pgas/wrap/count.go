package wrap

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// Op is a kind of endpoint operation counted by Counting. It indexes
// Counts.Ops.
type Op int

// The kinds of counted operations, one per Endpoint method that does
// something (Rank, Size, Segment, Fail and Close are not counted), and one
// per native collective (transport.Collectives) of an endpoint that has
// them.
const (
	OpPut        Op = iota // Endpoint.Put
	OpGet                  // Endpoint.Get
	OpPutAsync             // Endpoint.PutAsync
	OpGetAsync             // Endpoint.GetAsync
	OpFence                // Endpoint.Fence
	OpFetchAdd             // Endpoint.FetchAdd
	OpCAS                  // Endpoint.CompareAndSwap
	OpLoad                 // Endpoint.Load
	OpNotify               // Endpoint.Notify
	OpWait                 // Endpoint.Wait
	OpBarrier              // Endpoint.Barrier
	OpBroadcast            // Collectives.Broadcast
	OpAllgatherv           // Collectives.Allgatherv
	OpAlltoallv            // Collectives.Alltoallv
	OpGetStrided           // Extended.GetStrided
	OpPutStrided           // Extended.PutStrided
	NumOps                 // number of kinds; not a kind
)

var opNames = [NumOps]string{
	OpPut:        "put",
	OpGet:        "get",
	OpPutAsync:   "putasync",
	OpGetAsync:   "getasync",
	OpFence:      "fence",
	OpFetchAdd:   "fetchadd",
	OpCAS:        "cas",
	OpLoad:       "load",
	OpNotify:     "notify",
	OpWait:       "wait",
	OpBarrier:    "barrier",
	OpBroadcast:  "broadcast",
	OpAllgatherv: "allgatherv",
	OpAlltoallv:  "alltoallv",
	OpGetStrided: "getstrided",
	OpPutStrided: "putstrided",
}

// String returns the lowercase name of the kind: "put", "get", "putasync",
// "getasync", "fence", "fetchadd", "cas", "load", "notify", "wait",
// "barrier", "broadcast", "allgatherv", "alltoallv", "getstrided" or
// "putstrided".
func (o Op) String() string {
	if o >= 0 && o < NumOps {
		return opNames[o]
	}
	return fmt.Sprintf("wrap.Op(%d)", int(o))
}

// Counts is a snapshot of the operations of one rank (or, from
// Counting.Total, of all ranks).
type Counts struct {
	// Ops counts endpoint calls by kind.
	Ops [NumOps]int64
	// Peers is the one-sided traffic, indexed by peer rank, with one entry
	// per rank of the job: a message is one Put, Get, PutAsync, GetAsync,
	// GetStrided, PutStrided, FetchAdd, CompareAndSwap or Load call naming
	// the peer (the peer may be the calling rank itself); bytes are sent by
	// the puts and received by the gets. It is the type pgas.Stats.Peers has,
	// so the runtime's counts and the transport's compare directly.
	Peers transport.Traffic

	// NativeSent and NativeReceived are the bytes the rank's native
	// collective calls carried to and from other ranks, by the calls'
	// arguments: a Broadcast sends len(buf) from the root to each other
	// rank; an Allgatherv sends len(send) to each other rank and receives
	// counts[q] from each other rank q; an Alltoallv sends scounts[j] to
	// each other rank j and receives rcounts[i] from each other rank i.
	// Bytes a rank keeps for itself are not counted, and neither is the
	// routing the transport chooses (a tree broadcast forwards more). They
	// are not in Peers, whose messages are one-sided calls.
	NativeSent, NativeReceived int64
}

// Messages is the number of messages to all peers.
func (c Counts) Messages() int64 { return c.Peers.Messages() }

// BytesSent is the number of bytes put to all peers.
func (c Counts) BytesSent() int64 { return c.Peers.BytesSent() }

// BytesReceived is the number of bytes got from all peers.
func (c Counts) BytesReceived() int64 { return c.Peers.BytesReceived() }

// Counting is a transport that counts the operations of every endpoint of
// the inner transport, per rank and per peer, its native collective calls
// included.
//
// Operations are counted when they are issued, whether or not they succeed;
// a call whose peer rank does not exist counts as an operation but not as a
// message. The counts of the latest job are readable from any goroutine,
// while the job runs and after it ends. Each Open starts the counts again
// from zero for the new job; endpoints of an earlier job still running go on
// counting into that job's counters, which are no longer visible.
//
// A Counting is safe for concurrent use.
type Counting struct {
	inner transport.Transport
	cur   atomic.Pointer[countJob]
}

var _ transport.Transport = (*Counting)(nil)

// NewCounting returns a transport that counts the operations of inner's
// endpoints. It panics if inner is nil.
func NewCounting(inner transport.Transport) *Counting {
	mustInner("NewCounting", inner)
	return &Counting{inner: inner}
}

// countJob holds the counters of one job, allocated at Open.
type countJob struct {
	ranks []rankCounters
}

type rankCounters struct {
	ops                    [NumOps]atomic.Int64
	peers                  []peerCounters
	nativeSent, nativeRecv atomic.Int64
}

type peerCounters struct {
	messages, sent, received atomic.Int64
}

// Name returns the inner transport's name followed by "+counting".
func (c *Counting) Name() string { return c.inner.Name() + "+counting" }

// Open opens job on the inner transport and wraps every endpoint it returns.
// The counts start again from zero.
func (c *Counting) Open(ctx context.Context, job transport.Job) ([]transport.Endpoint, error) {
	eps, err := c.inner.Open(ctx, job)
	if err != nil {
		return nil, err
	}
	n := max(job.Ranks, 0)
	cj := &countJob{ranks: make([]rankCounters, n)}
	for r := range cj.ranks {
		cj.ranks[r].peers = make([]peerCounters, n)
	}
	c.cur.Store(cj)
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		ce := &countEndpoint{base: base{inner: transport.Extend(ep)}}
		if r := ep.Rank(); hosted(r, len(cj.ranks)) {
			ce.rc = &cj.ranks[r]
		} else {
			// The inner transport broke its contract; count nothing
			// rather than index out of range.
			ce.rc = &rankCounters{}
		}
		if nat := ce.inner.Collectives(); nat != nil {
			ce.nat = &countColl{e: ce, inner: nat}
		}
		out[i] = ce
	}
	return out, nil
}

// Counts returns a snapshot of the counts of rank in the latest job. It
// returns the zero Counts if no job was opened or rank is not in the job.
func (c *Counting) Counts(rank int) Counts {
	cj := c.cur.Load()
	if cj == nil || !hosted(rank, len(cj.ranks)) {
		return Counts{}
	}
	return cj.ranks[rank].snapshot()
}

// Total returns the sum of the counts of every rank of the latest job:
// Total().Peers[p] is the traffic of all ranks with peer p.
func (c *Counting) Total() Counts {
	cj := c.cur.Load()
	if cj == nil {
		return Counts{}
	}
	t := Counts{Peers: make(transport.Traffic, len(cj.ranks))}
	for r := range cj.ranks {
		s := cj.ranks[r].snapshot()
		for k, n := range s.Ops {
			t.Ops[k] += n
		}
		t.Peers.Add(s.Peers)
		t.NativeSent += s.NativeSent
		t.NativeReceived += s.NativeReceived
	}
	return t
}

// Reset sets every count of the latest job to zero. Operations that run
// concurrently with Reset may be counted before or after it.
func (c *Counting) Reset() {
	cj := c.cur.Load()
	if cj == nil {
		return
	}
	for r := range cj.ranks {
		rc := &cj.ranks[r]
		for k := range rc.ops {
			rc.ops[k].Store(0)
		}
		rc.nativeSent.Store(0)
		rc.nativeRecv.Store(0)
		for p := range rc.peers {
			pc := &rc.peers[p]
			pc.messages.Store(0)
			pc.sent.Store(0)
			pc.received.Store(0)
		}
	}
}

func (rc *rankCounters) snapshot() Counts {
	var s Counts
	for k := range rc.ops {
		s.Ops[k] = rc.ops[k].Load()
	}
	s.NativeSent, s.NativeReceived = rc.nativeSent.Load(), rc.nativeRecv.Load()
	s.Peers = make(transport.Traffic, len(rc.peers))
	for p := range rc.peers {
		pc := &rc.peers[p]
		s.Peers[p] = transport.PeerTraffic{
			Messages:      pc.messages.Load(),
			BytesSent:     pc.sent.Load(),
			BytesReceived: pc.received.Load(),
		}
	}
	return s
}

// countEndpoint counts the calls of one rank and passes them on. (The inner
// endpoint is not embedded, so that a method added to transport.Endpoint
// cannot slip past the wrapper uncounted.)
type countEndpoint struct {
	base
	rc *rankCounters
}

var _ transport.Extended = (*countEndpoint)(nil)

// msg counts one operation of kind op that is a message to peer carrying
// sent bytes out and received bytes back.
func (e *countEndpoint) msg(op Op, peer int, sent, received int) {
	e.rc.ops[op].Add(1)
	if !hosted(peer, len(e.rc.peers)) {
		return
	}
	pc := &e.rc.peers[peer]
	pc.messages.Add(1)
	if sent != 0 {
		pc.sent.Add(int64(sent))
	}
	if received != 0 {
		pc.received.Add(int64(received))
	}
}

func (e *countEndpoint) Put(ctx context.Context, rank int, off int64, src []byte) error {
	e.msg(OpPut, rank, len(src), 0)
	return e.inner.Put(ctx, rank, off, src)
}

func (e *countEndpoint) Get(ctx context.Context, rank int, off int64, dst []byte) error {
	e.msg(OpGet, rank, 0, len(dst))
	return e.inner.Get(ctx, rank, off, dst)
}

// GetStrided and PutStrided are one message each, of the packed bytes.
func (e *countEndpoint) GetStrided(ctx context.Context, rank int, st transport.Strided, dst []byte) error {
	e.msg(OpGetStrided, rank, 0, len(dst))
	return e.inner.GetStrided(ctx, rank, st, dst)
}

func (e *countEndpoint) PutStrided(ctx context.Context, rank int, st transport.Strided, src []byte) error {
	e.msg(OpPutStrided, rank, len(src), 0)
	return e.inner.PutStrided(ctx, rank, st, src)
}

func (e *countEndpoint) PutAsync(ctx context.Context, rank int, off int64, src []byte) transport.Handle {
	e.msg(OpPutAsync, rank, len(src), 0)
	return e.inner.PutAsync(ctx, rank, off, src)
}

func (e *countEndpoint) GetAsync(ctx context.Context, rank int, off int64, dst []byte) transport.Handle {
	e.msg(OpGetAsync, rank, 0, len(dst))
	return e.inner.GetAsync(ctx, rank, off, dst)
}

func (e *countEndpoint) Fence(ctx context.Context) error {
	e.rc.ops[OpFence].Add(1)
	return e.inner.Fence(ctx)
}

func (e *countEndpoint) FetchAdd(ctx context.Context, rank int, off int64, delta int64) (int64, error) {
	e.msg(OpFetchAdd, rank, 0, 0)
	return e.inner.FetchAdd(ctx, rank, off, delta)
}

func (e *countEndpoint) CompareAndSwap(ctx context.Context, rank int, off int64, old, new int64) (int64, error) {
	e.msg(OpCAS, rank, 0, 0)
	return e.inner.CompareAndSwap(ctx, rank, off, old, new)
}

func (e *countEndpoint) Load(ctx context.Context, rank int, off int64) (int64, error) {
	e.msg(OpLoad, rank, 0, 0)
	return e.inner.Load(ctx, rank, off)
}

func (e *countEndpoint) Notify(ctx context.Context) error {
	e.rc.ops[OpNotify].Add(1)
	return e.inner.Notify(ctx)
}

func (e *countEndpoint) Wait(ctx context.Context) error {
	e.rc.ops[OpWait].Add(1)
	return e.inner.Wait(ctx)
}

func (e *countEndpoint) Barrier(ctx context.Context) error {
	e.rc.ops[OpBarrier].Add(1)
	return e.inner.Barrier(ctx)
}

// countColl counts the native collective calls of one rank and passes them
// on.
type countColl struct {
	e     *countEndpoint
	inner transport.Collectives
}

// native counts one native collective call of kind op that sends sent bytes
// to other ranks and receives recv bytes from them.
func (c *countColl) native(op Op, sent, recv int) {
	rc := c.e.rc
	rc.ops[op].Add(1)
	rc.nativeSent.Add(int64(sent))
	rc.nativeRecv.Add(int64(recv))
}

func (c *countColl) Broadcast(ctx context.Context, root int, buf []byte) error {
	if me, n := c.e.inner.Rank(), c.e.inner.Size(); me == root {
		c.native(OpBroadcast, len(buf)*(n-1), 0)
	} else {
		c.native(OpBroadcast, 0, len(buf))
	}
	return c.inner.Broadcast(ctx, root, buf)
}

func (c *countColl) Allgatherv(ctx context.Context, send, recv []byte, counts, displs []int) error {
	me, n := c.e.inner.Rank(), c.e.inner.Size()
	c.native(OpAllgatherv, len(send)*(n-1), sumOthers(counts, me))
	return c.inner.Allgatherv(ctx, send, recv, counts, displs)
}

func (c *countColl) Alltoallv(ctx context.Context, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int) error {
	me := c.e.inner.Rank()
	c.native(OpAlltoallv, sumOthers(scounts, me), sumOthers(rcounts, me))
	return c.inner.Alltoallv(ctx, send, scounts, sdispls, recv, rcounts, rdispls)
}

// sumOthers is the sum of counts but counts[me].
func sumOthers(counts []int, me int) int {
	n := 0
	for q, c := range counts {
		if q != me {
			n += c
		}
	}
	return n
}
