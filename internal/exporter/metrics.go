package exporter

import "github.com/prometheus/client_golang/prometheus"

// The metrics, named by Prometheus' conventions: ib_ prefix, base units
// (bytes, seconds), _total on counters, _info for label-only series.
// Every port series has the labels node_guid, node_name and port.

var portLabels = []string{"node_guid", "node_name", "port"}

func portDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("ib_port_"+name, help, portLabels, nil)
}

// counterField is one PortCounters/PortCountersExtended counter exported.
type counterField struct {
	desc *prometheus.Desc
	// basic and ext read the counter from either attribute; nil where the
	// attribute does not have it. scale turns the value into the metric's
	// unit (4-octet words into bytes).
	basic func(*portValues) uint64
	ext   func(*portValues) uint64
	// data marks the data and packet counters (64-bit in
	// PortCountersExtended on every PMA that has it), as opposed to error
	// counters (64-bit only with AdditionalPortCountersExtended).
	data bool
	// ietf marks counters PortCountersExtended has only on PMAs with
	// ExtendedWidthSupported (not ...NoIETF): the unicast and multicast
	// packet counts.
	ietf bool
}

var counterFields = []counterField{
	{desc: portDesc("transmit_data_bytes_total", "Data octets transmitted on the port (PortXmitData, 4-octet words, times 4)."), data: true,
		basic: func(v *portValues) uint64 { return 4 * uint64(v.basic.PortXmitData) }, ext: func(v *portValues) uint64 { return 4 * v.ext.PortXmitData }},
	{desc: portDesc("receive_data_bytes_total", "Data octets received on the port (PortRcvData, 4-octet words, times 4)."), data: true,
		basic: func(v *portValues) uint64 { return 4 * uint64(v.basic.PortRcvData) }, ext: func(v *portValues) uint64 { return 4 * v.ext.PortRcvData }},
	{desc: portDesc("transmit_packets_total", "Packets transmitted on the port (PortXmitPkts)."), data: true,
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortXmitPkts) }, ext: func(v *portValues) uint64 { return v.ext.PortXmitPkts }},
	{desc: portDesc("receive_packets_total", "Packets received on the port (PortRcvPkts)."), data: true,
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvPkts) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvPkts }},
	{desc: portDesc("unicast_transmit_packets_total", "Unicast packets transmitted (PortUnicastXmitPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortUnicastXmitPkts }},
	{desc: portDesc("unicast_receive_packets_total", "Unicast packets received (PortUnicastRcvPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortUnicastRcvPkts }},
	{desc: portDesc("multicast_transmit_packets_total", "Multicast packets transmitted (PortMulticastXmitPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortMulticastXmitPkts }},
	{desc: portDesc("multicast_receive_packets_total", "Multicast packets received (PortMulticastRcvPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortMulticastRcvPkts }},
	{desc: portDesc("symbol_errors_total", "Minor link errors detected on physical lanes (SymbolErrorCounter)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.SymbolErrorCounter) }, ext: func(v *portValues) uint64 { return v.ext.SymbolErrorCounter }},
	{desc: portDesc("link_error_recovery_total", "Successful link error recoveries (LinkErrorRecoveryCounter)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.LinkErrorRecoveryCounter) }, ext: func(v *portValues) uint64 { return v.ext.LinkErrorRecoveryCounter }},
	{desc: portDesc("link_downed_total", "Times the link failed its error recovery and went down (LinkDownedCounter)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.LinkDownedCounter) }, ext: func(v *portValues) uint64 { return v.ext.LinkDownedCounter }},
	{desc: portDesc("receive_errors_total", "Packets with errors received (PortRcvErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvErrors }},
	{desc: portDesc("receive_remote_physical_errors_total", "Packets received marked with the EBP delimiter (PortRcvRemotePhysicalErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvRemotePhysicalErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvRemotePhysicalErrors }},
	{desc: portDesc("receive_switch_relay_errors_total", "Packets received the switch could not forward (PortRcvSwitchRelayErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvSwitchRelayErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvSwitchRelayErrors }},
	{desc: portDesc("transmit_discards_total", "Outbound packets discarded (PortXmitDiscards)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortXmitDiscards) }, ext: func(v *portValues) uint64 { return v.ext.PortXmitDiscards }},
	{desc: portDesc("transmit_constraint_errors_total", "Packets not transmitted for constraints (PortXmitConstraintErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortXmitConstraintErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortXmitConstraintErrors }},
	{desc: portDesc("receive_constraint_errors_total", "Packets received and discarded for constraints (PortRcvConstraintErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvConstraintErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvConstraintErrors }},
	{desc: portDesc("local_link_integrity_errors_total", "Times local physical errors exceeded the threshold (LocalLinkIntegrityErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.LocalLinkIntegrityErrors) }, ext: func(v *portValues) uint64 { return v.ext.LocalLinkIntegrityErrors }},
	{desc: portDesc("excessive_buffer_overrun_errors_total", "Consecutive flow-control update periods with buffer overrun (ExcessiveBufferOverrunErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.ExcessiveBufferOverrunErrors) }, ext: func(v *portValues) uint64 { return v.ext.ExcessiveBufferOverrunErrors }},
	{desc: portDesc("vl15_dropped_total", "Incoming VL15 packets dropped (VL15Dropped)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.VL15Dropped) }, ext: func(v *portValues) uint64 { return v.ext.VL15Dropped }},
}

// xmitWait is PortXmitWait: in PortCounters only on PMAs with
// PortCountersXmitWaitSupported.
var xmitWaitDesc = portDesc("transmit_wait_total", "Ticks during which the port had data to send but no flow-control credits (PortXmitWait).")

// Link metrics, from the discovery (refreshed on its interval).
var (
	stateDesc         = portDesc("state", "Logical port state (PortInfo.PortState): 1 Down, 2 Initialize, 3 Armed, 4 Active.")
	physStateDesc     = portDesc("physical_state", "Physical port state (PortInfo.PortPhysicalState): 2 Polling, 3 Disabled, 5 LinkUp, ...")
	widthDesc         = portDesc("link_width_lanes", "Active link width in lanes (1, 2, 4, 8, 12).")
	rateDesc          = portDesc("link_rate_bytes_per_second", "Nominal data rate of the active link (4X EDR: 100 Gb/s, 12.5e9 bytes/s).")
	linkInfoDesc      = prometheus.NewDesc("ib_port_link_info", "The port's link: the LID, and the node and port at the other end.", append(append([]string{}, portLabels...), "lid", "width", "speed", "remote_guid", "remote_name", "remote_port"), nil)
	nodeInfoDesc      = prometheus.NewDesc("ib_node_info", "A node of the fabric.", []string{"node_guid", "node_name", "node_type", "ports"}, nil)
	portScrapeErrDesc = prometheus.NewDesc("ib_port_scrape_error", "1 for a port whose counters could not be read in this scrape (attribute: what failed; reason: timeout, status or other).", append(append([]string{}, portLabels...), "attribute", "reason"), nil)
)

// Scrape and discovery metrics.
var (
	scrapePortsDesc    = prometheus.NewDesc("ib_scrape_ports", "Ports whose counters this scrape read.", nil, nil)
	scrapePortErrDesc  = prometheus.NewDesc("ib_scrape_port_errors", "Ports whose counter read failed in this scrape (a lost or refused MAD).", nil, nil)
	scrapeDurationDesc = prometheus.NewDesc("ib_scrape_duration_seconds", "Time this scrape took to read the counters.", nil, nil)
	madsDesc           = prometheus.NewDesc("ib_exporter_mads_total", "MADs the exporter has sent, retried and lost (no reply after the retries).", []string{"result"}, nil)
	discoveryNodesDesc = prometheus.NewDesc("ib_discovery_nodes", "Nodes in the cached fabric discovery.", []string{"node_type"}, nil)
	discoveryErrDesc   = prometheus.NewDesc("ib_discovery_walk_errors", "Queries that failed during the last discovery (the fabric is missing what they would have found).", nil, nil)
	discoveryFailDesc  = prometheus.NewDesc("ib_discovery_failures_total", "Discoveries that failed altogether (the previous fabric was kept).", nil, nil)
	discoveryTimeDesc  = prometheus.NewDesc("ib_discovery_last_success_timestamp_seconds", "When the cached fabric was discovered (Unix time).", nil, nil)
	discoveryDurDesc   = prometheus.NewDesc("ib_discovery_duration_seconds", "How long the last successful discovery took.", nil, nil)
)

func allDescs() []*prometheus.Desc {
	d := []*prometheus.Desc{xmitWaitDesc, stateDesc, physStateDesc, widthDesc, rateDesc, linkInfoDesc, nodeInfoDesc, portScrapeErrDesc,
		scrapePortsDesc, scrapePortErrDesc, scrapeDurationDesc, madsDesc, discoveryNodesDesc, discoveryErrDesc, discoveryFailDesc,
		discoveryTimeDesc, discoveryDurDesc}
	for _, f := range counterFields {
		d = append(d, f.desc)
	}
	return d
}
