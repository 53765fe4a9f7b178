package diagnose

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// A hand-built fabric for the checks' tests: every linked port Active,
// 4X SDR, MTU 2048 of 2048, 8 data VLs of 8, configured by an SM at
// LID 1 with the default subnet prefix.

const defaultPrefix = 0xfe80_0000_0000_0000

type builder struct {
	f       *discovery.Fabric
	nextLID uint16
}

func newBuilder() *builder { return &builder{f: discovery.NewFabric(), nextLID: 1} }

func (b *builder) node(typ int, guid uint64, nports int, desc string) *discovery.Node {
	ni := mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: mad.NodeType(typ), NumPorts: uint8(nports),
		NodeGUID: mad.GUID(guid), PortGUID: mad.GUID(guid), SystemImageGUID: mad.GUID(guid), PartitionCap: 8}
	n := b.f.AddNode(&discovery.Node{GUID: guid, Type: typ, NumPorts: nports, NodeDesc: []byte(desc), NodeInfo: mad.Encode(&ni)})
	if b.f.From == nil {
		b.f.From = n
		n.DRPath = []byte{0}
	}
	first := 1
	if typ == discovery.NodeSwitch {
		first = 0
		n.SMALID = b.nextLID
		b.nextLID++
		n.SwitchInfo = mad.Encode(&mad.SwitchInfo{LinearFDBCap: 0xC000})
	}
	for num := first; num <= nports; num++ {
		p := &discovery.Port{Node: n, Num: num, GUID: guid}
		if typ == discovery.NodeSwitch {
			p.BaseLID = n.SMALID
		} else {
			p.GUID = guid + uint64(num)
			p.BaseLID = b.nextLID
			b.nextLID++
		}
		pi := mad.PortInfo{LID: p.BaseLID, MasterSMLID: 1, GIDPrefix: defaultPrefix, LocalPortNum: uint8(num),
			LinkWidthActive: mad.LinkWidth4X, LinkSpeedActive: mad.LinkSpeedSDR,
			PortState: mad.PortStateDown, PortPhysicalState: mad.PhysPortStatePolling,
			VLCap: 4, OperationalVLs: 4, MTUCap: 4, NeighborMTU: 4}
		if num == 0 {
			pi.PortState, pi.PortPhysicalState = mad.PortStateActive, mad.PhysPortStateLinkUp
		}
		p.PortInfo = mad.Encode(&pi)
		n.Ports[num] = p
	}
	return n
}

func (b *builder) sw(guid uint64, nports int, desc string) *discovery.Node {
	return b.node(discovery.NodeSwitch, guid, nports, desc)
}

func (b *builder) ca(guid uint64, nports int, desc string) *discovery.Node {
	return b.node(discovery.NodeCA, guid, nports, desc)
}

// link joins two ports, both Active.
func (b *builder) link(a *discovery.Node, pa int, c *discovery.Node, pc int) {
	discovery.Link(a.Port(pa), c.Port(pc))
	for _, p := range []*discovery.Port{a.Port(pa), c.Port(pc)} {
		setPI(p, func(pi *mad.PortInfo) {
			pi.PortState, pi.PortPhysicalState = mad.PortStateActive, mad.PhysPortStateLinkUp
		})
	}
	if len(c.DRPath) == 0 && len(a.DRPath) > 0 {
		c.DRPath = append(append([]byte(nil), a.DRPath...), byte(pa)) // the walk reached c from a
	}
}

// setPI changes p's PortInfo.
func setPI(p *discovery.Port, change func(*mad.PortInfo)) {
	pi := p.Info()
	change(pi)
	p.PortInfo = mad.Encode(pi)
}

// setNI changes n's NodeInfo.
func setNI(n *discovery.Node, change func(*mad.NodeInfo)) {
	ni := n.Info()
	change(ni)
	n.NodeInfo = mad.Encode(ni)
}

// tiny is host1 - sw1 = sw2 - host2 (two links between the switches),
// host1 the local node and the MASTER SM on its port 1 (LID 1).
type tiny struct {
	b                    *builder
	host1, sw1, sw2, hst *discovery.Node
	s                    *Snapshot
}

func newTiny() *tiny {
	b := newBuilder()
	t := &tiny{b: b}
	t.host1 = b.ca(0x100, 2, "host1 HCA-1")
	t.sw1 = b.sw(0x200, 8, "sw1")
	t.sw2 = b.sw(0x300, 8, "sw2")
	t.hst = b.ca(0x400, 1, "host2 HCA-1")
	b.link(t.host1, 1, t.sw1, 1)
	b.link(t.sw1, 5, t.sw2, 5)
	b.link(t.sw1, 6, t.sw2, 6)
	b.link(t.sw2, 1, t.hst, 1)
	sm := t.host1.Port(1)
	setPI(sm, func(pi *mad.PortInfo) { pi.CapabilityMask |= uint32(mad.PortCapMaskSM) })
	for _, n := range b.f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				setPI(p, func(pi *mad.PortInfo) { pi.MasterSMLID = sm.BaseLID })
			}
		}
	}
	t.s = &Snapshot{Source: "walk", Fabric: b.f, Counters: &CounterReads{},
		SMInfo: []SMInfoRead{{Port: sm, Info: mad.SMInfo{GUID: 0x101, SMState: mad.SMStateMaster, Priority: 1, ActCount: 10}}}}
	return t
}

// run runs one check on the snapshot and verifies its codes.
func run(t *testing.T, c Check, s *Snapshot, cfg *Config) []Finding {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	found, skipped := c.Run(s, cfg)
	if skipped != "" {
		t.Fatalf("%s skipped: %s", c.Name(), skipped)
	}
	if err := CheckCodes(c, found); err != nil {
		t.Fatal(err)
	}
	return found
}

// codes are the codes of the findings that are not info.
func codes(found []Finding) []string {
	var out []string
	for _, f := range found {
		if f.Severity != Info {
			out = append(out, f.Code)
		}
	}
	return out
}

var errTimeout = errors.New("no reply (3 attempts, timeout 1s)")

// loadJudged loads the snapshot saved in dir and judges it again: the
// findings must be before's, byte for byte (as JSON). It returns what it
// loaded and the findings.
func loadJudged(t *testing.T, dir string, before []byte) (*Snapshot, *Config, []byte) {
	t.Helper()
	s, cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := json.Marshal(Run(s, cfg, Checks()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("before saving:\n%s\nafter loading:\n%s", before, after)
	}
	return s, cfg, after
}
