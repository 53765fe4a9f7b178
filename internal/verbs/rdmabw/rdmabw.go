// Package rdmabw is the engine of ibtool rdma_bw: an RDMA WRITE bandwidth
// test over one RC queue pair between a server and a client, which swap
// their QP, memory region and GID details over a TCP connection first.
package rdmabw

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/internal/verbs"
)

// Defaults, as in python-rdma's rdma_bw.
const (
	DefaultTCPPort = 4444
	DefaultSize    = 1 << 20
	DefaultTxDepth = 100
	DefaultIters   = 1000
	DefaultNumSGE  = 1
)

// MB is perftest's megabyte for bandwidth figures (MB/sec = 2^20 bytes/s).
const MB = 1 << 20

// Config is one side's test setup.
type Config struct {
	Device   string // RDMA device, "" for the first one
	Port     int    // device port, 1 when 0
	GIDIndex int    // source GID index; -1: none on InfiniBand, 0 on Ethernet (RoCE)
	Size     int    // bytes per RDMA WRITE (the client's value counts)
	Iters    int    // number of writes (the client's value counts)
	TxDepth  int    // writes in flight
	NumSGE   int    // scatter/gather elements per write
	TCPPort  int    // TCP port of the exchange
	Server   string // server address: client mode when set
	Listen   string // server: address to listen on ("" = all)
	// Stall fails the test when no write completes for this long
	// (default 30 s).
	Stall time.Duration
	// Logf, when set, receives progress lines.
	Logf func(format string, args ...any)
}

// Result is what one side reports.
type Result struct {
	Role      string   `json:"role"` // "client" or "server"
	Device    string   `json:"device"`
	Port      int      `json:"port"`
	LinkLayer string   `json:"link_layer"`
	GIDIndex  int      `json:"gid_index"` // -1: no GRH
	Size      int      `json:"msg_size_bytes"`
	Iters     int      `json:"iterations"`
	TxDepth   int      `json:"tx_depth"`
	NumSGE    int      `json:"num_sge"`
	MTU       int      `json:"path_mtu_bytes"`
	Bytes     uint64   `json:"bytes"`   // bytes written (size * completed writes)
	Seconds   float64  `json:"-"`       // first post to last completion, on the client
	TimeMS    float64  `json:"time_ms"` // the same in milliseconds
	BWAverage float64  `json:"bw_average_mb_per_sec"`
	MsgRate   float64  `json:"msg_rate_mpps"`
	BytesPerS float64  `json:"bytes_per_second"`
	Verified  bool     `json:"verified"` // the server found the client's data in its buffer
	Checked   uint64   `json:"verified_bytes"`
	Local     Endpoint `json:"local_qp"`
	Remote    Endpoint `json:"remote_qp"`
	LocalGID  string   `json:"local_gid,omitempty"`
	RemoteGID string   `json:"remote_gid,omitempty"`
}

func (c *Config) normalize() error {
	if c.Port == 0 {
		c.Port = 1
	}
	if c.Size == 0 {
		c.Size = DefaultSize
	}
	if c.Iters == 0 {
		c.Iters = DefaultIters
	}
	if c.TxDepth == 0 {
		c.TxDepth = DefaultTxDepth
	}
	if c.NumSGE == 0 {
		c.NumSGE = DefaultNumSGE
	}
	if c.TCPPort == 0 {
		c.TCPPort = DefaultTCPPort
	}
	if c.Stall == 0 {
		c.Stall = 30 * time.Second
	}
	switch {
	case c.Port < 1 || c.Port > 255:
		return fmt.Errorf("invalid port %d", c.Port)
	case c.Size < 1:
		return fmt.Errorf("invalid size %d", c.Size)
	case c.Iters < 1:
		return fmt.Errorf("invalid number of iterations %d", c.Iters)
	case c.TxDepth < 1:
		return fmt.Errorf("invalid tx depth %d", c.TxDepth)
	case c.NumSGE < 1 || c.NumSGE > c.Size:
		return fmt.Errorf("invalid number of SGEs %d (1 to the message size)", c.NumSGE)
	case c.TCPPort < 1 || c.TCPPort > 65535:
		return fmt.Errorf("invalid TCP port %d", c.TCPPort)
	case c.GIDIndex < -1 || c.GIDIndex > 255:
		return fmt.Errorf("invalid GID index %d", c.GIDIndex)
	}
	return nil
}

func (c *Config) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Run runs the test as client when cfg.Server is set, as server otherwise.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	if err := verbs.Load(); err != nil {
		return nil, err
	}
	if cfg.Server != "" {
		return runClient(ctx, &cfg)
	}
	return runServer(ctx, &cfg)
}

// endpoint is one side's verbs resources.
type endpoint struct {
	ctx      *verbs.Context
	port     uint8
	pattr    verbs.PortAttr
	gidIndex int
	gid      verbs.GID
	ch       *verbs.CompChannel
	cq       *verbs.CQ
	pd       *verbs.PD
	mem      *verbs.Memory
	mr       *verbs.MR
	qp       *verbs.QP
	psn      uint32
}

func openEndpoint(cfg *Config, size int) (ep *endpoint, err error) {
	ctx, err := verbs.Open(cfg.Device)
	if err != nil {
		return nil, err
	}
	ep = &endpoint{ctx: ctx, port: uint8(cfg.Port), gidIndex: cfg.GIDIndex}
	defer func() {
		if err != nil {
			ep.close()
			ep = nil
		}
	}()
	name := ctx.Name()
	if ep.pattr, err = ctx.QueryPort(ep.port); err != nil {
		return nil, fmt.Errorf("%s port %d: %w", name, ep.port, err)
	}
	if ep.pattr.State != verbs.PortActive {
		return nil, fmt.Errorf("%s port %d is %v, not active", name, ep.port, ep.pattr.State)
	}
	if ep.gidIndex < 0 && ep.pattr.LinkLayer == verbs.LinkLayerEthernet {
		ep.gidIndex = 0 // RoCE always needs a GRH; perftest's default
	}
	if ep.gidIndex >= 0 {
		if ep.gidIndex >= ep.pattr.GIDTblLen {
			return nil, fmt.Errorf("%s port %d: GID index %d outside the %d-entry table", name, ep.port, ep.gidIndex, ep.pattr.GIDTblLen)
		}
		if ep.gid, err = ctx.QueryGID(ep.port, ep.gidIndex); err != nil {
			return nil, fmt.Errorf("%s port %d GID %d: %w", name, ep.port, ep.gidIndex, err)
		}
		if ep.gid == (verbs.GID{}) {
			return nil, fmt.Errorf("%s port %d: GID index %d is empty", name, ep.port, ep.gidIndex)
		}
	}
	if ep.ch, err = ctx.CreateCompChannel(); err != nil {
		return nil, err
	}
	if ep.cq, err = ctx.CreateCQ(2*cfg.TxDepth, ep.ch, 0); err != nil {
		return nil, err
	}
	if ep.pd, err = ctx.AllocPD(); err != nil {
		return nil, err
	}
	if ep.mem, err = verbs.AllocMemory(size); err != nil {
		return nil, err
	}
	if ep.mr, err = ep.pd.RegMR(ep.mem, verbs.AccessLocalWrite|verbs.AccessRemoteWrite); err != nil {
		return nil, err
	}
	ep.qp, err = ep.pd.CreateQP(verbs.QPInitAttr{
		Type: verbs.QPTypeRC, SendCQ: ep.cq, RecvCQ: ep.cq,
		Cap: verbs.QPCap{MaxSendWR: uint32(cfg.TxDepth), MaxRecvWR: 1, MaxSendSGE: uint32(cfg.NumSGE), MaxRecvSGE: 1},
	})
	if err != nil {
		return nil, err
	}
	if err = ep.qp.ToInit(ep.port, verbs.AccessRemoteWrite, 0); err != nil {
		return nil, err
	}
	ep.psn = rand.Uint32() & 0xffffff
	return ep, nil
}

func (ep *endpoint) info() Endpoint {
	return Endpoint{LID: ep.pattr.LID, QPN: ep.qp.Num(), PSN: ep.psn, GID: ep.gid, MTU: ep.pattr.ActiveMTU,
		RKey: ep.mr.RKey(), Addr: ep.mr.Addr(), Len: uint64(ep.mr.Len())}
}

// connect takes the QP through RTR to RTS towards the peer.
func (ep *endpoint) connect(peer Endpoint) (verbs.MTU, error) {
	mtu := min(ep.pattr.ActiveMTU, peer.MTU)
	ah := verbs.AHAttr{DLID: peer.LID, Port: ep.port}
	if ep.gidIndex >= 0 {
		ah.IsGlobal = true
		ah.GRH = verbs.GlobalRoute{DGID: peer.GID, SGIDIndex: uint8(ep.gidIndex), HopLimit: 64}
	}
	err := ep.qp.ToRTR(verbs.RTR{PathMTU: mtu, DestQPN: peer.QPN, RQPSN: peer.PSN, AH: ah, MaxDestRdAtomic: 1, MinRNRTimer: 12})
	if err != nil {
		return 0, err
	}
	err = ep.qp.ToRTS(verbs.RTS{SQPSN: ep.psn, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1})
	return mtu, err
}

func (ep *endpoint) close() {
	if ep.ctx != nil {
		ep.ctx.Close() // closes QP, MR, PD, CQ, channel in reverse order
	}
	if ep.mem != nil {
		ep.mem.Close()
	}
}

// pattern fills or checks b with the data a test with seed writes.
func pattern(b []byte, seed uint32, check bool) bool {
	x := seed | 1
	for i := range b {
		x = x*1664525 + 1013904223
		v := byte(x >> 24)
		if check {
			if b[i] != v {
				return false
			}
		} else {
			b[i] = v
		}
	}
	return true
}

func (ep *endpoint) result(role string, cfg *Config, mtu verbs.MTU, peer Endpoint) *Result {
	r := &Result{
		Role: role, Device: ep.ctx.Name(), Port: int(ep.port), LinkLayer: ep.pattr.LinkLayer.String(),
		GIDIndex: ep.gidIndex, Size: cfg.Size, Iters: cfg.Iters, TxDepth: cfg.TxDepth, NumSGE: cfg.NumSGE,
		MTU: mtu.Bytes(), Local: ep.info(), Remote: peer,
	}
	if ep.gidIndex >= 0 {
		r.LocalGID, r.RemoteGID = ep.gid.String(), peer.GID.String()
	}
	return r
}

// setRate fills the bandwidth figures from bytes and elapsed time.
func (r *Result) setRate(completed uint64, d time.Duration) {
	r.Bytes = completed * uint64(r.Size)
	r.Seconds = d.Seconds()
	r.TimeMS = r.Seconds * 1000
	r.BytesPerS, r.BWAverage, r.MsgRate = 0, 0, 0
	if r.Seconds > 0 {
		r.BytesPerS = float64(r.Bytes) / r.Seconds
		r.BWAverage = r.BytesPerS / MB
		r.MsgRate = float64(completed) / r.Seconds / 1e6
	}
}

const exchangeTimeout = 30 * time.Second

func runClient(ctx context.Context, cfg *Config) (*Result, error) {
	ep, err := openEndpoint(cfg, cfg.Size)
	if err != nil {
		return nil, err
	}
	defer ep.close()
	seed := rand.Uint32()
	pattern(ep.mem.Bytes(), seed, false)

	addr := net.JoinHostPort(cfg.Server, strconv.Itoa(cfg.TCPPort))
	conn, err := dialRetry(ctx, addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetDeadline(time.Now().Add(exchangeTimeout))

	me := hello{Size: uint64(cfg.Size), Iters: uint64(cfg.Iters), NumSGE: uint32(cfg.NumSGE), Seed: seed, Ep: ep.info()}
	if err := writeFrame(conn, msgHello, me.marshal()); err != nil {
		return nil, fmt.Errorf("exchange with %s: %w", addr, err)
	}
	var peer hello
	if err := readHello(conn, &peer); err != nil {
		return nil, fmt.Errorf("exchange with %s: %w", addr, err)
	}
	if peer.Ep.Len < uint64(cfg.Size) {
		return nil, fmt.Errorf("server buffer of %d bytes is smaller than the %d-byte message", peer.Ep.Len, cfg.Size)
	}
	mtu, err := ep.connect(peer.Ep)
	if err != nil {
		return nil, err
	}
	if _, err := readFrame(conn, msgReady); err != nil {
		return nil, fmt.Errorf("exchange with %s: %w", addr, err)
	}
	res := ep.result("client", cfg, mtu, peer.Ep)
	cfg.logf("%d iterations of %d is %d bytes", cfg.Iters, cfg.Size, uint64(cfg.Iters)*uint64(cfg.Size))

	conn.SetDeadline(time.Time{})
	completed, elapsed, runErr := ep.writeLoop(ctx, cfg, peer.Ep)
	res.setRate(completed, elapsed)

	conn.SetDeadline(time.Now().Add(exchangeTimeout))
	d := done{OK: runErr == nil, Completed: completed, Nanos: uint64(elapsed)}
	if runErr != nil {
		d.Message = runErr.Error()
	}
	if err := writeFrame(conn, msgDone, d.marshal()); err != nil && runErr == nil {
		return nil, fmt.Errorf("exchange with %s: %w", addr, err)
	}
	if runErr != nil {
		return res, runErr
	}
	vb, err := readFrame(conn, msgVerdict)
	if err != nil {
		return res, fmt.Errorf("exchange with %s: %w", addr, err)
	}
	var v verdict
	if err := v.unmarshal(vb); err != nil {
		return res, err
	}
	res.Verified, res.Checked = v.OK, v.Checked
	if !v.OK {
		return res, errors.New("the server's buffer does not hold the data written")
	}
	return res, nil
}

func dialRetry(ctx context.Context, addr string, patience time.Duration) (net.Conn, error) {
	end := time.Now().Add(patience)
	var d net.Dialer
	for {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return conn, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(end) || ctx.Err() != nil {
			return nil, fmt.Errorf("connect to rdma_bw server: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readHello(conn net.Conn, h *hello) error {
	b, err := readFrame(conn, msgHello)
	if err != nil {
		return err
	}
	return h.unmarshal(b)
}

func runServer(ctx context.Context, cfg *Config) (*Result, error) {
	laddr := net.JoinHostPort(cfg.Listen, strconv.Itoa(cfg.TCPPort))
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", laddr)
	if err != nil {
		return nil, err
	}
	stopLn := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopLn()
	cfg.logf("Listening on port %d for QP setup.", cfg.TCPPort)
	conn, err := ln.Accept()
	ln.Close()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetDeadline(time.Now().Add(exchangeTimeout))

	var peer hello
	if err := readHello(conn, &peer); err != nil {
		return nil, fmt.Errorf("exchange with %s: %w", conn.RemoteAddr(), err)
	}
	if peer.Size == 0 || peer.Size > 1<<40 || peer.Iters == 0 || peer.NumSGE == 0 {
		return nil, fmt.Errorf("client asked for an invalid test (size %d, %d iterations)", peer.Size, peer.Iters)
	}
	// The client's test parameters count.
	cfg.Size, cfg.Iters, cfg.NumSGE = int(peer.Size), int(peer.Iters), int(peer.NumSGE)
	ep, err := openEndpoint(cfg, cfg.Size)
	if err != nil {
		// Tell the client why, then fail.
		writeFrame(conn, msgDone, (&done{Message: err.Error()}).marshal())
		return nil, err
	}
	defer ep.close()
	me := hello{Size: peer.Size, Iters: peer.Iters, NumSGE: peer.NumSGE, Ep: ep.info()}
	if err := writeFrame(conn, msgHello, me.marshal()); err != nil {
		return nil, err
	}
	mtu, err := ep.connect(peer.Ep)
	if err != nil {
		writeFrame(conn, msgDone, (&done{Message: err.Error()}).marshal())
		return nil, err
	}
	if err := writeFrame(conn, msgReady, nil); err != nil {
		return nil, err
	}
	res := ep.result("server", cfg, mtu, peer.Ep)
	cfg.logf("%d iterations of %d is %d bytes", cfg.Iters, cfg.Size, uint64(cfg.Iters)*uint64(cfg.Size))

	// The writes land without involving this side; wait for the report.
	conn.SetDeadline(time.Time{})
	db, err := readFrame(conn, msgDone)
	if err != nil {
		return res, fmt.Errorf("exchange with %s: %w", conn.RemoteAddr(), err)
	}
	var d done
	if err := d.unmarshal(db); err != nil {
		return res, err
	}
	res.setRate(d.Completed, time.Duration(d.Nanos))
	if !d.OK {
		return res, fmt.Errorf("client failed: %s", d.Message)
	}
	ok := d.Completed == uint64(cfg.Iters) && pattern(ep.mem.Bytes(), peer.Seed, true)
	res.Verified, res.Checked = ok, uint64(cfg.Size)
	conn.SetDeadline(time.Now().Add(exchangeTimeout))
	if err := writeFrame(conn, msgVerdict, (&verdict{OK: ok, Checked: uint64(cfg.Size)}).marshal()); err != nil {
		return res, err
	}
	if !ok {
		return res, errors.New("the buffer does not hold the data the client wrote")
	}
	return res, nil
}

// writeLoop posts cfg.Iters RDMA WRITEs of the whole buffer, at most
// TxDepth in flight, and waits for them. Only every sig-th request asks for
// a completion (an RC completion also covers the requests before it). It
// polls the CQ and, when nothing comes for a while, arms it and sleeps on
// the completion channel. Asynchronous error events end the test.
func (ep *endpoint) writeLoop(ctx context.Context, cfg *Config, peer Endpoint) (uint64, time.Duration, error) {
	sges := splitSGEs(ep.mr, cfg.Size, cfg.NumSGE)
	iters, depth := cfg.Iters, min(cfg.TxDepth, int(ep.qp.Cap().MaxSendWR))
	sig := max(1, depth/2)

	// Async error events stop the loop.
	var asyncErr error
	var asyncMu sync.Mutex
	actx, cancelAsync := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			ev, err := ep.ctx.GetAsyncEvent(actx)
			if err != nil {
				return
			}
			if e := ev.Err(); e != nil {
				asyncMu.Lock()
				asyncErr = e
				asyncMu.Unlock()
				return
			}
		}
	}()
	defer func() { cancelAsync(); wg.Wait() }()
	failed := func() error {
		asyncMu.Lock()
		defer asyncMu.Unlock()
		return asyncErr
	}

	wcs := make([]verbs.WorkCompletion, 16)
	batch := make([]verbs.SendWR, 0, 32)
	posted, completed := 0, 0
	spins := 0
	const spinLimit = 2000
	start := time.Now()
	last := start
	for completed < iters {
		for posted < iters && posted-completed < depth {
			n := min(depth-(posted-completed), iters-posted, cap(batch))
			batch = batch[:0]
			for k := range n {
				id := posted + k
				wr := verbs.SendWR{ID: uint64(id), Opcode: verbs.WRRDMAWrite, SGEs: sges, RemoteAddr: peer.Addr, RKey: peer.RKey}
				if (id+1)%sig == 0 || id+1 == iters {
					wr.Flags = verbs.SendSignaled
				}
				batch = append(batch, wr)
			}
			if err := ep.qp.PostSend(batch...); err != nil {
				return uint64(completed), time.Since(start), err
			}
			posted += n
		}
		n, err := ep.cq.Poll(wcs)
		if err != nil {
			return uint64(completed), time.Since(start), err
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return uint64(completed), time.Since(start), err
			}
			completed = max(completed, int(wc.ID)+1)
		}
		if n > 0 {
			spins, last = 0, time.Now()
			continue
		}
		if spins++; spins < spinLimit {
			continue
		}
		spins = 0
		if err := failed(); err != nil {
			return uint64(completed), time.Since(start), err
		}
		if err := ctx.Err(); err != nil {
			return uint64(completed), time.Since(start), err
		}
		if time.Since(last) > cfg.Stall {
			return uint64(completed), time.Since(start),
				fmt.Errorf("no completion for %v: %d of %d writes done", cfg.Stall, completed, iters)
		}
		// Nothing for a while: arm the CQ, poll once more for what came
		// before arming, then sleep until the channel fires.
		if err := ep.cq.ReqNotify(false); err != nil {
			return uint64(completed), time.Since(start), err
		}
		if n, err = ep.cq.Poll(wcs[:1]); err != nil {
			return uint64(completed), time.Since(start), err
		} else if n > 0 {
			if err := wcs[0].Err(); err != nil {
				return uint64(completed), time.Since(start), err
			}
			completed = max(completed, int(wcs[0].ID)+1)
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err = ep.cq.Wait(wctx)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return uint64(completed), time.Since(start), err
		}
	}
	return uint64(completed), time.Since(start), nil
}

// splitSGEs cuts the first size bytes of mr into n nearly equal pieces.
func splitSGEs(mr *verbs.MR, size, n int) []verbs.SGE {
	sges := make([]verbs.SGE, 0, n)
	off := 0
	for _, l := range splitLengths(size, n) {
		sges = append(sges, mr.SGE(off, l))
		off += l
	}
	return sges
}

// splitLengths cuts size into n lengths that differ by at most one, the
// longer ones first.
func splitLengths(size, n int) []int {
	ls := make([]int, n)
	for i := range ls {
		ls[i] = size / n
		if i < size%n {
			ls[i]++
		}
	}
	return ls
}
