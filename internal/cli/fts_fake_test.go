package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// routeFabric is host - sw1 - sw2 - far on a fake fabric (no ibsim),
// for what the simulator's OpenSM never sets up: loops, dead ends,
// switches that stop answering.
func routeFabric() (fab *umadtest.Fabric, sw1, sw2, far *umadtest.Node, tr *umadtest.Opener) {
	fab = umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw1 = fab.AddSwitch(0x200, 8, "sw1")
	sw2 = fab.AddSwitch(0x300, 8, "sw2")
	far = fab.AddCA(0x400, 1, "far")
	fab.Link(host, 1, sw1, 1)
	fab.Link(sw1, 2, sw2, 2)
	fab.Link(sw2, 3, far, 1)
	return fab, sw1, sw2, far, umadtest.NewOpener(fab.Answer, umadtest.WithInfo(fab.LocalInfo()))
}

// forward sets a switch's LFT entry for lid (block 0).
func forward(sw *umadtest.Node, lid uint16, port uint8, top uint16) {
	var lft mad.LinearForwardingTable
	for i := range lft.Port {
		lft.Port[i] = 0xff
	}
	lft.Port[lid] = port
	sw.Set(0, &lft)
	sw.Set(0, &mad.SwitchInfo{LinearFDBCap: 48 * 1024, LinearFDBTop: top, MulticastFDBCap: 1024})
}

func TestIbtracertLoopIsRefusedAsTheCToolRefusesIt(t *testing.T) {
	_, sw1, sw2, far, tr := routeFabric()
	lid := far.LID(1)
	forward(sw1, lid, 2, 8) // sw1 sends far's LID to sw2 ...
	forward(sw2, lid, 2, 8) // ... and sw2 sends it back: a loop
	r := runWith(tr, "ibtracert", "1", fmt.Sprint(lid))
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "find_route: Direct path too long!") ||
		!strings.Contains(r.stdout, "ibtracert: iberror: failed: Failed to get route information") {
		t.Fatalf("loop: %+v", r)
	}
	// The route went round until the directed route was full: 62 hops
	// (libibmad's 64-byte path, its last byte never used).
	if n := strings.Count(r.stdout, "] -> switch port"); n != 62 {
		t.Errorf("%d hops printed before the refusal, want 62:\n%s", n, r.stdout)
	}
	r = runWith(tr, "ibtool", "ibtracert", "1", fmt.Sprint(lid))
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "Failed to get route information") {
		t.Fatalf("ibtool ibtracert, loop: %+v", r)
	}
}

func TestIbtracertDeadEnds(t *testing.T) {
	_, sw1, sw2, far, tr := routeFabric()
	lid := far.LID(1)
	forward(sw1, lid, 9, 8) // beyond the switch's 8 ports
	r := runWith(tr, "ibtracert", "1", fmt.Sprint(lid))
	// The C tool names the node it came from, not the switch whose entry
	// is bad: it reads the next switch's table before moving on to it.
	want := fmt.Sprintf(`Bad forwarding table entry found at: node "host" lid entry %d is 9 (top 8)`, lid)
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, want) {
		t.Fatalf("port 9 of 8: %+v", r)
	}
	forward(sw1, lid, 2, 8)
	forward(sw2, lid, 5, 8) // an unconnected port: no node there
	r = runWith(tr, "ibtracert", "1", fmt.Sprint(lid))
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "find_route: can't reach port at") {
		t.Fatalf("unconnected port: %+v", r)
	}
	forward(sw2, lid, 3, 8)
	r = runWith(tr, "ibtracert", "-n", "1", fmt.Sprint(lid))
	if r.code != 0 || !strings.HasSuffix(r.stdout, "To {0x0000000000000400}[1]\n") {
		t.Fatalf("the mended route: %+v", r)
	}
}

// A switch whose table cannot be read is reported for itself; the other
// switches' tables are complete.
func TestDumpFtsGoesOnPastASwitchThatFails(t *testing.T) {
	_, _, sw2, _, tr := routeFabric()
	sw2.Fail(mad.AttrLinearForwardingTable, 0, umadtest.StatusInvalidField)
	r := runWith(tr, "dump_fts")
	if r.code != 0 || !strings.Contains(r.stderr, "SubnGet(LFT) failed on switch 'sw2'") ||
		!strings.Contains(r.stdout, "(sw1):") || strings.Count(r.stdout, "lids dumped") != 2 {
		t.Fatalf("%+v", r)
	}
	var sw1Table string
	for _, part := range strings.Split(r.stdout, "Unicast lids") {
		if strings.Contains(part, "(sw1):") {
			sw1Table = part
		}
	}
	if !strings.Contains(sw1Table, "4 valid lids dumped") {
		t.Errorf("sw1's table is not whole:\n%s", sw1Table)
	}
	r = runWith(tr, "ibtool", "dump_fts", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"error": "SubnGet(LFT) failed on switch 'sw2'`) {
		t.Fatalf("--json: %+v", r)
	}
}
