package umadtest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// A client of ibsim's protocol (ibtool's own transport, which speaks it
// like umad2sim) attaches to a SimServer and gets the Func's answers: the
// local port from the fabric, SMPs, and an Agent's GMPs.
func TestSimServer(t *testing.T) {
	fab := NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw := fab.AddSwitch(0x200, 8, "sw")
	fab.Link(host, 1, sw, 3)
	cc := NewAgent(mad.ClassCongest)
	cc.Set(0, &mad.CongestionInfo{CongestionInfo: 1, ControlTableCap: 2})
	name := fmt.Sprintf("umadtest-%d", os.Getpid())
	s, err := NewSimServer(name, Classes{mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassCongest: cc.Answer}.Answer)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	port, err := umad.NewSim(umad.SimConfig{SockName: s.SockName()}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	info, err := port.Info()
	if err != nil || info.LID != 1 || info.Num != 1 || info.PortGUID != 0x101 {
		t.Fatalf("local port %+v %v", info, err)
	}
	exchange := func(p *umad.Packet) *umad.Packet {
		t.Helper()
		if err := port.Send(p); err != nil {
			t.Fatal(err)
		}
		r, err := port.Recv(time.Now().Add(2 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := exchange(&umad.Packet{Addr: umad.Address{LID: 2}, MAD: mad.NewLIDSMP(mad.MethodGet, mad.AttrNodeInfo, 0)})
	var ni mad.NodeInfo
	if err := ni.Unmarshal(mad.Header(r.MAD).SMPData()); err != nil || r.Status != 0 || ni.NodeGUID != 0x200 || r.Addr.LID != 2 {
		t.Errorf("NodeInfo of LID 2: %+v %v (status %d, from %d)", ni, err, r.Status, r.Addr.LID)
	}
	r = exchange(&umad.Packet{Addr: umad.Address{LID: 2, QP: 1, QKey: umad.QP1QKey}, MAD: mad.NewRequest(mad.ClassCongest, 2, mad.MethodGet, mad.AttrCongestionInfo, 0)})
	var ci mad.CongestionInfo
	if err := ci.Unmarshal(r.MAD[64:]); err != nil || ci.ControlTableCap != 2 || mad.Header(r.MAD).Method() != mad.MethodGetResp {
		t.Errorf("CongestionInfo: %+v %v", ci, err)
	}
	// A class nobody answers comes back undelivered, as from ibsim.
	r = exchange(&umad.Packet{Addr: umad.Address{LID: 2, QP: 1, QKey: umad.QP1QKey}, MAD: mad.NewRequest(mad.ClassPerf, 1, mad.MethodGet, mad.AttrPortCounters, 0)})
	if r.Status != umad.StatusTimeout || mad.Header(r.MAD).IsResponse() {
		t.Errorf("undelivered request: status %d", r.Status)
	}
}

// An Agent answers Gets from what is stored, stores Sets, and puts the
// data where its class has it (byte 24 for a vendor class of range 1).
func TestAgent(t *testing.T) {
	a := NewAgent(mad.ClassVendorMlnx)
	a.SetData(0x17, 0, []byte{1, 2, 3})
	a.Fail(0x90, AnyMod, StatusUnsupported)
	get := func(method uint8, attr uint16, mod uint32, data ...byte) mad.Header {
		m := mad.NewRequest(mad.ClassVendorMlnx, 1, method, attr, mod)
		copy(m[24:], data)
		r := a.Answer(&umad.Packet{MAD: m})
		if len(r) != 1 {
			t.Fatalf("%d replies", len(r))
		}
		return mad.Header(r[0].MAD)
	}
	if h := get(mad.MethodGet, 0x17, 0); h.Status() != 0 || h[24] != 1 || h[26] != 3 || h[27] != 0 {
		t.Errorf("Get: status %#x data % x", h.Status(), h[24:28])
	}
	if h := get(mad.MethodGet, 0x17, 1); h.Status() != StatusInvalidField {
		t.Errorf("Get of another modifier: status %#x", h.Status())
	}
	if h := get(mad.MethodGet, 0x90, 5); h.Status() != StatusUnsupported {
		t.Errorf("Fail: status %#x", h.Status())
	}
	if h := get(mad.MethodSet, 0x91, 3, 9, 8); h.Status() != 0 || h[24] != 9 {
		t.Errorf("Set: status %#x data % x", h.Status(), h[24:28])
	}
	if h := get(mad.MethodGet, 0x91, 3); h[24] != 9 || h[25] != 8 || len(a.Sets()) != 1 {
		t.Errorf("Get after Set: % x, %d sets", h[24:28], len(a.Sets()))
	}
	if r := a.Answer(&umad.Packet{MAD: mad.NewRequest(mad.ClassPerf, 1, mad.MethodGet, 1, 0)}); r[0].Status != umad.StatusTimeout {
		t.Error("another class must come back undelivered")
	}
}
