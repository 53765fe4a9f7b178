package topology

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
)

// Tiers count hops from the hosts: hosts 0, leaves 1, spines 2, the core
// 3, and the spares hanging off the core above it (4 and 5).
func TestTiers(t *testing.T) {
	f := threeLevels()
	got := map[string]int{}
	for n, tier := range Tiers(f) {
		got[fmt.Sprintf("%#x", n.GUID)] = tier
	}
	want := map[string]int{"0x10": 3, "0x20": 2, "0x21": 2, "0x30": 1, "0x31": 1, "0x32": 1, "0x33": 1, "0x40": 4, "0x41": 5}
	for i := 0; i < 8; i++ {
		want[fmt.Sprintf("%#x", 0x100+i)] = 0
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tiers %v\nwant %v", got, want)
	}
}

// Graphviz lays the graph out by tier: every node of a tier on one row,
// the rows in tier order with the hosts at the bottom, so every link
// runs from a higher row down (what the lower-GUID-first edges did not
// give: spines ranked beside the hosts).
func TestDOTRanksByTier(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("dot is missing (Debian: graphviz, installed by make deps); CI checks the layout with it")
		}
		t.Skip("dot (Graphviz) is missing: the layout is not checked")
	}
	f := threeLevels()
	var graph bytes.Buffer
	if err := WriteDOT(&graph, f, nil); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dot, "-Tplain")
	cmd.Stdin = &graph
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dot -Tplain: %v\n%s\ninput:\n%s", err, out, graph.String())
	}
	// -Tplain: "node NAME X Y ..." with Y growing upwards.
	y := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 4 && fields[0] == "node" {
			v, err := strconv.ParseFloat(fields[3], 64)
			if err != nil {
				t.Fatalf("dot -Tplain: %q: %v", line, err)
			}
			y[strings.Trim(fields[1], `"`)] = v
		}
	}
	rowOf := map[int]float64{}
	for n, tier := range Tiers(f) {
		name := fmt.Sprintf("0x%016x", n.GUID)
		ny, ok := y[name]
		if !ok {
			t.Fatalf("dot placed no node %s:\n%s", name, out)
		}
		if row, seen := rowOf[tier]; seen && row != ny {
			t.Errorf("tier %d: %s at y=%g, others at y=%g", tier, name, ny, row)
		}
		rowOf[tier] = ny
	}
	for tier := 1; tier <= 5; tier++ {
		if rowOf[tier] <= rowOf[tier-1] {
			t.Errorf("tier %d at y=%g, not above tier %d at y=%g", tier, rowOf[tier], tier-1, rowOf[tier-1])
		}
	}
	for _, n := range f.SortedByGUID() {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Node.Type == discovery.NodeCA && y[fmt.Sprintf("0x%016x", n.GUID)] != rowOf[0] {
				t.Errorf("host %#x is not on the bottom row", n.GUID)
			}
		}
	}
}

// Each link is written once, from the upper tier down (within a tier from
// the lower GUID: TestThreeLevels' spares). A router is an end node, in
// tier 0, but not a host: s2, with only the router, is a tier above s1.
func TestDOTEdges(t *testing.T) {
	b := builder{discovery.NewFabric()}
	s1 := b.node(0x2, discovery.NodeSwitch, "s1", 4)
	s2 := b.node(0x1, discovery.NodeSwitch, "s2", 4)
	ca := b.node(0x3, discovery.NodeCA, "h1 HCA", 1)
	r := b.node(0x4, discovery.NodeRouter, "r1", 1)
	link(s1, 1, ca, 1)
	link(s1, 2, s2, 3)
	link(s2, 1, r, 1)
	var out bytes.Buffer
	if err := WriteDOT(&out, b.f, nil); err != nil {
		t.Fatal(err)
	}
	want := `graph fabric {
	node [shape=ellipse];
	"0x0000000000000001" [label="s2", shape=box];
	"0x0000000000000002" [label="s1", shape=box];
	"0x0000000000000003" [label="h1 HCA"];
	"0x0000000000000004" [label="r1", shape=diamond];
	{ rank=same; "0x0000000000000001"; }
	{ rank=same; "0x0000000000000002"; }
	{ rank=same; "0x0000000000000003"; "0x0000000000000004"; }
	"0x0000000000000001" -- "0x0000000000000004" [taillabel="1", headlabel="1"];
	"0x0000000000000001" -- "0x0000000000000002" [taillabel="3", headlabel="2"];
	"0x0000000000000002" -- "0x0000000000000003" [taillabel="1", headlabel="1"];
}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
