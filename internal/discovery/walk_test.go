package discovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

func engineOn(t *testing.T, f *fakeFabric, window int) *rpc.Engine {
	t.Helper()
	eng := rpc.New(f.port(), rpc.Options{Timeout: 30 * time.Millisecond, Retries: 1, Window: window, DestWindow: window})
	t.Cleanup(func() { eng.Close() })
	return eng
}

func discover(t *testing.T, f *fakeFabric, window int, opts Options) *Fabric {
	t.Helper()
	fab, err := Discover(context.Background(), engineOn(t, f, window), opts)
	if err != nil {
		t.Fatal(err)
	}
	return fab
}

// dumpFabric renders everything a fabric holds, in its order.
func dumpFabric(f *Fabric) string {
	var b strings.Builder
	fmt.Fprintf(&b, "from %x port %d maxhops %d mads %d loaded %v\n", f.From.GUID, f.FromPort, f.MaxHops, f.MADs, f.Loaded)
	for _, n := range f.Nodes {
		fmt.Fprintf(&b, "node %x type %d ports %d path %s lid %d lmc %d enh %v\n  ni %x\n  nd %q\n  si %x\n",
			n.GUID, n.Type, n.NumPorts, mad.FormatDRPath(n.DRPath), n.SMALID, n.SMALMC, n.EnhancedSP0, n.NodeInfo, n.NodeDesc, n.SwitchInfo)
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			remote := "-"
			if p.Remote != nil {
				remote = fmt.Sprintf("%x[%d]", p.Remote.Node.GUID, p.Remote.Num)
			}
			fmt.Fprintf(&b, "  port %d guid %x ext %d lid %d lmc %d remote %s\n    pi %x\n    epi %x\n",
				p.Num, p.GUID, p.ExtNum, p.BaseLID, p.LMC, remote, p.PortInfo, p.MlnxExtPortInfo)
		}
	}
	for _, e := range f.Errors {
		fmt.Fprintf(&b, "error %s %s\n", mad.FormatDRPath(e.DRPath), e.What)
	}
	return b.String()
}

func guids(ns []*Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%x", n.GUID))
	}
	return out
}

func TestDiscoverTinyInLibibnetdiscOrder(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	var found []string
	fab := discover(t, f, 8, Options{Found: func(ev FoundEvent) {
		found = append(found, fmt.Sprintf("%s %v %x %d", mad.FormatDRPath(ev.Path), ev.New, ev.Node.GUID, ev.Port))
	}})
	// ibnetdiscover -p on tiny.net from Switch1 lists the nodes newest
	// first: Hca3, Switch2, Hca2, Hca1, Switch1; -m says 29 MADs, 2 hops.
	if got, want := strings.Join(guids(fab.Nodes), " "), "200000 100000 100003 200001 100006"; got != want {
		t.Errorf("node order %s, want %s", got, want)
	}
	if fab.MADs != 29 || fab.MaxHops != 2 || fab.From.GUID != 0x200000 || fab.FromPort != 0 {
		t.Errorf("MADs %d max hops %d from %x port %d; want 29, 2, 200000, 0", fab.MADs, fab.MaxHops, fab.From.GUID, fab.FromPort)
	}
	if want := "0 true 200000 0,0,1 true 100000 1,0,4 true 100003 1,0,8 true 200001 4,0,8,1 true 100006 1"; strings.Join(found, ",") != want {
		t.Errorf("found events %q, want %q", strings.Join(found, ","), want)
	}
	sw2, hca1 := fab.Node(0x200001), fab.Node(0x100000)
	if mad.FormatDRPath(sw2.DRPath) != "0,8" || !sw2.EnhancedSP0 || sw2.Desc() != "sw2 desc" || sw2.SMALID != 2 {
		t.Errorf("Switch2: path %s enhanced %v desc %q lid %d", mad.FormatDRPath(sw2.DRPath), sw2.EnhancedSP0, sw2.Desc(), sw2.SMALID)
	}
	if hca1.Port(2) != nil || hca1.Port(1).Remote != fab.Node(0x200000).Port(1) || hca1.Port(1).GUID != 0x100001 {
		t.Errorf("Hca1 ports: %+v", hca1.Ports)
	}
	// Switch ports carry the port-0 LID; the PortInfo says which port the
	// SMP came in by on libibnetdisc's route (4 for Switch2, from Switch1).
	if p := sw2.Port(1); p.BaseLID != 2 || p.Info().LocalPortNum != 4 || p.Remote.Node.GUID != 0x100006 {
		t.Errorf("Switch2 port 1: lid %d local port %d", p.BaseLID, p.Info().LocalPortNum)
	}
	if len(fab.Errors) != 0 || !fab.Has(LoadAll) {
		t.Errorf("errors %v, loaded %v", fab.Errors, fab.Loaded)
	}
}

// fatTreeFake builds a 2-level fat tree with parallel links, a dual-homed
// CA and an unlinked switch port, attached at a CA.
func fatTreeFake(leaves, spines, hosts, links int) *fakeFabric {
	f := newFake()
	first := f.add(NodeCA, 0xe000, 1, "host first")
	var ls, ss []*umadtest.Node
	for i := 0; i < spines; i++ {
		ss = append(ss, f.add(NodeSwitch, 0x5000+uint64(i), 36, fmt.Sprintf("spine%d", i)))
	}
	for i := 0; i < leaves; i++ {
		l := f.add(NodeSwitch, 0x7000+uint64(i), 36, fmt.Sprintf("leaf%d", i))
		l.EnhancedPort0 = i%2 == 0
		ls = append(ls, l)
		for h := 0; h < hosts; h++ {
			c := f.add(NodeCA, 0xc0000+uint64(i*100+h*2), 2, fmt.Sprintf("host %d/%d", i, h))
			f.Link(l, h+1, c, 1)
		}
		for s, sp := range ss {
			for k := 0; k < links; k++ {
				f.Link(l, hosts+1+s*links+k, sp, i*links+k+1)
			}
		}
	}
	f.Link(ls[0], 30, first, 1)
	dual := f.add(NodeCA, 0xd000, 2, "dual")
	f.Link(ls[1], 31, dual, 1)
	f.Link(ls[2%leaves], 32, dual, 2)
	return f
}

func TestDiscoverOrderDoesNotDependOnReplyOrder(t *testing.T) {
	f := fatTreeFake(4, 3, 3, 2)
	want := dumpFabric(discover(t, f, 1, Options{Mode: ModeDR}))
	if !strings.Contains(want, "node d000") || strings.Count(want, "\nnode ") != 1+3+4+12+1 {
		t.Fatalf("unexpected fabric:\n%s", want)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		g := fatTreeFake(4, 3, 3, 2)
		g.seed, g.delay = seed, 2*time.Millisecond
		mode := ModeLID
		if seed%2 == 0 {
			mode = ModeDR
		}
		got := dumpFabric(discover(t, g, 64, Options{Mode: mode}))
		if got != want {
			t.Fatalf("seed %d, mode %v: fabric differs from the in-order walk:\n%s", seed, mode, diffLines(want, got))
		}
	}
}

func diffLines(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(la), len(lb))
}

func TestDiscoverRoutesByLIDOnlyWhenItCan(t *testing.T) {
	for _, tc := range []struct {
		mode   Mode
		active bool
		lid    bool
	}{
		{ModeAuto, true, true},
		{ModeAuto, false, false},
		{ModeDR, true, false},
		{ModeLID, true, true},
	} {
		f := fatTreeFake(2, 1, 2, 1)
		f.inactive = !tc.active
		fab := discover(t, f, 16, Options{Mode: tc.mode})
		lidReq, drReq := len(f.requests(mad.ClassSubnLID)), len(f.requests(mad.ClassSubnDR))
		if (lidReq > 0) != tc.lid || len(fab.Nodes) != 1+1+2+4+1 {
			t.Errorf("mode %v active %v: %d LID-routed, %d DR SMPs, %d nodes", tc.mode, tc.active, lidReq, drReq, len(fab.Nodes))
		}
	}
}

func TestDiscoverRecordsWhatIsLostAndGoesOn(t *testing.T) {
	f, sw1, _, _, _, hca3 := tinyFake()
	f.drop = func(n *umadtest.Node, attr uint16, mod uint32) bool {
		return (n == sw1 && attr == mad.AttrPortInfo && mod == 4) || (n == hca3 && attr == mad.AttrNodeInfo)
	}
	fab := discover(t, f, 8, Options{})
	if got := strings.Join(guids(fab.Nodes), " "); got != "200000 100000 200001" {
		t.Errorf("nodes %s, want Switch1, Hca1, Switch2 (Hca2 behind a lost PortInfo, Hca3 lost)", got)
	}
	var what []string
	for _, e := range fab.Errors {
		var te *rpc.TimeoutError
		if !errors.As(e.Err, &te) {
			t.Errorf("error %v is not a timeout", e)
		}
		what = append(what, mad.FormatDRPath(e.DRPath)+" "+e.What)
	}
	if got := strings.Join(what, "; "); got != "0 PortInfo port 4; 0,8,1 NodeInfo" {
		t.Errorf("errors %q", got)
	}
}

// A reply too short to hold SMP data is that node's error, not a panic.
func TestDiscoverRecordsShortReplies(t *testing.T) {
	f, _, sw2, _, _, _ := tinyFake()
	f.truncate = func(n *umadtest.Node, attr uint16) bool { return n == sw2 && attr == mad.AttrNodeDescription }
	fab := discover(t, f, 8, Options{})
	if len(fab.Nodes) != 5 || len(fab.Errors) != 1 {
		t.Fatalf("%d nodes, errors %v; want all 5 nodes and one error", len(fab.Nodes), fab.Errors)
	}
	if e := fab.Errors[0]; e.What != "NodeDescription" || !strings.Contains(e.Err.Error(), "too short") {
		t.Errorf("error %v, want sw2's NodeDescription too short", e)
	}
}

func TestDiscoverFailsWithoutTheLocalNode(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	f.drop = func(*umadtest.Node, uint16, uint32) bool { return true }
	_, err := Discover(context.Background(), engineOn(t, f, 4), Options{})
	if !errors.Is(err, ErrNoLocalNode) {
		t.Fatalf("got %v, want ErrNoLocalNode", err)
	}
}

func TestDiscoverLoadsIncrementally(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	eng := engineOn(t, f, 8)
	fab, err := Discover(context.Background(), eng, Options{Load: LoadTopology})
	if err != nil {
		t.Fatal(err)
	}
	if f.count(mad.AttrNodeDescription) != 0 || f.count(mad.AttrSwitchInfo) != 0 || fab.Has(LoadNodeDesc) || !fab.Has(LoadTopology) {
		t.Fatalf("topology only: %v sent, loaded %v", f.sent(), fab.Loaded)
	}
	ni, pi := f.count(mad.AttrNodeInfo), f.count(mad.AttrPortInfo)
	again, err := Discover(context.Background(), eng, Options{Fabric: fab, Load: LoadAll})
	if err != nil {
		t.Fatal(err)
	}
	if again != fab || f.count(mad.AttrNodeInfo) != ni || f.count(mad.AttrPortInfo) != pi ||
		f.count(mad.AttrNodeDescription) != 5 || f.count(mad.AttrSwitchInfo) != 2 || !fab.Has(LoadAll) {
		t.Fatalf("completion: %v sent, loaded %v", f.sent(), fab.Loaded)
	}
	if fab.Node(0x100006).Desc() != "Hca3" || !fab.Node(0x200001).EnhancedSP0 {
		t.Errorf("descriptions and SwitchInfo not filled in")
	}
	sent := f.count(mad.AttrNodeDescription)
	if _, err := Discover(context.Background(), eng, Options{Fabric: fab, Load: LoadNodeDesc}); err != nil || f.count(mad.AttrNodeDescription) != sent {
		t.Errorf("a fabric that has everything should cost nothing: %v", err)
	}
}

func TestDiscoverCompletesAFabricWithoutRoutes(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	f.inactive = true // no LIDs: the routes must come from the links
	eng := engineOn(t, f, 8)
	fab, err := Discover(context.Background(), eng, Options{Load: LoadTopology})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range fab.Nodes {
		n.DRPath = nil // as after a cache load
	}
	if _, err := Discover(context.Background(), eng, Options{Fabric: fab, Load: LoadNodeDesc | LoadTopology}); err != nil {
		t.Fatal(err)
	}
	if fab.Node(0x100006).Desc() != "Hca3" || len(fab.Errors) != 0 {
		t.Errorf("Hca3 %q, errors %v", fab.Node(0x100006).Desc(), fab.Errors)
	}
}

func TestDiscoverMaxHops(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	fab := discover(t, f, 8, Options{MaxHops: 1})
	if got := strings.Join(guids(fab.Nodes), " "); got != "200000 100000 100003 200001" {
		t.Errorf("nodes %s: Hca3 is 2 hops away", got)
	}
}

func TestDiscoverAsksMellanoxPortsForFDR10(t *testing.T) {
	for _, noEPI := range []bool{false, true} {
		f := fatTreeFake(2, 1, 2, 1)
		for _, n := range f.Nodes() {
			mellanox(n, noEPI)
		}
		want := dumpFabric(discover(t, f, 1, Options{Mode: ModeDR}))
		if f.count(mad.AttrMlnxExtPortInfo) == 0 {
			t.Fatal("no Mellanox extended PortInfo asked for")
		}
		g := fatTreeFake(2, 1, 2, 1)
		for _, n := range g.Nodes() {
			mellanox(n, noEPI)
		}
		g.delay = time.Millisecond
		fab := discover(t, g, 32, Options{})
		if got := dumpFabric(fab); got != want {
			t.Fatalf("noEPI %v: out-of-order walk differs:\n%s", noEPI, diffLines(want, got))
		}
		p := fab.From.Port(1)
		if noEPI != (p.MlnxExtPortInfo == nil) || noEPI != (len(fab.Errors) > 0) {
			t.Errorf("noEPI %v: extension %x, %d errors", noEPI, p.MlnxExtPortInfo, len(fab.Errors))
		}
	}
}

func TestRoutesFollowTheLinks(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	fab := discover(t, f, 8, Options{})
	want := map[uint64]string{}
	for _, n := range fab.Nodes {
		want[n.GUID] = mad.FormatDRPath(n.DRPath)
		n.DRPath = nil
	}
	for n, path := range Routes(fab) {
		if mad.FormatDRPath(path) != want[n.GUID] {
			t.Errorf("%x: route %s, want %s", n.GUID, mad.FormatDRPath(path), want[n.GUID])
		}
	}
}

func TestLoadNames(t *testing.T) {
	if s := LoadTopology.String(); s != "NodeInfo+PortInfo" {
		t.Errorf("LoadTopology is %q", s)
	}
	if s := Load(0).String(); s != "none" {
		t.Errorf("no load is %q", s)
	}
	f := NewFabric()
	f.AddNode(&Node{GUID: 1})
	if !f.Has(LoadNodeDesc) || f.Has(LoadMlnxExtPortInfo) {
		t.Errorf("a fabric without Loaded should count as a cache's")
	}
}

// TestDiscoverSurvivesRandomLoss: a fifth of the requests are lost, and
// out of order too; with enough retries the fabric is the same as on a
// perfect one.
func TestDiscoverSurvivesRandomLoss(t *testing.T) {
	want := dumpFabric(discover(t, fatTreeFake(3, 2, 3, 2), 1, Options{}))
	f := fatTreeFake(3, 2, 3, 2)
	f.delay, f.seed, f.loss = time.Millisecond, 3, 0.2
	eng := rpc.New(f.port(), rpc.Options{Timeout: 10 * time.Millisecond, Retries: 10, Window: 16, DestWindow: 4})
	defer eng.Close()
	fab, err := Discover(context.Background(), eng, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dumpFabric(fab); got != want {
		t.Fatalf("with loss: %s", diffLines(want, got))
	}
	if eng.Stats().Retried == 0 {
		t.Error("nothing was retried: the loss did not happen")
	}
}

// TestDiscoverAdaptsRetriesToLoss: with discovery's own 3 resends (4
// attempts lose about one request in 40 at 40% loss per attempt, so a
// walk of a few hundred would lose some), the engine gives the requests
// that run out more attempts on a lossy fabric, and every seed finds the
// whole fabric, as on a perfect one.
func TestDiscoverAdaptsRetriesToLoss(t *testing.T) {
	want := dumpFabric(discover(t, fatTreeFake(4, 2, 4, 2), 1, Options{}))
	for seed := uint64(1); seed <= 5; seed++ {
		f := fatTreeFake(4, 2, 4, 2)
		f.delay, f.seed, f.loss = time.Millisecond, seed, 0.4
		eng := rpc.New(f.port(), rpc.Options{Timeout: 20 * time.Millisecond, Retries: 3, Window: 16, DestWindow: 4})
		fab, err := Discover(context.Background(), eng, Options{})
		st := eng.Stats()
		eng.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := dumpFabric(fab); got != want {
			t.Fatalf("seed %d, %d MADs sent, %d retried, %d lost: %s", seed, st.Sent, st.Retried, st.Lost, diffLines(want, got))
		}
		if st.Retried < st.Sent/5 {
			t.Errorf("seed %d: %d of %d MADs retried: the loss did not happen", seed, st.Retried, st.Sent)
		}
	}
}

// TestDiscoverFallsBackToDR: LID-routed SMPs are lost (no routes), the
// walk asks again over directed routes, once per node.
func TestDiscoverFallsBackToDR(t *testing.T) {
	f := fatTreeFake(2, 1, 2, 1)
	f.dropLID = true
	// MaxRetries: no extra resends should a slow machine make the fabric
	// look lossy (a timeout of 10 ms): this counts the walk's fallbacks.
	eng := rpc.New(f.port(), rpc.Options{Timeout: 10 * time.Millisecond, Retries: 1, MaxRetries: 1, Window: 8, DestWindow: 4})
	defer eng.Close()
	fab, err := Discover(context.Background(), eng, Options{Mode: ModeLID})
	if err != nil {
		t.Fatal(err)
	}
	if len(fab.Errors) != 0 || len(fab.Nodes) != len(f.Nodes()) {
		t.Fatalf("%d nodes, errors %v", len(fab.Nodes), fab.Errors)
	}
	// One LID-routed query per node finds out, in 2 attempts.
	lidLost := len(f.requests(mad.ClassSubnLID))
	if lidLost == 0 || lidLost > 2*len(f.Nodes()) {
		t.Errorf("%d LID-routed SMPs lost for %d nodes", lidLost, len(f.Nodes()))
	}
}

// A failed query shows one route: its node's, as the output names it
// (the replay's), not also the route the parallel walk sent it by.
func TestWalkErrorShowsOneRoute(t *testing.T) {
	req := mad.NewDRSMP(mad.MethodGet, mad.AttrPortInfo, 3, []byte{0, 4, 5})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&rpc.TimeoutError{What: rpc.Describe(umad.Address{LID: umad.PermissiveLID}, req), Attempts: 4, Timeout: time.Second, Req: req},
			"DR path 0,1,2: PortInfo port 3: no reply (4 attempts, timeout 1s)"},
		{&rpc.TimeoutError{Attempts: 1, Timeout: 50 * time.Millisecond, Req: req},
			"DR path 0,1,2: PortInfo port 3: no reply (1 attempt, timeout 50ms)"},
		{errors.New("reply too short"), "DR path 0,1,2: PortInfo port 3: reply too short"},
	} {
		e := &WalkError{DRPath: []byte{0, 1, 2}, What: "PortInfo port 3", Err: tc.err}
		if got := e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
