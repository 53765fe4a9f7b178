package routing

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// Directed routes over a discovered fabric, for the commands that change
// port states (set_port_state, init_all_ports): how to reach a port
// without crossing the links being changed. Only switches forward
// directed SMPs (IBA 14.2.2); the local node sends out of its own port
// only, unless it is a switch.

// DRRoute is a directed route to a node from the local one, and the port
// it arrives on.
type DRRoute struct {
	Path    []byte
	Arrival int
}

// DRRoutes finds breadth first the shortest directed route from the
// fabric's local node to every node it can reach without using a port
// in avoid (either end of a link avoids the link), within the 63 hops a
// directed route holds.
func DRRoutes(f *discovery.Fabric, avoid map[*discovery.Port]bool) map[*discovery.Node]DRRoute {
	routes := map[*discovery.Node]DRRoute{f.From: {Path: []byte{0}, Arrival: f.FromPort}}
	queue := []*discovery.Node{f.From}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n != f.From && n.Type != discovery.NodeSwitch {
			continue
		}
		for num, p := range n.Ports {
			if p == nil || num == 0 || p.Remote == nil || avoid[p] || avoid[p.Remote] {
				continue
			}
			if n == f.From && n.Type != discovery.NodeSwitch && num != f.FromPort {
				continue
			}
			next := p.Remote.Node
			if _, seen := routes[next]; seen {
				continue
			}
			path := append(append([]byte{}, routes[n].Path...), byte(num))
			if len(path)-1 > mad.MaxDRHops {
				continue
			}
			routes[next] = DRRoute{Path: path, Arrival: p.Remote.Num}
			queue = append(queue, next)
		}
	}
	return routes
}

// WalkDR follows a directed route through the fabric from the local
// node: the node it reaches and the port it arrives on.
func WalkDR(f *discovery.Fabric, path []byte) (*discovery.Node, int, error) {
	n, arrival := f.From, f.FromPort
	for i, hop := range path[1:] {
		p := n.Port(int(hop))
		if p == nil || p.Remote == nil {
			return nil, 0, fmt.Errorf("DR path %s: hop %d leaves %s by port %d, which has no link", mad.FormatDRPath(path), i+1, NodeLabel(n), hop)
		}
		n, arrival = p.Remote.Node, p.Remote.Num
	}
	return n, arrival, nil
}

// RouteToPort is the directed route an SMP changing port p takes, from
// routes that avoid the links being changed: the route to p's switch, or
// else (and always for a CA, whose SMA changes only the port an SMP
// arrives on) a route whose last hop is p's own link, so that the change
// is the last SMP to cross it.
func RouteToPort(f *discovery.Fabric, routes map[*discovery.Node]DRRoute, p *discovery.Port) ([]byte, error) {
	n := p.Node
	if r, ok := routes[n]; ok && n.Type == discovery.NodeSwitch {
		return r.Path, nil
	}
	if n == f.From && (n.Type == discovery.NodeSwitch || p.Num == f.FromPort) {
		return []byte{0}, nil
	}
	if p.Remote != nil {
		peer := p.Remote.Node
		if r, ok := routes[peer]; ok && (peer.Type == discovery.NodeSwitch || peer == f.From) {
			return append(append([]byte{}, r.Path...), byte(p.Remote.Num)), nil
		}
	}
	return nil, fmt.Errorf("no directed route reaches %s without crossing another link being changed", PortLabel(p))
}

// OwnsLID reports whether lid is one of n's: a switch's port 0 range, or
// one of a CA's ports'.
func OwnsLID(n *discovery.Node, lid uint16) bool { return lidPort(n, lid) != nil }

// LIDOwner is the node and the port that hold lid (port 0 for a switch),
// nil when none does.
func LIDOwner(f *discovery.Fabric, lid uint16) (*discovery.Node, int) {
	for _, n := range f.Nodes {
		p := lidPort(n, lid)
		switch {
		case p == nil:
		case n.Type == discovery.NodeSwitch:
			return n, 0
		default:
			return n, p.Num
		}
	}
	return nil, 0
}

// lidPort is n's port whose LID range holds lid.
func lidPort(n *discovery.Node, lid uint16) *discovery.Port {
	for _, p := range n.Ports {
		if p != nil && p.BaseLID != 0 && lid >= p.BaseLID && int(lid) <= lidEnd(p) {
			return p
		}
	}
	return nil
}

// NodeLabel names a node in messages: its GUID and description.
func NodeLabel(n *discovery.Node) string {
	return fmt.Sprintf("0x%016x (%q)", n.GUID, n.Desc())
}

// PortLabel names a port in messages.
func PortLabel(p *discovery.Port) string {
	return fmt.Sprintf("%s port %d", NodeLabel(p.Node), p.Num)
}
