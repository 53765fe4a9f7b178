package routing

import (
	"bytes"
	"cmp"
	"math/bits"
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
	// lft[s] is switch s's table; nil when not read.
	lft    []*LFT
	nports []int32
	// block caches the entries of every switch for the 64 LIDs of one
	// block, LID-major (blockPorts[(lid%64)*switches+s]): the analyses
	// take one LID at a time across all switches, and the tables' own
	// layout would make each of those reads a cache miss (a 10,000-node
	// fabric's tables are 14 MB).
	block      int
	blockPorts []byte
	unread     []bool   // switch s's entries for the block could not be read
	src        [][]byte // fill's scratch: each switch's entries for the block
	none       []byte   // a block of a table that has no entries (NoPort)
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
	g.lft = make([]*LFT, len(g.nodes))
	g.nports = make([]int32, len(g.nodes))
	g.base = make([]int32, len(g.nodes)+1)
	g.block, g.blockPorts, g.unread = -1, make([]byte, LIDsPerBlock*len(g.nodes)), make([]bool, len(g.nodes))
	for s, n := range g.nodes {
		if sw := t.Switches[n.GUID]; sw != nil {
			g.lft[s] = sw.LFT
		}
		g.nports[s] = int32(n.NumPorts)
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

// row is every switch's entry for lid (NoPort where the table has none);
// until the next call, g.unread says which could not be read.
func (g *graph) row(lid int) []byte {
	if lid/LIDsPerBlock != g.block {
		g.fill(lid / LIDsPerBlock)
	}
	n := len(g.nodes)
	k := lid % LIDsPerBlock
	return g.blockPorts[k*n : (k+1)*n]
}

// classify says what switch s's entry out of its row means: Arrived
// when the route goes on out of that port.
func (g *graph) classify(s int32, e byte) (int, Outcome) {
	out := int(e)
	switch {
	case g.unread[s]:
		return 0, Unread
	case out == NoPort:
		return 0, NoEntry
	case out > int(g.nports[s]):
		return out, BadPort
	case out == 0:
		return 0, LeadsNowhere
	}
	return out, Arrived
}

// fill caches the entries of block b.
func (g *graph) fill(b int) {
	lo := b * LIDsPerBlock
	if g.src == nil {
		g.src = make([][]byte, len(g.lft))
		g.none = bytes.Repeat([]byte{NoPort}, LIDsPerBlock)
	}
	for s, lft := range g.lft {
		g.unread[s] = lft == nil || (len(lft.Failed) > 0 && !lft.Readable(lo))
		g.src[s] = g.none
		if lft == nil {
			continue
		}
		if off := lo - lft.First; off >= 0 && off+LIDsPerBlock <= len(lft.Ports) {
			g.src[s] = lft.Ports[off : off+LIDsPerBlock]
		} else if off < len(lft.Ports) { // a table not aligned on blocks
			e := make([]byte, LIDsPerBlock)
			for k := range e {
				e[k] = byte(lft.Port(lo + k))
			}
			g.src[s] = e
		}
	}
	// LID by LID, every switch in turn: the writes go in order, and the
	// 64-byte pieces read stay in the cache from one LID to the next.
	n := len(g.nodes)
	for k := range LIDsPerBlock {
		row := g.blockPorts[k*n : (k+1)*n]
		for s, e := range g.src {
			row[s] = e[k]
		}
	}
	g.block = b
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

// unreachable is a distance of distances: no way there.
const unreachable = 0xFF

// distances are the hop counts between every two switches over the
// Active links between switches: dist[to*switches+s] is the hops from s
// to to. One breadth-first search from every switch at once, against
// the links' direction, each switch's set of reached searches a bit set:
// a level costs one OR of the sets per link, where a search per switch
// would walk every link once per switch (hundreds of milliseconds on a
// 10,000-node fabric). A distance past 254 hops counts as unreachable
// (directed routes end at 63). The matrix is a byte per pair of
// switches: 1.9 MB for the 1,368 switches of a 10,000-node fabric.
func (g *graph) distances() []uint8 {
	n := len(g.nodes)
	words := (n + 63) / 64
	dist := make([]uint8, n*n)
	for i := range dist {
		dist[i] = unreachable
	}
	seen := make([]uint64, n*words)
	frontier := make([]uint64, n*words)
	next := make([]uint64, n*words)
	for s := range n {
		seen[s*words+s/64] |= 1 << (s % 64)
		frontier[s*words+s/64] |= 1 << (s % 64)
		dist[s*n+s] = 0
	}
	rev := g.reverse()
	for level := 1; level < unreachable; level++ {
		clear(next)
		for s := range n {
			f := frontier[s*words : (s+1)*words]
			if allZero(f) {
				continue
			}
			for _, r := range rev[s] {
				nx := next[int(r)*words : (int(r)+1)*words]
				for w, b := range f {
					nx[w] |= b
				}
			}
		}
		grew := false
		for r := range n {
			for w := range words {
				k := r*words + w
				fresh := next[k] &^ seen[k]
				seen[k] |= fresh
				frontier[k] = fresh
				for ; fresh != 0; fresh &= fresh - 1 {
					to := w*64 + bits.TrailingZeros64(fresh)
					dist[to*n+r] = uint8(level)
					grew = true
				}
			}
		}
		if !grew {
			break
		}
	}
	return dist
}

func allZero(ws []uint64) bool {
	for _, w := range ws {
		if w != 0 {
			return false
		}
	}
	return true
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
