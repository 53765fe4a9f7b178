package cli

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// query prints attributes with the generated printers: a SubnGet prints
// what smpquery prints for the same attribute, after smpquery's "# ..."
// header line.
func TestQueryPrintsAsSmpquery(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct{ query, smpquery string }{
		{"SubnGet PortInfo 2 -a 1", "portinfo 2 1"},
		{"subn_get SMPNodeInfo 2", "nodeinfo 2"},
		{"SubnGet 0x11 -D 0,8", "-D nodeinfo 0,8"},
		{"SubnGet SwitchInfo 1", "switchinfo 1"},
		{"SubnGet PortInfo -G 0x100001 -a 1", "-G portinfo 0x100001 1"},
		{"-K SubnGet PortInfo 1", "-K portinfo 1 0"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			simfabric.RequireTools(t, "smpquery")
			c := f.RunC(context.Background(), "", "smpquery", strings.Fields(tc.smpquery)...)
			ours := runSim(f, "", append([]string{"query"}, strings.Fields(tc.query)...)...)
			_, want, _ := strings.Cut(c.Stdout, "\n")
			if c.Code != 0 || ours.Code != 0 || ours.Stdout != want {
				t.Fatalf("query: exit %d\n%s%s\nsmpquery: exit %d\n%s", ours.Code, ours.Stdout, ours.Stderr, c.Code, c.Stdout)
			}
		})
	}
}

// -f NAME prints the fields named, in the order given; -f NAME=VALUE goes
// into the request (PortSelect of PortCounters; an SA query's components).
func TestQueryFieldsAndClasses(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct{ args, want string }{
		{"SubnGet NodeInfo -D 0,1 -f NodeGUID -f NodeType",
			"Guid:............................0x0000000000100000\nNodeType:........................Channel Adapter\n"},
		{"PerformanceGet PortCounters 2 -f PortSelect=1 -f PortSelect -f SymbolErrorCounter",
			"PortSelect:......................1\nSymbolErrorCounter:..............0\n"},
		{"SubnAdmGetTable NodeRecord -f LID=2 -f NodeInfo.NodeGUID -f NodeDescription",
			"Reply structure #0\nGuid:............................0x0000000000100000\nNodeDescription:\nNodeDesc:........................'hca one'\n"},
		{"SubnAdmGet PathRecord -f DLID=2 -f SLID=1 -f DLID", "PathRecDLid:.....................2\n"},
		{"SubnGet PKeyTable 2 -f PKey.0", "PKey.0:..........................0xffff\n"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runSim(f, "", append([]string{"query"}, strings.Fields(tc.args)...)...)
			if r.Code != 0 || r.Stdout != tc.want {
				t.Fatalf("exit %d, stdout\n%s\nwant\n%s\nstderr %s", r.Code, r.Stdout, tc.want, r.Stderr)
			}
		})
	}
}

// Bad names are usage errors naming the near matches; nothing is sent.
func TestQueryBadInput(t *testing.T) {
	for _, tc := range []struct{ args, msg string }{
		{"SubnGet PortInfx", `unknown attribute "PortInfx" for SubnGet; did you mean PortInfo`},
		{"SubnGet PortInfo -f LIDD", `unknown field "LIDD" of PortInfo; did you mean LID`},
		{"SubnGet PortInfo -f LinkWidthActiv=1", `unknown field "LinkWidthActiv" of PortInfo; did you mean LinkWidthActive`},
		{"SubnGett PortInfo", `unknown method "SubnGett"; did you mean SubnGet`},
		{"SubnGet PortCounters", `unknown attribute "PortCounters" for SubnGet`},
		{"SubnGet 0x9999", `unknown attribute "0x9999" for SubnGet; one of: `},
		{"SubnAdmGetTable NodeInfo", `unknown attribute "NodeInfo" for SubnAdmGetTable; one of: NodeRecord, PortInfoRecord`},
		{"SubnSet NodeInfo --write", "NodeInfo has no SubnSet (its methods: SubnGet)"},
		{"SubnGet PortInfo -f LID=0x10000", "-f LID=0x10000: 65536 does not fit the 16 bits of LID"},
		{"SubnGet PortInfo -a x", `invalid attribute modifier "x"`},
		{"SubnAdmGet NodeRecord 2", "SubnAdmGet goes to the SA: it takes no target"},
		{"SubnGet", "expected <method> <attribute> [<target>]"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r, sent := queryOnFake(t, strings.Fields(tc.args)...)
			if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, tc.msg) || r.stdout != "" || len(sent) != 0 {
				t.Fatalf("exit %d, stderr %q, stdout %q, %d MADs sent; want exit 2 and %q", r.code, r.stderr, r.stdout, len(sent), tc.msg)
			}
			if first, _, _ := strings.Cut(r.stderr, "\n"); !strings.Contains(first, tc.msg) {
				t.Fatalf("the complaint is not one line: %q", r.stderr)
			}
		})
	}
}

// queryOnFake runs query on a umadtest fabric (a CA on port 3 of a
// switch) and returns what it sent.
func queryOnFake(t *testing.T, args ...string) (cmdResult, []mad.Header) {
	t.Helper()
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw := fab.AddSwitch(0x200, 8, "sw")
	fab.Link(host, 1, sw, 3)
	cc := umadtest.NewAgent(mad.ClassCongest)
	cc.Set(0, &mad.CongestionInfo{CongestionInfo: 1, ControlTableCap: 2})
	tr := umadtest.NewOpener(umadtest.Classes{mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassCongest: cc.Answer}.Answer,
		umadtest.WithInfo(fab.LocalInfo()))
	r := runWith(tr, append([]string{"ibtool", "query"}, args...)...)
	return r, tr.Requests()
}

// Congestion control MADs carry the CC_Key given with --cckey (IBA
// A10.4.1: at byte 24 of the MAD), 0 without it; a bad key is a usage
// error before anything is sent.
func TestQueryCCKey(t *testing.T) {
	for _, tc := range []struct {
		args []string
		key  uint64
	}{{nil, 0}, {[]string{"--cckey", "0x0123456789abcdef"}, 0x0123456789abcdef}} {
		r, sent := queryOnFake(t, append([]string{"CongestionGet", "CongestionInfo"}, tc.args...)...)
		var got []uint64
		for _, m := range sent {
			if m.Class() == mad.ClassCongest {
				got = append(got, binary.BigEndian.Uint64(m[24:32]))
			}
		}
		if r.code != 0 || len(got) != 1 || got[0] != tc.key || !strings.Contains(r.stdout, "ControlTableCap:") {
			t.Errorf("%v: exit %d, CC_Keys sent %x (want %x), stdout %q, stderr %q", tc.args, r.code, got, tc.key, r.stdout, r.stderr)
		}
	}
	r, sent := queryOnFake(t, "CongestionGet", "CongestionInfo", "--cckey", "0xzz")
	if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, `invalid CC key "0xzz"`) || len(sent) != 0 {
		t.Errorf("bad key: exit %d, stderr %q, %d MADs sent", r.code, r.stderr, len(sent))
	}
}

// A Set method is refused without --write, before anything is sent; with
// it, one SubnSet goes to the target, carrying the attribute as read with
// the fields asked for changed and PortInfo's transitions as "no change".
func TestQuerySetOnlyWithWrite(t *testing.T) {
	r, sent := queryOnFake(t, "SubnSet", "PortInfo", "-D", "0,1", "-a", "5", "-f", "PortPhysicalState=3")
	if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, "SubnSet changes PortInfo at the target: add --write to send it") || len(sent) != 0 {
		t.Fatalf("without --write: exit %d, stderr %q, %d MADs sent", r.code, r.stderr, len(sent))
	}
	r, sent = queryOnFake(t, "SubnSet", "PortInfo", "-D", "0,1", "-a", "5", "-f", "PortPhysicalState=3", "-f", "HOQLife=7", "--write", "-v")
	var sets []mad.Header
	for _, m := range sent {
		if m.Method() == mad.MethodSet {
			sets = append(sets, m)
		}
	}
	if r.code != 0 || len(sets) != 1 || len(sent) != 2 {
		t.Fatalf("with --write: exit %d, %d MADs, %d Sets\n%s", r.code, len(sent), len(sets), r.stderr)
	}
	set := sets[0]
	var pi mad.PortInfo
	if err := pi.Unmarshal(set.SMPData()); err != nil {
		t.Fatal(err)
	}
	if set.Class() != mad.ClassSubnDR || set.AttrMod() != 5 || mad.FormatDRPath(set.InitialPath()) != "0,1" ||
		pi.PortPhysicalState != 3 || pi.HOQLife != 7 || pi.PortState != 0 || pi.LinkWidthEnabled != 0 || pi.VLCap != 4 {
		t.Errorf("the Set: class 0x%x mod %d path %s, %+v", set.Class(), set.AttrMod(), mad.FormatDRPath(set.InitialPath()), pi)
	}
	if want := "ibtool: write: Set PortInfo (modifier 0x5) at DR path slid 65535; dlid 65535; 0,1, asked by query SubnSet --write\n"; r.stderr != want {
		t.Errorf("-v: stderr %q, want %q", r.stderr, want)
	}
	if !strings.Contains(r.stdout, "PhysLinkState:...................Disabled\n") {
		t.Errorf("the reply is not printed:\n%s", r.stdout)
	}
}

// A SubnAdmSet without --write sends nothing either, to the SA or any
// other agent.
func TestQuerySubnAdmSetRefused(t *testing.T) {
	r, sent := queryOnFake(t, "SubnAdmSet", "GUIDInfoRecord", "-f", "LID=2")
	if r.code != cmdutil.ExitUsage || len(sent) != 0 || !strings.Contains(r.stderr, "add --write") {
		t.Fatalf("exit %d, stderr %q, %d MADs sent", r.code, r.stderr, len(sent))
	}
}

// The admin commands run through their symlinks too (argv[0] names them).
func TestAdminCommandsBySymlink(t *testing.T) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw := fab.AddSwitch(0x200, 8, "sw")
	fab.Link(host, 1, sw, 3)
	cc := umadtest.NewAgent(mad.ClassCongest)
	cc.Set(0, &mad.CongestionInfo{CongestionInfo: 1, ControlTableCap: 2})
	tr := umadtest.NewOpener(umadtest.Classes{mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassCongest: cc.Answer}.Answer,
		umadtest.WithInfo(fab.LocalInfo()))
	if r := runWith(tr, "/usr/local/bin/query", "SubnGet", "NodeInfo", "-f", "NodeGUID"); r.code != 0 ||
		r.stdout != "Guid:............................0x0000000000000100\n" {
		t.Errorf("query: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := runKernel(t, fakeSysfs(t), "set_nodedesc", "-C", "mlx4_0"); r.code != 0 || r.stdout != "mlx4_0: node7 HCA-1\n" {
		t.Errorf("set_nodedesc: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"set_port_state", "--state", "off", "1@1"},
		{"init_all_ports"},
		{"set_guid", "1", "1", "0xq"},
	} {
		before := len(tr.Requests())
		r := runWith(tr, args...)
		if sent := len(tr.Requests()) - before; r.code != cmdutil.ExitUsage || !strings.HasPrefix(r.stderr, args[0]+": ") || sent != 0 {
			t.Errorf("%v: exit %d, stderr %q, %d MADs sent", args, r.code, r.stderr, sent)
		}
	}
}
