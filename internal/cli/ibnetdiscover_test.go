package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

// discoveryTopologies are the shared topologies with the nodes the tools
// are attached at for comparison ("" is ibsim's default, the first node):
// switches and CAs, at the edge and in the middle.
var discoveryTopologies = []struct {
	topology string
	hosts    []string
}{
	{"tiny.net", []string{"", "Switch2", "Hca1", "Hca3"}},
	{"ibsim-net.net", []string{"", "Switch2", "Hca2"}},
	{"ibsim-net1.net", []string{"", "Hca2"}},
	{"ibsim-2sw2path4hca.net", []string{"", "Switch2", "Hca4"}},
	{"ibsim-2sw2path4hca2port.net", []string{"", "Hca1", "Switch2"}},
	{"fattree-50.net", []string{"", "spine02", "leaf03", "node0030"}},
	{"fattree-200.net", []string{"", "spine04", "node0085"}},
	{"torus-3x3.net", []string{"", "sw-r1c1", "node0010"}},
}

// TestIbnetdiscoverMatchesInfinibandDiags compares every output form of
// ibnetdiscover with infiniband-diags 44 on every shared topology, from
// several attach points: the node order (libibnetdisc's), the links, LIDs,
// speeds, the -s progress lines and -m's MAD count all have to agree.
func TestIbnetdiscoverMatchesInfinibandDiags(t *testing.T) {
	flagSets := []string{"", "-p", "-l", "-H", "-S", "-R", "-s -m", "-g -f", "-o 4 -S -H"}
	for _, tc := range discoveryTopologies {
		t.Run(tc.topology, func(t *testing.T) {
			f := sharedFabric(t, tc.topology)
			for _, host := range tc.hosts {
				for _, flags := range flagSets {
					conformNorm(t, f, host, "ibnetdiscover", strings.Fields(flags)...)
				}
			}
		})
	}
}

// conformNorm is conform with the topology file's timestamp normalised.
func conformNorm(t *testing.T, f *simfabric.Fabric, host, tool string, args ...string) {
	t.Helper()
	simfabric.RequireTools(t, tool)
	c := f.RunC(context.Background(), host, tool, args...)
	ours := runSim(f, host, append([]string{tool}, args...)...)
	label := fmt.Sprintf("[%s] %s %s", host, tool, strings.Join(args, " "))
	simfabric.Compare(t, label, c, ours, simfabric.DropSimNoise, simfabric.Timestamps)
}

func TestIbnetdiscoverWritesTheTopologyFile(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	dir := t.TempDir()
	cFile, ourFile := filepath.Join(dir, "c.topo"), filepath.Join(dir, "ours.topo")
	c := f.RunC(context.Background(), "leaf02", "ibnetdiscover", "-g", cFile)
	ours := runSim(f, "leaf02", "ibnetdiscover", "-g", ourFile)
	simfabric.Compare(t, "ibnetdiscover FILE", c, ours, simfabric.DropSimNoise)
	cText, err1 := os.ReadFile(cFile)
	ourText, err2 := os.ReadFile(ourFile)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if d := simfabric.UnifiedDiff("C tool", "ibtool", simfabric.Timestamps(string(cText)), simfabric.Timestamps(string(ourText))); d != "" {
		t.Errorf("topology files differ:\n%s", d)
	}
	r := runSim(f, "", "ibnetdiscover", filepath.Join(dir, "no", "such", "dir"))
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, "can't open file") {
		t.Errorf("unwritable file: exit %d, %q", r.Code, r.Stderr)
	}
}

// fabricSummary is what must survive a round trip through a topology
// file: nodes (GUID, type, description, ports) and links.
func fabricSummary(t *testing.T, jsonText string) (nodes, links []string) {
	t.Helper()
	var doc fabricdoc.FabricDoc
	if err := json.Unmarshal([]byte(jsonText), &doc); err != nil {
		t.Fatalf("%v: %s", err, jsonText)
	}
	for _, n := range doc.Nodes {
		nodes = append(nodes, fmt.Sprintf("%s %s %q %d", n.NodeGUID, n.NodeType, n.Description, n.NumPorts))
	}
	for _, l := range doc.Links {
		a, b := fmt.Sprintf("%s[%d]", l.A.NodeGUID, l.A.Port), fmt.Sprintf("%s[%d]", l.B.NodeGUID, l.B.Port)
		if b < a {
			a, b = b, a
		}
		links = append(links, a+" "+b)
	}
	sort.Strings(nodes)
	sort.Strings(links)
	return nodes, links
}

// TestIbnetdiscoverTopologyLoadsIntoIbsim feeds the topology file we write
// to a new ibsim and discovers that fabric: it must be the same one.
func TestIbnetdiscoverTopologyLoadsIntoIbsim(t *testing.T) {
	for _, topo := range []string{"tiny.net", "ibsim-2sw2path4hca2port.net", "torus-3x3.net"} {
		t.Run(topo, func(t *testing.T) {
			f := sharedFabric(t, topo)
			file := filepath.Join(t.TempDir(), "discovered.net")
			if r := runSim(f, "", "ibnetdiscover", file); r.Code != 0 {
				t.Fatalf("ibnetdiscover: %v", r)
			}
			before := runSim(f, "", "ibnetdiscover", "--json")
			again := simfabric.StartT(t, file)
			after := runSim(again, "", "ibnetdiscover", "--json")
			n1, l1 := fabricSummary(t, before.Stdout)
			n2, l2 := fabricSummary(t, after.Stdout)
			if strings.Join(n1, "\n") != strings.Join(n2, "\n") || strings.Join(l1, "\n") != strings.Join(l2, "\n") {
				t.Errorf("the fabric loaded from our topology file differs:\nnodes %s\nlinks %s",
					simfabric.UnifiedDiff("before", "after", strings.Join(n1, "\n")+"\n", strings.Join(n2, "\n")+"\n"),
					simfabric.UnifiedDiff("before", "after", strings.Join(l1, "\n")+"\n", strings.Join(l2, "\n")+"\n"))
			}
		})
	}
}

func TestIbnetdiscoverJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "ibnetdiscover", "--json")
	var doc fabricdoc.FabricDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
		t.Fatalf("exit %d, %v: %s", r.Code, err, r.Stdout+r.Stderr)
	}
	if doc.FromNodeGUID == nil || *doc.FromNodeGUID != 0x200000 || doc.FromPort != 0 || doc.MaxHops != 2 || doc.MADs != 29 ||
		len(doc.Nodes) != 5 || len(doc.Links) != 4 || len(doc.Errors) != 0 {
		t.Fatalf("unexpected document %+v", doc)
	}
	sw2 := doc.Nodes[3]
	if sw2.NodeGUID != 0x200001 || sw2.NodeType != "switch" || sw2.Description != "sw2 desc" || sw2.LID == nil ||
		*sw2.LID != 7 || sw2.EnhancedPort0 == nil || !*sw2.EnhancedPort0 || sw2.DRPath != "0,8" {
		t.Errorf("Switch2: %+v", sw2)
	}
	hca3 := doc.Nodes[4]
	if len(hca3.Ports) != 1 || hca3.Ports[0].LID != 4 || hca3.Ports[0].State != 4 || hca3.Ports[0].StateText != "Active" ||
		hca3.Ports[0].Width != "4X" || hca3.Ports[0].SpeedText != "SDR" || hca3.Ports[0].RateGbps != 10 || hca3.Ports[0].RateText != "4X SDR" ||
		hca3.Ports[0].Remote == nil || hca3.Ports[0].Remote.NodeGUID != sw2.NodeGUID || hca3.Ports[0].Remote.NodeName != "sw2 desc" {
		t.Errorf("Hca3: %+v", hca3)
	}
	r = runSim(f, "", "ibnetdiscover", "--json", "-H")
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Nodes) != 3 || doc.Nodes[0].NodeType != "ca" {
		t.Errorf("-H --json: %v %s", err, r.Stdout)
	}
}

// TestIbnetdiscoverGoesOnWhenPartsDoNotAnswer breaks the link to Switch2
// (ibsim drops every MAD through it): the rest is printed, the failures
// are summarised on stderr, and the exit status is ExitIncomplete; through
// the symlink it is 0 as with the C tool (which, on a real fabric, logs a
// timeout for the SMP and goes on).
func TestIbnetdiscoverGoesOnWhenPartsDoNotAnswer(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	if _, err := f.Console(`Error "Switch1"[8] 100`); err != nil {
		t.Fatal(err)
	}
	r := runSim(f, "", "ibnetdiscover", "-t", "50")
	if r.Code != cmdutil.ExitIncomplete || !strings.Contains(r.Stdout, `"Switch1" base port 0 lid 1`) || strings.Contains(r.Stdout, "sw2 desc") ||
		!strings.Contains(r.Stderr, "1 queries failed") || !strings.Contains(r.Stderr, "DR path 0,8: NodeInfo: no reply") ||
		!strings.HasSuffix(r.Stderr, "ibnetdiscover: incomplete: 1 queries failed (1 NodeInfo)\n") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	compat := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName()}), "ibnetdiscover", "-t", "50")
	if compat.code != 0 || compat.stdout != r.Stdout {
		t.Errorf("through the symlink: exit %d", compat.code)
	}
	r = runSim(f, "", "ibnetdiscover", "-t", "50", "--json")
	var doc fabricdoc.FabricDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.Complete || len(doc.Errors) != 1 || doc.Errors[0].DRPath != "0,8" || len(doc.Nodes) != 3 {
		t.Errorf("--json: %v %+v", err, doc)
	}
	// Switch2 answers again: everything is back.
	if _, err := f.Console(`Error "Switch1"[8] 0`); err != nil {
		t.Fatal(err)
	}
	conformNorm(t, f, "", "ibnetdiscover")
}

func TestIbnetdiscoverFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"--diffcheck sw,foo", cmdutil.ExitUsage, "invalid diff check key: foo"},
		{"--bogus", cmdutil.ExitUsage, "unknown flag: --bogus"},
		{"--discovery XY", cmdutil.ExitUsage, `invalid --discovery "XY"`},
		{"--sa --discovery DR", cmdutil.ExitUsage, "cannot be combined with --discovery DR"},
		{"-t 0", cmdutil.ExitFailure, `Invalid timeout "0"`},
		{"-C mlx5_0", cmdutil.ExitFailure, `CA "mlx5_0" not found`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runSim(f, "", append([]string{"ibnetdiscover"}, strings.Fields(tc.args)...)...)
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) || r.Stdout != "" {
				t.Fatalf("got exit %d, stderr %q, stdout %q; want exit %d and %q", r.Code, r.Stderr, r.Stdout, tc.code, tc.msg)
			}
		})
	}
}

// TestIbnetdiscoverModes: LID and DR routing find the same fabric.
func TestIbnetdiscoverModes(t *testing.T) {
	f := sharedFabric(t, "torus-3x3.net")
	want := runSim(f, "node0010", "ibnetdiscover", "-p")
	for _, mode := range []string{"LID", "DR", "dr"} {
		got := runSim(f, "node0010", "ibnetdiscover", "-p", "--discovery", mode)
		if got.Stdout != want.Stdout || got.Code != 0 {
			t.Errorf("--discovery %s: %s", mode, simfabric.UnifiedDiff("auto", mode, want.Stdout, got.Stdout))
		}
	}
}

// TestIbnetdiscoverCacheMatchesInfinibandDiags: the cache file we write
// is byte for byte the C tool's, and each tool reads the other's file to
// the same output, --diff included.
func TestIbnetdiscoverCacheMatchesInfinibandDiags(t *testing.T) {
	dir := t.TempDir()
	caches := map[string]string{}
	for _, topo := range []string{"tiny.net", "fattree-50.net", "torus-3x3.net", "ibsim-2sw2path4hca2port.net"} {
		f := sharedFabric(t, topo)
		cFile, ourFile := filepath.Join(dir, topo+".c"), filepath.Join(dir, topo+".ours")
		c := f.RunC(context.Background(), "", "ibnetdiscover", "--cache", cFile)
		ours := runSim(f, "", "ibnetdiscover", "--cache", ourFile)
		simfabric.Compare(t, topo+" --cache", c, ours, simfabric.DropSimNoise, simfabric.Timestamps)
		cData, err1 := os.ReadFile(cFile)
		ourData, err2 := os.ReadFile(ourFile)
		if err1 != nil || err2 != nil || string(cData) != string(ourData) {
			t.Errorf("%s: cache files differ (%v, %v; %d and %d bytes)", topo, err1, err2, len(cData), len(ourData))
		}
		caches[topo] = cFile
		for _, flags := range []string{"", "-p", "-l", "-s -m", "-g -f"} {
			args := append([]string{"--load-cache", ourFile}, strings.Fields(flags)...)
			c := runDiagsScript(t, "ibnetdiscover", append([]string{"--load-cache", cFile}, strings.Fields(flags)...)...)
			ours := runSim(f, "", append([]string{"ibnetdiscover"}, args...)...)
			simfabric.Compare(t, topo+" "+strings.Join(args, " "), c, ours, simfabric.Timestamps)
		}
	}
	// fattree-50 and the torus share GUIDs (topogen's bases): a rich
	// diff either way.
	for _, pair := range [][2]string{{"torus-3x3.net", "fattree-50.net"}, {"fattree-50.net", "torus-3x3.net"}, {"tiny.net", "tiny.net"}} {
		for _, check := range []string{"", "sw,lid", "sw,ca,nodedesc", "ca,port", "SW,Port,LID", "sw,ca,port,nodedesc", "router"} {
			args := []string{"--load-cache", caches[pair[0]], "--diff", caches[pair[1]]}
			if check != "" {
				args = append(args, "--diffcheck", check)
			}
			c := runDiagsScript(t, "ibnetdiscover", args...)
			ours := runSim(sharedFabric(t, "tiny.net"), "", append([]string{"ibnetdiscover"}, args...)...)
			simfabric.Compare(t, strings.Join(args, " "), c, ours)
		}
	}
	r := runSim(sharedFabric(t, "tiny.net"), "", "ibnetdiscover", "--load-cache", filepath.Join(dir, "missing"))
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, "loading cached fabric failed") {
		t.Errorf("missing cache: exit %d, %q", r.Code, r.Stderr)
	}
	r = runSim(sharedFabric(t, "tiny.net"), "", "ibnetdiscover", "--diff", filepath.Join(dir, "missing"))
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, "loading cached fabric for diff failed") {
		t.Errorf("missing diff cache: exit %d, %q", r.Code, r.Stderr)
	}
}

// TestIbnetdiscoverDiffAgainstTheLiveFabric: a link goes away after the
// cache was written; --diff shows it, as the C tool does.
func TestIbnetdiscoverDiffAgainstTheLiveFabric(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	file := filepath.Join(t.TempDir(), "before.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", file); r.Code != 0 {
		t.Fatal(r)
	}
	if _, err := f.Console(`Unlink "Hca2"[1]`); err != nil {
		t.Fatal(err)
	}
	for _, check := range []string{"", "sw,ca,port,lid,nodedesc"} {
		args := []string{"--diff", file}
		if check != "" {
			args = append(args, "--diffcheck", check)
		}
		conformNorm(t, f, "", "ibnetdiscover", args...)
	}
	if r := runSim(f, "", "ibnetdiscover", "--diff", file); !strings.Contains(r.Stdout, `< [4]	"H-0000000000100003"[1]`) {
		t.Errorf("the lost link is not in the diff:\n%s", r.Stdout)
	}
}

// TestIbnetdiscoverMellanoxExtendedPortInfo: on Mellanox devices at QDR
// libibnetdisc also asks for the vendor's extended PortInfo (FDR10), which
// changes its SMP order and the speed column; ibdiag.conf MLX_EPI=false
// turns that off.
func TestIbnetdiscoverMellanoxExtendedPortInfo(t *testing.T) {
	base, err := os.ReadFile(simfabric.TopologyPath("fattree-50.net"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "ibdiag.conf")
	if err := os.WriteFile(conf, []byte("MLX_EPI=false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, speed := range []string{"QDR", "FDR10"} {
		t.Run(speed, func(t *testing.T) {
			topo := filepath.Join(dir, speed+".net")
			if err := os.WriteFile(topo, []byte(strings.ReplaceAll(string(base), "4xEDR", "4x"+speed)), 0o644); err != nil {
				t.Fatal(err)
			}
			f := simfabric.StartT(t, topo)
			for _, flags := range []string{"", "-p", "-s -m", "-f", "-z " + conf + " -m"} {
				conformNorm(t, f, "", "ibnetdiscover", strings.Fields(flags)...)
				conformNorm(t, f, "node0030", "ibnetdiscover", strings.Fields(flags)...)
			}
		})
	}
}

// TestIbnetdiscoverWithoutSM: no subnet manager, so no LIDs and ports in
// Init. The walk goes by directed route only; the output still matches.
func TestIbnetdiscoverWithoutSM(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("ibsim-2sw2path4hca2port.net"), NoSM: true})
	for _, host := range []string{"", "Hca1"} {
		for _, flags := range []string{"", "-p", "-s -m"} {
			conformNorm(t, f, host, "ibnetdiscover", strings.Fields(flags)...)
		}
	}
}

func TestIbnetdiscoverNodeNameMap(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	file := filepath.Join(t.TempDir(), "names")
	if err := os.WriteFile(file, []byte("0x200001 \"core switch\"\n0x100006 lone-host # comment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range []string{"", "-p", "-l", "-g"} {
		conformNorm(t, f, "", "ibnetdiscover", append([]string{"--node-name-map", file}, strings.Fields(flags)...)...)
	}
}
