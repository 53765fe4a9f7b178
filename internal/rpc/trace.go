package rpc

import (
	"sync/atomic"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// EventKind says what happened to a MAD.
type EventKind int

const (
	EventSend        EventKind = iota // a request went out
	EventRecv                         // its reply came back
	EventTimeout                      // an attempt got no reply (or came back undelivered)
	EventUnmatched                    // a reply matched no outstanding request and was dropped
	EventUnsolicited                  // a request arrived that nothing handles
)

func (k EventKind) String() string {
	return [...]string{"send", "recv", "timeout", "unmatched", "unsolicited"}[k]
}

// Event is one step of a MAD's life, reported to Options.Trace.
type Event struct {
	Kind    EventKind
	Addr    umad.Address
	MAD     mad.Header
	Attempt int
}

// Stats counts what the engine did.
type Stats struct {
	Sent, Retried, Lost, Unmatched uint64
}

type counters struct {
	sent, retried, lost, unmatched atomic.Uint64
}

// Stats returns the engine's counters so far.
func (e *Engine) Stats() Stats {
	return Stats{
		Sent:      e.stats.sent.Load(),
		Retried:   e.stats.retried.Load(),
		Lost:      e.stats.lost.Load(),
		Unmatched: e.stats.unmatched.Load(),
	}
}
