package verbs

import (
	"fmt"
	"syscall"
	"unsafe"
)

// The c* functions are the verbs calls the package's objects make (see
// lib.go for how they reach libibverbs). Pointer arguments are converted
// in the call expressions themselves, so the objects stay put for the call.

func goDevice(d *ibvDevice) Device {
	return Device{
		Name:      cString(d.Name[:]),
		GUID:      be64(uint64(call(fns.getDeviceGUID, uintptr(unsafe.Pointer(d))))),
		NodeType:  NodeType(d.NodeType),
		Transport: Transport(d.TransportType),
		DevName:   cString(d.DevName[:]),
		DevPath:   cString(d.DevPath[:]),
		IBDevPath: cString(d.IBDevPath[:]),
	}
}

// withDeviceList calls f with the current device list.
func withDeviceList(f func(list []*ibvDevice) error) error {
	var n int32
	list, errno := callErrno(fns.getDeviceList, uintptr(unsafe.Pointer(&n)))
	if list == 0 {
		if errno == syscall.ENOSYS {
			// No uverbs in this kernel: no devices.
			return f(nil)
		}
		return nullErr("ibv_get_device_list", errno)
	}
	defer call(fns.freeDeviceList, list)
	return f(unsafe.Slice((**ibvDevice)(cptr(list)), int(n)))
}

func cDeviceList() ([]Device, error) {
	var devs []Device
	err := withDeviceList(func(list []*ibvDevice) error {
		for _, d := range list {
			devs = append(devs, goDevice(d))
		}
		return nil
	})
	return devs, err
}

func cOpenDevice(name string) (h handle, dev Device, asyncFD, nvec int, err error) {
	err = withDeviceList(func(list []*ibvDevice) error {
		var d *ibvDevice
		for _, cand := range list {
			if name == "" || cString(cand.Name[:]) == name {
				d = cand
				break
			}
		}
		if d == nil {
			if name == "" {
				return fmt.Errorf("%w: no RDMA devices found", ErrNoDevice)
			}
			return fmt.Errorf("%w: %q", ErrNoDevice, name)
		}
		dev = goDevice(d)
		ctx, errno := callErrno(fns.openDevice, uintptr(unsafe.Pointer(d)))
		if ctx == 0 {
			return fmt.Errorf("%s: %w", dev.Name, nullErr("ibv_open_device", errno))
		}
		c := (*ibvContext)(cptr(ctx))
		h, asyncFD, nvec = cptr(ctx), int(c.AsyncFD), int(c.NumCompVectors)
		return nil
	})
	return
}

func cCloseDevice(h handle) error {
	rc, errno := callErrno(fns.closeDevice, uintptr(h))
	return callErr("ibv_close_device", cint(rc), errno)
}

func goDeviceAttr(a *ibvDeviceAttr) DeviceAttr {
	return DeviceAttr{
		FWVer:                 cString(a.FWVer[:]),
		NodeGUID:              be64(a.NodeGUID),
		SysImageGUID:          be64(a.SysImageGUID),
		MaxMRSize:             a.MaxMRSize,
		PageSizeCap:           a.PageSizeCap,
		VendorID:              a.VendorID,
		VendorPartID:          a.VendorPartID,
		HWVer:                 a.HWVer,
		MaxQP:                 int(a.MaxQP),
		MaxQPWR:               int(a.MaxQPWR),
		DeviceCapFlags:        a.DeviceCapFlags,
		MaxSGE:                int(a.MaxSGE),
		MaxSGERD:              int(a.MaxSGERD),
		MaxCQ:                 int(a.MaxCQ),
		MaxCQE:                int(a.MaxCQE),
		MaxMR:                 int(a.MaxMR),
		MaxPD:                 int(a.MaxPD),
		MaxQPRdAtom:           int(a.MaxQPRdAtom),
		MaxEERdAtom:           int(a.MaxEERdAtom),
		MaxResRdAtom:          int(a.MaxResRdAtom),
		MaxQPInitRdAtom:       int(a.MaxQPInitRdAtom),
		MaxEEInitRdAtom:       int(a.MaxEEInitRdAtom),
		AtomicCap:             AtomicCap(a.AtomicCap),
		MaxEE:                 int(a.MaxEE),
		MaxRDD:                int(a.MaxRDD),
		MaxMW:                 int(a.MaxMW),
		MaxRawIPv6QP:          int(a.MaxRawIPv6QP),
		MaxRawEthyQP:          int(a.MaxRawEthyQP),
		MaxMcastGrp:           int(a.MaxMcastGrp),
		MaxMcastQPAttach:      int(a.MaxMcastQPAttach),
		MaxTotalMcastQPAttach: int(a.MaxTotalMcastQPAttach),
		MaxAH:                 int(a.MaxAH),
		MaxFMR:                int(a.MaxFMR),
		MaxMapPerFMR:          int(a.MaxMapPerFMR),
		MaxSRQ:                int(a.MaxSRQ),
		MaxSRQWR:              int(a.MaxSRQWR),
		MaxSRQSGE:             int(a.MaxSRQSGE),
		MaxPKeys:              a.MaxPKeys,
		LocalCAAckDelay:       a.LocalCAAckDelay,
		PhysPortCnt:           a.PhysPortCnt,
	}
}

func cQueryDevice(h handle) (DeviceAttr, error) {
	a := new(ibvDeviceAttr)
	rc, errno := callErrno(fns.queryDevice, uintptr(h), uintptr(unsafe.Pointer(a)))
	if err := callErr("ibv_query_device", cint(rc), errno); err != nil {
		return DeviceAttr{}, err
	}
	return goDeviceAttr(a), nil
}

// cQueryDeviceEx asks the provider's extended query when it has one, the
// basic query otherwise (zeros for the extended fields).
func cQueryDeviceEx(h handle) (DeviceAttrEx, error) {
	a := new(ibvDeviceAttrEx)
	rc, errno := int32(syscall.EOPNOTSUPP), syscall.Errno(0)
	if op := extendedOp(h, unsafe.Offsetof(verbsContext{}.QueryDeviceEx)); op != 0 {
		var r uintptr
		r, errno = callErrno(op, uintptr(h), 0, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
		rc = cint(r)
	}
	if rc == int32(syscall.EOPNOTSUPP) || rc == int32(syscall.ENOSYS) {
		*a = ibvDeviceAttrEx{}
		var r uintptr
		r, errno = callErrno(fns.queryDevice, uintptr(h), uintptr(unsafe.Pointer(&a.Orig)))
		rc = cint(r)
	}
	if err := callErr("ibv_query_device_ex", rc, errno); err != nil {
		return DeviceAttrEx{}, err
	}
	return DeviceAttrEx{
		DeviceAttr: goDeviceAttr(&a.Orig),
		ODPCaps: ODPCaps{
			General: a.ODPCaps.General,
			RC:      a.ODPCaps.RC,
			UC:      a.ODPCaps.UC,
			UD:      a.ODPCaps.UD,
		},
		CompletionTimestampMask: a.CompletionTimestampMask,
		HCACoreClock:            a.HCACoreClock,
		DeviceCapFlagsEx:        a.DeviceCapFlagsEx,
		TSOCaps:                 TSOCaps{MaxTSO: a.TSOCaps.MaxTSO, SupportedQPTs: a.TSOCaps.SupportedQPTs},
		RSSCaps: RSSCaps{
			SupportedQPTs:              a.RSSCaps.SupportedQPTs,
			MaxRWQIndirectionTables:    a.RSSCaps.MaxRWQIndirectionTables,
			MaxRWQIndirectionTableSize: a.RSSCaps.MaxRWQIndirectionTableSize,
			RxHashFieldsMask:           a.RSSCaps.RxHashFieldsMask,
			RxHashFunction:             a.RSSCaps.RxHashFunction,
		},
		MaxWQTypeRQ: a.MaxWQTypeRQ,
		PacketPacingCaps: PacketPacingCaps{
			QPRateLimitMin: a.PacketPacingCaps.QPRateLimitMin,
			QPRateLimitMax: a.PacketPacingCaps.QPRateLimitMax,
			SupportedQPTs:  a.PacketPacingCaps.SupportedQPTs,
		},
		RawPacketCaps: a.RawPacketCaps,
		TMCaps: TMCaps{
			MaxRndvHdrSize: a.TMCaps.MaxRndvHdrSize,
			MaxNumTags:     a.TMCaps.MaxNumTags,
			Flags:          a.TMCaps.Flags,
			MaxOps:         a.TMCaps.MaxOps,
			MaxSGE:         a.TMCaps.MaxSGE,
		},
		CQModCaps:     CQModerationCaps{MaxCQCount: a.CQModCaps.MaxCQCount, MaxCQPeriod: a.CQModCaps.MaxCQPeriod},
		MaxDMSize:     a.MaxDMSize,
		XRCODPCaps:    a.XRCODPCaps,
		PhysPortCntEx: a.PhysPortCntEx,
	}, nil
}

// cQueryPort goes through the provider's extended op, which fills the whole
// current struct; the exported ibv_query_port only knows the old, shorter
// one (a prefix of it).
func cQueryPort(h handle, port uint8) (PortAttr, error) {
	a := new(ibvPortAttr)
	var rc uintptr
	var errno syscall.Errno
	if op := extendedOp(h, unsafe.Offsetof(verbsContext{}.QueryPort)); op != 0 {
		rc, errno = callErrno(op, uintptr(h), uintptr(port), uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	} else {
		rc, errno = callErrno(fns.queryPort, uintptr(h), uintptr(port), uintptr(unsafe.Pointer(a)))
	}
	if err := callErr("ibv_query_port", cint(rc), errno); err != nil {
		return PortAttr{}, err
	}
	return PortAttr{
		State:         PortState(a.State),
		MaxMTU:        MTU(a.MaxMTU),
		ActiveMTU:     MTU(a.ActiveMTU),
		GIDTblLen:     int(a.GIDTblLen),
		PortCapFlags:  a.PortCapFlags,
		MaxMsgSz:      a.MaxMsgSz,
		BadPKeyCntr:   a.BadPKeyCntr,
		QKeyViolCntr:  a.QKeyViolCntr,
		PKeyTblLen:    a.PKeyTblLen,
		LID:           a.LID,
		SMLID:         a.SMLID,
		LMC:           a.LMC,
		MaxVLNum:      a.MaxVLNum,
		SMSL:          a.SMSL,
		SubnetTimeout: a.SubnetTimeout,
		InitTypeReply: a.InitTypeReply,
		ActiveWidth:   a.ActiveWidth,
		ActiveSpeed:   a.ActiveSpeed,
		PhysState:     a.PhysState,
		LinkLayer:     LinkLayer(a.LinkLayer),
		Flags:         a.Flags,
		PortCapFlags2: a.PortCapFlags2,
	}, nil
}

func cQueryGID(h handle, port uint8, index int) (GID, error) {
	g := new(GID)
	rc, errno := callErrno(fns.queryGID, uintptr(h), uintptr(port), uintptr(index), uintptr(unsafe.Pointer(g)))
	if err := callErr("ibv_query_gid", cint(rc), errno); err != nil {
		return GID{}, err
	}
	return *g, nil
}

func cQueryGIDEx(h handle, port, index uint32) (GIDEntry, bool, error) {
	if fns.queryGIDEx == 0 {
		return GIDEntry{}, false, nil
	}
	e := new(ibvGIDEntry)
	rc, errno := callErrno(fns.queryGIDEx, uintptr(h), uintptr(port), uintptr(index),
		uintptr(unsafe.Pointer(e)), 0, unsafe.Sizeof(*e))
	if err := callErr("ibv_query_gid_ex", cint(rc), errno); err != nil {
		return GIDEntry{}, true, err
	}
	return GIDEntry{
		GID:       e.GID,
		Index:     e.GIDIndex,
		Port:      e.PortNum,
		Type:      GIDType(e.GIDType),
		NetdevIdx: e.NdevIfindex,
	}, true, nil
}

func cQueryPKey(h handle, port uint8, index int) (uint16, error) {
	v := new(uint16)
	rc, errno := callErrno(fns.queryPKey, uintptr(h), uintptr(port), uintptr(index), uintptr(unsafe.Pointer(v)))
	return be16(*v), callErr("ibv_query_pkey", cint(rc), errno)
}

func cAllocPD(ctx handle) (handle, error) {
	pd, errno := callErrno(fns.allocPD, uintptr(ctx))
	if pd == 0 {
		return nil, nullErr("ibv_alloc_pd", errno)
	}
	return cptr(pd), nil
}

func cDeallocPD(pd handle) error {
	rc, errno := callErrno(fns.deallocPD, uintptr(pd))
	return callErr("ibv_dealloc_pd", cint(rc), errno)
}

// cRegMR registers memory that AllocMemory mapped (outside the Go heap).
func cRegMR(pd handle, addr unsafe.Pointer, length int, access Access) (handle, uint32, uint32, error) {
	mr, errno := callErrno(fns.regMR, uintptr(pd), uintptr(addr), uintptr(length), uintptr(access))
	if mr == 0 {
		return nil, 0, 0, nullErr("ibv_reg_mr", errno)
	}
	m := (*ibvMR)(cptr(mr))
	return cptr(mr), m.LKey, m.RKey, nil
}

func cDeregMR(mr handle) error {
	rc, errno := callErrno(fns.deregMR, uintptr(mr))
	return callErr("ibv_dereg_mr", cint(rc), errno)
}

func cCreateCompChannel(ctx handle) (handle, int, error) {
	ch, errno := callErrno(fns.createCompChannel, uintptr(ctx))
	if ch == 0 {
		return nil, -1, nullErr("ibv_create_comp_channel", errno)
	}
	return cptr(ch), int((*ibvCompChannel)(cptr(ch)).FD), nil
}

func cDestroyCompChannel(ch handle) error {
	rc, errno := callErrno(fns.destroyCompChannel, uintptr(ch))
	return callErr("ibv_destroy_comp_channel", cint(rc), errno)
}

func cCreateCQ(ctx handle, cqe int, ch handle, vector int) (handle, int, error) {
	cq, errno := callErrno(fns.createCQ, uintptr(ctx), uintptr(cqe), 0, uintptr(ch), uintptr(vector))
	if cq == 0 {
		return nil, 0, nullErr("ibv_create_cq", errno)
	}
	return cptr(cq), int((*ibvCQ)(cptr(cq)).CQE), nil
}

func cDestroyCQ(cq handle) error {
	rc, errno := callErrno(fns.destroyCQ, uintptr(cq))
	return callErr("ibv_destroy_cq", cint(rc), errno)
}

// cGetCQEvent reads one completion event and acknowledges it at once.
func cGetCQEvent(ch handle) (handle, error) {
	var cq, cqContext uintptr
	rc, errno := callErrno(fns.getCQEvent, uintptr(ch), uintptr(unsafe.Pointer(&cq)), uintptr(unsafe.Pointer(&cqContext)))
	if err := callErr("ibv_get_cq_event", cint(rc), errno); err != nil {
		return nil, err
	}
	call(fns.ackCQEvents, cq, 1)
	return cptr(cq), nil
}

// cReqNotifyCQ is verbs.h's inline ibv_req_notify_cq.
func cReqNotifyCQ(cq handle, solicited bool) error {
	s := uintptr(0)
	if solicited {
		s = 1
	}
	rc, errno := callErrno(contextOps(cq).ReqNotifyCQ, uintptr(cq), s)
	return callErr("ibv_req_notify_cq", cint(rc), errno)
}

// pollScratch is where ibv_poll_cq writes completions; one per CQ, kept
// by the CQ (the Go heap does not move it).
type pollScratch [maxBatch]ibvWC

func cNewPollScratch() handle { return unsafe.Pointer(new(pollScratch)) }

// cFreeScratch has nothing to do: scratch areas are Go memory, freed with
// the object that holds them.
func cFreeScratch(handle) {}

// cPollCQ is verbs.h's inline ibv_poll_cq. It is on the data path, so it
// does not read errno; a provider reports a failed poll with a negative
// count only.
func cPollCQ(cq, scratch handle, out []WorkCompletion) (int, error) {
	n := min(len(out), maxBatch)
	if n == 0 {
		return 0, nil
	}
	wcs := (*pollScratch)(scratch)
	rc := cint(call(contextOps(cq).PollCQ, uintptr(cq), uintptr(n), uintptr(unsafe.Pointer(wcs))))
	if rc < 0 {
		return 0, callErr("ibv_poll_cq", rc, 0)
	}
	for i := range wcs[:rc] {
		w := &wcs[i]
		out[i] = WorkCompletion{
			ID:           w.WRID,
			Status:       WCStatus(w.Status),
			Opcode:       WCOpcode(w.Opcode),
			VendorErr:    w.VendorErr,
			ByteLen:      w.ByteLen,
			QPNum:        w.QPNum,
			SrcQP:        w.SrcQP,
			Flags:        WCFlags(w.WCFlags),
			PKeyIndex:    w.PKeyIndex,
			SLID:         w.SLID,
			SL:           w.SL,
			DLIDPathBits: w.DLIDPathBits,
		}
		switch {
		case out[i].Flags&WCWithImm != 0:
			out[i].ImmData = be32(w.ImmData)
		case out[i].Flags&WCWithInv != 0:
			out[i].ImmData = w.ImmData // the invalidated rkey, host order
		}
	}
	return int(rc), nil
}

func cCreateQP(pd handle, attr *QPInitAttr, sendCQ, recvCQ handle) (handle, uint32, QPCap, error) {
	a := &ibvQPInitAttr{
		SendCQ: uintptr(sendCQ),
		RecvCQ: uintptr(recvCQ),
		Cap:    toCCap(attr.Cap),
		QPType: int32(attr.Type),
	}
	if attr.SigAll {
		a.SQSigAll = 1
	}
	qp, errno := callErrno(fns.createQP, uintptr(pd), uintptr(unsafe.Pointer(a)))
	if qp == 0 {
		return nil, 0, QPCap{}, nullErr("ibv_create_qp", errno)
	}
	// The provider wrote the sizes it granted back into a.Cap.
	return cptr(qp), (*ibvQP)(cptr(qp)).QPNum, fromCCap(a.Cap), nil
}

func cDestroyQP(qp handle) error {
	rc, errno := callErrno(fns.destroyQP, uintptr(qp))
	return callErr("ibv_destroy_qp", cint(rc), errno)
}

func toCCap(c QPCap) ibvQPCap {
	return ibvQPCap{MaxSendWR: c.MaxSendWR, MaxRecvWR: c.MaxRecvWR, MaxSendSGE: c.MaxSendSGE,
		MaxRecvSGE: c.MaxRecvSGE, MaxInlineData: c.MaxInlineData}
}

func fromCCap(c ibvQPCap) QPCap {
	return QPCap{MaxSendWR: c.MaxSendWR, MaxRecvWR: c.MaxRecvWR, MaxSendSGE: c.MaxSendSGE,
		MaxRecvSGE: c.MaxRecvSGE, MaxInlineData: c.MaxInlineData}
}

func toCAH(src *AHAttr) ibvAHAttr {
	a := ibvAHAttr{
		GRH: ibvGlobalRoute{
			DGID:         src.GRH.DGID,
			FlowLabel:    src.GRH.FlowLabel,
			SGIDIndex:    src.GRH.SGIDIndex,
			HopLimit:     src.GRH.HopLimit,
			TrafficClass: src.GRH.TrafficClass,
		},
		DLID:        src.DLID,
		SL:          src.SL,
		SrcPathBits: src.SrcPathBits,
		StaticRate:  src.StaticRate,
		PortNum:     src.Port,
	}
	if src.IsGlobal {
		a.IsGlobal = 1
	}
	return a
}

func fromCAH(src *ibvAHAttr) AHAttr {
	return AHAttr{
		GRH: GlobalRoute{
			DGID:         src.GRH.DGID,
			FlowLabel:    src.GRH.FlowLabel,
			SGIDIndex:    src.GRH.SGIDIndex,
			HopLimit:     src.GRH.HopLimit,
			TrafficClass: src.GRH.TrafficClass,
		},
		DLID:        src.DLID,
		SL:          src.SL,
		SrcPathBits: src.SrcPathBits,
		StaticRate:  src.StaticRate,
		IsGlobal:    src.IsGlobal != 0,
		Port:        src.PortNum,
	}
}

func cModifyQP(qp handle, attr *QPAttr, mask QPAttrMask) error {
	a := &ibvQPAttr{
		QPState:         int32(attr.State),
		CurQPState:      int32(attr.CurState),
		PathMTU:         int32(attr.PathMTU),
		QKey:            attr.QKey,
		RQPSN:           attr.RQPSN,
		SQPSN:           attr.SQPSN,
		DestQPNum:       attr.DestQPNum,
		QPAccessFlags:   uint32(attr.AccessFlags),
		Cap:             toCCap(attr.Cap),
		AHAttr:          toCAH(&attr.AH),
		PKeyIndex:       attr.PKeyIndex,
		MaxRdAtomic:     attr.MaxRdAtomic,
		MaxDestRdAtomic: attr.MaxDestRdAtomic,
		MinRNRTimer:     attr.MinRNRTimer,
		PortNum:         attr.Port,
		Timeout:         attr.Timeout,
		RetryCnt:        attr.RetryCnt,
		RNRRetry:        attr.RNRRetry,
	}
	rc, errno := callErrno(fns.modifyQP, uintptr(qp), uintptr(unsafe.Pointer(a)), uintptr(mask))
	if err := callErr("ibv_modify_qp", cint(rc), errno); err != nil {
		return fmt.Errorf("QP to %v: %w", attr.State, err)
	}
	return nil
}

func cQueryQP(qp handle, mask QPAttrMask) (QPAttr, error) {
	a, init := new(ibvQPAttr), new(ibvQPInitAttr)
	rc, errno := callErrno(fns.queryQP, uintptr(qp), uintptr(unsafe.Pointer(a)), uintptr(mask), uintptr(unsafe.Pointer(init)))
	if err := callErr("ibv_query_qp", cint(rc), errno); err != nil {
		return QPAttr{}, err
	}
	return QPAttr{
		State:           QPState(a.QPState),
		CurState:        QPState(a.CurQPState),
		PathMTU:         MTU(a.PathMTU),
		QKey:            a.QKey,
		RQPSN:           a.RQPSN,
		SQPSN:           a.SQPSN,
		DestQPNum:       a.DestQPNum,
		AccessFlags:     Access(a.QPAccessFlags),
		Cap:             fromCCap(a.Cap),
		AH:              fromCAH(&a.AHAttr),
		PKeyIndex:       a.PKeyIndex,
		MaxRdAtomic:     a.MaxRdAtomic,
		MaxDestRdAtomic: a.MaxDestRdAtomic,
		MinRNRTimer:     a.MinRNRTimer,
		Port:            a.PortNum,
		Timeout:         a.Timeout,
		RetryCnt:        a.RetryCnt,
		RNRRetry:        a.RNRRetry,
	}, nil
}

// postScratch holds the work request lists handed to ibv_post_send and
// ibv_post_recv, one per QP direction, kept by the QP. The lists' next and
// sg_list pointers point into the same scratch.
type postScratch struct {
	send [maxBatch]ibvSendWR
	recv [maxBatch]ibvRecvWR
	sges []ibvSGE
}

func cNewPostScratch(nsge int) handle {
	return unsafe.Pointer(&postScratch{sges: make([]ibvSGE, nsge)})
}

// putSGEs copies a request's SGEs into the scratch from index *next on and
// returns the address of the first (0 for none); the caller has checked the
// scratch has room.
func (s *postScratch) putSGEs(sges []SGE, next *int) uintptr {
	if len(sges) == 0 {
		return 0
	}
	dst := s.sges[*next : *next+len(sges)]
	for i, sg := range sges {
		dst[i] = ibvSGE{Addr: sg.Addr, Length: sg.Length, LKey: sg.LKey}
	}
	*next += len(sges)
	return uintptr(unsafe.Pointer(&dst[0]))
}

// cPostSend is verbs.h's inline ibv_post_send.
func cPostSend(qp, scratch handle, wrs []SendWR) error {
	s := (*postScratch)(scratch)
	next := 0
	for i := range wrs {
		r, w := &wrs[i], &s.send[i]
		*w = ibvSendWR{
			WRID:      r.ID,
			SGList:    s.putSGEs(r.SGEs, &next),
			NumSGE:    int32(len(r.SGEs)),
			Opcode:    uint32(r.Opcode),
			SendFlags: uint32(r.Flags),
			ImmData:   be32(r.ImmData),
		}
		if i+1 < len(wrs) {
			w.Next = uintptr(unsafe.Pointer(&s.send[i+1]))
		}
		if r.Opcode == WRAtomicCmpAndSwp || r.Opcode == WRAtomicFetchAdd {
			w.WR[wrAtomicRemoteAddr] = r.RemoteAddr
			w.WR[wrAtomicCompareAdd] = r.CompareAdd
			w.WR[wrAtomicSwap] = r.Swap
			*(*uint32)(unsafe.Pointer(&w.WR[wrAtomicRKey])) = r.RKey
		} else {
			w.WR[wrRDMARemoteAddr] = r.RemoteAddr
			*(*uint32)(unsafe.Pointer(&w.WR[wrRDMARKey])) = r.RKey
		}
	}
	var bad uintptr
	rc := cint(call(contextOps(qp).PostSend, uintptr(qp), uintptr(unsafe.Pointer(&s.send[0])), uintptr(unsafe.Pointer(&bad))))
	if rc == 0 {
		return nil
	}
	return postErr("ibv_post_send", rc, badIndex(bad, unsafe.Pointer(&s.send[0]), unsafe.Sizeof(s.send[0])),
		func(i int) uint64 { return wrs[i].ID })
}

// cPostRecv is verbs.h's inline ibv_post_recv.
func cPostRecv(qp, scratch handle, wrs []RecvWR) error {
	s := (*postScratch)(scratch)
	next := 0
	for i := range wrs {
		r, w := &wrs[i], &s.recv[i]
		*w = ibvRecvWR{WRID: r.ID, SGList: s.putSGEs(r.SGEs, &next), NumSGE: int32(len(r.SGEs))}
		if i+1 < len(wrs) {
			w.Next = uintptr(unsafe.Pointer(&s.recv[i+1]))
		}
	}
	var bad uintptr
	rc := cint(call(contextOps(qp).PostRecv, uintptr(qp), uintptr(unsafe.Pointer(&s.recv[0])), uintptr(unsafe.Pointer(&bad))))
	if rc == 0 {
		return nil
	}
	return postErr("ibv_post_recv", rc, badIndex(bad, unsafe.Pointer(&s.recv[0]), unsafe.Sizeof(s.recv[0])),
		func(i int) uint64 { return wrs[i].ID })
}

// badIndex is the index of the request bad points to in the list at first,
// -1 when the provider did not say.
func badIndex(bad uintptr, first unsafe.Pointer, size uintptr) int {
	if bad == 0 {
		return -1
	}
	return int((bad - uintptr(first)) / size)
}

// postErr is the error of a refused post. The post verbs return the errno
// itself.
func postErr(op string, rc int32, bad int, id func(int) uint64) error {
	e := &PostError{Op: op, Index: bad, Errno: syscall.EIO}
	if rc > 0 {
		e.Errno = syscall.Errno(rc)
	}
	if bad >= 0 {
		e.WRID = id(bad)
	}
	return e
}

// cGetAsyncEvent reads one async event and acknowledges it at once. elem is
// the CQ, QP, SRQ or WQ the event is about (nil for port and device
// events), port the port number for port events.
func cGetAsyncEvent(ctx handle) (EventType, handle, int, error) {
	ev := new(ibvAsyncEvent)
	rc, errno := callErrno(fns.getAsyncEvent, uintptr(ctx), uintptr(unsafe.Pointer(ev)))
	if err := callErr("ibv_get_async_event", cint(rc), errno); err != nil {
		return 0, nil, 0, err
	}
	typ := EventType(ev.EventType)
	var elem handle
	port := 0
	switch typ.elementKind() {
	case 'p':
		port = int(*(*int32)(unsafe.Pointer(&ev.Element)))
	case 'c', 'q', 's', 'w':
		elem = cptr(ev.Element)
	}
	call(fns.ackAsyncEvent, uintptr(unsafe.Pointer(ev)))
	return typ, elem, port, nil
}
