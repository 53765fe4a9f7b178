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
