package ctext

import "testing"

// Each C tool's words for node types 0 to 5 (IBA: 1 CA, 2 switch, 3
// router; 4 is libibumad's iWARP RNIC), as its source spells them.
func TestNodeTypeWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		of   func(int) string
		want [6]string
	}{
		{"iblinkinfo nodetype_str", NodeTypeStr, [6]string{"??", "CA", "Switch", "Router", "??", "??"}},
		{"ibnetdiscover ports_nt_str_compat", PortsReportNodeType, [6]string{"??", "CA", "SW", "RT", "??", "??"}},
		{"ibnetdiscover list_node", NodeListType, [6]string{"???", "Ca", "Switch", "Router", "???", "???"}},
		{"ibnetdiscover out_ca_detail", TopologyNodeType, [6]string{"???", "Ca", "???", "Rt", "???", "???"}},
		{"ibnetdiscover out_ca", TopologyGUIDType, [6]string{"???", "ca", "???", "rt", "???", "???"}},
		{"libibmad mad_dump_node_type", MadNodeType, [6]string{"?(0)?", "Channel Adapter", "Switch", "Router", "?(4)?", "?(5)?"}},
		{"ib_get_node_type_str", OsmNodeType, [6]string{"UNKNOWN", "Channel Adapter", "Switch", "Router", "UNKNOWN", "UNKNOWN"}},
		{"ibstat node_type_str", UmadNodeType, [6]string{"???", "CA", "Switch", "Router", "iWARP RNIC", "???"}},
		{"ibidsverify.pl", IdsScriptNodeType, [6]string{"", "ca", "switch", "router", "", ""}},
	} {
		for typ, want := range tc.want {
			if got := tc.of(typ); got != want {
				t.Errorf("%s of %d = %q, want %q", tc.name, typ, got, want)
			}
		}
	}
	if got := UmadNodeType(-1); got != "???" {
		t.Errorf("UmadNodeType(-1) = %q", got)
	}
}

func TestGUIDAndPortText(t *testing.T) {
	type guid uint64
	if GUIDText(guid(0)) != "" || GUIDText(guid(0x2c90300001234)) != "0x0002c90300001234" || GUIDText(uint64(1)) != "0x0000000000000001" {
		t.Errorf("GUIDText: %q %q", GUIDText(guid(0)), GUIDText(guid(0x2c90300001234)))
	}
	if PortText(0) != "" || PortText(12) != "12" {
		t.Errorf("PortText: %q %q", PortText(0), PortText(12))
	}
}
