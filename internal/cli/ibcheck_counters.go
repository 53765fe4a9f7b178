package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/umad"
)

// The counter side of the ibcheck family: reading an end port's PMA
// counters the way python-rdma's get_perf does (a switch's sum over all
// its ports, by AllPortSelect or by adding its ports up when its PMA
// lacks it; a CA's port), through the shared fabric-wide reader
// (query.ReadCounters), and resetting them (query.ResetCounters).

// counterTarget is a port (or a switch's all ports) whose counters are read.
type counterTarget struct {
	guid     uint64
	nodeType mad.NodeType
	numPorts int
	lid      uint16
	port     int // allPorts: the switch's sum
}

// portRead is what was read of a counterTarget.
type portRead struct {
	basic *mad.PortCounters
	ext   *mad.PortCountersExtended
	err   error
}

// counterReader reads perfTargets' counters; the nodes' PMA capabilities
// are read once and kept.
type counterReader struct {
	ctx    context.Context
	client *query.Client
	ext    bool // also PortCountersExtended where the PMA has it
	caps   map[uint64]*query.PMACaps
}

// pmaDest is a node's PMA by LID on QP1, as ibqueryerrors addresses it
// (no SA query per port).
func pmaDest(lid uint16) query.Dest {
	return query.GMPAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey})
}

func (t counterTarget) counterPort(port int) query.CounterPort {
	return query.CounterPort{NodeGUID: t.guid, NodeType: t.nodeType, Port: port, Dest: pmaDest(t.lid)}
}

// expand is the ports read for t: t itself, or every port of a switch
// whose PMA cannot sum them (python-rdma adds them up then; a CA cannot).
func (cr *counterReader) expand(t counterTarget) ([]query.CounterPort, error) {
	if t.port != allPorts || cr.caps[t.guid].Has(mad.PerfCapMaskAllPortSelect) {
		return []query.CounterPort{t.counterPort(t.port)}, nil
	}
	if t.nodeType != mad.NodeTypeSwitch {
		return nil, &checkError{"Can't iterate over all ports on a CA."}
	}
	var out []query.CounterPort
	for p := 1; p <= t.numPorts; p++ {
		out = append(out, t.counterPort(p))
	}
	return out, nil
}

// readCaps reads the capabilities of the targets' nodes not known yet.
func (cr *counterReader) readCaps(targets []counterTarget) {
	if cr.caps == nil {
		cr.caps = map[uint64]*query.PMACaps{}
	}
	var ask []query.CounterPort
	for _, t := range targets {
		if cr.caps[t.guid] == nil {
			ask = append(ask, t.counterPort(t.port))
		}
	}
	for guid, c := range query.ReadCaps(cr.ctx, cr.client, ask, 0) {
		cr.caps[guid] = c
	}
}

// read reads every target's counters at once, in one fan-out.
func (cr *counterReader) read(targets []counterTarget) []portRead {
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
	got := query.ReadCounters(cr.ctx, cr.client, ports, query.CounterOptions{Caps: cr.caps, NoExtended: !cr.ext})
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
			continue
		}
		if out.basic != nil && r.Basic != nil {
			addCounters(out.basic, r.Basic)
		}
		if out.ext != nil && r.Extended != nil {
			addCounters(out.ext, r.Extended)
		}
	}
	if len(rs) > 1 && out.basic != nil {
		out.basic.PortSelect = allPorts
	}
	return out
}

// resets are the Sets that clear sel in PortCounters of the targets (a
// switch's ports one by one when its PMA cannot do them all at once).
func (cr *counterReader) resets(targets []counterTarget, sel uint32) ([]query.CounterReset, [][2]int, []error) {
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

// clearTargets resets sel of every target (or, dryRun, only says what
// would be reset); each target's error, nil where it was done.
func (cr *counterReader) clear(w *query.Write, targets []counterTarget, sel uint32, dryRun bool) ([]query.CounterReset, []error) {
	rs, spans, errs := cr.resets(targets, sel)
	got := query.ResetCounters(cr.ctx, cr.client, w, rs, dryRun)
	for i := range targets {
		if errs[i] == nil {
			errs[i] = errors.Join(got[spans[i][0]:spans[i][1]]...)
		}
	}
	return rs, errs
}

// resetDoc is what a counter reset did (or, --dry-run, would do).
type resetDoc struct {
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

func newResetDoc(rs []query.CounterReset, sel uint32, dryRun bool, failed map[resetKey]bool) *resetDoc {
	d := &resetDoc{Attribute: "PortCounters", CounterSelect: sel, DryRun: dryRun, Ports: []resetPortDoc{}}
	for _, r := range rs {
		d.Ports = append(d.Ports, resetPortDoc{mad.GUID(r.Port.NodeGUID), r.Port.Dest.LID, r.Port.Port, !dryRun && !failed[resetKey{r.Port.NodeGUID, r.Port.Port}]})
	}
	return d
}

// write prints the reset's summary line (with --dry-run, first the list
// of what would be reset).
func (d *resetDoc) write(w io.Writer) {
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
	if port == allPorts {
		return "all ports"
	}
	return fmt.Sprintf("port %d", port)
}

// errNotReset is the record error of a port whose reset was not sent.
var errNotReset = errors.New("not reset (--dry-run)")
