package discovery

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
)

// The SA walk: the fabric from the subnet administrator's tables instead
// of SMPs (python-rdma's --sa / --discovery SA). The SA holds what the
// subnet manager learnt on its own sweep: a NodeRecord per end port (its
// LID, NodeInfo as read through that port, NodeDescription), a
// PortInfoRecord per port, a LinkRecord per link end and a
// SwitchInfoRecord per switch. Four GetTable queries (RMPP transfers) give
// the whole fabric; no SMP is sent.
//
// The records are turned into what a walk would have observed, and the
// fabric is built by the same replay of libibnetdisc's walk that an SMP
// discovery goes through, so node order, directed routes, LIDs and links
// come out as an SMP discovery from the same local port would give them.
// What the SA does not have: the Mellanox extended PortInfo (FDR10 shows
// as QDR), and M_Keys, which an untrusted query gets as zeros.

// SAClient is what the SA walk needs of internal/sa's Client: GetTable for
// whole tables and Get for single records (ErrNoRecords-style failures
// are returned as errors; see NodeSA).
type SAClient interface {
	GetTable(ctx context.Context, attrID uint16, record []byte, compMask uint64) ([][]byte, error)
	Get(ctx context.Context, attrID uint16, record []byte, compMask uint64) ([]byte, error)
}

// SALocal says which port the SA walk starts at: the local port's GUID
// and number (0 on a switch).
type SALocal struct {
	PortGUID uint64
	PortNum  int
}

// Field offsets in the SA records (IBA 15.2.5).
const (
	nodeRecNodeInfo = 4  // NodeRecord: LID, reserved, NodeInfo (40 bytes)
	nodeRecDesc     = 44 // then NodeDescription (64 bytes)
	pirPortInfo     = 4  // PortInfoRecord: EndPortLID, PortNum, Options, PortInfo
	sirSwitchInfo   = 4  // SwitchInfoRecord: LID, reserved, SwitchInfo (20 bytes)
	smpDataSize     = 64
)

// saTables are the decoded records of an SA walk.
type saTables struct {
	nodes    [][]byte
	ports    [][]byte
	links    [][]byte
	switches [][]byte
}

// DiscoverSA builds the fabric from the SA's NodeRecord, PortInfoRecord,
// LinkRecord and SwitchInfoRecord tables, in libibnetdisc's order as seen
// from the local port. Records the SA has for nodes the walk cannot reach
// from the local port are left out, as a walk would not find them.
func DiscoverSA(ctx context.Context, c SAClient, local SALocal) (*Fabric, error) {
	var t saTables
	queries := []struct {
		attr uint16
		size int
		dst  *[][]byte
		what string
	}{
		{mad.AttrNodeRecord, mad.NodeRecordSize, &t.nodes, "NodeRecord"},
		{mad.AttrPortInfoRecord, mad.PortInfoRecordSize, &t.ports, "PortInfoRecord"},
		{mad.AttrLinkRecord, mad.LinkRecordSize, &t.links, "LinkRecord"},
		{mad.AttrSwitchInfoRecord, mad.SwitchInfoRecordSize, &t.switches, "SwitchInfoRecord"},
	}
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs, err := c.GetTable(ctx, q.attr, make([]byte, q.size), 0)
			if err != nil {
				errs[i] = fmt.Errorf("SA %s table: %w", q.what, err)
				return
			}
			*q.dst = recs
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	obs, err := t.observations(local)
	if err != nil {
		return nil, err
	}
	f := replay(obs, replayConfig{load: LoadTopology | LoadNodeDesc | LoadSwitchInfo})
	GroupNodes(f)
	return f, nil
}

// pad64 copies b into a 64-byte attribute blob (the SA's NodeInfo and
// SwitchInfo are shorter than the SMP data they came from).
func pad64(b []byte) []byte {
	out := make([]byte, smpDataSize)
	copy(out, b)
	return out
}

// saEndPort is what a LID stands for: a node's port (0 for a switch).
type saEndPort struct {
	guid uint64
	port int
}

// observations turns the tables into what a walk from local would have
// seen.
func (t *saTables) observations(local SALocal) (*observations, error) {
	obs := newObservations()
	byLID := map[uint16]saEndPort{}
	for _, r := range t.nodes {
		if len(r) < mad.NodeRecordSize {
			continue
		}
		lid := binary.BigEndian.Uint16(r)
		ni := pad64(r[nodeRecNodeInfo:nodeRecDesc])
		guid := binary.BigEndian.Uint64(ni[12:])
		typ, arrival := int(ni[nodeInfoTypeOff]), int(ni[nodeInfoLocalPortOff])
		n := obs.nodes[guid]
		if n == nil {
			n = &obsNode{
				guid: guid, typ: typ, nports: int(ni[nodeInfoNumPortsOff]),
				ni:   ni,
				nd:   pad64(r[nodeRecDesc:mad.NodeRecordSize]),
				dest: nodeDest(guid), via: probeDest(guid),
			}
			obs.nodes[guid] = n
		}
		port := 0
		if typ != NodeSwitch {
			port = arrival
			if n.niVia.get(port) == nil {
				n.niVia.set(port, ni)
			}
		}
		byLID[lid] = saEndPort{guid, port}
		if portGUIDOf(ni) == local.PortGUID {
			obs.from, obs.fromPort = guid, port
			if typ != NodeSwitch && local.PortNum > 0 {
				obs.fromPort = local.PortNum
			}
		}
	}
	if obs.from == 0 {
		if len(t.nodes) <= 1 && len(t.links) > 0 {
			return nil, errTablesCut
		}
		return nil, fmt.Errorf("the SA has no NodeRecord of the local port %#016x", local.PortGUID)
	}
	for _, r := range t.ports {
		if len(r) < mad.PortInfoRecordSize {
			continue
		}
		ep, ok := byLID[binary.BigEndian.Uint16(r)]
		if !ok {
			continue
		}
		if n := obs.nodes[ep.guid]; n != nil {
			n.pi.set(int(r[2]), append([]byte(nil), r[pirPortInfo:pirPortInfo+smpDataSize]...))
		}
	}
	for _, r := range t.switches {
		if len(r) < mad.SwitchInfoRecordSize {
			continue
		}
		if ep, ok := byLID[binary.BigEndian.Uint16(r)]; ok {
			if n := obs.nodes[ep.guid]; n != nil && n.isSwitch() {
				n.si = pad64(r[sirSwitchInfo:mad.SwitchInfoRecordSize])
			}
		}
	}
	unknown := 0
	for _, r := range t.links {
		if len(r) < mad.LinkRecordSize {
			continue
		}
		from, ok1 := byLID[binary.BigEndian.Uint16(r)]
		to, ok2 := byLID[binary.BigEndian.Uint16(r[4:])]
		if !ok1 || !ok2 {
			unknown++
			continue
		}
		a, b := portKey{from.guid, int(r[2])}, portKey{to.guid, int(r[3])}
		obs.link(a, b)
	}
	if unknown > 0 && len(t.nodes) <= 1 {
		return nil, errTablesCut
	}
	return obs, nil
}

// errTablesCut is what a GetTable cut to one MAD looks like: links
// between nodes the SA has no NodeRecord of.
var errTablesCut = errors.New("the SA's tables are cut short: it has links but one NodeRecord (an SA without RMPP, such as ibsim's, sends only the first MAD of a table)")

// ErrNodeNotFound is returned by NodeSA when the SA has no node with the
// GUID asked for.
var ErrNodeNotFound = errors.New("no such node")

// NodeSA builds, from single SA records, the fabric around one node: the
// node with its ports and SwitchInfo, and at the far end of each link the
// peer node with the port the link reaches (python-rdma's ibprint* --sa:
// a NodeRecord query by node GUID instead of a discovery). f.From is the
// node. isNoRecords tells a query that found nothing from a failure.
func NodeSA(ctx context.Context, c SAClient, guid uint64, isNoRecords func(error) bool) (*Fabric, error) {
	var q mad.NodeRecord
	q.NodeInfo.NodeGUID = mad.GUID(guid)
	mask, err := mad.CompMask(q.Desc(), "NodeInfo.NodeGUID")
	if err != nil {
		return nil, err
	}
	recs, err := c.GetTable(ctx, mad.AttrNodeRecord, mad.Encode(&q), mask)
	if err != nil {
		return nil, fmt.Errorf("NodeRecord of node %#016x: %w", guid, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("node %#016x: %w", guid, ErrNodeNotFound)
	}
	s := &saSurround{ctx: ctx, c: c, noRecords: isNoRecords, f: NewFabric()}
	n := s.node(recs[0])
	s.f.From = n
	type endPort struct {
		lid  uint16
		port int
	}
	var ports []endPort
	if n.Type == NodeSwitch {
		lid := binary.BigEndian.Uint16(recs[0])
		for p := 0; p <= n.NumPorts; p++ {
			ports = append(ports, endPort{lid, p})
		}
		s.f.FromPort = 0
	} else {
		for _, r := range recs {
			ni := r[nodeRecNodeInfo:]
			ports = append(ports, endPort{binary.BigEndian.Uint16(r), int(ni[nodeInfoLocalPortOff])})
		}
		s.f.FromPort = ports[0].port
	}
	// Port 0 of a switch first: it gives the other ports their LID.
	pis := make([][]byte, len(ports))
	s.parallel(len(ports), func(i int) { pis[i] = s.portInfo(ports[i].lid, ports[i].port) })
	if n.Type == NodeSwitch {
		s.setPort(n, 0, portGUIDOf(n.NodeInfo), pis[0])
		if si := s.switchInfo(ports[0].lid); si != nil {
			n.SwitchInfo = si
			var x mad.SwitchInfo
			n.EnhancedSP0 = x.Unmarshal(si) == nil && x.EnhancedPort0 != 0
		}
		for i := 1; i < len(ports); i++ {
			s.setPort(n, ports[i].port, portGUIDOf(n.NodeInfo), pis[i])
		}
	} else {
		for i, r := range recs {
			s.setPort(n, ports[i].port, portGUIDOf(pad64(r[nodeRecNodeInfo:nodeRecDesc])), pis[i])
		}
	}
	// The links, and what is at their other end.
	type peer struct {
		lid  uint16
		port int
		rec  []byte
		pi   []byte
	}
	peers := make([]*peer, len(ports))
	s.parallel(len(ports), func(i int) {
		p := n.Port(ports[i].port)
		if ports[i].port == 0 || p == nil || rawPortInfo(p.PortInfo).physState() != physLinkUp {
			return
		}
		var lr mad.LinkRecord
		lr.FromLID, lr.FromPort = ports[i].lid, uint8(ports[i].port)
		m, _ := mad.CompMask(lr.Desc(), "FromLID", "FromPort")
		b := s.get(mad.AttrLinkRecord, mad.Encode(&lr), m, fmt.Sprintf("LinkRecord LID %d port %d", lr.FromLID, lr.FromPort))
		if len(b) < mad.LinkRecordSize {
			return
		}
		pr := &peer{lid: binary.BigEndian.Uint16(b[4:]), port: int(b[3])}
		var nr mad.NodeRecord
		nr.LID = pr.lid
		m, _ = mad.CompMask(nr.Desc(), "LID")
		if pr.rec = s.get(mad.AttrNodeRecord, mad.Encode(&nr), m, fmt.Sprintf("NodeRecord LID %d", pr.lid)); len(pr.rec) < mad.NodeRecordSize {
			return
		}
		pr.pi = s.portInfo(pr.lid, pr.port)
		peers[i] = pr
	})
	for i, pr := range peers {
		if pr == nil {
			continue
		}
		pn := s.node(pr.rec)
		ni := pad64(pr.rec[nodeRecNodeInfo:nodeRecDesc])
		rp := s.setPort(pn, pr.port, portGUIDOf(ni), pr.pi)
		if rp == nil {
			continue
		}
		if pn.Type == NodeSwitch {
			pn.SMALID = pr.lid
			rp.BaseLID = pr.lid
		} else if rp.BaseLID == 0 {
			rp.BaseLID = pr.lid
		}
		if lp := n.Port(ports[i].port); lp != nil {
			Link(lp, rp)
		}
	}
	if len(s.errs) > 0 {
		read := false
		for _, p := range n.Ports {
			read = read || (p != nil && p.PortInfo != nil)
		}
		if !read {
			return nil, errors.Join(s.errs...)
		}
	}
	for _, e := range s.errs {
		s.f.Errors = append(s.f.Errors, &WalkError{What: "SA query", Err: e})
	}
	s.f.Loaded = LoadTopology | LoadNodeDesc | LoadSwitchInfo
	GroupNodes(s.f)
	return s.f, nil
}

// saSurround collects NodeSA's records.
type saSurround struct {
	ctx       context.Context
	c         SAClient
	noRecords func(error) bool
	f         *Fabric

	mu   sync.Mutex
	errs []error
}

func (s *saSurround) parallel(n int, do func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(i)
		}()
	}
	wg.Wait()
}

// get returns one record, nil when there is none or the query failed
// (failures are kept).
func (s *saSurround) get(attr uint16, rec []byte, mask uint64, what string) []byte {
	b, err := s.c.Get(s.ctx, attr, rec, mask)
	if err != nil {
		if s.noRecords == nil || !s.noRecords(err) {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("%s: %w", what, err))
			s.mu.Unlock()
		}
		return nil
	}
	return b
}

func (s *saSurround) portInfo(lid uint16, port int) []byte {
	var q mad.PortInfoRecord
	q.EndPortLID, q.PortNum = lid, uint8(port)
	m, _ := mad.CompMask(q.Desc(), "EndPortLID", "PortNum")
	b := s.get(mad.AttrPortInfoRecord, mad.Encode(&q), m, fmt.Sprintf("PortInfoRecord LID %d port %d", lid, port))
	if len(b) < pirPortInfo+smpDataSize {
		return nil
	}
	return append([]byte(nil), b[pirPortInfo:pirPortInfo+smpDataSize]...)
}

func (s *saSurround) switchInfo(lid uint16) []byte {
	var q mad.SwitchInfoRecord
	q.LID = lid
	m, _ := mad.CompMask(q.Desc(), "LID")
	b := s.get(mad.AttrSwitchInfoRecord, mad.Encode(&q), m, fmt.Sprintf("SwitchInfoRecord LID %d", lid))
	if len(b) < mad.SwitchInfoRecordSize {
		return nil
	}
	return pad64(b[sirSwitchInfo:mad.SwitchInfoRecordSize])
}

// node returns the node of a NodeRecord, adding it on first sight.
func (s *saSurround) node(rec []byte) *Node {
	ni := pad64(rec[nodeRecNodeInfo:nodeRecDesc])
	guid := binary.BigEndian.Uint64(ni[12:])
	if n := s.f.Node(guid); n != nil {
		return n
	}
	n := &Node{
		GUID: guid, Type: int(ni[nodeInfoTypeOff]), NumPorts: int(ni[nodeInfoNumPortsOff]),
		NodeInfo: ni, NodeDesc: pad64(rec[nodeRecDesc:mad.NodeRecordSize]),
	}
	return s.f.AddNode(n)
}

// setPort records port num of n with its PortInfo (nil if the SA had
// none); a switch's ports take the port-0 LID, as libibnetdisc's do.
func (s *saSurround) setPort(n *Node, num int, guid uint64, pi []byte) *Port {
	if num > n.NumPorts {
		return nil
	}
	p := n.Ports[num]
	if p == nil {
		p = &Port{Node: n, Num: num}
		n.Ports[num] = p
	}
	p.GUID = guid
	if pi != nil {
		p.PortInfo = pi
		p.BaseLID, p.LMC = rawPortInfo(pi).lid(), rawPortInfo(pi).lmc()
	}
	if n.Type == NodeSwitch {
		if num == 0 && pi != nil {
			n.SMALID, n.SMALMC = p.BaseLID, p.LMC
		}
		p.BaseLID, p.LMC = n.SMALID, n.SMALMC
	}
	return p
}
