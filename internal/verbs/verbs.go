package verbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// handle is a pointer to a libibverbs object (C memory).
type handle = unsafe.Pointer

// DefaultLibrary is the name dlopen is given unless IBTOOL_LIBIBVERBS says
// otherwise.
const DefaultLibrary = "libibverbs.so.1"

// LibraryEnv names the environment variable that overrides DefaultLibrary.
const LibraryEnv = "IBTOOL_LIBIBVERBS"

var (
	loadOnce sync.Once
	loadErr  error
)

// LibraryName is the library Load opens.
func LibraryName() string {
	if v := os.Getenv(LibraryEnv); v != "" {
		return v
	}
	return DefaultLibrary
}

// Load opens libibverbs and resolves its functions, once per process. Every
// other entry point calls it; callers use it to find out early whether verbs
// are usable. The error is an *UnavailableError.
func Load() error {
	loadOnce.Do(func() { loadErr = cLoad(LibraryName()) })
	return loadErr
}

// Devices lists the RDMA devices. A kernel without RDMA support (no uverbs)
// gives an empty list, not an error.
func Devices() ([]Device, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	return cDeviceList()
}

// resource is the close-once, use-while-open guard every object embeds.
// Operations hold the read lock for the length of the C call; Close takes
// the write lock, so it waits for calls in progress and later calls get
// ErrClosed.
type resource struct {
	mu     sync.RWMutex
	closed bool
}

// acquire read-locks r and fails with ErrClosed if it was closed; on success
// the caller must call r.mu.RUnlock.
func (r *resource) acquire() error {
	r.mu.RLock()
	if r.closed {
		r.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// isClosed reports whether Close has run (a hint, for wait loops).
func (r *resource) isClosed() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.closed
}

// closeWith runs release under the write lock unless the object is closed
// already; the object counts as closed once release succeeded.
func (r *resource) closeWith(release func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if err := release(); err != nil {
		return err
	}
	r.closed = true
	return nil
}

type closer interface{ Close() error }

// Context is an open device (struct ibv_context).
type Context struct {
	resource
	h              handle
	dev            Device
	asyncFD        int
	numCompVectors int

	objMu    sync.Mutex
	children []closer // in creation order
	qps      map[handle]*QP
	cqs      map[handle]*CQ
}

// Open opens the device with the given name ("" for the first device).
func Open(name string) (*Context, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	h, dev, asyncFD, nvec, err := cOpenDevice(name)
	if err != nil {
		return nil, err
	}
	// Non-blocking, so a wait can be abandoned when the Context closes.
	if err := unix.SetNonblock(asyncFD, true); err != nil {
		cCloseDevice(h)
		return nil, fmt.Errorf("%s: async event fd: %w", dev.Name, err)
	}
	return &Context{h: h, dev: dev, asyncFD: asyncFD, numCompVectors: nvec,
		qps: map[handle]*QP{}, cqs: map[handle]*CQ{}}, nil
}

// Device describes the opened device.
func (c *Context) Device() Device { return c.dev }

// Name is the device name.
func (c *Context) Name() string { return c.dev.Name }

// NumCompVectors is the number of completion vectors (for CreateCQ).
func (c *Context) NumCompVectors() int { return c.numCompVectors }

func (c *Context) track(o closer) {
	c.objMu.Lock()
	c.children = append(c.children, o)
	switch v := o.(type) {
	case *QP:
		c.qps[v.h] = v
	case *CQ:
		c.cqs[v.h] = v
	}
	c.objMu.Unlock()
}

func (c *Context) forget(o closer) {
	c.objMu.Lock()
	for i, x := range c.children {
		if x == o {
			c.children = append(c.children[:i], c.children[i+1:]...)
			break
		}
	}
	switch v := o.(type) {
	case *QP:
		delete(c.qps, v.h)
	case *CQ:
		delete(c.cqs, v.h)
	}
	c.objMu.Unlock()
}

// Close closes everything still open under the context, newest first, then
// the device. The first error is returned; closing again does nothing.
func (c *Context) Close() error {
	c.objMu.Lock()
	kids := append([]closer(nil), c.children...)
	c.objMu.Unlock()
	var first error
	for i := len(kids) - 1; i >= 0; i-- {
		if err := kids[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	err := c.closeWith(func() error { return cCloseDevice(c.h) })
	if first == nil {
		first = err
	}
	return first
}

// QueryDevice returns the device attributes (ibv_query_device).
func (c *Context) QueryDevice() (DeviceAttr, error) {
	if err := c.acquire(); err != nil {
		return DeviceAttr{}, err
	}
	defer c.mu.RUnlock()
	return cQueryDevice(c.h)
}

// QueryDeviceEx returns the extended device attributes
// (ibv_query_device_ex); providers without the extended query give the
// basic attributes and zeros.
func (c *Context) QueryDeviceEx() (DeviceAttrEx, error) {
	if err := c.acquire(); err != nil {
		return DeviceAttrEx{}, err
	}
	defer c.mu.RUnlock()
	return cQueryDeviceEx(c.h)
}

// QueryPort returns a port's attributes (ibv_query_port); ports count from 1.
func (c *Context) QueryPort(port uint8) (PortAttr, error) {
	if err := c.acquire(); err != nil {
		return PortAttr{}, err
	}
	defer c.mu.RUnlock()
	return cQueryPort(c.h, port)
}

// QueryGID returns one GID table entry (ibv_query_gid). Unused entries are
// all zeros.
func (c *Context) QueryGID(port uint8, index int) (GID, error) {
	if err := c.acquire(); err != nil {
		return GID{}, err
	}
	defer c.mu.RUnlock()
	return cQueryGID(c.h, port, index)
}

// QueryGIDEntry returns a GID table entry with its type and net device
// (ibv_query_gid_ex). With a libibverbs too old for that verb, the type
// comes from sysfs. An unused entry fails with ENODATA.
func (c *Context) QueryGIDEntry(port uint8, index int) (GIDEntry, error) {
	if err := c.acquire(); err != nil {
		return GIDEntry{}, err
	}
	defer c.mu.RUnlock()
	e, supported, err := cQueryGIDEx(c.h, uint32(port), uint32(index))
	if supported {
		return e, err
	}
	gid, err := cQueryGID(c.h, port, index)
	if err != nil {
		return GIDEntry{}, err
	}
	if gid == (GID{}) {
		return GIDEntry{}, errnoErr("ibv_query_gid_ex", syscall.ENODATA)
	}
	e = GIDEntry{GID: gid, Index: uint32(index), Port: uint32(port)}
	b, err := os.ReadFile(filepath.Join(c.dev.IBDevPath, "ports", fmt.Sprint(port), "gid_attrs", "types", fmt.Sprint(index)))
	switch t := strings.TrimSpace(string(b)); {
	case err != nil || t == "IB/RoCE v1":
		if pa, perr := cQueryPort(c.h, port); perr == nil && pa.LinkLayer == LinkLayerEthernet {
			e.Type = GIDTypeRoCEv1
		}
	case t == "RoCE v2":
		e.Type = GIDTypeRoCEv2
	}
	return e, nil
}

// QueryPKey returns one P_Key table entry (ibv_query_pkey), in host order.
func (c *Context) QueryPKey(port uint8, index int) (uint16, error) {
	if err := c.acquire(); err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	return cQueryPKey(c.h, port, index)
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	if err := c.acquire(); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	h, err := cAllocPD(c.h)
	if err != nil {
		return nil, err
	}
	pd := &PD{h: h, ctx: c}
	c.track(pd)
	return pd, nil
}

// CreateCompChannel creates a completion event channel.
func (c *Context) CreateCompChannel() (*CompChannel, error) {
	if err := c.acquire(); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	h, fd, err := cCreateCompChannel(c.h)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		cDestroyCompChannel(h)
		return nil, fmt.Errorf("completion channel: %w", err)
	}
	ch := &CompChannel{h: h, fd: fd, ctx: c}
	c.track(ch)
	return ch, nil
}

// CreateCQ creates a completion queue for at least cqe entries. ch may be
// nil (no events); vector picks the completion vector (0 ..
// NumCompVectors-1).
func (c *Context) CreateCQ(cqe int, ch *CompChannel, vector int) (*CQ, error) {
	if err := c.acquire(); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	var chh handle
	if ch != nil {
		if err := ch.acquire(); err != nil {
			return nil, err
		}
		defer ch.mu.RUnlock()
		chh = ch.h
	}
	h, actual, err := cCreateCQ(c.h, cqe, chh, vector)
	if err != nil {
		return nil, err
	}
	cq := &CQ{h: h, ctx: c, ch: ch, cqe: actual, scratch: cNewPollScratch()}
	c.track(cq)
	return cq, nil
}

// GetAsyncEvent waits for the next asynchronous event (ibv_get_async_event)
// and acknowledges it. It returns ctx's error when ctx ends first and
// ErrClosed when the Context is closed.
func (c *Context) GetAsyncEvent(ctx context.Context) (AsyncEvent, error) {
	for {
		if err := waitReadable(ctx, c.asyncFD, &c.resource); err != nil {
			return AsyncEvent{}, err
		}
		if err := c.acquire(); err != nil {
			return AsyncEvent{}, err
		}
		typ, elem, port, err := cGetAsyncEvent(c.h)
		c.mu.RUnlock()
		if errors.Is(err, syscall.EAGAIN) {
			continue
		}
		if err != nil {
			return AsyncEvent{}, err
		}
		ev := AsyncEvent{Type: typ}
		c.objMu.Lock()
		switch typ.elementKind() {
		case 'q':
			if qp := c.qps[elem]; qp != nil {
				ev.QP, ev.QPNum = qp, qp.qpn
			}
		case 'c':
			ev.CQ = c.cqs[elem]
		case 'p':
			ev.Port = port
		}
		c.objMu.Unlock()
		return ev, nil
	}
}

// waitReadable waits until fd is readable, ctx ends or r closes. It wakes up
// every 50 ms to notice the last two.
func waitReadable(ctx context.Context, fd int, r *resource) error {
	for {
		if r.isClosed() {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		wait := 50 * time.Millisecond
		if dl, ok := ctx.Deadline(); ok {
			if left := time.Until(dl); left < wait {
				wait = max(left, time.Millisecond)
			}
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(wait/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("poll: %w", err)
		}
		if n > 0 {
			return nil
		}
	}
}

// PD is a protection domain.
type PD struct {
	resource
	h   handle
	ctx *Context
}

// Close deallocates the protection domain; its MRs and QPs must be closed
// first (ibv_dealloc_pd fails with EBUSY otherwise).
func (pd *PD) Close() error {
	err := pd.closeWith(func() error { return cDeallocPD(pd.h) })
	if err == nil {
		pd.ctx.forget(pd)
	}
	return err
}

// Memory is a buffer for memory regions, mapped outside the Go heap so the
// garbage collector never moves or frees it while the device uses it.
type Memory struct {
	mu     sync.Mutex
	mapped []byte // whole pages
	size   int
	refs   int // registered MRs
}

// AllocMemory maps size bytes of zeroed, page-aligned memory.
func AllocMemory(size int) (*Memory, error) {
	if size <= 0 {
		return nil, fmt.Errorf("memory size %d: must be positive", size)
	}
	page := os.Getpagesize()
	n := (size + page - 1) / page * page
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	return &Memory{mapped: b, size: size}, nil
}

// Bytes is the buffer (nil after Close).
func (m *Memory) Bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mapped == nil {
		return nil
	}
	return m.mapped[:m.size:m.size]
}

// Len is the buffer's size.
func (m *Memory) Len() int { return m.size }

// Close unmaps the memory. It fails while memory regions over it are
// registered.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mapped == nil {
		return nil
	}
	if m.refs > 0 {
		return fmt.Errorf("memory still registered in %d memory region(s)", m.refs)
	}
	err := unix.Munmap(m.mapped)
	m.mapped = nil
	return err
}

// MR is a registered memory region.
type MR struct {
	resource
	h          handle
	pd         *PD
	mem        *Memory
	off, n     int
	lkey, rkey uint32
}

// RegMR registers all of mem.
func (pd *PD) RegMR(mem *Memory, access Access) (*MR, error) {
	return pd.RegMRRange(mem, 0, mem.Len(), access)
}

// RegMRRange registers length bytes of mem from offset.
func (pd *PD) RegMRRange(mem *Memory, offset, length int, access Access) (*MR, error) {
	if err := pd.acquire(); err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	mem.mu.Lock()
	defer mem.mu.Unlock()
	if mem.mapped == nil {
		return nil, errors.New("register memory: memory is closed")
	}
	if offset < 0 || length <= 0 || offset+length > mem.size {
		return nil, fmt.Errorf("register memory: range [%d, %d) outside the %d-byte buffer", offset, offset+length, mem.size)
	}
	h, lkey, rkey, err := cRegMR(pd.h, unsafe.Pointer(&mem.mapped[offset]), length, access)
	if err != nil {
		return nil, err
	}
	mem.refs++
	mr := &MR{h: h, pd: pd, mem: mem, off: offset, n: length, lkey: lkey, rkey: rkey}
	pd.ctx.track(mr)
	return mr, nil
}

// LKey is the local key.
func (mr *MR) LKey() uint32 { return mr.lkey }

// RKey is the remote key a peer uses in RDMA requests.
func (mr *MR) RKey() uint32 { return mr.rkey }

// Addr is the region's start address, what a peer puts in RemoteAddr.
func (mr *MR) Addr() uint64 { return uint64(uintptr(unsafe.Pointer(&mr.mem.mapped[mr.off]))) }

// Len is the region's length.
func (mr *MR) Len() int { return mr.n }

// Bytes is the registered memory.
func (mr *MR) Bytes() []byte { return mr.mem.mapped[mr.off : mr.off+mr.n : mr.off+mr.n] }

// SGE describes length bytes of the region from offset.
func (mr *MR) SGE(offset, length int) SGE {
	return SGE{Addr: mr.Addr() + uint64(offset), Length: uint32(length), LKey: mr.lkey}
}

// Close deregisters the region; the Memory stays mapped.
func (mr *MR) Close() error {
	err := mr.closeWith(func() error {
		if err := cDeregMR(mr.h); err != nil {
			return err
		}
		mr.mem.mu.Lock()
		mr.mem.refs--
		mr.mem.mu.Unlock()
		return nil
	})
	if err == nil {
		mr.pd.ctx.forget(mr)
	}
	return err
}

// CompChannel is a completion event channel.
type CompChannel struct {
	resource
	h   handle
	fd  int
	ctx *Context
}

// FD is the channel's file descriptor (non-blocking), for callers with their
// own poll loop.
func (ch *CompChannel) FD() int { return ch.fd }

// Wait waits for the next completion event on the channel, acknowledges it
// and returns its CQ. Request events with CQ.ReqNotify first.
func (ch *CompChannel) Wait(ctx context.Context) (*CQ, error) {
	for {
		if err := waitReadable(ctx, ch.fd, &ch.resource); err != nil {
			return nil, err
		}
		if err := ch.acquire(); err != nil {
			return nil, err
		}
		cqh, err := cGetCQEvent(ch.h)
		ch.mu.RUnlock()
		if errors.Is(err, syscall.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ch.ctx.objMu.Lock()
		cq := ch.ctx.cqs[cqh]
		ch.ctx.objMu.Unlock()
		if cq == nil {
			continue // a CQ closed meanwhile
		}
		return cq, nil
	}
}

// Close destroys the channel; its CQs must be closed first.
func (ch *CompChannel) Close() error {
	err := ch.closeWith(func() error { return cDestroyCompChannel(ch.h) })
	if err == nil {
		ch.ctx.forget(ch)
	}
	return err
}

// CQ is a completion queue.
type CQ struct {
	resource
	h       handle
	ctx     *Context
	ch      *CompChannel
	cqe     int
	pollMu  sync.Mutex
	scratch handle
}

// Size is the number of entries the provider gave the queue.
func (cq *CQ) Size() int { return cq.cqe }

// Poll moves up to len(wcs) completions into wcs (ibv_poll_cq) and returns
// how many. A completion with a failure status is returned like any other;
// check wc.Err().
func (cq *CQ) Poll(wcs []WorkCompletion) (int, error) {
	if err := cq.acquire(); err != nil {
		return 0, err
	}
	defer cq.mu.RUnlock()
	cq.pollMu.Lock()
	defer cq.pollMu.Unlock()
	return cPollCQ(cq.h, cq.scratch, wcs)
}

// ReqNotify arms the queue: the next completion (the next solicited one
// with solicitedOnly) raises an event on the completion channel.
func (cq *CQ) ReqNotify(solicitedOnly bool) error {
	if err := cq.acquire(); err != nil {
		return err
	}
	defer cq.mu.RUnlock()
	return cReqNotifyCQ(cq.h, solicitedOnly)
}

// Wait waits for a completion event for this queue on its channel. Events
// for other queues sharing the channel are consumed; use CompChannel.Wait
// when several queues share one.
func (cq *CQ) Wait(ctx context.Context) error {
	if cq.ch == nil {
		return errors.New("completion queue has no completion channel")
	}
	for {
		got, err := cq.ch.Wait(ctx)
		if err != nil {
			return err
		}
		if got == cq {
			return nil
		}
	}
}

// Close destroys the queue; its QPs must be closed first.
func (cq *CQ) Close() error {
	err := cq.closeWith(func() error {
		err := cDestroyCQ(cq.h)
		if err == nil {
			cFreeScratch(cq.scratch)
		}
		return err
	})
	if err == nil {
		cq.ctx.forget(cq)
	}
	return err
}

// maxBatch is how many work requests one post call hands the provider.
const maxBatch = 64

// QP is a queue pair.
type QP struct {
	resource
	h      handle
	ctx    *Context
	qpn    uint32
	typ    QPType
	caps   QPCap
	sgeCap int

	sendMu      sync.Mutex
	sendScratch handle
	recvMu      sync.Mutex
	recvScratch handle
}

// CreateQP creates a queue pair in the RESET state.
func (pd *PD) CreateQP(attr QPInitAttr) (*QP, error) {
	if attr.SendCQ == nil {
		return nil, errors.New("create QP: a send CQ is required")
	}
	recv := attr.RecvCQ
	if recv == nil {
		recv = attr.SendCQ
	}
	if err := pd.acquire(); err != nil {
		return nil, err
	}
	defer pd.mu.RUnlock()
	cqs := []*CQ{attr.SendCQ}
	if recv != attr.SendCQ {
		cqs = append(cqs, recv) // never read-lock one mutex twice
	}
	for _, cq := range cqs {
		if err := cq.acquire(); err != nil {
			return nil, err
		}
		defer cq.mu.RUnlock()
	}
	h, qpn, caps, err := cCreateQP(pd.h, &attr, attr.SendCQ.h, recv.h)
	if err != nil {
		return nil, err
	}
	sgeCap := maxBatch * int(max(caps.MaxSendSGE, caps.MaxRecvSGE, 1))
	qp := &QP{h: h, ctx: pd.ctx, qpn: qpn, typ: attr.Type, caps: caps, sgeCap: sgeCap,
		sendScratch: cNewPostScratch(sgeCap), recvScratch: cNewPostScratch(sgeCap)}
	pd.ctx.track(qp)
	return qp, nil
}

// Num is the QP number.
func (qp *QP) Num() uint32 { return qp.qpn }

// Type is the transport service.
func (qp *QP) Type() QPType { return qp.typ }

// Cap is the queue sizes the provider granted.
func (qp *QP) Cap() QPCap { return qp.caps }

// Modify changes the attributes that mask selects (ibv_modify_qp).
func (qp *QP) Modify(attr *QPAttr, mask QPAttrMask) error {
	if err := qp.acquire(); err != nil {
		return err
	}
	defer qp.mu.RUnlock()
	return cModifyQP(qp.h, attr, mask)
}

// Query reads the attributes that mask selects (ibv_query_qp).
func (qp *QP) Query(mask QPAttrMask) (QPAttr, error) {
	if err := qp.acquire(); err != nil {
		return QPAttr{}, err
	}
	defer qp.mu.RUnlock()
	return cQueryQP(qp.h, mask)
}

// State is the QP's current state.
func (qp *QP) State() (QPState, error) {
	a, err := qp.Query(QPAttrState)
	return a.State, err
}

// ToInit moves a RESET QP to INIT on the given port with P_Key index 0.
// access is what the peer may do to this side's memory (RC/UC); UD QPs get
// qkey instead.
func (qp *QP) ToInit(port uint8, access Access, qkey uint32) error {
	a := QPAttr{State: QPStateInit, Port: port}
	mask := QPAttrState | QPAttrPKeyIndex | QPAttrPort
	if qp.typ == QPTypeUD {
		a.QKey, mask = qkey, mask|QPAttrQKey
	} else {
		a.AccessFlags, mask = access, mask|QPAttrAccessFlags
	}
	return qp.Modify(&a, mask)
}

// RTR is what an RC or UC QP needs to receive: the path to the peer and the
// peer's QP number and first PSN.
type RTR struct {
	PathMTU         MTU
	DestQPN         uint32
	RQPSN           uint32
	AH              AHAttr
	MaxDestRdAtomic uint8 // RC: incoming RDMA reads/atomics in flight
	MinRNRTimer     uint8 // RC
}

// ToRTR moves an INIT QP to RTR (ready to receive). A UD QP needs no path.
func (qp *QP) ToRTR(p RTR) error {
	if qp.typ == QPTypeUD {
		return qp.Modify(&QPAttr{State: QPStateRTR}, QPAttrState)
	}
	a := QPAttr{State: QPStateRTR, PathMTU: p.PathMTU, DestQPNum: p.DestQPN, RQPSN: p.RQPSN, AH: p.AH}
	mask := QPAttrState | QPAttrAV | QPAttrPathMTU | QPAttrDestQPN | QPAttrRQPSN
	if qp.typ == QPTypeRC {
		a.MaxDestRdAtomic, a.MinRNRTimer = p.MaxDestRdAtomic, p.MinRNRTimer
		mask |= QPAttrMaxDestRdAtomic | QPAttrMinRNRTimer
	}
	return qp.Modify(&a, mask)
}

// RTS is what a QP needs to send: its first PSN and, for RC, the transport
// timeout (4.096 us * 2^Timeout), retry counts and outgoing reads/atomics in
// flight.
type RTS struct {
	SQPSN       uint32
	Timeout     uint8
	RetryCnt    uint8
	RNRRetry    uint8
	MaxRdAtomic uint8
}

// ToRTS moves an RTR QP to RTS (ready to send).
func (qp *QP) ToRTS(p RTS) error {
	a := QPAttr{State: QPStateRTS, SQPSN: p.SQPSN}
	mask := QPAttrState | QPAttrSQPSN
	if qp.typ == QPTypeRC {
		a.Timeout, a.RetryCnt, a.RNRRetry, a.MaxRdAtomic = p.Timeout, p.RetryCnt, p.RNRRetry, p.MaxRdAtomic
		mask |= QPAttrTimeout | QPAttrRetryCnt | QPAttrRNRRetry | QPAttrMaxQPRdAtomic
	}
	return qp.Modify(&a, mask)
}

// PostSend posts send work requests in order (ibv_post_send). On failure
// the *PostError says which request was refused; the ones before it were
// posted.
func (qp *QP) PostSend(wrs ...SendWR) error {
	if err := qp.acquire(); err != nil {
		return err
	}
	defer qp.mu.RUnlock()
	qp.sendMu.Lock()
	defer qp.sendMu.Unlock()
	for start := 0; start < len(wrs); {
		end, sges := start, 0
		for end < len(wrs) && end-start < maxBatch && sges+len(wrs[end].SGEs) <= qp.sgeCap {
			sges += len(wrs[end].SGEs)
			end++
		}
		if end == start {
			return &PostError{Op: "ibv_post_send", Index: start, WRID: wrs[start].ID, Errno: syscall.EINVAL}
		}
		if err := cPostSend(qp.h, qp.sendScratch, wrs[start:end]); err != nil {
			var pe *PostError
			if errors.As(err, &pe) && pe.Index >= 0 {
				pe.Index += start
			}
			return err
		}
		start = end
	}
	return nil
}

// PostRecv posts receive work requests (ibv_post_recv), with PostSend's
// error rules.
func (qp *QP) PostRecv(wrs ...RecvWR) error {
	if err := qp.acquire(); err != nil {
		return err
	}
	defer qp.mu.RUnlock()
	qp.recvMu.Lock()
	defer qp.recvMu.Unlock()
	for start := 0; start < len(wrs); {
		end, sges := start, 0
		for end < len(wrs) && end-start < maxBatch && sges+len(wrs[end].SGEs) <= qp.sgeCap {
			sges += len(wrs[end].SGEs)
			end++
		}
		if end == start {
			return &PostError{Op: "ibv_post_recv", Index: start, WRID: wrs[start].ID, Errno: syscall.EINVAL}
		}
		if err := cPostRecv(qp.h, qp.recvScratch, wrs[start:end]); err != nil {
			var pe *PostError
			if errors.As(err, &pe) && pe.Index >= 0 {
				pe.Index += start
			}
			return err
		}
		start = end
	}
	return nil
}

// Close destroys the queue pair.
func (qp *QP) Close() error {
	err := qp.closeWith(func() error {
		err := cDestroyQP(qp.h)
		if err == nil {
			cFreeScratch(qp.sendScratch)
			cFreeScratch(qp.recvScratch)
		}
		return err
	})
	if err == nil {
		qp.ctx.forget(qp)
	}
	return err
}
