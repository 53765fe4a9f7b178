package checklftbalance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/routing"
)

// headerFields takes a header apart as the script's regex does, names
// with parentheses, "guid" and nothing at all included.
func TestHeaderFieldsAsTheRegex(t *testing.T) {
	for _, name := range []string{
		"leaf01", "", "sw (a)", "sw (a) b", "(x)", " (", "a (", "a ()", "x guid y (z", "x guid y", "guid (q)",
		"a) (b", "MF0;sw-ib-01:MQM8700/U1", "x (y) guid z (w)", "( )", "a ( b",
	} {
		for _, route := range []string{"DR path slid 0; dlid 0; 0,1", "Lid 7"} {
			guid := "0x0000000000000100"
			line := fmt.Sprintf("Unicast lids [0x0-0x40] of switch %s guid %s (%s):", route, guid, name)
			want := parseLine(line)
			g, n, ok := headerFields(guid, name)
			if g != want.guid || n != want.name || ok != want.named {
				t.Errorf("%q: got %q, %q, %v; the regex takes %q, %q, %v", line, g, n, ok, want.guid, want.name, want.named)
			}
		}
	}
}

// balanceFabric is two switches, A ("sw (a) b", 8 ports, LID 1) and B
// (no name, 36 ports, LIDs 2-3), A's port 8 to B's port 1, and CAs on
// A's ports 1..7 whose names and LMCs trip the script: keywords in
// names, no name, 16 LIDs ("out of 16" is two digits).
func balanceFabric() (*discovery.Fabric, *routing.Switch, *routing.Switch) {
	f := discovery.NewFabric()
	active := mad.Encode(&mad.PortInfo{PortState: mad.PortStateActive})
	node := func(guid uint64, typ, nports int, desc string) *discovery.Node {
		n := f.AddNode(&discovery.Node{GUID: guid, Type: typ, NumPorts: nports, NodeDesc: []byte(desc)})
		for i := range n.Ports {
			n.Ports[i] = &discovery.Port{Node: n, Num: i, GUID: guid + uint64(i), PortInfo: active}
		}
		return n
	}
	a := node(0x100, discovery.NodeSwitch, 8, "sw (a) b")
	b := node(0x200, discovery.NodeSwitch, 36, "")
	a.Ports[0].BaseLID = 1
	b.Ports[0].BaseLID, b.Ports[0].LMC = 2, 1
	discovery.Link(a.Ports[8], b.Ports[1])
	lid := uint16(4)
	hosts := []struct {
		name string
		lmc  uint8
	}{{"node01", 2}, {"Router gateway", 0}, {"multipath box", 0}, {"", 0}, {"big", 4}, {"Unicast thing", 0}, {"node02", 0}}
	lftA := make([]byte, 64)
	lftB := make([]byte, 64)
	for i := range lftA {
		lftA[i], lftB[i] = routing.NoPort, routing.NoPort
	}
	lftA[1], lftA[2], lftA[3] = 0, 8, 8
	lftB[1], lftB[2], lftB[3] = 1, 0, 0
	for i, h := range hosts {
		ca := node(0x1000+uint64(i)*0x10, discovery.NodeCA, 1, h.name)
		ca.Ports[1].BaseLID, ca.Ports[1].LMC = lid, h.lmc
		discovery.Link(ca.Ports[1], a.Ports[i+1])
		for l := lid; l < lid+1<<h.lmc; l++ {
			lftA[l] = byte(i + 1)
			lftB[l] = 1
			if i == 0 && l == lid+2 {
				lftA[l] = 8 // one of node01's paths goes the other way
			}
		}
		lid += 1 << h.lmc
	}
	lftB[40] = 9 // a LID no port has
	swA := &routing.Switch{GUID: a.GUID, NumPorts: 8, LFT: &routing.LFT{Ports: lftA}}
	swB := &routing.Switch{GUID: b.GUID, NumPorts: 36, LFT: &routing.LFT{Ports: lftB}}
	return f, swA, swB
}

// The live lines give the script what the printed text gives it.
func TestLiveLinesAsTheText(t *testing.T) {
	f, swA, swB := balanceFabric()
	names := &nodename.Map{}
	dests := render.FabricDests(routing.LIDMap(f), names, ": (node info not available fabric scan)")
	for _, flags := range []struct{ heuristic, verbose bool }{{false, true}, {true, true}, {false, false}} {
		text, live := newScript(f, names.Name, flags.heuristic, flags.verbose), newScript(f, names.Name, flags.heuristic, flags.verbose)
		fts := &render.FTS{}
		for _, sw := range []*routing.Switch{swA, swB} {
			n := f.Node(sw.GUID)
			table, _, _ := render.UnicastTable(sw, 0, 60, false)
			table.Dests = dests
			fts.Switches = append(fts.Switches, &render.FTSwitch{NodeGUID: mad.GUID(n.GUID), NodeName: n.Desc(),
				Route: "DR path slid 0; dlid 0; 0", LastLID: 60, NumPorts: n.NumPorts, Unicast: table})
			tableLines(live, mad.GUID(n.GUID).String(), n.Desc(), table)
		}
		live.line(lftLine{})
		var b strings.Builder
		if err := fts.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			text.line(parseLine(line))
		}
		var got, want strings.Builder
		live.end().WriteText(&got)
		text.end().WriteText(&want)
		// The quirks are there: the name split at its " (", the table
		// split at "Unicast thing", B without a name taking A's.
		if flags.verbose && strings.Count(want.String(), "Port Usage: a) b, 0x0000000000000100 (sw\n") != 4 {
			t.Errorf("the script's quirks are not exercised:\n%s", want.String())
		}
		if got.String() != want.String() || !strings.Contains(want.String(), "Port Usage") {
			t.Errorf("%+v: live\n%s\nfrom the text\n%s\ntext:\n%s", flags, got.String(), want.String(), b.String())
		}
	}
}
