package diagnose

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
)

// nodesCheck compares nodes of one kind with each other: devices of one
// type whose revisions differ were likely meant to be updated together.
//
// The revision is NodeInfo's Revision, the one version every node
// reports without vendor MADs. What it holds is the vendor's choice: on
// Mellanox/NVIDIA devices the silicon's revision (their firmware version
// is in vendor MADs, which the sweep does not send). ibsim reports one
// revision for all its nodes of a type.
type nodesCheck struct{}

func (nodesCheck) Name() string { return "nodes" }

func (nodesCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"nodes.mixed_revision", Warning, "a node's NodeInfo revision is older than the newest of its kind (same node type, vendor ID and device ID)"},
	}
}

// deviceKind is what nodes that should run the same revision share.
type deviceKind struct {
	typ      int
	vendor   uint32
	device   uint16
	revision uint32
}

func (nodesCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	newest := map[deviceKind]uint32{} // by kind (revision 0 in the key)
	ofKind := map[deviceKind]int{}    // nodes by kind
	atRev := map[deviceKind]int{}     // nodes by kind and revision
	nodes := s.Fabric.SortedByGUID()
	kindOf := func(n *discovery.Node) (kind deviceKind, rev uint32, ok bool) {
		if len(n.NodeInfo) == 0 {
			return deviceKind{}, 0, false
		}
		ni := n.Info()
		return deviceKind{typ: n.Type, vendor: ni.VendorID, device: ni.DeviceID}, ni.Revision, true
	}
	for _, n := range nodes {
		if k, rev, ok := kindOf(n); ok {
			newest[k] = max(newest[k], rev)
			ofKind[k]++
			k.revision = rev
			atRev[k]++
		}
	}
	var out []Finding
	for _, n := range nodes {
		k, rev, ok := kindOf(n)
		if !ok || rev >= newest[k] {
			continue
		}
		top := newest[k]
		atTop := atRev[deviceKind{k.typ, k.vendor, k.device, top}]
		out = append(out, Finding{Code: "nodes.mixed_revision", Severity: Warning, At: placeOf(n, nil, cfg.Names),
			Message: fmt.Sprintf("revision 0x%x, older than 0x%x of %d other %s with vendor ID 0x%x, device ID 0x%x",
				rev, top, atTop, plural(atTop, "node", "nodes"), k.vendor, k.device),
			Evidence: []Field{{"vendor_id", k.vendor}, {"device_id", k.device}, {"revision", rev}, {"newest_revision", top},
				{"nodes_at_newest", atTop}, {"nodes_of_kind", ofKind[k]}}})
	}
	return out, ""
}
