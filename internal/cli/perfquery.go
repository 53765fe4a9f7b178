package cli

// perfquery: PerfMgt counters of one port, as infiniband-diags 44's
// perfquery reads and prints them, with the same MADs in the same order:
// PortCounters (default), PortCountersExtended (-x), every other counter
// group the C tool knows (-X -S -D -E -T -c and the long-only options), a
// sum over all ports (-a: AllPortSelect, or ibtool adding the ports up),
// one block per port (-l), port lists ("1,4,8") and ranges ("1-10"), and
// counter resets (-r after reading, -R instead of reading; a RESET_MASK
// argument chooses the counters, split into CounterSelect and
// CounterSelect2 as perfquery.c does). Resets are the only fabric writes
// and happen only with -r or -R.
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
// with an enhanced port 0) and prints each. Reads of several ports go out in
// parallel; resets are sent one port after the other, stopping at the first
// failure, as in the C tool.
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
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/umad"
)

func init() { register(newPerfqueryCmd) }

// allPorts is PortSelect's "every port" value (AllPortSelect).
const allPorts = 0xFF

// perfDataOffset is where PerfMgt attribute data starts in a MAD (IBA
// 16.1.1: 40 reserved bytes after the common header).
const perfDataOffset = 64

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
	Common
	extended  bool
	groups    []bool // indexed like perfGroups
	allPorts  bool
	loopPorts bool
	reset     bool
	resetOnly bool
}

func newPerfqueryCmd(env *Env) *cobra.Command {
	opts := &perfqueryOptions{groups: make([]bool, len(perfGroups))}
	cmd := toolCommand("perfquery [options] [<lid|guid> [[port(s)] [reset_mask]]]", "Query (and reset) the performance counters of a port")
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
	for _, a := range perfGroupAliases {
		for i, g := range perfGroups {
			if g.long == a.group {
				fs.BoolVarP(&opts.groups[i], a.long, a.short, false, "same as --"+g.long+" (python-rdma's name)")
			}
		}
	}
	// -D is --xmtdisc here, so directed routes take the long option only.
	fs.BoolVar(&opts.Direct, "Direct", false, "use Direct address argument (a DR path, resolved to a LID through the SA)")
	setupCommon(env, cmd, &opts.Common, "DK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runPerfquery(env, opts, args)
	}
	return cmd
}

// madFailure is a failed MAD: the C tool writes libibmad's "_do_madrpc
// failed" warning to stderr for a lost MAD, nothing for a bad status.
func madFailure(fn, cmsg, what string, err error) *ibFailure {
	var te *rpc.TimeoutError
	return &ibFailure{fn: fn, cmsg: cmsg, what: what, err: err, stderr: errors.As(err, &te)}
}

// perfTarget is where the counters come from; Text is libibmad's
// portid2str, as in the titles.
type perfTarget = jsonv.Target

// perfqueryResult is perfquery's JSON output.
type perfqueryResult struct {
	Target               perfTarget     `json:"target"`
	CapabilityMask       uint16         `json:"capability_mask"`
	CapabilityMaskNames  []string       `json:"capability_mask_names"`
	CapabilityMask2      uint32         `json:"capability_mask2"`
	CapabilityMask2Names []string       `json:"capability_mask2_names"`
	Attribute            string         `json:"attribute"`
	Counters             []perfCounters `json:"counters"`
	Reset                *perfReset     `json:"reset,omitempty"`
}

type perfCounters struct {
	Port        int             `json:"port"`
	SummedPorts []int           `json:"summed_ports,omitempty"`
	Values      json.RawMessage `json:"values"`
}

type perfReset struct {
	Attribute      string `json:"attribute"`
	Ports          []int  `json:"ports"`
	CounterSelect  uint64 `json:"counter_select"`
	CounterSelect2 uint32 `json:"counter_select2"`
}

// perfQuery is one perfquery run.
type perfQuery struct {
	env  *Env
	opts *perfqueryOptions
	ctx  context.Context
	eng  *rpc.Engine
	mkey uint64

	addr   umad.Address // where the GMPs go
	target perfTarget

	port          int   // PortSelect (perfquery.c's info.port)
	portDefaulted bool  // no port argument for a remote target: port 0
	ports         []int // a port list or range (perfquery.c's info.ports)
	nargs         int   // positional arguments (perfquery.c's argc)
	mask          uint32
	extMask       uint64

	cap  mad.PerfCapMask
	cap2 uint32

	out strings.Builder
	res perfqueryResult
}

func runPerfquery(env *Env, opts *perfqueryOptions, args []string) error {
	q := &perfQuery{env: env, opts: opts, ctx: context.Background(), mask: 0xffff, extMask: ^uint64(0), nargs: len(args)}
	// -t is checked while the options are parsed, before anything else.
	if _, err := opts.timeoutMS(DefaultTimeoutMS); err != nil {
		return q.fail(&ibFailure{fn: "process_opt", cmsg: err.Error()})
	}
	if opts.MKey != "" {
		k, err := endport.ParseUint(opts.MKey, 64)
		if err != nil {
			return usageErrorf("invalid M_Key %q: %v", opts.MKey, err)
		}
		q.mkey = k
	}
	if opts.allPorts {
		q.port = allPorts
	}
	if len(args) > 1 {
		if err := q.parsePorts(args[1]); err != nil {
			return q.fail(err)
		}
	}
	if len(args) > 2 {
		v, err := endport.ParseUint(args[2], 64)
		if err != nil {
			return usageErrorf("invalid reset mask %q: %v", args[2], err)
		}
		q.extMask, q.mask = v, uint32(v)
	}

	eng, err := openEngine(env, &opts.Common, engineConfig{timeout: rpc.DefaultTimeout})
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err
		}
		ca := opts.CA
		if ca == "" {
			ca = "(null)"
		}
		return q.fail(&ibFailure{fn: "main", cmsg: fmt.Sprintf("Failed to open '%s' port '%s'", ca, orZero(opts.Port)), err: err, stderr: true})
	}
	defer eng.Close()
	q.eng = eng

	if err := q.resolveTarget(args); err != nil {
		return q.fail(err)
	}
	q.res.Target = q.target

	// PerfMgt ClassPortInfo is mandatory; its capability masks decide what
	// the PMA can do and what perfquery prints.
	var cpi mad.ClassPortInfo
	if err := q.get(mad.AttrClassPortInfo, q.port, &cpi); err != nil {
		return q.fail(madFailure("main", "classportinfo query", "reading the PerfMgt ClassPortInfo of "+q.target.Text, err))
	}
	q.cap, q.cap2 = mad.PerfCapMask(cpi.CapabilityMask), cpi.CapabilityMask2
	q.res.CapabilityMask, q.res.CapabilityMask2 = cpi.CapabilityMask, cpi.CapabilityMask2
	q.res.CapabilityMaskNames = jsonv.MaskNames(uint64(q.cap), "PerfCapMask")
	q.res.CapabilityMask2Names = jsonv.MaskNames(uint64(q.cap2), "PerfCapMask2")
	q.res.Counters = []perfCounters{}

	allPortsLoop := false
	if q.cap&mad.PerfCapMaskAllPortSelect == 0 && q.port == allPorts {
		if !opts.allPorts {
			return q.fail(&ibFailure{fn: "main", cmsg: "AllPortSelect not supported",
				what: fmt.Sprintf("port 255 (all ports): the PMA of %s has no AllPortSelect; use -a to add the ports up", q.target.Text)})
		}
		allPortsLoop = true
	}

	err = nil
	ran := false
	for i := range perfGroups {
		if opts.groups[i] {
			err, ran = q.group(&perfGroups[i]), true
			break
		}
	}
	if !ran {
		err = q.counters(allPortsLoop)
	}
	if err != nil {
		return q.fail(err)
	}
	if opts.JSON {
		return writeJSON(env.IO.Out, &q.res)
	}
	_, err = fmt.Fprint(env.IO.Out, q.out.String())
	return err
}

// parsePorts reads the port argument: "3", a list "1,4,8" or a range
// "1-10", as perfquery.c does (but numbers must be numbers).
func (q *perfQuery) parsePorts(s string) error {
	port := func(t string) (int, error) {
		v, err := endport.ParseUint(t, 8)
		if err != nil {
			return 0, usageErrorf("invalid port %q in %q: %v", t, s, err)
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
			return usageErrorf("no port in %q", s)
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
			return &ibFailure{fn: "main", cmsg: "max port must be greater than min port in range", code: ExitUsage}
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
	opts := q.opts
	local, lerr := q.eng.Port().Info()
	if len(args) == 0 {
		if lerr != nil {
			return &ibFailure{fn: "main", cmsg: "can't resolve self port (null)", what: "reading the local port", err: lerr, stderr: true}
		}
		q.port = local.Num // perfquery.c's resolve_self: also with -a
		q.target = perfTarget{Route: jsonv.RouteLID, LID: local.LID, Text: fmt.Sprintf("Lid %d", local.LID)}
		var err error
		q.addr, err = q.pathOrLID(endport.Target{Kind: endport.ByLID, LID: local.LID})
		return err
	}
	cantResolve := func(err error, code int) error {
		return &ibFailure{fn: "main", cmsg: "can't resolve destination port " + args[0], err: err, stderr: code != ExitUsage, code: code}
	}
	t, err := endport.ParseTarget(args[0], opts.typeFlags())
	if err != nil {
		return cantResolve(err, ExitUsage)
	}
	if len(args) < 2 && !opts.allPorts {
		q.portDefaulted = true
	}
	switch t.Kind {
	case endport.ByLID:
		q.target = perfTarget{Route: jsonv.RouteLID, LID: t.LID}
		if q.addr, err = q.pathOrLID(t); err != nil {
			return err
		}
	default:
		if lerr != nil {
			return cantResolve(fmt.Errorf("reading the local port: %w", lerr), ExitFailure)
		}
		r, err := newResolver(q.eng, &opts.Common)
		var p *sa.Path
		if err == nil {
			p, err = r.GMP(q.ctx, t)
		}
		var ee *ExitError
		if errors.As(err, &ee) {
			return err // -s is malformed
		}
		if err != nil {
			return cantResolve(err, ExitFailure)
		}
		q.addr = q.gmpAddr(p.Addr)
		q.target = withGiven(perfTarget{Route: jsonv.RouteLID, LID: p.Addr.LID}, t)
		if t.Kind == endport.ByDRPath {
			q.target.DRPath = mad.FormatDRPath(t.DRPath)
		}
	}
	q.target.Text = fmt.Sprintf("Lid %d", q.target.LID)
	if q.target.LID == 0 && q.target.GID != nil {
		q.target.Route = jsonv.RouteGID
		q.target.Text = "Gid " + q.target.GID.String() // RoCE: no LIDs, the GID is the address
	}
	return nil
}

// pathOrLID is the SA's path to a LID target, or the LID itself on SL 0
// when the SA cannot give one (the C tool never asks). Only a malformed -s
// is an error.
func (q *perfQuery) pathOrLID(t endport.Target) (umad.Address, error) {
	r, err := newResolver(q.eng, &q.opts.Common)
	var ee *ExitError
	if errors.As(err, &ee) {
		return umad.Address{}, err
	}
	var p *sa.Path
	if err == nil {
		p, err = r.GMP(q.ctx, t)
	}
	if err != nil {
		if q.opts.Verbose > 0 {
			fmt.Fprintf(q.env.IO.Err, "perfquery: no SA path to LID %d (%v); sending to the LID on SL 0\n", t.LID, err)
		}
		return umad.Address{LID: t.LID, QP: 1, QKey: umad.QP1QKey, PKeyIndex: uint16(q.opts.PKeyIdx)}, nil
	}
	return q.gmpAddr(p.Addr), nil
}

// gmpAddr applies -Y to a path's address.
func (q *perfQuery) gmpAddr(a umad.Address) umad.Address {
	if q.opts.PKeyIdx != 0 {
		a.PKeyIndex = uint16(q.opts.PKeyIdx)
	}
	return a
}

// do sends one PerfMgt MAD with data as its attribute data and returns the
// reply; a non-zero MAD status is an error, as in libibmad.
func (q *perfQuery) do(method uint8, attr uint16, data []byte) (mad.Header, error) {
	m := mad.NewRequest(mad.ClassPerf, 1, method, attr, 0)
	copy(m[perfDataOffset:], data)
	req := &rpc.Request{Addr: q.addr, MAD: m}
	reply, err := q.eng.Do(q.ctx, req)
	if err != nil {
		return nil, err
	}
	if reply.MAD.Status() != 0 {
		return nil, &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: reply.MAD}
	}
	return reply.MAD, nil
}

// get reads attr of a port into s (pma_query_via: PortSelect in data byte
// 1, for every attribute).
func (q *perfQuery) get(attr uint16, port int, s mad.Struct) error {
	data := make([]byte, mad.Size-perfDataOffset)
	data[1] = byte(port)
	reply, err := q.do(mad.MethodGet, attr, data)
	if err != nil {
		return err
	}
	return s.Unmarshal(reply[perfDataOffset:])
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
	ni, nerr := q.smpNodeInfo()
	if nerr != nil || ni.NodeType == mad.NodeTypeSwitch || ni.LocalPortNum == 0 {
		return port, err
	}
	if q.opts.Verbose > 0 {
		fmt.Fprintf(q.env.IO.Err, "perfquery: %s refuses PortSelect 0; using port %d, the port its LID belongs to\n", q.target.Text, ni.LocalPortNum)
	}
	q.port = int(ni.LocalPortNum)
	return q.port, op(q.port)
}

// smpGet is a LID-routed SubnGet to the target (smp_query_via).
func (q *perfQuery) smpGet(attr uint16, s mad.Struct) error { return q.smpGetMod(attr, 0, s) }

func (q *perfQuery) smpNodeInfo() (*mad.NodeInfo, error) {
	var ni mad.NodeInfo
	return &ni, q.smpGet(mad.AttrNodeInfo, &ni)
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

	loopAll := allPortsLoop || opts.loopPorts && (opts.allPorts || q.port == allPorts)
	emulate := allPortsLoop && !opts.loopPorts
	var every []int
	if loopAll {
		ni, err := q.smpNodeInfo()
		if err != nil {
			return madFailure("main", "smp query nodeinfo failed", "reading the NodeInfo of "+q.target.Text, err)
		}
		if ni.NumPorts == 0 {
			return &ibFailure{fn: "main", cmsg: "smp query nodeinfo: num ports invalid", what: q.target.Text + " reports 0 ports"}
		}
		start := 1
		if ni.NodeType == mad.NodeTypeSwitch {
			var si mad.SwitchInfo
			if err := q.smpGet(mad.AttrSwitchInfo, &si); err != nil {
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
			return &ibFailure{fn: fn, cmsg: cmsg,
				what:   fmt.Sprintf("-a on %s: a CA with %d ports counts only the port a MAD arrives on, so its ports cannot be added up through one LID; query each port's own LID", q.target.Text, ni.NumPorts),
				stderr: true}
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
	if !opts.reset && !opts.resetOnly {
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
// default port rule) in parallel, then prints each in port order, or their
// sum as port 255. The first port that fails ends it, after the ports
// before it were printed, as in the C tool.
func (q *perfQuery) readPorts(desc *mad.StructDesc, ports []int, sum bool, fn, cmsg string) error {
	single := ports == nil
	if single {
		ports = []int{q.port}
	}
	vals := make([]mad.Struct, len(ports))
	errs := make([]error, len(ports))
	var wg sync.WaitGroup
	for i, p := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vals[i] = desc.New()
			if single {
				ports[i], errs[i] = q.onPort(p, func(p int) error { return q.get(desc.AttrID, p, vals[i]) })
			} else {
				errs[i] = q.get(desc.AttrID, p, vals[i])
			}
		}()
	}
	wg.Wait()
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
			q.printCounters(vals[i], p, nil)
		}
	}
	if sum {
		total := desc.New()
		for _, v := range vals {
			addCounters(total, v)
		}
		if err := mad.Set(total, "PortSelect", allPorts); err != nil {
			return err
		}
		q.printCounters(total, allPorts, ports)
	}
	return nil
}

// printCounters prints PortCounters or PortCountersExtended under
// perfquery's title, and records them for JSON.
func (q *perfQuery) printCounters(s mad.Struct, port int, summed []int) {
	if _, ok := s.(*mad.PortCountersExtended); ok {
		var opts mad.DottedOptions
		if q.cap&mad.PerfCapMaskExtWidth != 0 {
			opts.Groups = append(opts.Groups, "ExtWidth")
		}
		if q.cap2&uint32(mad.PerfCapMask2AddlPortCountersExt) != 0 {
			opts.Groups = append(opts.Groups, "AdditionalCounters")
		}
		fmt.Fprintf(&q.out, "# Port extended counters: %s port %d (CapMask: 0x%02X CapMask2: 0x%07X)\n%s",
			q.target.Text, port, uint16(q.cap), q.cap2, ibmadBuffer(mad.Dotted(s, &opts), 1536))
	} else {
		fmt.Fprintf(&q.out, "# Port counters: %s port %d (CapMask: 0x%02X)\n%s", q.target.Text, port, uint16(q.cap), ibmadBuffer(mad.Dotted(s, nil), 1536))
	}
	q.res.Counters = append(q.res.Counters, perfCounters{Port: port, SummedPorts: summed, Values: perfJSON(s)})
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

// addCounters adds every counter of src to dst, saturating at the
// counter's width as the IBA counters do. PortSelect and the counter
// selects are src's (perfquery prints the last port's).
func addCounters(dst, src mad.Struct) {
	for i := range src.Desc().Fields {
		f := &src.Desc().Fields[i]
		if f.Reserved || !f.IsNumber() {
			continue
		}
		for e := 0; e < f.Count; e++ {
			path := f.Name
			if f.Count > 1 {
				path += "[" + strconv.Itoa(e) + "]"
			}
			v, _ := mad.Get(src, path)
			switch f.Name {
			case "PortSelect", "CounterSelect", "CounterSelect2", "OpCode":
			default:
				d, _ := mad.Get(dst, path)
				limit := ^uint64(0) >> (64 - f.Width)
				if v > limit-d {
					v = limit
				} else {
					v += d
				}
			}
			_ = mad.Set(dst, path, v)
		}
	}
}

// resetPorts resets the counters mask selects on each port, one after the
// other (performance_reset_via: a Set with PortSelect, CounterSelect = the
// mask's low 16 bits and CounterSelect2 = the rest).
func (q *perfQuery) resetPorts(desc *mad.StructDesc, ports []int, mask uint32, fn, cmsg string) error {
	if mask == 0 {
		mask = ^uint32(0)
	}
	hi := mask >> 16
	if desc.AttrID != mad.AttrPortCountersExtended {
		hi &= 0xff
	}
	rs := &perfReset{Attribute: desc.Name, Ports: []int{}, CounterSelect: uint64(uint16(mask)), CounterSelect2: hi}
	q.res.Reset = rs
	for i, p := range ports {
		op := func(p int) error {
			data := make([]byte, mad.Size-perfDataOffset)
			data[1] = byte(p)
			binary.BigEndian.PutUint16(data[2:], uint16(mask))
			if desc.AttrID == mad.AttrPortCountersExtended {
				binary.BigEndian.PutUint32(data[4:], hi)
			} else {
				data[18] = byte(hi) // PortCounters' CounterSelect2, for every attribute
			}
			_, err := q.do(mad.MethodSet, desc.AttrID, data)
			return err
		}
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
	opts := q.opts
	desc := mad.LookupStruct(g.attr)
	q.res.Attribute = desc.Name
	if !opts.resetOnly {
		s := desc.New()
		port, err := q.onPort(q.port, func(p int) error { return q.get(desc.AttrID, p, s) })
		if err != nil {
			return madFailure("common_func", "cannot query "+g.attr, fmt.Sprintf("reading the %s of %s port %d", g.attr, q.target.Text, port), err)
		}
		fmt.Fprintf(&q.out, "# %s counters: %s port %d\n%s", g.attr, q.target.Text, port, ibmadBuffer(mad.Dotted(s, nil), 1536))
		q.res.Counters = append(q.res.Counters, perfCounters{Port: port, Values: perfJSON(s)})
	}
	if opts.reset || opts.resetOnly {
		return q.resetPorts(desc, []int{q.port}, q.mask, "common_func", "cannot reset "+g.attr)
	}
	return nil
}

// extSpeeds reads PortExtendedSpeedsCounters (-T), in its RS-FEC layout
// when the port runs RS-FEC, and resets them with a 64-bit CounterSelect.
func (q *perfQuery) extSpeeds() error {
	opts := q.opts
	const name = "PortExtendedSpeedsCounters"
	q.res.Attribute = name
	if !opts.resetOnly {
		rsfec, err := q.rsfecActive()
		if err != nil {
			return err
		}
		var s mad.Struct = &mad.PortExtendedSpeedsCounters{}
		title := name
		if rsfec {
			s, title = &mad.PortExtendedSpeedsCountersRSFEC{}, name+" with RS-FEC Active"
			q.res.Attribute = "PortExtendedSpeedsCountersRSFEC"
		}
		port, err := q.onPort(q.port, func(p int) error { return q.get(mad.AttrPortExtendedSpeedsCounters, p, s) })
		if err != nil {
			return madFailure("common_func", "cannot query "+title, fmt.Sprintf("reading the %s of %s port %d", title, q.target.Text, port), err)
		}
		fmt.Fprintf(&q.out, "# %s counters: %s port %d\n%s", title, q.target.Text, port, ibmadBuffer(mad.Dotted(s, nil), 1536))
		q.res.Counters = append(q.res.Counters, perfCounters{Port: port, Values: perfJSON(s)})
	}
	if !opts.reset && !opts.resetOnly {
		return nil
	}
	mask := q.extMask
	if mask == 0 {
		mask = ^uint64(0)
	}
	q.res.Reset = &perfReset{Attribute: name, Ports: []int{}, CounterSelect: mask}
	port, err := q.onPort(q.port, func(p int) error {
		data := make([]byte, mad.Size-perfDataOffset)
		data[1] = byte(p)
		binary.BigEndian.PutUint64(data[8:], mask)
		_, err := q.do(mad.MethodSet, mad.AttrPortExtendedSpeedsCounters, data)
		return err
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
	ni, err := q.smpNodeInfo()
	if err != nil {
		return false, madFailure("is_port_info_extended_supported", "node info query failed", "reading the NodeInfo of "+q.target.Text, err)
	}
	capPort := q.port
	if ni.NodeType == mad.NodeTypeSwitch {
		capPort = 0
	}
	var pi mad.PortInfo
	if err := q.smpGetMod(mad.AttrPortInfo, uint32(capPort), &pi); err != nil {
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
	if err := q.smpGetMod(mad.AttrPortInfoExtended, uint32(q.port), &pie); err != nil {
		return false, madFailure("is_rsfec_mode_active", "smp query portinfo extended failed", "reading the PortInfoExtended of "+q.target.Text, err)
	}
	// FECModeActive 2 is RS-FEC, 4 RS-FEC2 (ibdiag_common.h).
	return pie.CapabilityMask&1 != 0 && (pie.FECModeActive == 2 || pie.FECModeActive == 4), nil
}

// smpGetMod is smpGet with an attribute modifier.
func (q *perfQuery) smpGetMod(attr uint16, mod uint32, s mad.Struct) error {
	m := mad.NewLIDSMP(mad.MethodGet, attr, mod)
	binary.BigEndian.PutUint64(m[24:], q.mkey)
	req := &rpc.Request{Addr: umad.Address{LID: q.addr.LID}, MAD: m}
	reply, err := q.eng.Do(q.ctx, req)
	if err != nil {
		return err
	}
	if reply.MAD.Status() != 0 {
		return &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: reply.MAD}
	}
	return s.Unmarshal(reply.MAD.SMPData())
}

// samplesControl prints PortSamplesControl (-c); it has no reset.
func (q *perfQuery) samplesControl() error {
	q.res.Attribute = "PortSamplesControl"
	var s mad.PortSamplesControl
	port, err := q.onPort(q.port, func(p int) error { return q.get(mad.AttrPortSamplesControl, p, &s) })
	if err != nil {
		return madFailure("dump_portsamples_control", "sampctlquery", fmt.Sprintf("reading the PortSamplesControl of %s port %d", q.target.Text, port), err)
	}
	fmt.Fprintf(&q.out, "# PortSamplesControl: %s port %d\n%s", q.target.Text, port, ibmadBuffer(mad.Dotted(&s, nil), 1280))
	q.res.Counters = append(q.res.Counters, perfCounters{Port: port, Values: perfJSON(&s)})
	return nil
}

// perfDataFields are the counters of 4-octet words (IBA 16.1.3.5: "data
// octets divided by 4"); their JSON gets a <name>_bytes companion.
var perfDataFields = map[string]bool{
	"PortXmitData": true, "PortRcvData": true, "PortOpRcvData": true,
	"PortVLOpData": true, "PortXmitDataSL": true, "PortRcvDataSL": true,
}

// perfJSON is s as mad's JSON, plus <name>_bytes for the data counters (4
// times the value, exactly: a saturated 64-bit counter is more than a
// uint64 of bytes).
func perfJSON(s mad.Struct) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil || len(b) < 2 {
		return b
	}
	var extra strings.Builder
	for i := range s.Desc().Fields {
		f := &s.Desc().Fields[i]
		if f.Reserved || !perfDataFields[f.Name] {
			continue
		}
		bytesOf := func(e int) string {
			path := f.Name
			if f.Count > 1 {
				path += "[" + strconv.Itoa(e) + "]"
			}
			v, _ := mad.Get(s, path)
			return new(big.Int).Lsh(new(big.Int).SetUint64(v), 2).String()
		}
		fmt.Fprintf(&extra, ",%q:", f.JSONName+"_bytes")
		if f.Count == 1 {
			extra.WriteString(bytesOf(0))
			continue
		}
		extra.WriteByte('[')
		for e := 0; e < f.Count; e++ {
			if e > 0 {
				extra.WriteByte(',')
			}
			extra.WriteString(bytesOf(e))
		}
		extra.WriteByte(']')
	}
	return append(append(b[:len(b)-1:len(b)-1], extra.String()...), '}')
}

// fail reports a failure: the output so far, then, in compat use, the C
// tool's IBEXIT line on stdout.
func (q *perfQuery) fail(err error) error {
	env, opts := q.env, q.opts
	var f *ibFailure
	if !errors.As(err, &f) {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err // a usage error: cobra's usual report
		}
		f = &ibFailure{fn: "main", cmsg: err.Error()}
		err = f
	}
	if !opts.JSON {
		fmt.Fprint(env.IO.Out, q.out.String())
	}
	return reportIBExit(env, &opts.Common, "perfquery", f, err)
}
