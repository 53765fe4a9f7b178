package ctext

import "fmt"

// The C tools spell node types in many ways, each its own; one function per
// convention here, named for it, so a command prints its C tool's words
// and no word is written twice. t is NodeInfo's NodeType (IBA 14.2.5.3):
// 1 a channel adapter, 2 a switch, 3 a router; libibumad also has 4, an
// iWARP RNIC.
const (
	typeCA     = 1
	typeSwitch = 2
	typeRouter = 3
	typeRNIC   = 4
)

// nodeTypeWords is one convention: its word for a CA, a switch and a
// router, and for any other value.
type nodeTypeWords struct{ ca, sw, router, other string }

func (w *nodeTypeWords) of(t int) string {
	switch t {
	case typeCA:
		return w.ca
	case typeSwitch:
		return w.sw
	case typeRouter:
		return w.router
	}
	return w.other
}

var (
	linkInfoWords    = nodeTypeWords{"CA", "Switch", "Router", "??"}
	portsReportWords = nodeTypeWords{"CA", "SW", "RT", "??"}
	nodeListWords    = nodeTypeWords{"Ca", "Switch", "Router", "???"}
	topoWords        = nodeTypeWords{"Ca", "???", "Rt", "???"}
	topoGUIDWords    = nodeTypeWords{"ca", "???", "rt", "???"}
	osmWords         = nodeTypeWords{"Channel Adapter", "Switch", "Router", "UNKNOWN"}
	idsScriptWords   = nodeTypeWords{"ca", "switch", "router", ""}
)

// NodeTypeStr is iblinkinfo's nodetype_str: "CA", "Switch", "Router",
// else "??" (its node headers; ibprint and ibfindnodesusing lower-case it).
func NodeTypeStr(t int) string { return linkInfoWords.of(t) }

// PortsReportNodeType is ibnetdiscover's ports_nt_str_compat (-p):
// "CA", "SW", "RT", else "??".
func PortsReportNodeType(t int) string { return portsReportWords.of(t) }

// NodeListType is ibnetdiscover's list_node (-l, -H, -S, -R): "Ca",
// "Switch", "Router", else "???".
func NodeListType(t int) string { return nodeListWords.of(t) }

// TopologyNodeType is ibnetdiscover's out_ca_detail ("Ca\t2 ..."), and
// TopologyGUIDType its out_ca ("caguid=..."): a CA's or router's words,
// "???" for any other type.
func TopologyNodeType(t int) string { return topoWords.of(t) }

func TopologyGUIDType(t int) string { return topoGUIDWords.of(t) }

// MadNodeType is libibmad's mad_dump_node_type: "Channel Adapter",
// "Switch", "Router", else "?(<t>)?".
func MadNodeType(t int) string {
	if t < typeCA || t > typeRouter {
		return fmt.Sprintf("?(%d)?", t)
	}
	return osmWords.of(t)
}

// OsmNodeType is ib_get_node_type_str (OpenSM's ib_types.h, saquery's
// NodeRecord dump): "Channel Adapter", "Switch", "Router", else "UNKNOWN".
func OsmNodeType(t int) string { return osmWords.of(t) }

// UmadNodeType is ibstat's node_type_str over libibumad's node types:
// "CA", "Switch", "Router", "iWARP RNIC", else "???".
func UmadNodeType(t int) string {
	if t == typeRNIC {
		return "iWARP RNIC"
	}
	if t < typeCA || t > typeRouter {
		return "???"
	}
	return linkInfoWords.of(t)
}

// IdsScriptNodeType is ibidsverify.pl's: "ca", "switch", "router" (it
// reads only those), else "".
func IdsScriptNodeType(t int) string { return idsScriptWords.of(t) }
