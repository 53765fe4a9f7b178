package iblinkinfo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// iblinkinfo: every link of the fabric, switch by switch, as
// infiniband-diags 44's iblinkinfo prints it. The walk is the shared
// parallel discovery; a partial scan (-S/-G/-D, or -n) runs libibnetdisc's
// own walk from its start (discovery.Scan), since what it reaches depends
// on that walk's bookkeeping.

type iblinkinfoOptions struct {
	cmdutil.Common
	src                         query.Source
	guid, drPath                string
	guidSet, drSet              bool
	all, down, line, additional bool
	hops                        string
	diffFile, filterDown        string
	diffFlags                   int
	onlyType                    int // 0, or the node type of --switches-only/--cas-only (the last wins)
}

// NewCmd builds the iblinkinfo command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &iblinkinfoOptions{diffFlags: render.LkDiffDefault}
	cmd := cmdutil.ToolCommand("iblinkinfo [options]", "Show every link of the fabric, switch by switch")
	cmd.Long = `Report the link of every port of the fabric (or of one switch), as
infiniband-diags' iblinkinfo does: width, speed, state, the node at the other
end, and what the link could run at. The fabric is discovered with many SMPs in
parallel, read from a cache (--load-cache), or from the SA's tables (--sa).
--json prints the same nodes and ports as a document (docs/json.md).`
	cmd.Args = cobra.ArbitraryArgs // the C tool ignores extra arguments
	fs := cmd.Flags()
	opts.src.AddFlags(fs, query.AllSourceFlags)
	fs.VarP(cmdutil.LastString(&opts.guid, &opts.guidSet), "switch", "S", "start partial scan at the port specified by <port_guid> (hex format)")
	fs.VarP(cmdutil.LastString(&opts.guid, &opts.guidSet), "port-guid", "G", "(same as -S)")
	fs.VarP(cmdutil.LastString(&opts.drPath, &opts.drSet), "Direct", "D", "start partial scan at the port specified by <dr_path>")
	fs.BoolVarP(&opts.all, "all", "a", false, "print all nodes found in a partial fabric scan")
	fs.StringVarP(&opts.hops, "hops", "n", "", "Number of hops to include away from specified node")
	fs.BoolVarP(&opts.down, "down", "d", false, "print only down links")
	fs.BoolVarP(&opts.line, "line", "l", false, "(line mode) print all information for each link on a single line")
	fs.BoolVarP(&opts.additional, "additional", "p", false, "print additional port settings (PktLifeTime, HoqLife, VLStallCount)")
	fs.StringVar(&opts.diffFile, "diff", "", "filename of ibnetdiscover cache to diff")
	// iblinkinfo's --diffcheck keys (built here, not for every command).
	lkDiffKeys := map[string]int{"port": render.LkDiffPort, "state": render.LkDiffState, "lid": render.LkDiffLID, "nodedesc": render.LkDiffNodeDesc}
	fs.Var(cmdutil.DiffCheck(&opts.diffFlags, lkDiffKeys), "diffcheck", "specify checks to execute for --diff (port,state,lid,nodedesc)")
	fs.StringVar(&opts.filterDown, "filterdownports", "", "filename of ibnetdiscover cache to filter downports")
	cmdutil.AddListFlag(fs, &opts.onlyType, discovery.NodeSwitch, "switches-only", "", "Output only switches")
	cmdutil.AddListFlag(fs, &opts.onlyType, discovery.NodeCA, "cas-only", "", "Output only CAs")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "aDdGgKLlnpRS")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return cmdutil.Fail(env, &opts.Common, "iblinkinfo", runIblinkinfo(env, opts))
	}
	return cmd
}

// checkHopsFit refuses, as `ibtool iblinkinfo`, a -D hop that is no port
// number: libibmad cuts it to a byte (257 becomes port 1, 300 port 44),
// and the scan would start somewhere else than asked. smpquery and
// smpdump refuse such a hop the same way; the symlink keeps the C tool's
// reading.
func checkHopsFit(s string) error {
	for i, item := range strings.Split(s, ",") {
		if v := ctext.Atoi(item); v < 0 || v > 254 {
			return cmdutil.UsageErrorf("invalid directed route %q: hop %d %q is not a port number 0..254", s, i, item)
		}
	}
	return nil
}

func runIblinkinfo(env *cmdutil.Env, opts *iblinkinfoOptions) error {
	c := &opts.Common
	if _, err := c.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return err
	}
	_, useSA, err := opts.src.Mode()
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if opts.drSet && !opts.src.Live() {
		return cmdutil.ExitWith(1, "Cannot specify cache and direct route path")
	}
	if opts.drSet && !env.Compat {
		if err := checkHopsFit(opts.drPath); err != nil {
			return err
		}
	}
	// The MAD port: the C tool opens it first, even to read a cache; we
	// need it only to talk to the fabric.
	client, err := cmdutil.OpenSourceClient(env, c, &opts.src)
	if err != nil {
		if cmdutil.ExitCodeOf(err) == cmdutil.ExitUsage {
			return err
		}
		return cmdutil.ExitWith(1, "Failed to open %s port %d: %v", cmdutil.OrDefault(c.CA), max(cmdutil.PortNum(c.Port), 0), err)
	}
	if client != nil {
		defer client.Engine().Close()
	}
	walk := client != nil && !useSA // the fabric comes from SMPs
	start, err := linkStart(env, client, opts, walk)
	if err != nil {
		return err
	}
	lp := &render.LinkPrinter{Names: opts.src.Names(env.IO.Err), Line: opts.line, Additional: opts.additional, Down: opts.down,
		Warn: env.IO.Err}
	var diffFab *discovery.Fabric
	if opts.diffFile != "" {
		if diffFab, err = query.LoadCache(opts.diffFile); err != nil {
			return fmt.Errorf("loading cached fabric for diff failed: %w", err)
		}
	}
	if opts.filterDown != "" {
		if lp.Filter, err = query.LoadCache(opts.filterDown); err != nil {
			return fmt.Errorf("loading cached fabric for filterdownports failed: %w", err)
		}
	}
	fab, err := linkFabric(env, client, opts, start, walk)
	if err != nil {
		return err
	}
	selectNodes(lp, env, fab, diffFab, opts, start, useSA)
	res := &linkReport{lp: lp, fab: fab}
	if err := cmdutil.Finish(env, c, "iblinkinfo", res, nil); err != nil {
		return err
	}
	return cmdutil.WalkIncomplete(env, c, "iblinkinfo", fab)
}

// linkReport is iblinkinfo's result: the node headers and port lines
// chosen. Its JSON is the same nodes and ports as a document.
type linkReport struct {
	lp  *render.LinkPrinter
	fab *discovery.Fabric
}

// MarshalJSON builds the document only when it is asked for: on a big
// fabric it is megabytes, and text output has no use for it.
func (r *linkReport) MarshalJSON() ([]byte, error) { return json.Marshal(r.lp.Document(r.fab)) }

func (r *linkReport) WriteText(out io.Writer) error {
	w := bufio.NewWriter(out)
	r.lp.Render(w)
	return w.Flush()
}

// scanStart is where a partial scan starts (-S/-G/-D).
type scanStart struct {
	resolved bool
	path     []byte        // the directed route to the start
	byLID    bool          // path is the route a LID takes (-S/-G)
	dr       []byte        // -D's path, nil when it did not parse
	node     *mad.NodeInfo // the NodeInfo at -D, read without -a
}

// linkStart resolves the start of a partial scan, with the C tool's
// warnings when it cannot (a full scan follows).
func linkStart(env *cmdutil.Env, client *query.Client, opts *iblinkinfoOptions, walk bool) (*scanStart, error) {
	ctx := context.Background()
	st := &scanStart{}
	if opts.drSet {
		var ok bool
		if st.dr, ok = cmdutil.ParseCDRPath(opts.drPath); ok {
			st.resolved, st.path = true, st.dr
		} else {
			cmdutil.IBWarn(env, "main", "Failed to resolve %s; attempting full scan", opts.drPath)
		}
	} else if opts.guidSet && walk {
		guid, _ := ctext.Strtoul(opts.guid)
		path, err := cmdutil.RouteToPortGUID(ctx, client, guid)
		if err != nil {
			cmdutil.IBWarn(env, "main", "Failed to resolve %s; attempting full scan\n", opts.guid)
		} else {
			st.resolved, st.path, st.byLID = true, path, true
		}
	}
	if !opts.all && opts.drSet && walk {
		path := st.dr
		if path == nil {
			path = []byte{0}
		}
		var ni mad.NodeInfo
		if err := client.Get(ctx, query.DR(path), 0, nil, &ni); err != nil {
			cmdutil.IBWarn(env, "mad_rpc", "_do_madrpc failed; dport (DR path slid 65535; dlid 65535; %s)", mad.FormatDRPath(path))
			return nil, cmdutil.ExitWith(1, "Failed to get local Node Info")
		}
		st.node = &ni
	}
	return st, nil
}

// linkFabric gets the fabric: from the source (cache, SA), or walked by
// SMPs, partially from the start when there is one (-n hops, 1 by default)
// and in full when that fails, as libibnetdisc does.
func linkFabric(env *cmdutil.Env, client *query.Client, opts *iblinkinfoOptions, st *scanStart, walk bool) (*discovery.Fabric, error) {
	ctx := context.Background()
	hops := 0
	if opts.hops != "" {
		v, _ := ctext.Strtoul(opts.hops)
		hops = int(int32(v))
	}
	if walk && st.resolved {
		if hops == 0 {
			hops = 1
		}
		fab, err := opts.src.Scan(ctx, client, discovery.ScanOptions{MaxHops: hops, From: st.path, FromLID: st.byLID})
		if err == nil {
			return fab, nil
		}
		cmdutil.IBWarn(env, "main", "Partial fabric scan failed; attempting full scan\n")
	}
	var fab *discovery.Fabric
	var err error
	if walk && hops > 0 {
		if fab, err = opts.src.Scan(ctx, client, discovery.ScanOptions{MaxHops: hops}); err != nil {
			err = &query.SourceError{Op: "discover", Err: err}
		}
	} else {
		fab, err = opts.src.Fabric(ctx, client, query.Walk{Progress: cmdutil.ProgressLine(env)})
	}
	if err != nil {
		return nil, cmdutil.ExitWith(1, "%v", err)
	}
	return fab, nil
}

// selectNodes picks what to print: the start node of a partial scan
// (unless -a), or every node (of --switches-only/--cas-only), or the diff.
func selectNodes(lp *render.LinkPrinter, env *cmdutil.Env, fab, diffFab *discovery.Fabric, opts *iblinkinfoOptions, st *scanStart, useSA bool) {
	switch {
	case !opts.all && opts.guidSet:
		guid, _ := ctext.Strtoul(opts.guid)
		n := render.FindPortNode(fab, guid)
		if n != nil && (opts.onlyType == 0 || n.Type == opts.onlyType) {
			printOne(lp, n, diffFab, fab, opts)
		} else {
			fmt.Fprintf(env.IO.Err, "Failed to find port: %s\n", opts.guid)
		}
	case !opts.all && opts.drSet:
		var n *discovery.Node
		if st.node != nil {
			n = render.FindPortNode(fab, uint64(st.node.PortGUID))
		} else if opts.src.Live() && useSA && st.dr != nil {
			n = nodeAtDRPath(fab, st.dr)
		}
		if n != nil && (opts.onlyType == 0 || n.Type == opts.onlyType) {
			printOne(lp, n, diffFab, fab, opts)
		} else {
			fmt.Fprintf(env.IO.Err, "Failed to find port: %s\n", opts.drPath)
		}
	case diffFab != nil:
		printDiff(lp, nil, diffFab, fab, opts)
	default:
		nodes := render.AllNodes(fab)
		if opts.onlyType != 0 {
			nodes = render.TypeList(fab, opts.onlyType)
		}
		for _, n := range nodes {
			lp.Node(n, "")
		}
	}
}

// nodeAtDRPath follows a directed route over the fabric's links from
// where it was discovered (ibnd_find_port_dr).
func nodeAtDRPath(f *discovery.Fabric, path []byte) *discovery.Node {
	n := f.From
	for _, hop := range path[1:] {
		if n == nil {
			return nil
		}
		if hop == 0 {
			continue
		}
		p := n.Port(int(hop))
		if p == nil || p.Remote == nil {
			return nil
		}
		n = p.Remote.Node
	}
	return n
}

// printOne prints (or diffs) a single node, for -S/-G/-D.
func printOne(lp *render.LinkPrinter, n *discovery.Node, diffFab, fab *discovery.Fabric, opts *iblinkinfoOptions) {
	if diffFab != nil {
		printDiff(lp, n, diffFab, fab, opts)
		return
	}
	lp.Node(n, "")
}

// printDiff is diff_node: what changed from the --diff cache (fabric 1, "<")
// to now (fabric 2, ">"). Given a node (of the current fabric), only that
// node, compared with itself first, as the C tool does.
func printDiff(lp *render.LinkPrinter, node *discovery.Node, orig, cur *discovery.Fabric, opts *iblinkinfoOptions) {
	pass := func(f1, f2 *discovery.Fabric, flags int, p1, p2 string) {
		iter := func(n1 *discovery.Node) { lp.DiffNode(n1, f2, flags, p1, p2) }
		switch {
		case node != nil:
			iter(node)
		case opts.onlyType != 0:
			for _, n := range render.TypeList(f1, opts.onlyType) {
				iter(n)
			}
		default:
			for _, n := range render.AllNodes(f1) {
				iter(n)
			}
		}
	}
	if node != nil {
		pass(cur, cur, opts.diffFlags, "< ", "> ")
	} else {
		pass(orig, cur, opts.diffFlags, "< ", "> ")
	}
	pass(cur, orig, opts.diffFlags&^(render.LkDiffPort|render.LkDiffState|render.LkDiffLID|render.LkDiffNodeDesc), "> ", "< ")
}
