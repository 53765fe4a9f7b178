package mad

import (
	"strings"
	"testing"
)

// The libibmad formatters on values ibsim never produces; expectations
// follow libibmad 44's dump.c line by line.
func TestIBMADFormatters(t *testing.T) {
	field := func(name string) *FieldDesc { return descPortInfo.Field(name) }
	cases := []struct {
		field string
		v     uint64
		want  string
	}{
		{"LinkWidthActive", 2, "4X"},
		{"LinkWidthActive", 16, "2X"},
		{"LinkWidthActive", 0, "undefined (0)"},
		{"LinkWidthActive", 3, "undefined (3)"},
		{"LinkWidthEnabled", 3, "1X or 4X"},
		{"LinkWidthEnabled", 0, "undefined (0)"},
		{"LinkWidthEnabled", 0x21, "1X or undefined (33)"},
		{"LinkWidthSupported", 3, "1X or 4X"},
		{"LinkWidthSupported", 2, "4X (IBA extension)"},
		{"LinkWidthSupported", 31, "1X or 4X or 8X or 12X or 2X"},
		{"LinkWidthSupported", 0, "undefined (0) (IBA extension)"},
		{"LinkWidthSupported", 64, "undefined (64)"},
		{"LinkSpeedActive", 0, "Extended speed"},
		{"LinkSpeedActive", 4, "10.0 Gbps"},
		{"LinkSpeedActive", 3, "undefined (3)"},
		{"LinkSpeedSupported", 7, "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"},
		{"LinkSpeedSupported", 6, "5.0 Gbps or 10.0 Gbps (IBA extension)"},
		{"LinkSpeedSupported", 0, "undefined (0) (IBA extension)"},
		{"LinkSpeedSupported", 9, "2.5 Gbps or undefined (9)"},
		{"LinkSpeedEnabled", 15, "2.5 Gbps or 5.0 Gbps or 10.0 Gbps or undefined (15)"},
		{"LinkSpeedExtActive", 8, "106.25 Gbps"},
		{"LinkSpeedExtActive", 0, "No Extended Speed"},
		{"LinkSpeedExtActive", 3, "undefined (3)"},
		{"LinkSpeedExtSupported", 0, "0"},
		{"LinkSpeedExtSupported", 15, "14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps or 106.25 Gbps"},
		{"LinkSpeedExtEnabled", 30, "Extended link speeds disabled"},
		{"LinkSpeedExtEnabled", 31, "14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps or 106.25 Gbps or undefined (31)"},
		{"LinkSpeedExtEnabled", 16, "undefined (16)"},
		{"LinkSpeedExtActive2", 1, "212.5 Gbps"},
		{"LinkSpeedExtActive2", 0, "No Extended Speed 2"},
		{"LinkSpeedExtSupported2", 0, "0"},
		{"LinkSpeedExtSupported2", 3, " undefined (3)"},
		{"LinkSpeedExtEnabled2", 1, "212.5 Gbps"},
		{"PortState", 4, "Active"},
		{"PortState", 5, "?(5)"},
		{"PortPhysicalState", 4, "PortConfigurationTraining"},
		{"PortPhysicalState", 9, "?(9)"},
		{"LinkDownDefaultState", 2, "Polling"},
		{"NeighborMTU", 5, "4096"},
		{"NeighborMTU", 0, "?(0)"},
		{"VLCap", 5, "VL0-14"},
		{"OperationalVLs", 0, "No change"},
		{"InitType", 0xa, "0x0a"},
		{"DiagCode", 0xbeef, "0xbeef"},
		{"MKey", 0x1234, "0x0000000000001234"},
		{"LinkRoundTripLatency", 0xffffff, "16777215"},
		{"CapabilityMask", 0, "0x0"},
		{"CapabilityMask", 0x80002003, "0x80002003\n\t\t\t\tIsSM\n\t\t\t\tIsHierarchyInfoSupported"},
		{"CapabilityMask2", 0x0401, "0x401\n\t\t\t\tIsSetNodeDescriptionSupported\n\t\t\t\tIsLinkSpeedNDRSupported"},
	}
	for _, c := range cases {
		f := field(c.field)
		if f == nil {
			t.Fatalf("no PortInfo field %s", c.field)
		}
		b := make([]byte, PortInfoSize)
		putBits(b, f.Offset, f.Width, c.v)
		if got := formatIBMAD(f, ibmadValueAt(b, f.Offset, f.Width)); got != c.want {
			t.Errorf("%s=%d: got %q, want %q", c.field, c.v, got, c.want)
		}
	}

	ni := &NodeInfo{NodeType: 4, VendorID: 0x2c9, Revision: 0xa1}
	for path, want := range map[string]string{"NodeType": "?(4)?", "VendorID": "0x0002c9", "Revision": "0x000000a1"} {
		if got, err := FormatIBMAD(ni, path); err != nil || got != want {
			t.Errorf("NodeInfo %s: %q %v, want %q", path, got, err, want)
		}
	}
	si := &SMInfo{SMState: SMStateMaster}
	if got, _ := FormatIBMAD(si, "SMState"); got != "3" {
		t.Errorf("SMState prints %q, want libibmad's number 3", got)
	}
	if got := si.SMState.String(); got != "SMINFO_MASTER" {
		t.Errorf("SMState text %q", got)
	}
	if got := SMState(7).String(); got != "???" {
		t.Errorf("unknown SMState text %q", got)
	}
}

func TestDottedLine(t *testing.T) {
	if got := DottedLine("Lid", "2"); got != "Lid:.............................2" {
		t.Errorf("%q", got)
	}
	if got := DottedLine("McastPkeyTrapSuppressionEnabled", "0"); got != "McastPkeyTrapSuppressionEnabled:.0" {
		t.Errorf("%q", got)
	}
	if got := DottedLine(strings.Repeat("L", 32), "0"); got != strings.Repeat("L", 32)+":0" {
		t.Errorf("%q", got)
	}
	if got := DottedLine("CapMask", strings.Repeat("x", 2000)); len(got) != 1023 {
		t.Errorf("long line not cut to libibmad's 1023 bytes: %d", len(got))
	}
}

func TestDottedStringAndArrays(t *testing.T) {
	var nd NodeDescription
	copy(nd.NodeString[:], "hca one")
	if got := Dotted(&nd, nil); got != "NodeDesc:........................'hca one'\n" {
		t.Errorf("%q", got)
	}
	for i := range nd.NodeString { // no NUL: cut to 63 characters as snprintf does
		nd.NodeString[i] = 'a'
	}
	if got := Dotted(&nd, nil); got != "NodeDesc:........................'"+strings.Repeat("a", 62)+"\n" {
		t.Errorf("%q", got)
	}
	gi := &GUIDInfo{GUID: [8]GUID{1, 2}}
	got := Dotted(gi, nil)
	if !strings.HasPrefix(got, "GUID0:...........................0x0000000000000001\nGUID1:...........................0x0000000000000002\nGUID2:") ||
		strings.Count(got, "\n") != 8 {
		t.Errorf("%q", got)
	}
	var va VLArbitrationTable
	va.Entry[0] = VLArbEntry{VL: 1, Weight: 0x20}
	if got := Dotted(&va, nil); !strings.HasPrefix(got, "VLArbTbl:........................0120") || len(got) != 33+128+1 {
		t.Errorf("%q", got)
	}
	pi := &PortInfo{MKey: 0x42, LinkSpeedExtActive2: 1}
	plain := Dotted(pi, nil)
	if !strings.Contains(plain, "Mkey:............................<not displayed>\n") || strings.Contains(plain, "Active2") {
		t.Errorf("default PortInfo: %q", plain)
	}
	all := Dotted(pi, &DottedOptions{ShowKeys: true, Groups: []string{"XDR"}})
	if !strings.Contains(all, "Mkey:............................0x0000000000000042\n") ||
		!strings.HasSuffix(all, "LinkSpeedExtActive2:.............212.5 Gbps\nLinkSpeedExtSupported2:..........0\nLinkSpeedExtEnabled2:............0\n") {
		t.Errorf("PortInfo with keys and XDR: %q", all)
	}
}
