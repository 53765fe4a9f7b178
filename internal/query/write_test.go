package query

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// A Raw sends back the bits the field table does not describe, with the
// changed fields over them.
func TestRawKeepsUndescribedBits(t *testing.T) {
	in := bytes.Repeat([]byte{0xa5}, mad.SMPDataSize)
	var pi mad.PortInfo
	r := &Raw{Struct: &pi}
	if err := r.Unmarshal(in); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(mad.Encode(&pi), in) {
		t.Fatal("PortInfo describes every bit: the test needs an attribute with undescribed ones")
	}
	pi.LID = 0x1234
	out := mad.Encode(r)
	want := append([]byte(nil), in...)
	want[16], want[17] = 0x12, 0x34 // LID, PortInfo offset 16 (IBA 14.2.5.6)
	if !bytes.Equal(out, want) {
		t.Fatalf("Encode(Raw) = %x\nwant            %x", out, want)
	}
}

// Dest.String names routes as libibmad's portid2str.
func TestDestString(t *testing.T) {
	for _, tc := range []struct {
		d    Dest
		want string
	}{
		{LID(2), "Lid 2"},
		{DR([]byte{0}), "DR path slid 65535; dlid 65535; 0"},
		{DR([]byte{0, 1, 8}), "DR path slid 65535; dlid 65535; 0,1,8"},
		{Combined(6, []byte{0, 3}, 1), "Lid 6 DR path slid 1; dlid 65535; 0,3"},
		{Combined(6, []byte{0}, 1), "Lid 6"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
}

// Congestion control MADs are class version 2 and carry the CC_Key (IBA
// A10.4.1); CongestionLog's data starts at byte 32; a vendor class of
// range 1 has its data at byte 24 (IBA 16.5.1).
func TestRequestClassLayouts(t *testing.T) {
	c := New(nil, Options{CCKey: 0x0102030405060708, MKey: 0xffff})
	d := GMPAddr(umad.Address{LID: 2, QP: 1, QKey: umad.QP1QKey})
	req, err := c.Request(d, mad.ClassCongest, mad.MethodSet, mad.AttrCongestionLog, 0, []byte{0xaa})
	if err != nil {
		t.Fatal(err)
	}
	m := req.MAD
	if m[1] != mad.ClassCongest || m[2] != 2 || binary.BigEndian.Uint64(m[24:]) != 0x0102030405060708 || m[32] != 0xaa {
		t.Errorf("CC request: % x", m[:40])
	}
	req, _ = c.Request(d, mad.ClassVendorMlnx, mad.MethodGet, mad.AttrMlnxGeneralInfo, 0, []byte{0xbb})
	if m := req.MAD; m[2] != 1 || m[24] != 0xbb || binary.BigEndian.Uint64(m[24:])>>56 != 0xbb {
		t.Errorf("vendor request: % x", m[:40])
	}
	req, _ = c.Request(d, mad.ClassPerf, mad.MethodGet, mad.AttrPortCounters, 0, nil)
	if m := req.MAD; m[2] != 1 || binary.BigEndian.Uint64(m[24:]) != 0 {
		t.Errorf("PerfMgt request: % x", m[:40])
	}
}
