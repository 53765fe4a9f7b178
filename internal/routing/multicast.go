package routing

import (
	"slices"

	"github.com/ibtool/ibtool/internal/discovery"
)

// Tree is how a multicast packet spreads from a source through the MFTs:
// a switch sends a copy out of every port of its entry for the MLID but
// the one it came in by.
type Tree struct {
	MLID int
	// Switches are the switches the packet reaches, breadth first from
	// the source, each with the port it came in by (0 at a source switch)
	// and the ports it sends copies out of.
	Switches []TreeSwitch
	// Reached are the end ports a copy is delivered to: CA and router
	// ports, and the port 0 of switches whose entry has it.
	Reached []*discovery.Port
	// Loops are the ports by which a copy comes back to a switch the
	// packet had reached already: the entries do not form a tree.
	Loops []PortRef
	// Stops are the ports copies are sent out of and lost: down,
	// unlinked, or leading out of what was read (End says which); and
	// the switches whose table could not be read (Port 0, End Unread).
	Stops []Stop
}

// TreeSwitch is a switch a multicast packet reaches.
type TreeSwitch struct {
	Node *discovery.Node
	In   int
	Out  []int
}

// PortRef is a port of a node.
type PortRef struct {
	Node *discovery.Node
	Port int
}

// Stop is where and how a route or a copy is lost.
type Stop struct {
	PortRef
	End Outcome
}

// Multicast follows mlid's entries from a node: from a switch, the
// packet starts there; from a CA or router, out of its port port.
func (t *Tables) Multicast(from *discovery.Node, port int, mlid int) Tree {
	tr := Tree{MLID: mlid}
	type visit struct {
		n  *discovery.Node
		in int
	}
	var queue []visit
	reached := map[*discovery.Node]bool{}
	// send follows the copy sent out of port p of n.
	send := func(n *discovery.Node, p int) {
		out := n.Port(p)
		switch {
		case out == nil || !active(out):
			tr.Stops = append(tr.Stops, Stop{PortRef{n, p}, PortDown})
		case out.Remote == nil:
			tr.Stops = append(tr.Stops, Stop{PortRef{n, p}, Unread})
		case out.Remote.Node.Type != discovery.NodeSwitch:
			tr.Reached = append(tr.Reached, out.Remote)
		case reached[out.Remote.Node]:
			tr.Loops = append(tr.Loops, PortRef{n, p})
		default:
			reached[out.Remote.Node] = true
			queue = append(queue, visit{out.Remote.Node, out.Remote.Num})
		}
	}
	if from.Type == discovery.NodeSwitch {
		reached[from] = true
		queue = append(queue, visit{from, 0})
	} else {
		send(from, port)
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		ports, ok := t.mcastPorts(v.n, mlid)
		if !ok {
			tr.Switches = append(tr.Switches, TreeSwitch{Node: v.n, In: v.in})
			tr.Stops = append(tr.Stops, Stop{PortRef{v.n, 0}, Unread})
			continue
		}
		ts := TreeSwitch{Node: v.n, In: v.in}
		for _, p := range ports.Ports() {
			if p == v.in {
				continue
			}
			ts.Out = append(ts.Out, p)
			if p == 0 {
				if p0 := v.n.Port(0); p0 != nil {
					tr.Reached = append(tr.Reached, p0)
				}
				continue
			}
			if p > v.n.NumPorts {
				tr.Stops = append(tr.Stops, Stop{PortRef{v.n, p}, BadPort})
				continue
			}
			send(v.n, p)
		}
		tr.Switches = append(tr.Switches, ts)
	}
	return tr
}

// mcastPorts is switch n's entry for mlid; ok is false when it was not
// read.
func (t *Tables) mcastPorts(n *discovery.Node, mlid int) (PortSet, bool) {
	sw := t.Switches[n.GUID]
	if sw == nil || sw.MFT == nil {
		return PortSet{}, false
	}
	for _, f := range sw.MFT.Failed {
		if f.Block == (mlid-MinMLID)/MLIDsPerBlock {
			return PortSet{}, false
		}
	}
	return sw.MFT.Ports(mlid), true
}

// MLIDs are the MLIDs some switch forwards to a port, in order.
func (t *Tables) MLIDs() []int {
	used := map[int]bool{}
	for _, sw := range t.Switches {
		m := sw.MFT
		for i := range m.Len() {
			for _, mask := range m.Masks[i*m.Chunks : (i+1)*m.Chunks] {
				if mask != 0 {
					used[m.First+i] = true
					break
				}
			}
		}
	}
	out := make([]int, 0, len(used))
	for mlid := range used {
		out = append(out, mlid)
	}
	slices.Sort(out)
	return out
}
