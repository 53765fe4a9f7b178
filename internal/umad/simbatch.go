package umad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BatchPort is implemented by ports that move many MADs per system call.
// A discovery walk keeps a window of SMPs in flight and answers each reply
// with the next request; moving them in batches saves a system call, and
// on the simulator a wake-up of ibsim, per MAD.
type BatchPort interface {
	Port
	// RecvBatch waits until deadline for MADs and returns those that
	// have arrived, at most len(into), in into; errors as Recv's.
	RecvBatch(deadline time.Time, into []*Packet) (int, error)
	// SendBatch sends pkts in order and returns how many went before an
	// error.
	SendBatch(pkts []*Packet) (int, error)
}

// simBatch is the most frames one recvmmsg or sendmmsg moves; a bigger
// batch takes several calls.
const simBatch = 16

// mmsghdr is struct mmsghdr of recvmmsg(2) and sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// simBatchBufs holds the frames and headers of one direction's batches.
type simBatchBufs struct {
	frames [simBatch][simFrameSize + 64]byte
	iovs   [simBatch]unix.Iovec
	msgs   [simBatch]mmsghdr

	// The poller's view of the socket, and the call it runs (mmsg) with
	// its arguments and results, made once: not two allocations per batch.
	rc    syscall.RawConn
	op    func(fd uintptr) bool
	trap  uintptr
	n     int
	moved int
	err   error
}

// RecvBatch reads as many frames as have arrived, up to len(into), with
// one recvmmsg, waiting until deadline for the first.
func (p *simConn) RecvBatch(deadline time.Time, into []*Packet) (int, error) {
	p.recvMu.Lock()
	defer p.recvMu.Unlock()
	if p.rbufs == nil {
		p.rbufs = &simBatchBufs{}
	}
	b := p.rbufs
	max := min(len(into), simBatch)
	for {
		if err := p.data.SetReadDeadline(deadline); err != nil {
			return 0, p.closedOr(err)
		}
		n, err := p.rawRecv(b, max)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, ErrTimeout
			}
			return 0, p.closedOr(err)
		}
		got := 0
		for i := range n {
			if b.msgs[i].len == simFrameSize {
				into[got] = decodeSimFrame(b.frames[i][:simFrameSize])
				got++
			}
		}
		if got > 0 {
			return got, nil
		}
	}
}

// rawRecv is one recvmmsg of up to max frames.
func (p *simConn) rawRecv(b *simBatchBufs, max int) (int, error) {
	for i := range max {
		b.iovs[i] = unix.Iovec{Base: &b.frames[i][0]}
		b.iovs[i].SetLen(len(b.frames[i]))
		b.msgs[i] = mmsghdr{hdr: unix.Msghdr{Iov: &b.iovs[i], Iovlen: 1}}
	}
	return p.mmsg(unix.SYS_RECVMMSG, b, max)
}

// mmsg runs recvmmsg or sendmmsg (trap) on the first n of b's messages
// through the runtime's poller, so that deadlines and Close wake it, and
// returns how many frames moved.
//
// The call never blocks (MSG_DONTWAIT: the poller does the waiting), so
// it is made without telling the scheduler (RawSyscall6). Told, the
// runtime's monitor took the processor away whenever a sendmmsg that
// woke ibsim was descheduled for more than 20 us, and handing it back
// and forth cost a walk a tenth of its CPU (and kept the monitor waking
// every 20 us).
func (p *simConn) mmsg(trap uintptr, b *simBatchBufs, n int) (int, error) {
	if b.rc == nil {
		rc, err := p.data.(syscall.Conn).SyscallConn()
		if err != nil {
			return 0, err
		}
		b.rc = rc
		b.op = func(fd uintptr) bool {
			r, _, errno := unix.RawSyscall6(b.trap, fd, uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(b.n), unix.MSG_DONTWAIT, 0, 0)
			b.moved, b.err = int(r), nil
			if errno != 0 {
				b.moved, b.err = 0, errno
			}
			return errno != unix.EAGAIN && errno != unix.EINTR
		}
	}
	b.trap, b.n = trap, n
	var err error
	if trap == unix.SYS_SENDMMSG {
		err = b.rc.Write(b.op)
	} else {
		err = b.rc.Read(b.op)
	}
	if err != nil {
		return 0, err
	}
	return b.moved, b.err
}

// SendBatch writes frames with sendmmsg, as many per call as the batch
// holds. Frames for an unconnected UDP socket go one by one.
func (p *simConn) SendBatch(pkts []*Packet) (int, error) {
	peer := p.rawPeerAddr
	if !p.connected && p.cfg.ServerName != "" {
		for i, pkt := range pkts {
			if err := p.Send(pkt); err != nil {
				return i, err
			}
		}
		return len(pkts), nil
	}
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	if p.sbufs == nil {
		p.sbufs = &simBatchBufs{}
	}
	b := p.sbufs
	sent := 0
	for sent < len(pkts) {
		select {
		case <-p.closed:
			return sent, ErrClosed
		default:
		}
		chunk := pkts[sent:min(len(pkts), sent+simBatch)]
		for i, pkt := range chunk {
			frame := b.frames[i][:simFrameSize]
			p.encodeSimFrame(frame, pkt)
			b.iovs[i] = unix.Iovec{Base: &frame[0]}
			b.iovs[i].SetLen(simFrameSize)
			b.msgs[i] = mmsghdr{hdr: unix.Msghdr{Iov: &b.iovs[i], Iovlen: 1}}
			if !p.connected { // else the kernel need not look the name up
				b.msgs[i].hdr.Name, b.msgs[i].hdr.Namelen = &peer[0], uint32(len(peer))
			}
		}
		n, err := p.mmsg(unix.SYS_SENDMMSG, b, len(chunk))
		sent += n
		if err != nil {
			return sent, fmt.Errorf("ibsim send: %w", p.closedOr(err))
		}
	}
	return sent, nil
}

// rawInet4Addr is an IPv4 UDP address as a sockaddr_in, for connect.
func rawInet4Addr(a *net.UDPAddr) []byte {
	var sa unix.RawSockaddrInet4
	sa.Family = unix.AF_INET
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], uint16(a.Port))
	copy(sa.Addr[:], a.IP.To4())
	return unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unix.SizeofSockaddrInet4)
}

// rawUnixAddr is an abstract unix socket address as a sockaddr_un, for
// sendmmsg.
func rawUnixAddr(ua *net.UnixAddr) []byte {
	// An abstract name: sun_path starts with a NUL where the "@" is.
	path := append([]byte{0}, ua.Name[1:]...)
	sa := make([]byte, 2+len(path))
	*(*uint16)(unsafe.Pointer(&sa[0])) = unix.AF_UNIX
	copy(sa[2:], path)
	return sa
}
