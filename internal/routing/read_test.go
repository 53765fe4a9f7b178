package routing

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

func TestReadGivesEverySwitchItsLFT(t *testing.T) {
	fab, host, sw1, sw2, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	if len(tb.Switches) != 2 {
		t.Fatalf("%d switches read, want 2", len(tb.Switches))
	}
	want := map[*umadtest.Node]map[uint16]int{
		sw1: {host.LID(1): 1, sw1.LID(0): 0, sw2.LID(0): 2, far.LID(1): 2},
		sw2: {host.LID(1): 2, sw1.LID(0): 2, sw2.LID(0): 0, far.LID(1): 3},
	}
	for n, lids := range want {
		sw := tb.Switches[n.GUID]
		if sw == nil || sw.LFT == nil || sw.Err != nil || len(sw.LFT.Failed) > 0 {
			t.Fatalf("switch 0x%x: %+v", n.GUID, sw)
		}
		for lid, port := range lids {
			if got := sw.LFT.Port(int(lid)); got != port {
				t.Errorf("switch 0x%x LID %d: port %d, want %d", n.GUID, lid, got, port)
			}
		}
		// LinearFDBTop is the fabric's top LID (4): one block, read whole.
		if sw.LFT.First != 0 || len(sw.LFT.Ports) != LIDsPerBlock {
			t.Errorf("switch 0x%x: table of LIDs %d..%d, want block 0", n.GUID, sw.LFT.First, sw.LFT.Last())
		}
		if got := sw.LFT.Port(0); got != NoPort {
			t.Errorf("LID 0 goes to port %d", got)
		}
		if got := sw.LFT.Port(1000); got != NoPort {
			t.Errorf("a LID past the table goes to port %d", got)
		}
	}
}

func TestReadKeepsEachSwitchsFailureItsOwn(t *testing.T) {
	fab, _, sw1, sw2, far := lineFabric()
	sw2.Fail(mad.AttrLinearForwardingTable, 0, 0x1C)
	tb := readTables(t, fab, Want{LFT: true})
	good, bad := tb.Switches[sw1.GUID], tb.Switches[sw2.GUID]
	if len(good.LFT.Failed) != 0 || good.LFT.Port(int(far.LID(1))) != 2 {
		t.Errorf("sw1's table suffered from sw2's failure: %+v", good.LFT)
	}
	if len(bad.LFT.Failed) != 1 || bad.LFT.Failed[0].Block != 0 {
		t.Fatalf("sw2's failed block: %+v", bad.LFT.Failed)
	}
	var se *rpc.StatusError
	if !errors.As(bad.LFT.Failed[0].Err, &se) || se.Reply.Status()&^mad.DirectionBit != 0x1C {
		t.Errorf("failed block's error %v, want the MAD status 0x1C", bad.LFT.Failed[0].Err)
	}
	if bad.LFT.Readable(int(far.LID(1))) || bad.LFT.Port(int(far.LID(1))) != NoPort {
		t.Errorf("an unread block reads as readable or with an entry")
	}
	if !bad.LFT.Readable(LIDsPerBlock + 5) {
		t.Errorf("a LID past the table reads as unreadable")
	}
}

func TestReadCoversOnlyWhatTheTopCovers(t *testing.T) {
	fab, _, sw1, sw2, _ := lineFabric()
	// Top 130: blocks 0..2, whatever the capacity.
	setLFT(sw1, 130, nil)
	// Top 0: an empty table, nothing read.
	setLFT(sw2, 0, nil)
	c, f := client(t, fab)
	tb := Read(context.Background(), c, f, Want{LFT: true})
	if got := tb.Switches[sw1.GUID].LFT; got.First != 0 || got.Last() != 3*LIDsPerBlock-1 {
		t.Errorf("top 130: LIDs %d..%d, want 0..191", got.First, got.Last())
	}
	if got := tb.Switches[sw2.GUID].LFT; len(got.Ports) != 0 {
		t.Errorf("top 0: %d LIDs read", len(got.Ports))
	}
	// A target's own block range (ibroute's start and end LIDs).
	ts := Targets(f)
	for i := range ts {
		ts[i].Blocks = Range{1, 2}
	}
	sws := ReadSwitches(context.Background(), c, ts, Want{LFT: true})
	if got := sws[0].LFT; got.First != 64 || len(got.Ports) != 64 {
		t.Errorf("blocks [1,2): LIDs %d..%d", got.First, got.Last())
	}
}

func TestDefaultMLIDs(t *testing.T) {
	for _, c := range []struct {
		capacity, top uint16
		want          Range
	}{
		{1024, 0, Range{0xC000, 0xC400}},        // no top kept: the capacity
		{1024, 0xC010, Range{0xC000, 0xC011}},   // up to the top
		{1024, 0xBFFF, Range{0xC000, 0xC000}},   // none in use
		{1024, 0x10, Range{0xC000, 0xC400}},     // a top that is not valid is ignored
		{0, 0, Range{0xC000, 0xC000}},           // no multicast table
		{0x4000, 0, Range{0xC000, MaxMLID + 1}}, // capped at the last MLID
	} {
		si := mad.SwitchInfo{MulticastFDBCap: c.capacity, MulticastFDBTop: c.top}
		if got := DefaultMLIDs(&si); got != c.want {
			t.Errorf("cap %d top 0x%x: %+v, want %+v", c.capacity, c.top, got, c.want)
		}
	}
}

func TestReadMFT(t *testing.T) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw := fab.AddSwitch(0x200, 20, "sw") // two port masks per MLID
	fab.Link(host, 1, sw, 1)
	sw.Join(0xC001, 1, 18)
	sw.Join(0xC3FF, 0)
	tb := readTables(t, fab, Want{MFT: true})
	s := tb.Switches[sw.GUID]
	if s.LFT != nil {
		t.Errorf("LFT read when only the MFT was asked for")
	}
	m := s.MFT
	if m.First != MinMLID || m.Len() != 1024 || m.Chunks != 2 || len(m.Failed) != 0 {
		t.Fatalf("MFT: first 0x%x, %d MLIDs, %d chunks, failed %v", m.First, m.Len(), m.Chunks, m.Failed)
	}
	if got := m.Ports(0xC001).Ports(); !slices.Equal(got, []int{1, 18}) {
		t.Errorf("MLID 0xC001 goes to %v, want [1 18]", got)
	}
	if m.Mask(0xC001, 1) != 1<<2 || m.Mask(0xC001, 0) != 1<<1 {
		t.Errorf("masks of 0xC001: %04x %04x", m.Mask(0xC001, 0), m.Mask(0xC001, 1))
	}
	if got := m.Ports(0xC3FF).Ports(); !slices.Equal(got, []int{0}) {
		t.Errorf("MLID 0xC3FF goes to %v, want [0]", got)
	}
	if m.Ports(0xC002).Len() != 0 || m.Ports(0xC400).Len() != 0 || m.Ports(5).Len() != 0 {
		t.Errorf("MLIDs without ports have some")
	}
	// A failed chunk is recorded; the other chunk of the block is kept.
	sw.Fail(mad.AttrMulticastForwardingTable, 1<<28, 0x1C)
	m = readTables(t, fab, Want{MFT: true}).Switches[sw.GUID].MFT
	if len(m.Failed) != 1 || m.Failed[0].Block != 0 || m.Failed[0].Chunk != 1 {
		t.Fatalf("failed: %+v", m.Failed)
	}
	if got := m.Ports(0xC001).Ports(); !slices.Equal(got, []int{1}) {
		t.Errorf("with chunk 1 of block 0 failed, 0xC001 goes to %v, want [1]", got)
	}
}

func TestReadSL2VL(t *testing.T) {
	fab, _, sw1, sw2, _ := lineFabric()
	// sw1's port 2: SL i to VL i%2 from port 1; the other input ports
	// fail (umadtest's SMAs compute no SL2VL tables).
	var m mad.SLtoVLMappingTable
	for sl := range m.VL {
		m.VL[sl] = uint8(sl % 2)
	}
	sw1.Set(1<<8|2, &m)
	c, f := client(t, fab)
	tb := Read(context.Background(), c, f, Want{LFT: true})
	var ports []*discovery.Port
	for _, n := range f.NodesOfType(discovery.NodeCA) {
		ports = append(ports, n.Port(1)) // a CA's port is skipped
	}
	ports = append(ports, f.Node(sw1.GUID).Port(2), f.Node(sw2.GUID).Port(1))
	ReadSL2VL(context.Background(), c, tb, ports)
	s := tb.Switches[sw1.GUID].SL2VL
	if vl, ok := s.VL(1, 2, 3); !ok || vl != 1 {
		t.Errorf("SL 3 from 1 to 2: VL %d %v, want 1", vl, ok)
	}
	if _, ok := s.VL(3, 2, 3); ok {
		t.Errorf("a failed pair has a table")
	}
	// Ports 0..8 in, one out: 9 reads, 8 of them failed; sw2's port 1.
	if len(s.Tables) != 1 || len(s.Failed) != 8 {
		t.Errorf("sw1: %d tables, %d failed; want 1 and 8", len(s.Tables), len(s.Failed))
	}
	if s2 := tb.Switches[sw2.GUID].SL2VL; s2 == nil || len(s2.Failed) != 9 {
		t.Errorf("sw2's port 1: %+v", s2)
	}
}

func TestPortStateMatchesTheDecoder(t *testing.T) {
	for _, st := range []mad.PortState{mad.PortStateDown, mad.PortStateInit, mad.PortStateActive} {
		pi := mad.PortInfo{PortState: st, PortPhysicalState: mad.PhysPortStateLinkUp, LinkSpeedSupported: 7, LID: 0xffff}
		p := &discovery.Port{PortInfo: mad.Encode(&pi)}
		if got := portState(p); got != st {
			t.Errorf("state %v read as %v", st, got)
		}
	}
	if portState(&discovery.Port{}) != 0 || portState(nil) != 0 {
		t.Errorf("a port without PortInfo has a state")
	}
}

func TestLIDMapKeepsTheFirstPortFound(t *testing.T) {
	f := discovery.NewFabric()
	a := f.AddNode(&discovery.Node{GUID: 1, Type: discovery.NodeCA, NumPorts: 2})
	b := f.AddNode(&discovery.Node{GUID: 2, Type: discovery.NodeCA, NumPorts: 1})
	a.Ports[1] = &discovery.Port{Node: a, Num: 1, BaseLID: 4, LMC: 2} // 4..7
	a.Ports[2] = &discovery.Port{Node: a, Num: 2, BaseLID: 9}
	b.Ports[1] = &discovery.Port{Node: b, Num: 1, BaseLID: 6} // a duplicate of a's LID 6
	m := LIDMap(f)
	if len(m) != 10 {
		t.Fatalf("map of %d LIDs, want 0..9", len(m))
	}
	for lid, want := range map[int]*discovery.Port{3: nil, 4: a.Ports[1], 6: a.Ports[1], 7: a.Ports[1], 8: nil, 9: a.Ports[2]} {
		if m[lid] != want {
			t.Errorf("LID %d: %v, want %v", lid, m[lid], want)
		}
	}
}
