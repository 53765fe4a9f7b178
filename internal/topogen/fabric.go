// Package topogen generates simulated InfiniBand fabrics as ibsim net
// files: fat trees of two and three levels, meshes and tori of switches,
// with hosts on the edge switches (dual-rail if asked), a link width and
// speed for the whole fabric and ibsim port options per link, and, for the
// irregular shapes, a seed. The output depends only on the Spec: the same
// Spec gives the same bytes. The tests' fat trees and torus
// (testdata/topologies) and the bench fabrics (cmd/ibbench) are its
// presets; cmd/ibtopogen is the command for other shapes.
//
// ibsim reads the file as described in docs/ibsim-protocol.md (net file
// format): one record per node, every link written at both of its ends, the
// first record the node a client without SIM_HOST attaches to (OpenSM too).
package topogen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Fabric is a generated fabric: its nodes, their links, and how it is
// rendered (WriteTo).
type Fabric struct {
	Title      string // one line saying what made it
	Width      int    // every link's enabled width, 1, 2, 4, 8 or 12 (the "4" of 4xEDR)
	Speed      string // every link's enabled speed, one of Speeds
	SwitchGUID uint64 // the first switch's GUID; ibsim counts up from it
	CAGUID     uint64 // the first CA's node GUID

	switches []*Node
	hosts    []*Node
	byID     map[string]*Node
	links    []*Link
}

// Node is a switch or a CA (a host's HCA).
type Node struct {
	ID     string // the net file's node id, which SIM_HOST may name
	Desc   string // its NodeDescription
	Switch bool
	Ports  int     // physical ports (a switch also has its port 0)
	cables []*Link // by port number; nil: no cable
}

// End is one end of a link.
type End struct {
	Node *Node
	Port int
}

// Link is a cable between two ports. Options, if set, are written on both
// ends as ibsim port options instead of the fabric's width and speed.
type Link struct {
	A, B    End
	Options *PortOptions
}

// PortOptions are ibsim's per-port enable masks (IBA 14.2.5.6 PortInfo:
// LinkWidthEnabled, LinkSpeedEnabled, LinkSpeedExtEnabled), written as
// w=, s= and e=. ibsim brings a link up at the highest bit both ends
// enable.
type PortOptions struct {
	Width    int // 1=1x 2=4x 4=8x 8=12x 16=2x, bits combine (1..31)
	Speed    int // 1=SDR 2=DDR 4=QDR, bits combine (1..7)
	SpeedExt int // 1=FDR 2=EDR 4=HDR (8=NDR in ibsim 0.11), bits combine (0..15)
}

func (o PortOptions) String() string {
	return fmt.Sprintf("w=%d s=%d e=%d", o.Width, o.Speed, o.SpeedExt)
}

// Speeds are the link speeds a net file can name after a width ("4xEDR").
var Speeds = []string{"SDR", "DDR", "QDR", "FDR", "FDR10", "EDR", "HDR"}

// Widths are the link widths a net file can name before a speed.
var Widths = []int{1, 2, 4, 8, 12}

// newFabric checks the width and speed every link gets.
func newFabric(width int, speed string) (*Fabric, error) {
	if !slices.Contains(Widths, width) {
		return nil, fmt.Errorf("width %d: want one of %v", width, Widths)
	}
	if !slices.Contains(Speeds, speed) {
		return nil, fmt.Errorf("speed %q: want one of %s", speed, strings.Join(Speeds, ", "))
	}
	return &Fabric{Width: width, Speed: speed, byID: map[string]*Node{}}, nil
}

func (f *Fabric) addNode(id, desc string, isSwitch bool, ports int) *Node {
	n := &Node{ID: id, Desc: desc, Switch: isSwitch, Ports: ports, cables: make([]*Link, ports+1)}
	f.byID[id] = n
	if isSwitch {
		f.switches = append(f.switches, n)
	} else {
		f.hosts = append(f.hosts, n)
	}
	return n
}

// Node returns the node with this id, or nil.
func (f *Fabric) Node(id string) *Node { return f.byID[id] }

// Switches returns the switches in the order of the file.
func (f *Fabric) Switches() []*Node { return f.switches }

// Hosts returns the CAs in the order they were made (the first is the
// file's first record).
func (f *Fabric) Hosts() []*Node { return f.hosts }

// Links returns every link once, in the order they were made.
func (f *Fabric) Links() []*Link { return f.links }

// Peer returns what port's cable leads to.
func (n *Node) Peer(port int) (End, bool) {
	if port < 1 || port > n.Ports || n.cables[port] == nil {
		return End{}, false
	}
	l := n.cables[port]
	if l.A.Node == n && l.A.Port == port {
		return l.B, true
	}
	return l.A, true
}

// Cable returns the link on a port, or nil.
func (n *Node) Cable(port int) *Link {
	if port < 1 || port > n.Ports {
		return nil
	}
	return n.cables[port]
}

// freePort is the lowest port without a cable.
func (n *Node) freePort() (int, error) {
	for p := 1; p <= n.Ports; p++ {
		if n.cables[p] == nil {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%s has no free port of its %d", n.ID, n.Ports)
}

// link cables a's port pa to b's port pb; 0 takes the lowest free port.
func (f *Fabric) link(a, b *Node, pa, pb int) error {
	var err error
	if pa == 0 {
		if pa, err = a.freePort(); err != nil {
			return err
		}
	}
	if pb == 0 {
		if pb, err = b.freePort(); err != nil {
			return err
		}
	}
	for _, e := range []End{{a, pa}, {b, pb}} {
		if e.Port < 1 || e.Port > e.Node.Ports {
			return fmt.Errorf("%s has no port %d (it has %d)", e.Node.ID, e.Port, e.Node.Ports)
		}
		if e.Node.cables[e.Port] != nil {
			return fmt.Errorf("%s port %d is cabled twice", e.Node.ID, e.Port)
		}
	}
	l := &Link{A: End{a, pa}, B: End{b, pb}}
	a.cables[pa], b.cables[pb] = l, l
	f.links = append(f.links, l)
	return nil
}

// Counts are a fabric's sizes, and the port slots ibsim allocates for it.
type Counts struct {
	Switches, CAs, Links int
	// IbsimPorts counts what ibsim's -P limits: every switch port with
	// port 0, every CA port.
	IbsimPorts int
}

// Nodes is switches and CAs together.
func (c Counts) Nodes() int { return c.Switches + c.CAs }

// Counts returns the fabric's sizes.
func (f *Fabric) Counts() Counts {
	c := Counts{Switches: len(f.switches), CAs: len(f.hosts), Links: len(f.links)}
	for _, s := range f.switches {
		c.IbsimPorts += s.Ports + 1
	}
	for _, h := range f.hosts {
		c.IbsimPorts += h.Ports
	}
	return c
}

// ibsim 0.10's compiled-in limits: nodes, switches, and port slots
// (256 switches of 36 ports and 2048 CAs of 2).
const (
	ibsimMaxNodes    = 2048
	ibsimMaxSwitches = 256
	ibsimMaxPorts    = 256*36 + 2048*2
)

// IbsimFlags are the -N/-S/-P flags ibsim needs to load the fabric, none
// when it fits ibsim's defaults. ibsim allocates its tables at these
// sizes, so they are rounded up to a power of two with a tenth to spare.
func (f *Fabric) IbsimFlags() []string {
	c := f.Counts()
	var flags []string
	if c.Nodes() > ibsimMaxNodes {
		flags = append(flags, "-N", strconv.Itoa(roundUp(c.Nodes())))
	}
	if c.Switches > ibsimMaxSwitches {
		flags = append(flags, "-S", strconv.Itoa(roundUp(c.Switches)))
	}
	if c.IbsimPorts > ibsimMaxPorts {
		flags = append(flags, "-P", strconv.Itoa(roundUp(c.IbsimPorts)))
	}
	return flags
}

func roundUp(n int) int {
	m := 1024
	for m*10 < n*11 {
		m *= 2
	}
	return m
}

// defaultOptions are the port options that enable what the fabric's
// width and speed suffix ("4xEDR") enables in ibsim, so that a link given
// only w= keeps the fabric's speed.
func (f *Fabric) defaultOptions() PortOptions {
	o := PortOptions{Width: map[int]int{1: 1, 2: 16, 4: 3, 8: 4, 12: 11}[f.Width]}
	switch f.Speed {
	case "SDR":
		o.Speed = 1
	case "DDR":
		o.Speed = 3
	default:
		o.Speed = 7
	}
	o.SpeedExt = map[string]int{"FDR": 1, "EDR": 3, "HDR": 7}[f.Speed]
	return o
}

// ParseOptions reads ibsim port options ("w=1 s=1", commas also
// separate) over the fabric's defaults.
func (f *Fabric) ParseOptions(text string) (PortOptions, error) {
	o := f.defaultOptions()
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	if len(fields) == 0 {
		return o, fmt.Errorf("port options %q: want w=, s= or e=", text)
	}
	for _, kv := range fields {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 0, 8)
		if !ok || err != nil {
			return o, fmt.Errorf("port option %q: want w=N, s=N or e=N", kv)
		}
		var dst *int
		var lo, hi uint64
		switch k {
		case "w":
			dst, lo, hi = &o.Width, 1, 31
		case "s":
			dst, lo, hi = &o.Speed, 1, 7
		case "e":
			dst, lo, hi = &o.SpeedExt, 0, 15
		default:
			return o, fmt.Errorf("port option %q: ibsim knows w=, s= and e=", kv)
		}
		if n < lo || n > hi {
			return o, fmt.Errorf("port option %q: %s= is a mask from %d to %d", kv, k, lo, hi)
		}
		*dst = int(n)
	}
	return o, nil
}

// SetOptions gives the link on a node's port ibsim port options, on both
// of its ends. where is "node[port]", as in a net file.
func (f *Fabric) SetOptions(where, options string) error {
	id, port, err := parsePortRef(where)
	if err != nil {
		return err
	}
	n := f.byID[id]
	if n == nil {
		return fmt.Errorf("%s: no node %q", where, id)
	}
	l := n.Cable(port)
	if l == nil {
		return fmt.Errorf("%s: no cable on that port", where)
	}
	o, err := f.ParseOptions(options)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	l.Options = &o
	return nil
}

// parsePortRef reads "node[port]".
func parsePortRef(s string) (string, int, error) {
	id, rest, ok := strings.Cut(s, "[")
	port, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	if !ok || !strings.HasSuffix(rest, "]") || err != nil || id == "" {
		return "", 0, fmt.Errorf("%q: want node[port], e.g. leaf01[13]", s)
	}
	return id, port, nil
}
