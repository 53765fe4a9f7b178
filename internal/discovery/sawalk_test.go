package discovery

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// saFake is umadtest's SA holding tables of records, matched by the
// components of each query's mask (as OpenSM matches them), reached by an
// SA client through the engine.
type saFake struct {
	tables map[uint16][]mad.Struct
	lose   map[uint16]bool // tables whose queries are lost
	oneMAD bool            // GetTable answered as under ibsim: one MAD
	port   *umadtest.Port
}

// client returns a client of an SA holding the tables as they are now.
func (s *saFake) client(t *testing.T) *sa.Client {
	t.Helper()
	u := umadtest.NewSA()
	u.OneMAD = s.oneMAD
	for _, recs := range s.tables {
		u.Add(recs...)
	}
	answer := func(req *umad.Packet) []*umad.Packet {
		if s.lose[mad.Header(req.MAD).AttrID()] {
			return nil
		}
		return u.Answer(req)
	}
	s.port = umadtest.NewPort(umadtest.Classes{mad.ClassSubnAdm: answer}.Answer)
	eng := rpc.New(s.port, rpc.Options{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close() })
	c, err := sa.New(eng, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// queries says how many queries of a table the SA was sent (not counting
// retries and RMPP ACKs).
func (s *saFake) queries(attr uint16) int {
	tids := map[uint64]bool{}
	for _, m := range s.port.Requests(mad.ClassSubnAdm) {
		if m.AttrID() == attr && m[25] != 2 {
			tids[m.TID()] = true
		}
	}
	return len(tids)
}

// saFakeOf is what OpenSM's SA would hold for a fabric: a NodeRecord per
// end port, a PortInfoRecord per port, a LinkRecord per link end, a
// SwitchInfoRecord per switch; in shuffled order.
func saFakeOf(f *Fabric, seed uint64) *saFake {
	s := &saFake{tables: map[uint16][]mad.Struct{}, lose: map[uint16]bool{}}
	add := func(attr uint16, r mad.Struct) { s.tables[attr] = append(s.tables[attr], r) }
	lidOf := func(p *Port) uint16 {
		if p.Node.Type == NodeSwitch {
			return p.Node.SMALID
		}
		return p.BaseLID
	}
	for _, n := range f.Nodes {
		nodeRec := func(p *Port) {
			r := &mad.NodeRecord{LID: lidOf(p)}
			_ = r.NodeInfo.Unmarshal(n.NodeInfo)
			r.NodeInfo.PortGUID = mad.GUID(p.GUID)
			r.NodeInfo.LocalPortNum = uint8(p.Num)
			_ = r.NodeDescription.Unmarshal(n.NodeDesc)
			add(mad.AttrNodeRecord, r)
		}
		if n.Type == NodeSwitch {
			nodeRec(n.Port(0))
			r := &mad.SwitchInfoRecord{LID: n.SMALID}
			_ = r.SwitchInfo.Unmarshal(n.SwitchInfo)
			add(mad.AttrSwitchInfoRecord, r)
		}
		for _, p := range n.Ports {
			if p == nil || p.PortInfo == nil {
				continue
			}
			if n.Type != NodeSwitch {
				nodeRec(p)
			}
			r := &mad.PortInfoRecord{EndPortLID: lidOf(p), PortNum: uint8(p.Num)}
			_ = r.PortInfo.Unmarshal(p.PortInfo)
			r.PortInfo.LocalPortNum = 1 // what the SM saw, not what the walk sees
			add(mad.AttrPortInfoRecord, r)
			if p.Remote != nil {
				add(mad.AttrLinkRecord, &mad.LinkRecord{FromLID: lidOf(p), FromPort: uint8(p.Num), ToPort: uint8(p.Remote.Num), ToLID: lidOf(p.Remote)})
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	for _, t := range s.tables {
		rng.Shuffle(len(t), func(i, j int) { t[i], t[j] = t[j], t[i] })
	}
	return s
}

// The SA walk gives the fabric an SMP walk gives (without the Mellanox
// extension the SA does not have), in libibnetdisc's order.
func TestDiscoverSAIsTheSMPWalk(t *testing.T) {
	for name, fake := range map[string]func() *fakeFabric{
		"tiny":     func() *fakeFabric { f, _, _, _, _, _ := tinyFake(); return f },
		"fat tree": func() *fakeFabric { return fatTreeFake(4, 3, 3, 2) },
	} {
		smp := discover(t, fake(), 8, Options{Load: LoadAll &^ LoadMlnxExtPortInfo})
		want := dumpFabric(smp)
		for seed := uint64(1); seed <= 3; seed++ {
			fake := saFakeOf(smp, seed)
			local := SALocal{PortGUID: smp.From.Port(smp.FromPort).GUID, PortNum: smp.FromPort}
			f, err := DiscoverSA(context.Background(), fake.client(t), local)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := dumpFabric(f); got != want {
				t.Fatalf("%s, seed %d: the SA walk differs from the SMP walk:\n%s", name, seed, diffLines(want, got))
			}
			for _, attr := range []uint16{mad.AttrNodeRecord, mad.AttrPortInfoRecord, mad.AttrLinkRecord, mad.AttrSwitchInfoRecord} {
				if n := fake.queries(attr); n != 1 {
					t.Errorf("%s: %d queries of table %#x, want one GetTable of each table", name, n, attr)
				}
			}
		}
	}
}

func TestDiscoverSAFailures(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	smp := discover(t, f, 8, Options{})
	fake := saFakeOf(smp, 1)
	if _, err := DiscoverSA(context.Background(), fake.client(t), SALocal{PortGUID: 0x999}); err == nil || !strings.Contains(err.Error(), "no NodeRecord of the local port") {
		t.Errorf("unknown local port: %v", err)
	}
	fake.lose[mad.AttrLinkRecord] = true
	_, err := DiscoverSA(context.Background(), fake.client(t), SALocal{PortGUID: 0x200000})
	var te *rpc.TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "LinkRecord table: ") {
		t.Errorf("a table fails: %v", err)
	}
	// Records of nodes the walk cannot reach are left out.
	fake = saFakeOf(smp, 1)
	var keep []mad.Struct
	for _, r := range fake.tables[mad.AttrLinkRecord] {
		if lr := r.(*mad.LinkRecord); lr.FromLID != 2 && lr.ToLID != 2 { // Switch2
			keep = append(keep, r)
		}
	}
	fake.tables[mad.AttrLinkRecord] = keep
	fab, err := DiscoverSA(context.Background(), fake.client(t), SALocal{PortGUID: 0x200000})
	if err != nil || nodeOrder(fab) != "Switch1, hca one, Hca2" {
		t.Errorf("without Switch2's links: %v, nodes %s", err, nodeOrder(fab))
	}
}

func TestNodeSA(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	smp := discover(t, f, 8, Options{Load: LoadAll &^ LoadMlnxExtPortInfo})
	fake := saFakeOf(smp, 2)
	noRecords := func(err error) bool { return errors.Is(err, sa.ErrNoRecords) }
	c := fake.client(t)
	fab, err := NodeSA(context.Background(), c, 0x200001, noRecords)
	if err != nil {
		t.Fatal(err)
	}
	sw2, want := fab.From, smp.Node(0x200001)
	if sw2.GUID != 0x200001 || sw2.SMALID != want.SMALID || !sw2.EnhancedSP0 || sw2.Desc() != "sw2 desc" || len(fab.Errors) != 0 {
		t.Fatalf("Switch2: %+v, errors %v", sw2, fab.Errors)
	}
	for p := 0; p <= 4; p++ {
		got, exp := sw2.Port(p), want.Port(p)
		if got == nil || string(got.PortInfo[:28]) != string(exp.PortInfo[:28]) || got.BaseLID != exp.BaseLID || remoteOf(got) != remoteOf(exp) {
			t.Errorf("Switch2 port %d: %+v, want %+v", p, got, exp)
		}
	}
	if r := sw2.Port(1).Remote; r.GUID != 0x100007 || r.BaseLID != want.Port(1).Remote.BaseLID || r.Node.Type != NodeCA {
		t.Errorf("Hca3's port: %+v", r)
	}
	if r := sw2.Port(4).Remote; r.Num != 8 || r.Node.SMALID != 1 || r.BaseLID != 1 {
		t.Errorf("Switch1's port: %+v", r)
	}
	// A CA: its ports with a record.
	fab, err = NodeSA(context.Background(), c, 0x100003, noRecords)
	if err != nil || fab.From.Port(1) == nil || fab.From.Port(2) != nil || remoteOf(fab.From.Port(1)) != "Switch1" {
		t.Errorf("Hca2: %v %+v", err, fab)
	}
	if _, err := NodeSA(context.Background(), c, 0x123, noRecords); !errors.Is(err, ErrNodeNotFound) {
		t.Errorf("unknown node: %v", err)
	}
}

// Under ibsim a GetTable reply is one MAD: one NodeRecord, a few links.
func TestDiscoverSAOnTablesCutToOneMAD(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	smp := discover(t, f, 8, Options{})
	for _, local := range []uint64{0x200000, 0x100001} {
		fake := saFakeOf(smp, 1)
		fake.oneMAD = true
		if _, err := DiscoverSA(context.Background(), fake.client(t), SALocal{PortGUID: local}); !errors.Is(err, errTablesCut) {
			t.Errorf("local %x: %v", local, err)
		}
	}
}
