package health

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// Port checks: a port's state, width, speed, LID and SM, as python-rdma's
// ibcheck family checks them (libibtool/errors.py), each a list of
// Findings, values that are not what they should be.

// Port is what the checks of one port look at.
type Port struct {
	Node *mad.NodeInfo
	Desc string // the node's description
	// Num is the port's number; AllPortSelect (255) for a switch's all
	// ports in a counter check.
	Num  int
	Info *mad.PortInfo // the port's PortInfo
	Peer *mad.PortInfo // the far end's PortInfo; nil when not known
	// EndLID and GUID are the end port's: a switch's port 0's, a CA's
	// port's own.
	EndLID uint16
	GUID   uint64
}

// SwitchPort0 tells whether p is a switch's management port.
func (p *Port) SwitchPort0() bool { return p.Node.NodeType == mad.NodeTypeSwitch && p.Num == 0 }

// Rule is how a value should relate to the one it is held against.
type Rule uint8

const (
	Equal   Rule = iota // Got should be Want
	NonZero             // Got should not be 0 (Want)
	AtMost              // Got should be at most Want (a counter's limit)
)

// Finding is a value of a port that is not what it should be.
type Finding struct {
	// Field is the PortInfo field (or counter), as mad names it.
	Field     string
	Got, Want uint64
	Rule      Rule
	// Fatal: the port fails, and its later checks are not run (python-
	// rdma raises a CheckError); otherwise it is a warning.
	Fatal bool
}

// Check is one check of a port's PortInfo.
type Check func(*Port) []Finding

// Run puts p through checks in order, and stops after one that found
// something fatal.
func Run(p *Port, checks ...Check) []Finding {
	var out []Finding
	for _, c := range checks {
		fs := c(p)
		out = append(out, fs...)
		for _, f := range fs {
			if f.Fatal {
				return out
			}
		}
	}
	return out
}

// PortState: the link is up (fatal otherwise) and the port Active.
func PortState(p *Port) []Finding {
	pi := p.Info
	if pi.PortPhysicalState != mad.PhysPortStateLinkUp {
		return []Finding{{Field: "PortPhysicalState", Got: uint64(pi.PortPhysicalState), Want: uint64(mad.PhysPortStateLinkUp), Fatal: true}}
	}
	if pi.PortState != mad.PortStateActive {
		return []Finding{{Field: "PortState", Got: uint64(pi.PortState), Want: uint64(mad.PortStateActive)}}
	}
	return nil
}

// link is p's link judged by what both ends support (p alone when the far
// end is not known).
func (p *Port) link() Link {
	var peer *End
	if p.Peer != nil {
		peer = &End{Info: p.Peer}
	}
	return CompareLink(End{Info: p.Info}, peer, Supported)
}

// PortWidth: the link runs at the best width both ends support. A
// switch's port 0 has no link.
func PortWidth(p *Port) []Finding {
	if p.SwitchPort0() {
		return nil
	}
	w := p.link().Width
	if w.Active == w.Best {
		return nil
	}
	return []Finding{{Field: "LinkWidthActive", Got: uint64(w.Active), Want: uint64(w.Best)}}
}

// PortLink: the link runs at the best speed both ends support (of SDR,
// DDR, QDR: python-rdma knows no extended speeds), the end port has a LID
// and an SM, and a CA's port says it is that port. A switch's port 0 has
// no link; its external ports have no LID or SM of their own (IBA
// 14.2.5.6): those checks are not theirs.
func PortLink(p *Port) []Finding {
	var out []Finding
	pi := p.Info
	if !p.SwitchPort0() {
		if s := p.link().Speed; s.Active != s.Best {
			out = append(out, Finding{Field: "LinkSpeedActive", Got: uint64(s.Active), Want: uint64(s.Best)})
		}
	}
	if p.Node.NodeType == mad.NodeTypeSwitch && p.Num != 0 {
		return out
	}
	if pi.LID == 0 {
		out = append(out, Finding{Field: "LID", Rule: NonZero})
	}
	if pi.MasterSMLID == 0 {
		out = append(out, Finding{Field: "MasterSMLID", Rule: NonZero})
	}
	if p.Node.NodeType != mad.NodeTypeSwitch && int(pi.LocalPortNum) != p.Num {
		out = append(out, Finding{Field: "LocalPortNum", Got: uint64(pi.LocalPortNum), Want: uint64(p.Num)})
	}
	return out
}

// ReadPort reads what the checks of a port of the node at d look at:
// NodeInfo, NodeDescription and PortInfo of port (onPort), or of the
// port the SMPs arrive on. On a switch's external port, EndLID is port
// 0's LID, read too.
func ReadPort(ctx context.Context, client *query.Client, d query.Dest, port int, onPort bool) (*Port, error) {
	var ni mad.NodeInfo
	var nd mad.NodeDescription
	var pi mad.PortInfo
	if err := client.Get(ctx, d, 0, nil, &ni); err != nil {
		return nil, fmt.Errorf("reading NodeInfo of %s: %w", d, err)
	}
	if err := client.Get(ctx, d, 0, nil, &nd); err != nil {
		return nil, fmt.Errorf("reading NodeDescription of %s: %w", d, err)
	}
	mod := uint32(port)
	if !onPort {
		port, mod = int(ni.LocalPortNum), 0
	}
	if err := client.Get(ctx, d, mod, nil, &pi); err != nil {
		return nil, fmt.Errorf("reading PortInfo of %s port %d: %w", d, port, err)
	}
	p := &Port{Node: &ni, Desc: nd.String(), Num: port, Info: &pi, EndLID: pi.LID, GUID: uint64(ni.PortGUID)}
	if ni.NodeType == mad.NodeTypeSwitch && mod != 0 {
		// An external port has no LID of its own: the switch's is port 0's.
		var p0 mad.PortInfo
		if err := client.Get(ctx, d, 0, nil, &p0); err != nil {
			return nil, fmt.Errorf("reading PortInfo of %s port 0: %w", d, err)
		}
		p.EndLID = p0.LID
	}
	return p, nil
}
