package counters

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// readerFabric is a host on switch sum (whose PMA has AllPortSelect),
// linked to switch add (whose PMA has not), with CA ca on it; a PMA per
// node.
type readerFabric struct {
	tr            *umadtest.Opener
	pmas          *umadtest.NodePMAs
	c             *query.Client
	sum, add, ca  *umadtest.Node
	sumT, addT, t Target
}

func newReaderFabric(t *testing.T) *readerFabric {
	t.Helper()
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	f := &readerFabric{sum: fab.AddSwitch(0x200, 4, "sum"), add: fab.AddSwitch(0x300, 3, "add"), ca: fab.AddCA(0x400, 1, "ca")}
	fab.Link(host, 1, f.sum, 1)
	fab.Link(f.sum, 2, f.add, 1)
	fab.Link(f.ca, 1, f.add, 2)
	f.pmas = umadtest.NewNodePMAs(fab)

	sum := f.pmas.Of(f.sum)
	sum.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(mad.PerfCapMaskAllPortSelect | mad.PerfCapMaskExtWidth)})
	sum.Set(AllPortSelect, &mad.PortCounters{PortSelect: AllPortSelect, SymbolErrorCounter: 77})
	sum.Set(AllPortSelect, &mad.PortCountersExtended{PortSelect: AllPortSelect, PortXmitData: 1 << 40})
	add := f.pmas.Of(f.add)
	add.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(mad.PerfCapMaskExtWidth)})
	for p := uint32(1); p <= 3; p++ {
		// SymbolErrorCounter is 16 bits: 0xFFF0 on port 1 saturates the
		// sum; LinkDownedCounter 8 bits.
		add.Set(p, &mad.PortCounters{PortSelect: uint8(p), SymbolErrorCounter: uint16(0xFFF0 * (p % 2)), LinkDownedCounter: 100, PortXmitPkts: 10 * p})
		add.Set(p, &mad.PortCountersExtended{PortSelect: uint8(p), PortXmitData: ^uint64(0) / 2})
		add.Set(p, &mad.PortXmitDiscardDetails{PortSelect: uint8(p), PortInactiveDiscards: uint16(p)})
	}
	ca := f.pmas.Of(f.ca)
	ca.Set(0, &mad.ClassPortInfo{})
	ca.Set(1, &mad.PortCounters{PortSelect: 1, PortRcvErrors: 9})

	f.tr = umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassPerf: f.pmas.Answer,
	}.Answer, umadtest.WithInfo(fab.LocalInfo()))
	port, err := f.tr.Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Timeout: 50 * time.Millisecond, Retries: 1, Window: 8, DestWindow: 4})
	t.Cleanup(func() { eng.Close() })
	f.c = query.New(eng, query.Options{})
	f.sumT = Target{NodeGUID: f.sum.GUID, NodeType: mad.NodeTypeSwitch, NumPorts: 4, LID: f.sum.LID(0), Port: AllPortSelect}
	f.addT = Target{NodeGUID: f.add.GUID, NodeType: mad.NodeTypeSwitch, NumPorts: 3, LID: f.add.LID(0), Port: AllPortSelect}
	f.t = Target{NodeGUID: f.ca.GUID, NodeType: mad.NodeTypeCA, NumPorts: 1, LID: f.ca.LID(1), Port: 1}
	return f
}

// perf counts the PerfMgt requests of attr and method, and their
// PortSelects.
func (f *readerFabric) perf(attr uint16, method uint8) (n int, ports []uint8) {
	for _, r := range f.tr.Requests(mad.ClassPerf) {
		if r.AttrID() == attr && r.Method() == method {
			n++
			ports = append(ports, r[mad.SMPDataOffset+1])
		}
	}
	return n, ports
}

// A switch's sum: the PMA's own where it has AllPortSelect, its ports
// added up (saturating at each counter's width) where it has not; a CA's
// port as it is.
func TestReaderSums(t *testing.T) {
	f := newReaderFabric(t)
	ctx := context.Background()
	r := &Reader{Client: f.c, Extended: true}
	got := r.Read(ctx, []Target{f.sumT, f.addT, f.t})
	for i, g := range got {
		if g.Err != nil {
			t.Fatalf("target %d: %v", i, g.Err)
		}
	}
	if s := got[0]; s.Basic.SymbolErrorCounter != 77 || s.Extended.PortXmitData != 1<<40 {
		t.Errorf("AllPortSelect: %+v %+v", s.Basic, s.Extended)
	}
	a := got[1]
	if a.Basic.PortSelect != AllPortSelect || a.Basic.SymbolErrorCounter != 0xFFFF || a.Basic.LinkDownedCounter != 0xFF || a.Basic.PortXmitPkts != 60 {
		t.Errorf("ports added up, saturating: %+v", a.Basic)
	}
	if a.Extended.PortXmitData != ^uint64(0) {
		t.Errorf("64-bit sum saturates: %d", a.Extended.PortXmitData)
	}
	if c := got[2]; c.Basic.PortRcvErrors != 9 || c.Extended != nil {
		t.Errorf("CA: %+v %+v", c.Basic, c.Extended)
	}
	if _, ports := f.perf(mad.AttrPortCounters, mad.MethodGet); len(ports) != 5 {
		t.Errorf("PortCounters read of ports %v: want 255 of sum, 1-3 of add, 1 of the CA", ports)
	}

	// Capabilities are read once per node, however often it is read.
	r.Read(ctx, []Target{f.addT})
	if n, _ := f.perf(mad.AttrClassPortInfo, mad.MethodGet); n != 3 {
		t.Errorf("%d ClassPortInfo Gets, want one per node (3)", n)
	}
	if c := r.Caps(f.addT); c == nil || c.Has(mad.PerfCapMaskAllPortSelect) {
		t.Errorf("add's caps %+v", c)
	}
}

func TestReaderGroupAndFailures(t *testing.T) {
	f := newReaderFabric(t)
	ctx := context.Background()
	r := &Reader{Client: f.c, Group: mad.LookupStruct("PortXmitDiscardDetails")}
	got := r.Read(ctx, []Target{f.addT})[0]
	if d, ok := got.Group.(*mad.PortXmitDiscardDetails); got.Err != nil || !ok || d.PortInactiveDiscards != 6 || got.Extended != nil {
		t.Errorf("group summed: %+v %v", got.Group, got.Err)
	}

	// A CA cannot sum its ports without AllPortSelect.
	caAll := f.t
	caAll.Port = AllPortSelect
	if got := r.Read(ctx, []Target{caAll})[0]; !errors.Is(got.Err, ErrCAAllPorts) || got.Err.Error() != "Can't iterate over all ports on a CA." {
		t.Errorf("CA all ports: %v", got.Err)
	}

	// One port that fails fails the sum, not the other targets.
	f.pmas.Of(f.add).Fail(mad.AttrPortCounters, 2, umadtest.StatusInvalidField)
	r.Group = nil
	got2 := r.Read(ctx, []Target{f.addT, f.t})
	var ce *query.CounterError
	if !errors.As(got2[0].Err, &ce) || ce.Port.Port != 2 || got2[0].Basic != nil {
		t.Errorf("a failed port: %+v", got2[0])
	}
	if got2[1].Err != nil || got2[1].Basic.PortRcvErrors != 9 {
		t.Errorf("the other target: %+v", got2[1])
	}
}

func TestSum(t *testing.T) {
	if s := Sum(nil); s.Basic != nil || s.Err != nil {
		t.Errorf("nothing: %+v", s)
	}
	one := query.PortCounters{Basic: &mad.PortCounters{PortSelect: 3, VL15Dropped: 1}}
	if s := Sum([]query.PortCounters{one}); s.Basic.PortSelect != 3 {
		t.Errorf("one port keeps its PortSelect: %+v", s.Basic)
	}
	two := query.PortCounters{Basic: &mad.PortCounters{PortSelect: 4, VL15Dropped: 0xFFFF}}
	if s := Sum([]query.PortCounters{one, two}); s.Basic.PortSelect != AllPortSelect || s.Basic.VL15Dropped != 0xFFFF {
		t.Errorf("two ports: %+v", s.Basic)
	}
	failed := query.PortCounters{Err: errors.New("lost")}
	if s := Sum([]query.PortCounters{one, failed}); s.Err == nil || s.Basic != nil {
		t.Errorf("a failed port: %+v", s)
	}
}

// Resets: a switch without AllPortSelect port by port, the sum where the
// PMA has it; none without a Write, none in a dry run.
func TestReaderClear(t *testing.T) {
	f := newReaderFabric(t)
	ctx := context.Background()
	r := &Reader{Client: f.c}
	targets := []Target{f.sumT, f.addT, f.t}

	rs, errs := r.Clear(ctx, &query.Write{By: "test"}, targets, 0xFFF, true)
	if len(rs) != 5 || errors.Join(errs...) != nil {
		t.Fatalf("dry run: %d resets, %v", len(rs), errs)
	}
	if n, _ := f.perf(mad.AttrPortCounters, mad.MethodSet); n != 0 {
		t.Fatalf("a dry run sent %d Sets", n)
	}
	_, errs = r.Clear(ctx, nil, targets, 0xFFF, false)
	for i, err := range errs {
		if !errors.Is(err, query.ErrNoWrite) {
			t.Errorf("target %d without a Write: %v", i, err)
		}
	}
	if n, _ := f.perf(mad.AttrPortCounters, mad.MethodSet); n != 0 {
		t.Fatalf("%d Sets sent without a Write", n)
	}
	_, errs = r.Clear(ctx, &query.Write{By: "test"}, targets, 0xFFF, false)
	if errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	if _, ports := f.perf(mad.AttrPortCounters, mad.MethodSet); len(ports) != 5 {
		t.Errorf("Sets to ports %v: want 255, 1, 2, 3, 1", ports)
	}
	for _, req := range f.tr.Requests(mad.ClassPerf) {
		if d := req[mad.SMPDataOffset:]; req.Method() == mad.MethodSet && uint16(d[2])<<8|uint16(d[3]) != 0xFFF {
			t.Errorf("CounterSelect %#x, want 0xfff", uint16(d[2])<<8|uint16(d[3]))
		}
	}
	caAll := f.t
	caAll.Port = AllPortSelect
	if _, errs := r.Clear(ctx, &query.Write{By: "test"}, []Target{caAll}, 0, false); !errors.Is(errs[0], ErrCAAllPorts) {
		t.Errorf("a CA's all ports: %v", errs[0])
	}
}
