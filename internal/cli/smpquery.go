package cli

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
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

func init() { register(newSmpqueryCmd) }

type smpqueryOptions struct {
	Common
	combined    bool
	extended    bool
	nodeNameMap string
}

// smpOp is one smpquery operation (smpquery.c's match_tbl).
type smpOp struct {
	name, alias string
	portArg     bool
	run         func(q *smpQuery) error
}

var smpOps = []smpOp{
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
	for i := range smpOps {
		if strings.EqualFold(smpOps[i].name, name) || strings.EqualFold(smpOps[i].alias, name) {
			return &smpOps[i]
		}
	}
	return nil
}

// smpqueryOpsHelp lists the operations as smpquery's usage does.
func smpqueryOpsHelp() string {
	var b strings.Builder
	b.WriteString("Supported ops (and aliases, case insensitive):\n")
	for _, op := range smpOps {
		fmt.Fprintf(&b, "  %s (%s) <addr>", op.name, op.alias)
		if op.portArg {
			b.WriteString(" [<portnum>]")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func newSmpqueryCmd(env *Env) *cobra.Command {
	opts := &smpqueryOptions{}
	cmd := toolCommand("smpquery [options] <op> <dest dr_path|lid|guid> [op params]", "Query SMP attributes of a node or port, formatted")
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
	setupCommon(env, cmd, &opts.Common, "")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 {
			return usageErrorf("expected <op> <dest dr_path|lid|guid> [op params]")
		}
		return runSmpquery(env, opts, args)
	}
	return cmd
}

// ibFailure is a failed smpquery step: the C tool's message and the cause.
// smpTarget is the destination of smpquery's SMPs: the JSON target (Text
// is libibmad's portid2str; GUID or GID what the LID was resolved from)
// and the directed route.
type smpTarget struct {
	jsonv.Target
	path []byte
}

// smpqueryResult is smpquery's JSON output.
type smpqueryResult struct {
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
}

type smpNodeDesc struct {
	NodeGUID    mad.GUID `json:"node_guid"`
	Description string   `json:"description"`
	Name        string   `json:"node_name"`
}

type smpPKeys struct {
	Capacity int      `json:"capacity"`
	PKeys    []uint16 `json:"pkeys"`
}

type smpGUIDs struct {
	Capacity int        `json:"capacity"`
	GUIDs    []mad.GUID `json:"guids"`
}

type smpSL2VL struct {
	InPort  int      `json:"in_port"`
	OutPort int      `json:"out_port"`
	VLBySL  [16]int8 `json:"vl_by_sl"`
}

type smpVLArb struct {
	BasePort0 bool             `json:"base_port0"`
	LowCap    int              `json:"low_cap"`
	HighCap   int              `json:"high_cap"`
	Low       []mad.VLArbEntry `json:"low"`
	High      []mad.VLArbEntry `json:"high"`
}

// smpQuery is one smpquery run: the engine, the target and the output.
type smpQuery struct {
	env    *Env
	opts   *smpqueryOptions
	eng    *rpc.Engine
	target *smpTarget
	mkey   uint64
	opName string // as typed: "operation %s" in messages
	params []string
	out    strings.Builder
	res    smpqueryResult
	names  *nodename.Map
}

func runSmpquery(env *Env, opts *smpqueryOptions, args []string) error {
	opArg := args[0]
	op := lookupSmpOp(opArg)
	if op == nil {
		return smpFail(env, opts, nil, &ibFailure{cmsg: fmt.Sprintf("operation '%s' not supported", opArg), code: ExitUsage})
	}
	q := &smpQuery{env: env, opts: opts, opName: opArg}
	q.res.Operation = op.name
	if opts.MKey != "" {
		k, err := endport.ParseUint(opts.MKey, 64)
		if err != nil {
			return usageErrorf("invalid M_Key %q: %v", opts.MKey, err)
		}
		q.mkey = k
	}
	targetArgs := 1
	if opts.combined {
		targetArgs = 2
	}
	if len(args) < 1+targetArgs {
		return usageErrorf("-c takes a LID and a directed route: <op> <lid> <dr_path> [op params]")
	}
	q.params = args[1+targetArgs:]
	if op.portArg {
		port := 0
		if len(q.params) > 0 {
			v, err := endport.ParseUint(q.params[0], 32)
			if err != nil || v > 0x7fffffff {
				return usageErrorf("invalid port number %q", q.params[0])
			}
			port = int(v)
		}
		q.res.Port = &port
	}

	if _, err := opts.timeoutMS(DefaultTimeoutMS); err != nil {
		return smpFail(env, opts, nil, &ibFailure{cmsg: err.Error()})
	}
	eng, err := openEngine(env, &opts.Common, engineConfig{timeout: rpc.DefaultTimeout})
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err
		}
		return smpFail(env, opts, nil, &ibFailure{cmsg: fmt.Sprintf("Failed to open '%s' port '%s'", orDefault(opts.CA), orZero(opts.Port)), err: err, stderr: true})
	}
	defer eng.Close()
	q.eng = eng

	if err := q.resolveTarget(args[1 : 1+targetArgs]); err != nil {
		return smpFail(env, opts, q, err)
	}
	q.res.Target = &q.target.Target
	q.names = nodename.Open(opts.nodeNameMap, env.IO.Err)

	if err := op.run(q); err != nil {
		var f *ibFailure
		if errors.As(err, &f) && !f.bare() {
			f.cmsg = fmt.Sprintf("operation %s: %s", q.opName, f.cmsg)
		}
		return smpFail(env, opts, q, err)
	}
	if opts.JSON {
		return writeJSON(env.IO.Out, &q.res)
	}
	_, err = fmt.Fprint(env.IO.Out, q.out.String())
	return err
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// bareFailure marks messages the C tool prints without "operation %s: "
// (IBEXITs outside the operation functions).
const bareFailure = "\x00bare"

func (f *ibFailure) bare() bool { return strings.HasPrefix(f.cmsg, bareFailure) }

// smpFail reports a failure: the output so far, then, in compat use, the C
// tool's IBEXIT line on stdout.
func smpFail(env *Env, opts *smpqueryOptions, q *smpQuery, err error) error {
	var f *ibFailure
	if !errors.As(err, &f) {
		f = &ibFailure{cmsg: err.Error()}
		err = f
	}
	f.cmsg = strings.TrimPrefix(f.cmsg, bareFailure)
	if q != nil && !opts.JSON {
		fmt.Fprint(env.IO.Out, q.out.String())
	}
	return reportIBExit(env, &opts.Common, "smpquery", f, err)
}

// resolveTarget parses the destination as resolve_portid_str does for the
// chosen -D/-L/-G/-c.
func (q *smpQuery) resolveTarget(args []string) error {
	opts := q.opts
	cantResolve := func(err error) error {
		return &ibFailure{cmsg: bareFailure + "can't resolve destination port " + strings.Join(args, " "), err: err, code: ExitUsage}
	}
	if opts.combined {
		lid, err := endport.ParseLID(args[0])
		if err != nil {
			return cantResolve(err)
		}
		path, err := endport.ParseDRPath(args[1])
		if err != nil {
			return cantResolve(err)
		}
		info, err := q.eng.Port().Info()
		if err != nil {
			f := cantResolve(fmt.Errorf("reading the local port: %w", err)).(*ibFailure)
			f.code, f.stderr = ExitFailure, true
			return f
		}
		q.target = &smpTarget{Target: jsonv.Target{Route: jsonv.RouteCombined, LID: lid, DRPath: mad.FormatDRPath(path), DRSLID: info.LID}, path: path}
		q.target.Text = fmt.Sprintf("Lid %d", lid)
		if len(path) > 1 {
			q.target.Text += fmt.Sprintf(" DR path slid %d; dlid 65535; %s", info.LID, q.target.DRPath)
		}
		return nil
	}
	t, err := endport.ParseTarget(args[0], endport.TypeFlags{Direct: opts.Direct, LID: opts.Lid, GUID: opts.Guid})
	if err != nil {
		return cantResolve(err)
	}
	switch t.Kind {
	case endport.ByLID:
		q.target = &smpTarget{Target: jsonv.Target{Route: jsonv.RouteLID, LID: t.LID, Text: fmt.Sprintf("Lid %d", t.LID)}}
	case endport.ByDRPath:
		q.target = &smpTarget{Target: jsonv.Target{Route: jsonv.RouteDR, DRPath: mad.FormatDRPath(t.DRPath)}, path: t.DRPath}
		q.target.Text = "DR path slid 65535; dlid 65535; " + q.target.DRPath
	default: // a GUID or GID: the SA's PathRecord gives the LID
		r, err := newResolver(q.eng, &opts.Common)
		var lid uint16
		if err == nil {
			lid, err = r.SMPLID(context.Background(), t)
		}
		if err != nil {
			f := cantResolve(err).(*ibFailure)
			f.code, f.stderr = ExitFailure, true
			return f
		}
		q.target = &smpTarget{Target: withGiven(jsonv.Target{Route: jsonv.RouteLID, LID: lid, Text: fmt.Sprintf("Lid %d", lid)}, t)}
	}
	return nil
}

// request builds a SubnGet of attr for the target.
func (q *smpQuery) request(attr uint16, mod uint32) *rpc.Request {
	var req *rpc.Request
	switch q.target.Route {
	case "dr":
		req = &rpc.Request{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: mad.NewDRSMP(mad.MethodGet, attr, mod, q.target.path)}
	case "combined":
		m := mad.NewDRSMP(mad.MethodGet, attr, mod, q.target.path)
		binary.BigEndian.PutUint16(m[32:], q.target.DRSLID) // DrSLID: LID routed up to here
		req = &rpc.Request{Addr: umad.Address{LID: q.target.LID}, MAD: m}
	default:
		req = &rpc.Request{Addr: umad.Address{LID: q.target.LID}, MAD: mad.NewLIDSMP(mad.MethodGet, attr, mod)}
	}
	binary.BigEndian.PutUint64(req.MAD[24:], q.mkey) // M_Key (IBA 14.2.1.1)
	return req
}

// get sends one SubnGet and decodes its reply into s; failMsg is the C
// tool's words when it fails.
func (q *smpQuery) get(attr uint16, mod uint32, s mad.Struct, failMsg string) error {
	req := q.request(attr, mod)
	reply, err := q.eng.Do(context.Background(), req)
	if err != nil {
		if q.target.Route == "combined" {
			var te *rpc.TimeoutError
			if errors.As(err, &te) {
				err = fmt.Errorf("%w; combined DR+LID routes need SMAs that forward them (ibsim drops them)", err)
			}
		}
		return &ibFailure{cmsg: failMsg, err: err, stderr: true}
	}
	// libibmad checks the 15 status bits below the DR direction bit.
	if reply.MAD.Status()&^mad.DirectionBit != 0 {
		return &ibFailure{cmsg: failMsg, err: &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: reply.MAD}}
	}
	if err := s.Unmarshal(reply.MAD.SMPData()); err != nil {
		return &ibFailure{cmsg: failMsg, err: err, stderr: true}
	}
	return nil
}

func (q *smpQuery) port() int { return *q.res.Port }

// attrJSON is s as mad's JSON, with key fields null unless -K.
func (q *smpQuery) attrJSON(s mad.Struct) json.RawMessage {
	return mad.JSON(s, q.opts.ShowKeys)
}

func (q *smpQuery) dotted(s mad.Struct) string {
	return mad.Dotted(s, &mad.DottedOptions{ShowKeys: q.opts.ShowKeys})
}

func (q *smpQuery) nodeInfo() error {
	var ni mad.NodeInfo
	if err := q.get(mad.AttrNodeInfo, 0, &ni, "node info query failed"); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# Node info: %s\n%s", q.target.Text, q.dotted(&ni))
	q.res.NodeInfo = q.attrJSON(&ni)
	return nil
}

func (q *smpQuery) nodeDesc() error {
	var ni mad.NodeInfo
	if err := q.get(mad.AttrNodeInfo, 0, &ni, "node info query failed"); err != nil {
		return err
	}
	var nd mad.NodeDescription
	if err := q.get(mad.AttrNodeDescription, 0, &nd, "node desc query failed"); err != nil {
		return err
	}
	name := q.names.Name(uint64(ni.NodeGUID), nd.String())
	dots := "."
	if len(name) < 32 {
		dots = strings.Repeat(".", 32-len(name))
	}
	fmt.Fprintf(&q.out, "Node Description:%s%s\n", dots, name)
	q.res.NodeDescription = &smpNodeDesc{NodeGUID: ni.NodeGUID, Description: nodename.CleanDesc(nd.String()), Name: name}
	return nil
}

func (q *smpQuery) portInfo() error {
	mod := uint32(q.port())
	if q.opts.extended {
		mod |= 1 << 31
	}
	var pi mad.PortInfo
	if err := q.get(mad.AttrPortInfo, mod, &pi, "port info query failed"); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# Port info: %s port %d\n%s", q.target.Text, q.port(), q.dotted(&pi))
	q.res.PortInfo = q.attrJSON(&pi)
	return nil
}

// portInfoExtended first checks CapabilityMask2, as
// is_port_info_extended_supported does (its failures are bare IBEXITs).
func (q *smpQuery) portInfoExtended() error {
	var ni mad.NodeInfo
	if err := q.get(mad.AttrNodeInfo, 0, &ni, bareFailure+"node info query failed"); err != nil {
		return err
	}
	capPort := uint32(q.port())
	if ni.NodeType == mad.NodeTypeSwitch {
		capPort = 0
	}
	var pi mad.PortInfo
	if err := q.get(mad.AttrPortInfo, capPort, &pi, bareFailure+"port info query failed"); err != nil {
		return err
	}
	var why string
	if pi.CapabilityMask&uint32(mad.PortCapMaskCapabilityMask2) == 0 {
		why = "port info capability mask2 not supported"
	} else if pi.CapabilityMask2&uint16(mad.PortCapMask2PortInfoExtended) == 0 {
		why = fmt.Sprintf("port info capability mask2 = 0x%x doesn't indicate PortInfoExtended support", pi.CapabilityMask2)
	}
	if why != "" {
		return &ibFailure{cmsg: "port info extended not supported", err: errors.New(why), stderr: true}
	}
	var pie mad.PortInfoExtended
	if err := q.get(mad.AttrPortInfoExtended, uint32(q.port()), &pie, "port info extended query failed"); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# Port info Extended: %s port %d\n%s", q.target.Text, q.port(), q.dotted(&pie))
	q.res.PortInfoExtended = q.attrJSON(&pie)
	return nil
}

func (q *smpQuery) mlnxExtPortInfo() error {
	var m mad.MlnxExtPortInfo
	if err := q.get(mad.AttrMlnxExtPortInfo, uint32(q.port()), &m, "Mellanox ext port info query failed"); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# MLNX ext Port info: %s port %d\n%s", q.target.Text, q.port(), q.dotted(&m))
	q.res.MlnxExtPortInfo = q.attrJSON(&m)
	return nil
}

func (q *smpQuery) switchInfo() error {
	var si mad.SwitchInfo
	if err := q.get(mad.AttrSwitchInfo, 0, &si, "switch info query failed"); err != nil {
		return err
	}
	fmt.Fprintf(&q.out, "# Switch info: %s\n%s", q.target.Text, q.dotted(&si))
	q.res.SwitchInfo = q.attrJSON(&si)
	return nil
}

func (q *smpQuery) pkeyTable() error {
	port := q.port()
	var ni mad.NodeInfo
	if err := q.get(mad.AttrNodeInfo, 0, &ni, "node info query failed"); err != nil {
		return err
	}
	if port > int(ni.NumPorts) {
		return &ibFailure{cmsg: "invalid port number", err: fmt.Errorf("port %d: the node has %d ports", port, ni.NumPorts)}
	}
	n := int(ni.PartitionCap)
	if ni.NodeType == mad.NodeTypeSwitch && port != 0 {
		var si mad.SwitchInfo
		if err := q.get(mad.AttrSwitchInfo, 0, &si, "switch info failed"); err != nil {
			return err
		}
		n = int(si.PartitionEnforcementCap)
	}
	res := &smpPKeys{Capacity: n, PKeys: []uint16{}}
	blocks := (n + 31) / 32
	for i := 0; i < blocks; i++ {
		var t mad.PKeyTable
		if err := q.get(mad.AttrPKeyTable, uint32(i|port<<16), &t, "pkey table query failed"); err != nil {
			return err
		}
		k := 32
		if i+1 == blocks {
			k = (n + 7 - i*32) / 8 * 8
		}
		p := t.PKey
		for j := 0; j < k; j += 8 {
			fmt.Fprintf(&q.out, "%4d: 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x\n",
				i*32+j, p[j], p[j+1], p[j+2], p[j+3], p[j+4], p[j+5], p[j+6], p[j+7])
		}
		res.PKeys = append(res.PKeys, p[:min(32, n-i*32)]...)
	}
	fmt.Fprintf(&q.out, "%d pkeys capacity for this port\n", n)
	q.res.PKeys = res
	return nil
}

func (q *smpQuery) sl2vlTable() error {
	port := q.port()
	var ni mad.NodeInfo
	if err := q.get(mad.AttrNodeInfo, 0, &ni, "node info query failed"); err != nil {
		return err
	}
	if port > int(ni.NumPorts) {
		return &ibFailure{cmsg: "invalid port number", err: fmt.Errorf("port %d: the node has %d ports", port, ni.NumPorts)}
	}
	fmt.Fprintf(&q.out, "# SL2VL table: %s\n#                 SL: |", q.target.Text)
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&q.out, "%2d|", i)
	}
	q.out.WriteString("\n")
	q.res.SL2VL = []smpSL2VL{}
	entry := func(in, out int) error {
		var t mad.SLtoVLMappingTable
		if err := q.get(mad.AttrSLtoVLMappingTable, uint32(in<<8|out), &t, "slvl query failed"); err != nil {
			return err
		}
		fmt.Fprintf(&q.out, "ports: in %2d, out %2d: %s", in, out, mad.FormatSLtoVL(&t))
		e := smpSL2VL{InPort: in, OutPort: out}
		for i, vl := range t.VL {
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
		if err := q.get(mad.AttrNodeInfo, 0, &ni, "node info query failed"); err != nil {
			return err
		}
		if ni.NodeType == mad.NodeTypeSwitch {
			var si mad.SwitchInfo
			if err := q.get(mad.AttrSwitchInfo, 0, &si, "switch info query failed"); err != nil {
				return err
			}
			if si.EnhancedPort0 == 0 {
				fmt.Fprintf(&q.out, "# No VLArbitration tables (BSP0): %s port %d\n", q.target.Text, 0)
				res.BasePort0 = true
				return nil
			}
		}
	}
	var pi mad.PortInfo
	if err := q.get(mad.AttrPortInfo, uint32(port), &pi, "port info query failed"); err != nil {
		return err
	}
	res.LowCap, res.HighCap = int(pi.VLArbitrationLowCap), int(pi.VLArbitrationHighCap)
	fmt.Fprintf(&q.out, "# VLArbitration tables: %s port %d LowCap %d HighCap %d\n", q.target.Text, port, res.LowCap, res.HighCap)
	table := func(name string, block, capacity int, into *[]mad.VLArbEntry) error {
		fmt.Fprintf(&q.out, "# %s priority VL Arbitration Table:", name)
		for b, left := block, capacity; ; b, left = b+1, left-32 {
			var t mad.VLArbitrationTable
			if err := q.get(mad.AttrVLArbitrationTable, uint32(b<<16|port), &t, "vl arb query failed"); err != nil {
				return err
			}
			n := min(left, 32)
			q.out.WriteString(mad.FormatVLArbitration(&t, n))
			*into = append(*into, t.Entry[:n]...)
			if left <= 32 || b > block {
				return nil
			}
		}
	}
	if res.LowCap > 0 {
		if err := table("Low", 1, res.LowCap, &res.Low); err != nil {
			return err
		}
	}
	if res.HighCap > 0 {
		return table("High", 3, res.HighCap, &res.High)
	}
	return nil
}

func (q *smpQuery) guidInfo() error {
	var pi mad.PortInfo
	if err := q.get(mad.AttrPortInfo, 0, &pi, "port info failed"); err != nil {
		return err
	}
	n := int(pi.GUIDCap)
	res := &smpGUIDs{Capacity: n, GUIDs: []mad.GUID{}}
	blocks := (n + 7) / 8
	for i := 0; i < blocks; i++ {
		var gi mad.GUIDInfo
		if err := q.get(mad.AttrGUIDInfo, uint32(i), &gi, "guid info query failed"); err != nil {
			return err
		}
		k := 8
		if i+1 == blocks {
			k = (n + 1 - i*8) / 2 * 2
		}
		for j := 0; j < k; j += 2 {
			fmt.Fprintf(&q.out, "%4d: 0x%016x 0x%016x\n", i*8+j, uint64(gi.GUID[j]), uint64(gi.GUID[j+1]))
		}
		res.GUIDs = append(res.GUIDs, gi.GUID[:min(8, n-i*8)]...)
	}
	fmt.Fprintf(&q.out, "%d guids capacity for this port\n", n)
	q.res.GUIDs = res
	return nil
}
