package routing

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// channelText writes channels as "guid[port]" (and "/vl" past VL 0).
func channelText(chs []Channel) []string {
	var out []string
	for _, c := range chs {
		s := fmt.Sprintf("%x[%d]", c.Node.GUID, c.Port)
		if c.VL != 0 {
			s += fmt.Sprintf("/%d", c.VL)
		}
		out = append(out, s)
	}
	return out
}

// checkCycle holds a reported cycle to the routes: each channel leads to
// the switch of the next, and some LID goes out of both, one after the
// other (the dependency is real); the cycle's channels are in its
// component.
func checkCycle(t *testing.T, tb *Tables, l CreditLoop) {
	t.Helper()
	c := l.Cycle
	if len(c) == 0 {
		t.Fatalf("a loop without a cycle: %v", channelText(l.Channels))
	}
	owners := LIDMap(tb.Fabric)
	for k, a := range c {
		b := c[(k+1)%len(c)]
		if !slices.Contains(l.Channels, a) {
			t.Errorf("cycle channel %v not in its component", channelText([]Channel{a}))
		}
		p := a.Node.Port(a.Port)
		if p.Remote == nil || p.Remote.Node != b.Node {
			t.Fatalf("cycle %v: %v does not lead to %v's switch", channelText(c), channelText([]Channel{a}), channelText([]Channel{b}))
		}
		real := false
		for lid := 1; lid < len(owners) && !real; lid++ {
			real = tb.Switches[a.Node.GUID].LFT.Port(lid) == a.Port && tb.Switches[b.Node.GUID].LFT.Port(lid) == b.Port &&
				owners[lid] != nil && owners[lid].Node != b.Node
		}
		if !real {
			t.Errorf("cycle %v: no route goes out of %v and then %v", channelText(c), channelText([]Channel{a}), channelText([]Channel{b}))
		}
	}
}

func TestCreditLoopOnARingRoutedMinHop(t *testing.T) {
	fab, _ := ringFabric(4)
	tb := readTables(t, fab, Want{LFT: true})
	cl := tb.CreditLoops()
	// The routes two hops away all go the way of port 1 (the lowest of
	// two equal ports): the four channels that way wait on each other.
	if cl.Channels != 8 || cl.VLs != 1 || len(cl.Loops) != 1 {
		t.Fatalf("%d channels, %d VLs, loops %+v", cl.Channels, cl.VLs, cl.Loops)
	}
	l := cl.Loops[0]
	if got := channelText(l.Channels); !slices.Equal(got, []string{"100[1]", "101[1]", "102[1]", "103[1]"}) {
		t.Errorf("loop channels %v", got)
	}
	if got := channelText(l.Cycle); !slices.Equal(got, []string{"100[1]", "101[1]", "102[1]", "103[1]"}) {
		t.Errorf("cycle %v", got)
	}
	checkCycle(t, tb, l)
	if cl.Edges != 4 {
		t.Errorf("%d dependencies, want the 4 of the loop", cl.Edges)
	}
}

func TestCreditLoopsOnATorus(t *testing.T) {
	// A 3x3 torus routed by the lowest of equal ports goes east or west
	// first, then south or north, and never two hops in one ring:
	// dimension order, no loop.
	fab, _ := torusFabric(3, 3)
	tb := readTables(t, fab, Want{LFT: true})
	if cl := tb.CreditLoops(); cl.Channels != 36 || cl.Edges == 0 || len(cl.Loops) != 0 {
		t.Errorf("3x3: %d channels, %d dependencies, loops %+v; want 36, some, none", cl.Channels, cl.Edges, cl.Loops)
	}
	// On a 4x4 torus routes go two hops along a ring, all east or all
	// south (ports 1 and 3): a loop on each of the 8 rings, every one
	// reported. Routes turn from east to south, never back: the rows'
	// loops and the columns' stay apart.
	fab, _ = torusFabric(4, 4)
	tb = readTables(t, fab, Want{LFT: true})
	cl := tb.CreditLoops()
	if cl.Channels != 64 || len(cl.Loops) != 8 {
		t.Fatalf("4x4: %d channels, %d loops; want 64, 8", cl.Channels, len(cl.Loops))
	}
	if got := channelText(cl.Loops[1].Channels); !slices.Equal(got, []string{"100[3]", "104[3]", "108[3]", "10c[3]"}) {
		t.Errorf("the first column's loop: %v", got)
	}
	seen := map[Channel]bool{}
	for _, l := range cl.Loops {
		checkCycle(t, tb, l)
		for _, c := range l.Channels {
			if seen[c] {
				t.Errorf("channel %v in two components", channelText([]Channel{c}))
			}
			seen[c] = true
		}
	}
}

func TestNoCreditLoopInATree(t *testing.T) {
	fab, _, _ := treeFabric(3, 4, 2)
	tb := readTables(t, fab, Want{LFT: true})
	cl := tb.CreditLoops()
	if cl.Channels != 24 || cl.Edges == 0 || len(cl.Loops) != 0 {
		t.Errorf("%d channels, %d dependencies, loops %+v; want 24, some, none", cl.Channels, cl.Edges, cl.Loops)
	}
}

// upDownRing routes the 4-ring up/down with switch 0 as the root: no
// route goes down and then up again.
func upDownRing(t *testing.T, tb *Tables, sws []*umadtest.Node) {
	t.Helper()
	// next[i][j] is switch i's port towards switch j (ports: 1 to i+1,
	// 2 to i-1). Ranks: 0 for switch 0, 1 for 1 and 3, 2 for 2.
	next := [4][4]byte{
		{0, 1, 1, 2}, // 0: 2 down through 1
		{2, 0, 1, 2}, // 1: 3 up through 0, not down through 2
		{2, 2, 0, 1}, // 2: 0 up through 1
		{1, 1, 2, 0}, // 3: 1 up through 0
	}
	for i, sw := range sws {
		lft := tb.Switches[sw.GUID].LFT
		for j, to := range sws {
			lft.Ports[to.LID(0)] = next[i][j]
			host := int(to.LID(0)) - 1 // each host got the LID before its switch's
			lft.Ports[host] = next[i][j]
			if i == j {
				lft.Ports[host] = 3
			}
		}
	}
	if r := tb.Reachability(); r.Arrived != r.Pairs {
		t.Fatalf("the up/down tables do not arrive: %+v", r)
	}
}

func TestNoCreditLoopOnARingRoutedUpDown(t *testing.T) {
	fab, sws := ringFabric(4)
	tb := readTables(t, fab, Want{LFT: true})
	upDownRing(t, tb, sws)
	cl := tb.CreditLoops()
	if len(cl.Loops) != 0 || cl.Edges != 4 {
		t.Errorf("up/down: %d dependencies, loops %+v; want 4, none", cl.Edges, cl.Loops)
	}
}

func TestCreditLoopsPerVL(t *testing.T) {
	fab, sws := ringFabric(4)
	tb := readTables(t, fab, Want{LFT: true})
	// Every switch maps SL s to VL s%2, whatever the ports: the ring's
	// loop is there on both VLs, as two loops.
	for _, sw := range sws {
		s := tb.Switches[sw.GUID]
		s.SL2VL = &SL2VL{Tables: map[PortPair][16]uint8{}}
		for in := range 5 {
			for out := range 5 {
				var m [16]uint8
				for sl := range m {
					m[sl] = uint8(sl % 2)
				}
				s.SL2VL.Tables[PortPair{uint8(in), uint8(out)}] = m
			}
		}
	}
	cl := tb.CreditLoops()
	if cl.VLs != 2 || cl.Channels != 16 || len(cl.Loops) != 2 {
		t.Fatalf("%d VLs, %d channels, %d loops; want 2, 16, 2", cl.VLs, cl.Channels, len(cl.Loops))
	}
	for vl, l := range cl.Loops {
		for _, c := range l.Cycle {
			if c.VL != vl {
				t.Errorf("loop %d: cycle %v mixes VLs", vl, channelText(l.Cycle))
			}
		}
		checkCycle(t, tb, l)
	}
	// Switch 1 moves what comes in from switch 0 to VL 1 for SL 0 (and
	// odd SLs to VL 0): the loop of each SL now crosses both VLs, and
	// channel 101[1] carries VL 0 (its host's packets) and VL 1.
	s := tb.Switches[sws[1].GUID].SL2VL.Tables
	m := s[PortPair{2, 1}]
	for sl := range m {
		m[sl] = 1 - m[sl]
	}
	s[PortPair{2, 1}] = m
	cl = tb.CreditLoops()
	if len(cl.Loops) == 0 {
		t.Fatalf("no loop")
	}
	var vls []int
	for _, l := range cl.Loops {
		for _, c := range l.Cycle {
			if !slices.Contains(vls, c.VL) {
				vls = append(vls, c.VL)
			}
		}
		checkCycle(t, tb, l)
	}
	if len(vls) != 2 {
		t.Errorf("cycles on VLs %v, want both", vls)
	}
}
