package ibcheck

// The counter side of the ibcheck family: the records of counter checks
// (internal/counters reads the counters, a switch's sum over all its
// ports as python-rdma's get_perf does, and judges them by python-rdma's
// thresholds), ibdatacounts' text, -s's thresholds and the document of a
// reset.

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// ThresholdHit is a counter beyond its threshold.
type ThresholdHit struct {
	Counter   string `json:"counter"`
	Value     uint64 `json:"value"`
	Threshold uint64 `json:"threshold"`
}

// perfRecord is the record of a counter check of p: its counters against
// th (python-rdma's do_check_errors: a warning per counter beyond its
// limit, and the port fails), or the error that reading them met.
func perfRecord(p *health.Port, read *counters.Read, th *counters.Thresholds) *checkRecord {
	if read.Err != nil {
		return newRecord(kindPerf, p, nil, read.Err)
	}
	var warnings []string
	var hits []ThresholdHit
	for _, e := range th.Exceeded(read.Basic, nil, nil) {
		f := health.Finding{Field: e.Counter, Got: e.Value, Want: e.Threshold, Rule: health.AtMost}
		warnings = append(warnings, findingText(f, p))
		hits = append(hits, ThresholdHit{mad.LookupStruct("PortCounters").Field(e.Counter).JSONName, e.Value, e.Threshold})
	}
	r := newRecord(kindPerf, p, warnings, nil)
	r.Exceeded = hits
	r.setCounters(read)
	return r
}

// setCounters puts what was read in the record's JSON.
func (r *checkRecord) setCounters(read *counters.Read) {
	if read.Basic != nil {
		r.Counters = &lazyPerfJSON{read.Basic}
	}
	if read.Extended != nil {
		r.ExtendedCounters = &lazyPerfJSON{read.Extended}
	}
}

// lazyPerfJSON is JSON of its counters, made only when the JSON is:
// text output never needs it, and it was a tenth of ibchecknet's CPU.
type lazyPerfJSON struct{ s mad.Struct }

func (l *lazyPerfJSON) MarshalJSON() ([]byte, error) { return counters.JSON(l.s), nil }

// writeDataCounts prints a port's data counters as python-rdma's
// do_show_counts does, with libibmad 1.x's labels.
func writeDataCounts(w io.Writer, lid uint16, port int, pc *mad.PortCounters) {
	fmt.Fprintf(w, "# Port counters: Lid %d %s\n", lid, selectText(port))
	for _, f := range []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"} {
		v, _ := counters.Value(pc, f)
		n := counters.OldLabel(f)
		fmt.Fprintf(w, "%s:%s%d\n", n, strings.Repeat(".", 33-len(n)), v)
	}
}

// thresholdsResult is ibcheckerrs -s: the thresholds in use.
type thresholdsResult struct{ th *counters.Thresholds }

// WriteText prints the limits as python-rdma's -s does: name=value,
// sorted by python-rdma's name.
func (t thresholdsResult) WriteText(w io.Writer) error {
	var lines []string
	for _, l := range t.th.InEffect() {
		lines = append(lines, fmt.Sprintf("%s=%d", counters.PyName(l.Counter), l.Limit))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

func (t thresholdsResult) MarshalJSON() ([]byte, error) {
	m := map[string]uint64{}
	for _, f := range counters.PortCounterFields() {
		if v, ok := t.th.Limit(f.Name); ok {
			m[f.JSONName] = v
		}
	}
	return json.Marshal(map[string]any{"thresholds": m})
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
