// Package exporter is ibtool-exporter's Prometheus exporter: the counters
// of every port of the fabric, read at each scrape in one fan-out through
// the query layer's counter reader, with the link state, width and rate of
// every port from one fabric discovery that is kept between scrapes and
// refreshed on an interval. A counter read that fails is a metric of the
// scrape (ib_port_scrape_error), never a failed scrape.
//
// Scrapes that arrive while a sweep of the counters is in flight share
// it: N scrapers never mean N sweeps of the fabric. A scrape has a
// deadline (Prometheus' X-Prometheus-Scrape-Timeout-Seconds): past it, it
// returns what it has, with ib_scrape_complete 0.
//
// The metrics are written in Prometheus' text format straight from what
// a sweep read (write.go), not built as client_golang metric families: a
// 2000-node fabric has some 300 000 series, which as families cost about
// 60 MB of objects per scrape for the garbage collector to chase.
package exporter

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/exporter/cmdline"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// Collectors are the metric groups an exporter exports
// (--collector.NAME).
// Collectors are the metric groups an exporter writes (the
// --collector.NAME switches).
type Collectors = cmdline.Collectors

// Config is what an Exporter reads and how.
type Config struct {
	// Client sends the counter reads (and the walk, through Discover).
	Client *query.Client
	// Discover reads the fabric: a live walk, the SA or a cache.
	Discover func(ctx context.Context) (*discovery.Fabric, error)
	Names    *nodename.Map
	// Timeout is each counter MAD's timeout per attempt; 0 for the
	// engine's.
	Timeout time.Duration
	Collect Collectors
	// Shard is the part of the fabric to export; the zero Shard is all.
	Shard Shard
	// Version is the build's version (ibtool_build_info).
	Version string
}

// Exporter gathers the fabric's metrics.
type Exporter struct {
	cfg Config

	mu       sync.Mutex // guards the fields below
	fab      *fabricState
	failures int // discoveries that failed
	// caps are the nodes' PMA capabilities (by node GUID), read once:
	// they do not change with a walk, and reading them again would cost a
	// MAD per node. A failed read is not kept: it is asked again.
	caps map[uint64]*query.PMACaps
	// noDetails are the nodes whose PMA refused PortRcvErrorDetails (an
	// optional attribute without a capability bit): not asked again.
	noDetails map[uint64]bool
	inflight  *sweep // the sweep scrapes join, nil if none
	sweeps    uint64
	scrapes   uint64
}

// New returns an exporter; it has no fabric until Refresh.
func New(cfg Config) *Exporter {
	return &Exporter{cfg: cfg, caps: map[uint64]*query.PMACaps{}, noDetails: map[uint64]bool{}}
}

// Refresh discovers the fabric again. On failure the previous discovery
// stays in use and the failure is counted (ib_discovery_failures_total).
// Scrapes go on meanwhile with the previous discovery.
func (e *Exporter) Refresh(ctx context.Context) error {
	start := time.Now()
	fab, err := e.cfg.Discover(ctx)
	if err != nil {
		e.mu.Lock()
		e.failures++
		e.mu.Unlock()
		return err
	}
	st := prepare(fab, e.cfg.Names, e.cfg.Client.Options().PKeyIndex, e.cfg.Shard)
	st.at, st.took = start, time.Since(start)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fab = st
	// Forget the nodes that are gone.
	present := make(map[uint64]bool, len(st.targets))
	for _, t := range st.targets {
		present[t.NodeGUID] = true
	}
	for g := range e.caps {
		if !present[g] {
			delete(e.caps, g)
		}
	}
	for g := range e.noDetails {
		if !present[g] {
			delete(e.noDetails, g)
		}
	}
	return nil
}

// Run refreshes the discovery every interval, and at once on a receive
// from now (nil: never), until ctx ends; errors reach report.
func (e *Exporter) Run(ctx context.Context, interval time.Duration, now <-chan struct{}, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-now:
			t.Reset(interval)
		}
		if err := e.Refresh(ctx); err != nil && report != nil && ctx.Err() == nil {
			report(err)
		}
	}
}

// Result is what one scrape has to write.
type Result struct {
	fab *fabricState // nil before the first discovery
	// sw is the sweep of the counters, nil when none was read: the
	// counters are not collected, or the deadline came first.
	sw       *sweep
	timedOut bool // the scrape's deadline came before its sweep ended
	failures int
	sweeps   uint64
	scrapes  uint64
}

// Complete tells whether the scrape read everything it should have.
func (r *Result) Complete() bool {
	return !r.timedOut && (r.sw == nil || r.sw.unread == 0)
}

// Scrape reads the counters of every port, or joins the sweep in flight
// if there is one, until ctx's deadline: past it, the result has what
// the exporter has without the counters, and says it is incomplete. A
// sweep started by a scrape runs to that scrape's deadline even if the
// scrape goes away, for the scrapes that joined it.
func (e *Exporter) Scrape(ctx context.Context) *Result {
	e.mu.Lock()
	e.scrapes++
	res := &Result{fab: e.fab, failures: e.failures, scrapes: e.scrapes}
	if e.fab == nil || !e.cfg.Collect.Counters {
		res.sweeps = e.sweeps
		e.mu.Unlock()
		return res
	}
	sw := e.inflight
	if sw == nil {
		sw = e.startSweepLocked(ctx)
	}
	res.sweeps = e.sweeps
	e.mu.Unlock()
	select {
	case <-sw.done:
		res.fab, res.sw = sw.fab, sw
	case <-ctx.Done():
		res.timedOut = true
	}
	return res
}

// startSweepLocked starts a sweep of e.fab's counters, with ctx's
// deadline but not its cancellation.
func (e *Exporter) startSweepLocked(ctx context.Context) *sweep {
	sweepCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if dl, ok := ctx.Deadline(); ok {
		sweepCtx, cancel = context.WithDeadline(context.WithoutCancel(ctx), dl)
	}
	sw := &sweep{fab: e.fab, done: make(chan struct{})}
	e.inflight = sw
	e.sweeps++
	go func() {
		defer cancel()
		e.read(sweepCtx, sw)
		e.mu.Lock()
		e.inflight = nil
		e.mu.Unlock()
		close(sw.done)
	}()
	return sw
}

// isDeadline tells whether err is a read cut short by the scrape's
// deadline, not a failure of the fabric.
func isDeadline(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
