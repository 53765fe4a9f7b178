package umadtest

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

func smp(method uint8, attr uint16, mod uint32, lid uint16) *umad.Packet {
	m := mad.NewLIDSMP(method, attr, mod)
	m.SetTID(0xFFFF_0000_1234_5678)
	return &umad.Packet{Addr: umad.Address{LID: lid}, MAD: m}
}

func dr(attr uint16, mod uint32, path ...byte) *umad.Packet {
	m := mad.NewDRSMP(mad.MethodGet, attr, mod, append([]byte{0}, path...))
	return &umad.Packet{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: m}
}

// recv reads one packet or fails.
func recv(t *testing.T, p *Port) *umad.Packet {
	t.Helper()
	pkt, err := p.Recv(time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return pkt
}

func TestReply(t *testing.T) {
	for _, tc := range []struct {
		method, want uint8
	}{{mad.MethodGet, mad.MethodGetResp}, {mad.MethodSet, mad.MethodGetResp}, {mad.MethodGetTable, mad.MethodGetTblResp}, {mad.MethodReport, mad.MethodReportResp}} {
		req := smp(tc.method, mad.AttrNodeInfo, 3, 7)
		copy(mad.Header(req.MAD).SMPData(), "request data")
		r := Reply(req, 0x1c, []byte{1, 2})
		h := mad.Header(r.MAD)
		if h.Method() != tc.want || h.Status() != 0x1c || h.AttrMod() != 3 || r.Addr.LID != 7 || r.Status != 0 {
			t.Errorf("method %#x: reply method %#x status %#x mod %d from %d", tc.method, h.Method(), h.Status(), h.AttrMod(), r.Addr.LID)
		}
		if h.TID() != 0x0001_0000_1234_5678 {
			t.Errorf("TID %#x: the low 32 bits stay, the high ones are the transport's", h.TID())
		}
		if d := h.SMPData(); d[0] != 1 || d[1] != 2 || d[2] != 0 {
			t.Errorf("data % x: want the answer's, the rest zeroed", d[:16])
		}
		if mad.Header(req.MAD).Method() != tc.method {
			t.Error("Reply changed the request")
		}
	}
	// SA data sits after the SA header; a DR SMP's status has the D bit.
	sa := &umad.Packet{MAD: mad.NewRequest(mad.ClassSubnAdm, 2, mad.MethodGet, mad.AttrNodeRecord, 0)}
	if r := Reply(sa, 0, []byte{9}); r.MAD[56] != 9 || r.MAD[64] != 0 {
		t.Errorf("SA reply data misplaced")
	}
	if h := mad.Header(Reply(dr(mad.AttrNodeInfo, 0, 1, 2), 0x0c, nil).MAD); h.Status() != mad.DirectionBit|0x0c || h.HopPointer() != 0 ||
		mad.FormatDRPath(h.InitialPath()) != "0,1,2" {
		t.Errorf("DR reply: status %#x, hop pointer %d, path %v", h.Status(), h.HopPointer(), h.InitialPath())
	}
	if u := Undelivered(sa); u.Status != umad.StatusTimeout || mad.Header(u.MAD).Method() != mad.MethodGet {
		t.Errorf("undelivered: %+v", u)
	}
}

func TestPortDeliversRecordsAndCloses(t *testing.T) {
	p := NewPort(Classes{mad.ClassSubnLID: Echo}.Answer, WithInfo(umad.PortInfo{LID: 5}))
	if err := p.Send(smp(mad.MethodSet, mad.AttrSMInfo, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, p); mad.Header(r.MAD).Method() != mad.MethodGetResp {
		t.Errorf("echo: %x", r.MAD[:8])
	}
	// Another class: handed back undelivered.
	_ = p.Send(&umad.Packet{MAD: mad.NewRequest(mad.ClassPerf, 1, mad.MethodGet, 1, 0)})
	if r := recv(t, p); r.Status != umad.StatusTimeout {
		t.Errorf("PerfMgt: status %d", r.Status)
	}
	if len(p.Requests()) != 2 || len(p.Requests(mad.ClassPerf)) != 1 || p.Requests(mad.ClassPerf)[0].Class() != mad.ClassPerf {
		t.Errorf("requests: %d", len(p.Requests()))
	}
	if info, _ := p.Info(); info.LID != 5 {
		t.Errorf("info %+v", info)
	}
	if _, err := p.Recv(time.Now().Add(10 * time.Millisecond)); !errors.Is(err, umad.ErrTimeout) {
		t.Errorf("nothing queued: %v", err)
	}
	p.Deliver(smp(mad.MethodTrap, 2, 0, 9))
	if r := recv(t, p); r.Addr.LID != 9 {
		t.Errorf("delivered %+v", r)
	}
	p.Close()
	if _, err := p.Recv(time.Now().Add(time.Second)); !errors.Is(err, umad.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if err := p.Send(smp(mad.MethodGet, 1, 0, 1)); !errors.Is(err, umad.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
}

func TestPortLossDelayAndReordering(t *testing.T) {
	const n = 400
	p := NewPort(Echo, Loss(0.25), Delay(2*time.Millisecond), Jitter(5*time.Millisecond), Seed(7))
	for i := range n {
		_ = p.Send(smp(mad.MethodGet, 1, uint32(i), uint16(1+i%4)))
	}
	var got []uint32
	for {
		r, err := p.Recv(time.Now().Add(50 * time.Millisecond))
		if err != nil {
			break
		}
		got = append(got, mad.Header(r.MAD).AttrMod())
	}
	if len(got) < n*6/10 || len(got) > n*9/10 {
		t.Errorf("%d of %d answered with a quarter lost", len(got), n)
	}
	reordered := 0
	for i := 1; i < len(got); i++ {
		if got[i] < got[i-1] {
			reordered++
		}
	}
	if reordered == 0 {
		t.Error("no answer overtook another")
	}
	if all, one := p.MostInFlight(); all < 10 || one < 3 || one > all {
		t.Errorf("in flight at most %d, %d to one LID", all, one)
	}
	if len(p.Requests()) != n {
		t.Errorf("%d requests recorded", len(p.Requests()))
	}
}

func TestPortIsSafeForConcurrentUse(t *testing.T) {
	p := NewPort(Echo)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 100 {
				_ = p.Send(smp(mad.MethodGet, 1, uint32(i*100+j), 1))
			}
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := p.Recv(time.Now().Add(time.Second)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestOpenerSharesTheRecord(t *testing.T) {
	o := NewOpener(Echo, WithInfo(umad.PortInfo{LID: 3}))
	for range 2 {
		port, err := o.Open("", -1)
		if err != nil {
			t.Fatal(err)
		}
		_ = port.Send(smp(mad.MethodGet, 1, 0, 1))
		if info, _ := port.Info(); info.LID != 3 {
			t.Errorf("info %+v", info)
		}
		port.Close()
	}
	if len(o.Requests()) != 2 || len(o.Ports()) != 2 {
		t.Errorf("%d requests on %d ports", len(o.Requests()), len(o.Ports()))
	}
	none := &Opener{LocalCAs: []umad.CA{{Name: "x"}}}
	if _, err := none.Open("", 1); !errors.Is(err, ErrNoPorts) {
		t.Errorf("Open without a Func: %v", err)
	}
	if cas, _ := none.CAs(); len(cas) != 1 {
		t.Errorf("CAs %v", cas)
	}
}

// tiny is testdata/topologies/tiny.net: Switch1 (local) port 1 Hca1,
// port 4 Hca2, port 8 Switch2 port 4; Switch2 port 1 Hca3.
func tiny() (f *Fabric, sw1, sw2, hca1, hca3 *Node) {
	f = NewFabric()
	sw1 = f.AddSwitch(0x200000, 8, "Switch1")
	sw2 = f.AddSwitch(0x200001, 4, "Switch2")
	hca1 = f.AddCA(0x100000, 2, "Hca1")
	hca2 := f.AddCA(0x100003, 2, "Hca2")
	hca3 = f.AddCA(0x100006, 1, "Hca3")
	f.Link(sw1, 1, hca1, 1)
	f.Link(sw1, 4, hca2, 1)
	f.Link(sw1, 8, sw2, 4)
	f.Link(sw2, 1, hca3, 1)
	return
}

func answer1(t *testing.T, f Func, req *umad.Packet) mad.Header {
	t.Helper()
	out := f(req)
	if len(out) != 1 {
		t.Fatalf("%d answers", len(out))
	}
	if out[0].Status != 0 {
		return nil
	}
	return out[0].MAD
}

func TestFabricDirectedRoute(t *testing.T) {
	f, _, sw2, _, hca3 := tiny()
	h := answer1(t, f.Answer, dr(mad.AttrNodeInfo, 0, 8, 1))
	var ni mad.NodeInfo
	_ = ni.Unmarshal(h.SMPData())
	if ni.NodeGUID != 0x100006 || ni.PortGUID != 0x100007 || ni.LocalPortNum != 1 || ni.NodeType != mad.NodeTypeCA {
		t.Errorf("0,8,1 NodeInfo %+v", ni)
	}
	// The D bit, the hop pointer back at 0, the paths: ingress port 4 at
	// Switch2, 1 at Hca3 (IBA 14.2.2; ibsim fills them in the same way).
	if h.Status() != mad.DirectionBit || h.HopPointer() != 0 || mad.FormatDRPath(h.ReturnPath()) != "0,4,1" ||
		mad.FormatDRPath(h.InitialPath()) != "0,8,1" {
		t.Errorf("status %#x hop pointer %d return path %v", h.Status(), h.HopPointer(), h.ReturnPath())
	}
	if n, port := f.Dest(dr(mad.AttrNodeInfo, 0, 8, 1)); n != hca3 || port != 1 {
		t.Errorf("Dest %v %d", n, port)
	}
	// Local: a 0-hop route.
	if h := answer1(t, f.Answer, dr(mad.AttrNodeDescription, 0)); string(h.SMPData()[:7]) != "Switch1" {
		t.Errorf("0-hop: %q", h.SMPData()[:8])
	}
	// Unlinked ports, routes through a CA: undelivered.
	for _, path := range [][]byte{{2}, {8, 3}, {1, 1}, {8, 1, 1}, {99}} {
		if h := answer1(t, f.Answer, dr(mad.AttrNodeInfo, 0, path...)); h != nil {
			t.Errorf("path %v answered", path)
		}
	}
	// A route that is not plain outgoing DR is dropped, as ibsim drops it.
	bad := dr(mad.AttrNodeInfo, 0, 8)
	bad.MAD[6] = 1
	if out := f.Answer(bad); len(out) != 0 {
		t.Errorf("hop pointer 1: %d answers", len(out))
	}
	// PortInfo: the port asked for, the LID, the state.
	var pi mad.PortInfo
	_ = pi.Unmarshal(answer1(t, f.Answer, dr(mad.AttrPortInfo, 2, 8)).SMPData())
	if pi.LID != sw2.LID(0) || pi.LocalPortNum != 4 || pi.PortState != mad.PortStateDown {
		t.Errorf("Switch2 port 2: %+v", pi)
	}
	_ = pi.Unmarshal(answer1(t, f.Answer, dr(mad.AttrPortInfo, 0, 8, 1)).SMPData())
	if pi.LID != hca3.LID(1) || pi.PortState != mad.PortStateActive {
		t.Errorf("Hca3 port 0 (its own): %+v", pi)
	}
	if h := answer1(t, f.Answer, dr(mad.AttrPortInfo, 5, 8)); h.Status() != mad.DirectionBit|StatusInvalidField {
		t.Errorf("Switch2 port 5: status %#x", h.Status())
	}
	if h := answer1(t, f.Answer, dr(mad.AttrSwitchInfo, 0, 8, 1)); h.Status() != mad.DirectionBit|StatusUnsupported {
		t.Errorf("SwitchInfo of a CA: status %#x", h.Status())
	}
}

func TestFabricLIDRouting(t *testing.T) {
	f, sw1, sw2, hca1, hca3 := tiny()
	if sw1.LID(0) != 1 || sw2.LID(3) != 2 || hca1.LID(1) != 3 || hca1.LID(2) != 4 || hca3.LID(1) != 7 {
		t.Fatalf("LIDs in order of adding: %d %d %d %d %d", sw1.LID(0), sw2.LID(0), hca1.LID(1), hca1.LID(2), hca3.LID(1))
	}
	// Switch1's table: itself 0, Hca1 1, Hca1's unlinked port none, Switch2 and Hca3 8.
	var lft mad.LinearForwardingTable
	_ = lft.Unmarshal(answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrLinearForwardingTable, 0, 1)).SMPData())
	if got := lft.Port[:9]; string(got) != string([]byte{0xFF, 0, 8, 1, 0xFF, 4, 0xFF, 8, 0xFF}) {
		t.Errorf("Switch1 LFT %v", got)
	}
	// By LID a request follows the tables: it reaches Hca3 by its port 1.
	var ni mad.NodeInfo
	_ = ni.Unmarshal(answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrNodeInfo, 0, 7)).SMPData())
	if ni.NodeGUID != 0x100006 || ni.LocalPortNum != 1 {
		t.Errorf("LID 7: %+v", ni)
	}
	_ = ni.Unmarshal(answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrNodeInfo, 0, 2)).SMPData())
	if ni.NodeGUID != 0x200001 || ni.LocalPortNum != 4 {
		t.Errorf("LID 2: %+v", ni)
	}
	for _, lid := range []uint16{4, 99} { // an unlinked port, no such LID
		if h := answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrNodeInfo, 0, lid)); h != nil {
			t.Errorf("LID %d answered", lid)
		}
	}
	// Set, Fail, SetLID, Join.
	sw2.Set(AnyMod, &mad.MlnxExtPortInfo{LinkSpeedActive: 1})
	hca3.Fail(mad.AttrNodeDescription, 0, StatusInvalidField)
	if h := answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrMlnxExtPortInfo, 3, 2)); h.SMPData()[15] != 1 {
		t.Errorf("MlnxExtPortInfo % x", h.SMPData()[:16])
	}
	if h := answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrNodeDescription, 0, 7)); h.Status() != StatusInvalidField {
		t.Errorf("failed NodeDescription: %#x", h.Status())
	}
	set := smp(mad.MethodSet, mad.AttrNodeDescription, 0, 2)
	copy(mad.Header(set.MAD).SMPData(), "renamed")
	answer1(t, f.Answer, set)
	if h := answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrNodeDescription, 0, 2)); string(h.SMPData()[:7]) != "renamed" {
		t.Errorf("after Set: %q", h.SMPData()[:8])
	}
	hca3.SetLID(1, 40)
	if h := answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrNodeInfo, 0, 40)); h == nil {
		t.Error("LID 40 not routed")
	}
	sw1.Join(0xC001, 1, 8, 17)
	var mft mad.MulticastForwardingTable
	_ = mft.Unmarshal(answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrMulticastForwardingTable, 0, 1)).SMPData())
	if mft.PortMask[1] != 1<<1|1<<8 || mft.PortMask[0] != 0 {
		t.Errorf("MFT ports 0-15: %v", mft.PortMask[:2])
	}
	_ = mft.Unmarshal(answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrMulticastForwardingTable, 1<<28, 1)).SMPData())
	if mft.PortMask[1] != 1<<1 {
		t.Errorf("MFT ports 16-31: %v", mft.PortMask[:2])
	}
	if info := f.LocalInfo(); info.LID != 1 || info.Num != 0 || info.PortGUID != 0x200000 || info.State != 4 {
		t.Errorf("local %+v", info)
	}
}

func TestPMA(t *testing.T) {
	p := NewPMA()
	p.Set(0, &mad.ClassPortInfo{CapabilityMask: 0x1200})
	p.Set(2, &mad.PortCounters{PortSelect: 2, SymbolErrorCounter: 5})
	p.Fail(mad.AttrPortCounters, 3, 0x0c)
	get := func(attr uint16, port byte) mad.Header {
		req := mad.NewRequest(mad.ClassPerf, 1, mad.MethodGet, attr, 0)
		req[mad.SMPDataOffset+1] = port
		return answer1(t, p.Answer, &umad.Packet{Addr: umad.Address{LID: 9, QP: 1}, MAD: req})
	}
	var cpi mad.ClassPortInfo
	_ = cpi.Unmarshal(get(mad.AttrClassPortInfo, 7)[64:])
	var pc mad.PortCounters
	_ = pc.Unmarshal(get(mad.AttrPortCounters, 2)[64:])
	if cpi.CapabilityMask != 0x1200 || pc.SymbolErrorCounter != 5 {
		t.Errorf("cpi %+v counters %+v", cpi, pc)
	}
	if get(mad.AttrPortCounters, 3).Status() != 0x0c || get(mad.AttrPortCounters, 4).Status() != StatusInvalidField {
		t.Error("failures")
	}
}

func TestSAGetAndRMPPGetTable(t *testing.T) {
	s := NewSA()
	for i := range 10 {
		s.Add(&mad.NodeRecord{LID: uint16(i + 1), NodeDescription: mad.NodeDescription{}})
	}
	query := func(method uint8, lid uint16, mask uint64) *umad.Packet {
		m := mad.NewRequest(mad.ClassSubnAdm, 2, method, mad.AttrNodeRecord, 0)
		binary.BigEndian.PutUint64(m[48:], mask)
		binary.BigEndian.PutUint16(m[56:], lid)
		m.SetTID(77)
		return &umad.Packet{Addr: umad.Address{LID: 1, QP: 1}, MAD: m}
	}
	if h := answer1(t, s.Answer, query(mad.MethodGet, 4, 1)); h.Status() != 0 || binary.BigEndian.Uint16(h[56:]) != 4 {
		t.Errorf("Get LID 4: %#x", h.Status())
	}
	if h := answer1(t, s.Answer, query(mad.MethodGet, 40, 1)); h.Status() != StatusSANoRecords {
		t.Errorf("Get LID 40: %#x", h.Status())
	}
	if h := answer1(t, s.Answer, query(mad.MethodGet, 0, 0)); h.Status() != StatusSATooManyRecs {
		t.Errorf("Get all: %#x", h.Status())
	}
	// 10 records of 108 bytes, 112 apart: 1120 bytes, 6 segments. The
	// first comes alone; an ACK of it with a window up to 4 brings 2..4.
	seg := answer1(t, s.Answer, query(mad.MethodGetTable, 0, 0))
	if seg.Method() != mad.MethodGetTblResp || seg[25] != 1 || seg[26] != 1|2 || binary.BigEndian.Uint32(seg[32:]) != 6*20+1120 ||
		binary.BigEndian.Uint16(seg[44:]) != 14 {
		t.Fatalf("first segment % x", seg[24:48])
	}
	ack := func(n, window uint32) []*umad.Packet {
		m := append(mad.Header(nil), seg...)
		m[3] = mad.MethodGetTable
		m[25] = 2
		binary.BigEndian.PutUint32(m[28:], n)
		binary.BigEndian.PutUint32(m[32:], window)
		return s.Answer(&umad.Packet{MAD: m})
	}
	if out := ack(1, 4); len(out) != 3 || binary.BigEndian.Uint32(out[2].MAD[28:]) != 4 {
		t.Fatalf("window 4: %d segments", len(out))
	}
	if out := ack(2, 4); len(out) != 0 {
		t.Errorf("nothing new in the window: %d", len(out))
	}
	if out := ack(2, 4); len(out) != 2 { // the same ACK again: 3 and 4 are resent
		t.Errorf("a repeated ACK: %d", len(out))
	}
	out := ack(4, 10)
	if len(out) != 2 || out[1].MAD[26] != 1|4 || binary.BigEndian.Uint32(out[1].MAD[32:]) != 20+1120-5*200 {
		t.Fatalf("last segments: %d", len(out))
	}
	if tables, segs := s.Stats(); tables != 1 || segs != 8 {
		t.Errorf("stats %d %d", tables, segs)
	}
}

// A scripted node answers only what the test gives it; PMA failures end
// with status 0; layouts that are not attributes go in as data.
func TestScriptedNodeAndStoredData(t *testing.T) {
	f := NewFabric()
	host := f.AddCA(0xa, 1, "host")
	n := f.AddSwitch(0xb, 4, "target")
	f.Link(host, 1, n, 2)
	n.Scripted = true
	n.Set(0, &mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 40})
	n.SetData(mad.AttrPortInfoExtended, 3, []byte{0, 0, 0, 1})
	var ni mad.NodeInfo
	_ = ni.Unmarshal(answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrNodeInfo, 0, n.LID(0))).SMPData())
	if ni.NumPorts != 40 {
		t.Errorf("NodeInfo %+v: want the one set", ni)
	}
	if h := answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrPortInfoExtended, 3, n.LID(0))); h.SMPData()[3] != 1 {
		t.Errorf("PortInfoExtended % x", h.SMPData()[:4])
	}
	if h := answer1(t, f.Answer, smp(mad.MethodGet, mad.AttrPortInfo, 1, n.LID(0))); h.Status() != StatusInvalidField {
		t.Errorf("PortInfo of a scripted node: status %#x", h.Status())
	}
	// A route through a node is not the node's to script.
	if n, port := f.Dest(dr(mad.AttrNodeInfo, 0, 1)); n == nil || port != 2 {
		t.Errorf("DR to the target: %v port %d", n, port)
	}

	p := NewPMA()
	p.Set(AnyMod, &mad.PortCounters{SymbolErrorCounter: 3})
	p.Fail(mad.AttrPortCounters, 2, 0x1c)
	get := func(port byte) mad.Header {
		req := mad.NewRequest(mad.ClassPerf, 1, mad.MethodGet, mad.AttrPortCounters, 0)
		req[mad.SMPDataOffset+1] = port
		return answer1(t, p.Answer, &umad.Packet{MAD: req})
	}
	if get(2).Status() != 0x1c || get(5).Status() != 0 {
		t.Error("failing port 2")
	}
	p.Fail(mad.AttrPortCounters, 2, 0)
	if h := get(2); h.Status() != 0 || binary.BigEndian.Uint16(h[mad.SMPDataOffset+2+2:]) != 3 {
		t.Errorf("port 2 after its failure ended: %#x % x", h.Status(), h[64:70])
	}
	defer func() {
		if recover() == nil {
			t.Error("setting a layout that is not an attribute must panic")
		}
	}()
	p.Set(1, &mad.PortExtendedSpeedsCountersRSFEC{})
}

// Byte-string fields (GIDs, names) match by their bytes; PortInfoRecord's
// CapabilityMask with modifier bit 31 by any common bit.
func TestSAMatchesLikeOpenSM(t *testing.T) {
	s := NewSA()
	for i := range 3 {
		r := &mad.ServiceRecord{ServiceID: uint64(i)}
		r.ServiceGID[15] = byte(i)
		s.Add(r)
		s.Add(&mad.PortInfoRecord{EndPortLID: uint16(i + 1), PortInfo: mad.PortInfo{CapabilityMask: 1 << i}})
	}
	get := func(q mad.Struct, fields string, mod uint32) [][]byte {
		m := mad.NewRequest(mad.ClassSubnAdm, 2, mad.MethodGet, q.Desc().AttrID, mod)
		binary.BigEndian.PutUint64(m[48:], mad.MustCompMask(q.Desc(), fields))
		copy(m[56:], mad.Encode(q))
		return s.match(m)
	}
	q := &mad.ServiceRecord{}
	q.ServiceGID[15] = 2
	if recs := get(q, "ServiceGID", 0); len(recs) != 1 || recs[0][7] != 2 {
		t.Errorf("by GID: %d records", len(recs))
	}
	pq := &mad.PortInfoRecord{PortInfo: mad.PortInfo{CapabilityMask: 0b110}}
	if recs := get(pq, "PortInfo.CapabilityMask", 0); len(recs) != 0 {
		t.Errorf("CapabilityMask equal: %d records", len(recs))
	}
	if recs := get(pq, "PortInfo.CapabilityMask", 1<<31); len(recs) != 2 {
		t.Errorf("CapabilityMask any bit: %d records", len(recs))
	}
}
