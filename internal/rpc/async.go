package rpc

import (
	"context"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// Go sends req and calls done with its reply or error once it has one,
// resending on timeout and failing when ctx ends as Do does. It does not
// wait: a request that does not fit the windows is queued and sent when a
// slot frees.
//
// done runs on the engine's receive goroutine when the reply comes, so a
// walk that issues its next requests from done keeps the exchange on one
// goroutine, with no hand-off per MAD (what makes Do costly when tens of
// thousands of MADs are in flight one after another). A request that
// times out for good is failed from the engine's timer instead, on another
// goroutine: done must be safe for that, must not block, and may call Go.
// Requests of classes that use RMPP are the exception: they run Do on a
// goroutine of their own and done runs there.
//
// Unlike Do, Go does not copy req.MAD: it sets the TID in it, and the
// caller must leave it alone until done is called.
func (e *Engine) Go(ctx context.Context, req *Request, done func(*Reply, error)) {
	if usesRMPP(req.MAD.Class()) || len(req.MAD) > mad.Size {
		go func() { done(e.Do(ctx, req)) }()
		return
	}
	c := &call{ctx: ctx, req: req, done: done, timeout: e.opt.Timeout, retries: e.opt.Retries}
	if req.Timeout > 0 {
		c.timeout = req.Timeout
	}
	if req.Retries != nil {
		c.retries = *req.Retries
	}
	c.msg = req.MAD
	c.tid = e.nextTID.Add(1)
	c.msg.SetTID(uint64(c.tid))

	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		done(nil, e.closedErr())
		return
	}
	c.dest = e.destFor(req)
	e.calls[c.tid] = c
	e.watchLocked(ctx)
	if !e.tryTake(c.dest) {
		c.wait.call = c
		c.waiter = &c.wait
		e.enqueue(c.dest, c.waiter)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	e.transmit(c, 0)
}

// call is one request sent with Go.
type call struct {
	ctx      context.Context
	req      *Request
	msg      mad.Header
	tid      uint32
	dest     *destSlot
	timeout  time.Duration
	retries  int
	attempt  int
	sentAt   time.Time // of the current attempt: its round trip tunes the window
	finished bool
	// expiring is set once a timeout of the call is being handled
	// (claimTimeout): from then on the request may be read for a resend.
	expiring bool
	// waiter is set while the call waits for a slot, or was granted one.
	waiter *waiter
	done   func(*Reply, error)
	// Kept here to save an allocation per call: wait is what waiter
	// points to, pkt the packet of the first attempt.
	wait  waiter
	pkt   umad.Packet
	reply Reply
}

// transmit sends the attempt of c that follows attempt after (0 for the
// first) and arms its timeout. It does nothing when after is no longer
// c's current attempt: the call was answered meanwhile, or the timer and
// an undelivered copy both asked for the resend and the other was first.
func (e *Engine) transmit(c *call, after int) {
	if err := c.ctx.Err(); err != nil {
		e.finish(c, nil, err)
		return
	}
	e.mu.Lock()
	if c.finished || c.attempt != after {
		e.mu.Unlock()
		return
	}
	c.attempt++
	attempt := c.attempt
	c.sentAt = time.Now()
	e.deadlines.push(deadline{at: c.sentAt.Add(c.timeout), call: c, attempt: attempt}, c.timeout)
	e.armLocked()
	e.mu.Unlock()

	e.stats.sent.Add(1)
	if attempt > 1 {
		e.stats.retried.Add(1)
	}
	e.trace(Event{Kind: EventSend, Addr: c.req.Addr, MAD: c.msg, Attempt: attempt})
	// A resend may start while this send still reads its packet, so
	// only the first attempt uses the call's own.
	pkt := &c.pkt
	if attempt == 1 {
		c.pkt = umad.Packet{Addr: c.req.Addr, MAD: c.msg}
	} else {
		pkt = &umad.Packet{Addr: c.req.Addr, MAD: c.msg}
	}
	e.mu.Lock()
	if e.holding {
		e.outbox = append(e.outbox, pkt)
		e.outboxCalls = append(e.outboxCalls, c)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	if err := e.port.Send(pkt); err != nil {
		e.sendFailed(c, err)
	}
}

func (e *Engine) sendFailed(c *call, err error) {
	e.finish(c, nil, fmt.Errorf("send %s: %w", Describe(c.req.Addr, c.msg), err))
}

// holdSends makes transmit collect what it sends until flushSends sends
// it all at once: the receive loop handles a batch of replies, whose
// callbacks send the next requests, and then sends those together.
func (e *Engine) holdSends() {
	if _, ok := e.port.(umad.BatchPort); !ok {
		return
	}
	e.mu.Lock()
	e.holding = true
	e.mu.Unlock()
}

// flushSends sends what transmit collected since holdSends.
func (e *Engine) flushSends() {
	e.mu.Lock()
	pkts, calls := e.outbox, e.outboxCalls
	e.outbox, e.outboxCalls = e.outboxSpare[:0], e.outboxCallsSpare[:0]
	e.outboxSpare, e.outboxCallsSpare = pkts, calls
	e.holding = false
	e.mu.Unlock()
	if len(pkts) == 0 {
		return
	}
	n, err := e.port.(umad.BatchPort).SendBatch(pkts)
	if err != nil {
		for _, c := range calls[n:] {
			e.sendFailed(c, err)
		}
	}
	clear(pkts)
	clear(calls)
}

// finish completes c, frees its slot for the next waiter and calls done.
func (e *Engine) finish(c *call, reply *Reply, err error) {
	e.mu.Lock()
	if c.finished {
		e.mu.Unlock()
		return
	}
	c.finished = true
	delete(e.calls, c.tid)
	if reply != nil {
		reply.Sends = c.attempt // transmit counts an attempt, under this lock, before it sends it
		if c.expiring {
			reply.Sends++ // a timeout being handled reads the request too
		}
		e.answered[c.dest]++ // (noteAnswer, under the lock finish holds)
		e.loss.note(reply.Attempts)
	}
	e.unwatchLocked(c.ctx)
	var next []*waiter
	if c.waiter != nil && !c.waiter.taken {
		c.waiter.cancelled = true // failed while it still waited
	} else {
		next = e.releaseLocked(c.dest)
	}
	e.mu.Unlock()
	e.start(next)
	c.done(reply, err)
}

// claimTimeout tells whether attempt of c is still c's current one, and
// then marks the call as expiring: what follows reads the request (its
// address and MAD, for the trace, the resend or the error) while a reply
// may still end the call, so the reply must not hand the request back
// for reuse (finish counts the expiry as a send).
func (e *Engine) claimTimeout(c *call, attempt int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.finished || c.attempt != attempt {
		return false
	}
	c.expiring = true
	return true
}

// received completes the call a reply (or a request given back
// undelivered) belongs to; attempt is the call's attempt when it came.
func (e *Engine) received(c *call, attempt int, pkt *umad.Packet) {
	if pkt.Status != 0 {
		e.timedOut(c, attempt)
		return
	}
	e.trace(Event{Kind: EventRecv, Addr: pkt.Addr, MAD: pkt.MAD, Attempt: attempt})
	if attempt == 1 {
		e.sampleRTT(c)
	}
	// The reply lives in the call: one allocation less per MAD. Only the
	// receive loop gets here, and only once per call (a second reply
	// finds the call gone from e.calls).
	c.reply = Reply{Addr: pkt.Addr, MAD: pkt.MAD, Attempts: attempt, Length: pkt.ValidLen()}
	e.finish(c, &c.reply, nil)
}

// timedOut resends c or, after its last attempt, fails it, unless attempt
// is over already (answered or resent).
func (e *Engine) timedOut(c *call, attempt int) {
	if !e.claimTimeout(c, attempt) {
		return
	}
	e.trace(Event{Kind: EventTimeout, Addr: c.req.Addr, MAD: c.msg, Attempt: attempt})
	if err := c.ctx.Err(); err != nil {
		e.finish(c, nil, err)
		return
	}
	if !e.moreAttempts(c.dest, attempt, c.retries) {
		e.stats.lost.Add(1)
		e.finish(c, nil, &TimeoutError{What: Describe(c.req.Addr, c.msg), Attempts: attempt, Timeout: c.timeout, Addr: c.req.Addr, Req: c.msg})
		return
	}
	if d := backoff(attempt, c.retries, c.timeout); d > 0 {
		// Only this request waits; the walk goes on in the windows.
		time.AfterFunc(d, func() { e.transmit(c, attempt) })
		return
	}
	e.transmit(c, attempt)
}

// armLocked makes the timeout timer fire by the earliest deadline of a
// call in flight (the caller holds e.mu). Timeouts fire on the timer's
// goroutine, so the receive loop can sleep until a MAD arrives, and a
// call sent from any goroutine is timed from the moment it is sent.
// Deadlines mostly come in order (one timeout for all), so the timer is
// rarely reset.
func (e *Engine) armLocked() {
	if e.closed {
		return
	}
	at, ok := e.deadlines.next()
	if !ok {
		return
	}
	if !e.timerAt.IsZero() && !at.Before(e.timerAt) {
		return // it fires earlier and re-arms then
	}
	e.timerAt = at
	if e.timer == nil {
		e.timer = time.AfterFunc(time.Until(at), e.onTimer)
		return
	}
	e.timer.Reset(time.Until(at))
}

// onTimer times out what is due and re-arms the timer.
func (e *Engine) onTimer() {
	e.mu.Lock()
	e.timerAt = time.Time{}
	e.mu.Unlock()
	e.expire(time.Now())
	e.mu.Lock()
	e.armLocked()
	e.mu.Unlock()
}

// expire handles every call whose attempt has timed out by now.
func (e *Engine) expire(now time.Time) {
	for {
		e.mu.Lock()
		d, due := e.deadlines.popDue(now)
		e.mu.Unlock()
		if !due {
			return
		}
		e.timedOut(d.call, d.attempt)
	}
}

// watchLocked makes the end of ctx fail its calls at once, as Do returns
// at once (the caller holds e.mu). One watch serves all the calls of a
// context; a context that cannot end needs none.
func (e *Engine) watchLocked(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	w := e.watches[ctx]
	if w == nil {
		w = &ctxWatch{}
		w.stop = context.AfterFunc(ctx, func() { e.cancelCalls(ctx) })
		e.watches[ctx] = w
	}
	w.calls++
}

// unwatchLocked drops a finished call's share of its context's watch.
func (e *Engine) unwatchLocked(ctx context.Context) {
	w := e.watches[ctx]
	if w == nil {
		return
	}
	if w.calls--; w.calls == 0 {
		w.stop()
		delete(e.watches, ctx)
	}
}

// ctxWatch is the watch of one context and how many calls it serves.
type ctxWatch struct {
	stop  func() bool
	calls int
}

// cancelCalls fails the calls of a context that has ended.
func (e *Engine) cancelCalls(ctx context.Context) {
	e.mu.Lock()
	var calls []*call
	for _, c := range e.calls {
		if c.ctx == ctx {
			calls = append(calls, c)
		}
	}
	e.mu.Unlock()
	for _, c := range calls {
		e.finish(c, nil, ctx.Err())
	}
}

// failCalls fails every call still waiting or in flight (the port closed).
func (e *Engine) failCalls(err error) {
	e.mu.Lock()
	e.closed = true
	if e.timer != nil {
		e.timer.Stop()
	}
	calls := make([]*call, 0, len(e.calls))
	for _, c := range e.calls {
		calls = append(calls, c)
	}
	e.mu.Unlock()
	for _, c := range calls {
		e.finish(c, nil, err)
	}
}

func (e *Engine) closedErr() error {
	if e.readErr != nil {
		return e.readErr
	}
	return umad.ErrClosed
}
