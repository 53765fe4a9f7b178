package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/smpdump"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
)

func TestSmpdumpMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct{ host, args string }{
		{"", "2 0x11"},              // NodeInfo of Hca1 by LID
		{"", "0x2 17"},              // same, other number forms
		{"", "1 0x15 0"},            // switch port 0 PortInfo
		{"", "-D 0,8,1 0x15 1"},     // DR to Hca3: status carries the D bit
		{"", "-D 0 0x11"},           // 0 hops: the local node
		{"", "-D 0,1 0x14"},         // GUIDInfo over DR
		{"", "2 0x12"},              // SwitchInfo of a CA: bad status 0xc
		{"", "-s 2 0x10"},           // NodeDescription as a string
		{"", "-s -D 0,8 0x10"},      // same over DR
		{"", "4 0x16 0"},            // P_KeyTable
		{"", "-L 2 0x11"},           // -L is the default
		{"Hca1", "1 0x11"},          // attached to a CA
		{"Hca1", "-D 0,1,8 0x10"},   // DR from a CA through two switches
		{"Hca3", "-D 0,1,4,1 0x11"}, // and back down to Hca1
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			conform(t, f, tc.host, "smpdump", strings.Fields(tc.args)...)
		})
	}
}

func TestSmpdumpFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		// The C tool prints the zeroed request and exits 0 when nothing
		// answers; ibtool says what failed.
		{"99 0x11", cmdutil.ExitFailure, "no reply to SubnGet(NodeInfo) LID 99"},
		{"-D 0,3 0x11", cmdutil.ExitFailure, "no reply to SubnGet(NodeInfo) DR path 0,3"},
		{"-D 0,x,1 0x11", cmdutil.ExitUsage, `hop 1 "x" is not a port number`},
		{"0 0x11", cmdutil.ExitUsage, "unicast LID"},
		{"2 0x1ffff", cmdutil.ExitUsage, "invalid attribute"},
		{"2", cmdutil.ExitUsage, "expected <dlid|dr_path> <attr> [mod]"},
		{"--bogus 2 0x11", cmdutil.ExitUsage, "unknown flag: --bogus"},
		{"-t 0 2 0x11", cmdutil.ExitFailure, `Invalid timeout "0"`},
		{"-P 7 2 0x11", cmdutil.ExitFailure, "port 7 not found"},
		{"-C mlx5_0 2 0x11", cmdutil.ExitFailure, `CA "mlx5_0" not found`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			wantFailure(t, runSim(f, "", append([]string{"smpdump"}, strings.Fields(tc.args)...)...), tc.code, tc.msg)
		})
	}
}

func TestSmpdumpJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "smpdump", "--json", "-D", "0,8", "0x11")
	var got smpdump.SmpdumpResult
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
		t.Fatalf("exit %d, %v: %s", r.Code, err, r.Stdout+r.Stderr)
	}
	// Switch2 (GUID 0x200001 in tiny.net's order), reached over DR.
	if got.Target.Route != "dr" || got.Target.DRPath != "0,8" || got.Attribute != 0x11 || got.Status != 0x8000 ||
		!strings.HasPrefix(got.Data, "010102") || len(got.Data) != 128 {
		t.Fatalf("unexpected JSON result %+v", got)
	}
}

func TestVerboseErrorsShowTheMADPathAndDecode(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "smpdump", "-v", "99", "0x11")
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, "MAD path: DLID 99 QP 0 SL 0") || strings.Contains(r.Stderr, "request:") {
		t.Fatalf("-v: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = runSim(f, "", "smpdump", "-vv", "-D", "0,3", "0x15", "1")
	if !strings.Contains(r.Stderr, "MAD path: directed route 0,3") || !strings.Contains(r.Stderr, "request:\n  SubnGet(PortInfo) class 0x81") {
		t.Fatalf("-vv: stderr %q", r.Stderr)
	}
}

// smpdump --decode (-p) prints the dump as the C smpdump does, then the
// attribute as the C smpquery prints it.
func TestSmpdumpDecode(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	simfabric.RequireTools(t, "smpdump", "smpquery")
	for _, tc := range []struct{ dump, query, title string }{
		{"2 0x11", "nodeinfo 2", "# NodeInfo\n"},
		{"-D 0,1 0x15 1", "-K -D portinfo 0,1 1", "# PortInfo\n"},
		{"1 0x12", "switchinfo 1", "# SwitchInfo\n"},
		{"2 0x14", "guidinfo 2", ""},
		{"2 0xff90 1", "mepi 2 1", "# MlnxExtPortInfo\n"},
	} {
		t.Run(tc.dump, func(t *testing.T) {
			ctx := context.Background()
			dump := f.RunC(ctx, "", "smpdump", strings.Fields(tc.dump)...)
			query := f.RunC(ctx, "", "smpquery", strings.Fields(tc.query)...)
			r := runSim(f, "", append([]string{"smpdump", "-p"}, strings.Fields(tc.dump)...)...)
			decoded, ok := strings.CutPrefix(r.Stdout, dump.Stdout)
			if r.Code != 0 || dump.Code != 0 || query.Code != 0 || !ok {
				t.Fatalf("smpdump -p %s: %+v\nC smpdump: %+v", tc.dump, r, dump)
			}
			if tc.title == "" { // GUIDInfo: smpquery prints a table of its own
				if !strings.Contains(decoded, "GUID0:...........................0x0000000000100001\n") {
					t.Fatalf("decoded GUIDInfo:\n%s", decoded)
				}
				return
			}
			_, body, _ := strings.Cut(query.Stdout, "\n")
			if want := tc.title + body; decoded != want {
				t.Fatalf("decoded:\n%s\nwant:\n%s", decoded, want)
			}
		})
	}
	// Tables: smpquery's layouts, or the field dump.
	for args, want := range map[string]string{
		"1 0x17":         "# SLtoVLMappingTable\nSL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\nVL: | 0| 1|",
		"1 0x18 0x10000": "# VLArbitrationTable\nVL    : |0x0 |0x1 |",
		"1 0x16":         "PKeyTable (IBA 14.2.5.7, 64 bytes)\n  +0x00  ffff0000  PKey[0]=0xffff PKey[1]=0x0\n",
		"1 0x19":         "LinearForwardingTable (IBA 14.2.5.10, 64 bytes)\n",
	} {
		r := runSim(f, "", append([]string{"smpdump", "--decode"}, strings.Fields(args)...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "\n"+want) {
			t.Errorf("smpdump --decode %s:\n%s", args, r.Stdout)
		}
	}
	// --json carries the decoded attribute.
	r := runSim(f, "", "smpdump", "--json", "-p", "2", "0x11")
	var got struct {
		Decoded map[string]any `json:"decoded"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || got.Decoded["node_guid"] != "0x0000000000100000" {
		t.Fatalf("--json -p: %v %+v", err, r)
	}
}

func TestStatsCountsMADs(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "smpdump", "--stats", "-t", "50", "99", "0x11")
	if !strings.Contains(r.Stderr, "ibtool: MADs sent 1, retried 0, lost 1") {
		t.Fatalf("stderr %q", r.Stderr)
	}
	r = runSim(f, "", "smpdump", "--stats", "2", "0x11")
	if r.Code != 0 || !strings.Contains(r.Stderr, "ibtool: MADs sent 1, retried 0, lost 0") {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}
