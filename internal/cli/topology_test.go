package cli

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
)

var topologyUpdate = flag.Bool("update-topology", false, "rewrite the topology golden files")

// TestTopologyGolden walks each test topology live and compares the
// Slurm and DOT exports with golden files, which were checked by hand
// against the ibsim net files:
//   - fattree-50: leaf01..leaf04 carry node0001-0011, 0012-0022,
//     0023-0033, 0034-0044 (the net file's leaf records list exactly those
//     CAs), spine01 and spine02 each link to all four leaves (2 links
//     each), so both list Switches=leaf[01-04] and the tree has a top.
//   - fattree-200: same reading, 10 leaves of 18 hosts, 5 spines.
//   - torus-3x3: each sw-rXcY has 2 hosts and 4 same-level neighbours
//     (sw-r1c1: r0c1, r1c0, r1c2, r2c1 in the net file), so no Switches=,
//     one peer comment per switch, and the split warning.
//   - ibsim-net: Switch2 has no CA, only links to Switch1, so it is level
//     1 above Switch1; tiny: "hca one" is host "hca", Switch2's
//     description "sw2 desc" names it sw2; the 2sw2path fabrics: two
//     host-carrying switches linked to each other (peers, split).
//   - The DOT files: every link of the net file once, with its two port
//     numbers (counted for tiny and ibsim-net by hand), written from the
//     upper tier down, and one rank per tier (fattree-50: the spines, the
//     leaves, the hosts).
//   - The YAML files: the Slurm files' switches, and one block per leaf
//     (fattree-50: leaf01-04 of 11 hosts, block sizes 11, 22, 44).
func TestTopologyGolden(t *testing.T) {
	shared := map[string]bool{"tiny.net": true, "fattree-50.net": true, "torus-3x3.net": true, "ibsim-2sw2path4hca2port.net": true}
	for _, topo := range []string{"tiny.net", "ibsim-net.net", "ibsim-net1.net", "ibsim-2sw2path4hca.net",
		"ibsim-2sw2path4hca2port.net", "fattree-50.net", "fattree-200.net", "torus-3x3.net"} {
		t.Run(topo, func(t *testing.T) {
			var f *simfabric.Fabric
			if shared[topo] {
				f = sharedFabric(t, topo)
			} else {
				simfabric.RequireSim(t, true)
				var err error
				if f, err = simfabric.Start(context.Background(), simfabric.Options{Topology: simfabric.TopologyPath(topo)}); err != nil {
					t.Fatal(err)
				}
				defer f.Stop()
			}
			base := strings.TrimSuffix(topo, ".net")
			for format, ext := range map[string]string{"slurm": ".slurm", "slurm-yaml": ".yaml", "dot": ".dot"} {
				r := runSim(f, "", "topology", "--format", format)
				if r.Code != 0 || r.Stderr != "" {
					t.Fatalf("topology --format %s: exit %d, stderr %q", format, r.Code, r.Stderr)
				}
				checkGolden(t, filepath.Join("testdata", "topology", base+ext), r.Stdout)
			}
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *topologyUpdate {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n%s", path, simfabric.UnifiedDiff(path, "got", string(want), got))
	}
}

// TestTopologyFromCacheAndMap: a cache gives the same export as the live
// walk, and the node-name-map renames hosts and switches (a mapped name
// with a blank keeps its first word, a switch name with Slurm syntax in
// it has it made '_', two switches mapped to one name fall back to GUIDs).
func TestTopologyFromCacheAndMap(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	cache := filepath.Join(dir, "tiny.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
		t.Fatalf("ibnetdiscover --cache: %d %s", r.Code, r.Stderr)
	}
	live := runSim(f, "", "topology")
	cached := runSim(f, "", "topology", "--load-cache", cache)
	if cached.Code != 0 || cached.Stdout != live.Stdout {
		t.Errorf("from the cache (exit %d, %q):\n%s\nlive:\n%s", cached.Code, cached.Stderr, cached.Stdout, live.Stdout)
	}
	nameMap := filepath.Join(dir, "map")
	os.WriteFile(nameMap, []byte("0x100000 cn7 rack1\n0x100003 cn8\n0x100006 cn10\n0x200000 core[a]\n"), 0o644)
	r := runSim(f, "", "topology", "--load-cache", cache, "--node-name-map", nameMap)
	want := `# topology.conf for Slurm's topology/tree plugin, written by ibtool topology
SwitchName=core_a_ Nodes=cn[7-8]
SwitchName=sw2 Nodes=cn10
# core_a_ is also linked to sw2 (same level: not expressible in a tree)
# sw2 is also linked to core_a_ (same level: not expressible in a tree)
# no switch reaches every host through the switches below it: Slurm places no job across core_a_,sw2
`
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("with the map: exit %d, stderr %q, got\n%s\nwant\n%s", r.Code, r.Stderr, r.Stdout, want)
	}
	os.WriteFile(nameMap, []byte("0x200000 core\n0x200001 core\n"), 0o644)
	r = runSim(f, "", "topology", "--load-cache", cache, "--node-name-map", nameMap)
	if !strings.Contains(r.Stdout, "SwitchName=0x0000000000200000 Nodes=Hca2,hca\nSwitchName=0x0000000000200001 Nodes=Hca3\n") {
		t.Errorf("two switches of one name: got\n%s", r.Stdout)
	}
	for _, args := range [][]string{{"--format", "xml"}, {"extra"}, {"--discovery", "XY"}} {
		r := runSim(f, "", append([]string{"topology"}, args...)...)
		if r.Code != cmdutil.ExitUsage || strings.Count(r.Stderr, "\n") != 2 {
			t.Errorf("topology %v: exit %d, stderr %q; want a usage error", args, r.Code, r.Stderr)
		}
	}
}
