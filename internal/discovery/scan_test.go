package discovery

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
)

func scanOn(t *testing.T, fake *fakeFabric, opts ScanOptions) *Fabric {
	t.Helper()
	eng := rpc.New(fake.port(), rpc.Options{Timeout: 30 * time.Millisecond, Retries: 1, Window: 16, DestWindow: 4})
	t.Cleanup(func() { eng.Close() })
	f, err := Scan(context.Background(), eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A scan of the whole fabric is what Discover gives: both are
// libibnetdisc's walk, one replayed, one live.
func TestScanOfTheWholeFabricIsDiscover(t *testing.T) {
	f, _, _, _, _, _ := tinyFake()
	want := dumpFabric(discover(t, f, 8, Options{Mode: ModeDR}))
	f, _, _, _, _, _ = tinyFake() // the engine closed the first one
	if got := dumpFabric(scanOn(t, f, ScanOptions{})); got != want {
		t.Fatalf("tiny: Scan differs from Discover:\n%s", diffLines(want, got))
	}
	want = dumpFabric(discover(t, fatTreeFake(4, 3, 3, 2), 1, Options{Mode: ModeDR}))
	for seed := uint64(1); seed <= 3; seed++ {
		g := fatTreeFake(4, 3, 3, 2)
		g.seed, g.delay = seed, 2*time.Millisecond
		if got := dumpFabric(scanOn(t, g, ScanOptions{InFlight: 1 + int(seed)*20})); got != want {
			t.Fatalf("fat tree, seed %d: Scan differs from Discover:\n%s", seed, diffLines(want, got))
		}
	}
}

func nodeOrder(f *Fabric) string {
	var names []string
	for _, n := range f.Nodes {
		names = append(names, n.Desc())
	}
	return strings.Join(names, ", ")
}

func remoteOf(p *Port) string {
	if p == nil || p.Remote == nil {
		return "-"
	}
	return p.Remote.Node.Desc()
}

// The partial scans iblinkinfo -D makes on tiny.net from Switch1, as
// infiniband-diags 44 prints them (tested against it in internal/cli).
func TestScanFromADirectedRoute(t *testing.T) {
	scan := func(opts ScanOptions) *Fabric {
		f, _, _, _, _, _ := tinyFake() // one engine per fake: it reads the replies
		return scanOn(t, f, opts)
	}
	// -D 0,8 -a: Switch2, then one hop on (the hop counter allows one
	// more route): Hca3 and Switch1, then Hca1 behind Switch1, but no
	// more, so Switch1's port 4 leads nowhere.
	fab := scan(ScanOptions{From: []byte{0, 8}, MaxHops: 1})
	if got := nodeOrder(fab); got != "sw2 desc, Hca3, Switch1, hca one" {
		t.Errorf("nodes %s", got)
	}
	sw1 := fab.Node(0x200000)
	if remoteOf(sw1.Port(4)) != "-" || remoteOf(sw1.Port(8)) != "sw2 desc" || fab.From.GUID != 0x200001 || fab.FromPort != 4 {
		t.Errorf("Switch1 port 4 -> %s, port 8 -> %s; from %x port %d", remoteOf(sw1.Port(4)), remoteOf(sw1.Port(8)), fab.From.GUID, fab.FromPort)
	}
	// -D 0,8,1: from Hca3 the route backs up to Switch2, which it enters
	// by port 4 (from Switch1), so libibnetdisc links Hca3 there first,
	// then to port 1, then back to port 4.
	fab = scan(ScanOptions{From: []byte{0, 8, 1}, MaxHops: 1})
	sw2 := fab.Node(0x200001)
	if remoteOf(sw2.Port(4)) != "Hca3" || remoteOf(sw2.Port(1)) != "-" || nodeOrder(fab) != "Hca3, sw2 desc" {
		t.Errorf("-D 0,8,1: nodes %s, Switch2 port 1 -> %s, port 4 -> %s", nodeOrder(fab), remoteOf(sw2.Port(1)), remoteOf(sw2.Port(4)))
	}
	// -D 0,4: a route cannot go on through Hca2: the request fails, and
	// is the only error.
	fab = scan(ScanOptions{From: []byte{0, 4}, MaxHops: 1})
	if nodeOrder(fab) != "Hca2" || len(fab.Errors) != 1 || mad.FormatDRPath(fab.Errors[0].DRPath) != "0,4,1" {
		t.Errorf("-D 0,4: nodes %s, errors %v", nodeOrder(fab), fab.Errors)
	}
	// Nothing at the end of the route: an empty fabric.
	fab = scan(ScanOptions{From: []byte{0, 3}})
	if fab.From != nil || len(fab.Nodes) != 0 || len(fab.Errors) != 1 {
		t.Errorf("-D 0,3: %s, errors %v", nodeOrder(fab), fab.Errors)
	}
}

func TestScanFromALID(t *testing.T) {
	f, _, _, _, hca2, hca3 := tinyFake()
	eng := rpc.New(f.port(), rpc.Options{Timeout: 30 * time.Millisecond, Retries: 1})
	ctx := context.Background()
	for _, tc := range []struct {
		lid  uint16
		want string
	}{{1, "0"}, {2, "0,8"}, {hca3.LID(1), "0,8,1"}, {hca2.LID(1), "0,4"}} {
		path, err := RouteToLID(ctx, eng, tc.lid, 0)
		if err != nil || mad.FormatDRPath(path) != tc.want {
			t.Errorf("RouteToLID(%d) = %s, %v; want %s", tc.lid, mad.FormatDRPath(path), err, tc.want)
		}
	}
	if _, err := RouteToLID(ctx, eng, 999, 0); err == nil {
		t.Error("RouteToLID(999) found a route")
	}
	// By LID a route is not extended beyond a CA: -S of Hca3's port is
	// Hca3 alone; of Switch2, Switch2 and its neighbours.
	eng.Close()
	f, _, _, _, _, _ = tinyFake()
	fab := scanOn(t, f, ScanOptions{From: []byte{0, 8, 1}, FromLID: true, MaxHops: 1})
	if nodeOrder(fab) != "Hca3" || len(fab.Errors) != 0 || remoteOf(fab.From.Port(1)) != "-" {
		t.Errorf("Hca3 by LID: nodes %s, errors %v", nodeOrder(fab), fab.Errors)
	}
	f, _, _, _, _, _ = tinyFake()
	fab = scanOn(t, f, ScanOptions{From: []byte{0, 8}, FromLID: true, MaxHops: 1})
	if nodeOrder(fab) != "sw2 desc, Hca3, Switch1, hca one" || mad.FormatDRPath(fab.Node(0x100000).DRPath) != "0,8,4,1" {
		t.Errorf("Switch2 by LID: nodes %s", nodeOrder(fab))
	}
}

func TestScanHopLimit(t *testing.T) {
	full := scanOn(t, fatTreeFake(4, 3, 3, 2), ScanOptions{})
	for hops, wantMax := range map[int]int{1: 2, 2: 3, 3: 4} {
		fab := scanOn(t, fatTreeFake(4, 3, 3, 2), ScanOptions{MaxHops: hops})
		if fab.MaxHops > wantMax || len(fab.Nodes) >= len(full.Nodes) && hops < 3 {
			t.Errorf("-n %d: %d of %d nodes, max hops %d", hops, len(fab.Nodes), len(full.Nodes), fab.MaxHops)
		}
	}
}
