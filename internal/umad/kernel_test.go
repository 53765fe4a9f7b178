package umad

// There is no InfiniBand hardware here, so nothing below opens a real
// /dev/infiniband/umadN. The byte layouts are checked against hand-written
// bytes (from the kernel's ib_user_mad.h and ibsim-protocol.md §5), and the
// transport logic runs against a fake kernel: a SOCK_SEQPACKET socket pair
// (one MAD per read, like the device) with faked ioctls.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func requireLittleEndian(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are written for a little-endian host")
	}
}

// ioc is the generic Linux _IOC encoding (x86, arm64, riscv, s390).
func ioc(dir, typ, nr, size uint32) uint32 { return dir<<30 | size<<16 | typ<<8 | nr }

func TestIoctlNumbers(t *testing.T) {
	const none, write, read = 0, 1, 2
	cases := []struct {
		name string
		got  uint32
		want uint32
	}{
		{"REGISTER_AGENT", ioctlRegisterAgent, ioc(read|write, 0x1b, 1, regReqSize)},
		{"UNREGISTER_AGENT", ioctlUnregisterAgent, ioc(write, 0x1b, 2, 4)},
		{"ENABLE_PKEY", ioctlEnablePKey, ioc(none, 0x1b, 3, 0)},
		{"REGISTER_AGENT2", ioctlRegisterAgent2, ioc(read|write, 0x1b, 4, regReq2Size)},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %#x; _IOC gives %#x", c.name, c.got, c.want)
		}
	}
	if ioctlRegisterAgent != 0xC01C1B01 || ioctlUnregisterAgent != 0x40041B02 ||
		ioctlEnablePKey != 0x00001B03 || ioctlRegisterAgent2 != 0xC0281B04 {
		t.Error("ioctl numbers differ from ibsim-protocol.md §5.3")
	}
}

var testGID = [16]byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc1}

func TestEncodeHeader(t *testing.T) {
	requireLittleEndian(t)
	h := umadHdr{
		ID: 3, Status: 0, TimeoutMS: 1000, Retries: 2, Length: 320,
		QPN: 1, QKey: 0x80010000, LID: 0x1234, SL: 5, PathBits: 1,
		GRHPresent: 1, GIDIndex: 2, HopLimit: 64, TrafficClass: 0x10,
		GID: testGID, FlowLabel: 0xabcde, PKeyIndex: 0x0102,
	}
	want := []byte{
		0x03, 0x00, 0x00, 0x00, // id (host order)
		0x00, 0x00, 0x00, 0x00, // status
		0xe8, 0x03, 0x00, 0x00, // timeout_ms 1000
		0x02, 0x00, 0x00, 0x00, // retries
		0x40, 0x01, 0x00, 0x00, // length 320
		0x00, 0x00, 0x00, 0x01, // qpn (BE)
		0x80, 0x01, 0x00, 0x00, // qkey (BE)
		0x12, 0x34, // lid (BE)
		0x05,                   // sl
		0x01,                   // path_bits
		0x01, 0x02, 0x40, 0x10, // grh_present gid_index hop_limit traffic_class
		0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc1, // gid
		0x00, 0x0a, 0xbc, 0xde, // flow_label (BE)
		0x02, 0x01, // pkey_index (host order)
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // reserved
	}
	got := encodeHeader(h)
	if !bytes.Equal(got, want) {
		t.Errorf("encodeHeader:\n got % x\nwant % x", got, want)
	}
	back, err := decodeHeader(want)
	if err != nil || back != h {
		t.Errorf("decodeHeader = %+v, %v", back, err)
	}
	if _, err := decodeHeader(want[:63]); err == nil {
		t.Error("decodeHeader accepted 63 bytes")
	}
}

func TestEncodeRegReq(t *testing.T) {
	requireLittleEndian(t)
	r := regReq{
		QPN: 1, MgmtClass: 0x03, ClassVersion: 2, OUI: 0x0002c9, RMPPVersion: 1,
		MethodMask: [2]uint64{0x0102030405060708, 0x1112131415161718}, Flags: 1,
	}
	want := []byte{
		0x00, 0x00, 0x00, 0x00, // id (out)
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // method_mask[0]
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, // method_mask[1]
		0x01,             // qpn
		0x03,             // mgmt_class
		0x02,             // mgmt_class_version
		0x00, 0x02, 0xc9, // oui[3]
		0x01, // rmpp_version
		0x00, // padding
	}
	if got := encodeRegReq(r); !bytes.Equal(got, want) {
		t.Errorf("encodeRegReq:\n got % x\nwant % x", got, want)
	}
	want2 := []byte{
		0x00, 0x00, 0x00, 0x00, // id (out)
		0x01, 0x00, 0x00, 0x00, // qpn (u32)
		0x03,       // mgmt_class
		0x02,       // mgmt_class_version
		0x00, 0x00, // res
		0x01, 0x00, 0x00, 0x00, // flags
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // method_mask[0]
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, // method_mask[1]
		0xc9, 0x02, 0x00, 0x00, // oui (u32, host order)
		0x01,             // rmpp_version
		0x00, 0x00, 0x00, // reserved
	}
	if got := encodeRegReq2(r); !bytes.Equal(got, want2) {
		t.Errorf("encodeRegReq2:\n got % x\nwant % x", got, want2)
	}
}

func TestAddressMapping(t *testing.T) {
	a := Address{LID: 7, QP: 1, SL: 3, PathBits: 2, PKeyIndex: 4,
		GRH: &GRH{GID: testGID, GIDIndex: 1, HopLimit: 255, TrafficClass: 8, FlowLabel: 0x12345}}
	h := hdrFromAddr(a)
	want := umadHdr{QPN: 1, QKey: QP1QKey, LID: 7, SL: 3, PathBits: 2, PKeyIndex: 4,
		GRHPresent: 1, GID: testGID, GIDIndex: 1, HopLimit: 255, TrafficClass: 8, FlowLabel: 0x12345}
	if h != want {
		t.Errorf("hdrFromAddr = %+v", h)
	}
	a.QKey = QP1QKey
	if back := addrFromHdr(h); !reflect.DeepEqual(back, a) {
		t.Errorf("addrFromHdr = %+v", back)
	}
	dr := hdrFromAddr(Address{LID: PermissiveLID})
	if dr.QPN != 0 || dr.QKey != 0 || dr.LID != 0xffff || dr.GRHPresent != 0 {
		t.Errorf("DR SMP header = %+v", dr)
	}
	if addrFromHdr(dr).GRH != nil {
		t.Error("GRH without grh_present")
	}
}

func mad(class, version, method byte) []byte {
	m := make([]byte, MADSize)
	m[0], m[1], m[2], m[3] = 1, class, version, method
	return m
}

func TestAgentFor(t *testing.T) {
	vendor := mad(0x30, 1, 0x01)
	vendor[36], vendor[37], vendor[38], vendor[39] = 0xee, 0x00, 0x02, 0xc9
	cases := []struct {
		name string
		mad  []byte
		want regReq
	}{
		{"SMP LID routed", mad(0x01, 1, 0x01), regReq{QPN: 0, MgmtClass: 0x01, ClassVersion: 1}},
		{"SMP directed route", mad(0x81, 1, 0x02), regReq{QPN: 0, MgmtClass: 0x81, ClassVersion: 1}},
		{"SA", mad(0x03, 2, 0x12), regReq{QPN: 1, MgmtClass: 0x03, ClassVersion: 2, RMPPVersion: 1}},
		{"PerfMgt", mad(0x04, 1, 0x01), regReq{QPN: 1, MgmtClass: 0x04, ClassVersion: 1}},
		{"vendor range 1", mad(0x0a, 1, 0x01), regReq{QPN: 1, MgmtClass: 0x0a, ClassVersion: 1}},
		{"vendor range 2", vendor, regReq{QPN: 1, MgmtClass: 0x30, ClassVersion: 1, OUI: 0x0002c9}},
		{"short vendor MAD", mad(0x30, 1, 0x01)[:24], regReq{QPN: 1, MgmtClass: 0x30, ClassVersion: 1}},
	}
	for _, c := range cases {
		if got := agentFor(c.mad); got != c.want {
			t.Errorf("%s: agentFor = %+v; want %+v", c.name, got, c.want)
		}
	}
}

func TestIsResponse(t *testing.T) {
	bmResp := mad(0x05, 1, 0x03)
	bmResp[23] = 1
	cases := []struct {
		mad  []byte
		want bool
	}{
		{mad(0x01, 1, 0x01), false}, // Get
		{mad(0x01, 1, 0x81), true},  // GetResp
		{mad(0x03, 2, 0x12), false}, // GetTable
		{mad(0x03, 2, 0x92), true},  // GetTableResp
		{mad(0x01, 1, 0x05), false}, // Trap
		{mad(0x01, 1, 0x07), true},  // TrapRepress
		{mad(0x05, 1, 0x03), false}, // BM Send request
		{bmResp, true},              // BM Send with the response bit in AttributeModifier
	}
	for i, c := range cases {
		if got := isResponse(c.mad); got != c.want {
			t.Errorf("case %d (class %#x method %#x): isResponse = %v", i, c.mad[1], c.mad[3], got)
		}
	}
}

func TestChoosePortTestdata(t *testing.T) {
	cas, err := ReadCAs(testSysfs)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ca       string
		port     int
		wantCA   string
		wantPort int
		wantErr  string
	}{
		{"", -1, "mlx4_0", 2, ""},       // first CA with an Active port, its Active port
		{"", 0, "mlx4_0", 2, ""},        // 0 chooses too (libibumad)
		{"", 1, "mlx5_0", 1, ""},        // port 1 Active on mlx5_0 beats mlx4_0's Down port 1
		{"mlx5_0", -1, "mlx5_0", 1, ""}, // named CA, its Active port
		{"mlx4_0", 1, "mlx4_0", 1, ""},  // an explicit port is taken as is
		{"mlx5_1", -1, "mlx5_1", 1, ""}, // RoCE only: first port that is not Disabled
		{"mlx4_0", 3, "", 0, "no port 3 (ports: 1, 2)"},
		{"nosuch", -1, "", 0, "'nosuch' not found (have: mlx4_0, mlx5_0, mlx5_1)"},
		{"", 7, "", 0, "no IB device has a usable port 7"},
	}
	for _, c := range cases {
		ca, port, err := choosePort(cas, c.ca, c.port)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("choosePort(%q, %d) error = %v; want %q", c.ca, c.port, err, c.wantErr)
			}
			continue
		}
		if err != nil || ca != c.wantCA || port != c.wantPort {
			t.Errorf("choosePort(%q, %d) = %s %d %v; want %s %d", c.ca, c.port, ca, port, err, c.wantCA, c.wantPort)
		}
	}
}

func TestChoosePortRules(t *testing.T) {
	port := func(num, state, phys int, ll string) PortInfo {
		return PortInfo{Num: num, State: state, PhysState: phys, LinkLayer: ll}
	}
	cases := []struct {
		name     string
		cas      []CA
		ca       string
		wantCA   string
		wantPort int
		wantErr  bool
	}{
		{"switch uses port 0", []CA{{Name: "sw", NodeType: 2, Ports: []PortInfo{port(0, 4, 5, "")}}}, "", "sw", 0, false},
		{"active beats an earlier LinkUp CA", []CA{
			{Name: "a", NodeType: 1, Ports: []PortInfo{port(1, 2, 5, "InfiniBand")}},
			{Name: "b", NodeType: 1, Ports: []PortInfo{port(1, 1, 2, "InfiniBand"), port(2, 4, 5, "IB")}},
		}, "", "b", 2, false},
		{"LinkUp beats Polling within a CA", []CA{
			{Name: "a", NodeType: 1, Ports: []PortInfo{port(1, 1, 2, "InfiniBand"), port(2, 2, 5, "InfiniBand")}},
		}, "", "a", 2, false},
		{"nothing up: first not Disabled", []CA{
			{Name: "a", NodeType: 1, Ports: []PortInfo{port(1, 1, 3, "InfiniBand")}},
			{Name: "b", NodeType: 1, Ports: []PortInfo{port(1, 1, 3, "InfiniBand"), port(2, 1, 2, "InfiniBand")}},
		}, "", "b", 2, false},
		{"all Disabled", []CA{{Name: "a", NodeType: 1, Ports: []PortInfo{port(1, 1, 3, "InfiniBand")}}}, "", "", 0, true},
		{"Ethernet Active port does not count as Active", []CA{
			{Name: "a", NodeType: 1, Ports: []PortInfo{port(1, 4, 5, "Ethernet")}},
			{Name: "b", NodeType: 1, Ports: []PortInfo{port(1, 4, 5, "InfiniBand")}},
		}, "", "b", 1, false},
		{"iWARP devices are not IB devices", []CA{{Name: "iw", NodeType: 4, Ports: []PortInfo{port(1, 4, 5, "")}}}, "", "", 0, true},
		{"named iWARP device", []CA{{Name: "iw", NodeType: 4, Ports: []PortInfo{port(1, 4, 5, "")}}}, "iw", "", 0, true},
		{"no CAs", nil, "", "", 0, true},
	}
	for _, c := range cases {
		ca, p, err := choosePort(c.cas, c.ca, -1)
		if c.wantErr {
			if err == nil {
				t.Errorf("%s: choosePort = %s %d; want an error", c.name, ca, p)
			}
			continue
		}
		if err != nil || ca != c.wantCA || p != c.wantPort {
			t.Errorf("%s: choosePort = %s %d %v; want %s %d", c.name, ca, p, err, c.wantCA, c.wantPort)
		}
	}
}

func TestUmadFor(t *testing.T) {
	for _, c := range []struct {
		ca   string
		port int
		want int
	}{{"mlx4_0", 1, 0}, {"mlx4_0", 2, 1}, {"mlx5_0", 1, 2}, {"mlx5_1", 1, 3}} {
		if got, err := umadFor(testSysfs, c.ca, c.port); err != nil || got != c.want {
			t.Errorf("umadFor(%s, %d) = %d, %v; want %d", c.ca, c.port, got, err, c.want)
		}
	}
	if _, err := umadFor(testSysfs, "mlx5_0", 2); err == nil {
		t.Error("umadFor found a port that does not exist")
	}
	if err := checkABI(testSysfs); err != nil {
		t.Error(err)
	}
}

// fakeKernel stands in for the umad driver: the port's fd is one end of a
// SOCK_SEQPACKET pair, the test plays the kernel on the other end, and the
// ioctls are answered here.
type fakeKernel struct {
	t      *testing.T
	peer   int // the kernel's end of the socket pair
	portFD int

	mu       sync.Mutex
	opened   []string
	calls    []ioctlCall
	nextID   uint32
	noReg2   bool  // REGISTER_AGENT2 answers ENOTTY
	noQP0    bool  // QP0 registrations answer EPROTONOSUPPORT, as on RoCE
	openErr  error // error for open
	pkeyErr  error // error for ENABLE_PKEY
	recvSize int   // when > 0, read answers ENOSPC to buffers smaller than this
}

type ioctlCall struct {
	req uintptr
	arg []byte
}

func newFakeKernel(t *testing.T) *fakeKernel {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	return &fakeKernel{t: t, portFD: fds[0], peer: fds[1], nextID: 5}
}

func (f *fakeKernel) ops() sysOps {
	return sysOps{
		open: func(path string) (int, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.opened = append(f.opened, path)
			if f.openErr != nil {
				return -1, f.openErr
			}
			return f.portFD, nil
		},
		ioctl: f.ioctl,
		read: func(fd int, p []byte) (int, error) {
			f.mu.Lock()
			need := f.recvSize
			f.mu.Unlock()
			if need > 0 && len(p) < need {
				// Like the kernel: copy the header with the full length,
				// leave the message queued, fail with ENOSPC.
				binary.NativeEndian.PutUint32(p[16:20], uint32(need))
				return -1, unix.ENOSPC
			}
			return unix.Read(fd, p)
		},
	}
}

func (f *fakeKernel) ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b []byte
	switch req {
	case ioctlRegisterAgent:
		b = unsafe.Slice((*byte)(arg), regReqSize)
	case ioctlRegisterAgent2:
		b = unsafe.Slice((*byte)(arg), regReq2Size)
	case ioctlUnregisterAgent:
		b = unsafe.Slice((*byte)(arg), 4)
	case ioctlEnablePKey:
		if arg != nil {
			f.t.Error("ENABLE_PKEY with an argument")
		}
	default:
		f.t.Errorf("unexpected ioctl %#x", req)
		return unix.ENOTTY
	}
	f.calls = append(f.calls, ioctlCall{req, append([]byte(nil), b...)})
	switch req {
	case ioctlEnablePKey:
		return f.pkeyErr
	case ioctlRegisterAgent2:
		if f.noReg2 {
			return unix.ENOTTY
		}
		if f.noQP0 && b[4] == 0 {
			return unix.EPROTONOSUPPORT
		}
		fallthrough
	case ioctlRegisterAgent:
		if f.noQP0 && req == ioctlRegisterAgent && b[20] == 0 {
			return unix.EPROTONOSUPPORT
		}
		binary.NativeEndian.PutUint32(b, f.nextID)
		f.nextID++
	}
	return nil
}

func (f *fakeKernel) takeCalls() []ioctlCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// readSent returns the next header and MAD the port wrote.
func (f *fakeKernel) readSent() (umadHdr, []byte) {
	f.t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Read(f.peer, buf)
	if err != nil {
		f.t.Fatal(err)
	}
	h, err := decodeHeader(buf[:n])
	if err != nil {
		f.t.Fatal(err)
	}
	return h, buf[hdrSize:n]
}

func (f *fakeKernel) deliver(h umadHdr, mad []byte) {
	f.t.Helper()
	if _, err := unix.Write(f.peer, append(encodeHeader(h), mad...)); err != nil {
		f.t.Fatal(err)
	}
}

func openFake(t *testing.T, f *fakeKernel, root, ca string, port int) *KernelPort {
	t.Helper()
	o := &kernelOpener{sysRoot: root, devDir: "/dev/fake", ops: f.ops()}
	p, err := o.Open(ca, port)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*KernelPort)
}

func TestKernelPortSendRecv(t *testing.T) {
	requireLittleEndian(t)
	f := newFakeKernel(t)
	p := openFake(t, f, testSysfs, "", -1)
	defer p.Close()

	if want := []string{"/dev/fake/umad1"}; !reflect.DeepEqual(f.opened, want) {
		t.Errorf("opened %v; want %v (mlx4_0 port 2)", f.opened, want)
	}
	if c := f.takeCalls(); len(c) != 1 || c[0].req != ioctlEnablePKey {
		t.Errorf("after open: ioctls %+v; want ENABLE_PKEY only", c)
	}
	if info, err := p.Info(); err != nil || info.CA != "mlx4_0" || info.Num != 2 || info.LID != 8 {
		t.Errorf("Info = %+v, %v", info, err)
	}

	// An SMP registers a QP0 agent (REGISTER_AGENT2), then goes out with
	// the kernel timeout and no retries.
	smp := mad(0x01, 1, 0x01)
	smp[16], smp[17] = 0x00, 0x11 // NodeInfo
	if err := p.Send(&Packet{Addr: Address{LID: 2}, MAD: smp}); err != nil {
		t.Fatal(err)
	}
	calls := f.takeCalls()
	if len(calls) != 1 || calls[0].req != ioctlRegisterAgent2 {
		t.Fatalf("ioctls %+v; want one REGISTER_AGENT2", calls)
	}
	wantReg := encodeRegReq2(regReq{QPN: 0, MgmtClass: 1, ClassVersion: 1})
	if !bytes.Equal(calls[0].arg, wantReg) {
		t.Errorf("REGISTER_AGENT2 arg % x; want % x", calls[0].arg, wantReg)
	}
	h, body := f.readSent()
	if want := (umadHdr{ID: 5, TimeoutMS: 1000, LID: 2}); h != want {
		t.Errorf("SMP header %+v; want %+v", h, want)
	}
	if !bytes.Equal(body, smp) {
		t.Error("SMP body changed")
	}

	// The same class again reuses the agent; a PMA request gets a QP1
	// agent and the QP1 Q_Key; a response goes out without a timeout.
	p.KernelTimeout = 250 * time.Millisecond
	if err := p.Send(&Packet{Addr: Address{LID: 3}, MAD: smp}); err != nil {
		t.Fatal(err)
	}
	if c := f.takeCalls(); len(c) != 0 {
		t.Errorf("second SMP registered again: %+v", c)
	}
	if h, _ := f.readSent(); h.ID != 5 || h.TimeoutMS != 250 || h.LID != 3 {
		t.Errorf("second SMP header %+v", h)
	}
	if err := p.Send(&Packet{Addr: Address{LID: 9, QP: 1, SL: 2, PKeyIndex: 1}, MAD: mad(0x04, 1, 0x01)}); err != nil {
		t.Fatal(err)
	}
	if c := f.takeCalls(); len(c) != 1 || c[0].arg[4] != 1 || c[0].arg[8] != 0x04 {
		t.Errorf("PMA registration %+v", c)
	}
	if h, _ := f.readSent(); h != (umadHdr{ID: 6, TimeoutMS: 250, QPN: 1, QKey: QP1QKey, LID: 9, SL: 2, PKeyIndex: 1}) {
		t.Errorf("PMA header %+v", h)
	}
	if err := p.Send(&Packet{Addr: Address{LID: 9, QP: 1, QKey: QP1QKey}, MAD: mad(0x04, 1, 0x81)}); err != nil {
		t.Fatal(err)
	}
	if h, _ := f.readSent(); h.ID != 6 || h.TimeoutMS != 0 {
		t.Errorf("response header %+v; want agent 6, no timeout", h)
	}

	// A kernel without REGISTER_AGENT2: fall back to REGISTER_AGENT. SA
	// agents ask for kernel RMPP.
	f.mu.Lock()
	f.noReg2 = true
	f.mu.Unlock()
	if err := p.Send(&Packet{Addr: Address{LID: 1, QP: 1}, MAD: mad(0x03, 2, 0x12)}); err != nil {
		t.Fatal(err)
	}
	calls = f.takeCalls()
	if len(calls) != 2 || calls[0].req != ioctlRegisterAgent2 || calls[1].req != ioctlRegisterAgent {
		t.Fatalf("ioctls %+v; want REGISTER_AGENT2 then REGISTER_AGENT", calls)
	}
	wantOld := encodeRegReq(regReq{QPN: 1, MgmtClass: 3, ClassVersion: 2, RMPPVersion: 1})
	if !bytes.Equal(calls[1].arg, wantOld) {
		t.Errorf("REGISTER_AGENT arg % x; want % x", calls[1].arg, wantOld)
	}
	if h, _ := f.readSent(); h.ID != 7 {
		t.Errorf("SA header %+v", h)
	}

	// A reply, with its source address and GRH.
	reply := mad(0x04, 1, 0x81)
	reply[255] = 0x5a
	f.deliver(umadHdr{ID: 6, Length: hdrSize + MADSize, QPN: 1, QKey: QP1QKey, LID: 9, SL: 2,
		GRHPresent: 1, GID: testGID, HopLimit: 1, FlowLabel: 7}, reply)
	pkt, err := p.Recv(time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	wantAddr := Address{LID: 9, QP: 1, QKey: QP1QKey, SL: 2, GRH: &GRH{GID: testGID, HopLimit: 1, FlowLabel: 7}}
	if pkt.Status != 0 || !reflect.DeepEqual(pkt.Addr, wantAddr) || !bytes.Equal(pkt.MAD, reply) {
		t.Errorf("Recv = %+v", pkt)
	}

	// A request the kernel hands back after its timeout: status ETIMEDOUT
	// and only the 24-byte common header, padded to a full MAD.
	f.deliver(umadHdr{ID: 5, Status: StatusTimeout, Length: hdrSize + madHdrSize, LID: 2}, smp[:madHdrSize])
	pkt, err = p.Recv(time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if pkt.Status != StatusTimeout || len(pkt.MAD) != MADSize || !bytes.Equal(pkt.MAD[:madHdrSize], smp[:madHdrSize]) ||
		!bytes.Equal(pkt.MAD[madHdrSize:], make([]byte, MADSize-madHdrSize)) || pkt.Addr.LID != 2 {
		t.Errorf("timed-out request = %+v", pkt)
	}

	// Nothing more: the deadline passes.
	start := time.Now()
	if _, err := p.Recv(start.Add(30 * time.Millisecond)); !errors.Is(err, ErrTimeout) {
		t.Errorf("Recv on an idle port: %v; want ErrTimeout", err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("Recv returned after %v, before its deadline", d)
	}
	if _, err := p.Recv(time.Now().Add(-time.Second)); !errors.Is(err, ErrTimeout) {
		t.Errorf("Recv with a past deadline: %v", err)
	}

	// Bad input.
	if err := p.Send(&Packet{MAD: make([]byte, 10)}); err == nil {
		t.Error("Send accepted a 10-byte MAD")
	}
	if err := p.Send(nil); err == nil {
		t.Error("Send accepted nil")
	}

	// Close unregisters every agent, in order; the port is then closed.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var unreg []uint32
	for _, c := range f.takeCalls() {
		if c.req != ioctlUnregisterAgent {
			t.Errorf("unexpected ioctl %#x at close", c.req)
			continue
		}
		unreg = append(unreg, binary.NativeEndian.Uint32(c.arg))
	}
	if want := []uint32{5, 6, 7}; !reflect.DeepEqual(unreg, want) {
		t.Errorf("unregistered %v; want %v", unreg, want)
	}
	if err := p.Send(&Packet{MAD: smp}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if _, err := p.Recv(time.Time{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A RoCE port (mlx5_1 in the fake sysfs): the kernel refuses QP0 agents,
// which becomes ErrRoCENoQP0; a GMP without a GRH is refused before the
// kernel sees it; a GMP with one goes out with LID 0 and the GRH.
func TestKernelPortRoCE(t *testing.T) {
	requireLittleEndian(t)
	f := newFakeKernel(t)
	f.noQP0 = true
	p := openFake(t, f, testSysfs, "mlx5_1", 1)
	defer p.Close()
	f.takeCalls()

	for _, class := range []byte{0x01, 0x81} {
		err := p.Send(&Packet{Addr: Address{LID: PermissiveLID}, MAD: mad(class, 1, 0x01)})
		want := fmt.Sprintf("mlx5_1 port 1: RoCE has no QP0, so no SMPs: subnet management needs an InfiniBand port "+
			"(the kernel refuses class 0x%02x agents on QP0: protocol not supported)", class)
		if !errors.Is(err, ErrRoCENoQP0) || err.Error() != want {
			t.Errorf("SMP class 0x%02x on RoCE: %v; want %q", class, err, want)
		}
	}
	f.takeCalls()

	err := p.Send(&Packet{Addr: Address{LID: 3, QP: 1}, MAD: mad(0x32, 1, 0x01)})
	if !errors.Is(err, ErrRoCENeedsGID) || err.Error() != "mlx5_1 port 1: RoCE has no LIDs or directed routes: address the port by GID" {
		t.Errorf("GMP without GRH on RoCE: %v", err)
	}
	if c := f.takeCalls(); len(c) != 0 {
		t.Errorf("a refused GMP registered an agent: %+v", c)
	}

	grh := &GRH{GID: testGID, GIDIndex: 0, HopLimit: 1}
	if err := p.Send(&Packet{Addr: Address{QP: 1, QKey: QP1QKey, GRH: grh}, MAD: mad(0x32, 1, 0x01)}); err != nil {
		t.Fatal(err)
	}
	if c := f.takeCalls(); len(c) != 1 || c[0].req != ioctlRegisterAgent2 || c[0].arg[4] != 1 || c[0].arg[8] != 0x32 {
		t.Errorf("GMP registration %+v; want one QP1 agent for class 0x32", c)
	}
	h, _ := f.readSent()
	if want := (umadHdr{ID: 5, TimeoutMS: 1000, QPN: 1, QKey: QP1QKey, GRHPresent: 1, GID: testGID, HopLimit: 1}); h != want {
		t.Errorf("GMP header %+v; want %+v", h, want)
	}

	// On InfiniBand the same refusal is no RoCE story.
	f2 := newFakeKernel(t)
	f2.noQP0 = true
	ib := openFake(t, f2, testSysfs, "mlx4_0", 2)
	defer ib.Close()
	if err := ib.Send(&Packet{Addr: Address{LID: 2}, MAD: mad(0x01, 1, 0x01)}); err == nil || errors.Is(err, ErrRoCENoQP0) {
		t.Errorf("IB port QP0 refusal: %v", err)
	}
}

func TestKernelPortCloseWakesRecv(t *testing.T) {
	f := newFakeKernel(t)
	p := openFake(t, f, testSysfs, "mlx5_0", 1)
	done := make(chan error, 1)
	go func() {
		_, err := p.Recv(time.Time{}) // no deadline
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Recv = %v; want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake Recv")
	}
	if f.opened[0] != "/dev/fake/umad2" {
		t.Errorf("opened %v", f.opened)
	}
}

// An RMPP message bigger than the buffer: read fails with ENOSPC and the
// header's length; the port grows its buffer and reads again.
func TestKernelPortGrowsBufferOnENOSPC(t *testing.T) {
	f := newFakeKernel(t)
	p := openFake(t, f, testSysfs, "mlx5_0", 1)
	defer p.Close()
	p.buf = make([]byte, hdrSize+MADSize)
	big := make([]byte, MADSize+3*200)
	for i := range big {
		big[i] = byte(i)
	}
	f.mu.Lock()
	f.recvSize = hdrSize + len(big)
	f.mu.Unlock()
	f.deliver(umadHdr{ID: 5, Length: uint32(hdrSize + len(big)), QPN: 1, LID: 1}, big)
	pkt, err := p.Recv(time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pkt.MAD, big) {
		t.Errorf("reassembled MAD: %d bytes, want %d", len(pkt.MAD), len(big))
	}
	if len(p.buf) < hdrSize+len(big) {
		t.Errorf("buffer not grown: %d", len(p.buf))
	}
}

func TestKernelOpenErrors(t *testing.T) {
	t.Run("unknown CA", func(t *testing.T) {
		f := newFakeKernel(t)
		o := &kernelOpener{sysRoot: testSysfs, devDir: "/dev/fake", ops: f.ops()}
		if _, err := o.Open("mlx9_9", -1); err == nil || !strings.Contains(err.Error(), "'mlx9_9' not found") {
			t.Errorf("err = %v", err)
		}
		if len(f.opened) != 0 {
			t.Error("opened a device")
		}
	})
	t.Run("permission", func(t *testing.T) {
		f := newFakeKernel(t)
		f.openErr = unix.EACCES
		o := &kernelOpener{sysRoot: testSysfs, devDir: "/dev/fake", ops: f.ops()}
		_, err := o.Open("mlx5_0", 1)
		if err == nil || !errors.Is(err, unix.EACCES) || !strings.Contains(err.Error(), "/dev/fake/umad2") || !strings.Contains(err.Error(), "rdma group") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no ENABLE_PKEY", func(t *testing.T) {
		f := newFakeKernel(t)
		f.pkeyErr = unix.EINVAL
		o := &kernelOpener{sysRoot: testSysfs, devDir: "/dev/fake", ops: f.ops()}
		if _, err := o.Open("mlx5_0", 1); err == nil || !strings.Contains(err.Error(), "ENABLE_PKEY") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ABI", func(t *testing.T) {
		root := copyTree(t)
		if err := os.WriteFile(filepath.Join(root, sysClassMAD, "abi_version"), []byte("4\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f := newFakeKernel(t)
		o := &kernelOpener{sysRoot: root, devDir: "/dev/fake", ops: f.ops()}
		if _, err := o.Open("mlx5_0", 1); err == nil || !strings.Contains(err.Error(), "ABI 5") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no umad device", func(t *testing.T) {
		root := copyTree(t)
		if err := os.RemoveAll(filepath.Join(root, sysClassMAD, "umad2")); err != nil {
			t.Fatal(err)
		}
		f := newFakeKernel(t)
		o := &kernelOpener{sysRoot: root, devDir: "/dev/fake", ops: f.ops()}
		if _, err := o.Open("mlx5_0", 1); err == nil || !strings.Contains(err.Error(), "no umad device for mlx5_0 port 1") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unreadable CA", func(t *testing.T) {
		root := copyTree(t)
		if err := os.Remove(filepath.Join(root, sysClassIB, "mlx5_0", "node_guid")); err != nil {
			t.Fatal(err)
		}
		f := newFakeKernel(t)
		o := &kernelOpener{sysRoot: root, devDir: "/dev/fake", ops: f.ops()}
		if _, err := o.Open("mlx5_0", 1); err == nil || !strings.Contains(err.Error(), "node_guid") {
			t.Errorf("err = %v; want the reason mlx5_0 could not be read", err)
		}
	})
}

func TestNewKernel(t *testing.T) {
	o := NewKernel(testSysfs, DefaultDevDir)
	if o.Name() != "kernel" {
		t.Errorf("Name = %q", o.Name())
	}
	if r, ok := o.(interface{ SysfsRoot() string }); !ok || r.SysfsRoot() != testSysfs {
		t.Error("SysfsRoot")
	}
	cas, err := o.CAs()
	if err != nil || len(cas) != 3 {
		t.Errorf("CAs = %d, %v", len(cas), err)
	}
}

// FuzzDecodeHeader feeds arbitrary reads to the receive path: it must not
// panic, and what it decodes must encode back to the same bytes.
func FuzzDecodeHeader(f *testing.F) {
	f.Add(encodeHeader(umadHdr{ID: 1, Status: 110, Length: 88, LID: 2}))
	f.Add(append(encodeHeader(umadHdr{GRHPresent: 1, GID: testGID}), mad(1, 1, 0x81)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeader(b)
		p, perr := packetFromRead(b)
		if (err == nil) != (perr == nil) {
			t.Fatalf("decodeHeader err %v, packetFromRead err %v", err, perr)
		}
		if err != nil {
			return
		}
		if enc := encodeHeader(h); !bytes.Equal(enc[:58], b[:58]) {
			t.Errorf("round trip:\n got % x\nwant % x", enc[:58], b[:58])
		}
		if len(p.MAD) < MADSize || len(p.MAD) != max(len(b)-hdrSize, MADSize) {
			t.Errorf("MAD length %d for a %d-byte read", len(p.MAD), len(b))
		}
		if (p.Addr.GRH != nil) != (h.GRHPresent != 0) {
			t.Error("GRH presence")
		}
	})
}
