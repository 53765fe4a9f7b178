package vendormad

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

// Request is a Get of a vendor range 2 class with -o's OUI and an
// empty payload, as ib_vendor_call_via sends it.
func Request(client *query.Client, d query.Dest, class uint8, attr uint16, oui uint32) (*rpc.Request, error) {
	req, err := client.Request(d, class, mad.MethodGet, attr, 0, nil)
	if err != nil {
		return nil, err
	}
	setOUI(req.MAD, oui)
	return req, nil
}

func setOUI(m mad.Header, oui uint32) {
	var h mad.Vendor2Header
	_ = h.Unmarshal(m)
	h.OUI = oui
	_ = h.Marshal(m)
}

func OUI(m mad.Header) uint32 {
	var h mad.Vendor2Header
	if h.Unmarshal(m) != nil {
		return 0
	}
	return h.OUI
}

// Describe is the reply's data as the C tools print it: up to the
// first NUL.
func Describe(m mad.Header) string {
	if len(m) <= mad.Vendor2DataOffset {
		return ""
	}
	data := m[mad.Vendor2DataOffset:]
	if i := strings.IndexByte(string(data), 0); i >= 0 {
		data = data[:i]
	}
	return string(data)
}

// ReplyHeader turns a received request into the header of its
// reply, as libibmad's mad_encode does it: base and class version 1,
// status 0, the method given, and the M_Key field (the first 8 bytes of
// the RMPP header in these classes) zero. TID, attribute and OUI stay.
func ReplyHeader(m mad.Header, method uint8) {
	m[0], m[2], m[3] = 1, 1, method
	m[4], m[5] = 0, 0
	clear(m[24:32])
}

// HostAndDomain is "hostname.domainname" as get_host_and_domain builds
// it: the domain from getdomainname ("(none)" when there is no NIS
// domain), no dot when it is empty, cut to fit size bytes with a NUL.
func HostAndDomain(size int) string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "?hostname?"
	}
	host := unix.ByteSliceToString(u.Nodename[:])
	if len(host) >= size-1 {
		return host[:size-1]
	}
	domain := unix.ByteSliceToString(u.Domainname[:])
	if domain == "" {
		return host
	}
	s := host + "." + domain
	if len(s) > size-1 {
		s = s[:size-1]
	}
	return s
}
