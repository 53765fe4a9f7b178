package topology

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
)

// WriteDOT writes every node and link of f as an undirected Graphviz
// graph: nodes by GUID, labelled with their names (switches boxes, the
// switches of one tree level on one rank), one edge per link with its
// port numbers at either end.
func WriteDOT(w io.Writer, f *discovery.Fabric, t *Tree, names *nodename.Map) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "graph fabric {")
	fmt.Fprintln(bw, "\tnode [shape=ellipse];")
	nodes := f.SortedByGUID()
	for _, n := range nodes {
		shape := ""
		switch n.Type {
		case discovery.NodeSwitch:
			shape = ", shape=box"
		case discovery.NodeRouter:
			shape = ", shape=diamond"
		}
		fmt.Fprintf(bw, "\t\"0x%016x\" [label=%s%s];\n", n.GUID, dotQuote(names.Name(n.GUID, n.Desc())), shape)
	}
	byLevel := map[int][]string{}
	maxLevel := -1
	for _, s := range t.Switches {
		byLevel[s.Level] = append(byLevel[s.Level], fmt.Sprintf("%q", s.GUID.String()))
		maxLevel = max(maxLevel, s.Level)
	}
	for l := 0; l <= maxLevel; l++ {
		if len(byLevel[l]) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\t{ rank=same; %s; }\n", strings.Join(byLevel[l], "; "))
	}
	for _, n := range nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || !firstEnd(p) {
				continue
			}
			r := p.Remote
			fmt.Fprintf(bw, "\t\"0x%016x\" -- \"0x%016x\" [taillabel=\"%d\", headlabel=\"%d\"];\n", n.GUID, r.Node.GUID, p.Num, r.Num)
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// firstEnd says whether p is the end a link is written from: the one of
// the lower node GUID (then port number), so each link is written once.
func firstEnd(p *discovery.Port) bool {
	r := p.Remote
	if p.Node.GUID != r.Node.GUID {
		return p.Node.GUID < r.Node.GUID
	}
	return p.Num < r.Num
}

// dotQuote is s as a DOT quoted string.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
