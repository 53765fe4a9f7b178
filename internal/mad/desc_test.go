package mad

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGetSetByPath(t *testing.T) {
	pi := &PortInfo{}
	for path, v := range map[string]uint64{
		"LinkWidthActive": 2, "PortInfo.LMC": 7, "link_speed_ext_enabled": 30,
		"mkey": 0xdeadbeef, "CapabilityMask": 0x50c048, "HOQLife": 19,
	} {
		if err := Set(pi, path, v); err != nil {
			t.Fatalf("Set %s: %v", path, err)
		}
		if got, err := Get(pi, path); err != nil || got != v {
			t.Errorf("Get %s = %d, %v; want %d", path, got, err, v)
		}
	}
	if pi.LinkWidthActive != LinkWidth4X || pi.LMC != 7 || pi.MKey != 0xdeadbeef || pi.HOQLife != 19 {
		t.Errorf("struct not updated: %+v", pi)
	}
	if err := Set(pi, "LMC", 8); err == nil {
		t.Error("8 fits the 3-bit LMC?")
	}
	if _, err := Get(pi, "NoSuchField"); err == nil || !strings.Contains(err.Error(), "NoSuchField") {
		t.Errorf("unknown field: %v", err)
	}

	gi := &GUIDInfo{}
	if err := Set(gi, "GUID[3]", 0x1234); err != nil || gi.GUID[3] != 0x1234 {
		t.Errorf("GUID[3]: %v %v", err, gi.GUID)
	}
	if v, err := Get(gi, "guids.3"); err != nil || v != 0x1234 {
		t.Errorf("guids.3 = %d %v", v, err)
	}
	if _, err := Get(gi, "GUID.8"); err == nil {
		t.Error("index 8 of 8 accepted")
	}
	if _, err := Get(gi, "GUID"); err == nil {
		t.Error("a whole array read as one number")
	}

	va := &VLArbitrationTable{}
	if err := Set(va, "Entry[5].Weight", 200); err != nil || va.Entry[5].Weight != 200 {
		t.Errorf("Entry[5].Weight: %v %+v", err, va.Entry[5])
	}
	if err := SetText(va, "entries.6.vl", "0xf"); err != nil || va.Entry[6].VL != 15 {
		t.Errorf("entries.6.vl: %v %+v", err, va.Entry[6])
	}
	if b, err := GetBytes(va, "Entry.5"); err != nil || len(b) != 2 || b[1] != 200 {
		t.Errorf("GetBytes Entry.5 = %x %v", b, err)
	}

	ni := &NodeInfo{}
	for path, text := range map[string]string{
		"NodeType": "Switch", "NodeGUID": "0x0002c90300001234", "NumPorts": "36", "node_type": "switch",
	} {
		if err := SetText(ni, path, text); err != nil {
			t.Errorf("SetText %s %s: %v", path, text, err)
		}
	}
	if ni.NodeType != NodeTypeSwitch || ni.NodeGUID != 0x0002c90300001234 || ni.NumPorts != 36 {
		t.Errorf("%+v", ni)
	}
	nd := &NodeDescription{}
	if err := SetText(nd, "NodeString", "sw1 leaf"); err != nil || nd.String() != "sw1 leaf" {
		t.Errorf("NodeString: %v %q", err, nd.String())
	}
	if err := SetText(nd, "NodeString", strings.Repeat("x", 65)); err == nil {
		t.Error("65-byte description accepted")
	}
	cpi := &ClassPortInfo{}
	if err := SetText(cpi, "RedirectGID", "fe80::2:c903:0:1234"); err != nil ||
		cpi.RedirectGID.String() != "fe80::2:c903:0:1234" || cpi.RedirectGID.GUID() != 0x0002c90300001234 ||
		cpi.RedirectGID.Prefix() != 0xfe80000000000000 {
		t.Errorf("RedirectGID: %v %s", err, cpi.RedirectGID)
	}
}

func TestLookup(t *testing.T) {
	if d := LookupAttr(ClassSubnDR, 0x15); d == nil || d.Name != "PortInfo" {
		t.Errorf("DR 0x15: %v", d)
	}
	if d := LookupAttr(ClassPerf, 0x12); d == nil || d.Name != "PortCounters" {
		t.Errorf("PerfMgt 0x12: %v", d)
	}
	if d := LookupAttr(ClassSubnLID, 0x12); d == nil || d.Name != "SwitchInfo" {
		t.Errorf("SMP 0x12: %v", d)
	}
	if d := LookupAttr(ClassPerf, 0x15); d == nil || d.Name != "PortRcvErrorDetails" {
		t.Errorf("PerfMgt 0x15: %v", d)
	}
	if d := LookupAttr(ClassPerf, 0x13); d != nil {
		t.Errorf("PerfMgt 0x13 (reserved): %v", d.Name)
	}
	if d := LookupStruct("portinfo"); d == nil || d.New().Desc() != d {
		t.Error("LookupStruct")
	}
	for _, d := range Structs() {
		if d.New() == nil || d.New().Desc() != d {
			t.Errorf("%s: New/Desc mismatch", d.Name)
		}
		for _, f := range d.Fields {
			if f.Reserved {
				continue
			}
			v := ibmadValueAt(make([]byte, d.Size), f.IBMADOffset, f.Width)
			if got := formatIBMAD(&f, v); strings.HasPrefix(got, "<no formatter") {
				t.Errorf("%s.%s: %s", d.Name, f.Name, got)
			}
		}
	}
}

func TestJSON(t *testing.T) {
	ni := &NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: NodeTypeCA, NumPorts: 2,
		SystemImageGUID: 0x100000, NodeGUID: 0x100000, PortGUID: 0x100001, PartitionCap: 64,
		Revision: 0xa1, LocalPortNum: 1, VendorID: 0x2c9}
	got, err := json.Marshal(ni)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"base_version":1,"class_version":1,"node_type":"ca","node_type_text":"Channel Adapter","num_ports":2,` +
		`"system_image_guid":"0x0000000000100000","node_guid":"0x0000000000100000","port_guid":"0x0000000000100001",` +
		`"partition_cap":64,"device_id":0,"revision":161,"local_port_num":1,"vendor_id":713}`
	if string(got) != want {
		t.Errorf("NodeInfo JSON\n got %s\nwant %s", got, want)
	}
	// A node type is never a number: no type (a request's NodeInfo) is null.
	if got, _ := json.Marshal(&NodeInfo{}); !strings.Contains(string(got), `"node_type":null,`) {
		t.Errorf("empty NodeInfo JSON: %s", got)
	}

	pi := &PortInfo{LinkWidthSupported: 3, CapabilityMask: 0x48}
	got, _ = json.Marshal(pi)
	for _, part := range []string{`"link_width_supported":3,"link_width_supported_names":["1X","4X"]`,
		`"capability_mask":72,"capability_mask_names":["IsTrapSupported","IsSLMappingSupported"]`,
		`"m_key":"0x0000000000000000",`, `"link_width_active":0,"link_width_active_text":"undefined (0)"`,
		`"link_speed_ext_enabled2_names":[]`} {
		if !strings.Contains(string(got), part) {
			t.Errorf("PortInfo JSON lacks %s:\n%s", part, got)
		}
	}
	va := &VLArbitrationTable{}
	va.Entry[1] = VLArbEntry{VL: 2, Weight: 3}
	got, _ = json.Marshal(va)
	if !strings.HasPrefix(string(got), `{"entries":[{"vl":0,"weight":0},{"vl":2,"weight":3},`) {
		t.Errorf("VLArb JSON %s", got)
	}
	cpi := &ClassPortInfo{}
	got, _ = json.Marshal(cpi)
	if !strings.Contains(string(got), `"redirect_gid":"::"`) {
		t.Errorf("CPI JSON %s", got)
	}
	var nd NodeDescription
	copy(nd.NodeString[:], "sw \"1\"")
	got, _ = json.Marshal(&nd)
	if string(got) != `{"node_string":"sw \"1\""}` {
		t.Errorf("NodeDescription JSON %s", got)
	}
}

func TestDump(t *testing.T) {
	ni := &NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: NodeTypeSwitch, NumPorts: 8,
		NodeGUID: 0x200000, VendorID: 0x2c9}
	got := Dump(ni)
	want := `NodeInfo (IBA 14.2.5.3, 40 bytes)
  +0x00  01010208  BaseVersion=1 ClassVersion=1 NodeType=2(Switch) NumPorts=8
  +0x04  00000000  SystemImageGUID=0x0000000000000000
  +0x08  00000000
  +0x0c  00000000  NodeGUID=0x0000000000200000
  +0x10  00200000
  +0x14  00000000  PortGUID=0x0000000000000000
  +0x18  00000000
  +0x1c  00000000  PartitionCap=0 DeviceID=0x0
  +0x20  00000000  Revision=0x0
  +0x24  000002c9  LocalPortNum=0 VendorID=0x2c9
`
	if got != want {
		t.Errorf("Dump:\n%s\nwant:\n%s", got, want)
	}
	b := Encode(&PortInfo{CapabilityMask: 0x2})
	b[34] |= 0x10 // a reserved bit
	got = DumpBytes(descPortInfo, b[:40])
	for _, part := range []string{"CapabilityMask=0x2[IsSM]", "reserved=0x2", "+0x3c  --------"} {
		if !strings.Contains(got, part) {
			t.Errorf("DumpBytes lacks %q:\n%s", part, got)
		}
	}
	got = Dump(&VLArbitrationTable{})
	if !strings.Contains(got, "+0x00  00000000  Entry[0].VL=0 Entry[0].Weight=0 Entry[1].VL=0 Entry[1].Weight=0") {
		t.Errorf("nested dump:\n%s", got)
	}
}
