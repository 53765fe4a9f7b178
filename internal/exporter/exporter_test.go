package exporter

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// testFabric: the local host and three CAs on one switch. The switch's
// PMA has 64-bit data and error counters (AdditionalPortCountersExtended),
// CA a 64-bit data counters only, CA b PortCounters alone.
type testFabric struct {
	fab       *umadtest.Fabric
	pmas      *umadtest.NodePMAs
	tr        *umadtest.Opener
	client    *query.Client
	host      *umadtest.Node
	sw, a, b  *umadtest.Node
	discovers int
	failNext  bool
}

func newTestFabric(t *testing.T) *testFabric {
	t.Helper()
	f := &testFabric{fab: umadtest.NewFabric()}
	f.host = f.fab.AddCA(0x100, 1, "host HCA-1")
	f.sw = f.fab.AddSwitch(0x200, 8, "leaf01")
	f.a = f.fab.AddCA(0x300, 1, "node01 HCA-1")
	f.b = f.fab.AddCA(0x400, 1, "node02 HCA-1")
	f.fab.Link(f.host, 1, f.sw, 1)
	f.fab.Link(f.a, 1, f.sw, 2)
	f.fab.Link(f.b, 1, f.sw, 3)
	f.pmas = umadtest.NewNodePMAs(f.fab)
	sw := f.pmas.Of(f.sw)
	sw.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(mad.PerfCapMaskExtWidth | mad.PerfCapMaskXmitWait), CapabilityMask2: uint32(mad.PerfCapMask2AddlPortCountersExt)})
	for p := uint32(1); p <= 3; p++ {
		sw.Set(p, &mad.PortCounters{PortSelect: uint8(p), SymbolErrorCounter: 7, PortXmitData: 1})
		sw.Set(p, &mad.PortCountersExtended{PortSelect: uint8(p), PortXmitData: 1 << 40, SymbolErrorCounter: 1 << 33, PortXmitWait: 55, PortUnicastXmitPkts: 12})
	}
	f.pmas.Of(f.host).Set(0, &mad.ClassPortInfo{})
	f.pmas.Of(f.host).Set(1, &mad.PortCounters{PortSelect: 1})
	a := f.pmas.Of(f.a)
	a.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(mad.PerfCapMaskExtWidthNoIETF)})
	a.Set(1, &mad.PortCounters{PortSelect: 1, LinkDownedCounter: 3, PortXmitWait: 77})
	a.Set(1, &mad.PortCountersExtended{PortSelect: 1, PortRcvData: 42, PortUnicastRcvPkts: 99})
	b := f.pmas.Of(f.b)
	b.Set(0, &mad.ClassPortInfo{})
	b.Set(1, &mad.PortCounters{PortSelect: 1, PortRcvErrors: 9, PortRcvData: 10})

	f.tr = umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: f.fab.Answer, mad.ClassSubnDR: f.fab.Answer, mad.ClassPerf: f.pmas.Answer,
	}.Answer, umadtest.WithInfo(f.fab.LocalInfo()))
	port, err := f.tr.Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Timeout: 20 * time.Millisecond, Retries: 1, Window: 16, DestWindow: 4})
	t.Cleanup(func() { eng.Close() })
	f.client = query.New(eng, query.Options{})
	return f
}

func (f *testFabric) exporter() *Exporter {
	return New(Config{Client: f.client, Discover: func(ctx context.Context) (*discovery.Fabric, error) {
		f.discovers++
		if f.failNext {
			return nil, errors.New("no fabric today")
		}
		return discovery.Discover(ctx, f.client.Engine(), discovery.Options{})
	}})
}

// scrape gathers e as Prometheus would and returns the text format.
// prometheus.Gatherers checks the families as a registry checks its
// collectors' metrics: one type per family, valid and sorted label names,
// no series twice.
func scrape(t *testing.T, e *Exporter) string {
	t.Helper()
	mfs, err := prometheus.Gatherers{e}.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func wantLines(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, "\n"+l+"\n") {
			t.Errorf("missing %s", l)
		}
	}
}

func noLines(t *testing.T, text string, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		if strings.Contains(text, "\n"+p) {
			t.Errorf("unexpected %s...", p)
		}
	}
}

const (
	swLabels = `node_guid="0x0000000000000200",node_name="leaf01",port="2"`
	aLabels  = `node_guid="0x0000000000000300",node_name="node01 HCA-1",port="1"`
	bLabels  = `node_guid="0x0000000000000400",node_name="node02 HCA-1",port="1"`
)

// Each counter comes from the widest attribute the PMA has it in; data
// counters are bytes.
func TestCountersFromTheWidestAttribute(t *testing.T) {
	f := newTestFabric(t)
	e := f.exporter()
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	text := scrape(t, e)
	wantLines(t, text,
		// The switch: everything 64-bit, XmitWait from the extended attribute.
		`ib_port_transmit_data_bytes_total{`+swLabels+`} 4.398046511104e+12`,
		`ib_port_symbol_errors_total{`+swLabels+`} 8.589934592e+09`,
		`ib_port_transmit_wait_total{`+swLabels+`} 55`,
		`ib_port_unicast_transmit_packets_total{`+swLabels+`} 12`,
		// a: 64-bit data (NoIETF: no unicast counts), errors from PortCounters, no XmitWait capability.
		`ib_port_receive_data_bytes_total{`+aLabels+`} 168`,
		`ib_port_link_downed_total{`+aLabels+`} 3`,
		// b: PortCounters only.
		`ib_port_receive_errors_total{`+bLabels+`} 9`,
		`ib_port_receive_data_bytes_total{`+bLabels+`} 40`,
		`ib_scrape_ports 6`,
		`ib_scrape_port_errors 0`,
		`ib_port_link_info{lid="2",`+swLabels+`,remote_guid="0x0000000000000300",remote_name="node01 HCA-1",remote_port="1",speed="SDR",width="4X"} 1`,
		`ib_discovery_nodes{node_type="switch"} 1`,
	)
	noLines(t, text,
		`ib_port_unicast_receive_packets_total{`+aLabels,
		`ib_port_transmit_wait_total{`+aLabels,
		`ib_port_unicast_transmit_packets_total{`+bLabels,
		`ib_port_scrape_error{`,
	)
}

// A port whose read fails is a metric of the scrape: the other ports are
// there, the scrape succeeds, and the next scrape reads it again.
func TestReadFailuresAreMetrics(t *testing.T) {
	f := newTestFabric(t)
	e := f.exporter()
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.pmas.Of(f.a).Fail(mad.AttrPortCountersExtended, 1, umadtest.StatusInvalidField)
	f.fab.Unlink(f.b, 1) // b's MADs are lost from now on; the cached fabric still has it
	text := scrape(t, e)
	wantLines(t, text,
		`ib_port_scrape_error{attribute="PortCountersExtended",`+aLabels+`,reason="status"} 1`,
		`ib_port_scrape_error{attribute="PortCounters",`+bLabels+`,reason="timeout"} 1`,
		`ib_scrape_port_errors 2`,
		`ib_port_link_downed_total{`+aLabels+`} 3`, // what was read of a is kept
		`ib_port_symbol_errors_total{`+swLabels+`} 8.589934592e+09`,
	)
	if !strings.Contains(text, `ib_exporter_mads_total{result="lost"} `) || strings.Contains(text, `ib_exporter_mads_total{result="lost"} 0`+"\n") {
		t.Errorf("lost MADs not counted:\n%s", grep(text, "ib_exporter_mads_total"))
	}
	f.pmas.Of(f.a).Fail(mad.AttrPortCountersExtended, 1, 0)
	f.fab.Link(f.b, 1, f.sw, 3)
	text = scrape(t, e)
	wantLines(t, text, `ib_scrape_port_errors 0`, `ib_port_receive_errors_total{`+bLabels+`} 9`)
}

// The discovery is kept between scrapes and across a failed refresh; the
// PMAs' capabilities are read once.
func TestDiscoveryIsCached(t *testing.T) {
	f := newTestFabric(t)
	e := f.exporter()
	ctx := context.Background()
	if err := e.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	scrape(t, e)
	scrape(t, e)
	f.failNext = true
	if err := e.Refresh(ctx); err == nil {
		t.Fatal("a failed discovery was not reported")
	}
	text := scrape(t, e)
	if f.discovers != 2 {
		t.Errorf("%d discoveries, want 2 (one per Refresh, none per scrape)", f.discovers)
	}
	wantLines(t, text, `ib_discovery_failures_total 1`, `ib_scrape_ports 6`)
	cpi := 0
	for _, r := range f.tr.Requests(mad.ClassPerf) {
		if r.AttrID() == mad.AttrClassPortInfo {
			cpi++
		}
	}
	if cpi != 4 {
		t.Errorf("%d ClassPortInfo reads over 3 scrapes, want 4 (one per node)", cpi)
	}
}

// Before any discovery a scrape has only the exporter's own metrics.
func TestNoFabricYet(t *testing.T) {
	f := newTestFabric(t)
	f.failNext = true
	e := f.exporter()
	if err := e.Refresh(context.Background()); err == nil {
		t.Fatal("want the discovery's error")
	}
	text := scrape(t, e)
	wantLines(t, text, `ib_discovery_failures_total 1`)
	noLines(t, text, "ib_port_", "ib_scrape_ports")
}

func grep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
