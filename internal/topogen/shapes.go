package topogen

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Kinds of fabric.
const (
	FatTree2 = "fattree2" // leaves with hosts, every leaf linked to every spine
	FatTree3 = "fattree3" // pods of leaves and aggregation switches, joined by core switches
	Mesh     = "mesh"     // a grid of switches with hosts on every one; Torus wraps it
)

// Spec says what fabric to generate. Kind picks the shape; the fields of
// the other shapes are ignored.
type Spec struct {
	Name string // the preset's name, if it is one (it heads the title)
	Kind string

	// FatTree2: Leaves leaves, Spines spines, Links cables per
	// leaf-spine pair, on the leaf's ports after its hosts' (or on its
	// highest ports, UplinksHigh).
	Leaves, Spines, Links int
	UplinksHigh           bool

	// FatTree3: Pods pods of LeavesPerPod leaves and AggsPerPod
	// aggregation switches, every leaf linked to every aggregation switch
	// of its pod (LeafAggLinks cables each), and Cores core switches in
	// AggsPerPod groups: aggregation switch g of every pod links to each
	// core of group g (AggCoreLinks cables each).
	Pods, LeavesPerPod, AggsPerPod, Cores, LeafAggLinks, AggCoreLinks int

	// Mesh: Rows x Cols switches, each linked to its neighbours (Links
	// cables each); Torus adds the wrap-around links of every row and
	// column longer than 2. Irregular meshes: DropLinks switch links taken
	// out (the switches stay connected), ExtraLinks switch links added
	// between random switches, Jitter gives each switch one host more or
	// less than Hosts.
	Rows, Cols            int
	Torus                 bool
	DropLinks, ExtraLinks int
	Jitter                bool

	// Hosts per leaf (fat trees) or per switch (mesh).
	Hosts int
	// DualRail cables every host's second port to the next edge switch
	// (the next leaf of its pod, the next switch of the mesh), so that no
	// one switch cuts a host off. Each edge switch then carries 2*Hosts.
	DualRail bool
	// HCAPorts is the number of ports of every CA (1 if 0, 2 if 0 and
	// DualRail); ports beyond the cabled ones stay uncabled.
	HCAPorts int
	// Radix is every switch's port count (36 if 0; 16 for a mesh).
	Radix int

	Width int    // every link's width (4 if 0)
	Speed string // every link's speed ("EDR" if empty)

	// Degrade random switch-to-switch links get the port options
	// DegradeOptions ("w=1" if empty: they come up 1x).
	Degrade        int
	DegradeOptions string

	// Seed drives every random choice (DropLinks, ExtraLinks, Jitter,
	// Degrade); the same seed makes the same fabric.
	Seed uint64

	// SwitchGUID and CAGUID are the GUID bases (defaults if 0).
	SwitchGUID, CAGUID uint64
}

// The GUID bases when the Spec gives none: Mellanox/NVIDIA OUIs (IBA
// 4.1.1: a GUID is an EUI-64, the OUI in its top 24 bits).
const (
	DefaultSwitchGUID = 0x7cfe900300300000
	DefaultCAGUID     = 0xe41d2d03001f0000
)

// Generate builds the fabric a Spec describes.
func Generate(s Spec) (*Fabric, error) {
	s = s.withDefaults()
	f, err := newFabric(s.Width, s.Speed)
	if err != nil {
		return nil, err
	}
	f.SwitchGUID, f.CAGUID = s.SwitchGUID, s.CAGUID
	f.Title = s.String()
	if s.Hosts < 0 || s.Radix < 1 || s.Radix > 254 || s.Degrade < 0 {
		return nil, fmt.Errorf("%s: negative counts, or a radix outside 1..254", s)
	}
	if s.HCAPorts < 1 || s.HCAPorts > 254 || s.DualRail && s.HCAPorts < 2 {
		return nil, fmt.Errorf("%s: %d ports per CA (dual rail needs 2)", s, s.HCAPorts)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x746f706f67656e)) // stream: "topogen"
	switch s.Kind {
	case FatTree2:
		err = fatTree2(f, s)
	case FatTree3:
		err = fatTree3(f, s)
	case Mesh:
		err = mesh(f, s, rng)
	default:
		err = fmt.Errorf("kind %q: want %s, %s or %s", s.Kind, FatTree2, FatTree3, Mesh)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	if err := degrade(f, s, rng); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return f, nil
}

func (s Spec) withDefaults() Spec {
	if s.Radix == 0 {
		s.Radix = 36
		if s.Kind == Mesh {
			s.Radix = 16
		}
	}
	if s.HCAPorts == 0 {
		s.HCAPorts = 1
		if s.DualRail {
			s.HCAPorts = 2
		}
	}
	if s.Width == 0 {
		s.Width = 4
	}
	if s.Speed == "" {
		s.Speed = "EDR"
	}
	if s.Links == 0 {
		s.Links = 1
	}
	if s.LeafAggLinks == 0 {
		s.LeafAggLinks = 1
	}
	if s.AggCoreLinks == 0 {
		s.AggCoreLinks = 1
	}
	if s.DegradeOptions == "" {
		s.DegradeOptions = "w=1"
	}
	if s.SwitchGUID == 0 {
		s.SwitchGUID = DefaultSwitchGUID
	}
	if s.CAGUID == 0 {
		s.CAGUID = DefaultCAGUID
	}
	return s
}

// String describes the Spec in one line, the fabric's title.
func (s Spec) String() string {
	s = s.withDefaults()
	var b strings.Builder
	if s.Name != "" {
		fmt.Fprintf(&b, "%s: ", s.Name)
	}
	switch s.Kind {
	case FatTree2:
		fmt.Fprintf(&b, "fattree2 leaves=%d spines=%d links=%d", s.Leaves, s.Spines, s.Links)
		if s.UplinksHigh {
			b.WriteString(" uplinks-high")
		}
	case FatTree3:
		fmt.Fprintf(&b, "fattree3 pods=%d leaves-per-pod=%d aggs-per-pod=%d cores=%d leaf-agg-links=%d agg-core-links=%d",
			s.Pods, s.LeavesPerPod, s.AggsPerPod, s.Cores, s.LeafAggLinks, s.AggCoreLinks)
	case Mesh:
		fmt.Fprintf(&b, "mesh rows=%d cols=%d links=%d", s.Rows, s.Cols, s.Links)
		if s.Torus {
			b.WriteString(" torus")
		}
		if s.DropLinks > 0 || s.ExtraLinks > 0 {
			fmt.Fprintf(&b, " drop-links=%d extra-links=%d", s.DropLinks, s.ExtraLinks)
		}
		if s.Jitter {
			b.WriteString(" jitter")
		}
	default:
		fmt.Fprintf(&b, "%q", s.Kind)
	}
	fmt.Fprintf(&b, " hosts=%d", s.Hosts)
	if s.DualRail {
		b.WriteString(" dual-rail")
	}
	fmt.Fprintf(&b, " hca-ports=%d radix=%d %dx%s", s.HCAPorts, s.Radix, s.Width, s.Speed)
	if s.Degrade > 0 {
		fmt.Fprintf(&b, " degrade=%d (%s)", s.Degrade, s.DegradeOptions)
	}
	if s.random() {
		fmt.Fprintf(&b, " seed=%d", s.Seed)
	}
	return b.String()
}

// random says whether the seed matters.
func (s Spec) random() bool {
	return s.Kind == Mesh && (s.DropLinks > 0 || s.ExtraLinks > 0 || s.Jitter) || s.Degrade > 0
}

// addHosts makes n hosts named node0001, node0002, ... on from the
// fabric's count.
func addHosts(f *Fabric, s Spec, n int) []*Node {
	var hosts []*Node
	for range n {
		id := fmt.Sprintf("node%04d", len(f.hosts)+1)
		hosts = append(hosts, f.addNode(id, id+" HCA-1", false, s.HCAPorts))
	}
	return hosts
}

// cableHosts links each edge switch's hosts to its ports 1.., and with
// DualRail each host's port 2 to the next edge switch of its group
// (wrapping), on the ports after that switch's own hosts'. It returns
// the number of ports the hosts take on each switch.
func cableHosts(f *Fabric, s Spec, edges []*Node, hosts [][]*Node) (int, error) {
	most := 0
	for i, sw := range edges {
		for j, h := range hosts[i] {
			if err := f.link(sw, h, j+1, 1); err != nil {
				return 0, err
			}
		}
		most = max(most, len(hosts[i]))
	}
	if !s.DualRail {
		return most, nil
	}
	if len(edges) < 2 {
		return 0, errors.New("dual rail needs two edge switches to a group")
	}
	for i := range edges {
		next := edges[(i+1)%len(edges)]
		for _, h := range hosts[i] {
			if err := f.link(next, h, 0, 2); err != nil {
				return 0, err
			}
		}
	}
	return 2 * most, nil
}

func fatTree2(f *Fabric, s Spec) error {
	up := s.Spines * s.Links
	hostPorts := s.Hosts
	if s.DualRail {
		hostPorts *= 2
	}
	if s.Leaves < 1 || s.Spines < 1 {
		return errors.New("needs a leaf and a spine")
	}
	if hostPorts+up > s.Radix {
		return fmt.Errorf("a leaf needs %d ports, the radix is %d", hostPorts+up, s.Radix)
	}
	if s.Leaves*s.Links > s.Radix {
		return fmt.Errorf("a spine needs %d ports, the radix is %d", s.Leaves*s.Links, s.Radix)
	}
	hosts := make([][]*Node, s.Leaves)
	for l := range hosts {
		hosts[l] = addHosts(f, s, s.Hosts)
	}
	leaves := make([]*Node, s.Leaves)
	for l := range leaves {
		id := fmt.Sprintf("leaf%02d", l+1)
		leaves[l] = f.addNode(id, id, true, s.Radix)
	}
	spines := make([]*Node, s.Spines)
	for i := range spines {
		id := fmt.Sprintf("spine%02d", i+1)
		spines[i] = f.addNode(id, id, true, s.Radix)
	}
	if _, err := cableHosts(f, s, leaves, hosts); err != nil {
		return err
	}
	// Leaf l's uplinks follow its hosts; spine ports go by leaf.
	for l, leaf := range leaves {
		p := hostPorts + 1
		if s.UplinksHigh {
			p = s.Radix - up + 1
		}
		for _, spine := range spines {
			for k := range s.Links {
				if err := f.link(leaf, spine, p, l*s.Links+k+1); err != nil {
					return err
				}
				p++
			}
		}
	}
	return nil
}

func fatTree3(f *Fabric, s Spec) error {
	if s.Pods < 1 || s.LeavesPerPod < 1 || s.AggsPerPod < 1 || s.Cores < 1 {
		return errors.New("needs a pod, a leaf, an aggregation switch and a core")
	}
	if s.Cores%s.AggsPerPod != 0 {
		return fmt.Errorf("%d cores do not split into %d groups", s.Cores, s.AggsPerPod)
	}
	perGroup := s.Cores / s.AggsPerPod
	hostPorts := s.Hosts
	if s.DualRail {
		hostPorts *= 2
	}
	aggDown := s.LeavesPerPod * s.LeafAggLinks
	for _, need := range []struct {
		what  string
		ports int
	}{
		{"a leaf", hostPorts + s.AggsPerPod*s.LeafAggLinks},
		{"an aggregation switch", aggDown + perGroup*s.AggCoreLinks},
		{"a core", s.Pods * s.AggCoreLinks},
	} {
		if need.ports > s.Radix {
			return fmt.Errorf("%s needs %d ports, the radix is %d", need.what, need.ports, s.Radix)
		}
	}
	hosts := make([][][]*Node, s.Pods)
	for p := range hosts {
		hosts[p] = make([][]*Node, s.LeavesPerPod)
		for l := range hosts[p] {
			hosts[p][l] = addHosts(f, s, s.Hosts)
		}
	}
	leaves := make([][]*Node, s.Pods)
	aggs := make([][]*Node, s.Pods)
	for p := range s.Pods {
		for l := range s.LeavesPerPod {
			id := fmt.Sprintf("p%02d-leaf%02d", p+1, l+1)
			leaves[p] = append(leaves[p], f.addNode(id, id, true, s.Radix))
		}
		for g := range s.AggsPerPod {
			id := fmt.Sprintf("p%02d-spine%02d", p+1, g+1)
			aggs[p] = append(aggs[p], f.addNode(id, id, true, s.Radix))
		}
	}
	cores := make([]*Node, s.Cores)
	for c := range cores {
		id := fmt.Sprintf("core%03d", c+1)
		cores[c] = f.addNode(id, id, true, s.Radix)
	}
	for p := range s.Pods {
		if _, err := cableHosts(f, s, leaves[p], hosts[p]); err != nil {
			return err
		}
	}
	for p := range s.Pods {
		for l, leaf := range leaves[p] {
			lp := hostPorts + 1
			for _, agg := range aggs[p] {
				for k := range s.LeafAggLinks {
					if err := f.link(leaf, agg, lp, l*s.LeafAggLinks+k+1); err != nil {
						return err
					}
					lp++
				}
			}
		}
		for g, agg := range aggs[p] {
			ap := aggDown + 1
			for _, core := range cores[g*perGroup : (g+1)*perGroup] {
				for k := range s.AggCoreLinks {
					if err := f.link(agg, core, ap, p*s.AggCoreLinks+k+1); err != nil {
						return err
					}
					ap++
				}
			}
		}
	}
	return nil
}

// cell is a switch's place in a mesh.
type cell struct{ r, c int }

type edge struct{ u, v cell }

func mesh(f *Fabric, s Spec, rng *rand.Rand) error {
	if s.Rows < 1 || s.Cols < 1 {
		return errors.New("needs a row and a column")
	}
	var edges []edge
	for r := range s.Rows {
		for c := range s.Cols {
			// A wrap-around link of a row or column of 2 would double
			// the link that is already there.
			if c+1 < s.Cols || s.Torus && s.Cols > 2 {
				edges = append(edges, edge{cell{r, c}, cell{r, (c + 1) % s.Cols}})
			}
			if r+1 < s.Rows || s.Torus && s.Rows > 2 {
				edges = append(edges, edge{cell{r, c}, cell{(r + 1) % s.Rows, c}})
			}
		}
	}
	// Drop links in a random order, each only if the switches stay
	// connected without it.
	shuffle(rng, edges)
	kept := edges
	dropped := 0
	for _, e := range edges {
		if dropped == s.DropLinks {
			break
		}
		without := slices.DeleteFunc(slices.Clone(kept), func(k edge) bool { return k == e })
		if connected(s.Rows, s.Cols, without) {
			kept, dropped = without, dropped+1
		}
	}
	if dropped < s.DropLinks {
		return fmt.Errorf("only %d links can go without cutting the mesh apart", dropped)
	}
	var extra []edge
	for range s.ExtraLinks {
		u := cell{intN(rng, s.Rows), intN(rng, s.Cols)}
		v := cell{intN(rng, s.Rows), intN(rng, s.Cols)}
		if u != v {
			extra = append(extra, edge{u, v})
		}
	}
	hosts := make([][]*Node, s.Rows*s.Cols)
	for i := range hosts {
		n := s.Hosts
		if s.Jitter {
			n = max(0, n+intN(rng, 3)-1)
		}
		hosts[i] = addHosts(f, s, n)
	}
	switches := make([]*Node, s.Rows*s.Cols)
	for i := range switches {
		id := fmt.Sprintf("sw-r%dc%d", i/s.Cols, i%s.Cols)
		switches[i] = f.addNode(id, id, true, s.Radix)
	}
	if _, err := cableHosts(f, s, switches, hosts); err != nil {
		return err
	}
	at := func(c cell) *Node { return switches[c.r*s.Cols+c.c] }
	slices.SortFunc(kept, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.u.r, b.u.r), cmp.Compare(a.u.c, b.u.c), cmp.Compare(a.v.r, b.v.r), cmp.Compare(a.v.c, b.v.c))
	})
	for _, e := range append(kept, extra...) {
		for range s.Links {
			if err := f.link(at(e.u), at(e.v), 0, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// connected says whether the edges join all rows x cols switches.
func connected(rows, cols int, edges []edge) bool {
	adj := map[cell][]cell{}
	for _, e := range edges {
		adj[e.u] = append(adj[e.u], e.v)
		adj[e.v] = append(adj[e.v], e.u)
	}
	seen := map[cell]bool{{0, 0}: true}
	todo := []cell{{0, 0}}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, m := range adj[n] {
			if !seen[m] {
				seen[m] = true
				todo = append(todo, m)
			}
		}
	}
	return len(seen) == rows*cols
}

// degrade gives s.Degrade random switch-to-switch links the degraded
// port options.
func degrade(f *Fabric, s Spec, rng *rand.Rand) error {
	if s.Degrade == 0 {
		return nil
	}
	o, err := f.ParseOptions(s.DegradeOptions)
	if err != nil {
		return err
	}
	var isl []*Link
	for _, l := range f.links {
		if l.A.Node.Switch && l.B.Node.Switch {
			isl = append(isl, l)
		}
	}
	if s.Degrade > len(isl) {
		return fmt.Errorf("%d links to degrade, the fabric has %d between switches", s.Degrade, len(isl))
	}
	shuffle(rng, isl)
	for _, l := range isl[:s.Degrade] {
		l.Options = &o
	}
	return nil
}

// intN and shuffle use only the generator's raw output (PCG, a fixed
// algorithm), so that a seed makes the same fabric whatever Go's
// math/rand/v2 helpers do in a later release.
func intN(rng *rand.Rand, n int) int { return int(rng.Uint64() % uint64(n)) }

func shuffle[T any](rng *rand.Rand, s []T) {
	for i := len(s) - 1; i > 0; i-- {
		j := intN(rng, i+1)
		s[i], s[j] = s[j], s[i]
	}
}
