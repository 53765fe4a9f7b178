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

	"github.com/ibtool/ibtool/internal/cli/cmd/ibqueryerrors"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/topogen"
	"github.com/ibtool/ibtool/internal/umad"
)

// qePresets are the error counters the ibqueryerrors tests set through
// ibsim's console, per topology: thresholds, suppressions, details and
// resets all have something to act on.
var qePresets = map[string][]string{
	"tiny.net": {
		`PerformanceSet "Switch1"[3] PortCounters.SymbolErrorCounter=5`, // a Down port
		`PerformanceSet "Switch1"[1] PortCounters.PortRcvErrors=4`,
		`PerformanceSet "Switch1"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=2`,
		`PerformanceSet "Switch1"[1] PortCounters.PortRcvSwitchRelayErrors=9`,
		`PerformanceSet "Switch1"[4] PortCounters.PortXmitWait=1000`,
		`PerformanceSet "Switch2"[0] PortCounters.LinkDownedCounter=1`, // enhanced port 0
		`PerformanceSet "Hca2"[1] PortCounters.PortXmitDiscards=7`,
		`PerformanceSet "Hca2"[1] PortXmitDiscardDetails.PortInactiveDiscards=3`,
		`PerformanceSet "Hca3"[1] PortCounters.VL15Dropped=12`,
		`PerformanceSet "Hca3"[1] PortCounters.LinkErrorRecoveryCounter=200`,
	},
	"fattree-50.net": {
		`PerformanceSet "spine01"[3] PortCounters.SymbolErrorCounter=11`,
		`PerformanceSet "leaf02"[5] PortCounters.PortRcvErrors=2`,
		`PerformanceSet "node0007"[1] PortCounters.ExcessiveBufferOverrunErrors=3`,
		`PerformanceSet "node0030"[1] PortCounters.PortXmitWait=5000`,
	},
	"ibsim-2sw2path4hca2port.net": {
		`PerformanceSet "Hca1"[2] PortCounters.LocalLinkIntegrityErrors=4`,
		`PerformanceSet "Switch2"[5] PortCounters.PortXmitDiscards=20`,
	},
}

// presetCounters sets a topology's counters (again: -k clears them); at
// the end of the test they go back to 0, for the other tests of the
// shared fabric.
func presetCounters(t *testing.T, f *simfabric.Fabric, topo string) {
	t.Helper()
	for _, cmd := range qePresets[topo] {
		if _, err := f.Console(cmd); err != nil {
			t.Fatal(err)
		}
	}
}

// clearCounters resets every error and data counter of the fabric (other
// tests leave errors behind: a route to nowhere counts a discard), so that
// a test sees its presets alone.
func clearCounters(t *testing.T, f *simfabric.Fabric) {
	t.Helper()
	if r := runSim(f, "", "ibqueryerrors", "-k", "-K", "--details"); r.Code > 1 {
		t.Fatalf("clearing the counters: %s", r)
	}
}

func clearPresets(t *testing.T, f *simfabric.Fabric, topo string) {
	t.Cleanup(func() {
		for _, cmd := range qePresets[topo] {
			zero := regexp.MustCompile(`=\d+$`).ReplaceAllString(cmd, "=0")
			if _, err := f.Console(zero); err != nil {
				t.Error(err)
			}
		}
	})
}

// qeTraffic hides the data and packet counters, which every MAD moves.
var qeTraffic = regexp.MustCompile(`\[(Port(Unicast|Multicast)?(Xmit|Rcv)(Data|Pkts)) == \d+ \([0-9.]+[A-Z]*\)\]`)

func qeNoTraffic(s string) string { return qeTraffic.ReplaceAllString(s, "[$1 == N]") }

// runQEC runs the C ibqueryerrors. It crashes now and then (SIGSEGV in
// insert_lid2sl_table: ibsim's SA answers a PathRecord table in one MAD,
// and the C tool takes the garbage after the records for more records,
// whose DLIDs index past its table): a run killed by a signal is run
// again, up to twice.
func runQEC(f *simfabric.Fabric, args ...string) simfabric.Result {
	var c simfabric.Result
	for try := 0; try < 3; try++ {
		if c = f.RunC(context.Background(), "", "ibqueryerrors", args...); c.Code != -1 || c.TimedOut {
			break
		}
	}
	return c
}

// conformQE runs ibqueryerrors (C, then ibtool, as "ibtool
// ibqueryerrors" or through the symlink) on the same fabric, the
// counters preset before each run, and compares them.
//
// As `ibtool ibqueryerrors` (compat false) the tool is compared through its
// symlink, and must then print the same and exit the same, or exit
// ExitIncomplete after its summary line where the walk missed something
// (a partial scan whose routes lead nowhere) and the symlink exits 0.
func conformQE(t *testing.T, f *simfabric.Fabric, topo string, compat bool, args ...string) simfabric.Result {
	t.Helper()
	if !compat {
		link := conformQE(t, f, topo, true, args...)
		presetCounters(t, f, topo)
		ours := runSim(f, "", append([]string{"ibqueryerrors"}, args...)...)
		incomplete := strings.Contains(ours.Stderr, "ibqueryerrors: incomplete: ")
		if qeNoTraffic(ours.Stdout) != qeNoTraffic(link.Stdout) ||
			(ours.Code != link.Code && !(incomplete && link.Code == 0 && ours.Code == cmdutil.ExitIncomplete)) {
			t.Errorf("%s: ibqueryerrors %s: as ibtool ibqueryerrors exit %d, through the symlink %d; stdout the same: %v",
				topo, strings.Join(args, " "), ours.Code, link.Code, qeNoTraffic(ours.Stdout) == qeNoTraffic(link.Stdout))
		}
		return ours
	}
	presetCounters(t, f, topo)
	c := runQEC(f, args...)
	presetCounters(t, f, topo)
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName()}), append([]string{"ibqueryerrors"}, args...)...)
	ours := simfabric.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
	progName := func(s string) string { return strings.ReplaceAll(s, "/usr/sbin/ibqueryerrors: ", "ibqueryerrors: ") }
	simfabric.Compare(cFails(t, c.Code != 0), topo+": ibqueryerrors "+strings.Join(args, " "), c, ours,
		simfabric.DropSimNoise, qeNoTraffic, progName)
	return ours
}

// TestIbqueryerrorsMatchesInfinibandDiags: every flag on tiny.net (an
// enhanced port 0, a Down port, details), the common ones on a fat tree
// and on 2-port CAs, with counters preset.
func TestIbqueryerrorsMatchesInfinibandDiags(t *testing.T) {
	simfabric.RequireTools(t, "ibqueryerrors", "ibnetdiscover")
	dir := t.TempDir()
	thresholds := filepath.Join(dir, "thresholds")
	if err := os.WriteFile(thresholds, []byte("# ours\nSymbolErrorCounter=10\n\nPortRcvErrors=3\nVL15Dropped=0x10\nPortXmitWait=2000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := filepath.Join(dir, "names")
	if err := os.WriteFile(names, []byte("0x200000 \"core-a\"\n0x100003 hca-two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	matrix := map[string][]string{
		"tiny.net": {"", "-r", "--details", "-r --details --data", "--data", "--counters", "--counters -r",
			"-c", "-s SymbolErrorCounter,PortXmitWait", "-c -s VL15Dropped -s PortXmitDiscards", "-s PortXmitData",
			"--switch", "--ca", "--router", "--switch --ca", "-R", "--skip-sl",
			"--threshold-file " + thresholds, "--threshold-file /nonexistent", "--node-name-map " + names,
			"-G 0x100004", "-S 0x100007 -r", "-G 0x999", "-D 0,1", "-D 0,4", "-D 0,1,4", "-D 0,8 --details -r",
			"-o 4", "-t 500"},
		"fattree-50.net":              {"", "-r --data", "--counters", "-c --ca", "--threshold-file " + thresholds},
		"ibsim-2sw2path4hca2port.net": {"", "-r", "--counters --ca", "-G 0x100001"},
	}
	for _, topo := range []string{"tiny.net", "fattree-50.net", "ibsim-2sw2path4hca2port.net"} {
		f := sharedFabric(t, topo)
		clearPresets(t, f, topo)
		for _, args := range matrix[topo] {
			conformQE(t, f, topo, false, strings.Fields(args)...)
		}
		cache := filepath.Join(dir, topo+".cache")
		if r := f.RunC(context.Background(), "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
			t.Fatal(r)
		}
		conformQE(t, f, topo, false, "--load-cache", cache, "-r")
	}
	f := sharedFabric(t, "tiny.net")
	conformQE(t, f, "tiny.net", true, "-D", "0,1,4")                        // a path to nowhere: no summary
	conformQE(t, f, "tiny.net", true, "-D", "0,1", "--load-cache", "/nope") // both: refused
}

// TestIbqueryerrorsResets: -k and -K reset what the C tool resets (the
// next run shows the same), --dry-run resets nothing; as "ibtool
// ibqueryerrors" one line says what was reset.
func TestIbqueryerrorsResets(t *testing.T) {
	simfabric.RequireTools(t, "ibqueryerrors")
	const topo = "tiny.net"
	f := sharedFabric(t, topo)
	clearPresets(t, f, topo)
	after := func() simfabric.Result { return runQEC(f, "--details") }
	for _, args := range []string{"-k", "-K", "-k -K --details", "-K --counters"} {
		clearCounters(t, f)
		conformQE(t, f, topo, true, strings.Fields(args)...)
		cAfter := after() // after ibtool's resets
		presetCounters(t, f, topo)
		runQEC(f, strings.Fields(args)...)
		simfabric.Compare(cFails(t, cAfter.Code != 0), "after ibqueryerrors "+args, after(), cAfter, simfabric.DropSimNoise, qeNoTraffic)
	}

	clearCounters(t, f)
	presetCounters(t, f, topo)
	before := after()
	r := runSim(f, "", "ibqueryerrors", "-k", "-K", "--dry-run")
	if !strings.HasPrefix(r.Stderr, "ibqueryerrors: --dry-run: would reset error and data counters: ") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("--dry-run: stderr %q, want one line of what would be reset", r.Stderr)
	}
	if now := after(); qeNoTraffic(now.Stdout) != qeNoTraffic(before.Stdout) {
		t.Errorf("--dry-run reset counters:\n%s", simfabric.UnifiedDiff("before", "after", before.Stdout, now.Stdout))
	}
	r = runSim(f, "", "ibqueryerrors", "-k", "--switch")
	if !regexp.MustCompile(`^ibqueryerrors: reset error counters: \d+ Sets to 2 nodes \(PortCounters\), 0 failed\n$`).MatchString(r.Stderr) {
		t.Errorf("-k --switch: stderr %q, want one line of what was reset", r.Stderr)
	}
	if now := after(); !strings.Contains(now.Stdout, "## Summary: 5 nodes checked, 2 bad nodes found") {
		t.Errorf("after -k --switch, the CAs' errors alone should be left:\n%s", now.Stdout)
	}
}

// TestIbqueryerrorsJSON: every port of every node, healthy or not, with
// its counters, bytes for the data counters, and the thresholds exceeded.
func TestIbqueryerrorsJSON(t *testing.T) {
	const topo = "tiny.net"
	f := sharedFabric(t, topo)
	clearPresets(t, f, topo)
	clearCounters(t, f)
	presetCounters(t, f, topo)
	r := runSim(f, "", "ibqueryerrors", "--json", "--details", "-s", "PortXmitWait")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (errors beyond thresholds): %s", r.Code, r.Stderr)
	}
	var doc struct {
		Nodes []struct {
			NodeName string `json:"node_name"`
			Ports    []struct {
				Port     int                        `json:"port"`
				Counters map[string]json.RawMessage `json:"counters"`
				Extended map[string]json.RawMessage `json:"extended_counters"`
				Details  map[string]uint64          `json:"rcv_error_details"`
				Exceeded []ibqueryerrors.Exceeded   `json:"exceeded"`
			} `json:"ports"`
		} `json:"nodes"`
		Summary    ibqueryerrors.Summary `json:"summary"`
		Suppressed []string              `json:"suppressed"`
		Errors     []any                 `json:"errors"`
		Complete   *bool                 `json:"complete"`
		WalkErrors []any                 `json:"walk_errors"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	ports := map[string]int{}
	var sw1p1 []ibqueryerrors.Exceeded
	for _, n := range doc.Nodes {
		for _, p := range n.Ports {
			ports[n.NodeName]++
			if p.Counters["port_xmit_data_bytes"] == nil || p.Extended["port_rcv_data_bytes"] == nil {
				t.Errorf("%s port %d: no *_bytes: %v", n.NodeName, p.Port, p.Counters)
			}
			if n.NodeName == "Switch1" && p.Port == 1 {
				sw1p1 = p.Exceeded
				if p.Details["port_local_physical_errors"] != 2 {
					t.Errorf("Switch1 port 1 rcv_error_details %v", p.Details)
				}
			}
			for _, e := range p.Exceeded {
				if e.Counter == "PortXmitWait" {
					t.Errorf("%s port %d: PortXmitWait is suppressed", n.NodeName, p.Port)
				}
			}
		}
	}
	// Every port: Switch1's 8, Switch2's 0-4, the CAs' linked ones.
	want := map[string]int{"Switch1": 8, "sw2 desc": 5, "hca one": 1, "Hca2": 1, "Hca3": 1}
	for name, n := range want {
		if ports[name] != n {
			t.Errorf("%s: %d ports in the JSON, want %d (all of them, healthy or not)", name, ports[name], n)
		}
	}
	if len(sw1p1) != 2 || sw1p1[0].Counter != "PortRcvErrors" || sw1p1[0].Value != 4 || sw1p1[1].Counter != "PortRcvSwitchRelayErrors" {
		t.Errorf("Switch1 port 1 exceeded %+v", sw1p1)
	}
	if s := doc.Summary; s.NodesChecked != 5 || s.PortsChecked != 16 || s.BadPorts != 5 || s.BadNodes != 4 || len(doc.Errors) != 0 {
		t.Errorf("summary %+v, errors %v", s, doc.Errors)
	}
	if len(doc.Suppressed) != 1 || doc.Suppressed[0] != "PortXmitWait" {
		t.Errorf("suppressed %v", doc.Suppressed)
	}
	if doc.Complete == nil || !*doc.Complete || doc.WalkErrors == nil || len(doc.WalkErrors) != 0 {
		t.Errorf("complete %v, walk_errors %v: want true and [] when everything answered", doc.Complete, doc.WalkErrors)
	}
}

// TestIbqueryerrorsBadInput: one line naming the problem, exit 2.
func TestIbqueryerrorsBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-s", "SymbolErrorCounter,XmtWait"}, `-s: unknown counter "XmtWait"`},
		{[]string{"--threshold-file", file("noeq", "SymbolErrorCounter 10\n")}, `line 1: "SymbolErrorCounter 10" is not <counter>=<value>`},
		{[]string{"--threshold-file", file("name", "# x\nSymbolErrors=10\n")}, `line 2: unknown counter "SymbolErrors"`},
		{[]string{"--threshold-file", file("value", "PortRcvErrors=ten\n")}, `PortRcvErrors's threshold "ten" is not a number`},
	} {
		r := runIbtool("ibtool", append([]string{"ibqueryerrors"}, tc.args...)...)
		// The line, then the usage errors' hint.
		lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
		if r.Code != cmdutil.ExitUsage || !strings.Contains(lines[0], tc.msg) || len(lines) != 2 || !strings.HasPrefix(lines[1], "Run 'ibtool ibqueryerrors --help'") || r.Stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", tc.args, r.Code, r.Stderr, r.Stdout, tc.msg)
		}
	}
}

// generatedFabric is the shared fabric of a topogen preset (S1000:
// 1008 nodes), started on first use.
func generatedFabric(t *testing.T, preset string) *simfabric.Fabric {
	t.Helper()
	simfabric.RequireSim(t, true)
	key := "topogen " + preset
	fabricsMu.Lock()
	defer fabricsMu.Unlock()
	if f := fabrics[key]; f != nil {
		return f
	}
	gen, err := topogen.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	// The fabric outlives the test that starts it: not its TempDir.
	dir, err := os.MkdirTemp("", "ibtool-"+preset+"-")
	if err != nil {
		t.Fatal(err)
	}
	topo := filepath.Join(dir, preset+".net")
	if err := gen.WriteFile(topo); err != nil {
		t.Fatal(err)
	}
	f, err := simfabric.Start(context.Background(), simfabric.Options{Topology: topo, IbsimFlags: gen.IbsimFlags(),
		StartTimeout: 10 * time.Minute, RunTimeout: 5 * time.Minute})
	os.RemoveAll(dir) // ibsim has read it
	if err != nil {
		t.Fatal(err)
	}
	fabrics[key] = f
	return f
}

// TestIbqueryerrorsUnderLoss: on a 1000-node fat tree whose PMAs lose
// PortCounters MADs (all of a switch's and a CA's, part of others'),
// ibqueryerrors ends quickly with every port read or reported as failed.
func TestIbqueryerrorsUnderLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 1000-node fabric")
	}
	f := generatedFabric(t, "S1000")
	cache := filepath.Join(t.TempDir(), "s1000.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
		t.Fatal(r)
	}
	const portCounters = "18" // the attribute, decimal, for ibsim's Error
	loss := map[string]string{"p01-leaf01": "100", "node0005": "100", "p01-leaf02": "50"}
	for i := 100; i < 130; i++ {
		loss[fmt.Sprintf("node%04d", i)] = "40"
	}
	for node, rate := range loss {
		if _, err := f.Console(fmt.Sprintf(`Error "%s" %s %s`, node, rate, portCounters)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for node := range loss {
			if _, err := f.Console(fmt.Sprintf(`Error "%s" 0`, node)); err != nil {
				t.Error(err)
			}
		}
	})
	run := func(args ...string) simfabric.Result {
		done := make(chan simfabric.Result, 1)
		go func() {
			done <- runSim(f, "", append([]string{"ibqueryerrors", "--load-cache", cache, "-t", "40"}, args...)...)
		}()
		select {
		case r := <-done:
			return r
		case <-time.After(2 * time.Minute):
			t.Fatalf("ibqueryerrors %v hangs under loss", args)
		}
		return simfabric.Result{}
	}

	r := run("--json")
	var doc struct {
		Nodes []struct {
			NodeName string `json:"node_name"`
			Ports    []struct {
				Port     int             `json:"port"`
				Counters json.RawMessage `json:"counters"`
				Error    string          `json:"error"`
			} `json:"ports"`
		} `json:"nodes"`
		Summary  ibqueryerrors.Summary   `json:"summary"`
		Errors   []ibqueryerrors.Failure `json:"errors"`
		Complete *bool                   `json:"complete"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, r)
	}
	failed := 0
	for _, n := range doc.Nodes {
		for _, p := range n.Ports {
			switch {
			case p.Error != "":
				failed++
			case p.Counters == nil:
				t.Errorf("%s port %d: neither counters nor an error", n.NodeName, p.Port)
			}
			if loss[n.NodeName] == "100" && p.Error == "" {
				t.Errorf("%s port %d: read, though its PMA loses every PortCounters", n.NodeName, p.Port)
			}
		}
	}
	// Every port, the switches' enhanced port 0 too.
	if len(doc.Nodes) != 1008 || doc.Summary.PortsChecked != 6192 {
		t.Errorf("%d nodes, %d ports checked: want all 1008 and 6192", len(doc.Nodes), doc.Summary.PortsChecked)
	}
	if failed < 38 || failed != len(doc.Errors) || doc.Summary.PMAQueryFailures != failed {
		t.Errorf("%d ports failed, %d errors, %d PMA query failures in the summary; want the same, at least 38", failed, len(doc.Errors), doc.Summary.PMAQueryFailures)
	}
	if doc.Complete == nil || *doc.Complete {
		t.Errorf("complete %v with %d failed reads: want false", doc.Complete, failed)
	}
	if lines := strings.Count(r.Stderr, "\n"); lines != failed {
		t.Errorf("stderr has %d lines for %d failures:\n%s", lines, failed, r.Stderr)
	}

	// The text: the C tool's report, the failures counted in it.
	r = run()
	m := regexp.MustCompile(`(?m)^##          (\d+) PMA query failures$`).FindStringSubmatch(r.Stdout)
	if m == nil || !strings.Contains(r.Stdout, "## Summary: 1008 nodes checked") {
		t.Fatalf("no summary with the failures:\n%s", r)
	}
	if n := strings.Count(r.Stderr, "\n"); fmt.Sprint(n) != m[1] {
		t.Errorf("%s failures in the summary, %d lines on stderr", m[1], n)
	}
}
