package umad

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// nodeInfoDR0 is a 0-hop directed-route SubnGet(NodeInfo): answered by the
// node the client is attached to.
func nodeInfoDR0(tid uint32) []byte {
	m := make([]byte, MADSize)
	m[0], m[1], m[2], m[3] = 1, 0x81, 1, 0x01
	binary.BigEndian.PutUint64(m[8:], uint64(tid))
	binary.BigEndian.PutUint16(m[16:], 0x0011)
	binary.BigEndian.PutUint32(m[32:], 0xFFFFFFFF) // DrSLID, DrDLID
	return m
}

func exchange(t *testing.T, p Port, pkt *Packet) *Packet {
	t.Helper()
	if err := p.Send(pkt); err != nil {
		t.Fatal(err)
	}
	r, err := p.Recv(time.Now().Add(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSimAttachAndDescribe(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	for _, tc := range []struct {
		host     string
		nodeType int
		port     int
		guid     uint64
		lid      uint16
	}{
		{"", 2, 0, 0x200000, 1},         // the first node: Switch1's port 0
		{"Hca1", 1, 1, 0x100001, 2},     // a CA's first port
		{"sw2 desc", 2, 0, 0x200001, 7}, // by node description
	} {
		o := NewSim(SimConfig{SockName: f.SockName(), Host: tc.host})
		cas, err := o.CAs()
		if err != nil {
			t.Fatal(err)
		}
		p := cas[0].Ports[0]
		if cas[0].Name != "ibsim0" || cas[0].NodeType != tc.nodeType || p.Num != tc.port || p.PortGUID != tc.guid ||
			p.LID != tc.lid || p.State != 4 || p.SMLID != 1 || p.Rate != "10 Gb/sec (4X)" {
			t.Errorf("host %q: %+v", tc.host, cas[0])
		}
	}
}

func TestSimMADsAndUndeliverable(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	p, err := NewSim(SimConfig{SockName: f.SockName(), Host: "Hca1"}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := exchange(t, p, &Packet{Addr: Address{LID: PermissiveLID}, MAD: nodeInfoDR0(7)})
	if r.Status != 0 || r.MAD[3] != 0x81 || binary.BigEndian.Uint32(r.MAD[12:]) != 7 ||
		binary.BigEndian.Uint64(r.MAD[64+12:]) != 0x100000 {
		t.Fatalf("DR NodeInfo reply: status %d, % x", r.Status, r.MAD[:24])
	}
	// A LID nobody has comes straight back as undeliverable.
	lidReq := nodeInfoDR0(8)
	lidReq[1] = 0x01
	r = exchange(t, p, &Packet{Addr: Address{LID: 99}, MAD: lidReq})
	if r.Status != StatusTimeout || r.MAD[3] != 0x01 {
		t.Fatalf("LID 99: status %d method 0x%x", r.Status, r.MAD[3])
	}
	if _, err := p.Recv(time.Now().Add(50 * time.Millisecond)); err != ErrTimeout {
		t.Fatalf("Recv on a quiet port: %v, want ErrTimeout", err)
	}
}

// TestSimSlotsAreReleased opens more ports, one after the other, than ibsim
// has client slots: it only works if Close disconnects.
func TestSimSlotsAreReleased(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	o := NewSim(SimConfig{SockName: f.SockName()})
	for i := 0; i < 2*simMaxClients; i++ {
		p, err := o.Open("", -1)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
		p.Close() // twice is harmless
	}
}

func TestSimErrors(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	if _, err := NewSim(SimConfig{SockName: f.SockName(), Host: "NoSuchNode"}).Open("", -1); err == nil {
		t.Fatal("an unknown SIM_HOST must fail")
	}
	if _, err := NewSim(SimConfig{SockName: f.SockName()}).Open("mlx5_0", -1); err == nil {
		t.Fatal("a CA other than ibsim0 must fail")
	}
	if _, err := NewSim(SimConfig{SockName: f.SockName(), Host: "Hca1"}).Open("", 2); err == nil {
		t.Fatal("a port other than the attached one must fail")
	}
	if SimReachable(SimConfig{SockName: "ibtool-nobody-listens"}) {
		t.Fatal("no simulator there")
	}
	if _, err := NewSim(SimConfig{SockName: "ibtool-nobody-listens"}).Open("", -1); err == nil {
		t.Fatal("connecting to no simulator must fail")
	}
}

// TestSimUDP runs ibsim in remote mode and talks to it over UDP.
func TestSimUDP(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{
		Topology: simfabric.TopologyPath("tiny.net"), NoSM: true, Remote: true,
	})
	base := f.ServerPort()

	o := NewSim(SimConfig{ServerName: "127.0.0.1", ServerPort: base, Host: "Hca3"})
	p, err := o.Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := exchange(t, p, &Packet{Addr: Address{LID: PermissiveLID}, MAD: nodeInfoDR0(9)})
	if r.Status != 0 || binary.BigEndian.Uint64(r.MAD[64+12:]) != 0x100006 {
		t.Fatalf("UDP DR NodeInfo: status %d, node GUID %#x", r.Status, binary.BigEndian.Uint64(r.MAD[64+12:]))
	}
	info, err := p.Info()
	if err != nil || info.Num != 1 || info.PortGUID != 0x100007 {
		t.Fatalf("UDP Info: %+v, %v", info, err)
	}
	// The UDP packet socket is connected too: batches go with sendmmsg,
	// and a window far beyond a Unix datagram queue comes back whole.
	if got := p.(InFlightLimiter).MaxInFlight(); got != simMaxInFlightUDP {
		t.Fatalf("UDP MaxInFlight = %d, want %d", got, simMaxInFlightUDP)
	}
	var pkts []*Packet
	for i := range simMaxInFlightUDP {
		pkts = append(pkts, &Packet{Addr: Address{LID: PermissiveLID}, MAD: nodeInfoDR0(uint32(20 + i))})
	}
	if n, err := p.(BatchPort).SendBatch(pkts); n != len(pkts) || err != nil {
		t.Fatalf("UDP SendBatch = %d, %v", n, err)
	}
	into := make([]*Packet, 16)
	for got := 0; got < len(pkts); {
		n, err := p.(BatchPort).RecvBatch(time.Now().Add(2*time.Second), into)
		if err != nil {
			t.Fatalf("UDP RecvBatch after %d replies: %v", got, err)
		}
		got += n
	}
}

func TestChooseTransport(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	root := t.TempDir()
	for _, tc := range []struct {
		vars map[string]string
		want string
		err  bool
	}{
		{map[string]string{"IBTOOL_TRANSPORT": "kernel"}, "kernel", false},
		{map[string]string{"IBTOOL_TRANSPORT": "ibsim"}, "ibsim", false},
		{map[string]string{"IBTOOL_TRANSPORT": "bogus"}, "", true},
		{map[string]string{"IBSIM_SOCKNAME": "x"}, "ibsim", false},
		{map[string]string{"SIM_HOST": "Hca1"}, "ibsim", false},
		{map[string]string{"IBSIM_SOCKNAME": "ibtool-nobody-listens", "IBTOOL_TRANSPORT": "kernel"}, "kernel", false},
	} {
		o, err := choose(env(tc.vars), root)
		if tc.err {
			if err == nil {
				t.Errorf("%v: want an error", tc.vars)
			}
			continue
		}
		if err != nil || o.Name() != tc.want {
			t.Errorf("%v: %v, %v; want %s", tc.vars, o, err, tc.want)
		}
	}
	// Nothing set, no devices, no simulator at the default socket name:
	// one clear error naming both ways out.
	if !SimReachable(SimConfig{SockName: "sim"}) {
		_, err := choose(env(map[string]string{}), root)
		if err == nil || !strings.Contains(err.Error(), "is ib_umad loaded?") || !strings.Contains(err.Error(), "start ibsim") {
			t.Errorf("neither a device nor a simulator: %v", err)
		}
	}
}

// The packet socket is connected to ibsim's, so more MADs than a Unix
// datagram queue holds (10) can be outstanding: a batch of 40 requests
// sent at once comes back whole, in batches.
func TestSimBatchBeyondTheDatagramQueue(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	port, err := NewSim(SimConfig{SockName: f.SockName()}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	bp := port.(BatchPort)
	const n = 40
	if got := port.(InFlightLimiter).MaxInFlight(); got < n {
		t.Fatalf("MaxInFlight = %d on a connected socket, want at least %d", got, n)
	}
	var pkts []*Packet
	for i := range n {
		pkts = append(pkts, &Packet{Addr: Address{LID: PermissiveLID}, MAD: nodeInfoDR0(uint32(100 + i))})
	}
	if sent, err := bp.SendBatch(pkts); err != nil || sent != n {
		t.Fatalf("SendBatch = %d, %v", sent, err)
	}
	seen := map[uint32]bool{}
	into := make([]*Packet, 16)
	batches := 0
	for len(seen) < n {
		got, err := bp.RecvBatch(time.Now().Add(2*time.Second), into)
		if err != nil {
			t.Fatalf("after %d replies: %v", len(seen), err)
		}
		batches++
		for _, r := range into[:got] {
			if r.Status != 0 || r.MAD[3] != 0x81 {
				t.Fatalf("not a GetResp: status %d method %#x", r.Status, r.MAD[3])
			}
			seen[binary.BigEndian.Uint32(r.MAD[12:])] = true
		}
	}
	for i := range n {
		if !seen[uint32(100+i)] {
			t.Errorf("no reply to TID %d", 100+i)
		}
	}
	if _, err := bp.RecvBatch(time.Now().Add(50*time.Millisecond), into); err != ErrTimeout {
		t.Errorf("RecvBatch with nothing pending: %v, want ErrTimeout", err)
	}
	port.Close()
	if _, err := bp.RecvBatch(time.Now().Add(time.Second), into); err != ErrClosed {
		t.Errorf("RecvBatch after Close: %v, want ErrClosed", err)
	}
	if _, err := bp.SendBatch(pkts[:1]); err == nil {
		t.Errorf("SendBatch after Close succeeded")
	}
}
