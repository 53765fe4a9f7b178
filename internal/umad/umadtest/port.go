// Package umadtest is a fake umad transport for tests: a Port (and an
// Opener of such ports) that answers every MAD sent on it with a Func, in
// the spirit of mdlayher/netlink's nltest. With it most of the engine,
// discovery, SA and command behaviour can be tested without ibsim.
//
// A Func sees each request once and returns what comes back: nothing (the
// request is lost), a reply (see Reply), or the request itself with Status
// umad.StatusTimeout (handed back undelivered, as ibsim does when it has no
// route). Ready-made Funcs answer like real agents:
//
//   - Fabric: the SMAs of a small in-memory subnet of switches, CAs and
//     links, by LID routing and by directed route (IBA 14.2.2); a Scripted
//     node answers only what a test gives it;
//   - PMA: a performance management agent holding attributes by PortSelect;
//   - SA: a subnet administrator answering Get and GetTable (in RMPP
//     segments, or as one MAD as under ibsim) from records, and a Set
//     with the record as sent;
//   - Agent: a general services agent of any class (congestion control,
//     vendor classes) answering Get and Set from stored attributes;
//   - Echo: any request answered with its own data.
//
// SimServer serves a Func on ibsim's sockets, so that the C tools under
// umad2sim get the same answers as ibtool, for classes ibsim does not
// simulate.
//
// Classes sends each management class to its own Func; a test wraps a Func
// in its own to lose, change or count what it wants (Fabric.Dest says which
// node a request reaches). Options add random loss, delay and reordering.
//
// A test reads like this (the package example runs it):
//
//	fab := umadtest.NewFabric()
//	host := fab.AddCA(0x100, 1, "host") // the first node is the local one
//	sw := fab.AddSwitch(0x200, 8, "sw")
//	fab.Link(host, 1, sw, 3)
//	pma := umadtest.NewPMA()
//	pma.Set(3, &mad.PortCounters{PortSelect: 3, SymbolErrorCounter: 7})
//	tr := umadtest.NewOpener(umadtest.Classes{
//		mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer,
//		mad.ClassPerf: pma.Answer,
//	}.Answer, umadtest.WithInfo(fab.LocalInfo()))
//	env.Transport = tr // the command under test opens its port there
//	...
//	sent := tr.Requests(mad.ClassPerf) // what the command asked
//
// The package imports only internal/umad and internal/mad, so the tests of
// every layer above them (rpc included) can use it.
package umadtest

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// Func answers one request sent on a Port with the packets that come back
// for it: none for a request that is lost, a packet with Status
// umad.StatusTimeout for one handed back undelivered. A Port calls its Func
// with one request at a time (the calls of all ports of one Opener too),
// so a Func needs no lock of its own; it must not call its Port.
type Func func(req *umad.Packet) []*umad.Packet

// Option configures a Port (or every Port of an Opener).
type Option func(*config)

type config struct {
	info   umad.PortInfo
	delay  time.Duration
	jitter time.Duration
	loss   float64
	seed   uint64
}

// WithInfo sets what the port's Info returns.
func WithInfo(info umad.PortInfo) Option { return func(c *config) { c.info = info } }

// Delay makes every answer arrive d after its request, so that requests
// pile up in flight (see MostInFlight).
func Delay(d time.Duration) Option { return func(c *config) { c.delay = d } }

// Jitter delays each answer by a further random time below max, so that
// answers overtake each other.
func Jitter(max time.Duration) Option { return func(c *config) { c.jitter = max } }

// Loss loses a fraction (0..1) of the requests at random, before the Func
// sees them.
func Loss(fraction float64) Option { return func(c *config) { c.loss = fraction } }

// Seed seeds the randomness of Jitter and Loss (1 by default): a test
// that fails fails again.
func Seed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// shared is what the ports of one Opener share: the lock that serialises
// the Func's calls and the record of what was sent.
type shared struct {
	mu   sync.Mutex
	sent []mad.Header
}

func (s *shared) requests(classes []uint8) []mad.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mad.Header
	for _, m := range s.sent {
		if len(classes) == 0 || containsClass(classes, m.Class()) {
			out = append(out, m)
		}
	}
	return out
}

func containsClass(classes []uint8, c uint8) bool {
	for _, x := range classes {
		if x == c {
			return true
		}
	}
	return false
}

// Port is a fake umad.Port. It is safe for concurrent use.
type Port struct {
	answer Func
	cfg    config
	sh     *shared
	rng    *rand.Rand // guarded by sh.mu

	mu       sync.Mutex // guards what follows
	info     umad.PortInfo
	queue    []*umad.Packet // arrived, not yet read
	inFlight map[uint16]int // by destination LID
	total    int
	mostAll  int
	mostOne  int

	ready  chan struct{} // a packet was queued
	closed chan struct{}
	once   sync.Once
}

var _ umad.Port = (*Port)(nil)

// NewPort returns a port whose requests answer answers.
func NewPort(answer Func, opts ...Option) *Port {
	return newPort(answer, &shared{}, opts)
}

func newPort(answer Func, sh *shared, opts []Option) *Port {
	cfg := config{seed: 1}
	for _, o := range opts {
		o(&cfg)
	}
	return &Port{answer: answer, cfg: cfg, sh: sh, rng: rand.New(rand.NewPCG(cfg.seed, cfg.seed)),
		info: cfg.info, inFlight: map[uint16]int{}, ready: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Send hands a copy of p to the Func and queues what it returns for Recv,
// at once or after the delay the options ask for.
func (p *Port) Send(pkt *umad.Packet) error {
	select {
	case <-p.closed:
		return umad.ErrClosed
	default:
	}
	// The Func gets its own copy of the MAD; the GRH is the sender's, so
	// that a test can see whether a sender reuses one it should not.
	req := &umad.Packet{Addr: pkt.Addr, Status: pkt.Status, MAD: append([]byte(nil), pkt.MAD...), Length: pkt.Length}
	p.sh.mu.Lock()
	p.sh.sent = append(p.sh.sent, append(mad.Header(nil), req.MAD...))
	var out []*umad.Packet
	if p.cfg.loss == 0 || p.rng.Float64() >= p.cfg.loss {
		out = p.answer(req)
	}
	delays := make([]time.Duration, len(out))
	for i := range out {
		delays[i] = p.cfg.delay
		if p.cfg.jitter > 0 {
			delays[i] += time.Duration(p.rng.Int64N(int64(p.cfg.jitter)))
		}
	}
	p.sh.mu.Unlock()

	if len(out) == 0 {
		return nil
	}
	dest := req.Addr.LID
	p.mu.Lock()
	p.inFlight[dest]++
	p.total++
	p.mostAll = max(p.mostAll, p.total)
	p.mostOne = max(p.mostOne, p.inFlight[dest])
	p.mu.Unlock()
	var landed sync.Once // the request leaves the air with its first answer
	for i, r := range out {
		deliver := func() {
			landed.Do(func() {
				p.mu.Lock()
				p.inFlight[dest]--
				p.total--
				p.mu.Unlock()
			})
			p.Deliver(r)
		}
		if delays[i] > 0 {
			time.AfterFunc(delays[i], deliver)
		} else {
			deliver()
		}
	}
	return nil
}

// Deliver queues packets for Recv as if they had arrived: unsolicited
// requests for a server, or stray replies.
func (p *Port) Deliver(pkts ...*umad.Packet) {
	p.mu.Lock()
	p.queue = append(p.queue, pkts...)
	p.mu.Unlock()
	p.signal()
}

func (p *Port) signal() {
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// Recv returns the next packet that arrived.
func (p *Port) Recv(deadline time.Time) (*umad.Packet, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case <-p.closed:
			return nil, umad.ErrClosed
		default:
		}
		p.mu.Lock()
		if len(p.queue) > 0 {
			pkt := p.queue[0]
			p.queue = p.queue[1:]
			more := len(p.queue) > 0
			p.mu.Unlock()
			if more {
				p.signal() // for another reader
			}
			return pkt, nil
		}
		p.mu.Unlock()
		select {
		case <-p.ready:
		case <-p.closed:
			return nil, umad.ErrClosed
		case <-timer.C:
			return nil, umad.ErrTimeout
		}
	}
}

// Info returns the port's umad.PortInfo (WithInfo, SetInfo).
func (p *Port) Info() (umad.PortInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.info, nil
}

// SetInfo changes what Info returns.
func (p *Port) SetInfo(info umad.PortInfo) {
	p.mu.Lock()
	p.info = info
	p.mu.Unlock()
}

// Close makes Send and Recv fail with umad.ErrClosed.
func (p *Port) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

// Requests returns copies of the MADs sent on the port, in order (the
// requests, and a server's responses), only those of the given management
// classes if any are given.
func (p *Port) Requests(classes ...uint8) []mad.Header { return p.sh.requests(classes) }

// MostInFlight says how many requests were ever waiting for their answers
// at once: in all, and to one destination LID. A request is in flight
// from Send to its first answer's arrival; a lost one never is. Without a
// Delay or Jitter answers arrive within Send.
func (p *Port) MostInFlight() (all, oneDest int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mostAll, p.mostOne
}

func copyPacket(p *umad.Packet) *umad.Packet {
	c := &umad.Packet{Addr: p.Addr, Status: p.Status, MAD: append([]byte(nil), p.MAD...), Length: p.Length}
	if p.Addr.GRH != nil {
		g := *p.Addr.GRH
		c.Addr.GRH = &g
	}
	return c
}

// Opener is a fake umad.Opener. Each Open returns a new Port answering
// through the Opener's Func, with its options; all of them share one
// record of what was sent. The zero Opener lists LocalCAs and opens
// nothing.
type Opener struct {
	// LocalCAs and CAsErr are what CAs returns.
	LocalCAs []umad.CA
	CAsErr   error

	answer Func
	opts   []Option
	sh     shared
	mu     sync.Mutex
	opened []*Port
}

var _ umad.Opener = (*Opener)(nil)

// NewOpener returns an Opener whose ports answer through answer.
func NewOpener(answer Func, opts ...Option) *Opener {
	return &Opener{answer: answer, opts: opts}
}

// Name is "umadtest".
func (o *Opener) Name() string { return "umadtest" }

// CAs returns LocalCAs and CAsErr.
func (o *Opener) CAs() ([]umad.CA, error) { return o.LocalCAs, o.CAsErr }

// ErrNoPorts is what Open returns on an Opener without a Func.
var ErrNoPorts = errors.New("umadtest: this transport has no ports")

// Open returns a new Port, whatever CA and port are asked for.
func (o *Opener) Open(ca string, port int) (umad.Port, error) {
	if o.answer == nil {
		return nil, ErrNoPorts
	}
	p := newPort(o.answer, &o.sh, o.opts)
	o.mu.Lock()
	o.opened = append(o.opened, p)
	o.mu.Unlock()
	return p, nil
}

// Requests returns the MADs sent on all the ports the Opener opened, in
// order, only those of the given classes if any are given.
func (o *Opener) Requests(classes ...uint8) []mad.Header { return o.sh.requests(classes) }

// Ports returns the ports opened so far.
func (o *Opener) Ports() []*Port {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*Port(nil), o.opened...)
}
