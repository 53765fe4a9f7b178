package exporter

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// sweep is one read of the counters of every port of a discovery, shared
// by the scrapes that arrive while it runs. Once done is closed it is
// only read.
type sweep struct {
	fab  *fabricState
	done chan struct{}
	// values are by index in fab.targets.
	values []portValues
	// haveAny is the union of the values' have bits: the counters some
	// port has, whose families are written.
	haveAny uint32
	took    time.Duration
	failed  int // ports with a failed read
	unread  int // ports the deadline left unread
}

// capsView is what the metrics need of a node's PMA capabilities.
type capsView struct {
	ietf, extErrors, xmitWait, qp1Dropped bool
}

func viewCaps(c *query.PMACaps) capsView {
	return capsView{
		ietf:       c.Has(mad.PerfCapMaskExtWidth),
		extErrors:  c.ExtendedErrors(),
		xmitWait:   c.Has(mad.PerfCapMaskXmitWait),
		qp1Dropped: c.Has(mad.PerfCapMaskQP1Dropped),
	}
}

// read fills sw: the PMAs' capabilities not known yet, then every port's
// counters at once: PortCountersExtended alone where the PMA has the
// 64-bit error counters (AdditionalPortCountersExtended), PortCounters
// (and PortCountersExtended where it has the data counters) elsewhere,
// and PortRcvErrorDetails if asked. The groups go to the engine at once,
// so its window stays full.
func (e *Exporter) read(ctx context.Context, sw *sweep) {
	start := time.Now()
	targets := sw.fab.targets
	caps := e.knownCaps(ctx, targets)

	var full, extOnly, details []int
	e.mu.Lock()
	for i, t := range targets {
		if caps[t.NodeGUID].ExtendedErrors() {
			extOnly = append(extOnly, i)
		} else {
			full = append(full, i)
		}
		if e.cfg.Collect.ErrorDetails && !e.noDetails[t.NodeGUID] {
			details = append(details, i)
		}
	}
	e.mu.Unlock()

	sw.values = make([]portValues, len(targets))
	var wg sync.WaitGroup
	for _, g := range []struct {
		idx     []int
		noBasic bool
	}{{full, false}, {extOnly, true}} {
		if len(g.idx) == 0 {
			continue
		}
		wg.Go(func() {
			group := make([]query.CounterPort, len(g.idx))
			for k, i := range g.idx {
				group[k] = targets[i]
			}
			out := query.ReadCounters(ctx, e.cfg.Client, group, query.CounterOptions{Caps: caps, NoBasic: g.noBasic, Timeout: e.cfg.Timeout})
			for k, i := range g.idx {
				r := &out[k]
				v := &sw.values[i]
				v.setCounters(viewCaps(caps[r.NodeGUID]), r.Basic, r.Extended)
				v.err = r.Err
			}
		})
	}
	var detailErrs []error
	var detailOut []mad.PortRcvErrorDetails
	if len(details) > 0 {
		wg.Go(func() { detailOut, detailErrs = e.readDetails(ctx, targets, details) })
	}
	wg.Wait()
	for k, i := range details {
		v := &sw.values[i]
		switch err := detailErrs[k]; {
		case err == nil:
			v.setDetails(&detailOut[k])
		case errors.As(err, new(*rpc.StatusError)):
			// The PMA does not have the attribute: no more asking.
			e.mu.Lock()
			e.noDetails[targets[i].NodeGUID] = true
			e.mu.Unlock()
		case v.err == nil:
			v.err = &query.CounterError{Port: targets[i], Attr: "PortRcvErrorDetails", Err: err}
		}
	}
	for i := range sw.values {
		v := &sw.values[i]
		sw.haveAny |= v.have
		switch {
		case v.err == nil:
		case isDeadline(v.err):
			sw.unread++
		default:
			sw.failed++
		}
	}
	sw.took = time.Since(start)
}

// knownCaps returns the capabilities of every node of targets, reading
// those not known yet (all at once, the first sweep of a discovery).
func (e *Exporter) knownCaps(ctx context.Context, targets []query.CounterPort) map[uint64]*query.PMACaps {
	e.mu.Lock()
	var missing []query.CounterPort
	for _, t := range targets {
		if e.caps[t.NodeGUID] == nil {
			missing = append(missing, t)
		}
	}
	e.mu.Unlock()
	var read map[uint64]*query.PMACaps
	if len(missing) > 0 {
		read = query.ReadCaps(ctx, e.cfg.Client, missing, e.cfg.Timeout)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	caps := make(map[uint64]*query.PMACaps, len(e.caps)+len(read))
	for g, c := range read {
		if c.Err == nil {
			e.caps[g] = c
		}
		// A failed read stands for this sweep (the node is read as a PMA
		// without capabilities, as ibqueryerrors does) and is asked again
		// by the next.
		caps[g] = c
	}
	for g, c := range e.caps {
		caps[g] = c
	}
	return caps
}

// readDetails reads PortRcvErrorDetails of targets[idx...].
func (e *Exporter) readDetails(ctx context.Context, targets []query.CounterPort, idx []int) ([]mad.PortRcvErrorDetails, []error) {
	desc := (&mad.PortRcvErrorDetails{}).Desc()
	jobs := make([]query.Job, len(idx))
	out := make([]mad.PortRcvErrorDetails, len(idx))
	outs := make([]mad.Struct, len(idx))
	for k, i := range idx {
		jobs[k] = query.Job{Dest: targets[i].Dest, In: query.PortSelect(desc, targets[i].Port), Timeout: e.cfg.Timeout}
		outs[k] = &out[k]
	}
	return out, query.FanOutStructs(ctx, e.cfg.Client, jobs, outs)
}

// errAttr is the attribute a port's read failed on.
func errAttr(err error) string {
	var ce *query.CounterError
	if errors.As(err, &ce) {
		return ce.Attr
	}
	return ""
}

// errReason is a failure in one word: timeout (no reply after the
// retries), status (the PMA refused), or other.
func errReason(err error) string {
	var te *rpc.TimeoutError
	var se *rpc.StatusError
	switch {
	case errors.As(err, &te) || errors.Is(err, umad.ErrTimeout):
		return "timeout"
	case errors.As(err, &se):
		return "status"
	}
	return "other"
}
