package ibcc

// ibccquery: read a congestion control attribute (IBA annex A10, class
// 0x21) of a port, as infiniband-diags 44's ibccquery, with the same MADs
// in the same order and the same text: "# <Attribute>: Lid N" and the
// attribute in libibmad's dotted form.
//
// "ibccquery [-c cckey] <op> <lid|guid> [portnum]"; the operations (case
// insensitive, with their aliases): ClassPortInfo (CP), CongestionInfo
// (CI), CongestionKeyInfo (CK), CongestionLog (CL), SwitchCongestionSetting
// (SS), SwitchPortCongestionSetting (SP, with an optional port: all ports
// when none), CACongestionSetting (CS), CongestionControlTable (CT, every
// block up to CCTI_Limit), Timestamp (TI). -c puts the CC_Key in every MAD.
// SwitchPortCongestionSetting first reads NodeInfo (an SMP) for the
// number of ports, and reads blocks of 48 ports (AttributeModifier: the
// block), as the C tool. IBA's blocks have 32 ports (ibccconfig writes
// them so): on a switch of more than 32 ports, ports 32..47 show block
// 0's elements 32..47, as the C tool shows them.
//
// Failures as the C tool's IBEXIT ("operation CI: congestion info query
// failed"); an unknown operation "operation 'X' not supported".
//
// Deliberate differences: the -c key and SwitchPortCongestionSetting's
// port must be numbers (C's strtoull/strtol read "x" as 0: key 0, all
// ports).
//
// JSON (--json): {"target" (docs/json.md's target; text portid2str),
// "attribute" (the IBA name), and one of "class_port_info",
// "congestion_info", "congestion_key_info", "congestion_log",
// "switch_congestion_setting", "ports" ([{"port", "setting"}]),
// "ca_congestion_setting", "congestion_control_table" ({"ccti_limit",
// "entries": [{"index", "shift", "multiplier"}]}), "timestamp"} in mad's
// encoding.

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type ibccOptions struct {
	cmdutil.Common
	ccKey string
}

// ccOp is an operation of ibccquery or ibccconfig (match_tbl in the C
// tools): an attribute by name and alias.
type ccOp struct {
	name, alias string
	portnum     bool   // takes a port number
	args        string // ibccconfig's values
}

var ccQueryOps = []ccOp{
	{"ClassPortInfo", "CP", false, ""},
	{"CongestionInfo", "CI", false, ""},
	{"CongestionKeyInfo", "CK", false, ""},
	{"CongestionLog", "CL", false, ""},
	{"SwitchCongestionSetting", "SS", false, ""},
	{"SwitchPortCongestionSetting", "SP", true, ""},
	{"CACongestionSetting", "CS", false, ""},
	{"CongestionControlTable", "CT", false, ""},
	{"Timestamp", "TI", false, ""},
}

// matchCCOp is match_op: a name or alias, case insensitive.
func matchCCOp(ops []ccOp, name string) *ccOp {
	for i := range ops {
		if strings.EqualFold(ops[i].name, name) || strings.EqualFold(ops[i].alias, name) {
			return &ops[i]
		}
	}
	return nil
}

// ccOpsUsage lists the operations as the C tools' usage does.
func ccOpsUsage(ops []ccOp, optPort string) string {
	var b strings.Builder
	b.WriteString("Supported ops (and aliases, case insensitive):\n")
	for _, o := range ops {
		port := ""
		if o.portnum {
			port = " " + optPort
		}
		extra := ""
		if o.args != "" {
			extra = " " + o.args
		}
		fmt.Fprintf(&b, "  %s (%s) <lid|guid>%s%s\n", o.name, o.alias, port, extra)
	}
	return b.String()
}

// NewQueryCmd builds the ibccquery command.
func NewQueryCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibccOptions{}
	cmd := cmdutil.ToolCommand("ibccquery [-c key] <op> <lid|guid> [portnum]", "Query a congestion control attribute of a port")
	cmd.Long = "ibccquery reads a congestion control attribute of a port (IBA annex A10).\n\n" +
		ccOpsUsage(ccQueryOps, "[<portnum>]")
	cmd.Example = `  ibccquery CongestionInfo 3			# Congestion Info by lid
  ibccquery SwitchPortCongestionSetting 3	# Query all Switch Port Congestion Settings
  ibccquery SwitchPortCongestionSetting 3 1	# Query Switch Port Congestion Setting for port 1`
	cmd.Flags().StringVarP(&opts.ccKey, "cckey", "c", "", "CC key")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 {
			return cmdutil.UsageErrorf("expected <op> <lid|guid>")
		}
		res, err := runIbccquery(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "ibccquery", res, err)
	}
	return cmd
}

// ccSession is one run of ibccquery or ibccconfig: the client and the
// target, for SMPs and for CC MADs.
type ccSession struct {
	ctx    context.Context
	c      *query.Client
	smp    query.Dest // NodeInfo's destination
	gmp    query.Dest // the CC MADs'
	opName string     // the operation as given, for the failures
}

// openCC parses -c, opens the port and resolves the target as the C tools
// do (resolve_portid_str): a LID as it is, a GUID or name through the SA.
func openCC(env *cmdutil.Env, opts *ibccOptions, tool string, opName, target string) (*ccSession, jsonv.Target, error) {
	var key uint64
	if opts.ccKey != "" {
		var err error
		if key, err = endport.ParseUint(opts.ccKey, 64); err != nil {
			return nil, jsonv.Target{}, cmdutil.UsageErrorf("invalid CC key %q: %v", opts.ccKey, err)
		}
	}
	o, err := cmdutil.QueryOptions(env, &opts.Common)
	if err != nil {
		return nil, jsonv.Target{}, err
	}
	o.CCKey = key
	eng, err := cmdutil.IBOpenWith(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, jsonv.Target{}, err
	}
	s := &ccSession{ctx: context.Background(), c: query.New(eng, o), opName: opName}
	cantResolve := func(err error, code int) error {
		eng.Close()
		return &cmdutil.Failure{CMsg: "can't resolve destination " + target, Err: err, Code: code, Stderr: code == cmdutil.ExitFailure}
	}
	t, err := endport.ParseTargetOrName(target, opts.TypeFlags())
	if err != nil {
		return nil, jsonv.Target{}, cantResolve(err, cmdutil.ExitUsage)
	}
	if t.Kind == endport.ByLID {
		s.smp = query.LID(t.LID)
		var why error
		s.gmp, why = s.c.GMPDestOrLID(s.ctx, t.LID)
		if why != nil && opts.Verbose > 0 {
			fmt.Fprintf(env.IO.Err, "%s: no SA path to LID %d (%v); sending to the LID on SL 0\n", tool, t.LID, why)
		}
	} else {
		if s.gmp, err = s.c.GMPDest(s.ctx, t); err != nil {
			return nil, jsonv.Target{}, cantResolve(err, cmdutil.ResolveCode(err))
		}
		s.smp = query.LID(s.gmp.LID)
	}
	return s, cmdutil.WithGiven(jsonv.Target{Route: jsonv.RouteLID, LID: s.gmp.LID, Text: s.gmp.String()}, t), nil
}

func (s *ccSession) close() { s.c.Engine().Close() }

// fail is the C tools' IBEXIT("operation %s: %s").
func (s *ccSession) fail(msg string, err error) error {
	return &cmdutil.Failure{CMsg: fmt.Sprintf("operation %s: %s", s.opName, msg), Err: err, Stderr: err != nil && cmdutil.IBWarns(err)}
}

// get reads a CC attribute (the C tools' cc_query_status_via).
func (s *ccSession) get(mod uint32, out mad.Struct) error {
	return s.c.GetClass(s.ctx, mad.ClassCongest, s.gmp, mod, nil, out)
}

// switchPorts is the check of SwitchPortCongestionSetting: the target
// must be a switch; its number of ports.
func (s *ccSession) switchPorts(what string) (int, error) {
	var ni mad.NodeInfo
	if err := s.c.Get(s.ctx, s.smp, 0, nil, &ni); err != nil {
		return 0, s.fail("node info "+what+" failed", err)
	}
	if ni.NodeType != mad.NodeTypeSwitch {
		return 0, s.fail("destination not a switch", nil)
	}
	return int(ni.NumPorts), nil
}

// ibccqueryResult is the text as printed so far and the JSON.
type ibccqueryResult struct {
	Target    jsonv.Target `json:"target"`
	Attribute string       `json:"attribute"`
	CPI       any          `json:"class_port_info,omitempty"`
	Info      any          `json:"congestion_info,omitempty"`
	KeyInfo   any          `json:"congestion_key_info,omitempty"`
	Log       any          `json:"congestion_log,omitempty"`
	Switch    any          `json:"switch_congestion_setting,omitempty"`
	Ports     []ccPortJSON `json:"ports,omitempty"`
	CA        any          `json:"ca_congestion_setting,omitempty"`
	Table     *ccTableJSON `json:"congestion_control_table,omitempty"`
	Timestamp any          `json:"timestamp,omitempty"`
	text      strings.Builder
}

type ccPortJSON struct {
	Port    int                                     `json:"port"`
	Setting *mad.SwitchPortCongestionSettingElement `json:"setting"`
}

type ccTableJSON struct {
	CCTILimit uint16        `json:"ccti_limit"`
	Entries   []ccEntryJSON `json:"entries"`
}

type ccEntryJSON struct {
	Index      int    `json:"index"`
	Shift      uint8  `json:"shift"`
	Multiplier uint16 `json:"multiplier"`
}

func (r *ibccqueryResult) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, r.text.String())
	return err
}

func runIbccquery(env *cmdutil.Env, opts *ibccOptions, args []string) (cmdutil.Result, error) {
	op := matchCCOp(ccQueryOps, args[0])
	if op == nil {
		return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("operation '%s' not supported", args[0]), Code: cmdutil.ExitUsage}
	}
	portnum := 0
	if op.portnum && len(args) > 2 {
		p, err := endport.ParseUint(args[2], 8)
		if err != nil {
			return nil, cmdutil.UsageErrorf("invalid port number %q: %v", args[2], err)
		}
		portnum = int(p)
	}
	s, target, err := openCC(env, opts, "ibccquery", args[0], args[1])
	if err != nil {
		return nil, err
	}
	defer s.close()
	res := &ibccqueryResult{Target: target, Attribute: op.name}
	return res, s.query(res, op.name, portnum)
}

// header is the line before each attribute: "# CongestionInfo: Lid 2".
func (s *ccSession) header(r *ibccqueryResult, name string) {
	fmt.Fprintf(&r.text, "# %s: %s\n", name, s.gmp)
}

// query reads and prints one attribute as the C tool's op function.
func (s *ccSession) query(r *ibccqueryResult, name string, portnum int) error {
	simple := func(what string, v mad.Struct, set *any) error {
		if err := s.get(0, v); err != nil {
			return s.fail(what+" query failed", err)
		}
		s.header(r, name)
		r.text.WriteString(mad.Dotted(v, nil))
		*set = v
		return nil
	}
	switch name {
	case "ClassPortInfo":
		return simple("class port info", &mad.ClassPortInfo{}, &r.CPI)
	case "CongestionInfo":
		return simple("congestion info", &mad.CongestionInfo{}, &r.Info)
	case "CongestionKeyInfo":
		return simple("congestion key info", &mad.CongestionKeyInfo{}, &r.KeyInfo)
	case "CongestionLog":
		return s.congestionLog(r)
	case "SwitchCongestionSetting":
		return simple("switch congestion setting", &mad.SwitchCongestionSetting{}, &r.Switch)
	case "SwitchPortCongestionSetting":
		return s.switchPortSettings(r, portnum)
	case "CACongestionSetting":
		return s.caSetting(r)
	case "CongestionControlTable":
		return s.controlTable(r)
	}
	return simple("timestamp", &mad.Timestamp{}, &r.Timestamp)
}

// dottedFields prints the named fields of v, as libibmad's _dump_fields
// prints a range of its field table.
func dottedFields(v mad.Struct, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		value, _ := mad.FormatIBMAD(v, n)
		b.WriteString(mad.DottedLine(v.Desc().Field(n).Label, value) + "\n")
	}
	return b.String()
}

// congestionLog prints LogType and CongestionFlags, then the switch's or
// the CA's log and its events that are not all zero, each followed by an
// empty line.
func (s *ccSession) congestionLog(r *ibccqueryResult) error {
	raw := &query.Raw{Struct: &mad.CongestionLog{}}
	if err := s.get(0, raw); err != nil {
		return s.fail("congestion log query failed", err)
	}
	b := raw.Bytes
	log := raw.Struct.(*mad.CongestionLog)
	nonzero := func(e []byte) bool { return strings.Trim(string(e), "\x00") != "" }
	switch log.LogType {
	case mad.CCLogTypeSwitch:
		var sw mad.CongestionLogSwitch
		_ = sw.Unmarshal(b)
		s.header(r, "CongestionLog")
		r.text.WriteString(mad.Dotted(log, nil))
		r.text.WriteString(dottedFields(&sw, "LogEventsCounter", "CurrentTimeStamp", "PortMap") + "\n")
		for i := range sw.Event {
			if nonzero(b[40+i*12 : 52+i*12]) {
				r.text.WriteString(mad.Dotted(&sw.Event[i], nil) + "\n")
			}
		}
		r.Log = &sw
	case mad.CCLogTypeCA:
		var ca mad.CongestionLogCA
		_ = ca.Unmarshal(b)
		s.header(r, "CongestionLog")
		r.text.WriteString(mad.Dotted(log, nil))
		r.text.WriteString(dottedFields(&ca, "ThresholdEventCounter", "ThresholdCongestionEventMap", "CurrentTimeStamp") + "\n")
		for i := range ca.Event {
			if nonzero(b[12+i*16 : 28+i*16]) {
				r.text.WriteString(mad.Dotted(&ca.Event[i], nil) + "\n")
			}
		}
		r.Log = &ca
	default:
		return s.fail("unrecognized log type", nil)
	}
	return nil
}

// spcsBlock is the number of ports per SwitchPortCongestionSetting block
// as ibccquery reads them (AttributeModifier: port / 48).
const spcsBlock = 48

// switchPortSettings prints one port's setting, or every port's (0 to
// NumPorts) under a "Port:" line each.
func (s *ccSession) switchPortSettings(r *ibccqueryResult, portnum int) error {
	numPorts, err := s.switchPorts("query")
	if err != nil {
		return err
	}
	s.header(r, "SwitchPortCongestionSetting")
	if portnum != 0 {
		if portnum > numPorts {
			return s.fail("invalid port number specified", nil)
		}
		var spcs mad.SwitchPortCongestionSetting
		if err := s.get(uint32(portnum/spcsBlock), &spcs); err != nil {
			return s.fail("switch port congestion setting query failed", err)
		}
		e := &spcs.Element[portnum%spcsBlock]
		r.text.WriteString(mad.Dotted(e, nil))
		r.Ports = append(r.Ports, ccPortJSON{portnum, e})
		return nil
	}
	for block := 0; block <= numPorts/spcsBlock; block++ {
		var spcs mad.SwitchPortCongestionSetting
		if err := s.get(uint32(block), &spcs); err != nil {
			return s.fail("switch port congestion setting query failed", err)
		}
		for j := 0; j < spcsBlock && block*spcsBlock+j <= numPorts; j++ {
			port := block*spcsBlock + j
			r.text.WriteString(mad.DottedLine("Port", fmt.Sprint(port)) + "\n")
			r.text.WriteString(mad.Dotted(&spcs.Element[j], nil) + "\n")
			r.Ports = append(r.Ports, ccPortJSON{port, &spcs.Element[j]})
		}
	}
	return nil
}

// caSetting prints Port_Control and Control_Map, then each SL's entry.
func (s *ccSession) caSetting(r *ibccqueryResult) error {
	var cas mad.CACongestionSetting
	if err := s.get(0, &cas); err != nil {
		return s.fail("ca congestion setting query failed", err)
	}
	s.header(r, "CACongestionSetting")
	r.text.WriteString(dottedFields(&cas, "PortControl", "ControlMap") + "\n")
	for sl := range cas.Entry {
		r.text.WriteString(mad.DottedLine("SL", fmt.Sprint(sl)) + "\n")
		r.text.WriteString(mad.Dotted(&cas.Entry[sl], nil) + "\n")
	}
	r.CA = &cas
	return nil
}

// controlTable prints CCTI_Limit, then the entries 0..CCTI_Limit, reading
// the blocks of 64 after the first.
func (s *ccSession) controlTable(r *ibccqueryResult) error {
	var cct mad.CongestionControlTable
	if err := s.get(0, &cct); err != nil {
		return s.fail("congestion control table query failed", err)
	}
	limit := int(cct.CCTILimit)
	s.header(r, "CongestionControlTable")
	r.text.WriteString(dottedFields(&cct, "CCTILimit") + "\n")
	r.Table = &ccTableJSON{CCTILimit: cct.CCTILimit, Entries: []ccEntryJSON{}}
	if limit == 0 {
		return nil
	}
	for block := 0; block <= limit/64; block++ {
		if block > 0 {
			if err := s.get(uint32(block), &cct); err != nil {
				return s.fail("congestion control table query failed", err)
			}
		}
		for j := 0; j < 64 && block*64+j <= limit; j++ {
			e := cct.Entry[j]
			r.text.WriteString(mad.DottedLine("Entry", fmt.Sprint(block*64+j)) + "\n")
			r.text.WriteString(mad.Dotted(&e, nil) + "\n")
			r.Table.Entries = append(r.Table.Entries, ccEntryJSON{block*64 + j, e.Shift, e.Multiplier})
		}
	}
	return nil
}
