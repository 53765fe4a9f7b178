package ibidsverify

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricids"
)

// The script's reading of an existing topology file: its patterns, as it
// applies them to each line (newline included; Go's leftmost-first
// matching picks the submatches Perl's backtracking does), giving the IDs
// in the order the script inserts them in its tables.
var (
	idsCAGUID      = cmdutil.LazyRegexp{Expr: `^caguid=(.*)`}
	idsRtGUID      = cmdutil.LazyRegexp{Expr: `^rtguid=(.*)`}
	idsSwGUID      = cmdutil.LazyRegexp{Expr: `^switchguid=(.*)`}
	idsSwGUIDPort  = cmdutil.LazyRegexp{Expr: `^switchguid=(.*)\((.*)\)`}
	idsSwitch      = cmdutil.LazyRegexp{Expr: `^Switch.*"S-(.*)"\s+# (.*) port.* lid (\d+) .*`}
	idsCA          = cmdutil.LazyRegexp{Expr: `^Ca.*`}
	idsRt          = cmdutil.LazyRegexp{Expr: `^Rt.*`}
	idsPeerSwitch  = cmdutil.LazyRegexp{Expr: `"S-(.*)# lid (\d+) .*`}
	idsPeerCA      = cmdutil.LazyRegexp{Expr: `^.*"H-(.*)# lid (\d+) .*`}
	idsPeerRouter  = cmdutil.LazyRegexp{Expr: `^.*"R-(.*)# lid (\d+) .*`}
	idsCAPortGUID  = cmdutil.LazyRegexp{Expr: `^\[(\d+)\]\((.*)\)`}
	idsLineBreaker = cmdutil.LazyRegexp{Expr: `[^\n]*\n|[^\n]+$`}
)

// topoReader is the script's state between lines.
type topoReader struct {
	nodeType  int    // 0 until a Switch, Ca or Rt line
	nodeGUID  string // the text after "caguid=", "rtguid=", "switchguid="
	portGUID  string // a switch's, from its switchguid line
	lid       string // the last LID read
	firstPort bool   // no port of the CA or router read yet
	uses      []fabricids.Use
}

// readTopology is the IDs of a topology file as ibidsverify.pl reads them.
// The texts become numbers; a GUID text that is none (the script's
// patterns reach past the GUID on some lines, see scriptUses) is not
// compared.
func readTopology(text []byte) []fabricids.Use {
	r := &topoReader{}
	for _, lineb := range idsLineBreaker.Get().FindAll(text, -1) {
		r.line(string(lineb))
	}
	return r.uses
}

func (r *topoReader) line(line string) {
	if m := idsCAGUID.Get().FindStringSubmatch(line); m != nil {
		r.nodeGUID, r.nodeType = m[1], 0
	} else if m := idsRtGUID.Get().FindStringSubmatch(line); m != nil {
		r.nodeGUID, r.nodeType = m[1], 0
	}
	if m := idsSwGUID.Get().FindStringSubmatch(line); m != nil {
		r.nodeGUID, r.portGUID, r.nodeType = m[1], "", 0
	}
	if m := idsSwGUIDPort.Get().FindStringSubmatch(line); m != nil {
		r.nodeGUID, r.portGUID = m[1], "0x"+m[2]
	}
	if m := idsSwitch.Get().FindStringSubmatch(line); m != nil {
		r.nodeType, r.firstPort, r.lid = discovery.NodeSwitch, true, m[3]
		r.use(fabricids.LID, r.lid)
		r.use(fabricids.NodeGUID, r.nodeGUID)
		if r.portGUID != "" {
			r.use(fabricids.PortGUID, r.portGUID)
		}
	}
	if idsCA.Get().MatchString(line) {
		r.nodeType, r.firstPort = discovery.NodeCA, true
	}
	if idsRt.Get().MatchString(line) {
		r.nodeType, r.firstPort = discovery.NodeRouter, true
	}
	if r.nodeType != discovery.NodeCA && r.nodeType != discovery.NodeRouter {
		return
	}
	for _, re := range []*regexp.Regexp{idsPeerSwitch.Get(), idsPeerCA.Get(), idsPeerRouter.Get()} {
		if m := re.FindStringSubmatch(line); m != nil {
			r.lid = m[2]
			r.use(fabricids.LID, r.lid)
			if r.firstPort {
				r.use(fabricids.NodeGUID, r.nodeGUID)
				r.firstPort = false
			}
		}
	}
	if m := idsCAPortGUID.Get().FindStringSubmatch(line); m != nil {
		r.use(fabricids.PortGUID, "0x"+m[2])
	}
}

// use adds the ID whose text is v, held by the node being read; a text
// that is no number is left out.
func (r *topoReader) use(id fabricids.ID, v string) {
	lid, lidErr := strconv.ParseUint(r.lid, 10, 16)
	value, err := lid, lidErr
	if id != fabricids.LID {
		value, err = guidNumber(v)
	}
	if err != nil {
		return
	}
	nodeGUID, _ := guidNumber(r.nodeGUID)
	r.uses = append(r.uses, fabricids.Use{ID: id, Value: value, NodeType: r.nodeType, NodeGUID: nodeGUID, LID: uint16(lid)})
}

// guidNumber reads a GUID as ibnetdiscover writes it: "0x" and hex.
func guidNumber(s string) (uint64, error) {
	hex, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseUint(hex, 16, 64)
}
