package discovery

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// Mode says how the walk routes the SMPs it sends to nodes it knows.
type Mode int

const (
	// ModeAuto is ModeLID when the local port is Active with a LID, else
	// ModeDR (python-rdma's default).
	ModeAuto Mode = iota
	// ModeLID reaches a node by LID once its LID is known; new nodes are
	// always found over directed routes.
	ModeLID
	// ModeDR uses directed routes only (what libibnetdisc does).
	ModeDR
)

func (m Mode) String() string {
	switch m {
	case ModeLID:
		return "LID"
	case ModeDR:
		return "DR"
	}
	return "auto"
}

// Options configure Discover.
type Options struct {
	// MaxHops bounds the directed routes: nodes further than that from the
	// local port are not queried. 0 means the IBA limit of 63.
	MaxHops int
	// Mode chooses LID or directed routing (ModeAuto by default).
	Mode Mode
	// Load says what to fetch; 0 means LoadAll. Without MlnxExtPortInfo
	// the Mellanox extension is never asked for (ibdiag.conf MLX_EPI=false).
	Load Load
	// Fabric, when set, is a fabric to complete instead of starting over:
	// only what it does not have yet (Fabric.Has) is fetched, and the
	// fabric is returned updated. A fabric without the topology is
	// discovered afresh.
	Fabric *Fabric
	// MKey is put in every SMP.
	MKey uint64
	// Progress, if set, is called from time to time during the walk (and
	// once at its end) with the counts so far, e.g. for a status line.
	Progress func(Progress)
	// Found, if set, is called for every NodeInfo reply in libibnetdisc's
	// order when the walk's result is put in that order (ibnetdiscover -s).
	Found func(FoundEvent)
	// NoChassis skips the chassis grouping that libibnetdisc does after
	// every walk (GroupNodes), for a caller that uses neither chassis nor
	// external port numbers (Port.ExtNum stays 0): on a big fabric it
	// costs as much as a few thousand MADs.
	NoChassis bool
}

// Progress counts what a walk has done so far.
type Progress struct {
	Nodes, Switches int
	Ports           int // PortInfo read
	MADs            int // SMPs answered or given up
	Errors          int
	Done            bool
}

// progressInterval is how often Options.Progress is called.
const progressInterval = 200 * time.Millisecond

// ErrNoLocalNode is returned when not even the local node answers.
var ErrNoLocalNode = errors.New("cannot read the local node")

// Discover walks the fabric from the engine's local port with SMPs: every
// node's NodeInfo, NodeDescription and PortInfo (a switch's port 0 first,
// then its other ports), SwitchInfo of switches, following every link
// that is up. Many SMPs are in flight at once (the engine bounds how many,
// in total and per node); new nodes are reached over directed routes, and
// nodes whose LID is known by LID in LID mode.
//
// Whatever does not answer is recorded in Fabric.Errors and the walk goes
// on. The result is then put in the order libibnetdisc's own walk would
// have produced (see replay.go), so that every output derived from it
// matches infiniband-diags line for line. Discover fails only when the
// local node cannot be read or ctx ends.
func Discover(ctx context.Context, eng *rpc.Engine, opts Options) (*Fabric, error) {
	if opts.Load == 0 {
		opts.Load = LoadAll
	}
	if opts.Load&LoadTopology != 0 {
		opts.Load |= LoadTopology
	}
	w := newWalker(ctx, eng, opts)
	if f := opts.Fabric; f != nil && f.Has(LoadTopology) {
		return w.complete(f)
	}
	if err := w.walk(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := replay(w.obs, replayConfig{
		load:  opts.Load,
		found: opts.Found,
	})
	if !opts.NoChassis {
		GroupNodes(f)
	}
	return f, nil
}

// walker is one walk in progress.
type walker struct {
	ctx     context.Context
	eng     *rpc.Engine
	opt     Options
	lidMode bool
	maxHops int

	mu  sync.Mutex // guards obs
	obs *observations

	// outstanding counts the SMPs sent and not yet handled: the walk is
	// over when it drops to zero (see run).
	outstanding sync.WaitGroup

	mads, errs, ports atomic.Int64
}

func newWalker(ctx context.Context, eng *rpc.Engine, opts Options) *walker {
	w := &walker{ctx: ctx, eng: eng, opt: opts, obs: newObservations(), maxHops: mad.MaxDRHops}
	if opts.MaxHops > 0 && opts.MaxHops < w.maxHops {
		w.maxHops = opts.MaxHops
	}
	switch opts.Mode {
	case ModeLID:
		w.lidMode = true
	case ModeAuto:
		if info, err := eng.Port().Info(); err == nil {
			w.lidMode = info.State == 4 && validLID(info.LID)
		}
	}
	return w
}

func validLID(lid uint16) bool { return lid > 0 && lid < 0xC000 }

// observations is what the walk saw, in no particular order: the raw
// replies per node, the links, the failures. replay turns it into a
// Fabric.
type observations struct {
	nodes    map[uint64]*obsNode // links and probes are kept per node and port
	from     uint64
	fromPort int
	errors   []obsError
}

// obsError is a WalkError with what it was about: a node's attribute, or
// (probe) the NodeInfo behind one of its ports. Once the canonical routes
// are known the error gets the node's route, so that errors do not depend
// on which route the walk happened to use.
type obsError struct {
	guid  uint64
	port  int
	probe bool
	err   *WalkError
}

type portKey struct {
	guid uint64
	port int
}

type obsNode struct {
	guid   uint64
	typ    int
	nports int
	// ni is the first NodeInfo read; niVia the NodeInfo as read through
	// each port (LocalPortNum and, on CAs, PortGUID differ).
	ni    []byte
	niVia perPort[[]byte]
	nd    []byte
	ndErr error
	si    []byte
	siErr error
	pi    perPort[[]byte]
	piAsk perPort[bool]
	ndAsk bool
	epi   perPort[[]byte]
	// links are the ports' peers, probing the ports whose peer is being
	// asked for (slices by port, not maps by portKey: big maps cost a
	// walk a tenth of its CPU in growth and hashing).
	links   perPort[obsLink]
	probing perPort[bool]
	// dest and via are its engine window keys (nodeDest, probeDest).
	dest, via string
	// path is the shortest directed route known; lid the LID to reach the
	// node by in LID mode (0 while unknown).
	path  []byte
	lid   uint16
	noLID bool // a LID-routed query got no answer: DR only
	lidOK bool // a LID-routed query was answered
	// lidTesting is set while the first LID-routed query decides between
	// lidOK and noLID; the queries that wait for it are lidWaiters.
	lidTesting bool
	lidWaiters []func()
	// skipped are ports not followed because the route would have been
	// too long; they are followed if a shorter route turns up.
	skipped []int
}

// obsLink is a port's peer, if ok.
type obsLink struct {
	to portKey
	ok bool
}

func newObservations() *observations {
	return &observations{nodes: map[uint64]*obsNode{}}
}

// link records a cable between ports a and b, at the ends whose node is
// known.
func (o *observations) link(a, b portKey) {
	if n := o.nodes[a.guid]; n != nil {
		n.links.set(a.port, obsLink{b, true})
	}
	if n := o.nodes[b.guid]; n != nil {
		n.links.set(b.port, obsLink{a, true})
	}
}

// peer is the port at the other end of k's cable, if known.
func (o *observations) peer(k portKey) (portKey, bool) {
	n := o.nodes[k.guid]
	if n == nil {
		return portKey{}, false
	}
	l := n.links.get(k.port)
	return l.to, l.ok
}

func (n *obsNode) isSwitch() bool { return n.typ == NodeSwitch }

// perPort holds a value per port number. It grows as needed: port numbers
// come from replies and may exceed the node's NumPorts.
type perPort[T any] []T

func (p perPort[T]) get(port int) T {
	var zero T
	if port < 0 || port >= len(p) {
		return zero
	}
	return p[port]
}

func (p *perPort[T]) set(port int, v T) {
	if port < 0 {
		return
	}
	if port >= len(*p) {
		*p = append(*p, make([]T, port+1-len(*p))...)
	}
	(*p)[port] = v
}

// run waits until every SMP the walk sent has been handled. The walk
// runs in the replies' callbacks (rpc.Engine.Go), which send the next
// queries: one goroutine does it all, as libibnetdisc's engine does.
func (w *walker) run() { w.outstanding.Wait() }

// walk reads the local node and everything reachable from it.
func (w *walker) walk() error {
	stop := w.startProgress()
	defer stop()
	local := []byte{0}
	var localErr error
	w.get(nil, local, mad.AttrNodeInfo, 0, func(blob []byte, err error) {
		if err != nil {
			localErr = err
			return
		}
		var ni mad.NodeInfo
		_ = ni.Unmarshal(blob)
		w.mu.Lock()
		w.obs.from, w.obs.fromPort = uint64(ni.NodeGUID), int(ni.LocalPortNum)
		w.mu.Unlock()
		w.gotNodeInfo(local, portKey{}, false, blob)
	})
	w.run()
	if localErr != nil {
		return fmt.Errorf("%w: %w", ErrNoLocalNode, localErr)
	}
	return nil
}

// startProgress calls Options.Progress every progressInterval until the
// returned function is called, which reports the final counts.
func (w *walker) startProgress() func() {
	if w.opt.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var stopped sync.WaitGroup
	stopped.Add(1)
	go func() {
		defer stopped.Done()
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				w.opt.Progress(w.progress(false))
			}
		}
	}()
	return func() {
		close(done)
		stopped.Wait()
		w.opt.Progress(w.progress(true))
	}
}

func (w *walker) progress(done bool) Progress {
	p := Progress{MADs: int(w.mads.Load()), Errors: int(w.errs.Load()), Ports: int(w.ports.Load()), Done: done}
	w.mu.Lock()
	p.Nodes = len(w.obs.nodes)
	for _, n := range w.obs.nodes {
		if n.isSwitch() {
			p.Switches++
		}
	}
	w.mu.Unlock()
	return p
}

// nodeDest is the engine's per-destination window key of a node, so
// that no node gets more than the window whichever route reaches it.
func nodeDest(guid uint64) string { return fmt.Sprintf("node %016x", guid) }

// probeDest is the window key of the NodeInfo probes through a switch's
// ports: every switch on a directed route handles the SMP in its SMA, and
// the switch the probes fan out from sees them all.
func probeDest(guid uint64) string { return fmt.Sprintf("via %016x", guid) }

// get sends one SubnGet and hands the 64 attribute bytes to then. n is
// the node addressed (nil for a node not known yet): it is reached by LID
// in LID mode once its LID is known, falling back to the directed route
// path if that gets no answer.
func (w *walker) get(n *obsNode, path []byte, attr uint16, mod uint32, then func([]byte, error)) {
	w.getVia(n, "", path, attr, mod, then)
}

// getVia is get with the per-destination window key of a probe.
func (w *walker) getVia(n *obsNode, dest string, path []byte, attr uint16, mod uint32, then func([]byte, error)) {
	if n == nil {
		w.getDR(dest, path, attr, mod, then)
		return
	}
	key := n.dest
	lid, first, wait := w.lidFor(n)
	switch {
	case wait:
		w.waitLIDTest(n, func() { w.getVia(n, key, path, attr, mod, then) })
		return
	case lid == 0:
		w.getDR(key, path, attr, mod, then)
		return
	}
	b := newSMP(umad.Address{LID: lid}, key)
	mad.InitLIDSMP(b.mad[:], mad.MethodGet, attr, mod)
	w.send(b, func(data []byte, err error) {
		lost := err != nil && isTimeout(err) && w.ctx.Err() == nil
		if first {
			w.lidTested(n, !lost)
		}
		if lost {
			w.getDR(key, path, attr, mod, then)
			return
		}
		then(data, err)
	})
}

// getDR sends get's SMP over the directed route path. (Not a closure in
// getVia: one allocation less for every SMP of a walk.)
func (w *walker) getDR(dest string, path []byte, attr uint16, mod uint32, then func([]byte, error)) {
	b := newSMP(umad.Address{LID: umad.PermissiveLID}, dest)
	mad.InitDRSMP(b.mad[:], mad.MethodGet, attr, mod, path)
	w.send(b, then)
}

// smpBuf is one SMP of the walk: its request and MAD in one allocation,
// reused once answered. A walk sends tens of thousands, and a fresh
// request and 256-byte MAD for each were a tenth of its CPU: the
// allocations, the collections of their garbage and the cache misses of
// new memory.
type smpBuf struct {
	req rpc.Request
	mad [mad.Size]byte
}

var smpBufs = sync.Pool{New: func() any { return new(smpBuf) }}

// newSMP returns a request to addr with a zeroed MAD.
func newSMP(addr umad.Address, dest string) *smpBuf {
	b := smpBufs.Get().(*smpBuf)
	clear(b.mad[:])
	b.req = rpc.Request{Addr: addr, MAD: b.mad[:], Dest: dest}
	return b
}

func isTimeout(err error) bool {
	var te *rpc.TimeoutError
	return errors.As(err, &te)
}

// lidFor returns the LID to reach n by, 0 for a directed route. The first
// LID-routed query to a node goes alone and decides for the others, which
// wait (wait is true): a node without a route to its LID (an SM still
// sweeping) costs one timeout, not one per query.
func (w *walker) lidFor(n *obsNode) (lid uint16, first, wait bool) {
	if !w.lidMode {
		return 0, false, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case n.lid == 0 || n.noLID:
		return 0, false, false
	case n.lidOK:
		return n.lid, false, false
	case n.lidTesting:
		return 0, false, true
	}
	n.lidTesting = true
	return n.lid, true, false
}

// waitLIDTest runs retry once n's LID test has decided, at once if it has.
func (w *walker) waitLIDTest(n *obsNode, retry func()) {
	w.mu.Lock()
	if n.lidTesting {
		n.lidWaiters = append(n.lidWaiters, retry)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	retry()
}

// lidTested records whether n answered by LID and sends the queries that
// waited for it.
func (w *walker) lidTested(n *obsNode, ok bool) {
	w.mu.Lock()
	n.lidOK, n.noLID = ok, !ok
	n.lidTesting = false
	waiters := n.lidWaiters
	n.lidWaiters = nil
	w.mu.Unlock()
	for _, retry := range waiters {
		retry()
	}
}

// send sends one SMP and hands its attribute data, or its error, to then;
// then runs on the engine's receive goroutine.
func (w *walker) send(b *smpBuf, then func([]byte, error)) {
	req := &b.req
	if w.opt.MKey != 0 {
		binary.BigEndian.PutUint64(req.MAD[24:], w.opt.MKey) // M_Key (IBA 14.2.1.1)
	}
	req.BorrowReply = true // smpData copies what is kept
	w.outstanding.Add(1)
	w.eng.Go(w.ctx, req, func(reply *rpc.Reply, err error) {
		defer w.outstanding.Done()
		w.mads.Add(1)
		data, err := smpData(req, reply, err)
		if err == nil && reply.Sends == 1 {
			// Answered, and sent once: nothing reads the request any
			// more (a resend might, and an error names the request).
			smpBufs.Put(b)
		}
		then(data, err)
	})
}

// smpData is the attribute data of an SMP's reply (a copy), or why there
// is none: the engine's error, a MAD status, a reply too short. It keeps
// nothing of reply (the requests borrow their replies, BorrowReply).
func smpData(req *rpc.Request, reply *rpc.Reply, err error) ([]byte, error) {
	switch {
	case err != nil:
		return nil, err
	case len(reply.MAD) < mad.SMPDataOffset+mad.SMPDataSize:
		return nil, fmt.Errorf("%s: a %d-byte reply is too short for an SMP", rpc.Describe(req.Addr, req.MAD), len(reply.MAD))
	case reply.MAD.Status()&^mad.DirectionBit != 0:
		return nil, &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: append(mad.Header(nil), reply.MAD...)}
	}
	return append([]byte(nil), reply.MAD.SMPData()...), nil
}

// fail records an error about node guid (the caller holds w.mu).
func (w *walker) fail(guid uint64, path []byte, what string, err error) {
	w.failAt(obsError{guid: guid}, path, what, err)
}

// failProbe records that nothing answered behind port of node guid.
func (w *walker) failProbe(from portKey, path []byte, err error) {
	w.failAt(obsError{guid: from.guid, port: from.port, probe: true}, path, "NodeInfo", err)
}

func (w *walker) failAt(e obsError, path []byte, what string, err error) {
	if w.ctx.Err() != nil {
		return // the walk is being abandoned: not the fabric's fault
	}
	w.errs.Add(1)
	e.err = &WalkError{DRPath: append([]byte(nil), path...), What: what, Err: err}
	w.obs.errors = append(w.obs.errors, e)
}

// probe reads the NodeInfo of whatever is behind port from.port of node
// from.guid, over path.
func (w *walker) probe(path []byte, from portKey, via string) {
	w.getVia(nil, via, path, mad.AttrNodeInfo, 0, func(blob []byte, err error) {
		if err != nil {
			w.mu.Lock()
			w.failProbe(from, path, err)
			w.mu.Unlock()
			return
		}
		w.gotNodeInfo(path, from, true, blob)
	})
}

// gotNodeInfo records a NodeInfo read over path (through port from, unless
// it is the local node) and starts the node's queries if it is new.
func (w *walker) gotNodeInfo(path []byte, from portKey, hasFrom bool, blob []byte) {
	var ni mad.NodeInfo
	_ = ni.Unmarshal(blob)
	guid, arrival := uint64(ni.NodeGUID), int(ni.LocalPortNum)

	w.mu.Lock()
	n := w.obs.nodes[guid]
	isNew := n == nil
	if isNew {
		n = &obsNode{
			guid: guid, typ: int(ni.NodeType), nports: int(ni.NumPorts),
			ni:   blob,
			path: path, dest: nodeDest(guid), via: probeDest(guid),
		}
		w.obs.nodes[guid] = n
	}
	if n.niVia.get(arrival) == nil {
		n.niVia.set(arrival, blob)
	}
	if hasFrom {
		w.obs.link(from, portKey{guid, arrival})
	}
	var retry []int
	if !isNew && len(path) < len(n.path) {
		n.path = path
		retry, n.skipped = n.skipped, nil
	}
	askPI := !n.isSwitch() && !n.piAsk.get(arrival)
	if askPI {
		n.piAsk.set(arrival, true)
	}
	w.mu.Unlock()

	switch {
	case isNew && n.isSwitch():
		w.querySwitch(n)
	case askPI:
		w.queryCA(n, arrival)
	}
	for _, p := range retry {
		w.follow(n, p)
	}
}

// nodePath returns the route to n as known now.
func (w *walker) nodePath(n *obsNode) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return n.path
}

// portChains is how many of a switch's PortInfo queries are under way at
// once: the engine's per-destination window (rpc.DefaultDestWindow).
// Asking for all 36 ports of a switch at once would only queue the rest
// in the engine, and a walk that finds hundreds of switches at a time
// then holds thousands of requests (a MAD, a call and closures each, most
// of a walk's live heap) that wait for the same few slots.
const portChains = rpc.DefaultDestWindow

// querySwitch reads a new switch: port 0 first (it gives the LID), then
// the rest, a few at a time (portChains): each reply asks for the next
// port.
func (w *walker) querySwitch(n *obsNode) {
	w.portInfo(n, 0, func() {
		if w.opt.Load&LoadNodeDesc != 0 {
			w.nodeDesc(n)
		}
		if w.opt.Load&LoadSwitchInfo != 0 {
			w.switchInfo(n)
		}
		next := 1 // the next port to ask for (guarded by w.mu)
		var ask func()
		ask = func() {
			w.mu.Lock()
			p := next
			next++
			w.mu.Unlock()
			if p <= n.nports {
				w.portInfo(n, p, ask)
			}
		}
		for range portChains {
			ask()
		}
	})
}

// queryCA reads the PortInfo of the port a CA (or router) was reached
// through, then, the first time, its description.
func (w *walker) queryCA(n *obsNode, port int) {
	w.portInfo(n, port, func() {
		w.mu.Lock()
		first := !n.ndAsk
		n.ndAsk = true
		w.mu.Unlock()
		if first && w.opt.Load&LoadNodeDesc != 0 {
			w.nodeDesc(n)
		}
	})
}

func (w *walker) nodeDesc(n *obsNode) {
	w.nodeAttr(n, mad.AttrNodeDescription, "NodeDescription", &n.nd, &n.ndErr)
}

func (w *walker) switchInfo(n *obsNode) {
	w.nodeAttr(n, mad.AttrSwitchInfo, "SwitchInfo", &n.si, &n.siErr)
}

// nodeAttr reads one attribute of the node itself into *blob, or records
// why it could not in *errp.
func (w *walker) nodeAttr(n *obsNode, attr uint16, what string, blob *[]byte, errp *error) {
	path := w.nodePath(n)
	w.get(n, path, attr, 0, func(b []byte, err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			*errp = err
			w.fail(n.guid, path, what, err)
			return
		}
		*blob = b
	})
}

// portInfo reads one port's PortInfo and follows its link if it is up;
// then, if set, runs once the reply (or error) is handled.
func (w *walker) portInfo(n *obsNode, port int, then func()) {
	path := w.nodePath(n)
	w.get(n, path, mad.AttrPortInfo, uint32(port), func(blob []byte, err error) {
		w.gotPortInfo(n, port, path, blob, err)
		if then != nil {
			then()
		}
	})
}

func (w *walker) gotPortInfo(n *obsNode, port int, path, blob []byte, err error) {
	w.mu.Lock()
	if err != nil {
		w.fail(n.guid, path, fmt.Sprintf("PortInfo port %d", port), err)
		w.mu.Unlock()
		return
	}
	w.ports.Add(1)
	n.pi.set(port, blob)
	pi := rawPortInfo(blob)
	if n.lid == 0 && !n.noLID && validLID(pi.lid()) && (port == 0 || !n.isSwitch()) {
		n.lid = pi.lid()
	}
	capPort := pi
	if n.isSwitch() {
		capPort = n.pi.get(0)
	}
	epi := w.opt.Load&LoadMlnxExtPortInfo != 0 && wantsMlnxExt(n.ni, pi, capPort)
	w.mu.Unlock()

	if epi {
		w.mlnxExt(n, port)
	}
	if port != 0 && pi.physState() == physLinkUp {
		w.follow(n, port)
	}
}

func (w *walker) mlnxExt(n *obsNode, port int) {
	path := w.nodePath(n)
	w.get(n, path, mad.AttrMlnxExtPortInfo, uint32(port), func(blob []byte, err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			w.fail(n.guid, path, fmt.Sprintf("MlnxExtPortInfo port %d", port), err)
			return
		}
		n.epi.set(port, blob)
	})
}

// follow probes what is behind an up port of n, unless that is known or
// being probed already. Only switches forward directed routes; of a CA
// only the local port is followed (the walk starts there).
func (w *walker) follow(n *obsNode, port int) {
	w.mu.Lock()
	key := portKey{n.guid, port}
	if !n.isSwitch() && (n.guid != w.obs.from || port != w.obs.fromPort) {
		w.mu.Unlock()
		return
	}
	if n.links.get(port).ok || n.probing.get(port) {
		w.mu.Unlock()
		return
	}
	if len(n.path) > w.maxHops { // one hop more would be too many
		n.skipped = append(n.skipped, port)
		w.mu.Unlock()
		return
	}
	n.probing.set(port, true)
	path := append(append(make([]byte, 0, len(n.path)+1), n.path...), byte(port))
	w.mu.Unlock()
	w.probe(path, key, n.via)
}

// wantsMlnxExt is libibnetdisc's test for asking a port for Mellanox's
// extended PortInfo: a Mellanox device that knows it, the link up at QDR
// and no extended speed active (so it may really be FDR10). capPort is
// the port whose capability mask counts (port 0 of a switch).
func wantsMlnxExt(nodeInfo rawNodeInfo, pi, capPort rawPortInfo) bool {
	if !nodeInfo.ok() || !mlnxExtSupported(nodeInfo.vendorID(), nodeInfo.deviceID()) {
		return false
	}
	espeed := uint8(0)
	if capPort.capMask()&capExtendedSpeed != 0 {
		espeed = pi.linkSpeedExtActive()
	}
	return pi.physState() == physLinkUp && pi.linkSpeedActive() == speedQDR && espeed == 0
}

// mlnxExtSupported lists the devices libibnetdisc (infiniband-diags 44)
// asks for the Mellanox extended PortInfo.
func mlnxExtSupported(vendor uint32, dev uint16) bool {
	in := func(lo, hi uint16) bool { return dev >= lo && dev <= hi }
	bull := vendor == 0x119f
	switch {
	case in(0xc738, 0xc73b), dev == 0xc839, dev == 0xcb20, dev == 0xcf08, dev == 0xcf09, dev == 0xd2f0:
		return true // switches: SwitchX, Switch-IB, Switch-IB 2, Quantum
	case bull && (dev == 0x1b02 || dev == 0x1b50 || dev == 0x1ba0 || in(0x1bd0, 0x1bd5) || dev == 0x1bf0):
		return true // Bull switches
	case in(0x1003, 0x101b), dev == 0xa2d2:
		return true // ConnectX-3 and later, BlueField
	case bull && (dev == 0x1b33 || dev == 0x1b73 || dev == 0x1b40 || dev == 0x1b41 || dev == 0x1b60 ||
		dev == 0x1b61 || dev == 0x1b83 || dev == 0x1b93 || dev == 0x1b94 || dev == 0x1bb4 || dev == 0x1bb5 ||
		in(0x1bc4, 0x1bc6)):
		return true // Bull adapters
	}
	return false
}
