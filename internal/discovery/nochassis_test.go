package discovery

import "testing"

func TestNoChassisSkipsTheGrouping(t *testing.T) {
	// A Mellanox chassis' line chip: grouped, its port 18 is external
	// port 18 (see TestGroupNodesBySystemImageGUIDAndMellanoxDescriptions).
	f := newFake()
	host := f.add(NodeCA, 0x100, 1, "host")
	line := f.add(NodeSwitch, 0x21, 36, "MF0;ib-core:MIS5600/L05/U1")
	line.VendorID, line.DeviceID = 0x2c9, 0xbd36
	f.Link(host, 1, line, 18)

	grouped := discover(t, f, 8, Options{})
	if ext := grouped.Node(0x21).Port(18).ExtNum; ext != 18 {
		t.Fatalf("grouped: port 18 is external port %d, want 18", ext)
	}
	alone := discover(t, f, 8, Options{NoChassis: true})
	if ext := alone.Node(0x21).Port(18).ExtNum; ext != 0 {
		t.Errorf("with NoChassis: port 18 is external port %d, want 0 (not grouped)", ext)
	}
	if len(alone.Nodes) != 2 || alone.Node(0x21).Port(18).Remote == nil {
		t.Errorf("with NoChassis the walk lost something: %d nodes", len(alone.Nodes))
	}
}

func TestChassisIsTheLastGroupingUntilANodeComes(t *testing.T) {
	f := NewFabric()
	line := chassisNode(f, NodeSwitch, 0x21, 0x20, 0x2c9, 0xbd36, 36, "MF0;ib-core:MIS5600/L05/U1")
	chassisNode(f, NodeSwitch, 0x22, 0x20, 0x2c9, 0xbd36, 36, "MF0;ib-core:MIS5600/S03:board/U1")
	if f.Chassis().ChassisNum(line) != 1 {
		t.Fatalf("an ungrouped fabric's Chassis did not group it")
	}
	g := GroupNodes(f)
	if f.Chassis() != g {
		t.Errorf("Chassis is not the grouping GroupNodes made")
	}
	other := chassisNode(f, NodeSwitch, 0x23, 0x20, 0x2c9, 0xbd36, 36, "not a chassis chip")
	if got := f.Chassis(); got == g || got.ChassisNum(other) != 1 {
		t.Errorf("after a node came, Chassis kept the old grouping (the new node in chassis %d)", got.ChassisNum(other))
	}
}
