package sa

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/umad"
)

// The umad package's fake sysfs: mlx5_1 port 1 is RoCE (link-local GID at
// indexes 0 and 1, IPv4-mapped ::ffff:192.168.1.5 at 2 and 3), mlx4_0 is
// InfiniBand.
const fakeSysfs = "../umad/testdata/sysfs"

func fakeResolver(t *testing.T, ca string, port int) *Resolver {
	t.Helper()
	local, err := umad.ReadPort(fakeSysfs, ca, port)
	if err != nil {
		t.Fatal(err)
	}
	return &Resolver{Local: local} // no SA: RoCE must not need one
}

func TestResolveRoCEGMP(t *testing.T) {
	r := fakeResolver(t, "mlx5_1", 1)
	ctx := context.Background()
	for _, tc := range []struct {
		target    string
		gid       string
		index     uint8
		hopLimit  uint8
		errSubstr string
		errIs     error
	}{
		{target: "fe80::7ca0:70ff:feaf:8fc4", gid: "fe80::7ca0:70ff:feaf:8fc4", index: 0, hopLimit: 1},
		{target: "fe80:0000:0000:0000:0ac0:ebff:fe21:4a0f", gid: "fe80::ac0:ebff:fe21:4a0f", index: 0, hopLimit: 1},
		{target: "fe80::1%mlx5_1/1", gid: "fe80::1", index: 0, hopLimit: 1},
		{target: "fe80::1%mlx5_1", gid: "fe80::1", index: 0, hopLimit: 1},
		{target: "fe80::1%1", gid: "fe80::1", index: 0, hopLimit: 1},
		{target: "::ffff:192.168.1.6", gid: "::ffff:192.168.1.6", index: 2, hopLimit: 64},
		{target: "2001:db8::1", errSubstr: "mlx5_1 port 1 has no global GID"},
		{target: "fe80::1%mlx5_0/1", errSubstr: `scoped to local port "mlx5_0/1", but this runs on mlx5_1/1`},
		{target: "fe80::1%mlx5_1/2", errSubstr: "scoped to local port"},
		{target: "12", errIs: umad.ErrRoCENeedsGID},
		{target: "0,1", errIs: umad.ErrRoCENeedsGID},
		{target: "0x0ac0eb0300214a0e", errIs: umad.ErrRoCENeedsGID, errSubstr: "a GUID names no RoCE port"},
	} {
		tgt, err := endport.ParseTarget(tc.target, endport.TypeFlags{})
		if err != nil {
			t.Fatalf("%s: %v", tc.target, err)
		}
		p, err := r.GMP(ctx, tgt)
		if tc.errSubstr != "" || tc.errIs != nil {
			if err == nil || !strings.Contains(err.Error(), tc.errSubstr) || (tc.errIs != nil && !errors.Is(err, tc.errIs)) {
				t.Errorf("%s: err = %v; want %q / %v", tc.target, err, tc.errSubstr, tc.errIs)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.target, err)
			continue
		}
		want, _ := endport.ParseGID(tc.gid)
		a := p.Addr
		if a.LID != 0 || a.QP != 1 || a.QKey != umad.QP1QKey || a.SL != 0 || a.PKeyIndex != 0 || a.GRH == nil {
			t.Errorf("%s: address %+v; want LID 0, QP1, Q_Key 0x80010000 and a GRH", tc.target, a)
			continue
		}
		if g := *a.GRH; g != (umad.GRH{GID: want, GIDIndex: tc.index, HopLimit: tc.hopLimit}) {
			t.Errorf("%s: GRH %+v; want GID %s, index %d, hop limit %d", tc.target, g, tc.gid, tc.index, tc.hopLimit)
		}
	}
	if want := "RoCE has no LIDs or directed routes: address the port by GID"; umad.ErrRoCENeedsGID.Error() != want {
		t.Errorf("error text %q; want %q", umad.ErrRoCENeedsGID, want)
	}
}

func TestResolveRoCESMPAndLocal(t *testing.T) {
	r := fakeResolver(t, "mlx5_1", 1)
	tgt, _ := endport.ParseTarget("fe80::1", endport.TypeFlags{})
	if _, err := r.SMPLID(context.Background(), tgt); !errors.Is(err, umad.ErrRoCENoQP0) || !strings.HasPrefix(err.Error(), "mlx5_1 port 1: RoCE has no QP0") {
		t.Errorf("SMPLID on RoCE: %v; want the no-QP0 error", err)
	}
	want, _ := endport.ParseGID("fe80::ac0:ebff:fe21:4a0e")
	if lt := r.LocalTarget(); lt.Kind != endport.ByGID || lt.GID != want {
		t.Errorf("LocalTarget on RoCE = %+v; want GID %x", lt, want)
	}
	ib := fakeResolver(t, "mlx4_0", 2) // LID 8
	if lt := ib.LocalTarget(); lt.Kind != endport.ByLID || lt.LID != ib.Local.LID || lt.LID == 0 {
		t.Errorf("LocalTarget on IB = %+v; want LID %d", lt, ib.Local.LID)
	}
}

// On InfiniBand the scope is checked before any SA query.
func TestResolveScopeMismatchIB(t *testing.T) {
	r := fakeResolver(t, "mlx4_0", 1)
	tgt, _ := endport.ParseTarget("fe80::1%mlx4_0/2", endport.TypeFlags{})
	if _, err := r.GMP(context.Background(), tgt); err == nil || !strings.Contains(err.Error(), "but this runs on mlx4_0/1") {
		t.Errorf("err = %v; want a scope mismatch", err)
	}
}
