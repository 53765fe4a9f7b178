// Package discovery holds the fabric model (nodes, ports, links) and the
// walkers that fill it: a parallel SMP walk and an SA walk. Every
// fabric-wide command works on this model, fresh from the wire or loaded
// from a cache file.
package discovery

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
)

// Node types (IBA 14.2.5.3, NodeInfo.NodeType).
const (
	NodeCA     = 1
	NodeSwitch = 2
	NodeRouter = 3
)

// Fabric is a discovered (or loaded) subnet.
type Fabric struct {
	// From is the node discovery started at: the local node.
	From *Node
	// Nodes in discovery order (breadth first from From).
	Nodes []*Node
	// MaxHops is the longest directed route used.
	MaxHops int
	// Errors lists what could not be read; the walk went on without it.
	Errors []*WalkError

	// FromPort is the port of From that discovery started on (a switch's
	// is 0).
	FromPort int
	// MADs is libibnetdisc's total_mads_used: for a walk, the number of
	// SMPs libibnetdisc would have sent to discover the same fabric
	// (ibnetdiscover -m prints it). 0 after a cache load.
	MADs int
	// Loaded says which attributes the fabric holds (see Load and Has).
	Loaded Load

	byGUID  map[uint64]*Node
	chassis *Grouping // the last GroupNodes', until a node is added
}

// Node is one CA, switch or router. The attribute blobs are kept as they
// travel on the wire (IBA byte order), as the libibnetdisc cache stores
// them; the accessors decode them.
type Node struct {
	GUID     uint64
	Type     int
	NumPorts int
	// NodeInfo, NodeDesc and SwitchInfo are the raw 64-byte SMP data of
	// those attributes (SwitchInfo nil for CAs and routers).
	NodeInfo   []byte
	NodeDesc   []byte
	SwitchInfo []byte
	// SMALID and SMALMC are a switch's port-0 LID and LMC (0 for others).
	SMALID uint16
	SMALMC uint8
	// EnhancedSP0 is set for a switch with an enhanced port 0.
	EnhancedSP0 bool
	// Ports is indexed by port number 0..NumPorts; nil where a port was not
	// discovered (a CA's unconnected ports, ports that failed).
	Ports []*Port
	// DRPath is the directed route discovery reached the node by (empty
	// after a cache load: the cache does not keep paths).
	DRPath []byte
}

// Port is one port of a node.
type Port struct {
	Node *Node
	// GUID is the port GUID: a switch's ports all carry the switch's port
	// GUID (IBA 14.2.5.3).
	GUID   uint64
	Num    int
	ExtNum int // external (front-panel) number, 0 unless chassis data says
	// BaseLID and LMC are the port's LID range (a switch's ports carry the
	// port-0 values).
	BaseLID uint16
	LMC     uint8
	// PortInfo is the raw 64-byte PortInfo, nil when it could not be read.
	PortInfo []byte
	// Remote is the port at the other end of the link, nil if none.
	Remote *Port
	// MlnxExtPortInfo is the raw Mellanox extended PortInfo (attribute
	// 0xFF90, its FDR10 bits), nil when not read: libibnetdisc asks for it
	// only on Mellanox ports that run at QDR without extended speeds.
	MlnxExtPortInfo []byte
}

// WalkError records one thing discovery could not read.
type WalkError struct {
	DRPath []byte
	What   string // "NodeInfo", "PortInfo port 3", ...
	Err    error
}

func (e *WalkError) Error() string {
	return "DR path " + mad.FormatDRPath(e.DRPath) + ": " + e.What + ": " + e.Reason()
}

// Reason is why the query failed, without the route it went by: the walk
// names a query by its node's route as the output shows it (the replay's,
// libibnetdisc's), which may not be the route the parallel walk sent it
// by, and one query must not show two routes. -v still shows the route
// used (the rpc errors' Detail).
func (e *WalkError) Reason() string {
	var te *rpc.TimeoutError
	var se *rpc.StatusError
	switch {
	case errors.As(e.Err, &te):
		tries := "attempts"
		if te.Attempts == 1 {
			tries = "attempt"
		}
		return fmt.Sprintf("no reply (%d %s, timeout %v)", te.Attempts, tries, te.Timeout)
	case errors.As(e.Err, &se):
		return fmt.Sprintf("MAD status 0x%04x (%s)", se.Reply.Status(), mad.StatusText(se.Reply.Class(), se.Reply.Status()))
	}
	return e.Err.Error()
}

// Unwrap gives the query's error, for errors.As.
func (e *WalkError) Unwrap() error { return e.Err }

// NewFabric returns an empty fabric.
func NewFabric() *Fabric { return &Fabric{byGUID: map[uint64]*Node{}} }

// Node returns the node with a node GUID, or nil.
func (f *Fabric) Node(guid uint64) *Node { return f.byGUID[guid] }

// AddNode adds n (keyed by its GUID) unless a node with that GUID exists;
// it returns the node in the fabric.
func (f *Fabric) AddNode(n *Node) *Node {
	if old := f.byGUID[n.GUID]; old != nil {
		return old
	}
	if f.byGUID == nil {
		f.byGUID = map[uint64]*Node{}
	}
	f.byGUID[n.GUID] = n
	f.Nodes = append(f.Nodes, n)
	f.chassis = nil
	if len(n.Ports) < n.NumPorts+1 {
		n.Ports = append(n.Ports, make([]*Port, n.NumPorts+1-len(n.Ports))...)
	}
	return n
}

// Link connects two ports both ways.
func Link(a, b *Port) {
	a.Remote, b.Remote = b, a
}

// NodesOfType returns the nodes of one type in discovery order.
func (f *Fabric) NodesOfType(t int) []*Node {
	var out []*Node
	for _, n := range f.Nodes {
		if n.Type == t {
			out = append(out, n)
		}
	}
	return out
}

// SortedByGUID returns the nodes ordered by node GUID.
func (f *Fabric) SortedByGUID() []*Node {
	out := append([]*Node(nil), f.Nodes...)
	sort.Slice(out, func(i, j int) bool { return out[i].GUID < out[j].GUID })
	return out
}

// Port returns port num of n, or nil.
func (n *Node) Port(num int) *Port {
	if num < 0 || num >= len(n.Ports) {
		return nil
	}
	return n.Ports[num]
}

// Desc is the node description as text (up to the first NUL).
func (n *Node) Desc() string {
	for i, c := range n.NodeDesc {
		if c == 0 {
			return string(n.NodeDesc[:i])
		}
	}
	return string(n.NodeDesc)
}

// Info decodes the node's NodeInfo.
func (n *Node) Info() *mad.NodeInfo {
	var ni mad.NodeInfo
	if len(n.NodeInfo) >= mad.NodeInfoSize {
		_ = ni.Unmarshal(n.NodeInfo)
	}
	return &ni
}

// Info decodes the port's PortInfo (zero when it was not read).
func (p *Port) Info() *mad.PortInfo {
	var pi mad.PortInfo
	if len(p.PortInfo) >= mad.PortInfoSize {
		_ = pi.Unmarshal(p.PortInfo)
	}
	return &pi
}

// SystemImageGUID is NodeInfo.SystemImageGUID.
func (n *Node) SystemImageGUID() uint64 {
	if len(n.NodeInfo) < 12 {
		return 0
	}
	return binary.BigEndian.Uint64(n.NodeInfo[4:])
}
