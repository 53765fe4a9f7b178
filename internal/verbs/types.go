package verbs

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/ctext"
)

// NodeType is a device's node type (enum ibv_node_type).
type NodeType int

const (
	NodeUnknown     NodeType = -1
	NodeCA          NodeType = 1
	NodeSwitch      NodeType = 2
	NodeRouter      NodeType = 3
	NodeRNIC        NodeType = 4
	NodeUSNIC       NodeType = 5
	NodeUSNICUDP    NodeType = 6
	NodeUnspecified NodeType = 7
)

func (t NodeType) String() string {
	switch t {
	case NodeCA:
		return "CA"
	case NodeSwitch:
		return "switch"
	case NodeRouter:
		return "router"
	case NodeRNIC:
		return "RNIC"
	case NodeUSNIC:
		return "usNIC"
	case NodeUSNICUDP:
		return "usNIC UDP"
	case NodeUnspecified:
		return "unspecified"
	}
	return "unknown"
}

// Transport is a device's transport (enum ibv_transport_type).
type Transport int

const (
	TransportUnknown     Transport = -1
	TransportIB          Transport = 0
	TransportIWARP       Transport = 1
	TransportUSNIC       Transport = 2
	TransportUSNICUDP    Transport = 3
	TransportUnspecified Transport = 4
)

// String is ibv_devinfo's wording.
func (t Transport) String() string {
	switch t {
	case TransportIB:
		return "InfiniBand"
	case TransportIWARP:
		return "iWARP"
	case TransportUSNIC:
		return "usNIC"
	case TransportUSNICUDP:
		return "usNIC UDP"
	case TransportUnspecified:
		return "unspecified"
	}
	return "invalid transport"
}

// PortState is a port's logical state (enum ibv_port_state).
type PortState int

const (
	PortNop    PortState = 0
	PortDown   PortState = 1
	PortInit   PortState = 2
	PortArmed  PortState = 3
	PortActive PortState = 4
)

// String is ibv_devinfo's wording.
func (s PortState) String() string {
	switch s {
	case PortDown:
		return "PORT_DOWN"
	case PortInit:
		return "PORT_INIT"
	case PortArmed:
		return "PORT_ARMED"
	case PortActive:
		return "PORT_ACTIVE"
	}
	return "invalid state"
}

// MTU is an IB MTU code (enum ibv_mtu): 1 = 256 bytes ... 5 = 4096 bytes.
type MTU int

const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

// Bytes is the MTU in bytes, 0 for an invalid code.
func (m MTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << int(m)
}

// String is the size in bytes, or ibv_devinfo's "invalid MTU".
func (m MTU) String() string {
	if b := m.Bytes(); b != 0 {
		return strconv.Itoa(b)
	}
	return "invalid MTU"
}

// LinkLayer is a port's link layer.
type LinkLayer uint8

const (
	LinkLayerUnspecified LinkLayer = 0
	LinkLayerInfiniBand  LinkLayer = 1
	LinkLayerEthernet    LinkLayer = 2
)

// String is ibv_devinfo's wording.
func (l LinkLayer) String() string {
	switch l {
	case LinkLayerUnspecified:
		return "Unspecified"
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

// GIDType is a GID table entry's type (enum ibv_gid_type).
type GIDType uint32

const (
	GIDTypeIB     GIDType = 0
	GIDTypeRoCEv1 GIDType = 1
	GIDTypeRoCEv2 GIDType = 2
)

func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return "invalid GID type"
}

// AtomicCap is a device's atomic capability (enum ibv_atomic_cap).
type AtomicCap int

const (
	AtomicNone AtomicCap = 0
	AtomicHCA  AtomicCap = 1
	AtomicGlob AtomicCap = 2
)

// String is ibv_devinfo's wording.
func (a AtomicCap) String() string {
	switch a {
	case AtomicNone:
		return "ATOMIC_NONE"
	case AtomicHCA:
		return "ATOMIC_HCA"
	case AtomicGlob:
		return "ATOMIC_GLOB"
	}
	return "invalid atomic capability"
}

// GID is a 128-bit port GID in network byte order.
type GID [16]byte

// IsZero reports whether the interface ID half is zero, the test
// ibv_devinfo uses to skip unused table entries.
func (g GID) IsZero() bool {
	for _, b := range g[8:] {
		if b != 0 {
			return false
		}
	}
	return true
}

// Hex is the GID as eight colon-separated groups of four hex digits, every
// digit written out (fe80:0000:0000:0000:0002:c903:0000:1491).
func (g GID) Hex() string {
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02x%02x", g[i], g[i+1])
	}
	return b.String()
}

// String is the GID in IPv6 text form, as glibc's inet_ntop writes it.
func (g GID) String() string { return ctext.InetNtop6(g) }

// ParseGID reads a GID in any IPv6 text form or as eight hex groups.
func ParseGID(s string) (GID, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return GID{}, fmt.Errorf("invalid GID %q", s)
	}
	return GID(a.As16()), nil
}

// Device describes one RDMA device from the device list.
type Device struct {
	Name      string // kernel device name, e.g. "mlx5_0", "rxe0"
	GUID      uint64 // node GUID in host order
	NodeType  NodeType
	Transport Transport
	DevName   string // uverbs device name, e.g. "uverbs0"
	DevPath   string // sysfs path of the uverbs device
	IBDevPath string // sysfs path of the infiniband class device
}

// DeviceAttr is struct ibv_device_attr.
type DeviceAttr struct {
	FWVer                 string    `json:"fw_ver"`
	NodeGUID              uint64    `json:"-"` // host order (ibv_devinfo's JSON has it as node_guid)
	SysImageGUID          uint64    `json:"-"` // host order (system_image_guid)
	MaxMRSize             uint64    `json:"max_mr_size"`
	PageSizeCap           uint64    `json:"page_size_cap"`
	VendorID              uint32    `json:"vendor_id"`
	VendorPartID          uint32    `json:"vendor_part_id"`
	HWVer                 uint32    `json:"hw_ver"`
	MaxQP                 int       `json:"max_qp"`
	MaxQPWR               int       `json:"max_qp_wr"`
	DeviceCapFlags        uint32    `json:"device_cap_flags"`
	MaxSGE                int       `json:"max_sge"`
	MaxSGERD              int       `json:"max_sge_rd"`
	MaxCQ                 int       `json:"max_cq"`
	MaxCQE                int       `json:"max_cqe"`
	MaxMR                 int       `json:"max_mr"`
	MaxPD                 int       `json:"max_pd"`
	MaxQPRdAtom           int       `json:"max_qp_rd_atom"`
	MaxEERdAtom           int       `json:"max_ee_rd_atom"`
	MaxResRdAtom          int       `json:"max_res_rd_atom"`
	MaxQPInitRdAtom       int       `json:"max_qp_init_rd_atom"`
	MaxEEInitRdAtom       int       `json:"max_ee_init_rd_atom"`
	AtomicCap             AtomicCap `json:"atomic_cap"`
	MaxEE                 int       `json:"max_ee"`
	MaxRDD                int       `json:"max_rdd"`
	MaxMW                 int       `json:"max_mw"`
	MaxRawIPv6QP          int       `json:"max_raw_ipv6_qp"`
	MaxRawEthyQP          int       `json:"max_raw_ethy_qp"`
	MaxMcastGrp           int       `json:"max_mcast_grp"`
	MaxMcastQPAttach      int       `json:"max_mcast_qp_attach"`
	MaxTotalMcastQPAttach int       `json:"max_total_mcast_qp_attach"`
	MaxAH                 int       `json:"max_ah"`
	MaxFMR                int       `json:"max_fmr"`
	MaxMapPerFMR          int       `json:"max_map_per_fmr"`
	MaxSRQ                int       `json:"max_srq"`
	MaxSRQWR              int       `json:"max_srq_wr"`
	MaxSRQSGE             int       `json:"max_srq_sge"`
	MaxPKeys              uint16    `json:"max_pkeys"`
	LocalCAAckDelay       uint8     `json:"local_ca_ack_delay"`
	PhysPortCnt           uint8     `json:"phys_port_cnt"`
}

// ODPCaps are on-demand paging capabilities.
type ODPCaps struct {
	General uint64 `json:"general_caps"`
	RC      uint32 `json:"rc_odp_caps"`
	UC      uint32 `json:"uc_odp_caps"`
	UD      uint32 `json:"ud_odp_caps"`
}

// TSOCaps are TCP segmentation offload capabilities.
type TSOCaps struct {
	MaxTSO        uint32 `json:"max_tso"`
	SupportedQPTs uint32 `json:"supported_qpts"`
}

// RSSCaps are receive-side scaling capabilities.
type RSSCaps struct {
	SupportedQPTs              uint32 `json:"supported_qpts"`
	MaxRWQIndirectionTables    uint32 `json:"max_rwq_indirection_tables"`
	MaxRWQIndirectionTableSize uint32 `json:"max_rwq_indirection_table_size"`
	RxHashFieldsMask           uint64 `json:"rx_hash_fields_mask"`
	RxHashFunction             uint8  `json:"rx_hash_function"`
}

// PacketPacingCaps are rate-limiting capabilities (kbps).
type PacketPacingCaps struct {
	QPRateLimitMin uint32 `json:"qp_rate_limit_min_kbps"`
	QPRateLimitMax uint32 `json:"qp_rate_limit_max_kbps"`
	SupportedQPTs  uint32 `json:"supported_qpts"`
}

// TMCaps are tag-matching capabilities.
type TMCaps struct {
	MaxRndvHdrSize uint32 `json:"max_rndv_hdr_size"`
	MaxNumTags     uint32 `json:"max_num_tags"`
	Flags          uint32 `json:"flags"`
	MaxOps         uint32 `json:"max_ops"`
	MaxSGE         uint32 `json:"max_sge"`
}

// CQModerationCaps are CQ moderation limits.
type CQModerationCaps struct {
	MaxCQCount  uint16 `json:"max_cq_count"`
	MaxCQPeriod uint16 `json:"-"` // µs
}

// MarshalJSON gives the period in milliseconds, as ibtool's JSON has
// every time (docs/json.md).
func (c CQModerationCaps) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MaxCQCount    uint16  `json:"max_cq_count"`
		MaxCQPeriodMS float64 `json:"max_cq_period_ms"`
	}{c.MaxCQCount, float64(c.MaxCQPeriod) / 1000})
}

// DeviceAttrEx is struct ibv_device_attr_ex: the basic attributes and the
// extended ones (zero where the provider has no query_device_ex).
type DeviceAttrEx struct {
	DeviceAttr              `json:"basic"`
	ODPCaps                 ODPCaps          `json:"odp_caps"`
	CompletionTimestampMask uint64           `json:"completion_timestamp_mask"`
	HCACoreClock            uint64           `json:"hca_core_clock_khz"` // kHz
	DeviceCapFlagsEx        uint64           `json:"device_cap_flags_ex"`
	TSOCaps                 TSOCaps          `json:"tso_caps"`
	RSSCaps                 RSSCaps          `json:"rss_caps"`
	MaxWQTypeRQ             uint32           `json:"max_wq_type_rq"`
	PacketPacingCaps        PacketPacingCaps `json:"packet_pacing_caps"`
	RawPacketCaps           uint32           `json:"raw_packet_caps"`
	TMCaps                  TMCaps           `json:"tm_caps"`
	CQModCaps               CQModerationCaps `json:"cq_mod_caps"`
	MaxDMSize               uint64           `json:"max_dm_size_bytes"`
	XRCODPCaps              uint32           `json:"xrc_odp_caps"`
	PhysPortCntEx           uint32           `json:"phys_port_cnt_ex"`
}

// PortAttr is struct ibv_port_attr.
type PortAttr struct {
	State         PortState `json:"state"`
	MaxMTU        MTU       `json:"max_mtu"`
	ActiveMTU     MTU       `json:"active_mtu"`
	GIDTblLen     int       `json:"gid_tbl_len"`
	PortCapFlags  uint32    `json:"port_cap_flags"`
	MaxMsgSz      uint32    `json:"max_msg_sz"`
	BadPKeyCntr   uint32    `json:"bad_pkey_cntr"`
	QKeyViolCntr  uint32    `json:"qkey_viol_cntr"`
	PKeyTblLen    uint16    `json:"pkey_tbl_len"`
	LID           uint16    `json:"lid"`
	SMLID         uint16    `json:"sm_lid"`
	LMC           uint8     `json:"lmc"`
	MaxVLNum      uint8     `json:"max_vl_num"`
	SMSL          uint8     `json:"sm_sl"`
	SubnetTimeout uint8     `json:"subnet_timeout"`
	InitTypeReply uint8     `json:"init_type_reply"`
	ActiveWidth   uint8     `json:"-"` // in ibv_devinfo's JSON as the port's width and rate
	ActiveSpeed   uint8     `json:"-"`
	PhysState     uint8     `json:"phys_state"`
	LinkLayer     LinkLayer `json:"link_layer"`
	Flags         uint8     `json:"flags"`
	PortCapFlags2 uint16    `json:"port_cap_flags2"`
}

// GIDEntry is one GID table entry with its type (struct ibv_gid_entry).
type GIDEntry struct {
	GID       GID
	Index     uint32
	Port      uint32
	Type      GIDType
	NetdevIdx uint32 // ifindex of the net device behind a RoCE GID, 0 for IB
}
