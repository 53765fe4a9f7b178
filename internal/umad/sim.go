package umad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/ibtool/ibtool/internal/exitclean"
	"golang.org/x/sys/unix"
)

// The ibsim simulator's client protocol (ibsim 0.10, see
// docs/ibsim-protocol.md): a control channel of fixed 80-byte
// messages in host (little-endian) order, and a packet channel of fixed
// 288-byte frames: a 32-byte big-endian address header and the MAD.

const (
	simCtlSize    = 80
	simCtlMagic   = 0xDEADBEEF
	simFrameSize  = 288
	simMADOffset  = 32
	simMaxClients = 10

	simCtlError      = 0
	simCtlConnect    = 1
	simCtlDisconnect = 2
	simCtlGetNode    = 7
	simCtlGetPort    = 8
	simCtlSetISSM    = 9
	simCtlGetPKeys   = 10
	simCtlGetVendor  = 4

	simDefaultSock = "sim"
	simDefaultPort = 7070
	simCtlTimeout  = 2 * time.Second

	// simConnectPatience is how long a CONNECT waits before saying so:
	// ibsim serves its control socket only between MADs and console
	// commands, so a busy or paused simulator answers late, and the C
	// clients wait for it without limit.
	simConnectPatience = 2 * time.Second
	// simPoll bounds each blocking read of the control socket, so that
	// Close can interrupt a wait.
	simPoll = 250 * time.Millisecond

	// SimConnectTimeoutEnv sets a limit on the wait for ibsim to answer
	// CONNECT (seconds, or a Go duration such as 90s); unset or 0 waits
	// as long as it takes, as the C tools do.
	SimConnectTimeoutEnv = "IBTOOL_SIM_CONNECT_TIMEOUT"
)

// SimConfig says how to reach ibsim; SimConfigFromEnv reads the variables
// ibsim's own clients read.
type SimConfig struct {
	SockName   string // IBSIM_SOCKNAME: base of the abstract unix socket names
	ServerName string // IBSIM_SERVER_NAME: if set, UDP mode to this host
	ServerPort int    // IBSIM_SERVER_PORT: UDP base port
	Host       string // SIM_HOST: node id or description to attach to
	IsSM       bool   // SIM_SET_ISSM: connect as an SM, receiving unsolicited requests
	QP         uint32 // a private QP number (>1) to receive requests sent to it

	// ConnectLimit bounds the wait for ibsim to answer CONNECT; 0 waits
	// as long as it takes. A CONNECT given up on is never left to ibsim:
	// see (*simConn).Close.
	ConnectLimit time.Duration
	// Progress receives one line when CONNECT has waited 2 s (nil: none).
	Progress io.Writer
}

// SimConfigFromEnv builds a SimConfig from ibsim's environment variables.
func SimConfigFromEnv(getenv func(string) string) SimConfig {
	c := SimConfig{
		SockName:   getenv("IBSIM_SOCKNAME"),
		ServerName: getenv("IBSIM_SERVER_NAME"),
		Host:       getenv("SIM_HOST"),
		IsSM:       getenv("SIM_SET_ISSM") != "",
	}
	if c.SockName == "" {
		c.SockName = simDefaultSock
	}
	c.ServerPort = simDefaultPort
	if p, err := strconv.Atoi(getenv("IBSIM_SERVER_PORT")); err == nil && p > 0 {
		c.ServerPort = p
	}
	c.ConnectLimit = parseConnectLimit(getenv(SimConnectTimeoutEnv))
	c.Progress = os.Stderr
	return c
}

// parseConnectLimit reads IBTOOL_SIM_CONNECT_TIMEOUT: seconds or a Go
// duration; anything else (or nothing) means no limit.
func parseConnectLimit(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	return 0
}

func (c SimConfig) describe() string {
	if c.ServerName != "" {
		return fmt.Sprintf("udp %s:%d", c.ServerName, c.ServerPort)
	}
	return "@" + c.SockName + ":ctl"
}

// SimReachable reports whether an ibsim answers on cfg's control socket.
func SimReachable(cfg SimConfig) bool {
	if cfg.ServerName != "" {
		return true // UDP: nothing to probe without a full handshake
	}
	c, err := net.DialUnix("unixgram", nil, abstractAddr(cfg.SockName+":ctl"))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// abstractAddr is a Linux abstract unix address. ibsim's names include a
// trailing NUL byte, which is part of the name.
func abstractAddr(name string) *net.UnixAddr {
	return &net.UnixAddr{Name: "@" + name + "\x00", Net: "unixgram"}
}

type simOpener struct{ cfg SimConfig }

// NewSim returns the Opener for the ibsim simulator.
func NewSim(cfg SimConfig) Opener {
	if cfg.SockName == "" {
		cfg.SockName = simDefaultSock
	}
	if cfg.ServerPort == 0 {
		cfg.ServerPort = simDefaultPort
	}
	return simOpener{cfg}
}

func (simOpener) Name() string { return "ibsim" }

// CAs describes the simulator attachment the way umad2sim presents it to the
// C tools: one device "ibsim0" with the one port the client is attached to.
func (o simOpener) CAs() ([]CA, error) {
	p, err := o.open()
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.describeCA()
}

// Open attaches to the simulator. Under ibsim a client owns exactly one port
// (chosen by SIM_HOST), so ca must be empty or "ibsim0" and port negative or
// that port's number.
func (o simOpener) Open(ca string, port int) (Port, error) {
	if ca != "" && ca != SimCAName {
		return nil, fmt.Errorf("CA %q not found: the ibsim transport has only %q (attach elsewhere with SIM_HOST)", ca, SimCAName)
	}
	p, err := o.open()
	if err != nil {
		return nil, err
	}
	if port >= 0 && port != p.portNum {
		p.Close()
		return nil, fmt.Errorf("port %d not found on %s: attached to port %d of %q (attach elsewhere with SIM_HOST)", port, SimCAName, p.portNum, p.node)
	}
	return p, nil
}

// SimCAName is the device name umad2sim gives the simulated port.
const SimCAName = "ibsim0"

// simConn is one client slot of ibsim.
type simConn struct {
	cfg      SimConfig
	ctl      net.PacketConn
	ctlPeer  net.Addr
	data     net.PacketConn
	dataPeer net.Addr
	slot     uint32
	node     string
	portNum  int

	ctlMu       sync.Mutex
	connectSent bool // a CONNECT went out (under ctlMu)
	attached    bool // ibsim answered it: slot is ours (under ctlMu)
	closing     atomic.Bool
	closeOnce   sync.Once
	closed      chan struct{}
	release     func()

	recvMu  sync.Mutex
	recvBuf []byte        // Recv's frame buffer: one reader at a time
	rbufs   *simBatchBufs // RecvBatch's

	sendMu      sync.Mutex
	sbufs       *simBatchBufs // SendBatch's
	rawPeerAddr []byte        // dataPeer for sendmmsg; nil in UDP mode
	connected   bool          // data is connected to dataPeer
}

var simClientSeq atomic.Uint32

func (o simOpener) open() (*simConn, error) {
	p := &simConn{cfg: o.cfg, closed: make(chan struct{})}
	// From here on every way out of the process closes p: a slot left
	// connected, or a CONNECT left for ibsim to serve to a client that
	// is gone, would cost the simulator a slot or its life.
	exitclean.Install()
	hold := exitclean.Hold()
	p.release = exitclean.Add(func() { p.Close() })
	id, err := p.dial()
	if err != nil {
		hold()
		p.Close()
		return nil, err
	}
	err = p.connect(id, hold)
	if err != nil {
		p.Close()
		return nil, err
	}
	if o.cfg.IsSM {
		if _, err := p.ctlRequest(simCtlSetISSM, le32(1)); err != nil {
			p.Close()
			return nil, err
		}
	}
	pi, err := p.ctlRequest(simCtlGetPort, []byte{0})
	if err != nil {
		p.Close()
		return nil, err
	}
	p.portNum = int(pi[28]) // PortInfo.LocalPortNum
	return p, nil
}

// dial binds the client's sockets and returns the id sent in CONNECT.
func (p *simConn) dial() (uint32, error) {
	if p.cfg.ServerName != "" {
		return p.dialUDP()
	}
	base := p.cfg.SockName
	peer := abstractAddr(base + ":ctl")
	for try := 0; try < 16; try++ {
		// A non-zero id below 2^31, unique among this host's clients.
		id := uint32(os.Getpid())<<4 | (simClientSeq.Add(1) & 0xF)
		id &= 0x7FFFFFFF
		if id == 0 {
			continue
		}
		ctl, err := net.ListenUnixgram("unixgram", abstractAddr(fmt.Sprintf("%s:ctl%d", base, id)))
		if err != nil {
			continue // id in use: take the next
		}
		data, err := net.ListenUnixgram("unixgram", abstractAddr(fmt.Sprintf("%s:in%d", base, id)))
		if err != nil {
			ctl.Close()
			continue
		}
		p.ctl, p.ctlPeer, p.data = ctl, peer, data
		return id, nil
	}
	return 0, fmt.Errorf("ibsim %s: cannot bind a client socket", p.cfg.describe())
}

func (p *simConn) dialUDP() (uint32, error) {
	server, err := net.ResolveUDPAddr("udp4", net.JoinHostPort(p.cfg.ServerName, strconv.Itoa(p.cfg.ServerPort)))
	if err != nil {
		return 0, fmt.Errorf("ibsim server %q: %w", p.cfg.ServerName, err)
	}
	ctl, err := net.ListenUDP("udp4", nil)
	if err != nil {
		return 0, err
	}
	data, err := net.ListenUDP("udp4", nil)
	if err != nil {
		ctl.Close()
		return 0, err
	}
	p.ctl, p.ctlPeer, p.data = ctl, server, data
	// In UDP mode the id is the data socket's port: ibsim sends to it.
	return uint32(data.LocalAddr().(*net.UDPAddr).Port), nil
}

// connect sends CONNECT, calls sent once it is out, and waits for the
// answer as long as the C clients do (or ConnectLimit).
func (p *simConn) connect(id uint32, sent func()) error {
	info := make([]byte, 44)
	binary.LittleEndian.PutUint32(info[0:], id)
	binary.LittleEndian.PutUint32(info[4:], p.cfg.QP)
	if p.cfg.IsSM {
		binary.LittleEndian.PutUint32(info[8:], 1)
	}
	copy(info[12:43], p.cfg.Host)
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	err := p.ctlSend(simCtlConnect, 0, info)
	if err == nil {
		p.connectSent = true
	}
	sent()
	if err != nil {
		return fmt.Errorf("cannot connect to ibsim at %s: %w (is ibsim running with -s and the same IBSIM_SOCKNAME?)", p.cfg.describe(), err)
	}
	reply, err := p.ctlAwait(simCtlConnect, p.cfg.ConnectLimit, p.connectProgress)
	if err == nil {
		p.connectSent = false // answered: nothing left pending at ibsim
	}
	if err != nil {
		if errors.Is(err, errSimNoAnswer) {
			return fmt.Errorf("ibsim at %s has not answered CONNECT within %v (%s); its slot is released once it does", p.cfg.describe(), p.cfg.ConnectLimit, SimConnectTimeoutEnv)
		}
		return fmt.Errorf("cannot connect to ibsim at %s: %w", p.cfg.describe(), err)
	}
	if reply == nil {
		what := "all 10 client slots may be taken"
		if p.cfg.Host != "" {
			what = fmt.Sprintf("SIM_HOST=%q may name no node, or all 10 client slots are taken", p.cfg.Host)
		}
		return fmt.Errorf("ibsim at %s refused the connection: %s", p.cfg.describe(), what)
	}
	p.slot = binary.LittleEndian.Uint32(reply[0:])
	p.node = cString(reply[12:44])
	if p.slot >= simMaxClients {
		return fmt.Errorf("ibsim gave an invalid client slot %d", p.slot)
	}
	p.attached = true
	if p.cfg.ServerName != "" {
		server := p.ctlPeer.(*net.UDPAddr)
		udp := &net.UDPAddr{IP: server.IP, Port: p.cfg.ServerPort + 1 + int(p.slot)}
		p.dataPeer, p.rawPeerAddr = udp, rawInet4Addr(udp)
	} else {
		ua := abstractAddr(fmt.Sprintf("%s:out%d", p.cfg.SockName, p.slot))
		p.dataPeer, p.rawPeerAddr = ua, rawUnixAddr(ua)
	}
	// Only an optimisation: unconnected, the window stays small.
	_ = p.connectData()
	return nil
}

// connectData connects the packet socket to the slot's socket of ibsim,
// which ibsim has connected to ours. A Unix datagram socket may hold only
// net.unix.max_dgram_qlen (10) datagrams from senders other than its
// peer: connected both ways, neither side's queue has that limit, and
// more MADs can be in flight (see MaxInFlight). A UDP socket has no such
// limit, but connected it sends batches without naming the peer, and a
// bigger receive buffer keeps a wide window's replies from being dropped.
func (p *simConn) connectData() error {
	rc, err := p.data.(syscall.Conn).SyscallConn()
	if err != nil {
		return err
	}
	sa := p.rawPeerAddr
	var cerr error
	err = rc.Control(func(fd uintptr) {
		if p.cfg.ServerName != "" {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, simUDPBuffer)
		}
		_, _, errno := unix.Syscall(unix.SYS_CONNECT, fd, uintptr(unsafe.Pointer(&sa[0])), uintptr(len(sa)))
		if errno != 0 {
			cerr = errno
		}
	})
	if err != nil {
		return err
	}
	if cerr == nil {
		p.connected = true
	}
	return cerr
}

// ctlRequest sends a control message of this client and returns the reply
// payload, or an error when ibsim answers with the ERROR type.
func (p *simConn) ctlRequest(typ uint32, payload []byte) ([]byte, error) {
	reply, err := p.ctlExchange(typ, p.slot, payload)
	if err != nil {
		return nil, fmt.Errorf("ibsim control request %d: %w", typ, err)
	}
	if reply == nil {
		return nil, fmt.Errorf("ibsim refused control request %d", typ)
	}
	return reply, nil
}

// connectProgress says, once, that CONNECT is waiting.
func (p *simConn) connectProgress() {
	if p.cfg.Progress == nil {
		return
	}
	limit := "no limit; " + SimConnectTimeoutEnv + " sets one"
	if p.cfg.ConnectLimit > 0 {
		limit = fmt.Sprintf("limit %v", p.cfg.ConnectLimit)
	}
	fmt.Fprintf(p.cfg.Progress, "ibtool: waiting for ibsim at %s to accept the connection (no answer for %v; %s)\n",
		p.cfg.describe(), simConnectPatience, limit)
}

var (
	errSimNoAnswer    = errors.New("no answer from the simulator")
	errSimInterrupted = errors.New("interrupted: the port is closing")
)

// ctlExchange sends one control message and waits for its echo. A nil
// payload with a nil error means ibsim replied with type ERROR.
func (p *simConn) ctlExchange(typ, client uint32, payload []byte) ([]byte, error) {
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	return p.ctlExchangeLocked(typ, client, payload)
}

func (p *simConn) ctlExchangeLocked(typ, client uint32, payload []byte) ([]byte, error) {
	if err := p.ctlSend(typ, client, payload); err != nil {
		return nil, err
	}
	return p.ctlAwait(typ, simCtlTimeout, nil)
}

func (p *simConn) ctlSend(typ, client uint32, payload []byte) error {
	msg := make([]byte, simCtlSize)
	binary.LittleEndian.PutUint32(msg[0:], simCtlMagic)
	binary.LittleEndian.PutUint32(msg[4:], client)
	binary.LittleEndian.PutUint32(msg[8:], typ)
	binary.LittleEndian.PutUint32(msg[12:], uint32(len(payload)))
	copy(msg[16:], payload)
	_, err := p.ctl.WriteTo(msg, p.ctlPeer)
	return err
}

// ctlAwait waits up to limit (0: without limit) for the answer to a
// control message of type typ, calling progress once after
// simConnectPatience. Reads are short, so that Close, which sets closing,
// interrupts the wait within simPoll: unless Close itself is asking.
func (p *simConn) ctlAwait(typ uint32, limit time.Duration, progress func()) ([]byte, error) {
	buf := make([]byte, simCtlSize+16)
	start := time.Now()
	for {
		if typ != simCtlDisconnect && typ != simCtlSetISSM && p.closing.Load() {
			return nil, errSimInterrupted
		}
		waited := time.Since(start)
		if limit > 0 && waited >= limit {
			return nil, errSimNoAnswer
		}
		if progress != nil && waited >= simConnectPatience {
			progress()
			progress = nil
		}
		if err := p.ctl.SetReadDeadline(time.Now().Add(simPoll)); err != nil {
			return nil, err
		}
		n, _, err := p.ctl.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			return nil, err
		}
		if n != simCtlSize || binary.LittleEndian.Uint32(buf[0:]) != simCtlMagic {
			continue
		}
		switch binary.LittleEndian.Uint32(buf[8:]) {
		case typ:
			return append([]byte(nil), buf[16:simCtlSize]...), nil
		case simCtlError:
			return nil, nil
		}
	}
}

// Send writes one MAD frame (IBA wire order for the address fields).
func (p *simConn) Send(pkt *Packet) error {
	frame := make([]byte, simFrameSize)
	p.encodeSimFrame(frame, pkt)
	select {
	case <-p.closed:
		return ErrClosed
	default:
	}
	if _, err := p.data.WriteTo(frame, p.dataPeer); err != nil {
		return fmt.Errorf("ibsim send: %w", err)
	}
	return nil
}

// encodeSimFrame fills a zeroed or reused frame for pkt.
func (p *simConn) encodeSimFrame(frame []byte, pkt *Packet) {
	clear(frame[:simMADOffset])
	binary.BigEndian.PutUint16(frame[0:], pkt.Addr.LID)
	if pkt.Addr.LID == PermissiveLID {
		binary.BigEndian.PutUint16(frame[4:], PermissiveLID)
	}
	binary.BigEndian.PutUint32(frame[8:], pkt.Addr.QP)
	binary.BigEndian.PutUint32(frame[12:], pkt.Addr.QP) // our QP: 0 for SMPs, 1 (or ours) for GMPs
	if p.cfg.QP > 1 && pkt.Addr.QP != 0 {
		binary.BigEndian.PutUint32(frame[12:], p.cfg.QP)
	}
	n := copy(frame[simMADOffset:], pkt.MAD)
	clear(frame[simMADOffset+n:])
	binary.BigEndian.PutUint64(frame[24:], uint64(n))
}

// Recv reads the next frame. Bytes beyond the frame's length are zeroed:
// ibsim passes through whatever the sender left there.
func (p *simConn) Recv(deadline time.Time) (*Packet, error) {
	p.recvMu.Lock()
	defer p.recvMu.Unlock()
	if p.recvBuf == nil {
		p.recvBuf = make([]byte, simFrameSize+64)
	}
	buf := p.recvBuf
	for {
		if err := p.data.SetReadDeadline(deadline); err != nil {
			return nil, p.closedOr(err)
		}
		n, _, err := p.data.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, ErrTimeout
			}
			return nil, p.closedOr(err)
		}
		if n != simFrameSize {
			continue
		}
		return decodeSimFrame(buf[:n]), nil
	}
}

// simPackets holds received packets handed back (Recycle), for reuse: a
// walk receives tens of thousands of replies, each read once.
var simPackets sync.Pool

// Recycle takes back a received packet for reuse (umad.Recycler).
func (p *simConn) Recycle(pkt *Packet) {
	if pkt == nil || cap(pkt.MAD) != MADSize {
		return
	}
	simPackets.Put(pkt)
}

func decodeSimFrame(frame []byte) *Packet {
	pkt, _ := simPackets.Get().(*Packet)
	if pkt == nil {
		// The packet and its MAD in one allocation.
		sp := new(struct {
			pkt Packet
			mad [MADSize]byte
		})
		pkt = &sp.pkt
		pkt.MAD = sp.mad[:]
	}
	*pkt = Packet{
		Addr: Address{
			LID: binary.BigEndian.Uint16(frame[4:]), // the sender
			QP:  binary.BigEndian.Uint32(frame[12:]),
		},
		Status: int(binary.BigEndian.Uint32(frame[16:])),
		MAD:    pkt.MAD[:MADSize],
	}
	length := binary.BigEndian.Uint64(frame[24:])
	if length > MADSize {
		length = MADSize
	}
	n := copy(pkt.MAD, frame[simMADOffset:simMADOffset+int(length)])
	clear(pkt.MAD[n:]) // a reused packet's old bytes
	pkt.Length = int(length)
	return pkt
}

func (p *simConn) closedOr(err error) error {
	select {
	case <-p.closed:
		return ErrClosed
	default:
		return err
	}
}

// Info reads the attached port's attributes from the simulator.
func (p *simConn) Info() (PortInfo, error) {
	ca, err := p.describeCA()
	if err != nil {
		return PortInfo{}, err
	}
	return ca[0].Ports[0], nil
}

// describeCA builds the CA the way umad2sim fills its fake sysfs.
func (p *simConn) describeCA() ([]CA, error) {
	ni, err := p.ctlRequest(simCtlGetNode, nil)
	if err != nil {
		return nil, err
	}
	pi, err := p.ctlRequest(simCtlGetPort, []byte{0})
	if err != nil {
		return nil, err
	}
	vendor, err := p.ctlRequest(simCtlGetVendor, nil)
	if err != nil {
		return nil, err
	}
	pkeys, err := p.ctlRequest(simCtlGetPKeys, nil)
	if err != nil {
		return nil, err
	}
	return []CA{simCA(ni, pi, vendor, pkeys)}, nil
}

// Close disconnects from ibsim (its client slots are never reclaimed
// otherwise) and closes the sockets. It is safe to call more than once,
// from any goroutine, also while the CONNECT is waiting: then, since
// ibsim would crash serving it once our sockets are gone, the sockets go
// to a helper process that waits for the answer and disconnects (see
// lingerHandOff).
func (p *simConn) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.closing.Store(true) // a waiting exchange gives up within simPoll
		p.ctlMu.Lock()
		defer p.ctlMu.Unlock()
		switch {
		case p.attached:
			if p.cfg.IsSM {
				_, _ = p.ctlExchangeLocked(simCtlSetISSM, p.slot, le32(0))
			}
			if _, err = p.ctlExchangeLocked(simCtlDisconnect, p.slot, nil); err != nil {
				err = fmt.Errorf("ibsim control request %d: %w", simCtlDisconnect, err)
			}
		case p.connectSent:
			p.lingerHandOff()
		}
		close(p.closed)
		p.closeSockets()
		if p.release != nil {
			p.release()
		}
	})
	return err
}

func (p *simConn) closeSockets() {
	if p.ctl != nil {
		p.ctl.Close()
	}
	if p.data != nil {
		p.data.Close()
	}
}

func le32(v uint32) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, v)
	return b
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Serve checks that ibsim will deliver requests to this client: it only
// forwards unsolicited QP0/QP1 requests to a client connected as SM, and
// requests for a private QP to the client that registered it.
func (p *simConn) Serve(class, version uint8, oui uint32, methods ...uint8) error {
	if !p.cfg.IsSM && p.cfg.QP <= 1 {
		return fmt.Errorf("ibsim delivers requests only to a client connected as SM: set SIM_SET_ISSM=1 (and SIM_HOST to a node without an SM)")
	}
	return nil
}

// simMaxInFlight bounds the requests in flight to ibsim. ibsim writes each
// reply in a loop that retries at once while the client's socket is full,
// and a Unix datagram socket queues only net.unix.max_dgram_qlen (10 by
// default) datagrams: with more outstanding than that, ibsim spins on the
// CPU until the client reads, and everything slows by an order of magnitude.
const simMaxInFlight = 8

// simMaxInFlightConnected bounds the requests in flight when the packet
// socket is connected (connectData): then only the socket buffers limit
// the queues, which hold a few hundred frames.
const simMaxInFlightConnected = 64

// simMaxInFlightUDP bounds the requests in flight to a remote (UDP)
// ibsim. ibsim never waits for a UDP client, and our receive buffer
// (simUDPBuffer) holds thousands of replies, but ibsim's own socket keeps
// the default buffer (net.core.rmem_default, 208 KiB), and each request
// queued there is charged 1280 bytes, about 166 of them. The kernel gives
// a UDP socket's memory back in batches of up to a quarter of its buffer,
// so while ibsim reads, about 125 fit: with 128 in flight, every
// ibnetdiscover of the 2000-node fabric lost MADs and waited a second for
// them (1.13-1.25 s in 7 of 7 runs, against 0.30-0.35 s at 96, 112 or
// fewer, with none lost). A wide window pays off when the remote fabric
// is slow to answer: the engine widens its window when round trips are
// long, up to this.
const simMaxInFlightUDP = 96

// simUDPBuffer is the receive buffer a UDP packet socket asks for.
const simUDPBuffer = 4 << 20

// MaxInFlight is the simulator's safe window (see simMaxInFlight).
func (p *simConn) MaxInFlight() int {
	switch {
	case !p.connected:
		return simMaxInFlight
	case p.cfg.ServerName != "":
		return simMaxInFlightUDP
	}
	return simMaxInFlightConnected
}
