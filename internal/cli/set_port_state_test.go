package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// tiny.net, from Hca1: Switch1 (LID 1, the SM's node) has Hca1 on port 1,
// Hca2 on port 4 and Switch2 on port 8; Switch2 (LID 7) has Hca3 on port
// 1 and Switch1 on port 4.

// portStateFabric starts a private tiny.net whose OpenSM does not sweep,
// so the states set stay as set while the C tools read them back.
func portStateFabric(t *testing.T) *simfabric.Fabric {
	t.Helper()
	simfabric.RequireTools(t, "smpquery")
	return simfabric.StartOptsT(t, simfabric.Options{Topology: "tiny.net", OpenSMFlags: []string{"-s", "0"}})
}

// smpPortField reads one PortInfo line with the C smpquery over a
// directed route from Hca1 ("LinkState", "PhysLinkState").
func smpPortField(t *testing.T, f *simfabric.Fabric, path, port, label string) string {
	t.Helper()
	c := f.RunC(context.Background(), "Hca1", "smpquery", "-D", "portinfo", path, port)
	if c.Code != 0 {
		t.Fatalf("smpquery portinfo %s %s: %v", path, port, c)
	}
	for _, line := range strings.Split(c.Stdout, "\n") {
		if v, ok := strings.CutPrefix(line, label+":"); ok {
			return strings.TrimLeft(v, ".")
		}
	}
	t.Fatalf("smpquery printed no %s:\n%s", label, c.Stdout)
	return ""
}

// Each change, read back with the C smpquery: disable, enable, init (on
// a CA port, over its own link), and the local link, refused, then with
// --force.
func TestSetPortStateChangesPorts(t *testing.T) {
	f := portStateFabric(t)
	for _, tc := range []struct {
		args, want   string
		path, port   string // read back here
		label, value string
	}{
		{"-d 1@4", "Would have changed 0x0000000000200000@4 on 0,1\n", "0,1", "4", "PhysLinkState", "LinkUp"},
		{"--disable 1@4", "Changed 0x0000000000200000@4 on 0,1: PortPhysicalState LinkUp -> Disabled\n", "0,1", "4", "PhysLinkState", "Disabled"},
		{"--enable -D 0,1@4", "Changed 0x0000000000200000@4 on 0,1: PortPhysicalState Disabled -> Polling\n", "0,1", "4", "PhysLinkState", "Polling"},
		{"--init Hca3", "Changed 0x0000000000100007@1 on 0,1,8,1: PortState Active -> Initialize\n", "0,1,8,1", "1", "LinkState", "Initialize"},
		// The local link: only with --force (and only a reset, which keeps
		// SMPs flowing: a disable would cut this test off the fabric).
		{"--init 0x200000@1", "", "0,1", "1", "LinkState", "Active"},
		{"--init --force 0x200000@1", "Changed 0x0000000000200000@1 on 0,1: PortState Active -> Initialize\n", "0,1", "1", "LinkState", "Initialize"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runSim(f, "Hca1", append([]string{"set_port_state"}, strings.Fields(tc.args)...)...)
			if tc.want == "" { // refused
				if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "it is the link of the local port") {
					t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
				}
			} else if r.Code != 0 || r.Stdout != tc.want {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %q", r.Code, r.Stdout, r.Stderr, tc.want)
			}
			if sent := sentMethods(r.Stderr); strings.HasPrefix(tc.args, "-d") && sent["SubnSet"] != 0 {
				t.Errorf("a dry run sent %v", sent)
			}
			if got := smpPortField(t, f, tc.path, tc.port, tc.label); got != tc.value {
				t.Errorf("smpquery reads %s %s", tc.label, got)
			}
		})
	}
	// PortState Down retrains both ends of the link: Switch2's port 1 too.
	if got := smpPortField(t, f, "0,1,8", "1", "LinkState"); got != "Initialize" {
		t.Errorf("Hca3's peer: LinkState %s", got)
	}
	// query's read-modify-write SubnSet on the same fabric: Switch2's
	// unlinked port 2, its other fields kept (the SMA takes the Set).
	r := runSim(f, "Hca1", "query", "SubnSet", "PortInfo", "-D", "0,1,8", "-a", "2", "-f", "PortPhysicalState=3", "--write")
	if r.Code != 0 || !strings.Contains(r.Stdout, "PhysLinkState:...................Disabled\n") {
		t.Fatalf("query SubnSet: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if got := smpPortField(t, f, "0,1,8", "2", "PhysLinkState"); got != "Disabled" {
		t.Errorf("after query SubnSet: PhysLinkState %s", got)
	}
}

// Taking down the local port's link, or a link between the local port
// and the SM, is refused for every target, before any Set: from Hca3 the
// route to the SM (Switch1, LID 1) crosses Switch2[4]-Switch1[8].
func TestSetPortStateRefusesVitalLinks(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct{ args, msg string }{
		{"--disable 7@4", `port 4: the LID route between the local port and the SM (LID 1) crosses it`},
		{"--disable 1@8", `port 8: the LID route between the local port and the SM (LID 1) crosses it`},
		{"--init Hca3", `refusing to init 0x0000000000100006 ("Hca3") port 1: it is the link of the local port`},
		{"--state down 7@1", `refusing to down 0x0000000000200001 ("sw2 desc") port 1: it is the link of the local port`},
		{"--disable -D 0@1", `port 1: it is the link of the local port`},
		{"--disable 1@4 7@4", `refusing to disable 0x0000000000200001 ("sw2 desc") port 4`}, // one vital target: none changed
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runSim(f, "Hca3", append([]string{"set_port_state", "-d"}, strings.Fields(tc.args)...)...)
			if r.Code != cmdutil.ExitUsage || r.Stdout != "" || !strings.Contains(r.Stderr, tc.msg) || !strings.Contains(r.Stderr, "--force does it anyway") {
				t.Fatalf("exit %d, stdout %q; want exit 2 and %q in\n%s", r.Code, r.Stdout, tc.msg, r.Stderr)
			}
			if sent := sentMethods(r.Stderr); sent["SubnSet"] != 0 {
				t.Fatalf("refused, but sent %v", sent)
			}
		})
	}
	for _, port := range [][2]string{{"0,1", "4"}, {"0,1", "8"}, {"0,1,8", "4"}, {"0,1,8", "1"}} {
		if got := smpPortField(t, f, port[0], port[1], "PhysLinkState"); got != "LinkUp" {
			t.Errorf("DR %s port %s: PhysLinkState %s", port[0], port[1], got)
		}
		if got := smpPortField(t, f, port[0], port[1], "LinkState"); got != "Active" {
			t.Errorf("DR %s port %s: LinkState %s", port[0], port[1], got)
		}
	}
}

// Bad input: one line naming what is wrong, exit 2, nothing set.
func TestSetPortStateBadInput(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct{ args, msg string }{
		{"--state bogus 1@4", `unknown port state "bogus"; one of: disable, enable, init, down, arm, active`},
		{"--state disabel 1@4", `unknown port state "disabel"; did you mean disable?`},
		{"--disable --enable 1@4", "only one of --disable, --enable, --init and --state can be given"},
		{"--disable 1", `"1": 0x0000000000200000 ("Switch1") is a switch: say which port (1@PORT)`},
		{"--disable 1@0", `"1@0": invalid port number "0"`},
		{"--disable 1@x", `"1@x": invalid port number "x"`},
		{"--disable 1@9", `"1@9": 0x0000000000200000 ("Switch1") has no port 9`},
		{"--disable 0,x@1", `"0,x@1": `},
		{"", "expected at least one <target@port>"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runSim(f, "Hca1", append([]string{"set_port_state", "-d"}, strings.Fields(tc.args)...)...)
			if r.Code != cmdutil.ExitUsage || r.Stdout != "" || !strings.Contains(r.Stderr, tc.msg) || sentMethods(r.Stderr)["SubnSet"] != 0 {
				t.Fatalf("exit %d, stdout %q; want exit 2 and %q in\n%s", r.Code, r.Stdout, tc.msg, r.Stderr)
			}
		})
	}
	r := runSim(f, "Hca1", "set_port_state", "--disable", "99@1")
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, `"99@1": no port of the fabric has LID 99`) {
		t.Fatalf("unknown LID: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// init_all_ports refuses without --confirm before it sends anything; with
// it every link is Initialize at both ends, as the C smpquery reads them.
func TestInitAllPorts(t *testing.T) {
	shared := sharedFabric(t, "tiny.net")
	r := runSim(shared, "Hca1", "init_all_ports", "-d")
	if r.Code != cmdutil.ExitUsage || r.Stdout != "" || !strings.Contains(r.Stderr, "add --confirm to do it") || strings.Contains(r.Stderr, "ibtool: send") {
		t.Fatalf("without --confirm: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	f := portStateFabric(t)
	r = runSim(f, "Hca1", "init_all_ports", "--confirm")
	want := "Reset 0x0000000000200001@1 on 0,1,8: PortState Active -> Initialize\n" +
		"Reset 0x0000000000200000@1 on 0,1: PortState Active -> Initialize\n" +
		"Reset 0x0000000000200000@4 on 0,1: PortState Active -> Initialize\n" +
		"Reset 0x0000000000200000@8 on 0,1: PortState Active -> Initialize\n"
	if r.Code != 0 || r.Stdout != want {
		t.Fatalf("exit %d, stdout\n%s\nwant\n%s\nstderr %s", r.Code, r.Stdout, want, r.Stderr)
	}
	for _, port := range [][2]string{{"0", "1"}, {"0,1", "1"}, {"0,1", "4"}, {"0,1,4", "1"}, {"0,1", "8"}, {"0,1,8", "4"}, {"0,1,8", "1"}, {"0,1,8,1", "1"}} {
		if got := smpPortField(t, f, port[0], port[1], "LinkState"); got != "Initialize" {
			t.Errorf("DR %s port %s: LinkState %s", port[0], port[1], got)
		}
	}
	// Nothing is past INIT any more: a second run resets nothing.
	if r := runSim(f, "Hca1", "init_all_ports", "--confirm"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("second run: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// With two ways between two switches, taking one of them down sends every
// SMP over the other: the Set to sw2 never crosses sw1[2]-sw2[2], the link
// being changed with it (umadtest fabric: host on sw1 port 1; sw1 port 2
// to sw2 port 2 directly, sw1 port 3 to sw3 port 1, sw3 port 2 to sw2
// port 3; hca2 on sw2 port 5).
func TestSetPortStateRoutesAroundChangedLinks(t *testing.T) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw1 := fab.AddSwitch(0x201, 8, "sw1")
	sw2 := fab.AddSwitch(0x202, 8, "sw2")
	sw3 := fab.AddSwitch(0x203, 8, "sw3")
	hca2 := fab.AddCA(0x300, 1, "hca2")
	fab.Link(host, 1, sw1, 1)
	fab.Link(sw1, 2, sw2, 2)
	fab.Link(sw1, 3, sw3, 1)
	fab.Link(sw3, 2, sw2, 3)
	fab.Link(sw2, 5, hca2, 1)
	tr := umadtest.NewOpener(umadtest.Classes{mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer}.Answer,
		umadtest.WithInfo(fab.LocalInfo()))
	r := runWith(tr, "ibtool", "set_port_state", "--disable", "-v", "0000000000000201@2", "0000:0000:0000:0202@5", "hca2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "Changed 0x0000000000000201@2 on 0,1: PortPhysicalState LinkUp -> Disabled\n" +
		"Changed 0x0000000000000202@5 on 0,1,3,2: PortPhysicalState LinkUp -> Disabled\n" +
		"Changed 0x0000000000000301@1 on 0,1,3,2,5: PortPhysicalState LinkUp -> Disabled\n"
	if r.stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
	var sets []string
	for _, m := range tr.Requests(mad.ClassSubnDR) {
		if m.Method() == mad.MethodSet {
			sets = append(sets, fmt.Sprintf("%s mod %d", mad.FormatDRPath(m.InitialPath()), m.AttrMod()))
		}
	}
	// hca2's own link is the last hop of its Set, and sw2[5] is that
	// link's other end: hca2 first.
	if got := strings.Join(sets, "; "); got != "0,1,3,2,5 mod 1; 0,1 mod 2; 0,1,3,2 mod 5" {
		t.Errorf("Sets sent: %s", got)
	}
	if n := strings.Count(r.stderr, "ibtool: write: Set PortInfo"); n != 3 {
		t.Errorf("-v logged %d writes:\n%s", n, r.stderr)
	}
}
