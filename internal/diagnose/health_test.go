package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// withPMAs answers f's SMPs with f and PerfMgt requests with pmas (one
// PMA per node, routed by LID), or, pmas nil, with one PMA that has every
// counter of every port at 0.
func withPMAs(f *umadtest.Fabric, pmas *umadtest.NodePMAs) umadtest.Func {
	perf := umadtest.Func(nil)
	if pmas != nil {
		perf = pmas.Answer
	} else {
		zero := umadtest.NewPMA()
		zero.Set(0, &mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1})
		zero.Set(umadtest.AnyMod, &mad.PortCounters{})
		perf = zero.Answer
	}
	return umadtest.Classes{mad.ClassSubnLID: f.Answer, mad.ClassSubnDR: f.Answer, mad.ClassPerf: perf}.Answer
}

// vocab checks that every finding follows the codes and the vocabulary.
func vocab(t *testing.T, found []Finding) {
	t.Helper()
	for i := range found {
		if err := jsonCheck(&found[i]); err != nil {
			t.Errorf("%s: %v", found[i].Code, err)
		}
	}
}

func TestIDsCheck(t *testing.T) {
	tn := newTiny()
	if got := run(t, idsCheck{}, tn.s, nil); len(got) != 0 {
		t.Fatalf("a clean fabric: %v", places(got))
	}
	h1, hst := tn.host1.Port(1), tn.hst.Port(1)
	hst.BaseLID = h1.BaseLID                                  // host2 takes host1's LID
	tn.sw2.Port(0).GUID = 0                                   // a switch port GUID of 0
	tn.sw2.Port(1).GUID, tn.sw2.Port(5).GUID = 0, 0           // (a switch's ports all carry it)
	tn.sw2.NodeDesc = []byte("sw1")                           // two nodes named sw1
	setNI(tn.sw2, func(ni *mad.NodeInfo) { ni.PortGUID = 0 }) // fabricids reads a switch's from NodeInfo
	found := run(t, idsCheck{}, tn.s, nil)
	want := []string{
		"ids.zero_port_guid at 0x0000000000000300[0]",
		"ids.duplicate_lid at 0x0000000000000400[1]",
		"ids.duplicate_node_description at 0x0000000000000200[-1]",
	}
	if got := places(found); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings %v\nwant %v", got, want)
	}
	vocab(t, found)
	dup := found[1]
	if dup.Get("lid") != uint64(h1.BaseLID) || dup.Remote == nil || dup.Remote.NodeGUID != 0x300 {
		t.Errorf("duplicate LID: %+v %+v", dup, dup.Remote)
	}
	if held, ok := dup.Get("held_by").(*jsonv.LinkEnd); !ok || held.NodeGUID != 0x100 || held.Port != 1 {
		t.Errorf("held by %+v", dup.Get("held_by"))
	}
	if d := found[2]; d.Get("nodes") != 2 || !reflect.DeepEqual(d.Get("node_guids"), []mad.GUID{0x200, 0x300}) ||
		d.Message != `2 nodes have the description "sw1": this one and 0x0000000000000300` {
		t.Errorf("duplicate description: %+v", d)
	}
}

// A LID's whole LMC range counts; a port GUID that is another node's
// GUID; LIDs of ports the SM has not configured are not compared.
func TestIDsRangesAndUnconfiguredPorts(t *testing.T) {
	tn := newTiny()
	tn.host1.Port(1).LMC = 2 // LIDs 1-4: sw1 has 3, sw2 4
	tn.hst.Port(1).GUID = 0x100
	found := run(t, idsCheck{}, tn.s, nil)
	want := []string{
		"ids.duplicate_lid at 0x0000000000000200[0]",
		"ids.duplicate_lid at 0x0000000000000300[0]",
		"ids.port_guid_is_node_guid at 0x0000000000000400[1]",
	}
	if got := places(found); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings %v\nwant %v", got, want)
	}
	vocab(t, found)

	tn = newTiny()
	for _, p := range []*discovery.Port{tn.hst.Port(1), tn.sw2.Port(1)} {
		setPI(p, func(pi *mad.PortInfo) { pi.PortState = mad.PortStateInit })
	}
	tn.hst.Port(1).BaseLID = 0
	if got := run(t, idsCheck{}, tn.s, nil); len(got) != 0 {
		t.Errorf("an Init port's LID 0: %v", places(got))
	}
	setPI(tn.hst.Port(1), func(pi *mad.PortInfo) { pi.PortState = mad.PortStateActive })
	if got := places(run(t, idsCheck{}, tn.s, nil)); !reflect.DeepEqual(got, []string{"ids.zero_lid at 0x0000000000000400[1]"}) {
		t.Errorf("an Active port's LID 0: %v", got)
	}
}

// A node behind an up port the walk left without a link, whose GUID the
// walk knows: two nodes with one GUID.
func TestIDsHiddenDuplicate(t *testing.T) {
	tn := newTiny()
	p := tn.sw1.Port(7)
	setPI(p, func(pi *mad.PortInfo) {
		pi.PortState, pi.PortPhysicalState = mad.PortStateActive, mad.PhysPortStateLinkUp
	})
	ni := mad.NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 1, NodeGUID: 0x400, PortGUID: 0x401, LocalPortNum: 1}
	tn.s.Hidden = []HiddenRead{{Port: p, Node: &discovery.Node{GUID: 0x400, Type: discovery.NodeCA, NumPorts: 1,
		NodeInfo: mad.Encode(&ni), NodeDesc: []byte("host3 HCA-1"), DRPath: []byte{0, 1, 7}}},
		{Port: tn.sw1.Port(8), Err: errTimeout}}
	found := run(t, idsCheck{}, tn.s, nil)
	if got := places(found); !reflect.DeepEqual(got, []string{"ids.duplicate_node_guid at 0x0000000000000200[7]"}) {
		t.Fatalf("findings %v", got)
	}
	vocab(t, found)
	f := found[0]
	also, _ := f.Get("also_behind").(*jsonv.LinkEnd)
	if f.Remote == nil || f.Remote.NodeGUID != 0x400 || f.Remote.NodeName != "host3 HCA-1" || f.Remote.Port != 1 || f.Remote.PortGUID != 0x401 ||
		also == nil || also.NodeGUID != 0x300 || also.Port != 1 || f.Get("dr_path") != "0,1,7" {
		t.Errorf("finding %+v, remote %+v, also behind %+v", f, f.Remote, also)
	}
	want := `the node behind this port (DR path 0,1,7) answers as node GUID 0x0000000000000400, as does the node behind "sw2" port 1: the walk took the two for one`
	if f.Message != want {
		t.Errorf("message %q", f.Message)
	}
	// The one that did not answer is the walk check's.
	w := run(t, walkCheck{}, tn.s, nil)
	if got := places(w); !reflect.DeepEqual(got, []string{"walk.read_failed at 0x0000000000000200[8]"}) || w[0].Get("dr_path") != "0,1,8" {
		t.Errorf("walk: %v %+v", got, w)
	}
	if tn.s.Complete() || tn.s.Failures() != 1 {
		t.Errorf("complete %v, %d failures", tn.s.Complete(), tn.s.Failures())
	}
}

// read is one port's counters as read: PortCounters, and the PMA's
// capabilities.
func read(p *discovery.Port, pc mad.PortCounters) query.PortCounters {
	pc.PortSelect = uint8(p.Num)
	return query.PortCounters{CounterPort: query.CounterPort{NodeGUID: p.Node.GUID, NodeType: mad.NodeType(p.Node.Type), Port: p.Num},
		Caps: &query.PMACaps{CapabilityMask: mad.PerfCapMaskExtWidth | mad.PerfCapMaskXmitWait}, Basic: &pc}
}

// countedTiny is tiny with two counter reads 5 s apart, of ports with
// each kind of finding and some without.
func countedTiny() *tiny {
	tn := newTiny()
	p := func(n *discovery.Node, num int) *discovery.Port { return n.Port(num) }
	ext := read(p(tn.sw2, 6), mad.PortCounters{SymbolErrorCounter: 0xffff})
	ext.Caps = &query.PMACaps{CapabilityMask: mad.PerfCapMaskExtWidth, CapabilityMask2: uint32(mad.PerfCapMask2AddlPortCountersExt)}
	ext.Extended = &mad.PortCountersExtended{SymbolErrorCounter: 70000}
	failed := read(p(tn.sw1, 6), mad.PortCounters{})
	failed.Basic, failed.Err = nil, &query.CounterError{Attr: "PortCounters", Err: errTimeout}
	first := []query.PortCounters{
		read(p(tn.host1, 1), mad.PortCounters{PortRcvErrors: 150}),    // above its threshold
		read(p(tn.sw1, 1), mad.PortCounters{LinkDownedCounter: 0xff}), // saturated, 8 bits
		read(p(tn.sw1, 5), mad.PortCounters{PortXmitDiscards: 3}),     // rises
		failed, // walk.read_failed
		read(p(tn.sw2, 1), mad.PortCounters{PortRcvErrors: 50, PortXmitData: 1 << 20}), // reset meanwhile
		read(p(tn.sw2, 5), mad.PortCounters{}),                                         // symbol errors
		ext,                                                                            // 64-bit error counters
		read(p(tn.hst, 1), mad.PortCounters{PortXmitWait: 1 << 20, VL15Dropped: 50, PortXmitData: 1 << 30}),
	}
	second := make([]query.PortCounters, len(first))
	for i, r := range first {
		second[i] = r
		if r.Basic != nil {
			b := *r.Basic
			second[i].Basic = &b
		}
	}
	second[2].Basic.PortXmitDiscards = 7
	second[4].Basic.PortRcvErrors, second[4].Basic.PortXmitData = 0, 1<<21
	second[5].Basic.SymbolErrorCounter = 5
	second[7].Basic.PortXmitWait, second[7].Basic.VL15Dropped, second[7].Basic.PortXmitData = 1<<21, 60, 1<<31
	tn.s.Counters = &CounterReads{Interval: 5 * time.Second, First: first, Second: second}
	return tn
}

func TestCountersCheck(t *testing.T) {
	tn := countedTiny()
	found := run(t, countersCheck{}, tn.s, nil)
	want := []string{
		"counters.interval at ",
		"counters.above_threshold at 0x0000000000000100[1]",
		"counters.saturated at 0x0000000000000200[1]",
		"counters.increasing at 0x0000000000000200[5]",
		"counters.symbol_errors at 0x0000000000000300[5]",
		"counters.above_threshold at 0x0000000000000300[6]",
	}
	if got := places(found); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings %v\nwant %v", got, want)
	}
	vocab(t, found)
	if f := found[1]; f.Get("counter") != "PortRcvErrors" || f.Get("value") != uint64(150) || f.Get("threshold") != uint64(100) ||
		f.Severity != Warning || f.Message != "PortRcvErrors is 150, beyond its threshold of 100" {
		t.Errorf("above threshold: %+v", f)
	}
	if f := found[2]; f.Get("counter") != "LinkDownedCounter" || f.Get("counter_bits") != 8 || f.Get("value") != uint64(255) {
		t.Errorf("saturated: %+v", f)
	}
	if f := found[3]; f.Get("increase") != uint64(4) || f.Get("interval_ms") != int64(5000) || f.Get("increase_per_sec") != 0.8 ||
		f.Severity != Error || f.Message != "PortXmitDiscards rose by 4 in 5000 ms (0.8 a second), from 3 to 7" {
		t.Errorf("increasing: %+v", f)
	}
	// 5 errors in 5 s at 4X SDR (4 x 2.5 Gb/s): 5 / (5 x 1e10).
	sym := found[4]
	if sym.Get("increase") != uint64(5) || sym.Get("bit_rate_gbps") != 10.0 || !near(sym.Get("bit_error_rate"), 1e-10) ||
		!near(sym.Get("lowest_measurable_bit_error_rate"), 2e-11) || sym.Remote == nil || sym.Remote.NodeGUID != 0x200 {
		t.Errorf("symbol errors: %+v", sym.Evidence)
	}
	if want := "5 symbol errors in 5000 ms: a bit error rate of about 1.0e-10 at 4X SDR (10 Gb/s); the interval shows no rate below 2.0e-11"; sym.Message != want {
		t.Errorf("message %q\nwant    %q", sym.Message, want)
	}
	if f := found[5]; f.Get("value") != uint64(70000) || f.Get("threshold") != uint64(100) {
		t.Errorf("the 64-bit counter, not PortCounters' saturated one: %+v", f)
	}
	info := found[0]
	rates, _ := info.Get("lowest_bit_error_rates").([]lowestRate)
	if info.At != nil || info.Get("ports") != 7 || info.Get("interval_ms") != int64(5000) || len(rates) != 1 ||
		rates[0].RateText != "4X SDR" || rates[0].Ports != 7 || !near(rates[0].Lowest, 2e-11) {
		t.Errorf("interval: %+v", info)
	}
	if want := "the counters of 7 ports read twice, 5000 ms apart; the lowest bit error rate that shows: 2.0e-11 at 4X SDR"; info.Message != want {
		t.Errorf("message %q", info.Message)
	}
	w := run(t, walkCheck{}, tn.s, nil)
	if got := places(w); !reflect.DeepEqual(got, []string{"walk.read_failed at 0x0000000000000200[6]"}) || w[0].Get("attribute") != "PortCounters" {
		t.Errorf("walk: %v", got)
	}
}

// A threshold file's limits replace the defaults they name; an interval
// of 0 reads once: totals only.
func TestCountersThresholdsAndNoInterval(t *testing.T) {
	tn := countedTiny()
	th, err := counters.ParseThresholds(strings.NewReader("PortRcvErrors=200\nLinkDownedCounter=300\n"), "th", counters.Diagnose)
	if err != nil {
		t.Fatal(err)
	}
	got := places(run(t, countersCheck{}, tn.s, &Config{Thresholds: th}))
	want := []string{"counters.interval at ", "counters.saturated at 0x0000000000000200[1]", "counters.increasing at 0x0000000000000200[5]",
		"counters.symbol_errors at 0x0000000000000300[5]", "counters.above_threshold at 0x0000000000000300[6]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with PortRcvErrors=200: %v", got)
	}
	tn.s.Counters.Second, tn.s.Counters.Interval = nil, 0
	found := run(t, countersCheck{}, tn.s, nil)
	want = []string{"counters.interval at ", "counters.above_threshold at 0x0000000000000100[1]", "counters.saturated at 0x0000000000000200[1]",
		"counters.above_threshold at 0x0000000000000300[6]"}
	if got := places(found); !reflect.DeepEqual(got, want) {
		t.Errorf("read once: %v", got)
	}
	if found[0].Message != "the counters of 7 ports read once (an interval of 0): totals judged, no rises" {
		t.Errorf("message %q", found[0].Message)
	}
	tn.s.Counters = &CounterReads{}
	if got := run(t, countersCheck{}, tn.s, nil); len(got) != 1 || got[0].Message != "no port's counters read: no linked port is Armed or Active with a LID" {
		t.Errorf("no port read: %+v", got)
	}
	tn.s.Counters = nil
	if _, skipped := (countersCheck{}).Run(tn.s, &Config{}); skipped == "" {
		t.Error("ran without counters")
	}
}

func near(v any, want float64) bool {
	f, ok := v.(float64)
	return ok && math.Abs(f-want) <= want*1e-9
}

func TestPKeysCheck(t *testing.T) {
	tn := newTiny()
	if _, skipped := (pkeysCheck{}).Run(tn.s, &Config{}); skipped != "no switch port enforces partitions" {
		t.Errorf("without tables: skipped %q", skipped)
	}
	enforce := func(p *discovery.Port, in, out uint8) {
		setPI(p, func(pi *mad.PortInfo) { pi.PartitionEnforcementInbound, pi.PartitionEnforcementOutbound = in, out })
	}
	enforce(tn.sw1.Port(1), 1, 1)
	enforce(tn.sw2.Port(1), 1, 0)
	tn.s.PKeys = []PKeyRead{
		// host1: 0x8001 missing at the switch, 0x8002 full where the
		// switch is limited, 0x0003 limited where it is full (fine).
		{Port: tn.host1.Port(1), PKeys: []uint16{0xffff, 0x8001, 0x8002, 0x0003, 0, 0x8001}},
		{Port: tn.sw1.Port(1), PKeys: []uint16{0xffff, 0x0002, 0x8003, 0}},
		{Port: tn.sw2.Port(1), PKeys: []uint16{0xffff}},
		{Port: tn.hst.Port(1), PKeys: []uint16{0x7fff}}, // limited in the default partition
	}
	found := run(t, pkeysCheck{}, tn.s, nil)
	want := []string{"pkeys.missing_at_switch at 0x0000000000000100[1]", "pkeys.limited_at_switch at 0x0000000000000100[1]",
		"pkeys.enforcement_one_way at 0x0000000000000300[1]"}
	if got := places(found); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings %v\nwant %v", got, want)
	}
	vocab(t, found)
	if f := found[0]; !reflect.DeepEqual(f.Get("pkeys"), []uint16{0x8001}) || f.Remote == nil || f.Remote.NodeGUID != 0x200 ||
		f.Message != "P_Key 0x8001 not in the switch port's table, which enforces partitions" {
		t.Errorf("missing: %+v", f)
	}
	if f := found[1]; !reflect.DeepEqual(f.Get("pkeys"), []uint16{0x8002}) {
		t.Errorf("limited: %+v", f)
	}
	if f := found[2]; f.Message != "the port enforces partitions inbound only" || f.Get("enforcement_outbound") != false {
		t.Errorf("one way: %+v", f)
	}
	// A table that could not be read is the walk check's.
	tn.s.PKeys[1] = PKeyRead{Port: tn.sw1.Port(1), Err: errTimeout}
	if got := places(run(t, pkeysCheck{}, tn.s, nil)); !reflect.DeepEqual(got, want[2:]) {
		t.Errorf("with the switch's table unread: %v", got)
	}
}

// On the fake fabric: the sweep reads the tables where the switch
// enforces, and the check compares them.
func TestPKeysSwept(t *testing.T) {
	f, _, sw, _ := smFabric()
	c, _, loss := sweepClient(t, f)
	s, err := Sweep(context.Background(), c, &query.Source{}, SweepOptions{Loss: loss})
	if err != nil {
		t.Fatal(err)
	}
	// (smFabric's switch enforces inbound only.)
	oneWay := "pkeys.enforcement_one_way at 0x0000000000000010[2]"
	if got := places(run(t, pkeysCheck{}, s, nil)); !reflect.DeepEqual(got, []string{oneWay}) {
		t.Errorf("the same tables: %v", got)
	}
	sw.Set(2<<16, &mad.PKeyTable{PKey: [32]uint16{0xffff, 0x0001}})
	if s, err = Sweep(context.Background(), c, &query.Source{}, SweepOptions{Loss: loss}); err != nil {
		t.Fatal(err)
	}
	found := run(t, pkeysCheck{}, s, nil)
	if got := places(found); !reflect.DeepEqual(got, []string{oneWay, "pkeys.limited_at_switch at 0x0000000000000030[1]"}) {
		t.Errorf("the switch limited in 0x8001: %v", got)
	}
}

// The sweep reads the counters of both ends of every link twice, the
// interval apart (Gets only: TestSweepReadsAndOnlyGets), and what rose
// between the reads is found.
func TestSweepReadsCountersTwice(t *testing.T) {
	f, host1, sw, host2 := smFabric()
	pmas := umadtest.NewNodePMAs(f)
	for _, n := range []*umadtest.Node{host1, sw, host2} {
		pmas.Of(n).Set(0, &mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, CapabilityMask: uint16(mad.PerfCapMaskExtWidth)})
		pmas.Of(n).Set(umadtest.AnyMod, &mad.PortCounters{})
	}
	var mu sync.Mutex
	asked := 0
	perf := pmas.Answer
	answer := func(req *umad.Packet) []*umad.Packet {
		h := mad.Header(req.MAD)
		if h.Class() == mad.ClassPerf && h.AttrID() == mad.AttrPortCounters && req.Addr.LID == 3 {
			mu.Lock()
			asked++ // host2's PortXmitDiscards count the reads
			pmas.Of(host2).Set(1, &mad.PortCounters{PortSelect: 1, PortXmitDiscards: uint16(asked)})
			mu.Unlock()
		}
		return perf(req)
	}
	port := umadtest.NewPort(umadtest.Classes{mad.ClassSubnLID: f.Answer, mad.ClassSubnDR: f.Answer, mad.ClassPerf: answer}.Answer,
		umadtest.WithInfo(f.LocalInfo()))
	eng := rpc.New(port, rpc.Options{Timeout: 50 * time.Millisecond, Retries: 3})
	t.Cleanup(func() { eng.Close() })
	s, err := Sweep(context.Background(), query.New(eng, query.Options{}), &query.Source{}, SweepOptions{Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Counters
	if r == nil || len(r.First) != 4 || len(r.Second) != 4 || r.Interval < 100*time.Millisecond || !s.Complete() {
		t.Fatalf("counters %+v, complete %v", r, s.Complete())
	}
	var ports []string
	for _, pc := range r.First {
		ports = append(ports, fmt.Sprintf("%s[%d]", mad.GUID(pc.NodeGUID), pc.Port))
	}
	// host1 (the local node, 0x20) and host2 (0x30) by their own LIDs,
	// the switch's two linked ports by its LID.
	if want := "0x0000000000000010[1] 0x0000000000000010[2] 0x0000000000000020[1] 0x0000000000000030[1]"; strings.Join(ports, " ") != want {
		t.Errorf("ports read %v", ports)
	}
	found := run(t, countersCheck{}, s, nil)
	if got := places(found); !reflect.DeepEqual(got, []string{"counters.interval at ", "counters.increasing at 0x0000000000000030[1]"}) {
		t.Errorf("findings %v", got)
	}
}

// Two nodes with one GUID on the fake fabric: the walk sees one, the
// sweep reads what is behind the port it left without a link, and the
// ids check finds them.
func TestSweepFindsHiddenDuplicate(t *testing.T) {
	f := umadtest.NewFabric()
	host1 := f.AddCA(0x20, 1, "host1")
	sw := f.AddSwitch(0x10, 8, "sw1")
	a := f.AddCA(0x30, 1, "host2")
	b := f.AddCA(0x30, 1, "host3") // host2's GUID
	f.Link(host1, 1, sw, 1)
	f.Link(a, 1, sw, 2)
	f.Link(b, 1, sw, 3)
	c, _, _ := sweepClient(t, f)
	s, err := Sweep(context.Background(), c, &query.Source{}, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Fabric.Nodes) != 3 || len(s.Hidden) != 1 || s.Hidden[0].Err != nil || !s.Complete() {
		t.Fatalf("%d nodes, hidden %+v, complete %v", len(s.Fabric.Nodes), s.Hidden, s.Complete())
	}
	found := run(t, idsCheck{}, s, nil)
	if len(found) != 1 || found[0].Code != "ids.duplicate_node_guid" || found[0].At.NodeGUID != 0x10 || found[0].Remote.NodeGUID != 0x30 {
		t.Fatalf("findings %v", places(found))
	}
	// Which of the two the walk keeps is its order's: the other is behind
	// the port without a link.
	hidden, kept := found[0].At.Port, found[0].Get("also_behind").(*jsonv.LinkEnd).Port
	if hidden+kept != 5 || hidden == kept {
		t.Errorf("hidden behind port %d, the walk's behind %d: want 2 and 3", hidden, kept)
	}
}

// What the health checks read is saved and loaded again whole: the same
// findings, byte for byte, judged by the same thresholds.
func TestSaveLoadHealthReads(t *testing.T) {
	tn := countedTiny()
	p := tn.sw1.Port(7)
	setPI(p, func(pi *mad.PortInfo) {
		pi.PortState, pi.PortPhysicalState = mad.PortStateActive, mad.PhysPortStateLinkUp
	})
	ni := mad.NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 1, NodeGUID: 0x400, PortGUID: 0x401, LocalPortNum: 1}
	tn.s.Hidden = []HiddenRead{{Port: p, Node: &discovery.Node{GUID: 0x400, Type: discovery.NodeCA, NumPorts: 1,
		NodeInfo: mad.Encode(&ni), NodeDesc: []byte("host3 HCA-1"), DRPath: []byte{0, 1, 7}}},
		{Port: tn.sw1.Port(8), Err: errTimeout}}
	setPI(tn.sw1.Port(1), func(pi *mad.PortInfo) { pi.PartitionEnforcementInbound = 1 })
	tn.s.PKeys = []PKeyRead{{Port: tn.host1.Port(1), PKeys: []uint16{0xffff, 0x8001}}, {Port: tn.sw1.Port(1), PKeys: []uint16{0xffff}}}
	th, err := counters.ParseThresholds(strings.NewReader("PortRcvErrors=120\nPortXmitWait=5\n"), "my-thresholds", counters.Diagnose)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Thresholds: th}
	before, err := json.Marshal(Run(tn.s, cfg, Checks()))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := Save(dir, tn.s, cfg); err != nil {
		t.Fatal(err)
	}
	_, cfg2, after := loadJudged(t, dir, before)
	for _, code := range []string{"counters.above_threshold", "counters.increasing", "counters.symbol_errors", "ids.duplicate_node_guid",
		"walk.read_failed", "pkeys.missing_at_switch"} {
		if !bytes.Contains(after, []byte(`"code":"`+code+`"`)) {
			t.Errorf("no %s after loading", code)
		}
	}
	if v, _ := cfg2.Thresholds.Limit("PortXmitWait"); v != 5 {
		t.Errorf("PortXmitWait's limit %d after loading, want the file's 5", v)
	}
	text, _ := os.ReadFile(filepath.Join(dir, ThresholdFile))
	if !strings.Contains(string(text), "read from my-thresholds") || !strings.Contains(string(text), "\nPortRcvErrors=120\n") ||
		!strings.Contains(string(text), "\nSymbolErrorCounter=100\n") {
		t.Errorf("%s:\n%s", ThresholdFile, text)
	}
	// Without counters (a snapshot of an older ibtool) the check says so.
	tn = newTiny()
	tn.s.Counters = nil
	if err := Save(dir, tn.s, &Config{}); err != nil {
		t.Fatal(err)
	}
	if s3, _, err := Load(dir); err != nil || s3.Counters != nil {
		t.Errorf("load without counters: %v %+v", err, s3.Counters)
	}
}

func TestLoadRefusesBadHealthReads(t *testing.T) {
	tn := countedTiny()
	dir := t.TempDir()
	if err := Save(dir, tn.s, &Config{}); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(filepath.Join(dir, SnapshotFile))
	for _, tc := range []struct{ from, to, want string }{
		{`"reads": 2`, `"reads": 3`, "counters: 3 reads"},
		{`"read": 1,`, `"read": 2,`, "failed, and snapshot.json does not say why"},
		{`"threshold_file": "error_thresholds"`, `"threshold_file": "../x"`, "not a file of the directory"},
	} {
		bad := strings.Replace(string(doc), tc.from, tc.to, 1)
		if bad == string(doc) {
			t.Fatalf("%q not in the snapshot", tc.from)
		}
		if err := os.WriteFile(filepath.Join(dir, SnapshotFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
	os.WriteFile(filepath.Join(dir, SnapshotFile), doc, 0o644)
	// counters.data cut short, or longer than snapshot.json says.
	data, _ := os.ReadFile(filepath.Join(dir, CounterDataFile))
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{data[:len(data)-1], "counters.data: read 2, record"},
		{data[:counterHeaderSize-1], "counters.data: read 1, record 1: 15 bytes, a header is 16"},
		{append(slices.Clip(data), 0), "counters.data: 1 bytes more than snapshot.json describes"},
	} {
		os.WriteFile(filepath.Join(dir, CounterDataFile), tc.data, 0o644)
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("counters.data of %d bytes: error %v, want %q", len(tc.data), err, tc.want)
		}
	}
	os.WriteFile(filepath.Join(dir, CounterDataFile), data, 0o644)
	os.WriteFile(filepath.Join(dir, ThresholdFile), []byte("NoSuchCounter=1\n"), 0o644)
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `unknown counter "NoSuchCounter"`) {
		t.Errorf("a bad threshold file: %v", err)
	}
}
