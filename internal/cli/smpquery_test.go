package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/smpquery"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

type smpqueryCase struct{ host, args string }

func runSmpqueryConformance(t *testing.T, topology string, cases []smpqueryCase) {
	f := sharedFabric(t, topology)
	for _, tc := range cases {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			conform(t, f, tc.host, "smpquery", strings.Fields(tc.args)...)
		})
	}
}

// tiny.net: Switch1 (LID 1, base port 0), Switch2 (LID 7, enhanced port
// 0), Hca1 (LID 2, 2 ports, port 2 down), Hca2, Hca3; QDR-less SDR links.
func TestSmpqueryMatchesInfinibandDiagsTiny(t *testing.T) {
	runSmpqueryConformance(t, "tiny.net", []smpqueryCase{
		{"", "nodeinfo 2"},            // CA by LID
		{"", "NI 1"},                  // switch, alias in capitals
		{"", "NodeInfo 7"},            // full name, any case
		{"", "-L ni 2"},               // -L is the default
		{"", "-D nodeinfo 0"},         // 0 hops: the local switch
		{"", "-D ni 0,1"},             // DR to Hca1
		{"", "-D ni 0,8,1"},           // DR through two switches
		{"", "nodedesc 2"},            // "hca one"
		{"", "ND 7"},                  // switch description
		{"", "-D nd 0,8"},             // over DR
		{"", "portinfo 2 1"},          // CA port
		{"", "pi 2"},                  // no port: the port the SMP came in on
		{"", "pi 1 0"},                // switch port 0
		{"", "pi 1 8"},                // switch port N (no LID, GID prefix 0)
		{"", "-K pi 2 1"},             // M_Key shown
		{"", "-x pi 2 1"},             // extended speeds bit in the modifier
		{"", "-D pi 0,8,1 1"},         // DR
		{"", "-y 0x1234 pi 2 1"},      // M_Key in the request
		{"", "switchinfo 1"},          // base port 0 switch
		{"", "si 7"},                  // enhanced port 0 switch
		{"", "-D si 0,8"},             // over DR
		{"", "pkeys 2 1"},             // CA: PartitionCap from NodeInfo
		{"", "pkeys 1"},               // switch port 0: NodeInfo's PartitionCap
		{"", "PKeys 1 8"},             // switch port N: SwitchInfo's PartitionEnforcementCap
		{"", "sl2vl 2"},               // CA: one table
		{"", "sl2vl 1"},               // switch: every input port to port 0
		{"", "SL2VL 1 8"},             // to port 8
		{"", "vlarb 1"},               // base port 0: no tables
		{"", "vlarb 7"},               // enhanced port 0: tables
		{"", "vlarb 2 1"},             // CA port
		{"", "VLArb 1 4"},             // switch port N
		{"", "GUIDInfo 1"},            // one GUID
		{"", "GI 2"},                  // 32 GUIDs
		{"", "-D gi 0,1"},             // over DR
		{"", "mepi 2 1"},              // Mellanox extended PortInfo
		{"", "MlnxExtPortInfo 1 8"},   // on a switch port
		{"", "-G ni 0x100001"},        // by port GUID, through the SA
		{"", "-G pi 0x200000 8"},      // a switch by GUID
		{"", "-G -s 1 nd 0x100001"},   // -s names the SA
		{"", "-d ni 2"},               // debug goes to stderr only
		{"", "-v -e ni 2 extra args"}, // extra arguments are ignored
		{"Hca1", "ni 1"},              // attached to a CA
		{"Hca1", "-D ni 0,1,8"},       // from a CA through two switches
		{"Hca1", "-D pi 0 1"},         // the local port
		{"Hca3", "-D nd 0,1,4,1"},     // and back down to Hca1
	})
}

// fattree-50.net: EDR links, so the extended speed fields have values.
// node0001 is LID 1, leaf01 LID 2 (36 ports, 14 connected to spines).
func TestSmpqueryMatchesInfinibandDiagsFatTree(t *testing.T) {
	runSmpqueryConformance(t, "fattree-50.net", []smpqueryCase{
		{"", "pi 1 1"},
		{"", "-x pi 1 1"},
		{"", "pi 2 0"},
		{"", "pi 2 14"},
		{"", "-x pi 2 14"},
		{"", "-K -x pi 2 1"},
		{"", "ni 2"},
		{"", "si 2"},
		{"", "nd 1"},
		{"", "nd 2"},
		{"", "vlarb 2"},
		{"", "vlarb 2 14"},
		{"", "pkeys 2 14"},
		{"", "sl2vl 2 14"},
		{"", "gi 2"},
		{"", "mepi 2 14"},
		{"", "-D pi 0,1,14 1"},
		{"", "-D si 0,1,14"},
		{"node0011", "-D pi 0,1,12 1"},
	})
}

// ibsim-2sw2path4hca2port.net: CAs with both ports linked. LIDs: Switch1 1,
// Hca1 2 and 4, Switch2 3, Hca2 5 and 6.
func TestSmpqueryMatchesInfinibandDiagsTwoPortCAs(t *testing.T) {
	runSmpqueryConformance(t, "ibsim-2sw2path4hca2port.net", []smpqueryCase{
		{"", "ni 2"},
		{"", "ni 4"},
		{"", "pi 2 2"},
		{"", "pi 4 2"},
		{"", "pi 4"},
		{"", "sl2vl 2 2"},
		{"", "sl2vl 1 2"},
		{"", "vlarb 2 2"},
		{"", "pkeys 2 2"},
		{"", "pkeys 1 5"},
		{"", "gi 4"},
		{"", "nd 4"},
		{"", "mepi 2 2"},
		{"", "-D ni 0,2"},
		{"", "-D pi 0,3,2 2"},
		{"", "-D ni 0,5,2"},
		{"Hca1", "-D pi 0 2"},
		{"Hca2", "pi 5 2"},
	})
}

// The node name map renames a node for nodedesc, as in the C tool.
func TestSmpqueryNodeNameMap(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	path := filepath.Join(dir, "map")
	if err := os.WriteFile(path, []byte("# test map\n0x100000 \"renamed-hca1\"\n0x200000 a-very-long-name-for-switch-one-xx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{"nd 2", "nd 1", "nd 7"} {
		conform(t, f, "", "smpquery", append([]string{"--node-name-map", path}, strings.Fields(args)...)...)
	}
}

// runCompat runs ibtool as the "smpquery" symlink against a fabric.
func runCompat(f *simfabric.Fabric, host string, args ...string) simfabric.Result {
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}), append([]string{"smpquery"}, args...)...)
	return simfabric.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
}

// cProgName drops the directory from the C tool's program name: IBEXIT
// prints argv[0], and the tests run it by its full path.
func cProgName(s string) string { return strings.ReplaceAll(s, "/usr/sbin/smpquery: ", "smpquery: ") }

// In compat use the failures print the C tool's IBEXIT line on stdout and
// exit with its code; stderr has something exactly when the C tool's has.
func TestSmpqueryFailuresMatchInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	simfabric.RequireTools(t, "smpquery")
	for _, args := range []string{
		"bogus 2",                 // unknown operation
		"ni",                      // too few arguments: usage, exit 2
		"ni 99",                   // no such LID: ibsim bounces it
		"-D ni 0,3",               // no such port on the route
		"si 2",                    // SwitchInfo of a CA: bad MAD status
		"pi 2 5",                  // no such port: bad MAD status
		"pkeys 2 5",               // port beyond NumPorts
		"sl2vl 2 3",               // same
		"pie 2 1",                 // ibsim has no PortInfoExtended
		"pie 1",                   // on a switch
		"ni 0",                    // not a unicast LID
		"ni 0xc000",               // multicast
		"nd abc",                  // not a LID at all
		"-c -t 100 ni 1 0,1",      // combined route: ibsim drops it
		"-c -t 100 ni 1 0",        // combined route of 0 hops
		"-c ni 0 0,1",             // combined route with a bad LID
		"-t 0 ni 1",               // bad timeout
		"-C mlx5_0 ni 1",          // no such CA
		"-t 100 -D vlarb 0,8,1 1", // fine: a CA port's tables
	} {
		t.Run(args, func(t *testing.T) {
			a := strings.Fields(args)
			c := f.RunC(context.Background(), "", "smpquery", a...)
			compare := simfabric.CompareFailure
			if args == "-t 100 -D vlarb 0,8,1 1" { // the one that works
				compare = simfabric.Compare
			}
			compare(t, "smpquery "+args, c, runCompat(f, "", a...), simfabric.DropSimNoise, cProgName)
		})
	}
}

// As "ibtool smpquery" the errors are one line on stderr, nothing on
// stdout, and bad operations or targets are usage errors.
func TestSmpqueryFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"bogus 2", cmdutil.ExitUsage, "operation 'bogus' not supported"},
		{"ni", cmdutil.ExitUsage, "expected <op> <dest dr_path|lid|guid>"},
		{"ni 0", cmdutil.ExitUsage, "can't resolve destination port 0: invalid target"},
		{"-D ni 0,x", cmdutil.ExitUsage, `hop 1 "x" is not a port number`},
		{"-D -L ni 0", cmdutil.ExitUsage, "exclude each other"},
		{"pi 2 1x", cmdutil.ExitUsage, `invalid port number "1x"`},
		{"-y key ni 2", cmdutil.ExitUsage, `invalid M_Key "key"`},
		{"-c ni 1", cmdutil.ExitUsage, "-c takes a LID and a directed route"},
		{"--bogus ni 2", cmdutil.ExitUsage, "unknown flag: --bogus"},
		{"-t 100 ni 99", cmdutil.ExitFailure, "operation ni: node info query failed: no reply to SubnGet(NodeInfo) LID 99"},
		{"-t 100 -D ni 0,3", cmdutil.ExitFailure, "no reply to SubnGet(NodeInfo) DR path 0,3"},
		{"si 2", cmdutil.ExitFailure, "operation si: switch info query failed: SubnGet(SwitchInfo) LID 2 mod 0x0 failed: MAD status 0x000c"},
		{"pkeys 2 5", cmdutil.ExitFailure, "operation pkeys: invalid port number: port 5: the node has 2 ports"},
		{"pie 2 1", cmdutil.ExitFailure, "operation pie: port info extended not supported: port info capability mask2 = 0x30"},
		{"-t 100 -c ni 1 0,1", cmdutil.ExitFailure, "ibsim drops them"},
		{"-G ni 0x999", cmdutil.ExitFailure, "can't resolve destination port 0x999: the SA knows no path to GID fe80::999"},
		{"-t 0 ni 1", cmdutil.ExitFailure, `Invalid timeout "0"`},
		{"-C mlx5_0 ni 2", cmdutil.ExitFailure, `CA "mlx5_0" not found`},
	} {
		t.Run(tc.args, func(t *testing.T) {
			wantFailure(t, runSim(f, "", append([]string{"smpquery"}, strings.Fields(tc.args)...)...), tc.code, tc.msg)
		})
	}
}

func TestSmpqueryJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	run := func(args ...string) map[string]any {
		t.Helper()
		r := runSim(f, "", append([]string{"smpquery", "--json"}, args...)...)
		var got map[string]any
		if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
			t.Fatalf("%v: exit %d, %v: %s", args, r.Code, err, r.Stdout+r.Stderr)
		}
		return got
	}
	pi := run("pi", "2", "1")
	target := pi["target"].(map[string]any)
	info := pi["port_info"].(map[string]any)
	if pi["operation"] != "PortInfo" || target["route"] != "lid" || target["lid"] != 2.0 || target["text"] != "Lid 2" ||
		pi["port"] != 1.0 || info["lid"] != 2.0 || info["m_key"] != nil || info["port_state_text"] != "Active" {
		t.Errorf("pi 2 1: %v", pi)
	}
	if info := run("-K", "pi", "2", "1")["port_info"].(map[string]any); info["m_key"] != "0x0000000000000000" {
		t.Errorf("-K: m_key %v", info["m_key"])
	}
	ni := run("-D", "ni", "0,1")
	target = ni["target"].(map[string]any)
	if target["route"] != "dr" || target["dr_path"] != "0,1" || target["text"] != "DR path slid 65535; dlid 65535; 0,1" ||
		ni["node_info"].(map[string]any)["node_guid"] != "0x0000000000100000" || ni["port"] != nil {
		t.Errorf("-D ni 0,1: %v", ni)
	}
	if target := run("-G", "ni", "0x100001")["target"].(map[string]any); target["lid"] != 2.0 || target["guid"] != "0x0000000000100001" {
		t.Errorf("-G: %v", target)
	}
	nd := run("nd", "2")["node_description"].(map[string]any)
	if nd["description"] != "hca one" || nd["node_name"] != "hca one" || nd["node_guid"] != "0x0000000000100000" {
		t.Errorf("nd 2: %v", nd)
	}
	pk := run("pkeys", "2", "1")["pkeys"].(map[string]any)
	if pk["capacity"] != 64.0 || len(pk["pkeys"].([]any)) != 64 || pk["pkeys"].([]any)[0] != 65535.0 {
		t.Errorf("pkeys: %v", pk)
	}
	gi := run("gi", "1")["guids"].(map[string]any)
	if gi["capacity"] != 1.0 || len(gi["guids"].([]any)) != 1 || gi["guids"].([]any)[0] != "0x0000000000200000" {
		t.Errorf("guids: %v", gi)
	}
	sl := run("sl2vl", "1", "8")["sl2vl"].([]any)
	if len(sl) != 9 || sl[3].(map[string]any)["in_port"] != 3.0 || sl[3].(map[string]any)["out_port"] != 8.0 ||
		len(sl[3].(map[string]any)["vl_by_sl"].([]any)) != 16 {
		t.Errorf("sl2vl: %v", sl)
	}
	if va := run("vlarb", "1")["vlarb"].(map[string]any); va["base_port0"] != true {
		t.Errorf("vlarb 1: %v", va)
	}
	va := run("vlarb", "7")["vlarb"].(map[string]any)
	if va["low_cap"] != 8.0 || len(va["low"].([]any)) != 8 || va["high"].([]any)[0].(map[string]any)["weight"] != 4.0 {
		t.Errorf("vlarb 7: %v", va)
	}
	for _, op := range []string{"si", "mepi"} {
		got := run(op, "1", "1")
		if got["switch_info"] == nil && got["mlnx_ext_port_info"] == nil {
			t.Errorf("%s: %v", op, got)
		}
	}
	// A failure prints no JSON, and the reason on stderr.
	r := runSim(f, "", "smpquery", "--json", "si", "2")
	if r.Code != cmdutil.ExitFailure || r.Stdout != "" || !strings.Contains(r.Stderr, "MAD status 0x000c") {
		t.Errorf("--json si 2: %+v", r)
	}
	r = runCompat(f, "", "--json", "si", "2")
	if r.Code != cmdutil.ExitFailure || r.Stdout != "" || !strings.Contains(r.Stderr, "MAD status 0x000c") {
		t.Errorf("compat --json si 2: %+v", r)
	}
}

// smaTarget is a transport on a fabric of two nodes: the local CA and the
// node under test at lid, whose SMA answers only the attributes a test
// sets on it (status 0x1c otherwise), for what ibsim cannot show
// (PortInfoExtended, long VL arbitration tables).
func smaTarget(lid uint16) (*umadtest.Opener, *umadtest.Node) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0xa0, 1, "host")
	target := fab.AddSwitch(0xb0, 40, "target")
	target.Scripted = true
	target.SetLID(0, lid)
	fab.Link(host, 1, target, 1)
	return umadtest.NewOpener(fab.Answer, umadtest.WithInfo(fab.LocalInfo())), target
}

func TestSmpqueryPortInfoExtended(t *testing.T) {
	ni := mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 40}
	pi := mad.PortInfo{CapabilityMask: uint32(mad.PortCapMaskCapabilityMask2), CapabilityMask2: uint16(mad.PortCapMask2PortInfoExtended)}
	pie := mad.PortInfoExtended{CapabilityMask: 1, FECModeActive: 2, EDRFECModeSupported: 0x7, EDRFECModeEnabled: 0x3}
	tr, sma := smaTarget(9)
	sma.Set(0, &ni)
	sma.Set(0, &pi) // a switch's capabilities are port 0's
	sma.Set(12, &pie)
	r := runWith(tr, "smpquery", "pie", "9", "12")
	want := "# Port info Extended: Lid 9 port 12\n" + mad.Dotted(&pie, nil)
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("got %+v\nwant %q", r, want)
	}
	r = runWith(tr, "ibtool", "smpquery", "--json", "PIE", "9", "12")
	var got struct {
		Operation string
		PIE       map[string]any `json:"port_info_extended"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 || got.Operation != "PortInfoExtended" ||
		got.PIE["edr_fec_mode_supported"] != 7.0 || got.PIE["fec_mode_active_text"] != "RS-FEC" {
		t.Fatalf("--json: %+v %v", r, err)
	}
	// Without CapabilityMask2 the C tool warns and gives up.
	pi.CapabilityMask = 0
	sma.Set(0, &pi)
	r = runWith(tr, "smpquery", "pie", "9", "12")
	if r.code != cmdutil.ExitFailure || r.stdout != "smpquery: iberror: failed: operation pie: port info extended not supported\n" ||
		r.stderr != "smpquery: port info capability mask2 not supported\n" {
		t.Fatalf("no CapabilityMask2: %+v", r)
	}
	// Its NodeInfo failure is a bare IBEXIT, without "operation pie:".
	sma.Fail(mad.AttrNodeInfo, 0, umadtest.StatusInvalidField)
	r = runWith(tr, "smpquery", "pie", "9", "12")
	if r.code != cmdutil.ExitFailure || r.stdout != "smpquery: iberror: failed: node info query failed\n" || r.stderr != "" {
		t.Fatalf("no NodeInfo: %+v", r)
	}
}

// Output printed before a failure stays, as in the C tool: sl2vl prints
// its title before the table query fails.
func TestSmpqueryPartialOutput(t *testing.T) {
	ni := mad.NodeInfo{NodeType: 1, NumPorts: 1}
	tr, sma := smaTarget(3)
	sma.Set(0, &ni)
	title := "# SL2VL table: Lid 3\n#                 SL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n"
	r := runWith(tr, "smpquery", "sl2vl", "3")
	if r.code != cmdutil.ExitFailure || r.stdout != title+"smpquery: iberror: failed: operation sl2vl: slvl query failed\n" || r.stderr != "" {
		t.Fatalf("compat: %+v", r)
	}
	r = runWith(tr, "ibtool", "smpquery", "sl2vl", "3")
	if r.code != cmdutil.ExitFailure || r.stdout != title ||
		r.stderr != "smpquery: operation sl2vl: slvl query failed: SubnGet(SLtoVLMappingTable) LID 3 mod 0x0 failed: MAD status 0x001c (invalid attribute or attribute modifier)\n" {
		t.Fatalf("ibtool: %+v", r)
	}
	// -e shows the reason in compat use too.
	r = runWith(tr, "smpquery", "-e", "sl2vl", "3")
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "MAD status 0x001c") {
		t.Fatalf("compat -e: %+v", r)
	}
}

// Tables longer than one block: 40 VL arbitration entries, 70 P_Keys.
func TestSmpqueryLongTables(t *testing.T) {
	ni := mad.NodeInfo{NodeType: 1, NumPorts: 1, PartitionCap: 70}
	pi := mad.PortInfo{VLArbitrationLowCap: 40, VLArbitrationHighCap: 0}
	var low1, low2 mad.VLArbitrationTable
	for i := range low1.Entry {
		low1.Entry[i] = mad.VLArbEntry{VL: uint8(i % 15), Weight: uint8(i)}
		low2.Entry[i] = mad.VLArbEntry{VL: uint8(i % 8), Weight: uint8(100 + i)}
	}
	var pk [3]mad.PKeyTable
	for b := range pk {
		for i := range pk[b].PKey {
			pk[b].PKey[i] = uint16(0x8000 | b*32 + i)
		}
	}
	tr, sma := smaTarget(3)
	sma.Set(0, &ni)
	sma.Set(1, &pi)
	sma.Set(1<<16|1, &low1)
	sma.Set(2<<16|1, &low2)
	for b := range pk {
		sma.Set(1<<16|uint32(b), &pk[b])
	}
	r := runWith(tr, "smpquery", "vlarb", "3", "1")
	want := "# VLArbitration tables: Lid 3 port 1 LowCap 40 HighCap 0\n# Low priority VL Arbitration Table:" +
		mad.FormatVLArbitration(&low1, 32) + mad.FormatVLArbitration(&low2, 8)
	if r.code != 0 || r.stdout != want {
		t.Fatalf("vlarb: %+v\nwant %q", r, want)
	}
	r = runWith(tr, "smpquery", "pkeys", "3", "1")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	// Blocks 0 and 1 whole, block 2 up to the row holding entry 69.
	if r.code != 0 || len(lines) != 4+4+1+1 || lines[8] != "  64: 0x8040 0x8041 0x8042 0x8043 0x8044 0x8045 0x8046 0x8047" ||
		lines[9] != "70 pkeys capacity for this port" {
		t.Fatalf("pkeys: %+v", r)
	}
	r = runWith(tr, "ibtool", "smpquery", "--json", "pkeys", "3", "1")
	var got smpquery.SmpqueryResult
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.PKeys.PKeys) != 70 || got.PKeys.PKeys[69] != 0x8045 {
		t.Fatalf("pkeys --json: %v %+v", err, r)
	}
}

// On a fake fabric, without ibsim: smpquery reaches nodes by LID along the
// switches' forwarding tables and by directed route, and a LID nobody has
// fails at once (the transport hands the request back).
func TestSmpqueryOnAFakeFabric(t *testing.T) {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host one")
	sw1 := fab.AddSwitch(0x200, 8, "switch one")
	sw2 := fab.AddSwitch(0x300, 4, "switch two")
	far := fab.AddCA(0x400, 1, "far host")
	fab.Link(host, 1, sw1, 3)
	fab.Link(sw1, 8, sw2, 4)
	fab.Link(sw2, 1, far, 1)
	tr := umadtest.NewOpener(fab.Answer, umadtest.WithInfo(fab.LocalInfo()))
	for _, tc := range []struct{ args, desc string }{
		{"nd " + fmt.Sprint(far.LID(1)), "far host"},
		{"-D nd 0,1,8", "switch two"},
		{"-D nd 0,1,8,1", "far host"},
		{"nd " + fmt.Sprint(sw1.LID(0)), "switch one"},
	} {
		r := runWith(tr, append([]string{"smpquery"}, strings.Fields(tc.args)...)...)
		if r.code != 0 || !strings.HasSuffix(r.stdout, "."+tc.desc+"\n") {
			t.Errorf("smpquery %s: %+v, want %q", tc.args, r, tc.desc)
		}
	}
	start := time.Now()
	r := runWith(tr, "ibtool", "smpquery", "nd", "99")
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "no reply to SubnGet(NodeInfo) LID 99") || time.Since(start) > 2*time.Second { // not its 3 timeouts of 1s
		t.Errorf("LID 99: %+v after %v", r, time.Since(start))
	}
	// Two of the queries went by directed route, the others by LID.
	if dr := tr.Requests(mad.ClassSubnDR); len(dr) != 4 {
		t.Errorf("%d directed-route SMPs, want 4 (NodeInfo and NodeDescription, twice)", len(dr))
	}
}
