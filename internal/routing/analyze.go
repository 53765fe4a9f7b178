package routing

// Reachability follows the LFTs from every switch of the fabric to every
// destination: every LID of every switch, and of every Active CA and
// router port (an LMC range's every LID). The next hops of all switches
// towards one destination form a functional graph, so each destination
// is resolved in one pass over the switches, every switch's result
// remembered and reused by the routes that go through it.
func (t *Tables) Reachability() *Reach {
	r, _ := t.analyze(true, false)
	return r
}

// CreditLoops builds the channel dependency graph of the LFTs' routes to
// every CA and router port (the LIDs Reachability follows, less the
// switches' own) and finds its cycles. Routes to a switch's LIDs are
// left out, as ibdm leaves them out by default: what goes to a switch
// is management traffic, SMPs on VL15, which has no credits, and a
// trickle of GMPs; and a fat tree routed min-hop (OpenSM's default) turns
// down and up again on the routes between its switches, so that
// including them would find a loop in every three-level fat tree.
// LFT routing depends only on the destination, so the dependencies are
// built once per destination (and per group of SLs that map alike): a
// switch S that sends it out of port o into switch T, which sends it on
// out of o2 into another switch, makes channel (S,o) wait on (T,o2).
// Channels to and from end ports are left out: a packet injected by a
// CA or delivered to one holds nothing it waits on, so they are in no
// cycle. With SL2VL tables a channel is a (port, VL): the VL out of o is
// what S's table maps the SL to from the port the packet came in by.
func (t *Tables) CreditLoops() *CreditLoops {
	_, c := t.analyze(false, true)
	return c
}

// Analyze is Reachability and CreditLoops in one pass over the
// destinations: what they share, every switch's next hop towards each,
// is read once.
func (t *Tables) Analyze() (*Reach, *CreditLoops) { return t.analyze(true, true) }

func (t *Tables) analyze(reach, loops bool) (*Reach, *CreditLoops) {
	g := newGraph(t)
	n := len(g.nodes)
	var res *Reach
	var dists []uint8
	if reach {
		res = &Reach{Switches: n, Routes: map[uint64][]int{}}
		dists = g.distances()
	}
	r := newReacher(g, reach)
	var c *cdg
	if loops {
		c = newCDG(g)
	}
	dests := g.destinations()
	for _, d := range dests {
		r.hop(d)
		if loops && d.viaEnd {
			c.add(r)
		}
		if reach {
			r.resolve(d, dists[int(d.sw)*n:int(d.sw+1)*n])
			res.Pairs += n
			res.DeadEnds = append(res.DeadEnds, r.deadEnds...)
			res.Loops = append(res.Loops, r.loops...)
			res.Detours = append(res.Detours, r.detours...)
		}
	}
	var cl *CreditLoops
	if loops {
		cl = c.creditLoops()
	}
	if reach {
		res.Destinations = len(dests)
		res.Hops, res.Longer = r.hist, r.longer
		for _, n := range r.hist {
			res.Arrived += n
		}
		for s, node := range g.nodes {
			routes := make([]int, node.NumPorts+1)
			copy(routes, r.routes[g.base[s]:g.base[s+1]])
			res.Routes[node.GUID] = routes
		}
	}
	return res, cl
}
