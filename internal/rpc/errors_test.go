package rpc

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

func TestStatusErrorDetail(t *testing.T) {
	req := mad.NewRequest(mad.ClassSubnAdm, 2, mad.MethodGet, 0x0035, 0)
	reply := append(mad.Header(nil), req...)
	reply[3] = mad.MethodGetResp
	reply[4] = 0x03 // ERR_NO_RECORDS
	err := &StatusError{Addr: umad.Address{LID: 1, QP: 1}, Req: req, Reply: reply}
	if got := err.Error(); got != "SubnAdmGet(PathRecord) LID 1 mod 0x0 failed: MAD status 0x0300 (ERR_NO_RECORDS)" {
		t.Fatalf("Error() = %q", got)
	}
	if d := err.Detail(0); d != "" {
		t.Fatalf("Detail(0) = %q", d)
	}
	d := err.Detail(2)
	for _, want := range []string{"MAD path: DLID 1 QP 1", "request:\n  SubnAdmGet", "reply:\n  SubnAdmGetResp"} {
		if !strings.Contains(d, want) {
			t.Errorf("Detail(2) lacks %q:\n%s", want, d)
		}
	}
}

func TestStatusText(t *testing.T) {
	for _, tc := range []struct {
		class  uint8
		status uint16
		want   string
	}{
		{mad.ClassSubnLID, 0, "success"},
		{mad.ClassSubnLID, 0x000C, "method/attribute combination not supported"},
		{mad.ClassSubnDR, 0x801C, "invalid attribute or attribute modifier"},
		{mad.ClassSubnAdm, 0x0300, "ERR_NO_RECORDS"},
		{mad.ClassPerf, 0x0001, "busy"},
		{mad.ClassPerf, 0x0008, "method not supported"},
	} {
		if got := mad.StatusText(tc.class, tc.status); got != tc.want {
			t.Errorf("StatusText(0x%02x, 0x%04x) = %q, want %q", tc.class, tc.status, got, tc.want)
		}
	}
}
