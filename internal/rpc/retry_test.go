package rpc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// lossyAgent answers requests by LID, losing the first lose[mod] attempts
// of the request with that attribute modifier (silently, or handed back
// undelivered; the history's, mods from 1000, always handed back, so that
// they take no time); LID 99 answers nothing. It counts the attempts.
type lossyAgent struct {
	mu          sync.Mutex
	lose        map[uint32]int
	undelivered bool
	attempts    map[uint32]int
}

func (a *lossyAgent) answer(p *umad.Packet) []*umad.Packet {
	a.mu.Lock()
	defer a.mu.Unlock()
	mod := mad.Header(p.MAD).AttrMod()
	a.attempts[mod]++
	switch {
	case p.Addr.LID == 99 || a.attempts[mod] <= a.lose[mod]:
		if a.undelivered || mod >= 1000 {
			p.Status = umad.StatusTimeout
			return []*umad.Packet{p}
		}
		return nil
	}
	return []*umad.Packet{reply(p)}
}

func (a *lossyAgent) count(mod uint32) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.attempts[mod]
}

// send runs a request with Do or with Go.
type sendFunc func(t *testing.T, e *Engine, req *Request) (*Reply, error)

var senders = map[string]sendFunc{
	"Do": func(t *testing.T, e *Engine, req *Request) (*Reply, error) { return e.Do(context.Background(), req) },
	"Go": func(t *testing.T, e *Engine, req *Request) (*Reply, error) {
		r := goAndWait(t, e, context.Background(), req)
		return r.reply, r.err
	},
}

// history sends n requests to LID 5 (mods 1000..), each losing its first
// attempt when lossy: what the engine learns the fabric's loss from. Their
// timeout is long, so that a slow machine cannot make up a loss.
func history(t *testing.T, e *Engine, a *lossyAgent, send sendFunc, n int, lossy bool) {
	t.Helper()
	for i := range n {
		mod := uint32(1000 + i)
		if lossy {
			a.mu.Lock()
			a.lose[mod] = 1
			a.mu.Unlock()
		}
		req := get(5, mod)
		req.Timeout = 5 * time.Second
		if _, err := send(t, e, req); err != nil {
			t.Fatalf("history request %d: %v", i, err)
		}
	}
}

func TestRetriesAdaptToLoss(t *testing.T) {
	for name, send := range senders {
		for _, undelivered := range []bool{false, true} {
			how := name + " lost silently"
			if undelivered {
				how = name + " handed back"
			}
			t.Run(how, func(t *testing.T) {
				newEngine := func(retries int) (*Engine, *lossyAgent) {
					a := &lossyAgent{lose: map[uint32]int{}, attempts: map[uint32]int{}, undelivered: undelivered}
					e := New(newFakePort(a.answer), Options{Timeout: 30 * time.Millisecond, Retries: retries})
					t.Cleanup(func() { e.Close() })
					return e, a
				}

				// Half the attempts are lost: a live destination's request
				// that loses 7 gets more than its 4, up to MaxRetries. (A
				// slow machine may time out the 8th too.)
				e, a := newEngine(3)
				history(t, e, a, send, 20, true)
				a.mu.Lock()
				a.lose[1] = 7
				a.mu.Unlock()
				r, err := send(t, e, get(5, 1))
				if err != nil || r.Attempts < 8 {
					t.Fatalf("flaky live destination: %v after %d attempts; want a reply after 8", err, attemptsOf(r))
				}
				// A destination that never answered gets as many (the loss
				// was measured on enough replies), but no more than 16.
				_, err = send(t, e, get(99, 2))
				var te *TimeoutError
				if !errors.As(err, &te) || te.Attempts != 16 || a.count(2) != 16 {
					t.Fatalf("dead destination on a lossy fabric: %v, %d sent; want 16 attempts", err, a.count(2))
				}

				// Without loss nothing changes: a dead destination costs
				// Retries+1 attempts.
				e, a = newEngine(3)
				history(t, e, a, send, 20, false)
				_, err = send(t, e, get(99, 3))
				if !errors.As(err, &te) || te.Attempts != 4 || a.count(3) != 4 {
					t.Fatalf("dead destination on a sound fabric: %v, %d sent; want 4 attempts", err, a.count(3))
				}

				// A command that asks for no resends gets none.
				e, a = newEngine(-1)
				history(t, e, a, send, 20, false)
				a.mu.Lock()
				a.lose[4] = 1
				a.mu.Unlock()
				if _, err = send(t, e, get(5, 4)); !errors.As(err, &te) || a.count(4) != 1 {
					t.Fatalf("no resends: %v, %d sent", err, a.count(4))
				}
			})
		}
	}
}

func attemptsOf(r *Reply) int {
	if r == nil {
		return 0
	}
	return r.Attempts
}

// MaxRetries bounds the extra resends; the user's own Retries always hold.
func TestMaxRetries(t *testing.T) {
	e := &Engine{opt: Options{MaxRetries: 5}}
	if e.maxRetries(3) != 5 || e.maxRetries(9) != 9 {
		t.Fatalf("MaxRetries 5: %d for 3 retries, %d for 9", e.maxRetries(3), e.maxRetries(9))
	}
	e.opt.MaxRetries = 0
	if e.maxRetries(3) != 15 || e.maxRetries(2) != 11 {
		t.Fatalf("default: %d for 3 retries, %d for 2", e.maxRetries(3), e.maxRetries(2))
	}
	for _, tc := range []struct {
		p    float64
		want int
	}{{0, 1}, {0.2, 9}, {0.3, 12}, {0.5, 20}} {
		if got := attemptsFor(tc.p); got != tc.want {
			t.Errorf("attemptsFor(%v) = %d, want %d", tc.p, got, tc.want)
		}
	}
	if backoff(3, 3, time.Second) != 0 || backoff(4, 3, time.Second) != time.Millisecond ||
		backoff(6, 3, time.Second) != 4*time.Millisecond || backoff(30, 3, time.Second) != 250*time.Millisecond {
		t.Error("backoff: nothing within Retries, then 1 ms doubling up to a quarter of the timeout")
	}
}
