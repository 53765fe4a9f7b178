// Package ibfindnodesusing is the ibfindnodesusing command: the hosts
// whose routes leave through a switch port, and those whose routes come
// back through the port at its other end. infiniband-diags 44 ships it as
// a Perl script over ibnetdiscover -g and ibroute text; ibtool answers
// from the fabric model and the two switches' forwarding tables
// (internal/routing), and prints what the script prints.
package ibfindnodesusing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
)

type ibfindnodesusingOptions struct {
	cmdutil.Common
	recalculate bool
	src         query.Source
}

// NewCmd builds the ibfindnodesusing command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	o := &ibfindnodesusingOptions{}
	cmd := cmdutil.ToolCommand("ibfindnodesusing [options] <switch_guid|switch_name> <port>", "List the hosts whose routes use a switch port")
	cmd.Long = "ibfindnodesusing reads the forwarding tables of a switch and of the node at the\n" +
		"other end of one of its ports, and lists the hosts routed out through that port\n" +
		"(==>>) and back in through it (<<==). The fabric is walked live each time (-R is\n" +
		"accepted for the C tool's sake), or read from --load-cache."
	cmd.Example = `  ibfindnodesusing 0x7cfe900300300000 19
  ibtool ibfindnodesusing leaf01 19   # the switch by name`
	cmd.Flags().BoolVarP(&o.recalculate, "Recalculate", "R", false, "recalculate the topology (ibtool always walks the fabric unless --load-cache)")
	o.src.AddFlags(cmd.Flags(), query.FlagLoadCache|query.FlagNodeNameMap)
	cmdutil.SetupCommon(env, cmd, &o.Common, "DGLKsyYtz")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		res, err := runIbfindnodesusing(env, o, args)
		if errors.Is(err, errFindUsage) {
			fmt.Fprintf(env.IO.Out, "Usage: %s [-R -C <ca_name> -P <ca_port>] <switch_guid|switch_name> <port>\n"+
				"   find a list of nodes which are routed through switch:port\n"+
				"   -R Recalculate ibnetdiscover information\n"+
				"   -C <ca_name> use selected Channel Adaptor name for queries\n"+
				"   -P <ca_port> use selected channel adaptor port for queries\n", c.Name())
			return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: cmdutil.ErrSilent}
		}
		if err := cmdutil.Finish(env, &o.Common, "ibfindnodesusing", res, err); err != nil || res == nil {
			return err
		}
		return cmdutil.WalkIncomplete(env, &o.Common, "ibfindnodesusing", res.fab)
	}
	return cmd
}

var errFindUsage = errors.New("usage")

// findNodesResult is the two directions through a switch port.
type findNodesResult struct {
	Switch findEnd  `json:"switch"`
	Remote findEnd  `json:"remote"`
	Out    []string `json:"out_hosts"` // routed out through the port
	In     []string `json:"in_hosts"`  // routed back in through the remote port
	// Complete is false when the walk missed something (Errors): hosts
	// it did not reach are missing from the lists.
	Complete bool                   `json:"complete"`
	Errors   []fabricdoc.WalkErrDoc `json:"errors"`
	fab      *discovery.Fabric
	found    bool
	target   string // the switch as the script formats it, for "not found"
	portArg  string // the port as given
	outText  string
	inText   string
}

// findEnd is one end of the link (a link end of docs/json.md); desc is
// how the script names it.
type findEnd struct {
	NodeGUID mad.GUID       `json:"node_guid"`
	NodeName string         `json:"node_name"`
	NodeType jsonv.NodeType `json:"node_type,omitempty"`
	Port     int            `json:"port"`
	desc     string
}

func (r *findNodesResult) WriteText(w io.Writer) error {
	if !r.found {
		_, err := fmt.Fprintf(w, "Switch \"%s\" not found\n   Try running with the \"-R\" or \"-P\" option.\n", r.target)
		return err
	}
	s, m := r.Switch, r.Remote
	remote := fmt.Sprintf("%s %s (%s)", ctext.GUIDText(m.NodeGUID), ctext.PortText(m.Port), m.desc)
	_, err := fmt.Fprintf(w, "%s %s (%s)  ==>>  %s\n%s\n\n%s %s (%s)  <<==  %s\n%s\n",
		s.NodeGUID, r.portArg, s.desc, remote, r.outText, s.NodeGUID, r.portArg, s.desc, remote, r.inText)
	return err
}

func runIbfindnodesusing(env *cmdutil.Env, o *ibfindnodesusingOptions, args []string) (*findNodesResult, error) {
	c := &o.Common
	if len(args) < 2 || args[0] == "" || args[1] == "" {
		return nil, errFindUsage
	}
	ctx := context.Background()
	walker, err := cmdutil.OpenSourceClient(env, c, &o.src)
	if err != nil {
		return nil, err
	}
	names := o.src.Names(env.IO.Err)
	fab, err := o.src.Fabric(ctx, walker, query.Walk{Progress: cmdutil.ProgressLine(env)})
	if walker != nil {
		walker.Engine().Close()
	}
	if err != nil {
		return nil, fmt.Errorf("Execution of ibnetdiscover failed: %w", err)
	}
	res := &findNodesResult{target: scriptGUID(args[0]), portArg: args[1], Out: []string{}, In: []string{}, fab: fab}
	res.Complete, res.Errors = fabricdoc.WalkErrorsDoc(fab)
	sw := findSwitch(fab, res.target, names.Name)
	if sw == nil && !env.Compat {
		sw = switchNamed(fab, args[0], names.Name)
	}
	if sw == nil {
		return res, &cmdutil.ExitError{Code: 1, Err: cmdutil.ErrSilent}
	}
	res.found = true
	res.Switch = findEnd{NodeGUID: mad.GUID(sw.GUID), NodeName: names.Name(sw.GUID, sw.Desc()), NodeType: fabricdoc.NodeTypeOf(sw),
		desc: switchDesc(sw, names.Name)}
	v, _ := ctext.Strtoul(args[1]) // the script compares ports as numbers
	port := int(v)
	res.Switch.Port = port
	var remote *discovery.Port
	if p := sw.Port(port); p != nil && strconv.Itoa(port) == args[1] {
		remote = p.Remote
	}
	if remote != nil {
		name := names.Name(remote.Node.GUID, remote.Node.Desc())
		res.Remote = findEnd{NodeGUID: mad.GUID(remote.Node.GUID), NodeName: name, NodeType: fabricdoc.NodeTypeOf(remote.Node), Port: remote.Num, desc: name}
	}

	client, err := cmdutil.IBOpenClient(env, c, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()
	// ibroute -G answers only for a switch: a CA at the other end has no
	// table, and no hosts.
	// The script's ibroute of a CA writes to stderr; so do we, in our words.
	ends := []*discovery.Node{sw}
	switch {
	case remote == nil:
	case remote.Node.Type != discovery.NodeSwitch:
		fmt.Fprintf(env.IO.Err, "ibfindnodesusing: port %s of %s leads to a %s, which has no forwarding table\n",
			args[1], res.Switch.NodeGUID, strings.ToLower(ctext.NodeTypeStr(remote.Node.Type)))
	default:
		ends = append(ends, remote.Node)
	}
	tables, err := readTables(ctx, client, fab, ends)
	if err != nil {
		return nil, err
	}
	res.Out = hostNames(tables.Through(sw.GUID, port), names)
	if len(ends) > 1 {
		res.In = hostNames(tables.Through(remote.Node.GUID, remote.Num), names)
	}
	res.outText, res.inText = strings.Join(compressHosts(res.Out), " "), strings.Join(compressHosts(res.In), " ")
	return res, nil
}

// scriptGUID is format_guid: a-f in lower case, "0x" and the rest of the
// string after the first "0x" padded with zeros to 16 characters.
func scriptGUID(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'F' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
	if _, rest, ok := strings.Cut(s, "0x"); ok {
		s = rest
	}
	if len(s) < 16 {
		s = strings.Repeat("0", 16-len(s)) + s
	}
	return "0x" + s
}

// switchDesc is what the script reads after "# " on ibnetdiscover's switch
// line: the quoted name and "enhanced" or "base".
func switchDesc(n *discovery.Node, name func(uint64, string) string) string {
	kind := "base"
	if n.EnhancedSP0 {
		kind = "enhanced"
	}
	return fmt.Sprintf("%q %s", name(n.GUID, n.Desc()), kind)
}

// findSwitch finds the switch the way the script does: its GUID, or a
// description that the formatted argument, read as a regular expression,
// matches before white space.
func findSwitch(f *discovery.Fabric, target string, name func(uint64, string) string) *discovery.Node {
	re, _ := regexp.Compile(".*" + target + `\s+.*`)
	for _, n := range f.NodesOfType(discovery.NodeSwitch) {
		if mad.GUID(n.GUID).String() == target || (re != nil && re.MatchString(switchDesc(n, name))) {
			return n
		}
	}
	return nil
}

// switchNamed is ibtool's addition: a switch by its name.
func switchNamed(f *discovery.Fabric, arg string, name func(uint64, string) string) *discovery.Node {
	for _, n := range f.NodesOfType(discovery.NodeSwitch) {
		if name(n.GUID, n.Desc()) == arg {
			return n
		}
	}
	return nil
}

// readTables reads the switches' tables as the script's ibroute -G shows
// them: the LIDs up to LinearFDBTop that dump_unicast_tables reads
// (render.UnicastRange), up to the first block that cannot be read.
func readTables(ctx context.Context, c *query.Client, fab *discovery.Fabric, switches []*discovery.Node) (*routing.Tables, error) {
	targets := make([]routing.Target, len(switches))
	lasts := make([]int, len(switches))
	for i, n := range switches {
		t := routing.Target{GUID: n.GUID, Dest: routing.DestOf(n), NumPorts: n.NumPorts}
		if err := t.Info.Unmarshal(n.SwitchInfo); err != nil {
			return nil, err
		}
		_, lasts[i], t.Blocks, _ = render.UnicastRange(0, 0, int(t.Info.LinearFDBTop))
		targets[i] = t
	}
	tables := &routing.Tables{Fabric: fab, Switches: map[uint64]*routing.Switch{}}
	for i, sw := range routing.ReadSwitches(ctx, c, targets, routing.Want{LFT: true}) {
		shown, _, _ := render.UnicastTable(sw, 0, lasts[i], true)
		sw.LFT = &routing.LFT{First: shown.First, Ports: shown.Ports}
		tables.Switches[sw.GUID] = sw
	}
	return tables, nil
}

// hostNames are the names of the CAs among ports: ibroute's "Channel
// Adapter" lines.
func hostNames(ports []*discovery.Port, names *nodename.Map) []string {
	hosts := []string{}
	for _, p := range ports {
		if n := p.Node; n.Type == discovery.NodeCA {
			hosts = append(hosts, names.Name(n.GUID, n.Desc()))
		}
	}
	return hosts
}

// compressHosts is the script's compress_hostlist, as it prints: names
// grouped by the text before their trailing digits, consecutive numbers
// as ranges ("node1-3"), groups in the order of their prefixes. The script
// starts its list with an undefined entry, which prints as an empty first
// word (the line's leading space) whenever there is a host.
func compressHosts(hosts []string) []string {
	type item struct {
		prefix, digits string
		num            int
	}
	items := []item{{}} // the script's undef
	for _, h := range hosts {
		i := len(h)
		for i > 0 && h[i-1] >= '0' && h[i-1] <= '9' {
			i--
		}
		n, _ := strconv.Atoi(h[i:])
		items = append(items, item{h[:i], h[i:], n})
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].num < items[b].num })
	groups := map[string][][]item{}
	for _, it := range items {
		g := groups[it.prefix]
		last := 0 // an empty group's last number reads as 0
		if len(g) > 0 && len(g[len(g)-1]) > 0 {
			last = g[len(g)-1][len(g[len(g)-1])-1].num
		}
		if len(g) == 0 {
			g = append(g, nil) // group 0: used only by a run that starts at 1
		}
		if last == it.num-1 {
			g[len(g)-1] = append(g[len(g)-1], it)
		} else {
			g = append(g, []item{it})
		}
		groups[it.prefix] = g
	}
	prefixes := make([]string, 0, len(groups))
	for p := range groups {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	var out []string
	for _, p := range prefixes {
		for _, g := range groups[p] {
			switch len(g) {
			case 0:
			case 1:
				out = append(out, p+g[0].digits)
			default:
				out = append(out, p+g[0].digits+"-"+g[len(g)-1].digits)
			}
		}
	}
	// split(",", join(",", @list)) drops trailing empty fields.
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
