package discovery

import (
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// fakeFabric is an in-memory fabric (umadtest's) with the faults the walk
// tests inject. Each port it opens answers as the fabric's SMAs, seen
// from its first node; all of them record what they were sent.
type fakeFabric struct {
	*umadtest.Fabric
	inactive bool // the local port is not Active (no LID mode)
	// delay and seed make the replies come after a random delay below
	// delay, so out of order.
	delay time.Duration
	seed  uint64
	loss  float64 // a fraction of the requests lost at random
	// drop loses the requests it says so of, by the node they reach.
	drop func(n *umadtest.Node, attr uint16, mod uint32) bool
	// dropLID loses every LID-routed SMP (a fabric without routes).
	dropLID bool
	// truncate says which replies to cut to 64 bytes (a broken transport
	// or agent).
	truncate func(n *umadtest.Node, attr uint16) bool
	ports    []*umadtest.Port
}

func newFake() *fakeFabric { return &fakeFabric{Fabric: umadtest.NewFabric(), seed: 1} }

func (f *fakeFabric) add(typ int, guid uint64, nports int, desc string) *umadtest.Node {
	if typ == NodeSwitch {
		return f.AddSwitch(guid, nports, desc)
	}
	return f.AddCA(guid, nports, desc)
}

func (f *fakeFabric) answer(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	if f.dropLID && h.Class() == mad.ClassSubnLID {
		return nil
	}
	n, _ := f.Dest(req)
	if n != nil && f.drop != nil && f.drop(n, h.AttrID(), h.AttrMod()) {
		return nil
	}
	out := f.Answer(req)
	if n != nil && f.truncate != nil && f.truncate(n, h.AttrID()) {
		for _, r := range out {
			r.MAD = r.MAD[:64]
		}
	}
	return out
}

// port opens a port on the fabric's first node.
func (f *fakeFabric) port() *umadtest.Port {
	info := f.LocalInfo()
	if f.inactive {
		info.State, info.LID = 2, 0
	}
	opts := []umadtest.Option{umadtest.WithInfo(info), umadtest.Seed(f.seed), umadtest.Loss(f.loss)}
	if f.delay > 0 {
		opts = append(opts, umadtest.Jitter(f.delay))
	}
	p := umadtest.NewPort(f.answer, opts...)
	f.ports = append(f.ports, p)
	return p
}

// requests returns what the fabric's ports were sent of some classes.
func (f *fakeFabric) requests(classes ...uint8) []mad.Header {
	var out []mad.Header
	for _, p := range f.ports {
		out = append(out, p.Requests(classes...)...)
	}
	return out
}

// count says how many requests for attr the fabric was sent.
func (f *fakeFabric) count(attr uint16) int {
	n := 0
	for _, m := range f.requests() {
		if m.AttrID() == attr {
			n++
		}
	}
	return n
}

// sent counts the requests by attribute, for messages.
func (f *fakeFabric) sent() map[uint16]int {
	m := map[uint16]int{}
	for _, r := range f.requests() {
		m[r.AttrID()]++
	}
	return m
}

// mellanox makes n a Mellanox node whose links run at QDR, and whose SMA
// answers the Mellanox extended PortInfo with FDR10 active (or refuses
// it).
func mellanox(n *umadtest.Node, noEPI bool) {
	n.VendorID, n.DeviceID, n.Speed = 0x2c9, 0xcb20, mad.LinkSpeedQDR
	if n.Type != mad.NodeTypeSwitch {
		n.DeviceID = 0x1017
	}
	if noEPI {
		n.Fail(mad.AttrMlnxExtPortInfo, umadtest.AnyMod, umadtest.StatusUnsupported)
	} else {
		n.Set(umadtest.AnyMod, &mad.MlnxExtPortInfo{LinkSpeedActive: 1}) // FDR10
	}
}

// tinyFake is testdata/topologies/tiny.net with ibsim's GUIDs: the walk
// libibnetdisc makes from Switch1 is known (ibnetdiscover -p, -s -m).
func tinyFake() (f *fakeFabric, sw1, sw2, hca1, hca2, hca3 *umadtest.Node) {
	f = newFake()
	sw1 = f.add(NodeSwitch, 0x200000, 8, "Switch1")
	sw2 = f.add(NodeSwitch, 0x200001, 4, "sw2 desc")
	sw2.EnhancedPort0 = true
	hca1 = f.add(NodeCA, 0x100000, 2, "hca one")
	hca2 = f.add(NodeCA, 0x100003, 2, "Hca2")
	hca3 = f.add(NodeCA, 0x100006, 1, "Hca3")
	f.Link(sw1, 1, hca1, 1)
	f.Link(sw1, 4, hca2, 1)
	f.Link(sw1, 8, sw2, 4)
	f.Link(sw2, 1, hca3, 1)
	return
}
