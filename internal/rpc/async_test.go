package rpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// result is what one Go call's done received.
type result struct {
	reply *Reply
	err   error
}

// goAndWait runs Go and waits for its done.
func goAndWait(t *testing.T, e *Engine, ctx context.Context, req *Request) result {
	t.Helper()
	ch := make(chan result, 1)
	e.Go(ctx, req, func(r *Reply, err error) { ch <- result{r, err} })
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("done was never called")
		return result{}
	}
}

func TestGoDeliversTheReply(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} }), Options{})
	defer e.Close()
	r := goAndWait(t, e, context.Background(), get(5, 42))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := string(r.reply.MAD.SMPData()[:2]); got != "42" || r.reply.Attempts != 1 || r.reply.Sends != 1 {
		t.Fatalf("reply data %q after %d attempts (%d sent), want 42 after 1", got, r.reply.Attempts, r.reply.Sends)
	}
}

// Sends counts a resend that went out before the first attempt's late
// reply came: the walk reuses a request's memory only when it was sent
// once, since the transport may still be reading a resend.
func TestGoReplySendsCountsAResendBeforeALateReply(t *testing.T) {
	var sends atomic.Int32
	port := newFakePort(func(p *umad.Packet) []*umad.Packet {
		if sends.Add(1) == 1 {
			time.Sleep(75 * time.Millisecond) // the first attempt's reply comes after the resend
		}
		return []*umad.Packet{reply(p)}
	})
	e := New(port, Options{Timeout: 50 * time.Millisecond, Retries: 5})
	defer e.Close()
	r := goAndWait(t, e, context.Background(), get(3, 7))
	if r.err != nil || r.reply.Sends < 2 || r.reply.Sends < r.reply.Attempts {
		t.Fatalf("got %+v, want a reply with at least 2 sends", r)
	}
}

// A reply that comes while the call's timeout is being handled (the
// handler reads the request for its trace, resend or error) must not
// hand the request back for reuse: its Sends counts the expiry.
func TestGoReplySendsCountsATimeoutBeingHandled(t *testing.T) {
	sent := make(chan *umad.Packet, 1)
	port := newFakePort(func(p *umad.Packet) []*umad.Packet {
		sent <- p
		return nil // the reply is delivered by hand below
	})
	e := New(port, Options{Timeout: time.Minute})
	defer e.Close()
	done := make(chan result, 1)
	e.Go(context.Background(), get(3, 7), func(r *Reply, err error) { done <- result{r, err} })
	pkt := <-sent
	e.mu.Lock()
	c := e.calls[mad.Header(pkt.MAD).TID32()]
	e.mu.Unlock()
	if c == nil || !e.claimTimeout(c, 1) {
		t.Fatal("the call in flight could not be claimed for its timeout")
	}
	e.received(c, 1, reply(pkt))
	r := <-done
	if r.err != nil || r.reply.Attempts != 1 || r.reply.Sends < 2 {
		t.Fatalf("got %+v, want the reply of attempt 1 with Sends of 2 or more", r)
	}
	if e.claimTimeout(c, 1) {
		t.Error("a finished call was claimed for a timeout")
	}
}

func TestGoRetriesALostRequestWithTheSameTID(t *testing.T) {
	var sends atomic.Int32
	port := newFakePort(func(p *umad.Packet) []*umad.Packet {
		if sends.Add(1) < 3 {
			return nil // the first two attempts are lost
		}
		return []*umad.Packet{reply(p)}
	})
	e := New(port, Options{Timeout: 20 * time.Millisecond})
	defer e.Close()
	r := goAndWait(t, e, context.Background(), get(3, 7))
	if r.err != nil || r.reply.Attempts != 3 {
		t.Fatalf("got %+v, want the reply after 3 attempts", r)
	}
	wantOneTID(t, port)
}

func TestGoTimesOutAfterItsAttempts(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet { return nil }), Options{Timeout: 10 * time.Millisecond})
	defer e.Close()
	one := 1
	req := get(3, 0)
	req.Retries = &one
	r := goAndWait(t, e, context.Background(), req)
	var te *TimeoutError
	if !errors.As(r.err, &te) || te.Attempts != 2 {
		t.Fatalf("err = %v, want a TimeoutError after 2 attempts", r.err)
	}
	if s := e.Stats(); s.Sent != 2 || s.Retried != 1 || s.Lost != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestGoUndeliveredFailsWithoutWaitingForTheTimeout(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet {
		p.Status = umad.StatusTimeout
		return []*umad.Packet{p}
	}), Options{Timeout: time.Hour})
	defer e.Close()
	r := goAndWait(t, e, context.Background(), get(99, 0))
	var te *TimeoutError
	if !errors.As(r.err, &te) || te.Attempts != 3 {
		t.Fatalf("err = %v, want a TimeoutError after 3 attempts", r.err)
	}
}

// A walk issues its next requests from done; the windows hold whether the
// requests come from done or from other goroutines, and Do and Go share
// them.
func TestGoFromDoneKeepsTheWindows(t *testing.T) {
	port := newFakePort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} })
	e := New(port, Options{Window: 8, DestWindow: 2})
	defer e.Close()
	const chains, depth = 40, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	var step func(chain, n int)
	step = func(chain, n int) {
		mod := uint32(chain*1000 + n)
		e.Go(context.Background(), get(uint16(1+chain%10), mod), func(r *Reply, err error) {
			defer wg.Done()
			if err == nil && string(r.MAD.SMPData()[:len(fmt.Sprint(mod))]) != fmt.Sprint(mod) {
				err = fmt.Errorf("request %d got another's reply", mod)
			}
			if err != nil {
				mu.Lock()
				bad = append(bad, err.Error())
				mu.Unlock()
				return
			}
			if n+1 < depth {
				wg.Add(1)
				step(chain, n+1)
			}
		})
	}
	for c := range chains {
		wg.Add(1)
		step(c, 0)
	}
	for range 50 { // Do alongside, from other goroutines
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Do(context.Background(), get(1, 5)); err != nil {
				mu.Lock()
				bad = append(bad, err.Error())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatal(bad[0])
	}
	wantWindows(t, port, 8, 2)
	if s := e.Stats(); s.Sent != chains*depth+50 {
		t.Errorf("sent %d, want %d", s.Sent, chains*depth+50)
	}
}

// Closing the engine fails what is in flight and what waits for a slot,
// once each.
func TestGoCloseFailsPendingCalls(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet { return nil }), Options{Window: 2, Timeout: time.Hour})
	var calls atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		e.Go(context.Background(), get(uint16(i+1), 0), func(r *Reply, err error) {
			defer wg.Done()
			calls.Add(1)
			if !errors.Is(err, umad.ErrClosed) {
				t.Errorf("err = %v, want ErrClosed", err)
			}
		})
	}
	e.Close()
	wg.Wait()
	if calls.Load() != 10 {
		t.Fatalf("done called %d times, want 10", calls.Load())
	}
	r := goAndWait(t, e, context.Background(), get(1, 0))
	if !errors.Is(r.err, umad.ErrClosed) {
		t.Fatalf("Go after Close: err = %v, want ErrClosed", r.err)
	}
}

func TestGoContextCancelStopsRetrying(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet { return nil }), Options{Timeout: 10 * time.Millisecond, Retries: 100})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	r := goAndWait(t, e, ctx, get(1, 0))
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", r.err)
	}
	if s := e.Stats(); s.Sent > 10 {
		t.Fatalf("sent %d attempts after the context ended", s.Sent)
	}
}

// RMPP classes go through Do: done still gets the reassembled reply.
func TestGoRunsRMPPClassesThroughDo(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet {
		r := append(mad.Header(nil), p.MAD...)
		r[3] = mad.MethodGetResp
		return []*umad.Packet{{Addr: p.Addr, MAD: r}}
	}), Options{})
	defer e.Close()
	req := &Request{Addr: umad.Address{LID: 1, QP: 1}, MAD: mad.NewRequest(mad.ClassSubnAdm, 2, mad.MethodGet, 0x11, 0)}
	r := goAndWait(t, e, context.Background(), req)
	if r.err != nil || r.reply.MAD.Method() != mad.MethodGetResp {
		t.Fatalf("got %+v", r)
	}
}

// Do callers that give up while they wait for a slot must not leave the
// window stuck: everything sent afterwards still goes out and completes.
func TestCancelledWaitersDoNotBlockTheWindow(t *testing.T) {
	port := newFakePort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} })
	e := New(port, Options{Window: 2, DestWindow: 1})
	defer e.Close()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%3)*time.Millisecond)
			defer cancel()
			_, _ = e.Do(ctx, get(uint16(1+i%3), uint32(i))) // many give up waiting
		}()
	}
	wg.Wait()
	for lid := uint16(1); lid <= 3; lid++ {
		r := goAndWait(t, e, context.Background(), get(lid, 7))
		if r.err != nil {
			t.Fatalf("LID %d after the cancellations: %v", lid, r.err)
		}
	}
	// (A Do that gives up frees its slot at once, its MAD still on the
	// wire, as it always has: the windows bound the callers waiting.)
}

// The end of a context fails its calls at once, not at their timeout.
func TestGoContextEndFailsAtOnce(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet { return nil }), Options{Timeout: time.Hour, Window: 1})
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan result, 2)
	for range 2 { // one in flight, one waiting for the slot
		e.Go(ctx, get(1, 0), func(r *Reply, err error) { results <- result{r, err} })
	}
	time.Sleep(10 * time.Millisecond)
	cancel()
	for range 2 {
		select {
		case r := <-results:
			if !errors.Is(r.err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", r.err)
			}
		case <-time.After(time.Second):
			t.Fatal("a call of the cancelled context was not failed")
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.watches) != 0 {
		t.Errorf("%d context watches left", len(e.watches))
	}
}
