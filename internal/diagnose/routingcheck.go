package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/routing"
)

// routingCheck follows the LFTs from every switch to every destination
// (internal/routing's Reachability) and reports where routes do not
// arrive or go the long way, once per place however many routes meet
// there, plus the hop counts and the spread of routes over ports.
type routingCheck struct{}

func (routingCheck) Name() string { return "routing" }

func (routingCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"routing.no_entry", Error, "a switch's LFT has no entry for LIDs of switches or of Active end ports (LMC ranges included): the routes to them end there"},
		{"routing.dead_end", Error, "routes leave by a port that is down, that the switch does not have, or that leads to an end port other than the destination: they end there"},
		{"routing.loop", Error, "the routes to some LIDs go round a cycle of switches and never arrive"},
		{"routing.longer_than_minimal", Warning, "routes take a hop here that brings them no closer to their destination: longer than the shortest way through Active links"},
		{"routing.hops", Info, "how many hops the routes from every switch to every destination take"},
		{"routing.balance", Info, "how the routes spread over the ports between switches"},
	}
}

// noTables is why the checks of the tables do not run without them.
const noTables = "the snapshot has no forwarding tables"

func (routingCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	if s.Tables == nil {
		return nil, noTables
	}
	r := s.analysis().reach
	owners := routing.LIDMap(s.Fabric)
	var out []Finding
	out = append(out, deadEndFindings(r.DeadEnds, owners, cfg.Names)...)
	out = append(out, routeLoopFindings(r.Loops, cfg.Names)...)
	out = append(out, detourFindings(r.Detours, cfg.Names)...)
	out = append(out, hopsFinding(r), balanceFinding(s, r, cfg.Names))
	return out, ""
}

// routeAnalysis is what the routing and credit_loops checks read of the
// tables, computed once in one pass over the destinations.
type routeAnalysis struct {
	reach *routing.Reach
	loops *routing.CreditLoops
}

// analysis is the snapshot's route analysis, made on first use (the
// checks run one after the other; the tables do not change).
func (s *Snapshot) analysis() *routeAnalysis {
	if s.routes == nil {
		r, cl := s.Tables.Analyze()
		s.routes = &routeAnalysis{r, cl}
	}
	return s.routes
}

// maxListedLIDs is how many LIDs a finding names; the rest it counts.
const maxListedLIDs = 8

// lidGroup is the LIDs whose routes end, or stray, at one place.
type lidGroup struct {
	lids   []int
	routes int // switch-to-LID routes that end or stray there
	extra  int // the most hops a detour adds
}

func (g *lidGroup) add(lid, routes int) {
	g.lids = append(g.lids, lid)
	g.routes += routes
}

// listed are the first LIDs of the group, sorted, for the evidence.
func (g *lidGroup) listed() []int {
	slices.Sort(g.lids)
	return g.lids[:min(len(g.lids), maxListedLIDs)]
}

// lidText names the group's LIDs in a message: "LID 12" or "5 LIDs (12,
// 13, ...)".
func (g *lidGroup) lidText() string {
	l := g.listed()
	if len(g.lids) == 1 {
		return "LID " + strconv.Itoa(l[0])
	}
	s := make([]string, len(l))
	for i, lid := range l {
		s[i] = strconv.Itoa(lid)
	}
	more := ""
	if len(g.lids) > len(l) {
		more = ", ..."
	}
	return fmt.Sprintf("%s (%s%s)", counted(len(g.lids), "LID"), strings.Join(s, ", "), more)
}

func (g *lidGroup) evidence() []Field {
	return []Field{{"lids", len(g.lids)}, {"dlids", g.listed()}, {"routes", g.routes}}
}

// placeKey is a place routes end or stray at, and how.
type placeKey struct {
	guid uint64
	port int
	end  routing.Outcome
}

// groupPlaces gathers LIDs by place, the places in node GUID and port
// order.
type groupPlaces struct {
	groups map[placeKey]*lidGroup
	nodes  map[uint64]*discovery.Node
}

func newGroupPlaces() *groupPlaces {
	return &groupPlaces{groups: map[placeKey]*lidGroup{}, nodes: map[uint64]*discovery.Node{}}
}

func (gp *groupPlaces) at(n *discovery.Node, port int, end routing.Outcome) *lidGroup {
	k := placeKey{n.GUID, port, end}
	g := gp.groups[k]
	if g == nil {
		g = &lidGroup{}
		gp.groups[k] = g
		gp.nodes[n.GUID] = n
	}
	return g
}

func (gp *groupPlaces) sorted() []placeKey {
	keys := make([]placeKey, 0, len(gp.groups))
	for k := range gp.groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b placeKey) int {
		return cmp.Or(cmp.Compare(a.guid, b.guid), cmp.Compare(a.port, b.port), cmp.Compare(a.end, b.end))
	})
	return keys
}

// portPlace is a finding at port num of n: the port's place and link
// when the node has it, else the number alone (an entry naming a port
// the switch does not have).
func portPlace(f Finding, n *discovery.Node, num int, names *nodename.Map) Finding {
	if p := n.Port(num); p != nil {
		return atPort(f, p, names)
	}
	f.At = placeOf(n, nil, names)
	f.At.Port = num
	return f
}

// deadEndReason is how the evidence names an outcome of
// routing.dead_end, and how a message says it. (A switch, not a map: no
// start of ibtool builds it.)
func deadEndReason(end routing.Outcome, port int) [2]string {
	switch {
	case port == 0:
		return [2]string{"switch_itself", "which is the switch itself, not their destination"}
	case end == routing.PortDown:
		return [2]string{"port_down", "which is down or has no link"}
	case end == routing.BadPort:
		return [2]string{"no_such_port", "which the switch does not have"}
	}
	return [2]string{"wrong_end_port", "which leads to an end port that is not theirs"}
}

// deadEndFindings are the places routes end without arriving: a switch
// without an entry (routing.no_entry), a port that leads nowhere
// (routing.dead_end). Routes into what could not be read are the walk
// check's.
func deadEndFindings(ends []routing.DeadEnd, owners []*discovery.Port, names *nodename.Map) []Finding {
	gp := newGroupPlaces()
	for _, d := range ends {
		if d.End == routing.Unread {
			continue
		}
		port := d.Port
		if d.End == routing.NoEntry {
			port = NoPort
		}
		gp.at(d.Node, port, d.End).add(d.DLID, d.Sources)
	}
	var out []Finding
	for _, k := range gp.sorted() {
		g, n := gp.groups[k], gp.nodes[k.guid]
		if k.end == routing.NoEntry {
			out = append(out, Finding{Code: "routing.no_entry", Severity: Error, At: placeOf(n, nil, names),
				Message:  fmt.Sprintf("the LFT has no entry for %s: %s", g.lidText(), endHere(g.routes)),
				Evidence: append(g.evidence(), ownersField(g, owners, names))})
			continue
		}
		reason := deadEndReason(k.end, k.port)
		f := Finding{Code: "routing.dead_end", Severity: Error,
			Message:  fmt.Sprintf("the LFT sends %s out of port %d, %s: %s", g.lidText(), k.port, reason[1], endHere(g.routes)),
			Evidence: append([]Field{{"reason", reason[0]}}, append(g.evidence(), ownersField(g, owners, names))...)}
		out = append(out, portPlace(f, n, k.port, names))
	}
	return out
}

// ownersField names the ports that hold the listed LIDs.
func ownersField(g *lidGroup, owners []*discovery.Port, names *nodename.Map) Field {
	type owner struct {
		LID      int      `json:"lid"`
		NodeGUID mad.GUID `json:"node_guid"`
		NodeName string   `json:"node_name"`
		Port     int      `json:"port"`
	}
	out := []owner{}
	for _, lid := range g.listed() {
		if lid < len(owners) && owners[lid] != nil {
			p := owners[lid]
			out = append(out, owner{lid, mad.GUID(p.Node.GUID), nodeName(p.Node, names), p.Num})
		}
	}
	return Field{"destinations", out}
}

// counted counts things in a message: "1 switch", "2 switches".
func counted(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	if strings.HasSuffix(thing, "ch") {
		return fmt.Sprintf("%d %ses", n, thing)
	}
	if base, ok := strings.CutSuffix(thing, "y"); ok {
		return fmt.Sprintf("%d %sies", n, base)
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// endHere says that n routes end at a place.
func endHere(n int) string {
	if n == 1 {
		return "1 route ends here"
	}
	return fmt.Sprintf("%d routes end here", n)
}

// chainLink is one switch port of a cycle, in the evidence.
type chainLink struct {
	NodeGUID mad.GUID `json:"node_guid"`
	NodeName string   `json:"node_name"`
	Port     int      `json:"port"`
	VL       *int     `json:"vl,omitempty"`
}

func chainText(c []chainLink) string {
	parts := make([]string, len(c))
	for i, l := range c {
		parts[i] = fmt.Sprintf("%q port %d", l.NodeName, l.Port)
		if l.VL != nil {
			parts[i] += fmt.Sprintf(" VL%d", *l.VL)
		}
	}
	return strings.Join(parts, " -> ")
}

// routeLoopFindings are the cycles routes run into, one finding per
// cycle with the LIDs whose routes run into it.
func routeLoopFindings(loops []routing.RouteLoop, names *nodename.Map) []Finding {
	type cycle struct {
		ports []routing.PortRef
		lids  lidGroup
	}
	byKey := map[string]*cycle{}
	for _, l := range loops {
		ports := rotateToLeast(l.Cycle)
		var key strings.Builder
		for _, p := range ports {
			fmt.Fprintf(&key, "%x:%d,", p.Node.GUID, p.Port)
		}
		c := byKey[key.String()]
		if c == nil {
			c = &cycle{ports: ports}
			byKey[key.String()] = c
		}
		c.lids.add(l.DLID, l.Sources)
	}
	var out []Finding
	for _, c := range byKey {
		chain := make([]chainLink, len(c.ports))
		for i, p := range c.ports {
			chain[i] = chainLink{NodeGUID: mad.GUID(p.Node.GUID), NodeName: nodeName(p.Node, names), Port: p.Port}
		}
		f := Finding{Code: "routing.loop", Severity: Error,
			Message:  fmt.Sprintf("the routes to %s go round %d switches and never arrive: %s", c.lids.lidText(), len(chain), chainText(chain)),
			Evidence: append(c.lids.evidence(), Field{"cycle", chain})}
		out = append(out, portPlace(f, c.ports[0].Node, c.ports[0].Port, names))
	}
	return out
}

// rotateToLeast rotates a cycle to start at its least port (node GUID,
// port), so that a cycle met from any switch reads the same.
func rotateToLeast(c []routing.PortRef) []routing.PortRef {
	least := 0
	for i, p := range c {
		if q := c[least]; p.Node.GUID < q.Node.GUID || p.Node.GUID == q.Node.GUID && p.Port < q.Port {
			least = i
		}
	}
	return append(slices.Clone(c[least:]), c[:least]...)
}

// detourFindings are the hops that take routes no closer to their
// destination, one finding per port.
func detourFindings(detours []routing.Detour, names *nodename.Map) []Finding {
	gp := newGroupPlaces()
	for _, d := range detours {
		g := gp.at(d.At.Node, d.At.Port, routing.Arrived)
		g.add(d.DLID, d.Sources)
		g.extra = max(g.extra, d.Extra)
	}
	var out []Finding
	for _, k := range gp.sorted() {
		g := gp.groups[k]
		f := Finding{Code: "routing.longer_than_minimal", Severity: Warning,
			Message: fmt.Sprintf("the LFT sends %s out of port %d, no closer to them: up to %d hops longer than the shortest way for %s",
				g.lidText(), k.port, g.extra, counted(g.routes, "route")),
			Evidence: append(g.evidence(), Field{"extra_hops", g.extra})}
		out = append(out, portPlace(f, gp.nodes[k.guid], k.port, names))
	}
	return out
}

// hopsFinding is the hop-count histogram of the routes that arrive.
func hopsFinding(r *routing.Reach) Finding {
	hops := r.Hops
	if hops == nil {
		hops = []int{}
	}
	var parts []string
	for h, n := range hops {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d: %d", h, n))
		}
	}
	arrive := "all arrive"
	if r.Arrived != r.Pairs {
		arrive = fmt.Sprintf("%d arrive", r.Arrived)
	}
	return Finding{Code: "routing.hops", Severity: Info,
		Message: fmt.Sprintf("%s from %s to %s: %s, %d longer than the shortest way; by hops (an end port's link counts) %s",
			counted(r.Pairs, "route"), counted(r.Switches, "switch"), counted(r.Destinations, "LID"), arrive, r.Longer, strings.Join(parts, ", ")),
		Evidence: []Field{{"switches", r.Switches}, {"destinations", r.Destinations}, {"pairs", r.Pairs},
			{"arrived", r.Arrived}, {"longer", r.Longer}, {"hops", hops}}}
}

// maxBusiest is how many of the busiest ports the balance names.
const maxBusiest = 3

// balanceFinding is how the routes spread over the Active ports between
// switches: the fewest, the most and the mean per port, and the busiest
// ports. A spread is no fault by itself (a fat tree's aggregation
// switches carry more up than down), so it is a fact, not a verdict.
func balanceFinding(s *Snapshot, r *routing.Reach, names *nodename.Map) Finding {
	type portLoad struct {
		NodeGUID mad.GUID `json:"node_guid"`
		NodeName string   `json:"node_name"`
		Port     int      `json:"port"`
		Routes   int      `json:"routes"`
	}
	var loads []portLoad
	total := 0
	for _, n := range s.Fabric.SortedByGUID() {
		routes := r.Routes[n.GUID]
		for num, count := range routes {
			p := n.Port(num)
			if num == 0 || p == nil || p.Remote == nil || p.Remote.Node.Type != discovery.NodeSwitch || !portActive(p) {
				continue
			}
			loads = append(loads, portLoad{mad.GUID(n.GUID), nodeName(n, names), num, count})
			total += count
		}
	}
	if len(loads) == 0 {
		return Finding{Code: "routing.balance", Severity: Info, Message: "no Active ports between switches carry routes",
			Evidence: []Field{{"switch_ports", 0}}}
	}
	busiest := slices.Clone(loads)
	slices.SortStableFunc(busiest, func(a, b portLoad) int { return cmp.Compare(b.Routes, a.Routes) })
	busiest = busiest[:min(len(busiest), maxBusiest)]
	lo, hi := loads[0].Routes, loads[0].Routes
	for _, l := range loads {
		lo, hi = min(lo, l.Routes), max(hi, l.Routes)
	}
	mean := float64(total) / float64(len(loads))
	var names3 []string
	for _, b := range busiest {
		names3 = append(names3, fmt.Sprintf("%q port %d (%d)", b.NodeName, b.Port, b.Routes))
	}
	return Finding{Code: "routing.balance", Severity: Info,
		Message: fmt.Sprintf("routes per port between switches, over %s: %d to %d, %.1f on average; the busiest %s",
			counted(len(loads), "port"), lo, hi, mean, strings.Join(names3, ", ")),
		Evidence: []Field{{"switch_ports", len(loads)}, {"routes_min", lo}, {"routes_max", hi},
			{"routes_mean", float64(int(mean*10+0.5)) / 10}, {"busiest", busiest}}}
}

// portActive reads whether a port is Active from its raw PortInfo
// (IBA 14.2.5.6: PortState, the low nibble of byte 32): decoding all of
// every port's PortInfo shows in the offline time of a big fabric.
func portActive(p *discovery.Port) bool {
	return len(p.PortInfo) >= mad.PortInfoSize && mad.PortState(p.PortInfo[32]&0x0F) == mad.PortStateActive
}
