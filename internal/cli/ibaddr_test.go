package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// tiny.net LIDs: Switch1 1, Hca1 2 (port 2 down), Hca2 3, Hca3 4, Switch2 7.
func TestIbaddrMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		host, args string
		fails      bool
	}{
		{"", "", false},            // the local port (Switch1 port 0)
		{"", "2", false},           // by LID
		{"", "-l 2", false},        // LID range only, hex
		{"", "-L 2", false},        // decimal
		{"", "-g 2", false},        // GID only (with C's trailing space)
		{"", "-g -l 7", false},     // both again
		{"", "-l -L 1", false},     // -L wins
		{"", "-l -l 2", false},     // still hex
		{"", "-G 0x100001", false}, // by port GUID, through the SA
		{"", "-D 0,1", false},      // by directed route
		{"", "-D 0", false},        // the local node by directed route
		{"", "2 2", false},         // port 2 (down): LID 0, GID prefix 0 in inet_ntop's IPv4 form
		{"", "1 3", false},         // a switch port: GID ::0.32.0.0
		{"", "-s 1 -G 0x100007", false},
		{"Hca1", "", false}, // from a CA
		{"Hca1", "-D 0,1,8,1", false},
		{"Hca3", "-L", false},
		{"", "99", true},       // no such LID
		{"", "-D 0,5", true},   // no such port on the route
		{"", "2 7", true},      // no such port: bad MAD status
		{"", "0", true},        // not a unicast LID
		{"", "abc", true},      // not a target
		{"", "-G 0x999", true}, // the SA knows no such GUID
		{"", "-t 0 2", true},   // bad timeout
		{"", "-C foo 2", true}, // no such CA
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			args := strings.Fields(tc.args)
			conformLinked(cFails(t, tc.fails), f, tc.host, "ibaddr", nil, args...)
			if !tc.fails {
				conform(t, f, tc.host, "ibaddr", args...)
			}
		})
	}
}

// ibsim-2sw2path4hca2port.net: Hca1's ports have LIDs 2 and 4.
func TestIbaddrMatchesInfinibandDiagsTwoPortCAs(t *testing.T) {
	f := sharedFabric(t, "ibsim-2sw2path4hca2port.net")
	for _, tc := range []struct{ host, args string }{
		{"", "4"}, {"", "2 2"}, {"", "4 1"}, {"", "-D 0,2"}, {"Hca1", ""}, {"Hca2", "-L 6"}, {"", "3"},
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			conform(t, f, tc.host, "ibaddr", strings.Fields(tc.args)...)
		})
	}
}

func TestIbaddrFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"-t 100 99", cmdutil.ExitFailure, "can't resolve requested address: no reply to SubnGet(NodeInfo) LID 99"},
		{"2 7", cmdutil.ExitFailure, "can't resolve requested address: SubnGet(PortInfo) LID 2 mod 0x7 failed: MAD status 0x001c"},
		{"abc", cmdutil.ExitUsage, "can't resolve destination port abc"},
		{"2 x", cmdutil.ExitUsage, `invalid port number "x"`},
		{"-G 0x999", cmdutil.ExitFailure, "the SA knows no path to GID fe80::999"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runSim(f, "", append([]string{"ibaddr"}, strings.Fields(tc.args)...)...)
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) || r.Stdout != "" {
				t.Fatalf("got exit %d, stderr %q, stdout %q; want exit %d and %q", r.Code, r.Stderr, r.Stdout, tc.code, tc.msg)
			}
		})
	}
}

func TestIbaddrJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "ibaddr", "--json", "-D", "0,1")
	var got map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
		t.Fatal(err, r)
	}
	if tg, _ := got["target"].(map[string]any); tg["route"] != "dr" || tg["dr_path"] != "0,1" || tg["text"] != "DR path slid 65535; dlid 65535; 0,1" {
		t.Errorf("target = %v", got["target"])
	}
	for k, v := range map[string]any{"port": 0.0, "gid": "fe80::10:1",
		"gid_prefix": "0xfe80000000000000", "port_guid": "0x0000000000100001", "lid_start": 2.0, "lid_end": 2.0, "lmc": 0.0} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	// The C tool's -g/-l/-L only shape the text.
	if r2 := runSim(f, "", "ibaddr", "--json", "-l", "-D", "0,1"); r2.Stdout != r.Stdout {
		t.Errorf("-l changed the JSON:\n%s", r2.Stdout)
	}
}
