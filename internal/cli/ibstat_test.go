package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibstat"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// fakeSysfs is the umad package's fake sysfs: mlx4_0 (IB port 1 Down,
// port 2 Active FDR10), mlx5_0 (one Active EDR port), mlx5_1 (RoCE).
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../umad/testdata/sysfs")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type cmdResult struct {
	stdout, stderr string
	code           int
}

// runWith runs ibtool in-process on a transport; args[0] is the program
// name ("ibstat" runs in compat mode, like the symlink).
func runWith(tr umad.Opener, args ...string) cmdResult {
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{IO: cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut}, Transport: tr}
	code := run(args, env)
	return cmdResult{out.String(), errOut.String(), code}
}

func runKernel(t *testing.T, root string, args ...string) cmdResult {
	t.Helper()
	return runWith(umad.NewKernel(root, "/nonexistent"), args...)
}

// The golden files were written by hand from infiniband-diags 44's
// ibstat.c (ca_dump and port_dump), not from ibtool's output: the C tool
// cannot run on a fake sysfs.
func TestIbstatGolden(t *testing.T) {
	root := fakeSysfs(t)
	for _, tc := range []struct {
		args   string
		golden string
	}{
		{"", "all.txt"},
		{"-s", "short.txt"},
		{"--short", "short.txt"},
		{"-l", "list.txt"},
		{"--list_of_cas", "list.txt"},
		{"-p", "port_list.txt"},
		{"--port_list", "port_list.txt"},
		{"-l -p", "port_list.txt"}, // -p wins
		{"mlx4_0", "mlx4_0.txt"},
		{"mlx4_0extra", "mlx4_0.txt"}, // ibstat.c matches the CA name as a prefix
		{"mlx4_0 2", "mlx4_0_port2.txt"},
		{"mlx4_0 0x2", "mlx4_0_port2.txt"}, // strtol base 0
		{"mlx4_0 2 ignored", "mlx4_0_port2.txt"},
		{"mlx5_1 1", "mlx5_1_port1.txt"},
		{"-v mlx5_1 1", "mlx5_1_port1.txt"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "ibstat", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			r := runKernel(t, root, append([]string{"ibstat"}, strings.Fields(tc.args)...)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			if r.stdout != string(want) {
				t.Errorf("ibstat %s:\n%s", tc.args, unifiedDiff(string(want), r.stdout))
			}
			// Not in compat mode: the same output.
			if r2 := runKernel(t, root, append([]string{"ibtool", "ibstat"}, strings.Fields(tc.args)...)...); r2 != r {
				t.Errorf("ibtool ibstat differs from ibstat: %+v", r2)
			}
		})
	}
	t.Run("short with port", func(t *testing.T) {
		r := runKernel(t, root, "ibstat", "-s", "mlx4_0", "1")
		if want := firstLines(t, "mlx4_0.txt", 7); r.stdout != want {
			t.Errorf("ibstat -s mlx4_0 1:\n%s", unifiedDiff(want, r.stdout))
		}
	})
	t.Run("ports of one CA", func(t *testing.T) {
		r := runKernel(t, root, "ibstat", "-p", "mlx5_0")
		if r.stdout != "0x0c42a10300658a10\n" {
			t.Errorf("ibstat -p mlx5_0 = %q", r.stdout)
		}
		r = runKernel(t, root, "ibstat", "-l", "mlx5_0")
		if r.stdout != "mlx5_0\n" {
			t.Errorf("ibstat -l mlx5_0 = %q", r.stdout)
		}
	})
}

func firstLines(t *testing.T, golden string, n int) string {
	b, err := os.ReadFile(filepath.Join("testdata", "ibstat", golden))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	return strings.Join(lines[:n], "")
}

func unifiedDiff(want, got string) string {
	var b strings.Builder
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			b.WriteString("line " + itoa(i+1) + ":\n  want " + strconvQuote(a) + "\n  got  " + strconvQuote(c) + "\n")
		}
	}
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestIbstatErrors(t *testing.T) {
	root := fakeSysfs(t)
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"nosuch", cmdutil.ExitFailure, "'nosuch' IB device can't be found"},
		{"mlx4_0 3", cmdutil.ExitFailure, "CA: 'mlx4_0' has no port number 3 - max (2)"},
		{"mlx4_0 junk", cmdutil.ExitFailure, "has no port number 0 - max (2)"}, // strtol gives 0
		{"-C mlx4_0", cmdutil.ExitUsage, "unknown shorthand flag: 'C'"},        // excluded like ibstat.c
		{"-t 10", cmdutil.ExitUsage, "unknown shorthand flag: 't'"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			r := runKernel(t, root, append([]string{"ibstat"}, strings.Fields(tc.args)...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) || r.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit %d and %q", r.code, r.stderr, r.stdout, tc.code, tc.msg)
			}
		})
	}
	// The C tool's IBEXIT-style line in compat mode.
	r := runKernel(t, root, "ibstat", "nosuch")
	if r.stderr != "ibstat: iberror: failed: 'nosuch' IB device can't be found\n" {
		t.Errorf("stderr %q", r.stderr)
	}
	// Flags ibstat.c keeps.
	for _, args := range [][]string{{"-z", "/dev/null", "-l"}, {"-Y", "1", "-l"}, {"-d", "-l"}, {"-vv", "-l"}} {
		if r := runKernel(t, root, append([]string{"ibstat"}, args...)...); r.code != 0 || r.stdout == "" {
			t.Errorf("ibstat %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if r := runKernel(t, root, "ibstat", "-V"); r.code != 0 || !strings.Contains(r.stderr, "ibstat BUILD VERSION") {
		t.Errorf("ibstat -V: %+v", r)
	}
}

// One unreadable CA is reported and the others still shown.
func TestIbstatSkipsBrokenCA(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fakeSysfs(t))); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "class/infiniband/mlx4_0/node_guid")); err != nil {
		t.Fatal(err)
	}
	all, err := os.ReadFile("testdata/ibstat/all.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := runKernel(t, root, "ibstat")
	want := string(all[strings.Index(string(all), "CA 'mlx5_0'"):])
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s", r.code, unifiedDiff(want, r.stdout))
	}
	if !strings.HasPrefix(r.stderr, "ibstat: stat of IB device 'mlx4_0' failed: ") || !strings.Contains(r.stderr, "node_guid") {
		t.Errorf("stderr %q", r.stderr)
	}
	// Naming a good CA: no word about the broken one.
	if r := runKernel(t, root, "ibstat", "-l", "mlx5_0"); r.stderr != "" || r.stdout != "mlx5_0\n" {
		t.Errorf("ibstat -l mlx5_0: %+v", r)
	}
	// Naming the broken one: the reason, exit 255.
	if r := runKernel(t, root, "ibstat", "mlx4_0"); r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "stat of IB device 'mlx4_0' failed") {
		t.Errorf("ibstat mlx4_0: %+v", r)
	}
}

// simCA is what the ibsim transport describes when attached to a switch
// (the values of the simulator outputs in the task).
func simCA() umad.CA {
	return umad.CA{
		Name: "ibsim0", NodeType: 2, Type: "simulator", FWVersion: "1", HWRevision: "a1",
		NodeGUID: 0x200000, SysImageGUID: 0x200000,
		Ports: []umad.PortInfo{{
			CA: "ibsim0", Num: 0, LID: 1, SMLID: 1, State: 4, PhysState: 5, Rate: "10 Gb/sec (4X)",
			CapMask: 0xc04a, PortGUID: 0x200000, GIDPrefix: 0xfe80000000000000, LinkLayer: "IB",
			GIDs: []string{"fe80:0000:0000:0000:0000:0000:0020:0000"}, PKeys: []uint16{0xffff},
		}},
	}
}

// Outputs of infiniband-diags 44 ibstat under ibsim, captured from the C tool.
func TestIbstatSimulatorOutput(t *testing.T) {
	tr := &umadtest.Opener{LocalCAs: []umad.CA{simCA()}}
	want := "Switch 'ibsim0'\n\tSwitch type: simulator\n\tNumber of ports: 0\n\tFirmware version: 1\n\tHardware version: a1\n" +
		"\tNode GUID: 0x0000000000200000\n\tSystem image GUID: 0x0000000000200000\n\tPort 0:\n\t\tState: Active\n" +
		"\t\tPhysical state: LinkUp\n\t\tRate: 10\n\t\tBase lid: 1\n\t\tLMC: 0\n\t\tSM lid: 1\n" +
		"\t\tCapability mask: 0x0000c04a\n\t\tPort GUID: 0x0000000000200000\n\t\tLink layer: IB\n"
	if r := runWith(tr, "ibstat"); r.stdout != want {
		t.Errorf("ibstat:\n%s", unifiedDiff(want, r.stdout))
	}
	if r := runWith(tr, "ibstat", "-p"); r.stdout != "0x0000000000200000\n" {
		t.Errorf("ibstat -p = %q", r.stdout)
	}
	want = "Switch: 'ibsim0'\nPort 0:\nState: Active\nPhysical state: LinkUp\nRate: 10\nBase lid: 1\nLMC: 0\nSM lid: 1\n" +
		"Capability mask: 0x0000c04a\nPort GUID: 0x0000000000200000\nLink layer: IB\n"
	if r := runWith(tr, "ibstat", "ibsim0", "0"); r.stdout != want {
		t.Errorf("ibstat ibsim0 0:\n%s", unifiedDiff(want, r.stdout))
	}
}

// Corners of ibstat.c's formatting.
func TestIbstatFormatting(t *testing.T) {
	long := strings.Repeat("x", 50)
	ca := umad.CA{
		Name: "r0", NodeType: 3, Type: long, FWVersion: long, HWRevision: long,
		Ports: []umad.PortInfo{
			{Num: 1, State: 0, PhysState: 0, Rate: "2.5 Gb/sec (1X SDR)"},
			{Num: 3, State: 5, PhysState: 8, Rate: "", LinkLayer: long},
			{Num: 4, State: 3, PhysState: 7, Rate: "10 Gb/sec (1X fdr10)"},
		},
	}
	r := runWith(&umadtest.Opener{LocalCAs: []umad.CA{ca, {Name: "iw0", NodeType: 4}, {Name: "zero", NodeType: 0}}}, "ibstat")
	want := "Router 'r0'\n" +
		"\tRouter type: " + long[:39] + "\n" +
		"\tNumber of ports: 4\n" + // the highest port number
		"\tFirmware version: " + long[:19] + "\n" +
		"\tHardware version: " + long[:19] + "\n" +
		"\tNode GUID: 0x0000000000000000\n\tSystem image GUID: 0x0000000000000000\n" +
		"\tPort 1:\n\t\tState: ???\n\t\tPhysical state: No state change\n\t\tRate: 2.5\n" +
		"\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00000000\n\t\tPort GUID: 0x0000000000000000\n\t\tLink layer: IB\n" +
		"\tPort 3:\n\t\tState: ???\n\t\tPhysical state: ???\n\t\tRate: 0\n" +
		"\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00000000\n\t\tPort GUID: 0x0000000000000000\n\t\tLink layer: " + long[:19] + "\n" +
		"\tPort 4:\n\t\tState: Armed\n\t\tPhysical state: PhyTest\n\t\tRate: 10 (FDR10)\n" +
		"\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 0\n\t\tCapability mask: 0x00000000\n\t\tPort GUID: 0x0000000000000000\n\t\tLink layer: IB\n"
	if r.stdout != want {
		t.Errorf("ibstat:\n%s", unifiedDiff(want, r.stdout))
	}
	// Devices that are not IB node types are not IB devices for ibstat.
	if r := runWith(&umadtest.Opener{LocalCAs: []umad.CA{{Name: "iw0", NodeType: 4}}}, "ibstat", "iw0"); r.code != cmdutil.ExitFailure {
		t.Errorf("ibstat iw0: %+v", r)
	}
	if r := runWith(&umadtest.Opener{CAsErr: errors.New("no InfiniBand port")}, "ibstat"); r.code != cmdutil.ExitFailure ||
		!strings.Contains(r.stderr, "can't list IB device names: no InfiniBand port") {
		t.Errorf("transport failure: %+v", r)
	}
}

// capNames0x02514868 are the names of mlx4_0's capability mask bits,
// libibmad's (spelling included).
var capNames0x02514868 = []string{"IsTrapSupported", "IsAutomaticMigrationSupported", "IsSLMappingSupported",
	"IsSystemImageGUIDsupported", "IsExtendedSpeedsSupported", "IsCommunicatonManagementSupported", "IsVendorClassSupported",
	"IsCapabilityMaskNoticeSupported", "IsClientRegistrationSupported"}

func TestIbstatJSON(t *testing.T) {
	root := fakeSysfs(t)
	r := runKernel(t, root, "ibstat", "--json")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	var got ibstat.IbstatResult
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.CAs) != 3 {
		t.Fatalf("%d CAs", len(got.CAs))
	}
	wantCA := ibstat.IbstatCAJSON{
		Name: "mlx4_0", NodeType: "ca", CAType: "MT4099", NumPorts: 2, FirmwareVersion: "2.42.5000",
		HardwareVersion: "b0", NodeGUID: 0x0002c90300a1b2c0, SystemImageGUID: 0x0002c90300a1b2c3,
		Ports: []ibstat.IbstatPortJSON{
			{Port: 1, State: 1, StateText: "Down", PhysicalState: 2, PhysicalStateText: "Polling", RateGbps: 10, RateText: "10 Gb/sec (4X SDR)",
				BaseLID: 0, LMC: 0, SMLID: 0, CapabilityMask: 0x02514868, CapabilityMaskNames: capNames0x02514868,
				PortGUID: 0x0002c90300a1b2c1, LinkLayer: "InfiniBand"},
			{Port: 2, State: 4, StateText: "Active", PhysicalState: 5, PhysicalStateText: "LinkUp", RateGbps: 40, RateText: "40 Gb/sec (4X FDR10)",
				BaseLID: 8, LMC: 1, SMLID: 1, CapabilityMask: 0x02514868, CapabilityMaskNames: capNames0x02514868,
				PortGUID: 0x0002c90300a1b2c2, LinkLayer: "InfiniBand"},
		},
	}
	if !reflect.DeepEqual(got.CAs[0], wantCA) {
		t.Errorf("mlx4_0 = %+v", got.CAs[0])
	}
	if p := got.CAs[2].Ports[0]; p.LinkLayer != "Ethernet" || p.RateGbps != 25 || p.PortGUID != 0x0ac0ebfffe214a0e {
		t.Errorf("mlx5_1 port = %+v", p)
	}
	// The exact text: snake_case keys, 2-space indent, trailing newline.
	r = runKernel(t, root, "ibstat", "--json", "mlx5_0", "1")
	want := `{
  "cas": [
    {
      "name": "mlx5_0",
      "node_type": "ca",
      "ca_type": "MT4119",
      "num_ports": 1,
      "firmware_version": "16.35.2000",
      "hardware_version": "0",
      "node_guid": "0x0c42a10300658a10",
      "system_image_guid": "0x0c42a10300658a10",
      "ports": [
        {
          "port": 1,
          "state": 4,
          "state_text": "Active",
          "physical_state": 5,
          "physical_state_text": "LinkUp",
          "rate_gbps": 100,
          "rate_text": "100 Gb/sec (4X EDR)",
          "base_lid": 4,
          "lmc": 0,
          "sm_lid": 1,
          "capability_mask": 642902088,
          "capability_mask_names": [
            "IsTrapSupported",
            "IsSLMappingSupported",
            "IsSystemImageGUIDsupported",
            "IsExtendedSpeedsSupported",
            "IsCapabilityMask2Supported",
            "IsCommunicatonManagementSupported",
            "IsVendorClassSupported",
            "IsCapabilityMaskNoticeSupported",
            "IsClientRegistrationSupported",
            "IsOtherLocalChangesNoticeSupported",
            "IsMcastPkeyTrapSuppressionSupported"
          ],
          "port_guid": "0x0c42a10300658a10",
          "link_layer": "InfiniBand"
        }
      ]
    }
  ]
}
`
	if r.stdout != want {
		t.Errorf("ibstat --json mlx5_0 1:\n%s", unifiedDiff(want, r.stdout))
	}
	r = runKernel(t, root, "ibstat", "--json", "-s")
	if strings.Contains(r.stdout, `"ports"`) || strings.Count(r.stdout, `"name"`) != 3 {
		t.Errorf("ibstat --json -s:\n%s", r.stdout)
	}
	r = runKernel(t, root, "ibstat", "--json", "-l")
	if r.stdout != "{\n  \"ca_names\": [\n    \"mlx4_0\",\n    \"mlx5_0\",\n    \"mlx5_1\"\n  ]\n}\n" {
		t.Errorf("ibstat --json -l:\n%s", r.stdout)
	}
	r = runKernel(t, root, "ibstat", "--json", "-p", "mlx5_0")
	if r.stdout != "{\n  \"port_guids\": [\n    \"0x0c42a10300658a10\"\n  ]\n}\n" {
		t.Errorf("ibstat --json -p mlx5_0:\n%s", r.stdout)
	}
	// Simulator values: 1X SDR is 2.5, "IB" is InfiniBand.
	ca := simCA()
	ca.Ports[0].Rate = "2.5 Gb/sec (1X SDR)"
	r = runWith(&umadtest.Opener{LocalCAs: []umad.CA{ca}}, "ibstat", "--json")
	if !strings.Contains(r.stdout, `"rate_gbps": 2.5,`) || !strings.Contains(r.stdout, `"link_layer": "InfiniBand"`) ||
		!strings.Contains(r.stdout, `"node_type": "switch"`) {
		t.Errorf("ibstat --json on a switch:\n%s", r.stdout)
	}
	r = runWith(&umadtest.Opener{}, "ibstat", "--json")
	if r.stdout != "{\n  \"cas\": []\n}\n" {
		t.Errorf("no CAs: %q", r.stdout)
	}
}

// ibstatusScript copies /usr/sbin/ibstatus with its sysfs path pointed at
// root.
func ibstatusScript(t *testing.T, root string) string {
	t.Helper()
	src, err := os.ReadFile("/usr/sbin/ibstatus")
	if err != nil {
		simfabric.Missing(t, fmt.Errorf("infiniband-diags' ibstatus script is not installed: %v", err))
	}
	if _, err := exec.LookPath("sh"); err != nil {
		simfabric.Missing(t, err)
	}
	s := strings.ReplaceAll(string(src), "/sys/class/infiniband", root+"/class/infiniband")
	path := filepath.Join(t.TempDir(), "ibstatus")
	if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func runScript(t *testing.T, script string, args ...string) cmdResult {
	t.Helper()
	cmd := exec.Command("sh", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cmdResult{out.String(), errOut.String(), code}
}

// Conformance: the real ibstatus script and ibtool's ibstatus on the same
// fake sysfs print the same bytes and exit the same way.
func TestIbstatusMatchesScript(t *testing.T) {
	root := fakeSysfs(t)
	script := ibstatusScript(t, root)
	for _, args := range []string{
		"",
		"mlx4_0",
		"mlx4_0:2",
		"mlx5_1:1 mlx4_0:1",
		"mlx5_0 mlx4_0",
		"mlx4_0:7",      // no such port: unknown values
		"mlx4_0:",       // an empty port list prints nothing
		"mlx4_0:x:2",    // the port is what follows the last colon
		"nosuch",        // fatal
		"mlx5_0 nosuch", // fatal after the first device
	} {
		t.Run(args, func(t *testing.T) {
			a := strings.Fields(args)
			c := runScript(t, script, a...)
			ours := runKernel(t, root, append([]string{"ibstatus"}, a...)...)
			if c.stdout != ours.stdout || c.code != ours.code {
				t.Errorf("ibstatus %s: script exit %d, ibtool exit %d\n%s", args, c.code, ours.code, unifiedDiff(c.stdout, ours.stdout))
			}
			if ours.stderr != "" {
				t.Errorf("stderr %q", ours.stderr)
			}
		})
	}
	t.Run("no devices", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nosys")
		c := runScript(t, ibstatusScript(t, missing))
		ours := runKernel(t, missing, "ibstatus")
		if c.stdout != "Fatal error:  No devices\n" || c.code != 255 {
			t.Fatalf("script: %+v", c)
		}
		if ours.stdout != c.stdout || ours.code != c.code {
			t.Errorf("ibtool: %+v", ours)
		}
		// Outside compat mode the error goes to stderr.
		if r := runKernel(t, missing, "ibtool", "ibstatus"); r.code != cmdutil.ExitFailure || r.stdout != "" || r.stderr != "ibstatus: No devices\n" {
			t.Errorf("ibtool ibstatus: %+v", r)
		}
	})
}

// ibstatus rebuilds the sysfs texts from the transport's numbers, so it
// works on the simulator too.
func TestIbstatusSimulator(t *testing.T) {
	ca := simCA()
	ca.Ports[0].GIDs = nil // rebuilt from prefix and port GUID
	r := runWith(&umadtest.Opener{LocalCAs: []umad.CA{ca}}, "ibstatus")
	want := "Infiniband device 'ibsim0' port 0 status:\n" +
		"\tdefault gid:\t fe80:0000:0000:0000:0000:0000:0020:0000\n" +
		"\tbase lid:\t 0x1\n" +
		"\tsm lid:\t\t 0x1\n" +
		"\tstate:\t\t 4: ACTIVE\n" +
		"\tphys state:\t 5: LinkUp\n" +
		"\trate:\t\t 10 Gb/sec (4X)\n" +
		"\tlink_layer:\t IB\n\n"
	if r.stdout != want || r.code != 0 {
		t.Errorf("ibstatus:\n%s", unifiedDiff(want, r.stdout))
	}
	// States and physical states outside the kernel's tables.
	ca.Ports[0].State, ca.Ports[0].PhysState = 9, 7
	r = runWith(&umadtest.Opener{LocalCAs: []umad.CA{ca}}, "ibstatus", "ibsim0:0")
	if !strings.Contains(r.stdout, "\tstate:\t\t 9: UNKNOWN\n\tphys state:\t 7: Phy Test\n") {
		t.Errorf("ibstatus:\n%s", r.stdout)
	}
	r = runWith(&umadtest.Opener{CAsErr: errors.New("no InfiniBand port")}, "ibstatus")
	if r.stdout != "Fatal error:  No devices\n" || r.code != cmdutil.ExitFailure {
		t.Errorf("transport failure: %+v", r)
	}
	r = runWith(&umadtest.Opener{CAsErr: errors.New("no InfiniBand port")}, "ibtool", "ibstatus")
	if r.stderr != "ibstatus: No devices: no InfiniBand port\n" || r.code != cmdutil.ExitFailure {
		t.Errorf("transport failure: %+v", r)
	}
}

func TestIbstatusJSON(t *testing.T) {
	root := fakeSysfs(t)
	r := runKernel(t, root, "ibstatus", "--json", "mlx4_0:2", "mlx5_1")
	want := `{
  "ports": [
    {
      "device": "mlx4_0",
      "port": 2,
      "default_gid": "fe80::2:c903:a1:b2c2",
      "base_lid": 8,
      "sm_lid": 1,
      "state": 4,
      "state_text": "ACTIVE",
      "physical_state": 5,
      "physical_state_text": "LinkUp",
      "rate_gbps": 40,
      "rate_text": "40 Gb/sec (4X FDR10)",
      "link_layer": "InfiniBand"
    },
    {
      "device": "mlx5_1",
      "port": 1,
      "default_gid": "fe80::ac0:ebff:fe21:4a0e",
      "base_lid": 0,
      "sm_lid": 0,
      "state": 4,
      "state_text": "ACTIVE",
      "physical_state": 5,
      "physical_state_text": "LinkUp",
      "rate_gbps": 25,
      "rate_text": "25 Gb/sec (1X EDR)",
      "link_layer": "Ethernet"
    }
  ]
}
`
	if r.code != 0 || r.stdout != want {
		t.Errorf("ibstatus --json (exit %d):\n%s", r.code, unifiedDiff(want, r.stdout))
	}
	r = runKernel(t, root, "ibstatus", "--json")
	var all struct{ Ports []ibstat.IbstatusPortJSON }
	if err := json.Unmarshal([]byte(r.stdout), &all); err != nil || len(all.Ports) != 4 {
		t.Errorf("ibstatus --json: %v, %d ports", err, len(all.Ports))
	}
	for _, args := range [][]string{{"mlx4_0:7"}, {"nosuch"}} {
		r := runKernel(t, root, append([]string{"ibstatus", "--json"}, args...)...)
		if r.code != cmdutil.ExitFailure || r.stdout != "" || r.stderr == "" {
			t.Errorf("ibstatus --json %v: %+v", args, r)
		}
	}
}

// Conformance with infiniband-diags 44 under the simulator (umad2sim's fake
// sysfs for the C tool, the ibsim transport for ibtool).
func TestIbstatMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct{ host, args string }{
		{"", ""},
		{"", "-l"},
		{"", "-p"},
		{"", "-s"},
		{"", "ibsim0"},
		{"", "ibsim0 0"},
		{"Hca1", ""},
		{"Hca1", "ibsim0 1"},
		{"Hca1", "-p ibsim0"},
		{"Hca3", "-s"},
	} {
		t.Run(tc.host+" "+tc.args, func(t *testing.T) {
			conform(t, f, tc.host, "ibstat", strings.Fields(tc.args)...)
		})
	}
}
