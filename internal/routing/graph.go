package routing

import (
	"cmp"
	"slices"

	"github.com/ibtool/ibtool/internal/discovery"
)

// graph is the fabric as the fabric-wide analyses walk it: the switches
// by a dense index (in node GUID order, so results come out the same
// however the fabric was walked), each port's link as a number, the
// tables as bytes. Built once per analysis: a big fabric's analyses
// follow tens of millions of hops, which cannot afford map lookups.
type graph struct {
	t     *Tables
	nodes []*discovery.Node
	index map[*discovery.Node]int32
	// lft[s] is switch s's table from LID first[s]; nil when not read.
	lft   [][]byte
	first []int
	// failed[s]: switch s's table has unread blocks (only then is an
	// entry of NoPort worth a second look).
	failed []bool
	// The ports of switch s are base[s] .. base[s]+nports: link[i] is
	// the switch index the port leads to, or one of the link* codes;
	// enter[i] the port it enters that switch (or end port) by; end[i]
	// the end port it leads to (linkEnd).
	base  []int32
	link  []int32
	enter []uint8
	end   []*discovery.Port
	// owners is LIDMap.
	owners []*discovery.Port
}

// Link codes of graph.link besides switch indexes.
const (
	linkDown    = -1 // no port, or not Active
	linkUnknown = -2 // Active, the other end not seen
	linkEnd     = -3 // to a CA or router port
)

func newGraph(t *Tables) *graph {
	g := &graph{t: t, index: map[*discovery.Node]int32{}, owners: LIDMap(t.Fabric)}
	for _, n := range t.Fabric.Nodes {
		if n.Type == discovery.NodeSwitch {
			g.nodes = append(g.nodes, n)
		}
	}
	slices.SortFunc(g.nodes, func(a, b *discovery.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	for i, n := range g.nodes {
		g.index[n] = int32(i)
	}
	g.lft = make([][]byte, len(g.nodes))
	g.first = make([]int, len(g.nodes))
	g.failed = make([]bool, len(g.nodes))
	g.base = make([]int32, len(g.nodes)+1)
	for s, n := range g.nodes {
		if sw := t.Switches[n.GUID]; sw != nil && sw.LFT != nil {
			g.lft[s], g.first[s], g.failed[s] = sw.LFT.Ports, sw.LFT.First, len(sw.LFT.Failed) > 0
		}
		g.base[s+1] = g.base[s] + int32(n.NumPorts) + 1
	}
	size := g.base[len(g.nodes)]
	g.link, g.enter, g.end = make([]int32, size), make([]uint8, size), make([]*discovery.Port, size)
	for s, n := range g.nodes {
		for p := 0; p <= n.NumPorts; p++ {
			i := g.base[s] + int32(p)
			port := n.Port(p)
			switch {
			case p == 0 || port == nil || !active(port):
				g.link[i] = linkDown
			case port.Remote == nil:
				g.link[i] = linkUnknown
			case port.Remote.Node.Type == discovery.NodeSwitch:
				g.link[i], g.enter[i] = g.index[port.Remote.Node], uint8(port.Remote.Num)
			default:
				g.link[i], g.enter[i], g.end[i] = linkEnd, uint8(port.Remote.Num), port.Remote
			}
		}
	}
	return g
}

// entry is switch s's entry for lid, and the outcome of reading it:
// Arrived when the route goes on out of the port.
func (g *graph) entry(s int32, lid int) (int, Outcome) {
	out := NoPort
	if i := lid - g.first[s]; g.lft[s] != nil && i >= 0 && i < len(g.lft[s]) {
		out = int(g.lft[s][i])
	}
	switch {
	case g.lft[s] == nil:
		return 0, Unread
	case out == NoPort && g.failed[s] && !g.t.Switches[g.nodes[s].GUID].LFT.Readable(lid):
		return 0, Unread
	case out == NoPort:
		return 0, NoEntry
	case out > g.nodes[s].NumPorts:
		return out, BadPort
	case out == 0:
		return 0, LeadsNowhere
	}
	return out, Arrived
}

// dest is where routes to a LID go: the switch that holds it, or the
// end port and the switch it hangs off.
type dest struct {
	lid    int
	owner  *discovery.Port
	sw     int32 // the destination switch, or the end port's switch
	viaEnd bool  // the LID is an end port's, one link past sw
}

// destinations are the LIDs routes are followed to: every LID of every
// switch, and of every Active CA and router port linked to a switch.
func (g *graph) destinations() []dest {
	var ds []dest
	for lid, p := range g.owners {
		if p == nil {
			continue
		}
		if s, ok := g.index[p.Node]; ok {
			ds = append(ds, dest{lid: lid, owner: p, sw: s})
			continue
		}
		if !active(p) || p.Remote == nil {
			continue
		}
		if s, ok := g.index[p.Remote.Node]; ok {
			ds = append(ds, dest{lid: lid, owner: p, sw: s, viaEnd: true})
		}
	}
	return ds
}

// distances fills dist with the hops from every switch to switch to
// over Active links between switches (breadth first from it, against the
// links' direction); -1 where it cannot be reached. rev is the reversed switch graph (reverse); queue
// is scratch space, returned for the next call.
func (g *graph) distances(to int32, rev [][]int32, dist, queue []int32) []int32 {
	for i := range dist {
		dist[i] = -1
	}
	dist[to] = 0
	queue = append(queue[:0], to)
	for head := 0; head < len(queue); head++ {
		s := queue[head]
		for _, r := range rev[s] {
			if dist[r] < 0 {
				dist[r] = dist[s] + 1
				queue = append(queue, r)
			}
		}
	}
	return queue
}

// reverse lists, for each switch, the switches with a link to it.
func (g *graph) reverse() [][]int32 {
	rev := make([][]int32, len(g.nodes))
	for s := range g.nodes {
		for i := g.base[s] + 1; i < g.base[s+1]; i++ {
			if r := g.link[i]; r >= 0 && !slices.Contains(rev[r], int32(s)) {
				rev[r] = append(rev[r], int32(s))
			}
		}
	}
	return rev
}
