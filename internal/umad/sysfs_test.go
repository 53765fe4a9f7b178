package umad

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testSysfs is a fake sysfs with three CAs: mlx4_0 (two IB ports, port 1
// Down, port 2 Active at FDR10), mlx5_0 (one Active IB port, EDR 4X) and
// mlx5_1 (one RoCE port).
const testSysfs = "testdata/sysfs"

const zeroGID = "0000:0000:0000:0000:0000:0000:0000:0000"

func wantTestCAs() []CA {
	return []CA{
		{
			Name: "mlx4_0", NodeType: 1, Type: "MT4099", FWVersion: "2.42.5000", HWRevision: "b0",
			NodeGUID: 0x0002c90300a1b2c0, SysImageGUID: 0x0002c90300a1b2c3,
			Ports: []PortInfo{
				{
					CA: "mlx4_0", Num: 1, LID: 0, LMC: 0, SMLID: 0, SMSL: 0, State: 1, PhysState: 2,
					Rate: "10 Gb/sec (4X SDR)", CapMask: 0x02514868,
					PortGUID: 0x0002c90300a1b2c1, GIDPrefix: 0xfe80000000000000, LinkLayer: "InfiniBand",
					GIDs:  []string{"fe80:0000:0000:0000:0002:c903:00a1:b2c1", zeroGID},
					PKeys: []uint16{0xffff, 0x0000},
				},
				{
					CA: "mlx4_0", Num: 2, LID: 8, LMC: 1, SMLID: 1, SMSL: 0, State: 4, PhysState: 5,
					Rate: "40 Gb/sec (4X FDR10)", CapMask: 0x02514868,
					PortGUID: 0x0002c90300a1b2c2, GIDPrefix: 0xfe80000000000000, LinkLayer: "InfiniBand",
					GIDs:  []string{"fe80:0000:0000:0000:0002:c903:00a1:b2c2", zeroGID},
					PKeys: []uint16{0xffff, 0x8001},
				},
			},
		},
		{
			Name: "mlx5_0", NodeType: 1, Type: "MT4119", FWVersion: "16.35.2000", HWRevision: "0",
			NodeGUID: 0x0c42a10300658a10, SysImageGUID: 0x0c42a10300658a10,
			Ports: []PortInfo{{
				CA: "mlx5_0", Num: 1, LID: 4, LMC: 0, SMLID: 1, SMSL: 0, State: 4, PhysState: 5,
				Rate: "100 Gb/sec (4X EDR)", CapMask: 0x2651e848,
				PortGUID: 0x0c42a10300658a10, GIDPrefix: 0xfe80000000000000, LinkLayer: "InfiniBand",
				GIDs:  []string{"fe80:0000:0000:0000:0c42:a103:0065:8a10", zeroGID, zeroGID},
				PKeys: []uint16{0xffff, 0x0000},
			}},
		},
		{
			Name: "mlx5_1", NodeType: 1, Type: "MT4117", FWVersion: "14.32.1010", HWRevision: "0",
			NodeGUID: 0x0ac0eb0300214a0e, SysImageGUID: 0x0ac0eb0300214a0e,
			Ports: []PortInfo{{
				CA: "mlx5_1", Num: 1, LID: 0, LMC: 0, SMLID: 0, SMSL: 0, State: 4, PhysState: 5,
				Rate: "25 Gb/sec (1X EDR)", CapMask: 0x04010000,
				PortGUID: 0x0ac0ebfffe214a0e, GIDPrefix: 0xfe80000000000000, LinkLayer: "Ethernet",
				GIDs: []string{
					"fe80:0000:0000:0000:0ac0:ebff:fe21:4a0e",
					"fe80:0000:0000:0000:0ac0:ebff:fe21:4a0e",
					"0000:0000:0000:0000:0000:ffff:c0a8:0105",
					"0000:0000:0000:0000:0000:ffff:c0a8:0105",
				},
				PKeys: []uint16{0xffff},
			}},
		},
	}
}

func TestReadCAs(t *testing.T) {
	cas, err := ReadCAs(testSysfs)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantTestCAs(); !reflect.DeepEqual(cas, want) {
		t.Errorf("ReadCAs:\n got %+v\nwant %+v", cas, want)
	}
}

func TestReadPort(t *testing.T) {
	p, err := ReadPort(testSysfs, "mlx4_0", 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantTestCAs()[0].Ports[1]; !reflect.DeepEqual(p, want) {
		t.Errorf("ReadPort:\n got %+v\nwant %+v", p, want)
	}
	if _, err := ReadPort(testSysfs, "mlx4_0", 3); err == nil || !strings.Contains(err.Error(), "'mlx4_0' port 3") {
		t.Errorf("ReadPort of a missing port: err = %v", err)
	}
}

// copyTree copies the test sysfs into a temporary directory so a test can
// break it.
func copyTree(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(testSysfs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(testSysfs, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// A real /sys/class/infiniband holds symlinks into /sys/devices.
func TestReadCAsSymlinks(t *testing.T) {
	root := copyTree(t)
	class := filepath.Join(root, sysClassIB)
	devs := filepath.Join(root, "devices", "pci0000:00", "infiniband")
	if err := os.MkdirAll(devs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ca := range []string{"mlx4_0", "mlx5_0", "mlx5_1"} {
		if err := os.Rename(filepath.Join(class, ca), filepath.Join(devs, ca)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", "..", "devices", "pci0000:00", "infiniband", ca), filepath.Join(class, ca)); err != nil {
			t.Fatal(err)
		}
	}
	cas, err := ReadCAs(root)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cas, wantTestCAs()) {
		t.Errorf("ReadCAs through symlinks:\n got %+v", cas)
	}
	if !HasKernelDevices(root) {
		t.Error("HasKernelDevices = false")
	}
}

func TestReadCAsMissingClass(t *testing.T) {
	cas, err := ReadCAs(t.TempDir())
	if cas != nil || err != nil {
		t.Errorf("ReadCAs without class/infiniband = %v, %v; want nil, nil", cas, err)
	}
}

// Each case breaks mlx4_0 one way; mlx4_0 is then either skipped with its
// error kept (the others still listed) or read with the field relaxed.
func TestReadCAsBadFiles(t *testing.T) {
	const ca = "class/infiniband/mlx4_0"
	const port1 = ca + "/ports/1"
	cases := []struct {
		name    string
		break_  func(root string) error
		wantErr string                   // "" = mlx4_0 still read
		check   func(t *testing.T, c CA) // when read
	}{
		{"no node_type", remove(ca + "/node_type"), "node_type", nil},
		{"no node_guid", remove(ca + "/node_guid"), "node_guid", nil},
		{"bad sys_image_guid", write(ca+"/sys_image_guid", "garbage\n"), "sys_image_guid", nil},
		{"no ports dir", removeAll(ca + "/ports"), "cannot list ports", nil},
		{"odd port entry", mkdir(ca + "/ports/x1"), `unexpected entry "x1"`, nil},
		{"no lid", remove(port1 + "/lid"), "port 1", nil},
		{"no state", remove(port1 + "/state"), "state", nil},
		{"no cap_mask", remove(port1 + "/cap_mask"), "cap_mask", nil},
		{"no gids", removeAll(port1 + "/gids"), "gids", nil},
		{"bad gid 0", write(port1+"/gids/0", "fe80:0000\n"), "gids/0", nil},
		{"no pkeys", removeAll(port1 + "/pkeys"), "pkeys", nil},
		{"empty pkeys", removeAll(port1+"/pkeys/0", port1+"/pkeys/1"), "no P_Keys", nil},
		{"no rate", remove(port1 + "/rate"), "", func(t *testing.T, c CA) {
			if c.Ports[0].Rate != "" {
				t.Errorf("Rate = %q", c.Ports[0].Rate)
			}
		}},
		{"no link_layer", remove(port1 + "/link_layer"), "", func(t *testing.T, c CA) {
			if c.Ports[0].LinkLayer != "" {
				t.Errorf("LinkLayer = %q", c.Ports[0].LinkLayer)
			}
		}},
		{"no fw_ver hw_rev hca_type", removeAll(ca+"/fw_ver", ca+"/hw_rev", ca+"/hca_type"), "", func(t *testing.T, c CA) {
			if c.FWVersion != "" || c.HWRevision != "" || c.Type != "" {
				t.Errorf("got %q %q %q", c.FWVersion, c.HWRevision, c.Type)
			}
		}},
		{"gap in gid table", write(port1+"/gids/5", "fe80:0000:0000:0000:0000:0000:0000:0005\n"), "", func(t *testing.T, c CA) {
			g := c.Ports[0].GIDs
			if len(g) != 6 || g[2] != "" || g[5] != "fe80:0000:0000:0000:0000:0000:0000:0005" {
				t.Errorf("GIDs = %q", g)
			}
		}},
		{"file without newline", write(port1+"/lid", "0x1c"), "", func(t *testing.T, c CA) {
			if c.Ports[0].LID != 0x1c {
				t.Errorf("LID = %#x", c.Ports[0].LID)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := copyTree(t)
			if err := tc.break_(root); err != nil {
				t.Fatal(err)
			}
			cas, err := ReadCAs(root)
			names := make([]string, len(cas))
			for i, c := range cas {
				names[i] = c.Name
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ReadCAs: %v", err)
				}
				if len(cas) != 3 || cas[0].Name != "mlx4_0" {
					t.Fatalf("CAs = %v", names)
				}
				tc.check(t, cas[0])
				return
			}
			if got := strings.Join(names, ","); got != "mlx5_0,mlx5_1" {
				t.Errorf("CAs = %s; want the two good ones", got)
			}
			var ce CAErrors
			if !errors.As(err, &ce) || len(ce) != 1 || ce[0].CA != "mlx4_0" {
				t.Fatalf("err = %#v; want CAErrors for mlx4_0", err)
			}
			if ce.Skipped("mlx4_0") == nil || ce.Skipped("mlx5_0") != nil {
				t.Error("Skipped")
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "'mlx4_0'") {
				t.Errorf("err = %q; want it to mention %q", err, tc.wantErr)
			}
		})
	}
}

func remove(rel string) func(string) error {
	return func(root string) error { return os.Remove(filepath.Join(root, rel)) }
}

func removeAll(rels ...string) func(string) error {
	return func(root string) error {
		for _, rel := range rels {
			if err := os.RemoveAll(filepath.Join(root, rel)); err != nil {
				return err
			}
		}
		return nil
	}
}

func write(rel, content string) func(string) error {
	return func(root string) error { return os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644) }
}

func mkdir(rel string) func(string) error {
	return func(root string) error { return os.MkdirAll(filepath.Join(root, rel), 0o755) }
}

func TestHasKernelDevices(t *testing.T) {
	if !HasKernelDevices(testSysfs) {
		t.Error("testdata: HasKernelDevices = false")
	}
	if HasKernelDevices(t.TempDir()) {
		t.Error("empty root: HasKernelDevices = true")
	}
	// ib_umad loaded but no device: only abi_version; issm alone is not enough.
	root := t.TempDir()
	for _, f := range []string{"abi_version", "issm0/ibdev"} {
		p := filepath.Join(root, sysClassMAD, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("5\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if HasKernelDevices(root) {
		t.Error("abi_version and issm0 only: HasKernelDevices = true")
	}
}

func TestParseULong(t *testing.T) {
	cases := []struct {
		in   string
		base int
		want uint64
	}{
		{"4: ACTIVE", 0, 4},
		{"5: LinkUp", 0, 5},
		{"0x4", 0, 4},
		{"0X1f", 0, 31},
		{"0x2651e848", 0, 0x2651e848},
		{"  12\n", 0, 12},
		{"010", 0, 8},
		{"08", 0, 0}, // octal stops at 8
		{"0x", 0, 0},
		{"0xg", 0, 0},
		{"100 Gb/sec (4X EDR)", 0, 100},
		{"2.5 Gb/sec (1X SDR)", 0, 2},
		{"", 0, 0},
		{"junk", 0, 0},
		{"+7", 0, 7},
		{"-1", 0, 1<<64 - 1},
		{"99999999999999999999999", 0, 1<<64 - 1},
		{"fe80", 16, 0xfe80},
		{"0xfe80", 16, 0xfe80},
		{"FFFF", 16, 0xffff},
		{"z", 36, 35},
		{"1", 1, 0},
	}
	for _, c := range cases {
		if got := parseULong(c.in, c.base); got != c.want {
			t.Errorf("parseULong(%q, %d) = %d; want %d", c.in, c.base, got, c.want)
		}
	}
}

func TestParseGUIDAndGID(t *testing.T) {
	guids := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0002:c903:00a1:b2c0", 0x0002c90300a1b2c0, true},
		{"0c42:a103:0065:8a10\n", 0x0c42a10300658a10, true},
		{"1:2:3:4", 0x0001000200030004, true},
		{"1::3:4", 0x0001000000030004, true}, // strsep keeps empty fields
		{"12345:0:0:1", 0x2345000000000001, true},
		{"1:2:3", 0, false},
		{"", 0, false},
	}
	for _, c := range guids {
		got, err := parseGUID(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseGUID(%q) = %#x, %v", c.in, got, err)
		}
	}
	gid, err := parseGID("fe80:0000:0000:0000:0002:c903:00a1:b2c1")
	if err != nil {
		t.Fatal(err)
	}
	want := [16]byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc1}
	if gid != want {
		t.Errorf("parseGID = % x", gid)
	}
	if p, g := gidHalves(gid); p != 0xfe80000000000000 || g != 0x0002c90300a1b2c1 {
		t.Errorf("gidHalves = %#x %#x", p, g)
	}
	if _, err := parseGID("fe80:0000:0000:0000:0002:c903:00a1"); err == nil {
		t.Error("parseGID accepted 7 groups")
	}
}

func TestSplitSep(t *testing.T) {
	got := splitSep("a:b::c d", ": ")
	if want := []string{"a", "b", "", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("splitSep = %q", got)
	}
}

// FuzzParseSysfs checks that the sysfs text parsers never panic, and that
// a GUID's groups come back unchanged.
func FuzzParseSysfs(f *testing.F) {
	for _, s := range []string{"4: ACTIVE", "0x4", "0002:c903:00a1:b2c0", "fe80:0000:0000:0000:0002:c903:00a1:b2c1", "-0x", " +0", "::::::::", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseULong(s, 0)
		parseULong(s, 16)
		parseGID(s)
		if g, err := parseGUID(s); err == nil {
			back, err := parseGUID(formatGUIDGroups(g))
			if err != nil || back != g {
				t.Errorf("GUID %#x did not survive a round trip: %#x %v", g, back, err)
			}
		}
		if _, ok := portNumber(s); ok && strings.TrimLeft(s, "0123456789") != "" {
			t.Errorf("portNumber accepted %q", s)
		}
	})
}

func formatGUIDGroups(g uint64) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 3; i >= 0; i-- {
		x := uint16(g >> (16 * i))
		b.WriteByte(hex[x>>12])
		b.WriteByte(hex[x>>8&15])
		b.WriteByte(hex[x>>4&15])
		b.WriteByte(hex[x&15])
		if i > 0 {
			b.WriteByte(':')
		}
	}
	return b.String()
}
