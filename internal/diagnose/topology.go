package diagnose

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// topologyCheck compares the fabric with the one expected (--expect):
// nodes and links that are gone, new or moved, and links whose width or
// speed changed. It rests on discovery.Compare, subnet_diff's comparison.
type topologyCheck struct{}

func (topologyCheck) Name() string { return "topology" }

func (topologyCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"topology.node_missing", Error, "a node of the expected fabric is not in the fabric (its links are not listed again)"},
		{"topology.node_extra", Warning, "a node that the expected fabric does not have"},
		{"topology.link_missing", Error, "a link of the expected fabric is gone, and neither of its ports has another"},
		{"topology.link_moved", Error, "a port is linked to another port than expected (a cable moved or swapped)"},
		{"topology.link_extra", Warning, "a link between ports that had none"},
		{"topology.link_degraded", Error, "a link runs narrower or slower than expected"},
		{"topology.rate_changed", Warning, "a link runs at another width or speed than expected, not lower"},
		{"topology.lid_changed", Info, "a LID leads to another end port than expected"},
	}
}

func (topologyCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	e := cfg.Expected
	if e == nil {
		return nil, "no expected fabric (--expect)"
	}
	d := discovery.Compare(e.Fabric, s.Fabric, e.rate)
	t := &topoDiff{cur: s.Fabric, ref: e.Fabric, names: cfg.Names,
		ports: map[*discovery.Fabric]map[discovery.PortRef]*discovery.Port{s.Fabric: portIndex(s.Fabric), e.Fabric: portIndex(e.Fabric)}}
	var out []Finding
	missingNode := map[uint64]bool{}
	for _, g := range d.ReferenceOnlyNodes {
		missingNode[g] = true
		n := e.Fabric.Node(g)
		out = append(out, Finding{Code: "topology.node_missing", Severity: Error, At: placeOf(n, nil, cfg.Names),
			Message:  fmt.Sprintf("the %s is not in the fabric; expected with %d %s", typeWord(n), linkCount(n), plural(linkCount(n), "link", "links")),
			Evidence: []Field{{"expected_links", linkCount(n)}}})
	}
	for _, g := range d.CurrentOnlyNodes {
		n := s.Fabric.Node(g)
		out = append(out, Finding{Code: "topology.node_extra", Severity: Warning, At: placeOf(n, nil, cfg.Names),
			Message: fmt.Sprintf("the %s was not expected", typeWord(n))})
	}
	out = append(out, t.links(d, missingNode)...)
	for _, rc := range d.RateChanges {
		out = append(out, t.rateChange(rc))
	}
	for _, lc := range d.LIDChanges {
		if lc.Current == 0 || lc.Reference == 0 {
			continue // a port gone or new: its node or link says so
		}
		out = append(out, Finding{Code: "topology.lid_changed", Severity: Info,
			Message:  fmt.Sprintf("LID %d leads to port GUID 0x%016x, expected 0x%016x", lc.LID, lc.Current, lc.Reference),
			Evidence: []Field{{"lid", lc.LID}, {"port_guid", mad.GUID(lc.Current)}, {"expected_port_guid", mad.GUID(lc.Reference)}}})
	}
	return out, ""
}

// topoDiff finds the ports of a comparison's references in the fabrics.
type topoDiff struct {
	cur, ref *discovery.Fabric
	names    *nodename.Map
	ports    map[*discovery.Fabric]map[discovery.PortRef]*discovery.Port
}

// portIndex finds the ports of f by the references Compare names them
// by: a switch's ports share its port GUID, so a reference is the port's
// GUID and its number.
func portIndex(f *discovery.Fabric) map[discovery.PortRef]*discovery.Port {
	m := map[discovery.PortRef]*discovery.Port{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				m[discovery.PortRef{GUID: p.GUID, Num: p.Num}] = p
			}
		}
	}
	return m
}

// port is the port a reference names in f, nil if none.
func (t *topoDiff) port(f *discovery.Fabric, r discovery.PortRef) *discovery.Port {
	return t.ports[f][r]
}

// links reports the links only one fabric has. Where one port of a link
// that is gone now has a link to another port, that is one moved link;
// the links of a missing node go with the node.
func (t *topoDiff) links(d *discovery.FabricDiff, missingNode map[uint64]bool) []Finding {
	newAt := map[discovery.PortRef]discovery.LinkRef{}
	for _, l := range d.CurrentOnlyLinks {
		newAt[l.A], newAt[l.B] = l, l
	}
	movedNew := map[discovery.LinkRef]bool{}
	var out []Finding
	for _, l := range d.ReferenceOnlyLinks {
		ra, rb := t.port(t.ref, l.A), t.port(t.ref, l.B)
		if ra == nil || rb == nil || missingNode[ra.Node.GUID] || missingNode[rb.Node.GUID] {
			continue
		}
		moved := false
		for _, end := range []struct {
			at  discovery.PortRef
			was *discovery.Port
		}{{l.A, rb}, {l.B, ra}} {
			nl, ok := newAt[end.at]
			if !ok {
				continue
			}
			cp := t.port(t.cur, end.at)
			if cp == nil || cp.Remote == nil {
				continue
			}
			moved, movedNew[nl] = true, true
			out = append(out, atPort(Finding{Code: "topology.link_moved", Severity: Error,
				Message:  fmt.Sprintf("linked to %s, expected to %s", t.describe(cp.Remote), t.describe(end.was)),
				Evidence: []Field{{"expected_remote", linkEnd(end.was, t.names)}}}, cp, t.names))
			break
		}
		if moved {
			continue
		}
		// Place it as the links check would, at an end the fabric
		// still has.
		at, other := hostFirst(ra, rb)
		if t.port(t.cur, discovery.PortRef{GUID: at.GUID, Num: at.Num}) == nil {
			at, other = other, at
		}
		f := Finding{Code: "topology.link_missing", Severity: Error,
			Message: fmt.Sprintf("the expected link to %s is gone", t.describe(other))}
		if cp := t.port(t.cur, discovery.PortRef{GUID: at.GUID, Num: at.Num}); cp != nil {
			f.At = placeOf(cp.Node, cp, t.names)
		} else {
			f.At = placeOf(at.Node, at, t.names)
		}
		f.Remote = linkEnd(other, t.names)
		out = append(out, f)
	}
	for _, l := range d.CurrentOnlyLinks {
		if movedNew[l] {
			continue
		}
		a, b := t.port(t.cur, l.A), t.port(t.cur, l.B)
		if a == nil || b == nil || t.ref.Node(a.Node.GUID) == nil || t.ref.Node(b.Node.GUID) == nil {
			continue // a new node: the node says so
		}
		a, b = hostFirst(a, b)
		out = append(out, atPort(Finding{Code: "topology.link_extra", Severity: Warning,
			Message: fmt.Sprintf("a link to %s that was not expected", t.describe(b))}, a, t.names))
	}
	return out
}

// describe names a port in a message: `"name" port N`.
func (t *topoDiff) describe(p *discovery.Port) string {
	name := nodeName(p.Node, t.names)
	if n := t.cur.Node(p.Node.GUID); n != nil {
		name = nodeName(n, t.names)
	}
	return fmt.Sprintf("%q port %d", name, p.Num)
}

// rateChange is a link whose width or speed changed: an error when it
// got narrower or slower.
func (t *topoDiff) rateChange(rc discovery.RateChange) Finding {
	cp := t.port(t.cur, rc.Link.A)
	if b := t.port(t.cur, rc.Link.B); cp != nil && b != nil {
		cp, _ = hostFirst(cp, b)
	}
	down := lanes(rc.Current.Width) < lanes(rc.Reference.Width) || speedRank(rc.Current.Speed) < speedRank(rc.Reference.Speed)
	f := Finding{Code: "topology.rate_changed", Severity: Warning}
	if down {
		f.Code, f.Severity = "topology.link_degraded", Error
	}
	f.Message = fmt.Sprintf("runs at %s, expected %s", rc.Current, rc.Reference)
	f.Evidence = []Field{{"rate", rateJSON(rc.Current)}, {"expected_rate", rateJSON(rc.Reference)}}
	if cp != nil {
		return atPort(f, cp, t.names)
	}
	return f
}

// rateJSON is an ibnetdiscover width and speed in the vocabulary.
func rateJSON(r discovery.LinkRate) jsonv.Rate {
	w, _ := ParseWidth(r.Width)
	return jsonv.RateOf(jsonv.Width(w), r.Speed)
}

func typeWord(n *discovery.Node) string {
	switch n.Type {
	case discovery.NodeSwitch:
		return "switch"
	case discovery.NodeRouter:
		return "router"
	}
	return "CA"
}

func linkCount(n *discovery.Node) int {
	c := 0
	for _, p := range n.Ports {
		if p != nil && p.Remote != nil {
			c++
		}
	}
	return c
}
