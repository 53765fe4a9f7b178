package discovery

import "strings"

// Load is a set of attributes a fabric holds, or that a walk should fetch.
// Discovery loads incrementally: given a fabric, it fetches only what the
// fabric does not have yet.
type Load uint32

// The attributes discovery can load. NodeInfo and PortInfo come together:
// the walk cannot follow links without the ports' states, so either one
// means a walk of the topology (every node's NodeInfo, the PortInfo of
// every switch port and of every CA port that has a link, the links).
const (
	LoadNodeInfo Load = 1 << iota
	LoadPortInfo
	LoadNodeDesc
	LoadSwitchInfo
	// LoadMlnxExtPortInfo is Mellanox's extended PortInfo, fetched where
	// libibnetdisc fetches it (ibdiag.conf MLX_EPI, on by default).
	LoadMlnxExtPortInfo

	// LoadTopology is the walk itself.
	LoadTopology = LoadNodeInfo | LoadPortInfo
	// LoadAll is what libibnetdisc's discovery reads (and its cache holds,
	// apart from the Mellanox extension).
	LoadAll = LoadTopology | LoadNodeDesc | LoadSwitchInfo | LoadMlnxExtPortInfo
	// loadCacheable is what a libibnetdisc cache file holds.
	loadCacheable = LoadTopology | LoadNodeDesc | LoadSwitchInfo
)

var loadNames = []struct {
	l    Load
	name string
}{
	{LoadNodeInfo, "NodeInfo"},
	{LoadPortInfo, "PortInfo"},
	{LoadNodeDesc, "NodeDescription"},
	{LoadSwitchInfo, "SwitchInfo"},
	{LoadMlnxExtPortInfo, "MlnxExtPortInfo"},
}

// String names the attributes, "NodeInfo+PortInfo", or "none".
func (l Load) String() string {
	var names []string
	for _, n := range loadNames {
		if l&n.l != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "+")
}

// Has reports whether the fabric holds all of l. A fabric that has nodes
// but no Loaded set (one built by hand or read from a libibnetdisc cache by
// a reader that does not know Loaded) counts as holding what a cache holds.
func (f *Fabric) Has(l Load) bool {
	return f.loaded()&l == l
}

func (f *Fabric) loaded() Load {
	if f.Loaded == 0 && len(f.Nodes) > 0 {
		return loadCacheable
	}
	return f.Loaded
}
