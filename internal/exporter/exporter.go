// Package exporter is ibtool's Prometheus exporter: the counters of every
// port of the fabric, read at each scrape in one fan-out through the
// query layer's counter reader, with the link state, width and rate of
// every port from one fabric discovery that is kept between scrapes and
// refreshed on an interval. A counter read that fails is a metric of the
// scrape (ib_port_scrape_error), never a failed scrape.
//
// The exporter is a prometheus.Gatherer: it builds the metric families
// itself, for client_golang's promhttp handler and textfile writer. A
// 2000-node fabric has some 300 000 series; a Collector's series would
// each go through the registry's per-metric checks and sort, which cost
// more than reading the counters. Here the families are consistent by
// construction (one series per port and metric, label names sorted), and
// the tests check them with client_golang's own checks and promtool.
package exporter

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// Config is what an Exporter reads and how.
type Config struct {
	// Client sends the counter reads (and the walk, through Discover).
	Client *query.Client
	// Discover reads the fabric: a live walk or a cache.
	Discover func(ctx context.Context) (*discovery.Fabric, error)
	Names    *nodename.Map
	// Timeout is each counter MAD's timeout per attempt; 0 for the
	// engine's.
	Timeout time.Duration
}

// Exporter gathers the fabric's metrics.
type Exporter struct {
	cfg Config

	scrapeMu sync.Mutex // one scrape at a time: two would double the fabric's load
	mu       sync.Mutex // guards the fields below
	fab      *fabricState
	failures int // discoveries that failed
}

// fabricState is one discovery, prepared for scrapes.
type fabricState struct {
	fab    *discovery.Fabric
	at     time.Time
	took   time.Duration
	ports  []query.CounterPort
	labels [][]string         // the port label values of ports[i]
	pairs  [][]*dto.LabelPair // the same as label pairs, shared by all the port's series
	caps   map[uint64]*query.PMACaps
	// static are the node and link series: they change only with a
	// discovery.
	static   *families
	nodeKind map[string]int
}

// New returns an exporter; it has no fabric until Refresh.
func New(cfg Config) *Exporter { return &Exporter{cfg: cfg} }

// Refresh discovers the fabric again. On failure the previous discovery
// stays in use and the failure is counted (ib_discovery_failures_total).
func (e *Exporter) Refresh(ctx context.Context) error {
	start := time.Now()
	fab, err := e.cfg.Discover(ctx)
	if err != nil {
		e.mu.Lock()
		e.failures++
		e.mu.Unlock()
		return err
	}
	st := prepare(fab, e.cfg.Names, e.cfg.Client.Options().PKeyIndex)
	st.at, st.took = start, time.Since(start)
	e.mu.Lock()
	if e.fab != nil {
		// Keep what the PMAs said they can do: capabilities do not change
		// with a walk, and reading them again would cost a MAD per node.
		for g, c := range e.fab.caps {
			if st.fab.Node(g) != nil {
				st.caps[g] = c
			}
		}
	}
	e.fab = st
	e.mu.Unlock()
	return nil
}

// Run refreshes the discovery every interval until ctx ends; errors
// reach report.
func (e *Exporter) Run(ctx context.Context, interval time.Duration, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := e.Refresh(ctx); err != nil && report != nil {
				report(err)
			}
		}
	}
}

// Gather reads every port's counters and returns them with the link and
// discovery metrics (prometheus.Gatherer). Failed reads are metrics; the
// error is always nil.
func (e *Exporter) Gather() ([]*dto.MetricFamily, error) {
	e.scrapeMu.Lock()
	defer e.scrapeMu.Unlock()
	e.mu.Lock()
	st, failures := e.fab, e.failures
	e.mu.Unlock()
	fs := newFamilies()
	fs.with(discoveryFailDef, float64(failures))
	if st != nil {
		for def, mf := range st.static.byDef {
			fs.byDef[def] = mf
		}
		fs.with(discoveryTimeDef, float64(st.at.UnixNano())/1e9)
		fs.with(discoveryDurDef, st.took.Seconds())
		fs.with(discoveryErrDef, float64(len(st.fab.Errors)))
		for _, kind := range []string{"ca", "router", "switch"} {
			fs.with(discoveryNodesDef, float64(st.nodeKind[kind]), kind)
		}
		e.gatherCounters(fs, st)
	}
	s := e.cfg.Client.Engine().Stats()
	fs.with(madsDef, float64(s.Lost), "lost")
	fs.with(madsDef, float64(s.Retried), "retried")
	fs.with(madsDef, float64(s.Sent), "sent")
	return fs.sorted(), nil
}

// gatherCounters reads the counters of every port in one fan-out.
func (e *Exporter) gatherCounters(fs *families, st *fabricState) {
	start := time.Now()
	e.mu.Lock()
	caps := make(map[uint64]*query.PMACaps, len(st.caps))
	for g, c := range st.caps {
		if c.Err == nil { // a failed ClassPortInfo is asked again
			caps[g] = c
		}
	}
	e.mu.Unlock()
	res := e.readCounters(st.ports, caps)
	took := time.Since(start)
	for _, f := range counterFields {
		fs.reserve(f.def, len(res))
	}
	fs.reserve(xmitWaitDef, len(res))
	failed := 0
	for i := range res {
		r := &res[i]
		caps[r.NodeGUID] = r.Caps
		if r.Err != nil {
			failed++
			l := st.labels[i]
			fs.with(portScrapeErrDef, 1, errAttr(r.Err), l[0], l[1], l[2], errReason(r.Err))
		}
		addCounters(fs, r, st.pairs[i])
	}
	e.mu.Lock()
	st.caps = caps
	e.mu.Unlock()
	fs.with(scrapePortsDef, float64(len(res)))
	fs.with(scrapePortErrDef, float64(failed))
	fs.with(scrapeDurationDef, took.Seconds())
}

// readCounters reads the counters of ports in one fan-out. A port whose
// PMA has the 64-bit error counters (AdditionalPortCountersExtended) is
// read with PortCountersExtended alone, the others with PortCounters too
// (errors, and data on PMAs without the extended attribute). The two
// groups are read at once, so the engine's window stays full.
func (e *Exporter) readCounters(ports []query.CounterPort, caps map[uint64]*query.PMACaps) []query.PortCounters {
	var full, extOnly []int
	for i, p := range ports {
		if caps[p.NodeGUID].ExtendedErrors() {
			extOnly = append(extOnly, i)
		} else {
			full = append(full, i)
		}
	}
	res := make([]query.PortCounters, len(ports))
	var wg sync.WaitGroup
	for _, g := range []struct {
		idx     []int
		noBasic bool
	}{{full, false}, {extOnly, true}} {
		if len(g.idx) == 0 {
			continue
		}
		group := make([]query.CounterPort, len(g.idx))
		for k, i := range g.idx {
			group[k] = ports[i]
		}
		wg.Go(func() {
			out := query.ReadCounters(context.Background(), e.cfg.Client, group, query.CounterOptions{Caps: caps, NoBasic: g.noBasic, Timeout: e.cfg.Timeout})
			for k, i := range g.idx {
				res[i] = out[k]
			}
		})
	}
	wg.Wait()
	return res
}

// portValues are one port's counter attributes, as read.
type portValues struct {
	basic *mad.PortCounters
	ext   *mad.PortCountersExtended
}

// addCounters adds what was read of one port: each counter from
// PortCountersExtended when the PMA has it there (64 bits), else from
// PortCounters; nothing for an attribute that was not read.
func addCounters(fs *families, r *query.PortCounters, labels []*dto.LabelPair) {
	v := &portValues{basic: r.Basic, ext: r.Extended}
	extErrors := r.Caps.ExtendedErrors()
	ietf := r.Caps.Has(mad.PerfCapMaskExtWidth)
	for _, f := range counterFields {
		useExt := v.ext != nil && f.ext != nil && ((f.data && (!f.ietf || ietf)) || (!f.data && extErrors))
		switch {
		case useExt:
			fs.add(f.def, labels, float64(f.ext(v)))
		case v.basic != nil && f.basic != nil:
			fs.add(f.def, labels, float64(f.basic(v)))
		}
	}
	switch {
	case v.ext != nil && extErrors:
		fs.add(xmitWaitDef, labels, float64(v.ext.PortXmitWait))
	case v.basic != nil && r.Caps.Has(mad.PerfCapMaskXmitWait):
		fs.add(xmitWaitDef, labels, float64(v.basic.PortXmitWait))
	}
}

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

// prepare turns a discovery into what scrapes need: the ports to read
// with their labels, and the node and link metrics.
func prepare(f *discovery.Fabric, names *nodename.Map, pkeyIndex uint16) *fabricState {
	st := &fabricState{fab: f, caps: map[uint64]*query.PMACaps{}, nodeKind: map[string]int{}, static: newFamilies()}
	for _, n := range f.SortedByGUID() {
		guid := mad.GUID(n.GUID).String()
		name := names.Name(n.GUID, n.Desc())
		kind := string(jsonv.NodeTypeOf(mad.NodeType(n.Type)))
		st.nodeKind[kind]++
		st.static.with(nodeInfoDef, 1, guid, name, kind, strconv.Itoa(n.NumPorts))
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.PortInfo == nil {
				continue
			}
			labels := []string{guid, name, strconv.Itoa(p.Num)}
			pairs := stateDef.labelPairs(labels...)
			addLinkMetrics(st.static, p, labels, pairs, names)
			lid := p.BaseLID
			if n.Type == discovery.NodeSwitch {
				lid = n.SMALID // a switch's PMA answers for all its ports at port 0's LID
			}
			if p.Remote == nil || lid == 0 {
				continue
			}
			st.ports = append(st.ports, query.CounterPort{
				NodeGUID: n.GUID, NodeType: mad.NodeType(n.Type), Port: p.Num,
				Dest: query.GMPAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey, PKeyIndex: pkeyIndex}),
			})
			st.labels = append(st.labels, labels)
			st.pairs = append(st.pairs, pairs)
		}
	}
	return st
}

// addLinkMetrics adds a port's state, and for a port with a link its
// width, rate and the link's far end.
func addLinkMetrics(fs *families, p *discovery.Port, labels []string, pairs []*dto.LabelPair, names *nodename.Map) {
	pi := p.Info()
	fs.add(stateDef, pairs, float64(pi.PortState))
	fs.add(physStateDef, pairs, float64(pi.PortPhysicalState))
	if p.Remote == nil {
		return
	}
	rate := linkRate(p, pi)
	if lanes, err := strconv.Atoi(string(rate.Width[:max(len(rate.Width)-1, 0)])); err == nil {
		fs.add(widthDef, pairs, float64(lanes))
	}
	if rate.RateGbps > 0 {
		fs.add(rateDef, pairs, rate.RateGbps*1e9/8)
	}
	r := p.Remote
	fs.with(linkInfoDef, 1, strconv.Itoa(int(p.BaseLID)), labels[0], labels[1], labels[2],
		mad.GUID(r.Node.GUID).String(), names.Name(r.Node.GUID, r.Node.Desc()), strconv.Itoa(r.Num), rate.SpeedText, string(rate.Width))
}

// linkRate is the width and speed of p's active link, named as
// ibnetdiscover names them (the capability mask that counts is port 0's
// on a switch).
func linkRate(p *discovery.Port, pi *mad.PortInfo) jsonv.Rate {
	ci := pi
	if p.Node.Type == discovery.NodeSwitch {
		ci = nil
		if p0 := p.Node.Port(0); p0 != nil && p0.PortInfo != nil {
			ci = p0.Info()
		}
	}
	if ci == nil {
		return jsonv.Rate{}
	}
	var fdr10 bool
	if len(p.MlnxExtPortInfo) >= mad.MlnxExtPortInfoSize {
		var x mad.MlnxExtPortInfo
		_ = x.Unmarshal(p.MlnxExtPortInfo)
		fdr10 = x.LinkSpeedActive&uint8(mad.MlnxLinkSpeedFDR10) != 0
	}
	speed := pi.LinkSpeedActive
	return jsonv.RateOf(jsonv.WidthOf(pi.LinkWidthActive), mad.SpeedCompatName(mad.AggregateExtSpeed(pi, ci), speed, speed == mad.LinkSpeedQDR && fdr10))
}
