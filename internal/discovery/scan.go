package discovery

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// Scan is libibnetdisc's walk run live from any start and with its hop
// limit: what iblinkinfo -S/-G/-D (a partial scan) and -n use.
//
// Discover walks the whole fabric in parallel and then replays
// libibnetdisc's walk over what it saw. A partial scan is small and its
// reach depends on libibnetdisc's own bookkeeping (one hop counter for the
// whole walk, routes that back up from a CA, requests that fail because a
// directed route cannot pass a CA), so Scan runs libibnetdisc's walk
// itself: one FIFO queue of requests handled in order by the callbacks of
// libibnetdisc/ibnetdisc.c (infiniband-diags 44), written afresh, while
// the requests of the queue are on the wire many at a time ahead of the
// one being handled. Against a fabric that answers in order (ibsim; a
// quiet real fabric) the result is the one libibnetdisc gets.

// ScanOptions configure Scan.
type ScanOptions struct {
	// From is the directed route the walk starts at; nil or [0] is the
	// local port. Like libibmad's DR paths, From[0] is carried as given.
	From []byte
	// FromLID says the start was given by LID (iblinkinfo -S/-G resolve a
	// port GUID to a LID through the SA). libibnetdisc then routes by LID
	// to the start node and by directed route beyond it, counts hops from
	// there, and never extends a route through a CA. Scan sends directed
	// routes only: From is then the route the LID route takes (RouteToLID).
	FromLID bool
	// MaxHops is libibnetdisc's max_hops (iblinkinfo -n): once the walk
	// has gone further than that from the start, no route is extended.
	// 0 means no limit.
	MaxHops int
	// Load says what to fetch: 0 means LoadAll. Without MlnxExtPortInfo
	// the Mellanox extension is not asked for.
	Load Load
	// MKey is put in every SMP.
	MKey uint64
	// InFlight bounds the requests started ahead of the one being handled
	// (0: 64); the engine's window bounds what is on the wire.
	InFlight int
}

// NodeInfo byte offsets (IBA 14.2.5.3).
const (
	nodeInfoTypeOff     = 2
	nodeInfoNumPortsOff = 3
)

// Scan walks the fabric as libibnetdisc does from opts.From. Requests that
// fail are recorded in Fabric.Errors and dropped, as libibnetdisc drops
// them. When the start node does not answer, the fabric is empty (From is
// nil), as libibnetdisc's is; Scan fails only when ctx ends.
func Scan(ctx context.Context, eng *rpc.Engine, opts ScanOptions) (*Fabric, error) {
	if opts.Load == 0 {
		opts.Load = LoadAll
	}
	opts.Load |= LoadTopology
	if opts.InFlight <= 0 {
		opts.InFlight = 64
	}
	s := &scanner{ctx: ctx, eng: eng, opt: opts, f: NewFabric()}
	s.cond = sync.NewCond(&s.mu)
	start := scanRoute{dr: []byte{0}, lid: opts.FromLID}
	if !opts.FromLID && len(opts.From) > 0 {
		start.dr = append([]byte(nil), opts.From...)
	}
	s.initialHops = len(start.dr) - 1
	s.issue(&scanSMP{attr: mad.AttrNodeInfo, route: start})
	if err := s.run(); err != nil {
		return nil, err
	}
	f := s.f
	f.MaxHops = s.maxDisc + s.initialHops
	f.MADs = s.count
	f.Errors = s.errors
	f.Loaded = opts.Load & LoadAll
	GroupNodes(f)
	return f, nil
}

// scanRoute is libibnetdisc's port id of a request: a directed route
// (dr[0..cnt]), after a LID route to the start when lid is set.
type scanRoute struct {
	dr  []byte
	lid bool
}

func (r scanRoute) hops() int { return len(r.dr) - 1 }

type scanSMP struct {
	attr  uint16
	mod   int
	route scanRoute
	node  *Node // the node asked (all but NodeInfo)
	// rem and remPort are where a NodeInfo request's route left (nil for
	// the first request).
	rem     *Node
	remPort int

	started bool
	done    bool
	data    []byte
	err     error
}

type scanner struct {
	ctx context.Context
	eng *rpc.Engine
	opt ScanOptions
	f   *Fabric

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*scanSMP // every request, in issue order
	head    int        // the next request to handle
	next    int        // the next request to start
	running int

	initialHops int
	maxDisc     int
	count       int
	errors      []*WalkError
}

// issue queues a request (libibnetdisc's issue_smp); startMore sends it.
func (s *scanner) issue(q *scanSMP) {
	s.mu.Lock()
	s.queue = append(s.queue, q)
	s.mu.Unlock()
	s.startMore()
}

// startMore starts requests in queue order while fewer than InFlight of
// them are ahead of the one being handled.
func (s *scanner) startMore() {
	var start []*scanSMP
	s.mu.Lock()
	for s.next < len(s.queue) && s.next-s.head < s.opt.InFlight {
		q := s.queue[s.next]
		s.next++
		q.started = true
		s.running++
		start = append(start, q)
	}
	s.mu.Unlock()
	for _, q := range start {
		s.send(q)
	}
}

// send sends q; its reply is recorded from the engine's callback.
func (s *scanner) send(q *scanSMP) {
	s.get(q, func(data []byte, err error) {
		s.mu.Lock()
		q.data, q.err, q.done = data, err, true
		s.running--
		s.cond.Broadcast()
		s.mu.Unlock()
	})
}

// wire is the directed route a request travels.
func (s *scanner) wire(r scanRoute) []byte {
	if !r.lid {
		return r.dr
	}
	base := s.opt.From
	if len(base) == 0 {
		base = []byte{0}
	}
	return append(append([]byte(nil), base...), r.dr[1:]...)
}

func (s *scanner) get(q *scanSMP, then func([]byte, error)) {
	path := s.wire(q.route)
	if len(path)-1 > mad.MaxDRHops {
		then(nil, fmt.Errorf("directed route %s is longer than %d hops", mad.FormatDRPath(path), mad.MaxDRHops))
		return
	}
	req := &rpc.Request{
		Addr: umad.Address{LID: umad.PermissiveLID},
		MAD:  mad.NewDRSMP(mad.MethodGet, q.attr, uint32(q.mod), path),
	}
	if q.node != nil {
		req.Dest = nodeDest(q.node.GUID)
	}
	if s.opt.MKey != 0 {
		binary.BigEndian.PutUint64(req.MAD[24:], s.opt.MKey)
	}
	req.BorrowReply = true // smpData copies what is kept
	s.eng.Go(s.ctx, req, func(reply *rpc.Reply, err error) { then(smpData(req, reply, err)) })
}

// run handles the requests in queue order until none is left.
func (s *scanner) run() error {
	for {
		s.mu.Lock()
		if s.head == len(s.queue) {
			s.mu.Unlock()
			return nil
		}
		q := s.queue[s.head]
		for !q.done {
			if !q.started {
				s.mu.Unlock()
				s.startMore()
				s.mu.Lock()
				continue
			}
			s.cond.Wait()
		}
		s.queue[s.head] = nil
		s.head++
		s.mu.Unlock()
		if err := s.ctx.Err(); err != nil {
			s.drain()
			return err
		}
		s.count++
		s.handle(q)
		s.startMore()
	}
}

// drain waits for the requests on the wire (they end with ctx).
func (s *scanner) drain() {
	s.mu.Lock()
	for s.running > 0 {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

func (s *scanner) handle(q *scanSMP) {
	if q.err != nil {
		path := s.wire(q.route)
		what := attrName(q.attr)
		if q.attr == mad.AttrPortInfo || q.attr == mad.AttrMlnxExtPortInfo {
			what = fmt.Sprintf("%s port %d", what, q.mod)
		}
		s.errors = append(s.errors, &WalkError{DRPath: append([]byte(nil), path...), What: what, Err: q.err})
		if q.attr == mad.AttrMlnxExtPortInfo {
			// libibnetdisc goes on from the port whatever happened.
			if p := q.node.Port(q.mod); p != nil {
				s.follow(q.route, q.node, p)
			}
		}
		return
	}
	switch q.attr {
	case mad.AttrNodeInfo:
		s.nodeInfo(q)
	case mad.AttrNodeDescription:
		q.node.NodeDesc = q.data
	case mad.AttrSwitchInfo:
		q.node.SwitchInfo = q.data
		var si mad.SwitchInfo
		q.node.EnhancedSP0 = si.Unmarshal(q.data) == nil && si.EnhancedPort0 != 0
	case mad.AttrPortInfo:
		s.portInfo(q)
	case mad.AttrMlnxExtPortInfo:
		if p := q.node.Port(q.mod); p != nil {
			p.MlnxExtPortInfo = q.data
			s.follow(q.route, q.node, p)
		}
	}
}

func attrName(attr uint16) string {
	switch attr {
	case mad.AttrNodeInfo:
		return "NodeInfo"
	case mad.AttrNodeDescription:
		return "NodeDescription"
	case mad.AttrSwitchInfo:
		return "SwitchInfo"
	case mad.AttrPortInfo:
		return "PortInfo"
	case mad.AttrMlnxExtPortInfo:
		return "MlnxExtPortInfo"
	}
	return fmt.Sprintf("attribute %#x", attr)
}

// nodeInfo is recv_node_info.
func (s *scanner) nodeInfo(q *scanSMP) {
	blob := q.data
	guid := binary.BigEndian.Uint64(blob[12:])
	portGUID := portGUIDOf(blob)
	arrival := int(blob[nodeInfoLocalPortOff])
	node := s.f.Node(guid)
	isNew := node == nil
	if isNew {
		nports := int(blob[nodeInfoNumPortsOff])
		node = &Node{
			GUID: guid, Type: int(blob[nodeInfoTypeOff]), NumPorts: nports,
			NodeInfo: blob,
			DRPath:   append([]byte(nil), s.wire(q.route)...),
			Ports:    make([]*Port, nports+1),
		}
		s.f.AddNode(node)
	}
	if arrival > node.NumPorts {
		return // libibnetdisc would write past its port array
	}
	port := node.Ports[arrival]
	if port == nil {
		port = &Port{Node: node, Num: arrival}
		node.Ports[arrival] = port
	}
	port.GUID = portGUID
	if q.rem == nil {
		s.f.From, s.f.FromPort = node, arrival
	} else {
		rp := q.rem.Port(q.remPort)
		if rp == nil {
			return
		}
		relink(port, rp)
	}
	if isNew {
		if s.opt.Load&LoadNodeDesc != 0 {
			s.issue(&scanSMP{attr: mad.AttrNodeDescription, route: q.route, node: node})
		}
		if node.Type == NodeSwitch {
			node.EnhancedSP0 = false
			if s.opt.Load&LoadSwitchInfo != 0 {
				s.issue(&scanSMP{attr: mad.AttrSwitchInfo, route: q.route, node: node})
			}
			s.issue(&scanSMP{attr: mad.AttrPortInfo, mod: 0, route: q.route, node: node})
		}
	}
	if node.Type != NodeSwitch {
		s.issue(&scanSMP{attr: mad.AttrPortInfo, mod: arrival, route: q.route, node: node})
	}
}

// portInfo is recv_port_info (and recv_port0_info).
func (s *scanner) portInfo(q *scanSMP) {
	node, num := q.node, q.mod
	defer func() {
		if num == 0 {
			for p := 1; p <= node.NumPorts; p++ {
				s.issue(&scanSMP{attr: mad.AttrPortInfo, mod: p, route: q.route, node: node})
			}
		}
	}()
	if num > node.NumPorts {
		return
	}
	port := node.Ports[num]
	if port == nil {
		port = &Port{Node: node, Num: num, GUID: portGUIDOf(node.NodeInfo)}
		node.Ports[num] = port
	}
	pi := rawPortInfo(q.data)
	port.PortInfo = q.data
	port.ExtNum = 0
	port.BaseLID, port.LMC = pi.lid(), pi.lmc()
	if num == 0 {
		node.SMALID, node.SMALMC = port.BaseLID, port.LMC
	} else if node.Type == NodeSwitch {
		port.BaseLID, port.LMC = node.SMALID, node.SMALMC
	}
	if s.opt.Load&LoadMlnxExtPortInfo != 0 {
		capPort := pi
		if node.Type == NodeSwitch {
			capPort = nil
			if p0 := node.Ports[0]; p0 != nil {
				capPort = p0.PortInfo
			}
		}
		if wantsMlnxExt(node.NodeInfo, pi, capPort) {
			s.issue(&scanSMP{attr: mad.AttrMlnxExtPortInfo, mod: num, route: q.route, node: node})
			return
		}
	}
	s.follow(q.route, node, port)
}

// follow is the end of libibnetdisc's PortInfo callbacks: a NodeInfo
// request for what is behind the port, if the port is to be followed.
func (s *scanner) follow(route scanRoute, node *Node, port *Port) {
	pi := rawPortInfo(port.PortInfo)
	if port.Num == 0 || pi.physState() != physLinkUp {
		return
	}
	isFrom := node == s.f.From && port.Num == s.f.FromPort
	if !(node.Type == NodeSwitch && port.Num != pi.localPort()) && !isFrom {
		return
	}
	var next scanRoute
	switch {
	case node.Type != NodeSwitch && node == s.f.From && route.hops() > 1:
		// Back up from a CA: one hop back is the node it hangs off.
		if !s.hopsLeft() {
			return
		}
		s.maxDisc++
		next = scanRoute{dr: append([]byte(nil), route.dr[:len(route.dr)-1]...), lid: route.lid}
	case !route.lid || node.Type == NodeSwitch:
		// A directed route cannot go on through a CA reached by LID.
		if !s.hopsLeft() {
			return
		}
		if route.hops() > maxDRPathLen-1 {
			return // libibnetdisc: "add port to DR path failed"
		}
		next = scanRoute{dr: append(append(make([]byte, 0, len(route.dr)+1), route.dr...), byte(port.Num)), lid: route.lid}
		if uint(next.hops()-s.initialHops) > uint(s.maxDisc) {
			s.maxDisc++
		}
	default:
		return
	}
	s.issue(&scanSMP{attr: mad.AttrNodeInfo, route: next, rem: node, remPort: port.Num})
}

// hopsLeft is libibnetdisc's max_hops test before a route changes.
func (s *scanner) hopsLeft() bool {
	return s.opt.MaxHops == 0 || s.maxDisc <= s.opt.MaxHops
}

// RouteToLID returns the directed route that LID routing takes from the
// local port to lid: it follows the linear forwarding tables switch by
// switch, as a LID-routed SMP would. libibnetdisc starts iblinkinfo -S/-G
// by LID; where LID-routed SMPs are not an option (or a LID route cannot be
// continued by a directed one, as under ibsim), this route reaches the
// same node through the same port.
func RouteToLID(ctx context.Context, eng *rpc.Engine, lid uint16, mkey uint64) ([]byte, error) {
	get := func(path []byte, attr uint16, mod uint32) ([]byte, error) {
		req := &rpc.Request{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: mad.NewDRSMP(mad.MethodGet, attr, mod, path)}
		if mkey != 0 {
			binary.BigEndian.PutUint64(req.MAD[24:], mkey)
		}
		reply, err := eng.Do(ctx, req)
		if err != nil {
			return nil, err
		}
		if reply.MAD.Status()&^mad.DirectionBit != 0 {
			return nil, &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: reply.MAD}
		}
		return append([]byte(nil), reply.MAD.SMPData()...), nil
	}
	covers := func(pi rawPortInfo) bool {
		base := pi.lid()
		return base != 0 && lid >= base && int(lid) < int(base)+1<<pi.lmc()
	}
	path := []byte{0}
	for len(path)-1 <= mad.MaxDRHops {
		ni, err := get(path, mad.AttrNodeInfo, 0)
		if err != nil {
			return nil, fmt.Errorf("NodeInfo over %s: %w", mad.FormatDRPath(path), err)
		}
		arrival := int(ni[nodeInfoLocalPortOff])
		if ni[nodeInfoTypeOff] != NodeSwitch {
			pi, err := get(path, mad.AttrPortInfo, uint32(arrival))
			if err != nil {
				return nil, fmt.Errorf("PortInfo over %s: %w", mad.FormatDRPath(path), err)
			}
			if covers(pi) {
				return path, nil
			}
			if len(path) > 1 {
				return nil, fmt.Errorf("LID %d: the route ends at a CA with LID %d", lid, rawPortInfo(pi).lid())
			}
			// The local CA: out through the local port.
			path = append(path, byte(arrival))
			continue
		}
		pi, err := get(path, mad.AttrPortInfo, 0)
		if err != nil {
			return nil, fmt.Errorf("PortInfo over %s: %w", mad.FormatDRPath(path), err)
		}
		if covers(pi) {
			return path, nil
		}
		lft, err := get(path, mad.AttrLinearForwardingTable, uint32(lid/64))
		if err != nil {
			return nil, fmt.Errorf("LinearForwardingTable over %s: %w", mad.FormatDRPath(path), err)
		}
		out := lft[lid%64]
		if out == 0 || out == 0xFF {
			return nil, fmt.Errorf("LID %d: switch %#016x (over %s) has no route to it", lid, binary.BigEndian.Uint64(ni[12:]), mad.FormatDRPath(path))
		}
		path = append(path, out)
	}
	return nil, fmt.Errorf("LID %d: no route within %d hops", lid, mad.MaxDRHops)
}
