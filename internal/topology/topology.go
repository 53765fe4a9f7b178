// Package topology turns the fabric model into the switch hierarchy a
// scheduler wants: Slurm's topology.conf for its topology/tree plugin
// (one SwitchName line per switch, with the switches below it and the
// hosts attached to it), Slurm's topology.yaml (the same tree, and the
// leaves' hosts as blocks for topology/block), and a Graphviz graph of
// every link, ranked by tier.
package topology

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/hostlist"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// Tree is the fabric as a hierarchy of switches. Level 0 are the switches
// with hosts (CAs) attached; a switch's level is its distance, in switch
// hops, from the nearest of those. A link between levels L+1 and L makes
// the lower switch a child of the upper one; links within one level (a
// torus, a ring) cannot be said in Slurm's tree and are listed as peers.
type Tree struct {
	Switches []*Switch `json:"switches"`
	// Split lists, when no switch reaches every host through the switches
	// below it, the highest switches of each part: Slurm places no job
	// across those parts. Empty for a tree with a top.
	Split []string `json:"split_top_switches"`
	// Unnamed lists the CAs left out because neither the node-name-map
	// nor their NodeDescription gives them a name.
	Unnamed []mad.GUID `json:"unnamed_ca_guids"`
}

// Switch is one switch of the tree.
type Switch struct {
	GUID  mad.GUID `json:"node_guid"`
	Name  string   `json:"node_name"` // the SwitchName
	Level int      `json:"level"`
	// Switches are the names of the switches one level below linked to
	// this one; Nodes the host names of the CAs linked to it.
	Switches []string `json:"switches"`
	Nodes    []string `json:"nodes"`
	// Peers are the switches of the same level linked to this one.
	Peers []string `json:"peer_switches"`
}

// HostName is the name a CA goes by in a scheduler: the first word of its
// node-name-map name or of its NodeDescription ("node01" of "node01
// HCA-1"), as ibtool's commands take a node's name.
func HostName(n *discovery.Node, names *nodename.Map) string {
	host, _, _ := strings.Cut(strings.TrimSpace(names.Name(n.GUID, n.Desc())), " ")
	return host
}

// slurmUnsafe are the characters a name in topology.conf cannot hold:
// blanks end a value, '#' starts a comment, '=' a key, and the others are
// hostlist syntax.
const slurmUnsafe = " \t,[]#=\""

// switchNames names each switch for topology.conf: its host-part name
// with unsafe characters made '_', or its GUID when that is empty or not
// unique.
func switchNames(sws []*discovery.Node, names *nodename.Map) map[*discovery.Node]string {
	byName := map[string][]*discovery.Node{}
	for _, n := range sws {
		name := strings.Map(func(r rune) rune {
			if strings.ContainsRune(slurmUnsafe, r) {
				return '_'
			}
			return r
		}, HostName(n, names))
		byName[name] = append(byName[name], n)
	}
	out := map[*discovery.Node]string{}
	for name, ns := range byName {
		for _, n := range ns {
			if name == "" || len(ns) > 1 {
				out[n] = fmt.Sprintf("0x%016x", n.GUID)
			} else {
				out[n] = name
			}
		}
	}
	return out
}

// Build computes the tree of f.
func Build(f *discovery.Fabric, names *nodename.Map) *Tree {
	sws := f.NodesOfType(discovery.NodeSwitch)
	swName := switchNames(sws, names)
	level := levels(sws)
	t := &Tree{Unnamed: []mad.GUID{}}
	unnamed := map[uint64]bool{}
	for _, sw := range sws {
		s := &Switch{GUID: mad.GUID(sw.GUID), Name: swName[sw], Level: level[sw]}
		var below, hosts, peers []string
		for _, p := range sw.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil {
				continue
			}
			r := p.Remote.Node
			switch r.Type {
			case discovery.NodeCA:
				if h := HostName(r, names); h != "" {
					hosts = append(hosts, h)
				} else {
					unnamed[r.GUID] = true
				}
			case discovery.NodeSwitch:
				switch level[r] {
				case s.Level - 1:
					below = append(below, swName[r])
				case s.Level:
					if r != sw {
						peers = append(peers, swName[r])
					}
				}
			}
		}
		s.Switches, s.Nodes, s.Peers = uniqSorted(below), uniqSorted(hosts), uniqSorted(peers)
		t.Switches = append(t.Switches, s)
	}
	sort.Slice(t.Switches, func(i, j int) bool {
		a, b := t.Switches[i], t.Switches[j]
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		return a.Name != b.Name && hostlist.Sorted([]string{b.Name, a.Name})[0] == a.Name
	})
	t.Split = splitTops(t.Switches)
	for g := range unnamed {
		t.Unnamed = append(t.Unnamed, mad.GUID(g))
	}
	sort.Slice(t.Unnamed, func(i, j int) bool { return t.Unnamed[i] < t.Unnamed[j] })
	return t
}

// splitTops returns the switches no other is above when none of them
// reaches every host through its descendants, else an empty list.
// switches are sorted by level, lowest first.
func splitTops(switches []*Switch) []string {
	reach := map[string]map[string]bool{}
	all := map[string]bool{}
	hasParent := map[string]bool{}
	for _, s := range switches {
		r := map[string]bool{}
		for _, n := range s.Nodes {
			r[n], all[n] = true, true
		}
		for _, c := range s.Switches {
			hasParent[c] = true
			for n := range reach[c] {
				r[n] = true
			}
		}
		reach[s.Name] = r
	}
	var tops []string
	for _, s := range switches {
		if len(reach[s.Name]) == len(all) {
			return []string{}
		}
		if !hasParent[s.Name] {
			tops = append(tops, s.Name)
		}
	}
	return tops
}

// levels is each switch's distance in switch hops from the nearest switch
// with a CA attached (breadth first from all of those at once). Switches
// no such switch reaches start a search of their own at level 0.
func levels(sws []*discovery.Node) map[*discovery.Node]int {
	level := map[*discovery.Node]int{}
	var queue []*discovery.Node
	for _, sw := range sws {
		if hasCA(sw) {
			level[sw] = 0
			queue = append(queue, sw)
		}
	}
	bfs := func() {
		for len(queue) > 0 {
			sw := queue[0]
			queue = queue[1:]
			for _, p := range sw.Ports {
				if p == nil || p.Remote == nil || p.Remote.Node.Type != discovery.NodeSwitch {
					continue
				}
				if r := p.Remote.Node; !known(level, r) {
					level[r] = level[sw] + 1
					queue = append(queue, r)
				}
			}
		}
	}
	bfs()
	for _, sw := range sws {
		if !known(level, sw) {
			level[sw] = 0
			queue = append(queue, sw)
			bfs()
		}
	}
	return level
}

func known(m map[*discovery.Node]int, n *discovery.Node) bool {
	_, ok := m[n]
	return ok
}

func hasCA(sw *discovery.Node) bool {
	for _, p := range sw.Ports {
		if p != nil && p.Num > 0 && p.Remote != nil && p.Remote.Node.Type == discovery.NodeCA {
			return true
		}
	}
	return false
}

// uniqSorted is names in hostlist order, without duplicates, never nil
// (an empty JSON list).
func uniqSorted(names []string) []string { return hostlist.Sorted(names) }

// WriteSlurm writes t as a topology.conf for Slurm's topology/tree plugin.
func (t *Tree) WriteSlurm(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# topology.conf for Slurm's topology/tree plugin, written by ibtool topology")
	for _, s := range t.Switches {
		fmt.Fprintf(bw, "SwitchName=%s", s.Name)
		if len(s.Switches) > 0 {
			fmt.Fprintf(bw, " Switches=%s", hostlist.Compress(s.Switches))
		}
		if len(s.Nodes) > 0 {
			fmt.Fprintf(bw, " Nodes=%s", hostlist.Compress(s.Nodes))
		}
		fmt.Fprintf(bw, "\n")
	}
	t.writeComments(bw)
	return bw.Flush()
}

// writeComments writes, as comments, what the tree cannot say: links
// within a level, a fabric without a top, hosts without a name.
func (t *Tree) writeComments(bw *bufio.Writer) {
	for _, s := range t.Switches {
		if len(s.Peers) > 0 {
			fmt.Fprintf(bw, "# %s is also linked to %s (same level: not expressible in a tree)\n", s.Name, hostlist.Compress(s.Peers))
		}
	}
	if len(t.Split) > 0 {
		fmt.Fprintf(bw, "# no switch reaches every host through the switches below it: Slurm places no job across %s\n", hostlist.Compress(t.Split))
	}
	if len(t.Unnamed) > 0 {
		var g []string
		for _, u := range t.Unnamed {
			g = append(g, u.String())
		}
		fmt.Fprintf(bw, "# left out, no host name (node-name-map or NodeDescription): %s\n", strings.Join(g, " "))
	}
}
