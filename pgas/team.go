package pgas

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A team's control block: the same offsets on every rank, used on the
// team's leader (its lowest rank) for the barrier, and on every member for
// allocation results and collective signatures.
const (
	tcCount      = 0   // barrier arrivals (leader)
	tcGen        = 8   // barrier generation (leader)
	tcSlots      = 16  // 2 allocation result slots of 4 words (every member)
	tcSig        = 80  // 2 signature slots of sigBytes (every member)
	sigBytes     = 152 // 8-byte hash + 144 bytes of text
	teamCtlBytes = 384 // >= tcSig + 2*sigBytes, a multiple of 64
	// maxSigText is how much of a call's description CheckSame keeps
	// for its error while the members meet.
	maxSigText = 1024
)

// Team is an ordered subset of the job's ranks that synchronises, allocates
// and (in package coll) runs collectives on its own. Team ids (tids) are
// assigned in increasing rank order. Disjoint teams work at the same time
// without interfering. A Team value belongs to one member's goroutine, like
// its Rank; every member holds its own.
type Team struct {
	r *Rank
	// members are the members' ranks in tid order; nil for the world
	// team, whose member tid is rank tid: a list of every rank on every
	// rank would cost the job memory in the square of its ranks.
	members []int
	size    int
	local   int // members this process hosts (SharedOnce); 0 until asked
	tid     int
	ctl     int64 // offset of the control block
	world   bool
	gen     int64 // barriers passed
	allocs  int64
	sigs    int64
	lineage string
	values  map[any]any
}

// Value returns what SetValue stored under key on this member's handle,
// or nil. Libraries built on teams (package coll) keep per-team state here.
func (t *Team) Value(key any) any { return t.values[key] }

// SetValue stores v under key on this member's handle.
func (t *Team) SetValue(key, v any) {
	if t.values == nil {
		t.values = map[any]any{}
	}
	t.values[key] = v
}

// World returns the team of all ranks. Its barrier is the job's barrier.
func (r *Rank) World() *Team {
	if r.world == nil {
		r.world = &Team{r: r, size: r.n, tid: r.id, ctl: worldCtlOff(r.n), world: true, lineage: "world"}
	}
	return r.world
}

// Split is collective over all ranks: ranks that pass the same color >= 0
// form a team, with tids in increasing rank order; a rank that passes a
// negative color joins no team and gets nil. Different colors give
// disjoint teams that can work concurrently.
func (r *Rank) Split(ctx context.Context, color int) (*Team, error) {
	n := int64(r.n)
	tbl, err := r.AllAlloc(ctx, 8*n+teamCtlBytes)
	if err != nil {
		return nil, err
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(int64(color)))
	if err := r.PutBytes(ctx, 0, tbl.Off+8*int64(r.id), b[:]); err != nil {
		return nil, err
	}
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	colors := make([]byte, 8*n)
	if err := r.GetBytes(ctx, 0, tbl.Off, colors); err != nil {
		return nil, err
	}
	// Every rank has read the table before anyone may reuse it; the control
	// block after it stays allocated for the teams' lifetime.
	if err := r.Barrier(ctx); err != nil {
		return nil, err
	}
	if color < 0 {
		return nil, nil
	}
	var members []int
	for q := range r.n {
		if int64(binary.LittleEndian.Uint64(colors[8*q:])) == int64(color) {
			members = append(members, q)
		}
	}
	return r.newTeam(members, tbl.Off+8*n, fmt.Sprintf("split(%d)", color)), nil
}

// NewTeam is collective over all ranks, which pass the same members list
// (ranks in increasing order, no repeats): members get the team, other
// ranks nil. It panics if members is not a sorted list of distinct ranks.
func (r *Rank) NewTeam(ctx context.Context, members []int) (*Team, error) {
	if len(members) == 0 || !slices.IsSorted(members) || members[0] < 0 || members[len(members)-1] >= r.n {
		panic(fmt.Sprintf("pgas: NewTeam(%v): members must be distinct ranks in [0,%d), in increasing order", members, r.n))
	}
	for i := 1; i < len(members); i++ {
		if members[i] == members[i-1] {
			panic(fmt.Sprintf("pgas: NewTeam(%v): rank %d repeated", members, members[i]))
		}
	}
	ctl, err := r.AllAlloc(ctx, teamCtlBytes)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(members, r.id) {
		return nil, nil
	}
	return r.newTeam(slices.Clone(members), ctl.Off, "team"), nil
}

func (r *Rank) newTeam(members []int, ctl int64, lineage string) *Team {
	t := &Team{r: r, members: members, size: len(members), tid: slices.Index(members, r.id), ctl: ctl, lineage: lineage}
	t.world = len(members) == r.n
	return t
}

// Rank returns the calling member's rank.
func (t *Team) Rank() *Rank { return t.r }

// Size returns the number of members.
func (t *Team) Size() int { return t.size }

// ID returns the calling member's team id.
func (t *Team) ID() int { return t.tid }

// Members returns the members' ranks in tid order (a copy: O(Size) to
// make; RankOf and TeamID answer for one member without it).
func (t *Team) Members() []int {
	if t.members == nil {
		m := make([]int, t.size)
		for i := range m {
			m[i] = i
		}
		return m
	}
	return slices.Clone(t.members)
}

// RankOf returns the rank of team id tid. It panics if tid is out of range.
func (t *Team) RankOf(tid int) int {
	if tid < 0 || tid >= t.size {
		panic(fmt.Sprintf("pgas: team id %d out of range [0,%d)", tid, t.size))
	}
	if t.members == nil {
		return tid
	}
	return t.members[tid]
}

// TeamID returns the team id of rank, or -1 if rank is not a member.
func (t *Team) TeamID(rank int) int {
	if t.members == nil {
		if rank < 0 || rank >= t.size {
			return -1
		}
		return rank
	}
	i, ok := slices.BinarySearch(t.members, rank)
	if !ok {
		return -1
	}
	return i
}

// Nodes returns the number of distinct logical nodes (Rank.NodeOf) of
// the team's members, without a list of them.
func (t *Team) Nodes() int {
	r := t.r
	if t.members == nil {
		return r.Nodes()
	}
	n, last := 0, -1
	for _, m := range t.members { // increasing ranks: nodes do not decrease
		if nd := r.NodeOf(m); nd != last {
			n, last = n+1, nd
		}
	}
	return n
}

// Contains reports whether rank is a member.
func (t *Team) Contains(rank int) bool { return t.TeamID(rank) >= 0 }

// Leader returns the rank of team id 0.
func (t *Team) Leader() int { return t.RankOf(0) }

// IsWorld reports whether the team has every rank of the job.
func (t *Team) IsWorld() bool { return t.world }

// Barrier blocks until every member has called it. It implies a fence. The
// world team uses the job's barrier; other teams a counter and a
// generation word on the leader, updated with atomics, so a team barrier
// never waits for non-members.
func (t *Team) Barrier(ctx context.Context) (err error) {
	r := t.r
	if t.world {
		return r.Barrier(ctx)
	}
	defer r.waiting()(ctx, &err)
	t0 := time.Now()
	defer func() {
		r.stats.Barriers++
		r.stats.BarrierTime += time.Since(t0)
	}()
	if err := r.Fence(ctx); err != nil {
		return err
	}
	lead, size := t.Leader(), int64(t.size)
	t.gen++
	c, err := r.FetchAdd(ctx, lead, t.ctl+tcCount, 1)
	if err != nil {
		return fmt.Errorf("pgas: team barrier: %w", err)
	}
	if c == size-1 {
		if _, err := r.FetchAdd(ctx, lead, t.ctl+tcCount, -size); err != nil {
			return fmt.Errorf("pgas: team barrier: %w", err)
		}
		if _, err := r.FetchAdd(ctx, lead, t.ctl+tcGen, 1); err != nil {
			return fmt.Errorf("pgas: team barrier: %w", err)
		}
		return nil
	}
	var deadline time.Time
	if r.cfg.SyncTimeout > 0 {
		deadline = time.Now().Add(r.cfg.SyncTimeout)
	}
	for spin := 0; ; spin++ {
		g, err := r.AtomicLoad(ctx, lead, t.ctl+tcGen)
		if err != nil {
			return fmt.Errorf("pgas: team barrier: %w", err)
		}
		if g >= t.gen {
			return nil
		}
		if spin&63 == 63 && !deadline.IsZero() && time.Now().After(deadline) {
			return fmt.Errorf("pgas: rank %d: barrier of %s team %v: waited %v for the other members: %w",
				r.id, t.lineage, t.Members(), r.cfg.SyncTimeout, ErrTimeout)
		}
		r.backoff(spin)
	}
}

// AllAlloc is collective over the team: every member passes the same size
// and gets the same symmetric region, zeroed on every member. The region is
// reserved on every rank of the job, as symmetric memory is, but only the
// members' copies are zeroed: an array made over it that spans non-members
// holds whatever those ranks' copies held.
func (t *Team) AllAlloc(ctx context.Context, size int64) (Region, error) {
	r := t.r
	if t.world {
		return r.AllAlloc(ctx, size)
	}
	if size < 0 {
		panic(fmt.Sprintf("pgas: team AllAlloc of %d bytes", size))
	}
	slot := t.ctl + tcSlots + (t.allocs%2)*slotWords*8
	t.allocs++
	if t.tid == 0 {
		off, ever, err := r.symAlloc(ctx, "team AllAlloc", size, false)
		res, err := allocResult(size, off, ever, err)
		if err != nil {
			return Region{}, err
		}
		if err := r.publishSlot(ctx, t, slot, res); err != nil {
			return Region{}, err
		}
	}
	if err := t.Barrier(ctx); err != nil {
		return Region{}, err
	}
	res := r.readSlot(slot)
	if err := slotError("team AllAlloc", res, r.cfg.SegmentBytes); err != nil {
		return Region{}, err
	}
	reg := Region{Off: res[1], Size: size, Owner: -1}
	r.seeSym(res[3])
	r.zeroSym(reg.Off, size)
	if err := t.Barrier(ctx); err != nil {
		return Region{}, err
	}
	return reg, nil
}

// AllFree is collective over the team: after a team barrier the leader
// frees reg.
func (t *Team) AllFree(ctx context.Context, reg Region) error {
	if t.world {
		return t.r.AllFree(ctx, reg)
	}
	if !reg.Symmetric() {
		return fmt.Errorf("pgas: team AllFree of rank %d's local region", reg.Owner)
	}
	if err := t.Barrier(ctx); err != nil {
		return err
	}
	if t.tid == 0 {
		return t.r.symFree(ctx, reg.Off)
	}
	return nil
}

// AllLockAlloc is collective over the team: every member gets the same
// lock, homed on the leader.
func (t *Team) AllLockAlloc(ctx context.Context) (*Lock, error) {
	reg, err := t.AllAlloc(ctx, 16)
	if err != nil {
		return nil, err
	}
	return &Lock{r: t.r, ref: LockRef{Home: t.Leader(), Off: reg.Off}, reg: reg, own: true}, nil
}

// CheckSame is collective over the team: each member passes a description
// of the call it is making (name and single-valued arguments); if a
// member's differs from the leader's, that member gets an error naming
// both. It costs one team barrier and one small get. Package coll calls it
// unless Config.NoCheck is set.
func (t *Team) CheckSame(ctx context.Context, what string) error {
	r := t.r
	slot := t.ctl + tcSig + (t.sigs%2)*sigBytes
	t.sigs++
	var sig [sigBytes]byte
	binary.LittleEndian.PutUint64(sig[:8], fnv64(what))
	copy(sig[8:], what)
	copy(r.seg[slot:slot+sigBytes], sig[:])
	if len(what) > maxSigText {
		// A description of a call whose arguments have an entry per
		// member (counts=[...]) is not held while the members meet: on
		// every member of a large team at once that is memory in the
		// square of its size. The error quotes its beginning.
		what = strings.Clone(what[:maxSigText]) + "..."
	}
	if err := t.Barrier(ctx); err != nil {
		return err
	}
	if t.tid == 0 {
		return nil
	}
	var lead [sigBytes]byte
	if err := r.GetBytes(ctx, t.Leader(), slot, lead[:]); err != nil {
		return err
	}
	if lead != sig {
		text := lead[8:]
		if i := slices.Index(text, 0); i >= 0 {
			text = text[:i]
		} else {
			text = append(slices.Clip(text), "..."...)
		}
		return fmt.Errorf("pgas: collective mismatch in %s team: rank %d called %s, rank %d (the leader) called %s",
			t.lineage, r.id, what, t.Leader(), text)
	}
	return nil
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
