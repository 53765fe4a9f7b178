package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// libibnetdisc logs an internal error when a walk reads a CA's PortInfo a
// second time (a partial scan that backs up from a CA): noise that says
// nothing about the fabric, which ibtool does not repeat.
var libibnetdiscNoise = regexp.MustCompile(`(?m)^\./libibnetdisc/ibnetdisc\.c:\d+; (Duplicate Port: Port with guid|Error Occurred when trying to insert new port guid) .*\n`)

// conformLinks runs a command with both tools on a fabric and compares
// them, the C tool's libibnetdisc noise aside.
//
// A walk that misses something (a partial scan whose routes lead nowhere)
// exits 0 through the symlink, as the C tool does, and ExitIncomplete as
// `ibtool iblinkinfo`; so the tool is compared through its symlink, and
// `ibtool <tool>` must print the same and exit the same, or
// ExitIncomplete after its summary line where the walk missed something.
func conformLinks(t testing.TB, f *simfabric.Fabric, host, tool string, args ...string) {
	t.Helper()
	label := fmt.Sprintf("[%s] %s %s", host, tool, strings.Join(args, " "))
	compat := conformLinksCompat(t, f, host, tool, args...)
	ours := runSim(f, host, append([]string{tool}, args...)...)
	incomplete := strings.Contains(ours.Stderr, tool+": incomplete: ")
	if ours.Stdout != compat.Stdout || (ours.Code != compat.Code && !(incomplete && compat.Code == 0 && ours.Code == cmdutil.ExitIncomplete)) {
		t.Errorf("%s: as ibtool %s: exit %d, through the symlink %d; stdout the same: %v", label, tool, ours.Code, compat.Code, ours.Stdout == compat.Stdout)
	}
}

// partialScans picks the starts of partial scans on a fabric seen from
// host: -D to a few switches and CAs (and the local node), -S to a few CA
// ports (a -S to a switch makes the C tool hang under ibsim: it routes
// by LID, then directed, which ibsim drops).
func partialScans(t *testing.T, f *simfabric.Fabric, host string) []string {
	t.Helper()
	r := runSim(f, host, "ibnetdiscover", "--json")
	var doc fabricdoc.FabricDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	var sws, cas []fabricdoc.NodeDoc
	for _, n := range doc.Nodes {
		if n.NodeType == "switch" {
			sws = append(sws, n)
		} else {
			cas = append(cas, n)
		}
	}
	starts := []string{"-D 0"}
	pick := func(ns []fabricdoc.NodeDoc, k int) []fabricdoc.NodeDoc {
		if len(ns) <= k {
			return ns
		}
		return append(append([]fabricdoc.NodeDoc(nil), ns[:k-1]...), ns[len(ns)-1])
	}
	for _, n := range append(pick(sws, 3), pick(cas, 2)...) {
		if n.DRPath != "" && n.DRPath != "0" {
			starts = append(starts, "-D "+n.DRPath)
		}
	}
	for _, n := range pick(cas, 2) {
		starts = append(starts, "-S "+n.Ports[0].PortGUID.String())
	}
	return starts
}

// TestIblinkinfoMatchesInfinibandDiags compares every output form of
// iblinkinfo with infiniband-diags 44 on every shared topology, from
// several attach points, full and partial scans.
func TestIblinkinfoMatchesInfinibandDiags(t *testing.T) {
	flagSets := []string{"", "-l", "-p", "-d", "--switches-only", "--cas-only", "-l -p -d", "-n 1", "-n 2", "-o 4 --cas-only -l"}
	for _, tc := range discoveryTopologies {
		t.Run(tc.topology, func(t *testing.T) {
			f := sharedFabric(t, tc.topology)
			for i, host := range tc.hosts {
				for _, flags := range flagSets {
					conformLinks(t, f, host, "iblinkinfo", strings.Fields(flags)...)
				}
				if i > 1 {
					continue
				}
				for _, start := range partialScans(t, f, host) {
					for _, flags := range []string{"", "-a", "-a -n 2", "-l --switches-only"} {
						conformLinks(t, f, host, "iblinkinfo", strings.Fields(start+" "+flags)...)
					}
				}
			}
		})
	}
}

// TestIblinkinfoPartialScanOddities: directed routes read as libibmad
// reads them, a route through a CA, a route nowhere.
func TestIblinkinfoPartialScanOddities(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, args := range []string{"-D abc", "-D 1,8", "-D 0,,8", "-D 0,8x", "-D ,8", "-D 0,8,1", "-D 0,8,1 -a",
		"-D 0,4 -a", "-D 0,8,1,4", "-D 0,9", "-S xyz", "-S 0x100004 -a", "-S 0x100004 --switches-only",
		"-G 0x100007", "-D 0,8 -S 0x100004", "-D 0,8 --cas-only", "-a", "-n abc"} {
		nowhere := args == "-D 0,8,1,4" || args == "-D 0,9" // both tools fail (exit 1)
		conformLinks(cFails(t, nowhere), f, "", "iblinkinfo", strings.Fields(args)...)
	}
}

// TestIblinkinfoSwitchByGUID: the C tool hangs on -S of a switch under
// ibsim (see partialScans), so -S is checked against the C tool's -D along
// the route LID routing takes, which is what it scans on a real fabric.
func TestIblinkinfoSwitchByGUID(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	r := runSim(f, "", "ibnetdiscover", "--json")
	var doc fabricdoc.FabricDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	port, err := umad.NewSim(umad.SimConfig{SockName: f.SockName()}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Timeout: time.Second, Retries: 2})
	defer eng.Close()
	for _, n := range doc.Nodes {
		if n.NodeType != "switch" {
			continue
		}
		path, err := discovery.RouteToLID(context.Background(), eng, *n.LID, 0)
		if err != nil {
			t.Fatalf("%s: %v", n.NodeName, err)
		}
		for _, flags := range []string{"", "-a", "-a -n 2"} {
			byGUID := runSim(f, "", append([]string{"iblinkinfo", "-S", n.NodeGUID.String()}, strings.Fields(flags)...)...)
			c := f.RunC(context.Background(), "", "iblinkinfo", append([]string{"-D", mad.FormatDRPath(path)}, strings.Fields(flags)...)...)
			if byGUID.Code != 0 || byGUID.Stdout != c.Stdout || byGUID.Stdout == "" {
				t.Errorf("-S %s %s differs from the C tool's -D %s:\n%s", n.NodeGUID, flags, mad.FormatDRPath(path),
					simfabric.UnifiedDiff("C -D", "ibtool -S", c.Stdout, byGUID.Stdout))
			}
		}
	}
}

// writeCCache writes a cache of a fabric with the C ibnetdiscover.
func writeCCache(t *testing.T, f *simfabric.Fabric, file string) {
	t.Helper()
	if r := f.RunC(context.Background(), "", "ibnetdiscover", "--cache", file); r.Code != 0 {
		t.Fatalf("ibnetdiscover --cache: %v", r)
	}
}

// TestIblinkinfoCachesMatchInfinibandDiags: --load-cache, --diff in both
// directions with every --diffcheck, --filterdownports, on caches of
// fabrics that share GUIDs (fattree-50 and the torus). The C tool crashes
// on a node whose description or switch LID differs (print_node_header
// without a counter) unless -l is given; those are compared in line mode
// only.
func TestIblinkinfoCachesMatchInfinibandDiags(t *testing.T) {
	dir := t.TempDir()
	caches := map[string]string{}
	for _, topo := range []string{"fattree-50.net", "torus-3x3.net", "ibsim-2sw2path4hca2port.net"} {
		caches[topo] = filepath.Join(dir, topo+".cache")
		writeCCache(t, sharedFabric(t, topo), caches[topo])
	}
	f := sharedFabric(t, "tiny.net") // the C tool opens a port even to read a cache
	for _, file := range caches {
		for _, flags := range []string{"", "-l", "-d -p", "--switches-only", "--filterdownports " + file} {
			conformLinks(t, f, "", "iblinkinfo", append([]string{"--load-cache", file}, strings.Fields(flags)...)...)
		}
	}
	for _, pair := range [][2]string{{"fattree-50.net", "torus-3x3.net"}, {"torus-3x3.net", "fattree-50.net"}, {"fattree-50.net", "fattree-50.net"}} {
		base := []string{"--load-cache", caches[pair[0]], "--diff", caches[pair[1]]}
		for _, check := range []string{"", "port", "state", "lid", "port,state", "PORT,Lid", "nodedesc", "port,nodedesc", "port,state,lid,nodedesc"} {
			args := base
			if check != "" {
				args = append(append([]string(nil), base...), "--diffcheck", check)
			}
			conformLinks(t, f, "", "iblinkinfo", append(args, "-l")...)
			if !strings.Contains(check, "nodedesc") {
				conformLinks(t, f, "", "iblinkinfo", args...)
				conformLinks(t, f, "", "iblinkinfo", append(args, "--cas-only")...)
			}
		}
	}
}

// TestIblinkinfoAfterALinkGoesDown: caches before and after an Unlink on a
// fabric of our own, then every view of the change.
func TestIblinkinfoAfterALinkGoesDown(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.cache"), filepath.Join(dir, "after.cache")
	writeCCache(t, f, before)
	if _, err := f.Console(`Unlink "Hca2"[1]`); err != nil {
		t.Fatal(err)
	}
	writeCCache(t, f, after)
	for _, args := range []string{"", "-d", "-d -l", "--diff " + before, "--diff " + before + " --diffcheck port",
		"--diff " + before + " --diffcheck state", "--diff " + before + " --diffcheck port,lid",
		"--load-cache " + after + " --diff " + before, "--load-cache " + before + " --diff " + after,
		"--filterdownports " + before, "--filterdownports " + after, "-d --filterdownports " + after,
		"--diff " + before + " -D 0", "--diff " + before + " --switches-only", "--diff " + before + " -l",
		"--load-cache " + before + " -S 0x200001 -a", "-D 0,4", "-S 0x100001"} {
		conformLinks(cFails(t, args == "-D 0,4"), f, "", "iblinkinfo", strings.Fields(args)...) // the lost link's route fails
	}
	r := runSim(f, "", "iblinkinfo", "--diff", before)
	if !strings.Contains(r.Stdout, "< CA: Hca2:\n") || !strings.Contains(r.Stdout, ">            1    4[  ] ==(                Down/ Polling)==>") {
		t.Errorf("the lost link is not in the diff:\n%s", r.Stdout)
	}
}

// TestIblinkinfoWhenPartsDoNotAnswer: a port that drops every MAD; the
// rest prints as the C tool prints it, the failure is summarised. Through
// the symlink the exit status is the C tool's; as `ibtool iblinkinfo` it
// is ExitIncomplete, and the JSON says complete: false.
func TestIblinkinfoWhenPartsDoNotAnswer(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	if _, err := f.Console(`Error "Switch1"[8] 100`); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"", "-l", "-n 1", "-D 0 -a", "-D 0,8"} {
		conformLinksCompat(cFails(t, args == "-D 0,8"), f, "", "iblinkinfo", strings.Fields(args)...) // a route through the port fails
	}
	r := runSim(f, "", "iblinkinfo", "-l")
	if r.Code != cmdutil.ExitIncomplete || !strings.HasSuffix(r.Stderr, "iblinkinfo: incomplete: 1 queries failed (1 NodeInfo)\n") {
		t.Errorf("ibtool iblinkinfo: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = runSim(f, "", "iblinkinfo", "--json")
	var doc render.LinkInfoDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.Complete || len(doc.Errors) != 1 || doc.Errors[0].DRPath != "0,8" {
		t.Errorf("--json: %v complete %v %+v", err, doc.Complete, doc.Errors)
	}
	cr := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName()}), "iblinkinfo", "--fail-incomplete")
	if cr.code != cmdutil.ExitIncomplete {
		t.Errorf("iblinkinfo --fail-incomplete through the symlink: exit %d", cr.code)
	}
	// ibfindnodesusing walks too: its JSON and exit say the same.
	r = runSim(f, "", "ibfindnodesusing", "--json", "0x200000", "1")
	var found struct {
		Complete *bool `json:"complete"`
		Errors   []any `json:"errors"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &found); err != nil || r.Code != cmdutil.ExitIncomplete || found.Complete == nil || *found.Complete || len(found.Errors) != 1 {
		t.Errorf("ibfindnodesusing --json: exit %d, %v, complete %v, errors %v", r.Code, err, found.Complete, found.Errors)
	}
}

// conformLinksCompat compares the C tool with ibtool run through the
// tool's symlink, and returns ibtool's result.
func conformLinksCompat(t testing.TB, f *simfabric.Fabric, host, tool string, args ...string) simfabric.Result {
	t.Helper()
	simfabric.RequireTools(t, tool)
	c := f.RunC(context.Background(), host, tool, args...)
	c.Stderr = libibnetdiscNoise.ReplaceAllString(c.Stderr, "")
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}), append([]string{tool}, args...)...)
	ours := simfabric.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
	simfabric.Compare(t, fmt.Sprintf("[%s] %s %s", host, tool, strings.Join(args, " ")), c, ours, simfabric.DropSimNoise)
	return ours
}

func TestIblinkinfoFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	// Exit codes and stderr classes as the C tool's.
	// (IBEXIT's message goes to stdout in the C tool, to stderr in ours:
	// -t 0, a --diff or --filterdownports cache that does not load.)
	for _, args := range []string{"-g", "-R", "--diffcheck foo", "--load-cache " + missing,
		"-D 0,8 --load-cache " + missing, "-D 0,8,1,4", "--bogus"} {
		conformLinks(simfabric.ExpectFailure(t), f, "", "iblinkinfo", strings.Fields(args)...)
	}
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"--diffcheck sw", cmdutil.ExitUsage, "invalid diff check key: sw"},
		{"--load-cache " + missing, 1, "loading cached fabric failed"},
		{"--diff " + missing, cmdutil.ExitFailure, "loading cached fabric for diff failed"},
		{"--filterdownports " + missing, cmdutil.ExitFailure, "loading cached fabric for filterdownports failed"},
		{"-t 0", cmdutil.ExitFailure, `Invalid timeout "0"`},
		{"-D 0,8 --load-cache x", 1, "Cannot specify cache and direct route path"},
		{"-D 0,8,1,4", 1, "Failed to get local Node Info"},
		{"--discovery XY", cmdutil.ExitUsage, `invalid --discovery "XY"`},
		{"--sa --discovery DR", cmdutil.ExitUsage, "cannot be combined with --discovery DR"},
		{"-C mlx5_9", 1, "Failed to open mlx5_9 port 0"},
	} {
		r := runSim(f, "", append([]string{"iblinkinfo"}, strings.Fields(tc.args)...)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) || r.Stdout != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, r.Code, r.Stderr, r.Stdout, tc.code, tc.msg)
		}
	}
	// -S of a port nobody has: the C tool's warning, then a full scan.
	r := runSim(f, "", "iblinkinfo", "-S", "0x1234")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "Failed to resolve 0x1234; attempting full scan") ||
		!strings.Contains(r.Stderr, "Failed to find port: 0x1234") {
		t.Errorf("-S 0x1234: %+v", r)
	}
}

func TestIblinkinfoNodeNameMap(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	m := filepath.Join(t.TempDir(), "map")
	if err := os.WriteFile(m, []byte("0x200001 \"second switch\"\n0x100006 hca-three # c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range []string{"", "-l", "-D 0,8"} {
		conformLinks(t, f, "", "iblinkinfo", append([]string{"--node-name-map", m}, strings.Fields(flags)...)...)
	}
}

func TestIblinkinfoJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "iblinkinfo", "--json", "-p")
	var doc render.LinkInfoDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
		t.Fatalf("exit %d, %v: %s", r.Code, err, r.Stdout+r.Stderr)
	}
	if len(doc.Nodes) != 5 || doc.Nodes[0].NodeName != "Hca3" || doc.Nodes[1].NodeType != "switch" || len(doc.Nodes[1].Ports) != 4 {
		t.Fatalf("nodes: %+v", doc.Nodes)
	}
	sw2 := doc.Nodes[1]
	p1, p2 := sw2.Ports[0], sw2.Ports[1]
	if sw2.LID == nil || *sw2.LID != 7 || p1.Width != "4X" || p1.LaneSpeedGbps != 2.5 || p1.RateGbps != 10 || p1.SpeedText != "SDR" ||
		p1.State != 4 || p1.StateText != "Active" ||
		p1.CouldBeWidth != "12X" || p1.CouldBeLaneSpeedGbps != 10 || p1.CouldBeSpeedText != "10.0 Gbps" || p1.HOQLife == nil || p1.Remote == nil ||
		p1.Remote.NodeName != "Hca3" || p1.Remote.NodeType != "ca" || p1.Remote.LID != 4 || p1.Remote.PortGUID != 0x100007 {
		t.Errorf("Switch2 port 1: %+v %+v", p1, p1.Remote)
	}
	if p2.StateText != "Down" || p2.PhysicalState != 2 || p2.PhysicalStateText != "Polling" || p2.Width != "" || p2.Remote != nil || p2.HOQLife != nil {
		t.Errorf("Switch2 port 2: %+v", p2)
	}
	// -d and --cas-only shape the document as they shape the text.
	r = runSim(f, "", "iblinkinfo", "--json", "-d", "--switches-only")
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Nodes) != 2 || len(doc.Nodes[0].Ports) != 2 {
		t.Errorf("-d --switches-only: %v %+v", err, doc.Nodes)
	}
}

// TestIblinkinfoOnAGeneratedFatTree: a 1000-node three-level fat tree
// (topogen preset S1000), full and partial scans.
func TestIblinkinfoOnAGeneratedFatTree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 1000-node fabric")
	}
	f := generatedFabric(t, "S1000") // shared with ibqueryerrors' test
	for _, args := range []string{"", "-l -p", "--switches-only -d", "-n 2", "-D 0,1 -a", "-D 0,1,19 -a -n 2"} {
		conformLinks(t, f, "node0002", "iblinkinfo", strings.Fields(args)...)
	}
}

// ibnetdiscover's text of a big fabric is formatted on several goroutines
// (formatInOrder); it must still be the C tool's, in the C tool's order.
func TestIbnetdiscoverOnAGeneratedFatTree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 1000-node fabric")
	}
	f := generatedFabric(t, "S1000")
	for _, args := range []string{"", "-g", "-p", "--full -s"} {
		conformNorm(t, f, "node0002", "ibnetdiscover", strings.Fields(args)...)
	}
}

// ---------------------------------------------------------------------
// --sa against a fake SA: ibsim has no RMPP (a GetTable reply is one MAD,
// cut after 200 bytes of records), so the SA walk is tested on a port
// that answers GetTable as a real SA does, in RMPP segments that the
// engine acknowledges and reassembles.
// ---------------------------------------------------------------------

// rmppSA is a transport whose port is on a fabric whose SA (umadtest's,
// which sends GetTable replies in RMPP segments) holds a fabric's
// records. SMPs are handed back undelivered.
type rmppSA struct {
	*umadtest.Opener
	sa    *umadtest.SA
	local umad.PortInfo
}

// smps says how many SMPs were sent: --sa must send none.
func (s *rmppSA) smps() int { return len(s.Requests(mad.ClassSubnLID, mad.ClassSubnDR)) }

// rmppSAOf is what OpenSM's SA holds for a fabric (a NodeRecord per end
// port, a PortInfoRecord per port, a LinkRecord per link end, a
// SwitchInfoRecord per switch), attached at the port discovery started
// at.
func rmppSAOf(f *discovery.Fabric) *rmppSA {
	s := &rmppSA{sa: umadtest.NewSA()}
	add := func(_ uint16, r mad.Struct) { s.sa.Add(r) }
	lidOf := func(p *discovery.Port) uint16 {
		if p.Node.Type == discovery.NodeSwitch {
			return p.Node.SMALID
		}
		return p.BaseLID
	}
	for _, n := range f.Nodes {
		nodeRec := func(p *discovery.Port) {
			r := &mad.NodeRecord{LID: lidOf(p)}
			_ = r.NodeInfo.Unmarshal(n.NodeInfo)
			r.NodeInfo.PortGUID, r.NodeInfo.LocalPortNum = mad.GUID(p.GUID), uint8(p.Num)
			_ = r.NodeDescription.Unmarshal(n.NodeDesc)
			add(mad.AttrNodeRecord, r)
		}
		if n.Type == discovery.NodeSwitch {
			nodeRec(n.Port(0))
			r := &mad.SwitchInfoRecord{LID: n.SMALID}
			_ = r.SwitchInfo.Unmarshal(n.SwitchInfo)
			add(mad.AttrSwitchInfoRecord, r)
		}
		for _, p := range n.Ports {
			if p == nil || p.PortInfo == nil {
				continue
			}
			if n.Type != discovery.NodeSwitch {
				nodeRec(p)
			}
			r := &mad.PortInfoRecord{EndPortLID: lidOf(p), PortNum: uint8(p.Num)}
			_ = r.PortInfo.Unmarshal(p.PortInfo)
			add(mad.AttrPortInfoRecord, r)
			if p.Remote != nil {
				add(mad.AttrLinkRecord, &mad.LinkRecord{FromLID: lidOf(p), FromPort: uint8(p.Num), ToPort: uint8(p.Remote.Num), ToLID: lidOf(p.Remote)})
			}
		}
	}
	from := f.From.Port(f.FromPort)
	if from == nil { // a cache does not say which port of a CA
		for _, p := range f.From.Ports {
			if p != nil && p.Remote != nil {
				from = p
				break
			}
		}
	}
	s.local = umad.PortInfo{CA: "fake0", Num: from.Num, LID: lidOf(from), SMLID: 1, State: 4, PhysState: 5,
		PortGUID: from.GUID, GIDPrefix: 0xfe80000000000000}
	if f.From.Type == discovery.NodeSwitch {
		s.local.Num = 0
	}
	s.Opener = umadtest.NewOpener(umadtest.Classes{mad.ClassSubnAdm: s.sa.Answer}.Answer, umadtest.WithInfo(s.local))
	return s
}

// TestIblinkinfoFromTheSA: the SA walk prints what the SMP walk prints,
// and sends no SMP.
func TestIblinkinfoFromTheSA(t *testing.T) {
	dir := t.TempDir()
	for _, topo := range []string{"tiny.net", "ibsim-2sw2path4hca2port.net", "fattree-50.net", "torus-3x3.net"} {
		f := sharedFabric(t, topo)
		file := filepath.Join(dir, topo+".cache")
		writeCCache(t, f, file)
		fab, err := query.LoadCache(file)
		if err != nil {
			t.Fatal(err)
		}
		s := rmppSAOf(fab)
		for _, flags := range []string{"", "-l -p", "--switches-only -d", "-S " + fabricdoc.HexGUID(s.local.PortGUID)} {
			want := runSim(f, "", append([]string{"iblinkinfo", "--load-cache", file}, strings.Fields(flags)...)...)
			for _, sel := range []string{"--sa", "--discovery=SA"} {
				s = rmppSAOf(fab)
				got := runWith(s, append([]string{"ibtool", "iblinkinfo", sel}, strings.Fields(flags)...)...)
				if got.code != 0 || got.stdout != want.Stdout || got.stderr != "" {
					t.Errorf("%s: iblinkinfo %s %s: exit %d, stderr %q\n%s", topo, sel, flags, got.code, got.stderr,
						simfabric.UnifiedDiff("SMP walk", "SA walk", want.Stdout, got.stdout))
				}
				tables, segs := s.sa.Stats()
				if s.smps() != 0 || tables != 4 {
					t.Errorf("%s: %d SMPs, %d GetTable queries; want none and 4", topo, s.smps(), tables)
				}
				if topo == "fattree-50.net" && segs < 20 {
					t.Errorf("%s: only %d segments: the tables should need many", topo, segs)
				}
			}
		}
	}
}

// TestIblinkinfoWithoutSM: no subnet manager, so no LIDs and no SA: the
// walk goes by directed route, -S cannot be resolved (a warning, then a
// full scan), ports show Initialize.
func TestIblinkinfoWithoutSM(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("tiny.net"), NoSM: true})
	for _, args := range []string{"", "-l -p", "-D 0,8 -a", "-S 0x100004", "-n 1"} {
		conformLinks(t, f, "", "iblinkinfo", strings.Fields(args)...)
	}
	if r := runSim(f, "", "iblinkinfo"); !strings.Contains(r.Stdout, "Initialize/  LinkUp)==>") {
		t.Errorf("ports are not in Init:\n%s", r.Stdout)
	}
}

// A -D hop that is no port number: the C tool cuts it to a byte (264 is
// port 8), and so does the symlink; `ibtool iblinkinfo` refuses it, as
// smpquery and smpdump do.
func TestIblinkinfoRefusesAHopBeyondAByte(t *testing.T) {
	for _, path := range []string{"0,257", "0,300", "0,8,-1"} {
		r := runWith(nil, "ibtool", "iblinkinfo", "-D", path)
		if r.code != cmdutil.ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, `iblinkinfo: invalid directed route "`+path+`": hop`) ||
			!strings.Contains(r.stderr, "is not a port number 0..254") {
			t.Errorf("-D %s: exit %d, stderr %q", path, r.code, r.stderr)
		}
	}
	f := sharedFabric(t, "tiny.net")
	conformLinksCompat(t, f, "", "iblinkinfo", "-D", "0,264")
}
