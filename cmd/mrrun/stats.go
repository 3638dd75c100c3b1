package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
)

// statsJSON is the --stats-format json shape.
type statsJSON struct {
	Transport    string          `json:"transport"`
	Ranks        int             `json:"ranks"`
	RanksPerNode int             `json:"ranks_per_node"`
	Phases       phasesJSON      `json:"phases_s"`
	WallS        float64         `json:"wall_s"`
	PerRank      []rankStatsJSON `json:"per_rank"`
	// The effective memory limit of the root's process (see memlimit).
	MemoryLimit      string `json:"memory_limit,omitempty"`
	MemoryLimitBytes int64  `json:"memory_limit_bytes,omitempty"`
	// The job's memory budget for its pairs (--memory), and where it
	// comes from; 0 is no bound.
	MemoryBudgetBytes int64  `json:"memory_budget_bytes"`
	MemoryBudget      string `json:"memory_budget"`
	// How many of a process's ranks map at once (pgas.Rank.TakeTurn);
	// 0: all of them.
	Turns int `json:"turns"`
	// The processor time the job's process used over wall_s (inproc
	// only: every rank's), and what the stats say of the ranks' parallel
	// speed-up (see parallelNotes).
	ProcessCPUS float64  `json:"process_cpu_s,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// phasesJSON are the phase times of the slowest rank in each phase, in
// seconds.
type phasesJSON struct {
	Map      float64 `json:"map"`
	Combine  float64 `json:"combine"`
	Node     float64 `json:"node"` // node-level combining (reduce.Options.Node)
	Exchange float64 `json:"exchange"`
	Reduce   float64 `json:"reduce"`
}

type rankStatsJSON struct {
	Rank         int   `json:"rank"`
	PairsEmitted int64 `json:"pairs_emitted"`
	PairsMoved   int64 `json:"pairs_moved"`
	NodePairs    int64 `json:"node_pairs"`      // folded into the node's table
	NodeOverflow int64 `json:"node_overflow"`   // the node's table had no room for
	Rounds       int64 `json:"exchange_rounds"` // of a bounded exchange; 0: one exchange
	SpillFiles   int64 `json:"spill_files"`     // written under --memory
	SpillBytes   int64 `json:"spill_bytes"`

	BytesSent     int64 `json:"bytes_sent"`
	BytesReceived int64 `json:"bytes_received"`
	// The part of them that crossed a node boundary (several logical
	// nodes only, --ranks-per-node): what a cluster's network carries.
	BytesSentOffNode     int64 `json:"bytes_sent_off_node,omitempty"`
	BytesReceivedOffNode int64 `json:"bytes_received_off_node,omitempty"`
	Messages             int64 `json:"messages"`
	// The remote-reference cache's element accesses (--cache), when it
	// served any.
	CacheHits   int64      `json:"cache_hits,omitempty"`
	CacheMisses int64      `json:"cache_misses,omitempty"`
	PhasesS     phasesJSON `json:"phases_s"`
}

func phases(r mr.JobStats) phasesJSON {
	return phasesJSON{Map: r.Map.Seconds(), Combine: r.Reduce.Combine.Seconds(), Node: r.Reduce.Node.Seconds(), Exchange: r.Reduce.Exchange.Seconds(), Reduce: r.ReduceTime().Seconds()}
}

// toJSON builds the JSON form of s. Bytes are the runtime's counted
// remote traffic of the rank (every put, get and atomic to another rank),
// pairs the reduce stage's.
func (s jobStats) toJSON() statsJSON {
	out := statsJSON{Transport: s.Transport, Ranks: s.Ranks, RanksPerNode: s.RanksPerNode, WallS: s.Wall.Seconds(),
		PerRank: make([]rankStatsJSON, len(s.PerRank))}
	if out.RanksPerNode == 0 {
		out.RanksPerNode = s.Ranks
	}
	out.MemoryLimit, out.MemoryLimitBytes = memoryLimit()
	out.MemoryBudgetBytes, out.MemoryBudget = s.MemoryBytes, s.MemoryFrom
	out.Turns = s.Turns
	out.ProcessCPUS = s.CPU.Seconds()
	runtime := make([]pgas.Stats, len(s.PerRank))
	for i, r := range s.PerRank {
		runtime[i] = r.Runtime
	}
	for i, r := range s.PerRank {
		p := phases(r)
		out.Phases.Map = max(out.Phases.Map, p.Map)
		out.Phases.Combine = max(out.Phases.Combine, p.Combine)
		out.Phases.Node = max(out.Phases.Node, p.Node)
		out.Phases.Exchange = max(out.Phases.Exchange, p.Exchange)
		out.Phases.Reduce = max(out.Phases.Reduce, p.Reduce)
		sent, recv := pgas.Moved(runtime, i)
		out.PerRank[i] = rankStatsJSON{Rank: i, PairsEmitted: r.Reduce.PairsEmitted, PairsMoved: r.Reduce.PairsMoved,
			NodePairs: r.Reduce.NodePairs, NodeOverflow: r.Reduce.NodeOverflow,
			Rounds: r.Reduce.Rounds, SpillFiles: r.Reduce.SpillFiles, SpillBytes: r.Reduce.SpillBytes,
			BytesSent: sent, BytesReceived: recv, Messages: r.Runtime.Messages(), PhasesS: p,
			CacheHits: r.Runtime.Cache.Hits, CacheMisses: r.Runtime.Cache.Misses}
		if out.RanksPerNode < s.Ranks {
			pr := &out.PerRank[i]
			pr.BytesSentOffNode, pr.BytesReceivedOffNode = pgas.MovedOffNode(runtime, i, out.RanksPerNode)
		}
	}
	out.Notes = parallelNotes(s, out.Phases.Map)
	return out
}

// parallelNotes says when the ranks of a job could not be faster than
// fewer: the map, the part that ranks share, was less than half of the
// job (the rest, set-up, exchange and reduce, does not shrink with more
// ranks); or the process kept fewer processors busy than it had ranks to
// run at once (the machine ran them one after the other, or its
// processors share the work of one: a rank then maps no faster than
// alone).
func parallelNotes(s jobStats, mapS float64) []string {
	if s.Ranks < 2 || s.Wall <= 0 {
		return nil
	}
	var notes []string
	wall := s.Wall.Seconds()
	if mapS < wall/2 {
		notes = append(notes, fmt.Sprintf("little work a rank: the map took %s of the job's %s; the rest is set-up, exchange and reduce, which more ranks do not shorten: fewer ranks would be about as fast",
			round(mapS), round(wall)))
	}
	if at := min(s.Ranks, max(s.Procs, 1)); s.CPU > 0 && at >= 2 {
		if busy := s.CPU.Seconds() / wall; busy < 0.6*float64(at) {
			notes = append(notes, fmt.Sprintf("no parallel speed-up from this machine: the process kept %.1f processors busy on average (%s of processor time over %s), where %d ranks could run at once: fewer ranks would be about as fast",
				busy, round(s.CPU.Seconds()), round(wall), at))
		}
	}
	return notes
}

// round prints seconds as a duration rounded to the microsecond.
func round(v float64) string {
	return time.Duration(v * float64(time.Second)).Round(time.Microsecond).String()
}

// writeStats prints s as a table or as JSON.
func writeStats(w io.Writer, s jobStats, format string) error {
	j := s.toJSON()
	if format == "json" {
		b, err := json.MarshalIndent(j, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	sec := round
	fmt.Fprintf(w, "stats: transport %s, %d ranks, %d per node, wall %s\n", j.Transport, j.Ranks, j.RanksPerNode, sec(j.WallS))
	fmt.Fprintf(w, "phases (slowest rank): map %s, combine %s, node %s, exchange %s, reduce %s\n",
		sec(j.Phases.Map), sec(j.Phases.Combine), sec(j.Phases.Node), sec(j.Phases.Exchange), sec(j.Phases.Reduce))
	if j.ProcessCPUS > 0 {
		fmt.Fprintf(w, "processor time: %s over the job's %s (%.1f processors busy on average)\n", sec(j.ProcessCPUS), sec(j.WallS), j.ProcessCPUS/j.WallS)
	}
	for _, n := range j.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if j.MemoryLimit != "" {
		fmt.Fprintf(w, "memory limit: %s\n", j.MemoryLimit)
	}
	spilled, cached := false, false
	for _, r := range j.PerRank {
		spilled = spilled || r.SpillFiles > 0 || r.Rounds > 0
		cached = cached || r.CacheHits+r.CacheMisses > 0
	}
	if j.MemoryBudgetBytes > 0 {
		fmt.Fprintf(w, "memory budget: %s (%s), %s a rank\n", sizeString(j.MemoryBudgetBytes), j.MemoryBudget, sizeString(j.MemoryBudgetBytes/int64(max(min(j.RanksPerNode, j.Ranks), 1))))
	} else {
		fmt.Fprintf(w, "memory budget: none (%s)\n", j.MemoryBudget)
	}
	if j.Turns > 0 {
		fmt.Fprintf(w, "turns: %d (the ranks of a process that map at once: it hosts more ranks than processors)\n", j.Turns)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	nodes := j.RanksPerNode < j.Ranks
	head := "rank\tpairs emitted\tnode pairs\tpairs moved\tbytes sent\tbytes received\tmessages\tmap\tnode\texchange\t"
	if nodes {
		head += "sent off node\treceived off node\t"
	}
	if spilled {
		head += "rounds\tspilled\t"
	}
	if cached {
		head += "cache hits\tmisses\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range j.PerRank {
		node := fmt.Sprint(r.NodePairs)
		if r.NodeOverflow > 0 {
			node += fmt.Sprintf(" (+%d over)", r.NodeOverflow)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t", r.Rank, r.PairsEmitted, node, r.PairsMoved, r.BytesSent, r.BytesReceived,
			r.Messages, sec(r.PhasesS.Map), sec(r.PhasesS.Node), sec(r.PhasesS.Exchange))
		if nodes {
			fmt.Fprintf(tw, "%d\t%d\t", r.BytesSentOffNode, r.BytesReceivedOffNode)
		}
		if spilled {
			fmt.Fprintf(tw, "%d\t%d files, %s\t", r.Rounds, r.SpillFiles, sizeString(r.SpillBytes))
		}
		if cached {
			fmt.Fprintf(tw, "%d\t%d\t", r.CacheHits, r.CacheMisses)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
