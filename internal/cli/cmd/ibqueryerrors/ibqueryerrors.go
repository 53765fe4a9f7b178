package ibqueryerrors

// ibqueryerrors: the error counters of every port of the fabric (or of one
// node) against thresholds, as infiniband-diags 44's ibqueryerrors prints
// them. The fabric comes from the shared discovery (or --load-cache); the
// counters from query.ReadCounters: every node's PerfMgt ClassPortInfo,
// then every port's counters at once, within the engine's windows, where
// the C tool reads one port after the other. A port whose read fails is
// reported at the end (stderr, and "errors" in JSON); the others are
// printed as usual.
//
// The reads follow the C tool's logic so that the text is the same: a PMA
// with AllPortSelect is read for all its ports first and port by port only
// when that sum shows errors; -k/-K reset after the reads, a node's sum
// (AllPortSelect) or each port. --json reads every port (healthy ones
// too) and prints every counter read.
//
// Deliberate differences: PortCountersExtended is read only where the
// text uses it (the PMA has its error counters, or --data), so a failed
// read of it never hides a port's errors; an unknown counter in -s, and a
// threshold file
// line that is not "<counter>=<number>", are errors (the C tool ignores
// the first and crashes on some of the second); without an SA to give the
// SLs, the PMAs are asked on SL 0 (the C tool stops there without a word
// on stdout). As "ibtool ibqueryerrors", -k/-K end with one line on stderr
// saying what was reset; --dry-run says what would be, and sends nothing.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/umad"
)

// Node types of --switch/--ca/--router (ibqueryerrors.c PRINT_*).
const (
	qePrintSwitch = 1 << iota
	qePrintCA
	qePrintRouter
)

type ibqueryerrorsOptions struct {
	cmdutil.Common
	src            query.Source
	suppressed     suppressList
	guid, drPath   string
	guidSet, drSet bool
	skipSL         bool
	reportPort     int
	gndn           bool
	data           bool
	countersOnly   bool
	details        bool
	nodeTypes      int
	thresholdFile  string
	clearErrors    bool
	clearCounts    bool
	dryRun         bool
}

// NewCmd builds the ibqueryerrors command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibqueryerrorsOptions{thresholdFile: counters.DefaultThresholdFile}
	cmd := cmdutil.ToolCommand("ibqueryerrors [options]", "Report the error counters of every port of the fabric")
	cmd.Long = `Query the PerfMgt error counters of every port of the fabric (or of the node
of -G/-D) and report those above their thresholds, as infiniband-diags'
ibqueryerrors does. All ports are read at once, within the engine's windows;
a port whose read fails is reported at the end and the others as usual.
-k/-K reset counters after reading them (--dry-run: say what would be reset).
--json prints every counter of every port read, with *_bytes for the data
counters and the thresholds exceeded (docs/json.md).`
	cmd.Args = cobra.ArbitraryArgs // the C tool ignores extra arguments
	fs := cmd.Flags()
	fs.VarP(suppressFlag{&opts.suppressed}, "suppress", "s", "suppress errors listed")
	fl := fs.VarPF(suppressCommonFlag{&opts.suppressed}, "suppress-common", "c", "suppress some of the common counters")
	fl.NoOptDefVal = "true"
	opts.src.AddFlags(fs, query.FlagNodeNameMap)
	fs.VarP(cmdutil.LastString(&opts.guid, &opts.guidSet), "port-guid", "G", "report the node containing the port specified by <port_guid>")
	fs.VarP(cmdutil.LastString(&opts.guid, &opts.guidSet), "S", "S", "Same as \"-G\" for backward compatibility")
	fs.VarP(cmdutil.LastString(&opts.drPath, &opts.drSet), "Direct", "D", "report the node containing the port specified by <dr_path>")
	fs.BoolVar(&opts.skipSL, "skip-sl", false, "don't obtain SL to all destinations")
	fs.CountVarP(&opts.reportPort, "report-port", "r", "report port link information")
	fs.StringVar(&opts.thresholdFile, "threshold-file", counters.DefaultThresholdFile, "specify an alternate threshold file, default: "+counters.DefaultThresholdFile)
	fs.BoolVarP(&opts.gndn, "GNDN", "R", false, "(This option is obsolete and does nothing)")
	fs.BoolVar(&opts.data, "data", false, "include data counters for ports with errors")
	addFlagBits(fs, &opts.nodeTypes, qePrintSwitch, "switch", "print data for switches only")
	addFlagBits(fs, &opts.nodeTypes, qePrintCA, "ca", "print data for CA's only")
	addFlagBits(fs, &opts.nodeTypes, qePrintRouter, "router", "print data for routers only")
	fs.BoolVar(&opts.details, "details", false, "include transmit discard details")
	fs.BoolVar(&opts.countersOnly, "counters", false, "print data counters only")
	fs.BoolVarP(&opts.clearErrors, "clear-errors", "k", false, "Clear error counters after read")
	fs.BoolVarP(&opts.clearCounts, "clear-counts", "K", false, "Clear data counters after read")
	fs.BoolVar(&opts.dryRun, "dry-run", false, "with -k/-K: say what would be reset, reset nothing")
	opts.src.AddFlags(fs, query.FlagLoadCache|query.FlagOutstanding|query.FlagSA)
	cmdutil.SetupCommon(env, cmd, &opts.Common, "cDGKLnRrSs")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runIbqueryerrors(env, opts)
	}
	return cmd
}

// flagBits is a flag without a value that ORs its bit into a set.
type flagBits struct {
	dst *int
	bit int
}

func (f flagBits) String() string   { return "" }
func (f flagBits) Type() string     { return "bool" }
func (f flagBits) IsBoolFlag() bool { return true }
func (f flagBits) Set(s string) error {
	if s == "true" {
		*f.dst |= f.bit
	}
	return nil
}

func addFlagBits(fs *pflag.FlagSet, dst *int, bit int, name, usage string) {
	fs.VarPF(flagBits{dst, bit}, name, "", usage).NoOptDefVal = "true"
}

// runIbqueryerrors is the run: the fabric, then the counters, then the
// report and the resets.
func runIbqueryerrors(env *cmdutil.Env, opts *ibqueryerrorsOptions) error {
	c := &opts.Common
	if _, err := c.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return err
	}
	if _, _, err := opts.src.Mode(); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if err := opts.suppressed.err; err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	th, err := counters.ReadThresholds(opts.thresholdFile, counters.IBQueryErrors)
	var unopened *counters.ThresholdError
	if errors.As(err, &unopened) && unopened.NotOpened {
		// A file that cannot be opened is no limits, as for the C tool:
		// its default file often does not exist.
		th, err = counters.Defaults(counters.IBQueryErrors), nil
	}
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if opts.nodeTypes == 0 {
		opts.nodeTypes = qePrintSwitch | qePrintCA | qePrintRouter
	}
	if opts.drSet && !opts.src.Live() {
		return cmdutil.ExitWith(cmdutil.ExitFailure, "Cannot specify cache and direct route path")
	}
	// The PMAs are asked through the port even with a cache.
	opts.src.MlxEPI = c.MlxEPI
	client, err := cmdutil.OpenClient(env, c, cmdutil.EngineConfig{Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond, Window: opts.src.Window()})
	if err != nil {
		if cmdutil.ExitCodeOf(err) == cmdutil.ExitUsage {
			return err
		}
		return &cmdutil.Failure{CMsg: fmt.Sprintf("Failed to open port; %s:%d\n", orNull(c.CA), max(cmdutil.PortNum(c.Port), 0)), Err: err, Stderr: true}
	}
	defer client.Engine().Close()

	q := &qeRun{env: env, opts: opts, ctx: context.Background(), client: client, th: th,
		names: opts.src.Names(env.IO.Err)}
	// The SLs come from the SA while the fabric is walked or loaded.
	runStart := time.Now()
	sls := make(chan struct{})
	go func() {
		defer close(sls)
		q.readSLs()
	}()
	nodes, err := q.fabricNodes()
	<-sls
	if err != nil || nodes == nil {
		return err // nil nodes: the C tool stops without a summary
	}
	before, start := client.Engine().Stats(), time.Now()
	q.check(nodes)
	q.readNames()
	after := client.Engine().Stats()
	pma, took := after.Sent-before.Sent, time.Since(start)
	q.reset()
	res := q.result()
	code := 0
	if res.Summary.BadPorts > 0 {
		code = 1
	}
	var exit error
	if code != 0 {
		exit = &cmdutil.ExitError{Code: code, Err: cmdutil.ErrSilent}
	}
	if err := cmdutil.Finish(env, c, "ibqueryerrors", res, nil); err != nil {
		return err
	}
	q.reportFailures()
	incomplete := cmdutil.WalkIncomplete(env, c, "ibqueryerrors", q.fab)
	if c.Stats {
		fmt.Fprintf(env.IO.Err, "ibqueryerrors: PMA phase: %d MADs in %.1f ms, %.0f MADs/s\n",
			pma, float64(took.Microseconds())/1000, float64(pma)/took.Seconds())
		all := time.Since(runStart)
		fmt.Fprintf(env.IO.Err, "ibqueryerrors: fabric and PMA phase: %d MADs in %.1f ms, %.0f MADs/s\n",
			after.Sent, float64(all.Microseconds())/1000, float64(after.Sent)/all.Seconds())
	}
	if exit == nil {
		exit = incomplete // ports beyond thresholds (1) say more than a walk that missed some (3)
	}
	return exit
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// qeRun is one ibqueryerrors run.
type qeRun struct {
	env    *cmdutil.Env
	opts   *ibqueryerrorsOptions
	ctx    context.Context
	client *query.Client
	th     *counters.Thresholds
	names  *nodename.Map
	fab    *discovery.Fabric
	sl     map[uint16]uint8 // the SA's SL to each LID

	nodes      []*qeNode
	resets     []qeReset
	lastResult *qeResult
}

// fabricNodes gets the fabric (walked, partially around -G/-D's node, or
// from the cache) and returns the nodes to check.
func (q *qeRun) fabricNodes() ([]*discovery.Node, error) {
	opts := q.opts
	var from []byte
	fromLID, resolved := false, false
	switch {
	case opts.drSet:
		if from, resolved = cmdutil.ParseCDRPath(opts.drPath); !resolved {
			cmdutil.IBWarn(q.env, "main", "Failed to resolve %s; attempting full scan", opts.drPath)
		}
	case opts.guidSet && opts.src.Live():
		guid, _ := ctext.Strtoul(opts.guid)
		path, err := cmdutil.RouteToPortGUID(q.ctx, q.client, guid)
		if err != nil {
			cmdutil.IBWarn(q.env, "main", "Failed to resolve %s; attempting full scan", opts.guid)
		} else {
			from, fromLID, resolved = path, true, true
		}
	}
	var err error
	// Only -r's link lines and the JSON show external port numbers.
	noChassis := !opts.JSON && opts.reportPort == 0
	switch {
	case !opts.src.Live():
		if q.fab, err = opts.src.Fabric(q.ctx, nil, query.Walk{NoChassis: noChassis}); err != nil {
			return nil, cmdutil.ExitWith(cmdutil.ExitFailure, "loading cached fabric failed")
		}
	case resolved:
		if q.fab, err = opts.src.Scan(q.ctx, q.client, discovery.ScanOptions{MaxHops: 1, From: from, FromLID: fromLID}); err != nil {
			cmdutil.IBWarn(q.env, "main", "Single node discover failed; attempting full scan")
		}
	}
	if q.fab == nil {
		walk := query.Walk{Progress: cmdutil.ProgressLine(q.env), NoChassis: noChassis}
		if !opts.guidSet && !opts.drSet && q.namesLater() {
			walk.Skip = discovery.LoadNodeDesc
		}
		if q.fab, err = opts.src.Fabric(q.ctx, q.client, walk); err != nil {
			return nil, cmdutil.ExitWith(cmdutil.ExitFailure, "discover failed")
		}
	}
	switch {
	case opts.guidSet:
		guid, _ := ctext.Strtoul(opts.guid)
		if n := render.FindPortNode(q.fab, guid); n != nil {
			return []*discovery.Node{n}, nil
		}
		fmt.Fprintf(q.env.IO.Err, "Failed to find node: %s\n", opts.guid)
		return []*discovery.Node{}, nil
	case opts.drSet:
		return q.nodeAtDR(from)
	}
	return render.AllNodes(q.fab), nil
}

// nodeAtDR is -D's node: the one owning the port the path's NodeInfo
// names. When the path leads nowhere there are none (nil): the C tool
// ends there, with no summary.
func (q *qeRun) nodeAtDR(path []byte) ([]*discovery.Node, error) {
	if path == nil {
		path = []byte{0}
	}
	var ni mad.NodeInfo
	if err := q.client.Get(q.ctx, query.DR(path), 0, nil, &ni); err != nil {
		fmt.Fprintf(q.env.IO.Err, "Failed to query local Node Info\n")
		return nil, nil
	}
	if n := render.FindPortNode(q.fab, uint64(ni.PortGUID)); n != nil {
		return []*discovery.Node{n}, nil
	}
	fmt.Fprintf(q.env.IO.Err, "Failed to find node: %s\n", q.opts.drPath)
	return []*discovery.Node{}, nil
}

// readSLs asks the SA for the paths from the local port (one PathRecord
// table, as the C tool does) and keeps each destination LID's SL. Without
// an SA the PMAs are asked on SL 0. It runs beside fabricNodes: it
// touches only q.sl, and reads q.opts and q.client.
func (q *qeRun) readSLs() {
	q.sl = map[uint16]uint8{}
	if q.opts.skipSL {
		return
	}
	r, err := q.client.Resolver()
	if err == nil && r.SA == nil {
		err = errors.New("no SA")
	}
	var recs [][]byte
	if err == nil {
		var gid [16]byte
		putUint64(gid[:8], r.Local.GIDPrefix)
		putUint64(gid[8:], r.Local.PortGUID)
		pr := &mad.PathRecord{SGID: mad.GID(gid), NumbPath: 1, Reversible: 1}
		mask := mad.MustCompMask(pr.Desc(), "SGID", "NumbPath", "Reversible")
		recs, err = r.SA.GetTable(q.ctx, mad.AttrPathRecord, mad.Encode(pr), mask)
	}
	if err != nil {
		if q.opts.Verbose > 0 {
			fmt.Fprintf(q.env.IO.Err, "ibqueryerrors: no SLs from the SA (%v); asking the PMAs on SL 0\n", err)
		}
		return
	}
	for _, b := range recs {
		var pr mad.PathRecord
		if pr.Unmarshal(b) == nil {
			q.sl[pr.DLID] = pr.SL
		}
	}
}

func putUint64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (56 - 8*i))
	}
}

// pmaDest is the GMP address of the PMA at lid.
func (q *qeRun) pmaDest(lid uint16) query.Dest {
	return query.GMPAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey, SL: q.sl[lid], PKeyIndex: q.client.Options().PKeyIndex})
}

// selected tells whether n is of a type to check (--switch/--ca/--router).
func (q *qeRun) selected(n *discovery.Node) bool {
	switch n.Type {
	case discovery.NodeSwitch:
		return q.opts.nodeTypes&qePrintSwitch != 0
	case discovery.NodeCA:
		return q.opts.nodeTypes&qePrintCA != 0
	case discovery.NodeRouter:
		return q.opts.nodeTypes&qePrintRouter != 0
	}
	return false
}

// qeNode is a node checked: its ports' counters and what they show.
type qeNode struct {
	node  *discovery.Node
	name  string
	caps  *query.PMACaps
	all   *qePort   // the AllPortSelect sum, when the PMA has it
	ports []*qePort // the ports read one by one
	// checkPorts: the ports were looked at one by one (no AllPortSelect,
	// or the sum showed errors); otherwise they count as checked through
	// the sum.
	checkPorts bool
}

// qePort is one port's (or the sum's) counters and verdict.
type qePort struct {
	node     *qeNode
	num      int             // PortSelect: the port, or AllPortSelect
	port     *discovery.Port // nil for the sum
	counters query.PortCounters
	exceeded []Exceeded
	details  []qeDetail // the detail groups read for exceeded counters
}

// Exceeded is a counter above its threshold.
type Exceeded struct {
	Counter   string `json:"counter"`
	Value     uint64 `json:"value"`
	Threshold uint64 `json:"threshold"`
	extended  bool   // read from PortCountersExtended (64-bit)
}

// qeDetail is a detail group read because a counter exceeded (--details):
// after which counter it is printed, and its values in libibmad's layout.
type qeDetail struct {
	port   *qePort
	after  string     // the counter it details
	attr   string     // the attribute read
	values mad.Struct // decoded as libibmad does
	err    error
}

// ports lists the ports ibqueryerrors looks at on n: from port 0 on a
// switch with an enhanced port 0, from 1 otherwise, those discovered.
func qePorts(n *discovery.Node) []*discovery.Port {
	start := 1
	if n.Type == discovery.NodeSwitch && n.EnhancedSP0 {
		start = 0
	}
	var ps []*discovery.Port
	for p := start; p <= n.NumPorts; p++ {
		if port := n.Port(p); port != nil {
			ps = append(ps, port)
		}
	}
	return ps
}

// counterPort is the PMA to ask for port p of n: the switch's LID for
// all its ports, a CA's or router's port's own LID.
func (q *qeRun) counterPort(n *discovery.Node, p int) query.CounterPort {
	lid := n.SMALID
	if n.Type != discovery.NodeSwitch {
		if port := n.Port(p); port != nil {
			lid = port.BaseLID
		}
		if p == query.AllPortSelect || p == 0 {
			lid = firstPortLID(n)
		}
	}
	return query.CounterPort{NodeGUID: n.GUID, NodeType: mad.NodeType(n.Type), Port: p, Dest: q.pmaDest(lid)}
}

// firstPortLID is the LID of a CA's first discovered port (where the C
// tool asks its ClassPortInfo).
func firstPortLID(n *discovery.Node) uint16 {
	for p := 1; p <= n.NumPorts; p++ {
		if port := n.Port(p); port != nil {
			return port.BaseLID
		}
	}
	return 0
}

// capsPort is where the node's ClassPortInfo is asked: a switch's port 0,
// a CA's first port.
func (q *qeRun) capsPort(n *discovery.Node) query.CounterPort {
	if n.Type == discovery.NodeSwitch {
		return q.counterPort(n, 0)
	}
	for p := 1; p <= n.NumPorts; p++ {
		if n.Port(p) != nil {
			return q.counterPort(n, p)
		}
	}
	return q.counterPort(n, 0)
}

// check reads and judges the counters of the selected nodes: caps; the
// AllPortSelect sums and the other nodes' ports; the ports of the sums
// that show errors; the detail groups of the counters exceeded.
func (q *qeRun) check(nodes []*discovery.Node) {
	var capsPorts []query.CounterPort
	for _, n := range nodes {
		if !q.selected(n) {
			continue
		}
		qn := &qeNode{node: n, name: q.names.Name(n.GUID, string(n.NodeDesc))}
		q.nodes = append(q.nodes, qn)
		capsPorts = append(capsPorts, q.capsPort(n))
	}
	caps := query.ReadCaps(q.ctx, q.client, capsPorts, 0)
	readOpts := query.CounterOptions{Caps: caps, NoBasic: q.opts.countersOnly}
	if !q.opts.JSON && !q.opts.data && !q.opts.countersOnly {
		// The text judges PortCountersExtended's counters only where it
		// has the error counters: elsewhere reading it is a MAD per port
		// for nothing (the C tool reads it anyway).
		readOpts.WantExtended = func(c *query.PMACaps) bool { return c.ExtendedErrors() }
	}
	if q.opts.JSON && q.opts.details && !q.opts.countersOnly {
		readOpts.Groups = []*mad.StructDesc{mad.LookupStruct("PortXmitDiscardDetails"), mad.LookupStruct("PortRcvErrorDetails")}
	}

	var first []*qePort
	for _, qn := range q.nodes {
		qn.caps = caps[qn.node.GUID]
		// JSON has every port: no need for the sums.
		sum := qn.caps.Err == nil && qn.caps.Has(mad.PerfCapMaskAllPortSelect) && !q.opts.countersOnly && !q.opts.JSON
		if sum {
			qn.all = &qePort{node: qn, num: query.AllPortSelect}
			first = append(first, qn.all)
		}
		qn.checkPorts = !sum
		if qn.checkPorts {
			first = append(first, q.newPorts(qn)...)
		}
	}
	q.read(first, readOpts)

	var then []*qePort
	for _, qn := range q.nodes {
		if qn.all != nil && !qn.checkPorts && qn.all.counters.Err == nil && len(qn.all.exceeded) > 0 {
			qn.checkPorts = true
			then = append(then, q.newPorts(qn)...)
		}
	}
	q.read(then, readOpts)
	if q.opts.details && !q.opts.JSON && !q.opts.countersOnly {
		q.readDetails()
	}
}

// newPorts makes the ports of qn to read one by one.
func (q *qeRun) newPorts(qn *qeNode) []*qePort {
	for _, p := range qePorts(qn.node) {
		qn.ports = append(qn.ports, &qePort{node: qn, num: p.Num, port: p})
	}
	return qn.ports
}

// read reads the counters of ps and judges them.
func (q *qeRun) read(ps []*qePort, opts query.CounterOptions) {
	if len(ps) == 0 {
		return
	}
	cps := make([]query.CounterPort, len(ps))
	for i, p := range ps {
		cps[i] = q.portOwner(p)
	}
	for i, r := range query.ReadCounters(q.ctx, q.client, cps, opts) {
		ps[i].counters = r
		if r.Err == nil && !q.opts.countersOnly {
			ps[i].exceeded = q.judge(&ps[i].counters)
		}
	}
}

// portOwner is the CounterPort of p.
func (q *qeRun) portOwner(p *qePort) query.CounterPort { return q.counterPort(p.node.node, p.num) }

// qeReset is one reset of -k/-K and how it went.
type qeReset struct {
	node  *qeNode
	reset query.CounterReset
	err   error
}

// reset sends -k/-K's resets (none with --dry-run), after every read: a
// node's sum where its PMA has AllPortSelect, each port otherwise, as
// the C tool does. Failures are reported in the C tool's words; as
// "ibtool ibqueryerrors" (and with --dry-run) one line says what was
// reset.
func (q *qeRun) reset() {
	o := q.opts
	if !o.clearErrors && !o.clearCounts {
		return
	}
	var rs []query.CounterReset
	for _, qn := range q.nodes {
		n := qn.node
		if qn.caps.Err == nil && qn.caps.Has(mad.PerfCapMaskAllPortSelect) {
			cp := q.counterPort(n, query.AllPortSelect)
			for _, r := range query.ClearResets(cp, qn.caps, o.clearErrors, o.clearCounts, o.details) {
				rs = append(rs, r)
				q.resets = append(q.resets, qeReset{node: qn, reset: r})
			}
			continue
		}
		for _, p := range qePorts(n) {
			for _, r := range query.ClearResets(q.counterPort(n, p.Num), qn.caps, o.clearErrors, o.clearCounts, o.details) {
				rs = append(rs, r)
				q.resets = append(q.resets, qeReset{node: qn, reset: r})
			}
		}
	}
	by := "ibqueryerrors -k"
	if !o.clearErrors {
		by = "ibqueryerrors -K"
	}
	errs := query.ResetCounters(q.ctx, q.client, &query.Write{By: by}, rs, o.dryRun)
	failed := 0
	for i, err := range errs {
		r := &q.resets[i]
		r.err = err
		if err == nil {
			continue
		}
		failed++
		switch r.reset.Attr.Name {
		case "PortCounters":
			fmt.Fprintf(q.env.IO.Err, "Failed to reset errors %s port %d\n", r.node.name, r.reset.Port.Port)
		case "PortCountersExtended":
			fmt.Fprintf(q.env.IO.Err, "Failed to reset extended data counters %s, %s port %d\n", r.node.name, r.reset.Port.Dest, r.reset.Port.Port)
		}
		if q.opts.Verbose > 0 {
			fmt.Fprintf(q.env.IO.Err, "ibqueryerrors: %v\n", err)
		}
	}
	if !q.env.Compat || o.dryRun {
		fmt.Fprintln(q.env.IO.Err, q.resetLine(failed))
	}
}

// resetLine is the one line that says what -k/-K reset.
func (q *qeRun) resetLine(failed int) string {
	what := "error counters"
	switch {
	case q.opts.clearErrors && q.opts.clearCounts:
		what = "error and data counters"
	case q.opts.clearCounts:
		what = "data counters"
	}
	nodes := map[*qeNode]bool{}
	var attrs []string
	for _, r := range q.resets {
		nodes[r.node] = true
		if !slices.Contains(attrs, r.reset.Attr.Name) {
			attrs = append(attrs, r.reset.Attr.Name)
		}
	}
	if q.opts.dryRun {
		return fmt.Sprintf("ibqueryerrors: --dry-run: would reset %s: %d Sets to %d nodes (%s); nothing sent",
			what, len(q.resets), len(nodes), strings.Join(attrs, ", "))
	}
	return fmt.Sprintf("ibqueryerrors: reset %s: %d Sets to %d nodes (%s), %d failed",
		what, len(q.resets), len(nodes), strings.Join(attrs, ", "), failed)
}

// qeResetDoc is the JSON of -k/-K: every Set sent (or, with --dry-run,
// that would be).
type qeResetDoc struct {
	DryRun bool         `json:"dry_run"`
	Sets   []qeResetSet `json:"sets"`
}

type qeResetSet struct {
	NodeGUID       mad.GUID `json:"node_guid"`
	NodeName       string   `json:"node_name"`
	Port           int      `json:"port"`
	LID            uint16   `json:"lid"`
	Attribute      string   `json:"attribute"`
	CounterSelect  uint16   `json:"counter_select"`
	CounterSelect2 uint32   `json:"counter_select2"`
	Error          string   `json:"error,omitempty"`
}

func (q *qeRun) resetDoc() *qeResetDoc {
	if !q.opts.clearErrors && !q.opts.clearCounts {
		return nil
	}
	d := &qeResetDoc{DryRun: q.opts.dryRun, Sets: []qeResetSet{}}
	for _, r := range q.resets {
		s := qeResetSet{NodeGUID: mad.GUID(r.node.node.GUID), NodeName: r.node.name, Port: r.reset.Port.Port,
			LID: r.reset.Port.Dest.LID, Attribute: r.reset.Attr.Name,
			CounterSelect: uint16(r.reset.Select), CounterSelect2: r.reset.Select >> 16}
		if r.err != nil {
			s.Error = r.err.Error()
		}
		d.Sets = append(d.Sets, s)
	}
	return d
}
