package rpc

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// newFakePort returns a port that answers each sent MAD through answer a
// millisecond later, like a transport would, so that requests pile up in
// flight.
func newFakePort(answer umadtest.Func) *umadtest.Port {
	return umadtest.NewPort(answer, umadtest.Delay(time.Millisecond))
}

// reply turns a request into its GetResp, with the high TID bits rewritten
// as ibsim does, and the attribute modifier echoed in the data.
func reply(req *umad.Packet) *umad.Packet {
	return umadtest.Reply(req, 0, []byte(fmt.Sprint(mad.Header(req.MAD).AttrMod())))
}

func get(lid uint16, mod uint32) *Request {
	return &Request{Addr: umad.Address{LID: lid}, MAD: mad.NewLIDSMP(mad.MethodGet, 0x11, mod)}
}

func TestDoMatchesReplyByLow32BitsOfTID(t *testing.T) {
	e := New(newFakePort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} }), Options{})
	defer e.Close()
	r, err := e.Do(context.Background(), get(5, 42))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.MAD.SMPData()[:2]); got != "42" || r.Attempts != 1 {
		t.Fatalf("reply data %q after %d attempts, want 42 after 1", got, r.Attempts)
	}
}

func TestUndeliveredRequestIsRetriedThenTimesOut(t *testing.T) {
	var sends atomic.Int32
	port := newFakePort(func(p *umad.Packet) []*umad.Packet {
		sends.Add(1)
		p.Status = umad.StatusTimeout // ibsim: no route, the request comes straight back
		return []*umad.Packet{p}
	})
	e := New(port, Options{Timeout: time.Second})
	defer e.Close()
	start := time.Now()
	_, err := e.Do(context.Background(), get(99, 0))
	var te *TimeoutError
	if !errors.As(err, &te) || te.Attempts != 3 {
		t.Fatalf("err = %v, want a TimeoutError after 3 attempts", err)
	}
	if sends.Load() != 3 {
		t.Fatalf("sent %d times, want 3", sends.Load())
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Fatalf("an undelivered request must fail at once, not wait for the timeout")
	}
	if s := e.Stats(); s.Sent != 3 || s.Retried != 2 || s.Lost != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestSilentDropTimesOutAndRetriesUseTheSameTID(t *testing.T) {
	port := newFakePort(func(p *umad.Packet) []*umad.Packet { return nil })
	none := 1
	e := New(port, Options{Timeout: 20 * time.Millisecond})
	defer e.Close()
	req := get(3, 0)
	req.Retries = &none
	_, err := e.Do(context.Background(), req)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Attempts != 2 {
		t.Fatalf("err = %v, want timeout after 2 attempts", err)
	}
	wantOneTID(t, port)
}

// wantOneTID checks that all sends, retries included, used one TID.
func wantOneTID(t *testing.T, port *umadtest.Port) {
	t.Helper()
	tids := map[uint64]bool{}
	for _, m := range port.Requests() {
		tids[m.TID()] = true
	}
	if len(tids) != 1 {
		t.Fatalf("retries used %d TIDs, want 1", len(tids))
	}
}

// wantWindows checks the most that was ever in flight, in all and to one
// destination.
func wantWindows(t *testing.T, port *umadtest.Port, window, dest int) {
	t.Helper()
	all, one := port.MostInFlight()
	if all > window {
		t.Errorf("%d requests in flight, window is %d", all, window)
	}
	if one > dest {
		t.Errorf("%d requests in flight to one LID, per-destination window is %d", one, dest)
	}
	if all < 2 {
		t.Errorf("at most %d request in flight: the windows were not tested", all)
	}
}

func TestUnmatchedAndDuplicateRepliesAreDropped(t *testing.T) {
	port := newFakePort(func(p *umad.Packet) []*umad.Packet {
		stray := reply(p)
		stray.MAD = append(mad.Header(nil), stray.MAD...)
		mad.Header(stray.MAD).SetTID(0xdead)
		return []*umad.Packet{stray, reply(p), reply(p)}
	})
	var unmatched atomic.Int32
	e := New(port, Options{Trace: func(ev Event) {
		if ev.Kind == EventUnmatched {
			unmatched.Add(1)
		}
	}})
	defer e.Close()
	if _, err := e.Do(context.Background(), get(1, 7)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if unmatched.Load() < 1 || e.Stats().Unmatched < 1 {
		t.Fatalf("the stray reply was not reported as unmatched")
	}
}

func TestWindowsBoundWhatIsInFlight(t *testing.T) {
	port := newFakePort(func(p *umad.Packet) []*umad.Packet { return []*umad.Packet{reply(p)} })
	e := New(port, Options{Window: 8, DestWindow: 2})
	defer e.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 2000)
	for i := 0; i < 2000; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lid := uint16(1 + i%10)
			r, err := e.Do(context.Background(), get(lid, uint32(i)))
			if err != nil {
				errs <- err
				return
			}
			if got, want := string(r.MAD.SMPData()[:len(fmt.Sprint(i))]), fmt.Sprint(i); got != want {
				errs <- fmt.Errorf("request %d got the reply of %s", i, got)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wantWindows(t, port, 8, 2)
}

func TestContextCancelStopsWaiting(t *testing.T) {
	e := New(newFakePort(func(*umad.Packet) []*umad.Packet { return nil }), Options{Timeout: time.Hour})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := e.Do(ctx, get(1, 0)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context deadline", err)
	}
}

func TestDescribeNamesTheRequest(t *testing.T) {
	dr := mad.NewDRSMP(mad.MethodGet, 0x15, 1, []byte{0, 8, 1})
	got := Describe(umad.Address{LID: umad.PermissiveLID}, dr)
	if want := "SubnGet(PortInfo) DR path 0,8,1 mod 0x1"; got != want {
		t.Fatalf("Describe = %q, want %q", got, want)
	}
}

func TestServeAnswersUnsolicitedRequests(t *testing.T) {
	port := newFakePort(func(*umad.Packet) []*umad.Packet { return nil })
	e := New(port, Options{})
	defer e.Close()
	err := e.Serve(0x32, 1, 0x001405, []uint8{mad.MethodGet}, func(req *umad.Packet) mad.Header {
		r := append(mad.Header(nil), req.MAD...)
		r[3] = mad.MethodGetResp
		return r
	})
	if err != nil {
		t.Fatal(err)
	}
	req := mad.NewRequest(0x32, 1, mad.MethodGet, 0x0001, 0)
	req.SetTID(0x77)
	port.Deliver(&umad.Packet{Addr: umad.Address{LID: 9, QP: 1}, MAD: req})
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if sent := port.Requests(); len(sent) == 1 && sent[0].TID() == 0x77 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the handler's reply was not sent")
}

// A request that came with a GRH (always, on RoCE) is answered with it:
// the requester's GID, the local GID index it arrived on, and its hop
// limit, class and flow label. Without one, the reply has none.
func TestServeRepliesWithTheRequestGRH(t *testing.T) {
	sent := make(chan *umad.Packet, 2)
	port := newFakePort(func(p *umad.Packet) []*umad.Packet { sent <- p; return nil })
	e := New(port, Options{})
	defer e.Close()
	err := e.Serve(0x32, 1, 0x001405, []uint8{mad.MethodGet}, func(req *umad.Packet) mad.Header {
		r := append(mad.Header(nil), req.MAD...)
		r[3] = mad.MethodGetResp
		return r
	})
	if err != nil {
		t.Fatal(err)
	}
	gid := [16]byte{0xfe, 0x80, 8: 0x7c, 9: 0xa0, 15: 0xc4}
	for _, from := range []umad.Address{
		{QP: 1, QKey: umad.QP1QKey, GRH: &umad.GRH{GID: gid, GIDIndex: 2, HopLimit: 1, TrafficClass: 3, FlowLabel: 5}},
		{LID: 9, QP: 1, QKey: umad.QP1QKey, SL: 4, PKeyIndex: 1},
	} {
		req := mad.NewRequest(0x32, 1, mad.MethodGet, 0x0001, 0)
		port.Deliver(&umad.Packet{Addr: from, MAD: req})
		select {
		case p := <-sent:
			if !reflect.DeepEqual(p.Addr, from) || (from.GRH != nil && p.Addr.GRH == from.GRH) {
				t.Errorf("reply to %+v went to %+v; want the same address, with a copy of the GRH", from, p.Addr)
			}
		case <-time.After(time.Second):
			t.Fatal("the handler's reply was not sent")
		}
	}
}

func TestDescribeRoCEByGID(t *testing.T) {
	gid := [16]byte{0xfe, 0x80, 15: 1}
	a := umad.Address{QP: 1, GRH: &umad.GRH{GID: gid}}
	h := mad.NewRequest(0x04, 1, mad.MethodGet, 0x0001, 0)
	if got, want := Describe(a, h), "PerformanceGet(ClassPortInfo) GID fe80::1 mod 0x0"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	other := umad.Address{QP: 1, GRH: &umad.GRH{GID: [16]byte{0xfe, 0x80, 15: 2}}}
	if (&Request{Addr: a, MAD: h}).dest() == (&Request{Addr: other, MAD: h}).dest() ||
		(&Request{Addr: a, MAD: h}).dest() != (&Request{Addr: a, MAD: h}).dest() {
		t.Errorf("destinations by GID must be keyed by the GID")
	}
}
