package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/diagnose"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/topofile"
)

// diagDoc is diagnose's --json, as a script reads it.
type diagDoc struct {
	Complete *bool `json:"complete"`
	Summary  []struct {
		Check    string `json:"check"`
		Errors   int    `json:"errors"`
		Warnings int    `json:"warnings"`
		Skipped  string `json:"skipped"`
	} `json:"summary"`
	Findings []diagFinding `json:"findings"`
}

type diagFinding struct {
	Check    string `json:"check"`
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	NodeGUID string `json:"node_guid"`
	NodeName string `json:"node_name"`
	Port     *int   `json:"port"`
	Remote   *struct {
		NodeGUID string `json:"node_guid"`
		NodeName string `json:"node_name"`
		Port     int    `json:"port"`
	} `json:"remote"`
}

func (f diagFinding) String() string {
	s := f.Code + " at " + f.NodeName
	if f.Port != nil {
		s += fmt.Sprintf("[%d]", *f.Port)
	}
	if f.Remote != nil {
		s += fmt.Sprintf(" -> %s[%d]", f.Remote.NodeName, f.Remote.Port)
	}
	return s
}

// diagJSON runs diagnose --json with args and decodes what it printed.
// The counters are read once unless args give an --interval.
func diagJSON(t *testing.T, f *simfabric.Fabric, args ...string) (diagDoc, simfabric.Result) {
	t.Helper()
	r := runSim(f, "", append([]string{"diagnose", "--json", "--interval", "0"}, args...)...)
	var doc diagDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.Complete == nil {
		t.Fatalf("diagnose --json %v: exit %d, %v\n%s%s", args, r.Code, err, r.Stdout, r.Stderr)
	}
	return doc, r
}

// problems are the findings that are not info, as "code at node[port] ->
// remote[port]".
func problems(doc diagDoc) []string {
	var out []string
	for _, f := range doc.Findings {
		if f.Severity != "info" {
			out = append(out, f.String())
		}
	}
	return out
}

// TestDiagnoseCleanFatTree: a fat tree as OpenSM sets it up has nothing
// wrong: no error and no warning, exit 0; the text shows the summary
// table; the infos are the MASTER and how the counters were read, 1 s
// apart, while every MAD moved the data counters.
func TestDiagnoseCleanFatTree(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	doc, r := diagJSON(t, f, "--interval", "1")
	if r.Code != 0 || !*doc.Complete || len(problems(doc)) != 0 {
		t.Fatalf("exit %d, complete %v, findings %v\n%s", r.Code, *doc.Complete, problems(doc), r.Stderr)
	}
	var infos []string
	for _, f := range doc.Findings {
		infos = append(infos, f.Code)
	}
	// The MASTER, the counters' interval, the routes' hop counts and
	// balance, the credit-loop graph (OpenSM's minhop on a fat tree has
	// no loop).
	if strings.Join(infos, " ") != "sm.sm counters.interval routing.balance routing.hops credit_loops.graph" ||
		doc.Findings[0].NodeName != "node0001 HCA-1" || !strings.Contains(doc.Findings[1].Message, "the counters of 120 ports read twice") {
		t.Errorf("findings %+v, want the MASTER's sm.sm, counters.interval and the routing facts", doc.Findings)
	}
	var checks []string
	skipped := map[string]string{}
	for _, s := range doc.Summary {
		checks = append(checks, s.Check)
		skipped[s.Check] = s.Skipped
	}
	if strings.Join(checks, " ") != "walk ids sm nodes links counters pkeys topology routing credit_loops multicast" || skipped["topology"] == "" ||
		skipped["pkeys"] != "no switch port enforces partitions" {
		t.Errorf("summary %+v", doc.Summary)
	}
	text := runSim(f, "", "diagnose", "--interval", "0")
	if text.Code != 0 || !strings.Contains(text.Stdout, "| links        |      0 |        0 |") ||
		!strings.HasPrefix(text.Stdout, "Fabric: 50 nodes (6 switches, 44 CAs, 0 routers), 60 links; the sweep read everything\n") {
		t.Errorf("text: exit %d\n%s%s", text.Code, text.Stdout, text.Stderr)
	}
}

// TestDiagnoseLoadIsTheSame: what --output-dir keeps, --load judges to
// the byte the same, text and JSON, with the configuration it was judged
// by (--expect-speed, --expect); and the page --html writes.
func TestDiagnoseLoadIsTheSame(t *testing.T) {
	f := sharedFabric(t, "checks.net")
	dir := t.TempDir()
	expect := filepath.Join(dir, "expect.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", expect); r.Code != 0 {
		t.Fatal(r)
	}
	out, page := filepath.Join(dir, "out"), filepath.Join(dir, "report.html")
	live := runSim(f, "", "diagnose", "--json", "--interval", "0.2", "--expect-speed", "QDR", "--expect", expect, "--output-dir", out, "--html", page)
	offline := runSim(f, "", "diagnose", "--json", "--load", out)
	if live.Code != diagnose.ExitFindings || live.Stdout != offline.Stdout || offline.Code != live.Code {
		t.Errorf("live (exit %d) and --load (exit %d) differ:\n%s", live.Code, offline.Code,
			simfabric.UnifiedDiff("live", "load", live.Stdout, offline.Stdout))
	}
	for _, name := range []string{"fabric.cache", "fabric.cache.ibtool", "snapshot.json", "counters.data", "expected.cache", "tables.json", "tables.data"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	// (The SM's activity count moves on: each live run is its own.)
	out2 := filepath.Join(dir, "out2")
	liveText := runSim(f, "", "diagnose", "--all", "--interval", "0.2", "--expect-speed", "QDR", "--expect", expect, "--output-dir", out2)
	offlineText := runSim(f, "", "diagnose", "--all", "--load", out2)
	if liveText.Stdout != offlineText.Stdout || !strings.Contains(offlineText.Stdout, "links.below_expected_speed") {
		t.Errorf("text differs:\n%s", simfabric.UnifiedDiff("live", "load", liveText.Stdout, offlineText.Stdout))
	}
	// The command line wins over what was saved.
	if r := runSim(f, "", "diagnose", "--load", out, "--expect-speed", "SDR"); strings.Contains(r.Stdout, "below_expected_speed") {
		t.Errorf("--expect-speed SDR on --load still finds links below QDR:\n%s", r.Stdout)
	}
	html, err := os.ReadFile(page)
	if err != nil || !strings.HasPrefix(string(html), "<!DOCTYPE html>") || !strings.Contains(string(html), `"code":"links.below_expected_speed"`) {
		t.Errorf("--html: %v\n%.300s", err, html)
	}
}

// TestDiagnoseExpectedWidthAndSpeed: on checks.net every link runs at
// 12X QDR but Sw1[2]-HcaB[1] (4X) and Sw2[2]-HcaC[2] (SDR): exactly
// those are below --expect-width 12X and --expect-speed QDR, and below
// what both their ends support (a warning: their ends are enabled for
// no more).
func TestDiagnoseExpectedWidthAndSpeed(t *testing.T) {
	f := sharedFabric(t, "checks.net")
	below := "links.below_supported_speed at host c[2] -> sw two[2]\nlinks.below_supported_width at host b[1] -> sw one[2]"
	doc, r := diagJSON(t, f, "--expect-width", "12x", "--expect-speed", "qdr")
	want := "links.below_expected_speed at host c[2] -> sw two[2]\nlinks.below_expected_width at host b[1] -> sw one[2]\n" + below
	if got := strings.Join(problems(doc), "\n"); got != want || r.Code != diagnose.ExitFindings {
		t.Errorf("exit %d, findings:\n%s\nwant:\n%s", r.Code, got, want)
	}
	if doc, r := diagJSON(t, f, "--expect-width", "4X", "--expect-speed", "SDR"); strings.Join(problems(doc), "\n") != below || r.Code != 0 {
		t.Errorf("at 4X SDR: exit %d, %v", r.Code, problems(doc))
	}
}

// TestDiagnoseExpectAfterUnlink: the fabric saved (as ibnetdiscover's
// text and as a cache) before a link between two switches is unplugged:
// the diagnosis finds exactly that link missing, at that place, and
// nothing else. The topology file read back is the fabric it was
// printed from.
func TestDiagnoseExpectAfterUnlink(t *testing.T) {
	f := simfabric.StartT(t, "fattree-50.net")
	dir := t.TempDir()
	topo, cache := filepath.Join(dir, "before.topo"), filepath.Join(dir, "before.cache")
	r := runSim(f, "", "ibnetdiscover", "--cache", cache)
	if r.Code != 0 {
		t.Fatal(r)
	}
	if err := os.WriteFile(topo, []byte(r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	parsed, err := topofile.ReadFile(topo)
	if err != nil {
		t.Fatal(err)
	}
	walked, err := query.LoadCache(cache)
	if err != nil {
		t.Fatal(err)
	}
	if d := discovery.Compare(walked, parsed.Fabric, func(p *discovery.Port) discovery.LinkRate { return parsed.Rate(p) }); len(d.CurrentOnlyNodes)+len(d.ReferenceOnlyNodes)+len(d.CurrentOnlyLinks)+len(d.ReferenceOnlyLinks)+len(d.LIDChanges) != 0 {
		t.Fatalf("the topology text read back differs from the walk: %+v", d)
	}
	if doc, r := diagJSON(t, f, "--expect", topo); len(problems(doc)) != 0 || r.Code != 0 {
		t.Fatalf("before the unlink: exit %d, %v", r.Code, problems(doc))
	}
	sweeps := smSweeps(t, f)
	if _, err := f.Console(`Unlink "leaf01"[12]`); err != nil {
		t.Fatal(err)
	}
	// OpenSM reroutes after the switch's trap: let it finish, so that
	// the diagnosis sees the fabric as it stays.
	waitSMSweep(t, f, sweeps)
	for _, expect := range []string{topo, cache} {
		doc, r := diagJSON(t, f, "--expect", expect)
		want := "topology.link_missing at leaf01[12] -> spine01[1]"
		if got := strings.Join(problems(doc), "\n"); got != want || r.Code != diagnose.ExitFindings {
			t.Errorf("--expect %s: exit %d, findings:\n%s\nwant:\n%s", filepath.Base(expect), r.Code, got, want)
		}
	}
}

// smSweeps counts the sweeps OpenSM finished so far (its log's SUBNET UP).
func smSweeps(t *testing.T, f *simfabric.Fabric) int {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(f.Dir(), "osm.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(log), "SUBNET UP")
}

// waitSMSweep waits until OpenSM has finished a sweep after the first
// done ones.
func waitSMSweep(t *testing.T, f *simfabric.Fabric, done int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for smSweeps(t, f) <= done {
		if time.Now().After(deadline) {
			t.Fatal("OpenSM did not sweep again within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDiagnoseNodeThatDoesNotAnswer: a CA whose SMA drops every
// NodeInfo is not found; the diagnosis says where the walk asked, with
// the directed route, and exits 3: the verdict is partial.
func TestDiagnoseNodeThatDoesNotAnswer(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	if _, err := f.Console(`Error "Hca2"[1] 100 17`); err != nil {
		t.Fatal(err)
	}
	doc, r := diagJSON(t, f)
	if got := strings.Join(problems(doc), "\n"); got != "walk.no_answer at Switch1[4]" || *doc.Complete || r.Code != cmdutil.ExitIncomplete {
		t.Fatalf("exit %d, complete %v, findings:\n%s", r.Code, *doc.Complete, got)
	}
	if r.Stderr != "diagnose: incomplete: 1 read failed; the walk check lists them\n" {
		t.Errorf("stderr %q", r.Stderr)
	}
	text := runSim(f, "", "diagnose", "--interval", "0")
	if !strings.Contains(text.Stdout, `error   walk.no_answer  "Switch1" (0x0000000000200000) port 4: no answer to NodeInfo beyond this port (DR path 0,4): no reply`) {
		t.Errorf("text:\n%s", text.Stdout)
	}
}

// TestDiagnoseWithoutSM: ibsim without OpenSM: every linked port stays
// Init and no port is an SM.
func TestDiagnoseWithoutSM(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("tiny.net"), NoSM: true})
	doc, r := diagJSON(t, f)
	got := problems(doc)
	inits := 0
	for _, p := range got {
		if strings.HasPrefix(p, "links.port_init at ") {
			inits++
		}
	}
	// 4 links, both ends of each; and nothing routes to the LID the net
	// file gives "sw2 desc" (LID 7).
	if r.Code != diagnose.ExitFindings || inits != 8 || len(got) != 10 || got[0] != "sm.no_sm at " || got[9] != "routing.no_entry at Switch1" {
		t.Errorf("exit %d, findings:\n%s", r.Code, strings.Join(got, "\n"))
	}
}

// TestDiagnoseSMSettings: a port told another SM LID, and another with
// another subnet prefix (set behind OpenSM's back, its periodic sweep
// off), are found as such.
func TestDiagnoseSMSettings(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("tiny.net"), OpenSMFlags: []string{"-s", "0"}})
	hca2, hca3 := lidOf(t, f, hca2GUID), lidOf(t, f, "0x100007")
	for _, set := range [][]string{{hca2, "MasterSMLID=9"}, {hca3, "GIDPrefix=0xfe80000000000001"}} {
		if r := runSim(f, "", "query", "SubnSet", "PortInfo", set[0], "-a", "1", "-f", set[1], "--write"); r.Code != 0 {
			t.Fatal(r)
		}
	}
	doc, r := diagJSON(t, f)
	want := "sm.sm_lid_mismatch at Hca2[1] -> Switch1[4]\nsm.subnet_prefix_mismatch at Hca3[1] -> sw2 desc[1]"
	if got := strings.Join(problems(doc), "\n"); got != want || r.Code != diagnose.ExitFindings {
		t.Errorf("exit %d, findings:\n%s\nwant:\n%s", r.Code, got, want)
	}
}

// TestDiagnoseBadInput: what cannot be right is said in one line, before
// anything is swept.
func TestDiagnoseBadInput(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	bad := filepath.Join(t.TempDir(), "bad.topo")
	if err := os.WriteFile(bad, []byte("Switch\t4 \"sw1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--expect-width", "3X"}, cmdutil.ExitUsage, `invalid width "3X"`},
		{[]string{"--expect-speed", "fast"}, cmdutil.ExitUsage, `invalid speed "fast"`},
		{[]string{"--load", "x", "--sa"}, cmdutil.ExitUsage, "--load judges a saved sweep"},
		{[]string{"extra"}, cmdutil.ExitUsage, `takes no arguments, got "extra"`},
		{[]string{"--expect", bad}, cmdutil.ExitFailure, `neither a cache nor a topology file: line 1: node name "sw1" is not S-<GUID>`},
		{[]string{"--load", t.TempDir()}, cmdutil.ExitFailure, "--load "},
	} {
		wantFailure(t, runSim(f, "", append([]string{"diagnose"}, tc.args...)...), tc.code, tc.msg)
	}
}
