package ibroute

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
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

func addFtsFlags(cmd *cobra.Command, o *ftsOptions) {
	fs := cmd.Flags()
	fs.BoolVarP(&o.all, "all", "a", false, "show all lids, even invalid entries")
	fs.BoolVarP(&o.brief, "no_dests", "n", false, "do not try to resolve destinations")
	fs.BoolVarP(&o.multicast, "Multicast", "M", false, "show multicast forwarding tables")
}

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

func runIbroute(env *cmdutil.Env, o *ftsOptions, args []string) (*ftsResult, error) {
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
	res := &ftsResult{multicast: o.multicast}
	sw := readTables(ctx, client, []ftsSpec{spec}, o, start, end, ibrouteBlockError)[0]
	res.Switches = append(res.Switches, sw)
	if !o.multicast {
		fillDests(sw, o, liveDests(ctx, client, sw, names), ": (unknown node and type)")
	}
	printFtsWarnings(env, res)
	return res, nil
}

// openFtsClient opens the query client the table commands read with.
func openFtsClient(env *cmdutil.Env, c *cmdutil.Common) (*query.Client, error) {
	return cmdutil.IBOpenClient(env, c, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
}

// ftsSpec is a switch whose table is read.
type ftsSpec struct {
	dest     query.Dest
	route    string // portid2str of the route
	guid     uint64
	name     string
	nports   int
	smaLID   int
	switchSI mad.SwitchInfo
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
	if err := c.Get(ctx, d, 0, nil, &s.switchSI); err != nil {
		return ftsSpec{}, fail("switch info failed: is a switch node?", err)
	}
	return s, nil
}

// blockError is what a command does with a table block it could not
// read: the stderr line, and whether the table stops there.
type blockError func(s *ftsSpec, table string, status uint16, mod uint32) (line string, stop bool)

// ibrouteBlockError: ibroute says so and prints nothing more of the table.
func ibrouteBlockError(_ *ftsSpec, _ string, status uint16, mod uint32) (string, bool) {
	return fmt.Sprintf("SubnGet() failed; MAD status 0x%x AM 0x%x", status, mod), true
}

// dumpFtsBlockError: dump_fts says so and goes on with the block it read
// before (its buffer keeps that data).
func dumpFtsBlockError(s *ftsSpec, table string, status uint16, mod uint32) (string, bool) {
	return fmt.Sprintf("SubnGet(%s) failed on switch '%s' %s Node GUID 0x%x SMA LID %d; MAD status 0x%x AM 0x%x",
		table, s.name, s.route, s.guid, s.smaLID, status, mod), false
}

// madStatus is the MAD status of a failed request, 0 when none came back.
func madStatus(err error) uint16 {
	var se *rpc.StatusError
	if errors.As(err, &se) {
		return se.Reply.Status()
	}
	return 0
}

// readTables reads the tables of every switch at once and lays them out
// as the C tools print them (destinations still to be filled in).
func readTables(ctx context.Context, c *query.Client, specs []ftsSpec, o *ftsOptions, start, end int, onErr blockError) []*ftsSwitch {
	switches := make([]*ftsSwitch, len(specs))
	groups := make([][]query.Job, len(specs))
	for i := range specs {
		s := &specs[i]
		sw := &ftsSwitch{NodeGUID: mad.GUID(s.guid), NodeName: s.name, Route: s.route, Target: cmdutil.DestTarget(s.dest, s.route), NumPorts: s.nports, brief: o.brief, all: o.all}
		switches[i] = sw
		if o.multicast {
			var warns []string
			sw.FirstLID, sw.LastLID, warns = multicastRange(start, end, int(s.switchSI.MulticastFDBCap), int(s.switchSI.MulticastFDBTop), o.all)
			for _, w := range warns {
				sw.warnings = append(sw.warnings, "dump_multicast_tables: "+w)
			}
			if sw.LastLID >= sw.FirstLID {
				groups[i] = query.MFTJobs(s.dest, sw.FirstLID, sw.LastLID, s.nports)
			}
			if o.Verbose > 0 {
				sw.verbose = fmt.Sprintf("Switch multicast mlid capability is %d top is 0x%x\n", s.switchSI.MulticastFDBCap, s.switchSI.MulticastFDBTop)
			}
			continue
		}
		var firstBlock, endBlock int
		var warn string
		sw.FirstLID, sw.LastLID, firstBlock, endBlock, warn = unicastRange(start, end, int(s.switchSI.LinearFDBTop))
		if warn != "" {
			sw.warnings = append(sw.warnings, "dump_unicast_tables: "+warn)
		}
		if endBlock > firstBlock {
			groups[i] = query.LFTJobs(s.dest, firstBlock, endBlock-1)
		}
	}
	if o.multicast {
		res := query.FanOutGroups[mad.MulticastForwardingTable](ctx, c, groups)
		for i, sw := range switches {
			fillMFT(sw, &specs[i], groups[i], res[i], onErr)
		}
		return switches
	}
	res := query.FanOutGroups[mad.LinearForwardingTable](ctx, c, groups)
	for i, sw := range switches {
		fillLFT(sw, &specs[i], groups[i], res[i], onErr)
	}
	return switches
}

func fillLFT(sw *ftsSwitch, s *ftsSpec, jobs []query.Job, res []query.Result[mad.LinearForwardingTable], onErr blockError) {
	defer func() {
		if sw.Unicast.shown() == 0 {
			sw.Unicast = nil // no "unicast" in the JSON, as before
		}
	}()
	var lft mad.LinearForwardingTable // the C tools' buffer: a failed block leaves it as it was
	for k, r := range res {
		block := int(jobs[k].Mod)
		if r.Err != nil {
			line, stop := onErr(s, "LFT", madStatus(r.Err), jobs[k].Mod)
			sw.stderr(line, r.Err)
			if stop {
				sw.truncated = true
				return
			}
		} else {
			lft = r.Value
		}
		lo, hi := block*query.LIDsPerLFTBlock, (block+1)*query.LIDsPerLFTBlock
		lo, hi = max(lo, sw.FirstLID), min(hi, sw.LastLID+1)
		if lo >= hi {
			continue
		}
		if sw.Unicast == nil {
			sw.Unicast = &lftTable{first: lo, nports: s.nports, all: sw.all,
				ports: make([]byte, 0, sw.LastLID+1-lo)}
		}
		for lid := lo; lid < hi; lid++ {
			sw.Unicast.ports = append(sw.Unicast.ports, lft.Port[lid%query.LIDsPerLFTBlock])
		}
	}
}

func fillMFT(sw *ftsSwitch, s *ftsSpec, jobs []query.Job, res []query.Result[mad.MulticastForwardingTable], onErr blockError) {
	chunks := query.MFTChunks(s.nports)
	tables := make([]mad.MulticastForwardingTable, chunks) // kept across failed blocks, as in C
	for k := 0; k < len(res); k += chunks {
		for j := 0; j < chunks; j++ {
			r := res[k+j]
			if r.Err != nil {
				line, stop := onErr(s, "MFT", madStatus(r.Err), jobs[k+j].Mod)
				sw.stderr(line, r.Err)
				if stop {
					sw.truncated = true
					return
				}
				continue
			}
			tables[j] = r.Value
		}
		block := int(jobs[k].Mod&0xfffffff) + query.MinMLID/query.MLIDsPerMFTBlock
		lo, hi := block*query.MLIDsPerMFTBlock, (block+1)*query.MLIDsPerMFTBlock
		lo, hi = max(lo, sw.FirstLID), min(hi, sw.LastLID+1)
		for mlid := lo; mlid < hi; mlid++ {
			e := &mftEntry{MLID: mlid, Ports: []int{}}
			nonzero := false
			for j := range tables {
				m := tables[j].PortMask[mlid%query.MLIDsPerMFTBlock]
				e.masks = append(e.masks, m)
				nonzero = nonzero || m != 0
			}
			for p := 0; p <= s.nports; p++ {
				if e.masks[p/query.PortsPerMFTChunk]&(1<<(p%query.PortsPerMFTChunk)) != 0 {
					e.Ports = append(e.Ports, p)
				}
			}
			if nonzero || sw.all {
				sw.Multi = append(sw.Multi, e)
			}
		}
	}
}

// stderr records a line the C tool writes to stderr for this table.
func (sw *ftsSwitch) stderr(line string, err error) {
	if sw.Error == "" {
		sw.Error = fmt.Sprintf("%s: %v", line, err)
	}
	sw.warnings = append(sw.warnings, "\x00"+line)
}

// printFtsWarnings writes the tables' stderr lines: IBWARNs and the
// failed blocks.
func printFtsWarnings(env *cmdutil.Env, res *ftsResult) {
	for _, sw := range res.Switches {
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

// fillDests writes each valid LID's Destination Info from dests.
func fillDests(sw *ftsSwitch, o *ftsOptions, dests map[int]*ftsDest, unknown string) {
	if o.brief || sw.Unicast == nil {
		return
	}
	for _, dest := range dests {
		dest.jsonNodeGUID, dest.jsonPortGUID = mad.GUID(dest.nodeGUID), mad.GUID(dest.portGUID)
	}
	sw.Unicast.dests, sw.Unicast.unknown = dests, unknown
}

// liveDests asks every valid LID of a table for its NodeDescription,
// PortInfo and NodeInfo (what ibroute's dump_lid asks, one LID at a time),
// all at once. A LID that does not answer all three is left out.
func liveDests(ctx context.Context, c *query.Client, sw *ftsSwitch, names *nodename.Map) map[int]*ftsDest {
	dests := map[int]*ftsDest{}
	if sw.brief {
		return dests
	}
	var jobs []query.Job
	if sw.Unicast != nil {
		for _, lid := range sw.Unicast.validLIDs() {
			jobs = append(jobs, query.Job{Dest: query.LID(uint16(lid)), Timeout: destTimeout})
		}
	}
	var (
		wg  sync.WaitGroup
		nds []query.Result[mad.NodeDescription]
		pis []query.Result[mad.PortInfo]
		nis []query.Result[mad.NodeInfo]
	)
	wg.Add(3)
	go func() { defer wg.Done(); nds = query.FanOut[mad.NodeDescription](ctx, c, jobs) }()
	go func() { defer wg.Done(); pis = query.FanOut[mad.PortInfo](ctx, c, jobs) }()
	go func() { defer wg.Done(); nis = query.FanOut[mad.NodeInfo](ctx, c, jobs) }()
	wg.Wait()
	for k, j := range jobs {
		if nds[k].Err != nil || pis[k].Err != nil || nis[k].Err != nil {
			continue
		}
		ni, pi := &nis[k].Value, &pis[k].Value
		dests[int(j.Dest.LID)] = &ftsDest{
			nodeGUID: uint64(ni.NodeGUID), portGUID: uint64(ni.PortGUID), nodeType: ni.NodeType,
			port: int(ni.LocalPortNum), baseLID: int(pi.LID), lmc: int(pi.LMC),
			name: names.Name(uint64(ni.NodeGUID), string(nds[k].Value.NodeString[:])),
		}
	}
	return dests
}

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
		res, err := runDumpFts(env, o, args)
		err = cmdutil.Finish(env, &o.Common, name, res, err)
		if err == nil && res != nil {
			err = res.incomplete
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

func runDumpFts(env *cmdutil.Env, o *ftsOptions, args []string) (*ftsResult, error) {
	c := &o.Common
	start, end := lidArgs(args)
	names := o.src.Names(env.IO.Err)
	if _, err := c.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return nil, &cmdutil.Failure{CMsg: err.Error(), Fn: "process_opt"}
	}
	ctx := context.Background()
	walker, err := cmdutil.OpenSourceClient(env, c, &o.src)
	var fab *discovery.Fabric
	if err == nil {
		fab, err = o.src.Fabric(ctx, walker, query.Walk{Progress: cmdutil.ProgressLine(env)})
		if walker != nil {
			walker.Engine().Close()
		}
	}
	if err != nil {
		var ue *query.UsageError
		if errors.As(err, &ue) {
			return nil, cmdutil.UsageErrorf("%v", ue)
		}
		// C: "Failed to discover fabric" on stderr, exit 255.
		return nil, &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("Failed to discover fabric: %w", err)}
	}
	client, err := openFtsClient(env, c)
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()

	var specs []ftsSpec
	switches := fab.NodesOfType(discovery.NodeSwitch)
	for i := len(switches) - 1; i >= 0; i-- { // libibnetdisc's list: newest first
		n := switches[i]
		s := ftsSpec{guid: n.GUID, nports: n.NumPorts, smaLID: int(n.SMALID), name: names.Name(n.GUID, n.Desc())}
		if len(n.DRPath) > 0 {
			s.dest = query.DR(n.DRPath)
			s.route = "DR path slid 0; dlid 0; " + mad.FormatDRPath(n.DRPath)
		} else { // from a cache: no paths, the switch's LID
			s.dest = query.LID(n.SMALID)
			s.route = s.dest.String()
		}
		if err := s.switchSI.Unmarshal(n.SwitchInfo); err != nil {
			continue
		}
		specs = append(specs, s)
	}
	res := &ftsResult{multicast: o.multicast, fabric: fab, Switches: readTables(ctx, client, specs, o, start, end, dumpFtsBlockError)}
	if !o.multicast {
		dests := fabricDests(fab, names)
		for _, sw := range res.Switches {
			fillDests(sw, o, dests, ": (node info not available fabric scan)")
		}
	}
	printFtsWarnings(env, res)
	if walker != nil {
		res.incomplete = cmdutil.WalkIncomplete(env, c, "dump_fts", fab)
	}
	return res, nil
}

// fabricDests is libibnetdisc's LID map: every LID of every port's LMC
// range, the first port found keeping a LID.
func fabricDests(f *discovery.Fabric, names *nodename.Map) map[int]*ftsDest {
	dests := map[int]*ftsDest{}
	for _, n := range f.Nodes {
		name := names.Name(n.GUID, n.Desc())
		for _, p := range n.Ports {
			if p == nil || p.BaseLID == 0 || p.BaseLID > query.MaxUnicastLID {
				continue
			}
			d := &ftsDest{nodeGUID: n.GUID, portGUID: p.GUID, nodeType: mad.NodeType(n.Type), port: p.Num,
				baseLID: int(p.BaseLID), lmc: int(p.LMC), name: name}
			for lid := d.baseLID; lid <= d.baseLID+1<<d.lmc-1; lid++ {
				if dests[lid] == nil {
					dests[lid] = d
				}
			}
		}
	}
	return dests
}
