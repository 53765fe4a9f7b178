package health

import "github.com/ibtool/ibtool/internal/discovery"

// Which ports of a fabric the checks look at.

// EndPort is a port with a LID of its own: a switch's port 0, a CA's or
// router's connected port.
type EndPort struct {
	Node *discovery.Node
	Port *discovery.Port
}

// EndPorts are the fabric's end ports in discovery order.
func EndPorts(f *discovery.Fabric) []EndPort {
	var out []EndPort
	for _, n := range f.Nodes {
		if n.Type == discovery.NodeSwitch {
			if p := n.Port(0); p != nil {
				out = append(out, EndPort{n, p})
			}
			continue
		}
		for _, p := range n.Ports[1:] {
			if p != nil {
				out = append(out, EndPort{n, p})
			}
		}
	}
	return out
}

// LinkedPorts are the ports the port checks of ep look at: a switch's
// port 0 and its ports with a link, a CA's port itself. (python-rdma
// looked at every switch port and failed each one without a cable; the
// infiniband-diags 1.5 scripts, like ibtool, only at the links.)
func (ep EndPort) LinkedPorts() []*discovery.Port {
	if ep.Node.Type != discovery.NodeSwitch {
		return []*discovery.Port{ep.Port}
	}
	var out []*discovery.Port
	for _, p := range ep.Node.Ports {
		if p != nil && (p.Num == 0 || p.Remote != nil) {
			out = append(out, p)
		}
	}
	return out
}

// PortOf is the checks' Port of port p of ep's node, as the fabric gives
// it: the far end's PortInfo from the link.
func (ep EndPort) PortOf(p *discovery.Port) *Port {
	cp := &Port{
		Node: ep.Node.Info(), Desc: ep.Node.Desc(), Num: p.Num, Info: p.Info(),
		EndLID: ep.Port.BaseLID, GUID: ep.Port.GUID,
	}
	if p.Remote != nil && p.Remote.PortInfo != nil {
		cp.Peer = p.Remote.Info()
	}
	return cp
}
