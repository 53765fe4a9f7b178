package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/perfquery"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// perfTrafficRE matches the traffic counters' lines. ibsim counts every
// MAD that crosses a port, the C tool's and ours, so their values differ
// between two runs; error counters do not move unless set.
var perfTrafficRE = regexp.MustCompile(`(?m)^(PortXmitData|PortRcvData|PortXmitPkts|PortRcvPkts):(\.*)\d+$`)

// maskTraffic is a simfabric.Normalizer that hides the traffic counters'
// values (the lines stay, so their labels and order are still compared).
func maskTraffic(s string) string { return perfTrafficRE.ReplaceAllString(s, "$1:$2<traffic>") }

// perfProgName drops the directory from the C tool's program name (IBEXIT
// prints argv[0], and the tests run it by its full path).
func perfProgName(s string) string {
	return strings.ReplaceAll(s, "/usr/sbin/perfquery: ", "perfquery: ")
}

// perfCompat runs ibtool as the "perfquery" symlink against a fabric.
func perfCompat(f *simfabric.Fabric, host string, args ...string) simfabric.Result {
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}), append([]string{"perfquery"}, args...)...)
	return simfabric.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

// conformPerf compares "ibtool perfquery" with the C perfquery on the same
// fabric, traffic counters masked. A reset (-r/-R) runs through the
// symlink: as "ibtool perfquery" it ends with a line on stderr saying
// what it reset, which the C tool does not write.
func conformPerf(t *testing.T, f *simfabric.Fabric, host string, args ...string) {
	t.Helper()
	simfabric.RequireTools(t, "perfquery")
	c := f.RunC(context.Background(), host, "perfquery", args...)
	ours := runSim(f, host, append([]string{"perfquery"}, args...)...)
	if slices.Contains(args, "-R") || slices.Contains(args, "-r") {
		ours = perfCompat(f, host, args...)
	}
	simfabric.Compare(t, "perfquery "+strings.Join(args, " "), c, ours, simfabric.DropSimNoise, maskTraffic)
}

// perfSet sets ibsim counters: "Node"[port] Attr.Field=value, one console
// command each. The counters are set back to 0 when the test ends, so the
// fabric other tests share keeps its error counters clean.
func perfSet(t *testing.T, f *simfabric.Fabric, sets ...string) {
	t.Helper()
	for _, s := range sets {
		if _, err := f.Console("PerformanceSet " + s); err != nil {
			t.Fatal(err)
		}
		target, _, _ := strings.Cut(s, "=")
		t.Cleanup(func() { f.Console("PerformanceSet " + target + "=0") })
	}
}

// Distinct values in every error counter ibsim keeps, on a CA port and on
// switch ports, so that a field printed from the wrong place shows.
func tinyCounters(t *testing.T, f *simfabric.Fabric) {
	t.Helper()
	var sets []string
	for i, field := range []string{"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
		"PortRcvRemotePhysicalErrors", "PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
		"LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait"} {
		sets = append(sets, fmt.Sprintf(`"Hca1"[1] PortCounters.%s=%d`, field, i+1))
		sets = append(sets, fmt.Sprintf(`"Switch1"[4] PortCounters.%s=%d`, field, 20+i))
	}
	sets = append(sets,
		// Sums that saturate: 8 bits, 16 bits, 32 bits.
		`"Switch1"[1] PortCounters.LinkDownedCounter=200`, `"Switch1"[8] PortCounters.LinkDownedCounter=100`,
		`"Switch1"[1] PortCounters.SymbolErrorCounter=65000`, `"Switch1"[8] PortCounters.SymbolErrorCounter=1000`,
		`"Switch1"[1] PortCounters.PortXmitWait=4000000000`, `"Switch1"[8] PortCounters.PortXmitWait=300000000`,
		`"Switch2"[4] PortCounters.PortRcvErrors=17`, `"Switch2"[1] PortCounters.PortXmitDiscards=4`,
		`"Hca1"[1] PortCountersExtended.PortUnicastXmitPkts=11`, `"Hca1"[1] PortCountersExtended.PortMultiCastRcvPkts=12`,
		`"Switch1"[4] PortCountersExtended.PortUnicastRcvPkts=13`,
		`"Hca1"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=1`, `"Hca1"[1] PortRcvErrorDetails.PortLoopingErrors=6`,
		`"Hca1"[1] PortXmitDiscardDetails.PortInactiveDiscards=3`, `"Hca1"[1] PortXmitDiscardDetails.PortSwLifetimeLimitDiscards=4`,
		`"Hca1"[1] PortOpRcvCounters.PortOpRcvPkts=21`, `"Hca1"[1] PortOpRcvCounters.PortOpRcvData=4000000000`,
		`"Hca1"[1] PortFlowCtlCounters.PortXmitFlowPkts=31`, `"Hca1"[1] PortFlowCtlCounters.PortRcvFlowPkts=32`,
		`"Hca1"[1] PortVLOpPackets.PortVLOpPackets3=41`, `"Hca1"[1] PortVLOpData.PortVLOpData15=42`,
		`"Hca1"[1] PortVLXmitFlowCtlUpdateErrors.PortVLXmitFlowCtlUpdateErrors2=3`,
		`"Hca1"[1] PortVLXmitWaitCounters.PortVLXmitWaitCounters7=51`,
		`"Switch1"[4] PortRcvErrorDetails.PortVLMappingErrors=8`,
	)
	perfSet(t, f, sets...)
}

type perfCase struct{ host, args string }

// tiny.net: Switch1 (LID 1, base port 0, 8 ports), Switch2 (LID 7,
// enhanced port 0, 4 ports), Hca1 (LID 2, 2 ports, port 2 down), Hca2,
// Hca3.
func TestPerfqueryMatchesInfinibandDiagsTiny(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	tinyCounters(t, f)
	for _, tc := range []perfCase{
		{"", ""},                            // the local port: a switch's port 0
		{"", "2 1"},                         // CA port
		{"", "1"},                           // switch, default port 0
		{"", "1 4"},                         // switch port
		{"", "1 0x8"},                       // numbers in any base
		{"", "7 4"},                         // the other switch
		{"", "-L 2 1"},                      // -L is the default
		{"", "-G 0x100001 1"},               // port GUID through the SA
		{"", "-x 2 1"},                      // extended counters, CA
		{"", "-x 1 4"},                      // extended counters, switch
		{"", "-x 1"},                        // switch port 0
		{"", "-a 1"},                        // AllPortSelect
		{"", "-a 7"},                        // enhanced port 0 switch
		{"", "-a -x 1"},                     // extended, all ports
		{"", "1 255"},                       // all ports by number
		{"", "-a 1 1,4,8"},                  // a list, summed by the tool (saturating)
		{"", "-a 1 1-8"},                    // a range, summed
		{"", "-x -a 1 1,4"},                 // extended counters summed
		{"", "-a 2 1"},                      // -a with one port: that port
		{"", "1 1,4"},                       // a list without -a or -l: each port
		{"", "-l 1 1,4,8"},                  // each port
		{"", "-l 1 2-5"},                    // a range, each port
		{"", "-l -x 1 1,4"},                 // extended, each port
		{"", "-a -l 1"},                     // every port, 1..8
		{"", "-a -l 7"},                     // every port, 0..4 (enhanced port 0)
		{"", "-l 7 255"},                    // the same by port number
		{"", "-a -l -x 7"},                  // extended, every port
		{"", "-a -l 1 1,4"},                 // -a -l ignores the list
		{"", "-E 2 1"},                      // PortRcvErrorDetails
		{"", "-E 1 4"},                      // on a switch port
		{"", "-E -a 1"},                     // a group on AllPortSelect
		{"", "-D 2 1"},                      // PortXmitDiscardDetails (-D is not --Direct here)
		{"", "--xmtdisc 7 1"},               // long name
		{"", "--rcverr 7 4"},                // long name
		{"", "--oprcvcounters 2 1"},         // PortOpRcvCounters
		{"", "--flowctlcounters 2 1"},       // PortFlowCtlCounters
		{"", "--vloppackets 2 1"},           // PortVLOpPackets
		{"", "--vlopdata 2 1"},              // PortVLOpData
		{"", "--vlxmitflowctlerrors 2 1"},   // PortVLXmitFlowCtlUpdateErrors
		{"", "--vlxmitcounters 2 1"},        // PortVLXmitWaitCounters
		{"", "-x -E 2 1"},                   // a group wins over -x
		{"", "-E --vlopdata 2 1"},           // the first group in perfquery.c's order wins
		{"", "-a -E 1 1,4"},                 // groups read the first port of a list
		{"", "-v 2 1"},                      // nothing more on stdout
		{"", "-d 2 1"},                      // debug goes to stderr only
		{"", "-V"},                          // the version, on stderr
		{"", "2 1 0x1 extra"},               // a mask without -r/-R does nothing; extra args are ignored
		{"Hca1", ""},                        // attached to a CA: its port 1
		{"Hca1", "-a"},                      // -a without a target: still the local port
		{"Hca1", "1 8"},                     // from the CA to a switch
		{"Hca3", "-x 2 1"},                  // across both switches
		{"Hca3", "-a -l 1"},                 // every port of a remote switch
		{"", "-t 500 -a 1 1,4"},             // -t
		{"", "-P 0 2 1"},                    // -P
		{"", "-s 1 -G 0x100001 1"},          // -s: the SA's LID
		{"", "--vlxmitcounters -R 2 1 0x0"}, // a zero mask resets everything
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			conformPerf(t, f, tc.host, strings.Fields(tc.args)...)
		})
	}
}

// fattree-50.net: node0001 is LID 1, leaf01 LID 2 (36 ports, enhanced
// port 0, ports 1-15 linked), EDR.
func TestPerfqueryMatchesInfinibandDiagsFatTree(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	perfSet(t, f, `"leaf01"[12] PortCounters.SymbolErrorCounter=3`, `"leaf01"[14] PortCounters.SymbolErrorCounter=4`,
		`"leaf01"[3] PortCounters.PortRcvErrors=5`, `"node0001"[1] PortCounters.LinkDownedCounter=2`,
		`"leaf01"[0] PortCounters.VL15Dropped=6`)
	for _, tc := range []perfCase{
		{"", "1 1"},
		{"", "2 12"},
		{"", "2"},
		{"", "-x 2 14"},
		{"", "-x 1 1"},
		{"", "-a 2"},
		{"", "-a -x 2"},
		{"", "-a 2 12-15"},
		{"", "-l 2 12-15"},
		{"", "-a -l 2"},
		{"", "-E 2 3"},
		{"node0011", "-l 2 1,3,12"},
		{"node0011", ""},
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			conformPerf(t, f, tc.host, strings.Fields(tc.args)...)
		})
	}
}

// perfRead reads a port's counters with ibtool, as JSON values.
func perfRead(t *testing.T, f *simfabric.Fabric, args ...string) map[string]any {
	t.Helper()
	r := runSim(f, "", append([]string{"perfquery", "--json"}, args...)...)
	var res struct {
		Counters []struct{ Values map[string]any }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || len(res.Counters) != 1 {
		t.Fatalf("perfquery --json %v: exit %d, %v: %s", args, r.Code, err, r.Stdout+r.Stderr)
	}
	return res.Counters[0].Values
}

// Resets: the C tool and ibtool run on the same freshly set counters, and
// the counters read back afterwards must be the same.
func TestPerfqueryResetsMatchInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	simfabric.RequireTools(t, "perfquery")
	errs := []string{
		`"Hca1"[1] PortCounters.SymbolErrorCounter=5`, `"Hca1"[1] PortCounters.LinkDownedCounter=3`,
		`"Hca1"[1] PortCounters.PortXmitWait=7`, `"Hca1"[1] PortCounters.VL15Dropped=2`,
		`"Hca1"[1] PortCountersExtended.PortUnicastXmitPkts=9`, `"Hca1"[1] PortCountersExtended.PortMultiCastXmitPkts=10`,
		`"Hca1"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=4`, `"Hca1"[1] PortRcvErrorDetails.PortMalformedPacketErrors=8`,
		`"Hca1"[1] PortVLOpData.PortVLOpData2=6`,
		`"Switch1"[1] PortCounters.SymbolErrorCounter=11`, `"Switch1"[4] PortCounters.SymbolErrorCounter=12`,
		`"Switch1"[8] PortCounters.LinkDownedCounter=13`, `"Switch1"[4] PortCounters.PortXmitWait=14`,
	}
	for _, tc := range []struct {
		args string
		read []string // what to read back afterwards
	}{
		{"-R 2 1", []string{"2 1", "-x 2 1"}},             // PortCounters, and XmitWait through CounterSelect2
		{"-R 2 1 0x1", []string{"2 1"}},                   // SymbolErrorCounter only
		{"-R 2 1 0xffff", []string{"2 1"}},                // a mask: no XmitWait
		{"-R 2 1 0x10000", []string{"2 1"}},               // XmitWait only, through CounterSelect2
		{"-r 2 1", []string{"2 1"}},                       // read, then reset
		{"-r -x 2 1", []string{"-x 2 1", "2 1"}},          // extended counters
		{"-x -R 2 1 0x20", []string{"-x 2 1"}},            // extended, a mask
		{"-R -E 2 1", []string{"-E 2 1"}},                 // a group
		{"-r -E 2 1 0x2", []string{"-E 2 1"}},             // a group with a mask
		{"-R --vlopdata 2 1", []string{"--vlopdata 2 1"}}, // another group
		{"-R -a 1", []string{"-l 1 1,4,8"}},               // AllPortSelect
		{"-R -l 1 1,4", []string{"-l 1 1,4,8"}},           // a list
		{"-r -a 1 1,8", []string{"-l 1 1,4,8"}},           // summed, then each reset
		{"-R -a -l 1", []string{"-l 1 1,4,8"}},            // every port
		{"-R 2 5", []string{"2 1"}},                       // a bad port: fails, resets nothing
		{"-R -X 2 1", []string{"2 1"}},                    // a group ibsim does not answer
		{"-R -c 2 1", []string{"2 1"}},                    // -c has no reset
	} {
		t.Run(tc.args, func(t *testing.T) {
			readBack := func() string {
				var b strings.Builder
				for _, r := range tc.read {
					res := runSim(f, "", append([]string{"perfquery"}, strings.Fields(r)...)...)
					b.WriteString(maskTraffic(res.Stdout))
				}
				return b.String()
			}
			a := strings.Fields(tc.args)
			perfSet(t, f, errs...)
			c := f.RunC(context.Background(), "", "perfquery", a...)
			cAfter := readBack()
			perfSet(t, f, errs...)
			ours := perfCompat(f, "", a...)
			oursAfter := readBack()
			fails := map[string]bool{"-R 2 5": true, "-R -X 2 1": true, "-R -c 2 1": true}[tc.args]
			simfabric.Compare(cFails(t, fails), "perfquery "+tc.args, c, ours, simfabric.DropSimNoise, perfProgName, maskTraffic)
			if cAfter != oursAfter {
				t.Errorf("counters after perfquery %s:\n%s", tc.args, simfabric.UnifiedDiff("after the C tool", "after ibtool", cAfter, oursAfter))
			}
		})
	}
	// And the reset did reset: the error counters read back are 0.
	perfSet(t, f, errs...)
	if r := runSim(f, "", "perfquery", "-R", "2", "1"); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("-R 2 1: %+v", r)
	}
	v := perfRead(t, f, "2", "1")
	if v["symbol_error_counter"] != 0.0 || v["link_downed_counter"] != 0.0 || v["port_xmit_wait"] != 0.0 || v["vl15_dropped"] != 0.0 {
		t.Errorf("after -R 2 1: %v", v)
	}
}

// --dry-run resets nothing and says what it would reset; a reset as
// "ibtool perfquery" says what it reset.
func TestPerfqueryResetDryRun(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	perfSet(t, f, `"Hca1"[1] PortCounters.SymbolErrorCounter=5`)
	r := runSim(f, "", "perfquery", "-R", "--dry-run", "2", "1")
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "perfquery: --dry-run: would reset PortCounters of Lid 2 port 1 (CounterSelect 0xffff, CounterSelect2 0x1); nothing sent\n" {
		t.Fatalf("-R --dry-run: %+v", r)
	}
	if v := perfRead(t, f, "2", "1"); v["symbol_error_counter"] != 5.0 {
		t.Fatalf("--dry-run reset SymbolErrorCounter: %v", v["symbol_error_counter"])
	}
	r = runSim(f, "", "perfquery", "--json", "-R", "--dry-run", "2", "1", "0x1")
	if !strings.Contains(r.Stdout, `"dry_run": true`) {
		t.Errorf("--json --dry-run: %s", r.Stdout)
	}
	r = runSim(f, "", "perfquery", "-R", "2", "1", "0x1")
	if r.Code != 0 || r.Stderr != "perfquery: reset PortCounters of Lid 2 port 1 (CounterSelect 0x1, CounterSelect2 0x0)\n" {
		t.Fatalf("-R 2 1 0x1: %+v", r)
	}
	if v := perfRead(t, f, "2", "1"); v["symbol_error_counter"] != 0.0 {
		t.Fatalf("-R 2 1 0x1 left SymbolErrorCounter %v", v["symbol_error_counter"])
	}
}

// In compat use the failures print the C tool's IBEXIT line on stdout and
// exit with its code; stderr has something exactly when the C tool's has.
//
// The groups ibsim has no handler for are asked of nodes without OpenSM:
// ibsim forwards a PerfMgt request it cannot answer to the SM client on
// the destination node, and after that OpenSM (under umad2sim) answers no
// SA query any more, for the C tool as for ibtool.
func TestPerfqueryFailuresMatchInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	simfabric.RequireTools(t, "perfquery")
	for _, args := range []string{
		"2 5",                      // no such port: bad MAD status
		"-x 2 5",                   // same, extended
		"-E 2 5",                   // same, a group
		"-R 2 5",                   // same, a reset
		"-t 100 99 1",              // no such LID: ibsim bounces it
		"abc",                      // not a LID
		"0 1",                      // not a unicast LID
		"-G 0x999999 1",            // a GUID the SA does not know
		"2 3-1",                    // a backwards range
		"2 1-1",                    // a range of one
		"2 255",                    // a CA has no AllPortSelect
		"-t 0 2 1",                 // bad timeout
		"-C mlx5_0 2 1",            // no such CA
		"-X 2 1",                   // groups ibsim does not answer
		"-S 2 1",                   //
		"-T 2 1",                   //
		"-c 2 1",                   //
		"--swportvlcong 7 1",       // (not LID 1, OpenSM's node: see above)
		"--rcvcc 2 1",              //
		"--slrcvfecn 2 1",          //
		"--slrcvbecn 2 1",          //
		"--xmitcc 2 1",             //
		"--vlxmittimecc 2 1",       //
		"-l 2 1,2",                 // port 1 printed, then port 2 fails
		"-d 2 5",                   // the IBEXIT line names the function
		"-d -X 2 1",                //
		"-K 2 1",                   // -K is not perfquery's: usage, exit 2
		"--Reset_only --bogus 2 1", // unknown option
		"-a 2",                     // a CA with two ports and no AllPortSelect: port 2 fails
		"-a -x 2",                  //
		"-d -a 2",                  //
		"-a -R 2",                  // the reset of port 2 fails
	} {
		t.Run(args, func(t *testing.T) {
			a := strings.Fields(args)
			c := f.RunC(context.Background(), "", "perfquery", a...)
			simfabric.CompareFailure(t, "perfquery "+args, c, perfCompat(f, "", a...), simfabric.DropSimNoise, perfProgName, simfabric.PIDs, maskTraffic)
		})
	}
}

// Without an SM there is no SA to resolve a GUID, and no LID routing.
func TestPerfqueryNoSM(t *testing.T) {
	simfabric.RequireTools(t, "perfquery")
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("tiny.net"), NoSM: true})
	for _, args := range []string{"-G 0x100001 1", "-t 100 2 1", "-t 100", "-t 100 -a"} {
		t.Run(args, func(t *testing.T) {
			a := strings.Fields(args)
			c := f.RunC(context.Background(), "", "perfquery", a...)
			simfabric.CompareFailure(t, "perfquery "+args, c, perfCompat(f, "", a...), simfabric.DropSimNoise, perfProgName)
		})
	}
	r := runSim(f, "", "perfquery", "-G", "0x100001", "1")
	if r.Code != cmdutil.ExitFailure || r.Stdout != "" || !strings.Contains(r.Stderr, "no subnet manager") {
		t.Errorf("ibtool perfquery -G without SM: %+v", r)
	}
}

// Where the C tool fails, ibtool does better, and says why.
func TestPerfqueryBeyondInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	perfSet(t, f, `"Hca1"[1] PortCounters.SymbolErrorCounter=5`, `"Hca2"[1] PortCounters.PortRcvErrors=6`)
	// A CA refuses PortSelect 0: ibtool takes the port its LID is on.
	for _, args := range [][]string{{"2"}, {"-G", "0x100001"}, {"-l", "2"}} {
		r := runSim(f, "", append([]string{"perfquery"}, args...)...)
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "# Port counters: Lid 2 port 1 (CapMask: 0x1200)\n") ||
			!strings.Contains(r.Stdout, "SymbolErrorCounter:..............5\n") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	want := runSim(f, "", "perfquery", "2", "1")
	if got := runSim(f, "", "perfquery", "2"); maskTraffic(got.Stdout) != maskTraffic(want.Stdout) {
		t.Errorf("default port: %s", simfabric.UnifiedDiff("2 1", "2", want.Stdout, got.Stdout))
	}
	// -R on the default port resets that port.
	if r := runSim(f, "", "perfquery", "-R", "2"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("-R 2: %+v", r)
	}
	if v := perfRead(t, f, "2", "1"); v["symbol_error_counter"] != 0.0 {
		t.Errorf("-R 2 did not reset port 1: %v", v)
	}
	// A directed route, resolved through the SA: -D is --xmtdisc, so
	// --Direct, or any target with a comma.
	for _, args := range [][]string{{"--Direct", "0,4", "1"}, {"0,4", "1"}, {"-D", "0,4", "1"}} {
		r := runSim(f, "", append([]string{"perfquery"}, args...)...)
		title := "# Port counters: Lid 3 port 1 (CapMask: 0x1200)\n"
		if args[0] == "-D" {
			title = "# PortXmitDiscardDetails counters: Lid 3 port 1\n"
		}
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, title) {
			t.Errorf("%v: %+v", args, r)
		}
	}
	// python-rdma's option names.
	for _, alias := range [][2]string{{"-F", "--flowctlcounters"}, {"--flow", "--flowctlcounters"},
		{"--vl-xmit-errs", "--vlxmitflowctlerrors"}, {"--vl-xmit-wait", "--vlxmitcounters"}} {
		a, b := runSim(f, "", "perfquery", alias[0], "2", "1"), runSim(f, "", "perfquery", alias[1], "2", "1")
		if a.Code != 0 || a.Stdout != b.Stdout {
			t.Errorf("%s: %+v, want %+v", alias[0], a, b)
		}
	}
	// -a on a CA with two ports: refused, instead of adding up PortSelects
	// the CA cannot answer.
	r := runSim(f, "", "perfquery", "-a", "2")
	if r.Code != cmdutil.ExitFailure || r.Stdout != "" || !strings.Contains(r.Stderr, "a CA with 2 ports counts only the port a MAD arrives on") {
		t.Errorf("-a 2: %+v", r)
	}
	// A one-port CA: its port, as port 255 (the C tool prints the same).
	conformPerf(t, f, "", "-a", "4")
}

// As "ibtool perfquery" the errors are one line on stderr, nothing on
// stdout, and malformed arguments are usage errors.
func TestPerfqueryFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"abc", cmdutil.ExitUsage, `can't resolve destination port abc: no node is named "abc"`}, // a name, which no node has
		{"1x", cmdutil.ExitUsage, `can't resolve destination port 1x: invalid`},
		{"0 1", cmdutil.ExitUsage, "can't resolve destination port 0"},
		{"2 1x", cmdutil.ExitUsage, `invalid port "1x" in "1x"`},
		{"2 1,x", cmdutil.ExitUsage, `invalid port "x" in "1,x"`},
		{"2 256", cmdutil.ExitUsage, `invalid port "256"`},
		{"2 3-1", cmdutil.ExitUsage, "max port must be greater than min port in range"},
		{"2 1 mask", cmdutil.ExitUsage, `invalid reset mask "mask"`},
		{"-y key 2 1", cmdutil.ExitUsage, `invalid M_Key "key"`},
		{"-K 2 1", cmdutil.ExitUsage, "unknown shorthand flag: 'K'"},
		{"-s x 2 1", cmdutil.ExitUsage, "-s: "},
		{"-s x -G 0x100001 1", cmdutil.ExitUsage, "-s: "},
		{"2 5", cmdutil.ExitFailure, "reading the PortCounters of Lid 2 port 5: PerformanceGet(PortCounters) LID 2 mod 0x0 failed: MAD status 0x001c"},
		{"-R 2 5", cmdutil.ExitFailure, "resetting the PortCounters of Lid 2 port 5: PerformanceSet(PortCounters) LID 2"},
		{"-t 100 99 1", cmdutil.ExitFailure, "reading the PerfMgt ClassPortInfo of Lid 99: no reply to PerformanceGet(ClassPortInfo) LID 99"},
		{"-X 2 1", cmdutil.ExitFailure, "reading the PortXmitDataSL of Lid 2 port 1: no reply to PerformanceGet(PortXmitDataSL)"},
		{"2 255", cmdutil.ExitFailure, "the PMA of Lid 2 has no AllPortSelect; use -a"},
		{"-G 0x999999 1", cmdutil.ExitFailure, "can't resolve destination port 0x999999: "},
		{"-t 0 2 1", cmdutil.ExitFailure, `Invalid timeout "0"`},
		{"-C mlx5_0 2 1", cmdutil.ExitFailure, `CA "mlx5_0" not found`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			wantFailure(t, runSim(f, "", append([]string{"perfquery"}, strings.Fields(tc.args)...)...), tc.code, tc.msg)
		})
	}
}

func TestPerfqueryJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	perfSet(t, f, `"Hca1"[1] PortCounters.SymbolErrorCounter=5`, `"Hca1"[1] PortVLOpData.PortVLOpData1=100`,
		`"Switch1"[1] PortCounters.LinkDownedCounter=200`, `"Switch1"[4] PortCounters.LinkDownedCounter=100`)
	run := func(args ...string) perfquery.PerfqueryResult {
		t.Helper()
		r := runSim(f, "", append([]string{"perfquery", "--json"}, args...)...)
		var got perfquery.PerfqueryResult
		if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
			t.Fatalf("%v: exit %d, %v: %s", args, r.Code, err, r.Stdout+r.Stderr)
		}
		return got
	}
	values := func(c perfquery.PerfCounters) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(c.Values, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	got := run("2", "1")
	v := values(got.Counters[0])
	if got.Target.LID != 2 || got.Target.Text != "Lid 2" || got.Attribute != "PortCounters" || got.CapabilityMask != 0x1200 ||
		strings.Join(got.CapabilityMaskNames, ",") != "ExtendedWidthSupported,PortCountersXmitWaitSupported" ||
		len(got.Counters) != 1 || got.Counters[0].Port != 1 || got.Reset != nil ||
		v["symbol_error_counter"] != 5.0 || v["port_xmit_data"].(float64) == 0 ||
		v["port_xmit_data_bytes"] != 4*v["port_xmit_data"].(float64) || v["port_rcv_data_bytes"] != 4*v["port_rcv_data"].(float64) {
		t.Errorf("2 1: %+v %v", got, v)
	}
	got = run("-x", "-G", "0x100001", "1")
	v = values(got.Counters[0])
	if got.Attribute != "PortCountersExtended" || got.Target.GUID == nil || *got.Target.GUID != 0x100001 || got.Target.Route != "lid" || got.Target.LID != 2 ||
		v["port_xmit_data_bytes"] != 4*v["port_xmit_data"].(float64) {
		t.Errorf("-x -G: %+v %v", got, v)
	}
	got = run("--vlopdata", "2", "1")
	v = values(got.Counters[0])
	if got.Attribute != "PortVLOpData" || v["port_vl_op_data"].([]any)[1] != 100.0 || v["port_vl_op_data_bytes"].([]any)[1] != 400.0 {
		t.Errorf("--vlopdata: %+v %v", got, v)
	}
	got = run("-a", "1", "1,4")
	v = values(got.Counters[0])
	if len(got.Counters) != 1 || got.Counters[0].Port != 255 || fmt.Sprint(got.Counters[0].SummedPorts) != "[1 4]" ||
		v["link_downed_counter"] != 255.0 || v["port_select"] != 255.0 {
		t.Errorf("-a 1 1,4: %+v %v", got, v)
	}
	got = run("-l", "1", "1,4")
	if len(got.Counters) != 2 || got.Counters[1].Port != 4 || got.Counters[1].SummedPorts != nil {
		t.Errorf("-l 1 1,4: %+v", got)
	}
	got = run("-R", "-x", "2", "1", "0x3")
	if len(got.Counters) != 0 || got.Reset == nil || got.Reset.Attribute != "PortCountersExtended" ||
		fmt.Sprint(got.Reset.Ports) != "[1]" || got.Reset.CounterSelect != 3 || got.Reset.CounterSelect2 != 0x1fff {
		t.Errorf("-R -x 2 1 0x3: %+v", got.Reset)
	}
	// A failure prints no JSON, and the reason on stderr, also in compat use.
	for _, r := range []simfabric.Result{runSim(f, "", "perfquery", "--json", "2", "5"), perfCompat(f, "", "--json", "2", "5")} {
		if r.Code != cmdutil.ExitFailure || r.Stdout != "" || !strings.Contains(r.Stderr, "MAD status 0x001c") {
			t.Errorf("--json 2 5: %+v", r)
		}
	}
}

func TestAddCountersSaturates(t *testing.T) {
	a := &mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 0xfff0, LinkDownedCounter: 200, LocalLinkIntegrityErrors: 9,
		PortXmitData: 0xfffffff0, PortXmitWait: 5, CounterSelect: 0x1}
	b := &mad.PortCounters{PortSelect: 4, SymbolErrorCounter: 0x20, LinkDownedCounter: 100, LocalLinkIntegrityErrors: 9,
		PortXmitData: 0x20, PortXmitWait: 6, CounterSelect: 0x2}
	sum := &mad.PortCounters{}
	counters.Add(sum, a)
	counters.Add(sum, b)
	want := mad.PortCounters{PortSelect: 4, CounterSelect: 0x2, SymbolErrorCounter: 0xffff, LinkDownedCounter: 255,
		LocalLinkIntegrityErrors: 15, PortXmitData: 0xffffffff, PortXmitWait: 11}
	if *sum != want {
		t.Errorf("got %+v\nwant %+v", *sum, want)
	}
	x := &mad.PortCountersExtended{}
	counters.Add(x, &mad.PortCountersExtended{PortXmitData: ^uint64(0) - 1, PortRcvPkts: 7})
	counters.Add(x, &mad.PortCountersExtended{PortXmitData: 5, PortRcvPkts: 8})
	if x.PortXmitData != ^uint64(0) || x.PortRcvPkts != 15 {
		t.Errorf("extended: %+v", *x)
	}
}

// pmaOpener is a transport on a fabric of two nodes: the local CA and the
// node under test at a LID, whose PMA answers PerfGet/PerfSet from what a
// test stores by attribute and PortSelect, and whose SMA answers only
// what a test sets (status 0x1c otherwise). It records the requests it
// gets.
type pmaOpener struct {
	*umadtest.Opener
	pma    *umadtest.PMA
	target *umadtest.Node
}

func newPMA(lid uint16) *pmaOpener {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0xa0, 1, "host")
	target := fab.AddSwitch(0xb0, 36, "target")
	target.Scripted = true
	target.SetLID(0, lid)
	fab.Link(host, 1, target, 1)
	pma := umadtest.NewPMA()
	answer := umadtest.Classes{mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassPerf: pma.Answer}.Answer
	return &pmaOpener{Opener: umadtest.NewOpener(answer, umadtest.WithInfo(fab.LocalInfo())), pma: pma, target: target}
}

// requests returns the recorded requests of a class.
func (o *pmaOpener) requests(class uint8) []mad.Header { return o.Requests(class) }

func (o *pmaOpener) cpi(capMask uint16, capMask2 uint32) {
	o.pma.Set(0, &mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, CapabilityMask: capMask, CapabilityMask2: capMask2})
}

func (o *pmaOpener) nodeInfo(ni mad.NodeInfo, enhancedPort0 bool) {
	o.target.Set(0, &ni)
	if ni.NodeType == mad.NodeTypeSwitch {
		si := mad.SwitchInfo{}
		if enhancedPort0 {
			si.EnhancedPort0 = 1
		}
		o.target.Set(0, &si)
	}
}

// A switch PMA without AllPortSelect: -a reads the ports in parallel and
// adds them up, saturating, and says so on stderr; -l prints each.
func TestPerfqueryEmulatesAllPortSelect(t *testing.T) {
	o := newPMA(9)
	o.cpi(0x1000, 0) // XmitWait only
	o.nodeInfo(mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 3}, false)
	for p := 1; p <= 3; p++ {
		pc := mad.PortCounters{PortSelect: uint8(p), SymbolErrorCounter: 0x7000 * uint16(p), LinkDownedCounter: uint8(p),
			PortXmitData: 0x60000000 * uint32(p), PortXmitWait: uint32(p)}
		o.pma.Set(uint32(p), &pc)
	}
	r := runWith(o, "perfquery", "-a", "9")
	sum := mad.PortCounters{PortSelect: 255, SymbolErrorCounter: 0xffff, LinkDownedCounter: 6, PortXmitData: 0xffffffff, PortXmitWait: 6}
	want := "# Port counters: Lid 9 port 255 (CapMask: 0x1000)\n" + mad.Dotted(&sum, nil)
	if r.code != 0 || r.stdout != want || r.stderr != "perfquery: Emulating AllPortSelect by iterating through all ports\n" {
		t.Fatalf("got %+v\nwant %q", r, want)
	}
	if n := len(o.requests(mad.ClassPerf)); n != 4 { // ClassPortInfo and three ports
		t.Errorf("%d PerfMgt requests, want 4", n)
	}
	r = runWith(o, "perfquery", "-a", "-l", "9")
	if r.code != 0 || strings.Count(r.stdout, "# Port counters: Lid 9 port ") != 3 || !strings.Contains(r.stdout, "port 3 (CapMask: 0x1000)") {
		t.Fatalf("-a -l: %+v", r)
	}
	// Without -a, port 255 is refused, as in the C tool.
	r = runWith(o, "perfquery", "9", "255")
	if r.code != cmdutil.ExitFailure || r.stdout != "perfquery: iberror: failed: AllPortSelect not supported\n" {
		t.Fatalf("9 255: %+v", r)
	}
	// A port that fails ends the sum.
	o.pma.Fail(mad.AttrPortCounters, 2, 0x1c)
	r = runWith(o, "perfquery", "-a", "9")
	if r.code != cmdutil.ExitFailure || r.stdout != "perfquery: iberror: failed: perfquery\n" {
		t.Fatalf("a failing port: %+v", r)
	}
	// An enhanced port 0 is counted too.
	o.pma.Fail(mad.AttrPortCounters, 2, 0)
	o.nodeInfo(mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 3}, true)
	pc0 := mad.PortCounters{LinkDownedCounter: 250}
	o.pma.Set(0, &pc0)
	r = runWith(o, "ibtool", "perfquery", "--json", "-a", "9")
	var res struct {
		Counters []struct {
			SummedPorts []int `json:"summed_ports"`
			Values      map[string]any
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || fmt.Sprint(res.Counters[0].SummedPorts) != "[0 1 2 3]" ||
		res.Counters[0].Values["link_downed_counter"] != 255.0 {
		t.Fatalf("enhanced port 0: %v %+v", err, r)
	}
}

// -a on a CA without AllPortSelect: refused with two ports, that port with
// one.
func TestPerfqueryAllPortsOnCA(t *testing.T) {
	o := newPMA(3)
	o.cpi(0x1200, 0)
	o.nodeInfo(mad.NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 2, LocalPortNum: 1}, false)
	pc := mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 4}
	o.pma.Set(1, &pc)
	r := runWith(o, "perfquery", "-a", "3")
	// The C tool's words: it tries, and its MAD to port 2 fails.
	if r.code != cmdutil.ExitFailure || r.stdout != "perfquery: iberror: failed: perfquery\n" ||
		!strings.Contains(r.stderr, "query each port's own LID") {
		t.Fatalf("2 ports: %+v", r)
	}
	if n := len(o.requests(mad.ClassPerf)); n != 1 {
		t.Errorf("%d PerfMgt requests, want only ClassPortInfo", n)
	}
	o.nodeInfo(mad.NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 1, LocalPortNum: 1}, false)
	r = runWith(o, "perfquery", "-a", "3")
	pc.PortSelect = 255
	if want := "# Port counters: Lid 3 port 255 (CapMask: 0x1200)\n" + mad.Dotted(&pc, nil); r.code != 0 || r.stdout != want {
		t.Fatalf("1 port: %+v\nwant %q", r, want)
	}
}

// The reset MADs carry what perfquery.c puts in them: CounterSelect (the
// mask's low 16 bits) and CounterSelect2 (the rest; with no mask, the
// XmitWait and QP1Dropped bits the PMA supports; with -x, 0xfff more).
func TestPerfqueryResetMADs(t *testing.T) {
	o := newPMA(3)
	o.cpi(0x1000|0x8000|0x200, 0) // XmitWait, QP1Dropped, ExtWidth
	for _, a := range []uint16{mad.AttrPortCounters, mad.AttrPortCountersExtended, mad.AttrPortRcvErrorDetails, mad.AttrPortExtendedSpeedsCounters} {
		o.pma.Set(1, mad.LookupAttr(mad.ClassPerf, a).New())
	}
	for _, tc := range []struct {
		args string
		cs   uint16 // CounterSelect, bytes 2-3
		cs2  uint32 // CounterSelect2: PortCounters' byte 18, PortCountersExtended's bytes 4-7
		ext  bool
	}{
		{"-R 3 1", 0xffff, 0x3, false},            // XmitWait and QP1Dropped, as the PMA supports them
		{"-R 3 1 0x1", 0x1, 0, false},             // a mask: only what it says
		{"-R 3 1 0x12345", 0x2345, 0x1, false},    // its bits above 15 go to CounterSelect2
		{"-R 3 1 0", 0xffff, 0xff, false},         // 0 means everything
		{"-x -R 3 1", 0xffff, 0x3fff, true},       // extended: 0xfff, XmitWait, QP1Dropped
		{"-x -R 3 1 0x20", 0x20, 0x3fff, true},    // and with a mask
		{"-E -R 3 1", 0xffff, 0, false},           // a group: the mask as it is
		{"-E -R 3 1 0x1ff0003", 0x3, 0xff, false}, // CounterSelect2 is 8 bits there
	} {
		before := len(o.requests(mad.ClassPerf))
		r := runWith(o, append([]string{"perfquery"}, strings.Fields(tc.args)...)...)
		reqs := o.requests(mad.ClassPerf)[before:]
		if r.code != 0 || r.stdout != "" || len(reqs) != 2 || reqs[1].Method() != mad.MethodSet {
			t.Errorf("%s: %+v, %d requests", tc.args, r, len(reqs))
			continue
		}
		want := make([]byte, 20)
		want[1] = 1
		binary.BigEndian.PutUint16(want[2:], tc.cs)
		if tc.ext {
			binary.BigEndian.PutUint32(want[4:], tc.cs2)
		} else {
			want[18] = byte(tc.cs2)
		}
		if got := []byte(reqs[1][perfquery.PerfDataOffset : perfquery.PerfDataOffset+20]); string(got) != string(want) {
			t.Errorf("%s: Set data %x, want %x", tc.args, got, want)
		}
	}
	// -T resets with a 64-bit CounterSelect at byte 8.
	before := len(o.requests(mad.ClassPerf))
	r := runWith(o, "perfquery", "-T", "-R", "3", "1", "0x123456789")
	reqs := o.requests(mad.ClassPerf)[before:]
	if r.code != 0 || len(reqs) != 2 || fmt.Sprintf("%x", []byte(reqs[1][perfquery.PerfDataOffset:perfquery.PerfDataOffset+16])) != "00010000000000000000000123456789" {
		t.Errorf("-T -R: %+v %x", r, []byte(reqs[len(reqs)-1][perfquery.PerfDataOffset:perfquery.PerfDataOffset+16]))
	}
}

// The groups ibsim does not answer, from made-up PMA data: the C tool's
// titles and libibmad's labels.
func TestPerfqueryGroupsFake(t *testing.T) {
	o := newPMA(3)
	o.cpi(0x1200, 0)
	xsl := mad.PortXmitDataSL{PortSelect: 1}
	for i := range xsl.PortXmitDataSL {
		xsl.PortXmitDataSL[i] = uint32(100 + i)
	}
	rsl := mad.PortRcvDataSL{PortSelect: 1}
	rsl.PortRcvDataSL[15] = 7
	esc := mad.PortExtendedSpeedsCounters{PortSelect: 1, SyncHeaderErrorCounter: 3}
	esc.ErrorDetectionCounter[11] = 5
	psc := mad.PortSamplesControl{PortSelect: 1, Tick: 0x10, SampleInterval: 1000}
	cc := mad.PortRcvConCtrl{PortSelect: 1, PortPktRcvFECN: 8, PortPktRcvBECN: 9}
	o.pma.Set(1, &xsl)
	o.pma.Set(1, &rsl)
	o.pma.Set(1, &esc)
	o.pma.Set(1, &psc)
	o.pma.Set(1, &cc)
	for _, tc := range []struct {
		args  string
		title string
		s     mad.Struct
	}{
		{"-X 3 1", "# PortXmitDataSL counters: Lid 3 port 1\n", &xsl},
		{"--rcvsl 3 1", "# PortRcvDataSL counters: Lid 3 port 1\n", &rsl},
		{"-T 3 1", "# PortExtendedSpeedsCounters counters: Lid 3 port 1\n", &esc},
		{"-c 3 1", "# PortSamplesControl: Lid 3 port 1\n", &psc},
		{"--rcvcc 3 1", "# PortRcvConCtrl counters: Lid 3 port 1\n", &cc},
	} {
		r := runWith(o, append([]string{"perfquery"}, strings.Fields(tc.args)...)...)
		if want := tc.title + mad.Dotted(tc.s, nil); r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Errorf("%s: %+v\nwant %q", tc.args, r, want)
		}
	}
	r := runWith(o, "ibtool", "perfquery", "--json", "-X", "3", "1")
	var res struct {
		Attribute string
		Counters  []struct{ Values map[string]any }
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Attribute != "PortXmitDataSL" ||
		res.Counters[0].Values["port_xmit_data_sl_bytes"].([]any)[15] != 4*115.0 {
		t.Errorf("-X --json: %v %s", err, r.stdout)
	}
}

// -T on a port running RS-FEC: is_rsfec_mode_active's SMPs, then the RS-FEC
// layout of attribute 0x1F.
func TestPerfqueryExtSpeedsRSFEC(t *testing.T) {
	o := newPMA(3)
	o.cpi(0x1200|0x4000, 0)
	o.nodeInfo(mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 8}, false)
	pi := mad.PortInfo{CapabilityMask: uint32(mad.PortCapMaskCapabilityMask2), CapabilityMask2: uint16(mad.PortCapMask2PortInfoExtended)}
	o.target.Set(0, &pi) // a switch's capabilities are port 0's
	pie := mad.PortInfoExtended{CapabilityMask: 1, FECModeActive: 2}
	o.target.Set(5, &pie)
	rs := mad.PortExtendedSpeedsCountersRSFEC{PortSelect: 5, PortFECCorrectableBlockCtr: 77}
	rs.FECCorrectableSymbolCtr[3] = 9
	o.pma.SetData(mad.AttrPortExtendedSpeedsCounters, 5, mad.Encode(&rs)) // the RS-FEC layout of the attribute
	r := runWith(o, "perfquery", "-T", "3", "5")
	want := "# PortExtendedSpeedsCounters with RS-FEC Active counters: Lid 3 port 5\n" + mad.Dotted(&rs, nil)
	if r.code != 0 || r.stdout != want {
		t.Fatalf("RS-FEC: %+v\nwant %q", r, want)
	}
	// Without PortInfoExtended support: warnings, and the plain layout.
	pi.CapabilityMask2 = 0
	o.target.Set(0, &pi)
	r = runWith(o, "perfquery", "-T", "3", "5")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "# PortExtendedSpeedsCounters counters: Lid 3 port 5\n") ||
		!strings.Contains(r.stderr, "Port Info Extended not supported") {
		t.Fatalf("no PortInfoExtended: %+v", r)
	}
	// A PortInfoExtended that cannot be read is fatal, as in the C tool.
	pi.CapabilityMask2 = uint16(mad.PortCapMask2PortInfoExtended)
	o.target.Set(0, &pi)
	o.target.Fail(mad.AttrPortInfoExtended, 5, umadtest.StatusInvalidField)
	r = runWith(o, "perfquery", "-T", "3", "5")
	if r.code != cmdutil.ExitFailure || r.stdout != "perfquery: iberror: failed: smp query portinfo extended failed\n" {
		t.Fatalf("PortInfoExtended fails: %+v", r)
	}
}

// A PMA without extended counters: -x warns and reads anyway; without
// XmitWait, PortXmitWait reads 0.
func TestPerfqueryCapabilities(t *testing.T) {
	o := newPMA(3)
	o.cpi(0, 0)
	pc := mad.PortCounters{PortSelect: 1, PortXmitWait: 99}
	pce := mad.PortCountersExtended{PortSelect: 1, PortXmitData: 5, PortUnicastXmitPkts: 6}
	o.pma.Set(1, &pc)
	o.pma.Set(1, &pce)
	r := runWith(o, "perfquery", "3", "1")
	pc.PortXmitWait = 0
	if want := "# Port counters: Lid 3 port 1 (CapMask: 0x00)\n" + mad.Dotted(&pc, nil); r.code != 0 || r.stdout != want {
		t.Errorf("no XmitWait: %+v\nwant %q", r, want)
	}
	r = runWith(o, "perfquery", "-x", "3", "1")
	if want := "# Port extended counters: Lid 3 port 1 (CapMask: 0x00 CapMask2: 0x0000000)\n" + mad.Dotted(&pce, nil); r.code != 0 || r.stdout != want ||
		!strings.Contains(r.stderr, "No extended counter support indicated") {
		t.Errorf("no extended counters: %+v", r)
	}
	// AdditionalCounters (CapabilityMask2) and ExtWidth print their groups.
	o.cpi(0x200, 0x2)
	r = runWith(o, "perfquery", "-x", "3", "1")
	if want := "# Port extended counters: Lid 3 port 1 (CapMask: 0x200 CapMask2: 0x0000002)\n" +
		mad.Dotted(&pce, &mad.DottedOptions{Groups: []string{"ExtWidth", "AdditionalCounters"}}); r.code != 0 || r.stdout != want {
		t.Errorf("all groups: %+v\nwant %q", r, want)
	}
}

// Resets are fabric writes: each goes through the query layer's one write
// path, which logs it at -v.
func TestPerfqueryResetIsAWrite(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "perfquery", "-v", "-R", "-l", "1", "1,4")
	if r.Code != 0 || r.Stdout != "" || strings.Count(r.Stderr, "write: Set PortCounters (modifier 0x0) at Lid 1, asked by perfquery -R\n") != 2 {
		t.Errorf("-v -R -l 1 1,4: %+v", r)
	}
	r = runSim(f, "", "perfquery", "-v", "-r", "-E", "2", "1")
	if r.Code != 0 || !strings.Contains(r.Stderr, "write: Set PortRcvErrorDetails (modifier 0x0) at Lid 2, asked by perfquery -r\n") {
		t.Errorf("-v -r -E 2 1: %+v", r)
	}
	if r := runSim(f, "", "perfquery", "-v", "2", "1"); r.Code != 0 || strings.Contains(r.Stderr, "write:") {
		t.Errorf("-v 2 1 wrote: %+v", r)
	}
}
