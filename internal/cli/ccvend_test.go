package cli

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// ibsim answers neither congestion control (it takes class 0x21 for the
// SMI class) nor the Mellanox vendor class, so ibccquery, ibccconfig and
// vendstat are compared with the C tools on a fake: a small umadtest
// fabric whose nodes answer those classes from recorded replies, served
// on ibsim's sockets (umadtest.SimServer). The C tool runs under umad2sim
// against it, ibtool through its ibsim transport: both get the same reply
// bytes, and their output must be the same.

// ccvendFake is that fabric: host (the local CA, LID 1), sw (an 8-port
// switch, LID 2), hca (a CA, LID 3), big (a 50-port switch, LID 4, two
// blocks of SwitchPortCongestionSetting) and is3 (an InfiniScale III, LID
// 5, for vendstat -w). Each node has its own CC and vendor agents.
type ccvendFake struct {
	fab                *umadtest.Fabric
	host, sw, hca, big *umadtest.Node
	is3                *umadtest.Node
	cc, mlnx           map[*umadtest.Node]*umadtest.Agent
	sa                 *umadtest.SA
	regsMu             sync.Mutex                           // the server's goroutines write regs
	regs               map[*umadtest.Node]map[uint32]uint32 // config space
	srv                *umadtest.SimServer
}

var fakeSeq atomic.Int32

func newCCVendFake(t *testing.T) *ccvendFake {
	t.Helper()
	f := &ccvendFake{fab: umadtest.NewFabric(), cc: map[*umadtest.Node]*umadtest.Agent{}, mlnx: map[*umadtest.Node]*umadtest.Agent{}}
	f.host = f.fab.AddCA(0x100, 1, "host")
	f.sw = f.fab.AddSwitch(0x200, 8, "sw")
	f.hca = f.fab.AddCA(0x300, 1, "hca")
	f.big = f.fab.AddSwitch(0x400, 50, "big")
	f.is3 = f.fab.AddSwitch(0x500, 24, "is3")
	f.fab.Link(f.host, 1, f.sw, 1)
	f.fab.Link(f.hca, 1, f.sw, 2)
	f.fab.Link(f.big, 1, f.sw, 3)
	f.fab.Link(f.is3, 1, f.sw, 4)
	for _, n := range f.fab.Nodes() {
		f.cc[n] = umadtest.NewAgent(mad.ClassCongest)
		f.mlnx[n] = umadtest.NewAgent(mad.ClassVendorMlnx)
	}
	f.recordCC()
	f.recordVendor()
	f.sa = f.pathRecords()
	perNode := func(agents map[*umadtest.Node]*umadtest.Agent) umadtest.Func {
		return func(req *umad.Packet) []*umad.Packet {
			n, _ := f.fab.Dest(req)
			if n == nil {
				return []*umad.Packet{umadtest.Undelivered(req)}
			}
			return agents[n].Answer(req)
		}
	}
	name := fmt.Sprintf("ibtool-ccvend-%d-%d", os.Getpid(), fakeSeq.Add(1))
	srv, err := umadtest.NewSimServer(name, umadtest.Classes{
		mad.ClassSubnLID: f.fab.Answer, mad.ClassSubnDR: f.fab.Answer, mad.ClassSubnAdm: f.sa.Answer,
		mad.ClassCongest: perNode(f.cc),
		mad.ClassVendorMlnx: func(req *umad.Packet) []*umad.Packet {
			if n, _ := f.fab.Dest(req); n != nil {
				return f.configSpace(n, req)
			}
			return []*umad.Packet{umadtest.Undelivered(req)}
		},
	}.Answer)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	t.Cleanup(func() { srv.Close() })
	return f
}

// pathRecords is an SA (at the local port's LID) with a path from the
// local port to each port of the fabric, to resolve GUID targets.
func (f *ccvendFake) pathRecords() *umadtest.SA {
	f.fab.SMLID = 1
	gid := func(n *umadtest.Node) (g mad.GID) {
		binary.BigEndian.PutUint64(g[:], 0xfe80_0000_0000_0000)
		binary.BigEndian.PutUint64(g[8:], n.PortGUID(1))
		return g
	}
	// vendstat opens no SMP agent, so libibmad cannot read the local
	// GID prefix: its PathRecord query has SGID ::101.
	noPrefix := gid(f.host)
	clear(noPrefix[:8])
	sa := umadtest.NewSA()
	for _, n := range f.fab.Nodes() {
		for _, sgid := range []mad.GID{gid(f.host), noPrefix} {
			sa.Add(&mad.PathRecord{DGID: gid(n), SGID: sgid, DLID: n.LID(1), SLID: 1, Reversible: 1, NumbPath: 1,
				PKey: 0xffff, MTU: mad.MTU(4), Rate: mad.Rate(3), PacketLifeTime: 18})
		}
	}
	return sa
}

// recordCC stores the congestion control attributes the nodes answer.
func (f *ccvendFake) recordCC() {
	cpi := &mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: 0x0100, RespTimeValue: 18}
	for _, n := range []*umadtest.Node{f.sw, f.hca, f.big} {
		f.cc[n].Set(0, cpi)
		f.cc[n].Set(0, &mad.Timestamp{Timestamp: 0x12345678})
		f.cc[n].Set(0, &mad.CongestionKeyInfo{CCKey: 0x0123456789abcdef, CCKeyProtectBit: 1, CCKeyLeasePeriod: 60, CCKeyViolations: 3})
	}
	f.cc[f.sw].Set(0, &mad.CongestionInfo{CongestionInfo: 0x0001, ControlTableCap: 0})
	f.cc[f.hca].Set(0, &mad.CongestionInfo{CongestionInfo: 0x0000, ControlTableCap: 2})

	// A switch log: port 1 and 3 marked, two events (the second with a
	// timestamp only, the others empty).
	sw := mad.CongestionLogSwitch{LogType: mad.CCLogTypeSwitch, CongestionFlags: 0x80, LogEventsCounter: 2, CurrentTimeStamp: 1000}
	sw.PortMap[31] = 0x0a
	sw.Event[0] = mad.CongestionLogEventSwitch{SLID: 1, DLID: 3, SL: 2, Timestamp: 900}
	sw.Event[4] = mad.CongestionLogEventSwitch{Timestamp: 950}
	f.cc[f.sw].SetData(mad.AttrCongestionLog, 0, mad.Encode(&sw))
	ca := mad.CongestionLogCA{LogType: mad.CCLogTypeCA, ThresholdEventCounter: 1, ThresholdCongestionEventMap: 0x0004, CurrentTimeStamp: 2000}
	ca.Event[0] = mad.CongestionLogEventCA{LocalQP: 0x48, SL: 2, ServiceType: 1, RemoteQP: 0x49, LocalLID: 3, RemoteLID: 1, Timestamp: 1999}
	f.cc[f.hca].SetData(mad.AttrCongestionLog, 0, mad.Encode(&ca))
	f.cc[f.big].SetData(mad.AttrCongestionLog, 0, []byte{3}) // a log type ibccquery does not know

	scs := &mad.SwitchCongestionSetting{ControlMap: 0xf, Threshold: 0xf, PacketSize: 8, CSThreshold: 2, CSReturnDelay: 0x4005, MarkingRate: 10}
	scs.VictimMask[31], scs.CreditMask[30] = 0x1f, 0x01
	f.cc[f.sw].Set(0, scs)
	var block mad.SwitchPortCongestionSetting
	for i := range block.Element {
		block.Element[i] = mad.SwitchPortCongestionSettingElement{Valid: uint8(i % 2), ControlType: uint8(i / 3 % 2), Threshold: uint8(i % 16), PacketSize: uint8(i), MarkingRate: uint16(100 + i)}
	}
	f.cc[f.sw].Set(0, &block)
	f.cc[f.big].Set(0, &block)
	block.Element[1].MarkingRate = 7777
	f.cc[f.big].Set(1, &block)

	cas := &mad.CACongestionSetting{PortControl: 1, ControlMap: 0x0003}
	cas.Entry[0] = mad.CACongestionEntry{CCTITimer: 150, CCTIIncrease: 1, TriggerThreshold: 2, CCTIMin: 0}
	cas.Entry[1] = mad.CACongestionEntry{CCTITimer: 200, CCTIIncrease: 2, TriggerThreshold: 3, CCTIMin: 1}
	f.cc[f.hca].Set(0, cas)
	// 70 entries: block 0 whole, block 1 up to entry 70.
	for b := uint32(0); b < 2; b++ {
		cct := mad.CongestionControlTable{CCTILimit: 70}
		for i := range cct.Entry {
			cct.Entry[i] = mad.CCTEntry{Shift: uint8(i % 4), Multiplier: uint16(int(b)*64 + i)}
		}
		f.cc[f.hca].Set(b, &cct)
	}
	f.cc[f.sw].Set(0, &mad.CongestionControlTable{})
	// big's table claims 131 entries, but has no block 2.
	for b := uint32(0); b < 2; b++ {
		f.cc[f.big].Set(b, &mad.CongestionControlTable{CCTILimit: 130, Entry: [64]mad.CCTEntry{{Shift: 1, Multiplier: uint16(b)}}})
	}
	f.cc[f.sw].Fail(mad.AttrCACongestionSetting, umadtest.AnyMod, umadtest.StatusUnsupported)
}

// recordVendor stores the Mellanox vendor attributes: a Switch-IB (sw)
// and a ConnectX-5 (hca) with the extended firmware version, an
// InfiniScale III (is3) with the older layout and registers; big has no
// vendor class.
func (f *ccvendFake) recordVendor() {
	cpi := &mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, RespTimeValue: 16}
	psid := func(s string) (p [16]byte) { copy(p[:], s); return p }
	f.mlnx[f.sw].Set(0, cpi)
	f.mlnx[f.sw].Set(0, &mad.MlnxGeneralInfo{HWRevision: 0xa0, DeviceID: 0xcb20, Uptime: 0x0012d687,
		FWMajor: 1, FWMinor: 2, FWSubMinor: 3, FWBuildID: 0x1b, FWMonth: 0x07, FWDay: 0x15, FWYear: 0x2020,
		FWHour: 0x1230, FWPSID: psid("MT_1870110032"), FWIniFileVersion: 7,
		FWExtMajor: 11, FWExtMinor: 2008, FWExtSubMinor: 2102, SWMajor: 1, SWMinor: 5, SWSubMinor: 0})
	f.mlnx[f.hca].Set(0, cpi)
	f.mlnx[f.hca].Set(0, &mad.MlnxGeneralInfo{HWRevision: 0x0, DeviceID: 0x1017, Uptime: 5,
		FWBuildID: 0x12345, FWMonth: 0x12, FWDay: 0x31, FWYear: 0x2019, FWPSID: psid("MT_000000000XYZW0"), // 16 characters, no NUL: printf runs on into the ini version
		FWIniFileVersion: 0x41424300, FWExtMajor: 16, FWExtMinor: 26, FWExtSubMinor: 4012})
	f.mlnx[f.host].Set(0, cpi)
	f.mlnx[f.host].Set(0, &mad.MlnxGeneralInfo{HWRevision: 1, DeviceID: 0x1003, FWExtMajor: 2, FWExtMinor: 42, FWExtSubMinor: 5000})
	f.mlnx[f.host].Set(1, &mad.MlnxCounterGroupInfo{NumCounterGroups: 1, GroupMask: [2]uint32{0xf}})
	f.mlnx[f.is3].Set(0, cpi)
	f.mlnx[f.is3].SetData(mad.AttrMlnxGeneralInfo, 0, mad.Encode(&mad.MlnxGeneralInfoIS3{HWRevision: 0xa1, DeviceID: 0xb924,
		Uptime: 0xdeadbeef, FWMajor: 1, FWMinor: 0, FWSubMinor: 5, FWBuildID: 0x9, FWMonth: 0x02, FWDay: 0x09, FWYear: 0x2008,
		FWPSID: psid("MT_0C20110003"), FWIniFileVersion: 0x8000_0001, SWMajor: 2, SWMinor: 1, SWSubMinor: 0}))
	f.mlnx[f.sw].Set(1, &mad.MlnxCounterGroupInfo{NumCounterGroups: 2, GroupMask: [2]uint32{0x3ff, 0}})
	f.mlnx[f.hca].Set(1, &mad.MlnxCounterGroupInfo{NumCounterGroups: 3, GroupMask: [2]uint32{1, 2}})
	f.mlnx[f.sw].Set(0, &mad.MlnxConfigCounterGroup{})
	f.regs = map[*umadtest.Node]map[uint32]uint32{f.is3: {}, f.sw: {0x1234: 0xabcd}}
	for p, wait := range map[uint32]uint32{1: 0x10, 2: 0, 5: 0xffffffff, 16: 3, 17: 0x44, 20: 0x55, 21: 0x66, 24: 0x77} {
		f.regs[f.is3][0x10013C+p<<12] = wait
	}
}

// configSpace answers ConfigSpaceAccess as a device's register file: a
// Get gives each record asked for its register's value, a Set writes the
// bits of its mask; others go to the node's vendor agent.
func (f *ccvendFake) configSpace(n *umadtest.Node, req *umad.Packet) []*umad.Packet {
	h := mad.Header(req.MAD)
	f.regsMu.Lock()
	defer f.regsMu.Unlock()
	regs := f.regs[n]
	if h.AttrID() != mad.AttrMlnxConfigSpaceAccess || regs == nil {
		return f.mlnx[n].Answer(req)
	}
	var cs mad.MlnxConfigSpaceAccess
	_ = cs.Unmarshal(h[24:])
	count := min(int(h.AttrMod()>>16&0x3f), len(cs.Record))
	for i := range cs.Record[:count] {
		r := &cs.Record[i]
		if h.Method() == mad.MethodSet {
			regs[r.Address] = regs[r.Address]&^r.Mask | r.Data&r.Mask
		}
		r.Data = regs[r.Address]
	}
	return []*umad.Packet{umadtest.Reply(req, 0, mad.Encode(&cs))}
}

// reg reads a register of a node's config space.
func (f *ccvendFake) reg(n *umadtest.Node, addr uint32) uint32 {
	f.regsMu.Lock()
	defer f.regsMu.Unlock()
	return f.regs[n][addr]
}

// runC runs an infiniband-diags tool against the fake, under umad2sim,
// with a timeout (umad2sim never times a MAD out).
func (f *ccvendFake) runC(t *testing.T, tool string, args ...string) simfabric.Result {
	t.Helper()
	simfabric.RequireTools(t, tool)
	simfabric.RequireSim(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errOut strings.Builder
	cmd := exec.CommandContext(ctx, "/usr/sbin/"+tool, args...)
	cmd.Args[0] = tool    // as run from PATH: IBEXIT names argv[0]
	cmd.Dir = t.TempDir() // umad2sim writes its sysfs there
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+simfabric.Umad2Sim, "IBSIM_SOCKNAME="+f.srv.SockName())
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := simfabric.Result{Stdout: out.String(), Stderr: errOut.String(), Code: -1, TimedOut: ctx.Err() != nil}
	if cmd.ProcessState != nil {
		res.Code = cmd.ProcessState.ExitCode()
	} else if err != nil {
		res.Stderr += err.Error()
	}
	return res
}

// run runs ibtool as the tool's symlink against the fake.
func (f *ccvendFake) run(tool string, args ...string) simfabric.Result {
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.srv.SockName()}), append([]string{tool}, args...)...)
	return simfabric.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

// conform compares the C tool and ibtool on one command line; fails says
// the C tool is expected to fail.
func (f *ccvendFake) conform(t *testing.T, fails bool, tool string, args ...string) {
	t.Helper()
	f.conformTail(t, fails, false, tool, args...)
}

// conformTail is conform for a command whose last paragraphs come from
// the last 32 bytes of a MAD (the 14th and 15th events of a switch's
// CongestionLog, the 12th and 13th of a CA's): under umad2sim the C tool
// never gets those bytes (umad2sim copies 224 bytes of a 256-byte MAD
// into libibumad's buffer, whose ib_user_mad header is 32 bytes shorter
// than umad2sim's) and prints what its stack held there. With tail, the
// C tool's output may have paragraphs more than ibtool's at its end;
// everything before them must be the same.
func (f *ccvendFake) conformTail(t *testing.T, fails, tail bool, tool string, args ...string) {
	t.Helper()
	c := f.runC(t, tool, args...)
	ours := f.run(tool, args...)
	if rest, ok := strings.CutPrefix(c.Stdout, ours.Stdout); tail && ok && (rest == "" || strings.HasSuffix(rest, "\n\n")) {
		c.Stdout = ours.Stdout
	}
	simfabric.Compare(cFails(t, fails), tool+" "+strings.Join(args, " "), c, ours, simfabric.DropSimNoise, simfabric.PIDs)
}

func TestIbccqueryConformance(t *testing.T) {
	f := newCCVendFake(t)
	for _, tc := range []struct {
		args        string
		fails, tail bool
	}{
		{args: "ClassPortInfo 2"},
		{args: "cp 3"},
		{args: "CongestionInfo 2"},
		{args: "CI 3"},
		{args: "CongestionKeyInfo 2"},
		{args: "-c 0x1234 CK 3"},
		{args: "CongestionLog 2", tail: true},
		{args: "CL 3", tail: true},
		{args: "CL 4", fails: true}, // unrecognized log type
		{args: "SwitchCongestionSetting 2"},
		{args: "SwitchPortCongestionSetting 2"},
		{args: "SP 2 5"},
		{args: "SP 4 49"},
		{args: "SP 2 9", fails: true}, // beyond the switch's ports
		{args: "SP 3", fails: true},   // not a switch
		{args: "CACongestionSetting 3"},
		{args: "CongestionControlTable 3"},
		{args: "ct 2"},
		{args: "CT 4", fails: true}, // block 2 fails after 128 entries
		{args: "Timestamp 2"},
		{args: "TI 3"},
		{args: "CS 2", fails: true},        // nothing stored: status 0x1C
		{args: "Timestamp 9", fails: true}, // no such LID
		{args: "NoSuchOp 2", fails: true},  // unknown operation
		{args: "-G CI 0x300", fails: true}, // no SA to resolve a GUID
	} {
		t.Run(tc.args, func(t *testing.T) {
			f.conformTail(t, tc.fails, tc.tail, "ibccquery", strings.Fields(tc.args)...)
		})
	}
}

func TestVendstatConformance(t *testing.T) {
	f := newCCVendFake(t)
	for _, tc := range []struct {
		args  string
		fails bool
	}{
		{args: "-N 2"},
		{args: "--N 3"},
		{args: "-N 5"},
		{args: "-w 5"},
		{args: "-N -w 5"},
		{args: "-w 2", fails: true}, // not an InfiniScale III
		{args: "-N 4", fails: true}, // no vendor class
		{args: "-i 2 1"},
		{args: "-i 3 1"},
		{args: "-i 4 1"}, // fails on stderr, exit 0
		{args: "-R 0x1234 2"},
		{args: "-R 1234,ff00 -R 0x10113c 5"},
		{args: "--Read 0x5555 2"},
		{args: "-N 9", fails: true},        // no such LID
		{args: "2", fails: true},           // neither -N nor -w
		{args: "-c 1 2", fails: true},      // malformed
		{args: "-R zz 2", fails: true},     // malformed
		{args: "-G -N 0x200"},              // the SA's path to a port GUID
		{args: "-G -N 0x999", fails: true}, // a GUID the SA does not know
		{args: "-G -N 0xzz", fails: true},  // a malformed GUID
		{args: "-N"},                       // the local port
		{args: "-i"},                       // the local port's port number: 1
	} {
		t.Run(tc.args, func(t *testing.T) {
			f.conform(t, tc.fails, "vendstat", strings.Fields(tc.args)...)
		})
	}
}

// sameSets runs a writing command with the C tool, then with ibtool, and
// checks that both sent the same Sets (attribute, modifier and data, from
// MAD byte 24: the data of vendor range 1, the CC_Key and data of CC).
func (f *ccvendFake) sameSets(t *testing.T, agent *umadtest.Agent, tool string, args ...string) []*umad.Packet {
	t.Helper()
	before := len(agent.Sets())
	if c := f.runC(t, tool, args...); c.Code != 0 {
		t.Fatalf("C tool: %s", c)
	}
	mid := len(agent.Sets())
	if r := f.run(tool, args...); r.Code != 0 {
		t.Fatalf("ibtool: %s", r)
	}
	sets := agent.Sets()
	c, ours := sets[before:mid], sets[mid:]
	if len(c) == 0 || len(c) != len(ours) {
		t.Fatalf("%s %v: the C tool sent %d Sets, ibtool %d", tool, args, len(c), len(ours))
	}
	for i := range c {
		ch, oh := mad.Header(c[i].MAD), mad.Header(ours[i].MAD)
		if ch.AttrID() != oh.AttrID() || ch.AttrMod() != oh.AttrMod() || ch.Class() != oh.Class() ||
			string(ch[:4]) != string(oh[:4]) || string(ch[24:]) != string(oh[24:]) || c[i].Addr.LID != ours[i].Addr.LID {
			t.Errorf("Set %d differs:\nC tool: %x\nibtool: %x", i, c[i].MAD, ours[i].MAD)
		}
	}
	return ours
}

// --cpi is python-rdma's (no C counterpart): the vendor ClassPortInfo,
// alone or before -N.
func TestVendstatCPI(t *testing.T) {
	f := newCCVendFake(t)
	cpi := "# ClassPortInfo: Lid 2\n" + mad.Dotted(&mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, RespTimeValue: 16}, nil)
	if r := f.run("vendstat", "--cpi", "2"); r.Code != 0 || r.Stdout != cpi {
		t.Errorf("--cpi: %s", r)
	}
	n := f.run("vendstat", "-N", "2")
	if r := f.run("vendstat", "--cpi", "-N", "2"); r.Code != 0 || r.Stdout != cpi+n.Stdout {
		t.Errorf("--cpi -N: %s", r)
	}
	if r := f.run("vendstat", "--cpi", "4"); r.Code != cmdutil.ExitFailure || r.Stdout != "vendstat: iberror: failed: classportinfo query\n" {
		t.Errorf("--cpi without the class: %s", r)
	}
}

func TestVendstatWrites(t *testing.T) {
	f := newCCVendFake(t)
	sets := f.sameSets(t, f.mlnx[f.sw], "vendstat", "-c", "2,8", "2", "3")
	if h := mad.Header(sets[0].MAD); h.AttrID() != mad.AttrMlnxConfigCounterGroup || h.AttrMod() != 3 || h[24+15] != 2 || h[24+19] != 8 {
		t.Errorf("ConfigCounterGroup Set: %x", h)
	}
	// The config space is answered by the register file, not the agent.
	f.runC(t, "vendstat", "-W", "1234,5,ff", "2")
	f.run("vendstat", "-W", "1234,f0,f0", "2")
	if got := f.reg(f.sw, 0x1234); got != 0xabf5 {
		t.Errorf("register 0x1234 = %#x after two writes, want 0xabf5", got)
	}

	// -v logs each write with the flag that asked for it.
	r := f.run("vendstat", "-v", "-c", "1,1", "2", "3")
	if r.Code != 0 || !strings.Contains(r.Stderr, "write: Set MlnxConfigCounterGroup (modifier 0x3) at Lid 2, asked by vendstat -c 1,1") {
		t.Errorf("-v: exit %d, stderr %q", r.Code, r.Stderr)
	}

	// Malformed values send nothing.
	n := len(f.mlnx[f.sw].Sets())
	for _, args := range [][]string{{"-c", "1", "2"}, {"-c", "a,b", "2"}, {"-c", "1,2,3", "2"}, {"-W", "1234", "2"},
		{"-W", "1234,xyz", "2"}, {"-W", "1,2,3,4", "2"}, {"-W", "123456789,1", "2"}, {"-R", "", "2"}, {"-c", "1,1", "2", "port"}} {
		r := f.run("vendstat", args...)
		if r.Code != cmdutil.ExitUsage || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "vendstat: ") {
			t.Errorf("vendstat %v: exit %d, stdout %q, stderr %q; want a usage error", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	if len(f.mlnx[f.sw].Sets()) != n || f.reg(f.sw, 0x1234) != 0xabf5 {
		t.Error("a malformed value was sent")
	}
}

// opener is the fake as an in-process transport, which records what is
// sent.
func (f *ccvendFake) opener() *umadtest.Opener {
	return umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: f.fab.Answer, mad.ClassSubnDR: f.fab.Answer, mad.ClassSubnAdm: f.sa.Answer,
		mad.ClassCongest: func(req *umad.Packet) []*umad.Packet {
			if n, _ := f.fab.Dest(req); n != nil {
				return f.cc[n].Answer(req)
			}
			return []*umad.Packet{umadtest.Undelivered(req)}
		},
		mad.ClassVendorMlnx: func(req *umad.Packet) []*umad.Packet {
			if n, _ := f.fab.Dest(req); n != nil {
				return f.configSpace(n, req)
			}
			return []*umad.Packet{umadtest.Undelivered(req)}
		},
	}.Answer, umadtest.WithInfo(f.fab.LocalInfo()))
}

func TestIbccconfigConformance(t *testing.T) {
	f := newCCVendFake(t)
	for _, tc := range []struct {
		args  string
		fails bool
	}{
		{args: "CongestionKeyInfo 2 0x1234 1 100 0"},
		{args: "-c 7 ck 3 0 0 0 1"},
		{args: "SwitchCongestionSetting 2 0x1F 0x1FFFFFFFFF 0x0 0xF 8 0 0:0 1"},
		{args: "SS 2 3 0xf0f0 f 8 255 3 3:16383 65535"},
		{args: "SwitchPortCongestionSetting 2 5 1 0 7 64 1000"},
		{args: "SP 4 31 1 1 15 255 65535"},
		{args: "CACongestionSetting 3 1 0x3 150 1 0 0"},
		{args: "CS 3 0 0x8001 200 2 3 4"},
		{args: "CongestionControlTable 3 3 0 0:0 0:1 1:2 3:16383"},
		{args: "CT 3 0 1 2:100"},
		{args: "CT 3 66 1 0:64 0:65 1:66"},
		// Failures the C tool has too.
		{args: "NoSuchOp 2 1", fails: true},
		{args: "CK 2 1 2 3", fails: true},       // too few values
		{args: "CK 2 x 1 2 3", fails: true},     // not a number
		{args: "CK 2 1 2 3 4", fails: true},     // protect bit
		{args: "CK 2 1 1 65536 4", fails: true}, // lease period
		{args: "CK 2 99999999999999999999 1 2 3", fails: true},
		{args: "SS 2 1 0xg 0 0 0 0 0:0 0", fails: true},
		{args: "SS 2 1 " + strings.Repeat("f", 65) + " 0 0 0 0 0:0 0", fails: true},
		{args: "SS 2 1 0 0 0 0 0 5 0", fails: true}, // no shift:multiplier
		{args: "SP 3 1 1 0 0 0 0", fails: true},     // not a switch
		{args: "SP 2 9 1 0 0 0 0", fails: true},     // no port 9
		{args: "CT 3 3 0 0:0 0:1", fails: true},     // entries and limit disagree
		{args: "CT 3 0 0 1-2", fails: true},         // not shift:multiplier
		{args: "CS 2 1 1 1 1 1 1", fails: true},     // no CA setting there: status
		{args: "Timestamp 2", fails: true},          // not an ibccconfig operation
		{args: "CK 9 1 0 0 0", fails: true},         // no such LID
	} {
		t.Run(tc.args, func(t *testing.T) {
			f.conform(t, tc.fails, "ibccconfig", strings.Fields(tc.args)...)
		})
	}
}

func TestIbccconfigWrites(t *testing.T) {
	f := newCCVendFake(t)
	// The C tool and ibtool send the same Sets (and SP the same Get).
	for _, tc := range []struct {
		node *umadtest.Node
		args string
	}{
		{f.sw, "-c 0x1122334455667788 CongestionKeyInfo 2 0x1234 1 100 0"},
		{f.sw, "SwitchCongestionSetting 2 0x1F 0x1FFFFFFFFF 0x0 0xF 8 0 1:5 1"},
		{f.sw, "SwitchPortCongestionSetting 2 5 1 0 7 64 1000"},
		{f.hca, "CACongestionSetting 3 1 0x3 150 1 0 0"},
		{f.hca, "CongestionControlTable 3 66 1 0:64 0:65 1:66"},
	} {
		f.sameSets(t, f.cc[tc.node], "ibccconfig", strings.Fields(tc.args)...)
	}
	// On sw: CK, SS, SP Sets, each from the C tool and ibtool.
	sent := f.cc[f.sw].Sets()
	if h := mad.Header(sent[1].MAD); h.Class() != mad.ClassCongest || h[2] != 2 || binary.BigEndian.Uint64(h[24:]) != 0x1122334455667788 {
		t.Errorf("CongestionKeyInfo Set (class version 2, -c's CC_Key): %x", h[:72])
	}
	if h := mad.Header(sent[3].MAD); binary.BigEndian.Uint64(h[24:]) != 0 || binary.BigEndian.Uint32(h[64:]) != 0x1f {
		t.Errorf("SwitchCongestionSetting Set: %x", h[:72])
	}

	// SwitchPortCongestionSetting: the other ports of the block stay as
	// they were; port 40 is in block 1 (IBA's 32 ports per block), read
	// and written there.
	var block mad.SwitchPortCongestionSetting
	_ = block.Unmarshal(sent[5].MAD[64:])
	if block.Element[5] != (mad.SwitchPortCongestionSettingElement{Valid: 1, Threshold: 7, PacketSize: 64, MarkingRate: 1000}) ||
		block.Element[4].MarkingRate != 104 || block.Element[6].MarkingRate != 106 {
		t.Errorf("SP block 0 written: %+v", block.Element[3:8])
	}
	r := f.run("ibccconfig", "-v", "SP", "4", "40", "1", "0", "2", "3", "4")
	sets := f.cc[f.big].Sets()
	if r.Code != 0 || len(sets) != 1 || mad.Header(sets[0].MAD).AttrMod() != 1 ||
		!strings.Contains(r.Stderr, "write: Set SwitchPortCongestionSetting (modifier 0x1) at Lid 4, asked by ibccconfig SP") {
		t.Fatalf("SP port 40: %s, %d sets", r, len(sets))
	}
	_ = block.Unmarshal(sets[0].MAD[64:])
	if block.Element[8].MarkingRate != 4 || block.Element[1].MarkingRate != 7777 {
		t.Errorf("SP block 1 written: %+v", block.Element[:9])
	}
	if want := "ibccconfig: Lid 4: SwitchPortCongestionSetting (modifier 1) set; the reply has:\n" +
		"Port:............................40\nValid:...........................1\nControl_Type:....................0\n" +
		"Threshold:.......................0x02\nPacket_Size:.....................3\nCong_Parm_Marking_Rate:..........4\n"; !strings.HasSuffix(r.Stderr, want) {
		t.Errorf("-v: stderr %q, want it to end with %q", r.Stderr, want)
	}
	r = f.run("ibccconfig", "-v", "CT", "3", "0", "1", "1:2", "3:4")
	if want := "CCTI_Limit:......................0\nEntry:...........................64\nCCT_Shift:.......................1\n" +
		"CCT_Multiplier:..................2\nEntry:...........................65\nCCT_Shift:.......................3\n" +
		"CCT_Multiplier:..................4\n"; r.Code != 0 || !strings.HasSuffix(r.Stderr, want) {
		t.Errorf("-v CT: %s", r)
	}

	// JSON says what was sent and what the reply has.
	r = f.run("ibccconfig", "--json", "CK", "3", "5", "0", "1", "2")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"attribute": "CongestionKeyInfo"`) || !strings.Contains(r.Stdout, `"cc_key_lease_period": 1`) {
		t.Errorf("--json: %s", r)
	}
}

// A malformed value, an unknown operation or a missing value sends no MAD
// at all: the values are checked before the port is opened.
func TestIbccconfigBadInputSendsNothing(t *testing.T) {
	f := newCCVendFake(t)
	for _, args := range []string{
		"CK 2 1 2 3", "CK 2 1 2 3 4", "CK 2 -1 0 0 0", "CK 2 0x 0 0 0", "CK 2 1_0 0 0 0", "CK 2 0b1 0 0 0",
		"SS 2 0x100000000 0 0 0 0 0 0:0 0", "SS 2 1 0 0 16 0 0 0:0 0", "SS 2 1 0 0 0 256 0 0:0 0",
		"SS 2 1 0 0 0 0 0 4:0 0", "SS 2 1 0 0 0 0 0 0:16384 0", "SS 2 1 '' 0 0 0 0 0:0 0",
		"SP 2 5 2 0 0 0 0", "SP 2 5 1 2 0 0 0", "SP 2 256 1 0 0 0 0", "SP 2 5 1 0 16 0 0",
		"CS 3 0x10000 0 0 0 0 0", "CS 3 0 0 0 256 0 0",
		"CT 3 1", "CT 3 1 0 1:2 3:4 5:6", "CT 3 0 0 4:1", "CT 3 0 0 a:1",
		"Nope 2 1", "SP 2",
	} {
		tr := f.opener()
		r := runWith(tr, append([]string{"ibccconfig"}, strings.Fields(strings.ReplaceAll(args, "''", " "))...)...)
		if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "ibccconfig") {
			t.Errorf("ibccconfig %s: exit %d, stdout %q, stderr %q; want a failure", args, r.code, r.stdout, r.stderr)
		}
		if sent := tr.Requests(); len(sent) != 0 {
			t.Errorf("ibccconfig %s sent %d MADs", args, len(sent))
		}
		// As "ibtool ibccconfig": one line naming the value, exit 2.
		r = runWith(f.opener(), append([]string{"ibtool", "ibccconfig"}, strings.Fields(args)...)...)
		if r.code != cmdutil.ExitUsage || r.stdout != "" {
			t.Errorf("ibtool ibccconfig %s: exit %d, stdout %q, stderr %q; want a usage error", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runWith(f.opener(), "ibtool", "ibccconfig", "SS", "2", "1", "0", "0", "16", "0", "0", "0:0", "0")
	if want := `ibccconfig: operation SS: threshold "16": value out of range (4 bits)`; !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// ccvendVocab is a TestJSONVocabulary run of a command on the fake.
func ccvendVocab(tool string, args ...string) vocabRun {
	return vocabRun{args: strings.Join(args, " "), run: func(t *testing.T) []byte {
		f := newCCVendFake(t)
		r := runWith(f.opener(), append([]string{"ibtool", tool, "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return vocabDoc(t, r.stdout)
	}}
}

// SwitchPortCongestionSetting of every port of a 50-port switch reads two
// blocks of 48. Ports 40..47 come from the last 32 bytes of block 0's
// MAD, which the C tool does not get under umad2sim (see conformTail):
// they are left out of the comparison, and checked in ibtool's output.
func TestIbccquerySwitchPortBlocks(t *testing.T) {
	f := newCCVendFake(t)
	args := []string{"SP", "4"}
	c, ours := f.runC(t, "ibccquery", args...), f.run("ibccquery", args...)
	tail := regexp.MustCompile(`(?m)^Port:\.+4[0-7]\n(.+\n)+\n`)
	dropTail := func(s string) string { return tail.ReplaceAllString(s, "") }
	simfabric.Compare(t, "ibccquery SP 4", c, ours, simfabric.DropSimNoise, dropTail)
	if n := strings.Count(ours.Stdout, "Port:..."); n != 51 {
		t.Errorf("%d ports printed, want 0..50", n)
	}
	for _, want := range []string{
		"Port:............................45\nValid:...........................1\nControl_Type:....................1\n" +
			"Threshold:.......................0x0d\nPacket_Size:.....................45\nCong_Parm_Marking_Rate:..........145\n\n",
		"Port:............................49\nValid:...........................1\nControl_Type:....................0\n" +
			"Threshold:.......................0x01\nPacket_Size:.....................1\nCong_Parm_Marking_Rate:..........7777\n\n",
	} {
		if !strings.Contains(ours.Stdout, want) {
			t.Errorf("ibtool's output lacks\n%s", want)
		}
	}
}
