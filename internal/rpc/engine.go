// Package rpc is the MAD engine: it sends requests on a local port, matches
// replies by transaction ID, applies timeouts and retries, and bounds how
// many requests are in flight, in total and per destination.
//
// Two ways to send share the windows: Do waits for the reply and is safe
// to call from many goroutines at once; Go returns at once and calls back
// from the receive loop, for walks of thousands of requests that send the
// next ones from the callbacks (async.go).
package rpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// Defaults, as libibmad has them (1000 ms, 3 attempts), and windows that
// are safe for real switch SMAs: an SMA is a small firmware agent that drops
// MADs when flooded, so no destination gets more than a few at once. The
// global window starts at 64: replies may wait up to gatherPause for the
// receive loop, and the agents need requests queued meanwhile (on the
// 2000-node simulated fabric 64 walked 3-6% faster than 32, alternated
// runs; 48 as fast as 64).
//
// The SA is no firmware agent: it is the subnet manager's, on a host,
// serving the whole subnet's queries from a queue (OpenSM's SA hands them
// to a pool of threads), so it gets DefaultSADestWindow at once. With 4,
// ibchecknet's 2,000 PathRecords on the 2000-node simulated fabric took
// 0.3 s, each waiting for one of 4 round trips through the SM.
const (
	DefaultTimeout      = 1000 * time.Millisecond
	DefaultRetries      = 2 // resends after the first attempt: 3 sends in all
	DefaultWindow       = 64
	DefaultDestWindow   = 4
	DefaultSADestWindow = 16
)

// Options configure an Engine. Zero values take the defaults.
type Options struct {
	Timeout time.Duration
	Retries int // resends; negative means none
	// MaxRetries bounds the extra resends a request with Retries > 0 may
	// get on a lossy fabric (retry.go); 0 means 4*(Retries+1)-1.
	MaxRetries int
	Window     int // requests in flight in total; 0 adapts (window.go)
	DestWindow int // requests in flight to one destination
	// SADestWindow is DestWindow for the SA (SubnAdm requests).
	SADestWindow int
	// Trace, if set, is called for every send, receive, timeout and
	// unmatched MAD (the -d/-dd output hangs off this one hook).
	Trace func(Event)
}

// Request is one MAD to send. The engine assigns the transaction ID.
type Request struct {
	Addr umad.Address
	MAD  mad.Header
	// Dest names the destination for the per-destination window; empty
	// means the address's LID (or "DR" plus the path for DR SMPs).
	Dest    string
	Timeout time.Duration // 0: the engine's
	Retries *int          // nil: the engine's
	// BorrowReply (Go only) says that done keeps nothing of the reply
	// once it returns, not its MAD either: the transport may then reuse
	// the packet's memory for the next one (umad.Recycler).
	BorrowReply bool
}

// Reply is what came back for a request.
type Reply struct {
	Addr     umad.Address
	MAD      mad.Header
	Attempts int
	// Sends is how many attempts had gone out when the call ended (Go
	// only), a timeout being handled counting as one: more than Attempts
	// when a resend left, or was about to, before the reply to an earlier
	// attempt came. While only one did, the request and its MAD are no
	// longer read once done is called, and the caller may reuse them.
	Sends int
	// Length is the number of bytes of MAD the responder filled (see
	// umad.Packet.Length); the rest is zero padding.
	Length int
}

// Engine is the MAD engine of one local port.
type Engine struct {
	port umad.Port
	opt  Options

	mu       sync.Mutex
	pending  map[uint32]chan *umad.Packet  // Do's requests by TID
	calls    map[uint32]*call              // Go's requests by TID
	watches  map[context.Context]*ctxWatch // contexts of Go's requests
	handlers map[uint8]Handler
	closed   bool

	// The windows (window.go) and the timeouts of Go's requests.
	window    int // the global window now
	adapt     windowAdapt
	inflight  int
	dests     map[string]*destSlot
	ready     []*destSlot
	deadlines deadlines
	timer     *time.Timer
	timerAt   time.Time // when timer fires; zero when it is not armed

	// Sends collected while the receive loop handles a batch (async.go).
	holding                       bool
	outbox, outboxSpare           []*umad.Packet
	outboxCalls, outboxCallsSpare []*call

	nextTID  atomic.Uint32
	stats    counters
	loss     lossCounts
	answered map[*destSlot]uint32 // replies per destination (retry.go)
	done     chan struct{}
	readErr  error
}

// New starts an engine on port. Close stops it and closes the port.
func New(port umad.Port, opt Options) *Engine {
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Retries == 0 {
		opt.Retries = DefaultRetries
	} else if opt.Retries < 0 {
		opt.Retries = 0
	}
	window, maxWindow := windowBounds(port, opt.Window)
	if opt.DestWindow <= 0 {
		opt.DestWindow = DefaultDestWindow
	}
	opt.DestWindow = min(opt.DestWindow, window)
	if opt.SADestWindow <= 0 {
		opt.SADestWindow = DefaultSADestWindow
	}
	opt.SADestWindow = min(opt.SADestWindow, window)
	e := &Engine{
		window:   window,
		adapt:    windowAdapt{min: window, max: maxWindow},
		port:     port,
		opt:      opt,
		pending:  map[uint32]chan *umad.Packet{},
		calls:    map[uint32]*call{},
		watches:  map[context.Context]*ctxWatch{},
		dests:    map[string]*destSlot{},
		handlers: map[uint8]Handler{},
		answered: map[*destSlot]uint32{},
		done:     make(chan struct{}),
	}
	e.nextTID.Store(rand.Uint32())
	go e.readLoop()
	return e
}

// Port returns the engine's local port.
func (e *Engine) Port() umad.Port { return e.port }

// MaxWindow is the most requests the engine keeps in flight at once: its
// global window's upper bound.
func (e *Engine) MaxWindow() int { return e.adapt.max }

// Close stops the engine and closes its port.
func (e *Engine) Close() error {
	err := e.port.Close()
	<-e.done
	return err
}

// Do sends req and waits for its reply, resending on timeout. A reply with
// a non-zero MAD status is returned as a reply, not an error: callers decide
// what a status means.
func (e *Engine) Do(ctx context.Context, req *Request) (*Reply, error) {
	slot, err := e.acquire(ctx, req)
	if err != nil {
		return nil, err
	}
	defer e.release(slot)

	timeout, retries := e.opt.Timeout, e.opt.Retries
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	if req.Retries != nil {
		retries = *req.Retries
	}
	msg := append(mad.Header(nil), req.MAD...)
	tid := e.nextTID.Add(1)
	msg.SetTID(uint64(tid))
	// Room for a window of RMPP segments besides the one reply.
	ch := make(chan *umad.Packet, replyBuffer(msg))
	e.mu.Lock()
	e.pending[tid] = ch
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.pending, tid)
		e.mu.Unlock()
	}()

	if len(msg) > mad.Size {
		// A request longer than one MAD goes out segmented; its reply
		// follows on the same TID.
		if err := e.sendSegmented(ctx, req, msg, ch, timeout, retries); err != nil {
			return nil, err
		}
		return e.awaitReply(ctx, req, msg, ch, timeout, 1)
	}
	for attempt := 1; ; attempt++ {
		e.stats.sent.Add(1)
		if attempt > 1 {
			e.stats.retried.Add(1)
		}
		e.trace(Event{Kind: EventSend, Addr: req.Addr, MAD: msg, Attempt: attempt})
		if err := e.port.Send(&umad.Packet{Addr: req.Addr, MAD: msg}); err != nil {
			return nil, fmt.Errorf("send %s: %w", Describe(req.Addr, msg), err)
		}
		reply, err := e.awaitReply(ctx, req, msg, ch, timeout, attempt)
		if reply != nil {
			e.noteAnswer(slot, attempt)
		}
		if reply != nil || err != nil {
			return reply, err
		}
		e.trace(Event{Kind: EventTimeout, Addr: req.Addr, MAD: msg, Attempt: attempt})
		if !e.moreAttempts(slot, attempt, retries) {
			e.stats.lost.Add(1)
			return nil, &TimeoutError{What: Describe(req.Addr, msg), Attempts: attempt, Timeout: timeout, Addr: req.Addr, Req: msg}
		}
		if d := backoff(attempt, retries, timeout); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
}

// replyBuffer is how many packets a request's reply can be: a window of
// RMPP segments for the classes that use RMPP, one otherwise (a late
// duplicate is dropped, not queued).
func replyBuffer(msg mad.Header) int {
	if usesRMPP(msg.Class()) {
		return rmppWindow + 1
	}
	return 1
}

// awaitReply waits for the reply to one attempt, reassembling it when it
// comes segmented. It returns nil, nil when the attempt timed out.
func (e *Engine) awaitReply(ctx context.Context, req *Request, msg []byte, ch chan *umad.Packet, timeout time.Duration, attempt int) (*Reply, error) {
	for {
		pkt, err := e.wait(ctx, ch, timeout)
		if err != nil || pkt == nil || pkt.Status != 0 {
			return nil, err
		}
		if usesRMPP(msg[1]) && readRMPP(pkt.MAD).typ == rmppTypeAck && len(msg) == mad.Size {
			continue // a stray ACK of an earlier transfer
		}
		e.trace(Event{Kind: EventRecv, Addr: pkt.Addr, MAD: pkt.MAD, Attempt: attempt})
		if isSegmented(pkt.MAD) {
			if pkt, err = e.reassemble(ctx, pkt, ch, timeout, e.opt.Retries); err != nil {
				return nil, fmt.Errorf("%s: %w", Describe(req.Addr, msg), err)
			}
		}
		return &Reply{Addr: pkt.Addr, MAD: pkt.MAD, Attempts: attempt, Length: pkt.ValidLen()}, nil
	}
}

// wait returns the packet matched to ch, nil on timeout, or the context's
// error. A packet with a non-zero status is a request the transport gave
// back undelivered (ibsim does that at once when it has no route): it
// counts as a timed-out attempt.
func (e *Engine) wait(ctx context.Context, ch chan *umad.Packet, timeout time.Duration) (*umad.Packet, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case pkt := <-ch:
		return pkt, nil
	case <-timer.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-e.done:
		if e.readErr != nil {
			return nil, e.readErr
		}
		return nil, umad.ErrClosed
	}
}

func (r *Request) dest() string {
	if r.Dest != "" {
		return r.Dest
	}
	// Keys are built without fmt: this runs for every MAD.
	if r.Addr.LID == umad.PermissiveLID && r.MAD.Class() == mad.ClassSubnDR {
		return "D" + string(r.MAD.InitialPath())
	}
	if r.Addr.LID == 0 && r.Addr.GRH != nil { // RoCE: GID only
		return "G" + string(r.Addr.GRH.GID[:])
	}
	return string([]byte{'L', byte(r.Addr.LID >> 8), byte(r.Addr.LID)})
}

// acquire takes a slot in the global window and in req's destination's
// window, waiting for one when they are full.
func (e *Engine) acquire(ctx context.Context, req *Request) (*destSlot, error) {
	e.mu.Lock()
	d := e.destFor(req)
	if e.tryTake(d) {
		e.mu.Unlock()
		return d, nil
	}
	w := &waiter{granted: make(chan struct{})}
	e.enqueue(d, w)
	e.mu.Unlock()
	select {
	case <-w.granted:
		return d, nil
	case <-ctx.Done():
		e.mu.Lock()
		taken := w.taken
		w.cancelled = !taken
		e.mu.Unlock()
		if taken {
			e.release(d)
		}
		return nil, ctx.Err()
	}
}

// readLoop hands every received MAD to the request waiting for its TID.
// Replies and requests given back undelivered are matched on the low 32
// bits of the TID: transports overwrite the high bits.
func (e *Engine) readLoop() {
	defer close(e.done)
	defer func() { e.failCalls(e.closedErr()) }()
	batch, _ := e.port.(umad.BatchPort)
	var pkts [16]*umad.Packet
	for {
		// No deadline to speak of: Go's timeouts have a timer of their
		// own, Do's a select.
		deadline := time.Now().Add(time.Hour)
		var n int
		var err error
		if batch != nil {
			n, err = batch.RecvBatch(deadline, pkts[:])
		} else {
			pkts[0], err = e.port.Recv(deadline)
			n = 1
		}
		if errors.Is(err, umad.ErrTimeout) {
			continue
		}
		if err != nil {
			if !errors.Is(err, umad.ErrClosed) {
				e.readErr = fmt.Errorf("receive: %w", err)
			}
			return
		}
		e.holdSends()
		for i := range n {
			e.handle(pkts[i])
			pkts[i] = nil
		}
		e.flushSends()
		if batch != nil {
			e.gather(n)
		}
	}
}

// A receive loop on a port that moves batches (the simulator's) pauses
// for gatherPause after a batch of fewer than gatherBelow replies when
// at least gatherInFlight requests are out: the replies that come
// meanwhile are taken by one recvmmsg, and the requests their callbacks
// send leave in one sendmmsg. ibsim answers one MAD per wake-up, so
// without the pause the loop took each reply alone and sent each next
// request alone: an S2000 walk made 20,551 recvmmsg and 14,229 sendmmsg
// calls for its 19,600 MADs, about 2,100 of each with the pause, and used
// a fifth less CPU in the same time (more where the tools share the CPUs
// with a relay). With that many requests out, the simulator has work
// queued for longer than the pause.
const (
	gatherPause    = 100 * time.Microsecond
	gatherBelow    = 8
	gatherInFlight = 24
)

// gather pauses the receive loop, as above, after a batch of n replies.
// The pause is a plain nanosleep that keeps the loop's thread, as the
// next receive will: time.Sleep would park the goroutine and wake it
// through the runtime's poller, the hand-off the pause is there to save.
func (e *Engine) gather(n int) {
	e.mu.Lock()
	pause := gatherPauseFor(n, e.inflight)
	e.mu.Unlock()
	if pause == 0 {
		return
	}
	ts := unix.NsecToTimespec(pause.Nanoseconds())
	for { // a signal (the runtime's preemption) cuts a sleep short
		_, _, errno := unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), uintptr(unsafe.Pointer(&ts)), 0)
		if errno != unix.EINTR {
			return
		}
	}
}

// gatherPauseFor is the pause after a batch of n replies with inflight
// requests out.
func gatherPauseFor(n, inflight int) time.Duration {
	if n >= gatherBelow || inflight < gatherInFlight {
		return 0
	}
	return gatherPause
}

// handle passes one received MAD to whatever waits for it.
func (e *Engine) handle(pkt *umad.Packet) {
	if len(pkt.MAD) < 24 {
		return
	}
	h := mad.Header(pkt.MAD)
	if !h.IsResponse() && pkt.Status == 0 {
		e.dispatch(pkt)
		return
	}
	e.mu.Lock()
	ch := e.pending[h.TID32()]
	c := e.calls[h.TID32()]
	var attempt int
	if c != nil {
		attempt = c.attempt
	}
	e.mu.Unlock()
	switch {
	case c != nil && attempt > 0: // (0: still waiting for a slot, not sent)
		borrowed := c.req.BorrowReply // before done, which may reuse the request
		e.received(c, attempt, pkt)
		if r, ok := e.port.(umad.Recycler); ok && borrowed {
			r.Recycle(pkt)
		}
	case ch != nil:
		select {
		case ch <- pkt:
		default: // a late duplicate: the waiter already has one
		}
	default:
		e.stats.unmatched.Add(1)
		e.trace(Event{Kind: EventUnmatched, Addr: pkt.Addr, MAD: h})
	}
}

// Handler answers an unsolicited request: it returns the reply MAD, which
// the engine sends back to the requester, or nil to send nothing.
type Handler func(req *umad.Packet) mad.Header

// Serve makes the engine a MAD server for a class: requests of that class
// with one of methods go to h (ibping -S, ibsysstat -S).
func (e *Engine) Serve(class, version uint8, oui uint32, methods []uint8, h Handler) error {
	if s, ok := e.port.(umad.Server); ok {
		if err := s.Serve(class, version, oui, methods...); err != nil {
			return err
		}
	}
	e.mu.Lock()
	e.handlers[class] = h
	e.mu.Unlock()
	return nil
}

// dispatch hands an unsolicited request to its class's handler and sends
// the reply to where the request came from, with the same TID.
func (e *Engine) dispatch(pkt *umad.Packet) {
	h := mad.Header(pkt.MAD)
	e.trace(Event{Kind: EventUnsolicited, Addr: pkt.Addr, MAD: h})
	e.mu.Lock()
	handler := e.handlers[h.Class()]
	e.mu.Unlock()
	if handler == nil {
		return
	}
	go func() {
		reply := handler(pkt)
		if reply == nil {
			return
		}
		to := pkt.Addr
		// The reply takes the request's GRH back when it had one (a
		// response to a request that came with a GRH carries one too),
		// and on RoCE it must, since there are no LIDs. The transport
		// gives the GRH as a send address: the requester's GID, the
		// local GID index the request arrived on, its hop limit, class
		// and flow label.
		if g := pkt.Addr.GRH; g != nil {
			grh := *g
			to.GRH = &grh
		}
		if to.QP != 0 {
			to.QKey = umad.QP1QKey
		}
		e.trace(Event{Kind: EventSend, Addr: to, MAD: reply})
		_ = e.port.Send(&umad.Packet{Addr: to, MAD: reply})
	}()
}

func (e *Engine) trace(ev Event) {
	if e.opt.Trace != nil {
		e.opt.Trace(ev)
	}
}

// TimeoutError says a request got no reply after all its attempts.
type TimeoutError struct {
	What     string
	Attempts int
	Timeout  time.Duration
	Addr     umad.Address
	Req      mad.Header
}

func (t *TimeoutError) Error() string {
	tries := "attempts"
	if t.Attempts == 1 {
		tries = "attempt"
	}
	return fmt.Sprintf("no reply to %s (%d %s, timeout %v)", t.What, t.Attempts, tries, t.Timeout)
}

// Describe names a MAD and its destination for messages and traces.
func Describe(a umad.Address, h mad.Header) string {
	to := fmt.Sprintf("LID %d", a.LID)
	if a.LID == 0 && a.GRH != nil { // RoCE: GID only
		to = fmt.Sprint("GID ", mad.GID(a.GRH.GID))
	}
	if h.Class() == mad.ClassSubnDR {
		to = "DR path " + mad.FormatDRPath(h.InitialPath())
	}
	return fmt.Sprintf("%s(%s) %s", mad.MethodName(h.Class(), h.Method()), mad.AttrName(h.Class(), h.AttrID()), to) +
		fmt.Sprintf(" mod 0x%x", h.AttrMod())
}
