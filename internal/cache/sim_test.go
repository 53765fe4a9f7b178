package cache

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/topogen"
)

// simTopologies are the fabrics the cache is checked on against
// infiniband-diags' ibnetdiscover.
var simTopologies = []string{"tiny.net", "ibsim-2sw2path4hca2port.net", "fattree-50.net"}

// TestAgainstIbnetdiscover checks, on each simulated fabric, that
//   - ibtool reads what `ibnetdiscover --cache X` writes: the nodes, ports
//     and links of the topology file, and every GUID, port and LID that
//     ibnetdiscover's own topology output shows;
//   - what ibtool writes back is byte for byte X, and byte for byte what
//     libibnetdisc writes for a fabric it loaded (`--load-cache X --cache
//     Z`), so `--load-cache` prints the same topology for both;
//   - a companion file next to the cache does not disturb the C loader.
func TestAgainstIbnetdiscover(t *testing.T) {
	simfabric.RequireTools(t, "ibnetdiscover")
	for _, topo := range simTopologies {
		t.Run(topo, func(t *testing.T) {
			f := simfabric.StartT(t, topo)
			ctx := context.Background()
			dir := t.TempDir()
			x := filepath.Join(dir, "x.cache")

			disc := f.RunC(ctx, "", "ibnetdiscover", "--cache", x)
			if disc.Code != 0 {
				t.Fatalf("ibnetdiscover --cache: %v", disc)
			}
			xdata, err := os.ReadFile(x)
			if err != nil {
				t.Fatal(err)
			}
			fab, err := Read(x)
			if err != nil {
				t.Fatal(err)
			}
			checkTopology(t, fab, simfabric.TopologyPath(topo))
			checkTopologyText(t, fab, disc.Stdout)

			// Write it back, with DR paths so a companion file is written.
			for i, n := range fab.Nodes {
				n.DRPath = []byte{0, byte(i % 255)}
			}
			y := filepath.Join(dir, "y.cache")
			if err := Write(y, fab); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(y + CompanionSuffix); err != nil {
				t.Fatalf("no companion: %v", err)
			}
			ydata, _ := os.ReadFile(y)
			if !bytes.Equal(ydata, xdata) {
				t.Errorf("Write(Read(x)) differs from x: %s", firstDiff(xdata, ydata))
			}
			// The C loader prints the same fabric from both.
			loadX := f.RunC(ctx, "", "ibnetdiscover", "--load-cache", x)
			loadY := f.RunC(ctx, "", "ibnetdiscover", "--load-cache", y)
			simfabric.Compare(t, "ibnetdiscover --load-cache", loadX, loadY, simfabric.Timestamps, simfabric.DropSimNoise)
			if loadX.Code != 0 || strings.Count(loadX.Stdout, "\n") < 10 {
				t.Errorf("ibnetdiscover --load-cache x: %v", loadX)
			}
			// And libibnetdisc re-caching a loaded fabric writes what we do.
			z := filepath.Join(dir, "z.cache")
			if r := f.RunC(ctx, "", "ibnetdiscover", "--load-cache", x, "--cache", z); r.Code != 0 {
				t.Fatalf("ibnetdiscover --load-cache --cache: %v", r)
			}
			zdata, _ := os.ReadFile(z)
			if !bytes.Equal(ydata, zdata) {
				t.Errorf("libibnetdisc's re-cache differs from ours: %s", firstDiff(zdata, ydata))
			}
			// The companion belongs to y only: paths back from y, none from z.
			back, err := Read(y)
			if err != nil {
				t.Fatal(err)
			}
			if back.Nodes[1].DRPath == nil || back.Nodes[1].DRPath[1] != 1 {
				t.Errorf("DR path not read back: %v", back.Nodes[1].DRPath)
			}
		})
	}
}

func firstDiff(want, got []byte) string {
	for i := 0; i < len(want) && i < len(got); i++ {
		if want[i] != got[i] {
			return fmt.Sprintf("first difference at byte %d (of %d, got %d bytes)", i, len(want), len(got))
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(want), len(got))
}

// netNode is one record of an ibsim net file.
type netNode struct {
	typ, ports int
	desc       string
	links      map[int]netEnd // local port -> remote
}

type netEnd struct {
	id   string
	port int
}

var (
	netHeaderRE = regexp.MustCompile(`^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"(.*)$`)
	netDescRE   = regexp.MustCompile(`#\s*"([^"]*)"`)
	netPortRE   = regexp.MustCompile(`^\[(\d+)\]\s*"([^"]+)"\[(\d+)\]`)
)

// parseNetFile reads the parts of an ibsim net file the tests check: node
// types, port counts, descriptions (the quoted comment, or the node id as
// ibsim uses it) and links.
func parseNetFile(t *testing.T, path string) map[string]*netNode {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	nodes := map[string]*netNode{}
	var cur *netNode
	s := bufio.NewScanner(fh)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if m := netHeaderRE.FindStringSubmatch(line); m != nil {
			typ := map[string]int{"Switch": discovery.NodeSwitch, "Hca": discovery.NodeCA, "Ca": discovery.NodeCA, "Rt": discovery.NodeRouter}[m[1]]
			ports, _ := strconv.Atoi(m[2])
			cur = &netNode{typ: typ, ports: ports, desc: m[3], links: map[int]netEnd{}}
			if d := netDescRE.FindStringSubmatch(m[4]); d != nil {
				cur.desc = d[1]
			}
			nodes[m[3]] = cur
			continue
		}
		if m := netPortRE.FindStringSubmatch(line); m != nil && cur != nil {
			lp, _ := strconv.Atoi(m[1])
			rp, _ := strconv.Atoi(m[3])
			cur.links[lp] = netEnd{m[2], rp}
		}
	}
	return nodes
}

// checkTopology compares the loaded fabric with the net file: the same
// nodes (by description), types and port counts, and every link.
func checkTopology(t *testing.T, fab *discovery.Fabric, netPath string) {
	t.Helper()
	net := parseNetFile(t, netPath)
	byDesc := map[string]*discovery.Node{}
	for _, n := range fab.Nodes {
		if byDesc[n.Desc()] != nil {
			t.Fatalf("two nodes described %q", n.Desc())
		}
		byDesc[n.Desc()] = n
	}
	if len(byDesc) != len(net) {
		t.Errorf("%d nodes, the topology has %d", len(byDesc), len(net))
	}
	netLinks, links := 0, 0
	for _, nn := range net {
		n := byDesc[nn.desc]
		if n == nil {
			t.Errorf("node %q missing", nn.desc)
			continue
		}
		if n.Type != nn.typ || n.NumPorts != nn.ports {
			t.Errorf("%q: type %d with %d ports, want %d with %d", nn.desc, n.Type, n.NumPorts, nn.typ, nn.ports)
		}
		for lp, end := range nn.links {
			netLinks++
			rn := byDesc[net[end.id].desc]
			p := n.Port(lp)
			if p == nil || rn == nil || p.Remote == nil || p.Remote != rn.Port(end.port) || p.Remote.Remote != p {
				t.Errorf("link %q[%d] - %q[%d] missing", nn.desc, lp, net[end.id].desc, end.port)
			}
		}
	}
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				links++
			}
		}
	}
	t.Logf("topology: %d nodes and %d link ends checked", len(net), netLinks)
	if links != netLinks {
		t.Errorf("%d link ends in the cache, %d in the topology", links, netLinks)
	}
}

var (
	textNodeRE = regexp.MustCompile(`^(Switch|Ca|Rt)\t(\d+) "[SHR]-([0-9a-f]{16})"\t\t# "(.*)"(.*)$`)
	textLinkRE = regexp.MustCompile(`^\[(\d+)\](?:\(([0-9a-f]+)\))?\s+"[SHR]-([0-9a-f]{16})"\[(\d+)\](?:\(([0-9a-f]+)\))?\s+# (.*)$`)
	textLIDRE  = regexp.MustCompile(`lid (\d+)(?: lmc (\d+))?`)
)

// checkTopologyText checks the fabric against ibnetdiscover's topology
// output: every node's GUID, type and port count, every link line's GUIDs
// and ports, and the LIDs shown.
func checkTopologyText(t *testing.T, fab *discovery.Fabric, text string) {
	t.Helper()
	var cur *discovery.Node
	nodes, linkLines, links := 0, 0, 0
	for _, line := range strings.Split(text, "\n") {
		if m := textNodeRE.FindStringSubmatch(line); m != nil {
			guid, _ := strconv.ParseUint(m[3], 16, 64)
			ports, _ := strconv.Atoi(m[2])
			cur = fab.Node(guid)
			nodes++
			if cur == nil {
				t.Errorf("node 0x%s of ibnetdiscover's output missing", m[3])
				continue
			}
			typ := map[string]int{"Switch": discovery.NodeSwitch, "Ca": discovery.NodeCA, "Rt": discovery.NodeRouter}[m[1]]
			if cur.Type != typ || cur.NumPorts != ports || cur.Desc() != m[4] {
				t.Errorf("node 0x%s: %d %d %q, ibnetdiscover says %s", m[3], cur.Type, cur.NumPorts, cur.Desc(), line)
			}
			if typ == discovery.NodeSwitch {
				lid := textLIDRE.FindStringSubmatch(m[5])
				if lid == nil || lid[1] != strconv.Itoa(int(cur.SMALID)) || cur.Ports[0] == nil || int(cur.Ports[0].BaseLID) != int(cur.SMALID) {
					t.Errorf("switch 0x%s: LID %d, ibnetdiscover says %s", m[3], cur.SMALID, line)
				}
			}
			continue
		}
		m := textLinkRE.FindStringSubmatch(line)
		if m == nil || cur == nil {
			continue
		}
		linkLines++
		lp, _ := strconv.Atoi(m[1])
		rguid, _ := strconv.ParseUint(m[3], 16, 64)
		rp, _ := strconv.Atoi(m[4])
		p, rn := cur.Port(lp), fab.Node(rguid)
		if p == nil || rn == nil || p.Remote == nil || p.Remote != rn.Port(rp) {
			t.Errorf("node 0x%016x: link line %q not in the cache", cur.GUID, line)
			continue
		}
		if m[2] != "" && m[2] != strconv.FormatUint(p.GUID, 16) {
			t.Errorf("port GUID 0x%x, ibnetdiscover says %s", p.GUID, line)
		}
		if m[5] != "" && m[5] != strconv.FormatUint(p.Remote.GUID, 16) {
			t.Errorf("remote port GUID 0x%x, ibnetdiscover says %s", p.Remote.GUID, line)
		}
		// A CA's line starts with its own LID; a switch's names the remote's.
		lid := textLIDRE.FindStringSubmatch(m[6])
		want := p.Remote
		if cur.Type != discovery.NodeSwitch {
			want = p
		}
		if lid == nil || lid[1] != strconv.Itoa(int(want.BaseLID)) {
			t.Errorf("LID %d, ibnetdiscover says %s", want.BaseLID, line)
		}
	}
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				links++
			}
		}
	}
	t.Logf("ibnetdiscover's output: %d nodes and %d link lines checked", nodes, linkLines)
	if nodes != len(fab.Nodes) || linkLines != links {
		t.Errorf("ibnetdiscover shows %d nodes and %d link lines, the cache has %d and %d", nodes, linkLines, len(fab.Nodes), links)
	}
}

// TestRewriteOfAnIrregularMesh: on an irregular mesh libibnetdisc's
// discovery puts some port records of a hash bucket in another order than
// its own rewrite of the loaded cache does; ibtool's rewrite is byte for
// byte the rewrite's (`--load-cache X --cache Z`), which docs/cache.md
// promises, not X's.
func TestRewriteOfAnIrregularMesh(t *testing.T) {
	simfabric.RequireTools(t, "ibnetdiscover")
	dir := t.TempDir()
	// A mesh on which discovery's cache and the rewrite differ.
	gen, err := topogen.Generate(topogen.Spec{Kind: topogen.Mesh, Rows: 4, Cols: 5, Torus: true, Hosts: 2,
		DropLinks: 5, ExtraLinks: 3, Jitter: true, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	topo := filepath.Join(dir, "mesh.net")
	if err := gen.WriteFile(topo); err != nil {
		t.Fatal(err)
	}
	f := simfabric.StartT(t, topo)
	ctx := context.Background()
	x, z := filepath.Join(dir, "x.cache"), filepath.Join(dir, "z.cache")
	if r := f.RunC(ctx, "", "ibnetdiscover", "--cache", x); r.Code != 0 {
		t.Fatalf("ibnetdiscover --cache: %v", r)
	}
	if r := f.RunC(ctx, "", "ibnetdiscover", "--load-cache", x, "--cache", z); r.Code != 0 {
		t.Fatalf("ibnetdiscover --load-cache --cache: %v", r)
	}
	fab, err := Read(x)
	if err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(dir, "y.cache")
	if err := Write(y, fab); err != nil {
		t.Fatal(err)
	}
	xdata, _ := os.ReadFile(x)
	ydata, _ := os.ReadFile(y)
	zdata, _ := os.ReadFile(z)
	if !bytes.Equal(ydata, zdata) {
		t.Errorf("ibtool's rewrite differs from libibnetdisc's: %s", firstDiff(zdata, ydata))
	}
	if bytes.Equal(xdata, zdata) {
		t.Logf("on this ibsim the discovery's cache is the rewrite too")
	}
}
