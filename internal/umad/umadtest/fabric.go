package umadtest

import (
	"encoding/binary"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// Fabric is a small in-memory subnet: switches and CAs joined by links,
// whose SMAs answer SubnGet and SubnSet, by LID and by directed route.
// The first node added is the one the local port is on (its port 1 for a
// CA, port 0 for a switch).
//
// The SMAs compute NodeInfo, NodeDescription, PortInfo, SwitchInfo,
// LinearForwardingTable and MulticastForwardingTable from the topology;
// Node.Set and Node.Fail give any other answer. A SubnSet stores its data
// as the attribute's value, answered as it is from then on. A LID-routed request
// follows the switches' linear forwarding tables, which route every LID
// along a shortest path; a directed route follows its initial path, through
// switches only, and its reply carries the return path. A request nobody
// can reach is handed back undelivered, as ibsim does.
//
// Build the fabric, then answer with it; change nodes only between
// requests. The Fabric's own methods are safe for concurrent use.
type Fabric struct {
	// SMLID is the local port's SM LID (LocalInfo) and PortInfo's
	// MasterSMLID; 0 (no SM) by default.
	SMLID uint16

	mu      sync.Mutex
	nodes   []*Node
	nextLID uint16
	lft     map[*Node][]byte // computed forwarding tables, by LID; nil when stale
}

// Node is a switch or a CA of a Fabric. Set its fields before requests
// reach it.
type Node struct {
	Type     mad.NodeType
	GUID     uint64 // node GUID; a CA's port p has GUID+p, a switch's ports the node GUID
	Desc     string
	VendorID uint32
	DeviceID uint16
	// EnhancedPort0 is SwitchInfo's bit.
	EnhancedPort0 bool
	// Speed is every port's LinkSpeedActive (SDR when 0).
	Speed mad.LinkSpeed
	// Scripted makes the SMA compute nothing: it answers what Set and
	// Fail give it, and status 0x1C to anything else.
	Scripted bool

	fabric *Fabric
	ports  []*end // 0..NumPorts; a CA's port 0 is unused
	attrs  map[attrKey]answer
	mcast  map[uint16]uint64 // multicast LID -> member ports (bit = port)
}

// end is one port of a node: its LID and what it is linked to.
type end struct {
	node   *Node
	num    int
	lid    uint16 // a CA port's; a switch keeps its LID in port 0's
	remote *end
}

type attrKey struct {
	attr uint16
	mod  uint32
}

type answer struct {
	data   []byte
	status uint16
}

// NewFabric returns an empty fabric.
func NewFabric() *Fabric { return &Fabric{nextLID: 1} }

// AddSwitch adds a switch with ports 1..ports and the next free LID.
func (f *Fabric) AddSwitch(guid uint64, ports int, desc string) *Node {
	return f.add(mad.NodeTypeSwitch, guid, ports, desc)
}

// AddCA adds a CA with ports 1..ports, each with the next free LID.
func (f *Fabric) AddCA(guid uint64, ports int, desc string) *Node {
	return f.add(mad.NodeTypeCA, guid, ports, desc)
}

func (f *Fabric) add(typ mad.NodeType, guid uint64, ports int, desc string) *Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := &Node{Type: typ, GUID: guid, Desc: desc, fabric: f, ports: make([]*end, ports+1),
		attrs: map[attrKey]answer{}, mcast: map[uint16]uint64{}}
	for i := range n.ports {
		n.ports[i] = &end{node: n, num: i}
		if (typ == mad.NodeTypeSwitch && i == 0) || (typ != mad.NodeTypeSwitch && i > 0) {
			n.ports[i].lid = f.nextLID
			f.nextLID++
		}
	}
	f.nodes = append(f.nodes, n)
	f.lft = nil
	return n
}

// Link joins port pa of a to port pb of b.
func (f *Fabric) Link(a *Node, pa int, b *Node, pb int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a.ports[pa].remote, b.ports[pb].remote = b.ports[pb], a.ports[pa]
	f.lft = nil
}

// Unlink unplugs the link at port p of n (if any).
func (f *Fabric) Unlink(n *Node, p int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := n.ports[p].remote; r != nil {
		r.remote, n.ports[p].remote = nil, nil
	}
	f.lft = nil
}

// Nodes returns the nodes in the order they were added.
func (f *Fabric) Nodes() []*Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Node(nil), f.nodes...)
}

// local returns the local node and port.
func (f *Fabric) local() (*Node, int) {
	n := f.nodes[0]
	if n.Type == mad.NodeTypeSwitch {
		return n, 0
	}
	return n, 1
}

// LocalInfo describes the local port as a transport does: Active, with
// its LID and the fabric's SM LID.
func (f *Fabric) LocalInfo() umad.PortInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, p := f.local()
	return umad.PortInfo{CA: "umadtest0", Num: p, LID: n.lid(p), SMLID: f.SMLID, State: 4, PhysState: 5,
		Rate: "10 Gb/sec (4X SDR)", PortGUID: n.portGUID(p), GIDPrefix: 0xfe80_0000_0000_0000, LinkLayer: "InfiniBand"}
}

// NumPorts is the number of ports (not counting a switch's port 0).
func (n *Node) NumPorts() int { return len(n.ports) - 1 }

// LID returns the LID of a port (a switch's one LID for any port).
func (n *Node) LID(port int) uint16 {
	n.fabric.mu.Lock()
	defer n.fabric.mu.Unlock()
	return n.lid(port)
}

func (n *Node) lid(port int) uint16 {
	if n.Type == mad.NodeTypeSwitch {
		return n.ports[0].lid
	}
	return n.ports[port].lid
}

// SetLID gives a port (a switch: the switch) another LID.
func (n *Node) SetLID(port int, lid uint16) {
	n.fabric.mu.Lock()
	defer n.fabric.mu.Unlock()
	if n.Type == mad.NodeTypeSwitch {
		port = 0
	}
	n.ports[port].lid = lid
	n.fabric.lft = nil
}

// PortGUID returns a port's GUID.
func (n *Node) PortGUID(port int) uint64 { return n.portGUID(port) }

func (n *Node) portGUID(port int) uint64 {
	if n.Type == mad.NodeTypeSwitch {
		return n.GUID
	}
	return n.GUID + uint64(port)
}

// Set makes the node's SMA answer a Get of s's attribute with modifier
// mod (AnyMod: any) with s, instead of what it would compute. s must be
// an attribute (see SetData for other layouts).
func (n *Node) Set(mod uint32, s mad.Struct) { n.SetData(attrOf(s), mod, mad.Encode(s)) }

// SetData makes the node's SMA answer a Get of attr with modifier mod
// (AnyMod: any) with data.
func (n *Node) SetData(attr uint16, mod uint32, data []byte) {
	n.fabric.mu.Lock()
	defer n.fabric.mu.Unlock()
	n.attrs[attrKey{attr, mod}] = answer{data: data}
}

// attrOf returns the attribute ID of s, which must be an attribute.
func attrOf(s mad.Struct) uint16 {
	d := s.Desc()
	if !d.IsAttribute {
		panic("umadtest: " + d.Name + " is not an attribute; use SetData")
	}
	return d.AttrID
}

// Fail makes the node's SMA answer attr with modifier mod (AnyMod: any)
// with a MAD status.
func (n *Node) Fail(attr uint16, mod uint32, status uint16) {
	n.fabric.mu.Lock()
	defer n.fabric.mu.Unlock()
	n.attrs[attrKey{attr, mod}] = answer{status: status}
}

// Join makes a switch forward multicast LID mlid to ports (its
// MulticastForwardingTable).
func (n *Node) Join(mlid uint16, ports ...int) {
	n.fabric.mu.Lock()
	defer n.fabric.mu.Unlock()
	for _, p := range ports {
		n.mcast[mlid] |= 1 << p
	}
}

// Answer is a Func: the SMAs' answer to an SMP (other classes are handed
// back undelivered; responses are dropped).
func (f *Fabric) Answer(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	if len(h) < mad.Size || h.IsResponse() {
		return nil
	}
	if c := h.Class(); c != mad.ClassSubnLID && c != mad.ClassSubnDR {
		return []*umad.Packet{Undelivered(req)}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if h.Class() == mad.ClassSubnDR && (h.HopPointer() != 0 || h.Status()&mad.DirectionBit != 0 ||
		binary.BigEndian.Uint16(h[32:]) != umad.PermissiveLID || binary.BigEndian.Uint16(h[34:]) != umad.PermissiveLID) {
		return nil // ibsim drops what is not a plain outgoing directed route
	}
	n, arrival, ret := f.reach(req)
	if n == nil {
		return []*umad.Packet{Undelivered(req)}
	}
	data, status := n.sma(h, arrival)
	reply := Reply(req, status, data)
	copy(reply.MAD[192:], ret) // the return path: the ingress port at each hop
	return []*umad.Packet{reply}
}

// Dest returns the node a request reaches and the port it enters by (nil
// if it reaches none). A Func wrapping Answer uses it to lose or change
// the answers of one node.
func (f *Fabric) Dest(req *umad.Packet) (*Node, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, port, _ := f.reach(req)
	return n, port
}

// reach routes a request: the node it reaches, its ingress port there, and
// for a directed route the return path.
func (f *Fabric) reach(req *umad.Packet) (*Node, int, []byte) {
	if len(f.nodes) == 0 {
		return nil, 0, nil
	}
	h := mad.Header(req.MAD)
	n, arrival := f.local()
	if h.Class() == mad.ClassSubnDR {
		path := h.InitialPath()
		ret := make([]byte, len(path))
		for i := 1; i < len(path); i++ {
			p := int(path[i])
			// Only switches forward; a CA sends out of the port it is on.
			forwards := n.Type == mad.NodeTypeSwitch || (i == 1 && p == arrival)
			if !forwards || p == 0 || p >= len(n.ports) || n.ports[p].remote == nil {
				return nil, 0, nil
			}
			r := n.ports[p].remote
			n, arrival = r.node, r.num
			ret[i] = byte(arrival)
		}
		return n, arrival, ret
	}
	lid := req.Addr.LID
	for hops := 0; hops < 64; hops++ {
		if n.Type != mad.NodeTypeSwitch {
			for p := 1; p < len(n.ports); p++ {
				if n.ports[p].lid == lid {
					return n, p, nil
				}
			}
			if hops > 0 || n.ports[arrival].remote == nil {
				return nil, 0, nil
			}
			r := n.ports[arrival].remote
			n, arrival = r.node, r.num
			continue
		}
		if n.ports[0].lid == lid {
			return n, arrival, nil
		}
		out := f.route(n, lid)
		if out == 0xFF || n.ports[out].remote == nil {
			return nil, 0, nil
		}
		r := n.ports[out].remote
		n, arrival = r.node, r.num
	}
	return nil, 0, nil
}

// route returns the port switch sw forwards lid to (0xFF: none): the
// first hop of a shortest path, the lowest port number among equals.
func (f *Fabric) route(sw *Node, lid uint16) byte {
	if f.lft == nil {
		f.lft = map[*Node][]byte{}
	}
	t := f.lft[sw]
	if t == nil {
		t = f.computeLFT(sw)
		f.lft[sw] = t
	}
	if int(lid) >= len(t) {
		return 0xFF
	}
	return t[lid]
}

// computeLFT walks the fabric breadth first from sw and records, for every
// LID found, the port the walk left sw by.
func (f *Fabric) computeLFT(sw *Node) []byte {
	t := make([]byte, int(f.topLID())+1)
	for i := range t {
		t[i] = 0xFF
	}
	t[sw.ports[0].lid] = 0
	type hop struct {
		n     *Node
		first int
	}
	seen := map[*Node]bool{sw: true}
	queue := []hop{{sw, 0}}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		for _, e := range h.n.ports[1:] {
			r := e.remote
			if r == nil || seen[r.node] {
				continue
			}
			first := h.first
			if first == 0 {
				first = e.num
			}
			if r.node.Type != mad.NodeTypeSwitch { // a CA port: an end, reached by its own link
				if r.lid != 0 && t[r.lid] == 0xFF {
					t[r.lid] = byte(first)
				}
				continue
			}
			seen[r.node] = true
			t[r.node.ports[0].lid] = byte(first)
			queue = append(queue, hop{r.node, first})
		}
	}
	t[0] = 0xFF
	return t
}

// sma answers an SMP that reached node n by port arrival.
func (n *Node) sma(h mad.Header, arrival int) ([]byte, uint16) {
	attr, mod := h.AttrID(), h.AttrMod()
	key := attrKey{attr, mod}
	if h.Method() == mad.MethodSet {
		if a, ok := n.attrs[key]; ok && a.status != 0 {
			return nil, a.status
		}
		data := append([]byte(nil), h.SMPData()...)
		n.attrs[key] = answer{data: data}
		return data, 0
	}
	if h.Method() != mad.MethodGet {
		return nil, StatusBadMethod
	}
	if a, ok := n.attrs[key]; ok {
		return a.data, a.status
	}
	if a, ok := n.attrs[attrKey{attr, AnyMod}]; ok {
		return a.data, a.status
	}
	if n.Scripted {
		return nil, StatusInvalidField
	}
	sw := n.Type == mad.NodeTypeSwitch
	switch attr {
	case mad.AttrNodeInfo:
		return mad.Encode(&mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: n.Type, NumPorts: uint8(n.NumPorts()),
			SystemImageGUID: mad.GUID(n.GUID), NodeGUID: mad.GUID(n.GUID), PortGUID: mad.GUID(n.portGUID(arrival)),
			PartitionCap: 8, DeviceID: n.DeviceID, LocalPortNum: uint8(arrival), VendorID: n.VendorID}), 0
	case mad.AttrNodeDescription:
		return []byte(n.Desc), 0
	case mad.AttrSwitchInfo:
		if !sw {
			return nil, StatusUnsupported
		}
		si := mad.SwitchInfo{LinearFDBCap: 0xC000, MulticastFDBCap: 1024, LinearFDBTop: n.fabric.topLID(), LIDsPerPort: 1}
		if n.EnhancedPort0 {
			si.EnhancedPort0 = 1
		}
		return mad.Encode(&si), 0
	case mad.AttrPortInfo:
		p := int(mod)
		if !sw && p == 0 {
			p = arrival
		}
		if p >= len(n.ports) || (!sw && p == 0) {
			return nil, StatusInvalidField
		}
		pi := mad.PortInfo{LID: n.lid(p), MasterSMLID: n.fabric.SMLID, LocalPortNum: uint8(arrival),
			LinkWidthActive: mad.LinkWidth4X, LinkSpeedActive: mad.LinkSpeedSDR,
			PortState: mad.PortStateDown, PortPhysicalState: mad.PhysPortStatePolling, VLCap: 4}
		if n.Speed != 0 {
			pi.LinkSpeedActive = n.Speed
		}
		if n.ports[p].remote != nil || (sw && p == 0) {
			pi.PortState, pi.PortPhysicalState = mad.PortStateActive, mad.PhysPortStateLinkUp
		}
		return mad.Encode(&pi), 0
	case mad.AttrLinearForwardingTable:
		if !sw {
			return nil, StatusUnsupported
		}
		var lft mad.LinearForwardingTable
		for i := range lft.Port {
			lft.Port[i] = n.fabric.route(n, uint16(int(mod)*64+i))
		}
		return mad.Encode(&lft), 0
	case mad.AttrMulticastForwardingTable:
		if !sw {
			return nil, StatusUnsupported
		}
		// Modifier: bits 31..28 the block of 16 ports, 8..0 the block of
		// 32 multicast LIDs from 0xC000 (IBA 14.2.5.11).
		var mft mad.MulticastForwardingTable
		position, block := int(mod>>28), int(mod&0x1FF)
		for i := range mft.PortMask {
			mft.PortMask[i] = uint16(n.mcast[uint16(0xC000+block*32+i)] >> (16 * position))
		}
		return mad.Encode(&mft), 0
	}
	return nil, StatusUnsupported
}

// topLID is the highest unicast LID in use.
func (f *Fabric) topLID() uint16 {
	top := uint16(0)
	for _, n := range f.nodes {
		for _, e := range n.ports {
			top = max(top, e.lid)
		}
	}
	return top
}
