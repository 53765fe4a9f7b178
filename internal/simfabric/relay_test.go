package simfabric

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/umad"
)

// One remote fabric and relays of different delays in front of it: the
// C tools and a Go client both reach ibsim through them, every MAD takes
// the latency each way, and one agent answers one request at a time.
func TestRelay(t *testing.T) {
	RequireTools(t, "smpquery")
	f := StartOptsT(t, Options{Topology: "tiny.net", Remote: true})
	ctx := context.Background()
	if f.ServerPort() == 0 {
		t.Fatal("remote fabric without a server port")
	}
	if r := f.RunC(ctx, "", "smpquery", "-D", "nodeinfo", "0"); r.Code != 0 || !strings.Contains(r.Stdout, "NodeType:........................Switch") {
		t.Fatalf("smpquery straight to the remote ibsim: %s", r)
	}

	t.Run("latency", func(t *testing.T) {
		const latency = 20 * time.Millisecond
		relay := startRelay(t, f, RelayOptions{Latency: latency})
		if r := relay.RunC(ctx, "Hca1", "smpquery", "-D", "nodeinfo", "0,1,8"); r.Code != 0 || !strings.Contains(r.Stdout, "NodeType:........................Switch") {
			t.Fatalf("smpquery through the relay: %s", r)
		}
		port := openThrough(t, relay, "Hca1")
		relay.ResetStats()
		start := time.Now()
		replies := exchange(t, port, [][]byte{{1}})
		rtt := time.Since(start)
		if rtt < 2*latency || rtt > 2*latency+time.Second {
			t.Errorf("round trip %v through a relay of %v each way", rtt, latency)
		}
		if replies[0][2] != 2 { // NodeInfo.NodeType: a switch
			t.Errorf("DR NodeInfo at 0,1: node type %d, want 2 (Switch1)", replies[0][2])
		}
		if s := relay.Stats(); s.Frames != 2 || s.MeanLate < 0 || s.MaxLate < s.MeanLate {
			t.Errorf("stats after one exchange: %+v", s)
		}
	})

	t.Run("service", func(t *testing.T) {
		const service = 30 * time.Millisecond
		relay := startRelay(t, f, RelayOptions{Service: service})
		port := openThrough(t, relay, "Hca1")
		// Four requests for one switch wait for each other.
		start := time.Now()
		exchange(t, port, [][]byte{{1}, {1}, {1}, {1}})
		if took := time.Since(start); took < 4*service {
			t.Errorf("4 requests to one SMA took %v, want at least %v", took, 4*service)
		}
		// Four different nodes answer at the same time.
		start = time.Now()
		exchange(t, port, [][]byte{{}, {1}, {1, 4}, {1, 8}})
		if took := time.Since(start); took < service || took >= 3*service {
			t.Errorf("requests to 4 SMAs took %v, want about %v", took, service)
		}
	})

	// Many packets at once go in batches, in order, none lost.
	t.Run("batches", func(t *testing.T) {
		const latency = 5 * time.Millisecond
		relay := startRelay(t, f, RelayOptions{Latency: latency})
		port := openThrough(t, relay, "Hca1")
		relay.ResetStats()
		paths := make([][]byte, 150)
		for i := range paths {
			paths[i] = [][]byte{{}, {1}, {1, 4}, {1, 8}}[i%4]
		}
		start := time.Now()
		replies := exchange(t, port, paths)
		if took := time.Since(start); took < 2*latency {
			t.Errorf("150 round trips at once took %v, less than one round trip (%v)", took, 2*latency)
		}
		for i, r := range replies {
			if want := []byte{1, 2, 1, 2}[i%4]; r[2] != want { // NodeType: CA 1, switch 2
				t.Fatalf("reply %d: node type %d, want %d", i, r[2], want)
			}
		}
		if s := relay.Stats(); s.Frames != 300 || s.CPU < 0 {
			t.Errorf("stats after 150 exchanges: %+v", s)
		}
	})

	// A client that leaves with requests at ibsim: ibsim stops reading the
	// slot at DISCONNECT, and what is left in it went, before the relay
	// held DISCONNECT back, to the next client of the slot.
	t.Run("departed client", func(t *testing.T) {
		const latency = 2 * time.Millisecond
		relay := startRelay(t, f, RelayOptions{Latency: latency})
		for try := range 5 {
			leaver, err := umad.NewSim(umad.SimConfig{ServerName: "127.0.0.1", ServerPort: relay.Port(), Host: "Hca1"}).Open("", -1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				if err := leaver.Send(&umad.Packet{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: drNodeInfo(uint32(1000+i), []byte{1})}); err != nil {
					t.Fatal(err)
				}
			}
			// Leave when the first requests have reached ibsim.
			time.Sleep(latency + time.Duration(try)*200*time.Microsecond)
			if err := leaver.Close(); err != nil {
				t.Fatalf("try %d: leaving: %v", try, err)
			}
			next := openThrough(t, relay, "Hca1")
			exchange(t, next, [][]byte{{1}})
			// Nothing else comes.
			if pkt, err := next.Recv(time.Now().Add(20 * latency)); err == nil {
				t.Fatalf("try %d: the next client got a reply it did not ask for (TID %d)", try, binary.BigEndian.Uint32(pkt.MAD[12:]))
			}
			next.Close()
		}
	})
}

func startRelay(t *testing.T, f *Fabric, opts RelayOptions) *Relay {
	t.Helper()
	relay, err := StartRelay(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := relay.Close(); err != nil {
			t.Error(err)
		}
	})
	return relay
}

func openThrough(t *testing.T, relay *Relay, host string) umad.Port {
	t.Helper()
	port, err := umad.NewSim(umad.SimConfig{ServerName: "127.0.0.1", ServerPort: relay.Port(), Host: host}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { port.Close() })
	return port
}

// exchange sends a directed-route NodeInfo Get along each path at once and
// returns the replies' NodeInfo attributes, in the order sent.
func exchange(t *testing.T, port umad.Port, paths [][]byte) [][]byte {
	t.Helper()
	for i, path := range paths {
		if err := port.Send(&umad.Packet{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: drNodeInfo(uint32(i+1), path)}); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][]byte, len(paths))
	for range paths {
		pkt, err := port.Recv(time.Now().Add(10 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		tid := binary.BigEndian.Uint32(pkt.MAD[12:])
		if pkt.Status != 0 || tid < 1 || int(tid) > len(paths) {
			t.Fatalf("unexpected reply: status %d, TID %d", pkt.Status, tid)
		}
		got[tid-1] = pkt.MAD[64:128]
	}
	return got
}

// drNodeInfo is a directed-route SubnGet(NodeInfo) along path (IBA 14.2.1.2:
// the initial path starts at byte 129, one port per hop).
func drNodeInfo(tid uint32, path []byte) []byte {
	m := make([]byte, umad.MADSize)
	m[0], m[1], m[2], m[3] = 1, 0x81, 1, 0x01 // base version, class, class version, Get
	m[7] = byte(len(path))                    // hop count
	binary.BigEndian.PutUint32(m[12:], tid)
	binary.BigEndian.PutUint16(m[16:], 0x0011) // NodeInfo
	binary.BigEndian.PutUint16(m[32:], 0xFFFF) // DrSLID
	binary.BigEndian.PutUint16(m[34:], 0xFFFF) // DrDLID
	copy(m[129:], path)
	return m
}

// Close leaves the relay's OS thread alive: a goroutine that ends locked
// to its thread ends the thread, and every child started from that
// thread with Pdeathsig dies with it. ibsim and OpenSM are such children,
// and the relay's goroutine may land on the thread that started them: a
// bench that closed one relay and started the next found ibsim killed and
// the C tools waiting forever for their CONNECT.
func TestRelayCloseKeepsThread(t *testing.T) {
	for range 3 {
		relay, err := StartRelay(&Fabric{port: 1}, RelayOptions{}) // no ibsim needed
		if err != nil {
			t.Fatal(err)
		}
		var tid int64
		for tid == 0 {
			time.Sleep(time.Millisecond)
			tid = relay.tid.Load()
		}
		if err := relay.Close(); err != nil {
			t.Fatal(err)
		}
		task := fmt.Sprintf("/proc/self/task/%d", tid)
		for range 30 {
			time.Sleep(10 * time.Millisecond)
			if _, err := os.Stat(task); err != nil {
				t.Fatalf("the relay's thread %d ended with Close: %v", tid, err)
			}
		}
	}
}

// The FIFO keeps arrival order across growth and wrap-around.
func TestRelayFIFO(t *testing.T) {
	var q relayFIFO
	next, want := 0, 0
	for round := range 50 {
		for range round % 7 * 20 {
			q.add().seq = uint64(next)
			next++
		}
		for range round % 5 * 25 {
			p := q.head()
			if p == nil {
				break
			}
			if p.seq != uint64(want) {
				t.Fatalf("got packet %d, want %d", p.seq, want)
			}
			q.pop()
			want++
		}
	}
	for p := q.head(); p != nil; p = q.head() {
		if p.seq != uint64(want) {
			t.Fatalf("got packet %d, want %d", p.seq, want)
		}
		q.pop()
		want++
	}
	if want != next {
		t.Fatalf("%d packets out of %d", want, next)
	}
}
