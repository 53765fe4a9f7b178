package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// testFabric: the local host and three CAs on one switch. The switch's
// PMA has 64-bit data and error counters (AdditionalPortCountersExtended)
// and QP1Dropped, CA a 64-bit data counters only, CA b PortCounters alone.
// Only the switch answers PortRcvErrorDetails.
type testFabric struct {
	fab       *umadtest.Fabric
	pmas      *umadtest.NodePMAs
	tr        *umadtest.Opener
	client    *query.Client
	host      *umadtest.Node
	sw, a, b  *umadtest.Node
	mu        sync.Mutex
	discovers int
	failNext  bool
	// gate, when set, holds every PerfMgt request until it is closed.
	gate chan struct{}
}

func newTestFabric(t *testing.T) *testFabric {
	t.Helper()
	f := &testFabric{fab: umadtest.NewFabric()}
	f.host = f.fab.AddCA(0x100, 1, "host HCA-1")
	f.sw = f.fab.AddSwitch(0x200, 8, "leaf01")
	f.a = f.fab.AddCA(0x300, 1, "node01 HCA-1")
	f.b = f.fab.AddCA(0x400, 1, `node02 "HCA"-1`)
	f.fab.Link(f.host, 1, f.sw, 1)
	f.fab.Link(f.a, 1, f.sw, 2)
	f.fab.Link(f.b, 1, f.sw, 3)
	f.pmas = umadtest.NewNodePMAs(f.fab)
	sw := f.pmas.Of(f.sw)
	sw.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(mad.PerfCapMaskExtWidth | mad.PerfCapMaskXmitWait | mad.PerfCapMaskQP1Dropped), CapabilityMask2: uint32(mad.PerfCapMask2AddlPortCountersExt)})
	for p := uint32(1); p <= 3; p++ {
		sw.Set(p, &mad.PortCounters{PortSelect: uint8(p), SymbolErrorCounter: 7, PortXmitData: 1})
		sw.Set(p, &mad.PortCountersExtended{PortSelect: uint8(p), PortXmitData: 1 << 40, SymbolErrorCounter: 1 << 33, PortXmitWait: 55, PortUnicastXmitPkts: 12, QP1Dropped: 5})
		sw.Set(p, &mad.PortRcvErrorDetails{PortSelect: uint8(p), PortDLIDMappingErrors: 4, PortLoopingErrors: uint16(p)})
	}
	f.pmas.Of(f.host).Set(0, &mad.ClassPortInfo{})
	f.pmas.Of(f.host).Set(1, &mad.PortCounters{PortSelect: 1})
	a := f.pmas.Of(f.a)
	a.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(mad.PerfCapMaskExtWidthNoIETF)})
	a.Set(1, &mad.PortCounters{PortSelect: 1, LinkDownedCounter: 3, PortXmitWait: 77, QP1Dropped: 8})
	a.Set(1, &mad.PortCountersExtended{PortSelect: 1, PortRcvData: 42, PortUnicastRcvPkts: 99})
	b := f.pmas.Of(f.b)
	b.Set(0, &mad.ClassPortInfo{CapabilityMask: uint16(mad.PerfCapMaskQP1Dropped)})
	b.Set(1, &mad.PortCounters{PortSelect: 1, PortRcvErrors: 9, PortRcvData: 10, QP1Dropped: 6})

	perf := func(req *umad.Packet) []*umad.Packet {
		f.mu.Lock()
		gate := f.gate
		f.mu.Unlock()
		if gate != nil {
			<-gate
		}
		return f.pmas.Answer(req)
	}
	f.tr = umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: f.fab.Answer, mad.ClassSubnDR: f.fab.Answer, mad.ClassPerf: perf,
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

// hold makes the PMAs hold every request until the returned func is
// called.
func (f *testFabric) hold() (release func()) {
	gate := make(chan struct{})
	f.mu.Lock()
	f.gate = gate
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.gate = nil
			f.mu.Unlock()
			close(gate)
		})
	}
}

var allCollectors = Collectors{Counters: true, Links: true}

func (f *testFabric) exporter(c Collectors, shard Shard) *Exporter {
	return New(Config{Client: f.client, Collect: c, Shard: shard, Version: "v1.2.3", Discover: func(ctx context.Context) (*discovery.Fabric, error) {
		f.mu.Lock()
		f.discovers++
		fail := f.failNext
		f.mu.Unlock()
		if fail {
			return nil, errors.New("no fabric today")
		}
		return discovery.Discover(ctx, f.client.Engine(), discovery.Options{})
	}})
}

// refreshed is an exporter of f with its first discovery done.
func (f *testFabric) refreshed(t *testing.T, c Collectors) *Exporter {
	t.Helper()
	e := f.exporter(c, Shard{})
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// scrape scrapes e without a deadline and returns the text, checked by
// client_golang's parser (one TYPE per family, its lines together, valid
// names, labels and values, no series twice).
func scrape(t *testing.T, e *Exporter) string {
	t.Helper()
	return scrapeCtx(t, e, context.Background())
}

func scrapeCtx(t *testing.T, e *Exporter, ctx context.Context) string {
	t.Helper()
	var b bytes.Buffer
	if err := e.Write(&b, e.Scrape(ctx), nil); err != nil {
		t.Fatal(err)
	}
	checkText(t, b.String())
	return b.String()
}

// checkText parses a scrape as Prometheus does and fails on a series that
// appears twice.
func checkText(t *testing.T, text string) map[string]*model.Sample {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v\n%s", err, text)
	}
	seen := map[string]*model.Sample{}
	for _, mf := range mfs {
		if len(mf.Metric) == 0 {
			t.Errorf("family %s has no series", mf.GetName())
		}
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, mf)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range vec {
			k := s.Metric.String()
			if seen[k] != nil {
				t.Errorf("series %s twice", k)
			}
			seen[k] = s
		}
	}
	return seen
}

func wantLines(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains("\n"+text, "\n"+l+"\n") {
			t.Errorf("missing %s", l)
		}
	}
}

func noLines(t *testing.T, text string, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		if strings.Contains("\n"+text, "\n"+p) {
			t.Errorf("unexpected %s...", p)
		}
	}
}

const (
	swLabels = `node_guid="0x0000000000000200",node_name="leaf01",port="2"`
	aLabels  = `node_guid="0x0000000000000300",node_name="node01 HCA-1",port="1"`
	bLabels  = `node_guid="0x0000000000000400",node_name="node02 \"HCA\"-1",port="1"`
)

// Each counter comes from the widest attribute the PMA has it in; data
// counters are bytes; QP1Dropped only where the PMA says it has it.
func TestCountersFromTheWidestAttribute(t *testing.T) {
	f := newTestFabric(t)
	text := scrape(t, f.refreshed(t, allCollectors))
	wantLines(t, text,
		// The switch: everything 64-bit, XmitWait and QP1Dropped from the extended attribute.
		`ib_port_transmit_data_bytes_total{`+swLabels+`} 4398046511104`,
		`ib_port_symbol_error_total{`+swLabels+`} 8589934592`,
		`ib_port_transmit_wait_total{`+swLabels+`} 55`,
		`ib_port_unicast_transmit_packets_total{`+swLabels+`} 12`,
		`ib_port_qp1_dropped_total{`+swLabels+`} 5`,
		// a: 64-bit data (NoIETF: no unicast counts), errors from PortCounters, no XmitWait or QP1Dropped capability.
		`ib_port_receive_data_bytes_total{`+aLabels+`} 168`,
		`ib_port_link_downed_total{`+aLabels+`} 3`,
		// b: PortCounters only, with QP1Dropped.
		`ib_port_receive_errors_total{`+bLabels+`} 9`,
		`ib_port_receive_data_bytes_total{`+bLabels+`} 40`,
		`ib_port_qp1_dropped_total{`+bLabels+`} 6`,
		`ib_scrape_ports 6`,
		`ib_scrape_port_errors 0`,
		`ib_scrape_ports_unread 0`,
		`ib_scrape_complete 1`,
		`ib_port_link_info{`+swLabels+`,lid="2",remote_guid="0x0000000000000300",remote_name="node01 HCA-1",remote_port="1",speed="SDR",width="4X"} 1`,
		`ib_port_link_degraded{`+swLabels+`} 0`,
		`ib_discovery_nodes{node_type="switch"} 1`,
		`ib_exporter_sweeps_total 1`,
		`ibtool_build_info{goversion="`+goVersion()+`",version="v1.2.3"} 1`,
	)
	noLines(t, text,
		`ib_port_unicast_receive_packets_total{`+aLabels,
		`ib_port_transmit_wait_total{`+aLabels,
		`ib_port_qp1_dropped_total{`+aLabels,
		`ib_port_unicast_transmit_packets_total{`+bLabels,
		`ib_port_scrape_error{`,
		`ib_port_looping_errors_total`, // not asked for
		`ib_exporter_mads_total`,       // the old total mixed with its parts
	)
	promtoolCheck(t, text)
}

// With the error-details collector, PortRcvErrorDetails of the PMAs that
// have it; one that refuses it is not asked again.
func TestErrorDetails(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, Collectors{Counters: true, ErrorDetails: true})
	text := scrape(t, e)
	wantLines(t, text,
		`ib_port_dli_mapping_errors_total{`+swLabels+`} 4`,
		`ib_port_looping_errors_total{`+swLabels+`} 2`,
		`ib_scrape_port_errors 0`,
	)
	noLines(t, text, `ib_port_looping_errors_total{`+aLabels, `ib_port_scrape_error`, `ib_port_state`, `ib_node_info`)
	details := func() int {
		n := 0
		for _, r := range f.tr.Requests(mad.ClassPerf) {
			if r.AttrID() == mad.AttrPortRcvErrorDetails {
				n++
			}
		}
		return n
	}
	before := details()
	scrape(t, e)
	// The switch's three linked ports again; the CAs, which refused, not.
	if got := details() - before; got != 3 {
		t.Errorf("%d PortRcvErrorDetails reads in the second scrape, want 3", got)
	}
}

// A port whose read fails is a metric of the scrape: the other ports are
// there, the scrape succeeds, and the next scrape reads it again.
func TestReadFailuresAreMetrics(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, allCollectors)
	f.pmas.Of(f.a).Fail(mad.AttrPortCountersExtended, 1, umadtest.StatusInvalidField)
	f.fab.Unlink(f.b, 1) // b's MADs are lost from now on; the cached fabric still has it
	text := scrape(t, e)
	wantLines(t, text,
		`ib_port_scrape_error{`+aLabels+`,attribute="PortCountersExtended",reason="status"} 1`,
		`ib_port_scrape_error{`+bLabels+`,attribute="PortCounters",reason="timeout"} 1`,
		`ib_scrape_port_errors 2`,
		`ib_scrape_complete 1`,                     // every port was read or failed: nothing left for lack of time
		`ib_port_link_downed_total{`+aLabels+`} 3`, // what was read of a is kept
		`ib_port_symbol_error_total{`+swLabels+`} 8589934592`,
	)
	if strings.Contains(text, "\nib_exporter_mad_lost_total 0\n") {
		t.Errorf("lost MADs not counted:\n%s", grep(text, "ib_exporter_mad_"))
	}
	f.pmas.Of(f.a).Fail(mad.AttrPortCountersExtended, 1, 0)
	f.fab.Link(f.b, 1, f.sw, 3)
	text = scrape(t, e)
	wantLines(t, text, `ib_scrape_port_errors 0`, `ib_port_receive_errors_total{`+bLabels+`} 9`)
}

// Each MAD outcome is its own metric: requests, resends and losses, none
// the sum of the others.
func TestMADOutcomes(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, allCollectors)
	f.fab.Unlink(f.b, 1)
	samples := checkText(t, scrape(t, e))
	s := f.client.Engine().Stats()
	for name, want := range map[string]uint64{
		"ib_exporter_mad_requests_total": s.Sent - s.Retried,
		"ib_exporter_mad_resends_total":  s.Retried,
		"ib_exporter_mad_lost_total":     s.Lost,
	} {
		got := samples[name]
		if got == nil || uint64(got.Value) != want {
			t.Errorf("%s: %v, want %d", name, got, want)
		}
	}
	// b's PortCounters went out twice (one resend) and was lost.
	if s.Retried == 0 || s.Lost == 0 {
		t.Errorf("engine stats %+v: want resends and losses", s)
	}
}

// The discovery is kept between scrapes and across a failed refresh; the
// PMAs' capabilities are read once.
func TestDiscoveryIsCached(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, allCollectors)
	scrape(t, e)
	scrape(t, e)
	f.failNext = true
	if err := e.Refresh(context.Background()); err == nil {
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

// Before any discovery a scrape has only the exporter's own metrics, and
// says it is incomplete.
func TestNoFabricYet(t *testing.T) {
	f := newTestFabric(t)
	f.failNext = true
	e := f.exporter(allCollectors, Shard{})
	if err := e.Refresh(context.Background()); err == nil {
		t.Fatal("want the discovery's error")
	}
	text := scrape(t, e)
	wantLines(t, text, `ib_discovery_failures_total 1`, `ib_scrape_complete 0`)
	noLines(t, text, "ib_port_", "ib_scrape_ports")
}

// Scrapes that arrive while a sweep is in flight join it: 50 scrapes at
// once send the MADs of one.
func TestConcurrentScrapesShareOneSweep(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, allCollectors)
	scrape(t, e) // reads the PMAs' capabilities, once
	perf := len(f.tr.Requests(mad.ClassPerf))
	scrape(t, e)
	one := len(f.tr.Requests(mad.ClassPerf)) - perf

	release := f.hold()
	defer release()
	const n = 50
	texts := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var b bytes.Buffer
			e.Write(&b, e.Scrape(context.Background()), nil)
			texts[i] = b.String()
		})
	}
	// Every scrape has joined the sweep, which the PMAs hold, before it
	// may go on.
	for deadline := time.Now().Add(10 * time.Second); ; {
		e.mu.Lock()
		joined := e.scrapes
		e.mu.Unlock()
		if joined == 2+n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d scrapes started", joined-2, n)
		}
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	if got := len(f.tr.Requests(mad.ClassPerf)) - perf - one; got != one {
		t.Errorf("%d concurrent scrapes sent %d PerfMgt MADs, one scrape %d", n, got, one)
	}
	for i, text := range texts {
		wantLines(t, text, `ib_exporter_sweeps_total 3`, `ib_scrape_complete 1`, `ib_port_symbol_error_total{`+swLabels+`} 8589934592`)
		if t.Failed() {
			t.Fatalf("scrape %d:\n%s", i, text)
		}
	}
}

// A scrape whose deadline comes before the counters are read returns at
// its deadline with what the exporter has, saying it is incomplete; the
// next scrape is complete again.
func TestScrapeDeadline(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, allCollectors)
	scrape(t, e)
	release := f.hold()
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	text := scrapeCtx(t, e, ctx)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the scrape took %v past its 100 ms deadline", took)
	}
	wantLines(t, text, `ib_scrape_complete 0`, `ib_scrape_ports_unread 6`, `ib_port_state{`+swLabels+`} 4`)
	noLines(t, text, `ib_port_symbol_error_total`)
	release()
	// The held sweep ends (its deadline has passed): the next scrape
	// starts its own and reads everything.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		e.mu.Lock()
		idle := e.inflight == nil
		e.mu.Unlock()
		if idle || time.Now().After(deadline) {
			break
		}
	}
	wantLines(t, scrape(t, e), `ib_scrape_complete 1`, `ib_scrape_ports_unread 0`)
}

// A rediscovery in progress never holds a scrape up: scrapes go on with
// the previous discovery.
func TestRefreshDoesNotBlockScrapes(t *testing.T) {
	f := newTestFabric(t)
	walking := make(chan struct{})
	finish := make(chan struct{})
	calls := 0
	e := New(Config{Client: f.client, Collect: allCollectors, Discover: func(ctx context.Context) (*discovery.Fabric, error) {
		calls++
		if calls == 2 {
			close(walking)
			<-finish
		}
		return discovery.Discover(ctx, f.client.Engine(), discovery.Options{})
	}})
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- e.Refresh(context.Background()) }()
	<-walking
	scraped := make(chan string)
	go func() {
		var b bytes.Buffer
		e.Write(&b, e.Scrape(context.Background()), nil)
		scraped <- b.String()
	}()
	select {
	case text := <-scraped:
		wantLines(t, text, `ib_scrape_complete 1`, `ib_scrape_ports 6`)
	case <-time.After(10 * time.Second):
		t.Fatal("a scrape waited for the rediscovery")
	}
	close(finish)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Shards split the fabric by switch, each CA with its switch: the shards
// of a fabric of two switches hold every series once between them.
func TestShardsSplitBySwitch(t *testing.T) {
	f := newTestFabric(t)
	sw2 := f.fab.AddSwitch(0x500, 4, "leaf02")
	c := f.fab.AddCA(0x600, 1, "node03 HCA-1")
	f.fab.Link(sw2, 1, f.sw, 8)
	f.fab.Link(c, 1, sw2, 2)
	f.pmas.Of(sw2).Set(0, &mad.ClassPortInfo{})
	f.pmas.Of(c).Set(0, &mad.ClassPortInfo{})
	for _, p := range []uint32{1, 2} {
		f.pmas.Of(sw2).Set(p, &mad.PortCounters{PortSelect: uint8(p)})
	}
	f.pmas.Of(c).Set(1, &mad.PortCounters{PortSelect: 1})
	f.pmas.Of(f.sw).Set(8, &mad.PortCountersExtended{PortSelect: 8})

	whole := map[string]bool{}
	for k := range checkText(t, scrape(t, f.refreshed(t, allCollectors))) {
		if strings.HasPrefix(k, "ib_port_") || strings.HasPrefix(k, "ib_node_") {
			whole[k] = true
		}
	}
	// Find a split that puts the two switches apart.
	n := 2
	for ; n < 64 && (Shard{0, n}).Has(0x200) == (Shard{0, n}).Has(0x500); n++ {
	}
	union := map[string]int{}
	for i := range n {
		e := f.exporter(allCollectors, Shard{i, n})
		if err := e.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		text := scrape(t, e)
		for k := range checkText(t, text) {
			if strings.HasPrefix(k, "ib_port_") || strings.HasPrefix(k, "ib_node_") {
				union[k]++
			}
		}
		// A CA goes with its switch.
		has := func(guid string) bool { return strings.Contains(text, `ib_node_info{node_guid="`+guid+`"`) }
		if has("0x0000000000000600") != has("0x0000000000000500") || has("0x0000000000000300") != has("0x0000000000000200") {
			t.Errorf("shard %d/%d splits a CA from its switch:\n%s", i, n, grep(text, "ib_node_info"))
		}
	}
	for k := range whole {
		if union[k] != 1 {
			t.Errorf("%s in %d shards", k, union[k])
		}
	}
	if len(union) != len(whole) {
		t.Errorf("the shards have %d series, the whole fabric %d", len(union), len(whole))
	}
}

func TestParseShard(t *testing.T) {
	if s, err := ParseShard("2/3"); err != nil || s != (Shard{2, 3}) {
		t.Errorf("2/3: %v %v", s, err)
	}
	for _, bad := range []string{"3/3", "-1/3", "1", "a/b", "0/0", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Label values are escaped and valid UTF-8, whatever a NodeDescription
// holds.
func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:         `plain`,
		`a "b" \c`:      `a \"b\" \\c`,
		"line\nbreak":   `line\nbreak`,
		"bad \xff byte": "bad \uFFFD byte",
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func goVersion() string { return runtime.Version() }

func grep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// promtoolCheck runs the real `promtool check metrics` on a scrape.
func promtoolCheck(t *testing.T, metrics string) {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		simfabric.Missing(t, fmt.Errorf("promtool not found (Debian package prometheus; make deps installs it): %v", err))
	}
	cmd := exec.Command(p, "check", "metrics")
	cmd.Stdin = strings.NewReader(metrics)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
