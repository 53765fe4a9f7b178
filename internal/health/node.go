package health

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/sa"
)

// The node check: the SA agrees with what a node says of itself, as
// python-rdma's do_check_node checks it.

// NodeProblem is how the SA disagrees with a node.
type NodeProblem uint8

const (
	// NoPath: the SA has no path to the end port's GUID.
	NoPath NodeProblem = iota + 1
	// PathElsewhere: the SA's path ends at a LID the port does not
	// answer to (its LID range, LMC included).
	PathElsewhere
	// GUIDDiffers: the SA's NodeRecord of the end port has another port
	// GUID than the port's NodeInfo.
	GUIDDiffers
)

// NodeFinding is a node the SA disagrees with.
type NodeFinding struct {
	Problem  NodeProblem
	PortGUID uint64 // the end port's, from its NodeInfo
	PortLID  uint16 // the end port's LID
	SALID    uint16 // PathElsewhere: where the SA's path ends
	SAGUID   uint64 // GUIDDiffers: the NodeRecord's port GUID
}

// ErrNoSA is a node check without a subnet manager to ask.
var ErrNoSA = errors.New("no subnet manager to ask")

// CheckNodeSA checks the node of p's end port against the SA: it has a
// path to the port's GUID, leading to a LID the port answers to. full
// also asks for the SA's NodeRecord of the end port (by its LID, or by
// port GUID with byGUID, for a node reached by directed route) and
// compares the port GUIDs, as python-rdma's single check does; the
// fabric-wide checks leave that query out: the path's LID says the same,
// and the SA's answers are what a fabric check waits for. It returns the
// disagreement found (nil for none), or why the check could not be done.
func CheckNodeSA(ctx context.Context, client *query.Client, p *Port, byGUID, full bool) (*NodeFinding, error) {
	r, err := client.Resolver()
	if err != nil {
		return nil, err
	}
	if r.SA == nil {
		return nil, ErrNoSA
	}
	if full {
		if f, err := checkNodeRecord(ctx, r.SA, p, byGUID); f != nil || err != nil {
			return f, err
		}
	}
	var gid mad.GID
	binary.BigEndian.PutUint64(gid[:], 0xfe80000000000000)
	binary.BigEndian.PutUint64(gid[8:], p.GUID)
	path, err := r.PathTo(ctx, 0, &gid)
	if err != nil {
		if errors.Is(err, sa.ErrNoRecords) || isNoPath(err) {
			return &NodeFinding{Problem: NoPath, PortGUID: p.GUID, PortLID: p.EndLID}, nil
		}
		return nil, err
	}
	// A port with LMC > 0 answers to 2^LMC LIDs from its base LID.
	if lid := path.Addr.LID; p.EndLID != 0 && (lid < p.EndLID || int(lid) >= int(p.EndLID)+1<<p.Info.LMC) {
		return &NodeFinding{Problem: PathElsewhere, PortGUID: p.GUID, PortLID: p.EndLID, SALID: lid}, nil
	}
	return nil, nil
}

// checkNodeRecord compares the port GUID of the SA's NodeRecord of the
// end port with the one its NodeInfo gives.
func checkNodeRecord(ctx context.Context, client *sa.Client, p *Port, byGUID bool) (*NodeFinding, error) {
	var q mad.NodeRecord
	field := "LID"
	q.LID = p.EndLID
	if byGUID {
		field, q.NodeInfo.PortGUID = "NodeInfo.PortGUID", mad.GUID(p.GUID)
	}
	mask, err := mad.CompMask(q.Desc(), field)
	if err != nil {
		return nil, err
	}
	rec, err := client.Get(ctx, mad.AttrNodeRecord, mad.Encode(&q), mask)
	if err != nil {
		return nil, fmt.Errorf("NodeRecord of lid %d port %d: %w", p.EndLID, p.Num, err)
	}
	var nr mad.NodeRecord
	if err := nr.Unmarshal(rec); err != nil {
		return nil, err
	}
	if g := uint64(nr.NodeInfo.PortGUID); g != p.GUID {
		return &NodeFinding{Problem: GUIDDiffers, PortGUID: p.GUID, PortLID: p.EndLID, SAGUID: g}, nil
	}
	return nil, nil
}

// isNoPath reports whether err is the resolver's "no path": an empty
// PathRecord table.
func isNoPath(err error) bool { return strings.Contains(err.Error(), "knows no path") }
