package mad

import (
	"slices"
	"strings"
	"testing"
)

func TestFormatField(t *testing.T) {
	ni := &NodeInfo{NodeGUID: 0x100, NodeType: NodeTypeSwitch}
	for _, tc := range []struct {
		s            Struct
		path         string
		label, value string
	}{
		{ni, "NodeGUID", "Guid", "0x0000000000000100"},                       // libibmad's label and text
		{ni, "node_type", "NodeType", "Switch"},                              // JSON names too
		{&PKeyTable{PKey: [32]uint16{0xffff}}, "PKey.0", "PKey.0", "0xffff"}, // no label: the dump's value
		{&PKeyTable{PKey: [32]uint16{1, 2}}, "PKey", "PKey", "0x1 0x2 0x0"},  // a whole array, element by element
	} {
		label, value, err := FormatField(tc.s, tc.path)
		if err != nil || label != tc.label || !strings.HasPrefix(value, tc.value) {
			t.Errorf("%s: %q %q %v; want %q %q", tc.path, label, value, err, tc.label, tc.value)
		}
	}
	var rec NodeRecord
	copy(rec.NodeDescription.NodeString[:], "hca one")
	if _, value, _ := FormatField(&rec, "NodeDescription"); value != "NodeDesc:........................'hca one'\n" {
		t.Errorf("a nested structure: %q", value)
	}
	if _, _, err := FormatField(ni, "Nope"); err == nil {
		t.Error("an unknown field formats")
	}
	paths := FieldPaths(LookupStruct("PortInfoRecord"))
	for _, want := range []string{"EndPortLID", "PortInfo", "PortInfo.LID", "PortInfo.LinkWidthActive"} {
		if !slices.Contains(paths, want) {
			t.Errorf("FieldPaths(PortInfoRecord) has no %s: %v", want, paths)
		}
	}
}
