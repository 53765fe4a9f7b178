package diagnose

import (
	"context"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// activePI is the PortInfo of an active 4X SDR port.
func activePI(lid, smLID uint16) *mad.PortInfo {
	return &mad.PortInfo{LID: lid, MasterSMLID: smLID, LinkWidthActive: mad.LinkWidth4X, LinkSpeedActive: mad.LinkSpeedSDR,
		PortState: mad.PortStateActive, PortPhysicalState: mad.PhysPortStateLinkUp, LocalPortNum: 1, VLCap: 4, OperationalVLs: 4,
		MTUCap: mad.MTU(4), NeighborMTU: mad.MTU(4)}
}

// smFabric is a switch with two hosts; host2 runs the MASTER SM, and the
// switch enforces partitions on host2's link.
func smFabric() (*umadtest.Fabric, *umadtest.Node, *umadtest.Node, *umadtest.Node) {
	f := umadtest.NewFabric()
	host1 := f.AddCA(0x20, 1, "host1") // the local node, LID 1
	sw := f.AddSwitch(0x10, 8, "sw1")  // LID 2
	host2 := f.AddCA(0x30, 1, "host2") // LID 3
	f.Link(host1, 1, sw, 1)
	f.Link(host2, 1, sw, 2)
	f.SMLID = 3
	smPI := activePI(3, 3)
	smPI.CapabilityMask = uint32(mad.PortCapMaskSM)
	host2.Set(umadtest.AnyMod, smPI)
	host2.Set(0, &mad.SMInfo{GUID: 0x31, SMKey: 0xdeadbeef, ActCount: 7, Priority: 5, SMState: 3})
	host2.Set(0, &mad.PKeyTable{PKey: [32]uint16{0xffff, 0x8001}})
	swPI := activePI(2, 3)
	swPI.LocalPortNum, swPI.PartitionEnforcementInbound = 2, 1
	sw.Set(2, swPI)
	sw.Set(0, &mad.SwitchInfo{LinearFDBCap: 0xC000, MulticastFDBCap: 1024, LinearFDBTop: 3, LIDsPerPort: 1, PartitionEnforcementCap: 40})
	sw.Set(2<<16, &mad.PKeyTable{PKey: [32]uint16{0xffff, 0x8001}})
	sw.Set(2<<16|1, &mad.PKeyTable{PKey: [32]uint16{0x8002}})
	return f, host1, sw, host2
}

func sweepClient(t *testing.T, f *umadtest.Fabric, opts ...umadtest.Option) (*query.Client, *umadtest.Port, *LossRecorder) {
	t.Helper()
	port := umadtest.NewPort(withPMAs(f, nil), append([]umadtest.Option{umadtest.WithInfo(f.LocalInfo())}, opts...)...)
	loss := NewLossRecorder()
	eng := rpc.New(port, rpc.Options{Timeout: 50 * time.Millisecond, Retries: 3, Trace: loss.Trace})
	t.Cleanup(func() { eng.Close() })
	return query.New(eng, query.Options{}), port, loss
}

// The sweep reads the SMInfo of the SM port (its SM_Key dropped) and the
// P_Key tables of both ends of the enforcing link, and sends nothing but
// Gets.
func TestSweepReadsAndOnlyGets(t *testing.T) {
	f, _, _, _ := smFabric()
	c, port, loss := sweepClient(t, f)
	s, err := Sweep(context.Background(), c, &query.Source{}, SweepOptions{Loss: loss})
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "walk" || len(s.Fabric.Nodes) != 3 || !s.Complete() {
		t.Fatalf("source %s, %d nodes, complete %v, errors %v", s.Source, len(s.Fabric.Nodes), s.Complete(), s.Fabric.Errors)
	}
	if len(s.SMInfo) != 1 {
		t.Fatalf("%d SMInfo reads, want 1", len(s.SMInfo))
	}
	r := s.SMInfo[0]
	if r.Err != nil || r.Port.Node.GUID != 0x30 || r.Port.Num != 1 || r.Info.GUID != 0x31 || r.Info.SMState != 3 ||
		r.Info.Priority != 5 || r.Info.ActCount != 7 || r.Info.SMKey != 0 {
		t.Errorf("SMInfo read %+v (SM_Key must be dropped)", r)
	}
	if len(s.PKeys) != 2 {
		t.Fatalf("%d P_Key reads, want 2: %+v", len(s.PKeys), s.PKeys)
	}
	swp, host := s.PKeys[0], s.PKeys[1] // by node GUID: the switch (0x10) first
	if swp.Err != nil || swp.Port.Node.GUID != 0x10 || swp.Port.Num != 2 || len(swp.PKeys) != 40 ||
		swp.PKeys[0] != 0xffff || swp.PKeys[1] != 0x8001 || swp.PKeys[32] != 0x8002 {
		t.Errorf("switch port table %+v", swp)
	}
	if host.Err != nil || host.Port.Node.GUID != 0x30 || len(host.PKeys) != 8 || host.PKeys[1] != 0x8001 {
		t.Errorf("host table %+v", host)
	}
	sent := port.Requests()
	if len(sent) == 0 {
		t.Fatal("nothing sent")
	}
	for _, m := range sent {
		if m.Method() != mad.MethodGet {
			t.Errorf("the sweep sent %s(%s): a diagnosis sends Gets only",
				mad.MethodName(m.Class(), m.Method()), mad.AttrName(m.Class(), m.AttrID()))
		}
	}
	if s.MADs.Sent == 0 || len(s.Loss) != 0 {
		t.Errorf("MADs %+v, loss %+v on a fabric that loses nothing", s.MADs, s.Loss)
	}
}

// On a lossy fabric the recorder counts the lost attempts per
// destination, and the sweep still completes (the engine resends).
func TestSweepRecordsLoss(t *testing.T) {
	f, _, _, _ := smFabric()
	c, _, loss := sweepClient(t, f, umadtest.Loss(0.3), umadtest.Seed(7))
	s, err := Sweep(context.Background(), c, &query.Source{}, SweepOptions{Loss: loss})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Loss) == 0 {
		t.Fatal("no loss recorded at 30% loss")
	}
	lost := 0
	for _, d := range s.Loss {
		if d.NoReply == 0 || d.Attempts < d.NoReply {
			t.Errorf("%+v: a destination listed lost attempts, no more than it sent", d)
		}
		lost += d.NoReply
	}
	if uint64(lost) != s.MADs.Retried+s.MADs.Lost {
		// Every attempt without reply was resent (retried) or given up (lost).
		t.Errorf("recorded %d lost attempts, the engine %d retried + %d lost", lost, s.MADs.Retried, s.MADs.Lost)
	}
}
