package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// Queries: the same SMPs and output as the C tool, failures included (in
// compat use the IBEXIT line follows what was printed before it).
func TestIbportstateMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		host, args string
		fails      bool
	}{
		{"", "2 1", false},             // a CA port by LID
		{"", "-K 2 1", false},          // M_Key shown
		{"", "-D 0 1", false},          // an Active switch port: the peer over DR 0,1
		{"", "-D 0 8", false},          // the peer is a switch
		{"", "-D 0,8 1", false},        // two hops down
		{"", "-D 0,8 4", false},        // back up: the peer is Switch1 port 8
		{"", "1 0", false},             // switch port 0: M_Key lines
		{"", "-K 1 0", false},          // with the key
		{"", "1 2", false},             // a switch port that is down: no peer query
		{"", "2 2", false},             // a CA port that is down
		{"", "-D 0,1 2", false},        // same by DR
		{"", "-G 0x100001 1", false},   // by GUID, through the SA
		{"", "-t 200 7 1", true},       // Switch2 port 1 by LID: the peer's combined route again
		{"", "2 1 query", false},       // query said explicitly
		{"", "-y 0x10 2 1", false},     // an M_Key in the requests
		{"Hca1", "-D 0 1", false},      // the local CA port
		{"Hca1", "-D 0,1 8", false},    // from a CA
		{"Hca3", "-D 0,1,4 1", false},  // to Switch1 port 1 and its peer Hca1
		{"Hca3", "-D 0,1,8 1", true},   // Switch2 has no port 8
		{"", "-t 200 1 8", true},       // switch port by LID: the peer's combined route is not forwarded by ibsim
		{"", "2 5", true},              // no such port
		{"", "99 1", true},             // no such LID
		{"", "-D 0,5 1", true},         // no such route
		{"", "abc 1", true},            // not a target
		{"", "2 1 bogus", true},        // bad operations...
		{"", "2 1 speed", true},        //
		{"", "2 1 speed 16", true},     //
		{"", "2 1 query enable", true}, //
		{"", "2 1 espeed 32", true},
		{"", "2 1 fdr10 2", true},
		{"", "2 1 width 32", true},
		{"", "2 1 vls 0", true},
		{"", "2 1 mtu 6", true},
		{"", "2 1 lid 0xc000", true},
		{"", "2 1 smlid 0", true},
		{"", "2 1 lmc 8", true},
		{"", "2 1 mkeylease 0x10000", true},
		{"", "2 1 mkeyprot 4", true},
		{"", "-D 0 8 mkey 1", true}, // M_Key fields of a switch port other than 0
		{"", "99 1 bogus", true},    // operations are checked before any SMP
		{"", "2 1 on", false},       // enabled already: nothing is set
		{"", "2", true},             // usage
		{"", "-t 0 2 1", true},      // bad timeout
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			args := strings.Fields(tc.args)
			conformLinked(cFails(t, tc.fails), f, tc.host, "ibportstate", nil, args...)
			if !tc.fails {
				conform(t, f, tc.host, "ibportstate", args...)
			}
		})
	}
}

// fattree-50.net: ConnectX-5 CAs and SwitchIB switches (MlnxExtPortInfo
// shown), EDR links (extended speeds).
func TestIbportstateMatchesInfinibandDiagsFatTree(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	for _, args := range []string{
		"-D 0 1",    // the local CA port, MlnxExtPortInfo too
		"-D 0,1 1",  // leaf port to the local CA: peer over DR
		"-D 0,1 14", // leaf port to a spine: both switches with MlnxExtPortInfo
		"-D 0,1 0",  // switch port 0
		"2 0",
		"-K -D 0,1,14 0",
		"-D 0,1,14 2", // spine to another leaf
		"1 1",
	} {
		t.Run(args, func(t *testing.T) {
			conformLinked(t, f, "", "ibportstate", nil, strings.Fields(args)...)
		})
	}
}

// Changes: each operation, by the C tool and by ibtool on the same port,
// each undone by the next, and both tools must print the same. Switch1's
// port 2 (not linked: a CA's SMA only sets the port an SMP arrives on) and
// Switch2's port 0 for the M_Key fields, on a private fabric since every
// Set also writes a valid LID and SM LID (0x1234 for the 0 a port has).
// (ibsim changes the widths and speeds of linked ports only, and OpenSM
// races to change them back, so those Sets are compared, not checked.)
func TestIbportstateSetsMatchInfinibandDiags(t *testing.T) {
	simfabric.RequireTools(t, "ibportstate")
	f := simfabric.StartT(t, "tiny.net")
	query := func(target ...string) simfabric.Result {
		return f.RunC(context.Background(), "", "ibportstate", append([]string{"-K", "-D"}, target...)...)
	}
	port2, port0 := []string{"0", "2"}, []string{"0,8", "0"}
	before2, before0 := query(port2...), query(port0...)
	if before2.Code != 0 || !strings.Contains(before2.Stdout, "PhysLinkState:...................Polling") || before0.Code != 0 {
		t.Fatalf("the ports are not as expected: %v\n%v", before2, before0)
	}
	for _, tc := range []struct {
		target []string
		ops    [2]string
		fails  bool // in the C tool too
	}{
		{port2, [2]string{"width 3", "width 2"}, false},
		{port2, [2]string{"speed 3", "speed 1"}, false},
		{port2, [2]string{"espeed 1", "espeed 0"}, false},
		{port2, [2]string{"fdr10 1", "fdr10 0"}, false},
		{port2, [2]string{"disable", "enable"}, false},
		{port2, [2]string{"off", "on"}, false},
		{port2, [2]string{"on", "query"}, false}, // enabled: nothing set
		{port2, [2]string{"down", "reset"}, false},
		{port2, [2]string{"vls 2", "vls 4"}, false},
		{port2, [2]string{"mtu 4", "mtu 5"}, false},
		{port2, [2]string{"lmc 1", "lmc 0"}, false},
		{port2, [2]string{"lid 0x50 smlid 0x51 width 1", "lid 0x1234 smlid 0x1234 width 2"}, false},
		{port2, [2]string{"query speed 1", "query"}, false},
		{port2, [2]string{"arm", "active"}, true}, // the port has no link
		{port0, [2]string{"mkeylease 10", "mkeylease 4089"}, false},
		{port0, [2]string{"mkeyprot 1", "mkeyprot 0"}, false},
		{port0, [2]string{"mkey 0x1234", "mkey 0"}, false},
	} {
		t.Run(strings.Join(tc.target, " ")+" "+tc.ops[0], func(t *testing.T) {
			for _, op := range tc.ops {
				args := append(append([]string{"-K", "-D"}, tc.target...), strings.Fields(op)...)
				// C first, then ibtool and C again: the operations set
				// absolute values, so the last two start from the same state.
				first := f.RunC(context.Background(), "", "ibportstate", args...)
				ours := runLinked(f, "", "ibportstate", args...)
				c := f.RunC(context.Background(), "", "ibportstate", args...)
				simfabric.Compare(cFails(t, tc.fails), "ibportstate "+strings.Join(args, " "), c, ours, simfabric.DropSimNoise, cToolName)
				if (first.Code != 0) != tc.fails {
					t.Errorf("ibportstate %s: %v", strings.Join(args, " "), first)
				}
				// (ibsim changes widths and speeds of linked ports only.)
				if op == "disable" && !strings.Contains(ours.Stdout, "After PortInfo set:\n# Port info: DR path slid 65535; dlid 65535; 0 port 2\nLinkState:.......................Down\nPhysLinkState:...................Disabled\n") {
					t.Errorf("disable did not take:\n%s", ours.Stdout)
				}
			}
		})
	}
	// A write is one SubnSet, logged at -v with what asked for it.
	// (Switch1 port 2 has VLs 4 already: nothing changes.)
	r := runSim(f, "", "ibportstate", "-v", "-d", "-D", "0", "2", "vls", "4")
	if sent := sentMethods(r.Stderr); r.Code != 0 || sent["SubnSet"] != 1 {
		t.Errorf("vls 4: exit %d, sent %v", r.Code, sent)
	}
	logged := regexp.MustCompile(`(?m)^ibtool: write: Set PortInfo \(modifier 0x(8000000|)2\) at DR path slid 65535; dlid 65535; 0, asked by ibportstate vls 4$`)
	if !logged.MatchString(r.Stderr) {
		t.Errorf("vls 4 -v: no write logged:\n%s", r.Stderr)
	}
	// Back as they were, but for the LIDs every Set makes valid.
	lids := func(s string) string {
		s = strings.ReplaceAll(s, "Lid:.............................4660", "Lid:.............................0")
		return strings.ReplaceAll(s, "SMLid:...........................4660", "SMLid:...........................0")
	}
	simfabric.Compare(t, "Switch1 port 2 after the changes", before2, query(port2...), simfabric.DropSimNoise, lids)
	simfabric.Compare(t, "Switch2 port 0 after the changes", before0, query(port0...), simfabric.DropSimNoise)
	if _, err := f.Console(`Clear "Switch1"[2]`); err != nil {
		t.Fatal(err)
	}
	simfabric.Compare(t, "Switch1 port 2 restored", before2, query(port2...), simfabric.DropSimNoise)
}

// Taking the local port down is refused without --force, before any Set.
func TestIbportstateGuardsTheLocalPort(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	before := runLinked(f, "Hca1", "ibportstate", "-D", "0", "1")
	for _, args := range []string{"-D 0 1 disable", "-D 0 0 off", "2 1 down", "-G 0x100001 1 reset"} {
		r := runSim(f, "Hca1", append([]string{"ibportstate"}, strings.Fields(args)...)...)
		if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "the local port") || !strings.Contains(r.Stderr, "--force") || r.Stdout != "" {
			t.Errorf("%s: %v", args, r)
		}
		r = runLinked(f, "Hca1", "ibportstate", strings.Fields(args)...)
		if r.Code != cmdutil.ExitFailure || !strings.HasPrefix(r.Stdout, "ibportstate: iberror: failed: refusing to ") {
			t.Errorf("%s (compat): %v", args, r)
		}
	}
	// Not the local port: Hca1's port 2 (which ibsim does not let an SMP
	// arriving on port 1 change, so nothing changes).
	for _, args := range []string{"-D 0 2 disable"} {
		r := runSim(f, "Hca1", append([]string{"ibportstate"}, strings.Fields(args)...)...)
		if strings.Contains(r.Stderr, "refusing") {
			t.Errorf("%s: %v", args, r)
		}
	}
	if after := runLinked(f, "Hca1", "ibportstate", "-D", "0", "1"); after.Stdout != before.Stdout {
		t.Errorf("the local port changed:\n%s", simfabric.UnifiedDiff("before", "after", before.Stdout, after.Stdout))
	}
}

func TestIbportstateFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"2 1 bogus", cmdutil.ExitUsage, "invalid operation: bogus"},
		{"2 1 speed x", cmdutil.ExitUsage, "invalid speed value x"},
		{"2 x", cmdutil.ExitUsage, `invalid port number "x"`},
		{"2", cmdutil.ExitUsage, "expected <dest dr_path|lid|guid> <portnum>"},
		{"2 5", cmdutil.ExitFailure, "smp query portinfo failed: SubnGet(PortInfo) LID 2 mod 0x5 failed: MAD status 0x001c"},
		{"-t 100 1 8", cmdutil.ExitFailure, "smp query nodeinfo failed: no reply to SubnGet(NodeInfo) DR path 0,8"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runSim(f, "", append([]string{"ibportstate"}, strings.Fields(tc.args)...)...)
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) {
				t.Fatalf("got exit %d, stderr %q; want exit %d and %q", r.Code, r.Stderr, tc.code, tc.msg)
			}
		})
	}
}

func TestIbportstateJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "ibportstate", "--json", "-D", "0", "1")
	var got struct {
		Target              jsonv.Target
		NodeType, Operation string
		PortInfo            map[string]any `json:"port_info"`
		Peer                *struct {
			Target   jsonv.Target
			Port     int
			PortInfo map[string]any `json:"port_info"`
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
		t.Fatal(err, r)
	}
	if got.Target.Text != "DR path slid 65535; dlid 65535; 0" || got.Target.Route != "dr" || got.Target.DRPath != "0" || got.Operation != "query" || got.PortInfo["port_state"] == nil {
		t.Errorf("got %s", r.Stdout)
	}
	if got.Peer == nil || got.Peer.Target.Text != "DR path slid 65535; dlid 65535; 0,1" || got.Peer.Target.DRPath != "0,1" || got.Peer.Port != 1 || got.Peer.PortInfo["lid"] != 2.0 {
		t.Errorf("peer: %s", r.Stdout)
	}
	if v, ok := got.Peer.PortInfo["m_key"]; !ok || v != nil {
		t.Errorf("M_Key without -K: %v", v)
	}
}

// sentMethods counts the requests a -d trace shows, by method.
func sentMethods(trace string) map[string]int {
	sent := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^ibtool: send +(\w+)\(`).FindAllStringSubmatch(trace, -1) {
		sent[m[1]]++
	}
	return sent
}

// Queries send Gets only: no Set without an operation that asks for one
// ("on" asks, but the port is enabled already).
func TestIbportstateQueriesSendNoSet(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, args := range []string{"2 1", "-D 0 1", "1 0", "2 1 query", "-v 2 1 on"} {
		r := runSim(f, "", append([]string{"ibportstate", "-d"}, strings.Fields(args)...)...)
		sent := sentMethods(r.Stderr)
		if r.Code != 0 || sent["SubnSet"] != 0 || sent["SubnGet"] < 2 || strings.Contains(r.Stderr, "write:") {
			t.Errorf("%s: exit %d, sent %v\n%s", args, r.Code, sent, r.Stderr)
		}
	}
}

// On a umadtest fabric (no ibsim): queries send SubnGets only, a write
// one SubnSet, logged at -v with the operations that asked for it.
func TestIbportstateWritesOnlyWhenAsked(t *testing.T) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host") // the local port
	sw := fab.AddSwitch(0x200, 8, "sw")
	fab.Link(host, 1, sw, 3)
	run := func(args ...string) (cmdResult, map[uint8]int) {
		tr := umadtest.NewOpener(umadtest.Classes{mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer}.Answer,
			umadtest.WithInfo(fab.LocalInfo()))
		r := runWith(tr, append([]string{"ibtool", "ibportstate"}, args...)...)
		methods := map[uint8]int{}
		for _, m := range tr.Requests(mad.ClassSubnLID, mad.ClassSubnDR) {
			methods[m.Method()]++
		}
		return r, methods
	}
	for _, args := range []string{
		"-D 0 1",         // the local CA port
		"-D 0,1 3",       // an Active switch port, and its peer
		"-D 0,1 5",       // a switch port with no link
		"-D 0,1 5 query", // said explicitly
		"-v -D 0,1 5 on", // asks, but the port is enabled already
	} {
		r, methods := run(strings.Fields(args)...)
		if r.code != 0 || methods[mad.MethodSet] != 0 || methods[mad.MethodGet] < 2 || strings.Contains(r.stderr, "write:") {
			t.Errorf("%s: exit %d, methods %v, stderr %q", args, r.code, methods, r.stderr)
		}
	}
	r, methods := run("-v", "-D", "0,1", "5", "disable")
	if r.code != 0 || methods[mad.MethodSet] != 1 || !strings.Contains(r.stdout, "After PortInfo set:") {
		t.Errorf("disable: exit %d, methods %v, stdout %q", r.code, methods, r.stdout)
	}
	if want := "ibtool: write: Set PortInfo (modifier 0x5) at DR path slid 65535; dlid 65535; 0,1, asked by ibportstate disable\n"; r.stderr != want {
		t.Errorf("disable -v: stderr %q, want %q", r.stderr, want)
	}
}
