package counters

import (
	"context"
	"errors"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/umad"
)

// Reading the counters of many ports the way python-rdma's get_perf
// does, over the query layer's fan-out (query.ReadCounters): a port's
// counters, or a switch's sum over all its ports, by AllPortSelect where
// its PMA has it and by adding its ports up where it has not.

// ErrCAAllPorts is a sum over all ports asked of a CA whose PMA cannot
// make it: a CA's PMA counts the port a MAD arrives on, so its other
// ports cannot be read to add them up (python-rdma's words).
var ErrCAAllPorts = errors.New("Can't iterate over all ports on a CA.")

// Target is a port whose counters are read: Port is its number, or
// AllPortSelect for the sum of all a switch's ports (NumPorts of them).
type Target struct {
	NodeGUID uint64
	NodeType mad.NodeType
	NumPorts int
	LID      uint16 // the node's PMA: a switch's LID, a CA port's own
	Port     int
}

// Read is what was read of a Target: a sum when its PMA summed it or it
// was added up (Basic.PortSelect is then AllPortSelect).
type Read struct {
	Basic    *mad.PortCounters
	Extended *mad.PortCountersExtended // nil unless Reader.Extended and the PMA has it
	Group    mad.Struct                // Reader.Group's attribute, nil when not asked for
	Err      error
}

// Reader reads Targets' counters, many at once. The nodes' PMA
// capabilities are read once, the first time a node is read, and kept.
// A Reader is not for concurrent use.
type Reader struct {
	Client *query.Client
	// Extended also reads PortCountersExtended where the PMA has it.
	Extended bool
	// Group also reads this counter attribute, when not nil.
	Group *mad.StructDesc
	caps  map[uint64]*query.PMACaps
}

// PMADest is a node's PMA by LID on QP1, as ibqueryerrors addresses it
// (no SA query per port): a switch's LID, a CA port's own.
func PMADest(lid uint16) query.Dest {
	return query.GMPAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey})
}

func (t Target) counterPort(port int) query.CounterPort {
	return query.CounterPort{NodeGUID: t.NodeGUID, NodeType: t.NodeType, Port: port, Dest: PMADest(t.LID)}
}

// Caps are the PMA capabilities of t's node, nil when not read yet.
func (r *Reader) Caps(t Target) *query.PMACaps { return r.caps[t.NodeGUID] }

// expand is the ports read for t: t itself, or every port of a switch
// whose PMA cannot sum them (AllPortSelect emulation).
func (r *Reader) expand(t Target) ([]query.CounterPort, error) {
	if t.Port != AllPortSelect || r.caps[t.NodeGUID].Has(mad.PerfCapMaskAllPortSelect) {
		return []query.CounterPort{t.counterPort(t.Port)}, nil
	}
	if t.NodeType != mad.NodeTypeSwitch {
		return nil, ErrCAAllPorts
	}
	out := make([]query.CounterPort, 0, t.NumPorts)
	for p := 1; p <= t.NumPorts; p++ {
		out = append(out, t.counterPort(p))
	}
	return out, nil
}

// readCaps reads the capabilities of the targets' nodes not known yet.
func (r *Reader) readCaps(ctx context.Context, targets []Target) {
	if r.caps == nil {
		r.caps = map[uint64]*query.PMACaps{}
	}
	var ask []query.CounterPort
	for _, t := range targets {
		if r.caps[t.NodeGUID] == nil {
			ask = append(ask, t.counterPort(t.Port))
		}
	}
	for guid, c := range query.ReadCaps(ctx, r.Client, ask, 0) {
		r.caps[guid] = c
	}
}

// Read reads every target's counters, all at once, in one fan-out.
func (r *Reader) Read(ctx context.Context, targets []Target) []Read {
	r.readCaps(ctx, targets)
	out := make([]Read, len(targets))
	var ports []query.CounterPort
	spans := make([][2]int, len(targets))
	for i, t := range targets {
		ps, err := r.expand(t)
		out[i].Err = err
		spans[i] = [2]int{len(ports), len(ports) + len(ps)}
		ports = append(ports, ps...)
	}
	opts := query.CounterOptions{Caps: r.caps, NoExtended: !r.Extended}
	if r.Group != nil {
		opts.Groups = []*mad.StructDesc{r.Group}
	}
	got := query.ReadCounters(ctx, r.Client, ports, opts)
	for i := range targets {
		if out[i].Err == nil {
			out[i] = Sum(got[spans[i][0]:spans[i][1]])
		}
	}
	return out
}

// Sum is one port's read, or the sum of several, saturating as the
// counters do (Add); the first error fails the sum. A sum of several has
// PortSelect AllPortSelect.
func Sum(rs []query.PortCounters) Read {
	var out Read
	for i, r := range rs {
		if r.Err != nil {
			return Read{Err: r.Err}
		}
		if i == 0 {
			out.Basic, out.Extended = r.Basic, r.Extended
			if len(r.Groups) > 0 {
				out.Group = r.Groups[0]
			}
			continue
		}
		if out.Basic != nil && r.Basic != nil {
			Add(out.Basic, r.Basic)
		}
		if out.Extended != nil && r.Extended != nil {
			Add(out.Extended, r.Extended)
		}
		if out.Group != nil && len(r.Groups) > 0 && r.Groups[0] != nil {
			Add(out.Group, r.Groups[0])
		}
	}
	if len(rs) > 1 && out.Basic != nil {
		out.Basic.PortSelect = AllPortSelect
	}
	return out
}

// Resets are the Sets that clear sel in PortCounters of the targets: a
// switch's ports one by one where its PMA cannot do them all at once.
// Resets i of targets[i] are rs[spans[i][0]:spans[i][1]]; errs[i] says
// why there are none.
func (r *Reader) Resets(ctx context.Context, targets []Target, sel uint32) (rs []query.CounterReset, spans [][2]int, errs []error) {
	r.readCaps(ctx, targets)
	spans = make([][2]int, len(targets))
	errs = make([]error, len(targets))
	attr := mad.LookupStruct("PortCounters")
	for i, t := range targets {
		ps, err := r.expand(t)
		errs[i] = err
		spans[i] = [2]int{len(rs), len(rs) + len(ps)}
		for _, p := range ps {
			rs = append(rs, query.CounterReset{Port: p, Attr: attr, Select: sel})
		}
	}
	return rs, spans, errs
}

// Clear resets sel of every target through w (or, dryRun, sends nothing
// and only says what it would reset): the resets, and each target's
// error, nil where it was done.
func (r *Reader) Clear(ctx context.Context, w *query.Write, targets []Target, sel uint32, dryRun bool) ([]query.CounterReset, []error) {
	rs, spans, errs := r.Resets(ctx, targets, sel)
	got := query.ResetCounters(ctx, r.Client, w, rs, dryRun)
	for i := range targets {
		if errs[i] == nil {
			errs[i] = errors.Join(got[spans[i][0]:spans[i][1]]...)
		}
	}
	return rs, errs
}
