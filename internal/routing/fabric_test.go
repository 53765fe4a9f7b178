package routing

import (
	"context"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// The in-memory fabrics of the tests. umadtest's SMAs route every LID
// along a shortest path (the lowest port among equals); Node.Set gives a
// switch any other table.

// client opens a query client on fab's first node and walks the fabric.
func client(t testing.TB, fab *umadtest.Fabric) (*query.Client, *discovery.Fabric) {
	t.Helper()
	port := umadtest.NewPort(fab.Answer, umadtest.WithInfo(fab.LocalInfo()))
	eng := rpc.New(port, rpc.Options{Timeout: 200 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close() })
	f, err := discovery.Discover(context.Background(), eng, discovery.Options{NoChassis: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Errors) > 0 {
		t.Fatalf("walk: %v", f.Errors[0])
	}
	return query.New(eng, query.Options{}), f
}

// readTables walks fab and reads its tables.
func readTables(t testing.TB, fab *umadtest.Fabric, want Want) *Tables {
	t.Helper()
	c, f := client(t, fab)
	return Read(context.Background(), c, f, want)
}

// lineFabric is host - sw1 - sw2 - far.
func lineFabric() (fab *umadtest.Fabric, host, sw1, sw2, far *umadtest.Node) {
	fab = umadtest.NewFabric()
	host = fab.AddCA(0x100, 1, "host")
	sw1 = fab.AddSwitch(0x200, 8, "sw1")
	sw2 = fab.AddSwitch(0x300, 8, "sw2")
	far = fab.AddCA(0x400, 1, "far")
	fab.Link(host, 1, sw1, 1)
	fab.Link(sw1, 2, sw2, 2)
	fab.Link(sw2, 3, far, 1)
	return
}

// ringFabric is n switches in a ring (port 1 to the next switch's port
// 2), each with a host on port 3.
func ringFabric(n int) (*umadtest.Fabric, []*umadtest.Node) {
	fab := umadtest.NewFabric()
	var sws []*umadtest.Node
	for i := range n {
		host := fab.AddCA(0x1000+uint64(i)*0x10, 1, "host")
		sw := fab.AddSwitch(0x100+uint64(i), 4, "sw")
		fab.Link(host, 1, sw, 3)
		sws = append(sws, sw)
	}
	for i := range n {
		fab.Link(sws[i], 1, sws[(i+1)%n], 2)
	}
	return fab, sws
}

// torusFabric is a rows x cols torus of switches (ports 1 east, 2 west,
// 3 south, 4 north), each with a host on port 5.
func torusFabric(rows, cols int) (*umadtest.Fabric, [][]*umadtest.Node) {
	fab := umadtest.NewFabric()
	sws := make([][]*umadtest.Node, rows)
	for r := range rows {
		for c := range cols {
			host := fab.AddCA(0x10000+uint64(r*cols+c)*0x10, 1, "host")
			sw := fab.AddSwitch(0x100+uint64(r*cols+c), 6, "sw")
			fab.Link(host, 1, sw, 5)
			sws[r] = append(sws[r], sw)
		}
	}
	for r := range rows {
		for c := range cols {
			fab.Link(sws[r][c], 1, sws[r][(c+1)%cols], 2)
			fab.Link(sws[r][c], 3, sws[(r+1)%rows][c], 4)
		}
	}
	return fab, sws
}

// treeFabric is a two-level fat tree: spines switches on top, leaves
// below, every leaf linked to every spine (leaf port 1+s to spine port
// 1+l), hosts hosts per leaf from port spines+1.
func treeFabric(spines, leaves, hosts int) (*umadtest.Fabric, []*umadtest.Node, []*umadtest.Node) {
	fab := umadtest.NewFabric()
	var cas, sp, lf []*umadtest.Node
	for i := range leaves * hosts { // a host first: the local node
		cas = append(cas, fab.AddCA(0x10000+uint64(i)*0x10, 1, "host"))
	}
	for s := range spines {
		sp = append(sp, fab.AddSwitch(0x100+uint64(s), leaves, "spine"))
	}
	for l := range leaves {
		lf = append(lf, fab.AddSwitch(0x200+uint64(l), spines+hosts, "leaf"))
		for s := range spines {
			fab.Link(lf[l], 1+s, sp[s], 1+l)
		}
		for h := range hosts {
			fab.Link(cas[l*hosts+h], 1, lf[l], spines+1+h)
		}
	}
	return fab, sp, lf
}

// setLFT gives sw a table: ports[lid] for each LID of block 0 (NoPort
// past the slice), and a LinearFDBTop of top.
func setLFT(sw *umadtest.Node, top uint16, ports map[uint16]byte) {
	var lft mad.LinearForwardingTable
	for i := range lft.Port {
		lft.Port[i] = NoPort
	}
	for lid, p := range ports {
		lft.Port[lid] = p
	}
	sw.Set(0, &lft)
	sw.Set(0, &mad.SwitchInfo{LinearFDBCap: 0xC000, LinearFDBTop: top, MulticastFDBCap: 1024})
}

// node is the fabric model's node of a umadtest node.
func node(t testing.TB, tb *Tables, n *umadtest.Node) *discovery.Node {
	t.Helper()
	m := tb.Fabric.Node(n.GUID)
	if m == nil {
		t.Fatalf("node 0x%x not in the model", n.GUID)
	}
	return m
}
