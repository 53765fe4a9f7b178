package umad

// The Linux kernel umad transport: /dev/infiniband/umadN, driven with plain
// read/write/poll/ioctl system calls (no libibumad). The ABI is the
// kernel's Documentation/infiniband/user_mad.rst, and the layouts below
// were checked against its include/uapi/rdma/ib_user_mad.h.
//
// No InfiniBand hardware exists where this is developed. The unit tests
// check the byte layouts, the sysfs handling, the port choice, and the
// send/receive logic against a fake device (a SOCK_SEQPACKET socket pair
// with faked ioctls); make test-vm runs GMPs over QP1 through real umad
// devices on SoftRoCE in a qemu guest. RoCE ports have no QP0 (no SMPs) and
// no LIDs: GMPs there are addressed by GID, in a GRH.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// DefaultSysfsRoot is where sysfs is mounted.
	DefaultSysfsRoot = "/sys"
	// DefaultDevDir holds the umadN character devices.
	DefaultDevDir = "/dev/infiniband"
)

// Kernel ABI constants.
const (
	umadABIVersion = 5  // class/infiniband_mad/abi_version
	hdrSize        = 64 // struct ib_user_mad_hdr with pkey_index
	madHdrSize     = 24 // MAD common header: all a timed-out send gives back
	regReqSize     = 28 // struct ib_user_mad_reg_req
	regReq2Size    = 40 // struct ib_user_mad_reg_req2

	// ioctl numbers (magic 0x1b) as _IOWR/_IOW/_IO compute them on x86,
	// arm64 and the other architectures with the generic ioctl layout.
	ioctlRegisterAgent   = 0xC01C1B01 // _IOWR(0x1b, 1, struct ib_user_mad_reg_req)
	ioctlUnregisterAgent = 0x40041B02 // _IOW(0x1b, 2, __u32)
	ioctlEnablePKey      = 0x00001B03 // _IO(0x1b, 3)
	ioctlRegisterAgent2  = 0xC0281B04 // _IOWR(0x1b, 4, struct ib_user_mad_reg_req2)

	// Management classes that need special agents.
	classSMILID   = 0x01
	classSMIDR    = 0x81
	classSA       = 0x03
	classBM       = 0x05
	classVendor2A = 0x30 // vendor range 2 (with OUI): 0x30..0x4f
	classVendor2Z = 0x4f

	methodRespBit     = 0x80
	methodTrapRepress = 0x07

	// defaultKernelTimeout is libibmad's default MAD timeout.
	defaultKernelTimeout = time.Second

	initialRecvBuf = hdrSize + 4096
	maxRecvBuf     = 64 << 20
)

// umadHdr is struct ib_user_mad_hdr (ABI 5 with the P_Key index).
type umadHdr struct {
	ID           uint32 // agent id (host order)
	Status       uint32 // 0, or ETIMEDOUT for a request handed back (host order)
	TimeoutMS    uint32 // send: how long the kernel waits for the response (host order)
	Retries      uint32 // send: kernel retransmissions (host order)
	Length       uint32 // receive: header + MAD bytes (host order)
	QPN          uint32 // remote QP (big endian on the wire)
	QKey         uint32 // big endian
	LID          uint16 // remote LID, big endian
	SL           uint8
	PathBits     uint8
	GRHPresent   uint8
	GIDIndex     uint8
	HopLimit     uint8
	TrafficClass uint8
	GID          [16]byte
	FlowLabel    uint32 // big endian
	PKeyIndex    uint16 // host order
}

// encodeHeader lays h out as the kernel reads it; bytes 58..63 are reserved.
func encodeHeader(h umadHdr) []byte {
	b := make([]byte, hdrSize)
	ne, be := binary.NativeEndian, binary.BigEndian
	ne.PutUint32(b[0:], h.ID)
	ne.PutUint32(b[4:], h.Status)
	ne.PutUint32(b[8:], h.TimeoutMS)
	ne.PutUint32(b[12:], h.Retries)
	ne.PutUint32(b[16:], h.Length)
	be.PutUint32(b[20:], h.QPN)
	be.PutUint32(b[24:], h.QKey)
	be.PutUint16(b[28:], h.LID)
	b[30] = h.SL
	b[31] = h.PathBits
	b[32] = h.GRHPresent
	b[33] = h.GIDIndex
	b[34] = h.HopLimit
	b[35] = h.TrafficClass
	copy(b[36:52], h.GID[:])
	be.PutUint32(b[52:], h.FlowLabel)
	ne.PutUint16(b[56:], h.PKeyIndex)
	return b
}

// decodeHeader reads the header the kernel put in front of a received MAD.
func decodeHeader(b []byte) (umadHdr, error) {
	if len(b) < hdrSize {
		return umadHdr{}, fmt.Errorf("umad header: %d bytes, want %d", len(b), hdrSize)
	}
	ne, be := binary.NativeEndian, binary.BigEndian
	h := umadHdr{
		ID:           ne.Uint32(b[0:]),
		Status:       ne.Uint32(b[4:]),
		TimeoutMS:    ne.Uint32(b[8:]),
		Retries:      ne.Uint32(b[12:]),
		Length:       ne.Uint32(b[16:]),
		QPN:          be.Uint32(b[20:]),
		QKey:         be.Uint32(b[24:]),
		LID:          be.Uint16(b[28:]),
		SL:           b[30],
		PathBits:     b[31],
		GRHPresent:   b[32],
		GIDIndex:     b[33],
		HopLimit:     b[34],
		TrafficClass: b[35],
		FlowLabel:    be.Uint32(b[52:]),
		PKeyIndex:    ne.Uint16(b[56:]),
	}
	copy(h.GID[:], b[36:52])
	return h, nil
}

// hdrFromAddr fills the address part of a send header. A GMP address
// without a Q_Key gets the well-known QP1 Q_Key.
func hdrFromAddr(a Address) umadHdr {
	h := umadHdr{
		QPN:       a.QP,
		QKey:      a.QKey,
		LID:       a.LID,
		SL:        a.SL,
		PathBits:  a.PathBits,
		PKeyIndex: a.PKeyIndex,
	}
	if h.QKey == 0 && h.QPN != 0 {
		h.QKey = QP1QKey
	}
	if g := a.GRH; g != nil {
		h.GRHPresent = 1
		h.GID = g.GID
		h.GIDIndex = g.GIDIndex
		h.HopLimit = g.HopLimit
		h.TrafficClass = g.TrafficClass
		h.FlowLabel = g.FlowLabel
	}
	return h
}

// addrFromHdr describes where a received MAD came from.
func addrFromHdr(h umadHdr) Address {
	a := Address{
		LID:       h.LID,
		QP:        h.QPN,
		QKey:      h.QKey,
		SL:        h.SL,
		PathBits:  h.PathBits,
		PKeyIndex: h.PKeyIndex,
	}
	if h.GRHPresent != 0 {
		a.GRH = &GRH{
			GID:          h.GID,
			GIDIndex:     h.GIDIndex,
			HopLimit:     h.HopLimit,
			TrafficClass: h.TrafficClass,
			FlowLabel:    h.FlowLabel,
		}
	}
	return a
}

// regReq is what both registration ioctls carry. MethodMask bit m asks for
// unsolicited MADs with method m; a "client" agent leaves it empty and only
// gets the responses to its own requests.
type regReq struct {
	QPN          uint8 // 0 SMI, 1 GSI
	MgmtClass    uint8
	ClassVersion uint8
	OUI          uint32 // 24 bits, vendor range 2 classes only
	RMPPVersion  uint8  // 1: the kernel does RMPP
	MethodMask   [2]uint64
	Flags        uint32 // REGISTER_AGENT2 only
}

// encodeRegReq lays r out as struct ib_user_mad_reg_req (28 bytes).
func encodeRegReq(r regReq) []byte {
	b := make([]byte, regReqSize)
	ne := binary.NativeEndian
	// id @0 is output only.
	ne.PutUint64(b[4:], r.MethodMask[0])
	ne.PutUint64(b[12:], r.MethodMask[1])
	b[20] = r.QPN
	b[21] = r.MgmtClass
	b[22] = r.ClassVersion
	b[23] = byte(r.OUI >> 16) // oui[3], network order
	b[24] = byte(r.OUI >> 8)
	b[25] = byte(r.OUI)
	b[26] = r.RMPPVersion
	return b
}

// encodeRegReq2 lays r out as struct ib_user_mad_reg_req2 (40 bytes).
func encodeRegReq2(r regReq) []byte {
	b := make([]byte, regReq2Size)
	ne := binary.NativeEndian
	ne.PutUint32(b[4:], uint32(r.QPN))
	b[8] = r.MgmtClass
	b[9] = r.ClassVersion
	ne.PutUint32(b[12:], r.Flags)
	ne.PutUint64(b[16:], r.MethodMask[0])
	ne.PutUint64(b[24:], r.MethodMask[1])
	ne.PutUint32(b[32:], r.OUI&0xffffff)
	b[36] = r.RMPPVersion
	return b
}

// agentFor returns the client agent a MAD needs: libibmad's choices (SMPs
// on QP0, everything else on QP1, kernel RMPP for SA) with the MAD's own
// class version, and for vendor range 2 the OUI from MAD bytes 37..39.
func agentFor(mad []byte) regReq {
	r := regReq{MgmtClass: mad[1], ClassVersion: mad[2], QPN: 1}
	switch r.MgmtClass {
	case classSMILID, classSMIDR:
		r.QPN = 0
	case classSA:
		r.RMPPVersion = 1
	}
	if r.MgmtClass >= classVendor2A && r.MgmtClass <= classVendor2Z && len(mad) >= 40 {
		r.OUI = uint32(mad[37])<<16 | uint32(mad[38])<<8 | uint32(mad[39])
	}
	return r
}

// isResponse is the kernel's ib_response_mad: responses are sent without
// waiting for anything.
func isResponse(mad []byte) bool {
	method := mad[3]
	if method&methodRespBit != 0 || method == methodTrapRepress {
		return true
	}
	return mad[1] == classBM && binary.BigEndian.Uint32(mad[20:24])&1 != 0
}

// sysOps are the system calls the transport makes on the device, so tests
// can stand in for the kernel.
type sysOps struct {
	open  func(path string) (int, error)
	ioctl func(fd int, req uintptr, arg unsafe.Pointer) error
	read  func(fd int, p []byte) (int, error)
}

var realOps = sysOps{
	open: func(path string) (int, error) {
		return unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	},
	ioctl: func(fd int, req uintptr, arg unsafe.Pointer) error {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if e != 0 {
			return e
		}
		return nil
	},
	read: unix.Read,
}

// HasKernelDevices reports whether the kernel's umad module exposes any
// device under <sysRoot>/class/infiniband_mad.
func HasKernelDevices(sysRoot string) bool {
	entries, err := os.ReadDir(filepath.Join(sysRoot, sysClassMAD))
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, ok := umadIndex(e.Name()); ok {
			return true
		}
	}
	return false
}

func umadIndex(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "umad")
	if !ok {
		return 0, false
	}
	return portNumber(s)
}

type kernelOpener struct {
	sysRoot, devDir string
	ops             sysOps
}

// NewKernel returns the transport for real hardware: CAs from
// <sysRoot>/class/infiniband, MADs through <devDir>/umadN.
func NewKernel(sysRoot, devDir string) Opener {
	return &kernelOpener{sysRoot: sysRoot, devDir: devDir, ops: realOps}
}

func (k *kernelOpener) Name() string { return "kernel" }

// SysfsRoot is the sysfs mount point the transport reads (ibstatus prints
// paths below it).
func (k *kernelOpener) SysfsRoot() string { return k.sysRoot }

func (k *kernelOpener) CAs() ([]CA, error) { return ReadCAs(k.sysRoot) }

// Open opens <devDir>/umadN for (ca, port); see Opener.Open and
// choosePort for the defaults.
func (k *kernelOpener) Open(ca string, port int) (Port, error) {
	cas, listErr := ReadCAs(k.sysRoot)
	if cas == nil && listErr != nil {
		return nil, listErr
	}
	name, num, err := choosePort(cas, ca, port)
	if err != nil {
		var skipped CAErrors
		if errors.As(listErr, &skipped) && skipped.Skipped(ca) != nil {
			return nil, skipped.Skipped(ca)
		}
		return nil, err
	}
	if err := checkABI(k.sysRoot); err != nil {
		return nil, err
	}
	id, err := umadFor(k.sysRoot, name, num)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(k.devDir, "umad"+strconv.Itoa(id))
	fd, err := k.ops.open(path)
	if err != nil {
		hint := ""
		switch {
		case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
			hint = " (run as root, or get read-write access to it, e.g. through the rdma group)"
		case errors.Is(err, unix.ENOENT):
			hint = " (the device node is missing: is udev running?)"
		}
		return nil, fmt.Errorf("cannot open %s for %s port %d: %w%s", path, name, num, err, hint)
	}
	p, err := newKernelPort(fd, k.ops, k.sysRoot, name, num, path)
	if err != nil {
		return nil, err
	}
	for i := range cas {
		if pi := findPort(&cas[i], num); cas[i].Name == name && pi != nil {
			p.roce = IsRoCE(*pi)
		}
	}
	return p, nil
}

// IsRoCE reports whether a port is RoCE (sysfs link_layer "Ethernet"):
// GMPs only, on QP1, addressed by GID with a GRH; no QP0, no LIDs, no SM
// and no SA.
func IsRoCE(p PortInfo) bool { return p.LinkLayer == "Ethernet" }

// Errors of RoCE ports, for errors.Is.
var (
	// ErrRoCENoQP0 is what registering an SMP agent on a RoCE port
	// turns into: the kernel has no QP0 there and refuses it.
	ErrRoCENoQP0 = errors.New("RoCE has no QP0, so no SMPs: subnet management needs an InfiniBand port")
	// ErrRoCENeedsGID is sending a GMP without a GRH on a RoCE port.
	ErrRoCENeedsGID = errors.New("RoCE has no LIDs or directed routes: address the port by GID")
)

// checkABI requires the umad ABI this transport speaks.
func checkABI(sysRoot string) error {
	dir := filepath.Join(sysRoot, sysClassMAD)
	v, err := readUint(dir, "abi_version")
	if err != nil {
		return fmt.Errorf("cannot read the umad ABI version (is ib_umad loaded?): %w", err)
	}
	if v != umadABIVersion {
		return fmt.Errorf("%s/abi_version is %d; ibtool speaks umad ABI %d", dir, v, umadABIVersion)
	}
	return nil
}

// umadFor finds N such that umadN serves (ca, port).
func umadFor(sysRoot, ca string, port int) (int, error) {
	dir := filepath.Join(sysRoot, sysClassMAD)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("cannot list umad devices (is ib_umad loaded?): %w", err)
	}
	var ids []int
	for _, e := range entries {
		if id, ok := umadIndex(e.Name()); ok {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	for _, id := range ids {
		d := filepath.Join(dir, "umad"+strconv.Itoa(id))
		dev, err := readString(d, "ibdev")
		if err != nil || dev != ca {
			continue
		}
		if p, err := readUint(d, "port"); err == nil && p == uint64(port) {
			return id, nil
		}
	}
	return 0, fmt.Errorf("no umad device for %s port %d in %s", ca, port, dir)
}

// choosePort resolves the CA and port to open the way libibumad does.
//   - A named CA with a port > 0: that port.
//   - A named CA with port <= 0: port 0 of a switch; otherwise the CA's
//     first Active IB port, else its first IB port that is LinkUp, else
//     its first port that is not Disabled.
//   - No CA: the first CA (by name) that has such an Active port (or the
//     requested port, Active), else the first with a usable port.
//
// Only CAs with node type 1..3 count, as in libibumad.
func choosePort(cas []CA, ca string, port int) (string, int, error) {
	if ca != "" {
		for i := range cas {
			c := &cas[i]
			if c.Name != ca || !isIBNodeType(c.NodeType) {
				continue
			}
			if port > 0 {
				if findPort(c, port) == nil {
					return "", 0, fmt.Errorf("IB device '%s' has no port %d (ports: %s)", ca, port, portList(c))
				}
				return ca, port, nil
			}
			num, kind := bestPort(c, 0)
			if kind < 0 {
				return "", 0, fmt.Errorf("IB device '%s' has no usable port (ports: %s)", ca, portList(c))
			}
			return ca, num, nil
		}
		return "", 0, fmt.Errorf("IB device '%s' not found (have: %s)", ca, caList(cas))
	}
	want := max(port, 0)
	found, foundPort := "", 0
	for i := range cas {
		c := &cas[i]
		if !isIBNodeType(c.NodeType) {
			continue
		}
		num, kind := bestPort(c, want)
		if kind > 0 {
			return c.Name, num, nil
		}
		if kind == 0 && found == "" {
			found, foundPort = c.Name, num
		}
	}
	if found != "" {
		return found, foundPort, nil
	}
	if want > 0 {
		return "", 0, fmt.Errorf("no IB device has a usable port %d (have: %s)", want, caList(cas))
	}
	return "", 0, fmt.Errorf("no IB device with a usable port (have: %s)", caList(cas))
}

// bestPort is libibumad's resolve_ca_port: kind 1 for an Active port, 0
// for a usable one, -1 for none.
func bestPort(c *CA, want int) (num, kind int) {
	if c.NodeType == 2 {
		return 0, 1 // a switch's management port
	}
	if want > 0 {
		p := findPort(c, want)
		switch {
		case p == nil || !isIBLink(p.LinkLayer):
			return 0, -1
		case p.State == 4:
			return want, 1
		case p.PhysState != 3:
			return want, 0
		}
		return 0, -1
	}
	up := -1
	for i := range c.Ports {
		p := &c.Ports[i]
		if !isIBLink(p.LinkLayer) {
			continue
		}
		if p.State == 4 {
			return p.Num, 1
		}
		if up < 0 && p.PhysState == 5 {
			up = p.Num
		}
	}
	if up >= 0 {
		return up, 0
	}
	for i := range c.Ports {
		if c.Ports[i].PhysState != 3 {
			return c.Ports[i].Num, 0
		}
	}
	return 0, -1
}

func isIBNodeType(t int) bool { return t >= 1 && t <= 3 }

// isIBLink accepts sysfs's "InfiniBand", libibumad's default "IB", and an
// unknown link layer.
func isIBLink(ll string) bool { return ll == "InfiniBand" || ll == "IB" || ll == "" }

func findPort(c *CA, num int) *PortInfo {
	for i := range c.Ports {
		if c.Ports[i].Num == num {
			return &c.Ports[i]
		}
	}
	return nil
}

func portList(c *CA) string {
	if len(c.Ports) == 0 {
		return "none"
	}
	s := make([]string, len(c.Ports))
	for i, p := range c.Ports {
		s[i] = strconv.Itoa(p.Num)
	}
	return strings.Join(s, ", ")
}

func caList(cas []CA) string {
	var s []string
	for _, c := range cas {
		if isIBNodeType(c.NodeType) {
			s = append(s, c.Name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// KernelPort is a local port opened through /dev/infiniband/umadN. Send
// registers one client agent per (class, version, OUI) the first time it
// needs it. Send, Recv, Info and Close may be called from any goroutine;
// concurrent Recv calls take turns.
type KernelPort struct {
	// KernelTimeout is how long the kernel waits for the response to a
	// request before it hands the request back (a Packet with
	// Status StatusTimeout). The kernel never retransmits (retries 0):
	// retrying is the caller's job, as with libibmad. Zero means 1 s.
	KernelTimeout time.Duration

	ca      string
	portNum int
	roce    bool // Ethernet link layer: no QP0, every MAD needs a GRH
	sysRoot string
	path    string
	ops     sysOps
	fd      int
	wake    [2]int // pipe that wakes Recv when Close runs

	life   sync.RWMutex // shared by Send/Recv, exclusive by Close
	closed atomic.Bool

	agentMu sync.Mutex
	agents  map[regReq]uint32

	recvMu sync.Mutex // one reader at a time; guards buf
	buf    []byte
}

func newKernelPort(fd int, ops sysOps, sysRoot, ca string, port int, path string) (*KernelPort, error) {
	// Ask for the header with pkey_index before any agent exists.
	if err := ops.ioctl(fd, ioctlEnablePKey, nil); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: IB_USER_MAD_ENABLE_PKEY: %w (kernel too old?)", path, err)
	}
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("umad: %w", err)
	}
	for _, e := range p {
		unix.CloseOnExec(e)
		_ = unix.SetNonblock(e, true)
	}
	return &KernelPort{
		KernelTimeout: defaultKernelTimeout,
		ca:            ca,
		portNum:       port,
		sysRoot:       sysRoot,
		path:          path,
		ops:           ops,
		fd:            fd,
		wake:          p,
		agents:        map[regReq]uint32{},
		buf:           make([]byte, initialRecvBuf),
	}, nil
}

// CA is the name of the port's CA.
func (k *KernelPort) CA() string { return k.ca }

// PortNum is the port's number.
func (k *KernelPort) PortNum() int { return k.portNum }

// Info re-reads the port's sysfs attributes.
func (k *KernelPort) Info() (PortInfo, error) { return ReadPort(k.sysRoot, k.ca, k.portNum) }

// agent returns the id of the client agent for r, registering it first
// if needed: REGISTER_AGENT2, or REGISTER_AGENT on kernels without it.
func (k *KernelPort) agent(r regReq) (uint32, error) {
	k.agentMu.Lock()
	defer k.agentMu.Unlock()
	if id, ok := k.agents[r]; ok {
		return id, nil
	}
	b := encodeRegReq2(r)
	err := k.ops.ioctl(k.fd, ioctlRegisterAgent2, unsafe.Pointer(&b[0]))
	if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) {
		b = encodeRegReq(r)
		err = k.ops.ioctl(k.fd, ioctlRegisterAgent, unsafe.Pointer(&b[0]))
	}
	if err != nil && r.QPN == 0 && k.roce {
		// ib_mad has no QP0 on an Ethernet port and refuses SMI agents
		// (EPROTONOSUPPORT).
		return 0, fmt.Errorf("%s port %d: %w (the kernel refuses class 0x%02x agents on QP0: %v)",
			k.ca, k.portNum, ErrRoCENoQP0, r.MgmtClass, err)
	}
	if err != nil {
		what := ""
		if r.MgmtClass >= classVendor2A && r.MgmtClass <= classVendor2Z && r.OUI == 0 {
			what = " (vendor classes 0x30-0x4f need an OUI in MAD bytes 37..39)"
		}
		return 0, fmt.Errorf("%s: cannot register an agent for class 0x%02x version %d on QP%d: %w%s",
			k.path, r.MgmtClass, r.ClassVersion, r.QPN, err, what)
	}
	id := binary.NativeEndian.Uint32(b[0:4])
	k.agents[r] = id
	return id, nil
}

// Send writes one MAD. Requests carry the kernel timeout, responses none.
func (k *KernelPort) Send(p *Packet) error {
	if p == nil || len(p.MAD) < madHdrSize {
		return errors.New("umad send: a MAD needs at least its 24-byte common header")
	}
	k.life.RLock()
	defer k.life.RUnlock()
	if k.closed.Load() {
		return ErrClosed
	}
	r := agentFor(p.MAD)
	if k.roce && r.QPN == 1 && p.Addr.GRH == nil {
		// RoCE frames carry no LIDs: without a GRH the kernel cannot
		// build an address handle (EINVAL). Say why instead.
		return fmt.Errorf("%s port %d: %w", k.ca, k.portNum, ErrRoCENeedsGID)
	}
	id, err := k.agent(r)
	if err != nil {
		return err
	}
	h := hdrFromAddr(p.Addr)
	h.ID = id
	if !isResponse(p.MAD) {
		t := k.KernelTimeout
		if t <= 0 {
			t = defaultKernelTimeout
		}
		h.TimeoutMS = uint32(min(t.Milliseconds(), math.MaxUint32))
	}
	buf := append(encodeHeader(h), p.MAD...)
	for {
		n, err := unix.Write(k.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: write: %w", k.path, err)
		}
		if n != len(buf) {
			return fmt.Errorf("%s: short write (%d of %d bytes)", k.path, n, len(buf))
		}
		return nil
	}
}

// errAgain says the device had nothing to read after all.
var errAgain = errors.New("again")

// Recv waits for the next MAD until deadline (a zero deadline waits for
// ever).
func (k *KernelPort) Recv(deadline time.Time) (*Packet, error) {
	k.life.RLock()
	defer k.life.RUnlock()
	k.recvMu.Lock()
	defer k.recvMu.Unlock()
	for {
		if k.closed.Load() {
			return nil, ErrClosed
		}
		timeout := -1
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left < 0 {
				left = 0
			}
			ms := (left + time.Millisecond - 1) / time.Millisecond
			timeout = int(min(ms, math.MaxInt32))
		}
		fds := []unix.PollFd{
			{Fd: int32(k.fd), Events: unix.POLLIN},
			{Fd: int32(k.wake[0]), Events: unix.POLLIN},
		}
		n, err := unix.Poll(fds, timeout)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: poll: %w", k.path, err)
		}
		if k.closed.Load() || fds[1].Revents != 0 {
			return nil, ErrClosed
		}
		if n == 0 || fds[0].Revents == 0 {
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return nil, ErrTimeout
			}
			continue
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return nil, fmt.Errorf("%s: poll: device error (revents 0x%x)", k.path, fds[0].Revents)
		}
		p, err := k.readOne()
		if err == errAgain {
			continue
		}
		return p, err
	}
}

// readOne reads one MAD, growing the buffer when the kernel says an RMPP
// message does not fit (ENOSPC; the header's length holds the full size).
func (k *KernelPort) readOne() (*Packet, error) {
	for {
		n, err := k.ops.read(k.fd, k.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return nil, errAgain
		case err == unix.ENOSPC:
			need := int(binary.NativeEndian.Uint32(k.buf[16:20]))
			if need <= len(k.buf) {
				need = 2 * len(k.buf)
			}
			if need > maxRecvBuf {
				return nil, fmt.Errorf("%s: read: a %d-byte message exceeds the %d-byte limit", k.path, need, maxRecvBuf)
			}
			k.buf = make([]byte, need)
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: read: %w", k.path, err)
		}
		return packetFromRead(k.buf[:n])
	}
}

// packetFromRead turns what one read returned into a Packet. A request
// the kernel hands back after its timeout carries only the MAD's common
// header; it is padded to a full MAD.
func packetFromRead(b []byte) (*Packet, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return nil, fmt.Errorf("umad read: %w", err)
	}
	mad := make([]byte, max(len(b)-hdrSize, MADSize))
	copy(mad, b[hdrSize:])
	return &Packet{Addr: addrFromHdr(h), Status: int(int32(h.Status)), MAD: mad}, nil
}

// Close unregisters the agents and closes the device. A Recv in progress
// returns ErrClosed.
func (k *KernelPort) Close() error {
	if k.closed.Swap(true) {
		return nil
	}
	_, _ = unix.Write(k.wake[1], []byte{1})
	k.life.Lock()
	defer k.life.Unlock()
	var errs []error
	k.agentMu.Lock()
	ids := make([]uint32, 0, len(k.agents))
	for _, id := range k.agents {
		ids = append(ids, id)
	}
	k.agents = nil
	k.agentMu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		id := id
		if err := k.ops.ioctl(k.fd, ioctlUnregisterAgent, unsafe.Pointer(&id)); err != nil {
			errs = append(errs, fmt.Errorf("%s: unregister agent %d: %w", k.path, id, err))
		}
	}
	if err := unix.Close(k.fd); err != nil {
		errs = append(errs, fmt.Errorf("%s: close: %w", k.path, err))
	}
	unix.Close(k.wake[0])
	unix.Close(k.wake[1])
	return errors.Join(errs...)
}

// Serve registers an agent that receives unsolicited requests of class
// with the given methods (a non-zero method mask, IBA 13.4.5 methods).
func (k *KernelPort) Serve(class, version uint8, oui uint32, methods ...uint8) error {
	probe := make([]byte, 40)
	probe[1], probe[2] = class, version
	probe[37], probe[38], probe[39] = byte(oui>>16), byte(oui>>8), byte(oui)
	r := agentFor(probe)
	for _, m := range methods {
		r.MethodMask[m/64] |= 1 << (m % 64)
	}
	_, err := k.agent(r)
	return err
}

// KernelHeader is struct ib_user_mad_hdr decoded, for tools that show the
// header of a captured umad frame (decode_mad --umad).
type KernelHeader = umadHdr

// KernelHeaderSize is the size of struct ib_user_mad_hdr (ABI 5).
const KernelHeaderSize = hdrSize

// DecodeKernelHeader decodes the header at the start of a umad frame.
func DecodeKernelHeader(b []byte) (KernelHeader, error) { return decodeHeader(b) }
