package rpc

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// RMPP, the reliable multi-packet protocol (IBA 13.6): a message longer
// than one MAD travels as numbered DATA segments, each acknowledged by the
// receiver with an ACK that also opens the sender's window.
//
// Messages are handled in the layout the Linux kernel uses for RMPP agents,
// so both transports give callers the same bytes: the first MAD whole (256
// bytes, class header included), then each further segment's data without
// its repeated headers.

// Offsets of the RMPP header inside a MAD (IBA 13.6.2.1, Figure 168).
const (
	rmppOffVersion = 24
	rmppOffType    = 25
	rmppOffFlags   = 26 // RRespTime (5 bits) | RMPPFlags (3 bits)
	rmppOffStatus  = 27
	rmppOffSegment = 28 // SegmentNumber (DATA, ACK)
	rmppOffLength  = 32 // PayloadLength (DATA) or NewWindowLast (ACK)
	rmppHeaderEnd  = 36
)

const (
	rmppVersion = 1

	rmppTypeData  = 1
	rmppTypeAck   = 2
	rmppTypeStop  = 3
	rmppTypeAbort = 4

	rmppFlagActive = 1
	rmppFlagFirst  = 2
	rmppFlagLast   = 4

	// rmppWindow is how many segments the receiver lets the sender have
	// unacknowledged.
	rmppWindow = 32
)

// ClassDataOffset is where a class's data starts in each RMPP segment:
// after the common, RMPP and class-specific headers.
func ClassDataOffset(class uint8) int {
	switch {
	case class == mad.ClassSubnAdm:
		return 56 // SA header: SM_Key, AttributeOffset, ComponentMask (IBA 15.2.1.1)
	case class >= 0x30 && class <= 0x4F:
		return 40 // vendor range 2: OUI (IBA 13.4.9.2)
	default:
		return rmppHeaderEnd
	}
}

// usesRMPP says whether a class's MADs carry an RMPP header: the SA and
// vendor range 2 (IBA 13.6.1). Other classes have other fields there (an
// SMP's M_Key, for one).
func usesRMPP(class uint8) bool {
	return class == mad.ClassSubnAdm || (class >= 0x30 && class <= 0x4F)
}

type rmppHeader struct {
	version, typ, flags, status uint8
	segment, length             uint32
}

func readRMPP(m []byte) rmppHeader {
	return rmppHeader{
		version: m[rmppOffVersion],
		typ:     m[rmppOffType],
		flags:   m[rmppOffFlags] & 0x07,
		status:  m[rmppOffStatus],
		segment: binary.BigEndian.Uint32(m[rmppOffSegment:]),
		length:  binary.BigEndian.Uint32(m[rmppOffLength:]),
	}
}

func writeRMPP(m []byte, h rmppHeader) {
	m[rmppOffVersion] = h.version
	m[rmppOffType] = h.typ
	m[rmppOffFlags] = m[rmppOffFlags]&^0x07 | h.flags&0x07
	m[rmppOffStatus] = h.status
	binary.BigEndian.PutUint32(m[rmppOffSegment:], h.segment)
	binary.BigEndian.PutUint32(m[rmppOffLength:], h.length)
}

// isSegmented says whether a received MAD starts a multi-segment RMPP
// message that still has to be reassembled. A single-segment message
// (First and Last set), a message the kernel already reassembled (longer
// than one MAD) and ibsim's RMPP version 0 replies are complete.
func isSegmented(m []byte) bool {
	if len(m) != mad.Size || !usesRMPP(mad.Header(m).Class()) {
		return false
	}
	h := readRMPP(m)
	return h.version == rmppVersion && h.typ == rmppTypeData && h.flags&rmppFlagActive != 0 &&
		h.flags&(rmppFlagFirst|rmppFlagLast) != rmppFlagFirst|rmppFlagLast
}

// reassemble receives the rest of a segmented message whose packet first
// arrived on ch, acknowledging segments as IBA 13.6.6.4 asks: in-order
// segments advance the window, anything else re-acknowledges the last
// in-order segment so the sender goes back to it.
func (e *Engine) reassemble(ctx context.Context, first *umad.Packet, ch chan *umad.Packet, timeout time.Duration, retries int) (*umad.Packet, error) {
	class := mad.Header(first.MAD).Class()
	off := ClassDataOffset(class)
	var msg []byte
	var expected uint32 = 1
	silent, stale := 0, 0
	pkt := first
	for {
		if pkt != nil {
			h := readRMPP(pkt.MAD)
			switch {
			case h.typ == rmppTypeStop || h.typ == rmppTypeAbort:
				return nil, fmt.Errorf("sender ended the RMPP transfer (type %d, status %d)", h.typ, h.status)
			case h.typ != rmppTypeData:
				// not for the receiver: ignore
			case h.segment == expected:
				if expected == 1 {
					if h.flags&rmppFlagFirst == 0 {
						return nil, fmt.Errorf("RMPP segment 1 lacks the First flag")
					}
					msg = append(msg, pkt.MAD...)
				} else {
					msg = append(msg, pkt.MAD[off:]...)
				}
				if h.flags&rmppFlagLast != 0 {
					// The last segment's PayloadLength counts its headers
					// past the RMPP header and its data; the rest is padding.
					pad := (mad.Size - rmppHeaderEnd) - int(h.length)
					if pad < 0 || pad > mad.Size-off {
						return nil, fmt.Errorf("RMPP last segment has a bad payload length %d", h.length)
					}
					msg = msg[:len(msg)-pad]
					e.sendAck(first, pkt, expected)
					out := *first
					out.MAD = msg
					return &out, nil
				}
				expected++
				silent, stale = 0, 0
				e.sendAck(first, pkt, expected-1)
			default:
				// A duplicate or a segment past a gap: re-acknowledge, but
				// give up on a sender that never makes progress.
				if stale++; stale > 4*rmppWindow {
					return nil, fmt.Errorf("RMPP transfer makes no progress after segment %d", expected-1)
				}
				e.sendAck(first, pkt, expected-1)
			}
		}
		var err error
		pkt, err = e.wait(ctx, ch, timeout)
		if err != nil {
			return nil, err
		}
		if pkt == nil {
			if silent++; silent > retries {
				return nil, fmt.Errorf("RMPP transfer stalled after segment %d", expected-1)
			}
			e.sendAck(first, first, expected-1)
		}
	}
}

// sendAck acknowledges segments up to seg. The ACK carries the data's
// header with the response bit flipped (it travels the other way) and
// opens the window to seg+rmppWindow.
func (e *Engine) sendAck(first, data *umad.Packet, seg uint32) {
	ack := make([]byte, mad.Size)
	copy(ack, data.MAD[:rmppHeaderEnd])
	ack[3] ^= mad.MethodResponse
	writeRMPP(ack, rmppHeader{version: rmppVersion, typ: rmppTypeAck, flags: rmppFlagActive,
		segment: seg, length: seg + rmppWindow})
	e.trace(Event{Kind: EventSend, Addr: first.Addr, MAD: ack})
	_ = e.port.Send(&umad.Packet{Addr: first.Addr, MAD: ack})
}

// segments splits a long request (kernel layout) into DATA segments.
func segments(msg []byte) [][]byte {
	off := ClassDataOffset(mad.Header(msg).Class())
	chunk := mad.Size - off
	rest := msg[mad.Size:]
	n := 1 + (len(rest)+chunk-1)/chunk
	total := uint32((n-1)*(mad.Size-rmppHeaderEnd) + (mad.Size - rmppHeaderEnd))
	lastLen := uint32(mad.Size - rmppHeaderEnd)
	if n > 1 {
		tail := len(rest) - (n-2)*chunk
		lastLen = uint32(off - rmppHeaderEnd + tail)
		total = uint32((n-1)*(mad.Size-rmppHeaderEnd)) + lastLen
	}
	segs := make([][]byte, n)
	for i := range segs {
		s := make([]byte, mad.Size)
		copy(s, msg[:off])
		if i > 0 {
			copy(s[off:], rest[(i-1)*chunk:min(len(rest), i*chunk)])
		} else {
			copy(s[off:], msg[off:mad.Size])
		}
		h := rmppHeader{version: rmppVersion, typ: rmppTypeData, flags: rmppFlagActive, segment: uint32(i + 1)}
		if i == 0 {
			h.flags |= rmppFlagFirst
			h.length = total
		}
		if i == n-1 {
			h.flags |= rmppFlagLast
			h.length = lastLen
		}
		writeRMPP(s, h)
		segs[i] = s
	}
	return segs
}

// sendSegmented sends a long request as RMPP DATA segments within the
// receiver's window (IBA 13.6.6.3), going back to the last acknowledged
// segment on timeout, and returns once the last segment is acknowledged.
func (e *Engine) sendSegmented(ctx context.Context, req *Request, msg []byte, ch chan *umad.Packet, timeout time.Duration, retries int) error {
	segs := segments(msg)
	acked, windowLast, next := 0, 1, 0
	silent := 0
	for acked < len(segs) {
		for next < len(segs) && next < windowLast {
			e.stats.sent.Add(1)
			e.trace(Event{Kind: EventSend, Addr: req.Addr, MAD: segs[next]})
			if err := e.port.Send(&umad.Packet{Addr: req.Addr, MAD: segs[next]}); err != nil {
				return err
			}
			next++
		}
		pkt, err := e.wait(ctx, ch, timeout)
		if err != nil {
			return err
		}
		if pkt == nil || pkt.Status != 0 {
			if silent++; silent > retries {
				return &TimeoutError{What: Describe(req.Addr, msg), Attempts: silent, Timeout: timeout, Addr: req.Addr, Req: msg}
			}
			e.stats.retried.Add(1)
			next = acked // go back to the first unacknowledged segment
			continue
		}
		h := readRMPP(pkt.MAD)
		switch h.typ {
		case rmppTypeAck:
			if int(h.segment) > acked && int(h.segment) <= len(segs) {
				acked, silent = int(h.segment), 0
			}
			windowLast = max(windowLast, int(h.length))
			next = max(next, acked)
		case rmppTypeStop, rmppTypeAbort:
			return fmt.Errorf("%s: receiver ended the RMPP transfer (type %d, status %d)", Describe(req.Addr, msg), h.typ, h.status)
		}
	}
	return nil
}
