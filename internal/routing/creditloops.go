package routing

import (
	"math/bits"
	"slices"
)

// Channel is one direction of a link between two switches on one VL:
// the switch, the port it sends out of, and the VL.
type Channel struct {
	PortRef
	VL int
}

// CreditLoops is the channel dependency graph of the routes and its
// cycles. A packet holding a buffer of one channel waits for a buffer of
// the next channel of its route; when these waits can form a cycle, the
// switches can deadlock for want of credits.
type CreditLoops struct {
	Channels int // channels between switches (times the VLs in use)
	Edges    int // dependencies between them
	// VLs is how many VLs the tables put packets on: 1 when no switch
	// had SL2VL tables (every SL on VL 0).
	VLs int
	// PerVL is set when the graph was built per VL: the tables change
	// the VL of some packets on their way, and a channel of a loop is a
	// (port, VL). Otherwise each SL stays on one VL and the loops are
	// those of the graph without VLs, on each VL of CreditLoop.VLs.
	PerVL bool
	// Loops are the strongly connected components of the graph that hold
	// a cycle, in the order of their first channel: every credit loop,
	// not only the first.
	Loops []CreditLoop
}

// CreditLoop is a strongly connected component of the channel dependency
// graph.
type CreditLoop struct {
	Channels []Channel // every channel of the component
	Cycle    []Channel // one cycle through it, each channel waiting on the next, the last on the first
	// VLs are the VLs the loop is on. When the SL2VL tables put each SL
	// on one VL throughout the fabric (as without QoS), every SL's
	// routes make the same loop on its own VL: it is reported once, its
	// channels on the first of VLs.
	VLs []int
}

// creditLoops is the result of the graph.
func (c *cdg) creditLoops() *CreditLoops {
	m := c.sl2vl
	vls := bits.OnesCount16(m.inUse)
	res := &CreditLoops{Channels: len(c.chans) * vls, VLs: vls, PerVL: m.uniform == nil}
	for _, w := range c.succ {
		res.Edges += bits.OnesCount64(w)
	}
	if m.uniform != nil { // one graph, the same on each VL
		res.Edges *= len(m.uniform)
	}
	nodes := len(c.off) - 1
	in, parent := make([]bool, nodes), make([]int32, nodes)
	for _, comp := range c.components() {
		l := CreditLoop{Cycle: c.channels(c.cycle(comp, in, parent))}
		slices.Sort(comp)
		l.Channels = c.channels(comp)
		if m.uniform != nil {
			l.VLs = m.uniform
		} else {
			for _, ch := range l.Channels {
				if !slices.Contains(l.VLs, ch.VL) {
					l.VLs = append(l.VLs, ch.VL)
				}
			}
			slices.Sort(l.VLs)
		}
		res.Loops = append(res.Loops, l)
	}
	return res
}

// cdg is a channel dependency graph. Node u is channel u/vls on VL
// u%vls; its successors are a bit set over the ports and VLs of the
// switch the channel leads to (bit o2*vls+vl2), which keeps the graph
// small and every dependency found again on the next destination cheap.
type cdg struct {
	g      *graph
	vls    int
	chans  []int32 // channel -> the graph's port index
	chanSw []int32 // channel -> its switch
	chanOf []int32 // the graph's port index -> channel, or -1
	// succAt is, by the graph's port index, the first word in succ of
	// the channel on VL 0 (when vls is 1, the only one); words, by
	// switch, how many words a node of a channel into it takes.
	succAt []int32
	words  []int32
	off    []int32 // node -> its first word in succ; len(nodes)+1
	succ   []uint64
	sl2vl  *vlMap
	// Per destination, each switch's out port to another switch (0 for
	// none) and the VLs its out channel carries.
	out    []int32
	vlIn   []uint16
	vlNext []uint8 // the VL of the route's next channel
}

func newCDG(g *graph) *cdg {
	c := &cdg{g: g, chanOf: make([]int32, len(g.link)), out: make([]int32, len(g.nodes))}
	for i := range c.chanOf {
		c.chanOf[i] = -1
	}
	for s := range g.nodes {
		for i := g.base[s] + 1; i < g.base[s+1]; i++ {
			if g.link[i] >= 0 {
				c.chanOf[i] = int32(len(c.chans))
				c.chans = append(c.chans, i)
				c.chanSw = append(c.chanSw, int32(s))
			}
		}
	}
	c.sl2vl = newVLMap(g)
	c.vls = c.sl2vl.vls
	c.vlIn, c.vlNext = make([]uint16, len(g.nodes)), make([]uint8, len(g.nodes))
	c.words = make([]int32, len(g.nodes))
	for s, n := range g.nodes {
		c.words[s] = int32(((n.NumPorts+1)*c.vls + 63) / 64)
	}
	c.off = make([]int32, len(c.chans)*c.vls+1)
	for u := range len(c.chans) * c.vls {
		c.off[u+1] = c.off[u] + c.words[g.link[c.chans[u/c.vls]]]
	}
	c.succ = make([]uint64, c.off[len(c.off)-1])
	c.succAt = make([]int32, len(g.link))
	for i, ch := range c.chanOf {
		if ch >= 0 {
			c.succAt[i] = c.off[int(ch)*c.vls]
		}
	}
	return c
}

// add puts in the dependencies of the routes to the destination whose
// hops r has.
func (c *cdg) add(r *reacher) {
	g, st := c.g, r.st
	if u := c.sl2vl.uniform; u != nil { // one graph for every SL: (S,o) waits on (T,o2)
		if len(u) == 0 {
			return // every SL dropped
		}
		for s := range st {
			to := st[s].next
			if to < 0 || st[to].next < 0 {
				continue
			}
			o2 := uint32(st[to].port - g.base[to])
			c.succ[uint32(c.succAt[st[s].port])+o2/64] |= 1 << (o2 % 64)
		}
		return
	}
	for s := range st {
		c.out[s] = 0
		if st[s].next >= 0 {
			c.out[s] = st[s].port - g.base[s]
		}
	}
	for k := range c.sl2vl.classes {
		c.addClass(k)
	}
}

// addClass puts in the dependencies of the routes in c.out for the
// packets of SL class k.
func (c *cdg) addClass(k int) {
	g, m := c.g, c.sl2vl
	kinds := len(m.classes)
	// The VL each switch's route goes on on at the next switch, and the
	// VLs its out channel carries: those of the packets coming from its
	// own port 0 and end ports, and from the switches that send it
	// theirs.
	for s, o := range c.out {
		if o == 0 {
			continue
		}
		i := g.base[s] + o
		c.vlIn[s] = m.local[int(i)*kinds+k]
		c.vlNext[s] = dropVL
		to := g.link[i]
		if o2 := c.out[to]; o2 != 0 {
			c.vlNext[s] = m.vl(to, int(g.enter[i]), int(o2), k)
		}
	}
	for s, o := range c.out {
		if o == 0 || c.vlNext[s] == dropVL {
			continue
		}
		if to := g.link[g.base[s]+o]; c.out[to] != 0 {
			c.vlIn[to] |= 1 << c.vlNext[s]
		}
	}
	for s, o := range c.out {
		if o == 0 {
			continue
		}
		i := g.base[s] + o
		to := g.link[i]
		o2 := c.out[to]
		if o2 == 0 || c.vlNext[s] == dropVL {
			continue // delivered there, or lost: no next channel
		}
		// The channel's nodes, one per VL, lie side by side in succ.
		first, words := int(c.succAt[i]), int(c.words[to])
		bit := uint(o2)*uint(c.vls) + uint(c.vlNext[s])
		for vls := c.vlIn[s]; vls != 0; vls &= vls - 1 {
			c.succ[first+bits.TrailingZeros16(vls)*words+int(bit/64)] |= 1 << (bit % 64)
		}
	}
}

// successor is node u's successor of bit b.
func (c *cdg) successor(u, b int) int32 {
	to := c.g.link[c.chans[u/c.vls]]
	ch := c.chanOf[c.g.base[to]+int32(b/c.vls)]
	return ch*int32(c.vls) + int32(b%c.vls)
}

// each calls f with every successor of u.
func (c *cdg) each(u int32, f func(v int32)) {
	start, end := c.off[u], c.off[u+1]
	for w := start; w < end; w++ {
		for word := c.succ[w]; word != 0; word &= word - 1 {
			f(c.successor(int(u), int(w-start)*64+bits.TrailingZeros64(word)))
		}
	}
}

// channels names nodes.
func (c *cdg) channels(nodes []int32) []Channel {
	out := make([]Channel, len(nodes))
	for k, u := range nodes {
		ch := int(u) / c.vls
		s := c.chanSw[ch]
		out[k] = Channel{PortRef{c.g.nodes[s], int(c.chans[ch] - c.g.base[s])}, int(u) % c.vls}
	}
	return out
}

// components are the strongly connected components that hold a cycle
// (more than one node, or one node that depends on itself), found by
// Tarjan's algorithm, iteratively: a big fabric's graph is deeper than
// a goroutine's stack should grow.
func (c *cdg) components() [][]int32 {
	n := int32(len(c.off) - 1)
	index := make([]int32, n) // 0: not visited; else the visit order + 1
	low := make([]int32, n)
	onStack := make([]bool, n)
	var stack []int32
	type frame struct {
		u    int32
		w    int32  // the word of succ being read
		rest uint64 // its bits not yet followed
	}
	var frames []frame
	var comps [][]int32
	next := int32(1)
	visit := func(u int32) {
		index[u], low[u] = next, next
		next++
		stack = append(stack, u)
		onStack[u] = true
		frames = append(frames, frame{u: u, w: c.off[u] - 1})
	}
	for root := range n {
		if index[root] != 0 {
			continue
		}
		visit(root)
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			for f.rest == 0 && f.w+1 < c.off[f.u+1] {
				f.w++
				f.rest = c.succ[f.w]
			}
			if f.rest != 0 {
				b := int(f.w-c.off[f.u])*64 + bits.TrailingZeros64(f.rest)
				f.rest &= f.rest - 1
				v := c.successor(int(f.u), b)
				switch {
				case index[v] == 0:
					visit(v)
				case onStack[v]:
					low[f.u] = min(low[f.u], index[v])
				}
				continue
			}
			u := f.u
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].u
				low[p] = min(low[p], low[u])
			}
			if low[u] != index[u] {
				continue
			}
			k := len(stack) - 1
			for stack[k] != u {
				k--
			}
			comp := slices.Clone(stack[k:])
			stack = stack[:k]
			for _, v := range comp {
				onStack[v] = false
			}
			if len(comp) > 1 || c.selfLoop(u) {
				comps = append(comps, comp)
			}
		}
	}
	slices.SortFunc(comps, func(a, b []int32) int { return int(slices.Min(a) - slices.Min(b)) })
	return comps
}

// selfLoop reports whether node u depends on itself.
func (c *cdg) selfLoop(u int32) bool {
	found := false
	c.each(u, func(v int32) { found = found || v == u })
	return found
}

// cycle is a shortest cycle through the component's first node, breadth
// first within the component. in marks the nodes of the component (and
// is cleared again); parent is scratch space, one entry per node.
func (c *cdg) cycle(comp []int32, in []bool, parent []int32) []int32 {
	for _, u := range comp {
		in[u], parent[u] = true, -1
	}
	defer func() {
		for _, u := range comp {
			in[u] = false
		}
	}()
	start := slices.Min(comp)
	queue := []int32{start}
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		closed := false
		c.each(u, func(v int32) {
			switch {
			case closed || !in[v]:
			case v == start:
				closed = true
			case parent[v] < 0:
				parent[v] = u
				queue = append(queue, v)
			}
		})
		if closed {
			path := []int32{u}
			for u != start {
				u = parent[u]
				path = append(path, u)
			}
			slices.Reverse(path)
			return path
		}
	}
	return nil // not reached: every node of a component is on a cycle
}
