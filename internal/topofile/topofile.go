// Package topofile reads back the topology file that ibnetdiscover
// prints (infiniband-diags' text, ibtool's ibnetdiscover byte for byte):
// its nodes, their GUIDs, LIDs and descriptions, the links between their
// ports and the width and speed each port line shows. The result is a
// discovery.Fabric, so that a topology saved as text can be compared with
// a fabric walked now (discovery.Compare) as a cache can.
//
// What the text does not say stays zero: PortInfo, SwitchInfo and
// NodeInfo other than the GUIDs, type, port count and IDs; ports that
// have no link (the text lists linked ports only; a switch's port 0 is
// added, since it carries the switch's LID and port GUID).
package topofile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// File is a topology read from ibnetdiscover's text.
type File struct {
	Fabric *discovery.Fabric
	// Rates are the width and speed printed on each port's line, in
	// ibnetdiscover's spelling ("4x", "EDR").
	Rates map[*discovery.Port]discovery.LinkRate
}

// Rate is the width and speed the file shows for p (zero when p is not
// one of the file's ports or its line had none).
func (f *File) Rate(p *discovery.Port) discovery.LinkRate { return f.Rates[p] }

// ReadFile reads the topology file at path.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Parse(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// SyntaxError is a line that is not what ibnetdiscover prints there.
type SyntaxError struct {
	Line int
	Text string
	Why  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d: %s: %q", e.Line, e.Why, e.Text)
}

// linkRecord is one port line: a port and the far end it names.
type linkRecord struct {
	local      *discovery.Port
	remoteGUID uint64
	remoteType int
	remoteNum  int
	remotePort uint64 // the remote port's GUID when the line gives it
	line       int
}

type parser struct {
	f       *File
	line    int
	node    *discovery.Node // the node whose port lines follow
	ids     nodeIDs         // the vendid=... lines before the next node
	links   []linkRecord
	portGUI map[*discovery.Node]uint64 // a switch's port GUID (switchguid=N(P))
}

// nodeIDs are the lines ibnetdiscover prints above a node.
type nodeIDs struct {
	vendor, device uint32
	sysImage       uint64
	portGUID       uint64
}

// Parse reads a topology file.
func Parse(r io.Reader) (*File, error) {
	p := &parser{f: &File{Fabric: discovery.NewFabric(), Rates: map[*discovery.Port]discovery.LinkRate{}}, portGUI: map[*discovery.Node]uint64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		p.line++
		if err := p.parseLine(sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(p.f.Fabric.Nodes) == 0 {
		return nil, fmt.Errorf("no Switch, Ca or Rt line: not an ibnetdiscover topology file")
	}
	if err := p.link(); err != nil {
		return nil, err
	}
	p.f.Fabric.Loaded = discovery.LoadNodeInfo | discovery.LoadNodeDesc
	return p.f, nil
}

func (p *parser) errorf(text, format string, args ...any) error {
	return &SyntaxError{Line: p.line, Text: text, Why: fmt.Sprintf(format, args...)}
}

func (p *parser) parseLine(text string) error {
	line := strings.TrimRight(text, " \t\r")
	switch {
	case line == "":
		p.node = nil
		return nil
	case strings.HasPrefix(line, "#"):
		return nil
	case strings.HasPrefix(line, "["):
		return p.portLine(line)
	}
	key, val, isID := strings.Cut(line, "=")
	if isID && !strings.ContainsAny(key, " \t\"") {
		return p.idLine(line, key, val)
	}
	word, _, _ := strings.Cut(line, "\t")
	switch strings.TrimSpace(word) {
	case "Switch":
		return p.nodeLine(line, discovery.NodeSwitch)
	case "Ca":
		return p.nodeLine(line, discovery.NodeCA)
	case "Rt":
		return p.nodeLine(line, discovery.NodeRouter)
	}
	return nil // chassis headers ("Non-Chassis Nodes", "Chassis ..."): nothing to keep
}

// idLine reads vendid=, devid=, sysimgguid=, switchguid=N(P), caguid=,
// rtguid=: what applies to the next node.
func (p *parser) idLine(text, key, val string) error {
	val, _, _ = strings.Cut(val, "\t") // "# Chassis ..." after the value
	val = strings.TrimSpace(val)
	num, paren, _ := strings.Cut(val, "(")
	n, err := strconv.ParseUint(strings.TrimSpace(num), 0, 64)
	if err != nil {
		return p.errorf(text, "%s is not a number", key)
	}
	switch key {
	case "vendid":
		p.ids.vendor = uint32(n)
	case "devid":
		p.ids.device = uint32(n)
	case "sysimgguid":
		p.ids.sysImage = n
	case "switchguid":
		if paren != "" {
			pg, err := strconv.ParseUint(strings.TrimSuffix(paren, ")"), 16, 64)
			if err != nil {
				return p.errorf(text, "the port GUID in () is not a number")
			}
			p.ids.portGUID = pg
		}
	}
	return nil
}

// nodeLine reads `Switch\t36 "S-<guid>"\t\t# "<desc>" enhanced port 0 lid
// 1 lmc 0`, or a Ca or Rt line (`Ca\t1 "H-<guid>"\t\t# "<desc>"`).
func (p *parser) nodeLine(text string, typ int) error {
	_, rest, _ := strings.Cut(text, "\t")
	numText, rest, _ := strings.Cut(strings.TrimSpace(rest), " ")
	nports, err := strconv.Atoi(numText)
	if err != nil || nports < 0 || nports > 254 {
		return p.errorf(text, "no port count")
	}
	name, rest, ok := quoted(rest)
	if !ok {
		return p.errorf(text, "no quoted node name")
	}
	guid, nameType, ok := nameGUID(name)
	if !ok || nameType != typ {
		return p.errorf(text, "node name %q is not %c-<GUID>", name, typeLetter(typ))
	}
	_, comment, _ := strings.Cut(rest, "#")
	desc, after, _ := quoted(comment)
	n := &discovery.Node{GUID: guid, Type: typ, NumPorts: nports, NodeDesc: []byte(desc)}
	if old := p.f.Fabric.Node(guid); old != nil {
		return p.errorf(text, "node 0x%016x listed twice", guid)
	}
	n = p.f.Fabric.AddNode(n)
	portGUID := guid
	if typ == discovery.NodeSwitch {
		if p.ids.portGUID != 0 {
			portGUID = p.ids.portGUID
		}
		n.SMALID, n.SMALMC = uint16(numberAfter(after, "lid")), uint8(numberAfter(after, "lmc"))
		n.EnhancedSP0 = strings.Contains(after, "enhanced port 0")
		p0 := &discovery.Port{Node: n, GUID: portGUID, Num: 0, BaseLID: n.SMALID, LMC: n.SMALMC}
		n.Ports[0] = p0
		p.portGUI[n] = portGUID
	}
	n.NodeInfo = mad.Encode(&mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: mad.NodeType(typ), NumPorts: uint8(nports),
		SystemImageGUID: mad.GUID(p.ids.sysImage), NodeGUID: mad.GUID(guid), PortGUID: mad.GUID(portGUID),
		DeviceID: uint16(p.ids.device), VendorID: p.ids.vendor})
	p.ids = nodeIDs{}
	p.node = n
	return nil
}

// portLine reads one linked port of the current node:
//
//	switch: [1][ext 1]	"H-<guid>"[1](<port guid>) 		# "<name>" lid 5 4xEDR
//	        [12]	"S-<guid>"[1]		# "<name>" lid 3 4xEDR
//	CA:     [1](<port guid>) 	"S-<guid>"[1]		# lid 5 lmc 0 "<name>" lid 1 4xEDR
func (p *parser) portLine(text string) error {
	n := p.node
	if n == nil {
		return p.errorf(text, "a port line outside a node")
	}
	num, rest, ok := portNumber(text)
	if !ok || num < 1 || num > n.NumPorts {
		return p.errorf(text, "no port number of this %d-port node", n.NumPorts)
	}
	rest = skipExt(rest)
	portGUID := p.portGUI[n]
	if g, after, ok := parenGUID(rest); ok {
		portGUID, rest = g, after
	}
	if portGUID == 0 {
		portGUID = n.GUID + uint64(num) // no GUID printed: never for ibnetdiscover's own text
	}
	name, rest, ok := quoted(strings.TrimLeft(rest, " \t"))
	if !ok {
		return p.errorf(text, "no quoted remote node name")
	}
	rguid, rtype, ok := nameGUID(name)
	if !ok {
		return p.errorf(text, "remote node name %q is not S-, H- or R-<GUID>", name)
	}
	rnum, rest, ok := portNumber(rest)
	if !ok {
		return p.errorf(text, "no remote port number")
	}
	rest = skipExt(rest)
	var rport uint64
	if g, after, ok := parenGUID(strings.TrimLeft(rest, " ")); ok {
		rport, rest = g, after
	}
	_, comment, _ := strings.Cut(rest, "#")
	if n.Port(num) != nil {
		return p.errorf(text, "port %d listed twice", num)
	}
	port := &discovery.Port{Node: n, GUID: portGUID, Num: num}
	if n.Type == discovery.NodeSwitch {
		port.BaseLID, port.LMC = n.SMALID, n.SMALMC
	} else {
		port.BaseLID, port.LMC = uint16(numberAfter(comment, "lid")), uint8(numberAfter(comment, "lmc"))
	}
	n.Ports[num] = port
	p.f.Rates[port] = rateOf(comment)
	p.links = append(p.links, linkRecord{local: port, remoteGUID: rguid, remoteType: rtype, remoteNum: rnum, remotePort: rport, line: p.line})
	return nil
}

// link joins the ports the port lines name. A link is listed from both
// ends; a far end whose node has no block of its own (a file cut short)
// gets a node with only that port.
func (p *parser) link() error {
	for _, l := range p.links {
		rn := p.f.Fabric.Node(l.remoteGUID)
		if rn == nil {
			rn = p.f.Fabric.AddNode(&discovery.Node{GUID: l.remoteGUID, Type: l.remoteType, NumPorts: l.remoteNum})
		}
		if l.remoteNum > rn.NumPorts || l.remoteNum < 0 {
			return &SyntaxError{Line: l.line, Why: fmt.Sprintf("node 0x%016x has no port %d", rn.GUID, l.remoteNum)}
		}
		if len(rn.Ports) <= l.remoteNum {
			rn.Ports = append(rn.Ports, make([]*discovery.Port, l.remoteNum+1-len(rn.Ports))...)
		}
		rp := rn.Ports[l.remoteNum]
		if rp == nil {
			guid := l.remotePort
			if guid == 0 {
				guid = p.portGUI[rn]
			}
			if guid == 0 {
				guid = rn.GUID
			}
			rp = &discovery.Port{Node: rn, GUID: guid, Num: l.remoteNum}
			rn.Ports[l.remoteNum] = rp
		}
		if rp.Remote != nil && rp.Remote != l.local {
			return &SyntaxError{Line: l.line, Why: fmt.Sprintf("0x%016x[%d] is linked to two ports", rn.GUID, l.remoteNum)}
		}
		discovery.Link(l.local, rp)
	}
	return nil
}

// quoted is the first "..." of s and what follows it.
func quoted(s string) (string, string, bool) {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return "", s, false
	}
	j := strings.IndexByte(s[i+1:], '"')
	if j < 0 {
		return "", s, false
	}
	return s[i+1 : i+1+j], s[i+2+j:], true
}

// nameGUID reads ibnetdiscover's node names: "S-", "H-" or "R-" and 16
// hex digits.
func nameGUID(name string) (uint64, int, bool) {
	if len(name) < 3 || name[1] != '-' {
		return 0, 0, false
	}
	typ := 0
	switch name[0] {
	case 'S':
		typ = discovery.NodeSwitch
	case 'H':
		typ = discovery.NodeCA
	case 'R':
		typ = discovery.NodeRouter
	default:
		return 0, 0, false
	}
	g, err := strconv.ParseUint(name[2:], 16, 64)
	return g, typ, err == nil
}

func typeLetter(typ int) byte {
	return map[int]byte{discovery.NodeSwitch: 'S', discovery.NodeCA: 'H', discovery.NodeRouter: 'R'}[typ]
}

// portNumber reads "[N]" at the start of s.
func portNumber(s string) (int, string, bool) {
	if !strings.HasPrefix(s, "[") {
		return 0, s, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, s, false
	}
	n, err := strconv.Atoi(s[1:end])
	return n, s[end+1:], err == nil
}

// skipExt skips a chassis' "[ext N]".
func skipExt(s string) string {
	if strings.HasPrefix(s, "[ext ") {
		if end := strings.IndexByte(s, ']'); end >= 0 {
			return s[end+1:]
		}
	}
	return s
}

// parenGUID reads "(<hex>)" at the start of s.
func parenGUID(s string) (uint64, string, bool) {
	if !strings.HasPrefix(s, "(") {
		return 0, s, false
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return 0, s, false
	}
	g, err := strconv.ParseUint(s[1:end], 16, 64)
	return g, s[end+1:], err == nil
}

// numberAfter is the number after the first word w of s that is
// followed by one ("lid 5"), outside quotes; 0 when there is none.
func numberAfter(s, w string) uint64 {
	words := strings.Fields(unquoted(s))
	for i := 0; i+1 < len(words); i++ {
		if words[i] == w {
			if n, err := strconv.ParseUint(words[i+1], 10, 64); err == nil {
				return n
			}
		}
	}
	return 0
}

// unquoted is s without its quoted parts (node names may hold any word).
func unquoted(s string) string {
	var b strings.Builder
	in := false
	for _, c := range s {
		if c == '"' {
			in = !in
			b.WriteByte(' ')
			continue
		}
		if !in {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// rateOf reads the "4xEDR" that ends a port line's comment (before
// --full's " s=... w=... v=..."); an unknown width is "??" ("??EDR").
func rateOf(comment string) discovery.LinkRate {
	for _, w := range strings.Fields(unquoted(comment)) {
		if speed, ok := strings.CutPrefix(w, "??"); ok && speed != "" {
			return discovery.LinkRate{Width: "??", Speed: speed}
		}
		width, speed, ok := strings.Cut(w, "x")
		if _, err := strconv.Atoi(width); ok && err == nil && speed != "" {
			return discovery.LinkRate{Width: width + "x", Speed: speed}
		}
	}
	return discovery.LinkRate{}
}
