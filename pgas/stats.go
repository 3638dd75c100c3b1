package pgas

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/pgasmr/pgasmr/pgas/transport"
)

// OpKind classifies counted operations.
type OpKind int

// The kinds of counted operations.
const (
	OpGet OpKind = iota
	OpPut
	OpAtomic
	NumOpKinds
)

func (k OpKind) String() string {
	switch k {
	case OpGet:
		return "get"
	case OpPut:
		return "put"
	case OpAtomic:
		return "atomic"
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// PeerTraffic counts one rank's traffic with one peer. A message is one
// transport call (a Get, a Put or a fragment of a bulk transfer, or an
// atomic). It is transport.PeerTraffic, the type wrap.Counting reports in
// too.
type PeerTraffic = transport.PeerTraffic

// Traffic is one rank's traffic with every peer, indexed by peer rank; see
// transport.Traffic.
type Traffic = transport.Traffic

// Stats counts one rank's operations. Local operations are served by the
// fast path (owner == me) and move no message; remote ones go through the
// transport, one count per message.
type Stats struct {
	Rank        int
	Local       [NumOpKinds]int64
	Remote      [NumOpKinds]int64
	LocalBytes  int64   // bytes copied by local gets and puts
	Peers       Traffic // remote traffic, indexed by peer rank
	Barriers    int64   // barriers and waits
	BarrierTime time.Duration
	Fences      int64
	Cache       CacheStats // the remote-reference cache's counters (Config.Cache)
}

func (s *Stats) countLocal(k OpKind, n int) {
	s.Local[k]++
	s.LocalBytes += int64(n)
}

// countRemote counts a remote operation of kind k with peer.
func (r *Rank) countRemote(k OpKind, peer, sent, recv int) {
	r.stats.Remote[k]++
	p := r.peers.at(peer)
	p.Messages++
	p.BytesSent += int64(sent)
	p.BytesReceived += int64(recv)
}

// peerPage is how many peers' counters a peerTable allocates at once.
const peerPage = 16

// peerTable is a rank's traffic with each peer (Stats.Peers), kept in
// pages of peerPage peers made when the rank first exchanges a message
// with one of them: a rank that talks to a few peers of a large job
// (a tree's parent and children) holds a few pages instead of a counter
// for every rank, which over the job is memory in the square of the
// ranks. The last page used is at hand without the map.
type peerTable struct {
	pages    map[int]*[peerPage]PeerTraffic
	lastPage int
	last     *[peerPage]PeerTraffic
}

// at returns peer's counters, made if new.
func (t *peerTable) at(peer int) *PeerTraffic {
	if i := peer / peerPage; t.last != nil && i == t.lastPage {
		return &t.last[peer%peerPage]
	}
	return t.page(peer)
}

func (t *peerTable) page(peer int) *PeerTraffic {
	i := peer / peerPage
	p := t.pages[i]
	if p == nil {
		if t.pages == nil {
			t.pages = map[int]*[peerPage]PeerTraffic{}
		}
		p = new([peerPage]PeerTraffic)
		t.pages[i] = p
	}
	t.lastPage, t.last = i, p
	return &p[peer%peerPage]
}

// dense returns the counters as a Traffic of n peers.
func (t *peerTable) dense(n int) Traffic {
	out := make(Traffic, n)
	for i, p := range t.pages {
		copy(out[i*peerPage:], p[:])
	}
	return out
}

// reset zeroes every counter.
func (t *peerTable) reset() { *t = peerTable{} }

// BytesSent is the sum of bytes put to other ranks.
func (s Stats) BytesSent() int64 { return s.Peers.BytesSent() }

// ByNode splits the rank's remote traffic into what it exchanged with
// the other ranks of its node and with ranks of other nodes, nodes of
// ranksPerNode ranks (Config.RanksPerNode; Traffic.ByNode).
func (s Stats) ByNode(ranksPerNode int) (sameNode, otherNode PeerTraffic) {
	return s.Peers.ByNode(s.Rank, ranksPerNode)
}

// BytesReceived is the sum of bytes got from other ranks.
func (s Stats) BytesReceived() int64 { return s.Peers.BytesReceived() }

// Messages is the number of transport messages this rank issued.
func (s Stats) Messages() int64 { return s.Peers.Messages() }

// Moved returns the bytes that left rank's memory for other ranks (its
// puts and the others' gets from it) and the bytes that reached it (the
// others' puts to it and its gets), from every rank's counters: all[i] is
// rank i's Stats, as GatherStats-style collections give them. A rank's own
// counters say only what it issued; what others did to its memory is in
// theirs.
func Moved(all []Stats, rank int) (sent, recv int64) {
	return moved(all, rank, func(int) bool { return true })
}

// MovedOffNode is Moved restricted to ranks of other nodes than rank's,
// nodes of ranksPerNode ranks (0 or less: one node, nothing moves off
// it): the bytes a cluster's network carries for the rank.
func MovedOffNode(all []Stats, rank, ranksPerNode int) (sent, recv int64) {
	if ranksPerNode <= 0 {
		return 0, 0
	}
	return moved(all, rank, func(peer int) bool { return peer/ranksPerNode != rank/ranksPerNode })
}

// moved is Moved over the peers that counts.
func moved(all []Stats, rank int, counts func(peer int) bool) (sent, recv int64) {
	for j, p := range all[rank].Peers {
		if counts(j) {
			sent += p.BytesSent
			recv += p.BytesReceived
		}
	}
	for j, o := range all {
		if j == rank || rank >= len(o.Peers) || !counts(j) {
			continue
		}
		sent += o.Peers[rank].BytesReceived
		recv += o.Peers[rank].BytesSent
	}
	return sent, recv
}

// Add adds o's counts into s; Peers are added element-wise. Rank is kept.
func (s *Stats) Add(o Stats) {
	for k := range s.Local {
		s.Local[k] += o.Local[k]
		s.Remote[k] += o.Remote[k]
	}
	s.LocalBytes += o.LocalBytes
	s.Peers = s.Peers.Add(o.Peers)
	s.Barriers += o.Barriers
	s.BarrierTime += o.BarrierTime
	s.Fences += o.Fences
	s.Cache.add(o.Cache)
}

// Stats returns a copy of this rank's counters. Its Peers has an entry
// for every rank of the job, made for the call: the rank keeps counters
// only for the peers it has exchanged messages with.
func (r *Rank) Stats() Stats {
	s := r.stats
	s.Peers = r.peers.dense(r.n)
	return s
}

// ResetStats zeroes this rank's counters.
func (r *Rank) ResetStats() {
	r.peers.reset()
	r.stats = Stats{Rank: r.id}
}

// restoreStats sets this rank's counters to s (a Stats of its own).
func (r *Rank) restoreStats(s Stats) {
	r.peers.reset()
	for p, t := range s.Peers {
		if t != (PeerTraffic{}) {
			*r.peers.at(p) = t
		}
	}
	s.Peers = nil
	r.stats = s
}

// encode flattens s (without Rank) into int64 words.
func (s Stats) encode() []int64 {
	w := make([]int64, 0, statsWords(len(s.Peers)))
	w = append(w, s.Local[:]...)
	w = append(w, s.Remote[:]...)
	w = append(w, s.LocalBytes, s.Barriers, int64(s.BarrierTime), s.Fences)
	w = append(w, s.Cache.words()...)
	for _, p := range s.Peers {
		w = append(w, p.Messages, p.BytesSent, p.BytesReceived)
	}
	return w
}

func statsWords(n int) int { return 2*int(NumOpKinds) + 4 + cacheStatsWords + 3*n }

func decodeStats(w []int64, n int) Stats {
	var s Stats
	k := int(NumOpKinds)
	copy(s.Local[:], w[:k])
	copy(s.Remote[:], w[k:2*k])
	w = w[2*k:]
	s.LocalBytes, s.Barriers, s.BarrierTime, s.Fences = w[0], w[1], time.Duration(w[2]), w[3]
	w = w[4:]
	s.Cache = cacheStatsFrom(w)
	w = w[cacheStatsWords:]
	s.Peers = make(Traffic, n)
	for i := range s.Peers {
		s.Peers[i] = PeerTraffic{Messages: w[3*i], BytesSent: w[3*i+1], BytesReceived: w[3*i+2]}
	}
	return s
}

// AllStats is collective: every rank gets every rank's counters as they
// were when it called AllStats, indexed by rank, and their sum. The
// counters are exchanged through shared memory; the exchange itself is not
// counted.
func (r *Rank) AllStats(ctx context.Context) (per []Stats, sum Stats, err error) {
	saved := r.Stats()
	mine := saved.encode()
	words := int64(len(mine))
	reg, err := r.AllAlloc(ctx, words*8)
	if err != nil {
		return nil, Stats{}, err
	}
	for i, v := range mine {
		binary.LittleEndian.PutUint64(r.seg[reg.Off+int64(i)*8:], uint64(v))
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, Stats{}, err
	}
	buf := make([]byte, words*8)
	w := make([]int64, words)
	per = make([]Stats, r.n)
	sum = Stats{Rank: -1, Peers: make(Traffic, r.n)}
	for p := range r.n {
		if err := r.GetBytes(ctx, p, reg.Off, buf); err != nil {
			return nil, Stats{}, err
		}
		for i := range w {
			w[i] = int64(binary.LittleEndian.Uint64(buf[i*8:]))
		}
		per[p] = decodeStats(w, r.n)
		per[p].Rank = p
		sum.Add(per[p])
	}
	if err := r.AllFree(ctx, reg); err != nil {
		return nil, Stats{}, err
	}
	r.restoreStats(saved)
	return per, sum, nil
}
