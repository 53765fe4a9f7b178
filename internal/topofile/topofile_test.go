package topofile

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
)

// tiny is ibnetdiscover's text of a small fabric, with a chassis' [ext N]
// and --full's s= w= v= on some lines, as the C tool prints them.
const tiny = `#
# Topology file: generated on Wed Nov 25 09:46:12 2026
#
# Initiated from node 0000000000200000 port 0000000000200000

vendid=0x2c9
devid=0xcb20
sysimgguid=0x200001
switchguid=0x200001(200009)	# 
Switch	4 "S-0000000000200001"		# "sw2 desc" enhanced port 0 lid 7 lmc 0
[1]	"H-0000000000100006"[1](100007) 		# "Hca3" lid 4 4xSDR s=1 w=2 v=4
[4][ext 12]	"S-0000000000200000"[8]		# "Switch1" lid 1 1xEDR

vendid=0x0
devid=0x0
sysimgguid=0x200000
switchguid=0x200000(200000)
Switch	8 "S-0000000000200000"		# "Switch1" base port 0 lid 1 lmc 0
[1]	"H-0000000000100000"[1](100001) 		# "hca one" lid 3 4xSDR
[8]	"S-0000000000200001"[4][ext 12]		# "sw2 desc" lid 7 1xEDR

vendid=0x0
devid=0x0
sysimgguid=0x100006
caguid=0x100006
Ca	1 "H-0000000000100006"		# "Hca3"
[1](100007) 	"S-0000000000200001"[1]		# lid 4 lmc 1 "sw2 desc" lid 7 4xSDR

caguid=0x100000
Ca	2 "H-0000000000100000"		# "hca one"
[1](100001) 	"S-0000000000200000"[1]		# lid 3 lmc 0 "Switch1" lid 1 4xSDR
`

func TestParse(t *testing.T) {
	f, err := Parse(strings.NewReader(tiny))
	if err != nil {
		t.Fatal(err)
	}
	fab := f.Fabric
	if len(fab.Nodes) != 4 {
		t.Fatalf("%d nodes, want 4", len(fab.Nodes))
	}
	sw2 := fab.Node(0x200001)
	if sw2 == nil || sw2.Type != discovery.NodeSwitch || sw2.NumPorts != 4 || sw2.Desc() != "sw2 desc" ||
		sw2.SMALID != 7 || !sw2.EnhancedSP0 || sw2.Info().VendorID != 0x2c9 || sw2.Info().DeviceID != 0xcb20 {
		t.Fatalf("sw2: %+v", sw2)
	}
	// A switch's port 0 carries its LID and port GUID; its ports share them.
	if p0 := sw2.Port(0); p0 == nil || p0.GUID != 0x200009 || p0.BaseLID != 7 {
		t.Errorf("sw2 port 0: %+v", p0)
	}
	p4 := sw2.Port(4)
	if p4 == nil || p4.GUID != 0x200009 || p4.Remote == nil || p4.Remote.Node.GUID != 0x200000 || p4.Remote.Num != 8 {
		t.Fatalf("sw2 port 4: %+v", p4)
	}
	if r := f.Rate(p4); r != (discovery.LinkRate{Width: "1x", Speed: "EDR"}) {
		t.Errorf("sw2 port 4 rate %v", r)
	}
	hca3 := fab.Node(0x100006)
	p1 := hca3.Port(1)
	if p1 == nil || p1.GUID != 0x100007 || p1.BaseLID != 4 || p1.LMC != 1 || p1.Remote != sw2.Port(1) {
		t.Fatalf("Hca3 port 1: %+v", p1)
	}
	if r := f.Rate(sw2.Port(1)); r != (discovery.LinkRate{Width: "4x", Speed: "SDR"}) {
		t.Errorf("--full's line: rate %v", r)
	}
	// A CA's unlinked port is not listed.
	if one := fab.Node(0x100000); one.NumPorts != 2 || one.Port(2) != nil || one.Port(1).Remote.Node.GUID != 0x200000 {
		t.Errorf("hca one: %+v", one)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no nodes", "# nothing\n", "not an ibnetdiscover topology file"},
		{"port outside a node", "[1]\t\"S-0000000000000001\"[1]\n", "line 1: a port line outside a node"},
		{"bad node name", "Switch\t4 \"sw1\"\t\t# \"x\"\n", "line 1: node name \"sw1\" is not S-<GUID>"},
		{"port past the node", "Ca\t1 \"H-0000000000000001\"\t\t# \"x\"\n[2](2) \t\"S-0000000000000003\"[1]\t\t# lid 1 lmc 0 \"s\" lid 2 4xSDR\n",
			"line 2: no port number of this 1-port node"},
		{"bad id", "switchguid=0xzz\n", "line 1: switchguid is not a number"},
	} {
		_, err := Parse(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		var se *SyntaxError
		if tc.name != "no nodes" && !errors.As(err, &se) {
			t.Errorf("%s: %T is not a *SyntaxError", tc.name, err)
		}
	}
}
