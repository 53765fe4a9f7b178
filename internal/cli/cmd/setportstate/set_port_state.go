package setportstate

// set_port_state: change the state of ports across the fabric
// (python-rdma's "ibtool set_port_state [TARGET@PORT]+").
//
// Each argument is TARGET@PORT: a node by LID, GUID, GID, directed route
// (0,1,3; -D for a bare number) or name, and the port number to change;
// a CA port may leave out @PORT (the port the target names). The change
// is --disable (PortPhysicalState Disabled), --enable (Polling: the link
// trains again), --init (PortState Down, after which the link retrains
// into Init: IBA 14.2.5.6; python-rdma wrote Init, which SMAs ignore),
// or --state NAME for those and down, arm, active. Without one it prints
// what it would change and sends no Set.
//
// How: the fabric is walked (directed routes), every target is found in
// it, and the links to change are taken out of it; each port is then
// reached over the shortest directed route that crosses none of them (a
// CA port over its own link, the last hop, since its SMA sets only the
// port an SMP arrives on), so a change cannot cut off the next one. All
// PortInfos are read first, then all Sets are sent (those over their own
// link first, since the other end of that link may be a target too), each
// the port's PortInfo with the change and "no change" (0) in the other
// transition fields.
//
// Safety (not in python-rdma): a change that takes links down (disable,
// init, down) is refused, for every target, before any Set is sent, when
// one of them is on the local port's link or on a link the LID routes
// between the local port and the SM (both ways, as the switches'
// forwarding tables send them) cross; --force does it anyway.
//
// Output: "Changed <port GUID>@<port> on <DR path>: <field> <before> ->
// <after>" per port, from the Set's reply; "Would have changed ..." for a
// dry run.
//
// JSON (--json): {"operation", "dry_run", "ports": [{"target",
// "node_guid", "port_guid", "port", "port_state", "port_state_text",
// "physical_state", "physical_state_text", "new_port_state",
// "new_port_state_text", "new_physical_state", "new_physical_state_text"}]}
// (the new_ keys after a Set).

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
)

// portChange is one state change set_port_state can make.
type portChange struct {
	name      string
	state     mad.PortState     // 0: no change
	phys      mad.PhysPortState // 0: no change
	takesDown bool              // the link stops carrying data
}

var portChanges = []portChange{
	{name: "disable", phys: mad.PhysPortStateDisabled, takesDown: true},
	{name: "enable", phys: mad.PhysPortStatePolling},
	{name: "init", state: mad.PortStateDown, takesDown: true},
	{name: "down", state: mad.PortStateDown, takesDown: true},
	{name: "arm", state: mad.PortStateArmed},
	{name: "active", state: mad.PortStateActive},
}

func lookupPortChange(name string) (portChange, error) {
	var names []string
	for _, c := range portChanges {
		if strings.EqualFold(c.name, name) {
			return c, nil
		}
		names = append(names, c.name)
	}
	return portChange{}, cmdutil.UsageErrorf("unknown port state %q%s", name, cmdutil.DidYouMean(name, names))
}

type setPortStateOptions struct {
	cmdutil.Common
	disable, enable, init bool
	state                 string
	force                 bool
}

// NewCmd builds the set_port_state command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &setPortStateOptions{}
	cmd := cmdutil.ToolCommand("set_port_state [options] <target@port>...", "Change port states across the fabric, safely")
	cmd.Long = "set_port_state disables, enables or resets ports anywhere in the fabric, reaching each one\n" +
		"over a directed route that avoids the links being changed. Without --disable, --enable,\n" +
		"--init or --state it only says what it would change. It refuses to take down the local\n" +
		"port's link or a link between the local port and the SM unless --force is given."
	cmd.Example = `  set_port_state 1@4                 # what would change on port 4 of LID 1
  set_port_state --disable 1@4 1@5   # disable two switch ports
  set_port_state --enable -D 0,1@4   # by directed route
  set_port_state --state init leaf01@12`
	fs := cmd.Flags()
	fs.BoolVar(&opts.disable, "disable", false, "set the physical port state to Disabled")
	fs.BoolVar(&opts.enable, "enable", false, "set the physical port state to Polling")
	fs.BoolVar(&opts.init, "init", false, "reset the port state (Down, the link retrains into Init)")
	fs.StringVar(&opts.state, "state", "", "the change by name: disable, enable, init, down, arm, active")
	fs.BoolVar(&opts.force, "force", false, "allow taking down the local port's link or the links to the SM")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "sK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmdutil.UsageErrorf("expected at least one <target@port>")
		}
		res, err := runSetPortState(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "set_port_state", res, err)
	}
	return cmd
}

// portStateChangeOf reads the one change the flags ask for; ok is false
// for none (a dry run).
func portStateChangeOf(opts *setPortStateOptions) (portChange, bool, error) {
	var asked []string
	for _, f := range []struct {
		set  bool
		name string
	}{{opts.disable, "disable"}, {opts.enable, "enable"}, {opts.init, "init"}, {opts.state != "", opts.state}} {
		if f.set {
			asked = append(asked, f.name)
		}
	}
	switch len(asked) {
	case 0:
		return portChange{}, false, nil
	case 1:
		c, err := lookupPortChange(asked[0])
		return c, err == nil, err
	}
	return portChange{}, false, cmdutil.UsageErrorf("only one of --disable, --enable, --init and --state can be given")
}

// portTarget is one argument: the target and the port number (-1 when
// not given).
type portTarget struct {
	arg    string
	target endport.Target
	port   int
}

func parsePortTargets(args []string, cm *cmdutil.Common) ([]portTarget, error) {
	var out []portTarget
	for _, arg := range args {
		spec, portText, hasPort := strings.Cut(arg, "@")
		pt := portTarget{arg: arg, port: -1}
		if hasPort {
			n, err := endport.ParseUint(portText, 8)
			if err != nil || n == 0 {
				return nil, cmdutil.UsageErrorf("%q: invalid port number %q (ports are 1..254)", arg, portText)
			}
			pt.port = int(n)
		}
		flags := cm.TypeFlags()
		if flags.Direct && !strings.Contains(spec, ",") {
			spec += "," // -D 0 means the local node, as in python-rdma
		}
		t, err := endport.ParseTargetOrName(spec, flags)
		if err != nil {
			return nil, cmdutil.UsageErrorf("%q: %v", arg, err)
		}
		pt.target = t
		out = append(out, pt)
	}
	return out, nil
}

// PortStateEntry is one port of the result.
type PortStateEntry struct {
	Target        jsonv.Target       `json:"target"`
	NodeGUID      mad.GUID           `json:"node_guid"`
	PortGUID      mad.GUID           `json:"port_guid"`
	Port          int                `json:"port"`
	PortState     mad.PortState      `json:"port_state"`
	PortStateText string             `json:"port_state_text"`
	PhysState     mad.PhysPortState  `json:"physical_state"`
	PhysStateText string             `json:"physical_state_text"`
	NewState      *mad.PortState     `json:"new_port_state,omitempty"`
	NewStateText  string             `json:"new_port_state_text,omitempty"`
	NewPhys       *mad.PhysPortState `json:"new_physical_state,omitempty"`
	NewPhysText   string             `json:"new_physical_state_text,omitempty"`

	path   []byte
	change portChange
}

type SetPortStateResult struct {
	Operation string           `json:"operation"`
	DryRun    bool             `json:"dry_run"`
	Ports     []PortStateEntry `json:"ports"`

	verb string // "Changed", "Reset"
}

func (r *SetPortStateResult) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, p := range r.Ports {
		where := fmt.Sprintf("0x%016x@%d on %s", uint64(p.PortGUID), p.Port, mad.FormatDRPath(p.path))
		switch {
		case r.DryRun:
			fmt.Fprintf(&b, "Would have changed %s\n", where)
		case p.NewState == nil:
		case p.change.phys != 0:
			fmt.Fprintf(&b, "%s %s: PortPhysicalState %s -> %s\n", r.verb, where, p.PhysStateText, p.NewPhysText)
		default:
			fmt.Fprintf(&b, "%s %s: PortState %s -> %s\n", r.verb, where, p.PortStateText, p.NewStateText)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runSetPortState(env *cmdutil.Env, opts *setPortStateOptions, args []string) (cmdutil.Result, error) {
	change, doIt, err := portStateChangeOf(opts)
	if err != nil {
		return nil, err
	}
	targets, err := parsePortTargets(args, &opts.Common)
	if err != nil {
		return nil, err
	}
	c, err := cmdutil.OpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout, RetryCount: 3})
	if err != nil {
		return nil, err
	}
	defer c.Engine().Close()
	ctx := context.Background()
	f, err := discovery.Discover(ctx, c.Engine(), discovery.Options{Mode: discovery.ModeDR, Load: discovery.LoadTopology | discovery.LoadNodeDesc, MKey: c.Options().MKey})
	if err != nil {
		return nil, fmt.Errorf("walking the fabric: %w", err)
	}
	ports, err := findTargetPorts(ctx, c, f, targets)
	if err != nil {
		return nil, err
	}
	if doIt && change.takesDown && !opts.force {
		if err := refuseVitalLinks(ctx, c, f, ports, change); err != nil {
			return nil, err
		}
	}
	res := &SetPortStateResult{Operation: change.name, DryRun: !doIt, verb: "Changed"}
	if !doIt {
		res.Operation = "none"
	}
	var w *query.Write
	if doIt {
		// The change flag on the command line asks for these writes.
		w = &query.Write{By: "set_port_state --" + change.name}
	}
	return res, changePorts(ctx, c, f, ports, change, w, res)
}

// findTargetNode finds the node a target names, and the port it names
// (0 when it names the node only).
func findTargetNode(ctx context.Context, c *query.Client, f *discovery.Fabric, t endport.Target) (*discovery.Node, int, error) {
	t, err := c.ResolveName(ctx, t, c.Options().Names, f)
	if err != nil {
		return nil, 0, err
	}
	switch t.Kind {
	case endport.ByDRPath:
		n, arrival, err := routing.WalkDR(f, t.DRPath)
		if n != nil && n.Type == discovery.NodeSwitch {
			arrival = 0
		}
		return n, arrival, err
	case endport.ByLID:
		if n, num := routing.LIDOwner(f, t.LID); n != nil {
			return n, num, nil
		}
		return nil, 0, fmt.Errorf("no port of the fabric has LID %d", t.LID)
	case endport.ByGUID, endport.ByGID:
		guid := t.GUID
		if t.Kind == endport.ByGID {
			guid = uint64(mad.GID(t.GID).GUID())
		}
		for _, n := range f.Nodes {
			if n.GUID == guid {
				return n, 0, nil
			}
			for _, p := range n.Ports {
				if p != nil && p.GUID == guid && n.Type == discovery.NodeSwitch {
					return n, 0, nil // a switch's ports share its port GUID
				}
				if p != nil && p.GUID == guid {
					return n, p.Num, nil
				}
			}
		}
		return nil, 0, fmt.Errorf("no node or port of the fabric has GUID 0x%016x", guid)
	}
	return nil, 0, fmt.Errorf("not a target set_port_state can find")
}

// findTargetPorts finds each target's port in the fabric.
func findTargetPorts(ctx context.Context, c *query.Client, f *discovery.Fabric, targets []portTarget) ([]*discovery.Port, error) {
	var ports []*discovery.Port
	for _, t := range targets {
		n, num, err := findTargetNode(ctx, c, f, t.target)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", t.arg, err)
		}
		if t.port >= 0 {
			num = t.port
		} else if n.Type == discovery.NodeSwitch {
			return nil, cmdutil.UsageErrorf("%q: %s is a switch: say which port (%s@PORT)", t.arg, routing.NodeLabel(n), t.arg)
		}
		p := n.Port(num)
		if num < 1 || num > n.NumPorts || p == nil {
			return nil, cmdutil.UsageErrorf("%q: %s has no port %d", t.arg, routing.NodeLabel(n), num)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// changePorts reads every target port's PortInfo over a route that avoids
// the links being changed, then sets them all (or, without w, reports
// what it would change).
func changePorts(ctx context.Context, c *query.Client, f *discovery.Fabric, ports []*discovery.Port, change portChange, w *query.Write, res *SetPortStateResult) error {
	avoid := map[*discovery.Port]bool{}
	for _, p := range ports {
		avoid[p] = true
	}
	routes := routing.DRRoutes(f, avoid)
	type pending struct {
		dest    query.Dest
		raw     *query.Raw
		overOwn bool // the route's last hop is the port's own link
	}
	var todo []pending
	for _, p := range ports {
		path, err := routing.RouteToPort(f, routes, p)
		if err != nil {
			return err
		}
		e, raw, err := readPortEntry(ctx, c, p, path, change)
		if err != nil {
			return err
		}
		res.Ports = append(res.Ports, e)
		_, reached := routes[p.Node]
		overOwn := len(path) > 1 && !(reached && p.Node.Type == discovery.NodeSwitch)
		todo = append(todo, pending{query.DR(path), raw, overOwn})
	}
	if w == nil {
		return nil
	}
	// The Sets that cross their own link go first: another target may be
	// the other end of that link.
	for _, first := range []bool{true, false} {
		for i, t := range todo {
			if t.overOwn != first {
				continue
			}
			after, err := setPortState(ctx, c, w, t.dest, res.Ports[i].Port, t.raw, change)
			if err != nil {
				return fmt.Errorf("setting %s: %w", routing.PortLabel(ports[i]), err)
			}
			res.Ports[i].SetAfter(after)
		}
	}
	return nil
}

// readPortEntry reads p's PortInfo over path, for a change: the entry of
// the result, and the attribute as read for the Set.
func readPortEntry(ctx context.Context, c *query.Client, p *discovery.Port, path []byte, change portChange) (PortStateEntry, *query.Raw, error) {
	d := query.DR(path)
	var pi mad.PortInfo
	raw := &query.Raw{Struct: &pi}
	if err := c.Get(ctx, d, uint32(p.Num), nil, raw); err != nil {
		return PortStateEntry{}, nil, fmt.Errorf("reading PortInfo of %s: %w", routing.PortLabel(p), err)
	}
	return PortStateEntry{
		Target: cmdutil.DestTarget(d, d.String()), NodeGUID: mad.GUID(p.Node.GUID), PortGUID: mad.GUID(p.GUID), Port: p.Num,
		PortState: pi.PortState, PortStateText: StateText(&pi, "PortState"),
		PhysState: pi.PortPhysicalState, PhysStateText: StateText(&pi, "PortPhysicalState"),
		path: path, change: change,
	}, raw, nil
}

// SetAfter records the port as the Set's reply has it.
func (e *PortStateEntry) SetAfter(after *mad.PortInfo) {
	e.NewState, e.NewStateText = &after.PortState, StateText(after, "PortState")
	e.NewPhys, e.NewPhysText = &after.PortPhysicalState, StateText(after, "PortPhysicalState")
}

// setPortState sends the SubnSet(PortInfo) of one change: the port's
// PortInfo as read, with the change and "no change" (0) in the other
// transition fields and the enabled speeds and widths (IBA 14.2.5.6).
func setPortState(ctx context.Context, c *query.Client, w *query.Write, d query.Dest, port int, raw *query.Raw, change portChange) (*mad.PortInfo, error) {
	pi := *raw.Struct.(*mad.PortInfo)
	pi.PortState, pi.PortPhysicalState = change.state, change.phys
	pi.LinkSpeedEnabled, pi.LinkWidthEnabled, pi.LinkSpeedExtEnabled = 0, 0, 0
	var after mad.PortInfo
	err := c.Set(ctx, w, d, uint32(port), &query.Raw{Struct: &pi, Bytes: raw.Bytes}, &after)
	return &after, err
}

// StateText is libibmad's text of a state field.
func StateText(pi *mad.PortInfo, field string) string {
	s, _ := mad.FormatIBMAD(pi, field)
	return s
}
