package discovery

import (
	"fmt"
	"sort"
)

// Comparing two fabrics as python-rdma's subnet_diff does: a reference
// (a cache written earlier) against the current fabric (live, or another
// cache). Five things are compared: the end ports (port GUIDs: a switch's
// port 0, a CA's or router's ports), the nodes (node GUIDs), the links
// (pairs of end port GUID and port number), the speed and width of the
// links both have, and which end port each LID leads to.

// PortRef names a port by its end port GUID (a switch's ports share the
// switch's) and number.
type PortRef struct {
	GUID uint64
	Num  int
}

func (r PortRef) String() string { return fmt.Sprintf("0x%016x[%d]", r.GUID, r.Num) }

// LinkRef is a link, its ends ordered (A is the greater, as python-rdma
// orders them).
type LinkRef struct{ A, B PortRef }

func (l LinkRef) less(m LinkRef) bool {
	if l.A != m.A {
		return refLess(l.A, m.A)
	}
	return refLess(l.B, m.B)
}

func refLess(a, b PortRef) bool {
	if a.GUID != b.GUID {
		return a.GUID < b.GUID
	}
	return a.Num < b.Num
}

// LinkRate is what a link runs at, seen from its A end.
type LinkRate struct {
	Width string // "4x", as ibnetdiscover prints it
	Speed string // "EDR", "FDR10", ...
}

func (r LinkRate) String() string { return r.Width + r.Speed }

// RateChange is a link whose rate differs.
type RateChange struct {
	Link               LinkRef
	Current, Reference LinkRate
}

// LIDChange is a LID that leads to a different end port (0: none).
type LIDChange struct {
	LID                uint16
	Current, Reference uint64
}

// FabricDiff is the difference of two fabrics. "Current only" and
// "reference only" lists are sorted.
type FabricDiff struct {
	CurrentEndPorts, ReferenceEndPorts int
	CurrentOnlyEndPorts                []uint64
	ReferenceOnlyEndPorts              []uint64

	CurrentNodes, ReferenceNodes int
	CurrentOnlyNodes             []uint64
	ReferenceOnlyNodes           []uint64

	CurrentLinks, ReferenceLinks int
	CurrentOnlyLinks             []LinkRef
	ReferenceOnlyLinks           []LinkRef

	RateChanges []RateChange

	CurrentLIDs, ReferenceLIDs int
	LIDChanges                 []LIDChange
}

// Same says whether nothing differs.
func (d *FabricDiff) Same() bool {
	return len(d.CurrentOnlyEndPorts)+len(d.ReferenceOnlyEndPorts)+len(d.CurrentOnlyNodes)+len(d.ReferenceOnlyNodes)+
		len(d.CurrentOnlyLinks)+len(d.ReferenceOnlyLinks)+len(d.RateChanges)+len(d.LIDChanges) == 0
}

// RateOf gives a port's width and speed; Compare's caller supplies it, so
// that the texts are those its output uses. A port's GUID is its end
// port's: a switch's ports all carry the switch's port GUID.
type RateOf func(p *Port) LinkRate

// fabricFacts are the sets Compare compares.
type fabricFacts struct {
	endPorts map[uint64]bool
	nodes    map[uint64]bool
	links    map[LinkRef][2]*Port
	lids     map[uint16]uint64
}

func factsOf(f *Fabric) fabricFacts {
	x := fabricFacts{endPorts: map[uint64]bool{}, nodes: map[uint64]bool{}, links: map[LinkRef][2]*Port{}, lids: map[uint16]uint64{}}
	for _, n := range f.Nodes {
		x.nodes[n.GUID] = true
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if n.Type != NodeSwitch || p.Num == 0 {
				x.endPorts[p.GUID] = true
				if base := p.BaseLID; base != 0 && base < 0xC000 {
					for l := 0; l < 1<<p.LMC; l++ {
						if _, ok := x.lids[base+uint16(l)]; !ok {
							x.lids[base+uint16(l)] = p.GUID
						}
					}
				}
			}
			if r := p.Remote; r != nil {
				a, b := PortRef{p.GUID, p.Num}, PortRef{r.GUID, r.Num}
				pa, pb := p, r
				if refLess(a, b) {
					a, b, pa, pb = b, a, pb, pa
				}
				x.links[LinkRef{a, b}] = [2]*Port{pa, pb}
			}
		}
	}
	return x
}

func sortedGUIDs(m map[uint64]bool, not map[uint64]bool) []uint64 {
	var out []uint64
	for g := range m {
		if !not[g] {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func sortedLinks(m, not map[LinkRef][2]*Port) []LinkRef {
	var out []LinkRef
	for l := range m {
		if _, ok := not[l]; !ok {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// Compare compares the current fabric with a reference one.
func Compare(ref, cur *Fabric, rate RateOf) *FabricDiff {
	r, c := factsOf(ref), factsOf(cur)
	d := &FabricDiff{
		CurrentEndPorts: len(c.endPorts), ReferenceEndPorts: len(r.endPorts),
		CurrentOnlyEndPorts: sortedGUIDs(c.endPorts, r.endPorts), ReferenceOnlyEndPorts: sortedGUIDs(r.endPorts, c.endPorts),
		CurrentNodes: len(c.nodes), ReferenceNodes: len(r.nodes),
		CurrentOnlyNodes: sortedGUIDs(c.nodes, r.nodes), ReferenceOnlyNodes: sortedGUIDs(r.nodes, c.nodes),
		CurrentLinks: len(c.links), ReferenceLinks: len(r.links),
		CurrentOnlyLinks: sortedLinks(c.links, r.links), ReferenceOnlyLinks: sortedLinks(r.links, c.links),
		CurrentLIDs: len(c.lids), ReferenceLIDs: len(r.lids),
	}
	var both []LinkRef
	for l := range c.links {
		if _, ok := r.links[l]; ok {
			both = append(both, l)
		}
	}
	sort.Slice(both, func(i, j int) bool { return both[i].less(both[j]) })
	for _, l := range both {
		cp, rp := c.links[l], r.links[l]
		cr, rr := rate(cp[0]), rate(rp[0])
		if cr != rr {
			d.RateChanges = append(d.RateChanges, RateChange{Link: l, Current: cr, Reference: rr})
		}
	}
	lids := map[uint16]bool{}
	for l := range c.lids {
		lids[l] = true
	}
	for l := range r.lids {
		lids[l] = true
	}
	var order []uint16
	for l := range lids {
		order = append(order, l)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	for _, l := range order {
		if c.lids[l] != r.lids[l] {
			d.LIDChanges = append(d.LIDChanges, LIDChange{LID: l, Current: c.lids[l], Reference: r.lids[l]})
		}
	}
	return d
}
