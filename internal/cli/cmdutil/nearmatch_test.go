package cmdutil

import (
	"slices"
	"testing"
)

func TestNearMatches(t *testing.T) {
	cands := []string{"PortInfo", "PortInfoExtended", "NodeInfo", "NodeDescription", "SwitchInfo", "PKeyTable"}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"portinfx", []string{"PortInfo"}},
		{"portinfo", []string{"PortInfo", "PortInfoExtended"}},
		{"Node", []string{"NodeInfo", "NodeDescription"}},
		{"pkey", []string{"PKeyTable"}},
		{"xyzzy", nil},
	} {
		if got := nearMatches(tc.name, cands); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance = %d", d)
	}
}
