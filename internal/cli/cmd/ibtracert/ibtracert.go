// Package ibtracert is the ibtracert command: the route a packet takes
// from one port to another, read hop by hop from the switches' forwarding
// tables, as infiniband-diags 44's ibtracert follows it: directed routes
// from the local port, one NodeInfo/NodeDescription/PortInfo per hop and
// one SwitchInfo and LFT block per switch. A trace is sequential by nature
// (each hop decides the next), so it gains nothing from a fan-out;
// --ports-file traces pairs one after the other, as the C tool does.
//
// The walk is the C tool's, not internal/routing's TraceWith, which
// follows a route through a walked fabric: ibtracert reads nothing but
// the hops of the route, and its output (the SMPs it sends and their
// order, where it stops, what it says on the way) is the C tool's, byte
// for byte.
package ibtracert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type ibtracertOptions struct {
	cmdutil.Common
	force     bool
	reverse   bool // python-rdma's -r: from the destination back to the source
	brief     bool // -n: dump level 1
	mlid      string
	portsFile string
	src       query.Source
}

// NewCmd builds the ibtracert command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	o := &ibtracertOptions{}
	cmd := cmdutil.ToolCommand("ibtracert [options] [<src-addr>] <dest-addr>", "Trace the route between two ports")
	cmd.Long = "ibtracert follows the switches' forwarding tables from the source port to the\n" +
		"destination and prints every hop. With one address (not through the ibtracert\n" +
		"symlink, whose usage is the C tool's) the trace starts at the local port.\n" +
		"-m traces the multicast spanning tree of an MLID instead."
	cmd.Example = `  ibtracert 4 16            # the path between LIDs 4 and 16
  ibtracert -n 4 16         # simple format
  ibtracert -G 0x8f1040396522d 0x002c9000100d051
  ibtracert -m 0xc000 4 16  # the multicast path of MLID 0xc000
  ibtool ibtracert leaf01   # from the local port to a node by name`
	fs := cmd.Flags()
	fs.BoolVarP(&o.force, "force", "f", false, "force")
	fs.BoolVarP(&o.brief, "no_info", "n", false, "simple format")
	fs.BoolVarP(&o.reverse, "reverse", "r", false, "trace from the destination back to the source (python-rdma)")
	fs.StringVarP(&o.mlid, "mlid", "m", "", "multicast trace of the mlid")
	fs.StringVar(&o.portsFile, "ports-file", "", "port pairs file")
	o.src.AddFlags(fs, query.FlagNodeNameMap)
	cmdutil.SetupCommon(env, cmd, &o.Common, "DK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		min := 2
		if !env.Compat {
			min = 1
		}
		if len(args) < min && o.portsFile == "" {
			return cmdutil.UsageErrorf("expected [<src-addr>] <dest-addr>")
		}
		res, err := runIbtracert(env, o, args)
		return cmdutil.Finish(env, &o.Common, "ibtracert", res, err)
	}
	return cmd
}

// tracertResult is what ibtracert prints: the traces, in order.
type tracertResult struct {
	Traces []*trace `json:"traces"`
	// Pairs is the number of pairs a --ports-file held.
	Pairs     int    `json:"pairs,omitempty"`
	PortsFile string `json:"ports_file,omitempty"`
}

// trace is one traced route.
type trace struct {
	Source      jsonv.Target `json:"source"`
	Destination jsonv.Target `json:"destination"`
	MLID        int          `json:"mlid,omitempty"`
	Hops        []TraceHop   `json:"hops"`
	text        strings.Builder
}

// TraceHop is one node of a route: the port it was entered by and the
// port it is left by (0 for none: the source and the destination).
type TraceHop struct {
	NodeGUID mad.GUID       `json:"node_guid"`
	NodeType jsonv.NodeType `json:"node_type"`
	Name     string         `json:"node_name"`
	InPort   int            `json:"in_port"`
	OutPort  int            `json:"out_port"`
	LID      int            `json:"lid"`
}

func (r *tracertResult) WriteText(w io.Writer) error {
	for _, t := range r.Traces {
		if _, err := io.WriteString(w, t.text.String()); err != nil {
			return err
		}
	}
	if r.PortsFile != "" {
		_, err := fmt.Fprintf(w, "%d lid/guid pairs processed from %s\n", r.Pairs, r.PortsFile)
		return err
	}
	return nil
}

func runIbtracert(env *cmdutil.Env, o *ibtracertOptions, args []string) (*tracertResult, error) {
	c := &o.Common
	mlid := -1
	if o.mlid != "" {
		v, _ := ctext.Strtoul(o.mlid)
		mlid = int(int32(v))
	}
	names := o.src.Names(env.IO.Err)
	client, err := cmdutil.IBOpenClient(env, c, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()
	tr := &tracer{env: env, ctx: context.Background(), c: client, names: names, force: o.force, reverse: o.reverse, verbose: c.Verbose, dump: 2}
	if o.brief {
		tr.dump = 1
	}
	res := &tracertResult{}
	if o.portsFile == "" {
		src, dst := "", args[0]
		if len(args) > 1 {
			src, dst = args[0], args[1]
		}
		t, err := tr.route(src, dst, mlid)
		res.Traces = append(res.Traces, t)
		if err != nil {
			return res, &cmdutil.Failure{CMsg: "Failed to get route information", Err: err}
		}
		return res, nil
	}
	return res, tr.portsFile(res, o.portsFile, mlid)
}

// portsFile traces every pair of the file, as the C tool reads it: blank
// and # lines skipped, two words a line.
func (tr *tracer) portsFile(res *tracertResult, path string, mlid int) error {
	f, err := os.Open(path)
	if err != nil {
		return &cmdutil.Failure{CMsg: "cannot open ports-file " + path, Err: err}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		words := strings.Fields(text)
		if len(words) < 2 {
			return &cmdutil.Failure{CMsg: fmt.Sprintf("ports-file, %s, at line %d contains bad data", path, line)}
		}
		res.Pairs++
		t, err := tr.route(words[0], words[1], mlid)
		res.Traces = append(res.Traces, t)
		if err != nil {
			return &cmdutil.Failure{CMsg: fmt.Sprintf("Failed to get route information at line %d", line), Err: err}
		}
	}
	res.PortsFile = path
	return sc.Err()
}

// tracer follows routes hop by hop.
type tracer struct {
	env     *cmdutil.Env
	ctx     context.Context
	c       *query.Client
	names   *nodename.Map
	force   bool
	reverse bool
	verbose int // -v count
	dump    int // 1: -n, 2: full
	out     *trace
}

// trNode and trPort are what get_node learns of a hop.
type trNode struct {
	guid   uint64
	typ    int
	nports int
	desc   string
}

type trPort struct {
	guid                 uint64
	num, lid, lmc, state int
	physState            int
}

// errTrace is a trace that failed; its warnings are on stderr already.
var errTrace = errors.New("no route")

func (tr *tracer) warn(fn, format string, args ...any) { cmdutil.IBWarn(tr.env, fn, format, args...) }

// resolve turns an address into a LID, as get_route does: by the SA for a
// GUID (or a name), through PortInfo for a directed route.
func (tr *tracer) resolve(arg string) (int, error) {
	t, err := endport.ParseTargetOrName(arg, tr.envFlags())
	if err != nil {
		return 0, err
	}
	if t.Kind == endport.ByDRPath {
		var pi mad.PortInfo
		if err := tr.c.Get(tr.ctx, query.DR(t.DRPath), 0, nil, &pi); err != nil {
			return 0, err
		}
		return int(pi.LID), nil
	}
	d, err := tr.c.SMPDest(tr.ctx, t)
	if err != nil {
		return 0, err
	}
	return int(d.LID), nil
}

func (tr *tracer) envFlags() endport.TypeFlags { return endport.TypeFlags{} }

// route is get_route: from the local port to the source, then from the
// source to the destination (or the multicast tree of mlid).
func (tr *tracer) route(srcArg, dstArg string, mlid int) (*trace, error) {
	t := &trace{Hops: []TraceHop{}}
	tr.out = t
	if srcArg == "" { // ibtool's one-address form: from the local port
		local, err := tr.c.Local()
		if err != nil {
			return t, err
		}
		srcArg = fmt.Sprintf("%d", local.LID)
	}
	if tr.reverse {
		srcArg, dstArg = dstArg, srcArg
	}
	var srcLID int
	{
		var err error
		if srcLID, err = tr.resolve(srcArg); err != nil {
			tr.warn("get_route", "can't resolve source port %s", srcArg)
			return t, err
		}
	}
	dstLID, err := tr.resolve(dstArg)
	if err != nil {
		tr.warn("get_route", "can't resolve destination port %s", dstArg)
		return t, err
	}
	if srcLID == 0 || dstLID == 0 {
		tr.warn("get_route", "bad src/dest lid")
		return t, cmdutil.UsageErrorf("bad src/dest lid")
	}
	t.Source, t.Destination = traceEnd(srcArg, srcLID), traceEnd(dstArg, dstLID)
	// First a directed route from the local port to the source.
	path := []byte{0}
	if err := tr.findRoute(&path, srcLID, 0); err != nil {
		tr.warn("get_route", "can't find a route to the src port")
		return t, err
	}
	if mlid < 0 {
		if err := tr.findRoute(&path, dstLID, tr.dump); err != nil {
			tr.warn("get_route", "can't find a route from src to dest")
			return t, err
		}
		return t, nil
	}
	t.MLID = mlid
	if mlid < query.MinMLID {
		tr.warn("get_route", "invalid MLID; must be 0xc000 or larger")
	}
	return t, tr.multicast(path, dstLID, mlid)
}

// traceEnd is an end of a trace as the vocabulary's target: the LID the
// address resolved to, and the name when it was one.
func traceEnd(arg string, lid int) jsonv.Target {
	t := jsonv.Target{Route: jsonv.RouteLID, LID: uint16(lid), Text: fmt.Sprintf("Lid %d", lid)}
	if given, err := endport.ParseTargetOrName(arg, endport.TypeFlags{}); err == nil && given.Kind == endport.ByName {
		t.Name = given.Name
	}
	return t
}

// getNode is get_node: NodeInfo, NodeDescription and PortInfo at d.
func (tr *tracer) getNode(d query.Dest) (trNode, trPort, error) {
	var ni mad.NodeInfo
	var nd mad.NodeDescription
	var pi mad.PortInfo
	for _, s := range []mad.Struct{&ni, &nd, &pi} {
		if err := tr.c.Get(tr.ctx, d, 0, nil, s); err != nil {
			return trNode{}, trPort{}, err
		}
	}
	n := trNode{guid: uint64(ni.NodeGUID), typ: int(ni.NodeType), nports: int(ni.NumPorts), desc: nodename.CleanDesc(string(nd.NodeString[:]))}
	p := trPort{guid: uint64(ni.PortGUID), num: int(ni.LocalPortNum), lid: int(pi.LID), lmc: int(pi.LMC), state: int(pi.PortState)}
	return n, p, nil
}

// trSwitch is what switch_lookup learns of a switch.
type trSwitch struct {
	linearCap, top int
	enhancedSP0    bool
}

// switchLookup is switch_lookup: the port the switch at d forwards lid to,
// -1 when it cannot tell.
func (tr *tracer) switchLookup(sw *trSwitch, d query.Dest, lid int) int {
	var si mad.SwitchInfo
	if err := tr.c.Get(tr.ctx, d, 0, nil, &si); err != nil {
		return -1
	}
	sw.linearCap, sw.top, sw.enhancedSP0 = int(si.LinearFDBCap), int(si.LinearFDBTop), si.EnhancedPort0 != 0
	if lid >= sw.linearCap && lid > sw.top {
		return -1
	}
	var lft mad.LinearForwardingTable
	if err := tr.c.Get(tr.ctx, d, uint32(lid/query.LIDsPerLFTBlock), nil, &lft); err != nil {
		return -1
	}
	return int(lft.Port[lid%query.LIDsPerLFTBlock])
}

// inactive is is_port_inactive: a port not Active, except a base switch
// port 0 (always active).
func inactive(n trNode, p trPort, sw *trSwitch) bool {
	return p.state != 4 && (n.typ != int(mad.NodeTypeSwitch) || sw.enhancedSP0)
}

func (tr *tracer) samePort(a, b trPort) bool { return a.guid == b.guid || (tr.force && a.lid == b.lid) }

// maxDRHops is what a directed route holds (libibmad's ib_dr_path_t: 64
// bytes, the last one never used).
const maxDRHops = 62

func extendPath(path *[]byte, port int) bool {
	if len(*path)+1 >= maxDRHops+2 {
		return false
	}
	*path = append(*path, byte(port))
	return true
}

var trTypeNames = []string{"???", "ca", "switch", "router", "iwarp rnic"}

func trTypeName(t int) string {
	if t >= 0 && t < len(trTypeNames) {
		return trTypeNames[t]
	}
	return "???"
}

func (tr *tracer) Name(n trNode) string { return tr.names.Name(n.guid, n.desc) }

func (tr *tracer) endNode(dump int, prompt string, n trNode, p trPort) {
	num := p.num
	if n.typ == int(mad.NodeTypeSwitch) {
		num = 0
	}
	switch dump {
	case 0:
		return
	case 1:
		fmt.Fprintf(&tr.out.text, "%s {0x%016x}[%d]\n", prompt, n.guid, num)
	default:
		fmt.Fprintf(&tr.out.text, "%s %s {0x%016x} portnum %d lid %d-%d \"%s\"\n", prompt, trTypeName(n.typ), n.guid, num, p.lid, p.lid+1<<p.lmc-1, tr.Name(n))
	}
	hops := tr.out.Hops
	if prompt == "From" || (prompt == "To" && (len(hops) == 0 || uint64(hops[len(hops)-1].NodeGUID) != n.guid)) {
		tr.hop(n, p, 0)
	}
}

func (tr *tracer) routeHop(dump int, n trNode, outport int, p trPort) {
	if dump == 0 && tr.verbose == 0 {
		return
	}
	if dump == 1 {
		fmt.Fprintf(&tr.out.text, "[%d] -> {0x%016x}[%d]\n", outport, p.guid, p.num)
	} else {
		fmt.Fprintf(&tr.out.text, "[%d] -> %s port {0x%016x}[%d] lid %d-%d \"%s\"\n", outport, trTypeName(n.typ), p.guid, p.num, p.lid, p.lid+1<<p.lmc-1, tr.Name(n))
	}
	if dump != 0 {
		if k := len(tr.out.Hops); k > 0 {
			tr.out.Hops[k-1].OutPort = outport
		}
		tr.hop(n, p, p.num)
	}
}

// hop records a node of the route for JSON.
func (tr *tracer) hop(n trNode, p trPort, in int) {
	tr.out.Hops = append(tr.out.Hops, TraceHop{NodeGUID: mad.GUID(n.guid), NodeType: jsonv.NodeTypeOf(mad.NodeType(n.typ)), Name: tr.Name(n), InPort: in, LID: p.lid})
}

// findRoute is find_route: from the node at the end of *from (a directed
// route, extended as the trace goes) to the port with LID to.
func (tr *tracer) findRoute(from *[]byte, to int, dump int) error {
	const fn = "find_route"
	fromNode, fromPort, err1 := tr.getNode(query.DR(*from))
	toNode, toPort, err2 := tr.getNode(query.LID(uint16(to)))
	_ = toNode
	if err1 != nil || err2 != nil {
		tr.warn(fn, "can't reach to/from ports")
		if !tr.force {
			return errTrace
		}
		toPort.lid = to
		tr.warn(fn, "Force: look for lid %d", to)
	}
	node, port := fromNode, fromPort
	portNum := port.num
	var sw trSwitch
	var nextNode trNode
	var nextPort trPort
	outport, nextOut := 255, 255

	badTable := func() error {
		tr.warn(fn, "Bad forwarding table entry found at: node \"%s\" lid entry %d is %d (top %d)", node.desc, to, outport, sw.top)
		return errTrace
	}
	badPath := func() error { tr.warn(fn, "Direct path too long!"); return errTrace }

	tr.endNode(dump, "From", node, port)
	if node.typ == int(mad.NodeTypeSwitch) {
		nextOut = tr.switchLookup(&sw, query.DR(*from), to)
		if nextOut < 0 || nextOut > node.nports {
			outport = nextOut
			return badTable()
		}
	}
	maxHops := 63 // C's while (maxhops--): -1 when it runs out
walk:
	for {
		if maxHops == 0 {
			maxHops = -1
			break
		}
		maxHops--
		if inactive(node, port, &sw) {
			tr.warn(fn, "Bad port state found: node \"%s\" port %d state %d", node.desc, portNum, port.state)
			return errTrace
		}
		if tr.samePort(port, toPort) {
			break
		}
		switch node.typ {
		case int(mad.NodeTypeSwitch):
			outport = nextOut
			if !extendPath(from, outport) {
				return badPath()
			}
			var err error
			if nextNode, nextPort, err = tr.getNode(query.DR(*from)); err != nil {
				tr.warn(fn, "can't reach port at %s", query.DR(*from))
				return errTrace
			}
			if outport == 0 {
				if !tr.samePort(nextPort, toPort) {
					return badTable()
				}
				break walk // found the switch's own port
			}
		case int(mad.NodeTypeCA), int(mad.NodeTypeRouter):
			outport = portNum
			if !tr.samePort(port, fromPort) {
				tr.warn(fn, "can't continue: reached CA or router port %x, lid %d", port.guid, port.lid)
				return errTrace
			}
			// From a CA or router, one hop back to (hopefully) a switch.
			caSrc, back := false, 0
			if len(*from) > 1 {
				back = int((*from)[len(*from)-1])
				*from = (*from)[:len(*from)-1]
			} else {
				caSrc = true
				if portNum != 0 && !extendPath(from, portNum) {
					return badPath()
				}
			}
			var err error
			if nextNode, nextPort, err = tr.getNode(query.DR(*from)); err != nil {
				tr.warn(fn, "can't reach port at %s", query.DR(*from))
				return errTrace
			}
			if !caSrc {
				nextPort.num = back // the port as seen from the CA's side
			}
		}
		if nextNode.typ == int(mad.NodeTypeSwitch) {
			nextOut = tr.switchLookup(&sw, query.DR(*from), to)
			if nextOut < 0 || nextOut > nextNode.nports {
				outport = nextOut
				return badTable()
			}
		}
		port = nextPort
		if inactive(nextNode, port, &sw) {
			tr.warn(fn, "Bad out port state found: node \"%s\" outport %d state %d", node.desc, outport, port.state)
			return errTrace
		}
		node = nextNode
		portNum = port.num
		tr.routeHop(dump, node, outport, port)
	}
	// A route found on the 63rd pass leaves 0: the C tool reports it as
	// no route too.
	if maxHops <= 0 {
		tr.warn(fn, "no route found after %d hops", 63)
		return errTrace
	}
	tr.endNode(dump, "To", node, port)
	return nil
}

// mcNode is a node of the multicast search (find_mcpath's Node).
type mcNode struct {
	n      trNode
	port   trPort // the port it was reached by
	path   []byte
	dist   int // -1: the target
	up     *mcNode
	upPort int // its port towards up
	// upOut is the port of up that leads here.
	upOut int
}

// multicast traces the spanning tree of mlid from the node at the end of
// from to the destination, breadth first, as find_mcpath does.
func (tr *tracer) multicast(from []byte, dstLID, mlid int) error {
	_, tp, err := tr.getNode(query.LID(uint16(dstLID)))
	target := tp.guid
	if err != nil {
		tr.warn("find_target_portguid", "can't find to port")
		target = ^uint64(0) // the C tool's return -1
	}
	end := tr.findMCPath(from, mlid, target)
	if end == nil {
		tr.warn("get_route", "can't find a multicast route from src to dest")
		return errTrace
	}
	tr.dumpMCPath(end)
	return nil
}

// mcLookup is switch_mclookup: which ports of the switch at path forward
// mlid (index = port); nil when the switch cannot tell.
func (tr *tracer) mcLookup(n trNode, path []byte, mlid int) []bool {
	d := query.DR(path)
	var si mad.SwitchInfo
	if err := tr.c.Get(tr.ctx, d, 0, nil, &si); err != nil {
		return nil
	}
	mlid -= query.MinMLID
	if mlid >= int(si.MulticastFDBCap) || mlid < 0 {
		return nil
	}
	ports := make([]bool, 256)
	for set := 0; set < (n.nports+15)/16; set++ { // as the C tool: no set for port 16 of a 16-port switch
		var mft mad.MulticastForwardingTable
		if err := tr.c.Get(tr.ctx, d, uint32(mlid/query.MLIDsPerMFTBlock)|uint32(set)<<28, nil, &mft); err != nil {
			return nil
		}
		mask := mft.PortMask[mlid%query.MLIDsPerMFTBlock]
		for i := 0; i < 16; i++ {
			if mask&(1<<i) != 0 {
				ports[set*16+i] = true
			}
		}
	}
	return ports
}

func (tr *tracer) findMCPath(from []byte, mlid int, target uint64) *mcNode {
	const fn = "find_mcpath"
	n, p, err := tr.getNode(query.DR(from))
	if err != nil {
		tr.warn(fn, "can't reach node %s", query.DR(from))
		return nil
	}
	known := map[uint64]bool{}
	byDist := make([][]*mcNode, 64)
	// add is new_node: the target ends the search; a node seen before
	// is not searched again.
	add := func(m *mcNode) (found, isNew bool) {
		if m.port.guid == target {
			m.dist = -1
			tr.endNode(btoiVerbose(tr.verbose), "found target", m.n, m.port)
			return true, false
		}
		if known[m.n.guid] {
			return false, false
		}
		known[m.n.guid] = true
		byDist[m.dist] = append([]*mcNode{m}, byDist[m.dist]...) // newest first
		return false, true
	}
	root := &mcNode{n: n, port: p, path: append([]byte(nil), from...)}
	if found, _ := add(root); found {
		if n.typ != int(mad.NodeTypeSwitch) {
			tr.warn(fn, "ibtracert from CA to CA is unsupported")
			return nil
		}
		if ports := tr.mcLookup(n, from, mlid); ports == nil || !ports[0] {
			return nil
		}
		return root
	}
	leafPort := 0
	for dist := 0; dist < 63; dist++ {
		for _, node := range byDist[dist] {
			tr.endNode(btoiVerbose(tr.verbose), "processing", node.n, node.port)
			var ports []bool
			if node.n.typ != int(mad.NodeTypeSwitch) {
				if dist != 0 {
					continue
				}
				leafPort = int(node.path[len(node.path)-1])
				ports = make([]bool, 256)
				ports[node.port.num] = true
				node.upPort = 0
			} else {
				if dist == 1 && leafPort != 0 {
					node.upPort = leafPort
				}
				if ports = tr.mcLookup(node.n, node.path, mlid); ports == nil {
					tr.warn(fn, "skipping bad Switch 0x%x", node.n.guid)
					continue
				}
			}
			for i := 1; i <= node.n.nports; i++ {
				if !ports[i] || i == node.upPort {
					continue
				}
				path := append([]byte(nil), node.path...)
				out := i
				if dist == 0 && leafPort != 0 {
					path = path[:len(path)-1] // back to the switch the source hangs off
					out = node.port.num
				} else {
					var pi mad.PortInfo
					if err := tr.c.Get(tr.ctx, query.DR(path), uint32(i), nil, &pi); err != nil {
						tr.warn(fn, "can't reach node %s port %d", query.DR(path), i)
						return nil
					}
					if pi.PortPhysicalState != 5 { // LinkUp
						continue
					}
					if !extendPath(&path, i) {
						return nil
					}
				}
				rn, rp, err := tr.getNode(query.DR(path))
				if err != nil {
					tr.warn(fn, "NodeInfo on %s port %d failed, skipping port", query.DR(path), i)
					continue
				}
				remote := &mcNode{n: rn, port: rp, path: path, dist: dist + 1, up: node, upPort: rp.num, upOut: out}
				found, isNew := add(remote)
				switch {
				case found:
					return remote
				case isNew:
					tr.endNode(btoiVerbose(tr.verbose), "new remote", rn, rp)
				case rn.typ == int(mad.NodeTypeSwitch):
					tr.endNode(2, "ERR: circle discovered at", rn, rp)
				}
			}
		}
	}
	return nil
}

// btoiVerbose is libibmad's ibverbose as a dump level: -v prints the
// search in the simple format, -vv in the full one.
func btoiVerbose(v int) int { return v }

// dumpMCPath prints the branch of the tree from the source to m.
func (tr *tracer) dumpMCPath(m *mcNode) {
	if m.up != nil {
		tr.dumpMCPath(m.up)
	}
	name := tr.Name(m.n)
	lids := fmt.Sprintf("%d-%d", m.port.lid, m.port.lid+1<<m.port.lmc-1)
	if m.up == nil {
		fmt.Fprintf(&tr.out.text, "From %s 0x%x port %d lid %s \"%s\"\n", trTypeName(m.n.typ), m.n.guid, m.port.num, lids, name)
		tr.hop(m.n, m.port, 0)
		if m.dist >= 0 {
			return
		}
	} else if tr.dump == 1 {
		fmt.Fprintf(&tr.out.text, "[%d] -> %s {0x%016x}[%d]\n", m.upOut, trTypeName(m.n.typ), m.n.guid, m.upPort)
	} else {
		fmt.Fprintf(&tr.out.text, "[%d] -> %s 0x%x[%d] lid %d \"%s\"\n", m.upOut, trTypeName(m.n.typ), m.n.guid, m.upPort, m.port.lid, name)
	}
	if m.up != nil {
		tr.out.Hops[len(tr.out.Hops)-1].OutPort = m.upOut
		tr.hop(m.n, m.port, m.upPort)
	}
	if m.dist < 0 {
		fmt.Fprintf(&tr.out.text, "To %s 0x%x port %d lid %s \"%s\"\n", trTypeName(m.n.typ), m.n.guid, m.port.num, lids, name)
	}
}
