package diagnose

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/routing"
)

// minHop gives every switch of f an LFT that sends each LID of a switch
// or of an Active end port along a shortest path over Active links
// between switches, the lowest port among equals (as OpenSM's minhop
// does on a quiet fabric).
func minHop(f *discovery.Fabric) *routing.Tables {
	var sws []*discovery.Node
	top := 0
	for _, n := range f.SortedByGUID() {
		if n.Type == discovery.NodeSwitch {
			sws = append(sws, n)
		}
		for _, p := range n.Ports {
			if p != nil {
				top = max(top, int(p.BaseLID)+1<<p.LMC-1)
			}
		}
	}
	t := &routing.Tables{Fabric: f, Switches: map[uint64]*routing.Switch{}}
	for _, n := range sws {
		ports := make([]byte, (top/routing.LIDsPerBlock+1)*routing.LIDsPerBlock)
		for i := range ports {
			ports[i] = routing.NoPort
		}
		t.Switches[n.GUID] = &routing.Switch{GUID: n.GUID, NumPorts: n.NumPorts, LFT: &routing.LFT{Ports: ports},
			Info: mad.SwitchInfo{LinearFDBCap: 0xC000, LinearFDBTop: uint16(top)}}
	}
	linked := func(p *discovery.Port) *discovery.Node {
		if p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Type != discovery.NodeSwitch ||
			p.Info().PortState != mad.PortStateActive {
			return nil
		}
		return p.Remote.Node
	}
	for _, to := range sws {
		// Hops to `to` from every switch, breadth first.
		dist := map[*discovery.Node]int{to: 0}
		for queue := []*discovery.Node{to}; len(queue) > 0; queue = queue[1:] {
			for _, p := range queue[0].Ports {
				if r := linked(p); r != nil {
					if _, seen := dist[r]; !seen {
						dist[r] = dist[queue[0]] + 1
						queue = append(queue, r)
					}
				}
			}
		}
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				dst, last := to, 0
				switch {
				case p == nil || p.BaseLID == 0:
					continue
				case n.Type == discovery.NodeSwitch:
					if n != to || p.Num != 0 {
						continue
					}
				default:
					if p.Remote == nil || p.Remote.Node != to || p.Info().PortState != mad.PortStateActive {
						continue
					}
					last = p.Remote.Num
				}
				for _, s := range sws {
					e := byte(last)
					if s != dst {
						d, ok := dist[s]
						if !ok {
							continue
						}
						for _, q := range s.Ports {
							if r := linked(q); r != nil && dist[r] == d-1 {
								e = byte(q.Num)
								break
							}
						}
					}
					for lid := int(p.BaseLID); lid < int(p.BaseLID)+1<<p.LMC; lid++ {
						t.Switches[s.GUID].LFT.Ports[lid] = e
					}
				}
			}
		}
	}
	return t
}

// routed is the tiny fabric routed min-hop.
func routed() *tiny {
	tn := newTiny()
	tn.s.Tables = minHop(tn.s.Fabric)
	return tn
}

// setEntry changes switch n's entry for lid.
func setEntry(s *Snapshot, n *discovery.Node, lid int, port byte) {
	s.Tables.Switches[n.GUID].LFT.Ports[lid] = port
	s.routes = nil
}

// unlink takes the link of port p down on both ends, after the tables
// were made (as an unplugged cable before the SM reroutes).
func unlink(p *discovery.Port) {
	for _, q := range []*discovery.Port{p, p.Remote} {
		setPI(q, func(pi *mad.PortInfo) {
			pi.PortState, pi.PortPhysicalState = mad.PortStateDown, mad.PhysPortStatePolling
		})
		q.Remote = nil
	}
}

// placed writes findings that are not info as "code at guid[port]".
func placed(found []Finding) []string {
	var out []string
	for _, f := range found {
		if f.Severity == Info {
			continue
		}
		s := f.Code + " at " + fmt.Sprintf("%x", f.At.NodeGUID)
		if f.At.Port != NoPort {
			s += fmt.Sprintf("[%d]", f.At.Port)
		}
		out = append(out, s)
	}
	return out
}

func info(t *testing.T, found []Finding, code string) Finding {
	t.Helper()
	for _, f := range found {
		if f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s in %v", code, found)
	return Finding{}
}

func TestRoutingOnACleanFabric(t *testing.T) {
	tn := routed()
	found := run(t, routingCheck{}, tn.s, nil)
	if got := placed(found); len(got) != 0 {
		t.Fatalf("findings %v", got)
	}
	// LIDs 1 (host1 port 1), 3 (sw1), 4 (sw2), 5 (host2); host1's
	// port 2 is down: its LID 2 is no destination. From 2 switches.
	h := info(t, found, "routing.hops")
	if h.Get("destinations") != 4 || h.Get("pairs") != 8 || h.Get("arrived") != 8 || !slices.Equal(h.Get("hops").([]int), []int{2, 4, 2}) {
		t.Errorf("hops: %s %v", h.Message, h.Evidence)
	}
	// sw1 port 5 carries sw2 and host2 (2 LIDs), sw2 port 5 sw1 and
	// host1; port 6 nothing (the lowest port among equals).
	b := info(t, found, "routing.balance")
	if b.Get("switch_ports") != 4 || b.Get("routes_min") != 0 || b.Get("routes_max") != 2 {
		t.Errorf("balance: %s %v", b.Message, b.Evidence)
	}
}

func TestRoutingDeadEnds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(tn *tiny)
		want   string
		reason string
		dlids  []int
	}{
		// sw1 has no entry for host2 (LID 5): its own route and host1's
		// (none: routes start at switches) end there.
		{"no entry", func(tn *tiny) { setEntry(tn.s, tn.sw1, 5, routing.NoPort) }, "routing.no_entry at 200", "", []int{5}},
		// The link the routes between the switches use, unplugged after
		// they were made: both ends send the other side's LIDs into it.
		{"unlinked", func(tn *tiny) { unlink(tn.sw1.Port(5)) }, "routing.dead_end at 200[5]\nrouting.dead_end at 300[5]", "port_down", []int{4, 5}},
		{"no such port", func(tn *tiny) { setEntry(tn.s, tn.sw2, 1, 9) }, "routing.dead_end at 300[9]", "no_such_port", []int{1}},
		// sw2 delivers host1's LID to host2.
		{"wrong end port", func(tn *tiny) { setEntry(tn.s, tn.sw2, 1, 1) }, "routing.dead_end at 300[1]", "wrong_end_port", []int{1}},
		{"the switch itself", func(tn *tiny) { setEntry(tn.s, tn.sw2, 5, 0) }, "routing.dead_end at 300[0]", "switch_itself", []int{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := routed()
			tc.change(tn)
			found := run(t, routingCheck{}, tn.s, nil)
			if got := strings.Join(placed(found), "\n"); got != tc.want {
				t.Fatalf("findings:\n%s\nwant:\n%s", got, tc.want)
			}
			f := found[0]
			if tc.reason != "" && f.Get("reason") != tc.reason {
				t.Errorf("reason %v, want %s", f.Get("reason"), tc.reason)
			}
			if !slices.Equal(f.Get("dlids").([]int), tc.dlids[:1]) && !slices.Equal(f.Get("dlids").([]int), tc.dlids) {
				t.Errorf("dlids %v, want %v", f.Get("dlids"), tc.dlids)
			}
		})
	}
}

// An LMC range: every LID of it needs an entry.
func TestRoutingLMCRange(t *testing.T) {
	tn := newTiny()
	tn.hst.Port(1).LMC = 1 // LIDs 5 and 6
	tn.s.Tables = minHop(tn.s.Fabric)
	if got := placed(run(t, routingCheck{}, tn.s, nil)); len(got) != 0 {
		t.Fatalf("routed with LMC 1: %v", got)
	}
	setEntry(tn.s, tn.sw1, 6, routing.NoPort)
	found := run(t, routingCheck{}, tn.s, nil)
	if got := strings.Join(placed(found), "\n"); got != "routing.no_entry at 200" || !slices.Equal(found[0].Get("dlids").([]int), []int{6}) {
		t.Fatalf("findings %v, %v", got, found[0].Evidence)
	}
	if !strings.Contains(found[0].Message, "no entry for LID 6: 1 route ends here") {
		t.Errorf("message %q", found[0].Message)
	}
}

func TestRoutingLoop(t *testing.T) {
	tn := routed()
	// sw2 sends host2's LID back to sw1 by the other link: sw1 -> sw2
	// -> sw1 ...
	setEntry(tn.s, tn.sw2, 5, 6)
	found := run(t, routingCheck{}, tn.s, nil)
	if got := strings.Join(placed(found), "\n"); got != "routing.loop at 200[5]" {
		t.Fatalf("findings %v", got)
	}
	f := found[0]
	b, _ := json.Marshal(f.Get("cycle"))
	if string(b) != `[{"node_guid":"0x0000000000000200","node_name":"sw1","port":5},{"node_guid":"0x0000000000000300","node_name":"sw2","port":6}]` ||
		f.Get("routes") != 2 || f.Get("lids") != 1 {
		t.Errorf("%s: cycle %s, %v", f.Message, b, f.Evidence)
	}
}

// triangle is three switches in a ring, a host on each.
func triangle() (*Snapshot, []*discovery.Node) {
	b := newBuilder()
	var sws []*discovery.Node
	for i := range 3 {
		h := b.ca(0x1000+uint64(i), 1, fmt.Sprintf("host%d", i))
		sw := b.sw(0x100+uint64(i), 4, fmt.Sprintf("sw%d", i))
		b.link(h, 1, sw, 3)
		sws = append(sws, sw)
	}
	for i, sw := range sws {
		b.link(sw, 1, sws[(i+1)%3], 2)
	}
	s := &Snapshot{Source: "walk", Fabric: b.f}
	s.Tables = minHop(b.f)
	return s, sws
}

func TestRoutingLongerThanMinimal(t *testing.T) {
	s, sws := triangle()
	if got := placed(run(t, routingCheck{}, s, nil)); len(got) != 0 {
		t.Fatalf("min-hop: %v", got)
	}
	// sw0 sends host1's LID (3) the long way, through sw2.
	host1 := sws[1].Port(3).Remote
	setEntry(s, sws[0], int(host1.BaseLID), 2)
	found := run(t, routingCheck{}, s, nil)
	if got := strings.Join(placed(found), "\n"); got != "routing.longer_than_minimal at 100[2]" {
		t.Fatalf("findings %v", got)
	}
	if f := found[0]; f.Get("extra_hops") != 1 || f.Get("routes") != 1 || !slices.Equal(f.Get("dlids").([]int), []int{int(host1.BaseLID)}) {
		t.Errorf("%s %v", f.Message, f.Evidence)
	}
	if h := info(t, found, "routing.hops"); h.Get("longer") != 1 {
		t.Errorf("hops %v", h.Evidence)
	}
}

// ring is n switches in a ring (port 1 to the next one's port 2), a
// host on port 3 of each; the switches have SL2VL tables.
func ring(n int) (*Snapshot, []*discovery.Node) {
	b := newBuilder()
	var sws []*discovery.Node
	for i := range n {
		h := b.ca(0x1000+uint64(i), 1, fmt.Sprintf("host%d", i))
		sw := b.sw(0x100+uint64(i), 4, fmt.Sprintf("sw%d", i))
		setPI(sw.Port(0), func(pi *mad.PortInfo) { pi.CapabilityMask = uint32(mad.PortCapMaskSLMapping) })
		b.link(h, 1, sw, 3)
		sws = append(sws, sw)
	}
	for i, sw := range sws {
		b.link(sw, 1, sws[(i+1)%n], 2)
	}
	s := &Snapshot{Source: "walk", Fabric: b.f}
	s.Tables = minHop(b.f)
	return s, sws
}

// setSL2VL gives every switch port pair of sws the table vl(in, sl).
func setSL2VL(s *Snapshot, sws []*discovery.Node, vl func(in, sl int) uint8) {
	for _, n := range sws {
		sw := s.Tables.Switches[n.GUID]
		sw.SL2VL = &routing.SL2VL{Tables: map[routing.PortPair][16]uint8{}, Failed: map[routing.PortPair]error{}}
		for in := range n.NumPorts + 1 {
			var m [16]uint8
			for sl := range m {
				m[sl] = vl(in, sl)
			}
			for out := 1; out <= n.NumPorts; out++ {
				sw.SL2VL.Tables[routing.PortPair{In: uint8(in), Out: uint8(out)}] = m
			}
		}
	}
	s.routes = nil
}

func TestCreditLoopsCheck(t *testing.T) {
	// A ring of 4 routed min-hop, the lowest port among equals: the
	// routes two hops away all go by port 1, and wait on each other.
	s, sws := ring(4)
	found := run(t, creditLoopsCheck{}, s, nil)
	if got := strings.Join(placed(found), "\n"); got != "credit_loops.loop at 100[1]" {
		t.Fatalf("findings %v", got)
	}
	f := found[0]
	b, _ := json.Marshal(f.Get("cycle"))
	want := `[{"node_guid":"0x0000000000000100","node_name":"sw0","port":1},{"node_guid":"0x0000000000000101","node_name":"sw1","port":1},` +
		`{"node_guid":"0x0000000000000102","node_name":"sw2","port":1},{"node_guid":"0x0000000000000103","node_name":"sw3","port":1}]`
	if string(b) != want || !slices.Equal(f.Get("vls").([]int), []int{0}) || f.Get("channels") != 4 || f.Remote == nil || f.Remote.Port != 2 {
		t.Errorf("%s: cycle %s, %v", f.Message, b, f.Evidence)
	}
	if g := info(t, found, "credit_loops.graph"); g.Get("channels") != 8 || g.Get("loops") != 1 || g.Get("sl2vl_ports") != 0 {
		t.Errorf("graph: %s %v", g.Message, g.Evidence)
	}

	// Two rings: two loops, each its own finding.
	s2, _ := ring(3)
	if got := placed(run(t, creditLoopsCheck{}, s2, nil)); len(got) != 0 {
		t.Fatalf("a ring of 3 routed min-hop has no route of 2 hops: %v", got)
	}

	// Up/down from sw0: sw2's routes to sw0's side go up through sw1
	// or sw3, never down and up again.
	upDown := map[[2]int]byte{{0, 2}: 1, {1, 3}: 2, {2, 0}: 2, {3, 1}: 1}
	for k, port := range upDown {
		to := sws[k[1]]
		setEntry(s, sws[k[0]], int(to.SMALID), port)
		setEntry(s, sws[k[0]], int(to.Port(3).Remote.BaseLID), port)
	}
	if got := placed(run(t, creditLoopsCheck{}, s, nil)); len(got) != 0 {
		t.Fatalf("up/down: %v", got)
	}
}

// SL2VL tables that put a packet on the other VL at one switch break
// the ring's loop; tables that keep every SL on its VL do not.
func TestCreditLoopsPerVL(t *testing.T) {
	s, sws := ring(4)
	setSL2VL(s, sws, func(_, sl int) uint8 { return uint8(sl % 2) })
	found := run(t, creditLoopsCheck{}, s, nil)
	if got := strings.Join(placed(found), "\n"); got != "credit_loops.loop at 100[1]" {
		t.Fatalf("SL s on VL s%%2: %v", got)
	}
	if f := found[0]; !slices.Equal(f.Get("vls").([]int), []int{0, 1}) || !strings.Contains(f.Message, "on VLs 0, 1, the same on each") {
		t.Errorf("%s %v", f.Message, f.Evidence)
	}
	// sw0 puts what comes from sw3 (port 2) on VL 1, the rest on VL 0,
	// for every SL: a dateline. No VL's routes close the ring.
	setSL2VL(s, sws, func(in, _ int) uint8 {
		return 0
	})
	for in := range 5 {
		for out := 1; out <= 4; out++ {
			vl := uint8(0)
			if in == 2 {
				vl = 1
			}
			s.Tables.Switches[sws[0].GUID].SL2VL.Tables[routing.PortPair{In: uint8(in), Out: uint8(out)}] = [16]uint8{vl, vl, vl, vl, vl, vl, vl, vl, vl, vl, vl, vl, vl, vl, vl, vl}
		}
	}
	s.routes = nil
	found = run(t, creditLoopsCheck{}, s, nil)
	if got := placed(found); len(got) != 0 {
		t.Fatalf("with a dateline: %v", got)
	}
	if g := info(t, found, "credit_loops.graph"); g.Get("sl2vl_ports") != 16 || !strings.Contains(g.Message, "per VL") {
		t.Errorf("graph: %s %v", g.Message, g.Evidence)
	}
}

// The sweep reads SL2VL tables only for the channels of the loops of
// the graph without VLs, where the port operates more than one data VL.
func TestSL2VLPortsOnlyWhereLoopsAre(t *testing.T) {
	s, _ := ring(4)
	var got []string
	for _, p := range sl2vlPorts(s.Tables) {
		got = append(got, fmt.Sprintf("%x[%d]", p.Node.GUID, p.Num))
	}
	if strings.Join(got, " ") != "100[1] 101[1] 102[1] 103[1]" {
		t.Errorf("ring: %v", got)
	}
	// One data VL: every packet on VL0 whatever the tables say.
	for _, n := range s.Fabric.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				setPI(p, func(pi *mad.PortInfo) { pi.OperationalVLs = 1 })
			}
		}
	}
	if ports := sl2vlPorts(s.Tables); len(ports) != 0 {
		t.Errorf("one VL: %d ports", len(ports))
	}
	// Switches without SL mapping (port 0's capability) have no tables.
	s, sws := ring(4)
	for _, n := range sws {
		setPI(n.Port(0), func(pi *mad.PortInfo) { pi.CapabilityMask = uint32(mad.PortCapMaskSM) })
	}
	if n := len(sl2vlPorts(s.Tables)); n != 0 {
		t.Errorf("without SL mapping: %d ports", n)
	}
	setPI(sws[1].Port(0), func(pi *mad.PortInfo) { pi.CapabilityMask = uint32(mad.PortCapMaskSLMapping) })
	if got := sl2vlPorts(s.Tables); len(got) != 1 || got[0] != sws[1].Port(1) {
		t.Errorf("one switch with SL mapping: %v", got)
	}
	tn := routed()
	if ports := sl2vlPorts(tn.s.Tables); len(ports) != 0 {
		t.Errorf("no loop: %d ports", len(ports))
	}
}

// Tables read only where the sweep reads them (the loops' channels)
// give the answer the full tables give.
func TestCreditLoopsFromTheLoopsTablesAlone(t *testing.T) {
	s, sws := ring(4)
	full, _ := ring(4)
	for i, n := range sws {
		vl := uint8(i % 2) // VLs that differ from switch to switch
		setSL2VL(full, []*discovery.Node{full.Fabric.Node(n.GUID)}, func(_, sl int) uint8 { return uint8(sl)%2 ^ vl })
	}
	ports := map[*discovery.Port]bool{}
	for _, p := range sl2vlPorts(s.Tables) {
		ports[p] = true
	}
	for _, n := range sws {
		all := full.Tables.Switches[n.GUID].SL2VL.Tables
		part := &routing.SL2VL{Tables: map[routing.PortPair][16]uint8{}}
		for pp, vls := range all {
			if ports[n.Port(int(pp.Out))] {
				part.Tables[pp] = vls
			}
		}
		s.Tables.Switches[n.GUID].SL2VL = part
	}
	a, b := full.Tables.CreditLoops(), s.Tables.CreditLoops()
	if len(a.Loops) != len(b.Loops) || a.PerVL != b.PerVL || len(a.Loops) == 0 {
		t.Fatalf("full tables: %d loops (per VL %v); the loops' alone: %d (per VL %v)", len(a.Loops), a.PerVL, len(b.Loops), b.PerVL)
	}
	for i := range a.Loops {
		if !slices.EqualFunc(a.Loops[i].Cycle, b.Loops[i].Cycle, func(x, y routing.Channel) bool {
			return x.Node.GUID == y.Node.GUID && x.Port == y.Port && x.VL == y.VL
		}) {
			t.Errorf("loop %d differs", i)
		}
	}
}

// mcast gives the tiny fabric a group on MLID 0xC000: host1 and host2
// are its members, sw1 forwards to host1 (port 1) and sw2 (port 5), sw2
// to sw1 (port 5) and host2 (port 1).
func mcast(tn *tiny, fromSA bool) {
	for _, sw := range []*discovery.Node{tn.sw1, tn.sw2} {
		tn.s.Tables.Switches[sw.GUID].MFT = &routing.MFT{First: routing.MinMLID, Chunks: 1, Masks: make([]uint16, 32)}
	}
	setMask(tn, tn.sw1, 1, 5)
	setMask(tn, tn.sw2, 1, 5)
	mgid := mad.GID{0xff, 0x12, 0x40, 0x1b, 14: 0xff, 15: 0xff}
	// An SA that does not trust us names the group, not its members.
	tn.s.MCMembers = &MCMembers{Err: errUntrusted, Members: []MCMember{{MGID: mgid, MLID: 0xC000}}}
	if fromSA {
		tn.s.MCMembers = &MCMembers{}
		for _, p := range []*discovery.Port{tn.host1.Port(1), tn.hst.Port(1)} {
			var gid mad.GID
			gid[0], gid[1] = 0xfe, 0x80
			for i := range 8 {
				gid[8+i] = byte(p.GUID >> (56 - 8*i))
			}
			tn.s.MCMembers.Members = append(tn.s.MCMembers.Members, MCMember{MGID: mgid, MLID: 0xC000, PortGID: gid, JoinState: 1})
		}
	}
}

func setMask(tn *tiny, sw *discovery.Node, ports ...int) {
	var m uint16
	for _, p := range ports {
		m |= 1 << p
	}
	tn.s.Tables.Switches[sw.GUID].MFT.Masks[0] = m
}

func TestMulticastCheck(t *testing.T) {
	for _, fromSA := range []bool{true, false} {
		tn := routed()
		mcast(tn, fromSA)
		found := run(t, multicastCheck{}, tn.s, nil)
		g := info(t, found, "multicast.groups")
		if got := placed(found); len(got) != 0 || g.Get("groups") != 1 || g.Get("members") != 2 {
			t.Fatalf("from the SA %v: findings %v, %s", fromSA, got, g.Message)
		}
		want := map[bool]string{true: "sa", false: "mft"}[fromSA]
		if g.Get("members_from") != want {
			t.Errorf("members from %v, want %s", g.Get("members_from"), want)
		}
		// The MFTs' ends as the members, the SA's name for the group:
		// sw1 keeps its copies to itself. (A switch that stops
		// forwarding to its host has no member there any more: that
		// takes the SA's members.)
		setMask(tn, tn.sw1, 1)
		found = run(t, multicastCheck{}, tn.s, nil)
		if fromSA {
			continue
		}
		if got := placed(found); len(got) != 1 || got[0] != "multicast.switch_unreached at 300" {
			t.Errorf("MFT ends, sw1 forwarding to host1 only: %v", got)
		} else if !strings.Contains(found[0].Message, "MGID ff12:401b::ffff") {
			t.Errorf("message %q does not name the group", found[0].Message)
		}
	}
	for _, tc := range []struct {
		name string
		mask func(tn *tiny)
		want string
	}{
		// sw2 does not forward to host2: from sw1's member, and its own.
		{"member", func(tn *tiny) { setMask(tn, tn.sw2, 5) }, "multicast.member_unreached at 300[1]"},
		// sw1 does not forward to sw2: host2 gets nothing from host1.
		{"switch", func(tn *tiny) { setMask(tn, tn.sw1, 1) }, "multicast.switch_unreached at 300"},
		// Both links between the switches: each copy comes back.
		{"loop", func(tn *tiny) { setMask(tn, tn.sw1, 1, 5, 6); setMask(tn, tn.sw2, 1, 5, 6) }, "multicast.loop at 200[6]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := routed()
			mcast(tn, true)
			tc.mask(tn)
			found := run(t, multicastCheck{}, tn.s, nil)
			if got := strings.Join(placed(found), "\n"); got != tc.want {
				t.Fatalf("findings:\n%s\nwant:\n%s", got, tc.want)
			}
			if found[0].Get("mlid") != 0xC000 || found[0].Get("mgid") == nil {
				t.Errorf("evidence %v", found[0].Evidence)
			}
		})
	}
	tn := routed()
	if _, skipped := (multicastCheck{}).Run(tn.s, &Config{}); skipped == "" {
		t.Error("multicast ran without --multicast")
	}
}

func TestTheTablesChecksNeedTables(t *testing.T) {
	tn := newTiny()
	for _, c := range []Check{routingCheck{}, creditLoopsCheck{}, multicastCheck{}} {
		if _, skipped := c.Run(tn.s, &Config{}); skipped == "" {
			t.Errorf("%s ran without tables", c.Name())
		}
	}
}

// What could not be read of the tables is the walk check's, and makes
// the sweep incomplete.
func TestTableReadFailures(t *testing.T) {
	tn := routed()
	sw := tn.s.Tables.Switches[tn.sw2.GUID]
	sw.LFT.Failed = []routing.BlockError{{Block: 0, Mod: 0, Err: errTimeout}}
	sw.SL2VL = &routing.SL2VL{Tables: map[routing.PortPair][16]uint8{}, Failed: map[routing.PortPair]error{{In: 3, Out: 5}: errTimeout}}
	if tn.s.Complete() || tn.s.Failures() != 2 {
		t.Errorf("complete %v, %d failures", tn.s.Complete(), tn.s.Failures())
	}
	found := run(t, walkCheck{}, tn.s, nil)
	if got := strings.Join(placed(found), "\n"); got != "walk.read_failed at 300\nwalk.read_failed at 300[5]" {
		t.Fatalf("findings %v", got)
	}
	if found[0].Get("attribute") != "LinearForwardingTable block 0" || found[1].Get("attribute") != "SLtoVLMappingTable from port 3" {
		t.Errorf("%v / %v", found[0].Evidence, found[1].Evidence)
	}
	// Routes into the unread block are no routing finding.
	if got := placed(run(t, routingCheck{}, tn.s, nil)); len(got) != 0 {
		t.Errorf("routing: %v", got)
	}
	// A switch whose SwitchInfo the walk could not read has no tables:
	// the walk's error (walk.attribute_unread) says so, not a second one.
	tn = routed()
	tn.s.Tables.Switches[tn.sw2.GUID] = &routing.Switch{GUID: tn.sw2.GUID, Err: errTimeout}
	if got := placed(run(t, walkCheck{}, tn.s, nil)); len(got) != 0 || !tn.s.Complete() {
		t.Errorf("walk: %v", got)
	}
	if got := placed(run(t, routingCheck{}, tn.s, nil)); len(got) != 0 {
		t.Errorf("routing: %v", got)
	}
}
