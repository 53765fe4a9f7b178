package endport

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/umad"
)

func TestParseTarget(t *testing.T) {
	gid := GIDFromGUID(0x0002c90300001491)
	for _, tc := range []struct {
		in    string
		flags TypeFlags
		want  Target
		err   string
	}{
		{in: "12", want: Target{Kind: ByLID, LID: 12}},
		{in: "0xc", want: Target{Kind: ByLID, LID: 12}},
		{in: "0,1,3", want: Target{Kind: ByDRPath, DRPath: []byte{0, 1, 3}}},
		{in: "0,1,3,", flags: TypeFlags{Direct: true}, want: Target{Kind: ByDRPath, DRPath: []byte{0, 1, 3}}},
		{in: "0", flags: TypeFlags{Direct: true}, want: Target{Kind: ByDRPath, DRPath: []byte{0}}},
		{in: "1", flags: TypeFlags{Direct: true}, err: "start at the local port 0"},
		{in: "0002:c903:0000:1491", want: Target{Kind: ByGUID, GUID: 0x0002c90300001491}},
		{in: "2:c903:0:1491", want: Target{Kind: ByGUID, GUID: 0x0002c90300001491}},
		{in: "0002c90300001491", want: Target{Kind: ByGUID, GUID: 0x0002c90300001491}},
		{in: "0x0002c90300001491", flags: TypeFlags{GUID: true}, want: Target{Kind: ByGUID, GUID: 0x0002c90300001491}},
		{in: "0x0002c90300001491", want: Target{Kind: ByGUID, GUID: 0x0002c90300001491}},
		{in: "0x10000", want: Target{Kind: ByGUID, GUID: 0x10000}},
		{in: "0xc000", err: "unicast LID"},
		{in: "0002:c903:0000:1491", flags: TypeFlags{GUID: true}, want: Target{Kind: ByGUID, GUID: 0x0002c90300001491}},
		{in: "fe80::2:c903:0:1491", want: Target{Kind: ByGID, GID: gid}},
		{in: "fe80:0:0:0:2:c903:0:1491", want: Target{Kind: ByGID, GID: gid}},
		{in: "fe80::2:c903:0:1491%mlx5_0/1", want: Target{Kind: ByGID, GID: gid, Local: "mlx5_0/1"}},
		{in: "IBPath(DLID=8,SL=2,pkey=0xFFF)", want: Target{Kind: ByLID, LID: 8,
			Path: map[string]string{"dlid": "8", "sl": "2", "pkey": "0xFFF"}}},
		{in: "IBPath(end_port='mlx4_0/1',DGID=fe80::2:c903:0:1491)", want: Target{Kind: ByGID, GID: gid, Local: "mlx4_0/1",
			Path: map[string]string{"end_port": "mlx4_0/1", "dgid": "fe80::2:c903:0:1491"}}},
		{in: "IBDRPath(drPath=0:1:3:)", want: Target{Kind: ByDRPath, DRPath: []byte{0, 1, 3},
			Path: map[string]string{"drpath": "0:1:3:"}}},
		// errors
		{in: "", err: "empty target"},
		{in: "0", err: "unicast LID"},
		{in: "49152", err: "unicast LID"},
		{in: "foo", err: `invalid target "foo"`},
		{in: "0002:c903:0000", err: "needs 16 hex digits"},
		{in: "0002:c903:0000:14zz", err: "not hex"},
		{in: "0002:c903:00000:1491", err: "groups of 1 to 4"},
		{in: "fe80::zz", err: "invalid GID"},
		{in: "fe80::1%", err: "names no local port"},
		{in: "1,2", err: "start at the local port 0"},
		{in: "12", flags: TypeFlags{Direct: true, LID: true}, err: "exclude each other"},
		{in: "0,1", flags: TypeFlags{LID: true}, err: "-L asks for a LID"},
		{in: "fe80::1", flags: TypeFlags{LID: true}, err: "-L asks for a LID"},
		{in: "12", flags: TypeFlags{GUID: true}, want: Target{Kind: ByGUID, GUID: 12}},
		{in: "0,1", flags: TypeFlags{GUID: true}, err: "-G asks for a GUID"},
		{in: "zz", flags: TypeFlags{GUID: true}, err: "invalid GUID"},
		{in: "IBPath(FOO=1)", err: `unknown field "FOO=1"`},
		{in: "IBPath(SL=2)", err: "needs DLID or DGID"},
		{in: "IBPath(DLID=x)", err: "dlid"},
		{in: "Path(DLID=1)", err: "use IBPath"},
		{in: "IBPath(DLID=1", err: "use IBPath"},
	} {
		got, err := ParseTarget(tc.in, tc.flags)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTarget(%q, %+v) error = %v, want one containing %q", tc.in, tc.flags, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTarget(%q, %+v): %v", tc.in, tc.flags, err)
			continue
		}
		if !sameTarget(got, tc.want) {
			t.Errorf("ParseTarget(%q, %+v) = %+v, want %+v", tc.in, tc.flags, got, tc.want)
		}
	}
}

func sameTarget(a, b Target) bool {
	if a.Kind != b.Kind || a.LID != b.LID || a.GUID != b.GUID || a.GID != b.GID ||
		string(a.DRPath) != string(b.DRPath) || a.Local != b.Local || len(a.Path) != len(b.Path) {
		return false
	}
	for k, v := range a.Path {
		if b.Path[k] != v {
			return false
		}
	}
	return true
}

func TestFormatGID(t *testing.T) {
	if got := FormatGID(GIDFromGUID(0x0002c90300001491)); got != "fe80::2:c903:0:1491" {
		t.Fatalf("FormatGID = %q", got)
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"12", "0,1,3", "fe80::1%mlx5_0/1", "0002:c903:0000:1491", "IBPath(DLID=8,SL=2)", "IBDRPath(drPath=0:1:)"} {
		f.Add(s, false, false, false)
	}
	f.Fuzz(func(t *testing.T, s string, d, l, g bool) {
		tgt, err := ParseTarget(s, TypeFlags{Direct: d, LID: l, GUID: g})
		if err == nil && tgt.Kind == 0 {
			t.Fatalf("ParseTarget(%q) succeeded without a kind", s)
		}
	})
}

var testCAs = []umad.CA{
	{Name: "mlx4_0", NodeGUID: 0x0002c90300001490, Ports: []umad.PortInfo{
		{Num: 1, State: 1, PortGUID: 0x0002c90300001491},
		{Num: 2, State: 2, PortGUID: 0x0002c90300001492},
	}},
	{Name: "mlx5_0", NodeGUID: 0x0002c90300002000, Ports: []umad.PortInfo{
		{Num: 1, State: 4, PortGUID: 0x0002c90300002001, GIDs: []string{"fe80:0000:0000:0000:0002:c903:0000:2001", "0000:0000:0000:0000:0000:ffff:0a63:0001"}},
	}},
}

func TestSelectLocal(t *testing.T) {
	for _, tc := range []struct {
		ca, port string
		want     Local
		err      string
	}{
		{"", "", Local{"mlx5_0", 1}, ""}, // the first Active port
		{"mlx4_0", "", Local{"mlx4_0", 2}, ""},
		{"mlx4_0", "1", Local{"mlx4_0", 1}, ""},
		{"0x0002c90300001490", "2", Local{"mlx4_0", 2}, ""},
		{"0002:c903:0000:1490", "", Local{"mlx4_0", 2}, ""},
		{"", "1", Local{"mlx5_0", 1}, ""},
		{"", "mlx4_0/1", Local{"mlx4_0", 1}, ""},
		{"", "0002:c903:0000:1492", Local{"mlx4_0", 2}, ""},
		{"", "0x0002c90300001492", Local{"mlx4_0", 2}, ""},
		{"", "fe80::2:c903:0:2001", Local{"mlx5_0", 1}, ""},
		{"", "::ffff:10.99.0.1", Local{"mlx5_0", 1}, ""},
		{"", "fe80::2:c903:0:1491", Local{"mlx4_0", 1}, ""},
		{"mlx9_0", "", Local{}, `local CA "mlx9_0" not found (have mlx4_0, mlx5_0)`},
		{"mlx4_0", "3", Local{}, "local port 3 not found on mlx4_0"},
		{"", "2", Local{}, "local port 2 not found on mlx5_0"},
		{"mlx4_0", "mlx4_0/1", Local{}, "with -C, -P is a port number"},
		{"", "mlx4_0/x", Local{}, "invalid local port"},
		{"", "fe80::99", Local{}, "no local port has GID"},
		{"", "0002:c903:0000:9999", Local{}, "no local port has GUID"},
		{"", "bogus", Local{}, "use a number, ca/port"},
	} {
		got, err := SelectLocal(testCAs, tc.ca, tc.port)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SelectLocal(%q, %q) error = %v, want %q", tc.ca, tc.port, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("SelectLocal(%q, %q) = %+v, %v; want %+v", tc.ca, tc.port, got, err, tc.want)
		}
	}
	if _, err := SelectLocal(nil, "", ""); err == nil || !strings.Contains(err.Error(), "no local InfiniBand CA") {
		t.Errorf("SelectLocal with no CAs: %v", err)
	}
}
