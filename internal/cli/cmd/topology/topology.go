package topology

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/topology"
)

// topology: the fabric as a scheduler wants it (Slurm's topology.conf), or
// as a Graphviz graph. An ibtool command of its own, no C counterpart.

type topologyOptions struct {
	cmdutil.Common
	src    query.Source
	format string
}

// NewCmd builds the topology command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	o := &topologyOptions{}
	cmd := &cobra.Command{
		Use:   "topology [--format slurm|slurm-yaml|dot] [options]",
		Short: "Export the fabric's switch hierarchy (Slurm topology.conf or topology.yaml, Graphviz)",
		Long: `Write the fabric as Slurm's topology.conf (--format slurm, for the
topology/tree plugin), as Slurm's topology.yaml (--format slurm-yaml, Slurm
25.05 and later: the same tree, and the blocks for the topology/block plugin)
or as a Graphviz graph (--format dot), from a walk of the fabric or from a
cache (--load-cache).

Slurm: one SwitchName line per switch, with Nodes= the hosts linked to it and
Switches= the switches one level below. Switches with hosts are level 0; a
switch's level is its distance in switch hops from the nearest of them. Host
names are the first word of the node-name-map name or of the NodeDescription
("node01" of "node01 HCA-1"); lists are compressed as Slurm writes them
(node[01-04,07]). Links between switches of one level (a torus) cannot be said
in a tree and are written as comments.

topology.yaml lists two topologies: "tree", the switches above and the
cluster's default, and "block", one block per level 0 switch with its hosts,
in tree order (Slurm pairs neighbouring blocks into larger ones), with
block_sizes the smallest block's host count times 1, 2, 4, ... A partition
takes the block topology with Topology=block in slurm.conf.

Graphviz: hosts at the bottom, each switch one rank above the switches and
hosts it reaches the hosts through (leaves, then spines, ...).

--json prints the switches with their levels and expanded lists (docs/json.md).`,
		Example: `  ibtool topology > /etc/slurm/topology.conf
  ibtool topology --load-cache fabric.cache --node-name-map /etc/rdma/ib-node-name-map
  ibtool topology --format slurm-yaml > /etc/slurm/topology.yaml
  ibtool topology --format dot | dot -Tsvg > fabric.svg`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("takes no arguments, got %q", args[0])
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.format, "format", topology.Formats[0], "output format: slurm (topology.conf), slurm-yaml (topology.yaml) or dot (Graphviz)")
	cmdutil.SetFlagValues(fs, "format", topology.Formats...)
	o.src.AddFlags(fs, query.AllSourceFlags)
	cmdutil.SetupCommon(env, cmd, &o.Common, "DGLsKe")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		res, err := runTopology(env, o)
		if err := cmdutil.Finish(env, &o.Common, "topology", res, err); err != nil || res == nil {
			return err
		}
		return cmdutil.WalkIncomplete(env, &o.Common, "topology", res.fab)
	}
	return cmd
}

// topoExport is the tree, written in the chosen format.
type topoExport struct {
	*topology.Tree
	format string
	fab    *discovery.Fabric
	names  *nodename.Map
}

func (r *topoExport) WriteText(w io.Writer) error {
	return topology.Write(w, r.format, r.fab, r.Tree, r.names)
}

func runTopology(env *cmdutil.Env, o *topologyOptions) (*topoExport, error) {
	c := &o.Common
	if err := topology.CheckFormat(o.format); err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	if _, err := c.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	if _, _, err := o.src.Mode(); err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	client, err := cmdutil.OpenSourceClient(env, c, &o.src)
	if err != nil {
		return nil, err
	}
	fab, err := o.src.Fabric(context.Background(), client, query.Walk{Progress: cmdutil.ProgressLine(env)})
	if client != nil {
		client.Engine().Close()
	}
	if err != nil {
		return nil, err
	}
	names := o.src.Names(env.IO.Err)
	return &topoExport{Tree: topology.Build(fab, names), format: o.format, fab: fab, names: names}, nil
}
