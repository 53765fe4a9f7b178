package setportstate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// routeFabric is host - sw1 - sw2 - far (LIDs: host 1, sw1 2, sw2 3,
// far 4), walked from host; a switch given an entry forwards LID 4 out of
// that port (none given: umadtest's shortest paths).
func routeFabric(t *testing.T, sw1Out, sw2Out *byte) (*query.Client, *discovery.Fabric) {
	t.Helper()
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw1 := fab.AddSwitch(0x200, 8, "sw1")
	sw2 := fab.AddSwitch(0x300, 8, "sw2")
	far := fab.AddCA(0x400, 1, "far")
	fab.Link(host, 1, sw1, 1)
	fab.Link(sw1, 2, sw2, 2)
	fab.Link(sw2, 3, far, 1)
	for _, s := range []struct {
		sw  *umadtest.Node
		out *byte
	}{{sw1, sw1Out}, {sw2, sw2Out}} {
		if s.out == nil {
			continue
		}
		var lft mad.LinearForwardingTable
		for i := range lft.Port {
			lft.Port[i] = routing.NoPort
		}
		lft.Port[far.LID(1)] = *s.out
		s.sw.Set(0, &lft)
		s.sw.Set(0, &mad.SwitchInfo{LinearFDBCap: 0xC000, LinearFDBTop: 4})
	}
	port := umadtest.NewPort(fab.Answer, umadtest.WithInfo(fab.LocalInfo()))
	eng := rpc.New(port, rpc.Options{Timeout: 200 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close() })
	f, err := discovery.Discover(context.Background(), eng, discovery.Options{Mode: discovery.ModeDR, NoChassis: true})
	if err != nil || len(f.Errors) > 0 {
		t.Fatalf("walk: %v %v", err, f.Errors)
	}
	return query.New(eng, query.Options{}), f
}

func port(p byte) *byte { return &p }

// The links of a LID route, and how a route that does not arrive is
// reported: the messages set_port_state had before routing traced them.
func TestLIDRouteLinks(t *testing.T) {
	for _, tc := range []struct {
		name           string
		sw1Out, sw2Out *byte
		want           string
	}{
		{"arrives", nil, nil, "0x100[1] 0x200[2] 0x300[3]"},
		{"loop", port(2), port(2), "no route to LID 4 within 63 hops"},
		{"no entry", port(2), port(routing.NoPort), `0x0000000000000300 ("sw2") has no route to LID 4`},
		{"past the last port", port(2), port(9), `0x0000000000000300 ("sw2") has no route to LID 4`},
		{"unlinked port", port(2), port(5), `0x0000000000000300 ("sw2") has no route to LID 4`},
		{"to the switch itself", port(2), port(0), `0x0000000000000300 ("sw2") has no route to LID 4`},
		{"back to the host", port(1), nil, `the route to LID 4 ends at 0x0000000000000100 ("host"), which does not have it`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := routeFabric(t, tc.sw1Out, tc.sw2Out)
			links, err := lidRouteLinks(context.Background(), c, f, routing.DRRoutes(f, nil), f.From, f.FromPort, 4)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				var parts []string
				for _, p := range links {
					parts = append(parts, fmt.Sprintf("0x%x[%d]", p.Node.GUID, p.Num))
				}
				got = strings.Join(parts, " ")
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
