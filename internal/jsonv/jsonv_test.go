package jsonv

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
)

func TestCheckAccepts(t *testing.T) {
	guid := mad.GUID(0x2c90300000001)
	gid := mad.GID{0xfe, 0x80, 8: 0, 9: 2, 10: 0xc9, 11: 3, 15: 1}
	doc := map[string]any{
		"target": Target{Route: RouteLID, LID: 2, GUID: &guid, Text: "Lid 2"},
		"nodes": []any{map[string]any{
			"node_guid": guid, "node_type": NodeTypeOf(mad.NodeTypeSwitch), "node_name": "sw1",
			"port_gid": gid, "port_guids": []mad.GUID{guid, 1}, "lid": 7, "sm_lid": 1,
			"capability_mask": 0x0050c04a, "capability_mask_names": MaskNames(0x0050c04a, "PortCapMask"),
			"state": 4, "state_text": "Active",
			"ports": []any{map[string]any{
				"port": 1, "remote": LinkEnd{NodeGUID: guid, NodeType: CA, Port: 1, PortGUID: guid + 1, LID: 4},
				"rate": RateOf("4X", "EDR"), "could_be_width": "12X", "rtt_ms": 0.25, "dest_node_name": "x", "bw_mb_per_sec": 3.5, "link_speed_active": 2, "port_state": 4, "port_xmit_data_bytes": 16,
			}},
		}},
		"links":  []any{map[string]any{"a": LinkEnd{NodeGUID: 1, Port: 2}, "b": LinkEnd{NodeGUID: 2, Port: 1}}},
		"secret": nil,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if v := Check(b); v != nil {
		t.Fatalf("%s\nviolations: %v", b, v)
	}
}

// TestCheckRejects gives documents that each break one rule.
func TestCheckRejects(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"nodeGUID": "0x0000000000000001"}`, "snake_case"},
		{`{"Port": 1}`, "snake_case"},
		{`{"node_guid": "0x1"}`, "GUID"},
		{`{"node_guid": 1}`, "GUID"},
		{`{"port_guids": ["0x0000000000000001", "0X0000000000000002"]}`, "GUID"},
		{`{"port_gid": "fe80:0000:0000:0000:0002:c903:0000:0001"}`, "RFC 5952"},
		{`{"dgid": "FE80::1"}`, "RFC 5952"},
		{`{"gid": "10.0.0.1"}`, "RFC 5952"},
		{`{"node_type": "CA"}`, "node_type"},
		{`{"node_type": 1}`, "node_type"},
		{`{"type": "switch"}`, "node_type"},
		{`{"width": "4x"}`, "width"},
		{`{"could_be_width": 2}`, "width"},
		{`{"rate_gbps": "100"}`, "number"},
		{`{"port_xmit_data_bytes": "16"}`, "number"},
		{`{"lid": "0x2"}`, "LID"},
		{`{"rtt_min_us": 12}`, "milliseconds"},
		{`{"capability_mask": "0x0050c04a"}`, "capability mask"},
		{`{"capability_mask_names": ["x"]}`, "mask names without"},
		{`{"state": "Active", "state_text": "Active"}`, "text beside"},
		{`{"state_name": "ACTIVE"}`, "_text"},
		{`{"target": "Lid 2"}`, "not an object"},
		{`{"target": {"route": "lid", "lid": 2, "port": 1}}`, "target has no key"},
		{`{"target": {"lid": 2}}`, "target route"},
		{`{"remote": {"guid": "0x0000000000000001", "port": 1}}`, "link end"},
		{`{"links": [{"a": {"node_guid": "0x0000000000000001"}, "b": {"node_guid": "0x0000000000000002", "port": 1}}]}`, "has port"},
		{`{"seconds": 1.5}`, "milliseconds"},
		{`{"state": "Active"}`, "is a text"},
		{`{"physical_state": "LinkUp"}`, "is a text"},
		{`{"speed": "2.5 Gbps"}`, "is a text"},
		{`{"rate": "100 Gb/sec (4X EDR)"}`, "is a text"},
		{`[1, 2`, "not JSON"},
	} {
		v := Check([]byte(tc.doc))
		found := false
		for _, x := range v {
			found = found || strings.Contains(x.String(), tc.want)
		}
		if !found {
			t.Errorf("%s: got %v, want a violation about %q", tc.doc, v, tc.want)
		}
	}
}

func TestRateOf(t *testing.T) {
	for _, tc := range []struct {
		w     Width
		speed string
		want  Rate
	}{
		{"4X", "EDR", Rate{"4X", 25.78125, 100, "EDR", "4X EDR"}},
		{"4X", "FDR", Rate{"4X", 14.0625, 56, "FDR", "4X FDR"}},
		{"1X", "SDR", Rate{"1X", 2.5, 2.5, "SDR", "1X SDR"}},
		{"12X", "QDR", Rate{"12X", 10, 120, "QDR", "12X QDR"}},
		{"4X", "FDR10", Rate{"4X", 10.3125, 40, "FDR10", "4X FDR10"}},
		{"2X", "NDR", Rate{"2X", 106.25, 200, "NDR", "2X NDR"}},
		{"4X", "???", Rate{Width: "4X"}},
		{"??", "EDR", Rate{LaneSpeedGbps: 25.78125, SpeedText: "EDR"}},
		{"", "HDR", Rate{LaneSpeedGbps: 53.125, SpeedText: "HDR"}},
	} {
		if got := RateOf(tc.w, tc.speed); got != tc.want {
			t.Errorf("RateOf(%q, %q) = %+v, want %+v", tc.w, tc.speed, got, tc.want)
		}
	}
	if WidthOf(mad.LinkWidth12X) != "12X" || WidthOf(3) != "" || NodeTypeOf(mad.NodeTypeRouter) != Router || NodeTypeOf(0) != "" {
		t.Error("WidthOf/NodeTypeOf")
	}
}

func TestTargetJSON(t *testing.T) {
	gid := mad.GID{0xfe, 0x80, 15: 1}
	b, _ := json.Marshal(Target{Route: RouteCombined, LID: 3, DRPath: "0,1", DRSLID: 1, GID: &gid, Text: "x"})
	want := `{"route":"combined","lid":3,"dr_path":"0,1","dr_slid":1,"gid":"fe80::1","text":"x"}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	b, _ = json.Marshal(LinkEnd{NodeGUID: 1, Port: 3})
	if want := `{"node_guid":"0x0000000000000001","port":3}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	if n := MaskNames(0, "PortCapMask"); n == nil || len(n) != 0 {
		t.Errorf("MaskNames(0) = %#v, want an empty list", n)
	}
}
