package rpc

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// saSegment builds DATA segment seg (1-based) of n of an SA GetTableResp,
// by hand from IBA 13.6.2.1 and 15.2.1.1: common header, RMPP header,
// SA header, then 200 data bytes filled with the segment number.
func saSegment(tid uint64, seg, n int, lastData int) []byte {
	m := make([]byte, 256)
	m[0], m[1], m[2], m[3] = 1, 0x03, 2, 0x92 // SubnAdmGetTableResp
	binary.BigEndian.PutUint64(m[8:], tid)
	binary.BigEndian.PutUint16(m[16:], 0x0011) // NodeRecord
	m[24], m[25] = 1, 1                        // RMPP version 1, DATA
	flags := byte(1)                           // Active
	if seg == 1 {
		flags |= 2 // First
		binary.BigEndian.PutUint32(m[32:], uint32((n-1)*220+20+lastData))
	}
	if seg == n {
		flags |= 4 // Last
		binary.BigEndian.PutUint32(m[32:], uint32(20+lastData))
	}
	m[26] = flags
	binary.BigEndian.PutUint32(m[28:], uint32(seg))
	binary.BigEndian.PutUint16(m[44:], 14) // AttributeOffset: 112-byte records
	size := 200
	if seg == n {
		size = lastData
	}
	copy(m[56:], bytes.Repeat([]byte{byte(seg)}, size))
	return m
}

// fakeSA answers a GetTable with an n-segment reply, honouring the
// receiver's ACK window (go-back-N), and lets a test drop or reorder
// first transmissions.
type fakeSA struct {
	n, lastData int
	drop        map[int]bool // segments whose first transmission is lost
	swap        map[int]bool // segment k's first transmission arrives after k+1
	sent        map[int]int
	acks        []uint32
}

func (f *fakeSA) handle(p *umad.Packet) []*umad.Packet {
	h := mad.Header(p.MAD)
	tid := h.TID()
	var from, to int
	switch {
	case p.MAD[25] == 2: // ACK
		seg := binary.BigEndian.Uint32(p.MAD[28:])
		win := binary.BigEndian.Uint32(p.MAD[32:])
		f.acks = append(f.acks, seg)
		if p.MAD[3] != mad.MethodGetTable {
			panic("an ACK must carry the data's method with the response bit flipped")
		}
		from, to = int(seg)+1, min(int(win), f.n)
	case h.Method() == mad.MethodGetTable:
		from, to = 1, 1 // the initial window is one segment
	}
	var out []*umad.Packet
	var held *umad.Packet
	for s := from; s <= to; s++ {
		f.sent[s]++
		pkt := &umad.Packet{Addr: umad.Address{LID: 1, QP: 1}, MAD: saSegment(tid, s, f.n, f.lastData)}
		if f.sent[s] == 1 && f.drop[s] {
			continue
		}
		if f.sent[s] == 1 && f.swap[s] {
			held = pkt
			continue
		}
		out = append(out, pkt)
		if held != nil {
			out, held = append(out, held), nil
		}
	}
	if held != nil {
		out = append(out, held)
	}
	return out
}

func getTable() *Request {
	return &Request{Addr: umad.Address{LID: 1, QP: 1, QKey: umad.QP1QKey},
		MAD: mad.NewRequest(mad.ClassSubnAdm, 2, mad.MethodGetTable, 0x0011, 0)}
}

func TestRMPPReassembly(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n          int
		drop, swap map[int]bool
	}{
		{"five segments", 5, nil, nil},
		{"two segments", 2, nil, nil},
		{"lost segment", 6, map[int]bool{3: true}, nil},
		{"out of order", 6, nil, map[int]bool{4: true}},
		{"lost last", 4, map[int]bool{4: true}, nil},
		{"lost first", 3, map[int]bool{1: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sa := &fakeSA{n: tc.n, lastData: 88, drop: tc.drop, swap: tc.swap, sent: map[int]int{}}
			e := New(umadtest.NewPort(sa.handle), Options{Timeout: 50 * time.Millisecond})
			defer e.Close()
			r, err := e.Do(context.Background(), getTable())
			if err != nil {
				t.Fatal(err)
			}
			// Kernel layout: the first MAD whole, then each further
			// segment's 200 data bytes, the last one cut to its length.
			want := saSegment(r.MAD.TID(), 1, tc.n, 88)
			for s := 2; s <= tc.n; s++ {
				size := 200
				if s == tc.n {
					size = 88
				}
				want = append(want, bytes.Repeat([]byte{byte(s)}, size)...)
			}
			if !bytes.Equal(r.MAD, want) {
				t.Fatalf("reassembled %d bytes, want %d; first difference at %d", len(r.MAD), len(want), firstDiff(r.MAD, want))
			}
			if last := sa.acks[len(sa.acks)-1]; last != uint32(tc.n) {
				t.Fatalf("last ACK for segment %d, want %d", last, tc.n)
			}
		})
	}
}

func TestRMPPSenderStopIsAnError(t *testing.T) {
	port := umadtest.NewPort(func(p *umad.Packet) []*umad.Packet {
		m := saSegment(mad.Header(p.MAD).TID(), 1, 3, 10)
		if p.MAD[25] == 2 {
			m[25] = 3 // STOP
		}
		return []*umad.Packet{{MAD: m}}
	})
	e := New(port, Options{Timeout: 50 * time.Millisecond})
	defer e.Close()
	if _, err := e.Do(context.Background(), getTable()); err == nil || !strings.Contains(err.Error(), "ended the RMPP transfer") {
		t.Fatalf("err = %v", err)
	}
}

func TestRMPPSingleSegmentAndIbsimVersion0AreComplete(t *testing.T) {
	for _, version := range []byte{0, 1} {
		port := umadtest.NewPort(func(p *umad.Packet) []*umad.Packet {
			m := saSegment(mad.Header(p.MAD).TID(), 1, 1, 150)
			m[24] = version
			return []*umad.Packet{{MAD: m}}
		})
		e := New(port, Options{})
		r, err := e.Do(context.Background(), getTable())
		e.Close()
		if err != nil || len(r.MAD) != 256 {
			t.Fatalf("version %d: %v, %d bytes", version, err, len(r.MAD))
		}
	}
}

// TestRMPPSegmentedRequest sends a 3-segment request and checks the
// segments the receiver sees against IBA 13.6: numbering, flags, payload
// lengths, and that the sender waits for the window the ACKs open.
func TestRMPPSegmentedRequest(t *testing.T) {
	var got [][]byte
	port := umadtest.NewPort(func(p *umad.Packet) []*umad.Packet {
		m := p.MAD
		if m[25] != 1 {
			return nil
		}
		got = append(got, m)
		seg := binary.BigEndian.Uint32(m[28:])
		ack := make([]byte, 256)
		copy(ack, m[:36])
		ack[3] |= 0x80
		ack[25], ack[26] = 2, 1
		binary.BigEndian.PutUint32(ack[28:], seg)
		binary.BigEndian.PutUint32(ack[32:], seg+1) // a window of one: lock step
		out := []*umad.Packet{{MAD: ack}}
		if m[26]&4 != 0 { // after the last segment, the response
			resp := make([]byte, 256)
			copy(resp, m[:24])
			resp[3] = 0x81
			out = append(out, &umad.Packet{MAD: resp})
		}
		return out
	})
	e := New(port, Options{Timeout: 100 * time.Millisecond})
	defer e.Close()
	long := mad.NewRequest(mad.ClassSubnAdm, 2, mad.MethodSet, 0x0035, 0)
	long = append(long, bytes.Repeat([]byte{0xAA}, 300)...) // 200 in segment 2, 100 in 3
	r, err := e.Do(context.Background(), &Request{Addr: umad.Address{LID: 1, QP: 1}, MAD: long})
	if err != nil {
		t.Fatal(err)
	}
	if r.MAD.Method() != 0x81 || len(got) != 3 {
		t.Fatalf("method 0x%x after %d segments", r.MAD.Method(), len(got))
	}
	for i, want := range []struct {
		flags   byte
		payload uint32
	}{{1 | 2, 2*220 + 20 + 100}, {1, 0}, {1 | 4, 20 + 100}} {
		m := got[i]
		if seg := binary.BigEndian.Uint32(m[28:]); seg != uint32(i+1) || m[26]&7 != want.flags ||
			binary.BigEndian.Uint32(m[32:]) != want.payload {
			t.Errorf("segment %d: number %d flags %d payload %d; want flags %d payload %d",
				i+1, seg, m[26]&7, binary.BigEndian.Uint32(m[32:]), want.flags, want.payload)
		}
	}
	if got[2][56] != 0xAA || got[2][155] != 0xAA || got[2][156] != 0 {
		t.Errorf("last segment data misplaced")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
