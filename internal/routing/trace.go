package routing

import "github.com/ibtool/ibtool/internal/discovery"

// Outcome is how a route ends.
type Outcome uint8

const (
	// Arrived: the route reaches the port that owns the LID.
	Arrived Outcome = iota
	// NoEntry: a switch has no entry for the LID (NoPort).
	NoEntry
	// BadPort: a switch's entry names a port the switch does not have.
	BadPort
	// PortDown: the out port has no link, or its link is not Active.
	PortDown
	// LeadsNowhere: the out port leads to an end port that does not own
	// the LID (a CA or router port, or the port 0 of a switch that is not
	// the destination), where the packet is dropped.
	LeadsNowhere
	// Loop: the route comes back to a switch it went through.
	Loop
	// Unread: the route reaches what could not be read: a switch whose
	// table (or the block of the LID) was not read, or an Active port
	// whose other end the walk did not see.
	Unread
)

var outcomeNames = [...]string{"arrived", "no-entry", "bad-port", "port-down", "leads-nowhere", "loop", "unread"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// Hop is a node a route goes through: the port it came in by (0 at the
// source) and the port it leaves by (0 at the destination, and where the
// route ends without leaving).
type Hop struct {
	Node    *discovery.Node
	In, Out int
}

// Route is a route followed through the forwarding tables.
type Route struct {
	DLID int
	Hops []Hop
	// End is how the route ends; where is its last hop: the switch with
	// no entry, the port that is down or leads nowhere, the switch that
	// could not be read. For a Loop, the last hop leads back to Hops[LoopStart].
	End       Outcome
	LoopStart int
	// Err is why an entry could not be had, when the route ends Unread
	// at a switch whose Forwarder failed.
	Err error
}

// Links are the ports the route leaves nodes by, in order: the links it
// crosses (and, when it ends at a port that is down or leads nowhere,
// that port last).
func (r *Route) Links() []*discovery.Port {
	var out []*discovery.Port
	for _, h := range r.Hops {
		if p := h.Node.Port(h.Out); h.Out != 0 && p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Forwarder gives switch sw's LFT entry for lid (NoPort when it has
// none), or why it could not be read. A command that follows a route hop
// by hop reads the entries as the route needs them, instead of every
// switch's table first.
type Forwarder func(sw *discovery.Node, lid int) (port int, err error)

// Trace follows the LFTs from a node to dlid. From a switch the route
// starts at the switch (port is not used); from a CA or router it starts
// out of its port port, over that port's link.
func (t *Tables) Trace(from *discovery.Node, port int, dlid int) Route {
	return trace(t.Fabric, t.lookup, from, port, dlid)
}

// TraceWith follows the entries fwd gives through fabric f, as Trace
// follows the tables.
func TraceWith(f *discovery.Fabric, fwd Forwarder, from *discovery.Node, port int, dlid int) Route {
	var err error
	r := trace(f, func(n *discovery.Node, lid int) (int, Outcome) {
		out, e := fwd(n, lid)
		if e != nil {
			err = e
			return 0, Unread
		}
		return entryOutcome(n, out)
	}, from, port, dlid)
	if r.End == Unread {
		r.Err = err
	}
	return r
}

// trace follows a route, lookup giving each switch's entry.
func trace(f *discovery.Fabric, lookup func(*discovery.Node, int) (int, Outcome), from *discovery.Node, port int, dlid int) Route {
	owner := ownerOf(f, dlid)
	r := Route{DLID: dlid}
	n, in := from, 0
	if n.Type != discovery.NodeSwitch {
		r.Hops = append(r.Hops, Hop{Node: n, Out: port})
		if owner != nil && owner.Node == n && owner.Num == port {
			r.Hops[0].Out = 0
			return r
		}
		next, arrived, end := cross(n.Port(port), owner)
		if next == nil {
			r.End = end
			return r
		}
		n, in = next.Node, next.Num
		if arrived {
			r.Hops = append(r.Hops, Hop{Node: n, In: in})
			return r
		}
	}
	seen := map[*discovery.Node]int{}
	for {
		if at, ok := seen[n]; ok {
			r.End, r.LoopStart = Loop, at
			return r
		}
		seen[n] = len(r.Hops)
		r.Hops = append(r.Hops, Hop{Node: n, In: in})
		hop := &r.Hops[len(r.Hops)-1]
		if owner != nil && owner.Node == n {
			return r // a switch's own LID
		}
		out, end := lookup(n, dlid)
		if end != Arrived {
			hop.Out = out
			r.End = end
			return r
		}
		hop.Out = out
		next, arrived, end := cross(n.Port(out), owner)
		if next == nil {
			r.End = end
			return r
		}
		n, in = next.Node, next.Num
		if arrived {
			r.Hops = append(r.Hops, Hop{Node: n, In: in})
			return r
		}
	}
}

// lookup is the port switch n sends dlid out of. The outcome is Arrived
// when the route goes on out of that port; otherwise it ends at n.
func (t *Tables) lookup(n *discovery.Node, dlid int) (int, Outcome) {
	sw := t.Switches[n.GUID]
	if sw == nil || sw.LFT == nil || (sw.LFT.Port(dlid) == NoPort && !sw.LFT.Readable(dlid)) {
		return 0, Unread
	}
	return entryOutcome(n, sw.LFT.Port(dlid))
}

// entryOutcome says what switch n's entry out means: Arrived when the
// route goes on out of that port.
func entryOutcome(n *discovery.Node, out int) (int, Outcome) {
	switch {
	case out == NoPort:
		return 0, NoEntry
	case out > n.NumPorts:
		return out, BadPort
	case out == 0: // the switch itself, which is not the destination
		return 0, LeadsNowhere
	}
	return out, Arrived
}

// cross follows the link of port p, which a route to owner's LID leaves
// by: the port it enters next, and whether that is the destination's. A
// nil port ends the route at p, as end says.
func cross(p *discovery.Port, owner *discovery.Port) (next *discovery.Port, arrived bool, end Outcome) {
	switch {
	case p == nil || !active(p):
		return nil, false, PortDown
	case p.Remote == nil:
		return nil, false, Unread
	}
	r := p.Remote
	if r.Node.Type == discovery.NodeSwitch {
		return r, owner != nil && owner.Node == r.Node, Arrived
	}
	if owner != nil && owner.Node == r.Node && owner.Num == r.Num {
		return r, true, Arrived
	}
	return nil, false, LeadsNowhere
}

// ownerOf is the port that holds lid, as LIDMap has it.
func ownerOf(f *discovery.Fabric, lid int) *discovery.Port {
	if lid <= 0 || lid > MaxUnicastLID {
		return nil
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.BaseLID != 0 && lid >= int(p.BaseLID) && lid <= lidEnd(p) {
				return p
			}
		}
	}
	return nil
}
