package smpquery

// smpquery: formatted SubnGet queries of one node or port, as
// infiniband-diags 44's smpquery prints them: NodeInfo, NodeDesc, PortInfo,
// PortInfoExtended, SwitchInfo, PKeyTable, SL2VLTable, VLArbitration,
// GUIDInfo and MlnxExtPortInfo, each asked with the same SMPs in the same
// order as the C tool, so partial output before a failure matches too.
//
// Targets: a LID (default, -L), a directed route (-D "0,1,3"), a LID and a
// directed route from it (-c, "combined": the DR SMP goes LID routed to the
// LID, DrSLID is our LID), or a port GUID (-G; the SMP goes LID routed to
// the LID of the SA's PathRecord, as libibmad's ib_path_query does).
// Without -D/-L/-G ibtool also takes every other target form endport
// knows (a DR path with a comma, a 0x GUID, a GID); the C tool only LIDs.
//
// Failures. In compat use (invoked as "smpquery") a failure prints the C
// tool's line on stdout, "smpquery: iberror: failed: operation portinfo:
// port info query failed", and exits 255, as IBEXIT does; our own
// explanation goes to stderr when the C tool writes there too (timeouts,
// PortInfoExtended not supported, -e/-d) or with -v. As "ibtool smpquery"
// the explanation goes to stderr and bad operations or targets are usage
// errors (exit 2).
//
// Deliberate differences from the C tool: numbers and DR paths must parse
// completely (C's strtol/atoi read "1x" as 1, "abc" and "0,x" hops as 0);
// -D/-L/-G exclude each other (C: the last one wins); a non-numeric -y is
// an error (C prompts for the M_Key); a DR path must start at 0.
// Combined routes (-c) are sent as libibmad sends them; ibsim does not
// forward them (the C tool times out too), and the timeout message says so.
//
// JSON (--json): {"operation" (the canonical name, "PortInfo"), "target"
// (docs/json.md's target: "route" ("lid"|"dr"|"combined"), "lid",
// "dr_path", "dr_slid", "guid" or "gid" (what a LID was resolved from),
// "text" (the C title's address: "Lid 2", "DR path slid 65535; dlid
// 65535; 0,1")), "port" (for port operations), and one of: "node_info",
// "port_info", "port_info_extended", "switch_info", "mlnx_ext_port_info"
// (the attribute as mad's JSON; M_Key is null unless -K), "node_description"
// {"node_guid", "description", "node_name" (after --node-name-map)}, "pkeys"
// {"capacity", "pkeys"}, "guids" {"capacity", "guids"}, "sl2vl" [{"in_port",
// "out_port", "vl_by_sl"}], "vlarb" {"base_port0" (true: a base switch port
// 0 has no tables), "low_cap", "high_cap", "low", "high" ([{"vl",
// "weight"}])}}.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type smpqueryOptions struct {
	cmdutil.Common
	combined    bool
	extended    bool
	nodeNameMap string
}

// smpOp is one smpquery operation (smpquery.c's match_tbl).
type smpOp struct {
	Name, alias string
	portArg     bool
	run         func(q *smpQuery) error
}

var SmpOps = []smpOp{
	{"NodeInfo", "NI", false, (*smpQuery).nodeInfo},
	{"NodeDesc", "ND", false, (*smpQuery).nodeDesc},
	{"PortInfo", "PI", true, (*smpQuery).portInfo},
	{"PortInfoExtended", "PIE", true, (*smpQuery).portInfoExtended},
	{"SwitchInfo", "SI", false, (*smpQuery).switchInfo},
	{"PKeyTable", "PKeys", true, (*smpQuery).pkeyTable},
	{"SL2VLTable", "SL2VL", true, (*smpQuery).sl2vlTable},
	{"VLArbitration", "VLArb", true, (*smpQuery).vlarbTable},
	{"GUIDInfo", "GI", false, (*smpQuery).guidInfo},
	{"MlnxExtPortInfo", "MEPI", true, (*smpQuery).mlnxExtPortInfo},
}

// lookupSmpOp matches an operation name or alias in any case, as match_op.
func lookupSmpOp(name string) *smpOp {
	for i := range SmpOps {
		if strings.EqualFold(SmpOps[i].Name, name) || strings.EqualFold(SmpOps[i].alias, name) {
			return &SmpOps[i]
		}
	}
	return nil
}

// smpqueryOpsHelp lists the operations as smpquery's usage does.
func smpqueryOpsHelp() string {
	var b strings.Builder
	b.WriteString("Supported ops (and aliases, case insensitive):\n")
	for _, op := range SmpOps {
		fmt.Fprintf(&b, "  %s (%s) <addr>", op.Name, op.alias)
		if op.portArg {
			b.WriteString(" [<portnum>]")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// NewCmd builds the smpquery command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &smpqueryOptions{}
	cmd := cmdutil.ToolCommand("smpquery [options] <op> <dest dr_path|lid|guid> [op params]", "Query SMP attributes of a node or port, formatted")
	cmd.Long = "smpquery sends SubnGet SMPs to one node and prints the attribute the way infiniband-diags does.\n" +
		"With --json it prints {\"operation\", \"target\", \"port\"} and the decoded attribute or table.\n\n" +
		smpqueryOpsHelp()
	cmd.Example = `  smpquery portinfo 3 1                 # portinfo by lid, with port modifier
  smpquery -G switchinfo 0x2C9000100D051  # switchinfo by guid
  smpquery -D nodeinfo 0                  # nodeinfo by direct route
  smpquery -c nodeinfo 6 0,12             # nodeinfo by combined route`
	fs := cmd.Flags()
	fs.BoolVarP(&opts.combined, "combined", "c", false, "use Combined route address argument")
	fs.StringVar(&opts.nodeNameMap, "node-name-map", "", "node name map file")
	fs.BoolVarP(&opts.extended, "extended", "x", false, "use extended speeds")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 {
			return cmdutil.UsageErrorf("expected <op> <dest dr_path|lid|guid> [op params]")
		}
		res, err := runSmpquery(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "smpquery", res, err)
	}
	return cmd
}

// SmpqueryResult is smpquery's result: its JSON, and what the operation
// got for the text, which shows what it had before any failure.
type SmpqueryResult struct {
	Operation        string          `json:"operation"`
	Target           *jsonv.Target   `json:"target"`
	Port             *int            `json:"port,omitempty"`
	NodeInfo         json.RawMessage `json:"node_info,omitempty"`
	NodeDescription  *smpNodeDesc    `json:"node_description,omitempty"`
	PortInfo         json.RawMessage `json:"port_info,omitempty"`
	PortInfoExtended json.RawMessage `json:"port_info_extended,omitempty"`
	SwitchInfo       json.RawMessage `json:"switch_info,omitempty"`
	PKeys            *smpPKeys       `json:"pkeys,omitempty"`
	SL2VL            []smpSL2VL      `json:"sl2vl,omitempty"`
	VLArb            *smpVLArb       `json:"vlarb,omitempty"`
	GUIDs            *smpGUIDs       `json:"guids,omitempty"`
	MlnxExtPortInfo  json.RawMessage `json:"mlnx_ext_port_info,omitempty"`

	showKeys  bool
	attr      mad.Struct // the one attribute of NodeInfo, PortInfo, ...
	attrTitle string     // "Node info", "Port info", ...
}

type smpNodeDesc struct {
	NodeGUID    mad.GUID `json:"node_guid"`
	Description string   `json:"description"`
	Name        string   `json:"node_name"`
}

type smpPKeys struct {
	Capacity int      `json:"capacity"`
	PKeys    []uint16 `json:"pkeys"`

	blocks []mad.PKeyTable // as read: the text shows whole rows of 8
}

type smpGUIDs struct {
	Capacity int        `json:"capacity"`
	GUIDs    []mad.GUID `json:"guids"`

	blocks []mad.GUIDInfo // as read: the text shows whole rows of 2
}

type smpSL2VL struct {
	InPort  int      `json:"in_port"`
	OutPort int      `json:"out_port"`
	VLBySL  [16]int8 `json:"vl_by_sl"`

	table mad.SLtoVLMappingTable
}

type smpVLArb struct {
	BasePort0 bool             `json:"base_port0"`
	LowCap    int              `json:"low_cap"`
	HighCap   int              `json:"high_cap"`
	Low       []mad.VLArbEntry `json:"low"`
	High      []mad.VLArbEntry `json:"high"`

	haveCaps bool    // the PortInfo with the capacities was read
	started  [2]bool // the Low, High table was asked for
}

// smpQuery is one smpquery run.
type smpQuery struct {
	opts   *smpqueryOptions
	c      *query.Client
	d      query.Dest
	opName string // as typed: "operation %s" in messages
	res    *SmpqueryResult
	names  *nodename.Map
}

func runSmpquery(env *cmdutil.Env, opts *smpqueryOptions, args []string) (cmdutil.Result, error) {
	opArg := args[0]
	op := lookupSmpOp(opArg)
	if op == nil {
		return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("operation '%s' not supported", opArg), Code: cmdutil.ExitUsage}
	}
	q := &smpQuery{opts: opts, opName: opArg, res: &SmpqueryResult{Operation: op.Name, showKeys: opts.ShowKeys}}
	targetArgs := 1
	if opts.combined {
		targetArgs = 2
	}
	if len(args) < 1+targetArgs {
		return nil, cmdutil.UsageErrorf("-c takes a LID and a directed route: <op> <lid> <dr_path> [op params]")
	}
	if params := args[1+targetArgs:]; op.portArg {
		port := 0
		if len(params) > 0 {
			v, err := endport.ParseUint(params[0], 32)
			if err != nil || v > 0x7fffffff {
				return nil, cmdutil.UsageErrorf("invalid port number %q", params[0])
			}
			port = int(v)
		}
		q.res.Port = &port
	}

	if _, err := opts.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return nil, &cmdutil.Failure{CMsg: err.Error()}
	}
	c, err := cmdutil.OpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) {
			return nil, err
		}
		return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("Failed to open '%s' port '%s'", cmdutil.OrDefault(opts.CA), ctext.OrZero(opts.Port)), Err: err, Stderr: true}
	}
	defer c.Engine().Close()
	q.c = c

	if q.res.Target, err = q.resolveTarget(args[1 : 1+targetArgs]); err != nil {
		return nil, err
	}
	q.names = nodename.Open(opts.nodeNameMap, env.IO.Err)
	return q.res, op.run(q)
}

// resolveTarget parses the destination as resolve_portid_str does for the
// chosen -D/-L/-G/-c. The JSON target's text is libibmad's portid2str; a
// GUID or GID is what the LID was resolved from.
func (q *smpQuery) resolveTarget(args []string) (*jsonv.Target, error) {
	cantResolve := func(err error, code int) error {
		return &cmdutil.Failure{CMsg: "can't resolve destination port " + strings.Join(args, " "), Err: err, Code: code, Stderr: code == cmdutil.ExitFailure}
	}
	var given endport.Target
	if q.opts.combined {
		lid, err := endport.ParseLID(args[0])
		if err != nil {
			return nil, cantResolve(err, cmdutil.ExitUsage)
		}
		path, err := endport.ParseDRPath(args[1])
		if err != nil {
			return nil, cantResolve(err, cmdutil.ExitUsage)
		}
		local, err := q.c.Local()
		if err != nil {
			return nil, cantResolve(fmt.Errorf("reading the local port: %w", err), cmdutil.ExitFailure)
		}
		q.d = query.Combined(lid, path, local.LID)
	} else {
		var err error
		if given, err = endport.ParseTargetOrName(args[0], q.opts.TypeFlags()); err != nil {
			return nil, cantResolve(err, cmdutil.ExitUsage)
		}
		if q.d, err = q.c.SMPDest(context.Background(), given); err != nil { // a GUID, GID or name through the SA
			return nil, cantResolve(err, cmdutil.ResolveCode(err))
		}
	}
	t := cmdutil.WithGiven(cmdutil.DestTarget(q.d, q.d.String()), given)
	return &t, nil
}

// get sends one SubnGet and decodes its reply into out; cmsg is the C
// tool's words when it fails.
func (q *smpQuery) get(mod uint32, out mad.Struct, cmsg string) error {
	if err := q.c.Get(context.Background(), q.d, mod, nil, out); err != nil {
		return cmdutil.SMPFailed("operation "+q.opName+": "+cmsg, "", q.d, err)
	}
	return nil
}

// failed is an IBEXIT of the operation that is not about a MAD.
func (q *smpQuery) failed(cmsg string, err error, stderr bool) error {
	return &cmdutil.Failure{CMsg: "operation " + q.opName + ": " + cmsg, Err: err, Stderr: stderr}
}

func (q *smpQuery) port() int { return *q.res.Port }

// getAttr is the operations that show one attribute: title, then the
// attribute in libibmad's dotted form.
func (q *smpQuery) getAttr(mod uint32, s mad.Struct, into *json.RawMessage, title, cmsg string) error {
	if err := q.get(mod, s, cmsg); err != nil {
		return err
	}
	q.res.attr, q.res.attrTitle = s, title
	*into = mad.JSON(s, q.opts.ShowKeys) // key fields null unless -K
	return nil
}

func (q *smpQuery) nodeInfo() error {
	return q.getAttr(0, &mad.NodeInfo{}, &q.res.NodeInfo, "Node info", "node info query failed")
}

func (q *smpQuery) portInfo() error {
	mod := uint32(q.port())
	if q.opts.extended {
		mod |= 1 << 31
	}
	return q.getAttr(mod, &mad.PortInfo{}, &q.res.PortInfo, "Port info", "port info query failed")
}

func (q *smpQuery) mlnxExtPortInfo() error {
	return q.getAttr(uint32(q.port()), &mad.MlnxExtPortInfo{}, &q.res.MlnxExtPortInfo, "MLNX ext Port info", "Mellanox ext port info query failed")
}

func (q *smpQuery) switchInfo() error {
	return q.getAttr(0, &mad.SwitchInfo{}, &q.res.SwitchInfo, "Switch info", "switch info query failed")
}

// portInfoExtended first checks CapabilityMask2, as
// is_port_info_extended_supported does (its failures are bare IBEXITs,
// without "operation %s: ").
func (q *smpQuery) portInfoExtended() error {
	ctx := context.Background()
	var ni mad.NodeInfo
	if err := q.c.Get(ctx, q.d, 0, nil, &ni); err != nil {
		return cmdutil.SMPFailed("node info query failed", "", q.d, err)
	}
	capPort := uint32(q.port())
	if ni.NodeType == mad.NodeTypeSwitch {
		capPort = 0
	}
	var pi mad.PortInfo
	if err := q.c.Get(ctx, q.d, capPort, nil, &pi); err != nil {
		return cmdutil.SMPFailed("port info query failed", "", q.d, err)
	}
	var why string
	if pi.CapabilityMask&uint32(mad.PortCapMaskCapabilityMask2) == 0 {
		why = "port info capability mask2 not supported"
	} else if pi.CapabilityMask2&uint16(mad.PortCapMask2PortInfoExtended) == 0 {
		why = fmt.Sprintf("port info capability mask2 = 0x%x doesn't indicate PortInfoExtended support", pi.CapabilityMask2)
	}
	if why != "" {
		return q.failed("port info extended not supported", errors.New(why), true)
	}
	return q.getAttr(uint32(q.port()), &mad.PortInfoExtended{}, &q.res.PortInfoExtended, "Port info Extended", "port info extended query failed")
}

func (q *smpQuery) nodeDesc() error {
	var ni mad.NodeInfo
	if err := q.get(0, &ni, "node info query failed"); err != nil {
		return err
	}
	var nd mad.NodeDescription
	if err := q.get(0, &nd, "node desc query failed"); err != nil {
		return err
	}
	name := q.names.Name(uint64(ni.NodeGUID), nd.String())
	q.res.NodeDescription = &smpNodeDesc{NodeGUID: ni.NodeGUID, Description: nodename.CleanDesc(nd.String()), Name: name}
	return nil
}

// portNodeInfo is the NodeInfo the table operations check the port number
// against.
func (q *smpQuery) portNodeInfo() (*mad.NodeInfo, error) {
	var ni mad.NodeInfo
	if err := q.get(0, &ni, "node info query failed"); err != nil {
		return nil, err
	}
	if port := q.port(); port > int(ni.NumPorts) {
		return nil, q.failed("invalid port number", fmt.Errorf("port %d: the node has %d ports", port, ni.NumPorts), false)
	}
	return &ni, nil
}

func (q *smpQuery) pkeyTable() error {
	port := q.port()
	ni, err := q.portNodeInfo()
	if err != nil {
		return err
	}
	n := int(ni.PartitionCap)
	if ni.NodeType == mad.NodeTypeSwitch && port != 0 {
		var si mad.SwitchInfo
		if err := q.get(0, &si, "switch info failed"); err != nil {
			return err
		}
		n = int(si.PartitionEnforcementCap)
	}
	res := &smpPKeys{Capacity: n, PKeys: []uint16{}}
	q.res.PKeys = res
	for i := 0; i < (n+31)/32; i++ {
		var t mad.PKeyTable
		if err := q.get(uint32(i|port<<16), &t, "pkey table query failed"); err != nil {
			return err
		}
		res.blocks = append(res.blocks, t)
		res.PKeys = append(res.PKeys, t.PKey[:min(32, n-i*32)]...)
	}
	return nil
}

func (q *smpQuery) sl2vlTable() error {
	port := q.port()
	ni, err := q.portNodeInfo()
	if err != nil {
		return err
	}
	q.res.SL2VL = []smpSL2VL{} // the title is shown from here on
	entry := func(in, out int) error {
		e := smpSL2VL{InPort: in, OutPort: out}
		if err := q.get(uint32(in<<8|out), &e.table, "slvl query failed"); err != nil {
			return err
		}
		for i, vl := range e.table.VL {
			e.VLBySL[i] = int8(vl)
		}
		q.res.SL2VL = append(q.res.SL2VL, e)
		return nil
	}
	if ni.NodeType != mad.NodeTypeSwitch {
		return entry(0, 0)
	}
	for in := 0; in <= int(ni.NumPorts); in++ {
		if err := entry(in, port); err != nil {
			return err
		}
	}
	return nil
}

func (q *smpQuery) vlarbTable() error {
	port := q.port()
	res := &smpVLArb{Low: []mad.VLArbEntry{}, High: []mad.VLArbEntry{}}
	q.res.VLArb = res
	// Port 0 is a switch's management port, or the port the SMP came in on.
	if port == 0 {
		var ni mad.NodeInfo
		if err := q.get(0, &ni, "node info query failed"); err != nil {
			return err
		}
		if ni.NodeType == mad.NodeTypeSwitch {
			var si mad.SwitchInfo
			if err := q.get(0, &si, "switch info query failed"); err != nil {
				return err
			}
			if si.EnhancedPort0 == 0 {
				res.BasePort0 = true
				return nil
			}
		}
	}
	var pi mad.PortInfo
	if err := q.get(uint32(port), &pi, "port info query failed"); err != nil {
		return err
	}
	res.LowCap, res.HighCap, res.haveCaps = int(pi.VLArbitrationLowCap), int(pi.VLArbitrationHighCap), true
	// A table is at most 2 blocks of 32 entries (IBA 14.2.5.9).
	table := func(i, block, capacity int, into *[]mad.VLArbEntry) error {
		res.started[i] = true
		for b, left := block, capacity; ; b, left = b+1, left-32 {
			var t mad.VLArbitrationTable
			if err := q.get(uint32(b<<16|port), &t, "vl arb query failed"); err != nil {
				return err
			}
			*into = append(*into, t.Entry[:min(left, 32)]...)
			if left <= 32 || b > block {
				return nil
			}
		}
	}
	if res.LowCap > 0 {
		if err := table(0, 1, res.LowCap, &res.Low); err != nil {
			return err
		}
	}
	if res.HighCap > 0 {
		return table(1, 3, res.HighCap, &res.High)
	}
	return nil
}

func (q *smpQuery) guidInfo() error {
	var pi mad.PortInfo
	if err := q.get(0, &pi, "port info failed"); err != nil {
		return err
	}
	n := int(pi.GUIDCap)
	res := &smpGUIDs{Capacity: n, GUIDs: []mad.GUID{}}
	q.res.GUIDs = res
	for i := 0; i < (n+7)/8; i++ {
		var gi mad.GUIDInfo
		if err := q.get(uint32(i), &gi, "guid info query failed"); err != nil {
			return err
		}
		res.blocks = append(res.blocks, gi)
		res.GUIDs = append(res.GUIDs, gi.GUID[:min(8, n-i*8)]...)
	}
	return nil
}

// WriteText prints what the operation got as the C tool does.
func (r *SmpqueryResult) WriteText(w io.Writer) error {
	var b strings.Builder
	title := r.Target.Text
	if r.Port != nil {
		title += fmt.Sprintf(" port %d", *r.Port)
	}
	if r.attr != nil {
		fmt.Fprintf(&b, "# %s: %s\n%s", r.attrTitle, title, mad.Dotted(r.attr, &mad.DottedOptions{ShowKeys: r.showKeys}))
	}
	if nd := r.NodeDescription; nd != nil {
		dots := "."
		if len(nd.Name) < 32 {
			dots = strings.Repeat(".", 32-len(nd.Name))
		}
		fmt.Fprintf(&b, "Node Description:%s%s\n", dots, nd.Name)
	}
	if p := r.PKeys; p != nil {
		n, blocks := p.Capacity, (p.Capacity+31)/32
		for i, t := range p.blocks {
			k := 32
			if i+1 == blocks {
				k = (n + 7 - i*32) / 8 * 8
			}
			for j, key := range t.PKey[:k] {
				if j%8 == 0 {
					fmt.Fprintf(&b, "%4d:", i*32+j)
				}
				fmt.Fprintf(&b, " 0x%04x", key)
				if j%8 == 7 {
					b.WriteByte('\n')
				}
			}
		}
		if len(p.blocks) == blocks {
			fmt.Fprintf(&b, "%d pkeys capacity for this port\n", n)
		}
	}
	if r.SL2VL != nil {
		fmt.Fprintf(&b, "# SL2VL table: %s\n#                 SL: |", r.Target.Text)
		for i := 0; i < 16; i++ {
			fmt.Fprintf(&b, "%2d|", i)
		}
		b.WriteString("\n")
		for _, e := range r.SL2VL {
			fmt.Fprintf(&b, "ports: in %2d, out %2d: %s", e.InPort, e.OutPort, mad.FormatSLtoVL(&e.table))
		}
	}
	if va := r.VLArb; va != nil {
		if va.BasePort0 {
			fmt.Fprintf(&b, "# No VLArbitration tables (BSP0): %s\n", title)
		}
		if va.haveCaps {
			fmt.Fprintf(&b, "# VLArbitration tables: %s LowCap %d HighCap %d\n", title, va.LowCap, va.HighCap)
		}
		for i, entries := range [][]mad.VLArbEntry{va.Low, va.High} {
			if !va.started[i] {
				continue
			}
			fmt.Fprintf(&b, "# %s priority VL Arbitration Table:", [...]string{"Low", "High"}[i])
			for len(entries) > 0 {
				var t mad.VLArbitrationTable
				n := copy(t.Entry[:], entries)
				b.WriteString(mad.FormatVLArbitration(&t, n))
				entries = entries[n:]
			}
		}
	}
	if g := r.GUIDs; g != nil {
		n, blocks := g.Capacity, (g.Capacity+7)/8
		for i, gi := range g.blocks {
			k := 8
			if i+1 == blocks {
				k = (n + 1 - i*8) / 2 * 2
			}
			for j := 0; j < k; j += 2 {
				fmt.Fprintf(&b, "%4d: 0x%016x 0x%016x\n", i*8+j, uint64(gi.GUID[j]), uint64(gi.GUID[j+1]))
			}
		}
		if len(g.blocks) == blocks {
			fmt.Fprintf(&b, "%d guids capacity for this port\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
