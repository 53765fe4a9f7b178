package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/simfabric"
)

var stanzaGUID = regexp.MustCompile(`(?m)^(switch|ca|rt)guid=(0x[0-9a-f]+)`)

// stanzas cuts ibnetdiscover's topology into its node stanzas, by node
// GUID: (tool, text).
func stanzas(topology string) map[string][2]string {
	out := map[string][2]string{}
	for _, s := range strings.Split(topology, "\n\n") {
		if i := strings.Index(s, "\nvendid="); i >= 0 && !strings.HasPrefix(s, "vendid=") {
			s = s[i+1:] // the first stanza follows the header
		}
		m := stanzaGUID.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		tool := map[string]string{"switch": "ibprintswitch", "ca": "ibprintca", "rt": "ibprintrt"}[m[1]]
		out[m[2]] = [2]string{tool, strings.TrimSuffix(s, "\n") + "\n"}
	}
	return out
}

// TestIbprintMatchesIbnetdiscoverStanzas: each node printed alone is its
// stanza of the C ibnetdiscover's topology, found by discovery or (for all
// but CAs with several linked ports: ibsim's one-MAD GetTable replies hold
// one NodeRecord) from the SA.
func TestIbprintMatchesIbnetdiscoverStanzas(t *testing.T) {
	simfabric.RequireTools(t, "ibnetdiscover")
	for _, tc := range discoveryTopologies {
		t.Run(tc.topology, func(t *testing.T) {
			f := sharedFabric(t, tc.topology)
			c := f.RunC(context.Background(), "", "ibnetdiscover")
			all := stanzas(c.Stdout)
			if len(all) < 3 {
				t.Fatalf("only %d stanzas in\n%s", len(all), c.Stdout)
			}
			for guid, st := range all {
				tool, want := st[0], st[1]
				for _, flags := range []string{"", "--sa"} {
					if flags == "--sa" && tool == "ibprintca" && strings.Count(want, "\n[") > 1 {
						continue
					}
					r := runSim(f, "", append([]string{tool, guid}, strings.Fields(flags)...)...)
					if r.Code != 0 || r.Stdout != want || r.Stderr != "" {
						t.Errorf("%s %s %s: exit %d, stderr %q\n%s", tool, guid, flags, r.Code, r.Stderr,
							simfabric.UnifiedDiff("ibnetdiscover", tool, want, r.Stdout))
					}
				}
			}
		})
	}
}

// TestIbprintListsAsTheNodeLists: -l is ibhosts, ibswitches, ibrouters.
func TestIbprintListsAsTheNodeLists(t *testing.T) {
	for _, topo := range []string{"tiny.net", "fattree-50.net", "ibsim-2sw2path4hca2port.net"} {
		f := sharedFabric(t, topo)
		for tool, list := range map[string]string{"ibprintca": "ibhosts", "ibprintswitch": "ibswitches", "ibprintrt": "ibrouters"} {
			simfabric.RequireTools(t, list)
			c := f.RunC(context.Background(), "", list)
			for _, flags := range []string{"-l", "-l --sa"} {
				if flags == "-l --sa" {
					continue // whole SA tables: not under ibsim (see TestIbprintFromTheSA)
				}
				r := runSim(f, "", append([]string{tool}, strings.Fields(flags)...)...)
				if r.Code != 0 || r.Stdout != c.Stdout {
					t.Errorf("%s: %s %s: exit %d\n%s", topo, tool, flags, r.Code, simfabric.UnifiedDiff(list, tool, c.Stdout, r.Stdout))
				}
			}
		}
	}
}

// TestIbprintFromTheSA: against an SA with RMPP, --sa finds every node
// (multi-port CAs too) and -l --sa lists them, without an SMP.
func TestIbprintFromTheSA(t *testing.T) {
	for _, topo := range []string{"ibsim-2sw2path4hca2port.net", "fattree-50.net"} {
		f := sharedFabric(t, topo)
		file := filepath.Join(t.TempDir(), "fabric.cache")
		writeCCache(t, f, file)
		fab, err := query.LoadCache(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range fab.Nodes {
			tool := map[int]string{1: "ibprintca", 2: "ibprintswitch", 3: "ibprintrt"}[n.Type]
			want := runSim(f, "", tool, "--load-cache", file, fabricdoc.HexGUID(n.GUID))
			s := rmppSAOf(fab)
			got := runWith(s, "ibtool", tool, "--sa", fabricdoc.HexGUID(n.GUID))
			if got.code != 0 || got.stdout != want.Stdout || want.Stdout == "" || s.smps() != 0 {
				t.Errorf("%s: %s --sa %x: exit %d, stderr %q, %d SMPs\n%s", topo, tool, n.GUID, got.code, got.stderr, s.smps(),
					simfabric.UnifiedDiff("cache", "SA", want.Stdout, got.stdout))
			}
		}
		for _, tool := range []string{"ibprintca", "ibprintswitch"} {
			want := runSim(f, "", tool, "-l", "--load-cache", file)
			s := rmppSAOf(fab)
			if got := runWith(s, "ibtool", tool, "-l", "--discovery", "sa"); got.code != 0 || got.stdout != want.Stdout || s.smps() != 0 {
				t.Errorf("%s: %s -l --sa: exit %d, stderr %q\n%s", topo, tool, got.code, got.stderr,
					simfabric.UnifiedDiff("cache", "SA", want.Stdout, got.stdout))
			}
		}
	}
}

func TestIbprintFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"ibprintca", cmdutil.ExitUsage, "a NODE_GUID or -l is needed"},
		{"ibprintca -l 0x100000", cmdutil.ExitUsage, "-l lists every CA: no NODE_GUID"},
		{"ibprintca xyz", cmdutil.ExitUsage, `no CA is named "xyz"`},
		{"ibprintca 1xyz", cmdutil.ExitUsage, `invalid node GUID "1xyz"`},
		{"ibprintca 0x123", cmdutil.ExitFailure, "could not find node 0x0000000000000123"},
		{"ibprintca --sa 0x123", cmdutil.ExitFailure, "could not find node 0x0000000000000123"},
		{"ibprintca 0x200000", cmdutil.ExitFailure, "node 0x0000000000200000 is a switch, not a CA"},
		{"ibprintswitch 0x100000", cmdutil.ExitFailure, "node 0x0000000000100000 is a ca, not a switch"},
		{"ibprintrt --discovery XY 1", cmdutil.ExitUsage, `invalid --discovery "XY"`},
		{"ibprintca --load-cache /nonexistent 0x100000", cmdutil.ExitFailure, "loading cached fabric failed"},
		{"ibprintca 0x100000 0x100003", cmdutil.ExitUsage, "accepts 0 to 1 arguments, received 2"},
	} {
		r := runSim(f, "", strings.Fields(tc.args)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) || r.Stdout != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, r.Code, r.Stderr, r.Stdout, tc.code, tc.msg)
		}
	}
	// GUIDs in every form python-rdma takes.
	want := runSim(f, "", "ibprintca", "0x100000").Stdout
	for _, g := range []string{"100000", "0000000000100000", "0:0:10:0", "0000:0000:0010:0000", "0X100000"} {
		if r := runSim(f, "", "ibprintca", g); r.Stdout != want || r.Code != 0 {
			t.Errorf("ibprintca %s: %+v", g, r)
		}
	}
}

func TestIbprintJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "ibprintswitch", "--json", "0x200001")
	var n fabricdoc.NodeDoc
	if err := json.Unmarshal([]byte(r.Stdout), &n); err != nil || n.NodeGUID != 0x200001 || n.NodeType != "switch" ||
		n.NodeName != "sw2 desc" || len(n.Ports) != 5 || n.Ports[1].Remote == nil || n.Ports[1].Remote.NodeGUID != 0x100006 {
		t.Errorf("%v %+v", err, n)
	}
	r = runSim(f, "", "ibprintca", "--json", "-l")
	var doc struct {
		Nodes []fabricdoc.NodeDoc `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Nodes) != 3 || doc.Nodes[0].NodeType != "ca" {
		t.Errorf("-l: %v %+v", err, doc)
	}
}
