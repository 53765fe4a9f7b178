package query

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// A node named on the command line ("ibtool perfquery leaf01 3") is found
// by its node-name-map name or its NodeDescription: in the fabric when
// the command has one (a cache, a walk), otherwise through the SA's
// NodeRecords (one query by NodeDescription, one per mapped GUID). The
// target becomes the node's LID: port 0 of a switch, the lowest-numbered
// port of a CA.

// Candidate is a node a name matched.
type Candidate struct {
	NodeGUID uint64
	LID      uint16
	Desc     string
}

// AmbiguousNameError is a name that matches several nodes.
type AmbiguousNameError struct {
	Name       string
	Candidates []Candidate
}

func (e *AmbiguousNameError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q names %d nodes:", e.Name, len(e.Candidates))
	for _, c := range e.Candidates {
		fmt.Fprintf(&b, " 0x%016x (LID %d, %q);", c.NodeGUID, c.LID, c.Desc)
	}
	return strings.TrimSuffix(b.String(), ";") + "; give a LID or GUID instead"
}

// NameNotFoundError is a name that matches no node.
type NameNotFoundError struct{ Name string }

func (e *NameNotFoundError) Error() string {
	return fmt.Sprintf("no node is named %q (by node-name-map or NodeDescription)", e.Name)
}

// ResolveName turns a ByName target into a ByLID one (Name kept). fab,
// when not nil, is searched instead of asking the SA.
func (c *Client) ResolveName(ctx context.Context, t endport.Target, names *nodename.Map, fab *discovery.Fabric) (endport.Target, error) {
	if t.Kind != endport.ByName {
		return t, nil
	}
	var cands []Candidate
	var err error
	if fab != nil {
		cands = NamedInFabric(fab, t.Name, names)
	} else if cands, err = c.namedBySA(ctx, t.Name, names); err != nil {
		return t, err
	}
	switch len(cands) {
	case 0:
		return t, &NameNotFoundError{t.Name}
	case 1:
		return endport.Target{Kind: endport.ByLID, LID: cands[0].LID, Name: t.Name, Local: t.Local}, nil
	}
	return t, &AmbiguousNameError{t.Name, cands}
}

// NamedInFabric lists the nodes of f that name matches: by node-name-map
// name, by NodeDescription, or by the description's host part (its first
// word, "leaf01" of "leaf01 HCA-1").
func NamedInFabric(f *discovery.Fabric, name string, names *nodename.Map) []Candidate {
	var cands []Candidate
	for _, n := range f.SortedByGUID() {
		desc := nodename.CleanDesc(n.Desc())
		mapped, ok := names.Lookup(n.GUID)
		host, _, _ := strings.Cut(desc, " ")
		if (ok && mapped == name) || desc == name || host == name {
			cands = append(cands, Candidate{NodeGUID: n.GUID, LID: nodeLID(n), Desc: desc})
		}
	}
	return cands
}

// nodeLID is the LID that reaches a node: port 0's for a switch, the
// lowest-numbered port with a LID for a CA or router.
func nodeLID(n *discovery.Node) uint16 {
	for _, p := range n.Ports {
		if p != nil && p.Info() != nil && p.Info().LID != 0 {
			return p.Info().LID
		}
	}
	return 0
}

func (c *Client) namedBySA(ctx context.Context, name string, names *nodename.Map) ([]Candidate, error) {
	r, err := c.Resolver()
	if err != nil {
		return nil, err
	}
	if r.SA == nil {
		return nil, fmt.Errorf("%q: names are resolved through the SA, and %s port %d has none", name, r.Local.CA, r.Local.Num)
	}
	var queries []mad.NodeRecord
	var masks []uint64
	for _, g := range names.GUIDs(name) {
		var q mad.NodeRecord
		q.NodeInfo.NodeGUID = mad.GUID(g)
		queries = append(queries, q)
		masks = append(masks, mad.MustCompMask(q.Desc(), "NodeInfo.NodeGUID"))
	}
	if len(name) <= len(mad.NodeDescription{}.NodeString) {
		var q mad.NodeRecord
		copy(q.NodeDescription.NodeString[:], name)
		queries = append(queries, q)
		masks = append(masks, mad.MustCompMask(q.Desc(), "NodeDescription"))
	}
	byGUID := map[uint64]Candidate{}
	for i := range queries {
		recs, err := r.SA.GetTable(ctx, mad.AttrNodeRecord, mad.Encode(&queries[i]), masks[i])
		if err != nil {
			return nil, fmt.Errorf("looking up node %q: %w", name, err)
		}
		for _, b := range recs {
			var nr mad.NodeRecord
			if nr.Unmarshal(b) != nil {
				continue
			}
			g := uint64(nr.NodeInfo.NodeGUID)
			if have, ok := byGUID[g]; ok && have.LID <= nr.LID {
				continue
			}
			byGUID[g] = Candidate{NodeGUID: g, LID: nr.LID, Desc: nodename.CleanDesc(string(nr.NodeDescription.NodeString[:]))}
		}
	}
	cands := make([]Candidate, 0, len(byGUID))
	for _, cand := range byGUID {
		cands = append(cands, cand)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].NodeGUID < cands[j].NodeGUID })
	return cands, nil
}
