package fabricids

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// model builds fabrics by hand: nodes with NodeInfo, ports with LIDs.
type model struct{ f *discovery.Fabric }

func newModel() *model { return &model{discovery.NewFabric()} }

func (m *model) sw(guid, portGUID uint64, lid uint16, lmc uint8, ports int) *discovery.Node {
	n := m.f.AddNode(&discovery.Node{GUID: guid, Type: discovery.NodeSwitch, NumPorts: ports, SMALID: lid, SMALMC: lmc,
		NodeInfo: mad.Encode(&mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NodeGUID: mad.GUID(guid), PortGUID: mad.GUID(portGUID)})})
	for p := 0; p <= ports; p++ {
		n.Ports[p] = &discovery.Port{Node: n, Num: p, GUID: portGUID, BaseLID: lid, LMC: lmc}
	}
	return n
}

func (m *model) ca(guid uint64, ports int) *discovery.Node {
	return m.f.AddNode(&discovery.Node{GUID: guid, Type: discovery.NodeCA, NumPorts: ports,
		NodeInfo: mad.Encode(&mad.NodeInfo{NodeType: mad.NodeTypeCA, NodeGUID: mad.GUID(guid)})})
}

// port gives a CA port its GUID and LIDs and links it to a switch port.
func (m *model) port(n *discovery.Node, p int, guid uint64, lid uint16, lmc uint8, to *discovery.Node, toPort int) {
	n.Ports[p] = &discovery.Port{Node: n, Num: p, GUID: guid, BaseLID: lid, LMC: lmc}
	discovery.Link(n.Ports[p], to.Ports[toPort])
}

// show is a problem as one line: what, which value, held by which node
// at which LID, and the first holder's node and LID.
func show(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		s := fmt.Sprintf("%s %#x node %#x lid %d", p.Kind, p.Use.Value, p.Use.NodeGUID, p.Use.LID)
		if p.First != nil {
			s += fmt.Sprintf(" first node %#x lid %d", p.First.NodeGUID, p.First.LID)
		}
		out = append(out, s)
	}
	return out
}

func TestUsesReadsAsTheTopologyLists(t *testing.T) {
	m := newModel()
	sw := m.sw(0x200, 0x201, 1, 0, 4)
	ca := m.ca(0x100, 3)
	m.port(ca, 3, 0x103, 7, 1, sw, 2) // linked port 3 before port 1 in the port order
	m.port(ca, 1, 0x101, 5, 0, sw, 1)
	ca.Ports[2] = &discovery.Port{Node: ca, Num: 2, GUID: 0x102, BaseLID: 6} // not linked: not read
	var got []string
	for _, u := range Uses([]*discovery.Node{sw, ca}) {
		got = append(got, fmt.Sprintf("%d %#x lmc %d node %#x lid %d port %d", u.ID, u.Value, u.LMC, u.NodeGUID, u.LID, u.Port))
	}
	want := []string{
		"0 0x1 lmc 0 node 0x200 lid 1 port 0", "1 0x200 lmc 0 node 0x200 lid 1 port 0", "2 0x201 lmc 0 node 0x200 lid 1 port 0",
		"0 0x5 lmc 0 node 0x100 lid 5 port 1", "1 0x100 lmc 0 node 0x100 lid 5 port 1", "2 0x101 lmc 0 node 0x100 lid 5 port 1",
		"0 0x7 lmc 1 node 0x100 lid 7 port 3", "2 0x103 lmc 0 node 0x100 lid 7 port 3",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Uses:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A fabric with every problem once: a zero LID, a LID twice, a port GUID
// twice, a port GUID that is another node's GUID (read after that node,
// and before), and LID ranges that overlap without equal base LIDs.
func problemFabric() []*discovery.Node {
	m := newModel()
	sw := m.sw(0x200, 0x200, 1, 0, 8)
	a, b, c, d, e := m.ca(0x100, 1), m.ca(0x110, 1), m.ca(0x120, 1), m.ca(0x130, 1), m.ca(0x140, 1)
	m.port(a, 1, 0x101, 4, 1, sw, 1) // LIDs 4-5
	m.port(b, 1, 0x111, 4, 0, sw, 2) // LID 4 again
	m.port(c, 1, 0x101, 0, 0, sw, 3) // a's port GUID, LID 0
	m.port(d, 1, 0x110, 5, 0, sw, 4) // b's node GUID; LID 5, inside a's range
	m.port(e, 1, 0x150, 6, 0, sw, 5) // f's node GUID, f read after
	f := m.ca(0x150, 1)
	m.port(f, 1, 0x151, 7, 0, sw, 6)
	return []*discovery.Node{sw, a, b, c, d, e, f}
}

func TestCheckScriptRules(t *testing.T) {
	got := show(Check(Uses(problemFabric()), Script))
	want := []string{
		"duplicate_lid 0x4 node 0x110 lid 4 first node 0x100 lid 4",
		"zero_lid 0x0 node 0x120 lid 0",
		"duplicate_port_guid 0x101 node 0x120 lid 0 first node 0x100 lid 4",
		"port_guid_is_node_guid 0x110 node 0x130 lid 5 first node 0x110 lid 4",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Script:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckStrictRules(t *testing.T) {
	got := show(Check(Uses(problemFabric()), Strict))
	want := []string{
		"duplicate_lid 0x4 node 0x110 lid 4 first node 0x100 lid 4",
		"zero_lid 0x0 node 0x120 lid 0",
		"duplicate_port_guid 0x101 node 0x120 lid 0 first node 0x100 lid 4",
		"duplicate_lid 0x5 node 0x130 lid 5 first node 0x100 lid 4", // inside a's LMC range
		"port_guid_is_node_guid 0x110 node 0x130 lid 5 first node 0x110 lid 4",
		"port_guid_is_node_guid 0x150 node 0x140 lid 6 first node 0x150 lid 7", // f's GUID, f read later
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Strict:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A node read twice (ibnetdiscover -g lists a chassis' spines twice)
// repeats its node GUID and LID; a switch's port GUID equal to its node
// GUID is no problem.
func TestCheckNodeReadTwice(t *testing.T) {
	m := newModel()
	sw := m.sw(0x200, 0x200, 3, 0, 4)
	got := show(Check(Uses([]*discovery.Node{sw, sw}), Script))
	want := []string{
		"duplicate_lid 0x3 node 0x200 lid 3 first node 0x200 lid 3",
		"duplicate_node_guid 0x200 node 0x200 lid 3 first node 0x200 lid 3",
		"duplicate_port_guid 0x200 node 0x200 lid 3 first node 0x200 lid 3",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read twice:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckZeroGUIDs(t *testing.T) {
	uses := []Use{
		{ID: NodeGUID, Value: 0, LID: 3, NodeType: discovery.NodeCA},
		{ID: PortGUID, Value: 0, LID: 3, NodeType: discovery.NodeCA},
		{ID: NodeGUID, Value: 0, LID: 4, NodeType: discovery.NodeCA},
	}
	if got := show(Check(uses, Script)); !reflect.DeepEqual(got, []string{"duplicate_node_guid 0x0 node 0x0 lid 4 first node 0x0 lid 3"}) {
		t.Errorf("Script, zero GUIDs: %q", got)
	}
	want := []string{"zero_node_guid 0x0 node 0x0 lid 3", "zero_port_guid 0x0 node 0x0 lid 3", "zero_node_guid 0x0 node 0x0 lid 4"}
	if got := show(Check(uses, Strict)); !reflect.DeepEqual(got, want) {
		t.Errorf("Strict, zero GUIDs: %q", got)
	}
}
