package verbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests need two RDMA devices that reach each other, given as
// IBTOOL_VERBS_TEST_DEVICES=dev0,dev1 (and IBTOOL_VERBS_TEST_GID, the GID
// index to use on RoCE). make test-vm runs them on rxe0 and rxe1 in the
// SoftRoCE guest; elsewhere they skip.

type side struct {
	ctx  *Context
	port PortAttr
	gid  GID
	gidx int
	ch   *CompChannel
	cq   *CQ
	pd   *PD
	mem  *Memory
	mr   *MR
	qp   *QP
}

func testDevices(t *testing.T) (string, string, int) {
	t.Helper()
	devs := strings.Split(os.Getenv("IBTOOL_VERBS_TEST_DEVICES"), ",")
	if len(devs) != 2 {
		t.Skip("set IBTOOL_VERBS_TEST_DEVICES=dev0,dev1 (make test-vm does)")
	}
	gidx := -1
	if s := os.Getenv("IBTOOL_VERBS_TEST_GID"); s != "" {
		gidx, _ = strconv.Atoi(s)
	}
	return devs[0], devs[1], gidx
}

func openSide(t *testing.T, dev string, gidx int, sqDepth int) *side {
	t.Helper()
	ctx, err := Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	s := &side{ctx: ctx, gidx: gidx}
	if s.port, err = ctx.QueryPort(1); err != nil {
		t.Fatal(err)
	}
	if s.port.LinkLayer == LinkLayerEthernet && gidx < 0 {
		s.gidx = 0
	}
	if s.gidx >= 0 {
		e, err := ctx.QueryGIDEntry(1, s.gidx)
		if err != nil {
			t.Fatalf("GID %d: %v", s.gidx, err)
		}
		s.gid = e.GID
		if s.port.LinkLayer == LinkLayerEthernet && e.Type != GIDTypeRoCEv2 && e.Type != GIDTypeRoCEv1 {
			t.Errorf("RoCE GID of type %v", e.Type)
		}
		if g, err := ctx.QueryGID(1, s.gidx); err != nil || g != e.GID {
			t.Errorf("QueryGID = %v, %v; QueryGIDEntry said %v", g, err, e.GID)
		}
	}
	if s.ch, err = ctx.CreateCompChannel(); err != nil {
		t.Fatal(err)
	}
	if s.cq, err = ctx.CreateCQ(4*sqDepth, s.ch, 0); err != nil {
		t.Fatal(err)
	}
	if s.pd, err = ctx.AllocPD(); err != nil {
		t.Fatal(err)
	}
	if s.mem, err = AllocMemory(1 << 16); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close(); s.mem.Close() })
	if s.mr, err = s.pd.RegMR(s.mem, AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead); err != nil {
		t.Fatal(err)
	}
	s.qp, err = s.pd.CreateQP(QPInitAttr{Type: QPTypeRC, SendCQ: s.cq,
		Cap: QPCap{MaxSendWR: uint32(sqDepth), MaxRecvWR: 16, MaxSendSGE: 4, MaxRecvSGE: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.qp.ToInit(1, AccessRemoteWrite|AccessRemoteRead, 0); err != nil {
		t.Fatal(err)
	}
	return s
}

func connectSides(t *testing.T, a, b *side) {
	t.Helper()
	for _, p := range [][2]*side{{a, b}, {b, a}} {
		me, peer := p[0], p[1]
		ah := AHAttr{DLID: peer.port.LID, Port: 1}
		if me.gidx >= 0 {
			ah.IsGlobal, ah.GRH = true, GlobalRoute{DGID: peer.gid, SGIDIndex: uint8(me.gidx), HopLimit: 64}
		}
		err := me.qp.ToRTR(RTR{PathMTU: min(me.port.ActiveMTU, peer.port.ActiveMTU), DestQPN: peer.qp.Num(),
			RQPSN: 100, AH: ah, MaxDestRdAtomic: 1, MinRNRTimer: 12})
		if err != nil {
			t.Fatal(err)
		}
		if err := me.qp.ToRTS(RTS{SQPSN: 100, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}); err != nil {
			t.Fatal(err)
		}
		if st, err := me.qp.State(); err != nil || st != QPStateRTS {
			t.Fatalf("QP state %v, %v", st, err)
		}
	}
}

// waitWC waits (events, then polling) for one completion on s's CQ.
func waitWC(t *testing.T, s *side) WorkCompletion {
	t.Helper()
	wcs := make([]WorkCompletion, 1)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if n, err := s.cq.Poll(wcs); err != nil {
			t.Fatal(err)
		} else if n == 1 {
			return wcs[0]
		}
		if err := s.cq.ReqNotify(false); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.cq.Poll(wcs); n == 1 {
			return wcs[0]
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.cq.Wait(ctx)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
	}
	t.Fatal("no completion within 10 s")
	return WorkCompletion{}
}

func TestDeviceRCTraffic(t *testing.T) {
	d0, d1, gidx := testDevices(t)
	a, b := openSide(t, d0, gidx, 64), openSide(t, d1, gidx, 64)
	connectSides(t, a, b)
	ab, bb := a.mem.Bytes(), b.mem.Bytes()

	// SEND with immediate data into a two-SGE receive.
	msg := fmt.Sprintf("%-16.16s", "hello from "+d0)
	copy(ab, msg)
	if err := b.qp.PostRecv(RecvWR{ID: 7, SGEs: []SGE{b.mr.SGE(1000, 6), b.mr.SGE(2000, 100)}}); err != nil {
		t.Fatal(err)
	}
	if err := a.qp.PostSend(SendWR{ID: 1, Opcode: WRSendWithImm, Flags: SendSignaled, ImmData: 0xcafe,
		SGEs: []SGE{a.mr.SGE(0, 16)}}); err != nil {
		t.Fatal(err)
	}
	if wc := waitWC(t, a); wc.Err() != nil || wc.ID != 1 || wc.Opcode != WCSend {
		t.Fatalf("send completion %+v", wc)
	}
	wc := waitWC(t, b)
	if wc.Err() != nil || wc.ID != 7 || wc.Opcode != WCRecv || wc.ByteLen != 16 || wc.Flags&WCWithImm == 0 ||
		wc.ImmData != 0xcafe || wc.QPNum != b.qp.Num() {
		t.Fatalf("receive completion %+v", wc)
	}
	if got := string(bb[1000:1006]) + string(bb[2000:2010]); got != msg {
		t.Fatalf("received %q", got)
	}

	// RDMA WRITE of three SGEs, then RDMA READ it back elsewhere.
	for i := range ab[:3000] {
		ab[i] = byte(i * 7)
	}
	err := a.qp.PostSend(SendWR{ID: 2, Opcode: WRRDMAWrite, Flags: SendSignaled, RemoteAddr: b.mr.Addr() + 4096,
		RKey: b.mr.RKey(), SGEs: []SGE{a.mr.SGE(0, 1000), a.mr.SGE(1000, 1000), a.mr.SGE(2000, 1000)}})
	if err != nil {
		t.Fatal(err)
	}
	if wc := waitWC(t, a); wc.Err() != nil || wc.Opcode != WCRDMAWrite {
		t.Fatalf("write completion %+v", wc)
	}
	if !bytes.Equal(bb[4096:4096+3000], ab[:3000]) {
		t.Fatal("RDMA WRITE data differs")
	}
	err = a.qp.PostSend(SendWR{ID: 3, Opcode: WRRDMARead, Flags: SendSignaled, RemoteAddr: b.mr.Addr() + 4096,
		RKey: b.mr.RKey(), SGEs: []SGE{a.mr.SGE(8192, 3000)}})
	if err != nil {
		t.Fatal(err)
	}
	if wc := waitWC(t, a); wc.Err() != nil || wc.Opcode != WCRDMARead || wc.ByteLen != 3000 {
		t.Fatalf("read completion %+v", wc)
	}
	if !bytes.Equal(ab[8192:8192+3000], ab[:3000]) {
		t.Fatal("RDMA READ data differs")
	}

	// Many writers at once on one QP, one poller; the slots keep the
	// send queue from overflowing.
	const writers, each = 4, 50
	slots := make(chan struct{}, 48)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				slots <- struct{}{}
				err := a.qp.PostSend(SendWR{ID: uint64(1000 + w*each + i), Opcode: WRRDMAWrite, Flags: SendSignaled,
					RemoteAddr: b.mr.Addr() + uint64(w*256), RKey: b.mr.RKey(), SGEs: []SGE{a.mr.SGE(w*256, 256)}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	seen := map[uint64]bool{}
	wcs := make([]WorkCompletion, 16)
	deadline := time.Now().Add(60 * time.Second)
	for len(seen) < writers*each && time.Now().Before(deadline) {
		n, err := a.cq.Poll(wcs)
		if err != nil {
			t.Fatal(err)
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				t.Fatal(err)
			}
			if seen[wc.ID] {
				t.Fatalf("completion %d twice", wc.ID)
			}
			seen[wc.ID] = true
			<-slots
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
	}
	wg.Wait()
	if len(seen) != writers*each {
		t.Fatalf("%d of %d concurrent writes completed", len(seen), writers*each)
	}
	t.Logf("%d concurrent writes completed", len(seen))
	if len(seen) == 0 {
		t.Fatal("no concurrent write completed")
	}
}

func TestDeviceErrors(t *testing.T) {
	d0, d1, gidx := testDevices(t)
	a, b := openSide(t, d0, gidx, 16), openSide(t, d1, gidx, 16)
	connectSides(t, a, b)

	// A request with more SGEs than the QP allows is refused at posting,
	// and the error names it; the one before it was posted.
	sges := make([]SGE, a.qp.Cap().MaxSendSGE+1)
	for i := range sges {
		sges[i] = a.mr.SGE(i, 1)
	}
	err := a.qp.PostSend(
		SendWR{ID: 10, Opcode: WRRDMAWrite, Flags: SendSignaled, RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey(), SGEs: []SGE{a.mr.SGE(0, 8)}},
		SendWR{ID: 11, Opcode: WRRDMAWrite, Flags: SendSignaled, RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey(), SGEs: sges},
	)
	var pe *PostError
	if !errors.As(err, &pe) || pe.Index != 1 || pe.WRID != 11 || pe.Op != "ibv_post_send" {
		t.Fatalf("PostSend with too many SGEs: %v", err)
	}
	if wc := waitWC(t, a); wc.Err() != nil || wc.ID != 10 {
		t.Fatalf("the valid request: %+v", wc)
	}

	// A write with a wrong rkey fails remotely: a typed completion error
	// on the requester, the QP goes to the error state, and what was posted
	// after it is flushed.
	evctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	events := make(chan AsyncEvent, 4)
	go func() {
		for {
			ev, err := b.ctx.GetAsyncEvent(evctx)
			if err != nil {
				close(events)
				return
			}
			events <- ev
		}
	}()
	err = a.qp.PostSend(
		SendWR{ID: 20, Opcode: WRRDMAWrite, Flags: SendSignaled, RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey() ^ 0x5a5a00, SGEs: []SGE{a.mr.SGE(0, 64)}},
		SendWR{ID: 21, Opcode: WRRDMAWrite, Flags: SendSignaled, RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey(), SGEs: []SGE{a.mr.SGE(0, 64)}},
	)
	if err != nil {
		t.Fatal(err)
	}
	wc := waitWC(t, a)
	var wce *WCError
	if !errors.As(wc.Err(), &wce) || wc.ID != 20 || wc.Status != WCRemAccessErr {
		t.Fatalf("bad rkey: completion %+v, err %v", wc, wc.Err())
	}
	t.Logf("typed completion error: %v", wc.Err())
	if wc := waitWC(t, a); wc.ID != 21 || wc.Status != WCWRFlushErr {
		t.Fatalf("after the error: %+v", wc)
	}
	if st, err := a.qp.State(); err != nil || st != QPStateErr {
		t.Fatalf("requester QP state %v, %v", st, err)
	}
	// Some providers also report the access violation to the responder as
	// an async event (rxe does not); if one comes, it must be typed.
	select {
	case ev, ok := <-events:
		if !ok {
			t.Log("no async event on the responder")
			break
		}
		var ae *AsyncError
		if !errors.As(ev.Err(), &ae) || ev.QP != b.qp || ev.QPNum != b.qp.Num() {
			t.Fatalf("async event %+v: %v", ev, ev.Err())
		}
		t.Logf("typed async error: %v", ev.Err())
	case <-evctx.Done():
		t.Log("no async event on the responder")
	}
}

func TestDeviceClose(t *testing.T) {
	d0, _, gidx := testDevices(t)
	s := openSide(t, d0, gidx, 8)
	// A PD with a QP and an MR cannot go first...
	if err := s.pd.Close(); err == nil {
		t.Fatal("PD closed under its QP and MR")
	}
	// ...and an MR keeps its memory mapped.
	if err := s.mem.Close(); err == nil {
		t.Fatal("memory unmapped under its MR")
	}
	// A waiter on the channel is released by Close.
	done := make(chan error, 1)
	go func() { _, err := s.ch.Wait(context.Background()); done <- err }()
	time.Sleep(100 * time.Millisecond)
	// Closing the context closes everything, newest first.
	if err := s.ctx.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != ErrClosed {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("waiter not released by Close")
	}
	if err := s.qp.PostSend(SendWR{}); err != ErrClosed {
		t.Fatalf("PostSend after Close: %v", err)
	}
	if _, err := s.cq.Poll(make([]WorkCompletion, 1)); err != ErrClosed {
		t.Fatalf("Poll after Close: %v", err)
	}
	if _, err := s.ctx.QueryPort(1); err != ErrClosed {
		t.Fatalf("QueryPort after Close: %v", err)
	}
	if err := s.mem.Close(); err != nil {
		t.Fatalf("memory after its MR closed: %v", err)
	}
	if err := s.ctx.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Taking the device's net device down and up raises a port error event
// (typed) and then a port active event. Needs IBTOOL_VERBS_TEST_NETDEV, the
// net device under the second test device, and root.
func TestDeviceAsyncPortEvents(t *testing.T) {
	_, d1, _ := testDevices(t)
	netdev := os.Getenv("IBTOOL_VERBS_TEST_NETDEV")
	if netdev == "" {
		t.Skip("set IBTOOL_VERBS_TEST_NETDEV to the net device under " + d1)
	}
	ipTool := os.Getenv("IBTOOL_VERBS_TEST_IP")
	if ipTool == "" {
		ipTool = "ip"
	}
	ctx, err := Open(d1)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	link := func(state string) {
		t.Helper()
		if out, err := exec.Command(ipTool, "link", "set", netdev, state).CombinedOutput(); err != nil {
			t.Fatalf("ip link set %s %s: %v %s", netdev, state, err, out)
		}
	}
	await := func(want EventType) AsyncEvent {
		t.Helper()
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for {
			ev, err := ctx.GetAsyncEvent(wctx)
			if err != nil {
				t.Fatalf("waiting for %v: %v", want, err)
			}
			t.Logf("event: %v port %d", ev.Type, ev.Port)
			if ev.Type == want {
				return ev
			}
		}
	}
	link("down")
	defer link("up")
	ev := await(EventPortErr)
	var ae *AsyncError
	if !errors.As(ev.Err(), &ae) || ev.Port != 1 {
		t.Fatalf("port error event %+v: %v", ev, ev.Err())
	}
	t.Logf("typed async error: %v", ev.Err())
	link("up")
	if ev := await(EventPortActive); ev.Err() != nil || ev.Port != 1 {
		t.Fatalf("port active event %+v: %v", ev, ev.Err())
	}
	for range 100 {
		if pa, err := ctx.QueryPort(1); err == nil && pa.State == PortActive {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("port did not come back")
}
