package sa

import (
	"context"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/simfabric"
)

func simResolver(t *testing.T, f *simfabric.Fabric, host string) *Resolver {
	t.Helper()
	c := simClient(t, f, host)
	local, err := c.eng.Port().Info()
	if err != nil {
		t.Fatal(err)
	}
	return &Resolver{SA: c, Local: local}
}

// In tiny.net OpenSM gives Switch1 LID 1, Hca1 2, Hca2 3, Hca3 4, and
// Switch2 keeps its preset LID 7.
func TestResolveGMPTargets(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	r := simResolver(t, f, "Hca1")
	ctx := context.Background()
	for _, tc := range []struct {
		target string
		lid    uint16
	}{
		{"4", 4},
		{"0x0000000000100007", 4},  // Hca3's port GUID, bare hex
		{"0000:0000:0010:0007", 4}, // colon groups
		{"fe80::10:7", 4},          // GID
		{"0,1", 1},                 // DR path: Switch1
		{"0,1,8", 7},               // through Switch1 port 8: Switch2
		{"0,1,8,1", 4},             // and down to Hca3
		{"0,", 2},                  // the local port
		{"0000:0000:0020:0001", 7}, // Switch2's port GUID
	} {
		tgt, err := endport.ParseTarget(tc.target, endport.TypeFlags{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.GMP(ctx, tgt)
		if err != nil {
			t.Errorf("%s: %v", tc.target, err)
			continue
		}
		if p.Addr.LID != tc.lid || p.Addr.QP != 1 || p.Addr.QKey != 0x80010000 || p.Record.SLID != 2 {
			t.Errorf("%s: path %+v, record SLID %d; want DLID %d from SLID 2", tc.target, p.Addr, p.Record.SLID, tc.lid)
		}
	}
}

func TestResolveFailures(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	r := simResolver(t, f, "Hca1")
	ctx := context.Background()
	for _, tc := range []struct{ target, err string }{
		{"0000:0000:0099:0001", "no path to GID"},
		{"0,2", "no link from LID 2 port 2"},
		{"0,1,3", "no link from LID 1 port 3"},
	} {
		tgt, _ := endport.ParseTarget(tc.target, endport.TypeFlags{})
		if _, err := r.GMP(ctx, tgt); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", tc.target, err, tc.err)
		}
	}
}
