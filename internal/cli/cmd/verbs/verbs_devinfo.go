package verbs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/verbs"
)

type ibvDevinfoOptions struct {
	cmdutil.Common // only --json
	device         string
	port           int
	list           bool
	allAttrs       bool // -v
}

// NewDevinfoCmd builds the ibv_devinfo command.
func NewDevinfoCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibvDevinfoOptions{}
	cmd := cmdutil.ToolCommand("ibv_devinfo [options]", "Print RDMA device and port attributes (libibverbs)")
	cmd.Long = "ibv_devinfo prints the attributes of RDMA devices and their ports as libibverbs reports them,\n" +
		"in rdma-core's ibv_devinfo format. It needs libibverbs at run time (" + verbs.DefaultLibrary + ", or $" + verbs.LibraryEnv + ")."
	fs := cmd.Flags()
	fs.StringVarP(&opts.device, "ib-dev", "d", "", "use IB device `dev` (default first device found)")
	fs.IntVarP(&opts.port, "ib-port", "i", 0, "use `port` of IB device (default all ports)")
	fs.BoolVarP(&opts.list, "list", "l", false, "print only the IB devices names")
	fs.BoolVarP(&opts.allAttrs, "verbose", "v", false, "print all the attributes of the IB device(s)")
	fs.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	fs.SortFlags = false
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdutil.UsageErrorf("unexpected argument %q", args[0])
		}
		if c.Flags().Changed("ib-port") && opts.port <= 0 {
			return cmdutil.UsageErrorf("invalid port %d: ports count from 1", opts.port)
		}
		return runVerbs(env, func() error { return runIbvDevinfo(env, opts) })
	}
	return cmd
}

// DevinfoGID is one used GID table entry.
type DevinfoGID struct {
	Index     int
	GID       verbs.GID
	Type      verbs.GIDType
	TypeKnown bool
}

type DevinfoPort struct {
	Num  int
	Attr verbs.PortAttr
	GIDs []DevinfoGID
}

// DevinfoDevice is everything ibv_devinfo shows about one device.
type DevinfoDevice struct {
	Dev            verbs.Device
	Attr           verbs.DeviceAttrEx
	BoardID        string
	NumCompVectors int
	Ports          []DevinfoPort
}

func runIbvDevinfo(env *cmdutil.Env, opts *ibvDevinfoOptions) error {
	devs, err := verbs.Devices()
	if err != nil {
		return err
	}
	if opts.list {
		return cmdutil.Finish(env, &opts.Common, "ibv_devinfo", devinfoList{devs}, nil)
	}
	if opts.device != "" {
		i := slices.IndexFunc(devs, func(d verbs.Device) bool { return d.Name == opts.device })
		if i < 0 {
			return fmt.Errorf("IB device '%s' wasn't found", opts.device)
		}
		devs = devs[i : i+1]
	} else if len(devs) == 0 {
		return errors.New("No IB devices found")
	}
	res := &devinfoResult{allAttrs: opts.allAttrs}
	var failed error
	for _, d := range devs {
		info, err := collectDevinfo(d, opts.port, opts.allAttrs || opts.JSON)
		if err != nil {
			// Like rdma-core, go on with the other devices.
			if failed == nil {
				failed = fmt.Errorf("%s: %w", d.Name, err)
			} else {
				fmt.Fprintf(env.IO.Err, "ibv_devinfo: %s: %v\n", d.Name, err)
			}
			continue
		}
		res.devices = append(res.devices, info)
	}
	return cmdutil.Finish(env, &opts.Common, "ibv_devinfo", res, failed)
}

// devinfoList is ibv_devinfo -l: the JSON of ibv_devices, rdma-core's
// "N HCAs found" as text.
type devinfoList struct{ ibvDevices }

func (r devinfoList) WriteText(w io.Writer) error {
	return cmdutil.WriteString(w, FormatDevinfoList(r.ibvDevices))
}

// devinfoResult is the devices ibv_devinfo shows (all their attributes
// with -v): rdma-core's text, DevinfoJSON as JSON.
type devinfoResult struct {
	devices  []*DevinfoDevice
	allAttrs bool
}

func (r *devinfoResult) MarshalJSON() ([]byte, error) { return json.Marshal(DevinfoJSON(r.devices)) }

func (r *devinfoResult) WriteText(w io.Writer) error {
	for _, info := range r.devices {
		if err := cmdutil.WriteString(w, FormatDevinfo(info, r.allAttrs)); err != nil {
			return err
		}
	}
	return nil
}

func collectDevinfo(d verbs.Device, onlyPort int, gids bool) (*DevinfoDevice, error) {
	ctx, err := verbs.Open(d.Name)
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	attr, err := ctx.QueryDeviceEx()
	if err != nil {
		return nil, fmt.Errorf("Failed to query device props: %w", err)
	}
	if onlyPort > int(attr.PhysPortCnt) {
		return nil, errors.New("Invalid port requested for device")
	}
	info := &DevinfoDevice{Dev: ctx.Device(), Attr: attr, NumCompVectors: ctx.NumCompVectors()}
	if b, err := os.ReadFile(filepath.Join(d.IBDevPath, "board_id")); err == nil {
		// libibverbs drops the trailing newline; an empty file prints nothing.
		info.BoardID = strings.TrimSuffix(string(b), "\n")
	}
	for p := 1; p <= int(attr.PhysPortCnt); p++ {
		if onlyPort != 0 && p != onlyPort {
			continue
		}
		pa, err := ctx.QueryPort(uint8(p))
		if err != nil {
			return nil, fmt.Errorf("Failed to query port %d props: %w", p, err)
		}
		port := DevinfoPort{Num: p, Attr: pa}
		if gids {
			for i := 0; i < pa.GIDTblLen; i++ {
				g, err := ctx.QueryGID(uint8(p), i)
				if err != nil {
					return nil, fmt.Errorf("Failed to query gid to port %d, index %d: %w", p, i, err)
				}
				if g.IsZero() {
					continue
				}
				e := DevinfoGID{Index: i, GID: g}
				if ent, err := ctx.QueryGIDEntry(uint8(p), i); err == nil {
					e.Type, e.TypeKnown = ent.Type, true
				}
				port.GIDs = append(port.GIDs, e)
			}
		}
		info.Ports = append(info.Ports, port)
	}
	return info, nil
}

// FormatDevinfoList is ibv_devinfo -l.
func FormatDevinfoList(devs []verbs.Device) string {
	var b strings.Builder
	plural := "s"
	if len(devs) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%d HCA%s found:\n", len(devs), plural)
	for _, d := range devs {
		fmt.Fprintf(&b, "\t%s\n", d.Name)
	}
	b.WriteString("\n")
	return b.String()
}

func GuidString(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48&0xffff, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// WidthString is the number of an active_width, which uses the IB link
// width encoding (IBA 14.2.5.6).
func WidthString(w uint8) string {
	if s := mad.WidthCompatName(mad.LinkWidth(w)); s != "??" {
		return strings.TrimSuffix(s, "x")
	}
	return "invalid width"
}

// rdma-core's names of ibv_port_attr's active_speed (the verbs
// encoding: 8 is FDR10, 16 FDR...), max_vl_num and phys_state, by value
// ("" for none): arrays the linker lays out, where maps would be built at
// every start of the program.
var (
	activeSpeeds = [...]string{1: "2.5 Gbps", 2: "5.0 Gbps", 4: "10.0 Gbps", 8: "10.0 Gbps",
		16: "14.0 Gbps", 32: "25.0 Gbps", 64: "50.0 Gbps", 128: "100.0 Gbps"}
	maxVLNums  = [...]string{1: "1", 2: "2", 3: "4", 4: "8", 5: "15"}
	physStates = [...]string{1: "SLEEP", 2: "POLLING", 3: "DISABLED", 4: "PORT_CONFIGURATION TRAINNING",
		5: "LINK_UP", 6: "LINK_ERROR_RECOVERY", 7: "PHY TEST"}
)

func SpeedString(s uint8) string     { return nameOr(activeSpeeds[:], s, "invalid speed") }
func vlString(v uint8) string        { return nameOr(maxVLNums[:], v, "invalid value") }
func physStateString(s uint8) string { return nameOr(physStates[:], s, "invalid physical state") }

// nameOr is names[v], or unknown where there is no name.
func nameOr(names []string, v uint8, unknown string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return unknown
}

type flagName struct {
	bit  uint64
	name string
}

var DeviceCapFlagNames = []flagName{
	{1 << 0, "RESIZE_MAX_WR"}, {1 << 1, "BAD_PKEY_CNTR"}, {1 << 2, "BAD_QKEY_CNTR"}, {1 << 3, "RAW_MULTI"},
	{1 << 4, "AUTO_PATH_MIG"}, {1 << 5, "CHANGE_PHY_PORT"}, {1 << 6, "UD_AV_PORT_ENFORCE"},
	{1 << 7, "CURR_QP_STATE_MOD"}, {1 << 8, "SHUTDOWN_PORT"}, {1 << 9, "INIT_TYPE"},
	{1 << 10, "PORT_ACTIVE_EVENT"}, {1 << 11, "SYS_IMAGE_GUID"}, {1 << 12, "RC_RNR_NAK_GEN"},
	{1 << 13, "SRQ_RESIZE"}, {1 << 14, "N_NOTIFY_CQ"}, {1 << 17, "MEM_WINDOW"}, {1 << 18, "UD_IP_CSUM"},
	{1 << 20, "XRC"}, {1 << 21, "MEM_MGT_EXTENSIONS"}, {1 << 23, "MEM_WINDOW_TYPE_2A"},
	{1 << 24, "MEM_WINDOW_TYPE_2B"}, {1 << 25, "RC_IP_CSUM"}, {1 << 26, "RAW_IP_CSUM"},
	{1 << 29, "MANAGED_FLOW_STEERING"},
}

var odpTransportNames = []flagName{
	{1 << 0, "SUPPORT_SEND"}, {1 << 1, "SUPPORT_RECV"}, {1 << 2, "SUPPORT_WRITE"}, {1 << 3, "SUPPORT_READ"},
	{1 << 4, "SUPPORT_ATOMIC"}, {1 << 5, "SUPPORT_SRQ"},
}

// WriteFlags prints one line per known flag set in v, then the unknown
// ones in hex (upper case, as PRIX32/PRIX64 give).
func WriteFlags(b *strings.Builder, v uint64, names []flagName) {
	var known uint64
	for _, f := range names {
		known |= f.bit
		if v&f.bit != 0 {
			fmt.Fprintf(b, "\t\t\t\t\t%s\n", f.name)
		}
	}
	if v&^known != 0 {
		fmt.Fprintf(b, "\t\t\t\t\tUnknown flags: 0x%X\n", v&^known)
	}
}

func writeQPTs(b *strings.Builder, qpts uint32) {
	const raw, ud = 1 << 8, 1 << 4 // 1 << IBV_QPT_RAW_PACKET, 1 << IBV_QPT_UD
	if qpts&raw != 0 {
		b.WriteString("\t\t\t\t\tSUPPORT_RAW_PACKET\n")
	}
	if qpts&ud != 0 {
		b.WriteString("\t\t\t\t\tSUPPORT_UD\n")
	}
	if rest := qpts &^ (raw | ud); rest != 0 {
		fmt.Fprintf(b, "\t\t\t\t\tUnknown flags: 0x%X\n", rest)
	}
}

// FormatDevinfo renders one device exactly as rdma-core's ibv_devinfo
// (rdma-core 44) does.
func FormatDevinfo(info *DevinfoDevice, verbose bool) string {
	var b strings.Builder
	a := &info.Attr
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("hca_id:\t%s\n", info.Dev.Name)
	p("\ttransport:\t\t\t%s (%d)\n", info.Dev.Transport, int(info.Dev.Transport))
	if a.FWVer != "" {
		p("\tfw_ver:\t\t\t\t%s\n", a.FWVer)
	}
	p("\tnode_guid:\t\t\t%s\n", GuidString(a.NodeGUID))
	p("\tsys_image_guid:\t\t\t%s\n", GuidString(a.SysImageGUID))
	p("\tvendor_id:\t\t\t0x%04x\n", a.VendorID)
	p("\tvendor_part_id:\t\t\t%d\n", a.VendorPartID)
	p("\thw_ver:\t\t\t\t0x%X\n", a.HWVer)
	if info.BoardID != "" {
		p("\tboard_id:\t\t\t%s\n", info.BoardID)
	}
	p("\tphys_port_cnt:\t\t\t%d\n", a.PhysPortCnt)
	if verbose {
		p("\tmax_mr_size:\t\t\t0x%x\n", a.MaxMRSize)
		p("\tpage_size_cap:\t\t\t0x%x\n", a.PageSizeCap)
		p("\tmax_qp:\t\t\t\t%d\n", a.MaxQP)
		p("\tmax_qp_wr:\t\t\t%d\n", a.MaxQPWR)
		p("\tdevice_cap_flags:\t\t0x%08x\n", a.DeviceCapFlags)
		WriteFlags(&b, uint64(a.DeviceCapFlags), DeviceCapFlagNames)
		p("\tmax_sge:\t\t\t%d\n", a.MaxSGE)
		p("\tmax_sge_rd:\t\t\t%d\n", a.MaxSGERD)
		p("\tmax_cq:\t\t\t\t%d\n", a.MaxCQ)
		p("\tmax_cqe:\t\t\t%d\n", a.MaxCQE)
		p("\tmax_mr:\t\t\t\t%d\n", a.MaxMR)
		p("\tmax_pd:\t\t\t\t%d\n", a.MaxPD)
		p("\tmax_qp_rd_atom:\t\t\t%d\n", a.MaxQPRdAtom)
		p("\tmax_ee_rd_atom:\t\t\t%d\n", a.MaxEERdAtom)
		p("\tmax_res_rd_atom:\t\t%d\n", a.MaxResRdAtom)
		p("\tmax_qp_init_rd_atom:\t\t%d\n", a.MaxQPInitRdAtom)
		p("\tmax_ee_init_rd_atom:\t\t%d\n", a.MaxEEInitRdAtom)
		p("\tatomic_cap:\t\t\t%s (%d)\n", a.AtomicCap, int(a.AtomicCap))
		p("\tmax_ee:\t\t\t\t%d\n", a.MaxEE)
		p("\tmax_rdd:\t\t\t%d\n", a.MaxRDD)
		p("\tmax_mw:\t\t\t\t%d\n", a.MaxMW)
		p("\tmax_raw_ipv6_qp:\t\t%d\n", a.MaxRawIPv6QP)
		p("\tmax_raw_ethy_qp:\t\t%d\n", a.MaxRawEthyQP)
		p("\tmax_mcast_grp:\t\t\t%d\n", a.MaxMcastGrp)
		p("\tmax_mcast_qp_attach:\t\t%d\n", a.MaxMcastQPAttach)
		p("\tmax_total_mcast_qp_attach:\t%d\n", a.MaxTotalMcastQPAttach)
		p("\tmax_ah:\t\t\t\t%d\n", a.MaxAH)
		p("\tmax_fmr:\t\t\t%d\n", a.MaxFMR)
		if a.MaxFMR != 0 {
			p("\tmax_map_per_fmr:\t\t%d\n", a.MaxMapPerFMR)
		}
		p("\tmax_srq:\t\t\t%d\n", a.MaxSRQ)
		if a.MaxSRQ != 0 {
			p("\tmax_srq_wr:\t\t\t%d\n", a.MaxSRQWR)
			p("\tmax_srq_sge:\t\t\t%d\n", a.MaxSRQSGE)
		}
		p("\tmax_pkeys:\t\t\t%d\n", a.MaxPKeys)
		p("\tlocal_ca_ack_delay:\t\t%d\n", a.LocalCAAckDelay)

		p("\tgeneral_odp_caps:\n")
		WriteFlags(&b, a.ODPCaps.General, []flagName{{1 << 0, "ODP_SUPPORT"}, {1 << 1, "ODP_SUPPORT_IMPLICIT"}})
		for _, t := range []struct {
			name string
			caps uint32
		}{{"rc", a.ODPCaps.RC}, {"uc", a.ODPCaps.UC}, {"ud", a.ODPCaps.UD}, {"xrc", a.XRCODPCaps}} {
			p("\t%s_odp_caps:\n", t.name)
			if t.caps == 0 {
				p("\t\t\t\t\tNO SUPPORT\n")
			} else {
				WriteFlags(&b, uint64(t.caps), odpTransportNames)
			}
		}
		if a.CompletionTimestampMask != 0 {
			p("\tcompletion timestamp_mask:\t\t\t0x%016x\n", a.CompletionTimestampMask)
		} else {
			p("\tcompletion_timestamp_mask not supported\n")
		}
		if a.HCACoreClock != 0 {
			p("\thca_core_clock:\t\t\t%dkHZ\n", a.HCACoreClock)
		} else {
			p("\tcore clock not supported\n")
		}
		if a.RawPacketCaps != 0 {
			p("\traw packet caps:\n")
			for _, f := range []flagName{{1 << 0, "C-VLAN stripping offload"}, {1 << 1, "Scatter FCS offload"},
				{1 << 2, "IP csum offload"}, {1 << 3, "Delay drop"}} {
				if uint64(a.RawPacketCaps)&f.bit != 0 {
					p("\t\t\t\t\t%s\n", f.name)
				}
			}
		}
		p("\tdevice_cap_flags_ex:\t\t0x%X\n", a.DeviceCapFlagsEx)
		WriteFlags(&b, a.DeviceCapFlagsEx&0xffffffff00000000,
			[]flagName{{1 << 34, "RAW_SCATTER_FCS"}, {1 << 36, "PCI_WRITE_END_PADDING"}})
		p("\ttso_caps:\n")
		p("\t\tmax_tso:\t\t\t%d\n", a.TSOCaps.MaxTSO)
		if a.TSOCaps.MaxTSO != 0 {
			p("\t\tsupported_qp:\n")
			writeQPTs(&b, a.TSOCaps.SupportedQPTs)
		}
		p("\trss_caps:\n")
		p("\t\tmax_rwq_indirection_tables:\t\t\t%d\n", a.RSSCaps.MaxRWQIndirectionTables)
		p("\t\tmax_rwq_indirection_table_size:\t\t\t%d\n", a.RSSCaps.MaxRWQIndirectionTableSize)
		p("\t\trx_hash_function:\t\t\t\t0x%x\n", a.RSSCaps.RxHashFunction)
		p("\t\trx_hash_fields_mask:\t\t\t\t0x%X\n", a.RSSCaps.RxHashFieldsMask)
		if a.RSSCaps.SupportedQPTs != 0 {
			p("\t\tsupported_qp:\n")
			writeQPTs(&b, a.RSSCaps.SupportedQPTs)
		}
		p("\tmax_wq_type_rq:\t\t\t%d\n", a.MaxWQTypeRQ)
		p("\tpacket_pacing_caps:\n")
		p("\t\tqp_rate_limit_min:\t%dkbps\n", a.PacketPacingCaps.QPRateLimitMin)
		p("\t\tqp_rate_limit_max:\t%dkbps\n", a.PacketPacingCaps.QPRateLimitMax)
		if a.PacketPacingCaps.QPRateLimitMax != 0 {
			p("\t\tsupported_qp:\n")
			writeQPTs(&b, a.PacketPacingCaps.SupportedQPTs)
		}
		if a.TMCaps.MaxNumTags != 0 {
			p("\tmax_rndv_hdr_size:\t\t%d\n", a.TMCaps.MaxRndvHdrSize)
			p("\tmax_num_tags:\t\t\t%d\n", a.TMCaps.MaxNumTags)
			p("\tmax_ops:\t\t\t%d\n", a.TMCaps.MaxOps)
			p("\tmax_sge:\t\t\t%d\n", a.TMCaps.MaxSGE)
			p("\tflags:\n")
			if a.TMCaps.Flags&1 != 0 {
				p("\t\t\t\t\tIBV_TM_CAP_RC\n")
			}
		} else {
			p("\ttag matching not supported\n")
		}
		if a.CQModCaps.MaxCQCount != 0 && a.CQModCaps.MaxCQPeriod != 0 {
			p("\n\tcq moderation caps:\n")
			p("\t\tmax_cq_count:\t%d\n", a.CQModCaps.MaxCQCount)
			p("\t\tmax_cq_period:\t%d us\n\n", a.CQModCaps.MaxCQPeriod)
		}
		if a.MaxDMSize != 0 {
			p("\tmaximum available device memory:\t%dBytes\n\n", a.MaxDMSize)
		}
		p("\tnum_comp_vectors:\t\t%d\n", info.NumCompVectors)
	}
	for _, port := range info.Ports {
		pa := &port.Attr
		p("\t\tport:\t%d\n", port.Num)
		p("\t\t\tstate:\t\t\t%s (%d)\n", pa.State, int(pa.State))
		p("\t\t\tmax_mtu:\t\t%s (%d)\n", pa.MaxMTU, int(pa.MaxMTU))
		p("\t\t\tactive_mtu:\t\t%s (%d)\n", pa.ActiveMTU, int(pa.ActiveMTU))
		p("\t\t\tsm_lid:\t\t\t%d\n", pa.SMLID)
		p("\t\t\tport_lid:\t\t%d\n", pa.LID)
		p("\t\t\tport_lmc:\t\t0x%02x\n", pa.LMC)
		p("\t\t\tlink_layer:\t\t%s\n", pa.LinkLayer)
		if verbose {
			p("\t\t\tmax_msg_sz:\t\t0x%x\n", pa.MaxMsgSz)
			p("\t\t\tport_cap_flags:\t\t0x%08x\n", pa.PortCapFlags)
			p("\t\t\tport_cap_flags2:\t0x%04x\n", pa.PortCapFlags2)
			p("\t\t\tmax_vl_num:\t\t%s (%d)\n", vlString(pa.MaxVLNum), pa.MaxVLNum)
			p("\t\t\tbad_pkey_cntr:\t\t0x%x\n", pa.BadPKeyCntr)
			p("\t\t\tqkey_viol_cntr:\t\t0x%x\n", pa.QKeyViolCntr)
			p("\t\t\tsm_sl:\t\t\t%d\n", pa.SMSL)
			p("\t\t\tpkey_tbl_len:\t\t%d\n", pa.PKeyTblLen)
			p("\t\t\tgid_tbl_len:\t\t%d\n", pa.GIDTblLen)
			p("\t\t\tsubnet_timeout:\t\t%d\n", pa.SubnetTimeout)
			p("\t\t\tinit_type_reply:\t%d\n", pa.InitTypeReply)
			p("\t\t\tactive_width:\t\t%sX (%d)\n", WidthString(pa.ActiveWidth), pa.ActiveWidth)
			p("\t\t\tactive_speed:\t\t%s (%d)\n", SpeedString(pa.ActiveSpeed), pa.ActiveSpeed)
			if info.Dev.Transport == verbs.TransportIB {
				p("\t\t\tphys_state:\t\t%s (%d)\n", physStateString(pa.PhysState), pa.PhysState)
			}
			for _, g := range port.GIDs {
				b.WriteString(FormatDevinfoGID(g, pa.LinkLayer))
			}
		}
		p("\n")
	}
	return b.String()
}

// FormatDevinfoGID is one "GID[  n]:" line. rdma-core prints IB and RoCE v1
// GIDs as hex groups and RoCE v2 ones as IPv6 text, names the type on
// Ethernet ports, and prints nothing for an entry whose type it could not
// read.
func FormatDevinfoGID(g DevinfoGID, ll verbs.LinkLayer) string {
	if !g.TypeKnown {
		return ""
	}
	suffix := ""
	v2 := g.Type == verbs.GIDTypeRoCEv2
	if ll == verbs.LinkLayerEthernet {
		suffix = ", RoCE v1"
		if v2 {
			suffix = ", RoCE v2"
		}
	}
	if v2 {
		return fmt.Sprintf("\t\t\tGID[%3d]:\t\t%s%s\n", g.Index, g.GID, suffix)
	}
	return fmt.Sprintf("\t\t\tGID[%3d]:\t\t%s%s\n", g.Index, g.GID.Hex(), suffix)
}

// devinfo JSON: every attribute, units explicit.
type devinfoJSONDevice struct {
	HCAID          string             `json:"hca_id"`
	Transport      string             `json:"transport"`
	FWVer          string             `json:"fw_ver,omitempty"`
	NodeGUID       mad.GUID           `json:"node_guid"`
	SysImageGUID   mad.GUID           `json:"system_image_guid"`
	VendorID       uint32             `json:"vendor_id"`
	VendorPartID   uint32             `json:"vendor_part_id"`
	HWVer          uint32             `json:"hw_ver"`
	BoardID        string             `json:"board_id,omitempty"`
	PhysPortCnt    uint8              `json:"phys_port_cnt"`
	NumCompVectors int                `json:"num_comp_vectors"`
	Attributes     verbs.DeviceAttrEx `json:"attributes"`
	Ports          []devinfoJSONPort  `json:"ports"`
}

type devinfoJSONPort struct {
	Port      int    `json:"port"`
	State     int    `json:"state"`
	StateText string `json:"state_text"`
	jsonv.Rate
	MaxMTU     int              `json:"max_mtu_bytes"`
	ActiveMTU  int              `json:"active_mtu_bytes"`
	SMLID      uint16           `json:"sm_lid"`
	LID        uint16           `json:"port_lid"`
	LMC        uint8            `json:"port_lmc"`
	LinkLayer  string           `json:"link_layer"`
	Attributes verbs.PortAttr   `json:"attributes"`
	GIDs       []devinfoJSONGID `json:"gids"`
}

type devinfoJSONGID struct {
	Index int     `json:"index"`
	GID   mad.GID `json:"gid"`
	Type  string  `json:"type,omitempty"`
}

// VerbsSpeedNames are the names of ibv_port_attr.active_speed's values,
// by value ("" for none).
var VerbsSpeedNames = [...]string{1: "SDR", 2: "DDR", 4: "QDR", 8: "FDR10", 16: "FDR", 32: "EDR", 64: "HDR", 128: "NDR"}

func DevinfoJSON(infos []*DevinfoDevice) []devinfoJSONDevice {
	out := make([]devinfoJSONDevice, 0, len(infos))
	for _, in := range infos {
		a := &in.Attr
		d := devinfoJSONDevice{HCAID: in.Dev.Name, Transport: in.Dev.Transport.String(), FWVer: a.FWVer,
			NodeGUID: mad.GUID(a.NodeGUID), SysImageGUID: mad.GUID(a.SysImageGUID), VendorID: a.VendorID,
			VendorPartID: a.VendorPartID, HWVer: a.HWVer, BoardID: in.BoardID, PhysPortCnt: a.PhysPortCnt,
			NumCompVectors: in.NumCompVectors, Attributes: *a, Ports: []devinfoJSONPort{}}
		for _, p := range in.Ports {
			jp := devinfoJSONPort{Port: p.Num, State: int(p.Attr.State), StateText: p.Attr.State.String(),
				Rate: jsonv.RateOf(jsonv.WidthOf(mad.LinkWidth(p.Attr.ActiveWidth)), nameOr(VerbsSpeedNames[:], p.Attr.ActiveSpeed, "")), MaxMTU: p.Attr.MaxMTU.Bytes(),
				ActiveMTU: p.Attr.ActiveMTU.Bytes(), SMLID: p.Attr.SMLID, LID: p.Attr.LID, LMC: p.Attr.LMC,
				LinkLayer: p.Attr.LinkLayer.String(), Attributes: p.Attr, GIDs: []devinfoJSONGID{}}
			for _, g := range p.GIDs {
				jg := devinfoJSONGID{Index: g.Index, GID: mad.GID(g.GID)}
				if g.TypeKnown {
					jg.Type = g.Type.String()
				}
				jp.GIDs = append(jp.GIDs, jg)
			}
			d.Ports = append(d.Ports, jp)
		}
		out = append(out, d)
	}
	return out
}
