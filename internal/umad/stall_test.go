package umad

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

func TestMain(m *testing.M) {
	LingerMain() // this test binary can serve as the CONNECT helper
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pause runs the console's "Wait <sec>", which stops ibsim serving
// anything for that long, and returns a channel closed when it is over.
func pause(t *testing.T, f *simfabric.Fabric, sec int) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Console("Wait " + string(rune('0'+sec)))
	}()
	time.Sleep(200 * time.Millisecond) // let ibsim take the command
	return done
}

var clientRE = regexp.MustCompile(`(?m)^Client \d+: pid (\d+) `)

// attachedPids lists the client ids in ibsim's client table.
func attachedPids(t *testing.T, f *simfabric.Fabric) []string {
	t.Helper()
	out, err := f.Console("Attached")
	if err != nil {
		t.Fatalf("ibsim gone? %v", err)
	}
	var ids []string
	for _, m := range clientRE.FindAllStringSubmatch(out, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// A CONNECT that ibsim answers late is waited for, as the C clients do,
// with one line saying so after 2 s.
func TestSimConnectWaitsForAPausedSimulator(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	before := len(attachedPids(t, f))
	resumed := pause(t, f, 3)
	var progress syncBuffer
	start := time.Now()
	p, err := NewSim(SimConfig{SockName: f.SockName(), Host: "Hca1", Progress: &progress}).Open("", -1)
	if err != nil {
		t.Fatalf("open during Wait 3: %v", err)
	}
	<-resumed
	if took := time.Since(start); took < 2*time.Second {
		t.Fatalf("connected after %v: the pause did not hold the CONNECT", took)
	}
	if !strings.Contains(progress.String(), "waiting for ibsim at @"+f.SockName()+":ctl to accept the connection") ||
		strings.Count(progress.String(), "\n") != 1 {
		t.Fatalf("progress: %q", progress.String())
	}
	r := exchange(t, p, &Packet{Addr: Address{LID: PermissiveLID}, MAD: nodeInfoDR0(3)})
	if r.Status != 0 {
		t.Fatalf("MAD after the pause: status %d", r.Status)
	}
	p.Close()
	if n := len(attachedPids(t, f)); n != before {
		t.Fatalf("%d clients attached after Close, want %d", n, before)
	}
}

// A CONNECT given up on (the user's limit, or Close from a signal) must
// not crash ibsim when it serves it later: a helper process takes the
// sockets, waits for the answer and disconnects.
func TestSimConnectGivenUpLeavesIbsimAlive(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	before := len(attachedPids(t, f))
	for _, tc := range []struct {
		name  string
		limit time.Duration
		close bool
	}{
		{"limit", 500 * time.Millisecond, false},
		{"close while waiting", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resumed := pause(t, f, 2)
			o := simOpener{SimConfig{SockName: f.SockName(), Host: "Hca1", ConnectLimit: tc.limit, ServerPort: simDefaultPort}}
			var err error
			if tc.close {
				err = openAndCloseWhileWaiting(o)
			} else {
				_, err = o.open()
			}
			if err == nil {
				t.Fatal("open succeeded during the pause")
			}
			if tc.limit > 0 && !strings.Contains(err.Error(), "has not answered CONNECT within 500ms") {
				t.Fatalf("error: %v", err)
			}
			<-resumed
			// The helper disconnects within moments of ibsim's answer.
			deadline := time.Now().Add(5 * time.Second)
			for len(attachedPids(t, f)) != before {
				if time.Now().After(deadline) {
					t.Fatalf("slot still taken: %v", attachedPids(t, f))
				}
				time.Sleep(50 * time.Millisecond)
			}
			p, err := NewSim(SimConfig{SockName: f.SockName(), Host: "Hca1"}).Open("", -1)
			if err != nil {
				t.Fatalf("ibsim after the abandoned CONNECT: %v", err)
			}
			p.Close()
		})
	}
}

// openAndCloseWhileWaiting opens a port and, from another goroutine as a
// signal's cleanup would, closes it while its CONNECT waits.
func openAndCloseWhileWaiting(o simOpener) error {
	p := &simConn{cfg: o.cfg, closed: make(chan struct{})}
	id, err := p.dial()
	if err != nil {
		return err
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		p.Close()
	}()
	if err := p.connect(id, func() {}); err != nil {
		p.Close()
		return err
	}
	return nil
}

// FuzzDecodeSimFrame: any 288-byte frame from ibsim decodes without a
// panic into a 256-byte MAD whose valid length is at most 256, with the
// bytes beyond that length zeroed.
//
//	go test ./internal/umad -run XXX -fuzz FuzzDecodeSimFrame -fuzztime 30s
func FuzzDecodeSimFrame(f *testing.F) {
	frame := make([]byte, simFrameSize)
	(&simConn{}).encodeSimFrame(frame, &Packet{Addr: Address{LID: 3, QP: 1}, MAD: nodeInfoDR0(9)})
	f.Add(frame)
	f.Add(make([]byte, simFrameSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		frame := make([]byte, simFrameSize)
		copy(frame, b)
		p := decodeSimFrame(frame)
		if len(p.MAD) != MADSize || p.Length > MADSize || p.Length < 0 {
			t.Fatalf("MAD of %d bytes, length %d", len(p.MAD), p.Length)
		}
		for _, c := range p.MAD[p.Length:] {
			if c != 0 {
				t.Fatalf("bytes beyond the length %d are not zero", p.Length)
			}
		}
	})
}
