package topogen

import (
	"fmt"
	"slices"
	"strings"
)

// presets are the named fabrics: the tests' (testdata/topologies) and the
// bench's (cmd/ibbench). Sizes count switches and CAs.
var presets = map[string]Spec{
	// 50 nodes: 4 leaves of 11 hosts, 2 spines, 2 cables per leaf-spine
	// pair (testdata/topologies/fattree-50.net).
	"S50": {Kind: FatTree2, Leaves: 4, Spines: 2, Hosts: 11, Links: 2},
	// 195 nodes: 10 leaves of 18 hosts, 5 spines, 3 cables per pair
	// (testdata/topologies/fattree-200.net).
	"S200": {Kind: FatTree2, Leaves: 10, Spines: 5, Hosts: 18, Links: 3},
	// 512 nodes: 26 leaves of 18 hosts, 18 spines, full bisection.
	"S500": {Kind: FatTree2, Leaves: 26, Spines: 18, Hosts: 18, Links: 1},
	// 1008 nodes: 3 pods of 18 leaves of 16 hosts and 18 aggregation
	// switches, 36 cores.
	"S1000": {Kind: FatTree3, Pods: 3, LeavesPerPod: 18, AggsPerPod: 18, Cores: 36, Hosts: 16, AggCoreLinks: 9},
	// 2000 nodes: 6 pods like S1000's, 54 cores.
	"S2000": {Kind: FatTree3, Pods: 6, LeavesPerPod: 18, AggsPerPod: 18, Cores: 54, Hosts: 16, AggCoreLinks: 6},
	// 4950 nodes: 14 pods of 18 leaves of 17 hosts, 162 cores.
	"S5000": {Kind: FatTree3, Pods: 14, LeavesPerPod: 18, AggsPerPod: 18, Cores: 162, Hosts: 17, AggCoreLinks: 2},
	// 10,242 nodes: 29 pods of 18 leaves of 17 hosts, 324 cores.
	"S10000": {Kind: FatTree3, Pods: 29, LeavesPerPod: 18, AggsPerPod: 18, Cores: 324, Hosts: 17, AggCoreLinks: 1},
	// 27 nodes: a 3x3 torus of switches with 2 hosts each, whose routes
	// loop back (testdata/topologies/torus-3x3.net).
	"torus-3x3": {Kind: Mesh, Rows: 3, Cols: 3, Torus: true, Hosts: 2},
	// A small irregular torus: links missing, links across, hosts
	// unevenly spread.
	"mesh-irregular": {Kind: Mesh, Rows: 3, Cols: 4, Torus: true, Hosts: 3, DropLinks: 3, ExtraLinks: 2, Jitter: true, Seed: 1},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// PresetSpec returns a preset's Spec.
func PresetSpec(name string) (Spec, error) {
	s, ok := presets[name]
	if !ok {
		return Spec{}, fmt.Errorf("no preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	s.Name = name
	return s, nil
}

// Preset generates a preset.
func Preset(name string) (*Fabric, error) {
	s, err := PresetSpec(name)
	if err != nil {
		return nil, err
	}
	return Generate(s)
}
