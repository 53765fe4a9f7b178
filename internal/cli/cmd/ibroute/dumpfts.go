package ibroute

// dump_fts: the forwarding tables of every switch of the fabric, and its
// old names dump_lfts and dump_mfts.

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
)

// newDumpFtsCmd is dump_fts, or one of the scripts that replaced
// themselves by it (dump_lfts, dump_mfts: dump_fts and a warning).
func newDumpFtsCmd(env *cmdutil.Env, name string, multicast bool, replacedBy string) *cobra.Command {
	o := &ftsOptions{}
	cmd := cmdutil.ToolCommand(name+" [options] [<startlid> [<endlid>]]", "Dump the forwarding tables of every switch")
	if replacedBy != "" {
		cmd.Short = "Dump the forwarding tables of every switch (the old name of " + replacedBy + ")"
	}
	cmd.Long = name + " discovers the fabric and prints the linear (or, with -M, multicast) forwarding\n" +
		"table of every switch, destinations named from the discovery. Every block of every\n" +
		"switch is read in parallel; a switch that stops answering is reported on stderr\n" +
		"and the others are printed in full."
	cmd.Example = `  dump_fts               # every switch's LIDs with valid out ports
  dump_fts -a 0x10 0x20  # every entry of a LID range
  dump_fts -M -n         # multicast tables as port masks
  dump_fts --load-cache fabric.cache  # topology from a cache, tables live`
	addFtsFlags(cmd, o)
	o.src.AddFlags(cmd.Flags(), query.FlagNodeNameMap|query.FlagLoadCache|query.FlagOutstanding|query.FlagSA)
	var dr bool
	cmd.Flags().BoolVarP(&dr, "Direct", "D", false, "walk the fabric by directed routes (python-rdma's dump_lfts -D: --discovery DR)")
	cmdutil.SetupCommon(env, cmd, &o.Common, "KGDLs")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		o.multicast = o.multicast || multicast
		if dr {
			o.src.Discovery = "DR"
		}
		res, incomplete, err := runDumpFts(env, o, args)
		err = cmdutil.Finish(env, &o.Common, name, res, err)
		if err == nil && res != nil {
			err = incomplete
		}
		if replacedBy != "" && !o.JSON {
			// The script's echo lines, whatever dump_fts did; the
			// script's status is the last echo's.
			fmt.Fprintf(env.IO.Out, "\n*** WARNING ***: this command has been replaced by %s\n\n\n", replacedBy)
			if cmdutil.ExitCodeOf(err) != cmdutil.ExitUsage {
				return nil
			}
		}
		return err
	}
	return cmd
}

// runDumpFts reads and lays out the tables; incomplete is the walk's
// verdict (cmdutil.WalkIncomplete), for after the tables are printed.
func runDumpFts(env *cmdutil.Env, o *ftsOptions, args []string) (res *render.FTS, incomplete, err error) {
	c := &o.Common
	start, end := lidArgs(args)
	names := o.src.Names(env.IO.Err)
	fab, err := cmdutil.DumpFabric(env, c, &o.src)
	if err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	client, err := openFtsClient(env, c)
	if err != nil {
		return nil, nil, err
	}
	defer client.Engine().Close()

	switches := readTables(ctx, client, fabricSwitches(fab, names), o, start, end, false, dumpFtsBlockLine)
	if !o.multicast && !o.brief {
		dests := render.FabricDests(routing.LIDMap(fab), names, ": (node info not available fabric scan)")
		for _, sw := range switches {
			if t := sw.out.Unicast; t != nil {
				t.Dests = dests
			}
		}
	}
	printFtsWarnings(env, switches)
	if o.src.Live() {
		incomplete = cmdutil.WalkIncomplete(env, c, "dump_fts", fab)
	}
	return result(switches, o.multicast), incomplete, nil
}

// fabricSwitches are the switches of the fabric whose tables dump_fts
// reads, in its order.
func fabricSwitches(fab *discovery.Fabric, names *nodename.Map) []ftsSpec {
	var specs []ftsSpec
	for _, s := range render.DumpSwitches(fab) {
		n := s.Node
		specs = append(specs, ftsSpec{node: n, dest: routing.DestOf(n), route: s.Route, guid: n.GUID, nports: n.NumPorts,
			name: names.Name(n.GUID, n.Desc()), info: s.Info})
	}
	return specs
}
