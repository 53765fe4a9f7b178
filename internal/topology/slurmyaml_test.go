package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
)

// The topology.yaml of the three-level tree, laid out as topology.yaml(5)'s
// example: a list of topologies, each with "topology" (its name) first,
// then cluster_default, then exactly one of tree or block; a tree has
// "switches", each with "switch" and "children" or "nodes"; a block
// topology "block_sizes" and "blocks", each with "block" and "nodes". The
// switches are topology.conf's (TestThreeLevels); the blocks the four
// leaves in tree order, sizes 1 (leaf3 and leaf4 have one named host
// each), 2 and 4 (four blocks).
func TestSlurmYAML(t *testing.T) {
	got := slurmYAML(t, threeLevels(), nil)
	want := `# topology.yaml for Slurm's topology/tree and topology/block plugins, written by ibtool topology
- topology: tree
  cluster_default: true
  tree:
    switches:
    - switch: "leaf1"
      nodes: "cn[01-02]"
    - switch: "leaf2"
      nodes: "cn[03-04]"
    - switch: "leaf3"
      nodes: "cn05"
    - switch: "leaf4"
      nodes: "cn10"
    - switch: "spine1"
      children: "leaf[1-2]"
    - switch: "spine2"
      children: "leaf[3-4]"
    - switch: "core"
      children: "spine[1-2]"
    - switch: "0x0000000000000040"
      children: "core"
    - switch: "0x0000000000000041"
      children: "0x0000000000000040"
- topology: block
  cluster_default: false
  block:
    block_sizes:
      - 1
      - 2
      - 4
    blocks:
    - block: "leaf1"
      nodes: "cn[01-02]"
    - block: "leaf2"
      nodes: "cn[03-04]"
    - block: "leaf3"
      nodes: "cn05"
    - block: "leaf4"
      nodes: "cn10"
# left out, no host name (node-name-map or NodeDescription): 0x0000000000000106
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	checkYAML(t, got, 9, 4)
}

// Blocks are in tree order, not name order: Slurm pairs neighbouring
// blocks, which should be the leaves of one spine. The base size is the
// smallest block's hosts (2; leaf1 has 3), then doubled while the
// doubled count of blocks fits (4 blocks: 2, 4, 8).
func TestBlocksInTreeOrder(t *testing.T) {
	b := builder{discovery.NewFabric()}
	core := b.node(0x10, discovery.NodeSwitch, "core", 8)
	spine1 := b.node(0x20, discovery.NodeSwitch, "spine1", 8)
	spine2 := b.node(0x21, discovery.NodeSwitch, "spine2", 8)
	link(core, 1, spine1, 8)
	link(core, 2, spine2, 8)
	host := 0
	for i, leafHosts := range []int{3, 2, 2, 2} {
		leaf := b.node(uint64(0x30+i), discovery.NodeSwitch, fmt.Sprintf("leaf%d", i+1), 8)
		// leaf1 and leaf3 below spine1, leaf2 and leaf4 below spine2.
		link([]*discovery.Node{spine1, spine2}[i%2], i/2+1, leaf, 8)
		for p := 1; p <= leafHosts; p++ {
			host++
			ca := b.node(uint64(0x100+host), discovery.NodeCA, fmt.Sprintf("n%02d HCA-1", host), 1)
			link(leaf, p, ca, 1)
		}
	}
	blocks, sizes := Build(b.f, nil).Blocks()
	var got []string
	for _, bl := range blocks {
		got = append(got, bl.Name+"="+strings.Join(bl.Nodes, ","))
	}
	if want := "leaf1=n01,n02,n03 leaf3=n06,n07 leaf2=n04,n05 leaf4=n08,n09"; strings.Join(got, " ") != want {
		t.Errorf("blocks %q, want %q", got, want)
	}
	if fmt.Sprint(sizes) != "[2 4 8]" {
		t.Errorf("block sizes %v, want [2 4 8]", sizes)
	}
	checkYAML(t, slurmYAML(t, b.f, nil), 7, 4)
}

// No switch: one flat network; switches without hosts: no blocks (Slurm
// refuses a block topology without any); names that YAML would read as
// something else stay strings.
func TestSlurmYAMLEdges(t *testing.T) {
	b := builder{discovery.NewFabric()}
	h1 := b.node(0x1, discovery.NodeCA, "h1", 1)
	h2 := b.node(0x2, discovery.NodeCA, "h2", 1)
	link(h1, 1, h2, 1)
	got := slurmYAML(t, b.f, nil)
	if !strings.Contains(got, "- topology: tree\n  cluster_default: true\n  # no switches: every host on one flat network\n  flat: true\n# no switch has hosts: no block topology\n") {
		t.Errorf("back-to-back hosts:\n%s", got)
	}
	checkYAML(t, got, 0, 0)

	b = builder{discovery.NewFabric()}
	s := b.node(0x10, discovery.NodeSwitch, `true`, 4)
	ca := b.node(0x11, discovery.NodeCA, `a\b`, 1)
	link(s, 1, ca, 1)
	names, _, err := nodename.Parse(strings.NewReader("0x11 on\n"))
	if err != nil {
		t.Fatal(err)
	}
	got = slurmYAML(t, b.f, names)
	if !strings.Contains(got, "- switch: \"true\"\n      nodes: \"on\"\n") {
		t.Errorf("names YAML would read as booleans:\n%s", got)
	}
	checkYAML(t, got, 1, 1)
	if q := yamlQuote(`a"b\c`); q != `"a\"b\\c"` {
		t.Errorf("yamlQuote: %s", q)
	}
}

func slurmYAML(t *testing.T, f *discovery.Fabric, names *nodename.Map) string {
	t.Helper()
	var out bytes.Buffer
	if err := Build(f, names).WriteSlurmYAML(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// checkYAML reads text with a YAML parser (PyYAML) and checks the
// structure topology.yaml(5) describes, with the numbers of switches and
// blocks given (0 switches: a flat tree; 0 blocks: no block topology).
func checkYAML(t *testing.T, text string, switches, blocks int) {
	t.Helper()
	cmd := exec.Command("python3", "-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		msg := fmt.Sprintf("python3 with PyYAML cannot read the YAML (%v)", err)
		if ee, ok := err.(*exec.ExitError); ok && !strings.Contains(string(ee.Stderr), "No module named") {
			t.Fatalf("%s:\n%s\n%s", msg, ee.Stderr, text)
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: make deps installs python3-yaml, and CI checks the YAML with it", msg)
		}
		t.Skipf("%s: the YAML is not parsed", msg)
	}
	type entry struct {
		Switch, Children, Nodes, Block *string
	}
	var topos []struct {
		Topology string
		Default  *bool `json:"cluster_default"`
		Flat     *bool
		Tree     *struct{ Switches []entry }
		Block    *struct {
			Sizes  []int `json:"block_sizes"`
			Blocks []entry
		}
	}
	if err := json.Unmarshal(out, &topos); err != nil {
		t.Fatalf("not a list of topologies: %v\n%s", err, out)
	}
	if len(topos) != 1+min(blocks, 1) {
		t.Fatalf("%d topologies, want %d:\n%s", len(topos), 1+min(blocks, 1), out)
	}
	tree := topos[0]
	if tree.Topology != YAMLTreeName || tree.Default == nil || !*tree.Default || tree.Block != nil {
		t.Errorf("first topology: %s", out)
	}
	if switches == 0 {
		if tree.Flat == nil || !*tree.Flat || tree.Tree != nil {
			t.Errorf("a fabric without switches is not flat: %s", out)
		}
	} else if tree.Tree == nil || len(tree.Tree.Switches) != switches {
		t.Errorf("want %d switches: %s", switches, out)
	} else {
		for _, s := range tree.Tree.Switches {
			if s.Switch == nil || *s.Switch == "" || (s.Children == nil && s.Nodes == nil) || s.Block != nil {
				t.Errorf("switch entry %+v: want a name and children or nodes", s)
			}
		}
	}
	if blocks == 0 {
		return
	}
	block := topos[1]
	if block.Topology != YAMLBlockName || block.Default == nil || *block.Default || block.Tree != nil || block.Block == nil {
		t.Fatalf("second topology: %s", out)
	}
	if len(block.Block.Blocks) != blocks || len(block.Block.Sizes) == 0 {
		t.Errorf("want %d blocks and their sizes: %s", blocks, out)
	}
	for i, size := range block.Block.Sizes {
		if size != block.Block.Sizes[0]<<i {
			t.Errorf("block sizes %v: each must be the first times a power of two", block.Block.Sizes)
		}
	}
	for _, b := range block.Block.Blocks {
		if b.Block == nil || b.Nodes == nil || b.Switch != nil {
			t.Errorf("block entry %+v: want a name and nodes", b)
		}
	}
	// topology.yaml(5): "topology" must be each entry's first attribute.
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "- topology: ") {
			t.Errorf("a topology whose first attribute is not its name: %q", line)
		}
	}
}
