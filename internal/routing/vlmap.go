package routing

import (
	"math/bits"
	"slices"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// The VLs of the channel dependency graph, from the switches' SL2VL
// tables (IBA 14.2.5.8). A packet keeps its SL end to end; each switch
// puts it on the VL its table gives for the SL, the port it came in by
// and the port it leaves by. A data packet mapped to VL15 (subnet
// management's), or to a VL its out port does not operate (PortInfo's
// OperationalVLs, IBA 14.2.5.6), is dropped there: it waits on nothing
// further.

// dropVL marks a table entry whose packets are dropped.
const dropVL = 0xFF

// vlMap is the SL2VL tables of the switches as the graph needs them.
// SLs that every table maps alike form one class; the graph is built
// once per class. When every table maps each class to one VL throughout
// (what a fabric without QoS does: SL i on VL i everywhere) the classes'
// graphs are the same graph on different VLs: it is built once, and its
// loops are on each of those VLs.
type vlMap struct {
	g *graph
	// vls is the graph's VL space: 1 when the mapping is uniform, else 1
	// + the highest VL a table maps to.
	vls int
	// classes are the SLs of the classes (the lowest of each).
	classes []int
	// uniform are, when the mapping is uniform, the VLs the classes'
	// packets are on (none when every class is dropped); nil otherwise.
	uniform []int
	// inUse are the VLs the tables map to (a bit each).
	inUse uint16
	// tables[at[s]+(k*np+out)*np+in] is switch s's VL for class k (np
	// is its ports and port 0), or dropVL: the input ports of one output
	// side by side, as the routes to one destination read them. at[s]
	// is -1 for a switch without tables (every SL on VL 0); a pair it
	// has no table for maps to VL 0. Only when the mapping is not
	// uniform.
	tables []uint8
	at     []int
	// local[i*len(classes)+k] are the VLs of the packets of class k that
	// leave by the port of graph index i coming from its switch's port 0
	// or end ports.
	local []uint16
	// opVLs[i] is how many VLs the port of graph index i operates.
	opVLs []uint8
}

func newVLMap(g *graph) *vlMap {
	m := &vlMap{g: g, vls: 1, classes: []int{0}, opVLs: make([]uint8, len(g.link))}
	for s, n := range g.nodes {
		for p := 0; p <= n.NumPorts; p++ {
			m.opVLs[int(g.base[s])+p] = operationalVLs(n.Port(p))
		}
	}
	var class [16]int // the lowest SL of each SL's class, refined table by table
	any := false
	for _, n := range g.nodes {
		if sw := g.t.Switches[n.GUID]; sw != nil && sw.SL2VL != nil {
			for _, vls := range sw.SL2VL.Tables {
				any = true
				refine(&class, &vls)
			}
		}
	}
	if !any {
		m.uniform, m.inUse = []int{0}, 1
		return m
	}
	m.classes = m.classes[:0]
	for sl, low := range class {
		if low == sl {
			m.classes = append(m.classes, sl)
		}
	}
	if m.uniform = m.uniformVLs(); m.uniform != nil {
		for _, vl := range m.uniform {
			m.inUse |= 1 << vl
		}
		return m
	}
	m.build()
	return m
}

// refine splits the classes that vls maps apart.
func refine(class *[16]int, vls *[16]uint8) {
	split := false
	for sl, low := range class {
		split = split || vlOf(vls[sl]) != vlOf(vls[low])
	}
	if !split {
		return
	}
	var next [16]int
	for sl := range next {
		next[sl] = sl
		for low := range sl {
			if class[low] == class[sl] && vlOf(vls[low]) == vlOf(vls[sl]) {
				next[sl] = low
				break
			}
		}
	}
	*class = next
}

// vlOf is a table's entry as a VL: VL15 carries only subnet management,
// a data packet mapped there is dropped.
func vlOf(vl uint8) uint8 {
	if vl &= 15; vl == 15 {
		return dropVL
	}
	return vl
}

// operationalVLs is how many data VLs a port operates (PortInfo's
// OperationalVLs, bits 344..347: 1 for VL0, 2 for VL0-1, 3 for VL0-3,
// 4 for VL0-7, 5 for VL0-14), read from the raw PortInfo; 15 when it is
// not known, so that nothing is taken for dropped.
func operationalVLs(p *discovery.Port) uint8 {
	if p == nil || len(p.PortInfo) < mad.PortInfoSize {
		return 15
	}
	switch p.PortInfo[43] >> 4 {
	case 1:
		return 1
	case 2:
		return 2
	case 3:
		return 4
	case 4:
		return 8
	}
	return 15
}

// effective is entry vl of a table out of the port of graph index i:
// dropVL where the port does not operate that VL.
func (m *vlMap) effective(vl uint8, i int) uint8 {
	if vl = vlOf(vl); vl != dropVL && vl >= m.opVLs[i] {
		return dropVL
	}
	return vl
}

// uniformVLs are the VLs of the classes when every table maps each
// class to one VL (or drops it) on every channel between switches, nil
// when some do not. A channel none of whose tables was read is left
// out: the reads cover the channels that can be in a loop (the
// diagnosis reads only those), and the others cannot change the
// answer. A channel read from some input ports only has VL 0 from the
// others, as build has it.
func (m *vlMap) uniformVLs() []int {
	g := m.g
	var seen [16]uint32 // per class, the values seen: a bit per VL, bit 16 for dropped
	mark := func(k int, vl uint8) {
		if vl == dropVL {
			seen[k] |= 1 << 16
		} else {
			seen[k] |= 1 << vl
		}
	}
	for s, n := range g.nodes {
		sw := g.t.Switches[n.GUID]
		if sw == nil || sw.SL2VL == nil {
			continue
		}
		read := make([]int, n.NumPorts+1) // tables read per output port
		for pair, vls := range sw.SL2VL.Tables {
			i := int(g.base[s]) + int(pair.Out)
			if int(pair.Out) > n.NumPorts || int(pair.In) > n.NumPorts || g.link[i] < 0 {
				continue // not into a channel between switches
			}
			read[pair.Out]++
			for k, sl := range m.classes {
				mark(k, m.effective(vls[sl], i))
			}
		}
		for out, have := range read {
			if have > 0 && have < n.NumPorts+1 {
				for k := range m.classes {
					mark(k, m.effective(0, int(g.base[s])+out))
				}
			}
		}
	}
	var out []int
	for k := range m.classes {
		switch {
		case bits.OnesCount32(seen[k]) > 1:
			return nil
		case seen[k] != 1<<16 && seen[k] != 0:
			vl := bits.TrailingZeros32(seen[k])
			if !slices.Contains(out, vl) {
				out = append(out, vl)
			}
		}
	}
	slices.Sort(out)
	return append([]int{}, out...)
}

// build lays the tables out per class, and the VLs of each port's local
// packets.
func (m *vlMap) build() {
	g := m.g
	kinds := len(m.classes)
	m.at, m.local = make([]int, len(g.nodes)), make([]uint16, len(g.link)*kinds)
	for s, n := range g.nodes {
		np := n.NumPorts + 1
		m.at[s] = -1
		sw := g.t.Switches[n.GUID]
		if sw == nil || sw.SL2VL == nil || len(sw.SL2VL.Tables) == 0 {
			m.inUse |= 1 // every SL on VL 0
			continue
		}
		m.at[s] = len(m.tables)
		m.tables = append(m.tables, make([]uint8, kinds*np*np)...)
		tab := m.tables[m.at[s]:]
		for pair, vls := range sw.SL2VL.Tables {
			if int(pair.In) >= np || int(pair.Out) >= np {
				continue
			}
			for k, sl := range m.classes {
				vl := m.effective(vls[sl], int(g.base[s])+int(pair.Out))
				tab[(k*np+int(pair.Out))*np+int(pair.In)] = vl
				if vl != dropVL {
					m.inUse |= 1 << vl
					m.vls = max(m.vls, int(vl)+1)
				}
			}
		}
	}
	for s, n := range g.nodes {
		np := n.NumPorts + 1
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
					if vl := m.vl(int32(s), in, out, k); vl != dropVL {
						mask |= 1 << vl
					}
				}
				m.local[(int(g.base[s])+out)*kinds+k] = mask
			}
		}
	}
}

// vl is switch s's VL for SL class k from in to out, or dropVL.
func (m *vlMap) vl(s int32, in, out, k int) uint8 {
	at := m.at[s]
	if at < 0 {
		return 0
	}
	np := int(m.g.nports[s]) + 1
	return m.tables[at+(k*np+out)*np+in]
}
