package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// --diffcheck keys of iblinkinfo (iblinkinfo.c DIFF_FLAG_*).
const (
	LkDiffPort     = 0x01
	LkDiffState    = 0x02
	LkDiffLID      = 0x04
	LkDiffNodeDesc = 0x08
	LkDiffDefault  = LkDiffPort | LkDiffState
)

// linkEvent is one thing iblinkinfo prints: a node header or a port line.
type linkEvent struct {
	prefix string
	node   *discovery.Node
	port   *discovery.Port // nil: the node's header
}

// LinkPrinter collects what iblinkinfo prints, as events, so that text
// and JSON say the same.
type LinkPrinter struct {
	Names                  *nodename.Map
	Line, Additional, Down bool
	Filter                 *discovery.Fabric
	Warn                   io.Writer
	events                 []linkEvent

	pis     map[*discovery.Port]*mad.PortInfo // decoded once: a big fabric has many ports
	nameC   map[*discovery.Node]string
	lineBuf []byte // the port line being built
}

// info is p's PortInfo, decoded once.
func (lp *LinkPrinter) info(p *discovery.Port) *mad.PortInfo {
	if pi, ok := lp.pis[p]; ok {
		return pi
	}
	if lp.pis == nil {
		lp.pis = map[*discovery.Port]*mad.PortInfo{}
	}
	pi := p.Info()
	lp.pis[p] = pi
	return pi
}

// rate is p's Rate, with the PortInfos decoded once.
func (lp *LinkPrinter) rate(p *discovery.Port) linkrate.Rate { return linkrate.With(p, lp.info) }

// header is print_node_header: printed once per node and call site
// (*printed counts), never in line mode.
func (lp *LinkPrinter) header(n *discovery.Node, printed *int, prefix string) {
	if printed != nil && *printed != 0 {
		return
	}
	lp.events = append(lp.events, linkEvent{prefix: prefix, node: n})
	if printed != nil {
		*printed++
	}
}

// Node is print_node: the header and every port (only Down ones with -d).
func (lp *LinkPrinter) Node(n *discovery.Node, prefix string) {
	printed := 0
	for i := 1; i <= n.NumPorts; i++ {
		p := n.Port(i)
		if p == nil {
			continue
		}
		if !lp.Down || lp.info(p).PortState == mad.PortStateDown {
			lp.header(n, &printed, prefix)
			lp.port(n, p, prefix)
		}
	}
}

// port is print_port's filter: a Down port that is Down in the
// --filterdownports cache too is not shown.
func (lp *LinkPrinter) port(n *discovery.Node, p *discovery.Port, prefix string) {
	if lp.Filter != nil && lp.info(p).PortState == mad.PortStateDown {
		if fn := lp.Filter.Node(n.GUID); fn != nil && p.Num <= fn.NumPorts {
			if fp := fn.Port(p.Num); fp != nil && fp.Info().PortState == mad.PortStateDown {
				return
			}
		}
	}
	lp.events = append(lp.events, linkEvent{prefix: prefix, node: n, port: p})
}

func (lp *LinkPrinter) DiffNode(n1 *discovery.Node, f2 *discovery.Fabric, flags int, p1, p2 string) {
	n2 := f2.Node(n1.GUID)
	if n2 == nil {
		lp.Node(n1, p1)
		return
	}
	if flags&(LkDiffPort|LkDiffState|LkDiffLID|LkDiffNodeDesc) == 0 {
		return
	}
	printed := 0
	if (n1.Type == discovery.NodeSwitch && flags&LkDiffLID != 0 && n1.SMALID != n2.SMALID) ||
		(flags&LkDiffNodeDesc != 0 && descBytes(n1) != descBytes(n2)) {
		// The C tool passes no counter here and crashes on it (unless -l);
		// we print both headers and go on.
		lp.header(n1, nil, p1)
		lp.header(n2, nil, p2)
		printed++
	}
	if n1.NumPorts != n2.NumPorts {
		lp.header(n1, &printed, "")
		lp.events = append(lp.events, linkEvent{prefix: fmt.Sprintf("%snumports = %d\n", p1, n1.NumPorts)},
			linkEvent{prefix: fmt.Sprintf("%snumports = %d\n", p2, n2.NumPorts)})
		return
	}
	for i := 1; i <= n1.NumPorts; i++ {
		a, b := n1.Port(i), n2.Port(i)
		if a == nil && b == nil {
			continue
		}
		out := false
		if flags&LkDiffPort != 0 {
			switch {
			case a == nil || b == nil:
				out = true
			case (a.Remote != nil) != (b.Remote != nil):
				out = true
			case a.Remote != nil && a.Remote.GUID != b.Remote.GUID:
				out = true
			}
		}
		if flags&LkDiffState != 0 && a != nil && b != nil && a.Info().PortState != b.Info().PortState {
			out = true
		}
		both := a != nil && b != nil && a.Remote != nil && b.Remote != nil
		if flags&LkDiffPort != 0 && flags&LkDiffLID != 0 && both && a.Remote.BaseLID != b.Remote.BaseLID {
			out = true
		}
		if flags&LkDiffPort != 0 && flags&LkDiffNodeDesc != 0 && both && descBytes(a.Remote.Node) != descBytes(b.Remote.Node) {
			out = true
		}
		if out && a != nil {
			lp.header(n1, &printed, "")
			lp.port(n1, a, p1)
		}
		if out && b != nil {
			lp.header(n1, &printed, "")
			lp.port(n2, b, p2)
		}
	}
}

// linkTexts are the parts of one port line.
type linkTexts struct {
	Width, Speed, State, Phys string
	Down                      bool
	hoq, vlStall              uint8
	MaxWidth, MaxSpeed        string // get_max_msg's "Could be ..." texts
}

// Texts computes print_port's link texts.
func (lp *LinkPrinter) Texts(p *discovery.Port) linkTexts {
	r := lp.rate(p)
	pi := r.PI
	t := linkTexts{State: pi.PortState.String(), Phys: pi.PortPhysicalState.String(),
		Down: pi.PortState == mad.PortStateDown, hoq: pi.HOQLife, vlStall: pi.VLStallCount}
	if !t.Down {
		t.Width, t.Speed = r.ActiveWidth(), r.ActiveSpeed()
	}
	if p.Remote != nil {
		t.MaxWidth, t.MaxSpeed = lp.maxMsg(p)
	}
	return t
}

// end is p as one end of a link, with the PortInfos decoded once.
func (lp *LinkPrinter) end(p *discovery.Port) health.End {
	r := lp.rate(p)
	e := health.End{Info: r.PI}
	if r.CI != nil {
		e.CapabilityMask = r.CI.CapabilityMask
	}
	m := linkrate.MlnxExt(p)
	e.Mlnx = &m
	return e
}

// maxMsg is get_max_msg: what a linked port could run at when both ends
// support more than it does. Where the two ends share no width or speed,
// get_max_width and get_max take the narrowest and the slowest: 1X, SDR,
// FDR.
func (lp *LinkPrinter) maxMsg(p *discovery.Port) (width, speed string) {
	remote := lp.end(p.Remote)
	l := health.CompareLink(lp.end(p), &remote, health.Supported)
	mw := mad.LinkWidth(max(l.Width.Best, uint8(mad.LinkWidth1X)))
	if mw&mad.LinkWidth(l.Width.Active) == 0 {
		width = "Could be " + mw.String()
	}
	switch {
	case l.UsesExtSpeeds():
		ms := max(l.ExtSpeed.Best, uint8(mad.LinkSpeedExtFDR))
		if ms&l.ExtSpeed.Active == 0 {
			speed = "Could be " + mad.LinkSpeedExt(ms).String()
		}
	case l.FDR10.Best != 0:
		if !l.FDR10.Below() {
			break
		}
		speed = "Could be FDR10"
		if mad.LinkSpeed(l.Speed.Active) == mad.LinkSpeedQDR {
			speed = "Could be FDR10 (Found link at QDR but expected speed is FDR10)"
		}
	default:
		ms := max(l.Speed.Best, uint8(mad.LinkSpeedSDR))
		if ms&l.Speed.Active == 0 {
			speed = "Could be " + mad.LinkSpeed(ms).String()
		}
	}
	return width, speed
}

func (lp *LinkPrinter) Name(n *discovery.Node) string {
	if s, ok := lp.nameC[n]; ok {
		return s
	}
	if lp.nameC == nil {
		lp.nameC = map[*discovery.Node]string{}
	}
	s := lp.Names.Name(n.GUID, string(n.NodeDesc))
	lp.nameC[n] = s
	return s
}

// HeaderGUID is the GUID a switch's header shows: port 0's.
func HeaderGUID(n *discovery.Node) uint64 {
	if p0 := n.Port(0); p0 != nil {
		return p0.GUID
	}
	return uint64(n.Info().PortGUID)
}

func ExtText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// RemoteLIDOf is the LID iblinkinfo shows for the far end of a link.
func RemoteLIDOf(r *discovery.Port) uint16 {
	if r.BaseLID != 0 {
		return r.BaseLID
	}
	return r.Node.SMALID
}

// Render writes the events as the C tool prints them.
func (lp *LinkPrinter) Render(w *bufio.Writer) {
	formatInOrder(w, len(lp.events), func(int) int { return 1 }, func(w *bufio.Writer, lo, hi int) {
		// Each goroutine has its own decoded PortInfos and names.
		sub := *lp
		sub.pis, sub.nameC, sub.lineBuf = nil, nil, nil
		for _, ev := range lp.events[lo:hi] {
			sub.renderEvent(w, ev)
		}
	})
}

func (lp *LinkPrinter) renderEvent(w *bufio.Writer, ev linkEvent) {
	switch {
	case ev.node == nil:
		w.WriteString(ev.prefix) // a "numports = N" line
	case ev.port == nil:
		if lp.Line {
			return
		}
		if ev.node.Type == discovery.NodeSwitch {
			fmt.Fprintf(w, "%s%s: 0x%016x %s:\n", ev.prefix, ctext.NodeTypeStr(ev.node.Type), HeaderGUID(ev.node), lp.Name(ev.node))
		} else {
			fmt.Fprintf(w, "%s%s: %s:\n", ev.prefix, ctext.NodeTypeStr(ev.node.Type), lp.Name(ev.node))
		}
	default:
		lp.renderPort(w, ev)
	}
}

func (lp *LinkPrinter) renderPort(w *bufio.Writer, ev linkEvent) {
	n, p := ev.node, ev.port
	t := lp.Texts(p)
	b := append(lp.lineBuf[:0], ev.prefix...)
	if lp.Line {
		b = append(b, "0x"...)
		b = ctext.AppendHex16(b, p.GUID)
		b = append(b, ` "`...)
		b = ctext.AppendPadded(b, lp.Name(n), 30)
		b = append(b, `" `...)
	} else {
		b = append(b, "      "...)
	}
	lid := n.SMALID
	if n.Type != discovery.NodeSwitch {
		if !lp.Line {
			b = append(b, "0x"...)
			b = ctext.AppendHex16(b, p.GUID)
			b = append(b, ' ')
		}
		lid = p.BaseLID
	}
	b = appendLinkEnd(b, lid, p)
	b = append(b, " =="...)
	if !t.Down {
		b = append(b, '(')
		b = ctext.AppendPadded(b, t.Width, 3)
		b = append(b, ' ')
		b = ctext.AppendPadded(b, t.Speed, 18)
		b = append(b, ' ')
	} else {
		b = append(b, "(              "...)
	}
	b = ctext.AppendPadded(b, t.State, 6)
	b = append(b, '/')
	b = ctext.AppendPadded(b, t.Phys, 8)
	b = append(b, ')')
	if !t.Down && lp.Additional {
		b = append(b, " (HOQ:"...)
		b = strconv.AppendUint(b, uint64(t.hoq), 10)
		b = append(b, " VL_Stall:"...)
		b = strconv.AppendUint(b, uint64(t.vlStall), 10)
		b = append(b, ')')
	}
	b = append(b, "==>  "...)
	switch r := p.Remote; {
	case r != nil:
		start := len(b)
		if lp.Line {
			b = append(b, "0x"...)
			b = ctext.AppendHex16(b, r.GUID)
			b = append(b, ' ')
		}
		b = appendLinkEnd(b, RemoteLIDOf(r), r)
		b = append(b, ` "`...)
		b = append(b, lp.Name(r.Node)...)
		b = append(b, `" (`...)
		b = append(b, t.MaxWidth...)
		b = append(b, ' ')
		b = append(b, t.MaxSpeed...)
		b = append(b, ")\n"...)
		if full := len(b) - start; full > 255 { // snprintf into 256 bytes
			b = b[:start+255]
			if full > 256 {
				fmt.Fprintln(lp.Warn, "WARN: string buffer overflow")
			}
		}
	case t.Down:
		b = append(b, "           [  ] \"\" ( )\n"...)
	default:
		b = append(b, "    \"Port not available\"\n"...)
	}
	w.Write(b)
	lp.lineBuf = b
}

// appendLinkEnd appends one end of a link as print_port does:
// "%6d %4d[%2s]", the LID, the port number and the external port number
// if there is one.
func appendLinkEnd(b []byte, lid uint16, p *discovery.Port) []byte {
	b = ctext.AppendPaddedUint(b, uint64(lid), 6)
	b = append(b, ' ')
	b = ctext.AppendPaddedUint(b, uint64(p.Num), 4)
	b = append(b, '[')
	if p.ExtNum != 0 {
		b = ctext.AppendPaddedUint(b, uint64(p.ExtNum), 2)
	} else {
		b = append(b, "  "...)
	}
	return append(b, ']')
}

// The JSON form (docs/json.md, "iblinkinfo").
type LinkInfoDoc struct {
	Nodes    []linkNodeDoc          `json:"nodes"`
	Complete bool                   `json:"complete"`
	Errors   []fabricdoc.WalkErrDoc `json:"errors"`
}

type linkNodeDoc struct {
	// Side is set in --diff output: "cache" for what the --diff cache
	// has, "fabric" for what the fabric (or --load-cache) has now.
	Side        string         `json:"side,omitempty"`
	NodeGUID    mad.GUID       `json:"node_guid"`
	NodeType    jsonv.NodeType `json:"node_type"`
	NodeName    string         `json:"node_name"`
	Description string         `json:"description"`
	PortGUID    *mad.GUID      `json:"port_guid,omitempty"`
	LID         *uint16        `json:"lid,omitempty"`
	NumPorts    int            `json:"num_ports"`
	Ports       []linkPortDoc  `json:"ports"`
}

type linkPortDoc struct {
	Side         string   `json:"side,omitempty"`
	Port         int      `json:"port"`
	ExternalPort int      `json:"external_port,omitempty"`
	PortGUID     mad.GUID `json:"port_guid"`
	LID          uint16   `json:"lid"`
	*jsonv.PortState
	jsonv.Rate
	HOQLife              *uint8         `json:"hoq_life,omitempty"`
	VLStallCount         *uint8         `json:"vl_stall_count,omitempty"`
	CouldBeWidth         jsonv.Width    `json:"could_be_width,omitempty"`
	CouldBeLaneSpeedGbps float64        `json:"could_be_lane_speed_gbps,omitempty"`
	CouldBeSpeedText     string         `json:"could_be_speed_text,omitempty"`
	Remote               *jsonv.LinkEnd `json:"remote,omitempty"`
}

// couldBeGbps is the lane speed of iblinkinfo's "Could be" speed text
// ("10.0 Gbps", "FDR10 ..."), 0 if it names none.
func couldBeGbps(text string) float64 {
	if strings.HasPrefix(text, "FDR10") {
		return jsonv.RateOf("", "FDR10").LaneSpeedGbps
	}
	var g float64
	if _, err := fmt.Sscanf(text, "%g Gbps", &g); err != nil {
		return 0
	}
	return g
}

func sideOf(prefix string) string {
	switch prefix {
	case "< ":
		return "cache"
	case "> ":
		return "fabric"
	}
	return ""
}

// Document is the events as JSON: a node entry for each header, the
// ports that follow it under it (a port of another node gets an entry of
// its own, as in line mode, where there are no headers).
func (lp *LinkPrinter) Document(f *discovery.Fabric) LinkInfoDoc {
	doc := LinkInfoDoc{Nodes: []linkNodeDoc{}, Errors: []fabricdoc.WalkErrDoc{}}
	var cur *linkNodeDoc
	var curNode *discovery.Node
	newNode := func(n *discovery.Node, prefix string) {
		d := linkNodeDoc{Side: sideOf(prefix), NodeGUID: mad.GUID(n.GUID), NodeType: fabricdoc.NodeTypeOf(n), NodeName: lp.Name(n),
			Description: nodename.CleanDesc(string(n.NodeDesc)), NumPorts: n.NumPorts, Ports: []linkPortDoc{}}
		if n.Type == discovery.NodeSwitch {
			lid, g := n.SMALID, mad.GUID(HeaderGUID(n))
			d.LID, d.PortGUID = &lid, &g
		}
		doc.Nodes = append(doc.Nodes, d)
		cur, curNode = &doc.Nodes[len(doc.Nodes)-1], n
	}
	for _, ev := range lp.events {
		switch {
		case ev.node == nil:
			continue
		case ev.port == nil:
			newNode(ev.node, ev.prefix)
			continue
		}
		if curNode == nil || curNode.GUID != ev.node.GUID {
			newNode(ev.node, "")
		}
		p := ev.port
		t := lp.Texts(p)
		var rate jsonv.Rate // the active link's
		if !t.Down {
			rate = lp.rate(p).JSONRate()
		}
		couldBe := strings.TrimPrefix(t.MaxSpeed, "Could be ")
		pd := linkPortDoc{Side: sideOf(ev.prefix), Port: p.Num, ExternalPort: p.ExtNum, PortGUID: mad.GUID(p.GUID),
			LID: p.BaseLID, PortState: jsonv.PortStateOf(lp.info(p)), Rate: rate,
			CouldBeWidth: jsonv.Width(strings.TrimPrefix(t.MaxWidth, "Could be ")), CouldBeLaneSpeedGbps: couldBeGbps(couldBe), CouldBeSpeedText: couldBe}
		if ev.node.Type == discovery.NodeSwitch {
			pd.LID = ev.node.SMALID
		}
		if lp.Additional && !t.Down {
			hoq, vl := t.hoq, t.vlStall
			pd.HOQLife, pd.VLStallCount = &hoq, &vl
		}
		if r := p.Remote; r != nil {
			pd.Remote = &jsonv.LinkEnd{NodeGUID: mad.GUID(r.Node.GUID), NodeType: fabricdoc.NodeTypeOf(r.Node), NodeName: lp.Name(r.Node),
				Port: r.Num, ExternalPort: r.ExtNum, PortGUID: mad.GUID(r.GUID), LID: RemoteLIDOf(r)}
		}
		cur.Ports = append(cur.Ports, pd)
	}
	doc.Complete, doc.Errors = fabricdoc.WalkErrorsDoc(f)
	return doc
}
