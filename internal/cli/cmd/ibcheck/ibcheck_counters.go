package ibcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/umad"
)

// The counter side of the ibcheck family: reading an end port's PMA
// counters the way python-rdma's get_perf does (a switch's sum over all
// its ports, by AllPortSelect or by adding its ports up when its PMA
// lacks it; a CA's port), through the shared fabric-wide reader
// (query.ReadCounters), resetting them (query.ResetCounters), and
// checking them against thresholds.

// CounterTarget is a port (or a switch's all ports) whose counters are read.
type CounterTarget struct {
	Guid     uint64
	NodeType mad.NodeType
	NumPorts int
	Lid      uint16
	Port     int // AllPortSelect: the switch's sum
}

// portRead is what was read of a CounterTarget.
type portRead struct {
	basic *mad.PortCounters
	ext   *mad.PortCountersExtended
	group mad.Struct // CounterReader.group's attribute
	err   error
}

// CounterReader reads perfTargets' counters; the nodes' PMA capabilities
// are read once and kept.
type CounterReader struct {
	Ctx    context.Context
	Client *query.Client
	ext    bool            // also PortCountersExtended where the PMA has it
	group  *mad.StructDesc // also this counter group, when not nil
	caps   map[uint64]*query.PMACaps
}

// pmaDest is a node's PMA by LID on QP1, as ibqueryerrors addresses it
// (no SA query per port).
func pmaDest(lid uint16) query.Dest {
	return query.GMPAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey})
}

func (t CounterTarget) counterPort(port int) query.CounterPort {
	return query.CounterPort{NodeGUID: t.Guid, NodeType: t.NodeType, Port: port, Dest: pmaDest(t.Lid)}
}

// expand is the ports read for t: t itself, or every port of a switch
// whose PMA cannot sum them (python-rdma adds them up then; a CA cannot).
func (cr *CounterReader) expand(t CounterTarget) ([]query.CounterPort, error) {
	if t.Port != counters.AllPortSelect || cr.caps[t.Guid].Has(mad.PerfCapMaskAllPortSelect) {
		return []query.CounterPort{t.counterPort(t.Port)}, nil
	}
	if t.NodeType != mad.NodeTypeSwitch {
		return nil, &checkError{"Can't iterate over all ports on a CA."}
	}
	var out []query.CounterPort
	for p := 1; p <= t.NumPorts; p++ {
		out = append(out, t.counterPort(p))
	}
	return out, nil
}

// readCaps reads the capabilities of the targets' nodes not known yet.
func (cr *CounterReader) readCaps(targets []CounterTarget) {
	if cr.caps == nil {
		cr.caps = map[uint64]*query.PMACaps{}
	}
	var ask []query.CounterPort
	for _, t := range targets {
		if cr.caps[t.Guid] == nil {
			ask = append(ask, t.counterPort(t.Port))
		}
	}
	for guid, c := range query.ReadCaps(cr.Ctx, cr.Client, ask, 0) {
		cr.caps[guid] = c
	}
}

// read reads every target's counters at once, in one fan-out.
func (cr *CounterReader) read(targets []CounterTarget) []portRead {
	cr.readCaps(targets)
	out := make([]portRead, len(targets))
	var ports []query.CounterPort
	spans := make([][2]int, len(targets))
	for i, t := range targets {
		ps, err := cr.expand(t)
		out[i].err = err
		spans[i] = [2]int{len(ports), len(ports) + len(ps)}
		ports = append(ports, ps...)
	}
	opts := query.CounterOptions{Caps: cr.caps, NoExtended: !cr.ext}
	if cr.group != nil {
		opts.Groups = []*mad.StructDesc{cr.group}
	}
	got := query.ReadCounters(cr.Ctx, cr.Client, ports, opts)
	for i := range targets {
		if out[i].err == nil {
			out[i] = sumReads(got[spans[i][0]:spans[i][1]])
		}
	}
	return out
}

// sumReads is one port's read, or the sum of several (saturating, as the
// counters do); the first error fails the sum.
func sumReads(rs []query.PortCounters) portRead {
	var out portRead
	for i, r := range rs {
		if r.Err != nil {
			return portRead{err: r.Err}
		}
		if i == 0 {
			out.basic, out.ext = r.Basic, r.Extended
			if len(r.Groups) > 0 {
				out.group = r.Groups[0]
			}
			continue
		}
		if out.basic != nil && r.Basic != nil {
			counters.Add(out.basic, r.Basic)
		}
		if out.ext != nil && r.Extended != nil {
			counters.Add(out.ext, r.Extended)
		}
		if out.group != nil && len(r.Groups) > 0 && r.Groups[0] != nil {
			counters.Add(out.group, r.Groups[0])
		}
	}
	if len(rs) > 1 && out.basic != nil {
		out.basic.PortSelect = counters.AllPortSelect
	}
	return out
}

// resets are the Sets that clear sel in PortCounters of the targets (a
// switch's ports one by one when its PMA cannot do them all at once).
func (cr *CounterReader) resets(targets []CounterTarget, sel uint32) ([]query.CounterReset, [][2]int, []error) {
	cr.readCaps(targets)
	var rs []query.CounterReset
	spans := make([][2]int, len(targets))
	errs := make([]error, len(targets))
	attr := mad.LookupStruct("PortCounters")
	for i, t := range targets {
		ps, err := cr.expand(t)
		errs[i] = err
		spans[i] = [2]int{len(rs), len(rs) + len(ps)}
		for _, p := range ps {
			rs = append(rs, query.CounterReset{Port: p, Attr: attr, Select: sel})
		}
	}
	return rs, spans, errs
}

// Clear resets sel of every target (or, dryRun, only says what
// would be reset); each target's error, nil where it was done.
func (cr *CounterReader) Clear(w *query.Write, targets []CounterTarget, sel uint32, dryRun bool) ([]query.CounterReset, []error) {
	rs, spans, errs := cr.resets(targets, sel)
	got := query.ResetCounters(cr.Ctx, cr.Client, w, rs, dryRun)
	for i := range targets {
		if errs[i] == nil {
			errs[i] = errors.Join(got[spans[i][0]:spans[i][1]]...)
		}
	}
	return rs, errs
}

// ResetDoc is what a counter reset did (or, --dry-run, would do).
type ResetDoc struct {
	Attribute     string         `json:"attribute"`
	CounterSelect uint32         `json:"counter_select"`
	DryRun        bool           `json:"dry_run"`
	Ports         []resetPortDoc `json:"ports"`
}

// resetKey names a reset port: node and PortSelect.
type resetKey struct {
	guid uint64
	port int
}

type resetPortDoc struct {
	NodeGUID mad.GUID `json:"node_guid"`
	LID      uint16   `json:"lid"`
	Port     int      `json:"port"`
	Done     bool     `json:"done"`
}

func newResetDoc(rs []query.CounterReset, sel uint32, dryRun bool, failed map[resetKey]bool) *ResetDoc {
	d := &ResetDoc{Attribute: "PortCounters", CounterSelect: sel, DryRun: dryRun, Ports: []resetPortDoc{}}
	for _, r := range rs {
		d.Ports = append(d.Ports, resetPortDoc{mad.GUID(r.Port.NodeGUID), r.Port.Dest.LID, r.Port.Port, !dryRun && !failed[resetKey{r.Port.NodeGUID, r.Port.Port}]})
	}
	return d
}

// write prints the reset's summary line (with --dry-run, first the list
// of what would be reset).
func (d *ResetDoc) write(w io.Writer) {
	done, nodes := 0, map[mad.GUID]bool{}
	for _, p := range d.Ports {
		if d.DryRun {
			fmt.Fprintf(w, "Would reset %s (CounterSelect 0x%04x) of lid %d %s\n", d.Attribute, d.CounterSelect, p.LID, selectText(p.Port))
		}
		if p.Done || d.DryRun {
			done++
			nodes[p.NodeGUID] = true
		}
	}
	verb := "Reset"
	if d.DryRun {
		verb = "Dry run: would reset"
	}
	fmt.Fprintf(w, "%s %s (CounterSelect 0x%04x) of %d ports on %d nodes\n", verb, d.Attribute, d.CounterSelect, done, len(nodes))
}

func selectText(port int) string {
	if port == counters.AllPortSelect {
		return "all ports"
	}
	return fmt.Sprintf("port %d", port)
}

// Counters and their thresholds (python-rdma's load_thresholds).

// pyOldCounterName is the libibmad 1.x perfquery label python-rdma prints
// a data counter with and accepts in threshold files, "" if none. (A
// switch: a package-level map would be built at every start.)
func pyOldCounterName(field string) string {
	switch field {
	case "PortRcvErrors":
		return "RcvErrors"
	case "PortXmitConstraintErrors":
		return "XmtConstraintErrors"
	case "SymbolErrorCounter":
		return "SymbolErrors"
	case "PortXmitDiscards":
		return "XmtDiscards"
	case "PortRcvRemotePhysicalErrors":
		return "RcvRemotePhysErrors"
	case "ExcessiveBufferOverrunErrors":
		return "ExcBufOverrunErrors"
	case "PortXmitData":
		return "XmtData"
	case "LinkErrorRecoveryCounter":
		return "LinkRecovers"
	case "PortRcvSwitchRelayErrors":
		return "RcvSwRelayErrors"
	case "PortXmitWait":
		return "XmtWait"
	case "LocalLinkIntegrityErrors":
		return "LinkIntegrityErrors"
	case "PortRcvData":
		return "RcvData"
	case "PortRcvConstraintErrors":
		return "RcvConstraintErrors"
	case "LinkDownedCounter":
		return "LinkDowned"
	case "PortXmitPkts":
		return "XmtPkts"
	case "PortRcvPkts":
		return "RcvPkts"
	}
	return ""
}

// pyCounterName is python-rdma's name of a PortCounters field (its
// structure member: lower camel case, VL15Dropped as it is).
func pyCounterName(field string) string {
	if len(field) > 1 && field[1] >= 'A' && field[1] <= 'Z' {
		return field
	}
	return strings.ToLower(field[:1]) + field[1:]
}

// counterFields are PortCounters' counters in wire order (no selects, no
// reserved bits), listed on first use.
func counterFields() []*mad.FieldDesc {
	portCounterFieldsOnce.Do(func() { portCounterFields = listCounterFields() })
	return portCounterFields
}

var (
	portCounterFieldsOnce sync.Once
	portCounterFields     []*mad.FieldDesc
)

func listCounterFields() []*mad.FieldDesc {
	var out []*mad.FieldDesc
	d := (&mad.PortCounters{}).Desc()
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Reserved || !f.IsNumber() || strings.HasPrefix(f.Name, "PortSelect") || strings.HasPrefix(f.Name, "CounterSelect") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// thresholds are counter limits by PortCounters field name.
type pyThresholds map[string]uint64

// defaultThresholds are python-rdma's built-in limits.
func defaultThresholds() pyThresholds {
	return pyThresholds{
		"PortRcvErrors": 10, "PortXmitConstraintErrors": 100, "SymbolErrorCounter": 10,
		"VL15Dropped": 100, "PortXmitDiscards": 100, "ExcessiveBufferOverrunErrors": 10,
		"LinkErrorRecoveryCounter": 10, "PortRcvSwitchRelayErrors": 100,
		"PortRcvRemotePhysicalErrors": 100, "LocalLinkIntegrityErrors": 10,
		"PortRcvConstraintErrors": 100, "LinkDownedCounter": 10,
	}
}

// counterField finds a counter by any of its names: the field's, python's
// member name, libibmad's old or current label, in any case.
func counterField(name string) string {
	for _, f := range counterFields() {
		for _, n := range []string{f.Name, pyOldCounterName(f.Name), f.Label, f.JSONName} {
			if n != "" && strings.EqualFold(n, name) {
				return f.Name
			}
		}
	}
	return ""
}

// loadThresholds reads a threshold file: name=value lines (value in C
// notation: 10, 0x10, 010), # comments, blank lines; the limits of the
// file replace the defaults. "" is the defaults.
func loadThresholds(path string) (pyThresholds, error) {
	if path == "" {
		return defaultThresholds(), nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("threshold file: %w", err)
	}
	th := pyThresholds{}
	for _, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		v, err := parseCUint(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("%s: invalid threshold line %q: want name=number", path, line)
		}
		field := counterField(strings.TrimSpace(name))
		if field == "" {
			return nil, fmt.Errorf("%s: threshold key %q is not a PortCounters counter", path, strings.TrimSpace(name))
		}
		th[field] = v
	}
	return th, nil
}

// parseCUint reads a number as Python's int(s, 0) and strtoul do (0x
// hex, leading-0 octal, decimal).
func parseCUint(s string) (uint64, error) {
	if len(s) > 1 && s[0] == '0' && s[1] != 'x' && s[1] != 'X' {
		return strconv.ParseUint(s[1:], 8, 64)
	}
	return strconv.ParseUint(s, 0, 64)
}

// writeThresholds prints the limits as python-rdma's -s does: sorted by
// python's name, name=value.
func (th pyThresholds) write(w io.Writer) {
	var lines []string
	for f, v := range th {
		lines = append(lines, fmt.Sprintf("%s=%d", pyCounterName(f), v))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// ThresholdHit is a counter beyond its threshold.
type ThresholdHit struct {
	Counter   string `json:"counter"`
	Value     uint64 `json:"value"`
	Threshold uint64 `json:"threshold"`
}

// checkThresholds warns for each counter of pc beyond its (non-zero)
// limit: python-rdma's do_check_errors.
func checkThresholds(p *checkPort, pc *mad.PortCounters, th pyThresholds, o *checkOutcome) []ThresholdHit {
	var hits []ThresholdHit
	for _, f := range counterFields() {
		limit := th[f.Name]
		v, _ := mad.Get(pc, f.Name)
		if limit == 0 || v <= limit {
			continue
		}
		o.expect(false, p, pyCounterName(f.Name), fmt.Sprint(v), "expected less than", fmt.Sprint(limit), false)
		hits = append(hits, ThresholdHit{f.JSONName, v, limit})
	}
	return hits
}

// perfRecord is the record of a counter check of p: its counters
// against th, or the error that reading them met.
func perfRecord(p *checkPort, read *portRead, th pyThresholds) *checkRecord {
	var o checkOutcome
	if read.err != nil {
		return newRecord(kindPerf, p, &o, read.err)
	}
	hits := checkThresholds(p, read.basic, th, &o)
	r := newRecord(kindPerf, p, &o, nil)
	r.Exceeded = hits
	r.setCounters(read)
	return r
}

// setCounters puts what was read in the record's JSON.
func (r *checkRecord) setCounters(read *portRead) {
	if read.basic != nil {
		r.Counters = &lazyPerfJSON{read.basic}
	}
	if read.ext != nil {
		r.ExtendedCounters = &lazyPerfJSON{read.ext}
	}
}

// lazyPerfJSON is JSON of its counters, made only when the JSON is:
// text output never needs it, and it was a tenth of ibchecknet's CPU.
type lazyPerfJSON struct{ s mad.Struct }

func (l *lazyPerfJSON) MarshalJSON() ([]byte, error) { return counters.JSON(l.s), nil }

// writeDataCounts prints a port's data counters as python-rdma's
// do_show_counts does.
func writeDataCounts(w io.Writer, lid uint16, port int, pc *mad.PortCounters) {
	if port == counters.AllPortSelect {
		fmt.Fprintf(w, "# Port counters: Lid %d all ports\n", lid)
	} else {
		fmt.Fprintf(w, "# Port counters: Lid %d port %d\n", lid, port)
	}
	for _, f := range []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"} {
		v, _ := mad.Get(pc, f)
		n := pyOldCounterName(f)
		fmt.Fprintf(w, "%s:%s%d\n", n, strings.Repeat(".", 33-len(n)), v)
	}
}
