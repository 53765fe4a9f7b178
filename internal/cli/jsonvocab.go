package cli

// The discovery model in the JSON vocabulary (docs/json.md, internal/jsonv):
// what ibnetdiscover, iblinkinfo, the node lists and subnet_diff share.

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/umad"
)

// nodeTypeOf is a discovered node's type in the vocabulary.
func nodeTypeOf(n *discovery.Node) jsonv.NodeType { return jsonv.NodeTypeOf(mad.NodeType(n.Type)) }

// linkEndOf is port p as the end of a link: its node, number, port GUID and
// LID (a switch port's is the switch's).
func linkEndOf(p *discovery.Port, names *nodename.Map) jsonv.LinkEnd {
	return jsonv.LinkEnd{
		NodeGUID: mad.GUID(p.Node.GUID), NodeName: names.Name(p.Node.GUID, string(p.Node.NodeDesc)),
		NodeType: nodeTypeOf(p.Node), Port: p.Num, ExternalPort: p.ExtNum,
		PortGUID: mad.GUID(p.GUID), LID: remoteLID(p),
	}
}

// portRateOf is the rate of p's link as ibnetdiscover names it (its width
// and speed columns).
func portRateOf(p *discovery.Port) jsonv.Rate { return rateOf(p).jsonRate() }

// vendorTargetJSON is the target of a GMP sent to addr for t, text the C
// tool's.
func vendorTargetJSON(t endport.Target, addr umad.Address, text string) jsonv.Target {
	jt := jsonv.Target{Route: jsonv.RouteLID, LID: addr.LID, Text: text}
	if addr.LID == 0 && addr.GRH != nil {
		gid := mad.GID(addr.GRH.GID)
		jt.Route, jt.GID = jsonv.RouteGID, &gid
	}
	return withGiven(jt, t)
}

// withGiven adds to jt the GUID or GID its target was given as.
func withGiven(jt jsonv.Target, t endport.Target) jsonv.Target {
	switch t.Kind {
	case endport.ByGUID:
		g := mad.GUID(t.GUID)
		jt.GUID = &g
	case endport.ByGID:
		g := mad.GID(t.GID)
		jt.GID = &g
	}
	return jt
}

// portChangeKeys are the keys of ibportstate's JSON "changes": the
// PortInfo (or MlnxExtPortInfo) field each operation sets, as its JSON
// names it.
var portChangeKeys = map[string]string{
	"speed": "link_speed_enabled", "espeed": "link_speed_ext_enabled", "fdr10": "mlnx_link_speed_enabled",
	"width": "link_width_enabled", "vls": "operational_vls", "mtu": "neighbor_mtu",
	"lid": "lid", "smlid": "master_sm_lid", "lmc": "lmc",
	"mkey": "m_key", "mkeylease": "m_key_lease_period", "mkeyprot": "m_key_protect_bits",
}

// portChangesJSON is ibportstate's values by their JSON keys; the M_Key is
// a "0x" string (64 bits do not fit a JSON reader's double).
func portChangesJSON(values map[string]uint64) map[string]any {
	out := map[string]any{}
	for op, v := range values {
		key, ok := portChangeKeys[op]
		if !ok {
			key = op
		}
		if op == "mkey" {
			out[key] = fmt.Sprintf("0x%016x", v)
		} else {
			out[key] = v
		}
	}
	return out
}

// destTarget is a query layer destination as the vocabulary's target,
// text the C tool's.
func destTarget(d query.Dest, text string) jsonv.Target {
	t := jsonv.Target{Route: jsonv.RouteLID, LID: d.LID, Text: text}
	switch d.Kind {
	case query.ByDR:
		t.Route, t.DRPath = jsonv.RouteDR, mad.FormatDRPath(d.DRPath)
	case query.ByCombined:
		t.Route, t.DRPath, t.DRSLID = jsonv.RouteCombined, mad.FormatDRPath(d.DRPath), d.DRSLID
	}
	return t
}
