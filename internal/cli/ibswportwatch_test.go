package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibswportwatch"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// ibswportwatch on HcaB's port (the MADs that read it are traffic there,
// so its packet counters rise between reads): python-rdma's lines, the
// rates from the second read on, reads paced from the start.
func TestIbswportwatch(t *testing.T) {
	f := checksFabric(t)
	start := time.Now()
	r := runSim(f, "", "ibswportwatch", "-n", "3", "-p", "0.2", "4", "1")
	took := time.Since(start)
	if r.Code != 0 || strings.Count(r.Stdout, "# Port counters: Lid 4 (fe80::10:4) port 1\n") != 3 {
		t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if took < 400*time.Millisecond || took > 3*time.Second {
		t.Errorf("3 reads 0.2 s apart took %v", took)
	}
	blocks := strings.Split(r.Stdout, "# Port counters")
	if !regexp.MustCompile(`\nSymbolErrors\.{21}50\n`).MatchString(blocks[1]) || strings.Contains(blocks[1], "/s)") {
		t.Errorf("the first read has values only:\n%s", blocks[1])
	}
	rate := regexp.MustCompile(`\nXmtPkts\.{26}\d+ +\(\+ \d+\.\d{3}/s\)\n`)
	if !rate.MatchString(blocks[2]) || !rate.MatchString(blocks[3]) || strings.Contains(blocks[3], "SymbolErrors.....................50 ") {
		t.Errorf("later reads show the rate of what moved, only that:\n%s", r.Stdout)
	}

	// -t: only the counters faster than their threshold.
	r = runSim(f, "", "ibswportwatch", "-t", "-T", "testdata/ibcheck/watch.thresholds", "-n", "2", "-p", "0.1", "4", "1")
	if r.Code != 0 || !rate.MatchString(r.Stdout) || strings.Contains(r.Stdout, "SymbolErrors") || strings.Contains(r.Stdout, "XmtData") {
		t.Errorf("-t: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	r = runSim(f, "", "ibswportwatch", "--json", "-n", "2", "-p", "0.05", "4", "1")
	var doc ibswportwatch.WatchDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Samples) != 2 || doc.Samples[1].RatesPerSec["port_xmit_pkts"] <= 0 ||
		doc.Samples[1].RatesPerSec["port_xmit_data_bytes"] != 4*doc.Samples[1].RatesPerSec["port_xmit_data"] {
		t.Errorf("JSON: %v %s", err, r.Stdout)
	}
}

// The counter groups: python-rdma's flags (-D is --xmtdisc here; a
// directed route is --Direct), arrays element by element.
func TestIbswportwatchGroups(t *testing.T) {
	f := checksFabric(t)
	for _, tc := range []struct {
		args  string
		lines []string
	}{
		{"-E 4 1", []string{"PortLocalPhysicalErrors..........0", "PortLoopingErrors................0"}},
		{"-D 1 1", []string{"PortSwHOQLifetimeLimitDiscards...0"}},
		{"--vl-xmit-wait 1 2", []string{"PortVLXmitWait[0]................0", "PortVLXmitWait[15]...............0"}},
		{"-x --Direct 0,1", []string{"# Port counters: Lid 3 (fe80::10:1) port 1"}},
	} {
		r := runSim(f, "", append([]string{"ibswportwatch", "-n", "1"}, strings.Fields(tc.args)...)...)
		for _, l := range tc.lines {
			if r.Code != 0 || !strings.Contains(r.Stdout, l+"\n") {
				t.Errorf("%s: want %q; exit %d:\n%s%s", tc.args, l, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
}

// A malformed interval or count is one line naming it, exit 2.
func TestIbswportwatchBadInput(t *testing.T) {
	f := checksFabric(t)
	for _, tc := range []struct{ args, msg string }{
		{"-p abc 4 1", `invalid interval -p "abc": want a number of seconds`},
		{"-p -1 4 1", `invalid interval -p "-1"`},
		{"-p NaN 4 1", `invalid interval -p "NaN"`},
		{"-n many 4 1", `invalid count -n "many"`},
		{"--json 4 1", "give the number of reads with -n"},
		{"-t -T testdata/ibcheck/bad-name.thresholds -n 1 4 1", `threshold key "NoSuchCounter"`},
	} {
		r := runSim(f, "", append([]string{"ibswportwatch"}, strings.Fields(tc.args)...)...)
		if r.Code != cmdutil.ExitUsage || r.Stdout != "" || !strings.Contains(r.Stderr, tc.msg) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line with %q", tc.args, r.Code, r.Stdout, r.Stderr, tc.msg)
		}
	}
}
