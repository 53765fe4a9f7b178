package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibcheck"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
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

// checkDoc is the JSON of a fabric-wide check.
type checkDoc struct {
	Checks []struct {
		Check, Status, Error string
		LID                  uint16
		Port                 int
		Counters             map[string]uint64
		Exceeded             []ibcheck.ThresholdHit
	}
	Summary map[string]int
	Errors  []ibcheck.CheckErrorDoc
	Reset   *ibcheck.ResetDoc
}

func runCheckJSON(t *testing.T, f *simfabric.Fabric, args ...string) checkDoc {
	t.Helper()
	r := runSim(f, "", append(args, "--json")...)
	var doc checkDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
		t.Fatalf("%v: exit %d, %v: %s %s", args, r.Code, err, r.Stdout, r.Stderr)
	}
	return doc
}

// counterOf is the PortCounters value of a counter of the record of a
// port (all ports: 255), or -1.
func (d checkDoc) counterOf(lid uint16, port int, name string) int64 {
	for _, c := range d.Checks {
		if c.Check == "counters" && c.LID == lid && c.Port == port && c.Counters != nil {
			return int64(c.Counters[name])
		}
	}
	return -1
}

// The JSON has every counter of every port asked for, healthy or not,
// with bytes beside the data counters and the thresholds exceeded.
func TestIbcheckJSON(t *testing.T) {
	f := checksFabric(t)
	if _, err := f.Console(`PerformanceSet "HcaA"[1] PortCounters.PortXmitData=1000000`); err != nil {
		t.Fatal(err)
	}
	doc := runCheckJSON(t, f, "ibcheckerrors")
	if got := doc.counterOf(3, 1, "port_xmit_data"); got < 1000000 {
		t.Errorf("HcaA's PortXmitData is %d, want at least the 1000000 preset", got)
	}
	if w, b := doc.counterOf(3, 1, "port_xmit_data"), doc.counterOf(3, 1, "port_xmit_data_bytes"); b != 4*w {
		t.Errorf("port_xmit_data_bytes %d is not 4 x %d", b, w)
	}
	if doc.counterOf(5, 1, "symbol_error_counter") != 0 {
		t.Errorf("a healthy port's counters are missing: %+v", doc.Checks)
	}
	found := false
	for _, c := range doc.Checks {
		if c.LID == 4 && c.Check == "counters" {
			found = len(c.Exceeded) == 1 && c.Exceeded[0] == ibcheck.ThresholdHit{Counter: "symbol_error_counter", Value: 50, Threshold: 10} && c.Status == "failed"
		}
	}
	if !found || doc.Summary["ports_beyond_threshold"] != 2 || len(doc.Errors) != 0 {
		t.Errorf("want HcaB's symbol errors beyond 10, 2 ports beyond thresholds, no errors: %+v", doc)
	}
}

// A port whose counters cannot be read is that port's failure, reported
// with the rest; the others are checked.
func TestIbcheckPortError(t *testing.T) {
	f := checksFabric(t)
	// Drop every PortCounters MAD (attribute 18) at HcaC's port 2.
	if _, err := f.Console(`Error "HcaC"[2] 100 18`); err != nil {
		t.Fatal(err)
	}
	defer f.Console(`Error "HcaC"[2] 0`)
	r := runSim(f, "", "ibcheckerrors", "-t", "200")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Error check lid 6 (host c) port 2: FAILED\n#error: ") ||
		!strings.Contains(r.Stdout, "##          14 ports checked, 3 ports have errors beyond threshold") {
		t.Errorf("got exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	doc := runCheckJSON(t, f, "ibcheckerrors", "-t", "200")
	if len(doc.Errors) != 1 || doc.Errors[0].LID != 6 || doc.Errors[0].Port != 2 || doc.counterOf(5, 1, "port_xmit_pkts") <= 0 {
		t.Errorf("want one error (lid 6 port 2) and the other ports' counters: %+v", doc)
	}
}

// Resets: --dry-run lists and sends nothing; ibclearerrors clears the
// error counters only, ibclearcounters all; without a Write the reader
// refuses to send any.
func TestIbcheckResets(t *testing.T) {
	f := checksFabric(t)
	symbolErrors := func() int64 { return runCheckJSON(t, f, "ibcheckerrors").counterOf(4, 1, "symbol_error_counter") }

	r := runSim(f, "", "ibclearerrors", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Would reset PortCounters (CounterSelect 0x0fff) of lid 4 port 1\n") ||
		!strings.Contains(r.Stdout, "Dry run: would reset PortCounters (CounterSelect 0x0fff) of 6 ports on 5 nodes\n") {
		t.Errorf("dry run: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if n := symbolErrors(); n != 50 {
		t.Fatalf("a dry run reset the symbol errors: %d", n)
	}

	t.Run("refused without a Write", func(t *testing.T) {
		port, err := umad.NewSim(umad.SimConfig{SockName: f.SockName()}).Open("", -1)
		if err != nil {
			t.Fatal(err)
		}
		eng := rpc.New(port, rpc.Options{Timeout: time.Second})
		defer eng.Close()
		cr := &counters.Reader{Client: query.New(eng, query.Options{})}
		_, errs := cr.Clear(context.Background(), nil, []counters.Target{{NodeGUID: 0x100003, NodeType: 1, NumPorts: 1, LID: 4, Port: 1}}, 0xFFF, false)
		if !errors.Is(errs[0], query.ErrNoWrite) {
			t.Errorf("got %v, want %v", errs[0], query.ErrNoWrite)
		}
		if n := symbolErrors(); n != 50 {
			t.Errorf("a refused reset reset the symbol errors: %d", n)
		}
	})

	r = runSim(f, "", "ibclearerrors")
	if r.Code != 0 || r.Stdout != "Reset PortCounters (CounterSelect 0x0fff) of 6 ports on 5 nodes\n## Summary: 0 nodes checked, 0 bad nodes found\n##          6 port counters cleared.\n" {
		t.Errorf("ibclearerrors: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	doc := runCheckJSON(t, f, "ibcheckerrors")
	if doc.counterOf(4, 1, "symbol_error_counter") != 0 || doc.counterOf(1, 255, "link_downed_counter") != 0 || doc.counterOf(4, 1, "port_xmit_pkts") < 20 {
		t.Errorf("ibclearerrors: want the error counters 0 and the packets kept: %+v", doc.Checks)
	}
	before := doc.counterOf(4, 1, "port_xmit_pkts")
	doc = runCheckJSON(t, f, "ibclearcounters")
	if doc.Reset == nil || len(doc.Reset.Ports) != 6 || !doc.Reset.Ports[0].Done || doc.Summary["ports_cleared"] != 6 {
		t.Errorf("ibclearcounters JSON: %+v", doc)
	}
	if after := runCheckJSON(t, f, "ibcheckerrors").counterOf(4, 1, "port_xmit_pkts"); after >= before {
		t.Errorf("ibclearcounters left the packet counters: %d before, %d after", before, after)
	}
}

// Bad input: one line naming what is wrong, exit 2.
func TestIbcheckBadInput(t *testing.T) {
	f := checksFabric(t)
	for _, tc := range []struct{ args, msg string }{
		{"ibcheckerrs -T testdata/ibcheck/bad-name.thresholds 4 1", `threshold key "NoSuchCounter" is not a PortCounters counter`},
		{"ibcheckerrors -T testdata/ibcheck/bad-value.thresholds", `invalid threshold line "SymbolErrorCounter=ten"`},
		{"ibcheckerrs -T testdata/ibcheck/none 4 1", "threshold file: open testdata/ibcheck/none"},
		{"ibcheckport 4 x", `invalid port "x"`},
		{"ibcheckport 4", "accepts 2 to 2 arguments"},
		{"ibcheckerrs", "a TARGET is needed"},
		{"ibcheckstate extra", "accepts 0 to 0 arguments"},
	} {
		r := runSim(f, "", strings.Fields(tc.args)...)
		if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, tc.msg) || r.Stdout != "" || strings.Count(r.Stderr, "\n") > 2 {
			t.Errorf("%s: got exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, r.Code, r.Stdout, r.Stderr, tc.msg)
		}
	}
}

// The node checks against an SA that disagrees with the fabric: it has
// no path to one CA's port and puts another's at the wrong LID. Each is
// that node's failure; the rest pass. (A fake fabric: the simulator's
// OpenSM always agrees with ibsim.)
func TestIbcheckNodeSA(t *testing.T) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host") // the local node
	sw := fab.AddSwitch(0x200, 8, "sw")
	ca2 := fab.AddCA(0x300, 1, "ca2")
	ca3 := fab.AddCA(0x400, 1, "ca3")
	fab.Link(host, 1, sw, 1)
	fab.Link(ca2, 1, sw, 2)
	fab.Link(ca3, 1, sw, 3)
	fab.SMLID = host.LID(1)
	sgid := mad.GID(endport.GIDFromGUID(host.PortGUID(1)))
	path := func(n *umadtest.Node, port int, dlid uint16) *mad.PathRecord {
		return &mad.PathRecord{SGID: sgid, DGID: mad.GID(endport.GIDFromGUID(n.PortGUID(port))), DLID: dlid, Reversible: 1, NumbPath: 1}
	}
	sa := umadtest.NewSA()
	sa.Add(path(host, 1, host.LID(1)), path(sw, 0, sw.LID(0)), path(ca2, 1, ca3.LID(1))) // none to ca3
	tr := umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassSubnAdm: sa.Answer,
	}.Answer, umadtest.WithInfo(fab.LocalInfo()))
	r := runWith(tr, "ibtool", "ibcheckstate")
	want := fmt.Sprintf("# Checking Channel Adapter: nodeguid 0000:0000:0000:0300 lid %d port 1\n"+
		"Node check lid %[1]d: FAILED\n"+
		"#error: SA and SMP NodeInfo's differ: the SA's path to 0000:0000:0000:0301 ends at lid %d, the port has lid %[1]d\n"+
		"# Checking Channel Adapter: nodeguid 0000:0000:0000:0400 lid %[2]d port 1\n"+
		"Node check lid %[2]d: FAILED\n"+
		"#error: SA could not find a path for 0000:0000:0000:0401\n"+
		"## Summary: 4 nodes checked, 2 bad nodes found\n", ca2.LID(1), ca3.LID(1))
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d; want\n%s\ngot:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}
