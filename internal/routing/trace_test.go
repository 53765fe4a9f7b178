package routing

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// hops writes a route's hops as "guid[in,out] ..." for comparisons.
func hops(r Route) string {
	var parts []string
	for _, h := range r.Hops {
		parts = append(parts, fmt.Sprintf("%x[%d,%d]", h.Node.GUID, h.In, h.Out))
	}
	return strings.Join(parts, " ")
}

func TestTraceArrives(t *testing.T) {
	fab, host, sw1, sw2, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	for _, c := range []struct {
		from *umadtest.Node
		port int
		dlid uint16
		want string
	}{
		{host, 1, far.LID(1), "100[0,1] 200[1,2] 300[2,3] 400[1,0]"},
		{far, 1, host.LID(1), "400[0,1] 300[3,2] 200[2,1] 100[1,0]"},
		{host, 1, sw2.LID(0), "100[0,1] 200[1,2] 300[2,0]"},
		{host, 1, sw1.LID(0), "100[0,1] 200[1,0]"},
		{sw1, 0, far.LID(1), "200[0,2] 300[2,3] 400[1,0]"},
		{sw1, 0, sw1.LID(0), "200[0,0]"},
		{host, 1, host.LID(1), "100[0,0]"}, // to itself
	} {
		r := tb.Trace(node(t, tb, c.from), c.port, int(c.dlid))
		if r.End != Arrived || hops(r) != c.want || r.DLID != int(c.dlid) {
			t.Errorf("0x%x to LID %d: %v %s, want arrived %s", c.from.GUID, c.dlid, r.End, hops(r), c.want)
		}
	}
}

func TestTraceDeadEnds(t *testing.T) {
	const top = 4 // LIDs: host 1, sw1 2, sw2 3, far 4
	for _, c := range []struct {
		name     string
		sw1, sw2 map[uint16]byte
		end      Outcome
		want     string
	}{
		{"no entry", map[uint16]byte{4: 2}, map[uint16]byte{}, NoEntry, "100[0,1] 200[1,2] 300[2,0]"},
		{"bad port", map[uint16]byte{4: 9}, nil, BadPort, "100[0,1] 200[1,9]"},
		{"unlinked port", map[uint16]byte{4: 2}, map[uint16]byte{4: 5}, PortDown, "100[0,1] 200[1,2] 300[2,5]"},
		{"back to a host", map[uint16]byte{4: 1}, nil, LeadsNowhere, "100[0,1] 200[1,1]"},
		{"to the switch itself", map[uint16]byte{4: 0}, nil, LeadsNowhere, "100[0,1] 200[1,0]"},
		{"loop", map[uint16]byte{4: 2}, map[uint16]byte{4: 2}, Loop, "100[0,1] 200[1,2] 300[2,2]"},
	} {
		fab, host, sw1, sw2, _ := lineFabric()
		if c.sw1 != nil {
			setLFT(sw1, top, c.sw1)
		}
		if c.sw2 != nil {
			setLFT(sw2, top, c.sw2)
		}
		tb := readTables(t, fab, Want{LFT: true})
		r := tb.Trace(node(t, tb, host), 1, 4)
		if r.End != c.end || hops(r) != c.want {
			t.Errorf("%s: %v %s, want %v %s", c.name, r.End, hops(r), c.end, c.want)
		}
		if c.end == Loop && r.Hops[r.LoopStart].Node.GUID != sw1.GUID {
			t.Errorf("the loop starts at hop %d, want sw1's", r.LoopStart)
		}
	}
}

func TestTraceUnread(t *testing.T) {
	fab, host, _, sw2, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	// sw2 not read: the route ends there.
	delete(tb.Switches, sw2.GUID)
	if r := tb.Trace(node(t, tb, host), 1, int(far.LID(1))); r.End != Unread || hops(r) != "100[0,1] 200[1,2] 300[2,0]" {
		t.Errorf("unread switch: %v %s", r.End, hops(r))
	}
	// An Active port whose other end the walk did not see.
	tb = readTables(t, fab, Want{LFT: true})
	p := tb.Fabric.Node(sw2.GUID).Port(3)
	p.Remote.Remote, p.Remote = nil, nil
	if r := tb.Trace(node(t, tb, host), 1, int(far.LID(1))); r.End != Unread || hops(r) != "100[0,1] 200[1,2] 300[2,3]" {
		t.Errorf("port to nothing seen: %v %s", r.End, hops(r))
	}
	// The block of the LID failed.
	sw2.Fail(0x19, 0, 0x1C)
	tb = readTables(t, fab, Want{LFT: true})
	if r := tb.Trace(node(t, tb, host), 1, int(far.LID(1))); r.End != Unread || hops(r) != "100[0,1] 200[1,2] 300[2,0]" {
		t.Errorf("failed block: %v %s", r.End, hops(r))
	}
	// A LID nobody has: the tables have no entry for it.
	if r := tb.Trace(node(t, tb, host), 1, 40); r.End != NoEntry || hops(r) != "100[0,1] 200[1,0]" {
		t.Errorf("unknown LID: %v %s", r.End, hops(r))
	}
}

func TestTraceFromADownPort(t *testing.T) {
	fab, host, _, _, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	// The CA's port 2 does not exist; its port 1's link taken away.
	n := node(t, tb, host)
	if r := tb.Trace(n, 2, int(far.LID(1))); r.End != PortDown || hops(r) != "100[0,2]" {
		t.Errorf("from a port the CA does not have: %v %s", r.End, hops(r))
	}
	n.Ports[1].PortInfo[32] = n.Ports[1].PortInfo[32]&0xF0 | 1 // Down
	if r := tb.Trace(n, 1, int(far.LID(1))); r.End != PortDown {
		t.Errorf("from a Down port: %v %s", r.End, hops(r))
	}
}

func TestTraceWithReadsOnlyWhatTheRouteNeeds(t *testing.T) {
	fab, host, sw1, sw2, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	var asked []uint64
	fwd := func(n *discovery.Node, lid int) (int, error) {
		asked = append(asked, n.GUID)
		if n.GUID == sw2.GUID && lid == int(host.LID(1)) {
			return 0, errors.New("no reply")
		}
		return tb.Switches[n.GUID].LFT.Port(lid), nil
	}
	r := TraceWith(tb.Fabric, fwd, node(t, tb, host), 1, int(far.LID(1)))
	if r.End != Arrived || hops(r) != "100[0,1] 200[1,2] 300[2,3] 400[1,0]" || r.Err != nil {
		t.Errorf("host to far: %v %s %v", r.End, hops(r), r.Err)
	}
	if len(asked) != 2 || asked[0] != sw1.GUID || asked[1] != sw2.GUID {
		t.Errorf("entries asked of %x, want sw1's and sw2's", asked)
	}
	var links []string
	for _, p := range r.Links() {
		links = append(links, fmt.Sprintf("%x[%d]", p.Node.GUID, p.Num))
	}
	if strings.Join(links, " ") != "100[1] 200[2] 300[3]" {
		t.Errorf("links %v", links)
	}
	r = TraceWith(tb.Fabric, fwd, node(t, tb, far), 1, int(host.LID(1)))
	if r.End != Unread || r.Err == nil || r.Err.Error() != "no reply" || hops(r) != "400[0,1] 300[3,0]" {
		t.Errorf("far to host, sw2 not answering: %v %s %v", r.End, hops(r), r.Err)
	}
}
