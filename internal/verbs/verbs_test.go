package verbs

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/ibtool/ibtool/internal/verbs/dlopen"
)

func TestMain(m *testing.M) {
	UseC(dlopen.C{})
	os.Exit(m.Run())
}

func TestGIDString(t *testing.T) {
	// Expected strings are what glibc's inet_ntop prints, which
	// ibv_devinfo uses for RoCE v2 GIDs.
	for _, tc := range []struct {
		hex, want string
	}{
		{"fe80:0000:0000:0000:b8f9:0cff:feaa:235e", "fe80::b8f9:cff:feaa:235e"},
		{"0000:0000:0000:0000:0000:ffff:0a63:0001", "::ffff:10.99.0.1"},
		{"0000:0000:0000:0000:0000:0000:0a63:0001", "::10.99.0.1"},
		{"0000:0000:0000:0000:0000:0000:0000:0001", "::1"},
		{"0000:0000:0000:0000:0000:0000:0000:0000", "::"},
		{"0001:0000:0000:0000:0000:0000:0000:0000", "1::"},
		{"2001:0db8:0000:0001:0000:0000:0000:0001", "2001:db8:0:1::1"},
		{"2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"},
		{"2001:0db8:0001:0001:0001:0001:0001:0001", "2001:db8:1:1:1:1:1:1"},
		{"2001:0000:0001:0001:0001:0001:0001:0001", "2001:0:1:1:1:1:1:1"},
		{"0000:0000:0000:0000:0000:fffe:0a63:0001", "::fffe:a63:1"},
	} {
		g, err := ParseGID(tc.hex)
		if err != nil {
			t.Fatalf("ParseGID(%q): %v", tc.hex, err)
		}
		if got := g.String(); got != tc.want {
			t.Errorf("GID %s: String() = %q, want %q", tc.hex, got, tc.want)
		}
		if got := g.Hex(); got != tc.hex {
			t.Errorf("GID %s: Hex() = %q", tc.hex, got)
		}
		back, err := ParseGID(tc.want)
		if err != nil || back != g {
			t.Errorf("ParseGID(%q) = %v, %v; want %s", tc.want, back, err, tc.hex)
		}
	}
	for _, bad := range []string{"", "fe80::1%eth0", "x::1", "1:2:3"} {
		if _, err := ParseGID(bad); err == nil {
			t.Errorf("ParseGID(%q) succeeded", bad)
		}
	}
}

func TestGIDIsZero(t *testing.T) {
	var g GID
	g[0], g[1] = 0xfe, 0x80 // a prefix alone is an unused entry
	if !g.IsZero() {
		t.Error("prefix-only GID should count as unused")
	}
	g[15] = 1
	if g.IsZero() {
		t.Error("GID with an interface ID is in use")
	}
}

func TestEnumStrings(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{MTU1024.String(), "1024"}, {MTU(0).String(), "invalid MTU"}, {MTU(6).String(), "invalid MTU"},
		{PortActive.String(), "PORT_ACTIVE"}, {PortState(9).String(), "invalid state"},
		{LinkLayerEthernet.String(), "Ethernet"}, {LinkLayerUnspecified.String(), "Unspecified"},
		{TransportIB.String(), "InfiniBand"}, {Transport(-1).String(), "invalid transport"},
		{AtomicHCA.String(), "ATOMIC_HCA"}, {GIDTypeRoCEv2.String(), "RoCE v2"},
		{WCRemAccessErr.String(), "remote access error"}, {WCStatus(99).String(), "unknown status 99"},
		{QPStateRTS.String(), "RTS"}, {EventQPFatal.String(), "QP fatal error"},
		{WCRDMAWrite.String(), "RDMA_WRITE"}, {QPTypeRC.String(), "RC"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if MTU4096.Bytes() != 4096 || MTU256.Bytes() != 256 {
		t.Error("MTU sizes")
	}
}

func TestLoadMissingLibrary(t *testing.T) {
	err := cLoad("/nonexistent/libibverbs.so.1")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Library != "/nonexistent/libibverbs.so.1" {
		t.Fatalf("err = %#v", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "libibverbs is not available") ||
		!strings.Contains(msg, "libibverbs1") {
		t.Fatalf("message %q: want one line naming the package to install", msg)
	}
}

// A binary that was given no way to call C says so, as an unavailable
// library, and before trying: CanCall.
func TestLoadWithoutC(t *testing.T) {
	saved := clib
	defer func() { clib = saved }()
	clib = nil
	if CanCall() {
		t.Error("CanCall without a C")
	}
	err := cLoad(DefaultLibrary)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ibtool-verbs") {
		t.Fatalf("err = %v, want ErrUnavailable naming ibtool-verbs", err)
	}
	clib = saved
	if !CanCall() {
		t.Error("CanCall with a C is false")
	}
}

func TestLoadWrongLibrary(t *testing.T) {
	// A library without the verbs entry points is refused, and a refused
	// load leaves an earlier good one alone.
	before := Load()
	err := cLoad("libc.so.6")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if before == nil {
		if _, err := Devices(); err != nil {
			t.Fatalf("Devices after a refused load: %v", err)
		}
	}
}

func TestLibraryName(t *testing.T) {
	t.Setenv(LibraryEnv, "")
	if LibraryName() != DefaultLibrary {
		t.Errorf("LibraryName() = %q", LibraryName())
	}
	t.Setenv(LibraryEnv, "/opt/rdma/lib/libibverbs.so.1")
	if LibraryName() != "/opt/rdma/lib/libibverbs.so.1" {
		t.Errorf("LibraryName() = %q", LibraryName())
	}
}

// On this kind of host (libibverbs maybe installed, no RDMA devices) the
// device list is empty and opening fails cleanly.
func TestDevicesOnHost(t *testing.T) {
	if err := Load(); err != nil {
		t.Skipf("libibverbs not installed: %v", err)
	}
	devs, err := Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	for _, d := range devs {
		if d.Name == "" {
			t.Errorf("device without a name: %+v", d)
		}
	}
	_, err = Open("no-such-device")
	if !errors.Is(err, ErrNoDevice) {
		t.Fatalf("Open(no-such-device) = %v, want ErrNoDevice", err)
	}
	if len(devs) == 0 {
		if _, err := Open(""); !errors.Is(err, ErrNoDevice) {
			t.Fatalf("Open(\"\") without devices = %v", err)
		}
	}
}

func TestMemory(t *testing.T) {
	if _, err := AllocMemory(0); err == nil {
		t.Fatal("AllocMemory(0) succeeded")
	}
	m, err := AllocMemory(10000)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bytes()
	if len(b) != 10000 || cap(b) != 10000 || m.Len() != 10000 {
		t.Fatalf("len %d cap %d", len(b), cap(b))
	}
	for i := range b {
		if b[i] != 0 {
			t.Fatal("memory not zeroed")
		}
		b[i] = byte(i)
	}
	m.refs++ // as a registered MR would
	if err := m.Close(); err == nil {
		t.Fatal("Close with a registered region succeeded")
	}
	m.refs--
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Bytes() != nil || m.Close() != nil {
		t.Fatal("closed memory still usable or second Close failed")
	}
}

func TestResourceClose(t *testing.T) {
	var r resource
	fails := errors.New("busy")
	if err := r.closeWith(func() error { return fails }); err != fails {
		t.Fatalf("closeWith = %v", err)
	}
	if err := r.acquire(); err != nil {
		t.Fatal("a failed release must leave the object open")
	}
	r.mu.RUnlock()
	calls := 0
	release := func() error { calls++; return nil }
	if r.closeWith(release) != nil || r.closeWith(release) != nil || calls != 1 {
		t.Fatalf("release ran %d times", calls)
	}
	if err := r.acquire(); err != ErrClosed {
		t.Fatalf("acquire after close = %v", err)
	}
}

func TestErrors(t *testing.T) {
	wc := WorkCompletion{ID: 7, Status: WCRetryExcErr, QPNum: 0x11, VendorErr: 0x81}
	err := wc.Err()
	var wce *WCError
	if !errors.As(err, &wce) || wce.WC.ID != 7 {
		t.Fatalf("wc.Err() = %v", err)
	}
	if want := "work request 7 on QP 0x11 completed with transport retry counter exceeded (status 12, vendor error 0x81)"; err.Error() != want {
		t.Errorf("WCError = %q", err.Error())
	}
	if (&WorkCompletion{Status: WCSuccess}).Err() != nil {
		t.Error("a successful completion has no error")
	}

	pe := &PostError{Op: "ibv_post_send", Index: 3, WRID: 42, Errno: syscall.ENOMEM}
	if !errors.Is(pe, syscall.ENOMEM) || !strings.Contains(pe.Error(), "work request 3 (wr_id 42)") {
		t.Errorf("PostError = %q", pe.Error())
	}
	e := errnoErr("ibv_modify_qp", syscall.EINVAL)
	if !errors.Is(e, syscall.EINVAL) || e.Error() != "ibv_modify_qp: invalid argument" {
		t.Errorf("Error = %q", e.Error())
	}

	ev := AsyncEvent{Type: EventQPFatal, QPNum: 0x12}
	var ae *AsyncError
	if !errors.As(ev.Err(), &ae) || ae.Error() != "asynchronous QP fatal error on QP 0x12" {
		t.Errorf("AsyncEvent.Err() = %v", ev.Err())
	}
	if (AsyncEvent{Type: EventPortActive, Port: 1}).Err() != nil {
		t.Error("port active is not an error")
	}
	if got := (AsyncEvent{Type: EventPortErr, Port: 2}).Err().Error(); got != "asynchronous port error on port 2" {
		t.Errorf("port error = %q", got)
	}
}
