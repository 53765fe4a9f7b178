package cli

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

var updateChecks = flag.Bool("update-ibcheck", false, "rewrite the ibcheck family's golden file")

// checksFabric is testdata/topologies/checks.net (one link narrower and
// one slower than both ends can do, a CA port without a cable) with error
// counters set beyond python-rdma's default thresholds: 50 symbol errors
// on HcaB's port, 20 link downs on Sw1's port 2.
func checksFabric(t *testing.T) *simfabric.Fabric {
	t.Helper()
	f := sharedFabric(t, "checks.net")
	for _, c := range []string{
		`PerformanceSet "HcaB"[1] PortCounters.SymbolErrorCounter=50`,
		`PerformanceSet "Sw1"[2] PortCounters.LinkDownedCounter=20`,
	} {
		if out, err := f.Console(c); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
	}
	return f
}

// dataCounts hides the traffic counters, which move with every MAD.
var dataCounts = regexp.MustCompile(`((?:Xmt|Rcv)(?:Data|Pkts):\.+)\d+`)

// TestIbcheckGolden runs the family in python-rdma's output format on
// checks.net and compares with testdata/ibcheck/golden.txt
// (-update-ibcheck rewrites it). Through the tools' names, as scripts
// run them.
func TestIbcheckGolden(t *testing.T) {
	f := checksFabric(t)
	cases := []string{
		"ibchecknet", "ibchecknet -v", "ibcheckerrors", "ibcheckstate", "ibcheckwidth", "ibdatacounters",
		"ibcheckerrors -T testdata/ibcheck/thresholds",
		"ibchecknode 5", "ibchecknode -v 3", "ibchecknode -v 1",
		"ibcheckport 1 2", "ibcheckport -v 6 2", "ibcheckport -v 2 0",
		"ibcheckportstate 3 2", "ibcheckportwidth 4 1",
		"ibcheckerrs 1", "ibcheckerrs 4 1", "ibcheckerrs -v 1 3", "ibcheckerrs -s", "ibcheckerrs -s -T testdata/ibcheck/thresholds",
		"ibdatacounts 4 1", "ibdatacounts 1",
	}
	var got strings.Builder
	for _, c := range cases {
		args := strings.Fields(c)
		r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName()}), args...)
		fmt.Fprintf(&got, "$ %s\n%s--- exit %d\n", c, dataCounts.ReplaceAllString(r.stdout, "${1}N"), r.code)
		if r.stderr != "" {
			fmt.Fprintf(&got, "--- stderr\n%s", r.stderr)
		}
	}
	const golden = "testdata/ibcheck/golden.txt"
	if *updateChecks {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("output differs from %s (-want +got):\n%s", golden, simfabric.UnifiedDiff("want", "got", string(want), got.String()))
	}
}
