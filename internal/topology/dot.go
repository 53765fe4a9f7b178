package topology

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
)

// Tiers places every node of f in a tier: the end nodes (CAs and routers)
// are tier 0 and a switch's tier is one more than its tree level, its
// distance in switch hops from the nearest switch with a CA (the leaves
// are tier 1, their spines tier 2, and so on).
func Tiers(f *discovery.Fabric) map[*discovery.Node]int {
	tier := map[*discovery.Node]int{}
	for sw, l := range levels(f.NodesOfType(discovery.NodeSwitch)) {
		tier[sw] = l + 1
	}
	for _, n := range f.SortedByGUID() {
		if n.Type != discovery.NodeSwitch {
			tier[n] = 0
		}
	}
	return tier
}

// WriteDOT writes every node and link of f as an undirected Graphviz
// graph: nodes by GUID, labelled with their names (switches boxes,
// routers diamonds), the nodes of one tier on one rank, and one edge per
// link with its port numbers at either end. dot ranks an edge's tail
// above its head, so each link is written from its upper tier down, and
// the spines come out on top with the hosts at the bottom.
func WriteDOT(w io.Writer, f *discovery.Fabric, names *nodename.Map) error {
	tier := Tiers(f)
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "graph fabric {")
	fmt.Fprintln(bw, "\tnode [shape=ellipse];")
	nodes := f.SortedByGUID()
	byTier := map[int][]string{}
	top := 0
	for _, n := range nodes {
		shape := ""
		switch n.Type {
		case discovery.NodeSwitch:
			shape = ", shape=box"
		case discovery.NodeRouter:
			shape = ", shape=diamond"
		}
		fmt.Fprintf(bw, "\t%s [label=%s%s];\n", dotID(n), dotQuote(names.Name(n.GUID, n.Desc())), shape)
		byTier[tier[n]] = append(byTier[tier[n]], dotID(n))
		top = max(top, tier[n])
	}
	for t := top; t >= 0; t-- {
		if len(byTier[t]) > 0 {
			fmt.Fprintf(bw, "\t{ rank=same; %s; }\n", strings.Join(byTier[t], "; "))
		}
	}
	for _, n := range nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || !upperEnd(p, tier) {
				continue
			}
			r := p.Remote
			fmt.Fprintf(bw, "\t%s -- %s [taillabel=\"%d\", headlabel=\"%d\"];\n", dotID(n), dotID(r.Node), p.Num, r.Num)
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// upperEnd says whether p is the end a link is written from: the one in
// the higher tier, or within one tier the one of the lower node GUID
// (then port number), so each link is written once.
func upperEnd(p *discovery.Port, tier map[*discovery.Node]int) bool {
	r := p.Remote
	if tier[p.Node] != tier[r.Node] {
		return tier[p.Node] > tier[r.Node]
	}
	if p.Node.GUID != r.Node.GUID {
		return p.Node.GUID < r.Node.GUID
	}
	return p.Num < r.Num
}

// dotID is a node's name in the graph, its GUID.
func dotID(n *discovery.Node) string { return fmt.Sprintf("\"0x%016x\"", n.GUID) }

// dotQuote is s as a DOT quoted string.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
