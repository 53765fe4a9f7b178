package ibroute

import (
	"context"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// NewCmd builds ibroute, dump_fts and dump_fts' old names dump_lfts
// and dump_mfts.
func NewCmd(env *cmdutil.Env, name string) *cobra.Command {
	switch name {
	case "dump_fts":
		return newDumpFtsCmd(env, "dump_fts", false, "")
	case "dump_lfts":
		return newDumpFtsCmd(env, "dump_lfts", false, "dump_fts")
	case "dump_mfts":
		return newDumpFtsCmd(env, "dump_mfts", true, "dump_fts -M")
	}
	return newIbrouteCmd(env)
}

// destTimeout is dump_lid's timeout for the queries that name a LID's
// destination (ibroute.c: 100 ms).
const destTimeout = 100 * time.Millisecond

func newIbrouteCmd(env *cmdutil.Env) *cobra.Command {
	o := &ftsOptions{}
	cmd := cmdutil.ToolCommand("ibroute [options] [<dest dr_path|lid|guid|name> [<startlid> [<endlid>]]]", "Dump the unicast or multicast forwarding table of a switch")
	cmd.Long = "ibroute reads a switch's linear (or, with -M, multicast) forwarding table and prints\n" +
		"where each LID goes. The blocks of the table are read in parallel; each destination\n" +
		"is named by its NodeDescription (or the node-name-map)."
	cmd.Example = `  ibroute 4             # LIDs with valid out ports of the switch with LID 4
  ibroute -a 4 0x10 0x20 # every LID of a range
  ibroute -G 0x08f1040023  # the switch by GUID
  ibroute -M -n 4        # its multicast table, as port masks`
	addFtsFlags(cmd, o)
	o.src.AddFlags(cmd.Flags(), query.FlagNodeNameMap)
	cmdutil.SetupCommon(env, cmd, &o.Common, "K")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmdutil.UsageErrorf("a switch is needed: <dest dr_path|lid|guid|name>")
		}
		res, err := runIbroute(env, o, args)
		return cmdutil.Finish(env, &o.Common, "ibroute", res, err)
	}
	return cmd
}

func runIbroute(env *cmdutil.Env, o *ftsOptions, args []string) (*render.FTS, error) {
	c := &o.Common
	start, end := lidArgs(args[1:])
	names := o.src.Names(env.IO.Err)
	client, err := openFtsClient(env, c)
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()
	ctx := context.Background()

	cantResolve := func(err error) error {
		code := cmdutil.ResolveCode(err)
		return &cmdutil.Failure{CMsg: "can't resolve destination port " + args[0], Err: err, Code: code, Stderr: code == cmdutil.ExitFailure}
	}
	t, err := endport.ParseTargetOrName(args[0], c.TypeFlags())
	if err != nil {
		return nil, &cmdutil.Failure{CMsg: "can't resolve destination port " + args[0], Err: err, Code: cmdutil.ExitUsage}
	}
	d, err := client.SMPDest(ctx, t)
	if err != nil {
		return nil, cantResolve(err)
	}
	spec, err := checkSwitch(ctx, client, d, names)
	if err != nil {
		return nil, err
	}
	switches := readTables(ctx, client, []ftsSpec{spec}, o, start, end, true, ibrouteBlockLine)
	if t := switches[0].out.Unicast; t != nil && !o.brief {
		t.Dests = liveDests(ctx, client, t, names)
	}
	printFtsWarnings(env, switches)
	return result(switches, o.multicast), nil
}

// checkSwitch is ibroute's check_switch: NodeInfo, NodeDescription and
// SwitchInfo of the target, which must be a switch.
func checkSwitch(ctx context.Context, c *query.Client, d query.Dest, names *nodename.Map) (ftsSpec, error) {
	fail := func(msg string, err error) error {
		return &cmdutil.Failure{CMsg: "dump tables: " + msg, Err: err, Stderr: err != nil}
	}
	var ni mad.NodeInfo
	if err := c.Get(ctx, d, 0, nil, &ni); err != nil {
		return ftsSpec{}, fail("node info failed: valid addr?", err)
	}
	var nd mad.NodeDescription
	if err := c.Get(ctx, d, 0, nil, &nd); err != nil {
		return ftsSpec{}, fail("node desc failed", err)
	}
	if ni.NodeType != mad.NodeTypeSwitch {
		return ftsSpec{}, fail("not a switch", nil)
	}
	s := ftsSpec{dest: d, route: d.String(), guid: uint64(ni.NodeGUID), nports: int(ni.NumPorts)}
	s.name = names.Name(s.guid, string(nd.NodeString[:]))
	if err := c.Get(ctx, d, 0, nil, &s.info); err != nil {
		return ftsSpec{}, fail("switch info failed: is a switch node?", err)
	}
	return s, nil
}

// liveDests asks every valid LID of a table for its NodeDescription,
// PortInfo and NodeInfo (what ibroute's dump_lid asks, one LID at a time),
// all at once. A LID that does not answer all three is left out.
func liveDests(ctx context.Context, c *query.Client, t *render.LFTText, names *nodename.Map) *render.Dests {
	dests := &render.Dests{Unknown: ": (unknown node and type)"}
	var jobs []query.Job
	for _, lid := range t.ValidLIDs() {
		jobs = append(jobs, query.Job{Dest: query.LID(uint16(lid)), Timeout: destTimeout})
	}
	if len(jobs) == 0 {
		return dests
	}
	var (
		wg  sync.WaitGroup
		nds []query.Result[mad.NodeDescription]
		pis []query.Result[mad.PortInfo]
		nis []query.Result[mad.NodeInfo]
	)
	wg.Go(func() { nds = query.FanOut[mad.NodeDescription](ctx, c, jobs) })
	wg.Go(func() { pis = query.FanOut[mad.PortInfo](ctx, c, jobs) })
	wg.Go(func() { nis = query.FanOut[mad.NodeInfo](ctx, c, jobs) })
	wg.Wait()
	dests.ByLID = make([]*render.Dest, int(jobs[len(jobs)-1].Dest.LID)+1)
	for k, j := range jobs {
		if nds[k].Err != nil || pis[k].Err != nil || nis[k].Err != nil {
			continue
		}
		ni, pi := &nis[k].Value, &pis[k].Value
		dests.ByLID[j.Dest.LID] = &render.Dest{
			NodeGUID: ni.NodeGUID, PortGUID: ni.PortGUID, NodeType: ni.NodeType,
			Port: int(ni.LocalPortNum), BaseLID: int(pi.LID), LMC: int(pi.LMC),
			Name: names.Name(uint64(ni.NodeGUID), string(nds[k].Value.NodeString[:])),
		}
	}
	return dests
}
