package umadtest

import (
	"encoding/binary"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// SA is a subnet administrator (IBA 15) holding tables of records. It
// answers, whatever LID a request was sent to:
//
//   - SubnAdmGet with the one record matching the query's component mask
//     (status ERR_NO_RECORDS for none, ERR_REQ_TOO_MANY_RECORDS for more);
//   - SubnAdmGetTable with every matching record, in RMPP DATA segments
//     of 200 bytes as a real SA sends them (IBA 13.6): the first at once,
//     the others as the requester's ACKs open its window.
//
// A record matches when each field the component mask selects equals the
// query's, as OpenSM compares them.
type SA struct {
	// OneMAD makes GetTable answer as OpenSM does under ibsim, which has
	// no RMPP: one plain MAD, cut after its 200 bytes of records.
	OneMAD bool

	mu        sync.Mutex
	tables    map[uint16][]mad.Struct
	xfers     map[uint32]*xfer // GetTable replies being sent, by TID (low 32 bits)
	getTables int              // GetTable queries answered
	segs      int              // RMPP segments sent
}

// xfer is one GetTable reply in segments.
type xfer struct {
	addr  umad.Address
	segs  [][]byte
	next  int // index of the next segment to send
	acked int // the last ACK's segment number
}

// NewSA returns an SA with no records.
func NewSA() *SA { return &SA{tables: map[uint16][]mad.Struct{}, xfers: map[uint32]*xfer{}} }

// Add adds records to the table of their attribute (NodeRecord,
// PortInfoRecord, ...).
func (s *SA) Add(records ...mad.Struct) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range records {
		id := r.Desc().AttrID
		s.tables[id] = append(s.tables[id], r)
	}
}

// Stats says how many GetTable queries the SA answered and how many RMPP
// segments it sent.
func (s *SA) Stats() (getTables, segments int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.getTables, s.segs
}

// SA MAD offsets (IBA 13.6.2.1 RMPP header, 15.2.1.1 SA header).
const (
	offRMPPVersion = 24
	offRMPPType    = 25
	offRMPPFlags   = 26
	offRMPPSegment = 28
	offRMPPLength  = 32 // payload length (DATA), new window last (ACK)
	offAttrOffset  = 44
	offCompMask    = 48
	saDataOffset   = 56
	saSegmentData  = mad.Size - saDataOffset // 200
	saHeaderBytes  = saDataOffset - 36       // the SA header in each payload
	rmppData       = 1
	rmppACK        = 2
	rmppActive     = 1
	rmppFirst      = 2
	rmppLast       = 4
)

// Answer is a Func answering SubnAdm requests (other classes are handed
// back undelivered).
func (s *SA) Answer(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	if len(h) < mad.Size {
		return nil
	}
	if h.Class() != mad.ClassSubnAdm {
		return []*umad.Packet{Undelivered(req)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h[offRMPPType] == rmppACK {
		return s.ack(req)
	}
	if h.IsResponse() {
		return nil
	}
	switch h.Method() {
	case mad.MethodGet:
		recs := s.match(h)
		switch len(recs) {
		case 0:
			return []*umad.Packet{Reply(req, StatusSANoRecords, nil)}
		case 1:
			return []*umad.Packet{Reply(req, 0, recs[0])}
		default:
			return []*umad.Packet{Reply(req, StatusSATooManyRecs, nil)}
		}
	case mad.MethodGetTable:
		s.getTables++
		var data []byte
		stride := 0
		for _, rec := range s.match(h) {
			stride = (len(rec) + 7) &^ 7 // records are 8-byte aligned
			data = append(data, rec...)
			data = append(data, make([]byte, stride-len(rec))...)
		}
		if s.OneMAD {
			s.segs++
			r := Reply(req, 0, data[:min(len(data), saSegmentData)])
			binary.BigEndian.PutUint16(r.MAD[offAttrOffset:], uint16(stride/8))
			return []*umad.Packet{r}
		}
		x := &xfer{addr: req.Addr, segs: segments(req, data, stride), next: 1, acked: -1}
		s.xfers[h.TID32()] = x
		return []*umad.Packet{s.segment(x, 0)} // the window is one segment until the first ACK
	case mad.MethodSet:
		// Answered with the record as sent, as OpenSM answers a
		// GUIDInfoRecord Set it takes; a test reads what was sent with
		// the port's Requests.
		return []*umad.Packet{Reply(req, 0, h[saDataOffset:])}
	}
	return []*umad.Packet{Reply(req, StatusBadMethod, nil)}
}

// ack sends the segments an ACK's window opens (go-back-N: from the one
// after the acknowledged one, IBA 13.6.3).
func (s *SA) ack(req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	x := s.xfers[h.TID32()]
	if x == nil {
		return nil
	}
	acked := int(binary.BigEndian.Uint32(h[offRMPPSegment:]))
	last := int(binary.BigEndian.Uint32(h[offRMPPLength:]))
	if acked >= len(x.segs) {
		delete(s.xfers, h.TID32()) // all there
		return nil
	}
	// An ACK that acknowledges nothing new asks again for what is
	// missing; otherwise send what the window opens and is not sent yet.
	from := max(acked, x.next)
	if acked == x.acked {
		from = acked
	}
	x.acked = acked
	var out []*umad.Packet
	for i := from; i < min(last, len(x.segs)); i++ {
		out = append(out, s.segment(x, i))
		x.next = max(x.next, i+1)
	}
	return out
}

func (s *SA) segment(x *xfer, i int) *umad.Packet {
	s.segs++
	return &umad.Packet{Addr: x.addr, MAD: append([]byte(nil), x.segs[i]...)}
}

// match returns the encoded records of the queried table matching the
// query's component mask.
func (s *SA) match(h mad.Header) [][]byte {
	mask := binary.BigEndian.Uint64(h[offCompMask:])
	var out [][]byte
	for _, rec := range s.tables[h.AttrID()] {
		if matches(rec, h[saDataOffset:], mask, h.AttrMod()) {
			out = append(out, mad.Encode(rec))
		}
	}
	return out
}

// matches compares the fields of rec the mask selects with the query's,
// as OpenSM does: numbers and byte strings (GIDs, descriptions) equal,
// except PortInfoRecord's CapabilityMask, where attribute modifier bit 31
// asks for any bit in common (IBA 15.2.5.3; OpenSM's "cap mask match").
// Mask bits that name no field are ignored.
func matches(rec mad.Struct, query []byte, mask uint64, mod uint32) bool {
	d := rec.Desc()
	q := d.New()
	if err := q.Unmarshal(append(append([]byte(nil), query...), make([]byte, d.Size)...)); err != nil {
		return false
	}
	for _, path := range mad.CompMaskFields(d, mask) {
		if strings.HasPrefix(path, "bit ") {
			continue
		}
		if a, err := mad.Get(rec, path); err == nil {
			b, _ := mad.Get(q, path)
			if path == "PortInfo.CapabilityMask" && mod&(1<<31) != 0 {
				if a&b == 0 {
					return false
				}
			} else if a != b {
				return false
			}
			continue
		}
		a, err1 := mad.GetBytes(rec, path)
		b, err2 := mad.GetBytes(q, path)
		if err1 != nil || err2 != nil || string(a) != string(b) {
			return false
		}
	}
	return true
}

// segments cuts a GetTableResp's records into RMPP DATA segments (IBA
// 13.6.2.1, 15.2.1.1), each with the SA header and up to 200 bytes of
// them; the first says the whole payload's length, the last its own.
func segments(req *umad.Packet, data []byte, stride int) [][]byte {
	n := max(1, (len(data)+saSegmentData-1)/saSegmentData)
	var segs [][]byte
	for i := 0; i < n; i++ {
		m := Reply(req, 0, nil).MAD
		part := data[min(i*saSegmentData, len(data)):min((i+1)*saSegmentData, len(data))]
		copy(m[saDataOffset:], part)
		m[offRMPPVersion], m[offRMPPType] = 1, rmppData
		flags := byte(rmppActive)
		if i == 0 {
			flags |= rmppFirst
			binary.BigEndian.PutUint32(m[offRMPPLength:], uint32(n*saHeaderBytes+len(data)))
		}
		if i == n-1 {
			flags |= rmppLast
			binary.BigEndian.PutUint32(m[offRMPPLength:], uint32(saHeaderBytes+len(part)))
		}
		m[offRMPPFlags] = flags
		binary.BigEndian.PutUint32(m[offRMPPSegment:], uint32(i+1))
		binary.BigEndian.PutUint16(m[offAttrOffset:], uint16(stride/8))
		segs = append(segs, m)
	}
	return segs
}
