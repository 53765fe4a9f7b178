package perfquery

// perfquery: PerfMgt counters of one port, as infiniband-diags 44's
// perfquery reads and prints them, with the same MADs in the same order:
// PortCounters (default), PortCountersExtended (-x), every other counter
// group the C tool knows (-X -S -D -E -T -c and the long-only options), a
// sum over all ports (-a: AllPortSelect, or ibtool adding the ports up),
// one block per port (-l), port lists ("1,4,8") and ranges ("1-10"), and
// counter resets (-r after reading, -R instead of reading; a RESET_MASK
// argument chooses the counters, split into CounterSelect and
// CounterSelect2 as perfquery.c does). Resets are the only fabric writes
// and happen only with -r or -R; --dry-run sends none. As "ibtool
// perfquery" (and with --dry-run) one line on stderr says what was (or
// would be) reset.
//
// Target: a LID (default, -L), a port GUID (-G), a directed route
// (--Direct, or any argument with a comma; turned into a LID with the SA's
// LinkRecords: GMPs cannot travel directed routes) or, without an
// argument, the local port. GMPs go on the SA's PathRecord path; when the
// SA has no path for a LID target (no SM, SA down) they go straight to the
// LID on SL 0, as the C tool always does.
//
// Default port: as in perfquery.c, the local port's number without a
// target, port 0 with one. When a PMA refuses PortSelect 0 (IBA CAs may
// only count the port the MAD arrived on; ibsim answers status 0x1C),
// ibtool asks the target's NodeInfo which port that is and uses it, where
// the C tool fails.
//
// -a on a PMA without AllPortSelect: ibtool reads the ports in parallel and
// adds them up, saturating each counter at its width, as perfquery.c and
// python-rdma do. On a CA with more than one port this is refused: a CA's
// PMA counts the port the MAD arrives on, so PortSelect cannot reach the
// others (python-rdma refuses it on every CA; with one port the sum is that
// port, as the C tool prints it). -l reads every port (0 too on a switch
// with an enhanced port 0) and prints each. Reads of several ports go out
// at once (query.FanOut); resets are sent one port after the other (each a
// query Set allowed by -r or -R), stopping at the first failure, as in the
// C tool.
//
// Failures: in compat use (invoked as "perfquery") the C tool's IBEXIT line
// on stdout ("perfquery: iberror: failed: classportinfo query") and exit
// 255, with our explanation on stderr where the C tool writes there too
// (timeouts, unresolvable targets) or with -v/-e/-d. As "ibtool perfquery"
// the explanation goes to stderr, and malformed arguments exit 2.
//
// Deliberate differences from the C tool: numbers must parse completely (C
// reads "1x" as 1 and "x" as 0); --Direct and directed-route targets,
// -F/--flow, --vl-xmit-errs, --vl-xmit-wait and --vl-congestion
// (python-rdma's spellings) are accepted; the two cases above where the C
// tool fails or sums the wrong counters.
//
// JSON (--json): {"target" {"lid", "guid"|"gid"|"dr_path" (what the user
// gave), "text" (the C title's "Lid 2")}, "capability_mask",
// "capability_mask_names", "capability_mask2" (PerfMgt ClassPortInfo),
// "attribute" (the counter group read: "PortCounters",
// "PortCountersExtended", "PortRcvErrorDetails", ...,
// "PortExtendedSpeedsCountersRSFEC"), "counters" [{"port" (PortSelect; 255
// = all ports), "summed_ports" (the ports ibtool added up, when it did),
// "values" (the attribute as mad's JSON, plus <name>_bytes = 4 x the
// 4-octet data counters)}], "reset" {"attribute", "ports",
// "counter_select", "counter_select2"} (with -r/-R)}.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

// PerfDataOffset is where PerfMgt attribute data starts in a MAD (IBA
// 16.1.1: 40 reserved bytes after the common header); the tests read the
// reset MADs' selects there.
const PerfDataOffset = 64

// perfGroup is a counter group selected by an option; anything but the
// default PortCounters/PortCountersExtended. perfGroups is in perfquery.c's
// order, which is also the order of precedence when several are given.
type perfGroup struct {
	long, short string
	usage       string
	attr        string // the structure in internal/mad, and the C tool's name for it
	kind        perfGroupKind
}

type perfGroupKind int

const (
	groupCommon perfGroupKind = iota
	groupExtSpeeds
	groupSamplesControl
)

var perfGroups = []perfGroup{
	{"xmtsl", "X", "show Xmt SL port counters", "PortXmitDataSL", groupCommon},
	{"rcvsl", "S", "show Rcv SL port counters", "PortRcvDataSL", groupCommon},
	{"xmtdisc", "D", "show Xmt Discard Details", "PortXmitDiscardDetails", groupCommon},
	{"rcverr", "E", "show Rcv Error Details", "PortRcvErrorDetails", groupCommon},
	{"extended_speeds", "T", "show port extended speeds counters", "PortExtendedSpeedsCounters", groupExtSpeeds},
	{"oprcvcounters", "", "show Rcv Counters per Op code", "PortOpRcvCounters", groupCommon},
	{"flowctlcounters", "", "show flow control counters", "PortFlowCtlCounters", groupCommon},
	{"vloppackets", "", "show packets received per Op code per VL", "PortVLOpPackets", groupCommon},
	{"vlopdata", "", "show data received per Op code per VL", "PortVLOpData", groupCommon},
	{"vlxmitflowctlerrors", "", "show flow control update errors per VL", "PortVLXmitFlowCtlUpdateErrors", groupCommon},
	{"vlxmitcounters", "", "show ticks waiting to transmit counters per VL", "PortVLXmitWaitCounters", groupCommon},
	{"swportvlcong", "", "show sw port VL congestion", "SwPortVLCongestion", groupCommon},
	{"rcvcc", "", "show Rcv congestion control counters", "PortRcvConCtrl", groupCommon},
	{"slrcvfecn", "", "show SL Rcv FECN counters", "PortSLRcvFECN", groupCommon},
	{"slrcvbecn", "", "show SL Rcv BECN counters", "PortSLRcvBECN", groupCommon},
	{"xmitcc", "", "show Xmit congestion control counters", "PortXmitConCtrl", groupCommon},
	{"vlxmittimecc", "", "show VL Xmit Time congestion control counters", "PortVLXmitTimeCong", groupCommon},
	{"smplctl", "c", "show samples control", "PortSamplesControl", groupSamplesControl},
}

// perfGroupAliases are python-rdma's spellings of some groups.
var perfGroupAliases = []struct{ long, short, group string }{
	{"flow", "F", "flowctlcounters"},
	{"vl-xmit-errs", "", "vlxmitflowctlerrors"},
	{"vl-xmit-wait", "", "vlxmitcounters"},
	{"vl-congestion", "", "swportvlcong"},
}

type perfqueryOptions struct {
	cmdutil.Common
	extended  bool
	groups    []bool // indexed like perfGroups
	allPorts  bool
	loopPorts bool
	reset     bool
	resetOnly bool
	dryRun    bool
}

// NewCmd builds the perfquery command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &perfqueryOptions{groups: make([]bool, len(perfGroups))}
	cmd := cmdutil.ToolCommand("perfquery [options] [<lid|guid> [[port(s)] [reset_mask]]]", "Query (and reset) the performance counters of a port")
	cmd.Long = "perfquery reads the PerfMgt counters of a port the way infiniband-diags prints them.\n" +
		"-r and -R reset counters (a fabric write); with --json it prints the counters with explicit units."
	cmd.Example = `  perfquery                 # read local port's performance counters
  perfquery 32 1            # read performance counters from lid 32, port 1
  perfquery -x 32 1         # read extended performance counters from lid 32, port 1
  perfquery -a 32           # read performance counters from lid 32, all ports
  perfquery -r 32 1         # read performance counters and reset
  perfquery -x -r 32 1      # read extended performance counters and reset
  perfquery -R 0x20 1       # reset performance counters of port 1 only
  perfquery -x -R 0x20 1    # reset extended performance counters of port 1 only
  perfquery -R -a 32        # reset performance counters of all ports
  perfquery -R 32 2 0x0fff  # reset only error counters of port 2
  perfquery -R 32 2 0xf000  # reset only non-error counters of port 2
  perfquery -a 32 1-10      # read performance counters from lid 32, port 1-10, aggregate output
  perfquery -l 32 1-10      # read performance counters from lid 32, port 1-10, output each port
  perfquery -a 32 1,4,8     # read performance counters from lid 32, port 1, 4, and 8, aggregate output
  perfquery -l 32 1,4,8     # read performance counters from lid 32, port 1, 4, and 8, output each port`
	fs := cmd.Flags()
	fs.BoolVarP(&opts.extended, "extended", "x", false, "show extended port counters")
	for i, g := range perfGroups {
		if g.kind == groupSamplesControl {
			continue // after the counter groups, as in perfquery.c's table
		}
		fs.BoolVarP(&opts.groups[i], g.long, g.short, false, g.usage)
	}
	for i, g := range perfGroups {
		if g.kind == groupSamplesControl {
			fs.BoolVarP(&opts.groups[i], g.long, g.short, false, g.usage)
		}
	}
	fs.BoolVarP(&opts.allPorts, "all_ports", "a", false, "show aggregated counters")
	fs.BoolVarP(&opts.loopPorts, "loop_ports", "l", false, "iterate through each port")
	fs.BoolVarP(&opts.reset, "reset_after_read", "r", false, "reset counters after read")
	fs.BoolVarP(&opts.resetOnly, "Reset_only", "R", false, "only reset counters")
	fs.BoolVar(&opts.dryRun, "dry-run", false, "with -r/-R: say what would be reset, reset nothing")
	for _, a := range perfGroupAliases {
		for i, g := range perfGroups {
			if g.long == a.group {
				fs.BoolVarP(&opts.groups[i], a.long, a.short, false, "same as --"+g.long+" (python-rdma's name)")
			}
		}
	}
	// -D is --xmtdisc here, so directed routes take the long option only.
	fs.BoolVar(&opts.Direct, "Direct", false, "use Direct address argument (a DR path, resolved to a LID through the SA)")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runPerfquery(env, opts, args)
	}
	return cmd
}

// madFailure is a failed MAD: the C tool writes libibmad's "_do_madrpc
// failed" warning to stderr for a lost MAD, nothing for a bad status.
func madFailure(fn, cmsg, what string, err error) *cmdutil.Failure {
	var te *rpc.TimeoutError
	return &cmdutil.Failure{Fn: fn, CMsg: cmsg, What: what, Err: err, Stderr: errors.As(err, &te)}
}

// perfTarget is where the counters come from; Text is libibmad's
// portid2str, as in the titles.
type perfTarget = jsonv.Target

// PerfqueryResult is perfquery's result: its JSON, and the text blocks.
type PerfqueryResult struct {
	Target               perfTarget     `json:"target"`
	CapabilityMask       uint16         `json:"capability_mask"`
	CapabilityMaskNames  []string       `json:"capability_mask_names"`
	CapabilityMask2      uint32         `json:"capability_mask2"`
	CapabilityMask2Names []string       `json:"capability_mask2_names"`
	Attribute            string         `json:"attribute"`
	Counters             []PerfCounters `json:"counters"`
	Reset                *perfReset     `json:"reset,omitempty"`

	blocks []perfBlock // the text, one block per counters entry
}

type PerfCounters struct {
	Port        int             `json:"port"`
	SummedPorts []int           `json:"summed_ports,omitempty"`
	Values      json.RawMessage `json:"values"`
}

type perfReset struct {
	DryRun         bool   `json:"dry_run,omitempty"`
	Attribute      string `json:"attribute"`
	Ports          []int  `json:"ports"`
	CounterSelect  uint64 `json:"counter_select"`
	CounterSelect2 uint32 `json:"counter_select2"`
}

// perfBlock is one block of perfquery's text: the C tool's title, then
// the attribute's dump as far as libibmad's buffer of size bytes holds it.
type perfBlock struct {
	title string
	value mad.Struct
	opts  *mad.DottedOptions
	size  int
}

func (r *PerfqueryResult) WriteText(w io.Writer) error {
	for _, b := range r.blocks {
		if _, err := io.WriteString(w, b.title+ibmadBuffer(mad.Dotted(b.value, b.opts), b.size)); err != nil {
			return err
		}
	}
	return nil
}

// perfQuery is one perfquery run.
type perfQuery struct {
	env    *cmdutil.Env
	opts   *perfqueryOptions
	ctx    context.Context
	client *query.Client
	write  *query.Write // -r or -R: the permission to reset

	dest   query.Dest // where the GMPs go
	target perfTarget

	port          int   // PortSelect (perfquery.c's info.port)
	portDefaulted bool  // no port argument for a remote target: port 0
	ports         []int // a port list or range (perfquery.c's info.ports)
	nargs         int   // positional arguments (perfquery.c's argc)
	mask          uint32
	extMask       uint64

	cap  mad.PerfCapMask
	cap2 uint32

	res PerfqueryResult
}

func runPerfquery(env *cmdutil.Env, opts *perfqueryOptions, args []string) error {
	q := &perfQuery{env: env, opts: opts, ctx: context.Background(), mask: 0xffff, extMask: ^uint64(0), nargs: len(args)}
	err := q.run(args)
	var f *cmdutil.Failure
	var ee *cmdutil.ExitError
	if err != nil && !errors.As(err, &f) && !errors.As(err, &ee) {
		err = &cmdutil.Failure{Fn: "main", CMsg: err.Error()}
	}
	if r := q.res.Reset; err == nil && r != nil && (!env.Compat || opts.dryRun) {
		defer fmt.Fprintln(env.IO.Err, q.resetLine())
	}
	return cmdutil.Finish(env, &opts.Common, "perfquery", &q.res, err)
}

// resetLine is the one line that says what -r/-R reset (or, with
// --dry-run, would reset): as "ibtool perfquery", and with --dry-run.
func (q *perfQuery) resetLine() string {
	r := q.res.Reset
	ports := make([]string, len(r.Ports))
	for i, p := range r.Ports {
		ports[i] = strconv.Itoa(p)
		if p == counters.AllPortSelect {
			ports[i] = "255 (all)"
		}
	}
	what := fmt.Sprintf("%s of %s port %s (CounterSelect 0x%x, CounterSelect2 0x%x)",
		r.Attribute, q.target.Text, strings.Join(ports, ","), r.CounterSelect, r.CounterSelect2)
	if q.opts.dryRun {
		return "perfquery: --dry-run: would reset " + what + "; nothing sent"
	}
	return "perfquery: reset " + what
}

// set sends a reset, unless --dry-run.
func (q *perfQuery) set(s mad.Struct) error {
	if q.opts.dryRun {
		return nil
	}
	return q.client.Set(q.ctx, q.write, q.dest, 0, s, nil)
}

func (q *perfQuery) run(args []string) error {
	opts := q.opts
	// -t is checked while the options are parsed, before anything else.
	if _, err := opts.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return &cmdutil.Failure{Fn: "process_opt", CMsg: err.Error()}
	}
	if opts.allPorts {
		q.port = counters.AllPortSelect
	}
	if len(args) > 1 {
		if err := q.parsePorts(args[1]); err != nil {
			return err
		}
	}
	if len(args) > 2 {
		v, err := endport.ParseUint(args[2], 64)
		if err != nil {
			return cmdutil.UsageErrorf("invalid reset mask %q: %v", args[2], err)
		}
		q.extMask, q.mask = v, uint32(v)
	}
	switch {
	case opts.resetOnly:
		q.write = &query.Write{By: "perfquery -R"}
	case opts.reset:
		q.write = &query.Write{By: "perfquery -r"}
	}

	client, err := cmdutil.OpenClient(q.env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) {
			return err
		}
		ca := opts.CA
		if ca == "" {
			ca = "(null)"
		}
		return &cmdutil.Failure{Fn: "main", CMsg: fmt.Sprintf("Failed to open '%s' port '%s'", ca, ctext.OrZero(opts.Port)), Err: err, Stderr: true}
	}
	defer client.Engine().Close()
	q.client = client

	if err := q.resolveTarget(args); err != nil {
		return err
	}
	q.res.Target = q.target

	// PerfMgt ClassPortInfo is mandatory; its capability masks decide what
	// the PMA can do and what perfquery prints. pma_query_via puts the
	// PortSelect in data byte 1 of every request, here ClassVersion's.
	var cpi mad.ClassPortInfo
	if err := q.client.GetClass(q.ctx, mad.ClassPerf, q.dest, 0, &mad.ClassPortInfo{ClassVersion: uint8(q.port)}, &cpi); err != nil {
		return madFailure("main", "classportinfo query", "reading the PerfMgt ClassPortInfo of "+q.target.Text, err)
	}
	q.cap, q.cap2 = mad.PerfCapMask(cpi.CapabilityMask), cpi.CapabilityMask2
	q.res.CapabilityMask, q.res.CapabilityMask2 = cpi.CapabilityMask, cpi.CapabilityMask2
	q.res.CapabilityMaskNames = jsonv.MaskNames(uint64(q.cap), "PerfCapMask")
	q.res.CapabilityMask2Names = jsonv.MaskNames(uint64(q.cap2), "PerfCapMask2")
	q.res.Counters = []PerfCounters{}

	allPortsLoop := false
	if q.cap&mad.PerfCapMaskAllPortSelect == 0 && q.port == counters.AllPortSelect {
		if !opts.allPorts {
			return &cmdutil.Failure{Fn: "main", CMsg: "AllPortSelect not supported",
				What: fmt.Sprintf("port 255 (all ports): the PMA of %s has no AllPortSelect; use -a to add the ports up", q.target.Text)}
		}
		allPortsLoop = true
	}
	for i := range perfGroups {
		if opts.groups[i] {
			return q.group(&perfGroups[i])
		}
	}
	return q.counters(allPortsLoop)
}

// parsePorts reads the port argument: "3", a list "1,4,8" or a range
// "1-10", as perfquery.c does (but numbers must be numbers).
func (q *perfQuery) parsePorts(s string) error {
	port := func(t string) (int, error) {
		v, err := endport.ParseUint(t, 8)
		if err != nil {
			return 0, cmdutil.UsageErrorf("invalid port %q in %q: %v", t, s, err)
		}
		return int(v), nil
	}
	switch {
	case strings.Contains(s, ","):
		for _, t := range strings.Split(s, ",") {
			if t == "" {
				continue // strtok skips empty tokens
			}
			p, err := port(t)
			if err != nil {
				return err
			}
			q.ports = append(q.ports, p)
		}
		if len(q.ports) == 0 {
			return cmdutil.UsageErrorf("no port in %q", s)
		}
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		pmin, err := port(lo)
		if err != nil {
			return err
		}
		pmax, err := port(hi)
		if err != nil {
			return err
		}
		if pmin >= pmax {
			return &cmdutil.Failure{Fn: "main", CMsg: "max port must be greater than min port in range", Code: cmdutil.ExitUsage}
		}
		for p := pmin; p <= pmax; p++ {
			q.ports = append(q.ports, p)
		}
	default:
		p, err := port(s)
		if err != nil {
			return err
		}
		q.port = p
		return nil
	}
	q.port = q.ports[0]
	return nil
}

// resolveTarget finds where the GMPs go: the SA's path to the target, or,
// for a LID (or the local port) the SA has no path to, the LID itself.
func (q *perfQuery) resolveTarget(args []string) error {
	if len(args) == 0 {
		local, err := q.client.Local()
		if err != nil {
			return &cmdutil.Failure{Fn: "main", CMsg: "can't resolve self port (null)", What: "reading the local port", Err: err, Stderr: true}
		}
		q.port = local.Num // perfquery.c's resolve_self: also with -a
		q.target = perfTarget{Route: jsonv.RouteLID, LID: local.LID}
		q.dest = q.pathOrLID(local.LID)
		q.target.Text = q.dest.String()
		return nil
	}
	cantResolve := func(err error, code int) error {
		return &cmdutil.Failure{Fn: "main", CMsg: "can't resolve destination port " + args[0], Err: err, Stderr: code != cmdutil.ExitUsage, Code: code}
	}
	t, err := endport.ParseTargetOrName(args[0], q.opts.TypeFlags())
	if err != nil {
		return cantResolve(err, cmdutil.ExitUsage)
	}
	if len(args) < 2 && !q.opts.allPorts {
		q.portDefaulted = true
	}
	if t.Kind == endport.ByLID {
		q.dest = q.pathOrLID(t.LID)
	} else if q.dest, err = q.client.GMPDest(q.ctx, t); err != nil {
		return cantResolve(err, cmdutil.ResolveCode(err))
	}
	q.target = cmdutil.WithGiven(perfTarget{Route: jsonv.RouteLID, LID: q.dest.LID, Text: q.dest.String()}, t)
	if t.Kind == endport.ByDRPath {
		q.target.DRPath = mad.FormatDRPath(t.DRPath)
	}
	if q.target.LID == 0 && q.target.GID != nil {
		q.target.Route = jsonv.RouteGID // RoCE: no LIDs, the GID is the address
	}
	return nil
}

// pathOrLID is the SA's path to a LID, or the LID itself on SL 0 when the
// SA cannot give one (the C tool never asks).
func (q *perfQuery) pathOrLID(lid uint16) query.Dest {
	d, err := q.client.GMPDestOrLID(q.ctx, lid)
	if err != nil && q.opts.Verbose > 0 {
		fmt.Fprintf(q.env.IO.Err, "perfquery: no SA path to LID %d (%v); sending to the LID on SL 0\n", lid, err)
	}
	return d
}

// pmaGet reads s's attribute of a port.
func (q *perfQuery) pmaGet(port int, s mad.Struct) error {
	return q.client.Get(q.ctx, q.dest, 0, query.PortSelect(s.Desc(), port), s)
}

// smpGet is a LID-routed SubnGet to the target (smp_query_via).
func (q *perfQuery) smpGet(mod uint32, s mad.Struct) error {
	return q.client.Get(q.ctx, query.LID(q.dest.LID), mod, nil, s)
}

// onPort runs op on port; when the port was only perfquery's default 0 and
// the PMA refuses it (status 0x1C: invalid attribute or modifier), it runs
// op again on the port the target's NodeInfo names, and keeps that port.
func (q *perfQuery) onPort(port int, op func(port int) error) (int, error) {
	err := op(port)
	var se *rpc.StatusError
	if err == nil || port != 0 || !q.portDefaulted || !errors.As(err, &se) || se.Reply.Status()&0x1C != 0x1C {
		return port, err
	}
	q.portDefaulted = false
	var ni mad.NodeInfo
	if nerr := q.smpGet(0, &ni); nerr != nil || ni.NodeType == mad.NodeTypeSwitch || ni.LocalPortNum == 0 {
		return port, err
	}
	if q.opts.Verbose > 0 {
		fmt.Fprintf(q.env.IO.Err, "perfquery: %s refuses PortSelect 0; using port %d, the port its LID belongs to\n", q.target.Text, ni.LocalPortNum)
	}
	q.port = int(ni.LocalPortNum)
	return q.port, op(q.port)
}

// counters reads (and resets) PortCounters, or PortCountersExtended with
// -x: one port, a list, every port one by one (-l) or added up (-a).
func (q *perfQuery) counters(allPortsLoop bool) error {
	opts := q.opts
	name, fn, cmsg := "PortCounters", "dump_perfcounters", "perfquery"
	if opts.extended {
		name, cmsg = "PortCountersExtended", "perfextquery"
		if q.cap&(mad.PerfCapMaskExtWidth|mad.PerfCapMaskExtWidthNoIETF) == 0 && !opts.resetOnly {
			fmt.Fprintf(q.env.IO.Err, "perfquery: warning: PerfMgt ClassPortInfo CapMask 0x%02X; No extended counter support indicated\n", uint16(q.cap))
		}
	}
	q.res.Attribute = name
	desc := mad.LookupStruct(name)

	loopAll := allPortsLoop || opts.loopPorts && (opts.allPorts || q.port == counters.AllPortSelect)
	emulate := allPortsLoop && !opts.loopPorts
	var every []int
	if loopAll {
		var ni mad.NodeInfo
		if err := q.smpGet(0, &ni); err != nil {
			return madFailure("main", "smp query nodeinfo failed", "reading the NodeInfo of "+q.target.Text, err)
		}
		if ni.NumPorts == 0 {
			return &cmdutil.Failure{Fn: "main", CMsg: "smp query nodeinfo: num ports invalid", What: q.target.Text + " reports 0 ports"}
		}
		start := 1
		if ni.NodeType == mad.NodeTypeSwitch {
			var si mad.SwitchInfo
			if err := q.smpGet(0, &si); err != nil {
				return madFailure("main", "smp query nodeinfo failed", "reading the SwitchInfo of "+q.target.Text, err)
			}
			if si.EnhancedPort0 != 0 {
				start = 0
			}
		} else if emulate && ni.NumPorts > 1 {
			// The C tool tries, and its MAD to the second port fails
			// (the PMA answers status 0x1c): IBEXIT from the loop.
			if opts.resetOnly {
				fn, cmsg = "reset_counters", "perf reset"
				if opts.extended {
					cmsg = "perf ext reset"
				}
			}
			return &cmdutil.Failure{Fn: fn, CMsg: cmsg,
				What:   fmt.Sprintf("-a on %s: a CA with %d ports counts only the port a MAD arrives on, so its ports cannot be added up through one LID; query each port's own LID", q.target.Text, ni.NumPorts),
				Stderr: true}
		}
		if emulate {
			fmt.Fprintf(q.env.IO.Err, "perfquery: Emulating AllPortSelect by iterating through all ports\n")
		}
		for p := start; p <= int(ni.NumPorts); p++ {
			every = append(every, p)
		}
	}

	if !opts.resetOnly {
		var err error
		switch {
		case loopAll:
			err = q.readPorts(desc, every, emulate, fn, cmsg)
		case len(q.ports) > 1:
			err = q.readPorts(desc, q.ports, opts.allPorts && !opts.loopPorts, fn, cmsg)
		default:
			err = q.readPorts(desc, nil, false, fn, cmsg)
		}
		if err != nil {
			return err
		}
	}
	if q.write == nil {
		return nil
	}

	mask := q.mask
	if q.nargs <= 2 && !opts.extended {
		if q.cap&mad.PerfCapMaskXmitWait != 0 {
			mask |= 1 << 16
		}
		if q.cap&mad.PerfCapMaskQP1Dropped != 0 {
			mask |= 1 << 17
		}
	}
	if opts.extended {
		mask |= 0xfff0000
		if q.cap&mad.PerfCapMaskXmitWait != 0 {
			mask |= 1 << 28
		}
		if q.cap&mad.PerfCapMaskQP1Dropped != 0 {
			mask |= 1 << 29
		}
	}
	cmsg = "perf reset"
	if opts.extended {
		cmsg = "perf ext reset"
	}
	ports := []int{q.port}
	switch {
	case loopAll:
		ports = every
	case len(q.ports) > 1:
		ports = q.ports
	}
	return q.resetPorts(desc, ports, mask, "reset_counters", cmsg)
}

// readPorts reads desc's attribute of ports (nil: q.port alone, with the
// default port rule) all at once, then prints each in port order, or their
// sum as port 255. The first port that fails ends it, after the ports
// before it were printed, as in the C tool.
func (q *perfQuery) readPorts(desc *mad.StructDesc, ports []int, sum bool, fn, cmsg string) error {
	var vals []mad.Struct
	var errs []error
	switch {
	case ports == nil:
		s := desc.New()
		p, err := q.onPort(q.port, func(p int) error { return q.pmaGet(p, s) })
		ports, vals, errs = []int{p}, []mad.Struct{s}, []error{err}
	case desc.AttrID == mad.AttrPortCountersExtended:
		vals, errs = fanOutPorts[mad.PortCountersExtended](q, ports)
	default:
		vals, errs = fanOutPorts[mad.PortCounters](q, ports)
	}
	for i, p := range ports {
		if errs[i] != nil {
			return madFailure(fn, cmsg, fmt.Sprintf("reading the %s of %s port %d", desc.Name, q.target.Text, p), errs[i])
		}
		if pc, ok := vals[i].(*mad.PortCounters); ok && q.cap&mad.PerfCapMaskXmitWait == 0 {
			if q.opts.Verbose > 0 {
				fmt.Fprintf(q.env.IO.Err, "perfquery: PortXmitWait not indicated so ignore this counter\n")
			}
			pc.PortXmitWait = 0
		}
		if !sum {
			q.addPortCounters(vals[i], p, nil)
		}
	}
	if sum {
		total := desc.New()
		for _, v := range vals {
			counters.Add(total, v)
		}
		if err := mad.Set(total, "PortSelect", counters.AllPortSelect); err != nil {
			return err
		}
		q.addPortCounters(total, counters.AllPortSelect, ports)
	}
	return nil
}

// fanOutPorts reads attribute T of every port through query.FanOut: all
// in flight at once, within the engine's windows.
func fanOutPorts[T any, P query.Struct[T]](q *perfQuery, ports []int) ([]mad.Struct, []error) {
	jobs := make([]query.Job, len(ports))
	for i, p := range ports {
		jobs[i] = query.Job{Dest: q.dest, In: query.PortSelect(P(new(T)).Desc(), p)}
	}
	res := query.FanOut[T, P](q.ctx, q.client, jobs)
	vals, errs := make([]mad.Struct, len(res)), make([]error, len(res))
	for i := range res {
		vals[i], errs[i] = P(&res[i].Value), res[i].Err
	}
	return vals, errs
}

// addPortCounters adds PortCounters or PortCountersExtended to the result,
// under perfquery's title.
func (q *perfQuery) addPortCounters(s mad.Struct, port int, summed []int) {
	if _, ok := s.(*mad.PortCountersExtended); ok {
		var opts mad.DottedOptions
		if q.cap&mad.PerfCapMaskExtWidth != 0 {
			opts.Groups = append(opts.Groups, "ExtWidth")
		}
		if q.cap2&uint32(mad.PerfCapMask2AddlPortCountersExt) != 0 {
			opts.Groups = append(opts.Groups, "AdditionalCounters")
		}
		q.add(fmt.Sprintf("# Port extended counters: %s port %d (CapMask: 0x%02X CapMask2: 0x%07X)\n", q.target.Text, port, uint16(q.cap), q.cap2),
			s, port, summed, &opts, 1536)
		return
	}
	q.add(fmt.Sprintf("# Port counters: %s port %d (CapMask: 0x%02X)\n", q.target.Text, port, uint16(q.cap)), s, port, summed, nil, 1536)
}

// add appends a block of counters to the result: text and JSON.
func (q *perfQuery) add(title string, s mad.Struct, port int, summed []int, opts *mad.DottedOptions, size int) {
	q.res.blocks = append(q.res.blocks, perfBlock{title: title, value: s, opts: opts, size: size})
	q.res.Counters = append(q.res.Counters, PerfCounters{Port: port, SummedPorts: summed, Values: counters.JSON(s)})
}

// ibmadBuffer cuts a dotted dump where libibmad's _dump_fields runs out of
// perfquery's buffer of size bytes: each line gets the room left (less one
// byte for its newline and one for the NUL), and no line starts with 32
// bytes or fewer left. It matters for -T with large counters on 40 lines.
func ibmadBuffer(text string, size int) string {
	var b strings.Builder
	room := size
	for _, line := range strings.SplitAfter(text, "\n") {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || room-1 <= 32 {
			break
		}
		if len(line) > room-2 {
			line = line[:room-2]
		}
		b.WriteString(line)
		b.WriteByte('\n')
		room -= len(line) + 1
	}
	return b.String()
}

// resetPorts resets the counters mask selects on each port, one Set after
// the other, stopping at the first failure, as the C tool does.
func (q *perfQuery) resetPorts(desc *mad.StructDesc, ports []int, mask uint32, fn, cmsg string) error {
	if mask == 0 {
		mask = ^uint32(0)
	}
	hi := mask >> 16
	if desc.AttrID != mad.AttrPortCountersExtended {
		hi &= 0xff
	}
	rs := &perfReset{DryRun: q.opts.dryRun, Attribute: desc.Name, Ports: []int{}, CounterSelect: uint64(uint16(mask)), CounterSelect2: hi}
	q.res.Reset = rs
	for i, p := range ports {
		op := func(p int) error { return q.set(query.ResetData(desc, p, mask)) }
		var err error
		if len(ports) == 1 {
			p, err = q.onPort(p, op)
		} else {
			err = op(p)
		}
		if err != nil {
			return madFailure(fn, cmsg, fmt.Sprintf("resetting the %s of %s port %d", desc.Name, q.target.Text, p), err)
		}
		ports[i] = p
		rs.Ports = append(rs.Ports, p)
	}
	return nil
}

// group reads (and resets) one of the other counter groups of q.port.
func (q *perfQuery) group(g *perfGroup) error {
	switch g.kind {
	case groupExtSpeeds:
		return q.extSpeeds()
	case groupSamplesControl:
		return q.samplesControl()
	}
	desc := mad.LookupStruct(g.attr)
	q.res.Attribute = desc.Name
	if !q.opts.resetOnly {
		s := desc.New()
		port, err := q.onPort(q.port, func(p int) error { return q.pmaGet(p, s) })
		if err != nil {
			return madFailure("common_func", "cannot query "+g.attr, fmt.Sprintf("reading the %s of %s port %d", g.attr, q.target.Text, port), err)
		}
		q.add(fmt.Sprintf("# %s counters: %s port %d\n", g.attr, q.target.Text, port), s, port, nil, nil, 1536)
	}
	if q.write != nil {
		return q.resetPorts(desc, []int{q.port}, q.mask, "common_func", "cannot reset "+g.attr)
	}
	return nil
}

// extSpeeds reads PortExtendedSpeedsCounters (-T), in its RS-FEC layout
// when the port runs RS-FEC, and resets them with a 64-bit CounterSelect.
func (q *perfQuery) extSpeeds() error {
	const name = "PortExtendedSpeedsCounters"
	q.res.Attribute = name
	if !q.opts.resetOnly {
		rsfec, err := q.rsfecActive()
		if err != nil {
			return err
		}
		var s mad.Struct = &mad.PortExtendedSpeedsCounters{}
		out, title := s, name
		if rsfec {
			s, title = &mad.PortExtendedSpeedsCountersRSFEC{}, name+" with RS-FEC Active"
			out = query.AsAttr(out.Desc(), s)
			q.res.Attribute = "PortExtendedSpeedsCountersRSFEC"
		}
		port, err := q.onPort(q.port, func(p int) error {
			return q.client.Get(q.ctx, q.dest, 0, query.PortSelect(out.Desc(), p), out)
		})
		if err != nil {
			return madFailure("common_func", "cannot query "+title, fmt.Sprintf("reading the %s of %s port %d", title, q.target.Text, port), err)
		}
		q.add(fmt.Sprintf("# %s counters: %s port %d\n", title, q.target.Text, port), s, port, nil, nil, 1536)
	}
	if q.write == nil {
		return nil
	}
	mask := q.extMask
	if mask == 0 {
		mask = ^uint64(0)
	}
	q.res.Reset = &perfReset{DryRun: q.opts.dryRun, Attribute: name, Ports: []int{}, CounterSelect: mask}
	port, err := q.onPort(q.port, func(p int) error {
		return q.set(&mad.PortExtendedSpeedsCounters{PortSelect: uint8(p), CounterSelect: mask})
	})
	if err != nil {
		return madFailure("extended_speeds_query", "cannot reset "+name, fmt.Sprintf("resetting the %s of %s port %d", name, q.target.Text, port), err)
	}
	q.res.Reset.Ports = append(q.res.Reset.Ports, port)
	return nil
}

// rsfecActive tells whether the port runs RS-FEC, asked only when the PMA
// has RS-FEC counters, with is_rsfec_mode_active's SMPs: NodeInfo, PortInfo
// (a switch's port 0) for PortInfoExtended support, then PortInfoExtended.
func (q *perfQuery) rsfecActive() (bool, error) {
	if q.cap&mad.PerfCapMaskRSFECCounters == 0 {
		return false, nil
	}
	var ni mad.NodeInfo
	if err := q.smpGet(0, &ni); err != nil {
		return false, madFailure("is_port_info_extended_supported", "node info query failed", "reading the NodeInfo of "+q.target.Text, err)
	}
	capPort := q.port
	if ni.NodeType == mad.NodeTypeSwitch {
		capPort = 0
	}
	var pi mad.PortInfo
	if err := q.smpGet(uint32(capPort), &pi); err != nil {
		return false, madFailure("is_port_info_extended_supported", "port info query failed", "reading the PortInfo of "+q.target.Text, err)
	}
	var why string
	if pi.CapabilityMask&uint32(mad.PortCapMaskCapabilityMask2) == 0 {
		why = "port info capability mask2 not supported"
	} else if pi.CapabilityMask2&uint16(mad.PortCapMask2PortInfoExtended) == 0 {
		why = fmt.Sprintf("port info capability mask2 = 0x%x doesn't indicate PortInfoExtended support", pi.CapabilityMask2)
	}
	if why != "" {
		fmt.Fprintf(q.env.IO.Err, "perfquery: %s\nperfquery: Port Info Extended not supported\n", why)
		return false, nil
	}
	var pie mad.PortInfoExtended
	if err := q.smpGet(uint32(q.port), &pie); err != nil {
		return false, madFailure("is_rsfec_mode_active", "smp query portinfo extended failed", "reading the PortInfoExtended of "+q.target.Text, err)
	}
	// FECModeActive 2 is RS-FEC, 4 RS-FEC2 (ibdiag_common.h).
	return pie.CapabilityMask&1 != 0 && (pie.FECModeActive == 2 || pie.FECModeActive == 4), nil
}

// samplesControl reads PortSamplesControl (-c); it has no reset.
func (q *perfQuery) samplesControl() error {
	q.res.Attribute = "PortSamplesControl"
	var s mad.PortSamplesControl
	port, err := q.onPort(q.port, func(p int) error { return q.pmaGet(p, &s) })
	if err != nil {
		return madFailure("dump_portsamples_control", "sampctlquery", fmt.Sprintf("reading the PortSamplesControl of %s port %d", q.target.Text, port), err)
	}
	q.add(fmt.Sprintf("# PortSamplesControl: %s port %d\n", q.target.Text, port), &s, port, nil, nil, 1280)
	return nil
}
