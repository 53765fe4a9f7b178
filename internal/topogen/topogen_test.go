package topogen_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/topogen"
)

// netNode is a record of a net file as ibsim reads it.
type netNode struct {
	id     string
	desc   string
	isSw   bool
	nports int
	ports  map[int]netPort
}

type netPort struct {
	remote  string
	rport   int
	options string // "w=1 s=7 e=3", or "" for the width-speed suffix
	suffix  string // "4xEDR"
}

var (
	headerRE = regexp.MustCompile(`^(Switch|Ca)\t(\d+) "([^"]+)"\t\t# "([^"]*)"`)
	portRE   = regexp.MustCompile(`^\[(\d+)\]\t"([^"]+)"\[(\d+)\]\t([^#]*)\t# (.*)$`)
	suffixRE = regexp.MustCompile(` lid 0 (\d+x[A-Z0-9]+)$`)
)

// parseNet reads a net file topogen wrote, in file order.
func parseNet(t *testing.T, data []byte) []*netNode {
	t.Helper()
	var nodes []*netNode
	var cur *netNode
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if m := headerRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			cur = &netNode{id: m[3], desc: m[4], isSw: m[1] == "Switch", nports: n, ports: map[int]netPort{}}
			nodes = append(nodes, cur)
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") || strings.Contains(line, "=") && !strings.HasPrefix(line, "[") {
			cur = nil
			continue
		}
		m := portRE.FindStringSubmatch(line)
		if m == nil || cur == nil {
			t.Fatalf("line %q is neither a record header nor a port of one", line)
		}
		p, _ := strconv.Atoi(m[1])
		rp, _ := strconv.Atoi(m[3])
		np := netPort{remote: m[2], rport: rp, options: strings.TrimSpace(m[4])}
		if s := suffixRE.FindStringSubmatch(m[5]); s != nil {
			np.suffix = s[1]
		}
		if _, dup := cur.ports[p]; dup {
			t.Errorf("%s: port %d written twice", cur.id, p)
		}
		cur.ports[p] = np
	}
	return nodes
}

// checkNet checks what ibsim insists on and what the tests rely on:
// every link written at both ends alike, ports within the node's count,
// node ids unique, the first record a CA (where OpenSM attaches), and the
// counts the fabric reports.
func checkNet(t *testing.T, f *topogen.Fabric) []*netNode {
	t.Helper()
	nodes := parseNet(t, f.Bytes())
	byID := map[string]*netNode{}
	links, switches := 0, 0
	for _, n := range nodes {
		if byID[n.id] != nil {
			t.Errorf("node id %q twice", n.id)
		}
		byID[n.id] = n
		if n.isSw {
			switches++
		}
	}
	for _, n := range nodes {
		for p, np := range n.ports {
			links++
			r := byID[np.remote]
			if p < 1 || p > n.nports {
				t.Errorf("%s[%d]: the node has %d ports", n.id, p, n.nports)
			}
			if r == nil {
				t.Errorf("%s[%d]: no node %q", n.id, p, np.remote)
				continue
			}
			back, ok := r.ports[np.rport]
			if !ok || back.remote != n.id || back.rport != p {
				t.Errorf("%s[%d] -> %s[%d], which leads to %+v", n.id, p, r.id, np.rport, back)
			}
			if back.options != np.options || back.suffix != np.suffix {
				t.Errorf("%s[%d]-%s[%d]: the ends differ: %+v and %+v", n.id, p, r.id, np.rport, np, back)
			}
			if (np.options == "") == (np.suffix == "") {
				t.Errorf("%s[%d]: options %q and suffix %q: want one", n.id, p, np.options, np.suffix)
			}
		}
	}
	c := f.Counts()
	if len(nodes) != c.Nodes() || switches != c.Switches || links != 2*c.Links {
		t.Errorf("the file has %d nodes, %d switches, %d link ends; Counts says %+v", len(nodes), switches, links, c)
	}
	if len(nodes) > 0 && nodes[0].isSw {
		t.Errorf("the first record is switch %s, want a host", nodes[0].id)
	}
	return nodes
}

func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		switches, cas, links   int
		ibsimFlags, firstLines string
	}{
		{"S50", 6, 44, 44 + 4*2*2, "", `Ca	1 "node0001"		# "node0001 HCA-1"`},
		{"S200", 15, 180, 180 + 10*5*3, "", ""},
		{"S500", 44, 468, 468 + 26*18, "", ""},
		{"S1000", 144, 864, 864 + 3*18*18 + 3*18*2*9, "", ""},
		{"S2000", 270, 1728, 1728 + 6*18*18 + 6*18*3*6, "-S 1024", ""},
		{"S5000", 666, 4284, 4284 + 14*18*18 + 14*18*9*2, "-N 8192 -S 1024 -P 32768", ""},
		{"S10000", 1368, 8874, 8874 + 29*18*18 + 29*18*18, "-N 16384 -S 2048 -P 65536", ""},
		{"torus-3x3", 9, 18, 18 + 18, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := topogen.Preset(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if c := f.Counts(); c.Switches != tc.switches || c.CAs != tc.cas || c.Links != tc.links {
				t.Errorf("%+v, want %d switches, %d CAs, %d links", c, tc.switches, tc.cas, tc.links)
			}
			if got := strings.Join(f.IbsimFlags(), " "); got != tc.ibsimFlags {
				t.Errorf("ibsim flags %q, want %q", got, tc.ibsimFlags)
			}
			checkNet(t, f)
			if !bytes.Equal(f.Bytes(), mustPreset(t, tc.name).Bytes()) {
				t.Error("two runs made different files")
			}
		})
	}
	if _, err := topogen.Preset("S3"); err == nil || !strings.Contains(err.Error(), "S1000") {
		t.Errorf("unknown preset: %v", err)
	}
}

func mustPreset(t *testing.T, name string) *topogen.Fabric {
	t.Helper()
	f, err := topogen.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The fat trees' cabling: hosts on a leaf's first ports, its uplinks
// after them to every spine in turn, a spine's ports by leaf.
func TestFatTree2Cabling(t *testing.T) {
	f := mustPreset(t, "S50")
	for _, tc := range []struct {
		node string
		port int
		peer string
		rp   int
	}{
		{"leaf01", 1, "node0001", 1}, {"leaf01", 11, "node0011", 1}, {"leaf02", 1, "node0012", 1},
		{"leaf01", 12, "spine01", 1}, {"leaf01", 13, "spine01", 2}, {"leaf01", 14, "spine02", 1},
		{"leaf04", 15, "spine02", 8},
	} {
		e, ok := f.Node(tc.node).Peer(tc.port)
		if !ok || e.Node.ID != tc.peer || e.Port != tc.rp {
			t.Errorf("%s[%d] -> %+v, want %s[%d]", tc.node, tc.port, e, tc.peer, tc.rp)
		}
	}
	if _, ok := f.Node("leaf01").Peer(16); ok {
		t.Error("leaf01[16] is cabled")
	}
}

func TestFatTree3Cabling(t *testing.T) {
	f, err := topogen.Generate(topogen.Spec{Kind: topogen.FatTree3, Pods: 2, LeavesPerPod: 2, AggsPerPod: 2, Cores: 4, Hosts: 3, Radix: 8})
	if err != nil {
		t.Fatal(err)
	}
	checkNet(t, f)
	// Aggregation switch g of every pod reaches core group g (cores 1-2
	// for g=1), each core's ports by pod.
	for _, tc := range []struct {
		node string
		port int
		peer string
		rp   int
	}{
		{"p01-leaf01", 4, "p01-spine01", 1}, {"p01-leaf02", 5, "p01-spine02", 2},
		{"p01-spine01", 3, "core001", 1}, {"p01-spine01", 4, "core002", 1},
		{"p02-spine02", 3, "core003", 2}, {"p02-leaf02", 1, "node0010", 1},
	} {
		e, ok := f.Node(tc.node).Peer(tc.port)
		if !ok || e.Node.ID != tc.peer || e.Port != tc.rp {
			t.Errorf("%s[%d] -> %+v, want %s[%d]", tc.node, tc.port, e, tc.peer, tc.rp)
		}
	}
}

// Dual rail: each host's two ports on two neighbouring edge switches.
func TestDualRail(t *testing.T) {
	for _, s := range []topogen.Spec{
		{Kind: topogen.FatTree2, Leaves: 3, Spines: 2, Hosts: 4, DualRail: true},
		{Kind: topogen.FatTree3, Pods: 2, LeavesPerPod: 3, AggsPerPod: 2, Cores: 2, Hosts: 2, DualRail: true},
		{Kind: topogen.Mesh, Rows: 2, Cols: 2, Hosts: 1, DualRail: true},
	} {
		t.Run(s.Kind, func(t *testing.T) {
			f, err := topogen.Generate(s)
			if err != nil {
				t.Fatal(err)
			}
			checkNet(t, f)
			for _, h := range f.Hosts() {
				a, ok1 := h.Peer(1)
				b, ok2 := h.Peer(2)
				if h.Ports != 2 || !ok1 || !ok2 || a.Node == b.Node || !a.Node.Switch || !b.Node.Switch {
					t.Errorf("%s: ports %d, port 1 -> %+v, port 2 -> %+v", h.ID, h.Ports, a, b)
				}
			}
		})
	}
	if _, err := topogen.Generate(topogen.Spec{Kind: topogen.FatTree2, Leaves: 1, Spines: 1, Hosts: 2, DualRail: true}); err == nil {
		t.Error("dual rail on one leaf: no error")
	}
}

// A torus: every switch has 4 switch neighbours; a mesh without wrap has
// fewer at its edges; rows and columns of 2 are not doubled.
func TestMeshAndTorus(t *testing.T) {
	for _, tc := range []struct {
		rows, cols int
		torus      bool
		switchLink int
	}{
		{3, 3, true, 18}, {3, 4, false, 17}, {2, 3, true, 3 + 6}, {1, 1, true, 0},
	} {
		f, err := topogen.Generate(topogen.Spec{Kind: topogen.Mesh, Rows: tc.rows, Cols: tc.cols, Torus: tc.torus, Hosts: 2})
		if err != nil {
			t.Fatal(err)
		}
		checkNet(t, f)
		if c := f.Counts(); c.Links != c.CAs+tc.switchLink || c.CAs != 2*tc.rows*tc.cols {
			t.Errorf("%dx%d torus=%v: %+v, want %d switch links", tc.rows, tc.cols, tc.torus, c, tc.switchLink)
		}
	}
}

// An irregular mesh is the seed's: the same seed the same file, another
// seed another; links are dropped and added as asked and every switch
// stays reachable.
func TestIrregularMesh(t *testing.T) {
	spec := topogen.Spec{Kind: topogen.Mesh, Rows: 4, Cols: 5, Torus: true, Hosts: 2, DropLinks: 5, ExtraLinks: 3, Jitter: true, Seed: 2}
	gen := func(seed uint64) *topogen.Fabric {
		s := spec
		s.Seed = seed
		f, err := topogen.Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b, c := gen(2), gen(2), gen(3)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("seed 2 made two different fabrics")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("seeds 2 and 3 made the same fabric")
	}
	for _, f := range []*topogen.Fabric{a, c} {
		checkNet(t, f)
		cnt := f.Counts()
		if isl := cnt.Links - cnt.CAs; isl > 40-5+3 || isl < 40-5 {
			t.Errorf("%d switch links; a 4x5 torus has 40, 5 dropped, up to 3 added", isl)
		}
		// Every switch reachable from the first over switch links.
		seen := map[*topogen.Node]bool{f.Switches()[0]: true}
		todo := []*topogen.Node{f.Switches()[0]}
		for len(todo) > 0 {
			n := todo[0]
			todo = todo[1:]
			for p := 1; p <= n.Ports; p++ {
				if e, ok := n.Peer(p); ok && e.Node.Switch && !seen[e.Node] {
					seen[e.Node] = true
					todo = append(todo, e.Node)
				}
			}
		}
		if len(seen) != 20 {
			t.Errorf("%d of 20 switches reachable", len(seen))
		}
	}
	if _, err := topogen.Generate(topogen.Spec{Kind: topogen.Mesh, Rows: 2, Cols: 2, Hosts: 1, DropLinks: 2}); err == nil {
		t.Error("dropping 2 of a 2x2 mesh's 4 links and keeping it connected: no error")
	}
}

// Port options: on both ends of the links asked for, the fabric's width
// and speed elsewhere.
func TestPortOptions(t *testing.T) {
	f, err := topogen.Generate(topogen.Spec{Kind: topogen.FatTree2, Leaves: 4, Spines: 2, Hosts: 2, Speed: "HDR", Degrade: 3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetOptions("node0001[1]", "s=1"); err != nil {
		t.Fatal(err)
	}
	nodes := checkNet(t, f)
	degraded := 0
	for _, n := range nodes {
		for p, np := range n.ports {
			switch {
			case n.id == "node0001" && p == 1 || n.id == "leaf01" && p == 1:
				if np.options != "w=3 s=1 e=7" {
					t.Errorf("%s[%d]: options %q, want s=1 over 4xHDR's", n.id, p, np.options)
				}
			case np.options == "w=1 s=7 e=7":
				degraded++
				if !n.isSw || !strings.HasPrefix(np.remote, "spine") && !strings.HasPrefix(np.remote, "leaf") {
					t.Errorf("%s[%d]: a degraded link to %s", n.id, p, np.remote)
				}
			case np.suffix != "4xHDR":
				t.Errorf("%s[%d]: %+v", n.id, p, np)
			}
		}
	}
	if degraded != 2*3 {
		t.Errorf("%d degraded link ends, want 6", degraded)
	}
	for _, tc := range []struct{ where, opts, msg string }{
		{"leaf01[30]", "w=1", "no cable"},
		{"leaf09[1]", "w=1", `no node "leaf09"`},
		{"leaf01", "w=1", "want node[port]"},
		{"leaf01[1]", "w=0", "mask from 1 to 31"},
		{"leaf01[1]", "x=1", "ibsim knows w=, s= and e="},
		{"leaf01[1]", "", "want w=, s= or e="},
	} {
		if err := f.SetOptions(tc.where, tc.opts); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("SetOptions(%q, %q) = %v, want %q", tc.where, tc.opts, err, tc.msg)
		}
	}
}

func TestBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec topogen.Spec
		msg  string
	}{
		{topogen.Spec{Kind: topogen.FatTree2, Leaves: 2, Spines: 2, Hosts: 35}, "a leaf needs 37 ports, the radix is 36"},
		{topogen.Spec{Kind: topogen.FatTree2, Leaves: 37, Spines: 1, Hosts: 1}, "a spine needs 37 ports"},
		{topogen.Spec{Kind: topogen.FatTree3, Pods: 1, LeavesPerPod: 1, AggsPerPod: 2, Cores: 3, Hosts: 1}, "3 cores do not split into 2 groups"},
		{topogen.Spec{Kind: topogen.Mesh, Rows: 2, Cols: 2, Hosts: 20}, "sw-r0c0 has no port 17 (it has 16)"},
		{topogen.Spec{Kind: "ring"}, `kind "ring"`},
		{topogen.Spec{Kind: topogen.Mesh, Rows: 2, Cols: 2, Speed: "NDR"}, `speed "NDR"`},
		{topogen.Spec{Kind: topogen.Mesh, Rows: 2, Cols: 2, Width: 3}, "width 3"},
		{topogen.Spec{Kind: topogen.Mesh, Rows: 2, Cols: 2, Degrade: 5}, "5 links to degrade, the fabric has 4"},
	} {
		if _, err := topogen.Generate(tc.spec); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.msg)
		}
	}
}

// TestOnIbsim: ibsim loads a generated fabric with dual-rail hosts, an
// irregular core and port options, OpenSM brings every port up, and
// infiniband-diags' ibnetdiscover finds exactly its links, each at the
// width and speed asked for.
func TestOnIbsim(t *testing.T) {
	simfabric.RequireTools(t, "ibnetdiscover")
	f, err := topogen.Generate(topogen.Spec{Kind: topogen.FatTree2, Leaves: 3, Spines: 2, Links: 2, Hosts: 2, DualRail: true,
		Degrade: 2, Seed: 3, Speed: "FDR"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetOptions("node0003[2]", "w=2 s=1 e=0"); err != nil { // 4x SDR
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dual.net")
	if err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fab := simfabric.StartT(t, path)
	r := fab.RunC(context.Background(), "", "ibnetdiscover")
	if r.Code != 0 {
		t.Fatalf("ibnetdiscover: %v", r)
	}
	want := map[string]string{}
	for _, l := range f.Links() {
		rate := fmt.Sprintf("%dx%s", f.Width, f.Speed)
		if l.Options != nil {
			rate = map[string]string{"w=1 s=7 e=1": "1xFDR", "w=2 s=1 e=0": "4xSDR"}[l.Options.String()]
		}
		want[fmt.Sprintf("%s[%d]-%s[%d]", l.A.Node.Desc, l.A.Port, l.B.Node.Desc, l.B.Port)] = rate
		want[fmt.Sprintf("%s[%d]-%s[%d]", l.B.Node.Desc, l.B.Port, l.A.Node.Desc, l.A.Port)] = rate
	}
	got := discoveredLinks(t, r.Stdout)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("link %s: ibnetdiscover shows %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("ibnetdiscover shows a link %s (%s) the fabric does not have", k, v)
		}
	}
}

var (
	discHeaderRE = regexp.MustCompile(`^(?:Switch|Ca)\s+\d+\s+"([^"]+)"\s+# "([^"]*)"`)
	discPortRE   = regexp.MustCompile(`^\[(\d+)\]\S*\s+"([^"]+)"\[(\d+)\].* (\d+x[A-Z0-9]+)\s*$`)
)

// discoveredLinks reads ibnetdiscover's output: "desc[port]-desc[port]"
// to the link's "4xEDR", from both ends.
func discoveredLinks(t *testing.T, out string) map[string]string {
	desc := map[string]string{}
	type end struct {
		from, to string
		port, rp string
		rate     string
	}
	var ends []end
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		if m := discHeaderRE.FindStringSubmatch(line); m != nil {
			cur = m[1]
			desc[m[1]] = m[2]
		} else if m := discPortRE.FindStringSubmatch(line); m != nil && cur != "" {
			ends = append(ends, end{cur, m[2], m[1], m[3], m[4]})
		}
	}
	links := map[string]string{}
	for _, e := range ends {
		links[fmt.Sprintf("%s[%s]-%s[%s]", desc[e.from], e.port, desc[e.to], e.rp)] = e.rate
	}
	if len(links) == 0 {
		t.Fatalf("no links in ibnetdiscover's output:\n%s", out)
	}
	return links
}

func TestSpecString(t *testing.T) {
	s, _ := topogen.PresetSpec("mesh-irregular")
	got := s.String()
	for _, want := range []string{"mesh-irregular: mesh rows=3 cols=4", "torus", "drop-links=3 extra-links=2", "jitter", "seed=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if names := topogen.PresetNames(); !slices.IsSorted(names) || !slices.Contains(names, "S10000") {
		t.Errorf("PresetNames() = %v", names)
	}
}
