package discovery

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// fakeFabric is an in-memory fabric that answers SubnGet SMPs (NodeInfo,
// NodeDescription, PortInfo, SwitchInfo, Mellanox extended PortInfo) over
// directed routes and LIDs, as a umad.Port of its local node. It can delay
// replies at random (so they come back out of order) and lose requests.
type fakeFabric struct {
	nodes  []*fakeNode
	local  *fakeNode
	lport  int
	active bool // the local port is Active (LID mode possible)

	mu    sync.Mutex
	rng   *rand.Rand
	delay time.Duration // replies come after a random delay up to this
	drop  func(n *fakeNode, attr uint16, mod uint32) bool
	// truncate, if set, says which replies to cut to 64 bytes (a broken
	// transport or agent).
	truncate func(n *fakeNode, attr uint16) bool
	sent     map[uint16]int // requests per attribute
	lidReq   int            // LID-routed requests
	drReq    int
	recv     chan *umad.Packet
	closed   chan struct{}
	once     sync.Once
}

type fakeNode struct {
	guid    uint64
	typ     int
	desc    string
	ports   []*fakeLink // index 0..nports; a switch's port 0 is its SMA
	lid     uint16      // switch: port 0 LID
	vendor  uint32
	dev     uint16
	enhSP0  bool
	qdr     bool // links run at QDR (for the Mellanox extension)
	noEPI   bool // answers the Mellanox extension with an error
	portLID []uint16
}

type fakeLink struct {
	node   *fakeNode
	num    int
	remote *fakeLink
}

func newFake() *fakeFabric {
	return &fakeFabric{active: true, sent: map[uint16]int{}, recv: make(chan *umad.Packet, 4096), closed: make(chan struct{}), rng: rand.New(rand.NewPCG(1, 2))}
}

func (f *fakeFabric) add(typ int, guid uint64, nports int, desc string) *fakeNode {
	n := &fakeNode{guid: guid, typ: typ, desc: desc, ports: make([]*fakeLink, nports+1), portLID: make([]uint16, nports+1)}
	for i := range n.ports {
		n.ports[i] = &fakeLink{node: n, num: i}
	}
	f.nodes = append(f.nodes, n)
	lid := uint16(len(f.nodes))
	if typ == NodeSwitch {
		n.lid = lid
	} else {
		for i := 1; i <= nports; i++ {
			n.portLID[i] = lid*10 + uint16(i)
		}
	}
	if f.local == nil {
		f.local = n
		if typ != NodeSwitch {
			f.lport = 1
		}
	}
	return n
}

func (f *fakeFabric) link(a *fakeNode, pa int, b *fakeNode, pb int) {
	a.ports[pa].remote, b.ports[pb].remote = b.ports[pb], a.ports[pa]
}

// The umad.Port interface.

func (f *fakeFabric) Send(p *umad.Packet) error {
	req := append(mad.Header(nil), p.MAD...)
	f.mu.Lock()
	f.sent[req.AttrID()]++
	if req.Class() == mad.ClassSubnDR {
		f.drReq++
	} else {
		f.lidReq++
	}
	var d time.Duration
	if f.delay > 0 {
		d = time.Duration(f.rng.Int64N(int64(f.delay)))
	}
	f.mu.Unlock()
	reply := f.answer(p.Addr, req)
	if reply == nil {
		return nil // lost
	}
	deliver := func() {
		select {
		case f.recv <- reply:
		case <-f.closed:
		}
	}
	if d > 0 {
		time.AfterFunc(d, deliver)
	} else {
		deliver()
	}
	return nil
}

func (f *fakeFabric) Recv(deadline time.Time) (*umad.Packet, error) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case p := <-f.recv:
		return p, nil
	case <-f.closed:
		return nil, umad.ErrClosed
	case <-t.C:
		return nil, umad.ErrTimeout
	}
}

func (f *fakeFabric) Info() (umad.PortInfo, error) {
	pi := umad.PortInfo{Num: f.lport, State: 2}
	if f.active {
		pi.State = 4
		if f.local.typ == NodeSwitch {
			pi.LID = f.local.lid
		} else {
			pi.LID = f.local.portLID[f.lport]
		}
	}
	return pi, nil
}

func (f *fakeFabric) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

// route finds the node a request reaches and the port it comes in by.
func (f *fakeFabric) route(a umad.Address, req mad.Header) (*fakeNode, int) {
	if req.Class() == mad.ClassSubnDR {
		n, arrival := f.local, f.lport
		path := req.InitialPath()
		for _, p := range path[1:] {
			if int(p) >= len(n.ports) || n.ports[p].remote == nil || (n.typ != NodeSwitch && n != f.local) {
				return nil, 0
			}
			r := n.ports[p].remote
			n, arrival = r.node, r.num
		}
		return n, arrival
	}
	for _, n := range f.nodes {
		if n.typ == NodeSwitch && n.lid == a.LID {
			for _, l := range n.ports[1:] {
				if l.remote != nil {
					return n, l.num
				}
			}
			return n, 0
		}
		for i, lid := range n.portLID {
			if lid != 0 && lid == a.LID {
				return n, i
			}
		}
	}
	return nil, 0
}

func (f *fakeFabric) answer(a umad.Address, req mad.Header) *umad.Packet {
	n, arrival := f.route(a, req)
	if n == nil {
		// ibsim gives a request it cannot deliver back at once.
		return &umad.Packet{Addr: a, MAD: req, Status: umad.StatusTimeout}
	}
	if f.drop != nil && f.drop(n, req.AttrID(), req.AttrMod()) {
		return nil
	}
	reply := append(mad.Header(nil), req...)
	reply[3] = mad.MethodGetResp
	status := uint16(0)
	if req.Class() == mad.ClassSubnDR {
		status = mad.DirectionBit
	}
	data := reply.SMPData()
	for i := range data {
		data[i] = 0
	}
	mod := int(req.AttrMod())
	switch req.AttrID() {
	case mad.AttrNodeInfo:
		pg := n.guid
		if n.typ != NodeSwitch {
			pg = n.guid + uint64(arrival)
		}
		ni := mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: mad.NodeType(n.typ), NumPorts: uint8(len(n.ports) - 1),
			SystemImageGUID: mad.GUID(n.guid), NodeGUID: mad.GUID(n.guid), PortGUID: mad.GUID(pg),
			PartitionCap: 8, DeviceID: n.dev, LocalPortNum: uint8(arrival), VendorID: n.vendor}
		_ = ni.Marshal(data)
	case mad.AttrNodeDescription:
		copy(data, n.desc)
	case mad.AttrSwitchInfo:
		if n.typ != NodeSwitch {
			status |= 0x0c
			break
		}
		si := mad.SwitchInfo{LinearFDBCap: 1024}
		if n.enhSP0 {
			si.EnhancedPort0 = 1
		}
		_ = si.Marshal(data)
	case mad.AttrPortInfo:
		p := mod
		if n.typ != NodeSwitch && p == 0 {
			p = arrival
		}
		if p >= len(n.ports) || (n.typ != NodeSwitch && p == 0) {
			status |= 0x1c
			break
		}
		pi := mad.PortInfo{LocalPortNum: uint8(arrival), LinkWidthActive: mad.LinkWidth4X, LinkSpeedActive: mad.LinkSpeedSDR,
			PortState: mad.PortStateDown, PortPhysicalState: mad.PhysPortStatePolling, VLCap: 4}
		if n.qdr {
			pi.LinkSpeedActive = mad.LinkSpeedQDR
		}
		if n.typ == NodeSwitch {
			pi.LID = n.lid
		} else {
			pi.LID = n.portLID[p]
		}
		if n.ports[p].remote != nil || (n.typ == NodeSwitch && p == 0) {
			pi.PortState, pi.PortPhysicalState = mad.PortStateActive, mad.PhysPortStateLinkUp
		}
		_ = pi.Marshal(data)
	case mad.AttrMlnxExtPortInfo:
		if n.noEPI {
			status |= 0x0c
			break
		}
		data[15] = 1 // FDR10 active
	default:
		status |= 0x0c
	}
	binary.BigEndian.PutUint16(reply[4:], status)
	if f.truncate != nil && f.truncate(n, req.AttrID()) {
		reply = reply[:64]
	}
	return &umad.Packet{Addr: a, MAD: reply}
}

func (f *fakeFabric) count(attr uint16) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[attr]
}

// tinyFake is ../shared/topologies/tiny.net with ibsim's GUIDs: the walk
// libibnetdisc makes from Switch1 is known (ibnetdiscover -p, -s -m).
func tinyFake() (f *fakeFabric, sw1, sw2, hca1, hca2, hca3 *fakeNode) {
	f = newFake()
	sw1 = f.add(NodeSwitch, 0x200000, 8, "Switch1")
	sw2 = f.add(NodeSwitch, 0x200001, 4, "sw2 desc")
	sw2.enhSP0 = true
	hca1 = f.add(NodeCA, 0x100000, 2, "hca one")
	hca2 = f.add(NodeCA, 0x100003, 2, "Hca2")
	hca3 = f.add(NodeCA, 0x100006, 1, "Hca3")
	f.link(sw1, 1, hca1, 1)
	f.link(sw1, 4, hca2, 1)
	f.link(sw1, 8, sw2, 4)
	f.link(sw2, 1, hca3, 1)
	return
}
