package routing

// Reach is what following the LFTs from every switch to every
// destination LID found. Findings are listed once per place, however
// many switches' routes meet there: a switch that has no entry for a LID
// is one dead end, with the number of switches whose routes end there.
type Reach struct {
	Switches     int // switches the routes start at
	Destinations int // destination LIDs
	Pairs        int // switch and destination pairs followed
	Arrived      int // pairs whose route arrives
	// Longer are the arrived pairs whose route is longer than the
	// shortest path through Active links.
	Longer int
	// Hops[h] is the number of arrived pairs whose route has h hops (an
	// end port's last link counts).
	Hops     []int
	DeadEnds []DeadEnd
	Loops    []RouteLoop
	Detours  []Detour
	// Routes[guid][p] is how many destination LIDs switch guid's table
	// sends out of port p (a switch's balance).
	Routes map[uint64][]int
}

// DeadEnd is a place where routes to a LID end without arriving.
type DeadEnd struct {
	DLID int
	Stop
	Sources int // switches whose route to DLID ends there
}

// RouteLoop is a loop the routes to a LID run into.
type RouteLoop struct {
	DLID int
	// Cycle are the switches of the loop, each with the port it sends
	// DLID out of, in route order.
	Cycle   []PortRef
	Sources int // switches whose route to DLID runs into the loop
}

// Detour is a hop that takes a route to a LID no closer to it.
type Detour struct {
	DLID int
	At   PortRef
	// Extra is how many hops longer than the shortest way the hop makes
	// the route.
	Extra int
	// Sources are the switches whose route first strays from a
	// shortest path at this hop.
	Sources int
}

// reacher resolves the routes of every switch to one destination at a
// time, its state per switch reused from one destination to the next.
// The state of a switch is one struct: the analyses touch all of it for
// every switch and destination, 14 million times on a big fabric.
type reacher struct {
	g  *graph
	st []hopState
	// pos[s] is s's position on the path being followed, -1 when off it.
	pos  []int32
	path []int32
	// The destination's findings.
	deadEnds []DeadEnd
	loops    []RouteLoop
	detours  []Detour
	// The fabric's tallies: the arrived routes by their hops, those
	// longer than the shortest way, and the routes out of each port (by
	// the graph's port index; nil when not kept).
	hist   []int
	longer int
	routes []int
	// dist are the shortest hop counts to the destination's switch, last
	// 1 when the destination is an end port one link past it.
	dist []uint8
	last int32
}

// hopState is a switch's route to the current destination.
type hopState struct {
	// next is the switch the route goes on to, -1 for none.
	next int32
	// port is the graph's index of the port the switch sends it out of
	// (graph.base[s]+port number), -1 for none.
	port int32
	// hops is the route's length, -1 when it does not arrive.
	hops int32
	// fail is the finding a route that does not arrive ends at: an index
	// in deadEnds (>= 0) or -1-index in loops.
	fail int32
	// stray is the detour the route first takes, -1 for none.
	stray int32
	done  bool
}

func newReacher(g *graph, routes bool) *reacher {
	n := len(g.nodes)
	r := &reacher{g: g, st: make([]hopState, n), pos: make([]int32, n)}
	if routes {
		r.routes = make([]int, len(g.link))
	}
	for s := range r.pos {
		r.pos[s] = -1
	}
	return r
}

// out is the port number switch s sends the destination out of, 0 for
// none.
func (r *reacher) out(s int32) int {
	if p := r.st[s].port; p >= 0 {
		return int(p - r.g.base[s])
	}
	return 0
}

// hop reads each switch's own hop towards d: the switch it goes on to
// and the port it leaves by, settling the switches where routes end.
func (r *reacher) hop(d dest) {
	g := r.g
	r.deadEnds, r.loops, r.detours = r.deadEnds[:0], r.loops[:0], r.detours[:0]
	row := g.row(d.lid)
	st, nports, base, unread := r.st[:len(row)], g.nports[:len(row)], g.base[:len(row)], g.unread[:len(row)]
	self := int32(-1) // the switch that is the destination
	if !d.viaEnd {
		self = d.sw
	}
	for s, e := range row {
		h := &st[s]
		h.done = false
		// Most often: an entry for a port linked to another switch.
		if int32(e) <= nports[s] && !unread[s] && int32(s) != self {
			i := base[s] + int32(e)
			if next := g.link[i]; next >= 0 {
				h.next, h.port = next, i
				if r.routes != nil {
					r.routes[i]++
				}
				continue
			}
		}
		r.endHop(int32(s), e, d)
	}
}

// endHop reads switch s's entry e for d when it does not lead on to
// another switch: the route ends at s, arrived or not.
func (r *reacher) endHop(s int32, e byte, d dest) {
	g := r.g
	h := &r.st[s]
	h.next, h.port = -1, -1
	if s == d.sw && !d.viaEnd {
		r.settle(s, 0, 0, -1)
		return
	}
	out, end := g.classify(s, e)
	if end != Arrived {
		r.settle(s, -1, r.deadEnd(d, s, out, end), -1)
		return
	}
	i := g.base[s] + int32(out)
	h.port = i
	if r.routes != nil {
		r.routes[i]++
	}
	switch g.link[i] {
	case linkDown:
		end = PortDown
	case linkUnknown:
		end = Unread
	case linkEnd:
		if g.end[i] != d.owner {
			end = LeadsNowhere
		}
	}
	if end != Arrived {
		r.settle(s, -1, r.deadEnd(d, s, out, end), -1)
		return
	}
	r.settle(s, 1, 0, -1)
}

// resolve follows the routes of the switches hop did not settle. dist
// are the shortest hop counts to d's switch, which tell detours.
func (r *reacher) resolve(d dest, dist []uint8) {
	st := r.st
	dist = dist[:len(st)]
	r.dist, r.last = dist, 0
	if d.viaEnd {
		r.last = 1
	}
	for s := range st {
		h := &st[s]
		if h.done {
			continue
		}
		n := &st[h.next]
		switch {
		case !n.done:
			r.follow(int32(s), d)
		case n.hops >= 0 && n.stray < 0 && n.hops+1 == int32(dist[s])+r.last:
			// Most often: one hop from a settled switch, both on a
			// shortest way.
			h.done, h.hops, h.fail, h.stray = true, n.hops+1, 0, -1
			r.count(n.hops + 1)
		default:
			r.settleAfter(int32(s), d)
		}
	}
}

// follow walks from switch s along the next hops until it meets a
// settled switch or comes back on its path (a loop), then settles the
// switches of the path from its end back.
func (r *reacher) follow(s int32, d dest) {
	r.path = r.path[:0]
	for cur := s; !r.st[cur].done; cur = r.st[cur].next {
		if at := r.pos[cur]; at >= 0 { // back on the path: a loop
			for _, sw := range r.path[at:] {
				r.pos[sw] = -1
			}
			r.loop(d, r.path[at:])
			r.path = r.path[:at]
			break
		}
		r.pos[cur] = int32(len(r.path))
		r.path = append(r.path, cur)
	}
	for k := len(r.path) - 1; k >= 0; k-- {
		r.pos[r.path[k]] = -1
		r.settleAfter(r.path[k], d)
	}
}

// settleAfter settles switch s, whose next hop is settled: its route is
// one hop longer and ends the same way.
func (r *reacher) settleAfter(s int32, d dest) {
	h := &r.st[s]
	n := &r.st[h.next]
	hops, stray := n.hops, n.stray
	if hops >= 0 {
		hops++
		if extra := int32(r.dist[h.next]) + 1 - int32(r.dist[s]); extra != 0 {
			stray = r.detour(d, s, extra)
		}
	}
	r.settle(s, hops, n.fail, stray)
}

// settle records switch s's result for the current destination, and
// counts it.
func (r *reacher) settle(s, hops, fail, stray int32) {
	h := &r.st[s]
	h.done, h.hops, h.fail, h.stray = true, hops, fail, stray
	switch {
	case hops >= 0 && stray < 0:
	case hops < 0 && fail >= 0:
		r.deadEnds[fail].Sources++
	case hops < 0:
		r.loops[-1-fail].Sources++
	default:
		r.detours[stray].Sources++
		// A route is longer than the shortest way exactly when one of
		// its hops brings it no closer (a hop brings a route at most one
		// closer).
		r.longer++
	}
	if hops >= 0 {
		r.count(hops)
	}
}

// count tallies an arrived route of hops hops.
func (r *reacher) count(hops int32) {
	if int(hops) >= len(r.hist) {
		r.hist = append(r.hist, make([]int, int(hops)+1-len(r.hist))...)
	}
	r.hist[hops]++
}

// deadEnd records that routes to d end at switch s's port out.
func (r *reacher) deadEnd(d dest, s int32, out int, end Outcome) int32 {
	r.deadEnds = append(r.deadEnds, DeadEnd{DLID: d.lid, Stop: Stop{PortRef{r.g.nodes[s], out}, end}})
	return int32(len(r.deadEnds) - 1)
}

// loop records the loop of the switches cycle (each sending d to the
// next) and settles them.
func (r *reacher) loop(d dest, cycle []int32) {
	l := RouteLoop{DLID: d.lid}
	for _, s := range cycle {
		l.Cycle = append(l.Cycle, PortRef{r.g.nodes[s], r.out(s)})
	}
	r.loops = append(r.loops, l)
	fail := -int32(len(r.loops))
	for _, s := range cycle {
		r.settle(s, -1, fail, -1)
	}
}

// detour records that switch s's hop to d adds extra hops.
func (r *reacher) detour(d dest, s int32, extra int32) int32 {
	r.detours = append(r.detours, Detour{DLID: d.lid, At: PortRef{r.g.nodes[s], r.out(s)}, Extra: int(extra)})
	return int32(len(r.detours) - 1)
}
