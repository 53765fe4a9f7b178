package rdmabw

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/verbs"
	"github.com/ibtool/ibtool/internal/verbs/dlopen"
)

func TestMain(m *testing.M) {
	verbs.UseC(dlopen.C{})
	os.Exit(m.Run())
}

func sampleHello() hello {
	gid, _ := verbs.ParseGID("::ffff:10.99.0.2")
	return hello{Size: 65536, Iters: 1000, NumSGE: 4, Seed: 0xdeadbeef, Ep: Endpoint{
		LID: 0x12, QPN: 0x11, PSN: 0xabcdef, GID: gid, MTU: verbs.MTU1024, RKey: 0x1234,
		Addr: 0x7f0000001000, Len: 65536,
	}}
}

func TestHelloRoundTrip(t *testing.T) {
	h := sampleHello()
	var buf bytes.Buffer
	if err := writeFrame(&buf, msgHello, h.marshal()); err != nil {
		t.Fatal(err)
	}
	wire := buf.Bytes()
	// Header: magic, version 1, type 'H', 72-byte payload; then the
	// payload starts with the size and iteration count, big-endian.
	wantHead := []byte("IBBW\x01H\x00\x48\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x03\xe8")
	if !bytes.HasPrefix(wire, wantHead) || len(wire) != headerLen+helloLen {
		t.Fatalf("wire = % x", wire)
	}
	if !bytes.HasSuffix(wire, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 2}) {
		t.Fatalf("GID not last: % x", wire)
	}
	payload, err := readFrame(&buf, msgHello)
	if err != nil {
		t.Fatal(err)
	}
	var got hello
	if err := got.unmarshal(payload); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip: got %+v, want %+v", got, h)
	}
}

func TestHelloRejects(t *testing.T) {
	h := sampleHello()
	b := h.marshal()
	var got hello
	if err := got.unmarshal(b[:len(b)-1]); err == nil {
		t.Error("short hello accepted")
	}
	bad := append([]byte(nil), b...)
	bad[26] = 9 // MTU code
	if err := got.unmarshal(bad); err == nil || !strings.Contains(err.Error(), "MTU") {
		t.Errorf("bad MTU: %v", err)
	}
	h.Ep.QPN = 0
	if err := got.unmarshal(h.marshal()); err == nil {
		t.Error("QPN 0 accepted")
	}
}

func TestDoneAndVerdict(t *testing.T) {
	for _, d := range []done{
		{OK: true, Completed: 1000, Nanos: 1700000000},
		{Completed: 12, Nanos: 5, Message: "work request 12 completed with transport retry counter exceeded"},
	} {
		var got done
		if err := got.unmarshal(d.marshal()); err != nil || got != d {
			t.Errorf("done round trip: %+v, %v; want %+v", got, err, d)
		}
	}
	long := done{Message: strings.Repeat("x", 5000)}
	var got done
	if err := got.unmarshal(long.marshal()); err != nil || len(got.Message) >= maxPayload {
		t.Errorf("long message: %d bytes, %v", len(got.Message), err)
	}
	if err := got.unmarshal([]byte{2, 0}); err == nil {
		t.Error("malformed done accepted")
	}
	v := verdict{OK: true, Checked: 65536}
	var gv verdict
	if err := gv.unmarshal(v.marshal()); err != nil || gv != v {
		t.Errorf("verdict round trip: %+v, %v", gv, err)
	}
	if err := gv.unmarshal([]byte{1}); err == nil {
		t.Error("short verdict accepted")
	}
}

func TestReadFrameErrors(t *testing.T) {
	frame := func(typ byte, payload []byte) *bytes.Buffer {
		var b bytes.Buffer
		writeFrame(&b, typ, payload)
		return &b
	}
	for _, tc := range []struct {
		name string
		in   *bytes.Buffer
		want string
	}{
		{"empty", &bytes.Buffer{}, "peer closed the connection"},
		{"not ibtool", bytes.NewBufferString("GET / HTTP/1.0\r\n"), "not an ibtool rdma_bw"},
		{"version", bytes.NewBufferString("IBBW\x02H\x00\x00"), "protocol version 2"},
		{"too long", bytes.NewBufferString("IBBW\x01H\xff\xff"), "too long"},
		{"short", bytes.NewBufferString("IBBW\x01H\x00\x10abc"), "short message"},
		{"wrong type", frame(msgVerdict, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}), `expected message 'H', got 'V'`},
		{"peer failed", frame(msgDone, (&done{Message: "mlx5_0 port 1 is PORT_DOWN, not active"}).marshal()),
			"peer failed: mlx5_0 port 1 is PORT_DOWN, not active"},
	} {
		_, err := readFrame(tc.in, msgHello)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := writeFrame(&bytes.Buffer{}, msgDone, make([]byte, maxPayload+1)); err == nil {
		t.Error("oversized frame written")
	}
}

func TestPattern(t *testing.T) {
	a := make([]byte, 4096)
	pattern(a, 7, false)
	if !pattern(a, 7, true) {
		t.Fatal("pattern does not check against itself")
	}
	if pattern(a, 8, true) {
		t.Fatal("another seed matches")
	}
	a[4000] ^= 1
	if pattern(a, 7, true) {
		t.Fatal("a flipped bit went unnoticed")
	}
	if bytes.Count(a, []byte{0}) > 100 {
		t.Fatal("pattern is mostly zeros")
	}
}

func TestSplitLengths(t *testing.T) {
	for _, tc := range []struct {
		size, n int
		want    []int
	}{
		{65536, 1, []int{65536}},
		{65536, 4, []int{16384, 16384, 16384, 16384}},
		{10, 3, []int{4, 3, 3}},
		{3, 3, []int{1, 1, 1}},
	} {
		if got := splitLengths(tc.size, tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitLengths(%d, %d) = %v, want %v", tc.size, tc.n, got, tc.want)
		}
	}
}

func TestSetRate(t *testing.T) {
	r := &Result{Size: 65536}
	r.setRate(1000, 2*time.Second)
	if r.Bytes != 65536000 || r.Seconds != 2 || r.BWAverage != 31.25 || r.MsgRate != 0.0005 || r.BytesPerS != 32768000 {
		t.Fatalf("%+v", r)
	}
	r.setRate(0, 0)
	if r.BWAverage != 0 || r.Bytes != 0 || r.MsgRate != 0 {
		t.Fatalf("%+v", r)
	}
}

func TestConfigNormalize(t *testing.T) {
	c := Config{GIDIndex: -1}
	if err := c.normalize(); err != nil {
		t.Fatal(err)
	}
	if c.Port != 1 || c.Size != DefaultSize || c.Iters != DefaultIters || c.TxDepth != DefaultTxDepth ||
		c.NumSGE != 1 || c.TCPPort != DefaultTCPPort || c.Stall != 30*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	for _, bad := range []Config{
		{Size: -1}, {Iters: -5}, {TxDepth: -1}, {Size: 2, NumSGE: 3}, {TCPPort: 70000}, {GIDIndex: -2}, {Port: 300},
	} {
		if err := bad.normalize(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Without a usable device both sides fail before any traffic: the client
// when it opens the device, the server after the client said hello.
func TestRunWithoutDevices(t *testing.T) {
	if err := verbs.Load(); err == nil {
		if devs, _ := verbs.Devices(); len(devs) > 0 {
			t.Skip("this host has RDMA devices")
		}
	}
	_, err := Run(context.Background(), Config{Server: "127.0.0.1", TCPPort: 1, GIDIndex: -1})
	if !errors.Is(err, verbs.ErrNoDevice) && !errors.Is(err, verbs.ErrUnavailable) {
		t.Fatalf("client: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srvErr := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{Listen: "127.0.0.1", TCPPort: port, GIDIndex: -1})
		srvErr <- err
	}()
	if errors.Is(verbs.Load(), verbs.ErrUnavailable) {
		if err := <-srvErr; !errors.Is(err, verbs.ErrUnavailable) {
			t.Fatalf("server: %v", err)
		}
		return
	}
	conn, err := dialRetry(context.Background(), net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := sampleHello()
	if err := writeFrame(conn, msgHello, h.marshal()); err != nil {
		t.Fatal(err)
	}
	// The server tells the client why it gives up.
	if _, err := readFrame(conn, msgHello); err == nil || !strings.Contains(err.Error(), "peer failed: no such RDMA device") {
		t.Fatalf("client saw %v", err)
	}
	if err := <-srvErr; !errors.Is(err, verbs.ErrNoDevice) {
		t.Fatalf("server: %v", err)
	}
}
