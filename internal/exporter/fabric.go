package exporter

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/umad"
)

// fabricState is one discovery, reduced to what scrapes need: the ports
// of this exporter's shard with their label text and link values, and
// the counts the discovery metrics give. The discovery itself is not
// kept: for a 2000-node fabric its attribute blobs and maps are several
// times the size of what the metrics use.
type fabricState struct {
	at    time.Time
	took  time.Duration
	nodes []nodeState // of the shard
	ports []portState // of the shard, in node GUID and port order
	// read are the indexes in ports of the ports whose counters are read
	// (those with a link and a LID), and targets their PMAs.
	read    []int
	targets []query.CounterPort
	// kinds counts the discovered nodes by type (the whole fabric).
	kinds      [3]int // ca, router, switch
	walkErrors int
}

// nodeState is one node's ib_node_info labels.
type nodeState struct {
	labels string
}

// portState is what the metrics say of one port between discoveries.
type portState struct {
	// labels is the port's label text inside the braces:
	// node_guid="0x...",node_name="...",port="1".
	labels string
	state  uint8
	phys   uint8
	// The rest only for a port with a link.
	linked   bool
	lanes    int
	rate     float64 // bytes per second, 0 if unknown
	degraded bool
	// linkLabels are ib_port_link_info's labels past the port's own.
	linkLabels string
}

// nodeKinds are the node types of ib_discovery_nodes, in kinds' order.
var nodeKinds = [3]string{"ca", "router", "switch"}

// prepare reduces a discovery to the ports and nodes of shard.
func prepare(f *discovery.Fabric, names *nodename.Map, pkeyIndex uint16, shard Shard) *fabricState {
	st := &fabricState{walkErrors: len(f.Errors)}
	owner := shardOwners(f)
	for _, n := range f.SortedByGUID() {
		switch jsonv.NodeTypeOf(mad.NodeType(n.Type)) {
		case jsonv.CA:
			st.kinds[0]++
		case jsonv.Router:
			st.kinds[1]++
		case jsonv.Switch:
			st.kinds[2]++
		}
		if !shard.Has(owner[n]) {
			continue
		}
		guid := mad.GUID(n.GUID).String()
		name := labelValue(names.Name(n.GUID, n.Desc()))
		st.nodes = append(st.nodes, nodeState{labels: `node_guid="` + guid + `",node_name="` + name +
			`",node_type="` + string(jsonv.NodeTypeOf(mad.NodeType(n.Type))) + `",ports="` + strconv.Itoa(n.NumPorts) + `"`})
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.PortInfo == nil {
				continue
			}
			ps := portState{labels: `node_guid="` + guid + `",node_name="` + name + `",port="` + strconv.Itoa(p.Num) + `"`}
			setLink(&ps, p, names)
			lid := p.BaseLID
			if n.Type == discovery.NodeSwitch {
				lid = n.SMALID // a switch's PMA answers for all its ports at port 0's LID
			}
			if p.Remote != nil && lid != 0 {
				st.read = append(st.read, len(st.ports))
				st.targets = append(st.targets, query.CounterPort{
					NodeGUID: n.GUID, NodeType: mad.NodeType(n.Type), Port: p.Num,
					Dest: query.GMPAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey, PKeyIndex: pkeyIndex}),
				})
			}
			st.ports = append(st.ports, ps)
		}
	}
	return st
}

// setLink fills a port's state, and for a port with a link its width,
// rate, whether it runs below what both ends support, and its far end.
func setLink(ps *portState, p *discovery.Port, names *nodename.Map) {
	pi := p.Info()
	ps.state, ps.phys = uint8(pi.PortState), uint8(pi.PortPhysicalState)
	if p.Remote == nil {
		return
	}
	ps.linked = true
	rate := linkrate.Of(p).JSONRate()
	if lanes, err := strconv.Atoi(strings.TrimSuffix(string(rate.Width), "X")); err == nil {
		ps.lanes = lanes
	}
	ps.rate = rate.RateGbps * 1e9 / 8
	// Judged by what both ends enable: a link trains to that (IBA
	// 5.6.4.1), so less is a bad lane or cable, while iblinkinfo's
	// "Could be ..." (what they support) also flags every link an
	// administrator limited on purpose, and every link of ibsim.
	local, remote := health.EndOf(p), health.EndOf(p.Remote)
	ps.degraded = p.Remote.PortInfo != nil && health.CompareLink(local, &remote, health.Enabled).Below()
	r := p.Remote
	ps.linkLabels = `lid="` + strconv.Itoa(int(p.BaseLID)) + `",remote_guid="` + mad.GUID(r.Node.GUID).String() +
		`",remote_name="` + labelValue(names.Name(r.Node.GUID, r.Node.Desc())) + `",remote_port="` + strconv.Itoa(r.Num) +
		`",speed="` + labelValue(rate.SpeedText) + `",width="` + string(rate.Width) + `"`
}

// labelValue is s escaped for a label value of the text format (a
// backslash, a double quote and a newline escaped), as valid UTF-8: a
// NodeDescription is 64 bytes of anything.
func labelValue(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return labelEscaper.Replace(s)
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
