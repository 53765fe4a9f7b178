package rpc

// The windows bound what is in flight: at most Options.Window requests in
// all and Options.DestWindow to one destination. A request that does not
// fit waits in its destination's queue; destinations with a waiting
// request and room of their own take turns for the global slots as they
// free up, so one busy switch cannot starve the others.

// destSlot is one destination's window.
type destSlot struct {
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

// destFor returns dest's window, making it the first time (the caller
// holds e.mu). Windows stay once made: a fabric has a bounded number of
// destinations, and making one per MAD costs more than keeping them.
func (e *Engine) destFor(dest string) *destSlot {
	d := e.dests[dest]
	if d == nil {
		d = &destSlot{}
		e.dests[dest] = d
	}
	return d
}

// tryTake takes a slot for d if one is free and nothing waits for d (the
// caller holds e.mu).
func (e *Engine) tryTake(d *destSlot) bool {
	if e.inflight >= e.opt.Window || d.inflight >= e.opt.DestWindow || len(d.waiting) > 0 {
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
	if !d.ready && len(d.waiting) > 0 && d.inflight < e.opt.DestWindow {
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
	for e.inflight < e.opt.Window && len(e.ready) > 0 {
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
