package umadtest

import (
	"encoding/binary"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// MAD status codes agents answer with (IBA 13.4.7, Table 109).
const (
	StatusBadMethod     = 0x0008 // method not supported
	StatusUnsupported   = 0x000C // method/attribute combination not supported
	StatusInvalidField  = 0x001C // invalid attribute or modifier
	StatusSANoRecords   = 0x0300 // SA ERR_NO_RECORDS (IBA 15.2.1.1, Table 196)
	StatusSATooManyRecs = 0x0500 // SA ERR_REQ_TOO_MANY_RECORDS
)

// AnyMod stands for every attribute modifier (or PortSelect) in Node.Set,
// Node.Fail and PMA.Set.
const AnyMod = ^uint32(0)

// tidSlot is what ibsim writes into bits 63..48 of a reply's TID (its
// client slot); the kernel rewrites the high bits too. Replies carry it so
// that a tester matching on more than the low 32 bits fails.
const tidSlot = 0x0001

// dataOffset is where the attribute data of a request starts: after the
// SA header for SubnAdm (IBA 15.2.1.1), at 24 for vendor classes of range
// 1 (IBA 16.5.1), at 32 for CongestionLog (IBA A10.4.1), at 64 for SMPs
// (IBA 14.2.1) and the other GMPs.
func dataOffset(h mad.Header) int { return mad.AttrDataOffset(h.Class(), h.AttrID()) }

// Reply returns the response an agent gives to req, carrying status and
// data (the attribute as it is after the request; nil for none):
//
//   - the method is the response method: GetResp for a Get or a Set,
//     GetTableResp for a GetTable, the request's with the R bit otherwise
//     (IBA 13.4.5);
//   - the TID keeps its low 32 bits and has ibsim's client slot in its
//     high bits, as replies have on both transports;
//   - a directed-route SMP gets the D bit in its status word, and keeps its
//     hop pointer (0: it has come back to the requester) and its paths
//     (IBA 14.2.2.3); the return path, which only the fabric knows, is the
//     Fabric's to fill in;
//   - the address is the request's: the reply comes from where it went.
//
// The data goes at the attribute's data offset (56 for SubnAdm, 24 for
// vendor range 1, 64 for SMPs and most GMPs) and the rest of the data
// area is zeroed.
func Reply(req *umad.Packet, status uint16, data []byte) *umad.Packet {
	h := append(mad.Header(nil), req.MAD...)
	if len(h) < mad.Size {
		h = append(h, make([]byte, mad.Size-len(h))...)
	}
	switch m := h.Method(); m {
	case mad.MethodGet, mad.MethodSet:
		h[3] = mad.MethodGetResp
	default:
		h[3] = m | mad.MethodResponse
	}
	if h.Class() == mad.ClassSubnDR {
		status |= mad.DirectionBit
	}
	binary.BigEndian.PutUint16(h[4:], status)
	h.SetTID(h.TID()&0x0000_FFFF_FFFF_FFFF | tidSlot<<48)
	off := dataOffset(h)
	area := h[off:]
	if h.Class() == mad.ClassSubnDR || h.Class() == mad.ClassSubnLID {
		area = h.SMPData() // the paths after it stay
	}
	clear(area)
	copy(area, data)
	r := copyPacket(req)
	r.MAD, r.Status, r.Length = h, 0, 0
	return r
}

// Undelivered returns req as a transport hands back a request it could not
// deliver: unchanged, with Status umad.StatusTimeout.
func Undelivered(req *umad.Packet) *umad.Packet {
	r := copyPacket(req)
	r.Status = umad.StatusTimeout
	return r
}

// Echo answers every request with a reply holding the request's own data
// and status 0 (an agent that accepts every Set).
func Echo(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	if len(h) < mad.Size || h.IsResponse() {
		return nil
	}
	off := dataOffset(h)
	end := len(h)
	if h.Class() == mad.ClassSubnDR || h.Class() == mad.ClassSubnLID {
		end = off + mad.SMPDataSize
	}
	return []*umad.Packet{Reply(req, 0, h[off:end])}
}

// Classes answers each request with the Func of its management class. A
// request of a class without one is handed back undelivered, as ibsim
// does when nobody handles it; responses (a server's) are dropped.
type Classes map[uint8]Func

// Answer is a Func.
func (c Classes) Answer(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	if len(h) < 24 || h.IsResponse() {
		return nil
	}
	if f := c[h.Class()]; f != nil {
		return f(req)
	}
	return []*umad.Packet{Undelivered(req)}
}
