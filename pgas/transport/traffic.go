package transport

// PeerTraffic counts the one-sided traffic of one rank with one peer. A
// message is one endpoint call naming the peer: a Put or Get (one fragment
// of a bulk transfer), their async forms, or an atomic.
//
// It is the one traffic counter of the module: pgas.Stats.Peers (kept by
// the runtime) and wrap.Counts.Peers (seen by a counting transport) are
// both Traffic, so the two can be compared field by field.
type PeerTraffic struct {
	Messages      int64
	BytesSent     int64 // by puts to the peer
	BytesReceived int64 // by gets from the peer
}

// Add returns the element-wise sum of p and o.
func (p PeerTraffic) Add(o PeerTraffic) PeerTraffic {
	return PeerTraffic{p.Messages + o.Messages, p.BytesSent + o.BytesSent, p.BytesReceived + o.BytesReceived}
}

// Sub returns the element-wise difference p - o: the traffic between two
// snapshots.
func (p PeerTraffic) Sub(o PeerTraffic) PeerTraffic {
	return PeerTraffic{p.Messages - o.Messages, p.BytesSent - o.BytesSent, p.BytesReceived - o.BytesReceived}
}

// Traffic is one rank's traffic with every peer, indexed by peer rank.
type Traffic []PeerTraffic

// Messages is the number of messages to all peers.
func (t Traffic) Messages() int64 {
	var n int64
	for _, p := range t {
		n += p.Messages
	}
	return n
}

// BytesSent is the number of bytes put to all peers.
func (t Traffic) BytesSent() int64 {
	var n int64
	for _, p := range t {
		n += p.BytesSent
	}
	return n
}

// BytesReceived is the number of bytes got from all peers.
func (t Traffic) BytesReceived() int64 {
	var n int64
	for _, p := range t {
		n += p.BytesReceived
	}
	return n
}

// Add adds o into t peer by peer, first growing t to len(o) if it is
// shorter, and returns t.
func (t Traffic) Add(o Traffic) Traffic {
	if len(t) < len(o) {
		t = append(t, make(Traffic, len(o)-len(t))...)
	}
	for i, p := range o {
		t[i] = t[i].Add(p)
	}
	return t
}

// ByNode splits the traffic of rank by node class: with the other ranks
// of rank's node and with ranks of other nodes, where nodes hold
// ranksPerNode consecutive ranks (0 or less: one node holds every rank).
// The cost of the two differs on a cluster; a model prices them apart.
func (t Traffic) ByNode(rank, ranksPerNode int) (sameNode, otherNode PeerTraffic) {
	for peer, p := range t {
		if ranksPerNode <= 0 || peer/ranksPerNode == rank/ranksPerNode {
			sameNode = sameNode.Add(p)
		} else {
			otherNode = otherNode.Add(p)
		}
	}
	return sameNode, otherNode
}
