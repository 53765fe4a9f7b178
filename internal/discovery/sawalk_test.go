package discovery

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
)

// saFake is an SA at the client level: tables of records, matched by the
// components of each query's mask (as OpenSM matches them).
type saFake struct {
	mu      sync.Mutex
	tables  map[uint16][]mad.Struct
	queries map[uint16]int
	fail    map[uint16]error
}

var errSANoRecords = errors.New("no records")

func (s *saFake) match(attr uint16, query []byte, mask uint64) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries[attr]++
	var out [][]byte
	for _, rec := range s.tables[attr] {
		d := rec.Desc()
		q := d.New()
		_ = q.Unmarshal(append(append([]byte(nil), query...), make([]byte, d.Size)...))
		ok := true
		for _, path := range mad.CompMaskFields(d, mask) {
			a, err1 := mad.Get(rec, path)
			b, err2 := mad.Get(q, path)
			if err1 != nil || err2 != nil || a != b {
				ok = false
			}
		}
		if ok {
			out = append(out, mad.Encode(rec))
		}
	}
	return out
}

func (s *saFake) GetTable(_ context.Context, attr uint16, rec []byte, mask uint64) ([][]byte, error) {
	if err := s.fail[attr]; err != nil {
		return nil, err
	}
	return s.match(attr, rec, mask), nil
}

func (s *saFake) Get(_ context.Context, attr uint16, rec []byte, mask uint64) ([]byte, error) {
	if err := s.fail[attr]; err != nil {
		return nil, err
	}
	recs := s.match(attr, rec, mask)
	if len(recs) != 1 {
		return nil, errSANoRecords
	}
	return recs[0], nil
}

// saFakeOf is what OpenSM's SA would hold for a fabric: a NodeRecord per
// end port, a PortInfoRecord per port, a LinkRecord per link end, a
// SwitchInfoRecord per switch; in shuffled order.
func saFakeOf(f *Fabric, seed uint64) *saFake {
	s := &saFake{tables: map[uint16][]mad.Struct{}, queries: map[uint16]int{}, fail: map[uint16]error{}}
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
			sa := saFakeOf(smp, seed)
			local := SALocal{PortGUID: smp.From.Port(smp.FromPort).GUID, PortNum: smp.FromPort}
			f, err := DiscoverSA(context.Background(), sa, local)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := dumpFabric(f); got != want {
				t.Fatalf("%s, seed %d: the SA walk differs from the SMP walk:\n%s", name, seed, diffLines(want, got))
			}
			if sa.queries[mad.AttrNodeRecord] != 1 || sa.queries[mad.AttrPortInfoRecord] != 1 ||
				sa.queries[mad.AttrLinkRecord] != 1 || sa.queries[mad.AttrSwitchInfoRecord] != 1 {
				t.Errorf("%s: queries %v, want one GetTable of each table", name, sa.queries)
			}
		}
	}
}

func TestDiscoverSAFailures(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	smp := discover(t, f, 8, Options{})
	sa := saFakeOf(smp, 1)
	if _, err := DiscoverSA(context.Background(), sa, SALocal{PortGUID: 0x999}); err == nil || !strings.Contains(err.Error(), "no NodeRecord of the local port") {
		t.Errorf("unknown local port: %v", err)
	}
	sa.fail[mad.AttrLinkRecord] = errors.New("timed out")
	if _, err := DiscoverSA(context.Background(), sa, SALocal{PortGUID: 0x200000}); err == nil || !strings.Contains(err.Error(), "LinkRecord table: timed out") {
		t.Errorf("a table fails: %v", err)
	}
	// Records of nodes the walk cannot reach are left out.
	sa = saFakeOf(smp, 1)
	var keep []mad.Struct
	for _, r := range sa.tables[mad.AttrLinkRecord] {
		if lr := r.(*mad.LinkRecord); lr.FromLID != 2 && lr.ToLID != 2 { // Switch2
			keep = append(keep, r)
		}
	}
	sa.tables[mad.AttrLinkRecord] = keep
	fab, err := DiscoverSA(context.Background(), sa, SALocal{PortGUID: 0x200000})
	if err != nil || nodeOrder(fab) != "Switch1, hca one, Hca2" {
		t.Errorf("without Switch2's links: %v, nodes %s", err, nodeOrder(fab))
	}
}

func TestNodeSA(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	smp := discover(t, f, 8, Options{Load: LoadAll &^ LoadMlnxExtPortInfo})
	sa := saFakeOf(smp, 2)
	noRecords := func(err error) bool { return errors.Is(err, errSANoRecords) }
	fab, err := NodeSA(context.Background(), sa, 0x200001, noRecords)
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
	fab, err = NodeSA(context.Background(), sa, 0x100003, noRecords)
	if err != nil || fab.From.Port(1) == nil || fab.From.Port(2) != nil || remoteOf(fab.From.Port(1)) != "Switch1" {
		t.Errorf("Hca2: %v %+v", err, fab)
	}
	if _, err := NodeSA(context.Background(), sa, 0x123, noRecords); !errors.Is(err, ErrNodeNotFound) {
		t.Errorf("unknown node: %v", err)
	}
}

// Under ibsim a GetTable reply is one MAD: one NodeRecord, a few links.
func TestDiscoverSAOnTablesCutToOneMAD(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	smp := discover(t, f, 8, Options{})
	for _, local := range []uint64{0x200000, 0x100001} {
		sa := saFakeOf(smp, 1)
		for attr, recs := range sa.tables {
			size := len(mad.Encode(recs[0]))
			sa.tables[attr] = recs[:min(len(recs), 200/((size+7)&^7))]
		}
		if _, err := DiscoverSA(context.Background(), sa, SALocal{PortGUID: local}); !errors.Is(err, errTablesCut) {
			t.Errorf("local %x: %v", local, err)
		}
	}
}
