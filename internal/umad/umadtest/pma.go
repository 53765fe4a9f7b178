package umadtest

import (
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// PMA is a performance management agent (IBA 16.1) answering PerfMgt Get
// and Set from attributes stored by PortSelect, whatever LID a request
// was sent to. ClassPortInfo has no PortSelect: it is one for all ports.
// Anything not stored is answered with status 0x1C, as ibsim answers a
// PortSelect it does not have.
//
// A Set is answered like a Get, with what is stored: the counters do not
// change, and a test checks what was asked for in the requests it sent.
type PMA struct {
	mu    sync.Mutex
	attrs map[attrKey][]byte
	fails map[attrKey]uint16
}

// NewPMA returns a PMA with nothing stored.
func NewPMA() *PMA { return &PMA{attrs: map[attrKey][]byte{}, fails: map[attrKey]uint16{}} }

// Set stores s as its attribute for PortSelect port (AnyMod: every port).
// s must be an attribute (see SetData for other layouts).
func (p *PMA) Set(port uint32, s mad.Struct) { p.SetData(attrOf(s), port, mad.Encode(s)) }

// SetData stores data as attribute attr for PortSelect port.
func (p *PMA) SetData(attr uint16, port uint32, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attrs[p.key(attr, port)] = data
}

// Fail makes the PMA answer attr for PortSelect port (AnyMod: every port)
// with a MAD status instead of what is stored; status 0 ends that.
func (p *PMA) Fail(attr uint16, port uint32, status uint16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if status == 0 {
		delete(p.fails, p.key(attr, port))
		return
	}
	p.fails[p.key(attr, port)] = status
}

func (p *PMA) key(attr uint16, port uint32) attrKey {
	if attr == mad.AttrClassPortInfo {
		port = 0
	}
	return attrKey{attr, port}
}

// Answer is a Func answering PerfMgt requests (other classes are handed
// back undelivered).
func (p *PMA) Answer(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	if len(h) < mad.Size || h.IsResponse() {
		return nil
	}
	if h.Class() != mad.ClassPerf {
		return []*umad.Packet{Undelivered(req)}
	}
	if m := h.Method(); m != mad.MethodGet && m != mad.MethodSet {
		return []*umad.Packet{Reply(req, StatusBadMethod, nil)}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// PortSelect is the second byte of the PerfMgt attributes that have
	// one (IBA 16.1.3).
	k := p.key(h.AttrID(), uint32(h[mad.SMPDataOffset+1]))
	for _, k := range []attrKey{k, {k.attr, AnyMod}} {
		if st, ok := p.fails[k]; ok {
			return []*umad.Packet{Reply(req, st, nil)}
		}
	}
	for _, k := range []attrKey{k, {k.attr, AnyMod}} {
		if data, ok := p.attrs[k]; ok {
			return []*umad.Packet{Reply(req, 0, data)}
		}
	}
	return []*umad.Packet{Reply(req, StatusInvalidField, nil)}
}

// NodePMAs are one PMA per node of a fabric: a PerfMgt request is
// answered by the PMA of the node the fabric routes it to (by LID), and
// handed back undelivered when it reaches none.
type NodePMAs struct {
	fabric *Fabric
	mu     sync.Mutex
	pmas   map[*Node]*PMA
}

// NewNodePMAs returns the PMAs of f's nodes, each with nothing stored.
func NewNodePMAs(f *Fabric) *NodePMAs { return &NodePMAs{fabric: f, pmas: map[*Node]*PMA{}} }

// Of is n's PMA.
func (ps *NodePMAs) Of(n *Node) *PMA {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.pmas[n]
	if p == nil {
		p = NewPMA()
		ps.pmas[n] = p
	}
	return p
}

// Answer is a Func answering PerfMgt requests with the PMA of the node
// they reach.
func (ps *NodePMAs) Answer(req *umad.Packet) []*umad.Packet {
	n, _ := ps.fabric.Dest(req)
	if n == nil {
		return []*umad.Packet{Undelivered(req)}
	}
	return ps.Of(n).Answer(req)
}
