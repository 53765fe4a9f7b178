package topology

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
)

// builder makes a fabric node by node, every port present.
type builder struct{ f *discovery.Fabric }

func (b builder) node(guid uint64, typ int, desc string, ports int) *discovery.Node {
	n := b.f.AddNode(&discovery.Node{GUID: guid, Type: typ, NumPorts: ports, NodeDesc: []byte(desc)})
	for p := 0; p <= ports; p++ {
		n.Ports[p] = &discovery.Port{Node: n, Num: p}
	}
	return n
}

func link(a *discovery.Node, pa int, b *discovery.Node, pb int) {
	discovery.Link(a.Ports[pa], b.Ports[pb])
}

// threeLevels is a three-level tree: core above two spines, each above
// two leaves with hosts; a leaf carries a CA with no description (left
// out) and a host with two HCAs (one name); two spares share a name
// (GUIDs instead) and hang off the core, the second off the first.
func threeLevels() *discovery.Fabric {
	b := builder{discovery.NewFabric()}
	core := b.node(0x10, discovery.NodeSwitch, "core", 8)
	var spines, leaves []*discovery.Node
	for i, name := range []string{"spine1", "spine2"} {
		s := b.node(uint64(0x20+i), discovery.NodeSwitch, name, 8)
		link(core, i+1, s, 8)
		spines = append(spines, s)
	}
	for i, name := range []string{"leaf1", "leaf2", "leaf3", "leaf4"} {
		l := b.node(uint64(0x30+i), discovery.NodeSwitch, name, 8)
		link(spines[i/2], i%2+1, l, 8)
		leaves = append(leaves, l)
	}
	hosts := []string{"cn01 HCA-1", "cn02 HCA-1", "cn03 HCA-1", "cn04 HCA-1", "cn05 HCA-1", "cn05 HCA-2", "", "cn10 HCA-1"}
	for i, h := range hosts {
		ca := b.node(uint64(0x100+i), discovery.NodeCA, h, 1)
		link(leaves[i/2], i%2+1, ca, 1)
	}
	spare1 := b.node(0x40, discovery.NodeSwitch, "spare", 8)
	spare2 := b.node(0x41, discovery.NodeSwitch, "spare", 8)
	link(core, 3, spare1, 1)
	link(spare1, 2, spare2, 1)
	return b.f
}

func TestThreeLevels(t *testing.T) {
	b := builder{threeLevels()}
	tree := Build(b.f, nil)
	var out bytes.Buffer
	tree.WriteSlurm(&out)
	want := `# topology.conf for Slurm's topology/tree plugin, written by ibtool topology
SwitchName=leaf1 Nodes=cn[01-02]
SwitchName=leaf2 Nodes=cn[03-04]
SwitchName=leaf3 Nodes=cn05
SwitchName=leaf4 Nodes=cn10
SwitchName=spine1 Switches=leaf[1-2]
SwitchName=spine2 Switches=leaf[3-4]
SwitchName=core Switches=spine[1-2]
SwitchName=0x0000000000000040 Switches=core
SwitchName=0x0000000000000041 Switches=0x0000000000000040
# left out, no host name (node-name-map or NodeDescription): 0x0000000000000106
`
	// Levels count hops from the hosts: the spares hanging off the core
	// (levels 3 and 4) end up above it, harmless for Slurm (the top still
	// reaches every host).
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	levels := map[string]int{}
	for _, s := range tree.Switches {
		levels[s.Name] = s.Level
	}
	if levels["core"] != 2 || levels["0x0000000000000040"] != 3 || levels["0x0000000000000041"] != 4 {
		t.Errorf("levels %v", levels)
	}
	if len(tree.Split) != 0 {
		t.Errorf("split %v: core reaches every host", tree.Split)
	}
	var dot bytes.Buffer
	WriteDOT(&dot, b.f, nil)
	if n := strings.Count(dot.String(), " -- "); n != 2+4+8+2 {
		t.Errorf("%d edges in the DOT graph, want 16 (every link once)", n)
	}
}
