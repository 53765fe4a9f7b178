package render

import (
	"bufio"
	"fmt"
	"strconv"
	"time"

	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// Node-list selections of ibnetdiscover -l/-H/-S/-R (bit = node type).
const (
	ListCA     = 1 << discovery.NodeCA
	ListSwitch = 1 << discovery.NodeSwitch
	ListRouter = 1 << discovery.NodeRouter
	ListAll    = ListCA | ListSwitch | ListRouter
)

// --diffcheck keys (ibnetdiscover.c DIFF_FLAG_*).
const (
	DiffSwitch   = 0x01
	DiffCA       = 0x02
	DiffRouter   = 0x04
	DiffPort     = 0x08
	DiffLID      = 0x10
	DiffNodeDesc = 0x20
	DiffDefault  = DiffSwitch | DiffCA | DiffRouter | DiffPort
)

// FindPortNode is ibnd_find_port_guid(...)->node: the node owning a port
// with that GUID (a switch's ports all carry its port GUID).
func FindPortNode(f *discovery.Fabric, guid uint64) *discovery.Node {
	for _, n := range AllNodes(f) {
		for _, p := range n.Ports {
			if p != nil && p.GUID == guid && (p.PortInfo != nil || f.MADs == 0) {
				return n
			}
		}
	}
	return nil
}

// topoPrinter renders a fabric as ibnetdiscover (infiniband-diags 44).
type topoPrinter struct {
	W     *bufio.Writer
	f     *discovery.Fabric
	g     *discovery.Grouping
	names *nodename.Map
	full  bool
	// p0 is the last port 0 decoded (p0Info): every port of a switch
	// needs its port 0's capabilities.
	p0     *discovery.Port
	p0Info *mad.PortInfo
	buf    []byte // the port line being built
}

// rate is Of, decoding each switch's port 0 once.
func (tp *topoPrinter) rate(p *discovery.Port) linkrate.Rate {
	return linkrate.With(p, func(p *discovery.Port) *mad.PortInfo {
		if p.Num == 0 && p == tp.p0 {
			return tp.p0Info
		}
		pi := p.Info()
		if p.Num == 0 {
			tp.p0, tp.p0Info = p, pi
		}
		return pi
	})
}

func NewTopoPrinter(f *discovery.Fabric, names *nodename.Map, full bool) *topoPrinter {
	return &topoPrinter{f: f, g: f.Chassis(), names: names, full: full}
}

func (tp *topoPrinter) printf(format string, args ...any) { fmt.Fprintf(tp.W, format, args...) }

// TypeList is libibnetdisc's per-type list: newest node first.
func TypeList(f *discovery.Fabric, t int) []*discovery.Node {
	ns := f.NodesOfType(t)
	for i, j := 0, len(ns)-1; i < j; i, j = i+1, j-1 {
		ns[i], ns[j] = ns[j], ns[i]
	}
	return ns
}

// AllNodes is libibnetdisc's node list: newest first.
func AllNodes(f *discovery.Fabric) []*discovery.Node {
	ns := append([]*discovery.Node(nil), f.Nodes...)
	for i, j := 0, len(ns)-1; i < j; i, j = i+1, j-1 {
		ns[i], ns[j] = ns[j], ns[i]
	}
	return ns
}

// quotedName is ibnetdiscover's "S-<guid>" node name.
func quotedName(n *discovery.Node) string { return string(appendQuotedName(nil, n)) }

// appendQuotedName appends quotedName.
func appendQuotedName(b []byte, n *discovery.Node) []byte {
	c := byte('?')
	switch n.Type {
	case discovery.NodeSwitch:
		c = 'S'
	case discovery.NodeCA:
		c = 'H'
	case discovery.NodeRouter:
		c = 'R'
	}
	b = append(b, '"', c, '-')
	b = ctext.AppendHex16(b, n.GUID)
	return append(b, '"')
}

func (tp *topoPrinter) Name(n *discovery.Node) string {
	return tp.names.Name(n.GUID, string(n.NodeDesc))
}

// cleanDesc is clean_nodedesc. ibnetdiscover applies it to the node's own
// description when printing a CA or router, and that sticks: a cache
// written afterwards holds the cleaned text.
func cleanDesc(n *discovery.Node) string {
	for i, c := range n.NodeDesc {
		if i >= 64 || c == 0 {
			break
		}
		if c < 0x20 || c > 0x7e {
			n.NodeDesc[i] = ' '
		}
	}
	return nodename.CleanDesc(string(n.NodeDesc))
}

func (tp *topoPrinter) outIDs(n *discovery.Node, group bool, chname *string, prefix string) {
	ni := n.Info()
	sys := uint64(ni.SystemImageGUID)
	tp.printf("\n%svendid=0x%x\n", prefix, ni.VendorID)
	tp.printf("%sdevid=0x%x\n", prefix, ni.DeviceID)
	if sys != 0 {
		tp.printf("%ssysimgguid=0x%x", prefix, sys)
	}
	chnum := tp.g.ChassisNum(n)
	if group && chnum != 0 {
		tp.printf("\t\t# Chassis %d", chnum)
		if chname != nil {
			tp.printf(" (%s)", nodename.CleanDesc(*chname))
		}
		if discovery.IsXsigoTCA(n.GUID) {
			if p := n.Port(1); p != nil && p.Remote != nil {
				tp.printf(" slot %d", p.Remote.Num)
			}
		}
	}
	if sys != 0 || (group && chnum != 0) {
		tp.printf("\n")
	}
}

func (tp *topoPrinter) switchDetail(n *discovery.Node, prefix string) {
	sp0 := "base"
	if n.EnhancedSP0 {
		sp0 = "enhanced"
	}
	tp.printf("%sSwitch\t%d %s\t\t# \"%s\" %s port 0 lid %d lmc %d",
		prefix, n.NumPorts, quotedName(n), tp.Name(n), sp0, n.SMALID, n.SMALMC)
}

func (tp *topoPrinter) outSwitch(n *discovery.Node, group bool, chname *string, idPrefix, swPrefix string) {
	tp.outIDs(n, group, chname, idPrefix)
	tp.printf("%sswitchguid=0x%x", idPrefix, n.GUID)
	tp.printf("(%x)", uint64(n.Info().PortGUID))
	if group {
		tp.printf("\t# ")
		if s := tp.g.TypeName(n); s != "" {
			tp.printf("%s ", s)
		}
		if s := tp.g.SlotString(n); s != "" {
			tp.printf("%s", s)
		}
	}
	tp.printf("\n")
	tp.switchDetail(n, swPrefix)
	tp.printf("\n")
}

func (tp *topoPrinter) caDetail(n *discovery.Node, prefix string) {
	tp.printf("%s%s\t%d %s\t\t# \"%s\"", prefix, ctext.TopologyNodeType(n.Type), n.NumPorts, quotedName(n), cleanDesc(n))
}

func (tp *topoPrinter) outCA(n *discovery.Node, group bool, chname *string, idPrefix, caPrefix string) {
	tp.outIDs(n, group, chname, idPrefix)
	tp.printf("%s%sguid=0x%x\n", idPrefix, ctext.TopologyGUIDType(n.Type), n.GUID)
	tp.caDetail(n, caPrefix)
	if group && discovery.IsXsigoHCA(n.GUID) {
		tp.printf(" (scp)")
	}
	tp.printf("\n")
}

func (tp *topoPrinter) switchPort(p *discovery.Port, group bool, prefix string) {
	r := tp.rate(p)
	speed := uint32(r.PI.LinkSpeedActive)
	if r.CI == nil { // a switch without port 0 has no speed
		speed = 0
	}
	rem := p.Remote
	b := append(tp.buf[:0], prefix...)
	b = appendPortNum(b, p.Num)
	b = tp.appendExtPort(b, p, group)
	b = append(b, '\t')
	b = appendQuotedName(b, rem.Node)
	b = appendPortNum(b, rem.Num)
	b = tp.appendExtPort(b, rem, group)
	if rem.Node.Type != discovery.NodeSwitch {
		b = append(b, '(')
		b = strconv.AppendUint(b, rem.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, "\t\t# "...)
	b = tp.appendRemoteEnd(b, rem, r)
	if tp.full {
		b = appendSWV(b, speed, uint32(r.PI.LinkWidthActive), uint32(r.PI.VLCap))
	}
	if discovery.IsXsigoTCA(rem.GUID) {
		b = append(b, " slot "...)
		b = strconv.AppendInt(b, int64(p.Num), 10)
	} else if discovery.IsXsigoHCA(rem.GUID) {
		b = append(b, " (scp)"...)
	}
	b = append(b, '\n')
	tp.W.Write(b)
	tp.buf = b
}

func (tp *topoPrinter) caPort(p *discovery.Port, group bool, prefix string) {
	r := tp.rate(p)
	rem := p.Remote
	b := append(tp.buf[:0], prefix...)
	b = appendPortNum(b, p.Num)
	if p.Node.Type != discovery.NodeSwitch {
		b = append(b, '(')
		b = strconv.AppendUint(b, p.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, '\t')
	b = appendQuotedName(b, rem.Node)
	b = appendPortNum(b, rem.Num)
	b = tp.appendExtPort(b, rem, group)
	if rem.Node.Type != discovery.NodeSwitch {
		b = append(b, " ("...)
		b = strconv.AppendUint(b, rem.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, "\t\t# lid "...)
	b = strconv.AppendUint(b, uint64(p.BaseLID), 10)
	b = append(b, " lmc "...)
	b = strconv.AppendUint(b, uint64(p.LMC), 10)
	b = append(b, ' ')
	b = tp.appendRemoteEnd(b, rem, r)
	if tp.full {
		b = appendSWV(b, uint32(r.PI.LinkSpeedActive), uint32(r.PI.LinkWidthActive), uint32(r.PI.VLCap))
	}
	b = append(b, '\n')
	tp.W.Write(b)
	tp.buf = b
}

// appendRemoteEnd appends the far end of a link as both port lines end:
// `"<name>" lid <lid> <width><speed>`.
func (tp *topoPrinter) appendRemoteEnd(b []byte, rem *discovery.Port, r linkrate.Rate) []byte {
	b = append(b, '"')
	b = append(b, tp.Name(rem.Node)...)
	b = append(b, "\" lid "...)
	b = strconv.AppendUint(b, uint64(fabricdoc.RemoteLID(rem)), 10)
	b = append(b, ' ')
	b = append(b, r.CompatWidth()...)
	return append(b, r.CompatSpeed()...)
}

// appendPortNum appends "[n]".
func appendPortNum(b []byte, n int) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ']')
}

// appendExtPort appends extPort's "[ext N]".
func (tp *topoPrinter) appendExtPort(b []byte, p *discovery.Port, group bool) []byte {
	if group && p.ExtNum != 0 {
		b = append(b, "[ext "...)
		b = strconv.AppendInt(b, int64(p.ExtNum), 10)
		b = append(b, ']')
	}
	return b
}

// appendSWV appends --full's " s=%d w=%d v=%d".
func appendSWV(b []byte, speed, width, vls uint32) []byte {
	b = append(b, " s="...)
	b = strconv.AppendUint(b, uint64(speed), 10)
	b = append(b, " w="...)
	b = strconv.AppendUint(b, uint64(width), 10)
	b = append(b, " v="...)
	return strconv.AppendUint(b, uint64(vls), 10)
}

// SwitchWithPorts prints a switch and its linked ports.
func (tp *topoPrinter) SwitchWithPorts(n *discovery.Node, group bool, chname *string) {
	tp.outSwitch(n, group, chname, "", "")
	for p := 1; p <= n.NumPorts; p++ {
		if port := n.Port(p); port != nil && port.Remote != nil {
			tp.switchPort(port, group, "")
		}
	}
}

func (tp *topoPrinter) CaWithPorts(n *discovery.Node, group bool, chname *string) {
	tp.outCA(n, group, chname, "", "")
	for p := 1; p <= n.NumPorts; p++ {
		if port := n.Port(p); port != nil && port.Remote != nil {
			tp.caPort(port, group, "")
		}
	}
}

// ctime formats t as C's ctime(3) does, newline included.
func ctime(t time.Time) string { return t.Format("Mon Jan _2 15:04:05 2006") + "\n" }

// Topology is dump_topology: the topology file.
func (tp *topoPrinter) Topology(group, reportHops bool) {
	f := tp.f
	tp.printf("#\n# Topology file: generated on %s#\n", ctime(time.Now()))
	if reportHops {
		tp.printf("# Reported max hops discovered: %d\n# Total MADs used: %d\n", f.MaxHops, f.MADs)
	}
	var fromPortGUID uint64
	if f.From != nil {
		fromPortGUID = uint64(f.From.Info().PortGUID)
		tp.printf("# Initiated from node %016x port %016x\n", f.From.GUID, fromPortGUID)
	}
	items := tp.topologyItems(group)
	for _, it := range items {
		if it.node != nil && it.node.Type != discovery.NodeSwitch {
			cleanDesc(it.node) // what caDetail does, before the goroutines below read descriptions
		}
	}
	formatInOrder(tp.W, len(items), func(i int) int {
		if n := items[i].node; n != nil {
			return 4 + n.NumPorts
		}
		return 1
	}, func(w *bufio.Writer, lo, hi int) {
		sub := &topoPrinter{W: w, f: tp.f, g: tp.g, names: tp.names, full: tp.full}
		for _, it := range items[lo:hi] {
			switch {
			case it.node == nil:
				sub.W.WriteString(it.text)
			case it.node.Type == discovery.NodeSwitch:
				sub.SwitchWithPorts(it.node, group, it.chname)
			default:
				sub.CaWithPorts(it.node, group, it.chname)
			}
		}
	})
}

// TopologyNodes lists the nodes in the order Topology prints them, a node
// once each time it prints (with grouping, a chassis' spines and lines
// print again among its switches).
func (tp *topoPrinter) TopologyNodes(group bool) []*discovery.Node {
	var out []*discovery.Node
	for _, it := range tp.topologyItems(group) {
		if it.node != nil {
			out = append(out, it.node)
		}
	}
	return out
}

// topoItem is one piece of the topology file: text, or a node with its
// ports.
type topoItem struct {
	text   string
	node   *discovery.Node
	chname *string
}

// topologyItems lists the topology file's pieces after its heading, in
// order: the chassis first when grouping, then the switches, CAs and
// routers outside a chassis.
func (tp *topoPrinter) topologyItems(group bool) []topoItem {
	var items []topoItem
	text := func(format string, args ...any) { items = append(items, topoItem{text: fmt.Sprintf(format, args...)}) }
	node := func(n *discovery.Node, chname *string) { items = append(items, topoItem{node: n, chname: chname}) }
	if group {
		for _, ch := range tp.g.Chassis {
			if ch.Num == 0 {
				continue
			}
			text("\nChassis %d", ch.Num)
			chguid := tp.g.ChassisGUID(ch.Num)
			if chguid != 0 {
				text(" (guid 0x%x)", chguid)
			}
			text("\n")
			var chname *string
			if discovery.IsXsigoGUID(chguid) {
				for _, n := range ch.Nodes {
					if discovery.IsXsigoHCA(n.GUID) {
						d := string(n.NodeDesc)
						chname = &d
						text("Hostname: %s\n", nodename.CleanDesc(d))
					}
				}
			}
			text("\n# Spine Nodes")
			for _, n := range ch.Spines[1:] {
				if n != nil {
					node(n, chname)
				}
			}
			text("\n# Line Nodes")
			for _, n := range ch.Lines[1:] {
				if n != nil {
					node(n, chname)
				}
			}
			text("\n# Chassis Switches")
			for _, n := range ch.Nodes {
				if n.Type == discovery.NodeSwitch {
					node(n, chname)
				}
			}
			text("\n# Chassis CAs")
			for _, n := range ch.Nodes {
				if n.Type == discovery.NodeCA {
					node(n, chname)
				}
			}
		}
		text("\nNon-Chassis Nodes\n")
	}
	for _, t := range []int{discovery.NodeSwitch, discovery.NodeCA, discovery.NodeRouter} {
		for _, n := range TypeList(tp.f, t) {
			if group && tp.g.ChassisNum(n) != 0 {
				continue
			}
			node(n, nil)
		}
	}
	return items
}

// ListNodes is -l/-H/-S/-R.
func (tp *topoPrinter) ListNodes(list int) {
	for _, t := range []int{discovery.NodeCA, discovery.NodeSwitch, discovery.NodeRouter} {
		if list&(1<<t) == 0 {
			continue
		}
		for _, n := range TypeList(tp.f, t) {
			ni := n.Info()
			tp.printf("%s\t : 0x%016x ports %d devid 0x%x vendid 0x%x \"%s\"\n",
				ctext.NodeListType(n.Type), n.GUID, n.NumPorts, ni.DeviceID, ni.VendorID, tp.Name(n))
		}
	}
}

// PortsReport is -p: every port of every node, highest port first.
func (tp *topoPrinter) PortsReport() {
	for _, n := range AllNodes(tp.f) {
		for p := n.NumPorts; p > 0; p-- {
			port := n.Port(p)
			if port == nil {
				continue
			}
			r := tp.rate(port)
			width := r.CompatWidth()
			if r.CI == nil { // a switch without port 0: neither width nor speed
				width = mad.WidthCompatName(0)
			}
			lid := port.BaseLID
			if n.Type == discovery.NodeSwitch {
				lid = n.SMALID
			}
			name := tp.Name(n)
			tp.printf("%2s %5d %2d 0x%016x %s %s", ctext.PortsReportNodeType(n.Type), lid, port.Num, port.GUID, width, r.CompatSpeed())
			if rem := port.Remote; rem != nil {
				tp.printf(" - %2s %5d %2d 0x%016x ( '%s' - '%s' )\n", ctext.PortsReportNodeType(rem.Node.Type), fabricdoc.RemoteLID(rem),
					rem.Num, rem.GUID, name, tp.Name(rem.Node))
			} else {
				tp.printf("%36s'%s'\n", "", name)
			}
		}
	}
}

// diffPrinter holds the parts of one direction of a --diff.
type diffPrinter struct {
	flags        int
	f1, f2       *discovery.Fabric
	prefix1      string
	prefix2      string
	header       func(n *discovery.Node, idPrefix, detailPrefix string)
	headerDetail func(n *discovery.Node, prefix string)
	port         func(p *discovery.Port, prefix string)
}

// Diff is --diff: what changed between the cache (fabric 1, "<") and now
// (fabric 2, ">").
func (tp *topoPrinter) Diff(orig *discovery.Fabric, flags int) {
	type kind struct {
		flag, typ int
		header    func(*discovery.Node, string, string)
		detail    func(*discovery.Node, string)
		port      func(*discovery.Port, string)
	}
	sw := func(n *discovery.Node, idp, dp string) { tp.outSwitch(n, false, nil, idp, dp) }
	ca := func(n *discovery.Node, idp, dp string) { tp.outCA(n, false, nil, idp, dp) }
	swPort := func(p *discovery.Port, prefix string) { tp.switchPort(p, false, prefix) }
	caPort := func(p *discovery.Port, prefix string) { tp.caPort(p, false, prefix) }
	for _, k := range []kind{
		{DiffSwitch, discovery.NodeSwitch, sw, tp.switchDetail, swPort},
		{DiffCA, discovery.NodeCA, ca, tp.caDetail, caPort},
		{DiffRouter, discovery.NodeRouter, ca, tp.caDetail, caPort},
	} {
		if flags&k.flag == 0 {
			continue
		}
		d := &diffPrinter{flags: flags, f1: orig, f2: tp.f, prefix1: "< ", prefix2: "> ",
			header: k.header, headerDetail: k.detail, port: k.port}
		for _, n := range TypeList(orig, k.typ) {
			tp.DiffNode(d, n)
		}
		// The other way round only finds nodes that are new.
		d = &diffPrinter{flags: flags &^ (DiffPort | DiffLID | DiffNodeDesc), f1: tp.f, f2: orig,
			prefix1: "> ", prefix2: "< ", header: k.header, headerDetail: k.detail, port: k.port}
		for _, n := range TypeList(tp.f, k.typ) {
			tp.DiffNode(d, n)
		}
	}
}

func descBytes(n *discovery.Node) [64]byte {
	var b [64]byte
	copy(b[:], n.NodeDesc)
	return b
}

func (tp *topoPrinter) DiffNode(d *diffPrinter, n1 *discovery.Node) {
	n2 := d.f2.Node(n1.GUID)
	if n2 == nil {
		d.header(n1, d.prefix1, d.prefix1)
		for p := 1; p <= n1.NumPorts; p++ {
			if port := n1.Port(p); port != nil && port.Remote != nil {
				d.port(port, d.prefix1)
			}
		}
		return
	}
	if d.flags&(DiffPort|DiffLID|DiffNodeDesc) == 0 {
		return
	}
	printed := false
	if (d.flags&DiffLID != 0 && n1.SMALID != n2.SMALID) ||
		(d.flags&DiffNodeDesc != 0 && descBytes(n1) != descBytes(n2)) {
		d.header(n1, "", d.prefix1)
		d.headerDetail(n2, d.prefix2)
		tp.printf("\n")
		printed = true
	}
	header := func() {
		if !printed {
			d.header(n1, "", "")
			printed = true
		}
	}
	if n1.NumPorts != n2.NumPorts {
		header()
		tp.printf("%snumports = %d\n", d.prefix1, n1.NumPorts)
		tp.printf("%snumports = %d\n", d.prefix2, n2.NumPorts)
		return
	}
	if d.flags&(DiffPort|DiffLID) == 0 {
		return
	}
	for p := 1; p <= n1.NumPorts; p++ {
		p1, p2 := n1.Port(p), n2.Port(p)
		out1, out2 := false, false
		if d.flags&DiffPort != 0 {
			switch {
			case (p1 != nil && p2 == nil) || (p1 != nil && p2 != nil && p1.Remote != nil && p2.Remote == nil):
				out1 = true
			case (p1 == nil && p2 != nil) || (p1 != nil && p2 != nil && p1.Remote == nil && p2.Remote != nil):
				out2 = true
			case p1 != nil && p2 != nil && (p1.GUID != p2.GUID ||
				(p1.Remote != nil && p2.Remote != nil && p1.Remote.GUID != p2.Remote.GUID)):
				out1, out2 = true, true
			}
		}
		if d.flags&DiffLID != 0 && p1 != nil && p2 != nil && p1.BaseLID != p2.BaseLID {
			out1, out2 = true, true
		}
		both := p1 != nil && p2 != nil && p1.Remote != nil && p2.Remote != nil
		if d.flags&DiffPort != 0 && d.flags&DiffNodeDesc != 0 && both &&
			descBytes(p1.Remote.Node) != descBytes(p2.Remote.Node) {
			out1, out2 = true, true
		}
		if d.flags&DiffPort != 0 && d.flags&DiffLID != 0 && both && p1.Remote.BaseLID != p2.Remote.BaseLID {
			out1, out2 = true, true
		}
		// The C tool would crash printing a port without a link; skip it.
		if out1 && p1 != nil && p1.Remote != nil {
			header()
			d.port(p1, d.prefix1)
		}
		if out2 && p2 != nil && p2.Remote != nil {
			header()
			d.port(p2, d.prefix2)
		}
	}
}
