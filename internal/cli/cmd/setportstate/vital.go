package setportstate

// The links set_port_state will not take down without --force: the local
// port's, and those the LID routes between the local port and the SM
// cross, as the switches' forwarding tables send them.

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
)

// refuseVitalLinks refuses a change that takes down the local port's link
// or a link between the local port and the SM.
func refuseVitalLinks(ctx context.Context, c *query.Client, f *discovery.Fabric, ports []*discovery.Port, change portChange) error {
	vital, err := vitalLinks(ctx, c, f)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("refusing to %s: cannot tell which links the route to the SM uses (%v); --force does it anyway", change.name, err)}
	}
	for _, p := range ports {
		if why, ok := vital[p]; ok {
			return cmdutil.UsageErrorf("refusing to %s %s: %s; --force does it anyway (nothing was changed)", change.name, routing.PortLabel(p), why)
		}
	}
	return nil
}

// vitalLinks are the ports (both ends of each link) of the local port's
// link and of the LID routes from the local port to the SM and back, with
// why each one matters.
func vitalLinks(ctx context.Context, c *query.Client, f *discovery.Fabric) (map[*discovery.Port]string, error) {
	vital := map[*discovery.Port]string{}
	mark := func(p *discovery.Port, why string) {
		for _, end := range []*discovery.Port{p, p.Remote} {
			if end != nil {
				if _, ok := vital[end]; !ok {
					vital[end] = why
				}
			}
		}
	}
	local, err := c.Local()
	if err != nil {
		return nil, err
	}
	if p := f.From.Port(f.FromPort); p != nil {
		mark(p, "it is the link of the local port, which ibtool reaches the fabric through")
	}
	if local.SMLID == 0 || routing.OwnsLID(f.From, local.SMLID) {
		return vital, nil
	}
	sm, smPort := routing.LIDOwner(f, local.SMLID)
	if sm == nil {
		return nil, fmt.Errorf("no port of the fabric has the SM's LID %d", local.SMLID)
	}
	routes := routing.DRRoutes(f, nil)
	there, err := lidRouteLinks(ctx, c, f, routes, f.From, f.FromPort, local.SMLID)
	if err != nil {
		return nil, err
	}
	back, err := lidRouteLinks(ctx, c, f, routes, sm, smPort, local.LID)
	if err != nil {
		return nil, err
	}
	for _, p := range append(there, back...) {
		mark(p, fmt.Sprintf("the LID route between the local port and the SM (LID %d) crosses it", local.SMLID))
	}
	return vital, nil
}

// lidRouteLinks lists the ports a LID-routed packet from port from of
// node start to lid leaves by (from is ignored for a switch): the links
// it crosses, as each switch's LinearForwardingTable sends it, each
// table's block read over the switch's directed route as the route
// reaches it (one SMP per hop).
func lidRouteLinks(ctx context.Context, c *query.Client, f *discovery.Fabric, routes map[*discovery.Node]routing.DRRoute, start *discovery.Node, from int, lid uint16) ([]*discovery.Port, error) {
	fwd := func(n *discovery.Node, lid int) (int, error) {
		r, ok := routes[n]
		if !ok {
			return 0, fmt.Errorf("no directed route to %s", routing.NodeLabel(n))
		}
		var lft mad.LinearForwardingTable
		if err := c.Get(ctx, query.DR(r.Path), uint32(lid/routing.LIDsPerBlock), nil, &lft); err != nil {
			return 0, fmt.Errorf("reading the forwarding table of %s: %w", routing.NodeLabel(n), err)
		}
		return int(lft.Port[lid%routing.LIDsPerBlock]), nil
	}
	r := routing.TraceWith(f, fwd, start, from, int(lid))
	last := r.Hops[len(r.Hops)-1]
	switch r.End {
	case routing.Arrived:
		return r.Links(), nil
	case routing.Loop:
		return nil, fmt.Errorf("no route to LID %d within %d hops", lid, mad.MaxDRHops)
	case routing.Unread:
		if r.Err != nil {
			return nil, r.Err
		}
	case routing.LeadsNowhere:
		if p := last.Node.Port(last.Out); last.Out != 0 && p != nil && p.Remote != nil {
			return nil, fmt.Errorf("the route to LID %d ends at %s, which does not have it", lid, routing.NodeLabel(p.Remote.Node))
		}
	}
	// The route ends where it leaves: no entry, a port that is not
	// there, down, or leads nowhere.
	if last.Node.Type != discovery.NodeSwitch {
		return nil, fmt.Errorf("%s has no link", routing.PortLabel(&discovery.Port{Node: last.Node, Num: from}))
	}
	return nil, fmt.Errorf("%s has no route to LID %d", routing.NodeLabel(last.Node), lid)
}
