package routing

import (
	"cmp"
	"slices"
)

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

// Reachability follows the LFTs from every switch of the fabric to every
// destination: every LID of every switch, and of every Active CA and
// router port (an LMC range's every LID). The next hops of all switches
// towards one destination form a functional graph, so each destination
// is resolved in one pass over the switches, every switch's result
// remembered and reused by the routes that go through it.
func (t *Tables) Reachability() *Reach {
	g := newGraph(t)
	r := newReacher(g)
	res := &Reach{Switches: len(g.nodes), Routes: map[uint64][]int{}}
	routes := make([][]int, len(g.nodes))
	for s, n := range g.nodes {
		routes[s] = make([]int, n.NumPorts+1)
		res.Routes[n.GUID] = routes[s]
	}
	dests := g.destinations()
	res.Destinations = len(dests)
	// By destination switch: one breadth-first search serves all the
	// LIDs of the switch and of the end ports on it.
	slices.SortStableFunc(dests, func(a, b dest) int { return cmp.Compare(a.sw, b.sw) })
	var dist []int32
	for i, d := range dests {
		if i == 0 || d.sw != dests[i-1].sw {
			dist = r.distances(d.sw)
		}
		last := int32(0) // the end port's link
		if d.viaEnd {
			last = 1
		}
		r.resolve(d, dist)
		for s := range g.nodes {
			res.Pairs++
			if out := r.out[s]; out > 0 {
				routes[s][out]++
			}
			if h := r.hops[s]; h >= 0 {
				res.Arrived++
				for len(res.Hops) <= int(h) {
					res.Hops = append(res.Hops, 0)
				}
				res.Hops[h]++
				if h > dist[s]+last {
					res.Longer++
				}
			}
		}
		res.DeadEnds = append(res.DeadEnds, r.deadEnds...)
		res.Loops = append(res.Loops, r.loops...)
		res.Detours = append(res.Detours, r.detours...)
	}
	slices.SortStableFunc(res.DeadEnds, func(a, b DeadEnd) int { return cmp.Compare(a.DLID, b.DLID) })
	slices.SortStableFunc(res.Loops, func(a, b RouteLoop) int { return cmp.Compare(a.DLID, b.DLID) })
	slices.SortStableFunc(res.Detours, func(a, b Detour) int { return cmp.Compare(a.DLID, b.DLID) })
	return res
}

// reacher resolves the routes of every switch to one destination at a
// time, in arrays reused from one destination to the next.
type reacher struct {
	g   *graph
	rev [][]int32
	// Per switch, for the current destination: hops is the route's
	// length, -1 when it does not arrive; out the port the switch sends
	// it out of (0 for none); done marks the switches resolved.
	hops []int32
	out  []int32
	done []bool
	// fail[s] is the finding a route from s that does not arrive ends
	// at: an index in deadEnds (>= 0) or -1-index in loops. stray[s] is
	// the detour a route from s first takes, -1 for none.
	fail  []int32
	stray []int32
	// pos[s] is s's position on the path being followed, -1 when off it.
	pos      []int32
	path     []int32
	dist     []int32
	queue    []int32
	deadEnds []DeadEnd
	loops    []RouteLoop
	detours  []Detour
}

func newReacher(g *graph) *reacher {
	n := len(g.nodes)
	r := &reacher{g: g, rev: g.reverse(), hops: make([]int32, n), out: make([]int32, n), done: make([]bool, n),
		fail: make([]int32, n), stray: make([]int32, n), pos: make([]int32, n), dist: make([]int32, n)}
	for s := range r.pos {
		r.pos[s] = -1
	}
	return r
}

// distances are the shortest hop counts from every switch to switch to.
func (r *reacher) distances(to int32) []int32 {
	r.queue = r.g.distances(to, r.rev, r.dist, r.queue)
	return r.dist
}

// resolve follows every switch's route to d, dist being the shortest
// hop counts to its switch.
func (r *reacher) resolve(d dest, dist []int32) {
	r.deadEnds, r.loops, r.detours = r.deadEnds[:0], r.loops[:0], r.detours[:0]
	clear(r.done)
	for s := range r.g.nodes {
		if !r.done[s] {
			r.follow(int32(s), d, dist)
		}
	}
}

// follow walks from switch s along the entries for d until it meets a
// resolved switch or the route ends, then resolves the switches of the
// path from its end back: each one's route is one hop longer than the
// next one's, and ends the same way.
func (r *reacher) follow(s int32, d dest, dist []int32) {
	g := r.g
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
		next, ended := r.step(cur, d)
		if ended {
			hops, fail, stray = r.hops[cur], r.fail[cur], r.stray[cur]
			break
		}
		r.pos[cur] = int32(len(r.path))
		r.path = append(r.path, cur)
		cur = next
	}
	for k := len(r.path) - 1; k >= 0; k-- {
		sw := r.path[k]
		r.pos[sw] = -1
		if hops >= 0 {
			hops++
			next := g.link[g.base[sw]+r.out[sw]]
			if extra := dist[next] + 1 - dist[sw]; extra != 0 {
				stray = r.detour(d, sw, extra)
			}
		}
		r.settle(sw, hops, fail, stray)
	}
}

// step reads switch s's entry for d: the switch the route goes on to,
// or ended when the route ends at s (s is then settled).
func (r *reacher) step(s int32, d dest) (next int32, ended bool) {
	g := r.g
	r.out[s] = 0
	if s == d.sw && !d.viaEnd {
		r.settle(s, 0, 0, -1)
		return 0, true
	}
	out, end := g.entry(s, d.lid)
	if end != Arrived {
		r.settle(s, -1, r.deadEnd(d, s, out, end), -1)
		return 0, true
	}
	r.out[s] = int32(out)
	i := g.base[s] + int32(out)
	switch next = g.link[i]; next {
	case linkDown:
		end = PortDown
	case linkUnknown:
		end = Unread
	case linkEnd:
		if g.end[i] != d.owner {
			end = LeadsNowhere
		}
	default:
		return next, false
	}
	if end != Arrived {
		r.settle(s, -1, r.deadEnd(d, s, out, end), -1)
	} else {
		r.settle(s, 1, 0, -1)
	}
	return 0, true
}

// settle records switch s's result for the current destination.
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
