package pgas

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"
)

// GatherPlan is a persistent irregular gather: built once from the global
// indices a rank needs from a shared array, executed many times. It is the
// condensed and consolidated exchange ("UPCv3") of Lagravière et al.
// (seeds/000 §4.3): the inspector (NewGatherPlan) removes duplicate indices
// (condensing) and tells each owner which of its elements this rank needs;
// the executor (Execute) has every owner pack those elements from its local
// partition and send them to each requester in one put per peer
// (consolidation), then a barrier, then each rank unpacks its receive
// buffer into place. Elements this rank owns are copied locally.
//
// Receive buffers are double-buffered in the requester's local heap, so
// consecutive Executes need only the one barrier each.
type GatherPlan[T any] struct {
	r    *Rank
	lay  Layout
	esz  int64
	nidx int
	iter int64

	// Elements this rank owns: dst[localDst[k]] = local[localSrc[k]].
	localDst []int32
	localSrc []int64

	// Send side, one entry per requester that needs something from me.
	sends []planSend[T]

	// Receive side, one entry per owner I need something from.
	recvs  []planRecv
	recvAt Region // my receive buffers (local heap)
}

type planSend[T any] struct {
	peer int
	src  []int64 // local indices to pack, in the order the peer expects
	off  int64   // byte offset of my buffer pair in the peer's segment
	buf  []T     // pack buffer
}

type planRecv struct {
	peer     int
	glob     []int64 // the unique global indices, in buffer order
	off      int64   // byte offset of this peer's buffer pair in my segment
	n        int     // unique elements from the peer
	startPos []int32 // CSR: positions of unique element u are pos[startPos[u]:startPos[u+1]]
	pos      []int32
}

// Stats about a plan, as the inspector counted them. The OtherNode
// fields are the part of the field before them that crosses a node
// boundary (Config.RanksPerNode): what a cluster's network carries.
type GatherPlanStats struct {
	Indices   int   // len(idx)
	Local     int   // indices this rank owns
	Unique    int   // unique remote elements received per Execute
	RecvPeers int   // ranks this rank receives from
	SendPeers int   // ranks this rank sends to
	SendElems int64 // elements this rank sends per Execute

	UniqueOtherNode    int
	RecvPeersOtherNode int
	SendPeersOtherNode int
	SendElemsOtherNode int64
}

// NewGatherPlan is collective: every rank passes the same array a (its own
// handle) and the global indices it needs (any number, repeats allowed).
// Execute then fills dst[k] with element idx[k] of an array with a's layout.
// The inspector costs two all-to-all rounds of small puts and three
// barriers. It panics if an index is out of range.
func NewGatherPlan[T any](ctx context.Context, a *Array[T], idx []int64) (*GatherPlan[T], error) {
	r := a.r
	if len(idx) > 1<<31-1 {
		return nil, fmt.Errorf("pgas: gather plan of %d indices exceeds 2^31-1", len(idx))
	}
	p := &GatherPlan[T]{r: r, lay: a.lay, esz: a.esz, nidx: len(idx)}

	// Condense: per owner, the sorted unique global indices needed, and for
	// each of them the positions in dst.
	byOwner := make(map[int][]int32) // positions of idx by owner
	for k, g := range idx {
		a.check(g, 1)
		o := a.lay.Owner(g)
		if o == r.id {
			p.localDst = append(p.localDst, int32(k))
			p.localSrc = append(p.localSrc, a.lay.LocalIndex(g))
			continue
		}
		byOwner[o] = append(byOwner[o], int32(k))
	}
	owners := make([]int, 0, len(byOwner))
	for o := range byOwner {
		owners = append(owners, o)
	}
	slices.Sort(owners)
	need := make([][]int64, len(owners)) // unique global indices per owner
	for i, o := range owners {
		pos := byOwner[o]
		slices.SortStableFunc(pos, func(x, y int32) int { return cmpInt(idx[x], idx[y]) })
		rc := planRecv{peer: o}
		var uniq []int64
		for j, k := range pos {
			if j == 0 || idx[k] != idx[pos[j-1]] {
				uniq = append(uniq, idx[k])
				rc.startPos = append(rc.startPos, int32(j))
			}
		}
		rc.startPos = append(rc.startPos, int32(len(pos)))
		rc.pos = pos
		rc.n = len(uniq)
		rc.glob = uniq
		need[i] = uniq
		p.recvs = append(p.recvs, rc)
	}

	// Round 1: tell each owner how many elements I need from it. Word q of
	// rank o's count table holds rank q's count.
	n := int64(r.n)
	tbl, err := r.AllAlloc(ctx, n*8+n*16) // counts, then the directory
	if err != nil {
		return nil, err
	}
	dirOff := tbl.Off + n*8
	var w [16]byte
	for i, o := range owners {
		binary.LittleEndian.PutUint64(w[:8], uint64(len(need[i])))
		if err := r.PutBytes(ctx, o, tbl.Off+8*int64(r.id), w[:8]); err != nil {
			return nil, err
		}
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	cnt := make([]int64, r.n)
	var inboxN, recvN int64
	for q := range r.n {
		cnt[q] = int64(binary.LittleEndian.Uint64(r.seg[tbl.Off+8*int64(q):]))
		inboxN += cnt[q]
	}
	for _, rc := range p.recvs {
		recvN += int64(rc.n)
	}

	// Local buffers: an inbox for the index lists requesters send me, and
	// my double receive buffers. Publish both in the peers' directories:
	// slot x of rank y's directory is written by x only and holds the
	// offset in x's segment where y puts its index list for x (word 0) and
	// where y puts the values x needs from y (word 1).
	inbox, err := r.Alloc(ctx, inboxN*8)
	if err != nil {
		return nil, err
	}
	if p.recvAt, err = r.Alloc(ctx, 2*recvN*p.esz); err != nil {
		return nil, err
	}
	slot := make(map[int][2]int64)
	at := inbox.Off
	for q := range r.n {
		if cnt[q] > 0 {
			s := slot[q]
			s[0] = at
			slot[q] = s
			at += cnt[q] * 8
		}
	}
	at = p.recvAt.Off
	for i := range p.recvs {
		rc := &p.recvs[i]
		rc.off = at
		s := slot[rc.peer]
		s[1] = at
		slot[rc.peer] = s
		at += 2 * int64(rc.n) * p.esz
	}
	h := &Handle{}
	bufs := make([][16]byte, 0, len(slot))
	for y, s := range slot {
		bufs = append(bufs, [16]byte{})
		b := &bufs[len(bufs)-1]
		binary.LittleEndian.PutUint64(b[:8], uint64(s[0]))
		binary.LittleEndian.PutUint64(b[8:], uint64(s[1]))
		r.putBytesAsync(ctx, y, dirOff+16*int64(r.id), b[:], h)
	}
	if err := h.Wait(ctx); err != nil {
		return nil, err
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}

	// Round 2: send each owner the local indices I need, into its inbox.
	lists := make([][]int64, len(owners))
	for i, o := range owners {
		lists[i] = make([]int64, len(need[i]))
		for j, g := range need[i] {
			lists[i][j] = a.lay.LocalIndex(g)
		}
		off := int64(binary.LittleEndian.Uint64(r.seg[dirOff+16*int64(o):]))
		r.putBytesAsync(ctx, o, off, sliceBytes(lists[i], 8), h)
	}
	if err := h.Wait(ctx); err != nil {
		return nil, err
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	localLen := a.lay.LocalLen(r.id)
	for q := range r.n {
		if cnt[q] == 0 {
			continue
		}
		s := planSend[T]{peer: q, src: make([]int64, cnt[q]), buf: make([]T, cnt[q])}
		copy(sliceBytes(s.src, 8), r.seg[slot[q][0]:])
		for _, li := range s.src {
			if li < 0 || li >= localLen {
				return nil, fmt.Errorf("pgas: gather plan: rank %d asked rank %d for local index %d of %d", q, r.id, li, localLen)
			}
		}
		s.off = int64(binary.LittleEndian.Uint64(r.seg[dirOff+16*int64(q)+8:]))
		p.sends = append(p.sends, s)
	}
	if err := r.Free(ctx, inbox); err != nil {
		return nil, err
	}
	if err := r.AllFree(ctx, tbl); err != nil {
		return nil, err
	}
	return p, nil
}

// Stats returns the plan's shape.
func (p *GatherPlan[T]) Stats() GatherPlanStats {
	s := GatherPlanStats{Indices: p.nidx, Local: len(p.localDst), RecvPeers: len(p.recvs), SendPeers: len(p.sends)}
	other := func(peer int) bool { return p.r.NodeOf(peer) != p.r.Node() }
	for _, rc := range p.recvs {
		s.Unique += rc.n
		if other(rc.peer) {
			s.UniqueOtherNode += rc.n
			s.RecvPeersOtherNode++
		}
	}
	for _, sd := range p.sends {
		s.SendElems += int64(len(sd.src))
		if other(sd.peer) {
			s.SendElemsOtherNode += int64(len(sd.src))
			s.SendPeersOtherNode++
		}
	}
	return s
}

// Execute is collective: it sets dst[k] to element idx[k] of src, for the
// idx the plan was built with. src must have the layout of the plan's
// array (it may be another array, such as the other half of a double
// buffer). Every rank sends one message to each peer that needs its data,
// and Execute ends after a barrier, so the values are those src held when
// every rank entered Execute. It panics if len(dst) differs from len(idx)
// or src's layout differs.
func (p *GatherPlan[T]) Execute(ctx context.Context, src *Array[T], dst []T) error {
	if len(dst) != p.nidx {
		panic(fmt.Sprintf("pgas: GatherPlan.Execute: len(dst) = %d, plan has %d indices", len(dst), p.nidx))
	}
	if src.lay != p.lay {
		panic(fmt.Sprintf("pgas: GatherPlan.Execute: array layout %+v differs from the plan's %+v", src.lay, p.lay))
	}
	par, err := p.send(ctx, src)
	if err != nil {
		return err
	}
	local := src.local
	for k, d := range p.localDst {
		dst[d] = local[p.localSrc[k]]
	}
	if err := p.r.Barrier(ctx); err != nil {
		return err
	}
	for i := range p.recvs {
		rc := &p.recvs[i]
		if rc.n == 0 {
			continue
		}
		for u, v := range p.recvBuf(rc, par) {
			for _, d := range rc.pos[rc.startPos[u]:rc.startPos[u+1]] {
				dst[d] = v
			}
		}
	}
	return nil
}

// ExecuteFull is collective, like Execute, but writes into a full-length
// private copy of the array, as the paper's executor does: full[g] = src[g]
// for every index g the plan was built with and for every element this rank
// owns (copied block by block). Elements of full at other indices are left
// alone. It panics if len(full) != src.Len() or src's layout differs.
func (p *GatherPlan[T]) ExecuteFull(ctx context.Context, src *Array[T], full []T) error {
	if int64(len(full)) != p.lay.N {
		panic(fmt.Sprintf("pgas: GatherPlan.ExecuteFull: len(full) = %d, array has %d elements", len(full), p.lay.N))
	}
	if src.lay != p.lay {
		panic(fmt.Sprintf("pgas: GatherPlan.ExecuteFull: array layout %+v differs from the plan's %+v", src.lay, p.lay))
	}
	par, err := p.send(ctx, src)
	if err != nil {
		return err
	}
	for g, blk := range src.MyBlocks() {
		copy(full[g:], blk)
	}
	if err := p.r.Barrier(ctx); err != nil {
		return err
	}
	for i := range p.recvs {
		rc := &p.recvs[i]
		if rc.n == 0 {
			continue
		}
		vals := p.recvBuf(rc, par)
		for u, g := range rc.glob {
			full[g] = vals[u]
		}
	}
	return nil
}

// send packs and puts this rank's contributions and returns the parity of
// the buffers used.
func (p *GatherPlan[T]) send(ctx context.Context, src *Array[T]) (int64, error) {
	par := p.iter & 1
	p.iter++
	local := src.local
	h := &Handle{}
	for i := range p.sends {
		s := &p.sends[i]
		for k, li := range s.src {
			s.buf[k] = local[li]
		}
		p.r.putBytesAsync(ctx, s.peer, s.off+par*int64(len(s.src))*p.esz, sliceBytes(s.buf, p.esz), h)
	}
	return par, h.Wait(ctx)
}

func (p *GatherPlan[T]) recvBuf(rc *planRecv, par int64) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(&p.r.seg[rc.off+par*int64(rc.n)*p.esz])), rc.n)
}

// Free releases the plan's receive buffers. It is not collective, but no
// rank may Execute the plan afterwards.
func (p *GatherPlan[T]) Free(ctx context.Context) error {
	return p.r.Free(ctx, p.recvAt)
}
