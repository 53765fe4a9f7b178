package rpc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// recyclingPort records the packets the engine hands back.
type recyclingPort struct {
	*umadtest.Port
	mu       sync.Mutex
	recycled []*umad.Packet
}

func (p *recyclingPort) Recycle(pkt *umad.Packet) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recycled = append(p.recycled, pkt)
}

func (p *recyclingPort) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.recycled)
}

// Only a request that borrows its reply has the reply's packet handed
// back to the transport, and only once its callback has returned.
func TestBorrowedRepliesAreRecycledAfterTheCallback(t *testing.T) {
	port := &recyclingPort{Port: newFakePort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} })}
	e := New(port, Options{})
	defer e.Close()
	ctx := context.Background()

	if _, err := e.Do(ctx, get(5, 1)); err != nil {
		t.Fatal(err)
	}
	if r := goAndWait(t, e, ctx, get(5, 2)); r.err != nil {
		t.Fatal(r.err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := port.count(); n != 0 {
		t.Fatalf("%d replies recycled, none borrowed", n)
	}

	req := get(5, 3)
	req.BorrowReply = true
	done := make(chan []byte, 1)
	e.Go(ctx, req, func(r *Reply, err error) {
		if err != nil {
			t.Error(err)
			done <- nil
			return
		}
		if n := port.count(); n != 0 {
			t.Errorf("the reply was recycled before its callback returned")
		}
		done <- r.MAD
	})
	var got []byte
	select {
	case got = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("done was never called")
	}
	for deadline := time.Now().Add(2 * time.Second); port.count() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	port.mu.Lock()
	defer port.mu.Unlock()
	if len(port.recycled) != 1 || got == nil || &port.recycled[0].MAD[0] != &got[0] {
		t.Fatalf("recycled %d packets, want the borrowed reply's", len(port.recycled))
	}
}
