package exporter

import (
	"io"
	"runtime"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// textWriter writes Prometheus' text exposition format (version 0.0.4)
// into a buffer it hands to w in large pieces; the first write error
// stops it.
type textWriter struct {
	w   io.Writer
	buf []byte
	err error
}

// flushAt is how full the buffer gets before it is written out.
const flushAt = 64 << 10

func (t *textWriter) flush() {
	if len(t.buf) > 0 && t.err == nil {
		_, t.err = t.w.Write(t.buf)
	}
	t.buf = t.buf[:0]
}

// Write appends b (for client_golang's encoder).
func (t *textWriter) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	t.maybeFlush()
	return len(b), t.err
}

func (t *textWriter) maybeFlush() {
	if len(t.buf) >= flushAt {
		t.flush()
	}
}

// family writes m's HELP and TYPE lines.
func (t *textWriter) family(m *metric) {
	t.buf = append(t.buf, "# HELP "...)
	t.buf = append(t.buf, m.name...)
	t.buf = append(t.buf, ' ')
	t.buf = append(t.buf, m.help...) // our texts have no backslash or newline
	t.buf = append(t.buf, "\n# TYPE "...)
	t.buf = append(t.buf, m.name...)
	t.buf = append(t.buf, ' ')
	t.buf = append(t.buf, m.typ()...)
	t.buf = append(t.buf, '\n')
}

// start writes a sample's name and labels: labels, then extra (both label
// text without braces, either may be empty).
func (t *textWriter) start(m *metric, labels, extra string) {
	t.buf = append(t.buf, m.name...)
	if labels != "" || extra != "" {
		t.buf = append(t.buf, '{')
		t.buf = append(t.buf, labels...)
		if labels != "" && extra != "" {
			t.buf = append(t.buf, ',')
		}
		t.buf = append(t.buf, extra...)
		t.buf = append(t.buf, '}')
	}
	t.buf = append(t.buf, ' ')
}

// uint writes a sample with an integer value (a counter, exact: the text
// format's values are floats, but an integer's digits parse as one).
func (t *textWriter) uint(m *metric, labels, extra string, v uint64) {
	t.start(m, labels, extra)
	t.buf = strconv.AppendUint(t.buf, v, 10)
	t.buf = append(t.buf, '\n')
	t.maybeFlush()
}

// float writes a sample with a float value.
func (t *textWriter) float(m *metric, labels, extra string, v float64) {
	t.start(m, labels, extra)
	t.buf = strconv.AppendFloat(t.buf, v, 'g', -1, 64)
	t.buf = append(t.buf, '\n')
	t.maybeFlush()
}

// one writes a family of one sample without labels.
func (t *textWriter) one(m *metric, v float64) {
	t.family(m)
	t.float(m, "", "", v)
}

// write writes the result of a scrape: the exporter's own metrics, the
// discovery's, the links', the counters' and the scrape's.
func (e *Exporter) write(t *textWriter, r *Result) {
	t.family(&buildInfoMetric)
	t.float(&buildInfoMetric, `goversion="`+runtime.Version()+`",version="`+labelValue(e.cfg.Version)+`"`, "", 1)
	s := e.cfg.Client.Engine().Stats()
	t.one(&madRequestsMetric, float64(s.Sent-s.Retried))
	t.one(&madResendsMetric, float64(s.Retried))
	t.one(&madLostMetric, float64(s.Lost))
	t.one(&madUnmatchMetric, float64(s.Unmatched))
	t.one(&sweepsMetric, float64(r.sweeps))
	t.one(&scrapesMetric, float64(r.scrapes))
	t.one(&discoveryFailMetric, float64(r.failures))
	st := r.fab
	if st == nil {
		if e.cfg.Collect.Counters {
			t.one(&scrapeCompleteMetric, 0) // nothing to read yet
		}
		t.flush()
		return
	}
	t.family(&discoveryNodesMetric)
	for i, kind := range nodeKinds {
		t.float(&discoveryNodesMetric, `node_type="`+kind+`"`, "", float64(st.kinds[i]))
	}
	t.one(&discoveryErrMetric, float64(st.walkErrors))
	t.one(&discoveryTimeMetric, float64(st.at.UnixNano())/1e9)
	t.one(&discoveryDurMetric, st.took.Seconds())
	t.one(&shardNodesMetric, float64(len(st.nodes)))
	if e.cfg.Collect.Links {
		e.writeLinks(t, st)
	}
	if e.cfg.Collect.Counters {
		e.writeCounters(t, r)
	}
	t.flush()
}

// writeLinks writes the nodes and every port's link.
func (e *Exporter) writeLinks(t *textWriter, st *fabricState) {
	if len(st.nodes) > 0 {
		t.family(&nodeInfoMetric)
		for i := range st.nodes {
			t.float(&nodeInfoMetric, st.nodes[i].labels, "", 1)
		}
	}
	if len(st.ports) == 0 {
		return
	}
	t.family(&stateMetric)
	for i := range st.ports {
		t.uint(&stateMetric, st.ports[i].labels, "", uint64(st.ports[i].state))
	}
	t.family(&physStateMetric)
	for i := range st.ports {
		t.uint(&physStateMetric, st.ports[i].labels, "", uint64(st.ports[i].phys))
	}
	linked := func(write func(p *portState)) {
		for i := range st.ports {
			if st.ports[i].linked {
				write(&st.ports[i])
			}
		}
	}
	t.family(&widthMetric)
	linked(func(p *portState) {
		if p.lanes > 0 {
			t.uint(&widthMetric, p.labels, "", uint64(p.lanes))
		}
	})
	t.family(&rateMetric)
	linked(func(p *portState) {
		if p.rate > 0 {
			t.float(&rateMetric, p.labels, "", p.rate)
		}
	})
	t.family(&degradedMetric)
	linked(func(p *portState) {
		v := uint64(0)
		if p.degraded {
			v = 1
		}
		t.uint(&degradedMetric, p.labels, "", v)
	})
	t.family(&linkInfoMetric)
	linked(func(p *portState) { t.float(&linkInfoMetric, p.labels, p.linkLabels, 1) })
}

// writeCounters writes the counters a sweep read, its failures and the
// scrape's metrics.
func (e *Exporter) writeCounters(t *textWriter, r *Result) {
	st, sw := r.fab, r.sw
	if sw != nil {
		for c := counterID(0); c < numCounters; c++ {
			if sw.haveAny&(1<<c) == 0 {
				continue
			}
			m := &counterMetrics[c]
			t.family(m)
			for i := range sw.values {
				if v := &sw.values[i]; v.has(c) {
					t.uint(m, st.ports[st.read[i]].labels, "", v.v[c])
				}
			}
		}
		if sw.failed > 0 {
			t.family(&portScrapeErrMetric)
			for i := range sw.values {
				if err := sw.values[i].err; err != nil && !isDeadline(err) {
					t.float(&portScrapeErrMetric, st.ports[st.read[i]].labels, `attribute="`+errAttr(err)+`",reason="`+errReason(err)+`"`, 1)
				}
			}
		}
	}
	complete, failed, unread := 1.0, 0, len(st.read)
	if !r.Complete() {
		complete = 0
	}
	if sw != nil {
		failed, unread = sw.failed, sw.unread
	}
	t.one(&scrapeCompleteMetric, complete)
	t.one(&scrapePortsMetric, float64(len(st.read)))
	t.one(&scrapePortErrMetric, float64(failed))
	t.one(&scrapeUnreadMetric, float64(unread))
	if sw != nil {
		t.one(&scrapeDurMetric, sw.took.Seconds())
	}
}

// Write writes a scrape's result in Prometheus' text format, after the
// metrics of extra (the Go runtime's and the process', nil for none).
func (e *Exporter) Write(w io.Writer, r *Result, extra prometheus.Gatherer) error {
	t := &textWriter{w: w, buf: make([]byte, 0, flushAt+4096)}
	if extra != nil {
		mfs, err := extra.Gather()
		if err != nil {
			return err
		}
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(t, mf); err != nil {
				return err
			}
		}
	}
	e.write(t, r)
	return t.err
}
