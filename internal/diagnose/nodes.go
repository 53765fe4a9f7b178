package diagnose

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
)

// nodesCheck compares nodes of one kind with each other: devices of one
// type whose revisions differ were likely meant to be updated together.
//
// The revision is NodeInfo's Revision, the one version every node
// reports without vendor MADs. On hardware it is the device's (the
// silicon's or the firmware's, as the vendor fills it: Mellanox devices
// report their firmware's there only in vendor MADs, so mixed firmware of
// one silicon revision shows only to a vendor check). ibsim reports the
// same revision for every node.
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
	newest := map[deviceKind]uint32{} // revision 0 in the key
	count := map[deviceKind]int{}     // nodes per kind and revision
	nodes := s.Fabric.SortedByGUID()
	kindOf := func(n *discovery.Node) (deviceKind, bool) {
		if len(n.NodeInfo) == 0 {
			return deviceKind{}, false
		}
		ni := n.Info()
		return deviceKind{typ: n.Type, vendor: ni.VendorID, device: ni.DeviceID, revision: ni.Revision}, true
	}
	for _, n := range nodes {
		k, ok := kindOf(n)
		if !ok {
			continue
		}
		rev := k.revision
		count[k]++
		k.revision = 0
		newest[k] = max(newest[k], rev)
		count[k]++
	}
	var out []Finding
	for _, n := range nodes {
		k, ok := kindOf(n)
		if !ok {
			continue
		}
		rev := k.revision
		k.revision = 0
		top := newest[k]
		if rev >= top {
			continue
		}
		atTop := count[deviceKind{k.typ, k.vendor, k.device, top}]
		out = append(out, Finding{Code: "nodes.mixed_revision", Severity: Warning, At: placeOf(n, nil, cfg.Names),
			Message: fmt.Sprintf("revision 0x%x, older than 0x%x of %d other %s with vendor ID 0x%x, device ID 0x%x",
				rev, top, atTop, plural(atTop, "node", "nodes"), k.vendor, k.device),
			Evidence: []Field{{"vendor_id", k.vendor}, {"device_id", k.device}, {"revision", rev}, {"newest_revision", top},
				{"nodes_at_newest", atTop}, {"nodes_of_kind", count[k]}}})
	}
	return out, ""
}
