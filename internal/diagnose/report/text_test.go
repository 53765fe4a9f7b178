package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/diagnose"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// fatTree is two spines over two leaves with two hosts each, every
// leaf linked twice to each spine.
func fatTree() (*discovery.Fabric, map[string]*discovery.Node) {
	f := discovery.NewFabric()
	nodes := map[string]*discovery.Node{}
	add := func(name string, typ int, guid uint64, nports int) *discovery.Node {
		n := f.AddNode(&discovery.Node{GUID: guid, Type: typ, NumPorts: nports, NodeDesc: []byte(name)})
		for i := 0; i <= nports; i++ {
			switch {
			case typ == discovery.NodeSwitch: // its ports share its GUID
				n.Ports[i] = &discovery.Port{Node: n, Num: i, GUID: guid}
			case i > 0:
				n.Ports[i] = &discovery.Port{Node: n, Num: i, GUID: guid + uint64(i)}
			}
		}
		nodes[name] = n
		return n
	}
	s1, s2 := add("spine1", discovery.NodeSwitch, 0x500, 8), add("spine2", discovery.NodeSwitch, 0x600, 8)
	for i, leaf := range []string{"leaf1", "leaf2"} {
		l := add(leaf, discovery.NodeSwitch, uint64(0x300+0x100*i), 8)
		discovery.Link(l.Port(5), s1.Port(2*i+1))
		discovery.Link(l.Port(6), s1.Port(2*i+2))
		discovery.Link(l.Port(7), s2.Port(2*i+1))
		discovery.Link(l.Port(8), s2.Port(2*i+2))
		for h := 1; h <= 2; h++ {
			name := "host" + string(rune('0'+2*i+h))
			hn := add(name, discovery.NodeCA, uint64(0x1000+0x10*(2*i+h)), 1)
			discovery.Link(hn.Port(1), l.Port(h))
		}
	}
	f.From = nodes["host1"]
	return f, nodes
}

func end(p *discovery.Port) *jsonv.LinkEnd {
	return &jsonv.LinkEnd{NodeGUID: mad.GUID(p.Node.GUID), NodeName: p.Node.Desc(), Port: p.Num, PortGUID: mad.GUID(p.GUID)}
}

func place(n *discovery.Node, port int) *diagnose.Place {
	return &diagnose.Place{NodeGUID: n.GUID, NodeName: n.Desc(), Port: port}
}

// sampleReport has a finding on a spine link, one on a host's link, one
// on a switch alone and one on the fabric as a whole, and more links
// findings than the text lists.
func sampleReport() (*diagnose.Report, *discovery.Fabric) {
	f, n := fatTree()
	r := &diagnose.Report{Complete: false, Fabric: diagnose.FabricSummary{Nodes: 8, Switches: 4, CAs: 4, Links: 12},
		Summary: []diagnose.CheckSummary{{Check: "walk"}, {Check: "sm", Errors: 1}, {Check: "nodes", Infos: 1},
			{Check: "links", Errors: 7, Warnings: 1}, {Check: "topology", Skipped: "no expected fabric (--expect)"}}}
	r.Findings = append(r.Findings,
		&diagnose.Finding{Check: "sm", Code: "sm.no_master", Severity: diagnose.Error, Message: "1 subnet manager, none MASTER"},
		&diagnose.Finding{Check: "nodes", Code: "nodes.example", Severity: diagnose.Info, Message: "a note on a switch", At: place(n["spine2"], diagnose.NoPort)},
		&diagnose.Finding{Check: "links", Code: "links.ends_disagree", Severity: diagnose.Error, Message: "this end runs at 1xSDR, the other at 4xSDR",
			At: place(n["leaf1"], 5), Remote: end(n["spine1"].Port(1))})
	for i := 0; i < 6; i++ {
		r.Findings = append(r.Findings, &diagnose.Finding{Check: "links", Code: "links.port_init", Severity: diagnose.Error,
			Message: "the port is in state Initialize", At: place(n["leaf2"], 5+i%4), Remote: end(n["leaf2"].Port(5 + i%4).Remote)})
	}
	r.Findings = append(r.Findings, &diagnose.Finding{Check: "links", Code: "links.mtu_below_capability", Severity: diagnose.Warning,
		Message: "MTU 1024, both ends support 2048", At: place(n["host3"], 1), Remote: end(n["leaf2"].Port(1))})
	return r, f
}

func TestWriteText(t *testing.T) {
	r, _ := sampleReport()
	var b bytes.Buffer
	if err := WriteText(&b, r, TextOptions{PerCheck: DefaultPerCheck}); err != nil {
		t.Fatal(err)
	}
	want := `Fabric: 8 nodes (4 switches, 4 CAs, 0 routers), 12 links; the sweep is INCOMPLETE: what it could not read is listed under walk

+----------+--------+----------+----------------------------------------+
| CHECK    | ERRORS | WARNINGS | NOTE                                   |
+----------+--------+----------+----------------------------------------+
| walk     |      0 |        0 |                                        |
| sm       |      1 |        0 |                                        |
| nodes    |      0 |        0 |                                        |
| links    |      7 |        1 |                                        |
| topology |      - |        - | not run: no expected fabric (--expect) |
+----------+--------+----------+----------------------------------------+

sm: 1 error, 0 warnings, 0 infos
  error   sm.no_master  1 subnet manager, none MASTER

nodes: 0 errors, 0 warnings, 1 info
  info    nodes.example  "spine2" (0x0000000000000600): a note on a switch

links: 7 errors, 1 warning, 0 infos
  error   links.ends_disagree  "leaf1" (0x0000000000000300) port 5 -> "spine1" (0x0000000000000500) port 1: this end runs at 1xSDR, the other at 4xSDR
  error   links.port_init  "leaf2" (0x0000000000000400) port 5 -> "spine1" (0x0000000000000500) port 3: the port is in state Initialize
  error   links.port_init  "leaf2" (0x0000000000000400) port 6 -> "spine1" (0x0000000000000500) port 4: the port is in state Initialize
  error   links.port_init  "leaf2" (0x0000000000000400) port 7 -> "spine2" (0x0000000000000600) port 3: the port is in state Initialize
  error   links.port_init  "leaf2" (0x0000000000000400) port 8 -> "spine2" (0x0000000000000600) port 4: the port is in state Initialize
  ... and 3 more (--all lists them)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteText(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "more (--all") || !strings.Contains(b.String(), "links.mtu_below_capability  \"host3\"") {
		t.Errorf("--all:\n%s", b.String())
	}
}
