package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/fabricids"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// idsCheck finds the identifiers that must be unique and are not: LIDs
// (every LID of a port's LMC range), node and port GUIDs, by
// internal/fabricids' strict rules; two nodes with one node GUID, which
// the walk took for one (HiddenRead); and node descriptions held twice.
type idsCheck struct{}

func (idsCheck) Name() string { return "ids" }

func (idsCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"ids.zero_lid", Error, "an Armed or Active end port has LID 0"},
		{"ids.duplicate_lid", Error, "a LID of the port's range (LMC included) is another end port's too"},
		{"ids.zero_node_guid", Error, "a node's GUID is 0"},
		{"ids.duplicate_node_guid", Error, "two nodes answer with one node GUID (the walk took them for one)"},
		{"ids.zero_port_guid", Error, "a port's GUID is 0"},
		{"ids.duplicate_port_guid", Error, "another port has the port's GUID"},
		{"ids.port_guid_is_node_guid", Error, "the port's GUID is another node's node GUID"},
		{"ids.duplicate_node_description", Warning, "nodes share one node description: the names operators know nodes by are ambiguous"},
	}
}

var idsCodes = map[fabricids.Kind]string{
	fabricids.ZeroLID:            "ids.zero_lid",
	fabricids.DuplicateLID:       "ids.duplicate_lid",
	fabricids.ZeroNodeGUID:       "ids.zero_node_guid",
	fabricids.DuplicateNodeGUID:  "ids.duplicate_node_guid",
	fabricids.ZeroPortGUID:       "ids.zero_port_guid",
	fabricids.DuplicatePortGUID:  "ids.duplicate_port_guid",
	fabricids.PortGUIDIsNodeGUID: "ids.port_guid_is_node_guid",
}

func (idsCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	var out []Finding
	for _, pr := range fabricids.Check(configuredUses(s.Fabric), fabricids.Strict) {
		if f, ok := idFinding(pr, cfg.Names); ok {
			out = append(out, f)
		}
	}
	out = append(out, hiddenDuplicates(s, cfg.Names)...)
	return append(out, duplicateDescriptions(s.Fabric, cfg.Names)...), ""
}

// configuredUses are the fabric's identifiers (fabricids.Uses, nodes by
// GUID) without the LIDs of ports the SM has not configured yet (Down
// or Init; a switch whose linked ports all are): their LID is 0 or
// stale until it does, and the links and sm checks report them.
func configuredUses(f *discovery.Fabric) []fabricids.Use {
	var out []fabricids.Use
	for _, u := range fabricids.Uses(f.SortedByGUID()) {
		if u.ID == fabricids.LID && !configured(u.Node, u.Port) {
			continue
		}
		out = append(out, u)
	}
	return out
}

// configured tells whether the SM has been through port num of n: it is
// Armed or Active; for a switch's LID (port 0), one of its linked ports
// is.
func configured(n *discovery.Node, num int) bool {
	armed := func(p *discovery.Port) bool {
		return p != nil && len(p.PortInfo) > 0 && p.Info().PortState >= mad.PortStateArmed
	}
	if n.Type != discovery.NodeSwitch {
		return armed(n.Port(num))
	}
	for _, p := range n.Ports {
		if p != nil && p.Num > 0 && p.Remote != nil && armed(p) {
			return true
		}
	}
	return false
}

// idFinding is a fabricids problem as a finding, at the port that holds
// the identifier; false for a port GUID that repeats because its node's
// GUID does (the node GUID's finding says it).
func idFinding(pr fabricids.Problem, names *nodename.Map) (Finding, bool) {
	u := pr.Use
	if pr.Kind == fabricids.DuplicatePortGUID && pr.First != nil && pr.First.NodeGUID == u.NodeGUID {
		return Finding{}, false
	}
	f := Finding{Code: idsCodes[pr.Kind], Severity: Error}
	var held string
	if pr.First != nil {
		held = " " + holderText(pr.First, names)
		f.Evidence = append(f.Evidence, Field{"held_by", holderEnd(pr.First, names)})
	}
	switch pr.Kind {
	case fabricids.ZeroLID:
		f.Message = "the port is configured (Armed or Active) but has LID 0"
	case fabricids.DuplicateLID:
		last := u.Value + 1<<u.LMC - 1
		f.Message = fmt.Sprintf("LID %d, which%s holds too", u.Value, held)
		if u.LMC > 0 {
			f.Message = fmt.Sprintf("LIDs %d-%d (LMC %d), of which%s holds some too", u.Value, last, u.LMC, held)
		}
		f.Evidence = append([]Field{{"lid", u.Value}, {"lmc", u.LMC}}, f.Evidence...)
	case fabricids.ZeroNodeGUID:
		f.Message = "the node's GUID is 0"
	case fabricids.ZeroPortGUID:
		f.Message = "the port's GUID is 0"
	case fabricids.DuplicateNodeGUID:
		f.Message = fmt.Sprintf("node GUID %s, which%s has too", mad.GUID(u.Value), held)
		f.Evidence = append([]Field{{"guid", mad.GUID(u.Value)}}, f.Evidence...)
	case fabricids.DuplicatePortGUID:
		f.Message = fmt.Sprintf("port GUID %s, which%s has too", mad.GUID(u.Value), held)
		f.Evidence = append([]Field{{"guid", mad.GUID(u.Value)}}, f.Evidence...)
	case fabricids.PortGUIDIsNodeGUID:
		f.Message = fmt.Sprintf("port GUID %s is the node GUID of%s", mad.GUID(u.Value), held)
		f.Evidence = append([]Field{{"guid", mad.GUID(u.Value)}}, f.Evidence...)
	}
	if p := u.Node.Port(u.Port); p != nil {
		return atPort(f, p, names), true
	}
	f.At = placeOf(u.Node, nil, names)
	return f, true
}

// holderEnd is where a use is, as a link end: its node and port.
func holderEnd(u *fabricids.Use, names *nodename.Map) *jsonv.LinkEnd {
	if p := u.Node.Port(u.Port); p != nil {
		return linkEnd(p, names)
	}
	return &jsonv.LinkEnd{NodeGUID: mad.GUID(u.NodeGUID), NodeName: nodeName(u.Node, names), NodeType: fabricdoc.NodeTypeOf(u.Node), Port: u.Port}
}

// holderText names where a use is in a message: `"sw1" port 0`.
func holderText(u *fabricids.Use, names *nodename.Map) string {
	return fmt.Sprintf("%q port %d", nodeName(u.Node, names), u.Port)
}

// hiddenDuplicates reports each node found behind an up port the walk
// left without a link whose node GUID is one the walk knows: two nodes
// with one GUID, which the walk saw as one. The finding is at the switch
// port it is behind; remote is the node that answered there, also_behind
// where the walk put the node of that GUID.
func hiddenDuplicates(s *Snapshot, names *nodename.Map) []Finding {
	var out []Finding
	for _, r := range s.Hidden {
		if r.Node == nil {
			continue
		}
		known := s.Fabric.Node(r.Node.GUID)
		if known == nil {
			continue // not met by the walk at all: nothing to compare
		}
		ni := r.Node.Info()
		at := int(ni.LocalPortNum)
		if r.Node.Type == discovery.NodeSwitch {
			at = 0
		}
		f := Finding{Code: "ids.duplicate_node_guid", Severity: Error,
			Remote: &jsonv.LinkEnd{NodeGUID: mad.GUID(r.Node.GUID), NodeName: nodeName(r.Node, names),
				NodeType: fabricdoc.NodeTypeOf(r.Node), Port: at, PortGUID: ni.PortGUID},
			Evidence: []Field{{"guid", mad.GUID(r.Node.GUID)}, {"dr_path", mad.FormatDRPath(r.Node.DRPath)}}}
		where := fmt.Sprintf("the node at DR path %s", mad.FormatDRPath(known.DRPath))
		if p := linkedPort(known); p != nil {
			where = fmt.Sprintf("the node behind %q port %d", nodeName(p.Remote.Node, names), p.Remote.Num)
			f.Evidence = append(f.Evidence, Field{"also_behind", linkEnd(p.Remote, names)})
		}
		f.Message = fmt.Sprintf("the node behind this port (DR path %s) answers as node GUID %s, as does %s: the walk took the two for one",
			mad.FormatDRPath(r.Node.DRPath), mad.GUID(r.Node.GUID), where)
		out = append(out, atPort(f, r.Port, names))
	}
	return out
}

// linkedPort is the first port of n the walk linked, nil for none.
func linkedPort(n *discovery.Node) *discovery.Port {
	for _, p := range n.Ports {
		if p != nil && p.Remote != nil {
			return p
		}
	}
	return nil
}

// duplicateDescriptions reports, once per description, nodes that share
// one (not empty): at the node of the lowest GUID, with all of them.
func duplicateDescriptions(f *discovery.Fabric, names *nodename.Map) []Finding {
	byDesc := map[string][]*discovery.Node{}
	for _, n := range f.SortedByGUID() {
		if d := n.Desc(); strings.TrimSpace(d) != "" {
			byDesc[d] = append(byDesc[d], n)
		}
	}
	var out []Finding
	for d, nodes := range byDesc {
		if len(nodes) < 2 {
			continue
		}
		guids := make([]mad.GUID, len(nodes))
		var others []string
		for i, n := range nodes {
			guids[i] = mad.GUID(n.GUID)
			if i > 0 && i <= 3 {
				others = append(others, guids[i].String())
			}
		}
		list := strings.Join(others, ", ")
		if len(nodes) > 4 {
			list += fmt.Sprintf(" and %d more", len(nodes)-4)
		}
		out = append(out, Finding{Code: "ids.duplicate_node_description", Severity: Warning, At: placeOf(nodes[0], nil, names),
			Message:  fmt.Sprintf("%d nodes have the description %q: this one and %s", len(nodes), d, list),
			Evidence: []Field{{"node_description", d}, {"nodes", len(nodes)}, {"node_guids", guids}}})
	}
	slices.SortFunc(out, func(a, b Finding) int { return cmp.Compare(a.At.NodeGUID, b.At.NodeGUID) })
	return out
}
