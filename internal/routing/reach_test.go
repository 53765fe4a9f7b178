package routing

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestReachabilityOfACleanTree(t *testing.T) {
	fab, sp, lf := treeFabric(2, 2, 2)
	tb := readTables(t, fab, Want{LFT: true})
	r := tb.Reachability()
	// 4 switches, to 4 switch LIDs and 4 host LIDs.
	if r.Switches != 4 || r.Destinations != 8 || r.Pairs != 32 || r.Arrived != 32 || r.Longer != 0 {
		t.Errorf("switches %d, destinations %d, pairs %d, arrived %d, longer %d",
			r.Switches, r.Destinations, r.Pairs, r.Arrived, r.Longer)
	}
	if len(r.DeadEnds)+len(r.Loops)+len(r.Detours) != 0 {
		t.Errorf("findings on a clean tree: %+v %+v %+v", r.DeadEnds, r.Loops, r.Detours)
	}
	// 0 hops: each switch to itself; 1: leaves to their hosts and the
	// spines, spines to the leaves; 2: spines to hosts, a switch to the
	// other of its tier; 3: a leaf to the other leaf's hosts.
	if want := []int{4, 12, 12, 4}; !slices.Equal(r.Hops, want) {
		t.Errorf("hops %v, want %v", r.Hops, want)
	}
	// Leaf 0 sends the other leaf, its hosts and spine 0 up port 1 (the
	// lowest of two equal ports), spine 1 up port 2.
	if got, want := r.Routes[lf[0].GUID], []int{0, 4, 1, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("leaf 0's routes per port %v, want %v", got, want)
	}
	// Spine 1 sends spine 0 down the lowest port too.
	if got, want := r.Routes[sp[1].GUID], []int{0, 4, 3}; !slices.Equal(got, want) {
		t.Errorf("spine 1's routes per port %v, want %v", got, want)
	}
}

func TestReachabilityDeadEndsAndLoops(t *testing.T) {
	fab, _, sw1, sw2, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	lid := int(far.LID(1))
	// sw2 forgets far: one dead end, the routes of both switches end there.
	tb.Switches[sw2.GUID].LFT.Ports[lid] = NoPort
	r := tb.Reachability()
	want := []DeadEnd{{DLID: lid, Stop: Stop{PortRef{tb.Fabric.Node(sw2.GUID), 0}, NoEntry}, Sources: 2}}
	if !slices.Equal(r.DeadEnds, want) || len(r.Loops) != 0 || r.Arrived != r.Pairs-2 {
		t.Errorf("dead ends %+v (want %+v), loops %+v, %d of %d arrived", r.DeadEnds, want, r.Loops, r.Arrived, r.Pairs)
	}
	// sw2 sends it back: a loop of both switches.
	tb.Switches[sw2.GUID].LFT.Ports[lid] = 2
	r = tb.Reachability()
	if len(r.Loops) != 1 || len(r.DeadEnds) != 0 {
		t.Fatalf("loops %+v, dead ends %+v", r.Loops, r.DeadEnds)
	}
	l := r.Loops[0]
	if l.DLID != lid || l.Sources != 2 || fmt.Sprint(refs(l.Cycle)) != "[200[2] 300[2]]" {
		t.Errorf("loop %+v: cycle %v", l, refs(l.Cycle))
	}
	// sw1 sends it to the switch itself and sw2 out of a port it does
	// not have: two dead ends, one source each.
	tb.Switches[sw1.GUID].LFT.Ports[lid] = 0
	tb.Switches[sw2.GUID].LFT.Ports[lid] = 40
	r = tb.Reachability()
	var got []string
	for _, d := range r.DeadEnds {
		got = append(got, fmt.Sprintf("%x[%d] %v %d", d.Node.GUID, d.Port, d.End, d.Sources))
	}
	if !slices.Equal(got, []string{"200[0] leads-nowhere 1", "300[40] bad-port 1"}) {
		t.Errorf("dead ends %v", got)
	}
	if r.Routes[sw2.GUID][2] != 2 { // host's and sw1's LIDs; a port it does not have counts nowhere
		t.Errorf("sw2's routes per port: %v", r.Routes[sw2.GUID])
	}
}

// refs writes ports as "guid[port]".
func refs(ps []PortRef) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%x[%d]", p.Node.GUID, p.Port))
	}
	return out
}

func TestReachabilityDetours(t *testing.T) {
	// Spines 0x100, 0x101; leaves 0x200..0x202 with a host each.
	fab, sp, lf := treeFabric(2, 3, 1)
	tb := readTables(t, fab, Want{LFT: true})
	host := tb.Fabric.Node(0x10020) // on leaf 0x202's port 3
	lid := int(host.Port(1).BaseLID)
	// Spine 0 sends it down to leaf 1, which sends it up to spine 1:
	// leaf 0's route is 5 hops instead of 3.
	tb.Switches[sp[0].GUID].LFT.Ports[lid] = 2
	tb.Switches[lf[1].GUID].LFT.Ports[lid] = 2
	r := tb.Reachability()
	if len(r.DeadEnds)+len(r.Loops) != 0 || r.Arrived != r.Pairs {
		t.Fatalf("dead ends %+v, loops %+v", r.DeadEnds, r.Loops)
	}
	want := []Detour{{DLID: lid, At: PortRef{tb.Fabric.Node(sp[0].GUID), 2}, Extra: 2, Sources: 2}}
	if !slices.Equal(r.Detours, want) || r.Longer != 2 {
		t.Errorf("detours %+v, want %+v; longer %d, want 2 (leaf 0 and spine 0)", r.Detours, want, r.Longer)
	}
	if r.Hops[5] != 1 {
		t.Errorf("hops %v: leaf 0's 5-hop route missing", r.Hops)
	}
}

func TestReachabilityCountsEveryLIDOfAnLMCRange(t *testing.T) {
	fab, _, sw1, sw2, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	base := int(far.LID(1)) // 4, the highest: LMC 2 gives 4..7
	tb.Fabric.Node(far.GUID).Port(1).LMC = 2
	r := tb.Reachability()
	if r.Destinations != 7 || len(r.DeadEnds) != 6 {
		t.Fatalf("%d destinations, %d dead ends; want 7 and 6 (LIDs 5..7 at both switches)", r.Destinations, len(r.DeadEnds))
	}
	for _, sw := range []uint64{sw1.GUID, sw2.GUID} {
		out := tb.Switches[sw].LFT.Ports[base]
		for lid := base + 1; lid <= base+3; lid++ {
			tb.Switches[sw].LFT.Ports[lid] = out
		}
	}
	if r = tb.Reachability(); r.Arrived != r.Pairs || len(r.DeadEnds) != 0 || r.Pairs != 14 {
		t.Errorf("with the range routed: %d of %d arrived, dead ends %+v", r.Arrived, r.Pairs, r.DeadEnds)
	}
}

// The analysis and the trace must agree on every pair, whatever the
// tables say: random entries on a torus (loops, dead ends, detours).
func TestReachabilityAgreesWithTrace(t *testing.T) {
	fab, _ := torusFabric(3, 3)
	clean := readTables(t, fab, Want{LFT: true})
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[Outcome]int{}
	for round := range 20 {
		tb := &Tables{Fabric: clean.Fabric, Switches: map[uint64]*Switch{}}
		for guid, sw := range clean.Switches {
			c := *sw
			c.LFT = &LFT{First: sw.LFT.First, Ports: slices.Clone(sw.LFT.Ports)}
			for range 6 {
				lid := 1 + rng.IntN(18)
				c.LFT.Ports[lid] = []byte{NoPort, 0, 1, 2, 3, 4, 5, 6, 9}[rng.IntN(9)]
			}
			if rng.IntN(20) == 0 {
				c.LFT = nil
			}
			tb.Switches[guid] = &c
		}
		g := newGraph(tb)
		rc := newReacher(g, false)
		dists := g.distances()
		n := len(g.nodes)
		for _, d := range g.destinations() {
			rc.hop(d)
			rc.resolve(d, dists[int(d.sw)*n:int(d.sw+1)*n])
			for s, n := range g.nodes {
				tr := tb.Trace(n, 0, d.lid)
				seen[tr.End]++
				var end Outcome
				var at uint64
				switch h := rc.st[s].hops; {
				case h >= 0:
					if tr.End != Arrived || len(tr.Hops)-1 != int(h) {
						t.Fatalf("round %d, 0x%x to LID %d: trace %v %s, analysis %d hops", round, n.GUID, d.lid, tr.End, hops(tr), h)
					}
					continue
				case rc.st[s].fail >= 0:
					de := rc.deadEnds[rc.st[s].fail]
					end, at = de.End, de.Node.GUID
				default:
					end, at = Loop, 0
				}
				last := tr.Hops[len(tr.Hops)-1].Node.GUID
				if tr.End != end || (end != Loop && last != at) {
					t.Fatalf("round %d, 0x%x to LID %d: trace %v at 0x%x (%s), analysis %v at 0x%x", round, n.GUID, d.lid, tr.End, last, hops(tr), end, at)
				}
			}
		}
	}
	// The rounds must have met every way a route can end.
	for o := Arrived; o <= Unread; o++ {
		if seen[o] == 0 {
			t.Errorf("no route ended %v: %v", o, seen)
		}
	}
}
