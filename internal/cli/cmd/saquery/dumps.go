package saquery

// The record dumps: saquery.c's dump_* functions as label tables.

import (
	"bufio"
	"slices"
	"strings"

	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/mad"
)

var saNodeRecordDump = saDump{title: "NodeRecord dump:\n", col: 24, fields: []saField{
	{label: "lid", path: "LID", format: "%d"},
	{label: "reserved", value: saZero, format: "0x%X"}, // the two bytes after the LID
	{label: "base_version", path: "NodeInfo.BaseVersion", format: "0x%X"},
	{label: "class_version", path: "NodeInfo.ClassVersion", format: "0x%X"},
	{label: "node_type", format: "%s", value: func(r *saRecord) any { return ctext.OsmNodeType(int(r.Struct.(*mad.NodeRecord).NodeInfo.NodeType)) }},
	{label: "num_ports", path: "NodeInfo.NumPorts", format: "%d"},
	{label: "sys_guid", path: "NodeInfo.SystemImageGUID", format: "0x%016x"},
	{label: "node_guid", path: "NodeInfo.NodeGUID", format: "0x%016x"},
	{label: "port_guid", path: "NodeInfo.PortGUID", format: "0x%016x"},
	{label: "partition_cap", path: "NodeInfo.PartitionCap", format: "0x%X"},
	{label: "device_id", path: "NodeInfo.DeviceID", format: "0x%X"},
	{label: "revision", path: "NodeInfo.Revision", format: "0x%X"},
	{label: "port_num", path: "NodeInfo.LocalPortNum", format: "%d"},
	{label: "vendor_id", path: "NodeInfo.VendorID", format: "0x%X"},
	{label: "NodeDescription", format: "%s", value: func(r *saRecord) any { return r.name }}, // the node name map's name
}}

var saPathDump = saDump{title: "PathRecord dump:\n", col: 24, fields: []saField{
	{label: "service_id", path: "ServiceID", format: "0x%016x"},
	{label: "dgid", path: "DGID", format: "%s"},
	{label: "sgid", path: "SGID", format: "%s"},
	{label: "dlid", path: "DLID", format: "%d"},
	{label: "slid", path: "SLID", format: "%d"},
	{label: "hop_flow_raw", path: "RawTraffic|FlowLabel|HopLimit", format: "0x%X"},
	{label: "tclass", path: "TClass", format: "0x%X"},
	{label: "num_path_revers", path: "Reversible|NumbPath", format: "0x%X"},
	{label: "pkey", path: "PKey", format: "0x%X"},
	{label: "qos_class", path: "QoSClass", format: "0x%X"},
	{label: "sl", path: "SL", format: "0x%X"},
	{label: "mtu", path: "MTUSelector|MTU", format: "0x%X"},
	{label: "rate", path: "RateSelector|Rate", format: "0x%X"},
	{label: "pkt_life", path: "PacketLifeTimeSelector|PacketLifeTime", format: "0x%X"},
	{label: "preference", path: "Preference", format: "0x%X"},
	{label: "resv2", value: saZero, format: "0x%012X"}, // the six reserved bytes at the end
}}

var saClassPortInfoDump = saDump{title: "SA ClassPortInfo:\n", col: 25, fields: []saField{
	{label: "Base version", path: "BaseVersion", format: "%d"},
	{label: "Class version", path: "ClassVersion", format: "%d"},
	{label: "Capability mask", path: "CapabilityMask", format: "0x%04X"},
	{label: "Capability mask 2", path: "CapabilityMask2", format: "0x%08X"},
	{label: "Response time value", path: "RespTimeValue", format: "0x%02X"},
	{label: "Redirect GID", path: "RedirectGID", format: "%s"},
	{label: "Redirect TC/SL/FL", path: "RedirectTC|RedirectSL|RedirectFL", format: "0x%08X"},
	{label: "Redirect LID", path: "RedirectLID", format: "%d"},
	{label: "Redirect PKey", path: "RedirectPKey", format: "0x%04X"},
	{label: "Redirect QP", path: "RedirectQP", format: "0x%08X"},
	{label: "Redirect QKey", path: "RedirectQKey", format: "0x%08X"},
	{label: "Trap GID", path: "TrapGID", format: "%s"},
	{label: "Trap TC/SL/FL", path: "TrapTC|TrapSL|TrapFL", format: "0x%08X"},
	{label: "Trap LID", path: "TrapLID", format: "%d"},
	{label: "Trap PKey", path: "TrapPKey", format: "0x%04X"},
	{label: "Trap HL/QP", path: "TrapHL|TrapQP", format: "0x%08X"},
	{label: "Trap QKey", path: "TrapQKey", format: "0x%08X"},
}}

// saShortPortInfoDump is the form -s prints.
var saShortPortInfoDump = saDump{title: "PortInfoRecord dump:\n", col: 24, fields: []saField{
	{label: "EndPortLid", path: "EndPortLID", format: "%d"},
	{label: "PortNum", path: "PortNum", format: "%d"},
	{label: "base_lid", path: "PortInfo.LID", format: "%d"},
	{label: "master_sm_base_lid", path: "PortInfo.MasterSMLID", format: "%d"},
	{label: "capability_mask", path: "PortInfo.CapabilityMask", format: "0x%X"},
}}

// saPortInfoRecordDump ends in libibmad's dotted PortInfo, two tabs
// before each line (dump_portinfo).
var saPortInfoRecordDump = saDump{title: "PortInfoRecord dump:\n\tRID\n", col: 24, fields: []saField{
	{label: "EndPortLid", path: "EndPortLID", format: "%d"},
	{label: "PortNum", path: "PortNum", format: "%d"},
	{label: "Options", path: "Options", format: "0x%x"},
	saHeading("\tPortInfo dump:\n"),
}, table: func(w *bufio.Writer, r *saRecord) {
	pi := &r.Struct.(*mad.PortInfoRecord).PortInfo
	for _, line := range strings.SplitAfter(mad.Dotted(pi, &mad.DottedOptions{ShowKeys: r.showKeys}), "\n") {
		if line != "" && !strings.HasPrefix(line, "\t") {
			w.WriteString("\t\t")
		}
		w.WriteString(line)
	}
}}

// saCProxyJoin is the MCMemberRecord's ProxyJoin as the C tool reads it:
// a one-bit C bitfield, the low bit of byte 49 on x86, where OpenSM puts
// it too (IBA 15.2.5.17 has it in the high bit: the decoded ProxyJoin).
func saCProxyJoin(r *saRecord) any { return r.cProxyJoin }

var saMCMemberRecordDump = saDump{title: "MCMember Record dump:\n", col: 24, fields: []saField{
	{label: "MGID", path: "MGID", format: "%s"},
	{label: "PortGid", path: "PortGID", format: "%s"},
	{label: "qkey", path: "QKey", format: "0x%x"},
	{label: "mlid", path: "MLID", format: "0x%x"},
	{label: "mtu", path: "MTUSelector|MTU", format: "0x%x"},
	{label: "TClass", path: "TClass", format: "0x%x"},
	{label: "pkey", path: "PKey", format: "0x%x"},
	{label: "rate", path: "RateSelector|Rate", format: "0x%x"},
	{label: "pkt_life", path: "PacketLifeTimeSelector|PacketLifeTime", format: "0x%x"},
	{label: "SL", path: "SL", format: "0x%x"},
	{label: "FlowLabel", path: "FlowLabel", format: "0x%x"},
	{label: "HopLimit", path: "HopLimit", format: "0x%x"},
	{label: "Scope", path: "Scope", format: "0x%x"},
	{label: "JoinState", path: "JoinState", format: "0x%x"},
	{label: "ProxyJoin", value: saCProxyJoin, format: "0x%x"},
}}

var saMCGroupDump = saDump{title: "MCMemberRecord group dump:\n", col: 24, fields: []saField{
	{label: "MGID", path: "MGID", format: "%s"},
	{label: "Mlid", path: "MLID", format: "0x%X"},
	{label: "Mtu", path: "MTUSelector|MTU", format: "0x%X"},
	{label: "pkey", path: "PKey", format: "0x%X"},
	{label: "Rate", path: "RateSelector|Rate", format: "0x%X"},
	{label: "SL", path: "SL", format: "0x%X"},
}}

var saMCMemberDump = saDump{title: "MCMemberRecord member dump:\n", col: 24, fields: []saField{
	{label: "MGID", path: "MGID", format: "%s"},
	{label: "Mlid", path: "MLID", format: "0x%X"},
	{label: "PortGid", path: "PortGID", format: "%s"},
	{label: "ScopeState", path: "Scope|JoinState", format: "0x%X"},
	{label: "ProxyJoin", value: saCProxyJoin, format: "0x%X"},
	{label: "NodeDescription", format: "%s", value: func(r *saRecord) any { return r.name }},
}}

// newSaServiceDump is the ServiceRecord dump: made when used, since its
// fields are a call (a package-level call runs at every start).
func newSaServiceDump() *saDump {
	return &saDump{title: "ServiceRecord dump:\n", col: 24, fields: slices.Concat([]saField{
		{label: "ServiceID", path: "ServiceID", format: "0x%016x"},
		{label: "ServiceGID", path: "ServiceGID", format: "%s"},
		{label: "ServiceP_Key", path: "ServicePKey", format: "0x%X"},
		{label: "ServiceLease", path: "ServiceLease", format: "0x%X"},
		{label: "ServiceKey", path: "ServiceKey", format: "0x%x", secret: true},
		{label: "ServiceName", path: "ServiceName", format: "%s"},
	},
		saEach("ServiceData8.%d", "ServiceData8[%d]", 16, 1, "0x%X"),
		saEach("ServiceData16.%d", "ServiceData16[%d]", 8, 1, "0x%X"),
		saEach("ServiceData32.%d", "ServiceData32[%d]", 4, 1, "0x%X"),
		saEach("ServiceData64.%d", "ServiceData64[%d]", 2, 1, "0x%016x"),
	)}
}

// saServiceAssociationDump is ibtool's (the C tool has no such query), in
// the ServiceRecord's style.
var saServiceAssociationDump = saDump{title: "ServiceAssociationRecord dump:\n", col: 24, fields: []saField{
	{label: "ServiceKey", path: "ServiceKey", format: "0x%x", secret: true},
	{label: "ServiceName", path: "ServiceName", format: "%s"},
}}

var saSMInfoDump = saDump{title: "SMInfoRecord dump:\n\t\tRID\n", col: 22, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	saHeading("\t\tSMInfo dump:\n"),
	{label: "GUID", path: "SMInfo.GUID", format: "0x%016x"},
	{label: "SM_Key", path: "SMInfo.SMKey", format: "0x%016x"}, // shown without -K too, as in C
	{label: "ActCount", path: "SMInfo.ActCount", format: "%d"},
	{label: "Priority", path: "SMInfo.Priority", format: "%d"},
	{label: "SMState", path: "SMInfo.SMState", format: "%d"},
}}

var saSwitchInfoDump = saDump{title: "SwitchInfoRecord dump:\n\t\tRID\n", col: 40, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	saHeading("\t\tSwitchInfo dump:\n"),
	{label: "LinearFDBCap", path: "SwitchInfo.LinearFDBCap", format: "0x%X"},
	{label: "RandomFDBCap", path: "SwitchInfo.RandomFDBCap", format: "0x%X"},
	{label: "MulticastFDBCap", path: "SwitchInfo.MulticastFDBCap", format: "0x%X"},
	{label: "LinearFDBTop", path: "SwitchInfo.LinearFDBTop", format: "0x%X"},
	{label: "DefaultPort", path: "SwitchInfo.DefaultPort", format: "%d"},
	{label: "DefaultMulticastPrimaryPort", path: "SwitchInfo.DefaultMulticastPrimaryPort", format: "%d"},
	{label: "DefaultMulticastNotPrimaryPort", path: "SwitchInfo.DefaultMulticastNotPrimaryPort", format: "%d"},
	{label: "LifeTimeValue/PortStateChange/OpSL2VL", format: "0x%X",
		path: "SwitchInfo.LifeTimeValue|SwitchInfo.PortStateChange|SwitchInfo.OptimizedSLtoVLMapping"},
	{label: "LIDsPerPort", path: "SwitchInfo.LIDsPerPort", format: "0x%X"},
	{label: "PartitionEnforcementCap", path: "SwitchInfo.PartitionEnforcementCap", format: "0x%X"},
	{label: "flags", format: "0x%X", path: "SwitchInfo.InboundEnforcementCap|SwitchInfo.OutboundEnforcementCap|" +
		"SwitchInfo.FilterRawInboundCap|SwitchInfo.FilterRawOutboundCap|SwitchInfo.EnhancedPort0"},
	// Only if the SA's ClassPortInfo has IsMulticastTopSupported
	// (CapabilityMask2 bit 3).
	{label: "MulticastFDBTop", path: "SwitchInfo.MulticastFDBTop", format: "0x%X",
		when: func(res *saqueryResult, _ *saRecord) bool {
			return res.cpi != nil && res.cpi.CapabilityMask2&(1<<3) != 0
		}},
}}

func saGeneric(_ *saqueryResult, r *saRecord) bool {
	return r.Struct.(*mad.InformInfoRecord).InformInfo.IsGeneric != 0
}

func saVendor(res *saqueryResult, r *saRecord) bool { return !saGeneric(res, r) }

var saInformInfoDump = saDump{title: "InformInfoRecord dump:\n\t\tRID\n", col: 24, fields: []saField{
	{label: "SubscriberGID", path: "SubscriberGID", format: "%s"},
	{label: "SubscriberEnum", path: "Enum", format: "0x%X"},
	saHeading("\t\tInformInfo dump:\n"),
	{label: "gid", path: "InformInfo.GID", format: "%s"},
	{label: "lid_range_begin", path: "InformInfo.LIDRangeBegin", format: "%d"},
	{label: "lid_range_end", path: "InformInfo.LIDRangeEnd", format: "%d"},
	{label: "is_generic", path: "InformInfo.IsGeneric", format: "0x%X"},
	{label: "subscribe", path: "InformInfo.Subscribe", format: "0x%X"},
	{label: "trap_type", path: "InformInfo.Type", format: "0x%X"},
	{label: "trap_num", path: "InformInfo.TrapNumber", format: "%d", when: saGeneric},
	{label: "dev_id", path: "InformInfo.TrapNumber", format: "0x%X", when: saVendor},
	{label: "qpn", path: "InformInfo.QPN", format: "0x%06X", secret: true},
	{label: "resp_time_val", path: "InformInfo.RespTimeValue", format: "0x%X"},
	{label: "node_type", path: "InformInfo.ProducerType", format: "0x%06X", when: saGeneric},
	{label: "vendor_id", path: "InformInfo.ProducerType", format: "0x%06X", when: saVendor},
}}
