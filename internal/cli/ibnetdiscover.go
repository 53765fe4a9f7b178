package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// Node-list selections of ibnetdiscover -l/-H/-S/-R (bit = node type).
const (
	listCA     = 1 << discovery.NodeCA
	listSwitch = 1 << discovery.NodeSwitch
	listRouter = 1 << discovery.NodeRouter
	listAll    = listCA | listSwitch | listRouter
)

// --diffcheck keys (ibnetdiscover.c DIFF_FLAG_*).
const (
	diffSwitch   = 0x01
	diffCA       = 0x02
	diffRouter   = 0x04
	diffPort     = 0x08
	diffLID      = 0x10
	diffNodeDesc = 0x20
	diffDefault  = diffSwitch | diffCA | diffRouter | diffPort
)

type ibnetdiscoverOptions struct {
	Common
	src                                  query.Source
	full, show, group, ports, reportHops bool
	list                                 int // listCA... ; the last of -l/-H/-S/-R wins
	cacheFile, diffFile                  string
	diffFlags                            int
}

// listFlag is a bool-like flag that stores its value in a shared variable,
// so that of a group of them the last one given wins, as in the C tools
// (ibnetdiscover's -l, -H, -S and -R; iblinkinfo's --switches-only and
// --cas-only).
type listFlag struct {
	dst *int
	val int
}

func (f *listFlag) String() string { return "false" }
func (f *listFlag) Type() string   { return "bool" }
func (f *listFlag) Set(s string) error {
	if s == "true" {
		*f.dst = f.val
	}
	return nil
}

func addListFlag(fs *pflag.FlagSet, dst *int, val int, name, short, usage string) {
	fl := fs.VarPF(&listFlag{dst: dst, val: val}, name, short, usage)
	fl.NoOptDefVal = "true"
}

// diffCheckFlag parses --diffcheck as the C tools do, when it is given: a
// comma-separated list of keys (any case; empty items are skipped, like
// strtok does), each a bit of the checks.
type diffCheckFlag struct {
	dst  *int
	keys map[string]int
}

func (f *diffCheckFlag) String() string { return "" }
func (f *diffCheckFlag) Type() string   { return "key(s)" }
func (f *diffCheckFlag) Set(s string) error {
	v := 0
	for _, k := range strings.Split(s, ",") {
		bit, ok := f.keys[strings.ToLower(k)]
		if !ok && k != "" {
			return fmt.Errorf("invalid diff check key: %s", k)
		}
		v |= bit
	}
	*f.dst = v
	return nil
}

// diffKeys are ibnetdiscover's --diffcheck keys.
var diffKeys = map[string]int{"sw": diffSwitch, "ca": diffCA, "router": diffRouter, "port": diffPort, "lid": diffLID, "nodedesc": diffNodeDesc}

func newIbnetdiscoverCmd(env *Env, _ string) *cobra.Command {
	opts := &ibnetdiscoverOptions{diffFlags: diffDefault}
	cmd := toolCommand("ibnetdiscover [options] [topology-file]", "Discover the fabric and print its topology")
	cmd.Long = `Discover the InfiniBand fabric from the local port and print its topology
(or a node list, a port report, a diff against a cache). The walk runs many
SMPs in parallel; the output is in the order infiniband-diags prints it.
What does not answer is summarised on stderr and left out of the output.`
	cmd.Args = cobra.ArbitraryArgs // the C tool uses the first and ignores the rest
	fs := cmd.Flags()
	fs.BoolVarP(&opts.full, "full", "f", false, "show full information (ports' speed and width, vlcap)")
	fs.BoolVarP(&opts.show, "show", "s", false, "show more information")
	addListFlag(fs, &opts.list, listAll, "list", "l", "list of connected nodes")
	fs.BoolVarP(&opts.group, "grouping", "g", false, "show grouping")
	addListFlag(fs, &opts.list, listCA, "Hca_list", "H", "list of connected CAs")
	addListFlag(fs, &opts.list, listSwitch, "Switch_list", "S", "list of connected switches")
	addListFlag(fs, &opts.list, listRouter, "Router_list", "R", "list of connected routers")
	opts.src.AddFlags(fs, query.AllSourceFlags)
	fs.StringVar(&opts.cacheFile, "cache", "", "filename to cache ibnetdiscover data to")
	fs.StringVar(&opts.diffFile, "diff", "", "filename of ibnetdiscover cache to diff")
	fs.Var(&diffCheckFlag{&opts.diffFlags, diffKeys}, "diffcheck", "specify checks to execute for --diff (sw,ca,router,port,lid,nodedesc)")
	fs.BoolVarP(&opts.ports, "ports", "p", false, "obtain a ports report")
	fs.BoolVarP(&opts.reportHops, "max_hops", "m", false, "report max hops discovered by the library")
	setupCommon(env, cmd, &opts.Common, "DGKLs")
	cmd.RunE = func(c *cobra.Command, args []string) error { return runIbnetdiscover(env, opts, args) }
	return cmd
}

// netdiscFailure is one of ibnetdiscover's IBEXITs. Most of its messages
// end in a newline of their own, so the C tool prints an empty line after
// the iberror line: cmsg keeps it. stderr: libibnetdisc warns there too.
func netdiscFailure(msg string, err error, stderr bool) error {
	return &ibFailure{cmsg: msg + "\n", what: msg, err: err, stderr: stderr}
}

// checkTimeout is ibdiag_common's check of -t, made before anything else.
func checkTimeout(c *Common) error {
	if _, err := c.timeoutMS(DefaultTimeoutMS); err != nil {
		return &ibFailure{cmsg: err.Error(), fn: "process_opt"}
	}
	return nil
}

// fabricFrom gets a command's fabric from its source: the cache, or a
// walk on a client opened for it (with a progress line on a terminal).
// found, if set, sees every node the walk finds.
func fabricFrom(env *Env, c *Common, src *query.Source, found func(discovery.FoundEvent)) (*discovery.Fabric, error) {
	if _, _, err := src.Mode(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	client, err := openSourceClient(env, c, src)
	if err != nil {
		return nil, err
	}
	if client != nil {
		defer client.Engine().Close()
	}
	return src.Fabric(context.Background(), client, query.Walk{Found: found, Progress: progressLine(env)})
}

// netdiscFabric is fabricFrom with ibnetdiscover's IBEXITs for a fabric
// it cannot have: libibnetdisc opens the local port itself, so a port that
// does not open is a failed discovery too.
func netdiscFabric(env *Env, c *Common, src *query.Source, found func(discovery.FoundEvent)) (*discovery.Fabric, error) {
	fab, err := fabricFrom(env, c, src, found)
	var se *query.SourceError
	if errors.As(err, &se) && se.Op != "discover" {
		return nil, netdiscFailure(se.Op+" failed", se.Err, false)
	}
	if errors.As(err, &se) {
		err = se.Err
	}
	if err != nil {
		return nil, discoverFailure(err)
	}
	return fab, nil
}

// discoverFailure is ibnetdiscover's "discover failed" for err; usage
// errors stay usage errors.
func discoverFailure(err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return netdiscFailure("discover failed", err, true)
}

// progressLine returns a progress reporter drawing one status line on
// stderr when stderr is a terminal, nil otherwise.
func progressLine(env *Env) func(discovery.Progress) {
	fd, ok := env.IO.Err.(*os.File)
	if !ok {
		return nil
	}
	if _, err := unix.IoctlGetTermios(int(fd.Fd()), unix.TCGETS); err != nil {
		return nil
	}
	return func(p discovery.Progress) {
		if p.Done {
			fmt.Fprint(fd, "\r\033[K")
			return
		}
		fmt.Fprintf(fd, "\rdiscovering: %d nodes (%d switches), %d ports, %d MADs, %d errors\033[K",
			p.Nodes, p.Switches, p.Ports, p.MADs, p.Errors)
	}
}

// ExitIncomplete is the exit status of a fabric-wide command whose walk
// could not read everything (docs/exit-codes.md).
const ExitIncomplete = 3

// walkIncomplete reports on stderr what the walk could not read (the
// output was printed without it), ending with a line that counts it. As
// `ibtool <cmd>` the command then exits ExitIncomplete, so that a script
// can tell; through a tool's symlink it exits 0 as the C tool does (it
// skips whatever does not answer), unless --fail-incomplete.
func walkIncomplete(env *Env, c *Common, tool string, f *discovery.Fabric) error {
	if f == nil || len(f.Errors) == 0 {
		return nil
	}
	fmt.Fprintf(env.IO.Err, "%s: warning: %d queries failed; the output leaves out what they would have found:\n", tool, len(f.Errors))
	const shown = 10
	for i, e := range f.Errors {
		if i == shown && c.Verbose == 0 {
			fmt.Fprintf(env.IO.Err, "  ... and %d more (-v lists them all)\n", len(f.Errors)-shown)
			break
		}
		fmt.Fprintf(env.IO.Err, "  %v\n", e)
	}
	fmt.Fprintf(env.IO.Err, "%s: incomplete: %d queries failed (%s)\n", tool, len(f.Errors), countWalkErrors(f.Errors))
	if env.Compat && !c.FailIncomplete {
		return nil
	}
	return &ExitError{Code: ExitIncomplete, Err: errSilent}
}

// countWalkErrors counts failed queries by attribute: "3 PortInfo, 1
// NodeInfo", most first.
func countWalkErrors(errs []*discovery.WalkError) string {
	counts := map[string]int{}
	for _, e := range errs {
		attr, _, _ := strings.Cut(e.What, " ")
		counts[attr]++
	}
	attrs := make([]string, 0, len(counts))
	for a := range counts {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool {
		if counts[attrs[i]] != counts[attrs[j]] {
			return counts[attrs[i]] > counts[attrs[j]]
		}
		return attrs[i] < attrs[j]
	})
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		parts[i] = fmt.Sprintf("%d %s", counts[a], a)
	}
	return strings.Join(parts, ", ")
}

func runIbnetdiscover(env *Env, opts *ibnetdiscoverOptions, args []string) error {
	c := &opts.Common
	res := &topologyResult{opts: opts}
	err := checkTimeout(c)
	if err == nil && len(args) > 0 {
		var file *os.File
		if file, err = os.Create(args[0]); err != nil {
			err = &ibFailure{cmsg: fmt.Sprintf("can't open file %s for writing", args[0]), err: err}
		} else {
			defer file.Close()
			res.file = file
		}
	}
	if err == nil {
		res.names = opts.src.Names(env.IO.Err)
		err = res.discover(env)
	}
	if err := finish(env, c, "ibnetdiscover", res, err); err != nil {
		return err
	}
	// After the output, as the C tool does: printing a CA cleans its
	// description, and the cache holds the cleaned text.
	if opts.cacheFile != "" {
		if err := cache.Write(opts.cacheFile, res.fab); err != nil {
			return ibFail(env, c, "ibnetdiscover", netdiscFailure("caching ibnetdiscover data failed", err, false))
		}
	}
	return walkIncomplete(env, c, "ibnetdiscover", res.fab)
}

// topologyResult is ibnetdiscover's result: the fabric, as the report the
// options chose (topology, node list, ports report or diff). Its JSON is
// the fabric's document.
type topologyResult struct {
	opts     *ibnetdiscoverOptions
	names    *nodename.Map
	fab      *discovery.Fabric
	diff     *discovery.Fabric // the --diff cache
	progress strings.Builder   // -s: the walk's lines, printed even if it fails
	file     io.Writer         // the topology file; nil: stdout
}

func (r *topologyResult) discover(env *Env) error {
	o := r.opts
	if o.diffFile != "" {
		var err error
		if r.diff, err = query.LoadCache(o.diffFile); err != nil {
			return netdiscFailure("loading cached fabric for diff failed", err, false)
		}
	}
	var found func(discovery.FoundEvent)
	if o.show {
		found = func(ev discovery.FoundEvent) { r.progress.WriteString(foundLine(ev)) }
	}
	fab, err := netdiscFabric(env, &o.Common, &o.src, found)
	if err != nil {
		return err
	}
	r.fab = fab
	return nil
}

// MarshalJSON builds the fabric's document only when it is asked for: on
// a big fabric it is megabytes, and text output has no use for it.
func (r *topologyResult) MarshalJSON() ([]byte, error) {
	if r.fab == nil {
		return json.Marshal(nil)
	}
	return json.Marshal(fabricJSON(r.fab, r.names, r.opts.list))
}

func (r *topologyResult) writeText(w io.Writer) error {
	if _, err := io.WriteString(w, r.progress.String()); err != nil || r.fab == nil {
		return err
	}
	o := r.opts
	out := w
	if r.file != nil && !o.ports { // the ports report goes to stdout
		out = r.file
	}
	tp := newTopoPrinter(r.fab, r.names, o.full)
	tp.w = bufio.NewWriter(out)
	switch {
	case o.ports:
		tp.portsReport()
	case o.list != 0:
		tp.listNodes(o.list)
	case r.diff != nil:
		tp.diff(r.diff, o.diffFlags)
	default:
		tp.topology(o.group, o.reportHops)
	}
	return tp.w.Flush()
}

// foundLine is libibnetdisc's show_progress line for a NodeInfo reply.
func foundLine(ev discovery.FoundEvent) string {
	prompt := "known"
	if ev.New {
		prompt = "new"
	}
	port := ev.Port
	if ev.Node.Type == discovery.NodeSwitch {
		port = 0
	}
	desc := ev.Desc
	if i := strings.IndexByte(string(desc), 0); i >= 0 {
		desc = desc[:i]
	}
	return fmt.Sprintf("DR path slid 0; dlid 0; %s -> %s %s {%016x} portnum %d lid %d-%d \"%s\"\n",
		mad.FormatDRPath(ev.Path), prompt, nodeTypeName(ev.Node.Type), ev.Node.GUID, port,
		ev.BaseLID, int(ev.BaseLID)+(1<<ev.LMC)-1, desc)
}

// nodeTypeName is libibmad's mad_dump_node_type.
func nodeTypeName(t int) string {
	switch t {
	case discovery.NodeCA:
		return "Channel Adapter"
	case discovery.NodeSwitch:
		return "Switch"
	case discovery.NodeRouter:
		return "Router"
	}
	return fmt.Sprintf("?(%d)", t)
}

// topoPrinter renders a fabric as ibnetdiscover (infiniband-diags 44).
type topoPrinter struct {
	w     *bufio.Writer
	f     *discovery.Fabric
	g     *discovery.Grouping
	names *nodename.Map
	full  bool
	// p0 is the last port 0 decoded (p0Info): every port of a switch
	// needs its port 0's capabilities.
	p0     *discovery.Port
	p0Info *mad.PortInfo
	buf    []byte // the port line being built
}

// rate is rateOf, decoding each switch's port 0 once.
func (tp *topoPrinter) rate(p *discovery.Port) portRate {
	return rateWith(p, func(p *discovery.Port) *mad.PortInfo {
		if p.Num == 0 && p == tp.p0 {
			return tp.p0Info
		}
		pi := p.Info()
		if p.Num == 0 {
			tp.p0, tp.p0Info = p, pi
		}
		return pi
	})
}

func newTopoPrinter(f *discovery.Fabric, names *nodename.Map, full bool) *topoPrinter {
	return &topoPrinter{f: f, g: f.Chassis(), names: names, full: full}
}

func (tp *topoPrinter) printf(format string, args ...any) { fmt.Fprintf(tp.w, format, args...) }

// typeList is libibnetdisc's per-type list: newest node first.
func typeList(f *discovery.Fabric, t int) []*discovery.Node {
	ns := f.NodesOfType(t)
	for i, j := 0, len(ns)-1; i < j; i, j = i+1, j-1 {
		ns[i], ns[j] = ns[j], ns[i]
	}
	return ns
}

// allNodes is libibnetdisc's node list: newest first.
func allNodes(f *discovery.Fabric) []*discovery.Node {
	ns := append([]*discovery.Node(nil), f.Nodes...)
	for i, j := 0, len(ns)-1; i < j; i, j = i+1, j-1 {
		ns[i], ns[j] = ns[j], ns[i]
	}
	return ns
}

// quotedName is ibnetdiscover's "S-<guid>" node name.
func quotedName(n *discovery.Node) string { return string(appendQuotedName(nil, n)) }

// appendQuotedName appends quotedName.
func appendQuotedName(b []byte, n *discovery.Node) []byte {
	c := byte('?')
	switch n.Type {
	case discovery.NodeSwitch:
		c = 'S'
	case discovery.NodeCA:
		c = 'H'
	case discovery.NodeRouter:
		c = 'R'
	}
	b = append(b, '"', c, '-')
	b = appendHex16(b, n.GUID)
	return append(b, '"')
}

func (tp *topoPrinter) name(n *discovery.Node) string {
	return tp.names.Name(n.GUID, string(n.NodeDesc))
}

// cleanDesc is clean_nodedesc. ibnetdiscover applies it to the node's own
// description when printing a CA or router, and that sticks: a cache
// written afterwards holds the cleaned text.
func cleanDesc(n *discovery.Node) string {
	for i, c := range n.NodeDesc {
		if i >= 64 || c == 0 {
			break
		}
		if c < 0x20 || c > 0x7e {
			n.NodeDesc[i] = ' '
		}
	}
	return nodename.CleanDesc(string(n.NodeDesc))
}

// remoteLID is the LID ibnetdiscover shows for the far end of a link.
func remoteLID(p *discovery.Port) uint16 {
	if p.Node.Type == discovery.NodeSwitch {
		return p.Node.SMALID
	}
	return p.BaseLID
}

func (tp *topoPrinter) outIDs(n *discovery.Node, group bool, chname *string, prefix string) {
	ni := n.Info()
	sys := uint64(ni.SystemImageGUID)
	tp.printf("\n%svendid=0x%x\n", prefix, ni.VendorID)
	tp.printf("%sdevid=0x%x\n", prefix, ni.DeviceID)
	if sys != 0 {
		tp.printf("%ssysimgguid=0x%x", prefix, sys)
	}
	chnum := tp.g.ChassisNum(n)
	if group && chnum != 0 {
		tp.printf("\t\t# Chassis %d", chnum)
		if chname != nil {
			tp.printf(" (%s)", nodename.CleanDesc(*chname))
		}
		if discovery.IsXsigoTCA(n.GUID) {
			if p := n.Port(1); p != nil && p.Remote != nil {
				tp.printf(" slot %d", p.Remote.Num)
			}
		}
	}
	if sys != 0 || (group && chnum != 0) {
		tp.printf("\n")
	}
}

func (tp *topoPrinter) switchDetail(n *discovery.Node, prefix string) {
	sp0 := "base"
	if n.EnhancedSP0 {
		sp0 = "enhanced"
	}
	tp.printf("%sSwitch\t%d %s\t\t# \"%s\" %s port 0 lid %d lmc %d",
		prefix, n.NumPorts, quotedName(n), tp.name(n), sp0, n.SMALID, n.SMALMC)
}

func (tp *topoPrinter) outSwitch(n *discovery.Node, group bool, chname *string, idPrefix, swPrefix string) {
	tp.outIDs(n, group, chname, idPrefix)
	tp.printf("%sswitchguid=0x%x", idPrefix, n.GUID)
	tp.printf("(%x)", uint64(n.Info().PortGUID))
	if group {
		tp.printf("\t# ")
		if s := tp.g.TypeName(n); s != "" {
			tp.printf("%s ", s)
		}
		if s := tp.g.SlotString(n); s != "" {
			tp.printf("%s", s)
		}
	}
	tp.printf("\n")
	tp.switchDetail(n, swPrefix)
	tp.printf("\n")
}

func caTypeNames(t int) (lower, upper string) {
	switch t {
	case discovery.NodeCA:
		return "ca", "Ca"
	case discovery.NodeRouter:
		return "rt", "Rt"
	}
	return "???", "???"
}

func (tp *topoPrinter) caDetail(n *discovery.Node, prefix string) {
	_, typ := caTypeNames(n.Type)
	tp.printf("%s%s\t%d %s\t\t# \"%s\"", prefix, typ, n.NumPorts, quotedName(n), cleanDesc(n))
}

func (tp *topoPrinter) outCA(n *discovery.Node, group bool, chname *string, idPrefix, caPrefix string) {
	tp.outIDs(n, group, chname, idPrefix)
	typ, _ := caTypeNames(n.Type)
	tp.printf("%s%sguid=0x%x\n", idPrefix, typ, n.GUID)
	tp.caDetail(n, caPrefix)
	if group && discovery.IsXsigoHCA(n.GUID) {
		tp.printf(" (scp)")
	}
	tp.printf("\n")
}

func (tp *topoPrinter) switchPort(p *discovery.Port, group bool, prefix string) {
	r := tp.rate(p)
	speed := uint32(r.pi.LinkSpeedActive)
	if r.ci == nil { // a switch without port 0 has no speed
		speed = 0
	}
	rem := p.Remote
	b := append(tp.buf[:0], prefix...)
	b = appendPortNum(b, p.Num)
	b = tp.appendExtPort(b, p, group)
	b = append(b, '\t')
	b = appendQuotedName(b, rem.Node)
	b = appendPortNum(b, rem.Num)
	b = tp.appendExtPort(b, rem, group)
	if rem.Node.Type != discovery.NodeSwitch {
		b = append(b, '(')
		b = strconv.AppendUint(b, rem.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, "\t\t# "...)
	b = tp.appendRemoteEnd(b, rem, r)
	if tp.full {
		b = appendSWV(b, speed, uint32(r.pi.LinkWidthActive), uint32(r.pi.VLCap))
	}
	if discovery.IsXsigoTCA(rem.GUID) {
		b = append(b, " slot "...)
		b = strconv.AppendInt(b, int64(p.Num), 10)
	} else if discovery.IsXsigoHCA(rem.GUID) {
		b = append(b, " (scp)"...)
	}
	b = append(b, '\n')
	tp.w.Write(b)
	tp.buf = b
}

func (tp *topoPrinter) caPort(p *discovery.Port, group bool, prefix string) {
	r := tp.rate(p)
	rem := p.Remote
	b := append(tp.buf[:0], prefix...)
	b = appendPortNum(b, p.Num)
	if p.Node.Type != discovery.NodeSwitch {
		b = append(b, '(')
		b = strconv.AppendUint(b, p.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, '\t')
	b = appendQuotedName(b, rem.Node)
	b = appendPortNum(b, rem.Num)
	b = tp.appendExtPort(b, rem, group)
	if rem.Node.Type != discovery.NodeSwitch {
		b = append(b, " ("...)
		b = strconv.AppendUint(b, rem.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, "\t\t# lid "...)
	b = strconv.AppendUint(b, uint64(p.BaseLID), 10)
	b = append(b, " lmc "...)
	b = strconv.AppendUint(b, uint64(p.LMC), 10)
	b = append(b, ' ')
	b = tp.appendRemoteEnd(b, rem, r)
	if tp.full {
		b = appendSWV(b, uint32(r.pi.LinkSpeedActive), uint32(r.pi.LinkWidthActive), uint32(r.pi.VLCap))
	}
	b = append(b, '\n')
	tp.w.Write(b)
	tp.buf = b
}

// appendRemoteEnd appends the far end of a link as both port lines end:
// `"<name>" lid <lid> <width><speed>`.
func (tp *topoPrinter) appendRemoteEnd(b []byte, rem *discovery.Port, r portRate) []byte {
	b = append(b, '"')
	b = append(b, tp.name(rem.Node)...)
	b = append(b, "\" lid "...)
	b = strconv.AppendUint(b, uint64(remoteLID(rem)), 10)
	b = append(b, ' ')
	b = append(b, r.compatWidth()...)
	return append(b, r.compatSpeed()...)
}

// appendPortNum appends "[n]".
func appendPortNum(b []byte, n int) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ']')
}

// appendExtPort appends extPort's "[ext N]".
func (tp *topoPrinter) appendExtPort(b []byte, p *discovery.Port, group bool) []byte {
	if group && p.ExtNum != 0 {
		b = append(b, "[ext "...)
		b = strconv.AppendInt(b, int64(p.ExtNum), 10)
		b = append(b, ']')
	}
	return b
}

// appendSWV appends --full's " s=%d w=%d v=%d".
func appendSWV(b []byte, speed, width, vls uint32) []byte {
	b = append(b, " s="...)
	b = strconv.AppendUint(b, uint64(speed), 10)
	b = append(b, " w="...)
	b = strconv.AppendUint(b, uint64(width), 10)
	b = append(b, " v="...)
	return strconv.AppendUint(b, uint64(vls), 10)
}

// switchWithPorts prints a switch and its linked ports.
func (tp *topoPrinter) switchWithPorts(n *discovery.Node, group bool, chname *string) {
	tp.outSwitch(n, group, chname, "", "")
	for p := 1; p <= n.NumPorts; p++ {
		if port := n.Port(p); port != nil && port.Remote != nil {
			tp.switchPort(port, group, "")
		}
	}
}

func (tp *topoPrinter) caWithPorts(n *discovery.Node, group bool, chname *string) {
	tp.outCA(n, group, chname, "", "")
	for p := 1; p <= n.NumPorts; p++ {
		if port := n.Port(p); port != nil && port.Remote != nil {
			tp.caPort(port, group, "")
		}
	}
}

// ctime formats t as C's ctime(3) does, newline included.
func ctime(t time.Time) string { return t.Format("Mon Jan _2 15:04:05 2006") + "\n" }

// topology is dump_topology: the topology file.
func (tp *topoPrinter) topology(group, reportHops bool) {
	f := tp.f
	tp.printf("#\n# Topology file: generated on %s#\n", ctime(time.Now()))
	if reportHops {
		tp.printf("# Reported max hops discovered: %d\n# Total MADs used: %d\n", f.MaxHops, f.MADs)
	}
	var fromPortGUID uint64
	if f.From != nil {
		fromPortGUID = uint64(f.From.Info().PortGUID)
		tp.printf("# Initiated from node %016x port %016x\n", f.From.GUID, fromPortGUID)
	}
	items := tp.topologyItems(group)
	for _, it := range items {
		if it.node != nil && it.node.Type != discovery.NodeSwitch {
			cleanDesc(it.node) // what caDetail does, before the goroutines below read descriptions
		}
	}
	formatInOrder(tp.w, len(items), func(i int) int {
		if n := items[i].node; n != nil {
			return 4 + n.NumPorts
		}
		return 1
	}, func(w *bufio.Writer, lo, hi int) {
		sub := &topoPrinter{w: w, f: tp.f, g: tp.g, names: tp.names, full: tp.full}
		for _, it := range items[lo:hi] {
			switch {
			case it.node == nil:
				sub.w.WriteString(it.text)
			case it.node.Type == discovery.NodeSwitch:
				sub.switchWithPorts(it.node, group, it.chname)
			default:
				sub.caWithPorts(it.node, group, it.chname)
			}
		}
	})
}

// topoItem is one piece of the topology file: text, or a node with its
// ports.
type topoItem struct {
	text   string
	node   *discovery.Node
	chname *string
}

// topologyItems lists the topology file's pieces after its heading, in
// order: the chassis first when grouping, then the switches, CAs and
// routers outside a chassis.
func (tp *topoPrinter) topologyItems(group bool) []topoItem {
	var items []topoItem
	text := func(format string, args ...any) { items = append(items, topoItem{text: fmt.Sprintf(format, args...)}) }
	node := func(n *discovery.Node, chname *string) { items = append(items, topoItem{node: n, chname: chname}) }
	if group {
		for _, ch := range tp.g.Chassis {
			if ch.Num == 0 {
				continue
			}
			text("\nChassis %d", ch.Num)
			chguid := tp.g.ChassisGUID(ch.Num)
			if chguid != 0 {
				text(" (guid 0x%x)", chguid)
			}
			text("\n")
			var chname *string
			if discovery.IsXsigoGUID(chguid) {
				for _, n := range ch.Nodes {
					if discovery.IsXsigoHCA(n.GUID) {
						d := string(n.NodeDesc)
						chname = &d
						text("Hostname: %s\n", nodename.CleanDesc(d))
					}
				}
			}
			text("\n# Spine Nodes")
			for _, n := range ch.Spines[1:] {
				if n != nil {
					node(n, chname)
				}
			}
			text("\n# Line Nodes")
			for _, n := range ch.Lines[1:] {
				if n != nil {
					node(n, chname)
				}
			}
			text("\n# Chassis Switches")
			for _, n := range ch.Nodes {
				if n.Type == discovery.NodeSwitch {
					node(n, chname)
				}
			}
			text("\n# Chassis CAs")
			for _, n := range ch.Nodes {
				if n.Type == discovery.NodeCA {
					node(n, chname)
				}
			}
		}
		text("\nNon-Chassis Nodes\n")
	}
	for _, t := range []int{discovery.NodeSwitch, discovery.NodeCA, discovery.NodeRouter} {
		for _, n := range typeList(tp.f, t) {
			if group && tp.g.ChassisNum(n) != 0 {
				continue
			}
			node(n, nil)
		}
	}
	return items
}

// listNodes is -l/-H/-S/-R.
func (tp *topoPrinter) listNodes(list int) {
	for _, t := range []int{discovery.NodeCA, discovery.NodeSwitch, discovery.NodeRouter} {
		if list&(1<<t) == 0 {
			continue
		}
		for _, n := range typeList(tp.f, t) {
			typ := "???"
			switch n.Type {
			case discovery.NodeSwitch:
				typ = "Switch"
			case discovery.NodeCA:
				typ = "Ca"
			case discovery.NodeRouter:
				typ = "Router"
			}
			ni := n.Info()
			tp.printf("%s\t : 0x%016x ports %d devid 0x%x vendid 0x%x \"%s\"\n",
				typ, n.GUID, n.NumPorts, ni.DeviceID, ni.VendorID, tp.name(n))
		}
	}
}

func typeShort(t int) string {
	switch t {
	case discovery.NodeSwitch:
		return "SW"
	case discovery.NodeCA:
		return "CA"
	case discovery.NodeRouter:
		return "RT"
	}
	return "??"
}

// portsReport is -p: every port of every node, highest port first.
func (tp *topoPrinter) portsReport() {
	for _, n := range allNodes(tp.f) {
		for p := n.NumPorts; p > 0; p-- {
			port := n.Port(p)
			if port == nil {
				continue
			}
			r := tp.rate(port)
			width := r.compatWidth()
			if r.ci == nil { // a switch without port 0: neither width nor speed
				width = mad.WidthCompatName(0)
			}
			lid := port.BaseLID
			if n.Type == discovery.NodeSwitch {
				lid = n.SMALID
			}
			name := tp.name(n)
			tp.printf("%2s %5d %2d 0x%016x %s %s", typeShort(n.Type), lid, port.Num, port.GUID, width, r.compatSpeed())
			if rem := port.Remote; rem != nil {
				tp.printf(" - %2s %5d %2d 0x%016x ( '%s' - '%s' )\n", typeShort(rem.Node.Type), remoteLID(rem),
					rem.Num, rem.GUID, name, tp.name(rem.Node))
			} else {
				tp.printf("%36s'%s'\n", "", name)
			}
		}
	}
}

// diffPrinter holds the parts of one direction of a --diff.
type diffPrinter struct {
	flags        int
	f1, f2       *discovery.Fabric
	prefix1      string
	prefix2      string
	header       func(n *discovery.Node, idPrefix, detailPrefix string)
	headerDetail func(n *discovery.Node, prefix string)
	port         func(p *discovery.Port, prefix string)
}

// diff is --diff: what changed between the cache (fabric 1, "<") and now
// (fabric 2, ">").
func (tp *topoPrinter) diff(orig *discovery.Fabric, flags int) {
	type kind struct {
		flag, typ int
		header    func(*discovery.Node, string, string)
		detail    func(*discovery.Node, string)
		port      func(*discovery.Port, string)
	}
	sw := func(n *discovery.Node, idp, dp string) { tp.outSwitch(n, false, nil, idp, dp) }
	ca := func(n *discovery.Node, idp, dp string) { tp.outCA(n, false, nil, idp, dp) }
	swPort := func(p *discovery.Port, prefix string) { tp.switchPort(p, false, prefix) }
	caPort := func(p *discovery.Port, prefix string) { tp.caPort(p, false, prefix) }
	for _, k := range []kind{
		{diffSwitch, discovery.NodeSwitch, sw, tp.switchDetail, swPort},
		{diffCA, discovery.NodeCA, ca, tp.caDetail, caPort},
		{diffRouter, discovery.NodeRouter, ca, tp.caDetail, caPort},
	} {
		if flags&k.flag == 0 {
			continue
		}
		d := &diffPrinter{flags: flags, f1: orig, f2: tp.f, prefix1: "< ", prefix2: "> ",
			header: k.header, headerDetail: k.detail, port: k.port}
		for _, n := range typeList(orig, k.typ) {
			tp.diffNode(d, n)
		}
		// The other way round only finds nodes that are new.
		d = &diffPrinter{flags: flags &^ (diffPort | diffLID | diffNodeDesc), f1: tp.f, f2: orig,
			prefix1: "> ", prefix2: "< ", header: k.header, headerDetail: k.detail, port: k.port}
		for _, n := range typeList(tp.f, k.typ) {
			tp.diffNode(d, n)
		}
	}
}

func descBytes(n *discovery.Node) [64]byte {
	var b [64]byte
	copy(b[:], n.NodeDesc)
	return b
}

func (tp *topoPrinter) diffNode(d *diffPrinter, n1 *discovery.Node) {
	n2 := d.f2.Node(n1.GUID)
	if n2 == nil {
		d.header(n1, d.prefix1, d.prefix1)
		for p := 1; p <= n1.NumPorts; p++ {
			if port := n1.Port(p); port != nil && port.Remote != nil {
				d.port(port, d.prefix1)
			}
		}
		return
	}
	if d.flags&(diffPort|diffLID|diffNodeDesc) == 0 {
		return
	}
	printed := false
	if (d.flags&diffLID != 0 && n1.SMALID != n2.SMALID) ||
		(d.flags&diffNodeDesc != 0 && descBytes(n1) != descBytes(n2)) {
		d.header(n1, "", d.prefix1)
		d.headerDetail(n2, d.prefix2)
		tp.printf("\n")
		printed = true
	}
	header := func() {
		if !printed {
			d.header(n1, "", "")
			printed = true
		}
	}
	if n1.NumPorts != n2.NumPorts {
		header()
		tp.printf("%snumports = %d\n", d.prefix1, n1.NumPorts)
		tp.printf("%snumports = %d\n", d.prefix2, n2.NumPorts)
		return
	}
	if d.flags&(diffPort|diffLID) == 0 {
		return
	}
	for p := 1; p <= n1.NumPorts; p++ {
		p1, p2 := n1.Port(p), n2.Port(p)
		out1, out2 := false, false
		if d.flags&diffPort != 0 {
			switch {
			case (p1 != nil && p2 == nil) || (p1 != nil && p2 != nil && p1.Remote != nil && p2.Remote == nil):
				out1 = true
			case (p1 == nil && p2 != nil) || (p1 != nil && p2 != nil && p1.Remote == nil && p2.Remote != nil):
				out2 = true
			case p1 != nil && p2 != nil && (p1.GUID != p2.GUID ||
				(p1.Remote != nil && p2.Remote != nil && p1.Remote.GUID != p2.Remote.GUID)):
				out1, out2 = true, true
			}
		}
		if d.flags&diffLID != 0 && p1 != nil && p2 != nil && p1.BaseLID != p2.BaseLID {
			out1, out2 = true, true
		}
		both := p1 != nil && p2 != nil && p1.Remote != nil && p2.Remote != nil
		if d.flags&diffPort != 0 && d.flags&diffNodeDesc != 0 && both &&
			descBytes(p1.Remote.Node) != descBytes(p2.Remote.Node) {
			out1, out2 = true, true
		}
		if d.flags&diffPort != 0 && d.flags&diffLID != 0 && both && p1.Remote.BaseLID != p2.Remote.BaseLID {
			out1, out2 = true, true
		}
		// The C tool would crash printing a port without a link; skip it.
		if out1 && p1 != nil && p1.Remote != nil {
			header()
			d.port(p1, d.prefix1)
		}
		if out2 && p2 != nil && p2.Remote != nil {
			header()
			d.port(p2, d.prefix2)
		}
	}
}

// The JSON form of a fabric (docs/json.md, "ibnetdiscover").
type fabricDoc struct {
	FromNodeGUID *mad.GUID    `json:"from_node_guid,omitempty"`
	FromPort     int          `json:"from_port"`
	MaxHops      int          `json:"max_hops"`
	MADs         int          `json:"mads"`
	Nodes        []nodeDoc    `json:"nodes"`
	Links        []linkDoc    `json:"links,omitempty"`
	Complete     bool         `json:"complete"` // no query failed: errors is empty
	Errors       []walkErrDoc `json:"errors"`
}

type nodeDoc struct {
	NodeGUID        mad.GUID       `json:"node_guid"`
	NodeType        jsonv.NodeType `json:"node_type"`
	Description     string         `json:"description"`
	NodeName        string         `json:"node_name"`
	NumPorts        int            `json:"num_ports"`
	SystemImageGUID mad.GUID       `json:"system_image_guid"`
	VendorID        uint32         `json:"vendor_id"`
	DeviceID        uint16         `json:"device_id"`
	LID             *uint16        `json:"lid,omitempty"`
	LMC             *uint8         `json:"lmc,omitempty"`
	EnhancedPort0   *bool          `json:"enhanced_port0,omitempty"`
	DRPath          string         `json:"dr_path,omitempty"`
	Ports           []portDoc      `json:"ports"`
}

type portDoc struct {
	Port         int      `json:"port"`
	PortGUID     mad.GUID `json:"port_guid"`
	ExternalPort int      `json:"external_port,omitempty"`
	LID          uint16   `json:"lid"`
	LMC          uint8    `json:"lmc"`
	*jsonv.PortState
	jsonv.Rate
	Remote *jsonv.LinkEnd `json:"remote,omitempty"`
}

type linkDoc struct {
	A jsonv.LinkEnd `json:"a"`
	B jsonv.LinkEnd `json:"b"`
}

type walkErrDoc struct {
	DRPath string `json:"dr_path"`
	What   string `json:"what"`
	Error  string `json:"error"`
}

func hexGUID(g uint64) string { return fmt.Sprintf("0x%016x", g) }

// nodeJSON describes one node for --json.
func nodeJSON(n *discovery.Node, names *nodename.Map) nodeDoc {
	ni := n.Info()
	d := nodeDoc{
		NodeGUID: mad.GUID(n.GUID), NodeType: nodeTypeOf(n),
		Description: nodename.CleanDesc(string(n.NodeDesc)), NodeName: names.Name(n.GUID, string(n.NodeDesc)),
		NumPorts: n.NumPorts, SystemImageGUID: ni.SystemImageGUID,
		VendorID: ni.VendorID, DeviceID: ni.DeviceID,
		Ports: []portDoc{},
	}
	if len(n.DRPath) > 0 {
		d.DRPath = mad.FormatDRPath(n.DRPath)
	}
	if n.Type == discovery.NodeSwitch {
		lid, lmc, enh := n.SMALID, n.SMALMC, n.EnhancedSP0
		d.LID, d.LMC, d.EnhancedPort0 = &lid, &lmc, &enh
	}
	for _, p := range n.Ports {
		if p == nil {
			continue
		}
		pd := portDoc{Port: p.Num, PortGUID: mad.GUID(p.GUID), ExternalPort: p.ExtNum, LID: p.BaseLID, LMC: p.LMC}
		if p.PortInfo != nil {
			pd.PortState = jsonv.PortStateOf(p.Info())
			// The rate of a link that is up (not of switch port 0).
			if (p.Num != 0 || n.Type != discovery.NodeSwitch) && p.Info().PortState != mad.PortStateDown {
				pd.Rate = portRateOf(p)
			}
		}
		if p.Remote != nil {
			end := linkEndOf(p.Remote, names)
			pd.Remote = &end
		}
		d.Ports = append(d.Ports, pd)
	}
	return d
}

// fabricJSON is the --json document; list (-l/-H/-S/-R) keeps only the
// nodes of those types and leaves the links out.
func fabricJSON(f *discovery.Fabric, names *nodename.Map, list int) fabricDoc {
	doc := fabricDoc{FromPort: f.FromPort, MaxHops: f.MaxHops, MADs: f.MADs, Nodes: []nodeDoc{}, Errors: []walkErrDoc{}}
	if f.From != nil {
		g := mad.GUID(f.From.GUID)
		doc.FromNodeGUID = &g
	}
	seen := map[*discovery.Port]bool{}
	for _, n := range f.Nodes {
		if list != 0 && list&(1<<n.Type) == 0 {
			continue
		}
		doc.Nodes = append(doc.Nodes, nodeJSON(n, names))
		if list != 0 {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || seen[p] {
				continue
			}
			seen[p], seen[p.Remote] = true, true
			doc.Links = append(doc.Links, linkDoc{A: linkEndOf(p, names), B: linkEndOf(p.Remote, names)})
		}
	}
	doc.Complete, doc.Errors = walkErrorsDoc(f)
	return doc
}

// walkErrorsDoc is a fabric's "complete" and "errors" in JSON: what the
// walk could not read.
func walkErrorsDoc(f *discovery.Fabric) (complete bool, errs []walkErrDoc) {
	errs = []walkErrDoc{}
	for _, e := range f.Errors {
		errs = append(errs, walkErrDoc{DRPath: mad.FormatDRPath(e.DRPath), What: e.What, Error: e.Reason()})
	}
	return len(errs) == 0, errs
}
