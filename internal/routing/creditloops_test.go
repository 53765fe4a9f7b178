package routing

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
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

// setSL2VL gives every switch of the ring the table vl(sl) on every
// pair of ports.
func setSL2VL(tb *Tables, sws []*umadtest.Node, vl func(sl int) uint8) {
	var m [16]uint8
	for sl := range m {
		m[sl] = vl(sl)
	}
	for _, sw := range sws {
		s := tb.Switches[sw.GUID]
		s.SL2VL = &SL2VL{Tables: map[PortPair][16]uint8{}}
		for in := range s.NumPorts + 1 {
			for out := range s.NumPorts + 1 {
				s.SL2VL.Tables[PortPair{uint8(in), uint8(out)}] = m
			}
		}
	}
}

func TestCreditLoopsPerVL(t *testing.T) {
	fab, sws := ringFabric(4)
	tb := readTables(t, fab, Want{LFT: true})
	// Every switch maps SL s to VL s%2, whatever the ports: the ring's
	// loop is there on both VLs, the same loop, reported once.
	setSL2VL(tb, sws, func(sl int) uint8 { return uint8(sl % 2) })
	cl := tb.CreditLoops()
	if cl.VLs != 2 || cl.Channels != 16 || cl.Edges != 8 || len(cl.Loops) != 1 {
		t.Fatalf("%d VLs, %d channels, %d dependencies, %d loops; want 2, 16, 8, 1", cl.VLs, cl.Channels, cl.Edges, len(cl.Loops))
	}
	if l := cl.Loops[0]; !slices.Equal(l.VLs, []int{0, 1}) || len(l.Channels) != 4 {
		t.Errorf("the loop: VLs %v, channels %v", l.VLs, channelText(l.Channels))
	}
	checkCycle(t, tb, cl.Loops[0])
	// Switch 1 moves what comes in from switch 0 to the other VL: each
	// SL's loop now crosses both VLs, and channel 101[1] carries both
	// (its host's packets and switch 0's).
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
	for _, l := range cl.Loops {
		var vls []int
		for _, c := range l.Cycle {
			if !slices.Contains(vls, c.VL) {
				vls = append(vls, c.VL)
			}
		}
		if len(vls) != 2 || !slices.Equal(l.VLs, []int{0, 1}) {
			t.Errorf("cycle %v on VLs %v (loop's %v), want both", channelText(l.Cycle), vls, l.VLs)
		}
		checkCycle(t, tb, l)
	}
}

// operate sets the OperationalVLs of every switch port of the ring
// (PortInfo bits 344..347).
func operate(tb *Tables, sws []*umadtest.Node, code uint8) {
	for _, sw := range sws {
		for _, p := range tb.Fabric.Node(sw.GUID).Ports {
			if p != nil && len(p.PortInfo) > 43 {
				p.PortInfo[43] = p.PortInfo[43]&0x0F | code<<4
			}
		}
	}
}

func TestCreditLoopsLeaveOutDroppedSLs(t *testing.T) {
	fab, sws := ringFabric(4)
	tb := readTables(t, fab, Want{LFT: true})
	// As ibsim's switches come: SL i on VL i (SL 15 on VL 7), VL0-7
	// operational. SLs 8-14 are dropped; the loop is on VLs 0-7.
	setSL2VL(tb, sws, func(sl int) uint8 {
		if sl == 15 {
			return 7
		}
		return uint8(sl)
	})
	operate(tb, sws, 4)
	cl := tb.CreditLoops()
	if len(cl.Loops) != 1 || !slices.Equal(cl.Loops[0].VLs, []int{0, 1, 2, 3, 4, 5, 6, 7}) || cl.VLs != 8 {
		t.Fatalf("%d VLs, loops %+v", cl.VLs, cl.Loops)
	}
	// Only VL0 operational: every SL but 0 is dropped.
	operate(tb, sws, 1)
	if cl = tb.CreditLoops(); len(cl.Loops) != 1 || !slices.Equal(cl.Loops[0].VLs, []int{0}) {
		t.Errorf("VL0 only: loops %+v", cl.Loops)
	}
	// Every SL on VL15: all of it dropped, nothing waits on anything.
	setSL2VL(tb, sws, func(int) uint8 { return 15 })
	if cl = tb.CreditLoops(); len(cl.Loops) != 0 || cl.Edges != 0 {
		t.Errorf("all on VL15: %d dependencies, loops %+v", cl.Edges, cl.Loops)
	}
	// Dropped on one switch only: the ring is cut there for SL 1, whose
	// routes through switch 2 end; SL 0's loop stays.
	setSL2VL(tb, sws, func(sl int) uint8 { return uint8(sl % 2) })
	operate(tb, sws, 2)
	tb.Switches[sws[2].GUID].SL2VL.Tables[PortPair{2, 1}] = [16]uint8{0, 15, 0, 15, 0, 15, 0, 15, 0, 15, 0, 15, 0, 15, 0, 15}
	cl = tb.CreditLoops()
	if len(cl.Loops) != 1 || !slices.Equal(cl.Loops[0].VLs, []int{0}) {
		t.Errorf("dropped at one switch: loops %+v", cl.Loops)
	}
}

func TestOperationalVLsMatchesTheDecoder(t *testing.T) {
	for code, want := range map[mad.OperVLs]uint8{1: 1, 2: 2, 3: 4, 4: 8, 5: 15, 0: 15} {
		pi := mad.PortInfo{OperationalVLs: code, VLHighLimit: 0xff, VLStallCount: 7, HOQLife: 0x1f, PartitionEnforcementInbound: 1}
		if got := operationalVLs(&discovery.Port{PortInfo: mad.Encode(&pi)}); got != want {
			t.Errorf("OperationalVLs %d read as %d VLs, want %d", code, got, want)
		}
	}
	if operationalVLs(nil) != 15 {
		t.Errorf("a port without PortInfo operates fewer than 15 VLs")
	}
}
