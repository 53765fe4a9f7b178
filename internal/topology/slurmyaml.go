package topology

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strings"

	"github.com/ibtool/ibtool/internal/hostlist"
)

// Block is a group of hosts for Slurm's topology/block plugin: the hosts
// of one leaf switch (a tree level 0 switch), one switch hop apart.
type Block struct {
	Name  string   // the leaf switch's name
	Nodes []string // host names, in hostlist order
}

// Blocks returns t's blocks and the block sizes for topology/block.
//
// Slurm pairs blocks that are next to each other in the file into larger
// blocks (2, 4, 8 ... blocks), so the blocks are in tree order: from each
// top switch down, the leaves below one switch together. The sizes are
// node counts: the planning base size is the smallest block's (Slurm
// refuses a block with fewer nodes than the base), then the base times
// 2, 4, ... up to the largest power of two not above the number of
// blocks (sizes must be the base times powers of two).
func (t *Tree) Blocks() ([]Block, []int) {
	byName := map[string]*Switch{}
	hasParent := map[string]bool{}
	for _, s := range t.Switches {
		byName[s.Name] = s
		for _, c := range s.Switches {
			hasParent[c] = true
		}
	}
	var blocks []Block
	seen := map[string]bool{}
	var visit func(s *Switch)
	visit = func(s *Switch) {
		if s == nil || seen[s.Name] {
			return
		}
		seen[s.Name] = true
		if len(s.Nodes) > 0 {
			blocks = append(blocks, Block{Name: s.Name, Nodes: s.Nodes})
		}
		for _, c := range s.Switches {
			visit(byName[c])
		}
	}
	// The tops, highest level first, in name order within a level
	// (t.Switches is sorted by level, then name).
	var tops []*Switch
	for _, s := range t.Switches {
		if !hasParent[s.Name] {
			tops = append(tops, s)
		}
	}
	sort.SliceStable(tops, func(i, j int) bool { return tops[i].Level > tops[j].Level })
	for _, s := range tops {
		visit(s)
	}
	if len(blocks) == 0 {
		return nil, nil
	}
	base := len(blocks[0].Nodes)
	for _, b := range blocks {
		base = min(base, len(b.Nodes))
	}
	var sizes []int
	for k := 0; k < bits.Len(uint(len(blocks))); k++ {
		sizes = append(sizes, base<<k)
	}
	return blocks, sizes
}

// Names of the two topologies in topology.yaml: a partition picks one
// with Topology= in slurm.conf; the tree is the cluster's default.
const (
	YAMLTreeName  = "tree"
	YAMLBlockName = "block"
)

// WriteSlurmYAML writes t as Slurm's topology.yaml (topology.yaml(5),
// Slurm 25.05 and later): a list of two topologies, the switch tree for
// topology/tree (the cluster default, the same switches as topology.conf)
// and the leaves' hosts as blocks for topology/block. The layout follows
// the example in topology.yaml(5): block style only (Slurm's reader takes
// no flow style), names and host lists quoted.
func (t *Tree) WriteSlurmYAML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# topology.yaml for Slurm's topology/tree and topology/block plugins, written by ibtool topology")
	fmt.Fprintf(bw, "- topology: %s\n  cluster_default: true\n", YAMLTreeName)
	if len(t.Switches) == 0 {
		fmt.Fprintln(bw, "  # no switches: every host on one flat network")
		fmt.Fprintln(bw, "  flat: true")
	} else {
		fmt.Fprintln(bw, "  tree:\n    switches:")
		for _, s := range t.Switches {
			fmt.Fprintf(bw, "    - switch: %s\n", yamlQuote(s.Name))
			if len(s.Switches) > 0 {
				fmt.Fprintf(bw, "      children: %s\n", yamlQuote(hostlist.Compress(s.Switches)))
			}
			if len(s.Nodes) > 0 {
				fmt.Fprintf(bw, "      nodes: %s\n", yamlQuote(hostlist.Compress(s.Nodes)))
			}
		}
	}
	blocks, sizes := t.Blocks()
	if len(blocks) == 0 {
		fmt.Fprintln(bw, "# no switch has hosts: no block topology")
	} else {
		fmt.Fprintf(bw, "- topology: %s\n  cluster_default: false\n  block:\n    block_sizes:\n", YAMLBlockName)
		for _, n := range sizes {
			fmt.Fprintf(bw, "      - %d\n", n)
		}
		fmt.Fprintln(bw, "    blocks:")
		for _, b := range blocks {
			fmt.Fprintf(bw, "    - block: %s\n      nodes: %s\n", yamlQuote(b.Name), yamlQuote(hostlist.Compress(b.Nodes)))
		}
	}
	t.writeComments(bw)
	return bw.Flush()
}

// yamlQuote is s as a YAML double-quoted scalar: a host list such as
// "[a-b]" or a GUID such as "0x10" is then a string to any YAML reader.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
