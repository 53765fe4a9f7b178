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
	// VLs is how many VLs the channels are told apart by: 1 when no
	// switch had SL2VL tables (every SL on one VL).
	VLs int
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
}

// creditLoops is the result of the graph.
func (c *cdg) creditLoops() *CreditLoops {
	res := &CreditLoops{Channels: len(c.chans) * c.vls, VLs: c.vls}
	for _, w := range c.succ {
		res.Edges += bits.OnesCount64(w)
	}
	nodes := len(c.off) - 1
	in, parent := make([]bool, nodes), make([]int32, nodes)
	for _, comp := range c.components() {
		l := CreditLoop{Cycle: c.channels(c.cycle(comp, in, parent))}
		slices.Sort(comp)
		l.Channels = c.channels(comp)
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
	if c.vls == 1 { // every SL alike: (S,o) waits on (T,o2)
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
		to := g.link[i]
		if o2 := c.out[to]; o2 != 0 {
			c.vlNext[s] = uint8(m.vl(to, int(g.enter[i]), int(o2), k))
		}
	}
	for s, o := range c.out {
		if o == 0 {
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
		if o2 == 0 {
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

// vlMap is the SL2VL tables of the switches as the graph needs them:
// for each class of SLs that every table maps alike, the VL from each
// input port to each output port, a byte each.
type vlMap struct {
	g   *graph
	vls int // 1 + the highest VL any table maps to
	// classes are the SLs of the classes (the lowest of each).
	classes []int
	// tables[at[s]+(k*np+out)*np+in] is switch s's VL for class k (np
	// is its ports and port 0): the input ports of one output side by
	// side, as the routes to one destination read them. at[s] is -1 for
	// a switch without tables (every SL on VL 0); a pair it has no table
	// for maps to VL 0.
	tables []uint8
	at     []int
	// local[i*len(classes)+k] are the VLs of the packets of class k that
	// leave by the port of graph index i coming from its switch's port 0
	// or end ports.
	local []uint16
}

func newVLMap(g *graph) *vlMap {
	m := &vlMap{g: g, vls: 1, classes: []int{0}}
	// The classes: SLs stay together while every table maps them alike
	// (refined table by table; a split is rare).
	var class [16]int // the lowest SL of each SL's class
	any := false
	for _, n := range g.nodes {
		sw := g.t.Switches[n.GUID]
		if sw == nil || sw.SL2VL == nil {
			continue
		}
		for _, vls := range sw.SL2VL.Tables {
			any = true
			for sl := range vls {
				vls[sl] = vlOf(vls[sl])
				m.vls = max(m.vls, int(vls[sl])+1)
			}
			if !refines(&class, &vls) {
				continue
			}
			var next [16]int
			for sl := range next {
				next[sl] = sl
				for low := range sl {
					if class[low] == class[sl] && vls[low] == vls[sl] {
						next[sl] = low
						break
					}
				}
			}
			class = next
		}
	}
	if !any || m.vls == 1 {
		m.vls = 1
		return m
	}
	m.classes = m.classes[:0]
	for sl, low := range class {
		if low == sl {
			m.classes = append(m.classes, sl)
		}
	}
	kinds := len(m.classes)
	m.at, m.local = make([]int, len(g.nodes)), make([]uint16, len(g.link)*kinds)
	for s, n := range g.nodes {
		np := n.NumPorts + 1
		m.at[s] = -1
		if sw := g.t.Switches[n.GUID]; sw != nil && sw.SL2VL != nil && len(sw.SL2VL.Tables) > 0 {
			m.at[s] = len(m.tables)
			m.tables = append(m.tables, make([]uint8, kinds*np*np)...)
			tab := m.tables[m.at[s]:]
			for pair, vls := range sw.SL2VL.Tables {
				if int(pair.In) < np && int(pair.Out) < np {
					for k, sl := range m.classes {
						tab[(k*np+int(pair.Out))*np+int(pair.In)] = vlOf(vls[sl])
					}
				}
			}
		}
		ins := []int{0}
		for in := 1; in < np; in++ {
			if g.link[g.base[s]+int32(in)] == linkEnd {
				ins = append(ins, in)
			}
		}
		for out := 1; out < np; out++ {
			for k := range kinds {
				var mask uint16
				for _, in := range ins {
					mask |= 1 << m.vl(int32(s), in, out, k)
				}
				m.local[(int(g.base[s])+out)*kinds+k] = mask
			}
		}
	}
	return m
}

// vlOf is a table's VL as a channel's: VL15 is management's, which has
// no credits to wait for, counted with VL 0.
func vlOf(vl uint8) uint8 {
	if vl &= 15; vl == 15 {
		return 0
	}
	return vl
}

// refines reports whether vls maps two SLs of one class apart.
func refines(class *[16]int, vls *[16]uint8) bool {
	for sl, low := range class {
		if vls[sl] != vls[low] {
			return true
		}
	}
	return false
}

// vl is switch s's VL for SL class k from in to out.
func (m *vlMap) vl(s int32, in, out, k int) int {
	at := m.at[s]
	if at < 0 {
		return 0
	}
	np := int(m.g.nports[s]) + 1
	return int(m.tables[at+(k*np+out)*np+in])
}
