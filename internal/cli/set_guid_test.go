package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// OpenSM under ibsim takes the GUIDInfoRecord Set: the C saquery reads
// the aliases back from the SA. (ibsim's SMA refuses OpenSM's
// SubnSet(GUIDInfo), so the port itself keeps its GUIDInfo.) A private
// fabric: the SA's records change.
func TestSetGUIDThroughOpenSM(t *testing.T) {
	simfabric.RequireTools(t, "saquery")
	f := simfabric.StartT(t, "tiny.net")
	for _, tc := range []struct{ args, want string }{
		{"-v 2 1 0x0002c9030000a001", "Lid 2 slot 1: 0x0002c9030000a001\n"},
		// Two blocks: slots 7 (block 0) and 8 (block 1).
		{"2 7 0x0002c9030000a002,0002:c903:0000:a003", "Lid 2 slot 7: 0x0002c9030000a002\nLid 2 slot 8: 0x0002c9030000a003\n"},
	} {
		r := runSim(f, "Hca1", append([]string{"set_guid"}, strings.Fields(tc.args)...)...)
		if r.Code != 0 || r.Stdout != tc.want {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want %q", tc.args, r.Code, r.Stdout, r.Stderr, tc.want)
		}
		if strings.HasPrefix(tc.args, "-v") && r.Stderr != "ibtool: write: SubnAdmSet GUIDInfoRecord (component mask 0x23) at SA Lid 1, asked by set_guid 2 1 0x0002c9030000a001\n" {
			t.Errorf("-v: stderr %q", r.Stderr)
		}
	}
	c := f.RunC(context.Background(), "Hca1", "saquery", "GIR")
	for _, want := range []string{
		"\t\tLID........................2\n\t\tBlock......................0\n\t\tGUID 0.....................0x0000000000100001\n\t\tGUID 1.....................0x0002c9030000a001\n",
		"\t\tGUID 7.....................0x0002c9030000a002\n",
		"\t\tLID........................2\n\t\tBlock......................1\n\t\tGUID 0.....................0x0002c9030000a003\n",
	} {
		if c.Code != 0 || !strings.Contains(c.Stdout, want) {
			t.Fatalf("saquery GIR: exit %d, no %q in\n%s", c.Code, want, c.Stdout)
		}
	}
}

// The request on the fake SA: the port's LID, the block, and exactly the
// slots written in the component mask.
func TestSetGUIDRequest(t *testing.T) {
	tr, run := setGUIDOnFake()
	r := run("-D", "0", "3", "0x0002c9030000b003,0x0002c9030000b004")
	sets := tr.Requests(mad.ClassSubnAdm)
	if r.code != 0 || len(sets) != 1 {
		t.Fatalf("exit %d, %d SA requests, stderr %q", r.code, len(sets), r.stderr)
	}
	var rec mad.GUIDInfoRecord
	if err := rec.Unmarshal(sets[0][56:]); err != nil {
		t.Fatal(err)
	}
	mask := mad.MustCompMask(rec.Desc(), "LID", "BlockNum", "GUIDInfo.GUID.3", "GUIDInfo.GUID.4")
	if h := sets[0]; h.Method() != mad.MethodSet || h.AttrID() != mad.AttrGUIDInfoRecord || binary64(h[48:]) != mask ||
		rec.LID != 1 || rec.BlockNum != 0 || rec.GUIDInfo.GUID[3] != 0x0002c9030000b003 || rec.GUIDInfo.GUID[4] != 0x0002c9030000b004 {
		t.Errorf("the Set: method 0x%x attr 0x%x mask 0x%x, %+v", h.Method(), h.AttrID(), binary64(h[48:]), rec)
	}
	if r.stdout != "Lid 1 slot 3: 0x0002c9030000b003\nLid 1 slot 4: 0x0002c9030000b004\n" {
		t.Errorf("stdout %q", r.stdout)
	}
}

func binary64(b []byte) uint64 {
	var v uint64
	for _, c := range b[:8] {
		v = v<<8 | uint64(c)
	}
	return v
}

// setGUIDOnFake runs set_guid against a umadtest fabric (a CA, a switch
// at LID 1) with the fake SA.
func setGUIDOnFake() (*umadtest.Opener, func(args ...string) cmdResult) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw := fab.AddSwitch(0x200, 8, "sw")
	fab.Link(host, 1, sw, 3)
	fab.SMLID = sw.LID(0)
	sa := umadtest.NewSA()
	tr := umadtest.NewOpener(umadtest.Classes{mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassSubnAdm: sa.Answer}.Answer,
		umadtest.WithInfo(fab.LocalInfo()))
	return tr, func(args ...string) cmdResult { return runWith(tr, append([]string{"ibtool", "set_guid"}, args...)...) }
}

// A malformed GUID list and other bad input: one line naming it, exit 2,
// nothing sent.
func TestSetGUIDBadInput(t *testing.T) {
	for _, tc := range []struct{ args, msg string }{
		{"2 1 0x0002c9030000a001,0xzz", `GUID 2 of the list "0x0002c9030000a001,0xzz": invalid GUID "0xzz": not hex`},
		{"2 1 0x0002c9030000a001,", `GUID 2 of the list "0x0002c9030000a001,": invalid GUID ""`},
		{"2 1 0x00112233445566778", `invalid GUID "0x00112233445566778": 1 to 16 hex digits after 0x`},
		{"2 1 0002:c903:a001", `invalid GUID "0002:c903:a001": needs 16 hex digits`},
		{"2 1 0x1,0x2,0x1", `GUID 3 of the list "0x1,0x2,0x1" repeats GUID 1 (0x0000000000000001)`},
		{"2 0 0x1", "slot 0 holds the port GUID itself"},
		{"2 256 0x1", `invalid slot "256"`},
		{"2 255 0x1,0x2", "2 GUIDs from slot 255 run past slot 255"},
		{"2 1", "expected <target> <slot> <guid>[,<guid>...]"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			tr, run := setGUIDOnFake()
			r := run(strings.Fields(tc.args)...)
			if r.code != cmdutil.ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, tc.msg) || len(tr.Requests()) != 0 {
				t.Fatalf("exit %d, stderr %q, %d MADs sent; want exit 2 and %q", r.code, r.stderr, len(tr.Requests()), tc.msg)
			}
		})
	}
}
