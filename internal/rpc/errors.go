package rpc

import (
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// Detailer is implemented by errors that can say more at higher verbosity:
// -v adds the MAD path, -vv the decoded request and reply (python-rdma's
// MADError.dump_detailed is the model).
type Detailer interface {
	Detail(verbosity int) string
}

// StatusError is a reply whose MAD status reports a failure.
type StatusError struct {
	Addr  umad.Address
	Req   mad.Header
	Reply mad.Header
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s failed: MAD status 0x%04x (%s)", Describe(e.Addr, e.Req), e.Reply.Status(),
		mad.StatusText(e.Reply.Class(), e.Reply.Status()))
}

// Detail shows the MAD path and, at -vv, both MADs decoded.
func (e *StatusError) Detail(verbosity int) string {
	return detail(verbosity, e.Addr, e.Req, e.Reply)
}

// Detail shows the MAD path and, at -vv, the request decoded.
func (t *TimeoutError) Detail(verbosity int) string {
	return detail(verbosity, t.Addr, t.Req, nil)
}

func detail(verbosity int, a umad.Address, req, reply mad.Header) string {
	if verbosity < 1 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "MAD path: %s\n", describeAddr(a, req))
	if verbosity >= 2 {
		b.WriteString("request:\n" + indent(DumpMAD(req)))
		if reply != nil {
			b.WriteString("reply:\n" + indent(DumpMAD(reply)))
		}
	}
	return b.String()
}

func describeAddr(a umad.Address, h mad.Header) string {
	s := fmt.Sprintf("DLID %d QP %d SL %d P_Key index %d", a.LID, a.QP, a.SL, a.PKeyIndex)
	if h != nil && h.Class() == mad.ClassSubnDR {
		s = "directed route " + mad.FormatDRPath(h.InitialPath()) + " (" + s + ")"
	}
	if a.GRH != nil {
		s += " DGID " + fmt.Sprint(mad.GID(a.GRH.GID))
	}
	return s
}

// DumpMAD decodes a MAD for tracing: the common header, then the attribute
// data with its field table when the attribute is known, in hex otherwise.
func DumpMAD(h mad.Header) string {
	if len(h) < 24 {
		return fmt.Sprintf("short MAD (%d bytes): % x\n", len(h), []byte(h))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s(%s) class 0x%02x version %d method 0x%02x status 0x%04x tid 0x%016x attr 0x%04x mod 0x%08x\n",
		mad.MethodName(h.Class(), h.Method()), mad.AttrName(h.Class(), h.AttrID()), h.Class(), h.ClassVersion(),
		h.Method(), h.Status(), h.TID(), h.AttrID(), h.AttrMod())
	off := dataOffset(h.Class())
	if off >= len(h) {
		return b.String()
	}
	if d := mad.LookupAttr(h.Class(), h.AttrID()); d != nil {
		b.WriteString(mad.DumpBytes(d, h[off:]))
	} else {
		b.WriteString(hexLines(h[off:]))
	}
	return b.String()
}

// dataOffset is where a class's attribute data starts in a MAD.
func dataOffset(class uint8) int {
	switch class {
	case mad.ClassSubnLID, mad.ClassSubnDR:
		return mad.SMPDataOffset
	case mad.ClassPerf:
		return 64 // 40 reserved bytes after the common header (IBA 16.1.1)
	}
	return ClassDataOffset(class)
}

func hexLines(b []byte) string {
	var s strings.Builder
	for i := 0; i < len(b); i += 16 {
		fmt.Fprintf(&s, "+0x%02x  % x\n", i, b[i:min(i+16, len(b))])
	}
	return s.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
