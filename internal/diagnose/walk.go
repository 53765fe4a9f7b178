package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// walkCheck reports what the sweep could not read, with the directed
// route it went by, and the MADs it had to resend, by the link they
// crossed.
type walkCheck struct{}

func (walkCheck) Name() string { return "walk" }

func (walkCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"walk.no_answer", Error, "nothing answered NodeInfo beyond a port that has a link: a node that is down, hung or unreachable"},
		{"walk.attribute_unread", Error, "a node answered NodeInfo but one of its attributes (PortInfo, NodeDescription, SwitchInfo) could not be read"},
		{"walk.read_failed", Error, "an SMInfo, P_Key table, port's counters, node behind an unlinked port or forwarding table (LFT, MFT or SL2VL block) the checks need could not be read"},
		{"walk.mads_lost", Warning, "MADs were lost and had to be resent (" + strconv.Itoa(minLostAttempts) + " or more attempts): by directed route placed at the first link of their route that lost some, LID routed at their destination"},
	}
}

// minLostAttempts is how many lost attempts behind one link make a
// finding: one lost MAD is a busy agent, two in one sweep a pattern.
const minLostAttempts = 2

func (walkCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	var out []Finding
	for _, e := range s.Fabric.Errors {
		out = append(out, walkErrorFinding(s.Fabric, e, cfg.Names))
	}
	for _, r := range s.SMInfo {
		if r.Err != nil {
			out = append(out, readFailed(r.Port, "SMInfo", r.Err, cfg.Names))
		}
	}
	for _, r := range s.PKeys {
		if r.Err != nil {
			out = append(out, readFailed(r.Port, "PKeyTable", r.Err, cfg.Names))
		}
	}
	out = append(out, healthReadsFailed(s, cfg.Names)...)
	out = append(out, tableReadFindings(s, cfg)...)
	return append(out, lossFindings(s, cfg.Names)...), ""
}

func readFailed(p *discovery.Port, attr string, err error, names *nodename.Map) Finding {
	return atPort(Finding{Code: "walk.read_failed", Severity: Error,
		Message:  fmt.Sprintf("the %s could not be read: %v", attr, err),
		Evidence: []Field{{"attribute", attr}, {"error", err.Error()}}}, p, names)
}

// nodeAt follows a directed route through the fabric's links from the
// local node: the node it ends at, nil when a hop leads nowhere known.
func nodeAt(f *discovery.Fabric, path []byte) *discovery.Node {
	n := f.From
	if n == nil || len(path) == 0 {
		return nil
	}
	for _, hop := range path[1:] {
		p := n.Port(int(hop))
		if p == nil || p.Remote == nil {
			return nil
		}
		n = p.Remote.Node
	}
	return n
}

// walkErrorFinding places a walk error: a NodeInfo beyond a port that got
// no answer at the port it went out of, another attribute at its node.
func walkErrorFinding(f *discovery.Fabric, e *discovery.WalkError, names *nodename.Map) Finding {
	fd := Finding{Severity: Error, Evidence: []Field{{"dr_path", mad.FormatDRPath(e.DRPath)}, {"attribute", e.What}, {"error", e.Reason()}}}
	if e.What == "NodeInfo" && len(e.DRPath) > 1 {
		fd.Code = "walk.no_answer"
		fd.Message = fmt.Sprintf("no answer to NodeInfo beyond this port (DR path %s): %s", mad.FormatDRPath(e.DRPath), e.Reason())
		if n := nodeAt(f, e.DRPath[:len(e.DRPath)-1]); n != nil {
			if p := n.Port(int(e.DRPath[len(e.DRPath)-1])); p != nil {
				return atPort(fd, p, names)
			}
			fd.At = placeOf(n, nil, names)
			fd.At.Port = int(e.DRPath[len(e.DRPath)-1])
		}
		return fd
	}
	fd.Code = "walk.attribute_unread"
	fd.Message = fmt.Sprintf("%s could not be read (DR path %s): %s", e.What, mad.FormatDRPath(e.DRPath), e.Reason())
	n := nodeAt(f, e.DRPath)
	if n == nil {
		return fd
	}
	if num, ok := strings.CutPrefix(e.What, "PortInfo port "); ok {
		if p := n.Port(atoi(num)); p != nil {
			return atPort(fd, p, names)
		}
	}
	fd.At = placeOf(n, nil, names)
	return fd
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return NoPort
	}
	return n
}

// lossSum is the loss behind one link (or at one LID's node).
type lossSum struct {
	node         *discovery.Node
	port         *discovery.Port // nil: the node itself
	path         []byte          // the route to it, nil for a LID
	attempts     int
	noReply      int
	destinations int
}

// lossFindings puts the MAD loss of the sweep on links. A directed route
// crosses every link on its way, so a flaky link shows as loss to every
// destination behind it: each destination's loss goes to the first link
// of its route whose own destination (the node just beyond it) lost
// MADs too. A destination that never answered is a walk error, not loss.
func lossFindings(s *Snapshot, names *nodename.Map) []Finding {
	lossy := map[string]bool{}
	for _, d := range s.Loss {
		if d.Replies > 0 {
			lossy[d.Dest] = true
		}
	}
	sums := map[string]*lossSum{}
	var order []string
	add := func(key string, sum lossSum, d DestLoss) {
		t := sums[key]
		if t == nil {
			t = &sum
			sums[key] = t
			order = append(order, key)
		}
		t.attempts += d.Attempts
		t.noReply += d.NoReply
		t.destinations++
	}
	var byLID map[uint16]*discovery.Port // made when a LID needs it
	for _, d := range s.Loss {
		if d.Replies == 0 {
			continue
		}
		if lid, ok := strings.CutPrefix(d.Dest, "LID "); ok {
			if byLID == nil {
				byLID = endPortsByLID(s.Fabric)
			}
			if p := byLID[uint16(atoi(lid))]; p != nil {
				add(d.Dest, lossSum{node: p.Node, port: caPort(p)}, d)
			}
			continue
		}
		path, ok := parsePath(strings.TrimPrefix(d.Dest, "DR path "))
		if !ok {
			continue
		}
		hop := len(path)
		for k := 2; k < len(path); k++ {
			if lossy["DR path "+mad.FormatDRPath(path[:k])] {
				hop = k
				break
			}
		}
		at := path[:hop]
		key := "DR path " + mad.FormatDRPath(at)
		if len(at) == 1 {
			if s.Fabric.From != nil {
				add(key, lossSum{node: s.Fabric.From, path: at}, d)
			}
			continue
		}
		n := nodeAt(s.Fabric, at[:len(at)-1])
		if n == nil || n.Port(int(at[len(at)-1])) == nil {
			continue
		}
		add(key, lossSum{node: n, port: n.Port(int(at[len(at)-1])), path: at}, d)
	}
	var out []Finding
	for _, key := range order {
		t := sums[key]
		if t.noReply < minLostAttempts {
			continue
		}
		f := Finding{Code: "walk.mads_lost", Severity: Warning,
			Message: fmt.Sprintf("%d of %d MAD attempts to %d %s behind this link got no reply and were resent",
				t.noReply, t.attempts, t.destinations, plural(t.destinations, "destination", "destinations")),
			Evidence: []Field{{"attempts", t.attempts}, {"lost_attempts", t.noReply}, {"destinations", t.destinations}}}
		switch {
		case t.path == nil:
			// LID routed: lost somewhere on a route the switches chose,
			// not necessarily on this port's own link.
			f.Message = fmt.Sprintf("%d of %d MAD attempts to this LID-routed destination got no reply and were resent; the route they took is the switches'",
				t.noReply, t.attempts)
			f.At = placeOf(t.node, t.port, names)
		case t.port != nil:
			f.Evidence = append(f.Evidence, Field{"dr_path", mad.FormatDRPath(t.path)})
			f = atPort(f, t.port, names)
		default:
			f.Evidence = append(f.Evidence, Field{"dr_path", mad.FormatDRPath(t.path)})
			f.At = placeOf(t.node, nil, names)
		}
		out = append(out, f)
	}
	return out
}

// caPort is p when it is a CA's or router's port, nil for a switch (its
// LID is the node's).
func caPort(p *discovery.Port) *discovery.Port {
	if p.Node.Type == discovery.NodeSwitch {
		return nil
	}
	return p
}

// endPortsByLID maps every LID of an end port's range to the port: a
// CA's or router's port, a switch's port 0.
func endPortsByLID(f *discovery.Fabric) map[uint16]*discovery.Port {
	m := map[uint16]*discovery.Port{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || (n.Type == discovery.NodeSwitch && p.Num != 0) || p.BaseLID == 0 {
				continue
			}
			for l := 0; l < 1<<p.LMC; l++ {
				m[p.BaseLID+uint16(l)] = p
			}
		}
	}
	return m
}

func parsePath(s string) ([]byte, bool) {
	var path []byte
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || n > 255 {
			return nil, false
		}
		path = append(path, byte(n))
	}
	return path, len(path) > 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
