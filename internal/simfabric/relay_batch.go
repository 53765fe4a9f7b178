package simfabric

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The relay moves packets in batches: recvmmsg reads what waits on a
// socket with one system call, sendmmsg sends the due packets for one
// socket with one. At thousands of packets a second in each direction
// the relay's system calls, not its own work, were most of its CPU, which
// it takes from ibsim and the tools on the same cores.

// relayBatchSize is the most packets one recvmmsg or sendmmsg moves.
const relayBatchSize = 64

var loopback = [4]byte{127, 0, 0, 1}

// mmsghdr is struct mmsghdr of recvmmsg(2) and sendmmsg(2).
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// relayBatch holds one batch of packets, read or to send.
type relayBatch struct {
	frames [relayBatchSize][relayFrameSize + 64]byte
	iovs   [relayBatchSize]unix.Iovec
	addrs  [relayBatchSize]unix.RawSockaddrInet4
	msgs   [relayBatchSize]mmsghdr
	n      int // packets queued to send
	fd     int // the socket they go from
}

// recv reads up to a batch of packets waiting on fd (without waiting)
// and returns how many it read; frame(i) is the i-th.
func (b *relayBatch) recv(fd int) int {
	for i := range b.msgs {
		b.iovs[i] = unix.Iovec{Base: &b.frames[i][0]}
		b.iovs[i].SetLen(len(b.frames[i]))
		b.msgs[i] = mmsghdr{hdr: unix.Msghdr{Iov: &b.iovs[i], Iovlen: 1}}
	}
	n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[0])), relayBatchSize, unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(n)
}

func (b *relayBatch) frame(i int) []byte { return b.frames[i][:b.msgs[i].len] }

// queue adds a packet for ip:port from socket fd to the batch, sending
// the batch first if it is full or goes from another socket.
func (b *relayBatch) queue(fd int, frame []byte, ip [4]byte, port int) {
	if b.n > 0 && (b.fd != fd || b.n == relayBatchSize) {
		b.flush()
	}
	i := b.n
	copy(b.frames[i][:], frame)
	b.addrs[i] = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: ip}
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&b.addrs[i].Port))[:], uint16(port))
	b.iovs[i] = unix.Iovec{Base: &b.frames[i][0]}
	b.iovs[i].SetLen(len(frame))
	b.msgs[i] = mmsghdr{hdr: unix.Msghdr{Name: (*byte)(unsafe.Pointer(&b.addrs[i])), Namelen: unix.SizeofSockaddrInet4, Iov: &b.iovs[i], Iovlen: 1}}
	b.fd = fd
	b.n++
}

// flush sends the queued packets. A packet the kernel refuses is dropped,
// as a lossy link would.
func (b *relayBatch) flush() {
	for off := 0; off < b.n; {
		n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(b.fd), uintptr(unsafe.Pointer(&b.msgs[off])), uintptr(b.n-off), unix.MSG_DONTWAIT, 0, 0)
		if errno != 0 || n == 0 {
			off++ // the first of the rest failed
			continue
		}
		off += int(n)
	}
	b.n = 0
}

// relayFIFO is a queue of packets in arrival order; it reuses its
// storage, so a packet costs no allocation once the queue has grown.
type relayFIFO struct {
	buf        []relayPacket
	start, len int
}

// add appends a zero packet and returns it to be filled.
func (q *relayFIFO) add() *relayPacket {
	if q.len == len(q.buf) {
		grown := make([]relayPacket, max(64, 2*len(q.buf)))
		for i := range q.len {
			grown[i] = q.buf[(q.start+i)%len(q.buf)]
		}
		q.buf, q.start = grown, 0
	}
	p := &q.buf[(q.start+q.len)%len(q.buf)]
	q.len++
	return p
}

// head is the oldest packet, nil when the queue is empty.
func (q *relayFIFO) head() *relayPacket {
	if q.len == 0 {
		return nil
	}
	return &q.buf[q.start]
}

func (q *relayFIFO) pop() {
	q.buf[q.start].slot = nil
	q.start = (q.start + 1) % len(q.buf)
	q.len--
}
