package diagnose

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// DefaultInterval is the time between the two counter reads (--interval):
// long enough that a link with a bit error rate near IBA's 1e-12 shows a
// symbol error at the speeds of today (1/(5 s x 103 Gb/s) is 2e-12 at 4X
// EDR), short enough to wait for at a terminal. ibdiagnet waits 1 s.
const DefaultInterval = 5 * time.Second

// counterPorts are the ports whose counters the sweep reads: both ends
// of every link, each at its node's PMA by LID (a switch's, a CA port's
// own), in the fabric's order. Ports the SM has not configured (not
// Armed or Active) or without a LID are left out: no GMP is forwarded
// over a link before it is Active (IBA 7.2), and the links check
// reports them.
func counterPorts(f *discovery.Fabric) []query.CounterPort {
	var out []query.CounterPort
	for _, p := range sortedPorts(f, func(p *discovery.Port) bool {
		return p.Num > 0 && p.Remote != nil && len(p.PortInfo) > 0 && p.Info().PortState >= mad.PortStateArmed
	}) {
		lid, typ := p.BaseLID, mad.NodeType(p.Node.Type)
		if p.Node.Type == discovery.NodeSwitch {
			lid = p.Node.SMALID
		}
		if lid == 0 {
			continue
		}
		out = append(out, query.CounterPort{NodeGUID: p.Node.GUID, NodeType: typ, Port: p.Num, Dest: counters.PMADest(lid)})
	}
	return out
}

// readCounters reads PortCounters of counterPorts, and
// PortCountersExtended where the PMA has the 64-bit error counters; then,
// interval after the first read began, again (not with an interval of
// 0, nor when ctx ends first). Interval is the time between the two
// reads' starts, to the millisecond.
func readCounters(ctx context.Context, c *query.Client, f *discovery.Fabric, interval time.Duration) *CounterReads {
	ports := counterPorts(f)
	if len(ports) == 0 {
		return &CounterReads{} // nothing to wait for
	}
	opts := query.CounterOptions{Caps: query.ReadCaps(ctx, c, ports, 0), WantExtended: (*query.PMACaps).ExtendedErrors}
	start := time.Now()
	r := &CounterReads{First: query.ReadCounters(ctx, c, ports, opts)}
	if interval <= 0 {
		return r
	}
	wait := time.NewTimer(time.Until(start.Add(interval)))
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return r
	case <-wait.C:
	}
	r.Interval = time.Since(start).Round(time.Millisecond)
	r.Second = query.ReadCounters(ctx, c, ports, opts)
	return r
}

// healthFailures counts the counter reads and hidden nodes that did not
// answer.
func (s *Snapshot) healthFailures() int {
	n := 0
	for _, r := range s.Hidden {
		if r.Err != nil {
			n++
		}
	}
	if c := s.Counters; c != nil {
		for _, reads := range [][]query.PortCounters{c.First, c.Second} {
			for _, r := range reads {
				if r.Err != nil {
					n++
				}
			}
		}
	}
	return n
}

// healthReadsFailed are the walk check's findings of the counter reads
// and hidden nodes that did not answer: one per port (its first failed
// read).
func healthReadsFailed(s *Snapshot, names *nodename.Map) []Finding {
	var out []Finding
	if c := s.Counters; c != nil {
		for i := range c.First {
			r := &c.First[i]
			if r.Err == nil && c.Second != nil {
				r = &c.Second[i]
			}
			if p := counterPort(s.Fabric, r); r.Err != nil && p != nil {
				out = append(out, explainRouteBreak(readFailed(p, counterAttr(r.Err), r.Err, names), s, p, names))
			}
		}
	}
	for _, r := range s.Hidden {
		if r.Err != nil {
			f := readFailed(r.Port, "NodeInfo", r.Err, names)
			f.Message = fmt.Sprintf("what is behind this port (up, but the walk found no link) could not be read: %v", r.Err)
			f.Evidence = append(f.Evidence, Field{"dr_path", mad.FormatDRPath(behind(r.Port))})
			out = append(out, f)
		}
	}
	return out
}

// counterAttr is the attribute a counter read failed on.
func counterAttr(err error) string {
	var ce *query.CounterError
	var se *savedCounterError
	switch {
	case errors.As(err, &ce):
		return ce.Attr
	case errors.As(err, &se) && se.attr != "":
		return se.attr
	}
	return "PortCounters"
}

// savedCounterError is a failed counter read as a snapshot keeps it.
type savedCounterError struct{ attr, text string }

func (e *savedCounterError) Error() string { return e.text }
