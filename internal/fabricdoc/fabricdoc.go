package fabricdoc

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// RemoteLID is the LID ibnetdiscover shows for the far end of a link.
func RemoteLID(p *discovery.Port) uint16 {
	if p.Node.Type == discovery.NodeSwitch {
		return p.Node.SMALID
	}
	return p.BaseLID
}

// The JSON form of a fabric (docs/json.md, "ibnetdiscover").
type FabricDoc struct {
	FromNodeGUID *mad.GUID    `json:"from_node_guid,omitempty"`
	FromPort     int          `json:"from_port"`
	MaxHops      int          `json:"max_hops"`
	MADs         int          `json:"mads"`
	Nodes        []NodeDoc    `json:"nodes"`
	Links        []linkDoc    `json:"links,omitempty"`
	Complete     bool         `json:"complete"` // no query failed: errors is empty
	Errors       []WalkErrDoc `json:"errors"`
}

type NodeDoc struct {
	NodeGUID        mad.GUID       `json:"node_guid"`
	NodeType        jsonv.NodeType `json:"node_type"`
	Description     string         `json:"description"`
	NodeName        string         `json:"node_name"`
	NumPorts        int            `json:"num_ports"`
	SystemImageGUID mad.GUID       `json:"system_image_guid"`
	VendorID        uint32         `json:"vendor_id"`
	DeviceID        uint16         `json:"device_id"`
	LID             *uint16        `json:"lid,omitempty"`
	LMC             *uint8         `json:"lmc,omitempty"`
	EnhancedPort0   *bool          `json:"enhanced_port0,omitempty"`
	DRPath          string         `json:"dr_path,omitempty"`
	Ports           []portDoc      `json:"ports"`
}

type portDoc struct {
	Port         int      `json:"port"`
	PortGUID     mad.GUID `json:"port_guid"`
	ExternalPort int      `json:"external_port,omitempty"`
	LID          uint16   `json:"lid"`
	LMC          uint8    `json:"lmc"`
	*jsonv.PortState
	jsonv.Rate
	Remote *jsonv.LinkEnd `json:"remote,omitempty"`
}

type linkDoc struct {
	A jsonv.LinkEnd `json:"a"`
	B jsonv.LinkEnd `json:"b"`
}

type WalkErrDoc struct {
	DRPath string `json:"dr_path"`
	What   string `json:"what"`
	Error  string `json:"error"`
}

func HexGUID(g uint64) string { return fmt.Sprintf("0x%016x", g) }

// NodeJSON describes one node for --json.
func NodeJSON(n *discovery.Node, names *nodename.Map) NodeDoc {
	ni := n.Info()
	d := NodeDoc{
		NodeGUID: mad.GUID(n.GUID), NodeType: NodeTypeOf(n),
		Description: nodename.CleanDesc(string(n.NodeDesc)), NodeName: names.Name(n.GUID, string(n.NodeDesc)),
		NumPorts: n.NumPorts, SystemImageGUID: ni.SystemImageGUID,
		VendorID: ni.VendorID, DeviceID: ni.DeviceID,
		Ports: []portDoc{},
	}
	if len(n.DRPath) > 0 {
		d.DRPath = mad.FormatDRPath(n.DRPath)
	}
	if n.Type == discovery.NodeSwitch {
		lid, lmc, enh := n.SMALID, n.SMALMC, n.EnhancedSP0
		d.LID, d.LMC, d.EnhancedPort0 = &lid, &lmc, &enh
	}
	for _, p := range n.Ports {
		if p == nil {
			continue
		}
		pd := portDoc{Port: p.Num, PortGUID: mad.GUID(p.GUID), ExternalPort: p.ExtNum, LID: p.BaseLID, LMC: p.LMC}
		if p.PortInfo != nil {
			pd.PortState = jsonv.PortStateOf(p.Info())
			// The rate of a link that is up (not of switch port 0).
			if (p.Num != 0 || n.Type != discovery.NodeSwitch) && p.Info().PortState != mad.PortStateDown {
				pd.Rate = portRateOf(p)
			}
		}
		if p.Remote != nil {
			end := linkEndOf(p.Remote, names)
			pd.Remote = &end
		}
		d.Ports = append(d.Ports, pd)
	}
	return d
}

// FabricJSON is the --json document; list (-l/-H/-S/-R) keeps only the
// nodes of those types and leaves the links out.
func FabricJSON(f *discovery.Fabric, names *nodename.Map, list int) FabricDoc {
	doc := FabricDoc{FromPort: f.FromPort, MaxHops: f.MaxHops, MADs: f.MADs, Nodes: []NodeDoc{}, Errors: []WalkErrDoc{}}
	if f.From != nil {
		g := mad.GUID(f.From.GUID)
		doc.FromNodeGUID = &g
	}
	seen := map[*discovery.Port]bool{}
	for _, n := range f.Nodes {
		if list != 0 && list&(1<<n.Type) == 0 {
			continue
		}
		doc.Nodes = append(doc.Nodes, NodeJSON(n, names))
		if list != 0 {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || seen[p] {
				continue
			}
			seen[p], seen[p.Remote] = true, true
			doc.Links = append(doc.Links, linkDoc{A: linkEndOf(p, names), B: linkEndOf(p.Remote, names)})
		}
	}
	doc.Complete, doc.Errors = WalkErrorsDoc(f)
	return doc
}

// WalkErrorsDoc is a fabric's "complete" and "errors" in JSON: what the
// walk could not read.
func WalkErrorsDoc(f *discovery.Fabric) (complete bool, errs []WalkErrDoc) {
	errs = []WalkErrDoc{}
	for _, e := range f.Errors {
		errs = append(errs, WalkErrDoc{DRPath: mad.FormatDRPath(e.DRPath), What: e.What, Error: e.Reason()})
	}
	return len(errs) == 0, errs
}

// NodeTypeOf is a discovered node's type in the vocabulary.
func NodeTypeOf(n *discovery.Node) jsonv.NodeType { return jsonv.NodeTypeOf(mad.NodeType(n.Type)) }

// linkEndOf is port p as the end of a link: its node, number, port GUID and
// LID (a switch port's is the switch's).
func linkEndOf(p *discovery.Port, names *nodename.Map) jsonv.LinkEnd {
	return jsonv.LinkEnd{
		NodeGUID: mad.GUID(p.Node.GUID), NodeName: names.Name(p.Node.GUID, string(p.Node.NodeDesc)),
		NodeType: NodeTypeOf(p.Node), Port: p.Num, ExternalPort: p.ExtNum,
		PortGUID: mad.GUID(p.GUID), LID: RemoteLID(p),
	}
}

// portRateOf is the rate of p's link as ibnetdiscover names it (its width
// and speed columns).
func portRateOf(p *discovery.Port) jsonv.Rate { return linkrate.Of(p).JSONRate() }
