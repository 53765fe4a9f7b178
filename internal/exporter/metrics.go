package exporter

import "github.com/ibtool/ibtool/internal/mad"

// The metrics, named by Prometheus' conventions: ib_ prefix, base units
// (bytes, seconds), _total on counters, _info for label-only series.
// Every port series has the labels node_guid, node_name and port. The
// counters' names end as treydock/infiniband_exporter's do for the same
// counter (its infiniband_switch_port_symbol_error_total is our
// ib_port_symbol_error_total), so its dashboards and rules carry over
// with a rename of the prefix; docs/exporter.md has the whole table.

// metric is one metric family: its name, HELP and TYPE.
type metric struct {
	name, help string
	counter    bool // else a gauge
}

func (m *metric) typ() string {
	if m.counter {
		return "counter"
	}
	return "gauge"
}

// counterID is one port counter the exporter reads.
type counterID uint8

// The counters, in the order they are written.
const (
	cXmitData counterID = iota
	cRcvData
	cXmitPkts
	cRcvPkts
	cUnicastXmitPkts
	cUnicastRcvPkts
	cMulticastXmitPkts
	cMulticastRcvPkts
	cSymbolErrors
	cLinkErrorRecovery
	cLinkDowned
	cRcvErrors
	cRcvRemotePhysErrors
	cRcvSwitchRelayErrors
	cXmitDiscards
	cXmitConstraintErrors
	cRcvConstraintErrors
	cLocalLinkIntegrityErrors
	cExcessiveBufferOverrunErrors
	cVL15Dropped
	cXmitWait
	cQP1Dropped
	// PortRcvErrorDetails (IBA 16.1.4.1), with --collector.error-details.
	cLocalPhysErrors
	cMalformedPktErrors
	cBufferOverrunErrors
	cDLIDMappingErrors
	cVLMappingErrors
	cLoopingErrors
	numCounters
)

// firstDetail is the first counter of PortRcvErrorDetails.
const firstDetail = cLocalPhysErrors

func portCounter(name, help string) metric {
	return metric{name: "ib_port_" + name, help: help, counter: true}
}

// counterMetrics are the counters' families, by counterID.
var counterMetrics = [numCounters]metric{
	cXmitData:                     portCounter("transmit_data_bytes_total", "Data octets transmitted on the port (PortXmitData, 4-octet words, times 4)."),
	cRcvData:                      portCounter("receive_data_bytes_total", "Data octets received on the port (PortRcvData, 4-octet words, times 4)."),
	cXmitPkts:                     portCounter("transmit_packets_total", "Packets transmitted on the port (PortXmitPkts)."),
	cRcvPkts:                      portCounter("receive_packets_total", "Packets received on the port (PortRcvPkts)."),
	cUnicastXmitPkts:              portCounter("unicast_transmit_packets_total", "Unicast packets transmitted (PortUnicastXmitPkts)."),
	cUnicastRcvPkts:               portCounter("unicast_receive_packets_total", "Unicast packets received (PortUnicastRcvPkts)."),
	cMulticastXmitPkts:            portCounter("multicast_transmit_packets_total", "Multicast packets transmitted (PortMulticastXmitPkts)."),
	cMulticastRcvPkts:             portCounter("multicast_receive_packets_total", "Multicast packets received (PortMulticastRcvPkts)."),
	cSymbolErrors:                 portCounter("symbol_error_total", "Minor link errors detected on physical lanes (SymbolErrorCounter)."),
	cLinkErrorRecovery:            portCounter("link_error_recovery_total", "Successful link error recoveries (LinkErrorRecoveryCounter)."),
	cLinkDowned:                   portCounter("link_downed_total", "Times the link failed its error recovery and went down (LinkDownedCounter)."),
	cRcvErrors:                    portCounter("receive_errors_total", "Packets with errors received (PortRcvErrors)."),
	cRcvRemotePhysErrors:          portCounter("receive_remote_physical_errors_total", "Packets received marked with the EBP delimiter (PortRcvRemotePhysicalErrors)."),
	cRcvSwitchRelayErrors:         portCounter("receive_switch_relay_errors_total", "Packets received the switch could not forward (PortRcvSwitchRelayErrors)."),
	cXmitDiscards:                 portCounter("transmit_discards_total", "Outbound packets discarded (PortXmitDiscards)."),
	cXmitConstraintErrors:         portCounter("transmit_constraint_errors_total", "Packets not transmitted for constraints (PortXmitConstraintErrors)."),
	cRcvConstraintErrors:          portCounter("receive_constraint_errors_total", "Packets received and discarded for constraints (PortRcvConstraintErrors)."),
	cLocalLinkIntegrityErrors:     portCounter("local_link_integrity_errors_total", "Times local physical errors exceeded the threshold (LocalLinkIntegrityErrors)."),
	cExcessiveBufferOverrunErrors: portCounter("excessive_buffer_overrun_errors_total", "Consecutive flow-control update periods with buffer overrun (ExcessiveBufferOverrunErrors)."),
	cVL15Dropped:                  portCounter("vl15_dropped_total", "Incoming VL15 packets dropped (VL15Dropped)."),
	cXmitWait:                     portCounter("transmit_wait_total", "Ticks during which the port had data to send but no flow-control credits (PortXmitWait)."),
	cQP1Dropped:                   portCounter("qp1_dropped_total", "MADs to QP1 dropped for lack of resources (QP1Dropped; PMAs with IsQP1DroppedSupported)."),
	cLocalPhysErrors:              portCounter("local_physical_errors_total", "Packets received with a local physical error: ICRC, VCRC, FCCRC, ... (PortRcvErrorDetails PortLocalPhysicalErrors)."),
	cMalformedPktErrors:           portCounter("malformed_packet_errors_total", "Malformed packets received (PortRcvErrorDetails PortMalformedPacketErrors)."),
	cBufferOverrunErrors:          portCounter("buffer_overrun_errors_total", "Packets received with a receive buffer overrun (PortRcvErrorDetails PortBufferOverrunErrors)."),
	// "dli", not "dlid": the name treydock's exporter gives it.
	cDLIDMappingErrors: portCounter("dli_mapping_errors_total", "Packets received whose DLID the switch could not map to a port (PortRcvErrorDetails PortDLIDMappingErrors)."),
	cVLMappingErrors:   portCounter("vl_mapping_errors_total", "Packets received whose SL the port could not map to a VL (PortRcvErrorDetails PortVLMappingErrors)."),
	cLoopingErrors:     portCounter("looping_errors_total", "Packets received that would have left by the port they came in (PortRcvErrorDetails PortLoopingErrors)."),
}

// portValues are one port's counters as read in a sweep: the value of
// each counter whose bit is set in have.
type portValues struct {
	v    [numCounters]uint64
	have uint32
	// err is the first read of the port that failed, nil if none.
	err error
}

func (p *portValues) set(c counterID, v uint64) {
	p.v[c] = v
	p.have |= 1 << c
}

func (p *portValues) has(c counterID) bool { return p.have&(1<<c) != 0 }

// setCounters takes what was read of a port: each counter from
// PortCountersExtended where the PMA has it there (64 bits), else from
// PortCounters; nothing of an attribute that was not read. caps are the
// node's PMA's capabilities (IBA 16.1.3.1).
func (p *portValues) setCounters(caps capsView, basic *mad.PortCounters, ext *mad.PortCountersExtended) {
	if ext != nil {
		// The data and packet counters are 64-bit on every PMA with
		// PortCountersExtended; the unicast and multicast counts only on
		// those with ExtendedWidthSupported (not ...NoIETF).
		p.set(cXmitData, 4*ext.PortXmitData)
		p.set(cRcvData, 4*ext.PortRcvData)
		p.set(cXmitPkts, ext.PortXmitPkts)
		p.set(cRcvPkts, ext.PortRcvPkts)
		if caps.ietf {
			p.set(cUnicastXmitPkts, ext.PortUnicastXmitPkts)
			p.set(cUnicastRcvPkts, ext.PortUnicastRcvPkts)
			p.set(cMulticastXmitPkts, ext.PortMulticastXmitPkts)
			p.set(cMulticastRcvPkts, ext.PortMulticastRcvPkts)
		}
	} else if basic != nil {
		p.set(cXmitData, 4*uint64(basic.PortXmitData))
		p.set(cRcvData, 4*uint64(basic.PortRcvData))
		p.set(cXmitPkts, uint64(basic.PortXmitPkts))
		p.set(cRcvPkts, uint64(basic.PortRcvPkts))
	}
	switch {
	case ext != nil && caps.extErrors:
		// AdditionalPortCountersExtended: the error counters, XmitWait
		// and QP1Dropped in 64 bits.
		p.set(cSymbolErrors, ext.SymbolErrorCounter)
		p.set(cLinkErrorRecovery, ext.LinkErrorRecoveryCounter)
		p.set(cLinkDowned, ext.LinkDownedCounter)
		p.set(cRcvErrors, ext.PortRcvErrors)
		p.set(cRcvRemotePhysErrors, ext.PortRcvRemotePhysicalErrors)
		p.set(cRcvSwitchRelayErrors, ext.PortRcvSwitchRelayErrors)
		p.set(cXmitDiscards, ext.PortXmitDiscards)
		p.set(cXmitConstraintErrors, ext.PortXmitConstraintErrors)
		p.set(cRcvConstraintErrors, ext.PortRcvConstraintErrors)
		p.set(cLocalLinkIntegrityErrors, ext.LocalLinkIntegrityErrors)
		p.set(cExcessiveBufferOverrunErrors, ext.ExcessiveBufferOverrunErrors)
		p.set(cVL15Dropped, ext.VL15Dropped)
		p.set(cXmitWait, ext.PortXmitWait)
		if caps.qp1Dropped {
			p.set(cQP1Dropped, ext.QP1Dropped)
		}
	case basic != nil:
		p.set(cSymbolErrors, uint64(basic.SymbolErrorCounter))
		p.set(cLinkErrorRecovery, uint64(basic.LinkErrorRecoveryCounter))
		p.set(cLinkDowned, uint64(basic.LinkDownedCounter))
		p.set(cRcvErrors, uint64(basic.PortRcvErrors))
		p.set(cRcvRemotePhysErrors, uint64(basic.PortRcvRemotePhysicalErrors))
		p.set(cRcvSwitchRelayErrors, uint64(basic.PortRcvSwitchRelayErrors))
		p.set(cXmitDiscards, uint64(basic.PortXmitDiscards))
		p.set(cXmitConstraintErrors, uint64(basic.PortXmitConstraintErrors))
		p.set(cRcvConstraintErrors, uint64(basic.PortRcvConstraintErrors))
		p.set(cLocalLinkIntegrityErrors, uint64(basic.LocalLinkIntegrityErrors))
		p.set(cExcessiveBufferOverrunErrors, uint64(basic.ExcessiveBufferOverrunErrors))
		p.set(cVL15Dropped, uint64(basic.VL15Dropped))
		// PortXmitWait and QP1Dropped sit in fields that are reserved on
		// a PMA without the capability.
		if caps.xmitWait {
			p.set(cXmitWait, uint64(basic.PortXmitWait))
		}
		if caps.qp1Dropped {
			p.set(cQP1Dropped, uint64(basic.QP1Dropped))
		}
	}
}

// setDetails takes a port's PortRcvErrorDetails.
func (p *portValues) setDetails(d *mad.PortRcvErrorDetails) {
	p.set(cLocalPhysErrors, uint64(d.PortLocalPhysicalErrors))
	p.set(cMalformedPktErrors, uint64(d.PortMalformedPacketErrors))
	p.set(cBufferOverrunErrors, uint64(d.PortBufferOverrunErrors))
	p.set(cDLIDMappingErrors, uint64(d.PortDLIDMappingErrors))
	p.set(cVLMappingErrors, uint64(d.PortVLMappingErrors))
	p.set(cLoopingErrors, uint64(d.PortLoopingErrors))
}

// Link metrics, from the discovery (refreshed on its interval).
var (
	stateMetric     = metric{name: "ib_port_state", help: "Logical port state (PortInfo.PortState): 1 Down, 2 Initialize, 3 Armed, 4 Active."}
	physStateMetric = metric{name: "ib_port_physical_state", help: "Physical port state (PortInfo.PortPhysicalState): 2 Polling, 3 Disabled, 5 LinkUp, ..."}
	widthMetric     = metric{name: "ib_port_link_width_lanes", help: "Active link width in lanes (1, 2, 4, 8, 12)."}
	rateMetric      = metric{name: "ib_port_link_rate_bytes_per_second", help: "Nominal data rate of the active link (4X EDR: 100 Gb/s, 12.5e9 bytes/s)."}
	degradedMetric  = metric{name: "ib_port_link_degraded", help: "1 for a link running narrower or slower than both its ends support (iblinkinfo's \"Could be\"), else 0."}
	linkInfoMetric  = metric{name: "ib_port_link_info", help: "The port's link: the LID, the active width and speed, and the node and port at the other end."}
	nodeInfoMetric  = metric{name: "ib_node_info", help: "A node of the fabric."}
)

// Scrape metrics: what this scrape read.
var (
	portScrapeErrMetric  = metric{name: "ib_port_scrape_error", help: "1 for a port whose counters could not be read in this scrape (attribute: what failed; reason: timeout, status or other)."}
	scrapeCompleteMetric = metric{name: "ib_scrape_complete", help: "1 when this scrape read every port it should have; 0 when its deadline (X-Prometheus-Scrape-Timeout-Seconds) came first and it returned what it had."}
	scrapePortsMetric    = metric{name: "ib_scrape_ports", help: "Ports whose counters this scrape reads: the linked ports of the discovery (of the shard)."}
	scrapePortErrMetric  = metric{name: "ib_scrape_port_errors", help: "Ports whose counter read failed in this scrape (a lost or refused MAD)."}
	scrapeUnreadMetric   = metric{name: "ib_scrape_ports_unread", help: "Ports this scrape had no time to read (its deadline came first)."}
	scrapeDurMetric      = metric{name: "ib_scrape_duration_seconds", help: "Time the counter reads of this scrape took."}
)

// The exporter's own metrics.
var (
	buildInfoMetric   = metric{name: "ibtool_build_info", help: "The ibtool-exporter build: its version and the Go version that built it."}
	madRequestsMetric = metric{name: "ib_exporter_mad_requests_total", help: "MAD requests the exporter has made (each once, however often it was sent).", counter: true}
	madResendsMetric  = metric{name: "ib_exporter_mad_resends_total", help: "MADs the exporter sent again after a request timed out.", counter: true}
	madLostMetric     = metric{name: "ib_exporter_mad_lost_total", help: "MAD requests that got no reply after every resend.", counter: true}
	madUnmatchMetric  = metric{name: "ib_exporter_mad_unmatched_replies_total", help: "Replies that matched no request in flight (late or duplicate).", counter: true}
	sweepsMetric      = metric{name: "ib_exporter_sweeps_total", help: "Counter sweeps of the fabric (one fan-out each; concurrent scrapes share one).", counter: true}
	scrapesMetric     = metric{name: "ib_exporter_scrapes_total", help: "Scrapes served.", counter: true}
)

// Discovery metrics.
var (
	discoveryNodesMetric = metric{name: "ib_discovery_nodes", help: "Nodes in the cached fabric discovery."}
	discoveryErrMetric   = metric{name: "ib_discovery_walk_errors", help: "Queries that failed during the last discovery (the fabric is missing what they would have found)."}
	discoveryFailMetric  = metric{name: "ib_discovery_failures_total", help: "Discoveries that failed altogether (the previous fabric was kept).", counter: true}
	discoveryTimeMetric  = metric{name: "ib_discovery_last_success_timestamp_seconds", help: "When the cached fabric was discovered (Unix time)."}
	discoveryDurMetric   = metric{name: "ib_discovery_duration_seconds", help: "How long the last successful discovery took."}
	shardNodesMetric     = metric{name: "ib_shard_nodes", help: "Nodes of the discovered fabric this exporter's shard exports (--shard; all without it)."}
)
