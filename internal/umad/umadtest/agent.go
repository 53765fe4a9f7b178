package umadtest

import (
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// Agent is a general services agent of one management class (congestion
// control, a vendor class, ...) answering Get and Set from attributes
// stored by attribute ID and modifier, whatever LID a request was sent to.
// A Get of something not stored is answered with status 0x1C. A Set
// stores its data (the attribute as the agent has it from then on) and is
// answered with it; Sets lists what the Sets carried, so a test can check
// what a command wrote.
type Agent struct {
	class uint8

	mu    sync.Mutex
	attrs map[attrKey][]byte
	fails map[attrKey]uint16
	sets  []*umad.Packet
}

// NewAgent returns an agent of class with nothing stored.
func NewAgent(class uint8) *Agent {
	return &Agent{class: class, attrs: map[attrKey][]byte{}, fails: map[attrKey]uint16{}}
}

// Set stores s as its attribute for modifier mod (AnyMod: any).
func (a *Agent) Set(mod uint32, s mad.Struct) { a.SetData(attrOf(s), mod, mad.Encode(s)) }

// SetData stores data as attribute attr for modifier mod (AnyMod: any).
func (a *Agent) SetData(attr uint16, mod uint32, data []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.attrs[attrKey{attr, mod}] = data
}

// Fail makes the agent answer attr with modifier mod (AnyMod: any) with a
// MAD status; status 0 ends that.
func (a *Agent) Fail(attr uint16, mod uint32, status uint16) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if status == 0 {
		delete(a.fails, attrKey{attr, mod})
		return
	}
	a.fails[attrKey{attr, mod}] = status
}

// Sets returns the Set requests the agent received, in order.
func (a *Agent) Sets() []*umad.Packet {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*umad.Packet(nil), a.sets...)
}

// Answer is a Func answering requests of the agent's class (others are
// handed back undelivered).
func (a *Agent) Answer(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	if len(h) < mad.Size || h.IsResponse() {
		return nil
	}
	if h.Class() != a.class {
		return []*umad.Packet{Undelivered(req)}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := attrKey{h.AttrID(), h.AttrMod()}
	for _, k := range []attrKey{k, {k.attr, AnyMod}} {
		if st, ok := a.fails[k]; ok {
			return []*umad.Packet{Reply(req, st, nil)}
		}
	}
	switch h.Method() {
	case mad.MethodSet:
		a.sets = append(a.sets, copyPacket(req))
		data := append([]byte(nil), h[dataOffset(h):]...)
		a.attrs[k] = data
		return []*umad.Packet{Reply(req, 0, data)}
	case mad.MethodGet:
		for _, k := range []attrKey{k, {k.attr, AnyMod}} {
			if data, ok := a.attrs[k]; ok {
				return []*umad.Packet{Reply(req, 0, data)}
			}
		}
		return []*umad.Packet{Reply(req, StatusInvalidField, nil)}
	}
	return []*umad.Packet{Reply(req, StatusBadMethod, nil)}
}
