package query

import (
	"bytes"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
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
