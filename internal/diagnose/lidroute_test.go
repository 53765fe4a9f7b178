package diagnose

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
)

// A counter read that failed says where the LFTs end its request or its
// reply, when they do not arrive; nothing more when they do.
func TestReadFailedSaysWhereItsRouteEnds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(tn *tiny)
		want   string // the message's end; "" for none
		ev     map[string]any
	}{
		{"routes arrive", func(*tiny) {}, "", nil},
		// sw1 has no entry for host2's LID (5): the request ends there.
		{"request", func(tn *tiny) { setEntry(tn.s, tn.sw1, 5, routing.NoPort) },
			`; the LFTs read send the request to "sw1", which has no entry for LID 5`,
			map[string]any{"route_break": "request", "route_end": "no-entry", "route_end_node_guid": mad.GUID(0x200)}},
		// sw2 sends host1's LID (1) out of a port it does not have: the
		// reply ends there.
		{"reply", func(tn *tiny) { setEntry(tn.s, tn.sw2, 1, 9) },
			`; the LFTs read send the reply to LID 1 out of "sw2" port 9, where it ends (bad-port)`,
			map[string]any{"route_break": "reply", "route_end": "bad-port", "route_end_port": 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := routed()
			tn.s.Fabric.FromPort = 1
			lost := read(tn.hst.Port(1), mad.PortCounters{})
			lost.Basic, lost.Err = nil, &query.CounterError{Attr: "PortCounters", Err: errTimeout}
			tn.s.Counters = &CounterReads{First: []query.PortCounters{lost}}
			tc.change(tn)
			var fd Finding
			for _, f := range run(t, walkCheck{}, tn.s, nil) {
				if f.Code == "walk.read_failed" {
					fd = f
				}
			}
			const base = "the PortCounters could not be read: reading the PortCounters of Lid 0 port 0: no reply (3 attempts, timeout 1s)"
			if !strings.HasPrefix(fd.Message, base) || fd.Message[len(base):] != tc.want {
				t.Errorf("message %q, want %q", fd.Message, base+tc.want)
			}
			for k, v := range tc.ev {
				if got := fd.Get(k); got != v {
					t.Errorf("%s = %v (%T), want %v", k, got, got, v)
				}
			}
			if tc.ev == nil && fd.Get("route_break") != nil {
				t.Errorf("route_break %v where the routes arrive", fd.Get("route_break"))
			}
		})
	}
}
