// Package fabricids finds the identifiers of a fabric that must be unique
// and are not: LIDs of 0 or held twice, node and port GUIDs held twice (or
// 0), a port GUID that is another node's GUID.
//
// The identifiers come as uses, in the order a check reads them: Uses
// lists a fabric model's, and a reader of a topology text can list the
// text's. Check compares them under rules: Script is infiniband-diags'
// ibidsverify.pl (base LIDs only, GUIDs of 0 not reported, a port GUID
// compared with the node GUIDs read before it), Strict what the subnet
// manager must keep unique (every LID of a port's LMC range, GUIDs of 0,
// every node GUID of the fabric). Problems are records; the text a tool
// prints is its own.
package fabricids

import "github.com/ibtool/ibtool/internal/discovery"

// ID is the kind of an identifier.
type ID int

const (
	LID ID = iota
	NodeGUID
	PortGUID
)

// Use is one identifier where a node holds it.
type Use struct {
	ID    ID
	Value uint64 // the LID or the GUID
	LMC   uint8  // a LID's: the port holds Value to Value+2^LMC-1 (IBA 7.11.1)

	// The holder: its node type (IBA 14.2.5.3), node GUID and the base
	// LID of the port (for a GUID, the LID ibidsverify.pl names it by).
	NodeType int
	NodeGUID uint64
	LID      uint16

	// Node and Port are where in a model the use is (a switch's port 0
	// for its LID and GUIDs); nil and 0 for a use read from text.
	Node *discovery.Node
	Port int
}

// Kind is what is wrong; its value is the kind's JSON name.
type Kind string

const (
	ZeroLID            Kind = "zero_lid"
	DuplicateLID       Kind = "duplicate_lid"
	ZeroNodeGUID       Kind = "zero_node_guid"
	DuplicateNodeGUID  Kind = "duplicate_node_guid"
	ZeroPortGUID       Kind = "zero_port_guid"
	DuplicatePortGUID  Kind = "duplicate_port_guid"
	PortGUIDIsNodeGUID Kind = "port_guid_is_node_guid"
)

// Problem is one use found wrong.
type Problem struct {
	Kind Kind
	Use  Use
	// First is the use the identifier had before (a duplicate), or the
	// node GUID's use a port GUID repeats (PortGUIDIsNodeGUID); nil for
	// a zero.
	First *Use
}

// Rules say how strictly uses are compared.
type Rules struct {
	// LMCRanges compares every LID of a port's range; else base LIDs.
	LMCRanges bool
	// ZeroGUIDs reports node and port GUIDs of 0.
	ZeroGUIDs bool
	// AnyOrder compares a port GUID with every node GUID; else with the
	// node GUIDs of the uses before it.
	AnyOrder bool
}

// Script is ibidsverify.pl's rules. Its zero-GUID test compares the GUID's
// text with the number 0, which no "0x..." text equals, so it never fires.
var Script = Rules{}

// Strict is what a subnet must hold to.
var Strict = Rules{LMCRanges: true, ZeroGUIDs: true, AnyOrder: true}

// Check compares the uses in their order and returns what it finds in
// that order: a use is compared with the uses before it, and one found
// wrong is not remembered (as the script's tables keep the first holder).
func Check(uses []Use, r Rules) []Problem {
	lids := map[uint64]*Use{}
	nodes := map[uint64]*Use{}
	ports := map[uint64]*Use{}
	var allNodes map[uint64]*Use
	if r.AnyOrder {
		allNodes = map[uint64]*Use{}
		for i := range uses {
			if u := &uses[i]; u.ID == NodeGUID && allNodes[u.Value] == nil {
				allNodes[u.Value] = u
			}
		}
	}
	var out []Problem
	report := func(k Kind, u, first *Use) { out = append(out, Problem{Kind: k, Use: *u, First: first}) }
	for i := range uses {
		u := &uses[i]
		switch u.ID {
		case LID:
			if u.Value == 0 {
				report(ZeroLID, u, nil)
				continue
			}
			last := u.Value
			if r.LMCRanges {
				last += 1<<u.LMC - 1
			}
			if first := heldFirst(lids, u.Value, last); first != nil {
				report(DuplicateLID, u, first)
				continue
			}
			for l := u.Value; l <= last; l++ {
				lids[l] = u
			}
		case NodeGUID:
			if r.ZeroGUIDs && u.Value == 0 {
				report(ZeroNodeGUID, u, nil)
			} else if first := nodes[u.Value]; first != nil {
				report(DuplicateNodeGUID, u, first)
			} else {
				nodes[u.Value] = u
			}
		case PortGUID:
			if r.ZeroGUIDs && u.Value == 0 {
				report(ZeroPortGUID, u, nil)
				continue
			}
			if first := ports[u.Value]; first != nil {
				report(DuplicatePortGUID, u, first)
				continue
			}
			ports[u.Value] = u
			known := nodes
			if r.AnyOrder {
				known = allNodes
			}
			if n := known[u.Value]; n != nil && u.Value != u.NodeGUID {
				report(PortGUIDIsNodeGUID, u, n)
			}
		}
	}
	return out
}

// heldFirst is the use holding one of the LIDs lo..hi, the lowest first.
func heldFirst(lids map[uint64]*Use, lo, hi uint64) *Use {
	for l := lo; l <= hi; l++ {
		if u := lids[l]; u != nil {
			return u
		}
	}
	return nil
}

// Uses lists the identifiers the nodes hold, node by node in the order
// given: a switch's LID (its port 0's), node GUID and port GUID; a CA's or
// router's LID and port GUID for each linked port, its node GUID with the
// first. A node listed twice is read twice. Other node types hold none
// that a subnet manager assigns.
func Uses(nodes []*discovery.Node) []Use {
	var out []Use
	for _, n := range nodes {
		switch n.Type {
		case discovery.NodeSwitch:
			at := Use{NodeType: n.Type, NodeGUID: n.GUID, LID: n.SMALID, Node: n}
			out = append(out,
				at.with(LID, uint64(n.SMALID), n.SMALMC),
				at.with(NodeGUID, n.GUID, 0),
				at.with(PortGUID, uint64(n.Info().PortGUID), 0))
		case discovery.NodeCA, discovery.NodeRouter:
			first := true
			for p := 1; p <= n.NumPorts; p++ {
				port := n.Port(p)
				if port == nil || port.Remote == nil {
					continue
				}
				at := Use{NodeType: n.Type, NodeGUID: n.GUID, LID: port.BaseLID, Node: n, Port: p}
				out = append(out, at.with(LID, uint64(port.BaseLID), port.LMC))
				if first {
					out = append(out, at.with(NodeGUID, n.GUID, 0))
					first = false
				}
				out = append(out, at.with(PortGUID, port.GUID, 0))
			}
		}
	}
	return out
}

// with is the use of an identifier by the holder u describes.
func (u Use) with(id ID, v uint64, lmc uint8) Use {
	u.ID, u.Value, u.LMC = id, v, lmc
	return u
}
