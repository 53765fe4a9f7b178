package ibcheck

// ibqueryerrors' judgement (thresholds, suppressions), its text (the C
// tool's, byte for byte), its JSON and its resets.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// qeErrorCounters are the counters ibqueryerrors judges, in its order
// (PortCounters' error counters, then PortXmitWait); the names are
// libibmad's, those of the threshold file.
var qeErrorCounters = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait",
}

// qeSuppressible are the names -s takes: PortCounters' fields
// (libibmad's IB_PC_FIRST_F..IB_PC_LAST_F).
var qeSuppressible = []string{
	"PortSelect", "CounterSelect", "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
	"PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "CounterSelect2", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts",
	"PortRcvPkts", "PortXmitWait",
}

// qeSupMax is the most counters the C tool suppresses (SUP_MAX).
const qeSupMax = 64

// suppressList is -s and -c: the counters suppressed, in the order given.
type suppressList struct {
	names   []string
	skipped []string // beyond qeSupMax
	err     error
}

func (l *suppressList) add(name string) {
	if len(l.names) >= qeSupMax {
		l.skipped = append(l.skipped, name)
		return
	}
	l.names = append(l.names, name)
}

func (l *suppressList) has(name string) bool {
	for _, n := range l.names {
		if n == name {
			return true
		}
	}
	return false
}

// suppressFlag is -s: counter names, comma-separated (empty items are
// skipped, as strtok does). An unknown name is an error.
type suppressFlag struct{ l *suppressList }

func (f suppressFlag) String() string { return "" }
func (f suppressFlag) Type() string   { return "<err1,err2,...>" }
func (f suppressFlag) Set(s string) error {
	for _, name := range strings.Split(s, ",") {
		switch {
		case name == "":
		case contains(qeSuppressible, name):
			f.l.add(name)
		case f.l.err == nil:
			f.l.err = fmt.Errorf("-s: unknown counter %q (counters: %s)", name, strings.Join(qeSuppressible, ","))
		}
	}
	return nil
}

// suppressCommonFlag is -c: PortRcvSwitchRelayErrors, the one "common"
// error, suppressed where -c stands among the -s.
type suppressCommonFlag struct{ l *suppressList }

func (f suppressCommonFlag) String() string   { return "" }
func (f suppressCommonFlag) Type() string     { return "bool" }
func (f suppressCommonFlag) IsBoolFlag() bool { return true }
func (f suppressCommonFlag) Set(s string) error {
	if s == "true" {
		f.l.add("PortRcvSwitchRelayErrors")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// thresholds are the error thresholds: a counter above its threshold (0
// when the file has none) is an error.
type thresholds struct {
	vals   map[string]uint64
	list   []qeThreshold // as the file gives them
	opened bool          // the file was read (the C tool prints "(null)" otherwise)
}

type qeThreshold struct {
	Counter   string `json:"counter"`
	Threshold uint64 `json:"threshold"`
}

var thresholdValue = cmdutil.LazyRegexp{Expr: `^[ \t]*\+?(0[xX][0-9a-fA-F]+|[0-9]+)[ \t\r]*$`}

// readThresholds reads a threshold file: "<counter>=<value>" lines, blank
// lines and lines starting with '#'. A file that cannot be opened is no
// thresholds, as in the C tool; a line it cannot read is an error.
func readThresholds(path string) (*thresholds, error) {
	th := &thresholds{vals: map[string]uint64{}}
	f, err := os.Open(path)
	if err != nil {
		return th, nil
	}
	defer f.Close()
	th.opened = true
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("threshold file %s line %d: %q is not <counter>=<value>", path, n, line)
		}
		if !contains(qeErrorCounters, name) {
			return nil, fmt.Errorf("threshold file %s line %d: unknown counter %q (counters: %s)", path, n, name, strings.Join(qeErrorCounters, ","))
		}
		if !thresholdValue.Get().MatchString(val) {
			return nil, fmt.Errorf("threshold file %s line %d: %s's threshold %q is not a number", path, n, name, val)
		}
		v, _ := ctext.Strtoul(val)
		th.vals[name] = v
		th.list = append(th.list, qeThreshold{name, v})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("threshold file %s: %v", path, err)
	}
	return th, nil
}

// text is the summary's threshold line ("Thresholds: [PortRcvErrors = 5]").
func (th *thresholds) text() string {
	if !th.opened {
		return "(null)"
	}
	var b strings.Builder
	b.WriteString("Thresholds: ")
	for _, t := range th.list {
		fmt.Fprintf(&b, "[%s = %d]", t.Counter, t.Threshold)
	}
	return b.String()
}

// exceeded judges a port's counters: the 64-bit ones of
// PortCountersExtended when the PMA has its error counters, PortCounters'
// otherwise.
func (th *thresholds) exceeded(r *query.PortCounters, suppressed []string) []QeExceeded {
	var out []QeExceeded
	ext := r.Caps.ExtendedErrors() && r.Extended != nil
	for _, name := range qeErrorCounters {
		if contains(suppressed, name) {
			continue
		}
		var v uint64
		if ext {
			v = extErrorCounter(r.Extended, name)
		} else if r.Basic != nil {
			v = errorCounter(r.Basic, name)
		}
		if t := th.vals[name]; v > t {
			out = append(out, QeExceeded{Counter: name, Value: v, Threshold: t, extended: ext})
		}
	}
	return out
}

// errorCounter is PortCounters' counter name (one of qeErrorCounters),
// read directly: the generic mad.Get is too slow for every port of a big
// fabric.
func errorCounter(c *mad.PortCounters, name string) uint64 {
	switch name {
	case "SymbolErrorCounter":
		return uint64(c.SymbolErrorCounter)
	case "LinkErrorRecoveryCounter":
		return uint64(c.LinkErrorRecoveryCounter)
	case "LinkDownedCounter":
		return uint64(c.LinkDownedCounter)
	case "PortRcvErrors":
		return uint64(c.PortRcvErrors)
	case "PortRcvRemotePhysicalErrors":
		return uint64(c.PortRcvRemotePhysicalErrors)
	case "PortRcvSwitchRelayErrors":
		return uint64(c.PortRcvSwitchRelayErrors)
	case "PortXmitDiscards":
		return uint64(c.PortXmitDiscards)
	case "PortXmitConstraintErrors":
		return uint64(c.PortXmitConstraintErrors)
	case "PortRcvConstraintErrors":
		return uint64(c.PortRcvConstraintErrors)
	case "LocalLinkIntegrityErrors":
		return uint64(c.LocalLinkIntegrityErrors)
	case "ExcessiveBufferOverrunErrors":
		return uint64(c.ExcessiveBufferOverrunErrors)
	case "VL15Dropped":
		return uint64(c.VL15Dropped)
	case "PortXmitWait":
		return uint64(c.PortXmitWait)
	}
	panic("ibqueryerrors: no error counter " + name)
}

// extErrorCounter is errorCounter of PortCountersExtended's 64-bit
// counters.
func extErrorCounter(c *mad.PortCountersExtended, name string) uint64 {
	switch name {
	case "SymbolErrorCounter":
		return c.SymbolErrorCounter
	case "LinkErrorRecoveryCounter":
		return c.LinkErrorRecoveryCounter
	case "LinkDownedCounter":
		return c.LinkDownedCounter
	case "PortRcvErrors":
		return c.PortRcvErrors
	case "PortRcvRemotePhysicalErrors":
		return c.PortRcvRemotePhysicalErrors
	case "PortRcvSwitchRelayErrors":
		return c.PortRcvSwitchRelayErrors
	case "PortXmitDiscards":
		return c.PortXmitDiscards
	case "PortXmitConstraintErrors":
		return c.PortXmitConstraintErrors
	case "PortRcvConstraintErrors":
		return c.PortRcvConstraintErrors
	case "LocalLinkIntegrityErrors":
		return c.LocalLinkIntegrityErrors
	case "ExcessiveBufferOverrunErrors":
		return c.ExcessiveBufferOverrunErrors
	case "VL15Dropped":
		return c.VL15Dropped
	case "PortXmitWait":
		return c.PortXmitWait
	}
	panic("ibqueryerrors: no error counter " + name)
}

// readDetails reads, for the counters exceeded (PortXmitDiscards,
// PortRcvErrors), their detail group. libibmad decodes each in the other's
// layout (ibqueryerrors.c passes the field ranges crossed), and the text
// shows that: so are they decoded here.
func (q *qeRun) readDetails() {
	var jobs []query.Job
	var outs []mad.Struct
	var details []qeDetail
	xmit, rcv := mad.LookupStruct("PortXmitDiscardDetails"), mad.LookupStruct("PortRcvErrorDetails")
	for _, qn := range q.nodes {
		for _, p := range append([]*qePort{qn.all}, qn.ports...) {
			if p == nil {
				continue
			}
			for _, e := range p.exceeded {
				var values mad.Struct
				var desc *mad.StructDesc
				switch e.Counter {
				case "PortXmitDiscards":
					desc, values = xmit, &mad.PortRcvErrorDetails{}
				case "PortRcvErrors":
					desc, values = rcv, &mad.PortXmitDiscardDetails{}
				default:
					continue
				}
				cp := q.portOwner(p)
				jobs = append(jobs, query.Job{Dest: cp.Dest, In: query.PortSelect(desc, p.num)})
				outs = append(outs, query.AsAttr(desc, values))
				details = append(details, qeDetail{port: p, after: e.Counter, attr: desc.Name, values: values})
			}
		}
	}
	errs := query.FanOutStructs(q.ctx, q.client, jobs, outs)
	for i, d := range details {
		d.err = errs[i]
		d.port.details = append(d.port.details, d)
	}
}

// QeSummary is the summary the C tool ends with.
type QeSummary struct {
	NodesChecked     int `json:"nodes_checked"`
	BadNodes         int `json:"bad_nodes"`
	PortsChecked     int `json:"ports_checked"`
	BadPorts         int `json:"bad_ports"`
	PMAQueryFailures int `json:"pma_query_failures"`
}

// QeFailure is a read that failed, for stderr and JSON.
type QeFailure struct {
	NodeGUID  mad.GUID `json:"node_guid"`
	NodeName  string   `json:"node_name"`
	Port      int      `json:"port"`
	LID       uint16   `json:"lid"`
	Attribute string   `json:"attribute"`
	Error     string   `json:"error"`

	fn, cattr, dest string // the C tool's words for its ibwarn line
	err             error
}

// qeResult is ibqueryerrors' result: its JSON document, and the run for
// the text.
type qeResult struct {
	Nodes      []qeNodeDoc   `json:"nodes"`
	Summary    QeSummary     `json:"summary"`
	Thresholds []qeThreshold `json:"thresholds"`
	Suppressed []string      `json:"suppressed"`
	Reset      *qeResetDoc   `json:"reset,omitempty"`
	Errors     []QeFailure   `json:"errors"`
	// Complete is false when the walk missed something (WalkErrors) or
	// a read failed (Errors).
	Complete   bool                   `json:"complete"`
	WalkErrors []fabricdoc.WalkErrDoc `json:"walk_errors"`

	q *qeRun
}

type qeNodeDoc struct {
	NodeGUID             mad.GUID       `json:"node_guid"`
	NodeType             jsonv.NodeType `json:"node_type"`
	NodeName             string         `json:"node_name"`
	Description          string         `json:"description"`
	LID                  *uint16        `json:"lid,omitempty"`
	CapabilityMask       uint16         `json:"capability_mask"`
	CapabilityMaskNames  []string       `json:"capability_mask_names"`
	CapabilityMask2      uint32         `json:"capability_mask2"`
	CapabilityMask2Names []string       `json:"capability_mask2_names"`
	Ports                []qePortDoc    `json:"ports"`
}

type qePortDoc struct {
	Port               int             `json:"port"`
	PortGUID           mad.GUID        `json:"port_guid"`
	LID                uint16          `json:"lid"`
	Counters           json.RawMessage `json:"counters,omitempty"`
	ExtendedCounters   json.RawMessage `json:"extended_counters,omitempty"`
	XmitDiscardDetails json.RawMessage `json:"xmit_discard_details,omitempty"`
	RcvErrorDetails    json.RawMessage `json:"rcv_error_details,omitempty"`
	Exceeded           []QeExceeded    `json:"exceeded"`
	Error              string          `json:"error,omitempty"`
}

// result gathers the summary, the failures and the JSON.
func (q *qeRun) result() *qeResult {
	res := &qeResult{q: q, Nodes: []qeNodeDoc{}, Thresholds: q.th.list, Suppressed: q.opts.suppressed.names, Errors: []QeFailure{}}
	defer func() {
		res.Complete, res.WalkErrors = len(res.Errors) == 0, []fabricdoc.WalkErrDoc{}
		if q.fab != nil {
			walked, errs := fabricdoc.WalkErrorsDoc(q.fab)
			res.Complete, res.WalkErrors = res.Complete && walked, errs
		}
	}()
	if res.Thresholds == nil {
		res.Thresholds = []qeThreshold{}
	}
	if res.Suppressed == nil {
		res.Suppressed = []string{}
	}
	s := &res.Summary
	for _, qn := range q.nodes {
		s.NodesChecked++
		if qn.caps.Err != nil {
			res.fail(qn, q.capsPort(qn.node), "ClassPortInfo", "query_cap_mask", "classportinfo", qn.caps.Err)
		}
		bad := false
		if p := qn.all; p != nil {
			res.portFailures(p, "print_errors")
			bad = len(p.exceeded) > 0
			if !qn.checkPorts {
				s.PortsChecked += qn.node.NumPorts
			}
		}
		fn := "print_errors"
		if q.opts.countersOnly {
			fn = "print_data_cnts"
		}
		for _, p := range qn.ports {
			s.PortsChecked++
			res.portFailures(p, fn)
			if len(p.exceeded) > 0 {
				s.BadPorts++
				bad = true
			}
		}
		if bad {
			s.BadNodes++
		}
		if q.opts.JSON {
			res.Nodes = append(res.Nodes, q.nodeDoc(qn))
		}
	}
	s.PMAQueryFailures = len(res.Errors)
	res.Reset = q.resetDoc()
	q.lastResult = res
	return res
}

// portFailures records p's failed reads.
func (res *qeResult) portFailures(p *qePort, fn string) {
	cp := res.q.portOwner(p)
	if err := p.counters.Err; err != nil {
		var ce *query.CounterError
		attr, cattr := "PortCounters", "IB_GSI_PORT_COUNTERS"
		if errors.As(err, &ce) && ce.Attr == "PortCountersExtended" {
			attr, cattr = ce.Attr, "IB_GSI_PORT_COUNTERS_EXT"
		} else if ce != nil {
			attr = ce.Attr
		}
		res.fail(p.node, cp, attr, fn, cattr, err)
	}
	for _, d := range p.details {
		if d.err != nil {
			res.fail(p.node, cp, d.attr, "query_and_dump", d.attr, d.err)
		}
	}
}

func (res *qeResult) fail(qn *qeNode, cp query.CounterPort, attr, fn, cattr string, err error) {
	res.Errors = append(res.Errors, QeFailure{NodeGUID: mad.GUID(qn.node.GUID), NodeName: qn.name, Port: cp.Port,
		LID: cp.Dest.LID, Attribute: attr, Error: err.Error(), fn: fn, cattr: cattr, dest: cp.Dest.String(), err: err})
}

// reportFailures writes the failed reads to stderr: libibmad's warnings in
// compat use, ibtool's words otherwise.
func (q *qeRun) reportFailures() {
	res := q.lastResult
	if res == nil {
		return
	}
	for _, f := range res.Errors {
		if q.env.Compat {
			cmdutil.IBWarn(q.env, f.fn, "%s query failed on %s, %s port %d", f.cattr, f.NodeName, f.dest, f.Port)
			continue
		}
		fmt.Fprintf(q.env.IO.Err, "ibqueryerrors: %s: %v\n", f.NodeName, f.err)
	}
}

// NodeDoc is a node's JSON: every port read, every counter.
func (q *qeRun) nodeDoc(qn *qeNode) qeNodeDoc {
	n := qn.node
	d := qeNodeDoc{NodeGUID: mad.GUID(n.GUID), NodeType: fabricdoc.NodeTypeOf(n), NodeName: qn.name,
		Description: nodename.CleanDesc(string(n.NodeDesc)), Ports: []qePortDoc{},
		CapabilityMask: uint16(qn.caps.CapabilityMask), CapabilityMask2: qn.caps.CapabilityMask2,
		CapabilityMaskNames:  jsonv.MaskNames(uint64(qn.caps.CapabilityMask), "PerfCapMask"),
		CapabilityMask2Names: jsonv.MaskNames(uint64(qn.caps.CapabilityMask2), "PerfCapMask2")}
	if n.Type == discovery.NodeSwitch {
		lid := n.SMALID
		d.LID = &lid
	}
	for _, p := range qn.ports {
		r := p.counters
		pd := qePortDoc{Port: p.num, PortGUID: mad.GUID(p.port.GUID), LID: r.Dest.LID, Exceeded: p.exceeded}
		if pd.Exceeded == nil {
			pd.Exceeded = []QeExceeded{}
		}
		if r.Basic != nil {
			pd.Counters = counters.JSON(r.Basic)
		}
		if r.Extended != nil {
			pd.ExtendedCounters = counters.JSON(r.Extended)
		}
		if len(r.Groups) == 2 {
			if r.Groups[0] != nil {
				pd.XmitDiscardDetails = counters.JSON(r.Groups[0])
			}
			if r.Groups[1] != nil {
				pd.RcvErrorDetails = counters.JSON(r.Groups[1])
			}
		}
		if r.Err != nil {
			pd.Error = r.Err.Error()
		}
		d.Ports = append(d.Ports, pd)
	}
	return d
}

// WriteText writes the C tool's report.
func (res *qeResult) WriteText(out io.Writer) error {
	q := res.q
	w := bufio.NewWriter(out)
	lp := &render.LinkPrinter{Names: q.names, Warn: q.env.IO.Err}
	for _, qn := range q.nodes {
		if q.opts.countersOnly {
			q.writeDataCounters(w, lp, qn)
			continue
		}
		header := false
		if qn.all != nil {
			q.writeErrors(w, lp, qn, qn.all, &header)
		}
		if qn.checkPorts {
			for _, p := range qn.ports {
				q.writeErrors(w, lp, qn, p, &header)
			}
		}
	}
	s := res.Summary
	fmt.Fprintf(w, "\n## Summary: %d nodes checked, %d bad nodes found\n", s.NodesChecked, s.BadNodes)
	fmt.Fprintf(w, "##          %d ports checked, %d ports have errors beyond threshold\n", s.PortsChecked, s.BadPorts)
	fmt.Fprintf(w, "## %s\n", q.th.text())
	if s.PMAQueryFailures > 0 {
		fmt.Fprintf(w, "##          %d PMA query failures\n", s.PMAQueryFailures)
	}
	w.WriteString("## Suppressed:")
	for _, n := range q.opts.suppressed.names {
		w.WriteString(" " + n)
	}
	w.WriteString("\n")
	return w.Flush()
}

// writeErrors is print_results: a port's (or the sum's) line when a
// counter is above its threshold.
func (q *qeRun) writeErrors(w *bufio.Writer, lp *render.LinkPrinter, qn *qeNode, p *qePort, header *bool) {
	if p.counters.Err != nil || len(p.exceeded) == 0 {
		return
	}
	var b strings.Builder
	for _, e := range p.exceeded {
		if e.extended {
			v, unit := humanCount(e.Value, false)
			fmt.Fprintf(&b, " [%s == %d (%5.3f%s)]", e.Counter, e.Value, v, unit)
		} else {
			fmt.Fprintf(&b, " [%s == %d]", e.Counter, uint32(e.Value))
		}
		for _, d := range p.details {
			if d.after == e.Counter && d.err == nil {
				writeDetail(&b, d.values)
			}
		}
	}
	if q.opts.data {
		writeDataFields(&b, &p.counters, false)
	}
	n := qn.node
	if !*header {
		if n.Type == discovery.NodeSwitch {
			fmt.Fprintf(w, "Errors for 0x%x \"%s\"\n", render.HeaderGUID(n), qn.name)
		} else {
			fmt.Fprintf(w, "Errors for \"%s\"\n", qn.name)
		}
		*header = true
	}
	if p.num == query.AllPortSelect {
		if n.Type == discovery.NodeSwitch {
			fmt.Fprintf(w, "   GUID 0x%x port ALL:%s\n", render.HeaderGUID(n), b.String())
		}
		return
	}
	fmt.Fprintf(w, "   GUID 0x%x port %d:%s\n", p.port.GUID, p.num, b.String())
	if q.opts.reportPort > 0 {
		q.writeLinkInfo(w, lp, n, p.port)
	}
}

// writeDetail appends the non-zero counters of a detail group.
func writeDetail(b *strings.Builder, s mad.Struct) {
	for i := range s.Desc().Fields {
		f := &s.Desc().Fields[i]
		if f.Reserved || f.Name == "PortSelect" || f.Name == "CounterSelect" {
			continue
		}
		if v, _ := mad.Get(s, f.Name); v != 0 {
			fmt.Fprintf(b, " [%s == %d]", f.Label, uint32(v))
		}
	}
}

// writeDataCounters is print_data_cnts (--counters): every data counter
// of each port read.
func (q *qeRun) writeDataCounters(w *bufio.Writer, lp *render.LinkPrinter, qn *qeNode) {
	header := false
	n := qn.node
	for _, p := range qn.ports {
		if p.counters.Err != nil {
			continue
		}
		if !header {
			fmt.Fprintf(w, "Data Counters for 0x%x \"%s\"\n", n.GUID, qn.name)
			header = true
		}
		var b strings.Builder
		writeDataFields(&b, &p.counters, true)
		fmt.Fprintf(w, "   GUID 0x%x port %d:%s\n", n.GUID, p.num, b.String())
		if q.opts.reportPort > 0 {
			q.writeLinkInfo(w, lp, n, p.port)
		}
	}
}

// writeDataFields appends the data and packet counters, PortCountersExtended's
// when read (with the unicast/multicast ones when the PMA has
// ExtendedWidth), PortCounters' otherwise; the zero ones only with all.
func writeDataFields(b *strings.Builder, r *query.PortCounters, all bool) {
	var s mad.Struct = r.Basic
	names := []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
	if r.Extended != nil {
		s = r.Extended
		if r.Caps.Has(mad.PerfCapMaskExtWidth) {
			names = append(names, "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts")
		}
	}
	if s == nil {
		return
	}
	for _, name := range names {
		v, _ := mad.Get(s, name)
		if v == 0 && !all {
			continue
		}
		f, unit := humanCount(v, name == "PortXmitData" || name == "PortRcvData")
		fmt.Fprintf(b, " [%s == %d (%5.3f%s)]", name, v, f, unit)
	}
}

// humanCount is conv_cnt_human_readable: v in units of 1024 (of bytes for
// data counters, which count 4-octet words), in float as the C tool
// computes it.
func humanCount(v uint64, data bool) (float64, string) {
	ui := 0
	div := uint64(1)
	for tmp := v / 1024; tmp != 0; tmp /= 1024 {
		ui++
		div *= 1024
	}
	val := float32(v)
	if data {
		val *= 4
		if val/float32(div) > 1024 {
			ui++
			div *= 1024
		}
	}
	val /= float32(div)
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if data {
		units = []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	}
	unit := ""
	if ui < len(units) {
		unit = units[ui]
	}
	return float64(val), unit
}

// writeLinkInfo is print_port_config (-r): the port's link, as a line.
func (q *qeRun) writeLinkInfo(w *bufio.Writer, lp *render.LinkPrinter, n *discovery.Node, p *discovery.Port) {
	if p == nil || p.PortInfo == nil {
		return
	}
	t := lp.Texts(p)
	link := fmt.Sprintf("(              %6s/%8s)", t.State, t.Phys)
	if !t.Down {
		link = fmt.Sprintf("(%3s %18s %6s/%8s)", t.Width, t.Speed, t.State, t.Phys)
	}
	remote := "           [  ] \"\" ( )\n"
	if r := p.Remote; r != nil {
		full := fmt.Sprintf("0x%016x %6d %4d[%2s] \"%s\" (%s %s)\n", r.GUID, render.RemoteLIDOf(r), r.Num, render.ExtText(r.ExtNum),
			lp.Name(r.Node), t.MaxWidth, t.MaxSpeed)
		remote = full
		if len(full) > 255 { // snprintf into 256 bytes
			remote = full[:255]
			if len(full) > 256 {
				fmt.Fprintln(q.env.IO.Err, "WARN: string buffer overflow")
			}
		}
	}
	lid := p.BaseLID
	if n.Type == discovery.NodeSwitch {
		lid = n.SMALID
	}
	fmt.Fprintf(w, "       Link info: %6d%4d[%2s] ==%s==>  %s", lid, p.Num, render.ExtText(p.ExtNum), link, remote)
}
