package verbs

// Go mirrors of the libibverbs structures (rdma-core's
// <infiniband/verbs.h>) that ibtool reads, fills or hands to the library.
// Each field's c tag names the C member it stands for; layout_test.go
// compiles a C program against the real header and checks every tagged
// field's offset and size, and the size of every mirror marked whole, so a
// mistake here fails a test instead of corrupting memory. Untagged fields
// are padding or members ibtool never touches. All of it is the LP64 Linux
// ABI, the same on amd64 and arm64 except pthread_mutex_t (see
// layout_*.go).

// ibvDevice is the start of struct ibv_device (ibtool reads it only).
type ibvDevice struct {
	_             [2]uintptr // struct _ibv_device_ops
	NodeType      int32      `c:"node_type"`
	TransportType int32      `c:"transport_type"`
	Name          [64]byte   `c:"name"`
	DevName       [64]byte   `c:"dev_name"`
	DevPath       [256]byte  `c:"dev_path"`
	IBDevPath     [256]byte  `c:"ibdev_path"`
}

// ibvContextOps is struct ibv_context_ops: the provider's function table,
// through which verbs.h's inline verbs (ibv_poll_cq, ibv_req_notify_cq,
// ibv_post_send, ibv_post_recv) call.
type ibvContextOps struct {
	_           [11]uintptr
	PollCQ      uintptr `c:"poll_cq"`
	ReqNotifyCQ uintptr `c:"req_notify_cq"`
	_           [12]uintptr
	PostSend    uintptr `c:"post_send"`
	PostRecv    uintptr `c:"post_recv"`
	_           [5]uintptr
}

// ibvContext is struct ibv_context.
type ibvContext struct {
	Device         uintptr       `c:"device"`
	Ops            ibvContextOps `c:"ops"`
	CmdFD          int32         `c:"cmd_fd"`
	AsyncFD        int32         `c:"async_fd"`
	NumCompVectors int32         `c:"num_comp_vectors"`
	_              int32
	Mutex          [pthreadMutexSize]byte `c:"mutex"`
	ABICompat      uintptr                `c:"abi_compat"`
}

// verbsABIIsExtended is __VERBS_ABI_IS_EXTENDED: the abi_compat value of a
// context that is the last member of a struct verbs_context.
const verbsABIIsExtended = ^uintptr(0)

// verbsContext is struct verbs_context, the extended context every
// rdma-core provider allocates around its struct ibv_context; ibtool uses
// two of its ops, found the way verbs.h's verbs_get_ctx_op finds them.
type verbsContext struct {
	QueryPort     uintptr `c:"query_port"`
	_             [26]uintptr
	QueryDeviceEx uintptr `c:"query_device_ex"`
	_             [11]uintptr
	Size          uintptr    `c:"sz"`
	Context       ibvContext `c:"context"`
}

// ibvDeviceAttr is struct ibv_device_attr.
type ibvDeviceAttr struct {
	FWVer                 [64]byte `c:"fw_ver"`
	NodeGUID              uint64   `c:"node_guid"` // big-endian
	SysImageGUID          uint64   `c:"sys_image_guid"`
	MaxMRSize             uint64   `c:"max_mr_size"`
	PageSizeCap           uint64   `c:"page_size_cap"`
	VendorID              uint32   `c:"vendor_id"`
	VendorPartID          uint32   `c:"vendor_part_id"`
	HWVer                 uint32   `c:"hw_ver"`
	MaxQP                 int32    `c:"max_qp"`
	MaxQPWR               int32    `c:"max_qp_wr"`
	DeviceCapFlags        uint32   `c:"device_cap_flags"`
	MaxSGE                int32    `c:"max_sge"`
	MaxSGERD              int32    `c:"max_sge_rd"`
	MaxCQ                 int32    `c:"max_cq"`
	MaxCQE                int32    `c:"max_cqe"`
	MaxMR                 int32    `c:"max_mr"`
	MaxPD                 int32    `c:"max_pd"`
	MaxQPRdAtom           int32    `c:"max_qp_rd_atom"`
	MaxEERdAtom           int32    `c:"max_ee_rd_atom"`
	MaxResRdAtom          int32    `c:"max_res_rd_atom"`
	MaxQPInitRdAtom       int32    `c:"max_qp_init_rd_atom"`
	MaxEEInitRdAtom       int32    `c:"max_ee_init_rd_atom"`
	AtomicCap             int32    `c:"atomic_cap"`
	MaxEE                 int32    `c:"max_ee"`
	MaxRDD                int32    `c:"max_rdd"`
	MaxMW                 int32    `c:"max_mw"`
	MaxRawIPv6QP          int32    `c:"max_raw_ipv6_qp"`
	MaxRawEthyQP          int32    `c:"max_raw_ethy_qp"`
	MaxMcastGrp           int32    `c:"max_mcast_grp"`
	MaxMcastQPAttach      int32    `c:"max_mcast_qp_attach"`
	MaxTotalMcastQPAttach int32    `c:"max_total_mcast_qp_attach"`
	MaxAH                 int32    `c:"max_ah"`
	MaxFMR                int32    `c:"max_fmr"`
	MaxMapPerFMR          int32    `c:"max_map_per_fmr"`
	MaxSRQ                int32    `c:"max_srq"`
	MaxSRQWR              int32    `c:"max_srq_wr"`
	MaxSRQSGE             int32    `c:"max_srq_sge"`
	MaxPKeys              uint16   `c:"max_pkeys"`
	LocalCAAckDelay       uint8    `c:"local_ca_ack_delay"`
	PhysPortCnt           uint8    `c:"phys_port_cnt"`
}

// ibvDeviceAttrEx is struct ibv_device_attr_ex.
type ibvDeviceAttrEx struct {
	Orig     ibvDeviceAttr `c:"orig_attr"`
	CompMask uint32        `c:"comp_mask"`
	ODPCaps  struct {
		General uint64 `c:"general_caps"`
		RC      uint32 `c:"per_transport_caps.rc_odp_caps"`
		UC      uint32 `c:"per_transport_caps.uc_odp_caps"`
		UD      uint32 `c:"per_transport_caps.ud_odp_caps"`
	} `c:"odp_caps"`
	CompletionTimestampMask uint64 `c:"completion_timestamp_mask"`
	HCACoreClock            uint64 `c:"hca_core_clock"`
	DeviceCapFlagsEx        uint64 `c:"device_cap_flags_ex"`
	TSOCaps                 struct {
		MaxTSO        uint32 `c:"max_tso"`
		SupportedQPTs uint32 `c:"supported_qpts"`
	} `c:"tso_caps"`
	RSSCaps struct {
		SupportedQPTs              uint32 `c:"supported_qpts"`
		MaxRWQIndirectionTables    uint32 `c:"max_rwq_indirection_tables"`
		MaxRWQIndirectionTableSize uint32 `c:"max_rwq_indirection_table_size"`
		RxHashFieldsMask           uint64 `c:"rx_hash_fields_mask"`
		RxHashFunction             uint8  `c:"rx_hash_function"`
	} `c:"rss_caps"`
	MaxWQTypeRQ      uint32 `c:"max_wq_type_rq"`
	PacketPacingCaps struct {
		QPRateLimitMin uint32 `c:"qp_rate_limit_min"`
		QPRateLimitMax uint32 `c:"qp_rate_limit_max"`
		SupportedQPTs  uint32 `c:"supported_qpts"`
	} `c:"packet_pacing_caps"`
	RawPacketCaps uint32 `c:"raw_packet_caps"`
	TMCaps        struct {
		MaxRndvHdrSize uint32 `c:"max_rndv_hdr_size"`
		MaxNumTags     uint32 `c:"max_num_tags"`
		Flags          uint32 `c:"flags"`
		MaxOps         uint32 `c:"max_ops"`
		MaxSGE         uint32 `c:"max_sge"`
	} `c:"tm_caps"`
	CQModCaps struct {
		MaxCQCount  uint16 `c:"max_cq_count"`
		MaxCQPeriod uint16 `c:"max_cq_period"`
	} `c:"cq_mod_caps"`
	MaxDMSize     uint64    `c:"max_dm_size"`
	PCIAtomicCaps [3]uint16 `c:"pci_atomic_caps"`
	XRCODPCaps    uint32    `c:"xrc_odp_caps"`
	PhysPortCntEx uint32    `c:"phys_port_cnt_ex"`
}

// ibvPortAttr is struct ibv_port_attr (the current, longer one that the
// provider's extended query_port fills).
type ibvPortAttr struct {
	State         int32  `c:"state"`
	MaxMTU        int32  `c:"max_mtu"`
	ActiveMTU     int32  `c:"active_mtu"`
	GIDTblLen     int32  `c:"gid_tbl_len"`
	PortCapFlags  uint32 `c:"port_cap_flags"`
	MaxMsgSz      uint32 `c:"max_msg_sz"`
	BadPKeyCntr   uint32 `c:"bad_pkey_cntr"`
	QKeyViolCntr  uint32 `c:"qkey_viol_cntr"`
	PKeyTblLen    uint16 `c:"pkey_tbl_len"`
	LID           uint16 `c:"lid"`
	SMLID         uint16 `c:"sm_lid"`
	LMC           uint8  `c:"lmc"`
	MaxVLNum      uint8  `c:"max_vl_num"`
	SMSL          uint8  `c:"sm_sl"`
	SubnetTimeout uint8  `c:"subnet_timeout"`
	InitTypeReply uint8  `c:"init_type_reply"`
	ActiveWidth   uint8  `c:"active_width"`
	ActiveSpeed   uint8  `c:"active_speed"`
	PhysState     uint8  `c:"phys_state"`
	LinkLayer     uint8  `c:"link_layer"`
	Flags         uint8  `c:"flags"`
	PortCapFlags2 uint16 `c:"port_cap_flags2"`
}

// ibvGIDEntry is struct ibv_gid_entry.
type ibvGIDEntry struct {
	_           [0]uint64 // union ibv_gid is 8-byte aligned
	GID         GID       `c:"gid"`
	GIDIndex    uint32    `c:"gid_index"`
	PortNum     uint32    `c:"port_num"`
	GIDType     uint32    `c:"gid_type"`
	NdevIfindex uint32    `c:"ndev_ifindex"`
}

// ibvMR is the start of struct ibv_mr.
type ibvMR struct {
	Context uintptr `c:"context"`
	PD      uintptr `c:"pd"`
	Addr    uintptr `c:"addr"`
	Length  uintptr `c:"length"`
	Handle  uint32  `c:"handle"`
	LKey    uint32  `c:"lkey"`
	RKey    uint32  `c:"rkey"`
}

// ibvCompChannel is struct ibv_comp_channel.
type ibvCompChannel struct {
	Context uintptr `c:"context"`
	FD      int32   `c:"fd"`
	RefCnt  int32   `c:"refcnt"`
}

// ibvCQ is the start of struct ibv_cq.
type ibvCQ struct {
	Context   uintptr `c:"context"`
	Channel   uintptr `c:"channel"`
	CQContext uintptr `c:"cq_context"`
	Handle    uint32  `c:"handle"`
	CQE       int32   `c:"cqe"`
}

// ibvQP is the start of struct ibv_qp.
type ibvQP struct {
	Context   uintptr `c:"context"`
	QPContext uintptr `c:"qp_context"`
	PD        uintptr `c:"pd"`
	SendCQ    uintptr `c:"send_cq"`
	RecvCQ    uintptr `c:"recv_cq"`
	SRQ       uintptr `c:"srq"`
	Handle    uint32  `c:"handle"`
	QPNum     uint32  `c:"qp_num"`
}

// ibvQPCap is struct ibv_qp_cap.
type ibvQPCap struct {
	MaxSendWR     uint32 `c:"max_send_wr"`
	MaxRecvWR     uint32 `c:"max_recv_wr"`
	MaxSendSGE    uint32 `c:"max_send_sge"`
	MaxRecvSGE    uint32 `c:"max_recv_sge"`
	MaxInlineData uint32 `c:"max_inline_data"`
}

// ibvQPInitAttr is struct ibv_qp_init_attr.
type ibvQPInitAttr struct {
	QPContext uintptr  `c:"qp_context"`
	SendCQ    uintptr  `c:"send_cq"`
	RecvCQ    uintptr  `c:"recv_cq"`
	SRQ       uintptr  `c:"srq"`
	Cap       ibvQPCap `c:"cap"`
	QPType    int32    `c:"qp_type"`
	SQSigAll  int32    `c:"sq_sig_all"`
}

// ibvGlobalRoute is struct ibv_global_route.
type ibvGlobalRoute struct {
	_            [0]uint64 // union ibv_gid is 8-byte aligned
	DGID         GID       `c:"dgid"`
	FlowLabel    uint32    `c:"flow_label"`
	SGIDIndex    uint8     `c:"sgid_index"`
	HopLimit     uint8     `c:"hop_limit"`
	TrafficClass uint8     `c:"traffic_class"`
}

// ibvAHAttr is struct ibv_ah_attr.
type ibvAHAttr struct {
	GRH         ibvGlobalRoute `c:"grh"`
	DLID        uint16         `c:"dlid"`
	SL          uint8          `c:"sl"`
	SrcPathBits uint8          `c:"src_path_bits"`
	StaticRate  uint8          `c:"static_rate"`
	IsGlobal    uint8          `c:"is_global"`
	PortNum     uint8          `c:"port_num"`
}

// ibvQPAttr is struct ibv_qp_attr.
type ibvQPAttr struct {
	QPState          int32     `c:"qp_state"`
	CurQPState       int32     `c:"cur_qp_state"`
	PathMTU          int32     `c:"path_mtu"`
	PathMigState     int32     `c:"path_mig_state"`
	QKey             uint32    `c:"qkey"`
	RQPSN            uint32    `c:"rq_psn"`
	SQPSN            uint32    `c:"sq_psn"`
	DestQPNum        uint32    `c:"dest_qp_num"`
	QPAccessFlags    uint32    `c:"qp_access_flags"`
	Cap              ibvQPCap  `c:"cap"`
	AHAttr           ibvAHAttr `c:"ah_attr"`
	AltAHAttr        ibvAHAttr `c:"alt_ah_attr"`
	PKeyIndex        uint16    `c:"pkey_index"`
	AltPKeyIndex     uint16    `c:"alt_pkey_index"`
	EnSQDAsyncNotify uint8     `c:"en_sqd_async_notify"`
	SQDraining       uint8     `c:"sq_draining"`
	MaxRdAtomic      uint8     `c:"max_rd_atomic"`
	MaxDestRdAtomic  uint8     `c:"max_dest_rd_atomic"`
	MinRNRTimer      uint8     `c:"min_rnr_timer"`
	PortNum          uint8     `c:"port_num"`
	Timeout          uint8     `c:"timeout"`
	RetryCnt         uint8     `c:"retry_cnt"`
	RNRRetry         uint8     `c:"rnr_retry"`
	AltPortNum       uint8     `c:"alt_port_num"`
	AltTimeout       uint8     `c:"alt_timeout"`
	RateLimit        uint32    `c:"rate_limit"`
}

// ibvWC is struct ibv_wc.
type ibvWC struct {
	WRID         uint64 `c:"wr_id"`
	Status       uint32 `c:"status"`
	Opcode       uint32 `c:"opcode"`
	VendorErr    uint32 `c:"vendor_err"`
	ByteLen      uint32 `c:"byte_len"`
	ImmData      uint32 `c:"imm_data"` // big-endian; or invalidated_rkey
	QPNum        uint32 `c:"qp_num"`
	SrcQP        uint32 `c:"src_qp"`
	WCFlags      uint32 `c:"wc_flags"`
	PKeyIndex    uint16 `c:"pkey_index"`
	SLID         uint16 `c:"slid"`
	SL           uint8  `c:"sl"`
	DLIDPathBits uint8  `c:"dlid_path_bits"`
}

// ibvSGE is struct ibv_sge.
type ibvSGE struct {
	Addr   uint64 `c:"addr"`
	Length uint32 `c:"length"`
	LKey   uint32 `c:"lkey"`
}

// ibvSendWR is struct ibv_send_wr. WR is the union wr, whose members are
// laid out at the offsets below (checked too).
type ibvSendWR struct {
	WRID      uint64    `c:"wr_id"`
	Next      uintptr   `c:"next"`
	SGList    uintptr   `c:"sg_list"`
	NumSGE    int32     `c:"num_sge"`
	Opcode    uint32    `c:"opcode"`
	SendFlags uint32    `c:"send_flags"`
	ImmData   uint32    `c:"imm_data"` // big-endian
	WR        [4]uint64 `c:"wr"`
	_         [7]uint64 // qp_type, then bind_mw and tso
}

// Word indexes into ibvSendWR.WR.
const (
	wrRDMARemoteAddr   = 0 // wr.rdma.remote_addr
	wrRDMARKey         = 1 // wr.rdma.rkey (a uint32 in the word's first 4 bytes)
	wrAtomicRemoteAddr = 0 // wr.atomic.remote_addr
	wrAtomicCompareAdd = 1 // wr.atomic.compare_add
	wrAtomicSwap       = 2 // wr.atomic.swap
	wrAtomicRKey       = 3 // wr.atomic.rkey (first 4 bytes)
)

// ibvRecvWR is struct ibv_recv_wr.
type ibvRecvWR struct {
	WRID   uint64  `c:"wr_id"`
	Next   uintptr `c:"next"`
	SGList uintptr `c:"sg_list"`
	NumSGE int32   `c:"num_sge"`
}

// ibvAsyncEvent is struct ibv_async_event; Element is the union (a CQ, QP,
// SRQ or WQ pointer, or the port number in its first 4 bytes).
type ibvAsyncEvent struct {
	Element   uintptr `c:"element"`
	EventType int32   `c:"event_type"`
}
