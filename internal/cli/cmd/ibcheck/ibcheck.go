package ibcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// The ibcheck family (python-rdma's libibtool/errors.py): checks of one
// node or port (ibchecknode, ibcheckport, ibcheckportstate,
// ibcheckportwidth, ibcheckerrs, ibdatacounts) and of every end port of
// the fabric (ibcheckstate, ibcheckwidth, ibchecknet, ibcheckerrors,
// ibdatacounters, ibclearcounters, ibclearerrors). The checks are
// internal/health's, the counters internal/counters'; records.go holds
// the report they share.

// ExitCheckFailed is python-rdma's exit code for a failed check.
const ExitCheckFailed = 100

// checkOptions are the flags of every ibcheck command.
type checkOptions struct {
	cmdutil.Common
	src            query.Source
	noColour       bool
	thresholdFile  string // -T
	showThresholds bool   // -s
	dryRun         bool   // the resets: list them, send nothing
}

// checkCommand describes one command of the family.
type checkCommand struct {
	name, short, long string
	kinds             checkKind
	ports             []health.Check // the port checks, in order
	fabric            bool           // every end port of the fabric, not one target
	dataCounts        bool           // kindPerf prints the data counters, no thresholds
	clearSelect       uint32         // kindClear: the PortCounters CounterSelect reset
}

var (
	portStateChecks = []health.Check{health.PortState}
	portWidthChecks = []health.Check{health.PortWidth}
	allPortChecks   = []health.Check{health.PortState, health.PortWidth, health.PortLink}
)

// checkCommands are the ibcheck family, by name.
var checkCommands = []checkCommand{
	{name: "ibchecknode", short: "Check one node: its NodeInfo agrees with the SA's, which has a path to it",
		kinds: kindNode},
	{name: "ibcheckport", short: "Check one port's state, width, speed, LID and SM",
		kinds: kindPort, ports: allPortChecks},
	{name: "ibcheckportstate", short: "Check that one port's link is up and Active",
		kinds: kindPort, ports: portStateChecks},
	{name: "ibcheckportwidth", short: "Check that one port runs at the best width both ends support",
		kinds: kindPort, ports: portWidthChecks},
	{name: "ibcheckstate", short: "Check every node and the state of every port", fabric: true,
		kinds: kindNode | kindPort, ports: portStateChecks},
	{name: "ibcheckwidth", short: "Check every node and the width of every port", fabric: true,
		kinds: kindNode | kindPort, ports: portWidthChecks},
	{name: "ibcheckerrs", short: "Check one port's error counters (all of a switch's by default) against thresholds",
		kinds: kindPerf},
	{name: "ibdatacounts", short: "Show one port's data counters (all of a switch's by default)",
		kinds: kindPerf, dataCounts: true},
	{name: "ibchecknet", short: "Check every node, every port's state, width and speed, and every port's error counters", fabric: true,
		kinds: kindNode | kindPort | kindPerf, ports: allPortChecks},
	{name: "ibcheckerrors", short: "Check every node, every port's state and every port's error counters", fabric: true,
		kinds: kindNode | kindPort | kindPerf, ports: portStateChecks},
	{name: "ibdatacounters", short: "Show every port's data counters", fabric: true,
		kinds: kindPerf, dataCounts: true},
	{name: "ibclearcounters", short: "Reset every counter of PortCounters on every port", fabric: true,
		kinds: kindClear, clearSelect: 0xFFFF},
	{name: "ibclearerrors", short: "Reset the error counters of PortCounters on every port", fabric: true,
		kinds: kindClear, clearSelect: query.SelectErrors},
}

// NewCmd builds the ibcheck family's command of that name.
func NewCmd(env *cmdutil.Env, name string) *cobra.Command {
	for _, k := range checkCommands {
		if k.name == name {
			return newCheckCmd(env, k)
		}
	}
	panic("ibcheck: no command " + name)
}

func newCheckCmd(env *cmdutil.Env, k checkCommand) *cobra.Command {
	opts := &checkOptions{}
	var cmd *cobra.Command
	fs := func() {
		f := cmd.Flags()
		f.BoolVarP(&opts.noColour, "nocolor", "N", false, "do not colour the verdicts")
		if k.kinds&kindPerf != 0 && !k.dataCounts {
			f.StringVarP(&opts.thresholdFile, "thresholds", "T", "", "load threshold values from this file (name=value lines)")
			if !k.fabric {
				f.BoolVarP(&opts.showThresholds, "show_thresholds", "s", false, "only show the thresholds in use")
			}
		}
		if k.kinds&kindClear != 0 {
			f.BoolVar(&opts.dryRun, "dry-run", false, "list what would be reset; send nothing")
		}
	}
	if k.fabric {
		cmd = cmdutil.ToolCommand(k.name+" [options]", k.short)
		cmd.Long = k.short + `, as python-rdma's ` + k.name + ` does: the fabric
is discovered (or read with --load-cache), then each end port is checked in
parallel. A line is printed for each node or port with something wrong (every
one with -v), then a summary. Verdicts are coloured on a terminal (-N: never).`
		cmd.Args = cmdutil.ArgsBetween(0, 0)
		fs()
		opts.src.AddFlags(cmd.Flags(), query.AllSourceFlags)
		cmdutil.SetupCommon(env, cmd, &opts.Common, "DGL")
		cmd.RunE = func(_ *cobra.Command, _ []string) error { return runFabricCheck(env, k, opts) }
		return cmd
	}
	use, lo, hi := k.name+" [options] TARGET PORT", 2, 2
	switch {
	case k.kinds == kindNode:
		use, lo, hi = k.name+" [options] TARGET", 1, 1
	case k.kinds == kindPerf:
		use, lo, hi = k.name+" [options] TARGET [PORT]", 0, 2
	}
	cmd = cmdutil.ToolCommand(use, k.short)
	cmd.Long = k.short + `, as python-rdma's ` + k.name + ` does. TARGET is a LID, a
GUID (-G), a directed route (-D) or a node's name. A line with the verdict is
printed when something is wrong (always with -v); a failed check exits 100.`
	cmd.Args = cmdutil.ArgsBetween(lo, hi)
	fs()
	exclude := ""
	if k.kinds == kindPerf {
		exclude = "s"
	}
	cmdutil.SetupCommon(env, cmd, &opts.Common, exclude)
	cmd.RunE = func(_ *cobra.Command, args []string) error { return runSingleCheck(env, k, opts, args) }
	return cmd
}

// singleCheckResult is a single-target check's result: its records.
type singleCheckResult struct {
	Records []*checkRecord `json:"checks"`
	style   checkStyle
}

func (r *singleCheckResult) WriteText(w io.Writer) error {
	for _, rec := range r.Records {
		rec.write(w, r.style)
	}
	return nil
}

func runSingleCheck(env *cmdutil.Env, k checkCommand, opts *checkOptions, args []string) error {
	c := &opts.Common
	th, err := counters.ReadThresholds(opts.thresholdFile, counters.PythonRDMA)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if opts.showThresholds {
		return cmdutil.Finish(env, c, k.name, thresholdsResult{th}, nil)
	}
	if len(args) == 0 {
		return cmdutil.UsageErrorf("a TARGET is needed")
	}
	port := 0
	if k.kinds == kindPerf {
		port = counters.AllPortSelect
	}
	if len(args) > 1 {
		n, err := strconv.ParseUint(args[1], 0, 8)
		if err != nil {
			return cmdutil.UsageErrorf("invalid port %q: a number from 0 to 255", args[1])
		}
		port = int(n)
	}
	client, err := cmdutil.IBOpenClient(env, c, cmdutil.EngineConfig{Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond})
	if err != nil {
		return err
	}
	defer client.Engine().Close()
	ctx := context.Background()
	d, err := cmdutil.IBResolve(ctx, client, c, args[0])
	if err != nil {
		return cmdutil.Fail(env, c, k.name, err)
	}
	cp, err := health.ReadPort(ctx, client, d, port, k.kinds&kindPort != 0)
	if err != nil {
		return err
	}
	res := &singleCheckResult{style: checkStyle{verbose: c.Verbose > 0, colour: colourOut(env.IO.Out, opts.noColour)}}
	if k.kinds&kindNode != 0 {
		rec := nodeRecord(ctx, client, cp, d.Kind == query.ByDR, true)
		res.Records = append(res.Records, rec)
	}
	if k.kinds&kindPort != 0 {
		res.Records = append(res.Records, portRecord(cp, k.ports))
	}
	if k.kinds&kindPerf != 0 {
		cp.Num = port
		cr := &counters.Reader{Client: client, Extended: c.JSON}
		t := counters.Target{NodeGUID: uint64(cp.Node.NodeGUID), NodeType: cp.Node.NodeType, NumPorts: int(cp.Node.NumPorts), LID: cp.EndLID, Port: port}
		res.Records = append(res.Records, counterRecord(k, cp, &cr.Read(ctx, []counters.Target{t})[0], th))
	}
	if err := cmdutil.Finish(env, c, k.name, res, nil); err != nil {
		return err
	}
	for _, rec := range res.Records {
		if rec.err != nil {
			return checkFailed(env, rec.err)
		}
	}
	return nil
}

// checkFailed ends a single check that failed: exit 100 and, through
// the tool's name, python-rdma's "E: <why>" on stderr.
func checkFailed(env *cmdutil.Env, err error) error {
	if !env.Compat {
		return &cmdutil.ExitError{Code: ExitCheckFailed, Err: err}
	}
	fmt.Fprintf(env.IO.Err, "E: %v\n", err)
	return &cmdutil.ExitError{Code: ExitCheckFailed, Err: cmdutil.ErrSilent}
}

// nodeRecord checks a node as python-rdma's do_check_node does
// (health.CheckNodeSA): the SA has a path to the end port's GUID, and it
// leads to the LID the port has; full also compares the SA's NodeRecord.
func nodeRecord(ctx context.Context, client *query.Client, p *health.Port, byGUID, full bool) *checkRecord {
	f, err := health.CheckNodeSA(ctx, client, p, byGUID, full)
	if f != nil {
		err = &checkError{nodeFindingText(f)}
	}
	return newRecord(kindNode, p, nil, err)
}

// runFabricCheck runs a fabric-wide check: every end port's node check,
// then the port checks of its ports, in fabric order.
func runFabricCheck(env *cmdutil.Env, k checkCommand, opts *checkOptions) error {
	c := &opts.Common
	th, err := counters.ReadThresholds(opts.thresholdFile, counters.PythonRDMA)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	res := &fabricCheckResult{
		kinds: k.kinds, thresholds: th,
		style: checkStyle{verbose: c.Verbose > 0, colour: colourOut(env.IO.Out, opts.noColour), errLine: true},
	}
	if err := res.check(env, k, opts); err != nil {
		return cmdutil.Finish(env, c, k.name, (*fabricCheckResult)(nil), err)
	}
	return cmdutil.Finish(env, c, k.name, res, nil)
}

func (res *fabricCheckResult) check(env *cmdutil.Env, k checkCommand, opts *checkOptions) error {
	c := &opts.Common
	if _, _, err := opts.src.Mode(); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	client, err := cmdutil.OpenSourceClient(env, c, &opts.src)
	if err == nil && client == nil && k.kinds&(kindNode|kindPerf|kindClear) != 0 {
		client, err = cmdutil.OpenClient(env, c, cmdutil.EngineConfig{Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond})
	}
	if err != nil {
		return err
	}
	if client != nil {
		defer client.Engine().Close()
	}
	ctx := context.Background()
	f, err := opts.src.Fabric(ctx, client, query.Walk{Progress: cmdutil.ProgressLine(env)})
	if err != nil {
		return err
	}
	eps := health.EndPorts(f)
	// The node checks ask the SA, the counter checks the nodes' PMAs:
	// they run at the same time, each within the engine's windows.
	nodes := make([]*checkRecord, len(eps))
	var wg sync.WaitGroup
	if k.kinds&kindNode != 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parallel(len(eps), func(i int) {
				nodes[i] = nodeRecord(ctx, client, eps[i].PortOf(eps[i].Port), false, false)
			})
		}()
	}
	recs := make([][]*checkRecord, len(eps))
	if k.kinds&kindPort != 0 {
		for i, ep := range eps {
			for _, p := range ep.LinkedPorts() {
				recs[i] = append(recs[i], portRecord(ep.PortOf(p), k.ports))
			}
		}
	}
	cr := &counters.Reader{Client: client, Extended: c.JSON}
	if k.kinds&kindPerf != 0 {
		res.counterPhase(ctx, k, cr, eps, recs, res.thresholds)
	}
	if k.kinds&kindClear != 0 {
		res.clearPhase(ctx, k, cr, eps, recs, opts.dryRun)
	}
	wg.Wait()
	for i, r := range recs {
		if nodes[i] != nil {
			res.Records = append(res.Records, nodes[i])
		}
		res.Records = append(res.Records, r...)
	}
	res.finish()
	return nil
}

// endTarget is the counter Target of an end port: a switch's sum over
// all its ports, a CA's port.
func endTarget(ep health.EndPort) (counters.Target, *health.Port) {
	cp := ep.PortOf(ep.Port)
	n := ep.Node
	t := counters.Target{NodeGUID: n.GUID, NodeType: mad.NodeType(n.Type), NumPorts: n.NumPorts, LID: ep.Port.BaseLID, Port: ep.Port.Num}
	if n.Type == discovery.NodeSwitch {
		t.Port, cp.Num = counters.AllPortSelect, counters.AllPortSelect
	}
	return t, cp
}

// switchPortTargets are the ports 1..N of a switch, for a second look
// when its all-ports check was not clean (python-rdma's scan).
func switchPortTargets(ep health.EndPort) ([]counters.Target, []*health.Port) {
	var ts []counters.Target
	var cps []*health.Port
	for n := 1; n <= ep.Node.NumPorts; n++ {
		p := ep.Node.Port(n)
		if p == nil {
			p = &discovery.Port{Node: ep.Node, Num: n}
		}
		ts = append(ts, counters.Target{NodeGUID: ep.Node.GUID, NodeType: mad.NodeTypeSwitch, NumPorts: ep.Node.NumPorts, LID: ep.Port.BaseLID, Port: n})
		cps = append(cps, ep.PortOf(p))
	}
	return ts, cps
}

// counterRecord is a counter check's record: the thresholds checked, or
// (ibdatacounts) the data counters shown.
func counterRecord(k checkCommand, cp *health.Port, read *counters.Read, th *counters.Thresholds) *checkRecord {
	if !k.dataCounts || read.Err != nil {
		return perfRecord(cp, read, th)
	}
	r := newRecord(kindPerf, cp, nil, nil)
	r.dataCounts = read.Basic
	r.setCounters(read)
	return r
}

// counterPhase checks every end port's counters at once, then the single
// ports of the switches whose sum was not clean.
func (res *fabricCheckResult) counterPhase(ctx context.Context, k checkCommand, cr *counters.Reader, eps []health.EndPort, recs [][]*checkRecord, th *counters.Thresholds) {
	targets := make([]counters.Target, len(eps))
	cps := make([]*health.Port, len(eps))
	for i, ep := range eps {
		targets[i], cps[i] = endTarget(ep)
	}
	reads := cr.Read(ctx, targets)
	var scanTargets []counters.Target
	var scanCPs []*health.Port
	var scanOwner []int
	for i := range eps {
		r := counterRecord(k, cps[i], &reads[i], th)
		recs[i] = append(recs[i], r)
		if targets[i].Port == counters.AllPortSelect && r.Status != "ok" {
			ts, ps := switchPortTargets(eps[i])
			scanTargets, scanCPs = append(scanTargets, ts...), append(scanCPs, ps...)
			for range ts {
				scanOwner = append(scanOwner, i)
			}
		}
	}
	for j, read := range cr.Read(ctx, scanTargets) {
		recs[scanOwner[j]] = append(recs[scanOwner[j]], counterRecord(k, scanCPs[j], &read, th))
	}
}

// clearPhase resets every end port's counters (a switch's all at once,
// port by port where that failed). The resets are what the command is
// for: its Write is the command itself.
func (res *fabricCheckResult) clearPhase(ctx context.Context, k checkCommand, cr *counters.Reader, eps []health.EndPort, recs [][]*checkRecord, dryRun bool) {
	w := &query.Write{By: k.name}
	targets := make([]counters.Target, len(eps))
	cps := make([]*health.Port, len(eps))
	for i, ep := range eps {
		targets[i], cps[i] = endTarget(ep)
	}
	sent, errs := cr.Clear(ctx, w, targets, k.clearSelect, dryRun)
	var again []counters.Target
	var againCPs []*health.Port
	var againOwner []int
	for i := range eps {
		recs[i] = append(recs[i], newRecord(kindClear, cps[i], nil, errs[i]))
		if errs[i] != nil && targets[i].Port == counters.AllPortSelect {
			ts, ps := switchPortTargets(eps[i])
			again, againCPs = append(again, ts...), append(againCPs, ps...)
			for range ts {
				againOwner = append(againOwner, i)
			}
		}
	}
	sent2, errs2 := cr.Clear(ctx, w, again, k.clearSelect, dryRun)
	for j, err := range errs2 {
		recs[againOwner[j]] = append(recs[againOwner[j]], newRecord(kindClear, againCPs[j], nil, err))
	}
	failed := map[resetKey]bool{}
	for _, errs := range [][]error{errs, errs2} {
		for _, err := range errs {
			var ce *query.CounterError
			if errors.As(err, &ce) {
				failed[resetKey{ce.Port.NodeGUID, ce.Port.Port}] = true
			}
		}
	}
	res.Reset = newResetDoc(append(sent, sent2...), k.clearSelect, dryRun, failed)
}
