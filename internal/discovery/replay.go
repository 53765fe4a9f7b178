package discovery

import (
	"bytes"
	"sort"

	"github.com/ibtool/ibtool/internal/mad"
)

// The canonical order.
//
// ibnetdiscover, ibhosts, the cache file and every tool built on
// libibnetdisc print nodes in the order of libibnetdisc's node list, and
// that order is an accident of its walk: one thread, a FIFO queue of SMPs,
// two of them on the wire at a time, each reply handled by a callback that
// queues more SMPs. A node is put at the head of the list (and of its
// type's list) when its first NodeInfo reply is handled. Against a fabric
// that answers in order (ibsim; a quiet real fabric) the replies are
// handled exactly in queue order, whatever the number on the wire.
//
// Our walk is parallel and its replies come back in any order. So after
// it, replay runs libibnetdisc's algorithm again over what the walk saw,
// without sending anything: it keeps the same FIFO queue, and each
// "reply" is looked up in the observations (the node a directed route
// leads to follows from the links seen). The callbacks are those of
// libibnetdisc/ibnetdisc.c (infiniband-diags 44), written afresh:
//
//   - NodeInfo: find or create the node (new ones are listed), create the
//     port it was reached through, link it to the port the route left by
//     (a relink breaks older links of both ports), and, for a new node,
//     queue NodeDescription, and for a switch SwitchInfo and PortInfo of
//     port 0; a CA or router always gets PortInfo of the arrival port.
//   - PortInfo: create or update the port (switch ports carry the port-0
//     LID); port 0 of a switch queues PortInfo of ports 1..N. Where
//     libibnetdisc would ask for the Mellanox extended PortInfo it is
//     queued, and the link is followed when that completes, successfully
//     or not. A port is followed when it is up and, on a switch, not the
//     port the route came in by, or when it is the local CA's port: the
//     route is extended by the port (at most 63 hops), or, when the walk
//     comes back to the local CA over a longer route, cut by one hop.
//   - A request whose answer the walk did not get is dropped, as
//     libibnetdisc drops a request that fails.
//
// The replay hands the walk's attribute blobs over to the fabric rather
// than copying them: the observations are dropped once it is done, and
// each blob goes to the one node or port it was read from.
//
// The replay also yields everything else that depends on that order: each
// node's directed route, the NodeInfo as read through the first route (its
// LocalPortNum and, on CAs, PortGUID), the LocalPortNum of every PortInfo
// (the port the request came in by), the port objects that exist, the
// maximum hop count and the number of SMPs libibnetdisc would have used.

// Byte offsets of the fields the replay rewrites (IBA 14.2.5.3, 14.2.5.6).
const (
	nodeInfoLocalPortOff = 36 // NodeInfo.LocalPortNum
	portInfoLocalPortOff = 28 // PortInfo.LocalPortNum
)

// maxDRPathLen is libibnetdisc's limit: a route may not grow past 63 hops.
const maxDRPathLen = 63

// FoundEvent is one NodeInfo reply as libibnetdisc handles it, in its
// order (ibnetdiscover -s prints one line for each). The values are those
// at that moment of libibnetdisc's walk.
type FoundEvent struct {
	Path []byte // the directed route
	New  bool   // first time the node is seen
	Node *Node
	// Port is the port the request came in by; BaseLID and LMC are its
	// values then (0 until its PortInfo has been read).
	Port    int
	BaseLID uint16
	LMC     uint8
	// Desc is the node description known then (empty for a new node).
	Desc []byte
}

type replayConfig struct {
	load    Load
	maxHops int // libibnetdisc's cfg->max_hops; 0: none
	found   func(FoundEvent)
}

type replayer struct {
	obs *observations
	cfg replayConfig
	f   *Fabric
	// queue[head:] are the requests waiting, by value: a walk queues
	// tens of thousands.
	queue   []replaySMP
	head    int
	maxDisc int
	count   int
	// resolved memoizes resolve: every port of a switch is asked for
	// over the same route.
	resolved map[string]resolution
}

// resolution is where a directed route ends: the node, the port it comes
// in by, and whether the links the walk saw lead anywhere.
type resolution struct {
	node    *obsNode
	arrival int
	ok      bool
}

type replaySMP struct {
	attr uint16
	mod  int
	path []byte
	node *Node // the node the reply is about (not for NodeInfo)
	// For NodeInfo: the port the route left by, nil for the first request.
	rem     *Node
	remPort int
}

const (
	attrNodeDesc   = 0x0010
	attrNodeInfo   = 0x0011
	attrSwitchInfo = 0x0012
	attrPortInfo   = 0x0015
	attrMlnxExt    = 0xFF90
)

// replay builds the fabric libibnetdisc would have built from the same
// replies.
func replay(obs *observations, cfg replayConfig) *Fabric {
	// The maps are sized for the fabric the walk saw: growing them was a
	// few percent of a big walk's CPU.
	r := &replayer{obs: obs, cfg: cfg,
		f:        &Fabric{byGUID: make(map[uint64]*Node, len(obs.nodes))},
		resolved: make(map[string]resolution, 2*len(obs.nodes)),
	}
	r.issue(attrNodeInfo, 0, []byte{0}, nil, nil, 0)
	s := new(replaySMP)
	for r.head < len(r.queue) {
		*s = r.queue[r.head] // a copy: handling it may move the queue
		r.head++
		r.count++
		switch s.attr {
		case attrNodeInfo:
			r.nodeInfo(s)
		case attrNodeDesc:
			r.nodeDesc(s)
		case attrSwitchInfo:
			r.switchInfo(s)
		case attrPortInfo:
			r.portInfo(s)
		case attrMlnxExt:
			r.mlnxExt(s)
		}
	}
	f := r.f
	f.MaxHops = r.maxDisc
	f.MADs = r.count
	f.Errors = obs.sortedErrors(f)
	f.Loaded = cfg.load & LoadAll
	return f
}

func (r *replayer) issue(attr uint16, mod int, path []byte, node, rem *Node, remPort int) {
	if r.head >= 1024 && r.head*2 >= len(r.queue) {
		// Reuse the room of the requests handled, which nothing refers
		// to any more (the one being handled was copied out: see replay).
		r.queue = r.queue[:copy(r.queue, r.queue[r.head:])]
		r.head = 0
	}
	r.queue = append(r.queue, replaySMP{attr: attr, mod: mod, path: path, node: node, rem: rem, remPort: remPort})
}

// resolve follows a directed route over the links the walk saw: the node
// it ends at and the port it comes in by. Routes are memoized: every port
// of a switch is asked for over the same route, and a new node's route is
// its parent's and one hop more.
func (r *replayer) resolve(path []byte) (*obsNode, int, bool) {
	if res, ok := r.resolved[string(path)]; ok {
		return res.node, res.arrival, res.ok
	}
	var res resolution
	if len(path) <= 1 {
		res.node, res.arrival = r.obs.nodes[r.obs.from], r.obs.fromPort
		res.ok = res.node != nil
	} else if n, _, ok := r.resolve(path[:len(path)-1]); ok {
		if peer, linked := r.obs.peer(portKey{n.guid, int(path[len(path)-1])}); linked {
			res.node, res.arrival = r.obs.nodes[peer.guid], peer.port
			res.ok = res.node != nil
		}
	}
	if r.resolved == nil {
		r.resolved = map[string]resolution{}
	}
	r.resolved[string(path)] = res
	return res.node, res.arrival, res.ok
}

// target is resolve for a request about a known node: the node's
// observations and the arrival port, if the route leads to that node.
func (r *replayer) target(s *replaySMP) (*obsNode, int, bool) {
	o, arrival, ok := r.resolve(s.path)
	if !ok || o.guid != s.node.GUID {
		return nil, 0, false
	}
	return o, arrival, true
}

// nodeInfoVia is the NodeInfo of o as read through port arrival (the
// walk's blob itself when it read that one).
func (o *obsNode) nodeInfoVia(arrival int) []byte {
	if b := o.niVia.get(arrival); b != nil {
		return b
	}
	b := append([]byte(nil), o.ni...)
	if len(b) > nodeInfoLocalPortOff {
		b[nodeInfoLocalPortOff] = byte(arrival)
	}
	return b
}

func (r *replayer) nodeInfo(s *replaySMP) {
	o, arrival, ok := r.resolve(s.path)
	if !ok || len(o.ni) < mad.NodeInfoSize {
		return
	}
	blob := o.nodeInfoVia(arrival)
	node := r.f.Node(o.guid)
	isNew := node == nil
	if isNew {
		node = &Node{
			GUID: o.guid, Type: o.typ, NumPorts: o.nports,
			NodeInfo: blob,
			DRPath:   append([]byte(nil), s.path...),
			Ports:    make([]*Port, o.nports+1),
		}
		r.f.AddNode(node)
	}
	if arrival > node.NumPorts {
		return // libibnetdisc would write past its port array
	}
	port := node.Ports[arrival]
	if port == nil {
		port = &Port{Node: node, Num: arrival}
		node.Ports[arrival] = port
	}
	port.GUID = portGUIDOf(blob)
	if r.cfg.found != nil {
		r.cfg.found(FoundEvent{
			Path: append([]byte(nil), s.path...), New: isNew, Node: node, Port: arrival,
			BaseLID: port.BaseLID, LMC: port.LMC, Desc: append([]byte(nil), node.NodeDesc...),
		})
	}
	if s.rem == nil {
		r.f.From, r.f.FromPort = node, arrival
	} else {
		rp := s.rem.Port(s.remPort)
		if rp == nil {
			return
		}
		relink(port, rp)
	}
	if isNew {
		r.issue(attrNodeDesc, 0, s.path, node, nil, 0)
		if node.Type == NodeSwitch {
			node.EnhancedSP0 = false
			r.issue(attrSwitchInfo, 0, s.path, node, nil, 0)
			r.issue(attrPortInfo, 0, s.path, node, nil, 0)
		}
	}
	if node.Type != NodeSwitch {
		r.issue(attrPortInfo, arrival, s.path, node, nil, 0)
	}
}

// relink links a and b, unlinking whatever either was linked to.
func relink(a, b *Port) {
	if a.Remote != nil {
		a.Remote.Remote = nil
	}
	if b.Remote != nil {
		b.Remote.Remote = nil
	}
	Link(a, b)
}

func portGUIDOf(nodeInfo []byte) uint64 {
	if len(nodeInfo) < 28 {
		return 0
	}
	var g uint64
	for _, c := range nodeInfo[20:28] {
		g = g<<8 | uint64(c)
	}
	return g
}

func (r *replayer) nodeDesc(s *replaySMP) {
	o, _, ok := r.target(s)
	if !ok || o.ndErr != nil {
		return
	}
	if o.nd != nil {
		s.node.NodeDesc = o.nd
	}
}

func (r *replayer) switchInfo(s *replaySMP) {
	o, _, ok := r.target(s)
	if !ok || o.siErr != nil {
		return
	}
	if o.si != nil {
		s.node.SwitchInfo = o.si
		var si mad.SwitchInfo
		s.node.EnhancedSP0 = si.Unmarshal(o.si) == nil && si.EnhancedPort0 != 0
	}
}

func (r *replayer) portInfo(s *replaySMP) {
	o, arrival, ok := r.target(s)
	if !ok {
		return
	}
	data := o.pi.get(s.mod)
	if len(data) < 64 || s.mod > s.node.NumPorts {
		return
	}
	node := s.node
	// The blob is this port's alone (a port asked for again gets it
	// again), so LocalPortNum can be set in place.
	blob := data
	blob[portInfoLocalPortOff] = byte(arrival)
	pi := rawPortInfo(blob)

	port := node.Ports[s.mod]
	if port == nil {
		port = &Port{Node: node, Num: s.mod, GUID: portGUIDOf(node.NodeInfo)}
		node.Ports[s.mod] = port
	}
	port.PortInfo = blob
	port.ExtNum = 0
	port.BaseLID, port.LMC = pi.lid(), pi.lmc()
	if s.mod == 0 {
		node.SMALID, node.SMALMC = port.BaseLID, port.LMC
	} else if node.Type == NodeSwitch {
		port.BaseLID, port.LMC = node.SMALID, node.SMALMC
	}

	ext := false
	if r.cfg.load&LoadMlnxExtPortInfo != 0 {
		capPort := pi
		if node.Type == NodeSwitch {
			capPort = nil
			if p0 := node.Ports[0]; p0 != nil {
				capPort = p0.PortInfo
			}
		}
		if ext = wantsMlnxExt(node.NodeInfo, pi, capPort); ext {
			r.issue(attrMlnxExt, s.mod, s.path, node, nil, 0)
		}
	}
	if !ext {
		r.follow(s.path, node, port)
	}
	if s.mod == 0 {
		// The reply to port 0 queues the other ports, whatever else it did.
		for p := 1; p <= node.NumPorts; p++ {
			r.issue(attrPortInfo, p, s.path, node, nil, 0)
		}
	}
}

func (r *replayer) mlnxExt(s *replaySMP) {
	port := s.node.Port(s.mod)
	if port == nil {
		return
	}
	if o, _, ok := r.target(s); ok {
		if b := o.epi.get(s.mod); b != nil {
			port.MlnxExtPortInfo = b
		}
	}
	// Success or failure, libibnetdisc goes on from the port.
	r.follow(s.path, s.node, port)
}

// follow is the end of libibnetdisc's PortInfo callback: queue a NodeInfo
// request for whatever is behind the port, if it is to be followed.
func (r *replayer) follow(path []byte, node *Node, port *Port) {
	pi := rawPortInfo(port.PortInfo)
	if port.Num == 0 || pi.physState() != physLinkUp {
		return
	}
	isFrom := node == r.f.From && port.Num == r.f.FromPort
	if !(node.Type == NodeSwitch && port.Num != pi.localPort()) && !isFrom {
		return
	}
	var next []byte
	if node.Type != NodeSwitch && node == r.f.From && len(path)-1 > 1 {
		// Back at the local CA over a longer route: one hop back is the
		// node it is attached to. libibnetdisc counts that as a hop.
		if r.cfg.maxHops > 0 && r.maxDisc > r.cfg.maxHops {
			return
		}
		r.maxDisc++
		next = append([]byte(nil), path[:len(path)-1]...)
	} else {
		if r.cfg.maxHops > 0 && r.maxDisc > r.cfg.maxHops {
			return
		}
		if len(path)-1 >= maxDRPathLen {
			return // libibnetdisc: "add port to DR path failed"
		}
		next = append(append(make([]byte, 0, len(path)+1), path...), byte(port.Num))
		if len(next)-1 > r.maxDisc {
			r.maxDisc++
		}
	}
	r.issue(attrNodeInfo, 0, next, nil, node, port.Num)
}

// sortedErrors returns the walk's errors, with the routes of f's nodes
// where f has the node, ordered by route, then by what.
func (o *observations) sortedErrors(f *Fabric) []*WalkError {
	var errs []*WalkError
	for _, e := range o.errors {
		if n := f.Node(e.guid); n != nil && len(n.DRPath) > 0 {
			e.err.DRPath = append([]byte(nil), n.DRPath...)
			if e.probe {
				e.err.DRPath = append(e.err.DRPath, byte(e.port))
			}
		}
		errs = append(errs, e.err)
	}
	sort.SliceStable(errs, func(i, j int) bool {
		if c := bytes.Compare(errs[i].DRPath, errs[j].DRPath); c != 0 {
			return len(errs[i].DRPath) < len(errs[j].DRPath) || (len(errs[i].DRPath) == len(errs[j].DRPath) && c < 0)
		}
		return errs[i].What < errs[j].What
	})
	return errs
}
