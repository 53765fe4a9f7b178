package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	verbscmd "github.com/ibtool/ibtool/internal/cli/cmd/verbs"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/verbs"
	"github.com/ibtool/ibtool/internal/verbs/rdmabw"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "verbs_rxe", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestIbvDevicesFormat(t *testing.T) {
	var js []verbscmd.VerbsDeviceJSON
	if err := json.Unmarshal(readTestdata(t, "rxe_devices.json"), &js); err != nil {
		t.Fatal(err)
	}
	var devs []verbs.Device
	for _, d := range js {
		devs = append(devs, verbs.Device{Name: d.Name, GUID: uint64(d.NodeGUID)})
	}
	want := string(readTestdata(t, "rxe_devices.txt"))
	if got := verbscmd.FormatIbvDevices(devs); got != want {
		t.Fatalf("ibv_devices differs from rdma-core's:\n%s", unifiedDiff(want, got))
	}
	if got := verbscmd.FormatIbvDevices(nil); got != "    device          \t   node GUID\n    ------          \t----------------\n" {
		t.Fatalf("empty list: %q", got)
	}
}

// devinfoFromJSON rebuilds what ibv_devinfo collected from a capture of its
// JSON (scripts/vm/guest-init.sh). The GUIDs, the ports' widths and speeds
// and the CQ moderation period are where the JSON vocabulary puts them
// (node_guid, width and speed_text, max_cq_period_ms), or, in a capture
// made before it, under their raw ibv_device_attr/ibv_port_attr keys.
func devinfoFromJSON(t *testing.T, b []byte) []*verbscmd.DevinfoDevice {
	t.Helper()
	type rawAttrs struct {
		Basic struct {
			NodeGUID     uint64 `json:"node_guid"`
			SysImageGUID uint64 `json:"sys_image_guid"`
		} `json:"basic"`
		CQModCaps struct {
			MaxCQPeriod   uint16  `json:"max_cq_period_us"`
			MaxCQPeriodMS float64 `json:"max_cq_period_ms"`
		} `json:"cq_mod_caps"`
	}
	type rawPortAttrs struct {
		ActiveWidth uint8 `json:"active_width"`
		ActiveSpeed uint8 `json:"active_speed"`
	}
	var js []struct {
		HCAID          string          `json:"hca_id"`
		NodeGUID       string          `json:"node_guid"`
		SysImageGUID   string          `json:"system_image_guid"`
		Transport      string          `json:"transport"`
		BoardID        string          `json:"board_id"`
		NumCompVectors int             `json:"num_comp_vectors"`
		Attributes     json.RawMessage `json:"attributes"`
		Ports          []struct {
			Port       int             `json:"port"`
			Width      string          `json:"width"`
			SpeedText  string          `json:"speed_text"`
			Attributes json.RawMessage `json:"attributes"`
			GIDs       []struct {
				Index int    `json:"index"`
				GID   string `json:"gid"`
				Type  string `json:"type"`
			} `json:"gids"`
		} `json:"ports"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	transports := map[string]verbs.Transport{"InfiniBand": verbs.TransportIB, "iWARP": verbs.TransportIWARP}
	types := map[string]verbs.GIDType{"IB": verbs.GIDTypeIB, "RoCE v1": verbs.GIDTypeRoCEv1, "RoCE v2": verbs.GIDTypeRoCEv2}
	var out []*verbscmd.DevinfoDevice
	for _, d := range js {
		info := &verbscmd.DevinfoDevice{Dev: verbs.Device{Name: d.HCAID, Transport: transports[d.Transport]},
			BoardID: d.BoardID, NumCompVectors: d.NumCompVectors}
		var raw rawAttrs
		if err := json.Unmarshal(d.Attributes, &info.Attr); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(d.Attributes, &raw); err != nil {
			t.Fatal(err)
		}
		info.Attr.NodeGUID, info.Attr.SysImageGUID = raw.Basic.NodeGUID, raw.Basic.SysImageGUID
		if d.NodeGUID != "" && strings.HasPrefix(d.NodeGUID, "0x") {
			info.Attr.NodeGUID = parseHexGUID(t, d.NodeGUID)
			info.Attr.SysImageGUID = parseHexGUID(t, d.SysImageGUID)
		}
		info.Attr.CQModCaps.MaxCQPeriod = raw.CQModCaps.MaxCQPeriod + uint16(math.Round(raw.CQModCaps.MaxCQPeriodMS*1000))
		for _, p := range d.Ports {
			port := verbscmd.DevinfoPort{Num: p.Port}
			var rp rawPortAttrs
			if err := json.Unmarshal(p.Attributes, &port.Attr); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(p.Attributes, &rp); err != nil {
				t.Fatal(err)
			}
			port.Attr.ActiveWidth, port.Attr.ActiveSpeed = rp.ActiveWidth, rp.ActiveSpeed
			if p.Width != "" {
				port.Attr.ActiveWidth = map[string]uint8{"1X": 1, "4X": 2, "8X": 4, "12X": 8, "2X": 16}[p.Width]
			}
			for code, name := range verbscmd.VerbsSpeedNames {
				if name != "" && p.SpeedText == name {
					port.Attr.ActiveSpeed = uint8(code)
				}
			}
			for _, g := range p.GIDs {
				gid, err := verbs.ParseGID(g.GID)
				if err != nil {
					t.Fatal(err)
				}
				typ, known := types[g.Type]
				port.GIDs = append(port.GIDs, verbscmd.DevinfoGID{Index: g.Index, GID: gid, Type: typ, TypeKnown: known})
			}
			info.Ports = append(info.Ports, port)
		}
		out = append(out, info)
	}
	return out
}

func parseHexGUID(t *testing.T, s string) uint64 {
	t.Helper()
	var g mad.GUID
	if err := g.UnmarshalText([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return uint64(g)
}

func TestIbvDevinfoMatchesRdmaCore(t *testing.T) {
	infos := devinfoFromJSON(t, readTestdata(t, "rxe_devinfo.json"))
	if len(infos) != 2 {
		t.Fatalf("%d devices in the capture", len(infos))
	}
	// A capture of today's JSON rebuilds the same devices.
	again, err := json.Marshal(verbscmd.DevinfoJSON(infos))
	if err != nil {
		t.Fatal(err)
	}
	for i, info := range devinfoFromJSON(t, again) {
		if got, want := verbscmd.FormatDevinfo(info, true), verbscmd.FormatDevinfo(infos[i], true); got != want {
			t.Errorf("%s from its JSON:\n%s", info.Dev.Name, unifiedDiff(want, got))
		}
	}
	for _, tc := range []struct {
		golden  string
		verbose bool
	}{{"rxe_devinfo.txt", false}, {"rxe_devinfo_v.txt", true}} {
		var got strings.Builder
		for _, info := range infos {
			got.WriteString(verbscmd.FormatDevinfo(info, tc.verbose))
		}
		want := string(readTestdata(t, tc.golden))
		if got.String() != want {
			t.Errorf("%s differs from rdma-core's:\n%s", tc.golden, unifiedDiff(want, got.String()))
		}
	}
}

func TestIbvDevinfoFormatting(t *testing.T) {
	if got := verbscmd.FormatDevinfoList(nil); got != "0 HCAs found:\n\n" {
		t.Errorf("-l without devices: %q", got)
	}
	if got := verbscmd.FormatDevinfoList([]verbs.Device{{Name: "mlx5_0"}}); got != "1 HCA found:\n\tmlx5_0\n\n" {
		t.Errorf("-l: %q", got)
	}
	ib, _ := verbs.ParseGID("fe80::2:c903:0:1491")
	for _, tc := range []struct {
		g    verbscmd.DevinfoGID
		ll   verbs.LinkLayer
		want string
	}{
		{verbscmd.DevinfoGID{Index: 0, GID: ib, Type: verbs.GIDTypeIB, TypeKnown: true}, verbs.LinkLayerInfiniBand,
			"\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0002:c903:0000:1491\n"},
		{verbscmd.DevinfoGID{Index: 3, GID: ib, Type: verbs.GIDTypeRoCEv1, TypeKnown: true}, verbs.LinkLayerEthernet,
			"\t\t\tGID[  3]:\t\tfe80:0000:0000:0000:0002:c903:0000:1491, RoCE v1\n"},
		{verbscmd.DevinfoGID{Index: 127, GID: ib, Type: verbs.GIDTypeRoCEv2, TypeKnown: true}, verbs.LinkLayerEthernet,
			"\t\t\tGID[127]:\t\tfe80::2:c903:0:1491, RoCE v2\n"},
		{verbscmd.DevinfoGID{Index: 1, GID: ib}, verbs.LinkLayerEthernet, ""},
	} {
		if got := verbscmd.FormatDevinfoGID(tc.g, tc.ll); got != tc.want {
			t.Errorf("GID line %q, want %q", got, tc.want)
		}
	}
	for w, s := range map[uint8]string{1: "1", 2: "4", 4: "8", 8: "12", 16: "2", 3: "invalid width"} {
		if verbscmd.WidthString(w) != s {
			t.Errorf("width %d = %q", w, verbscmd.WidthString(w))
		}
	}
	for v, s := range map[uint8]string{4: "10.0 Gbps", 8: "10.0 Gbps", 128: "100.0 Gbps", 3: "invalid speed"} {
		if verbscmd.SpeedString(v) != s {
			t.Errorf("speed %d = %q", v, verbscmd.SpeedString(v))
		}
	}
	var b strings.Builder
	verbscmd.WriteFlags(&b, 1<<0|1<<15|1<<29, verbscmd.DeviceCapFlagNames)
	if b.String() != "\t\t\t\t\tRESIZE_MAX_WR\n\t\t\t\t\tMANAGED_FLOW_STEERING\n\t\t\t\t\tUnknown flags: 0x8000\n" {
		t.Errorf("flags: %q", b.String())
	}
	if verbscmd.GuidString(0x0002c90300001491) != "0002:c903:0000:1491" {
		t.Error(verbscmd.GuidString(0x0002c90300001491))
	}
}

func TestRdmaBwReport(t *testing.T) {
	gid, _ := verbs.ParseGID("::ffff:10.99.0.2")
	r := &rdmabw.Result{Role: "client", Device: "rxe1", Port: 1, LinkLayer: "Ethernet", GIDIndex: 1, Size: 65536,
		Iters: 1000, TxDepth: 128, NumSGE: 1, MTU: 1024, Verified: true, LocalGID: gid.String(),
		Local: rdmabw.Endpoint{QPN: 0x11, PSN: 0xabcdef, RKey: 0x4b5, Addr: 0x7f786998a000}}
	r.Bytes, r.Seconds, r.BWAverage, r.MsgRate = 65536000, 1.625, 38.46, 0.000615
	got := verbscmd.FormatRdmaBwReport(r)
	for _, want := range []string{
		"RDMA_Write BW Test (ibtool rdma_bw, client)",
		" GID index      : 1\n",
		" local address: LID 0x0000 QPN 0x000011 PSN 0xabcdef RKey 0x000004b5 VAddr 0x00007f786998a000\n GID: ::ffff:10.99.0.2\n",
		" #bytes     #iterations    BW average[MB/sec]   MsgRate[Mpps]",
		" 65536      1000           38.46                0.000615        65536000       1.625     yes\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

// TestVerbsHelperProcess is ibtool in a child process, for tests that need
// a fresh process (libibverbs is loaded once per process).
func TestVerbsHelperProcess(t *testing.T) {
	if os.Getenv("IBTOOL_VERBS_HELPER") != "1" {
		return
	}
	args := strings.Split(os.Getenv("IBTOOL_VERBS_ARGS"), "\x1f")
	os.Exit(Main(append([]string{"ibtool"}, args...), cmdutil.StdIO()))
}

func runHelper(t *testing.T, env []string, args ...string) cmdResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestVerbsHelperProcess$")
	cmd.Env = append(os.Environ(), append(env, "IBTOOL_VERBS_HELPER=1", "IBTOOL_VERBS_ARGS="+strings.Join(args, "\x1f"))...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cmdResult{out.String(), errOut.String(), code}
}
