package routing

import (
	"slices"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
)

func TestDRRoutes(t *testing.T) {
	fab, host, sw1, sw2, far := lineFabric()
	_, f := client(t, fab)
	n := func(guid uint64) *discovery.Node { return f.Node(guid) }
	routes := DRRoutes(f, nil)
	want := map[uint64]DRRoute{
		host.GUID: {[]byte{0}, 1}, sw1.GUID: {[]byte{0, 1}, 1},
		sw2.GUID: {[]byte{0, 1, 2}, 2}, far.GUID: {[]byte{0, 1, 2, 3}, 1},
	}
	for guid, w := range want {
		if r := routes[n(guid)]; !slices.Equal(r.Path, w.Path) || r.Arrival != w.Arrival {
			t.Errorf("0x%x: %+v, want %+v", guid, r, w)
		}
	}
	// Avoiding sw1's port 2 (either end of the link) cuts sw2 and far off.
	for _, p := range []*discovery.Port{n(sw1.GUID).Port(2), n(sw2.GUID).Port(2)} {
		if routes := DRRoutes(f, map[*discovery.Port]bool{p: true}); len(routes) != 2 {
			t.Errorf("avoiding %s: %d nodes reached, want 2", PortLabel(p), len(routes))
		}
	}

	if got, arrival, err := WalkDR(f, []byte{0, 1, 2, 3}); err != nil || got != n(far.GUID) || arrival != 1 {
		t.Errorf("walk 0,1,2,3: %v %d %v", got, arrival, err)
	}
	_, _, err := WalkDR(f, []byte{0, 1, 5})
	if want := `DR path 0,1,5: hop 2 leaves 0x0000000000000200 ("sw1") by port 5, which has no link`; err == nil || err.Error() != want {
		t.Errorf("walk 0,1,5: %v, want %s", err, want)
	}
}

func TestRouteToPort(t *testing.T) {
	fab, host, sw1, sw2, far := lineFabric()
	_, f := client(t, fab)
	n := func(guid uint64) *discovery.Node { return f.Node(guid) }
	farPort := n(far.GUID).Port(1)
	// Changing far's link: far is out of reach but for its own link.
	routes := DRRoutes(f, map[*discovery.Port]bool{farPort: true})
	for _, c := range []struct {
		port *discovery.Port
		want []byte
	}{
		{farPort, []byte{0, 1, 2, 3}},          // the last hop over its own link
		{n(sw2.GUID).Port(3), []byte{0, 1, 2}}, // a switch reached otherwise
		{n(host.GUID).Port(1), []byte{0}},      // the local port
		{n(sw1.GUID).Port(1), []byte{0, 1}},    // the local port's peer
	} {
		if got, err := RouteToPort(f, routes, c.port); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", PortLabel(c.port), got, err, c.want)
		}
	}
	// Changing sw1's port 2 too: far's switch is out of reach.
	routes = DRRoutes(f, map[*discovery.Port]bool{farPort: true, n(sw1.GUID).Port(2): true})
	_, err := RouteToPort(f, routes, farPort)
	if want := `no directed route reaches 0x0000000000000400 ("far") port 1 without crossing another link being changed`; err == nil || err.Error() != want {
		t.Errorf("cut off: %v", err)
	}
}

func TestLIDOwner(t *testing.T) {
	fab, host, _, sw2, far := lineFabric()
	_, f := client(t, fab)
	if node, port := LIDOwner(f, sw2.LID(0)); node != f.Node(sw2.GUID) || port != 0 {
		t.Errorf("sw2's LID: %v port %d", node, port)
	}
	if node, port := LIDOwner(f, far.LID(1)); node != f.Node(far.GUID) || port != 1 {
		t.Errorf("far's LID: %v port %d", node, port)
	}
	if node, _ := LIDOwner(f, 99); node != nil {
		t.Errorf("LID 99 has an owner: %v", node)
	}
	if !OwnsLID(f.Node(host.GUID), host.LID(1)) || OwnsLID(f.Node(host.GUID), far.LID(1)) {
		t.Errorf("OwnsLID wrong for the host")
	}
}
