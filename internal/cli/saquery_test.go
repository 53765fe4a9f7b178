package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/saquery"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

var saUpdate = flag.Bool("update-saquery", false, "rewrite the saquery golden files")

// ---------------------------------------------------------------------
// Conformance with infiniband-diags 44's saquery on simulated fabrics.
//
// ibsim has no RMPP: a GetTable reply is one MAD, so a table shows only
// the records that fit its 200 data bytes, for both tools. Under umad2sim
// the C tool also loses the last 32 bytes of every MAD (bytes 224..255,
// SA data bytes 168..199): they hold garbage that changes from run to run.
// keep cuts both outputs to the records that lie before that point.
// ---------------------------------------------------------------------

type saCase struct {
	host, args string
	keep       int  // compare only the first keep records (0: all)
	looseErr   bool // stderr texts may differ (usage messages)
	fails      bool // the C tool fails too
}

// saKeepRecords keeps the first n records of saquery's text: a record
// starts with a title line ("NodeRecord dump:", "PathRecord dump:", ...).
func saKeepRecords(n int) simfabric.Normalizer {
	return func(s string) string {
		if n <= 0 {
			return s
		}
		lines := strings.SplitAfter(s, "\n")
		seen := 0
		for i, l := range lines {
			if strings.HasSuffix(strings.TrimSpace(l), "dump:") && !strings.HasPrefix(l, "\t") {
				seen++
				if seen > n {
					return strings.Join(lines[:i], "")
				}
			}
		}
		return s
	}
}

// saActCount hides SMInfo's ActCount, which OpenSM counts up as it works:
// a sweep may fall between the two tools' queries.
func saActCount(s string) string {
	return regexp.MustCompile(`(?m)^(\t\tActCount\.+)\d+$`).ReplaceAllString(s, "${1}N")
}

func saConform(t *testing.T, f *simfabric.Fabric, tc saCase, norms ...simfabric.Normalizer) {
	t.Helper()
	simfabric.RequireTools(t, "saquery")
	args := splitArgs(tc.args)
	c := f.RunC(context.Background(), tc.host, "saquery", args...)
	ours := runSim(f, tc.host, append([]string{"saquery"}, args...)...)
	norms = append([]simfabric.Normalizer{simfabric.DropSimNoise, saKeepRecords(tc.keep), saActCount}, norms...)
	simfabric.Compare(cFails(t, tc.fails), "saquery "+tc.args, c, ours, norms...)
	if !tc.looseErr {
		ce, oe := simfabric.DropSimNoise(c.Stderr), ours.Stderr
		if ce != oe {
			t.Errorf("saquery %s: stderr differs:\n%s", tc.args, simfabric.UnifiedDiff("C tool", "ibtool", ce, oe))
		}
	}
}

// splitArgs splits like a shell, with '…' quoting (for node descriptions).
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			in, any = !in, true
		case r == ' ' && !in:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

func runSaqueryConformance(t *testing.T, f *simfabric.Fabric, cases []saCase) {
	for _, tc := range cases {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) { saConform(t, f, tc) })
	}
}

// expectCFailures marks the cases with the args given as failing in the
// C tool too (a name not found).
func expectCFailures(cases []saCase, args ...string) []saCase {
	for i := range cases {
		cases[i].fails = slices.Contains(args, cases[i].args)
	}
	return cases
}

// runSaqueryFailures is runSaqueryConformance for cases where both tools
// fail.
func runSaqueryFailures(t *testing.T, f *simfabric.Fabric, cases []saCase) {
	for i := range cases {
		cases[i].fails = true
	}
	runSaqueryConformance(t, f, cases)
}

// tiny.net: Switch1 LID 1 (OpenSM's), Hca1 LID 2 ("hca one", 2 ports),
// Hca2 LID 3, Hca3 LID 4, Switch2 LID 7 ("sw2 desc"). OpenSM numbers
// these LIDs the same on every start.
func TestSaqueryMatchesInfinibandDiagsTiny(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	runSaqueryConformance(t, f, expectCFailures([]saCase{
		// NodeRecord: the default query, by LID, by node description.
		{args: ""},
		{args: "NR"},
		{args: "nodeRecord"},
		{args: "2"},
		{args: "0x2"},
		{args: "2abc"},                     // strtol: the leading digits
		{args: "'hca one'"},                // a description: LID from the NodeRecords
		{args: "NR 7"},                     // a switch
		{args: "NR 2 extra args"},          // extra arguments are ignored
		{args: "-N"},                       // print_node_records
		{args: "-N 'hca one'"},             // by description
		{args: "-N 2"},                     // -N takes a description: none is "2"
		{args: "-D"},                       // the CAs' descriptions
		{args: "-L 'hca one'"},             // LIDs of the name
		{args: "-l 'hca one'"},             // the first one
		{args: "-G 'hca one'"},             // port GUIDs of the name
		{args: "-L nothere"},               // no match: nothing
		{args: "-O 2"},                     // name of a LID
		{args: "-U 0x100001"},              // name of a port GUID
		{args: "-U 0x100000"},              // a node GUID is no port GUID
		{args: "-N -p"},                    // -N's command wins over -p's query
		{args: "-p -N"},                    // in either order
		{args: "-D -N"},                    // the last print form wins: dumps
		{args: "-N -D"},                    // the list
		{args: "-l -L 'hca one'"},          // -L after -l: every match
		{host: "Hca1", args: "NR 4"},       // from a CA
		{host: "Hca3", args: "'sw2 desc'"}, // Hca3's first record under ibsim: not found
		// PortInfoRecord
		{args: "PIR"},
		{args: "PIR 2"},
		{args: "PIR 2/1"},
		{args: "pir 2/1/0"},
		{args: "PIR 2/x"},    // a port that does not parse is not given
		{args: "PIR 2//"},    // nor an empty one
		{args: "-K PIR 2/1"}, // M_Key shown
		{args: "PIR 1/0"},    // switch port 0
		{args: "PIR 7/4"},
		{args: "-s"},    // IsSM and IsSMdisabled ports
		{args: "-s 99"}, // -s takes no argument: 99 is ignored
		{args: "-K -s"},
		// Tables
		{args: "SL2VL", keep: 10},
		{args: "SL2VL 7/1/4"},
		{args: "SL2VL 2"},
		{args: "SL2VL 2/0/1"},
		{args: "VLAR"},
		{args: "VLAR 1"},
		{args: "VLAR 1/0/1"},
		{args: "VLAR 7/4/2"},
		{args: "--smkey 1 PKTR"},   // OpenSM answers trusted requests only
		{args: "--smkey 1 PKTR 2"}, // (block numbers print as the C tool reads them)
		{args: "--smkey 1 PKTR 2/1/0"},
		{args: "--smkey 0x1 PKTR 7/4"},
		{args: "LFTR"},
		{args: "LFTR 1"},
		{args: "LFTR 7/0"},
		{args: "LFTRecord 1/0"},
		{args: "MFTR"},
		{args: "MFTR 1/0/0"},
		{args: "GIR"},
		{args: "GIR 2/0"},
		{args: "GUIDInfoRecord 7"},
		{args: "SWIR"}, // with the SA's ClassPortInfo first (MulticastFDBTop)
		{args: "SWIR 7"},
		{args: "SWIR 2"}, // a CA: no record
		{args: "SMIR"},
		{args: "SMIR 1"},
		{args: "-c"},
		{args: "CPI"},
		{args: "classportinfo"},
		// LinkRecord
		{args: "LR"},
		{args: "-x"},
		{args: "LR 2"},
		{args: "LR 2/1 1"},
		{args: "LR 1/8"},
		{args: "-x 7 1"},
		{args: "LR 7/4 1/8"},
		{args: "LR 'sw2 desc'"}, // not in the first NodeRecord: not found
		// PathRecord and its selectors
		{args: "PR", keep: 2},
		{args: "-p", keep: 2},
		{args: "-p 2 3", keep: 2}, // PR takes no arguments
		{args: "-p --slid 2 --dlid 3"},
		{args: "-p --slid 2 --dlid 3 -r 1"},
		{args: "-p --slid 2 --dlid 3 -n 1"},
		{args: "-p --slid 2 --dlid 3 --mtu 0x84"},
		{args: "-p --slid 2 --dlid 3 -M 0x85"}, // no such path: no records
		{args: "-p --slid 2 --dlid 3 --rate 3"},
		{args: "-p --slid 2 --dlid 3 -R 0x83"},
		{args: "-p --slid 2 --dlid 3 --pkt_lifetime 0x80"},
		{args: "-p --slid 2 --dlid 3 --pkey 0xffff"},
		{args: "-p --slid 2 --dlid 3 --sl 0"},
		{args: "-p --slid 2 --dlid 3 -Q 0"},
		{args: "-p --slid 2 --dlid 3 -T 0"},
		{args: "-p --slid 2 --dlid 3 -F 0"},
		{args: "-p --slid 2 --dlid 3 -H 0"},
		{args: "-p --slid 2 --dlid 3 --service_id 0x10"},
		{args: "-p --sgid fe80::10:1 --dgid fe80::10:4"},
		{args: "-p --dgid fe80::20:0 --sgid fe80::10:1"},
		{args: "--src-to-dst 2:3"},
		{args: "--src-to-dst 'hca one':3"},
		{args: "--src-to-dst 3:2"},
		{args: "--src-to-dst :3", keep: 2}, // no source: every path to 3
		{args: "--sgid-to-dgid fe80::10:1-fe80::20:0"},
		{args: "-n 5 --src-to-dst 2:3"},
		{args: "--src-to-dst 2:3 -n 1"},
		// Multicast, services, subscriptions (none registered here)
		{args: "MCMR"},
		{args: "MCMR --mlid 0xc000"},
		{args: "MCMR --mgid ff12:401b:ffff::ffff:ffff"},
		{args: "MCMR -q 0xb1b --scope 2"},
		{args: "MCMR -J 1"},
		{args: "MCMR -X 1"},
		{args: "MCMR -X 0 --sl 0 --pkey 0xffff -T 0"},
		{args: "MCMR --mtu 0x84 --rate 0x83"},
		{args: "-g"},
		{args: "-m"},
		{args: "-m 0xc000"},
		{args: "SR"},
		{args: "-S"},
		{args: "IIR"},
		{args: "-I"},
		{args: "IIR fe80::1"},
		// Options everyone has
		{args: "-e NR 7"},
		{args: "-t 500 NR 7"},
		{args: "-P 0 NR 7"},
		{args: "-C ibsim0 -P 0 LR 1/8"},
		{host: "Hca1", args: "-P 1 NR 2"},
	}, "'sw2 desc'", "LR 'sw2 desc'"))
}

// fattree-50.net: node0001 LID 1, leaf01 LID 2 (36 ports), EDR links.
func TestSaqueryMatchesInfinibandDiagsFatTree(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	runSaqueryConformance(t, f, expectCFailures([]saCase{
		{args: ""},
		{args: "'node0005 HCA-1'"}, // not in the first NodeRecord
		{args: "-N 'node0001 HCA-1'"},
		{args: "-D"},
		{args: "-l 'node0001 HCA-1'"},
		{args: "-O 1"},
		{args: "-U 0xe41d2d03001f0001"},
		{args: "-G 'node0001 HCA-1'"},
		{args: "PIR"},
		{args: "PIR 2/14"},
		{args: "-K PIR 1/1"},
		{args: "-x", keep: 21},
		{args: "LR 2"},
		{args: "LR 2/12"},
		{args: "LR 2/12 3"},
		{args: "SWIR"},
		{args: "SWIR 2"},
		{args: "SMIR"},
		{args: "-s"},
		{args: "-c"},
		{args: "--src-to-dst 1:5"},
		{args: "--src-to-dst 'node0001 HCA-1':5"},
		{args: "-p --slid 1 --dlid 5"},
		{args: "-p --slid 1 --dlid 5 --mtu 0x85"},
		{args: "PR", keep: 2},
		{args: "GIR 2"},
		{args: "LFTR 2/0"},
		{args: "LFTR 2"},
		{args: "SL2VL", keep: 10},
		{args: "SL2VL 2/1/14"},
		{args: "VLAR 2/14"},
		{args: "--smkey 1 PKTR 2/14"},
		{args: "-g"},
		{args: "-m"},
		{args: "MCMR"},
	}, "'node0005 HCA-1'"))
}

// Failures: the same messages on stderr and the same exit codes.
func TestSaqueryFailuresMatchInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	runSaqueryFailures(t, f, []saCase{
		{args: "foo"},                // no query type, no node: ENONET (64)
		{args: "0"},                  // EINVAL (22)
		{args: "99999"},              // EINVAL
		{args: "-5", looseErr: true}, // an unknown option letter: usage (2)
		{args: "PIR /1"},             // an empty LID: EINVAL
		{args: "PIR foo/1"},          // ENONET
		{args: "LR 0/8"},             // EINVAL
		{args: "LR 2 0"},             // the second argument too
		{args: "IIR foo"},            // a bad GID: EINVAL
		{args: "PKTR"},               // SA_ERR_REQ_INVALID: EIO (5)
		{args: "PKTR 2/1/0"},         // EIO
		{args: "--src-to-dst nothere:2"},
		{args: "--src-to-dst 2:0"},
		{args: "-L", looseErr: true}, // usage: name not specified (2)
		{args: "-l", looseErr: true},
		{args: "-G", looseErr: true},
		{args: "-O", looseErr: true},   // lid not specified
		{args: "-O 0", looseErr: true}, // lid invalid
		{args: "-U", looseErr: true},   // guid not specified
		{args: "--src-to-dst 2", looseErr: true},
		{args: "--sgid-to-dgid x-y", looseErr: true},
		{args: "--sgid-to-dgid fe80::1", looseErr: true},
		{args: "--sgid zz", looseErr: true},
		{args: "--dgid 1.2.3.4", looseErr: true},
		{args: "--bogus", looseErr: true},
		{args: "-C bogus", looseErr: true},
	})
}

// The node name map renames as in the C tool.
func TestSaqueryNodeNameMapMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	path := filepath.Join(t.TempDir(), "map")
	if err := os.WriteFile(path, []byte("# test map\n0x100000 \"renamed-hca1\"\n0x200001 sw-two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"", "NR 7", "-D", "-O 2", "-N renamed-hca1", "-N 'hca one'", "renamed-hca1", "-L renamed-hca1", "-m"} {
		// The C tool looks names up as descriptions only: it fails on the map's name.
		fails := args == "renamed-hca1"
		t.Run(args, func(t *testing.T) {
			saConform(t, f, saCase{args: "--node-name-map " + path + " " + args, fails: fails})
		})
	}
	// A map that does not parse: a warning, and descriptions.
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("nonsense here\n"), 0o644)
	saConform(t, f, saCase{args: "--node-name-map " + bad + " NR 2"})
}

// Without a subnet manager the port has no SM LID: both tools give up
// before sending anything (exit 255).
func TestSaqueryNoSubnetManager(t *testing.T) {
	simfabric.RequireTools(t, "saquery")
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: "tiny.net", NoSM: true})
	saConform(t, f, saCase{args: "NR", looseErr: true, fails: true})
	r := runSim(f, "", "saquery", "NR")
	if !strings.Contains(r.Stderr, "Failed to bind to the SA") {
		t.Errorf("stderr %q", r.Stderr)
	}
}

// Records that exist only once a client registers them: a service, a
// multicast group with a member, an event subscription. A fabric of its
// own, so that the shared ones stay as OpenSM configured them.
func TestSaqueryRegisteredRecords(t *testing.T) {
	simfabric.RequireTools(t, "saquery")
	f := simfabric.StartT(t, "tiny.net")
	client, info, done := simSA(t, f, "Hca1")
	var gid mad.GID
	binary.BigEndian.PutUint64(gid[0:], info.GIDPrefix)
	binary.BigEndian.PutUint64(gid[8:], info.PortGUID)
	ctx := context.Background()

	sr := &mad.ServiceRecord{ServiceID: 0x1234, ServiceGID: gid, ServicePKey: 0xffff, ServiceLease: 0xffffffff}
	copy(sr.ServiceName[:], "ibtool-test")
	sr.ServiceData8[0], sr.ServiceData16[1], sr.ServiceData32[2] = 7, 0x1234, 0xdeadbeef
	copy(sr.ServiceKey[:], "0123456789abcdef")
	mask := mad.MustCompMask(sr.Desc(), "ServiceID", "ServiceGID", "ServicePKey", "ServiceLease", "ServiceKey", "ServiceName", "ServiceData8", "ServiceData16", "ServiceData32")
	if _, err := client.Set(ctx, mad.AttrServiceRecord, mad.Encode(sr), mask); err != nil {
		t.Fatalf("registering a service: %v", err)
	}
	mc := &mad.MCMemberRecord{PortGID: gid, QKey: 0xb1b, PKey: 0xffff, JoinState: 1, Scope: 2,
		MTUSelector: 2, MTU: 4, RateSelector: 2, Rate: 3}
	mc.MGID = mad.GID{0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 15: 0x42}
	mask = mad.MustCompMask(mc.Desc(), "MGID", "PortGID", "QKey", "PKey", "JoinState", "MTUSelector", "MTU",
		"RateSelector", "Rate", "TClass", "SL", "FlowLabel", "Scope")
	if _, err := client.Set(ctx, mad.AttrMCMemberRecord, mad.Encode(mc), mask); err != nil {
		t.Fatalf("joining a multicast group: %v", err)
	}
	ii := &mad.InformInfo{LIDRangeBegin: 0xffff, IsGeneric: 1, Subscribe: 1, Type: 0xffff, TrapNumber: 64,
		QPN: 1, RespTimeValue: 18, ProducerType: 0xffffff}
	if _, err := client.Set(ctx, mad.AttrInformInfo, mad.Encode(ii), 0); err != nil {
		t.Fatalf("subscribing: %v", err)
	}
	done()

	// umad2sim also garbles the last 32 bytes of the MADs OpenSM receives:
	// the registered ServiceData64[1] holds garbage, which the C tool
	// cannot show (its own copy of those bytes is garbage too).
	dropData64 := func(s string) string {
		return regexp.MustCompile(`(?m)^\t\tServiceData64\.2\.+.*\n`).ReplaceAllString(s, "")
	}
	for _, tc := range []saCase{
		{args: "SR"}, {args: "-S"}, {args: "-K SR"},
		{args: "IIR"}, {args: "-K IIR"}, {args: "IIR fe80::10:1"}, {args: "IIR fe80::10:4"},
		{args: "MCMR"}, {args: "-g"}, {args: "-m"}, {args: "-m 0xc001"}, {args: "-m 0xc000"},
		{args: "--smkey 1 MCMR"}, {args: "--smkey 1 -m"}, {args: "--smkey 1 -m 0xc001"},
		{args: "--smkey 1 MCMR --gid fe80::10:1"}, {args: "--smkey 1 MCMR --mlid 0xc001 -J 1"},
		{args: "--smkey 1 MCMR --mgid ff12:601b:ffff::42"},
		{args: "MFTR"},
	} {
		t.Run(tc.args, func(t *testing.T) { saConform(t, f, tc, dropData64) })
	}

	// The same through MEMBER=VALUE: ServiceName and the subscriber.
	r := runSim(f, "", "saquery", "SR", "ServiceName=ibtool-test")
	if r.Code != 0 || !strings.Contains(r.Stdout, "ServiceName.............ibtool-test") {
		t.Errorf("SR ServiceName=ibtool-test: %+v", r)
	}
	if r := runSim(f, "", "saquery", "SR", "ServiceName=other"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("SR ServiceName=other: %+v", r)
	}
	r = runSim(f, "", "saquery", "--json", "-K", "SR")
	var out saqueryJSON
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Records) != 1 {
		t.Fatalf("--json SR: %v %+v", err, r)
	}
	var rec map[string]any
	json.Unmarshal(out.Records[0], &rec)
	// OpenSM hands the ServiceKey to trusted requesters only: zeros here.
	if _, isString := rec["service_key"].(string); rec["service_name"] != "ibtool-test" || !isString {
		t.Errorf("--json -K SR: %s", out.Records[0])
	}
	r = runSim(f, "", "saquery", "--json", "SR")
	if !strings.Contains(r.Stdout, `"service_key": null`) {
		t.Errorf("--json SR shows the ServiceKey:\n%s", r.Stdout)
	}
}

// MEMBER=VALUE arguments select like the C tool's own selectors.
func TestSaqueryMembersOnSim(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	simfabric.RequireTools(t, "saquery")
	for _, tc := range []struct{ ours, c string }{
		{"LR FromLID=7", "LR 7"},
		{"LR fromlid=7 from_port=4", "LR 7/4"},
		{"PIR EndPortLID=2 PortNum=1", "PIR 2/1"},
		{"PIR end_port_lid=0x7 port_num=4", "PIR 7/4"},
		{"SL2VL LID=7 InputPortNum=1 OutputPortNum=4", "SL2VL 7/1/4"},
		{"NR LID=7", "NR 7"},
		{"NR NodeInfo.PortGUID=0x100001", "NR 2"},
		{"NR NodeInfo.PortGUID=0000:0000:0010:0001", "NR 2"},
		{"NR 'NodeDescription.NodeString=sw2 desc'", "NR 7"},
		{"-p SLID=2 DLID=3", "-p --slid 2 --dlid 3"},
		{"-p SGID=fe80::10:1 DGID=fe80::10:4", "-p --sgid fe80::10:1 --dgid fe80::10:4"},
		{"-p --slid 2 DLID=3 MTUSelector=2 MTU=4", "-p --slid 2 --dlid 3 --mtu 0x84"},
		{"GIR LID=2 BlockNum=0", "GIR 2/0"},
		{"LFTR LID=7 BlockNum=0", "LFTR 7/0"},
		{"SWIR LID=7", "SWIR 7"},
		{"MCMR MLID=0xc000", "MCMR --mlid 0xc000"},
		{"-g MLID=0xc001", "MCMR --mlid 0xc001"}, // no such group: neither prints
		{"-N LID=7 NodeInfo.NodeType=2", "NR 7"}, // the SA selects: not only its first record
	} {
		t.Run(tc.ours, func(t *testing.T) {
			c := f.RunC(context.Background(), "", "saquery", splitArgs(tc.c)...)
			ours := runSim(f, "", append([]string{"saquery"}, splitArgs(tc.ours)...)...)
			simfabric.Compare(t, "saquery "+tc.ours+" vs "+tc.c, c, ours, simfabric.DropSimNoise)
		})
	}
	// Only switches.
	r := runSim(f, "", "saquery", "NR", "NodeInfo.NodeType=2")
	if r.Code != 0 || !strings.Contains(r.Stdout, "node_type...............Switch") || strings.Contains(r.Stdout, "Channel Adapter") {
		t.Errorf("NR NodeInfo.NodeType=2: %+v", r)
	}
	// -v shows what was asked.
	r = runSim(f, "", "saquery", "-v", "PIR", "PortInfo.CapabilityMask=0xc04a", "PortNum=0")
	if want := "component mask 0x0000000000000082 [PortNum PortInfo.CapabilityMask]"; r.Code != 0 || !strings.Contains(r.Stderr, want) ||
		!strings.Contains(r.Stdout, "EndPortLid..............1") {
		t.Errorf("-v PIR ...: want %q in stderr: %+v", want, r)
	}
	// Bad members: EINVAL.
	for _, args := range [][]string{
		{"NR", "bogus=1"},
		{"NR", "LID=x"},
		{"NR", "LID=70000"},
		{"NR", "NodeInfo=1"}, // a structure without a component of its own
		{"-c", "LID=1"},      // ClassPortInfo has no components
		{"-p", "DGID=fe80::zz"},
	} {
		r := runSim(f, "", append([]string{"saquery"}, args...)...)
		if r.Code != saquery.SaEINVAL || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "Invalid ") && !strings.Contains(r.Stderr, "no components") {
			t.Errorf("saquery %v: %+v", args, r)
		}
	}
}

// saqueryJSON is saquery's --json output as a reader decodes it.
type saqueryJSON struct {
	Query         string             `json:"query"`
	Method        string             `json:"method"`
	AttributeID   uint16             `json:"attribute_id"`
	ComponentMask uint64             `json:"component_mask"`
	MaskFields    []string           `json:"component_mask_fields"`
	Records       []json.RawMessage  `json:"records"`
	IsSMDisabled  *[]json.RawMessage `json:"is_sm_disabled"`
	ClassPortInfo json.RawMessage    `json:"class_port_info"`
}

func TestSaqueryJSONOnSim(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	decode := func(args ...string) (saqueryJSON, []map[string]any) {
		t.Helper()
		r := runSim(f, "", append([]string{"saquery", "--json"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("--json %v: %+v", args, r)
		}
		var out saqueryJSON
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("--json %v: %v\n%s", args, err, r.Stdout)
		}
		var recs []map[string]any
		for _, raw := range out.Records {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, m)
		}
		return out, recs
	}
	out, recs := decode("NR", "7")
	if out.Query != "NodeRecord" || out.Method != "GetTable" || out.AttributeID != mad.AttrNodeRecord || out.ComponentMask != 1 ||
		strings.Join(out.MaskFields, ",") != "LID" || len(recs) != 1 || recs[0]["lid"] != 7.0 {
		t.Errorf("--json NR 7: %+v", out)
	}
	ni := recs[0]["node_info"].(map[string]any)
	if ni["node_type_text"] != "Switch" || ni["node_guid"] != "0x0000000000200001" ||
		recs[0]["node_description"].(map[string]any)["node_string"] != "sw2 desc" {
		t.Errorf("--json NR 7: %v", recs[0])
	}
	out, recs = decode("-x")
	if out.Query != "LinkRecord" || len(recs) != 8 || out.ComponentMask != 0 {
		t.Errorf("--json -x: %d records %+v", len(recs), out)
	}
	out, recs = decode("-s")
	if out.Query != "IsSM" || len(recs) != 1 || out.IsSMDisabled == nil || len(*out.IsSMDisabled) != 0 {
		t.Errorf("--json -s: %+v", out)
	}
	if pi := recs[0]["port_info"].(map[string]any); pi["m_key"] != nil || pi["lid"] != 1.0 {
		t.Errorf("--json -s: M_Key shown without -K: %v", pi)
	}
	_, recs = decode("-K", "-s")
	if pi := recs[0]["port_info"].(map[string]any); pi["m_key"] != "0x0000000000000000" {
		t.Errorf("--json -K -s: %v", pi)
	}
	out, _ = decode("-c")
	var cpi map[string]any
	if err := json.Unmarshal(out.ClassPortInfo, &cpi); err != nil || out.Query != "ClassPortInfo" || cpi["class_version"] != 2.0 || len(out.Records) != 0 {
		t.Errorf("--json -c: %+v %v", out, err)
	}
	_, recs = decode("-D")
	if len(recs) != 1 || recs[0]["name"] != "hca one" {
		t.Errorf("--json -D: %v", recs)
	}
	_, recs = decode("-p", "--slid", "2", "--dlid", "3")
	if len(recs) != 1 || recs[0]["dlid"] != 3.0 || recs[0]["mtu_text"] == nil {
		t.Errorf("--json -p: %v", recs)
	}
	// Failures print no JSON, and the C tool's message.
	if r := runSim(f, "", "saquery", "--json", "PKTR"); r.Code != saquery.SaEIO || r.Stdout != "" ||
		r.Stderr != "ERROR: Query result returned 0x0200,  SA(SA_ERR_REQ_INVALID)\n" {
		t.Errorf("--json PKTR: %+v", r)
	}
}

// --sm_port (ibtool only) sends the queries elsewhere; to a LID nobody has
// they time out: the C tool's "Query SA failed" and ETIMEDOUT (110).
func TestSaquerySMPort(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "saquery", "--sm_port", "99", "NR")
	if r.Code != saquery.SaETIMEDOUT || r.Stdout != "" || r.Stderr != "Query SA failed: Connection timed out\n" {
		t.Errorf("--sm_port 99: %+v", r)
	}
	r = runSim(f, "", "saquery", "--sm_port", "99", "-c")
	if r.Code != saquery.SaETIMEDOUT || r.Stderr != "Query SA failed: Connection timed out\nFailed to query SA:ClassPortInfo\n" {
		t.Errorf("--sm_port 99 -c: %+v", r)
	}
	r = runSim(f, "", "saquery", "--sm_port", "99", "foo")
	if r.Code != saquery.SaETIMEDOUT || r.Stderr != "Query SA failed: Connection timed out\nFailed to find lid for \"foo\": Connection timed out\n" {
		t.Errorf("--sm_port 99 foo: %+v", r)
	}
	if r := runSim(f, "", "saquery", "--sm_port", "1", "NR", "7"); r.Code != 0 || !strings.Contains(r.Stdout, "sw2 desc") {
		t.Errorf("--sm_port 1: %+v", r)
	}
	if r := runSim(f, "", "saquery", "--sm_port", "x", "NR"); r.Code != cmdutil.ExitUsage {
		t.Errorf("--sm_port x: %+v", r)
	}
}

// Invoked as "saquery" (a symlink): an IBEXIT goes to stdout, as in C.
func TestSaqueryCompat(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	simfabric.RequireTools(t, "saquery")
	c := f.RunC(context.Background(), "", "saquery", "-t", "0")
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName()}), "saquery", "-t", "0")
	if r.code != c.Code || r.stdout != strings.ReplaceAll(c.Stdout, "/usr/sbin/saquery: ", "saquery: ") {
		t.Errorf("saquery -t 0: C %+v, ibtool %+v", c, r)
	}
	c = f.RunC(context.Background(), "", "saquery", "LR", "1/8")
	r = runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName()}), "saquery", "LR", "1/8")
	if r.code != 0 || r.stdout != c.Stdout {
		t.Errorf("saquery LR 1/8: C %+v, ibtool %+v", c, r)
	}
}
