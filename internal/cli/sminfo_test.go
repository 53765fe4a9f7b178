package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// runLinked runs ibtool in-process as the symlink named tool (compat use)
// against a simulated fabric.
func runLinked(f *simfabric.Fabric, host, tool string, args ...string) simfabric.Result {
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}), append([]string{tool}, args...)...)
	return simfabric.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

// cToolName drops the directory from the C tools' IBEXIT prefix (they
// print argv[0], and RunC runs them by their full path).
func cToolName(s string) string {
	return regexp.MustCompile(`(?m)^/usr/s?bin/(\w+): `).ReplaceAllString(s, "$1: ")
}

// conformLinked compares the C tool with ibtool run as its symlink: the
// same stdout (IBEXIT lines included), exit code and stderr class.
func conformLinked(t testing.TB, f *simfabric.Fabric, host, tool string, norms []simfabric.Normalizer, args ...string) {
	t.Helper()
	simfabric.RequireTools(t, tool)
	c := f.RunC(context.Background(), host, tool, args...)
	ours := runLinked(f, host, tool, args...)
	all := append([]simfabric.Normalizer{simfabric.DropSimNoise, cToolName}, norms...)
	simfabric.Compare(t, tool+" "+strings.Join(args, " "), c, ours, all...)
}

// activityCount hides SMInfo's ActCount, which the SM bumps all the time.
func activityCount(s string) string {
	return regexp.MustCompile(`activity count \d+`).ReplaceAllString(s, "activity count N")
}

func TestSminfoMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		host, args string
		fails      bool
	}{
		{"", "", false},               // the local port's SM (OpenSM runs on Switch1)
		{"", "1", false},              // by LID
		{"", "-L 1", false},           // -L is the default
		{"", "-D 0", false},           // 0-hop directed route: "sm lid 0"
		{"", "-G 0x200000", false},    // by port GUID, through the SA
		{"", "1 0", false},            // modifier 0: a Get
		{"", "-e -v -t 500 1", false}, // verbosity adds nothing on success
		{"", "1 0 extra", false},      // more arguments are ignored
		{"Hca1", "", false},           // from a CA: its SM LID
		{"Hca1", "-D 0,1", false},     // the SM's node by directed route from Hca1
		{"Hca3", "-G 0x200000", false},
		{"", "2", true},         // no SM on Hca1: no reply
		{"", "99", true},        // no such LID
		{"", "abc", true},       // not a target
		{"", "0", true},         // not a unicast LID
		{"", "-D 0,1", true},    // Hca1 has no SM
		{"", "-t 0 1", true},    // bad timeout
		{"", "-C mlx5_0", true}, // no such CA
		{"", "-G 0x999", true},  // no such GUID
		{"", "-e 1 2", true},    // a Set OpenSM refuses (ACKNOWLEDGE to a master): status 0x700
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			args := strings.Fields(tc.args)
			conformLinked(cFails(t, tc.fails), f, tc.host, "sminfo", []simfabric.Normalizer{activityCount}, args...)
			if tc.fails {
				return // as "ibtool sminfo" failures go to stderr only: TestSminfoFailures
			}
			c := f.RunC(context.Background(), tc.host, "sminfo", args...)
			ours := runSim(f, tc.host, append([]string{"sminfo"}, args...)...)
			simfabric.Compare(t, "ibtool sminfo "+tc.args, c, ours, simfabric.DropSimNoise, activityCount)
		})
	}
}

// ibsim-2sw2path4hca2port.net: OpenSM on Switch1 (LID 1), CAs with two
// linked ports.
func TestSminfoMatchesInfinibandDiagsTwoPortCAs(t *testing.T) {
	f := sharedFabric(t, "ibsim-2sw2path4hca2port.net")
	for _, tc := range []struct {
		host, args string
		fails      bool
	}{
		{"", "", false},
		{"Hca2", "", false},
		{"Hca2", "-G 0x200000", false},
		{"Hca1", "-D 0,1", false},
		{"", "3", true}, // Switch2 runs no SM
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			conformLinked(cFails(t, tc.fails), f, tc.host, "sminfo", []simfabric.Normalizer{activityCount}, strings.Fields(tc.args)...)
		})
	}
}

// As "ibtool sminfo" a failure is one line on stderr and nothing on stdout.
func TestSminfoFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"-t 100 2", cmdutil.ExitFailure, "query: no reply to SubnGet(SMInfo) LID 2"},
		{"abc", cmdutil.ExitUsage, `can't resolve destination port abc: no node is named "abc"`}, // a name, which no node has
		{"1x", cmdutil.ExitUsage, "can't resolve destination port 1x: invalid target"},
		{"-s 4 1 4", cmdutil.ExitUsage, `invalid state "4": a number 0..3`},
		{"-p 16 1 4", cmdutil.ExitUsage, `invalid priority "16"`},
		{"-a x 1 4", cmdutil.ExitUsage, `invalid activity "x"`},
		{"1 2", cmdutil.ExitFailure, "query: SubnSet(SMInfo) LID 1 mod 0x2 failed: MAD status 0x0700"},
		{"-G 0x999", cmdutil.ExitFailure, "can't resolve destination port 0x999: the SA knows no path"},
		{"-y key 1", cmdutil.ExitUsage, `invalid M_Key "key"`},
		{"1 x", cmdutil.ExitUsage, `invalid attribute modifier "x"`}, // C's atoi makes it 0, a Get
	} {
		t.Run(tc.args, func(t *testing.T) {
			wantFailure(t, runSim(f, "", append([]string{"sminfo"}, strings.Fields(tc.args)...)...), tc.code, tc.msg)
		})
	}
}

func TestSminfoJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "Hca1", "sminfo", "--json")
	if r.Code != 0 {
		t.Fatal(r)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatal(err, r.Stdout)
	}
	if tg, _ := got["target"].(map[string]any); tg["route"] != "lid" || tg["lid"] != 1.0 || tg["text"] != "Lid 1" {
		t.Errorf("target = %v", got["target"])
	}
	for k, v := range map[string]any{"sm_lid": 1.0, "method": "Get", "modifier": 0.0,
		"guid": "0x0000000000200000", "state": 3.0, "state_text": "SMINFO_MASTER", "priority": 0.0} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (%s)", k, got[k], v, r.Stdout)
		}
	}
	if _, ok := got["sm_key"]; ok {
		t.Error("the SM_Key must not be shown")
	}
}

// A modifier makes sminfo send a SubnSet(SMInfo) with -s/-p/-a in it;
// without one it is a Get (whose payload carries them too, as in C).
func TestSminfoSetPayload(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		method uint8
		mod    uint32
		info   mad.SMInfo
		out    string
	}{
		{[]string{"sminfo", "1"}, mad.MethodGet, 0, mad.SMInfo{SMState: 2},
			"sminfo: sm lid 1 sm guid 0x0, activity count 0 priority 0 state 2 SMINFO_STANDBY\n"},
		{[]string{"sminfo", "-s", "3", "-p", "0xf", "-a", "77", "-y", "0x55", "5", "4"}, mad.MethodSet, 4,
			mad.SMInfo{SMState: 3, Priority: 15, ActCount: 77},
			"sminfo: sm lid 5 sm guid 0x0, activity count 77 priority 15 state 3 SMINFO_MASTER\n"},
		{[]string{"sminfo", "-s", "0", "-D", "0,1", "1"}, mad.MethodSet, 1, mad.SMInfo{},
			"sminfo: sm lid 0 sm guid 0x0, activity count 0 priority 0 state 0 SMINFO_NOTACT\n"},
	} {
		// Every SMP is answered with its request's data.
		o := umadtest.NewOpener(umadtest.Echo, umadtest.WithInfo(umad.PortInfo{LID: 9, SMLID: 1, Num: 1}))
		r := runWith(o, tc.args...)
		if r.code != 0 || r.stdout != tc.out {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, r.code, r.stdout, r.stderr, tc.out)
		}
		sent := o.Requests()
		if len(sent) != 1 {
			t.Fatalf("%v: sent %d MADs", tc.args, len(sent))
		}
		m := sent[0]
		var info mad.SMInfo
		if err := info.Unmarshal(m.SMPData()); err != nil {
			t.Fatal(err)
		}
		if m.Method() != tc.method || m.AttrID() != mad.AttrSMInfo || m.AttrMod() != tc.mod || info != tc.info {
			t.Errorf("%v: sent method %#x attr %#x mod %d %+v; want %#x, mod %d %+v", tc.args, m.Method(), m.AttrID(), m.AttrMod(), info, tc.method, tc.mod, tc.info)
		}
		if tc.args[len(tc.args)-2] == "5" && binary.BigEndian.Uint64(m[24:]) != 0x55 {
			t.Errorf("-y: M_Key %#x", binary.BigEndian.Uint64(m[24:]))
		}
	}
}
