package discovery

import (
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
)

func chassisNode(f *Fabric, typ int, guid, sys uint64, vendor uint32, dev uint16, nports int, desc string) *Node {
	ni := mad.NodeInfo{NodeType: mad.NodeType(typ), NumPorts: uint8(nports), SystemImageGUID: mad.GUID(sys),
		NodeGUID: mad.GUID(guid), PortGUID: mad.GUID(guid), DeviceID: dev, VendorID: vendor}
	blob := make([]byte, 64)
	_ = ni.Marshal(blob)
	nd := make([]byte, 64)
	copy(nd, desc)
	n := f.AddNode(&Node{GUID: guid, Type: typ, NumPorts: nports, NodeInfo: blob, NodeDesc: nd})
	for p := 1; p <= nports; p++ {
		n.Ports[p] = &Port{Node: n, Num: p, GUID: guid}
	}
	return n
}

func TestGroupNodesBySystemImageGUIDAndMellanoxDescriptions(t *testing.T) {
	f := NewFabric()
	lone := chassisNode(f, NodeSwitch, 0x10, 0x10, 0x2c9, 0xcb20, 36, "leaf")
	line := chassisNode(f, NodeSwitch, 0x21, 0x20, 0x2c9, 0xbd36, 36, "MF0;ib-core:MIS5600/L05/U1")
	spine := chassisNode(f, NodeSwitch, 0x22, 0x20, 0x2c9, 0xbd36, 36, "MF0;ib-core:MIS5600/S03:board/U1")
	other := chassisNode(f, NodeSwitch, 0x23, 0x20, 0x2c9, 0xbd36, 36, "not a chassis chip")
	g := GroupNodes(f)

	if g.ChassisNum(lone) != 0 || g.ChassisNum(line) != 1 || g.ChassisNum(spine) != 1 || g.ChassisNum(other) != 1 {
		t.Fatalf("chassis numbers %d %d %d %d", g.ChassisNum(lone), g.ChassisNum(line), g.ChassisNum(spine), g.ChassisNum(other))
	}
	var ch *Chassis
	for _, c := range g.Chassis {
		if c.Num == 1 {
			ch = c
		}
	}
	if ch.GUID != 0x20 || ch.Lines[5] != line || ch.Spines[3] != spine || len(ch.Nodes) != 1 || ch.Nodes[0] != other {
		t.Errorf("chassis %+v", ch)
	}
	if s := g.SlotString(line); s != "Line 5 Chip 1" {
		t.Errorf("slot %q", s)
	}
	if s := g.TypeName(spine); s != "MIS5600" {
		t.Errorf("type %q", s)
	}
	if line.Port(18).ExtNum != 18 || line.Port(19).ExtNum != 0 || spine.Port(1).ExtNum != 0 {
		t.Errorf("external ports %d %d %d", line.Port(18).ExtNum, line.Port(19).ExtNum, spine.Port(1).ExtNum)
	}
	if g.ChassisGUID(1) != 0x20 || g.SlotString(lone) != "" {
		t.Errorf("chassis GUID %#x, lone slot %q", g.ChassisGUID(1), g.SlotString(lone))
	}
}

func TestGroupNodesVoltaireChassis(t *testing.T) {
	// An ISR9096: one sFB-4 spine chip and two sLB-24 line chips wired to
	// it on the ports that name their slots.
	f := NewFabric()
	spine := chassisNode(f, NodeSwitch, 0x100, 0x100, vendorVoltaire, devVtrSFB4, 24, "spine")
	l1 := chassisNode(f, NodeSwitch, 0x200, 0x200, vendorVoltaire, devVtrSLB24, 24, "line a")
	l2 := chassisNode(f, NodeSwitch, 0x300, 0x300, vendorVoltaire, devVtrSLB24, 24, "line b")
	Link(spine.Port(1), l1.Port(1)) // spine port 1: slot 1, chip 1
	Link(spine.Port(4), l2.Port(2)) // spine port 4: slot 1, chip 2
	g := GroupNodes(f)
	if len(g.Chassis) != 1 || g.Chassis[0].Num != 1 || g.Chassis[0].GUID != 0xff {
		t.Fatalf("chassis %+v", g.Chassis)
	}
	ch := g.Chassis[0]
	if ch.Lines[1] != l1 || ch.Lines[2] != l2 || ch.Spines[1] != spine {
		t.Errorf("lines %v spines %v", ch.Lines[:3], ch.Spines[:2])
	}
	if s := g.TypeName(l1); s != "ISR9096" {
		t.Errorf("type %q", s)
	}
	// sLB-24 chip 1 maps internal port 13 to external port 6.
	if l1.Port(13).ExtNum != 6 || l2.Port(13).ExtNum != 12 {
		t.Errorf("external ports %d %d", l1.Port(13).ExtNum, l2.Port(13).ExtNum)
	}
}
