package rpc

import (
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// The windows bound what is in flight: at most the global window's
// requests in all (Options.Window, or adapted: see below) and Options.DestWindow to one destination (Options.SADestWindow to the SA). A request that does not
// fit waits in its destination's queue; destinations with a waiting
// request and room of their own take turns for the global slots as they
// free up, so one busy switch cannot starve the others.

// The global window adapts when Options.Window is not set: it starts at
// DefaultWindow and doubles, up to DefaultMaxWindow (and the port's
// MaxInFlight), for as long as the round trips of its MADs are mostly
// fabric latency rather than queueing. With the replies' smallest round
// trip as the unloaded one, window*(1-min/smoothed) MADs of a window wait
// in a queue somewhere (TCP Vegas's estimate). On a simulator that answers
// in microseconds most of the window queues in the simulator, and a wider
// window would only lengthen that queue; where an SMP takes a millisecond
// to come back, 64 in flight leave the fabric idle and the window grows.
// When queueing takes over again it halves, down to where it started. The
// per-destination window does not change: each SMA still gets at most
// DestWindow MADs at once.

// DefaultMaxWindow bounds the adaptive global window.
const DefaultMaxWindow = 256

// windowAdapt is the state of the adaptive window (under Engine.mu).
type windowAdapt struct {
	min, max    int // the window's bounds; equal when it is fixed
	minRTT      time.Duration
	smoothedRTT time.Duration
	samples     int // round trips since the window last changed
}

// windowBounds is the global window an engine starts with and the most
// it may grow to, from the options and the port's limit.
func windowBounds(port umad.Port, window int) (start, most int) {
	start, most = window, window
	if window <= 0 {
		start, most = DefaultWindow, DefaultMaxWindow
	}
	if l, ok := port.(umad.InFlightLimiter); ok {
		start, most = min(start, l.MaxInFlight()), min(most, l.MaxInFlight())
	}
	return start, most
}

// sampleRTT feeds the round trip of c's first attempt, just answered, to
// the adaptive window and resizes the window once per window of replies.
func (e *Engine) sampleRTT(c *call) {
	a := &e.adapt
	if a.min == a.max {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.attempt != 1 { // resent meanwhile: the round trip is unknown
		return
	}
	rtt := time.Since(c.sentAt)
	if a.minRTT == 0 || rtt < a.minRTT {
		a.minRTT = rtt
	}
	if a.smoothedRTT == 0 {
		a.smoothedRTT = rtt
	}
	a.smoothedRTT += (rtt - a.smoothedRTT) / 8
	if a.samples++; a.samples < e.window {
		return
	}
	a.samples = 0
	queued := e.window - int(int64(e.window)*int64(a.minRTT)/int64(a.smoothedRTT))
	switch {
	case queued < e.window/2 && e.window < a.max:
		e.window = min(2*e.window, a.max)
	case queued > e.window*3/4 && e.window > a.min:
		e.window = max(e.window/2, a.min)
	}
}

// Window is the global window now: fixed by Options.Window, or adapted.
func (e *Engine) Window() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.window
}

// destSlot is one destination's window.
type destSlot struct {
	limit    int // its requests in flight at most
	inflight int
	waiting  []*waiter
	ready    bool // in Engine.ready: has waiters and room of its own
}

// waiter is a request waiting for a slot: a blocked Do (granted is closed
// when it may go) or an asynchronous call (sent as soon as it may go).
type waiter struct {
	granted   chan struct{}
	call      *call
	taken     bool // a slot was taken for it
	cancelled bool // a Do that gave up waiting before it got one
}

// destFor returns the window of req's destination, making it the first
// time (the caller holds e.mu). Windows stay once made: a fabric has a
// bounded number of destinations, and making one per MAD costs more than
// keeping them.
func (e *Engine) destFor(req *Request) *destSlot {
	dest := req.dest()
	d := e.dests[dest]
	if d == nil {
		d = &destSlot{limit: e.opt.DestWindow}
		if req.MAD.Class() == mad.ClassSubnAdm {
			d.limit = e.opt.SADestWindow
		}
		e.dests[dest] = d
	}
	return d
}

// tryTake takes a slot for d if one is free and nothing waits for d (the
// caller holds e.mu).
func (e *Engine) tryTake(d *destSlot) bool {
	if e.inflight >= e.window || d.inflight >= d.limit || len(d.waiting) > 0 {
		return false
	}
	e.inflight++
	d.inflight++
	return true
}

// enqueue makes w wait for a slot of d (the caller holds e.mu).
func (e *Engine) enqueue(d *destSlot, w *waiter) {
	d.waiting = append(d.waiting, w)
	e.markReady(d)
}

// markReady queues d for a global slot when it has waiters and room.
func (e *Engine) markReady(d *destSlot) {
	if !d.ready && len(d.waiting) > 0 && d.inflight < d.limit {
		d.ready = true
		e.ready = append(e.ready, d)
	}
}

// releaseLocked gives back a slot of d and hands free slots to waiters,
// returning them; the caller holds e.mu and, once it has let go of it,
// starts each with e.start.
func (e *Engine) releaseLocked(d *destSlot) []*waiter {
	e.inflight--
	d.inflight--
	e.markReady(d)
	var next []*waiter
	for e.inflight < e.window && len(e.ready) > 0 {
		r := e.ready[0]
		e.ready[0] = nil
		e.ready = e.ready[1:]
		r.ready = false
		w := r.popWaiter()
		if w == nil {
			continue
		}
		e.inflight++
		r.inflight++
		w.taken = true
		next = append(next, w)
		e.markReady(r)
	}
	return next
}

// popWaiter takes d's first waiter that has not given up.
func (d *destSlot) popWaiter() *waiter {
	for len(d.waiting) > 0 {
		w := d.waiting[0]
		d.waiting[0] = nil
		d.waiting = d.waiting[1:]
		if !w.cancelled {
			return w
		}
	}
	return nil
}

// release gives back a slot of d and starts the waiters it frees.
func (e *Engine) release(d *destSlot) {
	e.mu.Lock()
	ws := e.releaseLocked(d)
	e.mu.Unlock()
	e.start(ws)
}

// start lets granted waiters go: a Do proceeds, a call is sent.
func (e *Engine) start(ws []*waiter) {
	for _, w := range ws {
		if w.call != nil {
			e.transmit(w.call, 0)
		} else {
			close(w.granted)
		}
	}
}
