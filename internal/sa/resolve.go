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
// always through a PathRecord, after turning a DR path into a LID.
func (r *Resolver) GMP(ctx context.Context, t endport.Target) (*Path, error) {
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
