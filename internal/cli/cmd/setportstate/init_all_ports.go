package setportstate

// init_all_ports: reset every active link of the fabric to INIT
// (python-rdma's "ibtool init_all_ports"), to recover a subnet from a
// credit-loop deadlock: links in INIT carry only management traffic until
// the SM brings them up again. It may need to run more than once.
//
// It refuses to run without --confirm, before it sends anything.
//
// How: the fabric is walked with directed routes (and retries), then
// every link whose ends are both past INIT (Armed or Active) gets one
// SubnSet(PortInfo) with PortState Down, after which both ends retrain
// into INIT (IBA 14.2.5.6): at the switch end when the link has one, else
// at the far end of the local CA's link. The local port's link and those
// to the SM are reset too, on purpose; the farthest links go first, so
// that the SMPs to them never cross a link being retrained.
//
// Output: "Reset <port GUID>@<port> on <DR path>: PortState <before> ->
// <after>" per link; a port that fails is reported on stderr, the others
// are still reset, and the exit code is 255.
//
// JSON (--json): set_port_state's document, operation "init".

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
)

type initAllPortsOptions struct {
	cmdutil.Common
	confirm bool
}

// NewInitAllPortsCmd builds the init_all_ports command.
func NewInitAllPortsCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &initAllPortsOptions{}
	cmd := cmdutil.ToolCommand("init_all_ports --confirm [options]", "Reset every active link of the fabric to INIT")
	cmd.Long = "init_all_ports takes every Armed or Active link of the fabric down to INIT, where only\n" +
		"management traffic flows, to break a deadlock; the SM then brings the links up again.\n" +
		"All data traffic stops meanwhile: it runs only with --confirm."
	fs := cmd.Flags()
	fs.BoolVar(&opts.confirm, "confirm", false, "really reset every active link of the fabric")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DLGsK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdutil.UsageErrorf("init_all_ports takes no arguments")
		}
		res, err := runInitAllPorts(env, opts)
		return cmdutil.Finish(env, &opts.Common, "init_all_ports", res, err)
	}
	return cmd
}

func runInitAllPorts(env *cmdutil.Env, opts *initAllPortsOptions) (cmdutil.Result, error) {
	if !opts.confirm {
		return nil, cmdutil.UsageErrorf("this resets every active link of the fabric to INIT and stops all data traffic until the SM brings them up; add --confirm to do it")
	}
	// python-rdma's walk retries 10 times: links retrain under it.
	c, err := cmdutil.OpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout, RetryCount: 10})
	if err != nil {
		return nil, err
	}
	defer c.Engine().Close()
	ctx := context.Background()
	f, err := discovery.Discover(ctx, c.Engine(), discovery.Options{Mode: discovery.ModeDR, Load: discovery.LoadTopology | discovery.LoadNodeDesc, MKey: c.Options().MKey})
	if err != nil {
		return nil, fmt.Errorf("walking the fabric: %w", err)
	}
	routes := routing.DRRoutes(f, nil)
	ports := linksToReset(f, routes)
	change := portChange{name: "init", state: mad.PortStateDown, takesDown: true}
	res := &SetPortStateResult{Operation: "init", verb: "Reset"}
	// --confirm on the command line asks for these writes.
	w := &query.Write{By: "init_all_ports --confirm"}
	var errs []error
	for _, p := range ports {
		if err := resetPort(ctx, c, f, routes, p, change, w, res); err != nil {
			errs = append(errs, err)
			fmt.Fprintf(env.IO.Err, "init_all_ports: %v\n", err)
		}
	}
	if len(errs) > 0 {
		return res, &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%d of %d links could not be reset: %w", len(errs), len(ports), errors.Join(errs...))}
	}
	return res, nil
}

// linksToReset picks one end of every link whose ends are both past
// INIT: the switch end if there is one, else the far end of the local
// CA's link (a CA's SMA sets the port an SMP arrives on, and only
// switches forward directed SMPs). Farthest first.
func linksToReset(f *discovery.Fabric, routes map[*discovery.Node]routing.DRRoute) []*discovery.Port {
	seen := map[*discovery.Port]bool{}
	var out []*discovery.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || seen[p] {
				continue
			}
			seen[p], seen[p.Remote] = true, true
			if p.Info().PortState <= mad.PortStateInit || p.Remote.Info().PortState <= mad.PortStateInit {
				continue
			}
			end := p
			switch {
			case p.Node.Type == discovery.NodeSwitch:
			case p.Remote.Node.Type == discovery.NodeSwitch, p.Node == f.From:
				end = p.Remote
			}
			out = append(out, end)
		}
	}
	depth := func(p *discovery.Port) int { return len(routes[p.Node].Path) }
	sort.SliceStable(out, func(i, j int) bool { return depth(out[i]) > depth(out[j]) })
	return out
}

// resetPort sets one port's PortState to Down and adds it to res.
func resetPort(ctx context.Context, c *query.Client, f *discovery.Fabric, routes map[*discovery.Node]routing.DRRoute, p *discovery.Port, change portChange, w *query.Write, res *SetPortStateResult) error {
	path, err := routing.RouteToPort(f, routes, p)
	if err != nil {
		return err
	}
	e, raw, err := readPortEntry(ctx, c, p, path, change)
	if err != nil {
		return err
	}
	d := query.DR(path)
	after, err := setPortState(ctx, c, w, d, p.Num, raw, change)
	if err != nil {
		return fmt.Errorf("resetting %s: %w", routing.PortLabel(p), err)
	}
	e.SetAfter(after)
	res.Ports = append(res.Ports, e)
	return nil
}
