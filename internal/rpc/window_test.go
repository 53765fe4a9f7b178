package rpc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// goAll sends n requests with Go, spread over dests destinations, and
// waits for them all.
func goAll(t *testing.T, e *Engine, n, dests int) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for i := range n {
		wg.Add(1)
		e.Go(context.Background(), get(uint16(1+i%dests), uint32(i)), func(_ *Reply, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
}

// Where every round trip is long and nothing queues (a fabric answering
// after a fixed latency), the global window widens to its maximum; each
// destination still gets at most its own window.
func TestWindowWidensWhenRoundTripsAreLong(t *testing.T) {
	port := umadtest.NewPort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} }, umadtest.Delay(50*time.Millisecond))
	e := New(port, Options{})
	defer e.Close()
	if got := e.Window(); got != DefaultWindow {
		t.Fatalf("window %d before any round trip, want %d", got, DefaultWindow)
	}
	goAll(t, e, 3000, 1000)
	if got := e.Window(); got != DefaultMaxWindow {
		t.Errorf("window %d after long round trips, want %d", got, DefaultMaxWindow)
	}
	all, one := port.MostInFlight()
	if all <= DefaultWindow || all > DefaultMaxWindow || one > DefaultDestWindow {
		t.Errorf("most in flight %d (one destination %d): want more than %d, at most %d (%d)", all, one, DefaultWindow, DefaultMaxWindow, DefaultDestWindow)
	}
}

// Where the round trips are long because the responder answers one MAD
// at a time (a simulator), a wider window would only queue: it stays.
func TestWindowStaysWhenTheResponderQueues(t *testing.T) {
	queue := make(chan *umad.Packet, 1000)
	var port *umadtest.Port
	port = umadtest.NewPort(func(p *umad.Packet) []*umad.Packet { queue <- p; return nil })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range queue {
			time.Sleep(500 * time.Microsecond)
			port.Deliver(reply(p))
		}
	}()
	e := New(port, Options{})
	goAll(t, e, 200, 100)
	if got := e.Window(); got != DefaultWindow {
		t.Errorf("window %d in front of a queueing responder, want %d", got, DefaultWindow)
	}
	e.Close()
	close(queue)
	<-done
}

// A window set in the options stays as it is, and a port's limit caps
// the adaptive one.
func TestWindowBounds(t *testing.T) {
	fake := umadtest.NewPort(nil)
	for _, tc := range []struct {
		port        umad.Port
		window      int
		start, most int
	}{
		{fake, 0, DefaultWindow, DefaultMaxWindow},
		{fake, 16, 16, 16},
		{limited{fake, 64}, 0, DefaultWindow, 64},
		{limited{fake, 8}, 0, 8, 8},
		{limited{fake, 8}, 32, 8, 8},
	} {
		if start, most := windowBounds(tc.port, tc.window); start != tc.start || most != tc.most {
			t.Errorf("windowBounds(limit, %d) = %d, %d; want %d, %d", tc.window, start, most, tc.start, tc.most)
		}
	}
}

type limited struct {
	umad.Port
	max int
}

func (l limited) MaxInFlight() int { return l.max }

// The SA is asked SADestWindow requests at once, a switch's SMA
// DestWindow.
func TestTheSAGetsAWiderWindowThanAnSMA(t *testing.T) {
	saGet := func(mod uint32) *Request {
		return &Request{Addr: umad.Address{LID: 1, QP: 1, QKey: umad.QP1QKey},
			MAD: mad.NewRequest(mad.ClassSubnAdm, 2, mad.MethodGet, mad.AttrPathRecord, mod)}
	}
	for _, tc := range []struct {
		name    string
		request func(uint32) *Request
		want    int
	}{
		{"SA", saGet, 8},
		{"SMA", func(mod uint32) *Request { return get(1, mod) }, 2},
	} {
		port := umadtest.NewPort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} }, umadtest.Delay(5*time.Millisecond))
		e := New(port, Options{Window: 32, DestWindow: 2, SADestWindow: 8})
		var wg sync.WaitGroup
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.Do(context.Background(), tc.request(uint32(i))); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		e.Close()
		if _, one := port.MostInFlight(); one != tc.want {
			t.Errorf("%s: %d requests in flight at once, want %d", tc.name, one, tc.want)
		}
	}
}
