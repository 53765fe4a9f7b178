package diagnose

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
)

// MCMembers are the members of the multicast groups as the SA lists
// them (MCMemberRecords, IBA 15.2.5.17), or why it did not.
type MCMembers struct {
	// Members are the SA's records. Given to a requester it does not
	// trust, they are one per group, PortGID zero (Err says so): they
	// name the groups, not their members.
	Members []MCMember
	// Err is why the SA's members could not be had; the multicast check
	// then takes the ports the MFTs deliver to as the members.
	Err error
}

// MCMember is one port's membership of a group.
type MCMember struct {
	MGID      mad.GID
	MLID      uint16
	PortGID   mad.GID
	JoinState uint8
}

// errUntrusted is the SA's answer to a requester without its SM_Key: the
// groups, but not who is in them.
var errUntrusted = errors.New("the SA lists the groups' members only to a requester with its SM_Key (sa_key in ibdiag.conf)")

// readMCMembers asks the SA for every MCMemberRecord (a GetTable: a
// read). OpenSM gives the members' PortGIDs only to a trusted requester
// (IBA 15.4.2: PortGID, JoinState and ProxyJoin are zero for another).
func readMCMembers(ctx context.Context, c *query.Client) *MCMembers {
	r, err := c.Resolver()
	if err == nil && r.SA == nil {
		err = errors.New("the local port has no subnet manager to ask")
	}
	if err != nil {
		return &MCMembers{Err: err}
	}
	recs, err := r.SA.GetTable(ctx, mad.AttrMCMemberRecord, make([]byte, mad.MCMemberRecordSize), 0)
	if err != nil {
		return &MCMembers{Err: fmt.Errorf("MCMemberRecord: %w", err)}
	}
	m := &MCMembers{Members: []MCMember{}}
	for _, b := range recs {
		var rec mad.MCMemberRecord
		if err := rec.Unmarshal(b); err != nil {
			return &MCMembers{Err: fmt.Errorf("MCMemberRecord: %w", err)}
		}
		if rec.PortGID == (mad.GID{}) {
			m.Err = errUntrusted // the groups still name their MGIDs
		}
		m.Members = append(m.Members, MCMember{rec.MGID, rec.MLID, rec.PortGID, rec.JoinState})
	}
	return m
}

// multicastDoc is the members in TablesFile.
type multicastDoc struct {
	SAError string      `json:"sa_error,omitempty"`
	Members []memberDoc `json:"members"`
}

type memberDoc struct {
	MGID      mad.GID `json:"mgid"`
	MLID      uint16  `json:"mlid"`
	PortGID   mad.GID `json:"port_gid"`
	JoinState uint8   `json:"join_state"`
}

func multicastDocOf(m *MCMembers) *multicastDoc {
	if m == nil {
		return nil
	}
	d := &multicastDoc{Members: []memberDoc{}}
	if m.Err != nil {
		d.SAError = m.Err.Error()
	}
	for _, r := range m.Members {
		d.Members = append(d.Members, memberDoc(r))
	}
	return d
}

func (d *multicastDoc) members() (*MCMembers, error) {
	m := &MCMembers{Members: []MCMember{}}
	if d.SAError != "" {
		m.Err = errors.New(d.SAError)
	}
	for _, r := range d.Members {
		if r.MLID < routing.MinMLID {
			return nil, fmt.Errorf("mlid 0x%x is not a multicast LID", r.MLID)
		}
		m.Members = append(m.Members, MCMember(r))
	}
	return m, nil
}

// multicastCheck follows each group's MFT entries from every switch
// with members of it (internal/routing's Multicast): the copies must
// reach every member and never come back to a switch.
type multicastCheck struct{}

func (multicastCheck) Name() string { return "multicast" }

func (multicastCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"multicast.loop", Error, "a group's MFT entries send copies back to a switch they reached already: not a tree, packets multiply"},
		{"multicast.member_unreached", Error, "a switch that copies of a group reach does not forward them to its members of the group"},
		{"multicast.switch_unreached", Error, "no copy of a group from some of its members reaches a switch with members of it"},
		{"multicast.groups", Info, "the groups checked, and where their members came from (the SA or the MFTs)"},
	}
}

func (multicastCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	if s.Tables == nil || s.MCMembers == nil {
		return nil, "no multicast tables (--multicast)"
	}
	groups := multicastGroups(s)
	var out []Finding
	members := 0
	for _, g := range groups {
		out = append(out, g.check(s.Tables, cfg.Names)...)
		members += len(g.members)
	}
	msg := fmt.Sprintf("%s, %s, from the SA's MCMemberRecords", counted(len(groups), "group"), counted(members, "member"))
	if err := s.MCMembers.Err; err != nil {
		msg = fmt.Sprintf("%s; their members are the %s the MFTs deliver to, as the SA's could not be had: %v",
			counted(len(groups), "group"), counted(members, "port"), err)
	}
	from := "sa"
	if s.MCMembers.Err != nil {
		from = "mft"
	}
	return append(out, Finding{Code: "multicast.groups", Severity: Info, Message: msg,
		Evidence: []Field{{"groups", len(groups)}, {"members", members}, {"members_from", from}}}), ""
}

// mcGroup is one MLID and its members.
type mcGroup struct {
	mlid    int
	mgid    *mad.GID // from the SA; nil when not known
	members []*discovery.Port
}

// multicastGroups are the MLIDs some switch forwards or the SA lists,
// in order, each with its Active members: the SA's, or, when the SA's
// could not be had, the ports the MFTs deliver the MLID to.
func multicastGroups(s *Snapshot) []*mcGroup {
	byMLID := map[int]*mcGroup{}
	group := func(mlid int) *mcGroup {
		g := byMLID[mlid]
		if g == nil {
			g = &mcGroup{mlid: mlid}
			byMLID[mlid] = g
		}
		return g
	}
	for _, mlid := range s.Tables.MLIDs() {
		group(mlid)
	}
	byGUID := map[uint64]*discovery.Port{}
	for _, n := range s.Fabric.Nodes {
		for _, p := range n.Ports {
			if p != nil && (n.Type != discovery.NodeSwitch || p.Num == 0) {
				byGUID[p.GUID] = p
			}
		}
	}
	for _, m := range s.MCMembers.Members {
		g := group(int(m.MLID))
		mgid := m.MGID
		g.mgid = &mgid
		if s.MCMembers.Err != nil {
			continue
		}
		if p := byGUID[uint64(m.PortGID.GUID())]; p != nil && memberActive(p) && !slices.Contains(g.members, p) {
			g.members = append(g.members, p)
		}
	}
	if s.MCMembers.Err != nil {
		for _, g := range byMLID {
			g.members = mftEnds(s.Tables, g.mlid)
		}
	}
	out := make([]*mcGroup, 0, len(byMLID))
	for _, g := range byMLID {
		slices.SortFunc(g.members, comparePorts)
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *mcGroup) int { return cmp.Compare(a.mlid, b.mlid) })
	return out
}

func comparePorts(a, b *discovery.Port) int {
	return cmp.Or(cmp.Compare(a.Node.GUID, b.Node.GUID), cmp.Compare(a.Num, b.Num))
}

// memberActive reports whether a member port can take part: Active (a
// switch's port 0 always is), and a CA's linked to a switch.
func memberActive(p *discovery.Port) bool {
	if p.Node.Type == discovery.NodeSwitch {
		return true
	}
	return portActive(p) && p.Remote != nil && p.Remote.Node.Type == discovery.NodeSwitch
}

// mftEnds are the ports the switches' entries for mlid deliver to: end
// ports linked to a port of the entry, and the switch's own port 0.
func mftEnds(t *routing.Tables, mlid int) []*discovery.Port {
	var ends []*discovery.Port
	for _, n := range t.Fabric.SortedByGUID() {
		sw := t.Switches[n.GUID]
		if sw == nil || sw.MFT == nil {
			continue
		}
		for _, num := range sw.MFT.Ports(mlid).Ports() {
			p := n.Port(num)
			switch {
			case p == nil:
			case num == 0:
				ends = append(ends, p)
			case p.Remote != nil && p.Remote.Node.Type != discovery.NodeSwitch && memberActive(p.Remote):
				ends = append(ends, p.Remote)
			}
		}
	}
	return ends
}

// home is the switch a member's packets enter the fabric by, and the
// port the switch delivers to it by (0 for its own port 0).
func home(p *discovery.Port) (*discovery.Node, int) {
	if p.Node.Type == discovery.NodeSwitch {
		return p.Node, 0
	}
	return p.Remote.Node, p.Remote.Num
}

// check follows the group's entries from every switch with members and
// reports loops, and members the copies of some do not reach.
func (g *mcGroup) check(t *routing.Tables, names *nodename.Map) []Finding {
	type place struct {
		guid uint64
		port int
	}
	var sources []*discovery.Node
	homes := map[*discovery.Node][]int{} // switch -> the ports of its members
	for _, m := range g.members {
		sw, port := home(m)
		if _, ok := homes[sw]; !ok {
			sources = append(sources, sw)
		}
		homes[sw] = append(homes[sw], port)
	}
	slices.SortFunc(sources, func(a, b *discovery.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	loops := map[place]*discovery.Node{}
	missed := map[place]int{}                  // a home switch's member port -> sources whose copies it does not forward
	unreachedFrom := map[*discovery.Node]int{} // a home switch -> sources whose copies do not reach it
	for _, src := range sources {
		tree := t.Multicast(src, 0, g.mlid)
		if slices.ContainsFunc(tree.Stops, func(s routing.Stop) bool { return s.End == routing.Unread }) {
			continue // a table not read: the walk check says so; nothing to judge by
		}
		for _, l := range tree.Loops {
			loops[place{l.Node.GUID, l.Port}] = l.Node
		}
		reachedSw := map[*discovery.Node]bool{}
		for _, ts := range tree.Switches {
			reachedSw[ts.Node] = true
		}
		reached := map[*discovery.Port]bool{}
		for _, p := range tree.Reached {
			reached[p] = true
		}
		for _, sw := range sources {
			if !reachedSw[sw] {
				unreachedFrom[sw]++
				continue
			}
			for _, port := range homes[sw] {
				if sw == src && port == 0 {
					continue // the sender itself
				}
				if p := sw.Port(port); p != nil && !reached[deliveredTo(p)] {
					missed[place{sw.GUID, port}]++
				}
			}
		}
	}
	var out []Finding
	evidence := func(extra ...Field) []Field {
		ev := []Field{{"mlid", g.mlid}}
		if g.mgid != nil {
			ev = append(ev, Field{"mgid", *g.mgid})
		}
		return append(ev, extra...)
	}
	name := g.name()
	if len(loops) > 0 {
		var ports []place
		for p := range loops {
			ports = append(ports, p)
		}
		slices.SortFunc(ports, func(a, b place) int { return cmp.Or(cmp.Compare(a.guid, b.guid), cmp.Compare(a.port, b.port)) })
		chain := make([]chainLink, len(ports))
		for i, p := range ports {
			chain[i] = chainLink{NodeGUID: mad.GUID(p.guid), NodeName: nodeName(loops[p], names), Port: p.port}
		}
		f := Finding{Code: "multicast.loop", Severity: Error,
			Message:  fmt.Sprintf("%s: copies come back to switches they reached already, out of %s", name, chainText(chain)),
			Evidence: evidence(Field{"ports", chain})}
		out = append(out, portPlace(f, loops[ports[0]], ports[0].port, names))
	}
	for _, sw := range sources {
		if n := unreachedFrom[sw]; n > 0 {
			out = append(out, Finding{Code: "multicast.switch_unreached", Severity: Error, At: placeOf(sw, nil, names),
				Message: fmt.Sprintf("%s: no copy from %d of the %d switches with members reaches this switch, which has %d members",
					name, n, len(sources), len(homes[sw])),
				Evidence: evidence(Field{"sources", n}, Field{"members", len(homes[sw])})})
		}
		for _, port := range homes[sw] {
			n := missed[place{sw.GUID, port}]
			if n == 0 {
				continue
			}
			f := Finding{Code: "multicast.member_unreached", Severity: Error,
				Message:  fmt.Sprintf("%s: the switch does not forward the copies from %d of the %d switches with members to its member on port %d", name, n, len(sources), port),
				Evidence: evidence(Field{"sources", n})}
			out = append(out, portPlace(f, sw, port, names))
		}
	}
	return out
}

// deliveredTo is the member a switch's port delivers to: the end port
// at its far end, or the switch's own port 0.
func deliveredTo(p *discovery.Port) *discovery.Port {
	if p.Num == 0 {
		return p
	}
	return p.Remote
}

// name names the group in a message.
func (g *mcGroup) name() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MLID 0x%04x", g.mlid)
	if g.mgid != nil {
		fmt.Fprintf(&b, " (MGID %s)", g.mgid)
	}
	return b.String()
}
