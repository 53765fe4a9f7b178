package discovery

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/mad"
)

// complete fetches what f lacks of the walker's Load, without walking the
// topology again: every node is reached by LID (in LID mode, when known) or
// over its directed route (the one recorded, or one computed from the
// links when the fabric came from a cache).
func (w *walker) complete(f *Fabric) (*Fabric, error) {
	need := w.opt.Load &^ f.loaded() & (LoadNodeDesc | LoadSwitchInfo | LoadMlnxExtPortInfo)
	if need == 0 {
		return f, nil
	}
	stop := w.startProgress()
	routes := Routes(f)
	for _, n := range f.Nodes {
		o := &obsNode{guid: n.GUID, typ: n.Type, nports: n.NumPorts, path: routes[n], lid: nodeLID(n), dest: nodeDest(n.GUID)}
		if o.path == nil && o.lid == 0 {
			w.mu.Lock()
			w.fail(n.GUID, nil, fmt.Sprintf("node %#016x", n.GUID), fmt.Errorf("no route known"))
			w.mu.Unlock()
			continue
		}
		if o.path == nil {
			o.path = []byte{0} // unused: LID routing only
		}
		if need&LoadNodeDesc != 0 {
			w.fetch(o, mad.AttrNodeDescription, 0, "NodeDescription", func(b []byte) {
				n.NodeDesc = b
			})
		}
		if need&LoadSwitchInfo != 0 && n.Type == NodeSwitch {
			w.fetch(o, mad.AttrSwitchInfo, 0, "SwitchInfo", func(b []byte) {
				var si mad.SwitchInfo
				n.SwitchInfo = b
				n.EnhancedSP0 = si.Unmarshal(b) == nil && si.EnhancedPort0 != 0
			})
		}
		if need&LoadMlnxExtPortInfo != 0 {
			for _, p := range n.Ports {
				if p == nil || p.PortInfo == nil {
					continue
				}
				capPort := p.PortInfo
				if n.Type == NodeSwitch {
					capPort = nil
					if p0 := n.Port(0); p0 != nil {
						capPort = p0.PortInfo
					}
				}
				if !wantsMlnxExt(n.NodeInfo, p.PortInfo, capPort) {
					continue
				}
				w.fetch(o, mad.AttrMlnxExtPortInfo, p.Num, fmt.Sprintf("MlnxExtPortInfo port %d", p.Num), func(b []byte) {
					p.MlnxExtPortInfo = b
				})
			}
		}
	}
	w.run()
	stop()
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	f.Loaded = f.loaded() | need
	f.chassis = nil // grouped from what the nodes said before
	f.Errors = append(f.Errors, w.obs.sortedErrors(f)...)
	return f, nil
}

// fetch reads one attribute of a node and hands it to store, under w.mu,
// or records the failure.
func (w *walker) fetch(o *obsNode, attr uint16, mod int, what string, store func([]byte)) {
	w.get(o, o.path, attr, uint32(mod), func(b []byte, err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			w.fail(o.guid, o.path, what, err)
			return
		}
		store(b)
	})
}

// nodeLID is the LID a node answers SMPs at: a switch's port-0 LID, else
// the LID of its first port that has one.
func nodeLID(n *Node) uint16 {
	if n.Type == NodeSwitch {
		if validLID(n.SMALID) {
			return n.SMALID
		}
		return 0
	}
	for _, p := range n.Ports {
		if p != nil && validLID(p.BaseLID) {
			return p.BaseLID
		}
	}
	return 0
}

// Routes returns a directed route to every node reachable from f.From:
// the one recorded in the node when there is one, else the shortest over
// the fabric's links (through switches only, and out of the local node by
// the port discovery started on).
func Routes(f *Fabric) map[*Node][]byte {
	routes := map[*Node][]byte{}
	for _, n := range f.Nodes {
		if len(n.DRPath) > 0 {
			routes[n] = n.DRPath
		}
	}
	if f.From == nil {
		return routes
	}
	found := map[*Node][]byte{f.From: {0}}
	queue := []*Node{f.From}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		path := found[n]
		if len(path) > maxDRPathLen {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil {
				continue
			}
			if n.Type != NodeSwitch && (n != f.From || (f.FromPort != 0 && p.Num != f.FromPort)) {
				continue
			}
			peer := p.Remote.Node
			if _, seen := found[peer]; seen {
				continue
			}
			found[peer] = append(append(make([]byte, 0, len(path)+1), path...), byte(p.Num))
			queue = append(queue, peer)
		}
	}
	for n, path := range found {
		if _, ok := routes[n]; !ok {
			routes[n] = path
		}
	}
	return routes
}
