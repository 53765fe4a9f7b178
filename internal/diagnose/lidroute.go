package diagnose

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/routing"
)

// A counter read is a GMP routed by LID (IBA 13.4.3): when the switches'
// tables do not take the request from here to the port's PMA, or the
// reply back, the read cannot be answered however the link itself is.
// The walk check says so beside the failure, so that an operator looks
// at the routing finding that explains it, not at the port.

// routeBreak is where the LFTs as read end a request to port p's PMA
// (which "request") or its reply (which "reply"), without arriving; ok
// is false when both arrive, or when it cannot be told (no tables, no
// LID, a table not read).
func routeBreak(s *Snapshot, p *discovery.Port) (which string, r routing.Route, ok bool) {
	f := s.Fabric
	if s.Tables == nil || f.From == nil || p == nil {
		return "", routing.Route{}, false
	}
	here, hereLID := pmaEnd(f.From, f.FromPort)
	there, thereLID := pmaEnd(p.Node, p.Num)
	if hereLID == 0 || thereLID == 0 {
		return "", routing.Route{}, false
	}
	if r = s.Tables.Trace(f.From, here, thereLID); broken(r) {
		return "request", r, true
	}
	if r = s.Tables.Trace(p.Node, there, hereLID); broken(r) {
		return "reply", r, true
	}
	return "", routing.Route{}, false
}

// pmaEnd is the port a node's LID-routed MADs leave and arrive by, and its
// LID: a switch's port 0 and its LID, a CA's or router's port.
func pmaEnd(n *discovery.Node, port int) (int, int) {
	if n.Type == discovery.NodeSwitch {
		return 0, int(n.SMALID)
	}
	if p := n.Port(port); p != nil {
		return port, int(p.BaseLID)
	}
	return port, 0
}

// broken tells a route that ends without arriving, where the tables were
// read to tell it.
func broken(r routing.Route) bool { return r.End != routing.Arrived && r.End != routing.Unread }

// routeBreakText says where the route ends, for a message.
func routeBreakText(which string, r routing.Route, names *nodename.Map) string {
	last := r.Hops[len(r.Hops)-1]
	where := fmt.Sprintf("%q port %d", nodeName(last.Node, names), last.Out)
	switch r.End {
	case routing.NoEntry:
		return fmt.Sprintf("the LFTs read send the %s to %q, which has no entry for LID %d", which, nodeName(last.Node, names), r.DLID)
	case routing.Loop:
		return fmt.Sprintf("the LFTs read send the %s to LID %d round a loop through %s", which, r.DLID, where)
	}
	return fmt.Sprintf("the LFTs read send the %s to LID %d out of %s, where it ends (%s)", which, r.DLID, where, r.End)
}

// explainRouteBreak adds to a failed LID-routed read's finding where its
// route ends, when the tables show it.
func explainRouteBreak(fd Finding, s *Snapshot, p *discovery.Port, names *nodename.Map) Finding {
	which, r, ok := routeBreak(s, p)
	if !ok {
		return fd
	}
	last := r.Hops[len(r.Hops)-1]
	fd.Message += "; " + routeBreakText(which, r, names)
	fd.Evidence = append(fd.Evidence, Field{"route_break", which}, Field{"route_end", r.End.String()},
		Field{"route_end_node_guid", mad.GUID(last.Node.GUID)}, Field{"route_end_port", last.Out})
	return fd
}
