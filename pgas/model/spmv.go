package model

import (
	"fmt"
	"slices"
	"strings"
)

// Strategy is one of the SpMV communication strategies of seeds/000 §4.
type Strategy int

// The strategies the models predict, in the paper's order.
const (
	// V1 is UPCv1 (Listing 3): own blocks privatised, x[J[k]] read element
	// by element. Eqs. 10 and 16.
	V1 Strategy = iota + 1
	// V2 is UPCv2 (Listing 4): every needed block of x fetched whole into a
	// private copy. Eqs. 11 and 17.
	V2
	// V3 is UPCv3 (Listing 5): condensed and consolidated, one message per
	// communicating pair, pack, put, barrier, copy, unpack. Eqs. 12-15 and
	// 18.
	V3
)

// Strategies lists V1, V2 and V3.
var Strategies = []Strategy{V1, V2, V3}

func (s Strategy) String() string {
	switch s {
	case V1:
		return "v1"
	case V2:
		return "v2"
	case V3:
		return "v3"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// Classes splits a count by node class: Local is with ranks on the same
// node (other than the rank itself, unless a field says otherwise), Remote
// with ranks on other nodes (seeds/000 §5.2.1).
type Classes struct {
	Local  int64 `json:"local"`
	Remote int64 `json:"remote"`
}

// Total is Local + Remote.
func (c Classes) Total() int64 { return c.Local + c.Remote }

// RankCounts are one rank's counts from the inspector: what the rank
// computes and what each strategy moves for it in one iteration
// (seeds/000 §5.4, "computation-specific information"). Inspect and
// InspectAll compute them from the matrix's column indices.
type RankCounts struct {
	Rank int `json:"rank"`
	Node int `json:"node"`

	// Rows is the number of rows of y the rank computes and the number of
	// its own elements of x it copies in v3: B_thread^comp * BLOCKSIZE in
	// eqs. 7 and 14. Inspect counts a short last block at its length.
	Rows int64 `json:"rows"`

	// Indv counts v1's individual accesses x[J[k]] to elements owned by
	// another rank, every occurrence: C^local,indv and C^remote,indv (eq.
	// 10).
	Indv Classes `json:"indv"`

	// Blocks counts v2's needed blocks of x: B^local (the rank's own blocks
	// included, as in the paper) and B^remote (eq. 11). Each is one bulk
	// transfer.
	Blocks Classes `json:"blocks"`
	// OwnBlocks is how many of Blocks.Local are the rank's own: they are
	// copied without a message, so MsgLocal is not charged for them.
	OwnBlocks int64 `json:"own_blocks"`
	// BlockElems is the number of elements in those blocks: BLOCKSIZE per
	// block in eq. 11. Inspect counts a short last block at its length,
	// which is what the paper's Table 4 does (TestPaperTable4).
	BlockElems Classes `json:"block_elems"`

	// Send counts v3's outgoing values, S^local,out and S^remote,out (eqs.
	// 12, 13): every unique element some other rank needs from this one,
	// once per requester.
	Send Classes `json:"send"`
	// SendMsgs counts v3's outgoing messages, one per requester:
	// Remote is C^remote,out (eq. 13).
	SendMsgs Classes `json:"send_msgs"`
	// Recv counts v3's incoming values, S^local,in and S^remote,in (eq.
	// 15): the unique elements of x this rank needs from other ranks.
	Recv Classes `json:"recv"`
}

// Problem is the input of the SpMV models: the matrix's shape and every
// rank's counts.
type Problem struct {
	// RNZ is r_nz, the off-diagonal entries per row (eq. 6).
	RNZ int `json:"rnz"`
	// ValueBytes is sizeof(double) and IndexBytes sizeof(int) in eqs. 6,
	// 12 and 15: 8 and 4 in the paper; internal/spmv has 8-byte indices.
	ValueBytes int `json:"value_bytes"`
	IndexBytes int `json:"index_bytes"`
	// StepBarriers is the number of barriers per iteration outside v3's
	// exchange (the x/y swap's), priced at Params.Barrier. The paper
	// prices none.
	StepBarriers int `json:"step_barriers"`
	// Ranks holds every rank's counts, indexed by rank.
	Ranks []RankCounts `json:"ranks"`
}

// Dmin is D_min^comp (eq. 6): the bytes moved between memory and the last
// level cache per row, r_nz*(sizeof(double)+sizeof(int)) +
// 3*sizeof(double).
func (pr Problem) Dmin() int64 {
	return int64(pr.RNZ)*int64(pr.ValueBytes+pr.IndexBytes) + 3*int64(pr.ValueBytes)
}

// Validate reports every problem with pr, joined into one error, or nil.
func (pr Problem) Validate() error {
	var errs []string
	if pr.RNZ < 0 || pr.ValueBytes <= 0 || pr.IndexBytes <= 0 || pr.StepBarriers < 0 {
		errs = append(errs, fmt.Sprintf("RNZ=%d ValueBytes=%d IndexBytes=%d StepBarriers=%d: want RNZ, StepBarriers >= 0 and sizes > 0",
			pr.RNZ, pr.ValueBytes, pr.IndexBytes, pr.StepBarriers))
	}
	if len(pr.Ranks) == 0 {
		errs = append(errs, "no ranks")
	}
	for i, c := range pr.Ranks {
		if c.Rank != i {
			errs = append(errs, fmt.Sprintf("Ranks[%d].Rank = %d", i, c.Rank))
		}
		for _, v := range []int64{c.Rows, c.Indv.Local, c.Indv.Remote, c.Blocks.Local, c.Blocks.Remote, c.OwnBlocks,
			c.BlockElems.Local, c.BlockElems.Remote, c.Send.Local, c.Send.Remote, c.SendMsgs.Local, c.SendMsgs.Remote,
			c.Recv.Local, c.Recv.Remote, int64(c.Node)} {
			if v < 0 {
				errs = append(errs, fmt.Sprintf("rank %d has a negative count: %+v", i, c))
				break
			}
		}
		if c.OwnBlocks > c.Blocks.Local {
			errs = append(errs, fmt.Sprintf("rank %d: OwnBlocks %d > Blocks.Local %d", i, c.OwnBlocks, c.Blocks.Local))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("model: invalid problem: %s", strings.Join(errs, "; "))
}

// Terms are the parts of one predicted time, in seconds per iteration.
// Which are set depends on the strategy: Comp and Comm for v1 and v2
// (Comm is v2's node-level eq. 11), Comp, Pack, Memput (node level, eq.
// 13), Copy and Unpack for v3; Sync is the priced barriers.
type Terms struct {
	Comp   float64 `json:"comp"`
	Comm   float64 `json:"comm,omitempty"`
	Pack   float64 `json:"pack,omitempty"`
	Memput float64 `json:"memput,omitempty"`
	Copy   float64 `json:"copy,omitempty"`
	Unpack float64 `json:"unpack,omitempty"`
	Sync   float64 `json:"sync,omitempty"`
}

// Sum is the sum of the terms.
func (t Terms) Sum() float64 {
	return t.Comp + t.Comm + t.Pack + t.Memput + t.Copy + t.Unpack + t.Sync
}

// Prediction is a predicted time per iteration of one strategy.
type Prediction struct {
	Strategy Strategy `json:"strategy"`
	// Total is the predicted time in seconds per iteration: eq. 16, 17 or
	// 18, plus the priced barriers.
	Total float64 `json:"total"`
	// Terms are the terms that add up to Total: those of the slowest rank
	// (v1), of the slowest node (v2), or of the slowest node before the
	// barrier and the slowest rank after it (v3).
	Terms Terms `json:"terms"`
	// Rank and Node are the slowest rank and node: v1 sets Rank, v2 Node
	// (Rank is the rank with the longest Comp on it), v3 both (Node before
	// the barrier, Rank after).
	Rank int `json:"rank"`
	Node int `json:"node"`
	// PerRank are every rank's terms, with node-level terms (v2's Comm,
	// v3's Memput) those of the rank's node, as in seeds/000 Figure 1.
	PerRank []Terms `json:"per_rank"`
}

// Predict returns the prediction of strategy s. Like PredictV1, PredictV2
// and PredictV3 it is a pure function, which assumes p.Validate() and
// pr.Validate() return nil. It panics if s is not V1, V2 or V3.
func Predict(p Params, pr Problem, s Strategy) Prediction {
	switch s {
	case V1:
		return PredictV1(p, pr)
	case V2:
		return PredictV2(p, pr)
	case V3:
		return PredictV3(p, pr)
	}
	panic(fmt.Sprintf("model: Predict: unknown strategy %d", int(s)))
}

// CompTime is T_thread^comp (eq. 7): Rows * D_min / W_priv.
func CompTime(p Params, pr Problem, c RankCounts) float64 {
	return div(float64(c.Rows)*float64(pr.Dmin()), p.WPriv)
}

func (pr Problem) sync(p Params, barriers int) float64 {
	return times(int64(barriers), p.Barrier)
}

// PredictV1 is UPCv1's time (eqs. 10 and 16):
//
//	T_comm(t) = C^local,indv(t) * T_indv^local + C^remote,indv(t) * τ     (10)
//	T_total   = max_t ( T_comp(t) + T_comm(t) )                           (16)
//
// with T_indv^local = CL/W_priv (eq. 9) unless Params.TauLocal is set, plus
// StepBarriers barriers.
func PredictV1(p Params, pr Problem) Prediction {
	tl := p.tauLocal()
	return predictV1(p, pr, func(_ int, c RankCounts) float64 {
		return times(c.Indv.Local, tl) + times(c.Indv.Remote, p.Tau) // eq. 10
	})
}

// predictV1 is eq. 16 with the cost of a rank's reads of other ranks'
// elements given by remote: T_comp, the reads of its own elements through
// the runtime (Params.TauOwn; free in the paper), the priced barriers.
func predictV1(p Params, pr Problem, remote func(i int, c RankCounts) float64) Prediction {
	pd := Prediction{Strategy: V1, PerRank: make([]Terms, len(pr.Ranks))}
	sync := pr.sync(p, pr.StepBarriers)
	for i, c := range pr.Ranks {
		own := max(c.Rows*int64(pr.RNZ)-c.Indv.Local-c.Indv.Remote, 0)
		t := Terms{Comp: CompTime(p, pr, c), Comm: remote(i, c) + times(own, p.TauOwn), Sync: sync}
		pd.PerRank[i] = t
		if s := t.Sum(); i == 0 || s > pd.Total { // eq. 16
			pd.Total, pd.Terms, pd.Rank, pd.Node = s, t, i, c.Node
		}
	}
	return pd
}

// CacheCounts are one rank's counts of v1 run with the remote-reference
// cache on (pgas.Config.Cache), over one iteration: what seeds/001 §7.2
// reconciles its prediction with, taken from the runtime's counters.
type CacheCounts struct {
	// Hits are the rank's accesses to other ranks' elements that the
	// cache served (pgas.CacheStats.Hits).
	Hits int64 `json:"hits"`
	// Fetches are the lines it loaded from ranks of its own node (Local)
	// and of other nodes (Remote), and FetchBytes their bytes.
	Fetches    Classes `json:"fetches"`
	FetchBytes Classes `json:"fetch_bytes"`
}

// PredictV1Cache is v1's time with the remote-reference cache, after
// seeds/001 §7.2: the accesses the cache served leave the remote counts
// and cost TauHit each (a look-up in the rank's own memory; TauOwn if
// not measured); each miss costs the
// transfer of one line, as a block of eq. 11 does: MsgLocal +
// 2*bytes/W_local from a rank of the node, MsgRemote (τ) + bytes/W_rem
// from another node. cache holds every rank's counts, indexed like
// pr.Ranks. Comm holds the accesses; the rest is as PredictV1.
func PredictV1Cache(p Params, pr Problem, cache []CacheCounts) Prediction {
	return predictV1(p, pr, func(i int, _ RankCounts) float64 {
		cc := cache[i]
		return times(cc.Hits, p.tauHit()) +
			times(cc.Fetches.Local, p.MsgLocal) + div(2*float64(cc.FetchBytes.Local), p.wLocal()) +
			times(cc.Fetches.Remote, p.msgRemote()) + div(float64(cc.FetchBytes.Remote), p.WRem)
	})
}

// nodes groups rank indices by node, in node order.
func (pr Problem) nodes() [][]int {
	by := map[int][]int{}
	var ids []int
	for i, c := range pr.Ranks {
		if _, ok := by[c.Node]; !ok {
			ids = append(ids, c.Node)
		}
		by[c.Node] = append(by[c.Node], i)
	}
	slices.Sort(ids)
	out := make([][]int, len(ids))
	for k, id := range ids {
		out[k] = by[id]
	}
	return out
}

// PredictV2 is UPCv2's time (eqs. 11 and 17):
//
//	T_comm(node) = max_{t in node} 2 * B^local(t)*BLOCKSIZE*8 / W_local
//	             + Σ_{t in node} B^remote(t) * (τ + BLOCKSIZE*8 / W_rem)       (11)
//	T_total      = max_node ( max_{t in node} T_comp(t) + T_comm(node) )       (17)
//
// with B*BLOCKSIZE taken from RankCounts.BlockElems, W_local = W_priv unless
// Params.WLocal is set, τ replaced by MsgRemote if set, and MsgLocal added
// per intra-node block from another rank; plus StepBarriers barriers.
func PredictV2(p Params, pr Problem) Prediction {
	pd := Prediction{Strategy: V2, PerRank: make([]Terms, len(pr.Ranks))}
	sync := pr.sync(p, pr.StepBarriers)
	vb := float64(pr.ValueBytes)
	wl, mr := p.wLocal(), p.msgRemote()
	for k, ranks := range pr.nodes() {
		var local, remote, comp float64
		crank := ranks[0]
		for _, i := range ranks {
			c := pr.Ranks[i]
			l := div(2*float64(c.BlockElems.Local)*vb, wl) + times(c.Blocks.Local-c.OwnBlocks, p.MsgLocal)
			local = max(local, l)
			remote += times(c.Blocks.Remote, mr) + div(float64(c.BlockElems.Remote)*vb, p.WRem)
			if t := CompTime(p, pr, c); t > comp {
				comp, crank = t, i
			}
		}
		comm := local + remote // eq. 11
		for _, i := range ranks {
			pd.PerRank[i] = Terms{Comp: CompTime(p, pr, pr.Ranks[i]), Comm: comm, Sync: sync}
		}
		t := Terms{Comp: comp, Comm: comm, Sync: sync}
		if s := t.Sum(); k == 0 || s > pd.Total { // eq. 17
			pd.Total, pd.Terms, pd.Rank, pd.Node = s, t, crank, pr.Ranks[crank].Node
		}
	}
	return pd
}

// PredictV3 is UPCv3's time (eqs. 12-15 and 18):
//
//	T_pack(t)      = (S^local,out + S^remote,out) * (2*8 + 4) / W_priv            (12)
//	T_memput(node) = max_{t in node} 2 * S^local,out(t) * 8 / W_local
//	               + Σ_{t in node} ( C^remote,out(t) * τ + S^remote,out(t)*8 / W_rem ) (13)
//	T_copy(t)      = 2 * B^comp * BLOCKSIZE * 8 / W_priv                          (14)
//	T_unpack(t)    = (S^local,in + S^remote,in) * (8 + 4 + CL) / W_priv           (15)
//	T_total        = max_node ( max_{t in node} T_pack(t) + T_memput(node) )
//	               + max_t ( T_copy(t) + T_unpack(t) + T_comp(t) )                (18)
//
// with 8 and 4 the Problem's ValueBytes and IndexBytes, W_local = W_priv
// unless Params.WLocal is set, τ replaced by MsgRemote if set, MsgLocal
// added per intra-node message; plus the exchange's barrier and
// StepBarriers barriers.
func PredictV3(p Params, pr Problem) Prediction {
	pd := Prediction{Strategy: V3, PerRank: make([]Terms, len(pr.Ranks))}
	vb, ib := float64(pr.ValueBytes), float64(pr.IndexBytes)
	wl, mr := p.wLocal(), p.msgRemote()
	pack := func(c RankCounts) float64 { // eq. 12
		return div(float64(c.Send.Total())*(2*vb+ib), p.WPriv)
	}
	var before float64
	var bterms Terms
	for k, ranks := range pr.nodes() {
		var maxPack, local, remote float64
		for _, i := range ranks {
			c := pr.Ranks[i]
			maxPack = max(maxPack, pack(c))
			local = max(local, div(2*float64(c.Send.Local)*vb, wl)+times(c.SendMsgs.Local, p.MsgLocal))
			remote += times(c.SendMsgs.Remote, mr) + div(float64(c.Send.Remote)*vb, p.WRem)
		}
		memput := local + remote // eq. 13
		for _, i := range ranks {
			pd.PerRank[i].Pack = pack(pr.Ranks[i])
			pd.PerRank[i].Memput = memput
		}
		if s := maxPack + memput; k == 0 || s > before {
			before = s
			bterms = Terms{Pack: maxPack, Memput: memput}
			pd.Node = pr.Ranks[ranks[0]].Node
		}
	}
	var after float64
	for i, c := range pr.Ranks {
		t := &pd.PerRank[i]
		t.Copy = div(2*float64(c.Rows)*vb, p.WPriv)                                   // eq. 14
		t.Unpack = div(float64(c.Recv.Total())*(vb+ib+float64(p.CacheLine)), p.WPriv) // eq. 15
		t.Comp = CompTime(p, pr, c)
		t.Sync = pr.sync(p, 1+pr.StepBarriers)
		if s := t.Copy + t.Unpack + t.Comp; i == 0 || s > after {
			after = s
			bterms.Copy, bterms.Unpack, bterms.Comp = t.Copy, t.Unpack, t.Comp
			pd.Rank = i
		}
	}
	bterms.Sync = pr.sync(p, 1+pr.StepBarriers)
	pd.Terms = bterms
	pd.Total = before + after + bterms.Sync // eq. 18
	return pd
}
