package query

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// counterFabric is a host, a switch with the host and two CAs on it, and
// a PMA per node; the switch's PMA has every counter group, CA a has
// PortCountersExtended without XmitWait, CA b nothing but PortCounters.
type counterFabric struct {
	fab      *umadtest.Fabric
	pmas     *umadtest.NodePMAs
	tr       *umadtest.Opener
	c        *Client
	sw, a, b *umadtest.Node
}

const (
	swCaps = mad.PerfCapMaskAllPortSelect | mad.PerfCapMaskExtWidth | mad.PerfCapMaskXmitWait
	aCaps  = mad.PerfCapMaskExtWidth
)

func newCounterFabric(t *testing.T, opts ...umadtest.Option) *counterFabric {
	t.Helper()
	f := &counterFabric{fab: umadtest.NewFabric()}
	host := f.fab.AddCA(0x100, 1, "host")
	f.sw = f.fab.AddSwitch(0x200, 8, "sw")
	f.a = f.fab.AddCA(0x300, 1, "a")
	f.b = f.fab.AddCA(0x400, 1, "b")
	f.fab.Link(host, 1, f.sw, 1)
	f.fab.Link(f.a, 1, f.sw, 2)
	f.fab.Link(f.b, 1, f.sw, 3)
	f.pmas = umadtest.NewNodePMAs(f.fab)

	sw := f.pmas.Of(f.sw)
	sw.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(swCaps), CapabilityMask2: uint32(mad.PerfCapMask2AddlPortCountersExt)})
	for p := uint32(1); p <= 8; p++ {
		sw.Set(p, &mad.PortCounters{PortSelect: uint8(p), SymbolErrorCounter: uint16(p), PortXmitWait: 100 + uint32(p)})
		sw.Set(p, &mad.PortCountersExtended{PortSelect: uint8(p), PortXmitData: 1000 * uint64(p)})
		sw.Set(p, &mad.PortXmitDiscardDetails{PortSelect: uint8(p), PortInactiveDiscards: uint16(p)})
		sw.Set(p, &mad.PortRcvErrorDetails{PortSelect: uint8(p)})
	}
	a := f.pmas.Of(f.a)
	a.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(aCaps)})
	a.Set(1, &mad.PortCounters{PortSelect: 1, LinkDownedCounter: 3, PortXmitWait: 77})
	a.Set(1, &mad.PortCountersExtended{PortSelect: 1, PortRcvData: 42})
	a.Set(1, &mad.PortXmitDiscardDetails{PortSelect: 1})
	b := f.pmas.Of(f.b)
	b.Set(0, &mad.ClassPortInfo{})
	b.Set(1, &mad.PortCounters{PortSelect: 1, PortRcvErrors: 9})
	b.Set(1, &mad.PortXmitDiscardDetails{PortSelect: 1})

	f.tr = umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: f.fab.Answer, mad.ClassSubnDR: f.fab.Answer, mad.ClassPerf: f.pmas.Answer,
	}.Answer, append([]umadtest.Option{umadtest.WithInfo(f.fab.LocalInfo())}, opts...)...)
	port, err := f.tr.Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Timeout: 50 * time.Millisecond, Retries: 2, Window: 8, DestWindow: 2})
	t.Cleanup(func() { eng.Close() })
	f.c = New(eng, Options{})
	return f
}

func pmaDest(lid uint16) Dest { return GMPAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey}) }

// ports are the switch's ports 1-3 and each CA's port 1.
func (f *counterFabric) ports() []CounterPort {
	var ps []CounterPort
	for p := 1; p <= 3; p++ {
		ps = append(ps, CounterPort{NodeGUID: f.sw.GUID, NodeType: mad.NodeTypeSwitch, Port: p, Dest: pmaDest(f.sw.LID(0))})
	}
	for _, n := range []*umadtest.Node{f.a, f.b} {
		ps = append(ps, CounterPort{NodeGUID: n.GUID, NodeType: mad.NodeTypeCA, Port: 1, Dest: pmaDest(n.LID(1))})
	}
	return ps
}

// perfRequests counts the PerfMgt requests sent by attribute and method.
func (f *counterFabric) perfRequests(attr uint16, method uint8) int {
	n := 0
	for _, r := range f.tr.Requests(mad.ClassPerf) {
		if r.AttrID() == attr && r.Method() == method {
			n++
		}
	}
	return n
}

func TestReadCountersReadsWhatEachPMAHas(t *testing.T) {
	f := newCounterFabric(t)
	res := ReadCounters(context.Background(), f.c, f.ports(), CounterOptions{})
	if len(res) != 5 {
		t.Fatalf("%d results, want 5", len(res))
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.CounterPort, r.Err)
		}
	}
	for i, r := range res[:3] {
		p := i + 1
		if r.Caps.CapabilityMask != swCaps || !r.Caps.ExtendedErrors() {
			t.Errorf("switch port %d: caps %+v", p, r.Caps)
		}
		if r.Basic.SymbolErrorCounter != uint16(p) || r.Basic.PortXmitWait != 100+uint32(p) {
			t.Errorf("switch port %d: PortCounters %+v", p, r.Basic)
		}
		if r.Extended == nil || r.Extended.PortXmitData != 1000*uint64(p) {
			t.Errorf("switch port %d: PortCountersExtended %+v", p, r.Extended)
		}
	}
	a, b := res[3], res[4]
	if a.Basic.LinkDownedCounter != 3 || a.Extended == nil || a.Extended.PortRcvData != 42 {
		t.Errorf("CA a: %+v %+v", a.Basic, a.Extended)
	}
	if a.Basic.PortXmitWait != 0 {
		t.Errorf("CA a has no PortCountersXmitWaitSupported: PortXmitWait %d, want 0 (reserved)", a.Basic.PortXmitWait)
	}
	if b.Basic.PortRcvErrors != 9 || b.Extended != nil {
		t.Errorf("CA b (no extended counters): %+v, extended %+v", b.Basic, b.Extended)
	}
	// ClassPortInfo once per node; PortCountersExtended only where the
	// PMA has it.
	if n := f.perfRequests(mad.AttrClassPortInfo, mad.MethodGet); n != 3 {
		t.Errorf("%d ClassPortInfo Gets, want one per node (3)", n)
	}
	if n := f.perfRequests(mad.AttrPortCountersExtended, mad.MethodGet); n != 4 {
		t.Errorf("%d PortCountersExtended Gets, want 4", n)
	}
	if _, one := f.tr.Ports()[0].MostInFlight(); one > 2 {
		t.Errorf("%d requests in flight to one PMA, over the window of 2", one)
	}
}

func TestReadCountersOptions(t *testing.T) {
	f := newCounterFabric(t)
	ctx := context.Background()
	ports := f.ports()
	caps := ReadCaps(ctx, f.c, ports, 0)
	xmit := mad.LookupStruct("PortXmitDiscardDetails")
	res := ReadCounters(ctx, f.c, ports[:1], CounterOptions{Caps: caps, NoBasic: true, Groups: []*mad.StructDesc{xmit}})
	r := res[0]
	if r.Err != nil || r.Basic != nil || r.Extended == nil {
		t.Fatalf("NoBasic on a PMA with extended counters: err %v basic %+v extended %+v", r.Err, r.Basic, r.Extended)
	}
	if d, ok := r.Groups[0].(*mad.PortXmitDiscardDetails); !ok || d.PortInactiveDiscards != 1 {
		t.Errorf("PortXmitDiscardDetails: %+v", r.Groups[0])
	}
	res = ReadCounters(ctx, f.c, ports[4:], CounterOptions{Caps: caps, NoBasic: true})
	if res[0].Basic == nil {
		t.Errorf("NoBasic on a PMA without extended counters must read PortCounters")
	}
	res = ReadCounters(ctx, f.c, ports[:1], CounterOptions{Caps: caps, NoExtended: true})
	if res[0].Extended != nil || res[0].Basic == nil {
		t.Errorf("NoExtended: %+v", res[0])
	}
	errorsOnly := func(c *PMACaps) bool { return c.ExtendedErrors() }
	res = ReadCounters(ctx, f.c, ports[:4], CounterOptions{Caps: caps, WantExtended: errorsOnly})
	if res[0].Extended == nil || res[3].Extended != nil || res[3].Basic == nil {
		t.Errorf("WantExtended where the PMA has the extended error counters: switch %+v, CA a %+v", res[0].Extended, res[3].Extended)
	}
	if n := f.perfRequests(mad.AttrClassPortInfo, mad.MethodGet); n != 3 {
		t.Errorf("%d ClassPortInfo Gets, want 3: the caps given must not be read again", n)
	}
}

func TestReadCountersFailuresArePerPort(t *testing.T) {
	f := newCounterFabric(t)
	f.pmas.Of(f.sw).Fail(mad.AttrPortCountersExtended, 2, umadtest.StatusInvalidField)
	f.pmas.Of(f.b).Fail(mad.AttrClassPortInfo, 0, umadtest.StatusInvalidField)
	f.pmas.Of(f.sw).Fail(mad.AttrPortXmitDiscardDetails, 3, umadtest.StatusInvalidField)
	ports := append(f.ports(), CounterPort{NodeGUID: 0x999, NodeType: mad.NodeTypeCA, Port: 1, Dest: pmaDest(60)})
	res := ReadCounters(context.Background(), f.c, ports, CounterOptions{Groups: []*mad.StructDesc{mad.LookupStruct("PortXmitDiscardDetails")}})

	var ce *CounterError
	if r := res[1]; !errors.As(r.Err, &ce) || ce.Attr != "PortCountersExtended" || ce.Port.Port != 2 || r.Extended != nil || r.Basic == nil {
		t.Errorf("switch port 2: err %v, basic %+v, extended %+v; want the extended read's error and PortCounters kept", r.Err, r.Basic, r.Extended)
	}
	if r := res[2]; !errors.As(r.Err, &ce) || ce.Attr != "PortXmitDiscardDetails" || r.Groups[0] != nil || r.Extended == nil {
		t.Errorf("switch port 3: err %v groups %v", r.Err, r.Groups)
	}
	if res[0].Err != nil || res[3].Err != nil {
		t.Errorf("healthy ports failed: %v, %v", res[0].Err, res[3].Err)
	}
	b := res[4]
	if !errors.As(b.Caps.Err, &ce) || ce.Attr != "ClassPortInfo" || b.Basic == nil || b.Basic.PortRcvErrors != 9 {
		t.Errorf("CA b without ClassPortInfo: caps err %v, counters %+v; want PortCounters read anyway", b.Caps.Err, b.Basic)
	}
	lost := res[5]
	if lost.Err == nil || lost.Caps.Err == nil || lost.Basic != nil {
		t.Errorf("unreachable PMA: err %v caps %+v basic %+v", lost.Err, lost.Caps, lost.Basic)
	}
}

func TestReadCountersUnderLossGivesEveryPortAnAnswer(t *testing.T) {
	f := newCounterFabric(t, umadtest.Loss(0.3), umadtest.Seed(7))
	ports := f.ports()
	done := make(chan []PortCounters)
	go func() { done <- ReadCounters(context.Background(), f.c, ports, CounterOptions{}) }()
	select {
	case res := <-done:
		for _, r := range res {
			if r.Err == nil && r.Basic == nil {
				t.Errorf("%s: neither counters nor an error", r.CounterPort)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadCounters hangs under loss")
	}
}

func TestClearResetsMasks(t *testing.T) {
	p := CounterPort{Port: 4}
	full := &PMACaps{CapabilityMask: mad.PerfCapMaskExtWidth | mad.PerfCapMaskXmitWait, CapabilityMask2: uint32(mad.PerfCapMask2AddlPortCountersExt)}
	noIETF := &PMACaps{CapabilityMask: mad.PerfCapMaskExtWidthNoIETF}
	type reset struct {
		attr string
		sel  uint32
	}
	for _, tc := range []struct {
		name                    string
		caps                    *PMACaps
		errors, counts, details bool
		want                    []reset
	}{
		{"-k", full, true, false, false, []reset{{"PortCounters", 0x10FFF}, {"PortCountersExtended", 0x1FFF0000}}},
		{"-K", full, false, true, false, []reset{{"PortCounters", 0xF000}, {"PortCountersExtended", 0xFF}}},
		{"-k -K --details", full, true, true, true, []reset{{"PortCounters", 0x1FFFF}, {"PortXmitDiscardDetails", 0xF}, {"PortRcvErrorDetails", 0x3F}, {"PortCountersExtended", 0x1FFF00FF}}},
		{"-K no IETF", noIETF, false, true, false, []reset{{"PortCounters", 0xF000}, {"PortCountersExtended", 0x0F}}},
		{"-k no IETF", noIETF, true, false, false, []reset{{"PortCounters", 0xFFF}}},
		{"-k no caps", &PMACaps{}, true, false, false, []reset{{"PortCounters", 0xFFF}}},
		{"nothing", full, false, false, true, nil},
	} {
		var got []reset
		for _, r := range ClearResets(p, tc.caps, tc.errors, tc.counts, tc.details) {
			if r.Port.Port != p.Port {
				t.Errorf("%s: reset of %v, want %v", tc.name, r.Port, p)
			}
			got = append(got, reset{r.Attr.Name, r.Select})
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %x, want %x", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %x, want %x", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestResetCounters(t *testing.T) {
	f := newCounterFabric(t)
	ctx := context.Background()
	ports := f.ports()
	caps := ReadCaps(ctx, f.c, ports, 0)
	var resets []CounterReset
	for _, p := range ports[:2] {
		resets = append(resets, ClearResets(p, caps[p.NodeGUID], true, false, true)...)
	}

	for _, err := range ResetCounters(ctx, f.c, &Write{By: "test"}, resets, true) {
		if err != nil {
			t.Fatalf("dry run: %v", err)
		}
	}
	if n := len(f.tr.Requests(mad.ClassPerf)) - 3; n != 0 {
		t.Fatalf("a dry run sent %d MADs", n)
	}
	for _, err := range ResetCounters(ctx, f.c, nil, resets, false) {
		if !errors.Is(err, ErrNoWrite) {
			t.Fatalf("a reset without a Write: %v, want ErrNoWrite", err)
		}
	}

	for _, err := range ResetCounters(ctx, f.c, &Write{By: "test"}, resets, false) {
		if err != nil {
			t.Fatal(err)
		}
	}
	type sent struct {
		attr      uint16
		port      uint8
		sel, sel2 uint32
	}
	got := map[sent]int{}
	for _, r := range f.tr.Requests(mad.ClassPerf) {
		if r.Method() != mad.MethodSet {
			continue
		}
		d := r[mad.SMPDataOffset:]
		s := sent{attr: r.AttrID(), port: d[1], sel: uint32(d[2])<<8 | uint32(d[3])}
		if s.attr == mad.AttrPortCountersExtended {
			s.sel2 = uint32(d[4])<<24 | uint32(d[5])<<16 | uint32(d[6])<<8 | uint32(d[7])
		} else {
			s.sel2 = uint32(d[18]) // CounterSelect2 where PortCounters has it, for every attribute
		}
		got[s]++
	}
	want := map[sent]int{}
	for p := uint8(1); p <= 2; p++ {
		want[sent{mad.AttrPortCounters, p, 0xFFF, 1}] = 1
		want[sent{mad.AttrPortXmitDiscardDetails, p, 0xF, 0}] = 1
		want[sent{mad.AttrPortRcvErrorDetails, p, 0x3F, 0}] = 1
		want[sent{mad.AttrPortCountersExtended, p, 0, 0x1FFF}] = 1
	}
	if len(got) != len(want) {
		t.Fatalf("Sets sent %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("Sets sent %v, want %v", got, want)
			break
		}
	}
}
