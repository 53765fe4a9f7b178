package exporter

import (
	"slices"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// The metrics, named by Prometheus' conventions: ib_ prefix, base units
// (bytes, seconds), _total on counters, _info for label-only series.
// Every port series has the labels node_guid, node_name and port.

// metricDef is one metric family: what HELP and TYPE say, and its label
// names (sorted, as the exposition has them).
type metricDef struct {
	name, help string
	typ        dto.MetricType
	labels     []string
}

var (
	counter = dto.MetricType_COUNTER
	gauge   = dto.MetricType_GAUGE
)

var portLabels = []string{"node_guid", "node_name", "port"}

func portDef(name, help string, typ dto.MetricType) *metricDef {
	return &metricDef{name: "ib_port_" + name, help: help, typ: typ, labels: portLabels}
}

// counterField is one PortCounters/PortCountersExtended counter exported.
type counterField struct {
	def *metricDef
	// basic and ext read the counter from either attribute; nil where the
	// attribute does not have it. Data counters are turned into bytes
	// (the attributes count 4-octet words).
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

func counterDef(name, help string) *metricDef { return portDef(name, help, counter) }

var counterFields = []counterField{
	{def: counterDef("transmit_data_bytes_total", "Data octets transmitted on the port (PortXmitData, 4-octet words, times 4)."), data: true,
		basic: func(v *portValues) uint64 { return 4 * uint64(v.basic.PortXmitData) }, ext: func(v *portValues) uint64 { return 4 * v.ext.PortXmitData }},
	{def: counterDef("receive_data_bytes_total", "Data octets received on the port (PortRcvData, 4-octet words, times 4)."), data: true,
		basic: func(v *portValues) uint64 { return 4 * uint64(v.basic.PortRcvData) }, ext: func(v *portValues) uint64 { return 4 * v.ext.PortRcvData }},
	{def: counterDef("transmit_packets_total", "Packets transmitted on the port (PortXmitPkts)."), data: true,
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortXmitPkts) }, ext: func(v *portValues) uint64 { return v.ext.PortXmitPkts }},
	{def: counterDef("receive_packets_total", "Packets received on the port (PortRcvPkts)."), data: true,
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvPkts) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvPkts }},
	{def: counterDef("unicast_transmit_packets_total", "Unicast packets transmitted (PortUnicastXmitPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortUnicastXmitPkts }},
	{def: counterDef("unicast_receive_packets_total", "Unicast packets received (PortUnicastRcvPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortUnicastRcvPkts }},
	{def: counterDef("multicast_transmit_packets_total", "Multicast packets transmitted (PortMulticastXmitPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortMulticastXmitPkts }},
	{def: counterDef("multicast_receive_packets_total", "Multicast packets received (PortMulticastRcvPkts)."), data: true, ietf: true,
		ext: func(v *portValues) uint64 { return v.ext.PortMulticastRcvPkts }},
	{def: counterDef("symbol_errors_total", "Minor link errors detected on physical lanes (SymbolErrorCounter)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.SymbolErrorCounter) }, ext: func(v *portValues) uint64 { return v.ext.SymbolErrorCounter }},
	{def: counterDef("link_error_recovery_total", "Successful link error recoveries (LinkErrorRecoveryCounter)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.LinkErrorRecoveryCounter) }, ext: func(v *portValues) uint64 { return v.ext.LinkErrorRecoveryCounter }},
	{def: counterDef("link_downed_total", "Times the link failed its error recovery and went down (LinkDownedCounter)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.LinkDownedCounter) }, ext: func(v *portValues) uint64 { return v.ext.LinkDownedCounter }},
	{def: counterDef("receive_errors_total", "Packets with errors received (PortRcvErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvErrors }},
	{def: counterDef("receive_remote_physical_errors_total", "Packets received marked with the EBP delimiter (PortRcvRemotePhysicalErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvRemotePhysicalErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvRemotePhysicalErrors }},
	{def: counterDef("receive_switch_relay_errors_total", "Packets received the switch could not forward (PortRcvSwitchRelayErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvSwitchRelayErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvSwitchRelayErrors }},
	{def: counterDef("transmit_discards_total", "Outbound packets discarded (PortXmitDiscards)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortXmitDiscards) }, ext: func(v *portValues) uint64 { return v.ext.PortXmitDiscards }},
	{def: counterDef("transmit_constraint_errors_total", "Packets not transmitted for constraints (PortXmitConstraintErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortXmitConstraintErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortXmitConstraintErrors }},
	{def: counterDef("receive_constraint_errors_total", "Packets received and discarded for constraints (PortRcvConstraintErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.PortRcvConstraintErrors) }, ext: func(v *portValues) uint64 { return v.ext.PortRcvConstraintErrors }},
	{def: counterDef("local_link_integrity_errors_total", "Times local physical errors exceeded the threshold (LocalLinkIntegrityErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.LocalLinkIntegrityErrors) }, ext: func(v *portValues) uint64 { return v.ext.LocalLinkIntegrityErrors }},
	{def: counterDef("excessive_buffer_overrun_errors_total", "Consecutive flow-control update periods with buffer overrun (ExcessiveBufferOverrunErrors)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.ExcessiveBufferOverrunErrors) }, ext: func(v *portValues) uint64 { return v.ext.ExcessiveBufferOverrunErrors }},
	{def: counterDef("vl15_dropped_total", "Incoming VL15 packets dropped (VL15Dropped)."),
		basic: func(v *portValues) uint64 { return uint64(v.basic.VL15Dropped) }, ext: func(v *portValues) uint64 { return v.ext.VL15Dropped }},
}

// xmitWaitDef is PortXmitWait: in PortCounters only on PMAs with
// PortCountersXmitWaitSupported.
var xmitWaitDef = counterDef("transmit_wait_total", "Ticks during which the port had data to send but no flow-control credits (PortXmitWait).")

// Link metrics, from the discovery (refreshed on its interval).
var (
	stateDef     = portDef("state", "Logical port state (PortInfo.PortState): 1 Down, 2 Initialize, 3 Armed, 4 Active.", gauge)
	physStateDef = portDef("physical_state", "Physical port state (PortInfo.PortPhysicalState): 2 Polling, 3 Disabled, 5 LinkUp, ...", gauge)
	widthDef     = portDef("link_width_lanes", "Active link width in lanes (1, 2, 4, 8, 12).", gauge)
	rateDef      = portDef("link_rate_bytes_per_second", "Nominal data rate of the active link (4X EDR: 100 Gb/s, 12.5e9 bytes/s).", gauge)
	linkInfoDef  = &metricDef{"ib_port_link_info", "The port's link: the LID, the active width and speed, and the node and port at the other end.", gauge,
		[]string{"lid", "node_guid", "node_name", "port", "remote_guid", "remote_name", "remote_port", "speed", "width"}}
	nodeInfoDef      = &metricDef{"ib_node_info", "A node of the fabric.", gauge, []string{"node_guid", "node_name", "node_type", "ports"}}
	portScrapeErrDef = &metricDef{"ib_port_scrape_error", "1 for a port whose counters could not be read in this scrape (attribute: what failed; reason: timeout, status or other).", gauge,
		[]string{"attribute", "node_guid", "node_name", "port", "reason"}}
)

// Scrape and discovery metrics.
var (
	scrapePortsDef    = &metricDef{name: "ib_scrape_ports", help: "Ports whose counters this scrape read.", typ: gauge}
	scrapePortErrDef  = &metricDef{name: "ib_scrape_port_errors", help: "Ports whose counter read failed in this scrape (a lost or refused MAD).", typ: gauge}
	scrapeDurationDef = &metricDef{name: "ib_scrape_duration_seconds", help: "Time this scrape took to read the counters.", typ: gauge}
	madsDef           = &metricDef{"ib_exporter_mads_total", "MADs the exporter has sent, retried and lost (no reply after the retries).", counter, []string{"result"}}
	discoveryNodesDef = &metricDef{"ib_discovery_nodes", "Nodes in the cached fabric discovery.", gauge, []string{"node_type"}}
	discoveryErrDef   = &metricDef{name: "ib_discovery_walk_errors", help: "Queries that failed during the last discovery (the fabric is missing what they would have found).", typ: gauge}
	discoveryFailDef  = &metricDef{name: "ib_discovery_failures_total", help: "Discoveries that failed altogether (the previous fabric was kept).", typ: counter}
	discoveryTimeDef  = &metricDef{name: "ib_discovery_last_success_timestamp_seconds", help: "When the cached fabric was discovered (Unix time).", typ: gauge}
	discoveryDurDef   = &metricDef{name: "ib_discovery_duration_seconds", help: "How long the last successful discovery took.", typ: gauge}
)

// labelPairs are the label pairs of def's series with values (in the
// order of def.labels).
func (def *metricDef) labelPairs(values ...string) []*dto.LabelPair {
	pairs := make([]*dto.LabelPair, len(def.labels))
	for i := range def.labels {
		pairs[i] = &dto.LabelPair{Name: &def.labels[i], Value: &values[i]}
	}
	return pairs
}

// families collects a scrape's metric families, and allocates their
// series in chunks: a 2000-node fabric has some 250 000 counter series,
// which one by one would be three allocations each (the metric, its
// counter or gauge, the value) for the garbage collector to chase.
type families struct {
	byDef   map[*metricDef]*dto.MetricFamily
	metrics []dto.Metric
	counter []dto.Counter
	gauge   []dto.Gauge
	values  []float64
}

// seriesChunk is how many series families allocates at once.
const seriesChunk = 4096

func newFamilies() *families { return &families{byDef: map[*metricDef]*dto.MetricFamily{}} }

// family is def's family, created empty with room for n series.
func (fs *families) family(def *metricDef, n int) *dto.MetricFamily {
	mf := fs.byDef[def]
	if mf == nil {
		mf = &dto.MetricFamily{Name: &def.name, Help: &def.help, Type: &def.typ, Metric: make([]*dto.Metric, 0, n)}
		fs.byDef[def] = mf
	}
	return mf
}

// reserve makes room for n more series of def.
func (fs *families) reserve(def *metricDef, n int) {
	mf := fs.family(def, n)
	mf.Metric = slices.Grow(mf.Metric, n)
}

// add adds a series of def: its labels and value.
func (fs *families) add(def *metricDef, labels []*dto.LabelPair, v float64) {
	if len(fs.metrics) == cap(fs.metrics) {
		fs.metrics = make([]dto.Metric, 0, seriesChunk)
	}
	fs.metrics = fs.metrics[:len(fs.metrics)+1]
	m := &fs.metrics[len(fs.metrics)-1]
	m.Label = labels
	value := fs.value(v)
	if def.typ == counter {
		if len(fs.counter) == cap(fs.counter) {
			fs.counter = make([]dto.Counter, 0, seriesChunk)
		}
		fs.counter = fs.counter[:len(fs.counter)+1]
		m.Counter = &fs.counter[len(fs.counter)-1]
		m.Counter.Value = value
	} else {
		if len(fs.gauge) == cap(fs.gauge) {
			fs.gauge = make([]dto.Gauge, 0, seriesChunk)
		}
		fs.gauge = fs.gauge[:len(fs.gauge)+1]
		m.Gauge = &fs.gauge[len(fs.gauge)-1]
		m.Gauge.Value = value
	}
	mf := fs.family(def, 1)
	mf.Metric = append(mf.Metric, m)
}

// value is a pointer to v, from the current chunk.
func (fs *families) value(v float64) *float64 {
	if len(fs.values) == cap(fs.values) {
		fs.values = make([]float64, 0, seriesChunk)
	}
	fs.values = append(fs.values, v)
	return &fs.values[len(fs.values)-1]
}

// with adds a series of def with label values.
func (fs *families) with(def *metricDef, v float64, values ...string) {
	fs.add(def, def.labelPairs(values...), v)
}

// sorted is the families by name, as a Gatherer returns them, without
// those reserved but left empty.
func (fs *families) sorted() []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(fs.byDef))
	for _, mf := range fs.byDef {
		if len(mf.Metric) > 0 {
			out = append(out, mf)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}
