package ibcheck

// The ibcheck family's shared machinery (python-rdma's libibtool/errors.py):
// the checks one port is put through, the record each kind of check leaves
// for a port, the text python-rdma prints for it and the summary of the
// fabric-wide checks. ibcheck_counters.go has the counter side (reads,
// resets, thresholds); ibcheck.go the commands, which only name their
// checks and how their targets are found.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// checkKind is what a check looks at; python-rdma groups the output of a
// port's checks by kind, in this order.
type checkKind uint8

const (
	kindNode  checkKind = 1 << iota // the node: SA and SMP agree, the SA has a path
	kindPort                        // the port's state, width and speed
	kindPerf                        // the port's PMA counters
	kindClear                       // a counter reset
)

// String is the kind's name in JSON (key check).
func (k checkKind) String() string {
	switch k {
	case kindNode:
		return "node"
	case kindPort:
		return "port"
	case kindPerf:
		return "counters"
	case kindClear:
		return "clear"
	}
	return "?"
}

// checkPort is what the checks of one port look at.
type checkPort struct {
	node   *mad.NodeInfo
	desc   string        // node description
	num    int           // port number (AllPortSelect: all of a switch's)
	info   *mad.PortInfo // the port's PortInfo
	peer   *mad.PortInfo // the far end's PortInfo, nil when not known
	endLID uint16        // the end port's LID (a switch's: port 0's)
	guid   uint64        // the end port's GUID
	where  string        // "lid 2 port 3", ending every message
}

// checkOutcome collects what a port's checks found: warnings, or the one
// error that ended them.
type checkOutcome struct {
	warnings []string
}

// checkError is a failed check: python-rdma's CheckError.
type checkError struct{ msg string }

func (e *checkError) Error() string { return e.msg }

// expect records a value that is not what it should be: a warning, or
// (fatal) the error that fails the port. python-rdma's check(): "<field>
// is '<value>', <relation> '<want>': <where>".
func (o *checkOutcome) expect(ok bool, p *checkPort, field, got, relation, want string, fatal bool) error {
	if ok {
		return nil
	}
	msg := fmt.Sprintf("%s is '%s', %s '%s': %s", field, got, relation, want, p.where)
	if fatal {
		return &checkError{msg}
	}
	o.warnings = append(o.warnings, msg)
	return nil
}

// topBit is the highest set bit of v (0 for none): the best of a set of
// supported speeds.
func topBit(v uint8) uint8 {
	if v == 0 {
		return 0
	}
	b := uint8(1)
	for v > 1 {
		v >>= 1
		b <<= 1
	}
	return b
}

// widthLanes are the lanes of a LinkWidth bit (IBA 14.2.5.6), 0 for
// none.
func widthLanes(bit uint8) int {
	switch bit {
	case 1:
		return 1
	case 2:
		return 4
	case 4:
		return 8
	case 8:
		return 12
	case 16:
		return 2
	}
	return 0
}

// widestOf is the width of a supported set with the most lanes.
// python-rdma took the highest bit, which predates 2X (bit 4): ibtool
// ranks by lanes, or every 2X-capable port would "expect" a width of 0x.
func widestOf(v uint8) uint8 {
	best := uint8(0)
	for bit := uint8(1); bit <= 16; bit <<= 1 {
		if v&bit != 0 && widthLanes(bit) > widthLanes(best) {
			best = bit
		}
	}
	return best
}

// pySpeed is python-rdma's text of a link speed set (SDR, DDR, QDR).
func pySpeed(v uint8) string {
	var names []string
	for _, s := range []struct {
		bit  uint8
		name string
	}{{1, "SDR"}, {2, "DDR"}, {4, "QDR"}} {
		if v&s.bit != 0 {
			names = append(names, s.name)
		}
	}
	return strings.Join(names, ",")
}

// pyWidth is python-rdma's text of a width: its lanes and "x" ("4x"; "0x"
// for a value that is not one width).
func pyWidth(v uint8) string { return fmt.Sprintf("%dx", widthLanes(v)) }

// pyPhysState and pyPortState are python-rdma's texts of the port states.
func pyPhysState(v mad.PhysPortState) string {
	names := []string{1: "Sleep", 2: "Polling", 3: "Disabled", 4: "Config.Train", 5: "Link UP", 6: "Error Recovery", 7: "Phy Test"}
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("?? %d", v)
}

func pyPortState(v mad.PortState) string {
	names := []string{1: "Down", 2: "Init", 3: "Armed", 4: "Active"}
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("?? %d", v)
}

// pyNodeType is python-rdma's text of a node type.
func pyNodeType(t mad.NodeType) string {
	switch t {
	case mad.NodeTypeCA:
		return "Channel Adapter"
	case mad.NodeTypeSwitch:
		return "Switch"
	case mad.NodeTypeRouter:
		return "Router"
	}
	return fmt.Sprintf("?? %d", t)
}

// pyGUID is python-rdma's text of a GUID: four colon-separated groups.
func pyGUID(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// checkPortState: the link is up (else the port fails) and the port is
// Active (else a warning).
func checkPortState(p *checkPort, o *checkOutcome) error {
	pi := p.info
	if err := o.expect(pi.PortPhysicalState == mad.PhysPortStateLinkUp, p, "portPhysicalState",
		pyPhysState(pi.PortPhysicalState), "expected", pyPhysState(mad.PhysPortStateLinkUp), true); err != nil {
		return err
	}
	return o.expect(pi.PortState == mad.PortStateActive, p, "portState",
		pyPortState(pi.PortState), "expected", pyPortState(mad.PortStateActive), false)
}

// checkPortWidth: the link runs at the best width both ends support.
func checkPortWidth(p *checkPort, o *checkOutcome) error {
	if p.switchPort0() {
		return nil
	}
	best := widestOf(p.info.LinkWidthSupported)
	if p.peer != nil {
		best = widestOf(p.info.LinkWidthSupported & p.peer.LinkWidthSupported)
	}
	active := uint8(p.info.LinkWidthActive)
	return o.expect(active == best, p, "linkWidthActive", pyWidth(active), "expected", pyWidth(best), false)
}

// checkPortLink: the link runs at the best speed both ends support, the
// end port has a LID and an SM, and a CA's port says it is that port.
// (A switch's port 0 has no link; its external ports have no LID or SM
// of their own, IBA 14.2.5.6: those checks are not theirs.)
func checkPortLink(p *checkPort, o *checkOutcome) error {
	pi := p.info
	if !p.switchPort0() {
		best := topBit(pi.LinkSpeedSupported)
		if p.peer != nil {
			best = min(best, topBit(p.peer.LinkSpeedSupported))
		}
		o.expect(uint8(pi.LinkSpeedActive) == best, p, "linkSpeedActive", pySpeed(uint8(pi.LinkSpeedActive)), "expected", pySpeed(best), false)
	}
	if p.node.NodeType == mad.NodeTypeSwitch && p.num != 0 {
		return nil
	}
	o.expect(pi.LID != 0, p, "LID", fmt.Sprint(pi.LID), "but shouldn't be", "0", false)
	o.expect(pi.MasterSMLID != 0, p, "masterSMLID", fmt.Sprint(pi.MasterSMLID), "but shouldn't be", "0", false)
	if p.node.NodeType != mad.NodeTypeSwitch {
		o.expect(int(pi.LocalPortNum) == p.num, p, "localPortNum", fmt.Sprint(pi.LocalPortNum), "expected", fmt.Sprint(p.num), false)
	}
	return nil
}

// switchPort0 reports whether p is a switch's management port.
func (p *checkPort) switchPort0() bool { return p.node.NodeType == mad.NodeTypeSwitch && p.num == 0 }

// portCheckFunc is one check of a port's PortInfo.
type portCheckFunc func(*checkPort, *checkOutcome) error

// runPortChecks puts p through checks in order; the first error ends them.
func runPortChecks(p *checkPort, checks []portCheckFunc) *checkRecord {
	var o checkOutcome
	var err error
	for _, c := range checks {
		if err = c(p, &o); err != nil {
			break
		}
	}
	return newRecord(kindPort, p, &o, err)
}

// checkRecord is what one kind of check found on one port: a line of
// python-rdma's output (print_header) with its warnings or error.
type checkRecord struct {
	kind     checkKind
	Check    string         `json:"check"`
	NodeType jsonv.NodeType `json:"node_type"`
	NodeGUID mad.GUID       `json:"node_guid"`
	NodeName string         `json:"node_name"`
	LID      uint16         `json:"lid"`
	Port     int            `json:"port"` // 255: all of a switch's ports
	// Status is ok, warning (something is not at its best) or failed (an
	// error, or a counter beyond its threshold).
	Status   string   `json:"status"`
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Counters are the port's PortCounters (counter checks), with the
	// data counters also in bytes; ExtendedCounters its
	// PortCountersExtended (--json, where the PMA has them); Exceeded the
	// counters beyond their threshold.
	Counters         *lazyPerfJSON  `json:"counters,omitempty"`
	ExtendedCounters *lazyPerfJSON  `json:"extended_counters,omitempty"`
	Exceeded         []ThresholdHit `json:"exceeded,omitempty"`
	// dataCounts prints the data counters (ibdatacounts) instead of the
	// verdict.
	dataCounts *mad.PortCounters

	nodeType mad.NodeType
	portNum  int // the port number the node check's header shows
	err      error
}

func newRecord(kind checkKind, p *checkPort, o *checkOutcome, err error) *checkRecord {
	r := &checkRecord{
		kind: kind, Check: kind.String(),
		NodeType: jsonv.NodeTypeOf(p.node.NodeType), NodeGUID: p.node.NodeGUID, NodeName: p.desc,
		LID: p.endLID, Port: p.num, Warnings: o.warnings,
		nodeType: p.node.NodeType, portNum: p.num, err: err,
	}
	switch {
	case err != nil || (kind == kindPerf && len(o.warnings) > 0):
		r.Status = "failed"
	case len(o.warnings) > 0:
		r.Status = "warning"
	default:
		r.Status = "ok"
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// bad reports whether python-rdma counts the record as a bad node or port:
// an error, or counters beyond their thresholds on one port (a switch's
// all-ports sum sends it to the single ports instead).
func (r *checkRecord) bad() bool {
	return r.err != nil || (r.kind == kindPerf && r.Status == "failed" && r.Port != counters.AllPortSelect)
}

// checkStyle is how records are printed.
type checkStyle struct {
	verbose bool // -v: OK records too
	colour  bool // ANSI colours (a terminal without -N)
	// errLine prints an error as "#error:" under the header (the fabric
	// checks); a single check reports it on stderr instead.
	errLine bool
}

func (s checkStyle) paint(code, text string) string {
	if !s.colour {
		return text
	}
	return "\033[1;0" + code + "m" + text + "\033[0;39m"
}

// write prints r as python-rdma does: only with -v or when something is
// wrong, the header line with the verdict, then warnings (and the error).
func (r *checkRecord) write(w io.Writer, s checkStyle) {
	if r.dataCounts != nil {
		writeDataCounts(w, r.LID, r.Port, r.dataCounts)
	}
	if !s.verbose && r.Status == "ok" {
		return
	}
	desc := " "
	if r.NodeName != "" {
		desc = " (" + r.NodeName + ") "
	}
	ports := fmt.Sprintf("port %d:", r.Port)
	if r.Port == counters.AllPortSelect {
		ports = "all ports:"
	}
	switch r.kind {
	case kindPort:
		fmt.Fprintf(w, "Port check lid %d%s%s", r.LID, desc, ports)
	case kindPerf:
		fmt.Fprintf(w, "Error check lid %d%s%s", r.LID, desc, ports)
	case kindClear:
		fmt.Fprintf(w, "Clear counters lid %d%s%s", r.LID, desc, ports)
	case kindNode:
		if r.nodeType == mad.NodeTypeSwitch {
			fmt.Fprintf(w, "# Checking %s: nodeguid %s lid %d\n", pyNodeType(r.nodeType), pyGUID(uint64(r.NodeGUID)), r.LID)
		} else {
			fmt.Fprintf(w, "# Checking %s: nodeguid %s lid %d port %d\n", pyNodeType(r.nodeType), pyGUID(uint64(r.NodeGUID)), r.LID, r.portNum)
		}
		fmt.Fprintf(w, "Node check lid %d:", r.LID)
	}
	switch r.Status {
	case "failed":
		fmt.Fprintln(w, " "+s.paint("31", "FAILED"))
	case "warning":
		fmt.Fprintln(w, " "+s.paint("34", "WARNING"))
	default:
		fmt.Fprintln(w, " "+s.paint("32", "OK"))
	}
	for _, m := range r.Warnings {
		fmt.Fprintln(w, s.paint("34", "#warn: "+m))
	}
	if r.err != nil && s.errLine {
		fmt.Fprintln(w, s.paint("31", "#error: "+r.Error))
	}
}

// colourOut reports whether w is a terminal: python-rdma colours its
// verdicts always, ibtool only on a terminal (and never with -N).
func colourOut(w io.Writer, noColour bool) bool {
	f, ok := w.(*os.File)
	if noColour || !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// checkSummary counts what the fabric-wide checks did.
type checkSummary struct {
	NodesChecked int  `json:"nodes_checked"`
	BadNodes     int  `json:"bad_nodes"`
	PortsChecked *int `json:"ports_checked,omitempty"`
	BadPorts     *int `json:"bad_ports,omitempty"`
	// CounterPortsChecked and PortsBeyondThreshold count the counter
	// checks; PortsCleared the resets.
	CounterPortsChecked  *int `json:"counter_ports_checked,omitempty"`
	PortsBeyondThreshold *int `json:"ports_beyond_threshold,omitempty"`
	PortsCleared         *int `json:"ports_cleared,omitempty"`
}

func summarize(records []*checkRecord, kinds checkKind) checkSummary {
	var n [8]int
	for _, r := range records {
		i := map[checkKind]int{kindNode: 0, kindPort: 2, kindPerf: 4, kindClear: 6}[r.kind]
		n[i]++
		if r.bad() {
			n[i+1]++
		}
	}
	s := checkSummary{NodesChecked: n[0], BadNodes: n[1]}
	if kinds&kindPort != 0 {
		s.PortsChecked, s.BadPorts = &n[2], &n[3]
	}
	if kinds&kindPerf != 0 {
		s.CounterPortsChecked, s.PortsBeyondThreshold = &n[4], &n[5]
	}
	if kinds&kindClear != 0 {
		s.PortsCleared = &n[6]
	}
	return s
}

// write prints python-rdma's "## Summary" lines.
func (s checkSummary) write(w io.Writer) {
	fmt.Fprintf(w, "## Summary: %d nodes checked, %d bad nodes found\n", s.NodesChecked, s.BadNodes)
	if s.PortsChecked != nil {
		fmt.Fprintf(w, "##          %d ports checked, %d ports with bad state found\n", *s.PortsChecked, *s.BadPorts)
	}
	if s.CounterPortsChecked != nil {
		fmt.Fprintf(w, "##          %d ports checked, %d ports have errors beyond threshold\n", *s.CounterPortsChecked, *s.PortsBeyondThreshold)
	}
	if s.PortsCleared != nil {
		fmt.Fprintf(w, "##          %d port counters cleared.\n", *s.PortsCleared)
	}
}

// fabricCheckResult is a fabric-wide check's result: every record, in
// fabric order, and the summary.
type fabricCheckResult struct {
	Records []*checkRecord `json:"checks"`
	Summary checkSummary   `json:"summary"`
	// Errors lists the ports whose checks could not be done (no reply, a
	// bad MAD status): each is also a failed record.
	Errors []CheckErrorDoc `json:"errors"`
	// Reset is what was (or, with --dry-run, would be) reset.
	Reset *ResetDoc `json:"reset,omitempty"`

	style      checkStyle
	kinds      checkKind
	thresholds pyThresholds
}

// CheckErrorDoc is one port whose check failed to run.
type CheckErrorDoc struct {
	NodeGUID mad.GUID `json:"node_guid"`
	LID      uint16   `json:"lid"`
	Port     int      `json:"port"`
	Check    string   `json:"check"`
	Error    string   `json:"error"`
}

func (r *fabricCheckResult) finish() {
	r.Summary = summarize(r.Records, r.kinds)
	r.Errors = []CheckErrorDoc{}
	for _, rec := range r.Records {
		var ce *checkError
		if rec.err != nil && !errors.As(rec.err, &ce) {
			r.Errors = append(r.Errors, CheckErrorDoc{rec.NodeGUID, rec.LID, rec.Port, rec.Check, rec.Error})
		}
	}
}

func (r *fabricCheckResult) WriteText(out io.Writer) error {
	w := bufio.NewWriter(out)
	for _, rec := range r.Records {
		rec.write(w, r.style)
	}
	if r.Reset != nil {
		r.Reset.write(w)
	}
	r.Summary.write(w)
	return w.Flush()
}

// endPort is a port with a LID of its own: a switch's port 0, a CA's or
// router's connected ports.
type endPort struct {
	node *discovery.Node
	port *discovery.Port
}

// endPorts are the fabric's end ports in discovery order.
func endPorts(f *discovery.Fabric) []endPort {
	var out []endPort
	for _, n := range f.Nodes {
		if n.Type == discovery.NodeSwitch {
			if p := n.Port(0); p != nil {
				out = append(out, endPort{n, p})
			}
			continue
		}
		for _, p := range n.Ports[1:] {
			if p != nil {
				out = append(out, endPort{n, p})
			}
		}
	}
	return out
}

// fabricCheckPort is the checkPort of port num of ep's node, as the
// fabric gives it (the peer's PortInfo from the link).
func fabricCheckPort(ep endPort, p *discovery.Port) *checkPort {
	cp := &checkPort{
		node: ep.node.Info(), desc: ep.node.Desc(), num: p.Num, info: p.Info(),
		endLID: ep.port.BaseLID, guid: ep.port.GUID,
	}
	if p.Remote != nil && p.Remote.PortInfo != nil {
		cp.peer = p.Remote.Info()
	}
	cp.where = fmt.Sprintf("lid %d port %d", cp.endLID, p.Num)
	return cp
}

// portsOf are the ports the port checks of an end port look at: a
// switch's port 0 and linked ports, the CA's port itself. (python-rdma
// looked at every switch port and failed each one without a cable; the
// infiniband-diags 1.5 scripts, like ibtool, only at the links.)
func portsOf(ep endPort) []*discovery.Port {
	if ep.node.Type != discovery.NodeSwitch {
		return []*discovery.Port{ep.port}
	}
	var out []*discovery.Port
	for _, p := range ep.node.Ports {
		if p != nil && (p.Num == 0 || p.Remote != nil) {
			out = append(out, p)
		}
	}
	return out
}

// parallelWorkers bounds the goroutines parallel runs at once. The MAD
// engine bounds what is in flight (and the SA, one destination, gets
// rpc.DefaultSADestWindow MADs at a time), so more goroutines only wait
// there: one per node of a 2000-node fabric took 20 MB of stacks.
const parallelWorkers = 64

// parallel runs fn for 0..n-1, up to parallelWorkers at once, and waits.
func parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, parallelWorkers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
