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
	attrs map[attrKey]answer
}

// NewPMA returns a PMA with nothing stored.
func NewPMA() *PMA { return &PMA{attrs: map[attrKey]answer{}} }

// Set stores s as its attribute for PortSelect port (AnyMod: every port).
func (p *PMA) Set(port uint32, s mad.Struct) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attrs[p.key(s.Desc().AttrID, port)] = answer{data: mad.Encode(s)}
}

// Fail makes the PMA answer attr for PortSelect port (AnyMod: every port)
// with a MAD status.
func (p *PMA) Fail(attr uint16, port uint32, status uint16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attrs[p.key(attr, port)] = answer{status: status}
}

// Clear forgets what Set and Fail stored for attr and port.
func (p *PMA) Clear(attr uint16, port uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.attrs, p.key(attr, port))
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
	a, ok := p.attrs[k]
	if !ok {
		a, ok = p.attrs[attrKey{k.attr, AnyMod}]
	}
	if !ok {
		return []*umad.Packet{Reply(req, StatusInvalidField, nil)}
	}
	return []*umad.Packet{Reply(req, a.status, a.data)}
}
