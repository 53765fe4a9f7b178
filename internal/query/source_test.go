package query

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// On tiny.net, seen from Hca1: Switch1 is over DR 0,1, Switch2 over 0,1,8.

func TestRouteToLIDFollowsTheForwardingTables(t *testing.T) {
	c := client(t, Options{})
	ctx := context.Background()
	var pi mad.PortInfo
	if err := c.Get(ctx, DR([]byte{0, 1, 8}), 0, nil, &pi); err != nil {
		t.Fatal(err)
	}
	path, err := c.RouteToLID(ctx, pi.LID)
	if err != nil || !bytes.Equal(path, []byte{0, 1, 8}) {
		t.Fatalf("RouteToLID(%d) = %v, %v; want 0,1,8", pi.LID, path, err)
	}
	if _, err := c.RouteToLID(ctx, 999); err == nil {
		t.Error("RouteToLID(999) found a route")
	}
}

func TestNodeSAReadsOneNodeAndItsPeers(t *testing.T) {
	c := client(t, Options{})
	ctx := context.Background()
	var sw1, sw2 mad.NodeInfo
	if err := c.Get(ctx, DR([]byte{0, 1}), 0, nil, &sw1); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, DR([]byte{0, 1, 8}), 0, nil, &sw2); err != nil {
		t.Fatal(err)
	}
	fab, err := c.NodeSA(ctx, uint64(sw2.NodeGUID))
	if err != nil {
		t.Fatal(err)
	}
	n := fab.From
	if n == nil || n.GUID != uint64(sw2.NodeGUID) || n.Type != discovery.NodeSwitch || n.NumPorts != 4 {
		t.Fatalf("node: %+v", n)
	}
	if p := n.Port(4); p == nil || p.Remote == nil || p.Remote.Node.GUID != uint64(sw1.NodeGUID) || p.Remote.Num != 8 {
		t.Errorf("Switch2 port 4 should reach Switch1 port 8: %+v", p)
	}
	if _, err := c.NodeSA(ctx, 0x123); !errors.Is(err, discovery.ErrNodeNotFound) {
		t.Errorf("unknown GUID: %v", err)
	}
}
