package umadtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// SimServer answers with a Func on ibsim's sockets: the unix datagram
// protocol of docs/ibsim-protocol.md (a control channel of
// 80-byte messages, a packet channel of 288-byte frames). A C tool run
// under umad2sim (LD_PRELOAD=libumad2sim.so IBSIM_SOCKNAME=SockName())
// and ibtool's ibsim transport both reach it, so a test can give them the
// same answers for a class ibsim does not simulate (congestion control,
// vendor classes) and compare what they print.
//
// The attached port is the one the Func answers a 0-hop directed-route
// NodeInfo and PortInfo for (a Fabric's local port): GET_NODEINFO,
// GET_PORTINFO and the other control requests are derived from them.
// Requests are passed to the Func one at a time.
type SimServer struct {
	name   string
	answer Func

	mu    sync.Mutex // serializes the Func; guards slots
	ctl   *net.UnixConn
	slots [simSlots]*net.UnixConn
	wg    sync.WaitGroup
}

const (
	simSlots     = 10
	simCtlLen    = 80
	simFrameLen  = 288
	simMagic     = 0xDEADBEEF
	simTimedOut  = 110 // ETIMEDOUT: a request handed back undelivered
	simCtlErr    = 0
	simConnect   = 1
	simDisconn   = 2
	simGetPort   = 3
	simGetVendor = 4
	simGetGID    = 5
	simGetGUID   = 6
	simGetNode   = 7
	simGetPInfo  = 8
	simSetISSM   = 9
	simGetPKeys  = 10
)

func simAddr(name string) *net.UnixAddr {
	return &net.UnixAddr{Name: "@" + name + "\x00", Net: "unixgram"}
}

// NewSimServer listens on the abstract socket names of IBSIM_SOCKNAME
// name (name:ctl, name:out0...) and answers with answer until Close.
func NewSimServer(name string, answer Func) (*SimServer, error) {
	ctl, err := net.ListenUnixgram("unixgram", simAddr(name+":ctl"))
	if err != nil {
		return nil, fmt.Errorf("simserver: %w", err)
	}
	s := &SimServer{name: name, answer: answer, ctl: ctl}
	s.wg.Add(1)
	go s.serveCtl()
	return s, nil
}

// SockName is the IBSIM_SOCKNAME of the server.
func (s *SimServer) SockName() string { return s.name }

// Close stops the server and waits for its goroutines.
func (s *SimServer) Close() error {
	err := s.ctl.Close()
	s.mu.Lock()
	for i, c := range s.slots {
		if c != nil {
			c.Close()
			s.slots[i] = nil
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *SimServer) serveCtl() {
	defer s.wg.Done()
	buf := make([]byte, simCtlLen+16)
	for {
		n, from, err := s.ctl.ReadFromUnix(buf)
		if err != nil {
			return
		}
		if n != simCtlLen || binary.LittleEndian.Uint32(buf) != simMagic {
			continue
		}
		msg := append([]byte(nil), buf[:n]...)
		if !s.control(msg) {
			binary.LittleEndian.PutUint32(msg[8:], simCtlErr)
		}
		_, _ = s.ctl.WriteToUnix(msg, withNUL(from))
	}
}

// withNUL gives back the trailing NUL that ibsim clients put in their
// abstract socket names and that Go drops from a received address.
func withNUL(a *net.UnixAddr) *net.UnixAddr {
	if a == nil || !strings.HasPrefix(a.Name, "@") || strings.HasSuffix(a.Name, "\x00") {
		return a
	}
	return &net.UnixAddr{Name: a.Name + "\x00", Net: a.Net}
}

// control fills the reply to one control message in place; false for an
// error reply.
func (s *SimServer) control(msg []byte) bool {
	slot := binary.LittleEndian.Uint32(msg[4:])
	data := msg[16:]
	switch binary.LittleEndian.Uint32(msg[8:]) {
	case simConnect:
		return s.connect(data)
	case simDisconn:
		s.mu.Lock()
		defer s.mu.Unlock()
		if slot < simSlots && s.slots[slot] != nil {
			s.slots[slot].Close()
			s.slots[slot] = nil
		}
		return true
	case simSetISSM:
		return true
	}
	ni, pi := s.local()
	if ni == nil || pi == nil {
		return false
	}
	clear(data)
	switch binary.LittleEndian.Uint32(msg[8:]) {
	case simGetPort:
		binary.LittleEndian.PutUint16(data, binary.BigEndian.Uint16(pi[16:]))
		data[2] = pi[32] & 0x0F
	case simGetVendor:
		var n mad.NodeInfo
		_ = n.Unmarshal(ni)
		binary.LittleEndian.PutUint32(data[0:], n.VendorID)
		binary.LittleEndian.PutUint32(data[4:], uint32(n.DeviceID))
		binary.LittleEndian.PutUint32(data[8:], n.Revision)
		binary.LittleEndian.PutUint64(data[16:], 1)
	case simGetGID:
		copy(data, pi[8:16])
		binary.LittleEndian.PutUint64(data[8:], binary.BigEndian.Uint64(ni[12:])) // ibsim's byte order
	case simGetGUID:
		binary.LittleEndian.PutUint64(data, binary.BigEndian.Uint64(ni[12:]))
	case simGetNode:
		copy(data, ni)
	case simGetPInfo:
		copy(data, pi)
	case simGetPKeys:
		binary.BigEndian.PutUint16(data, 0xFFFF)
	default:
		return false
	}
	return true
}

// connect gives the client a slot whose socket is connected to the
// client's packet socket (name:in<id>).
func (s *SimServer) connect(info []byte) bool {
	id := binary.LittleEndian.Uint32(info)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.slots {
		if s.slots[i] != nil {
			continue
		}
		c, err := net.DialUnix("unixgram", simAddr(fmt.Sprintf("%s:out%d", s.name, i)),
			simAddr(fmt.Sprintf("%s:in%d", s.name, id)))
		if err != nil {
			return false
		}
		s.slots[i] = c
		binary.LittleEndian.PutUint32(info, uint32(i))
		clear(info[12:44])
		copy(info[12:43], "umadtest")
		s.wg.Add(1)
		go s.serveSlot(c)
		return true
	}
	return false
}

// local asks the Func for the attached port's NodeInfo and PortInfo (0-hop
// directed route).
func (s *SimServer) local() (ni, pi []byte) {
	get := func(attr uint16) []byte {
		req := &umad.Packet{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: mad.NewDRSMP(mad.MethodGet, attr, 0, []byte{0})}
		s.mu.Lock()
		replies := s.answer(req)
		s.mu.Unlock()
		for _, r := range replies {
			if r.Status == 0 && mad.Header(r.MAD).IsResponse() {
				return mad.Header(r.MAD).SMPData()
			}
		}
		return nil
	}
	return get(mad.AttrNodeInfo), get(mad.AttrPortInfo)
}

// serveSlot answers the frames of one client.
func (s *SimServer) serveSlot(c *net.UnixConn) {
	defer s.wg.Done()
	buf := make([]byte, simFrameLen+16)
	for {
		n, err := c.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // the client went away before its peer did
		}
		if n != simFrameLen {
			continue
		}
		frame := buf[:n]
		dlid := binary.BigEndian.Uint16(frame[0:])
		dqp, sqp := binary.BigEndian.Uint32(frame[8:]), binary.BigEndian.Uint32(frame[12:])
		req := &umad.Packet{Addr: umad.Address{LID: dlid, QP: dqp, QKey: umad.QP1QKey}, MAD: append([]byte(nil), frame[32:]...)}
		s.mu.Lock()
		replies := s.answer(req)
		s.mu.Unlock()
		for _, r := range replies {
			out := make([]byte, simFrameLen)
			binary.BigEndian.PutUint16(out[4:], dlid) // from the target
			binary.BigEndian.PutUint32(out[8:], sqp)
			binary.BigEndian.PutUint32(out[12:], dqp)
			if r.Status != 0 {
				binary.BigEndian.PutUint32(out[16:], simTimedOut)
			}
			binary.BigEndian.PutUint64(out[24:], uint64(copy(out[32:], r.MAD)))
			_, _ = c.Write(out)
		}
	}
}
