package ibroute

// What ibroute and dump_fts share: their flags, the switches whose tables
// they read, and the reading itself (internal/routing), laid out and
// reported as the C tools do (internal/cli/render).

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
)

// ftsOptions are the options ibroute and dump_fts share.
type ftsOptions struct {
	cmdutil.Common
	all       bool // -a: invalid entries too
	brief     bool // -n: no destinations
	multicast bool // -M
	src       query.Source
}

func addFtsFlags(cmd *cobra.Command, o *ftsOptions) {
	fs := cmd.Flags()
	fs.BoolVarP(&o.all, "all", "a", false, "show all lids, even invalid entries")
	fs.BoolVarP(&o.brief, "no_dests", "n", false, "do not try to resolve destinations")
	fs.BoolVarP(&o.multicast, "Multicast", "M", false, "show multicast forwarding tables")
}

// lidArgs reads the optional start and end LIDs the way the C tools do
// (strtoul: "0x10", "16", and 0 for what does not parse).
func lidArgs(args []string) (start, end int) {
	if len(args) > 0 {
		v, _ := ctext.Strtoul(args[0])
		start = int(uint32(v))
	}
	if len(args) > 1 {
		v, _ := ctext.Strtoul(args[1])
		end = int(uint32(v))
	}
	return start, end
}

// openFtsClient opens the query client the table commands read with.
func openFtsClient(env *cmdutil.Env, c *cmdutil.Common) (*query.Client, error) {
	return cmdutil.IBOpenClient(env, c, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
}

// ftsSpec is a switch whose table is read.
type ftsSpec struct {
	dest   query.Dest
	route  string // portid2str of the route
	guid   uint64
	name   string
	nports int
	info   mad.SwitchInfo
	node   *discovery.Node // dump_fts: the switch in the walk
}

// readSwitch is a switch's table as printed, and what the C tool writes
// to stderr about it: IBWARNs ("fn: msg") and, "\x00" first, the lines
// of the blocks that failed.
type readSwitch struct {
	out      *render.FTSwitch
	warnings []string
}

// blockLine is the stderr line of a block a command could not read.
type blockLine func(s *ftsSpec, table string, e routing.BlockError) string

func ibrouteBlockLine(_ *ftsSpec, _ string, e routing.BlockError) string {
	return render.IbrouteBlockLine(e)
}

func dumpFtsBlockLine(s *ftsSpec, table string, e routing.BlockError) string {
	return render.DumpFtsBlockLine(s.node, s.name, s.route, table, e)
}

// readTables reads the tables of every switch at once, the LIDs (MLIDs)
// start..end the C tools read, and lays them out as they print them
// (destinations still to be filled in). stop: the table ends at its
// first failed block (ibroute).
func readTables(ctx context.Context, c *query.Client, specs []ftsSpec, o *ftsOptions, start, end int, stop bool, line blockLine) []*readSwitch {
	out := make([]*readSwitch, len(specs))
	targets := make([]routing.Target, len(specs))
	for i := range specs {
		s := &specs[i]
		sw := &render.FTSwitch{NodeGUID: mad.GUID(s.guid), NodeName: s.name, Route: s.route, Target: cmdutil.DestTarget(s.dest, s.route),
			NumPorts: s.nports, Brief: o.brief, All: o.all}
		out[i] = &readSwitch{out: sw}
		targets[i] = routing.Target{GUID: s.guid, Dest: s.dest, NumPorts: s.nports, Info: s.info}
		if o.multicast {
			var warns []string
			sw.FirstLID, sw.LastLID, warns = render.MulticastRange(start, end, int(s.info.MulticastFDBCap), int(s.info.MulticastFDBTop), o.all)
			for _, w := range warns {
				out[i].warnings = append(out[i].warnings, "dump_multicast_tables: "+w)
			}
			targets[i].MLIDs = render.MLIDBlocks(sw.FirstLID, sw.LastLID)
			if o.Verbose > 0 {
				sw.Verbose = fmt.Sprintf("Switch multicast mlid capability is %d top is 0x%x\n", s.info.MulticastFDBCap, s.info.MulticastFDBTop)
			}
			continue
		}
		var warn string
		sw.FirstLID, sw.LastLID, targets[i].Blocks, warn = render.UnicastRange(start, end, int(s.info.LinearFDBTop))
		if warn != "" {
			out[i].warnings = append(out[i].warnings, "dump_unicast_tables: "+warn)
		}
	}
	read := routing.ReadSwitches(ctx, c, targets, routing.Want{LFT: !o.multicast, MFT: o.multicast})
	for i, r := range out {
		sw := r.out
		var failed []routing.BlockError
		table := "LFT"
		if o.multicast {
			table = "MFT"
			sw.Multi, failed, sw.Truncated = render.MulticastTable(read[i], sw.FirstLID, sw.LastLID, o.all, stop)
		} else {
			sw.Unicast, failed, sw.Truncated = render.UnicastTable(read[i], sw.FirstLID, sw.LastLID, stop)
			sw.Unicast.All = o.all
			if sw.Unicast.Shown() == 0 {
				sw.Unicast = nil // no "unicast" in the JSON
			}
		}
		for _, e := range failed {
			l := line(&specs[i], table, e)
			if sw.Error == "" {
				sw.Error = fmt.Sprintf("%s: %v", l, e.Err)
			}
			r.warnings = append(r.warnings, "\x00"+l)
		}
	}
	return out
}

// printFtsWarnings writes the tables' stderr lines: IBWARNs and the
// failed blocks.
func printFtsWarnings(env *cmdutil.Env, switches []*readSwitch) {
	for _, sw := range switches {
		for _, w := range sw.warnings {
			if line, ok := strings.CutPrefix(w, "\x00"); ok {
				fmt.Fprintln(env.IO.Err, line)
				continue
			}
			fn, msg, _ := strings.Cut(w, ": ")
			cmdutil.IBWarn(env, fn, "%s", msg)
		}
	}
}

// result is the tables as printed.
func result(switches []*readSwitch, multicast bool) *render.FTS {
	res := &render.FTS{Multicast: multicast, Switches: make([]*render.FTSwitch, len(switches))}
	for i, sw := range switches {
		res.Switches[i] = sw.out
	}
	return res
}
