package setportstate

// Directed routes and LID routes over a discovered fabric, for the
// commands that change port states (set_port_state, init_all_ports): how
// to reach a port without crossing the links being changed, and which
// links the local port's traffic with the SM depends on.

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// drRoute is a directed route to a node, and the port it arrives on.
type drRoute struct {
	path    []byte
	arrival int
}

// drRoutes finds breadth first the shortest directed route from the
// local node to every node it can reach without using a port in avoid
// (either end of a link avoids the link). Only switches forward directed
// SMPs; the local node sends out of its own port only, unless it is a
// switch.
func drRoutes(f *discovery.Fabric, avoid map[*discovery.Port]bool) map[*discovery.Node]drRoute {
	routes := map[*discovery.Node]drRoute{f.From: {path: []byte{0}, arrival: f.FromPort}}
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
			r := routes[n]
			path := append(append([]byte{}, r.path...), byte(num))
			if len(path)-1 > mad.MaxDRHops {
				continue
			}
			routes[next] = drRoute{path: path, arrival: p.Remote.Num}
			queue = append(queue, next)
		}
	}
	return routes
}

// walkDR follows a directed route through the fabric from the local node:
// the node it reaches and the port it arrives on.
func walkDR(f *discovery.Fabric, path []byte) (*discovery.Node, int, error) {
	n, arrival := f.From, f.FromPort
	for i, hop := range path[1:] {
		p := n.Port(int(hop))
		if p == nil || p.Remote == nil {
			return nil, 0, fmt.Errorf("DR path %s: hop %d leaves %s by port %d, which has no link", mad.FormatDRPath(path), i+1, nodeLabel(n), hop)
		}
		n, arrival = p.Remote.Node, p.Remote.Num
	}
	return n, arrival, nil
}

// nodeLabel names a node in messages: its GUID and description.
func nodeLabel(n *discovery.Node) string {
	return fmt.Sprintf("0x%016x (%q)", n.GUID, n.Desc())
}

// portLabel names a port in messages.
func portLabel(p *discovery.Port) string {
	return fmt.Sprintf("%s port %d", nodeLabel(p.Node), p.Num)
}

// ownsLID reports whether lid is one of n's: a switch's port 0 range, or
// a CA port's.
func ownsLID(n *discovery.Node, lid uint16) bool {
	for _, p := range n.Ports {
		if p == nil || p.BaseLID == 0 {
			continue
		}
		if lid >= p.BaseLID && int(lid) < int(p.BaseLID)+1<<p.LMC {
			return true
		}
	}
	return false
}

// lidOwner is the node and port that hold lid (port 0 for a switch).
func lidOwner(f *discovery.Fabric, lid uint16) (*discovery.Node, int) {
	for _, n := range f.Nodes {
		if !ownsLID(n, lid) {
			continue
		}
		if n.Type == discovery.NodeSwitch {
			return n, 0
		}
		for _, p := range n.Ports {
			if p != nil && p.BaseLID != 0 && lid >= p.BaseLID && int(lid) < int(p.BaseLID)+1<<p.LMC {
				return n, p.Num
			}
		}
	}
	return nil, 0
}

// lidRouteLinks lists the ports a LID-routed packet from port from of
// node start to lid leaves by (from is ignored for a switch): the links
// it crosses, as each switch's LinearForwardingTable sends it. The
// tables are read over directed routes.
func lidRouteLinks(ctx context.Context, c *query.Client, f *discovery.Fabric, routes map[*discovery.Node]drRoute, start *discovery.Node, from int, lid uint16) ([]*discovery.Port, error) {
	var links []*discovery.Port
	n := start
	if n.Type != discovery.NodeSwitch {
		p := n.Port(from)
		if p == nil || p.Remote == nil {
			return nil, fmt.Errorf("%s has no link", portLabel(&discovery.Port{Node: n, Num: from}))
		}
		if ownsLID(n, lid) {
			return nil, nil
		}
		links, n = append(links, p), p.Remote.Node
	}
	for hops := 0; hops <= mad.MaxDRHops; hops++ {
		if ownsLID(n, lid) {
			return links, nil
		}
		if n.Type != discovery.NodeSwitch {
			return nil, fmt.Errorf("the route to LID %d ends at %s, which does not have it", lid, nodeLabel(n))
		}
		r, ok := routes[n]
		if !ok {
			return nil, fmt.Errorf("no directed route to %s", nodeLabel(n))
		}
		var lft mad.LinearForwardingTable
		if err := c.Get(ctx, query.DR(r.path), uint32(lid/64), nil, &lft); err != nil {
			return nil, fmt.Errorf("reading the forwarding table of %s: %w", nodeLabel(n), err)
		}
		out := n.Port(int(lft.Port[lid%64]))
		if out == nil || out.Num == 0 || out.Remote == nil {
			return nil, fmt.Errorf("%s has no route to LID %d", nodeLabel(n), lid)
		}
		links, n = append(links, out), out.Remote.Node
	}
	return nil, fmt.Errorf("no route to LID %d within %d hops", lid, mad.MaxDRHops)
}

// findTargetNode finds the node a target names, and the port it names
// (0 when it names the node only).
func findTargetNode(ctx context.Context, c *query.Client, f *discovery.Fabric, t endport.Target) (*discovery.Node, int, error) {
	t, err := c.ResolveName(ctx, t, c.Options().Names, f)
	if err != nil {
		return nil, 0, err
	}
	switch t.Kind {
	case endport.ByDRPath:
		n, arrival, err := walkDR(f, t.DRPath)
		if n != nil && n.Type == discovery.NodeSwitch {
			arrival = 0
		}
		return n, arrival, err
	case endport.ByLID:
		if n, num := lidOwner(f, t.LID); n != nil {
			return n, num, nil
		}
		return nil, 0, fmt.Errorf("no port of the fabric has LID %d", t.LID)
	case endport.ByGUID, endport.ByGID:
		guid := t.GUID
		if t.Kind == endport.ByGID {
			guid = uint64(mad.GID(t.GID).GUID())
		}
		for _, n := range f.Nodes {
			if n.GUID == guid {
				return n, 0, nil
			}
			for _, p := range n.Ports {
				if p != nil && p.GUID == guid && n.Type == discovery.NodeSwitch {
					return n, 0, nil // a switch's ports share its port GUID
				}
				if p != nil && p.GUID == guid {
					return n, p.Num, nil
				}
			}
		}
		return nil, 0, fmt.Errorf("no node or port of the fabric has GUID 0x%016x", guid)
	}
	return nil, 0, fmt.Errorf("not a target set_port_state can find")
}

// routeToPort is the directed route an SMP setting p takes: one that
// crosses none of the links being changed to p's node, or else (and
// always for a CA, whose SMA sets only the port an SMP arrives on) one
// whose last hop is p's own link: the Set is the last SMP to cross it.
func routeToPort(f *discovery.Fabric, routes map[*discovery.Node]drRoute, p *discovery.Port) ([]byte, error) {
	n := p.Node
	if r, ok := routes[n]; ok && n.Type == discovery.NodeSwitch {
		return r.path, nil
	}
	if n == f.From && (n.Type == discovery.NodeSwitch || p.Num == f.FromPort) {
		return []byte{0}, nil
	}
	if p.Remote != nil {
		peer := p.Remote.Node
		if r, ok := routes[peer]; ok && (peer.Type == discovery.NodeSwitch || peer == f.From) {
			return append(append([]byte{}, r.path...), byte(p.Remote.Num)), nil
		}
	}
	return nil, fmt.Errorf("no directed route reaches %s without crossing another link being changed", portLabel(p))
}
