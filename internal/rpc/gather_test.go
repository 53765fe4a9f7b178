package rpc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// oneAtATime is a port that moves batches but, like ibsim, has one reply
// ready per receive; it notes when each receive starts and ends.
type oneAtATime struct {
	*umadtest.Port
	mu    sync.Mutex
	calls []recvCall
}

type recvCall struct {
	start, end time.Time
	got        int
}

func (p *oneAtATime) RecvBatch(deadline time.Time, into []*umad.Packet) (int, error) {
	start := time.Now()
	pkt, err := p.Recv(deadline)
	if err != nil {
		return 0, err
	}
	into[0] = pkt
	p.mu.Lock()
	p.calls = append(p.calls, recvCall{start, time.Now(), 1})
	p.mu.Unlock()
	return 1, nil
}

func (p *oneAtATime) SendBatch(pkts []*umad.Packet) (int, error) {
	for i, pkt := range pkts {
		if err := p.Send(pkt); err != nil {
			return i, err
		}
	}
	return len(pkts), nil
}

// With many requests in flight, a receive that brought one reply is
// followed by a pause before the next receive, so that replies gather.
func TestReceiveLoopPausesToGatherReplies(t *testing.T) {
	// Answers come late enough for every request to be out by the first.
	answer := func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} }
	port := &oneAtATime{Port: umadtest.NewPort(answer, umadtest.Delay(50*time.Millisecond))}
	e := New(port, Options{Window: 64, DestWindow: 64})
	defer e.Close()
	const n = gatherInFlight + 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		e.Go(context.Background(), get(5, uint32(i)), func(_ *Reply, err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	port.mu.Lock()
	defer port.mu.Unlock()
	if len(port.calls) < 2 {
		t.Fatalf("%d receives for %d replies", len(port.calls), n)
	}
	// After the first reply n-1 requests were still out.
	if gap := port.calls[1].start.Sub(port.calls[0].end); gap < gatherPause {
		t.Errorf("the second receive started %v after the first, want a pause of at least %v", gap, gatherPause)
	}
}

// Few requests in flight: no pause, the next reply is what matters.
func TestReceiveLoopDoesNotPauseWithFewInFlight(t *testing.T) {
	if pause := gatherPauseFor(1, gatherInFlight-1); pause != 0 {
		t.Errorf("paused %v with %d in flight", pause, gatherInFlight-1)
	}
	if pause := gatherPauseFor(gatherBelow, 64); pause != 0 {
		t.Errorf("paused %v after a batch of %d", pause, gatherBelow)
	}
	if pause := gatherPauseFor(1, 64); pause != gatherPause {
		t.Errorf("paused %v after a batch of 1 with 64 in flight, want %v", pause, gatherPause)
	}
}
