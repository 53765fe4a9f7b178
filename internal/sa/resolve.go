package sa

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// Path is where a GMP goes, as a PathRecord describes it.
type Path struct {
	Addr           umad.Address
	MTU            mad.MTU
	PacketLifeTime uint8
	Record         *mad.PathRecord
}

// Resolver turns targets into addresses for SMPs and GMPs.
type Resolver struct {
	SA    *Client
	Local umad.PortInfo
}

// PathTo asks the SA for one reversible path from the local port to a
// destination given by LID or GID (IBA 15.2.5.16). GMPs travel on it: its
// SL, P_Key and packet lifetime are the ones the subnet manager set up.
func (r *Resolver) PathTo(ctx context.Context, dlid uint16, dgid *mad.GID) (*Path, error) {
	var q mad.PathRecord
	q.SGID = r.localGID()
	q.Reversible = 1
	q.NumbPath = 1
	fields := []string{"SGID", "Reversible", "NumbPath"}
	if dgid != nil {
		q.DGID = *dgid
		fields = append(fields, "DGID")
	} else {
		q.DLID = dlid
		fields = append(fields, "DLID")
	}
	mask, err := mad.CompMask(q.Desc(), fields...)
	if err != nil {
		return nil, err
	}
	recs, err := r.SA.GetTable(ctx, mad.AttrPathRecord, mad.Encode(&q), mask)
	if err != nil {
		return nil, fmt.Errorf("PathRecord query for %s: %w", destText(dlid, dgid), err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("the SA knows no path to %s", destText(dlid, dgid))
	}
	var pr mad.PathRecord
	if err := pr.Unmarshal(recs[0]); err != nil {
		return nil, err
	}
	return &Path{
		Addr: umad.Address{
			LID: pr.DLID, QP: 1, QKey: umad.QP1QKey, SL: pr.SL,
			PKeyIndex: r.pkeyIndex(pr.PKey),
		},
		MTU:            pr.MTU,
		PacketLifeTime: pr.PacketLifeTime,
		Record:         &pr,
	}, nil
}

// localGID is the local port's GID 0: its subnet prefix and port GUID.
func (r *Resolver) localGID() mad.GID {
	var g mad.GID
	gid := endport.GIDFromGUID(r.Local.PortGUID)
	if r.Local.GIDPrefix != 0 {
		for i := 0; i < 8; i++ {
			gid[i] = byte(r.Local.GIDPrefix >> (56 - 8*i))
		}
	}
	copy(g[:], gid[:])
	return g
}

// pkeyIndex finds a P_Key in the local port's table (full or limited
// member), defaulting to index 0.
func (r *Resolver) pkeyIndex(pkey uint16) uint16 {
	for i, k := range r.Local.PKeys {
		if k&0x7FFF == pkey&0x7FFF && k != 0 {
			return uint16(i)
		}
	}
	return 0
}

// LIDOfDRPath finds the LID at the end of a directed route by following
// the SA's LinkRecords hop by hop from the local port: GMPs cannot travel
// directed routes.
func (r *Resolver) LIDOfDRPath(ctx context.Context, path []byte) (uint16, error) {
	lid := r.Local.LID
	if lid == 0 {
		return 0, fmt.Errorf("the local port has no LID: the subnet is not configured")
	}
	for hop, port := range path[1:] {
		var q mad.LinkRecord
		q.FromLID = lid
		q.FromPort = port
		mask, err := mad.CompMask(q.Desc(), "FromLID", "FromPort")
		if err != nil {
			return 0, err
		}
		recs, err := r.SA.GetTable(ctx, mad.AttrLinkRecord, mad.Encode(&q), mask)
		if err != nil {
			return 0, fmt.Errorf("LinkRecord query for hop %d of DR path %s: %w", hop+1, mad.FormatDRPath(path), err)
		}
		if len(recs) == 0 {
			return 0, fmt.Errorf("DR path %s: no link from LID %d port %d (hop %d)", mad.FormatDRPath(path), lid, port, hop+1)
		}
		var lr mad.LinkRecord
		if err := lr.Unmarshal(recs[0]); err != nil {
			return 0, err
		}
		lid = lr.ToLID
	}
	return lid, nil
}

// GMP resolves a target to the path a GMP (PerfMgt, vendor, ...) takes:
// on InfiniBand always through a PathRecord, after turning a DR path into
// a LID; on RoCE straight to the target's GID (see roceGMP). A scoped GID
// ("GID%rxe1/1") must name the local port the resolver works on.
func (r *Resolver) GMP(ctx context.Context, t endport.Target) (*Path, error) {
	if err := r.checkScope(t); err != nil {
		return nil, err
	}
	if umad.IsRoCE(r.Local) {
		return r.roceGMP(t)
	}
	switch t.Kind {
	case endport.ByLID:
		return r.PathTo(ctx, t.LID, nil)
	case endport.ByGUID:
		gid := mad.GID(endport.GIDFromGUID(t.GUID))
		return r.PathTo(ctx, 0, &gid)
	case endport.ByGID:
		gid := mad.GID(t.GID)
		return r.PathTo(ctx, 0, &gid)
	case endport.ByDRPath:
		lid, err := r.LIDOfDRPath(ctx, t.DRPath)
		if err != nil {
			return nil, err
		}
		return r.PathTo(ctx, lid, nil)
	}
	return nil, fmt.Errorf("cannot resolve a %s target", t.Kind)
}

// SMPLID resolves a GUID or GID target to the LID an SMP is sent to (LID
// and DR targets need no SA).
func (r *Resolver) SMPLID(ctx context.Context, t endport.Target) (uint16, error) {
	if umad.IsRoCE(r.Local) {
		return 0, fmt.Errorf("%s port %d: %w", r.Local.CA, r.Local.Num, umad.ErrRoCENoQP0)
	}
	switch t.Kind {
	case endport.ByLID:
		return t.LID, nil
	case endport.ByGUID, endport.ByGID:
		p, err := r.GMP(ctx, t)
		if err != nil {
			return 0, err
		}
		return p.Addr.LID, nil
	}
	return 0, fmt.Errorf("a %s target has no LID", t.Kind)
}

func destText(dlid uint16, dgid *mad.GID) string {
	if dgid != nil {
		return "GID " + dgid.String()
	}
	return fmt.Sprintf("LID %d", dlid)
}

// RoCE: there is no subnet manager, so no SA, no PathRecords and no LIDs.
// A GMP goes to QP1 of the port that owns the destination GID, in a GRH
// sent from a local GID of the same kind, and the kernel resolves the
// Ethernet address from the GIDs.

// LocalTarget is the local port as a target: its LID on InfiniBand, its
// link-local GID on RoCE.
func (r *Resolver) LocalTarget() endport.Target {
	if umad.IsRoCE(r.Local) {
		for _, g := range r.Local.GIDs {
			if gid, err := endport.ParseGID(g); err == nil && isLinkLocal(gid) {
				return endport.Target{Kind: endport.ByGID, GID: gid}
			}
		}
	}
	return endport.Target{Kind: endport.ByLID, LID: r.Local.LID}
}

// roceGMP addresses a GMP on a RoCE port: QP1 with the well-known Q_Key,
// LID 0, and a GRH to the target GID. Only GID targets make sense there.
func (r *Resolver) roceGMP(t endport.Target) (*Path, error) {
	switch t.Kind {
	case endport.ByGID:
	case endport.ByGUID:
		return nil, fmt.Errorf("%w (a GUID names no RoCE port: there is no SA to map it to a GID)", umad.ErrRoCENeedsGID)
	default:
		return nil, umad.ErrRoCENeedsGID
	}
	index, hops, err := r.sourceGID(t.GID)
	if err != nil {
		return nil, err
	}
	return &Path{Addr: umad.Address{
		QP: 1, QKey: umad.QP1QKey,
		GRH: &umad.GRH{GID: t.GID, GIDIndex: index, HopLimit: hops},
	}}, nil
}

// sourceGID picks the local GID a GRH to dgid is sent from, and the hop
// limit: for a link-local (fe80::/10) destination the first link-local
// local GID (normally index 0) and 1 hop, since such a packet never leaves
// the link; for an IPv4-mapped one the first IPv4-mapped GID, otherwise
// the first global IPv6 GID, and 64 hops (RoCEv2 routes them as IP).
func (r *Resolver) sourceGID(dgid [16]byte) (uint8, uint8, error) {
	want, hops, kind := isLinkLocal, uint8(1), "link-local"
	switch {
	case isIPv4Mapped(dgid):
		want, hops, kind = isIPv4Mapped, 64, "IPv4-mapped"
	case !isLinkLocal(dgid):
		want, hops, kind = func(g [16]byte) bool { return !isLinkLocal(g) && !isIPv4Mapped(g) }, 64, "global"
	}
	for i, text := range r.Local.GIDs {
		g, err := endport.ParseGID(text)
		if err != nil || g == ([16]byte{}) || i > 255 {
			continue
		}
		if want(g) {
			return uint8(i), hops, nil
		}
	}
	return 0, 0, fmt.Errorf("%s port %d has no %s GID to reach GID %s from", r.Local.CA, r.Local.Num, kind, endport.FormatGID(dgid))
}

func isLinkLocal(g [16]byte) bool { return g[0] == 0xfe && g[1]&0xc0 == 0x80 }

func isIPv4Mapped(g [16]byte) bool {
	return g[10] == 0xff && g[11] == 0xff && g == [16]byte{10: 0xff, 11: 0xff, 12: g[12], 13: g[13], 14: g[14], 15: g[15]}
}

// checkScope accepts a target without a scope, or one whose scope ("ca/port",
// "ca", a port number, GUID or GID) names the resolver's local port.
func (r *Resolver) checkScope(t endport.Target) error {
	if t.Local == "" || t.Local == r.Local.CA {
		return nil
	}
	ca := umad.CA{Name: r.Local.CA, NodeType: 1, Ports: []umad.PortInfo{r.Local}}
	if l, err := endport.SelectLocal([]umad.CA{ca}, "", t.Local); err == nil && l.CA == r.Local.CA && l.Port == r.Local.Num {
		return nil
	}
	return fmt.Errorf("the target is scoped to local port %q, but this runs on %s/%d: choose that port with -C/-P",
		t.Local, r.Local.CA, r.Local.Num)
}
