package simfabric

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A Relay stands between the clients of a remote ibsim (Options.Remote)
// and ibsim, and delays every MAD the way a real fabric does: ibsim
// answers in microseconds, a real SMP round trip takes tens of
// microseconds to milliseconds. Clients reach it as they would reach
// ibsim (Relay.Env); it speaks ibsim's UDP protocol on both sides:
//
//   - control messages (80 bytes) pass at once; the CONNECT of a client
//     gets the relay's own data socket for that client as its id, so ibsim
//     sends the client's replies to the relay;
//   - packets (288 bytes) wait Latency in each direction, and with Service
//     set, a request for a node's SMA or PMA also waits until that agent
//     has answered the requests before it (Service each), as a switch's
//     management processor answers one MAD at a time.
//
// The relay runs on one locked OS thread that sleeps in ppoll, whose
// timeout has microsecond precision (the Go runtime's timers round a
// sub-millisecond sleep up to a millisecond). Stats reports how late the
// relay was.
type Relay struct {
	fab    *Fabric
	opts   RelayOptions
	port   int // the relay's UDP base port
	server int // ibsim's

	ctl  int                                 // clients' control socket (port)
	data [simSlots]int                       // clients' data sockets (port+1+slot)
	wake int                                 // eventfd: Close wakes the loop with it
	on   map[int]func([]byte, unix.Sockaddr) // control sockets
	// onFrame has the data sockets, read in batches.
	onFrame map[int]func([]byte)
	ctls    map[relayAddr]*relayCtl
	slot    [simSlots]*relaySlot

	// Packets wait in arrival order in fifo, all due Latency after they
	// came, unless a service time put them later: those wait in serviced,
	// by due time.
	fifo     relayFIFO
	serviced relayQueue
	busy     map[string]time.Time // when each SMA is free again
	seq      uint64
	batch    relayBatch
	pollFds  []unix.PollFd // the sockets to poll; nil when r.on changed

	frames, lateNs, maxLateNs atomic.Int64
	tid                       atomic.Int64 // the loop's thread
	cpuBase                   atomic.Int64 // its CPU time at ResetStats
	err                       error
	done                      chan struct{}
}

// RelayOptions are the delays a Relay adds.
type RelayOptions struct {
	// Latency is the one-way delay of every MAD, request and reply.
	Latency time.Duration
	// Service, if set, is how long a destination's agent takes per
	// request: requests for one destination (SMPs and PMA MADs, told apart
	// by DLID or directed route) are answered one at a time.
	Service time.Duration
}

const simSlots = simPorts - 1

// relayAddr is a client's IPv4 address and port.
type relayAddr struct {
	ip   [4]byte
	port int
}

// relayCtl is a client's control channel: its own socket towards ibsim,
// since ibsim answers control messages to where they came from.
type relayCtl struct {
	client  unix.Sockaddr
	up      int
	pending *relaySlot // made at CONNECT, installed when ibsim accepts
}

// relaySlot is a connected client's data path: the client's data socket
// and the relay's socket towards ibsim's slot.
type relaySlot struct {
	index      int
	client     unix.Sockaddr
	clientIP   [4]byte
	clientPort int // the client's data port
	up         int
	closed     bool
	owner      *relayCtl
	// sent counts the requests passed to ibsim and not yet answered.
	sent int
	// gone: the client has asked to disconnect; its requests are dropped.
	gone bool
	// leaving is the client's DISCONNECT, held back until ibsim has
	// answered what it was sent (see holdDisconnect); leaveBy is when it
	// goes anyway.
	leaving []byte
	leaveBy time.Time
}

// StartRelay starts a relay in front of a remote fabric.
func StartRelay(f *Fabric, opts RelayOptions) (*Relay, error) {
	if f.port == 0 {
		return nil, errors.New("simfabric: a relay needs a remote fabric (Options.Remote)")
	}
	r := &Relay{fab: f, opts: opts, server: f.port, on: map[int]func([]byte, unix.Sockaddr){}, onFrame: map[int]func([]byte){},
		ctls: map[relayAddr]*relayCtl{}, busy: map[string]time.Time{}, done: make(chan struct{})}
	var err error
	for try := 0; try < 20; try++ {
		if err = r.bindPorts(20000 + rand.IntN(40000)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("simfabric: relay: %w", err)
	}
	if r.wake, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		r.closeAll()
		return nil, fmt.Errorf("simfabric: relay: %w", err)
	}
	r.on[r.ctl] = r.fromClientCtl
	for i, fd := range r.data {
		r.onFrame[fd] = func(b []byte) { r.fromClient(i, b) }
	}
	go r.loop()
	return r, nil
}

// bindPorts binds the relay's control and slot sockets from base on.
func (r *Relay) bindPorts(base int) error {
	fds := make([]int, 0, simPorts)
	for i := 0; i < simPorts; i++ {
		fd, err := udpSocket(base + i)
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return err
		}
		fds = append(fds, fd)
	}
	r.port, r.ctl = base, fds[0]
	copy(r.data[:], fds[1:])
	return nil
}

// udpSocket is a non-blocking UDP socket bound to port on the loopback
// (0: any free port), with room for a few thousand queued frames.
func udpSocket(port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Port is the UDP base port clients use instead of ibsim's.
func (r *Relay) Port() int { return r.port }

// RunC is Fabric.RunC through the relay.
func (r *Relay) RunC(ctx context.Context, host string, tool string, args ...string) Result {
	bin, err := lookBinary(tool)
	if err != nil {
		return Result{Stderr: "simfabric: " + err.Error() + "\n", Code: -1}
	}
	return r.fab.run(ctx, append(r.Env(host), "LD_PRELOAD="+Umad2Sim), bin, args)
}

// Run is Fabric.Run through the relay.
func (r *Relay) Run(ctx context.Context, host string, binary string, args ...string) Result {
	if abs, err := filepath.Abs(binary); err == nil && strings.Contains(binary, "/") {
		binary = abs
	}
	return r.fab.run(ctx, r.Env(host), binary, args)
}

// Env is the fabric's client environment (Fabric.Env) pointed at the relay.
func (r *Relay) Env(host string) []string {
	env := r.fab.Env(host)
	for i, kv := range env {
		if strings.HasPrefix(kv, "IBSIM_SERVER_PORT=") {
			env[i] = "IBSIM_SERVER_PORT=" + strconv.Itoa(r.port)
		}
	}
	return env
}

// RelayStats says how many packets the relay passed and how late it sent
// them, past the time the delays asked for (scheduling noise).
type RelayStats struct {
	Frames   int64
	MeanLate time.Duration
	MaxLate  time.Duration
	// CPU is the relay's own CPU time (user and system): what it took
	// from ibsim and the tools on the same cores.
	CPU time.Duration
}

// Stats returns the relay's counts so far.
func (r *Relay) Stats() RelayStats {
	s := RelayStats{Frames: r.frames.Load(), MaxLate: time.Duration(r.maxLateNs.Load()), CPU: r.cpu() - time.Duration(r.cpuBase.Load())}
	if s.Frames > 0 {
		s.MeanLate = time.Duration(r.lateNs.Load() / s.Frames)
	}
	return s
}

// ResetStats starts the counts of Stats again.
func (r *Relay) ResetStats() {
	r.frames.Store(0)
	r.lateNs.Store(0)
	r.maxLateNs.Store(0)
	r.cpuBase.Store(int64(r.cpu()))
}

// cpu is the CPU time the relay's thread has used, from /proc (0 when
// it cannot be read).
func (r *Relay) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", r.tid.Load()))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised name: state is the first, utime and
	// stime the 12th and 13th, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// Close stops the relay and closes its sockets; clients still attached
// lose their path to ibsim.
func (r *Relay) Close() error {
	unix.Write(r.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	<-r.done
	r.closeAll()
	return r.err
}

func (r *Relay) closeAll() {
	unix.Close(r.ctl)
	for _, fd := range r.data {
		unix.Close(fd)
	}
	for _, c := range r.ctls {
		unix.Close(c.up)
		if c.pending != nil {
			unix.Close(c.pending.up)
		}
	}
	for i := range r.slot {
		r.dropSlot(i)
	}
	if r.wake > 0 {
		unix.Close(r.wake)
	}
}

// loop sends what is due, then sleeps until the next packet is due or a
// socket has something to read.
func (r *Relay) loop() {
	defer close(r.done)
	// The thread goes back to the runtime afterwards: a goroutine that
	// ends locked ends its thread, and a child started from that thread
	// with Pdeathsig (ibsim and OpenSM are, see childAttr) is killed
	// with it. The relay's thread may well have started ibsim.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r.tid.Store(int64(unix.Gettid()))
	// The thread's timer slack (50 us by default) would be added to
	// every sleep.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	buf := make([]byte, 4096)
	for {
		r.sendDue(time.Now())
		if r.pollFds == nil {
			r.pollFds = []unix.PollFd{{Fd: int32(r.wake), Events: unix.POLLIN}}
			for fd := range r.on {
				r.pollFds = append(r.pollFds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			}
			for fd := range r.onFrame {
				r.pollFds = append(r.pollFds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			}
		}
		fds := r.pollFds
		var timeout *unix.Timespec
		next := r.leaveDue(time.Now())
		if due, ok := r.nextDue(); ok && (next.IsZero() || due.Before(next)) {
			next = due
		}
		if !next.IsZero() {
			ts := unix.NsecToTimespec(max(0, int64(time.Until(next))))
			timeout = &ts
		}
		if _, err := unix.Ppoll(fds, timeout, nil); err != nil && err != unix.EINTR {
			r.err = fmt.Errorf("simfabric: relay: ppoll: %w", err)
			return
		}
		if fds[0].Revents != 0 {
			return
		}
		for i := 1; i < len(fds); i++ {
			// A handler may change r.on and r.onFrame (and so drop
			// r.pollFds); fds stays this round's list.
			if fds[i].Revents == 0 {
				continue
			}
			fd := int(fds[i].Fd)
			if h := r.onFrame[fd]; h != nil {
				r.drainFrames(fd, h)
			} else {
				r.drain(fd, buf)
			}
		}
	}
}

// drain reads every control message waiting on fd and hands it on.
func (r *Relay) drain(fd int, buf []byte) {
	for {
		n, from, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
		if err != nil {
			return
		}
		if h := r.on[fd]; h != nil {
			h(buf[:n], from)
		}
	}
}

// drainFrames reads every packet waiting on data socket fd, a batch per
// recvmmsg, and hands each on.
func (r *Relay) drainFrames(fd int, h func([]byte)) {
	for {
		n := r.batch.recv(fd)
		for i := range n {
			h(r.batch.frame(i))
		}
		if n < relayBatchSize {
			return
		}
	}
}

// ibsim's control message types (§1.5 of the protocol reference).
const (
	relayCtlError      = 0
	relayCtlConnect    = 1
	relayCtlDisconnect = 2
	relayCtlSize       = 80
	relayFrameSize     = 288
)

// fromClientCtl passes a client's control message to ibsim, giving a
// CONNECT the relay's data socket for that client as the client's id.
func (r *Relay) fromClientCtl(msg []byte, from unix.Sockaddr) {
	if len(msg) != relayCtlSize {
		return
	}
	a, ok := from.(*unix.SockaddrInet4)
	if !ok {
		return
	}
	key := relayAddr{a.Addr, a.Port}
	c := r.ctls[key]
	if c == nil {
		up, err := udpSocket(0)
		if err != nil {
			return
		}
		c = &relayCtl{client: &unix.SockaddrInet4{Addr: a.Addr, Port: a.Port}, up: up}
		r.ctls[key] = c
		r.on[up] = func(b []byte, _ unix.Sockaddr) { r.fromServerCtl(key, c, b) }
		r.pollFds = nil
	}
	if binary.LittleEndian.Uint32(msg[8:]) == relayCtlDisconnect && r.holdDisconnect(c, msg) {
		return
	}
	if binary.LittleEndian.Uint32(msg[8:]) == relayCtlConnect {
		up, err := udpSocket(0)
		if err != nil {
			return
		}
		id := int(binary.LittleEndian.Uint32(msg[16:])) // the client's data port
		if c.pending != nil {
			unix.Close(c.pending.up)
		}
		c.pending = &relaySlot{client: &unix.SockaddrInet4{Addr: a.Addr, Port: id}, clientIP: a.Addr, clientPort: id, up: up, owner: c}
		binary.LittleEndian.PutUint32(msg[16:], uint32(localPort(up)))
	}
	_ = unix.Sendto(c.up, msg, 0, r.serverAddr(0))
}

// holdDisconnect holds back a client's DISCONNECT while ibsim has
// requests of the client's it has not answered, and says whether it did.
// ibsim stops reading a slot's socket when the slot disconnects; requests
// left in that socket would be read, and answered, when the next client
// takes the slot, giving that client replies it never asked for (a C tool
// under umad2sim then crashes or waits forever for its own). The client's
// requests still in the relay are dropped. A request ibsim never answers
// holds the DISCONNECT for at most relayLeaveLimit, well within the
// clients' wait for the reply (2 s for ibtool, none for umad2sim).
func (r *Relay) holdDisconnect(c *relayCtl, msg []byte) bool {
	i := int(binary.LittleEndian.Uint32(msg[4:]))
	if i < 0 || i >= simSlots {
		return false
	}
	s := r.slot[i]
	if s == nil || s.owner != c {
		return false
	}
	s.gone = true
	if s.sent == 0 {
		return false
	}
	s.leaving = append([]byte(nil), msg...)
	s.leaveBy = time.Now().Add(relayLeaveLimit)
	return true
}

// relayLeaveLimit bounds how long a DISCONNECT waits for ibsim's answers.
const relayLeaveLimit = 500 * time.Millisecond

// leave passes s's held DISCONNECT to ibsim.
func (r *Relay) leave(s *relaySlot) {
	msg := s.leaving
	s.leaving = nil
	_ = unix.Sendto(s.owner.up, msg, 0, r.serverAddr(0))
}

// leaveDue passes the held DISCONNECTs whose wait is over and returns the
// earliest wait still running (zero if none).
func (r *Relay) leaveDue(now time.Time) time.Time {
	var next time.Time
	for _, s := range r.slot {
		if s == nil || s.leaving == nil {
			continue
		}
		if !s.leaveBy.After(now) {
			r.leave(s)
		} else if next.IsZero() || s.leaveBy.Before(next) {
			next = s.leaveBy
		}
	}
	return next
}

// fromServerCtl passes ibsim's answer back to the client, connecting or
// disconnecting the client's data path as ibsim did.
func (r *Relay) fromServerCtl(key relayAddr, c *relayCtl, msg []byte) {
	if len(msg) != relayCtlSize {
		return
	}
	switch binary.LittleEndian.Uint32(msg[8:]) {
	case relayCtlConnect:
		if s := c.pending; s != nil {
			s.index = int(binary.LittleEndian.Uint32(msg[16:]))
			c.pending = nil
			if s.index >= 0 && s.index < simSlots {
				r.dropSlot(s.index)
				r.slot[s.index] = s
				r.onFrame[s.up] = func(b []byte) { r.fromServer(s, b) }
				r.pollFds = nil
			} else {
				unix.Close(s.up)
			}
		}
	case relayCtlError:
		if c.pending != nil {
			unix.Close(c.pending.up)
			c.pending = nil
		}
	case relayCtlDisconnect:
		if i := int(binary.LittleEndian.Uint32(msg[4:])); i < simSlots {
			r.dropSlot(i)
		}
		delete(r.on, c.up)
		r.pollFds = nil
		delete(r.ctls, key)
		defer unix.Close(c.up)
	}
	_ = unix.Sendto(r.ctl, msg, 0, c.client)
}

// dropSlot forgets slot i's data path; its queued packets are dropped.
func (r *Relay) dropSlot(i int) {
	if s := r.slot[i]; s != nil {
		s.closed = true
		delete(r.onFrame, s.up)
		r.pollFds = nil
		unix.Close(s.up)
		r.slot[i] = nil
	}
}

// fromClient queues a client's packet for ibsim: after the latency, and
// for an agent's request after the agent's earlier requests too.
func (r *Relay) fromClient(slot int, frame []byte) {
	s := r.slot[slot]
	if s == nil || s.gone || len(frame) != relayFrameSize {
		return
	}
	at := time.Now().Add(r.opts.Latency)
	if key := agentKey(frame); r.opts.Service > 0 && key != "" {
		if free := r.busy[key]; free.After(at) {
			at = free
		}
		at = at.Add(r.opts.Service)
		r.busy[key] = at
		r.seq++
		p := relayPacket{at: at, seq: r.seq, slot: s, toServer: true}
		copy(p.frame[:], frame)
		heap.Push(&r.serviced, p)
		return
	}
	p := r.fifo.add()
	*p = relayPacket{at: at, slot: s, toServer: true}
	copy(p.frame[:], frame)
}

// fromServer queues ibsim's packet for the client after the latency.
func (r *Relay) fromServer(s *relaySlot, frame []byte) {
	if s.sent > 0 {
		s.sent--
	}
	if s.leaving != nil && s.sent == 0 {
		r.leave(s)
	}
	p := r.fifo.add()
	*p = relayPacket{at: time.Now().Add(r.opts.Latency), slot: s}
	copy(p.frame[:], frame)
}

// agentKey names the agent a request goes to: the DLID, and for a
// directed-route SMP the route (IBA 14.2.2: its initial path, hop count
// long). A node reached by two routes counts as two agents: the relay
// does not know the fabric. "" for anything but an SMP or PMA request.
func agentKey(frame []byte) string {
	m := frame[32:]
	class, method := m[1], m[3]
	if method&0x80 != 0 { // a response
		return ""
	}
	switch class {
	case 0x01, 0x04: // LID-routed SMP, PMA
		return "L" + string(frame[0:2])
	case 0x81: // directed-route SMP
		hops := int(m[7] & 0x3F)
		return "D" + string(frame[0:2]) + string(m[129:129+hops])
	}
	return ""
}

// nextDue is when the first waiting packet is due.
func (r *Relay) nextDue() (time.Time, bool) {
	p, ok := r.first()
	if !ok {
		return time.Time{}, false
	}
	return p.at, true
}

// first is the waiting packet due first: fifo's or serviced's head.
func (r *Relay) first() (*relayPacket, bool) {
	f := r.fifo.head()
	if len(r.serviced) > 0 && (f == nil || r.serviced[0].at.Before(f.at)) {
		return &r.serviced[0], true
	}
	return f, f != nil
}

// sendDue sends every packet due by now, those for one socket in a row
// with one sendmmsg.
func (r *Relay) sendDue(now time.Time) {
	var frames, lateNs int64
	for {
		p, ok := r.first()
		if !ok || p.at.After(now) {
			break
		}
		if !(p.slot.closed || p.toServer && p.slot.gone) {
			late := int64(now.Sub(p.at))
			frames++
			lateNs += late
			if late > r.maxLateNs.Load() {
				r.maxLateNs.Store(late)
			}
			if p.toServer {
				p.slot.sent++
				r.batch.queue(p.slot.up, p.frame[:], loopback, r.server+1+p.slot.index)
			} else {
				r.batch.queue(r.data[p.slot.index], p.frame[:], p.slot.clientIP, p.slot.clientPort)
			}
		}
		if p == r.fifo.head() {
			r.fifo.pop()
		} else {
			heap.Pop(&r.serviced)
		}
	}
	// Counted before the packets go: a client may read Stats as soon as
	// it has its packet.
	r.frames.Add(frames)
	r.lateNs.Add(lateNs)
	r.batch.flush()
}

// serverAddr is ibsim's port base+offset on the loopback.
func (r *Relay) serverAddr(offset int) unix.Sockaddr {
	return &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: r.server + offset}
}

func localPort(fd int) int {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0
	}
	return sa.(*unix.SockaddrInet4).Port
}

// relayPacket is a packet waiting for its time; seq keeps packets due at
// the same time in arrival order.
type relayPacket struct {
	at       time.Time
	seq      uint64
	slot     *relaySlot
	toServer bool
	frame    [relayFrameSize]byte
}

// relayQueue is a min-heap of packets by due time.
type relayQueue []relayPacket

func (q relayQueue) Len() int { return len(q) }
func (q relayQueue) Less(i, j int) bool {
	if q[i].at.Equal(q[j].at) {
		return q[i].seq < q[j].seq
	}
	return q[i].at.Before(q[j].at)
}
func (q relayQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *relayQueue) Push(x any)   { *q = append(*q, x.(relayPacket)) }
func (q *relayQueue) Pop() any {
	old := *q
	p := old[len(old)-1]
	old[len(old)-1] = relayPacket{}
	*q = old[:len(old)-1]
	return p
}

// freeUDPPorts finds n consecutive UDP ports that are free right now.
func freeUDPPorts(n int) (int, error) {
	for try := 0; try < 50; try++ {
		base := 20000 + rand.IntN(40000)
		var fds []int
		ok := true
		for i := 0; i < n && ok; i++ {
			fd, err := udpSocket(base + i)
			if err != nil {
				ok = false
				break
			}
			fds = append(fds, fd)
		}
		for _, fd := range fds {
			unix.Close(fd)
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no free UDP ports for ibsim")
}
