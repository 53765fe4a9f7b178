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
// time, in arrays reused from one destination to the next.
type reacher struct {
	g *graph
	// Per switch, for the current destination: next is the switch its
	// route goes on to; hops is the route's length, -1 when it does not
	// arrive; out the port the switch sends it out of (0 for none); done
	// marks the switches resolved.
	next []int32
	// extra[s] is how many hops longer than a shortest way the hop to
	// next makes the route (dist[next]+1-dist[s]: 0, 1 or 2).
	extra []int8
	hops  []int32
	out   []int32
	done  []bool
	// fail[s] is the finding a route from s that does not arrive ends
	// at: an index in deadEnds (>= 0) or -1-index in loops. stray[s] is
	// the detour a route from s first takes, -1 for none.
	fail  []int32
	stray []int32
	// pos[s] is s's position on the path being followed, -1 when off it.
	pos  []int32
	path []int32
	// The destination's findings.
	deadEnds []DeadEnd
	loops    []RouteLoop
	detours  []Detour
	// The fabric's tallies, nil when not kept: the arrived routes in
	// res, the routes per port of each switch in routes.
	res    *Reach
	routes [][]int
}

func newReacher(g *graph, res *Reach) *reacher {
	n := len(g.nodes)
	r := &reacher{g: g, next: make([]int32, n), extra: make([]int8, n), hops: make([]int32, n), out: make([]int32, n), done: make([]bool, n),
		fail: make([]int32, n), stray: make([]int32, n), pos: make([]int32, n), res: res}
	if res != nil {
		r.routes = make([][]int, n)
		for s, node := range g.nodes {
			r.routes[s] = make([]int, node.NumPorts+1)
		}
	}
	for s := range r.pos {
		r.pos[s] = -1
	}
	return r
}

// hop reads each switch's own hop towards d: the switch it goes on to
// (next, -1 for none) and the port it leaves by (out), settling the
// switches where routes end. dist, the shortest hop counts to d's
// switch, tells detours; nil when only the hops are wanted.
func (r *reacher) hop(d dest, dist []uint8) {
	g := r.g
	r.deadEnds, r.loops, r.detours = r.deadEnds[:0], r.loops[:0], r.detours[:0]
	row := g.row(d.lid)
	for s, e := range row {
		s := int32(s)
		r.done[s], r.out[s], r.next[s] = false, 0, -1
		if s == d.sw && !d.viaEnd {
			r.settle(s, 0, 0, -1)
			continue
		}
		out, end := g.classify(s, e)
		if end != Arrived {
			r.settle(s, -1, r.deadEnd(d, s, out, end), -1)
			continue
		}
		r.out[s] = int32(out)
		if r.routes != nil {
			r.routes[s][out]++
		}
		i := g.base[s] + int32(out)
		switch next := g.link[i]; next {
		case linkDown:
			r.settle(s, -1, r.deadEnd(d, s, out, PortDown), -1)
		case linkUnknown:
			r.settle(s, -1, r.deadEnd(d, s, out, Unread), -1)
		case linkEnd:
			if g.end[i] != d.owner {
				r.settle(s, -1, r.deadEnd(d, s, out, LeadsNowhere), -1)
			} else {
				r.settle(s, 1, 0, -1)
			}
		default:
			r.next[s] = next
			if dist != nil {
				r.extra[s] = int8(int32(dist[next]) + 1 - int32(dist[s]))
			}
		}
	}
}

// resolve follows the routes of the switches hop did not settle.
func (r *reacher) resolve(d dest) {
	for s, done := range r.done {
		if !done {
			r.follow(int32(s), d)
		}
	}
}

// follow walks from switch s along the next hops until it meets a
// resolved switch or comes back on its path (a loop), then resolves the
// switches of the path from its end back: each one's route is one hop
// longer than the next one's, and ends the same way.
func (r *reacher) follow(s int32, d dest) {
	r.path = r.path[:0]
	var hops, fail, stray int32 // the result at the path's end
	cur := s
	for {
		if r.done[cur] {
			hops, fail, stray = r.hops[cur], r.fail[cur], r.stray[cur]
			break
		}
		if at := r.pos[cur]; at >= 0 { // back on the path: a loop
			for _, sw := range r.path[at:] {
				r.pos[sw] = -1
			}
			hops, fail, stray = -1, r.loop(d, r.path[at:]), -1
			r.path = r.path[:at]
			break
		}
		r.pos[cur] = int32(len(r.path))
		r.path = append(r.path, cur)
		cur = r.next[cur]
	}
	for k := len(r.path) - 1; k >= 0; k-- {
		sw := r.path[k]
		r.pos[sw] = -1
		if hops >= 0 {
			hops++
			if extra := r.extra[sw]; extra != 0 {
				stray = r.detour(d, sw, int32(extra))
			}
		}
		r.settle(sw, hops, fail, stray)
	}
}

// settle records switch s's result for the current destination, and
// counts it.
func (r *reacher) settle(s, hops, fail, stray int32) {
	r.done[s], r.hops[s], r.fail[s], r.stray[s] = true, hops, fail, stray
	switch {
	case hops < 0 && fail >= 0:
		r.deadEnds[fail].Sources++
	case hops < 0:
		r.loops[-1-fail].Sources++
	case stray >= 0:
		r.detours[stray].Sources++
	}
	if hops < 0 || r.res == nil {
		return
	}
	res := r.res
	res.Arrived++
	for len(res.Hops) <= int(hops) {
		res.Hops = append(res.Hops, 0)
	}
	res.Hops[hops]++
	// A route is longer than the shortest way exactly when one of its
	// hops brings it no closer (a hop brings a route at most one closer).
	if stray >= 0 {
		res.Longer++
	}
}

// deadEnd records that routes to d end at switch s's port out.
func (r *reacher) deadEnd(d dest, s int32, out int, end Outcome) int32 {
	r.deadEnds = append(r.deadEnds, DeadEnd{DLID: d.lid, Stop: Stop{PortRef{r.g.nodes[s], out}, end}})
	return int32(len(r.deadEnds) - 1)
}

// loop records the loop of the switches cycle (each sending d to the
// next) and settles them; it returns the loop's fail value.
func (r *reacher) loop(d dest, cycle []int32) int32 {
	l := RouteLoop{DLID: d.lid}
	for _, s := range cycle {
		l.Cycle = append(l.Cycle, PortRef{r.g.nodes[s], int(r.out[s])})
	}
	r.loops = append(r.loops, l)
	fail := -int32(len(r.loops))
	for _, s := range cycle {
		r.settle(s, -1, fail, -1)
	}
	return fail
}

// detour records that switch s's hop to d adds extra hops.
func (r *reacher) detour(d dest, s int32, extra int32) int32 {
	r.detours = append(r.detours, Detour{DLID: d.lid, At: PortRef{r.g.nodes[s], int(r.out[s])}, Extra: int(extra)})
	return int32(len(r.detours) - 1)
}
