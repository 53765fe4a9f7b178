package cli

// saquery: SubnAdm queries of the subnet manager's SA, printed the way
// infiniband-diags 44's saquery prints them. Every record type, alias and
// selector option of the C tool is here, with its quirks: a first argument
// that names no record type is a node description or LID for a NodeRecord
// query; record selectors take "lid/port/port" arguments whose LID may be a
// node description (looked up in the SA's NodeRecord table); numbers parse
// like strtoul (leading digits count, "abc" is 0 and so "not given").
//
// Record types (name, alias; arguments): ClassPortInfo CPI; NodeRecord NR
// [lid]; PortInfoRecord PIR [[lid]/[port]/[options]]; SL2VLTableRecord
// SL2VL [[lid]/[in_port]/[out_port]]; PKeyTableRecord PKTR
// [[lid]/[port]/[block]]; VLArbitrationTableRecord VLAR
// [[lid]/[port]/[block]]; InformInfoRecord IIR [subscriber_gid];
// LinkRecord LR [[from_lid]/[from_port]] [[to_lid]/[to_port]];
// ServiceRecord SR; PathRecord PR; MCMemberRecord MCMR; LFTRecord LFTR
// [[lid]/[block]]; MFTRecord MFTR [[lid]/[position]/[block]];
// GUIDInfoRecord GIR [[lid]/[block]]; SwitchInfoRecord SWIR [lid];
// SMInfoRecord SMIR [lid]. ibtool also takes RFTRecord (RFTR)
// [[lid]/[block]] and ServiceAssociationRecord (SAR), which the C tool
// lacks, and the IBA and python-rdma names of the record types
// (LinearForwardingTableRecord, SLtoVLMappingTableRecord, SwitchInfo, SWI,
// SMInfo, ...).
//
// MEMBER=VALUE arguments (python-rdma's ibtool): any further argument of
// the form Field=value or Nested.Field=value (Go or JSON field names of the
// record, any case; "PortInfo.CapabilityMask=0x2", "NodeInfo.PortGUID=
// 0x0002c90300001234", "service_name=foo") sets that component of the
// query's record and its component mask bit. Values: numbers in Go syntax,
// GUIDs in hex (also 0002:c903:0000:1234), GIDs as IPv6 text, strings as
// text, enums by number or name.
//
// Exit codes are the C tool's: 0; 2 for bad options; EINVAL (22) for a bad
// LID, GID or MEMBER=VALUE argument; EIO (5) when the SA answers with a
// non-success status ("ERROR: Query result returned 0x0200, ..." on
// stderr); ENONET (64) when a node description names no node; ETIMEDOUT
// (110) when the SA does not answer; 255 when no port or SA can be opened.
//
// Differences from the C tool: --sm_port (long only) sends the queries to
// another LID than the port's SM LID; -v prints the request (method,
// attribute, component mask) on stderr, -d traces MADs on stderr (the C
// tool's -dd hex dumps go to stdout); --flow_label and --hop_limit use the
// full field (C keeps 8 bits of the flow label and lets a hop limit over
// 255 spill into it); -f is accepted for -F (python-rdma's letter).
//
// JSON (--json): {"query" (the record type's name, or "IsSM",
// "NodeDescriptions"), "method" ("GetTable", "Get"), "attribute_id",
// "component_mask", "component_mask_fields" (the components it selects),
// "records" (each record as mad's JSON; NodeRecords get a "name" after the
// node name map, -m MCMemberRecords a "node_description"), "is_sm_disabled"
// (-s: the second table), "class_port_info" (-c, CPI)}.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
)

func init() { register(newSaqueryCmd) }

// errno values the C tool exits with.
const (
	saEIO       = 5
	saEINVAL    = 22
	saENONET    = 64
	saETIMEDOUT = 110
)

// strerror texts of those errno values (glibc).
var saStrerrors = map[int]string{
	saEIO:       "Input/output error",
	saEINVAL:    "Invalid argument",
	saENONET:    "Machine is not on the network",
	saETIMEDOUT: "Connection timed out",
}

func saStrerror(code int) string {
	if s, ok := saStrerrors[code]; ok {
		return s
	}
	return fmt.Sprintf("Unknown error %d", code)
}

// saExit ends saquery with the C tool's message (written to stderr as is)
// and exit code.
type saExit struct {
	code int
	msg  string
}

func (e *saExit) Error() string { return strings.TrimSuffix(e.msg, "\n") }

// saOrdered is a flag that remembers when it was last set, for the
// options whose order decides, as getopt's does in the C tool (-N then -p:
// the last query option wins).
type saOrdered struct {
	seq    *int
	at     int
	val    string
	isBool bool
}

func (o *saOrdered) Set(s string) error {
	*o.seq++
	o.at, o.val = *o.seq, s
	return nil
}

func (o *saOrdered) String() string {
	if o.isBool {
		return strconv.FormatBool(o.at > 0)
	}
	return o.val
}

func (o *saOrdered) Type() string {
	if o.isBool {
		return "bool"
	}
	return "string"
}

type saqueryOptions struct {
	Common
	seq         int
	flags       map[string]*saOrdered
	nodeNameMap string
	flowLabelF  string // -f, python-rdma's letter for -F
}

// set reports whether the flag was given.
func (o *saqueryOptions) set(name string) bool { return o.flags[name].at > 0 }

func (o *saqueryOptions) val(name string) string { return o.flags[name].val }

// last returns the one of names given last on the command line, or "".
func (o *saqueryOptions) last(names ...string) string {
	best, at := "", 0
	for _, n := range names {
		if f := o.flags[n]; f.at > at {
			best, at = n, f.at
		}
	}
	return best
}

// saqueryFlag is one of saquery's own options (saquery.c's opts table).
type saqueryFlag struct {
	long, short string
	arg         string // "" for a switch
	usage       string
}

var saqueryFlags = []saqueryFlag{
	{"p", "p", "", "get PathRecord info"},
	{"N", "N", "", "get NodeRecord info"},
	{"L", "L", "", "return the Lids of the name specified"},
	{"l", "l", "", "return the unique Lid of the name specified"},
	{"G", "G", "", "return the Guids of the name specified"},
	{"O", "O", "", "return name for the Lid specified"},
	{"U", "U", "", "return name for the Guid specified"},
	{"s", "s", "", "return the PortInfoRecords with isSM or isSMdisabled capability mask bit on"},
	{"g", "g", "", "get multicast group info"},
	{"m", "m", "", "get multicast member info (if multicast group specified, list member GIDs only for group specified, for example 'saquery -m 0xC000')"},
	{"x", "x", "", "get LinkRecord info"},
	{"c", "c", "", "get the SA's class port info"},
	{"S", "S", "", "get ServiceRecord info"},
	{"I", "I", "", "get InformInfoRecord (subscription) info"},
	{"list", "D", "", "the node desc of the CA's"},
	{"src-to-dst", "", "src:dst", "get a PathRecord for <src:dst> where src and dst are either node names or LIDs"},
	{"sgid-to-dgid", "", "sgid-dgid", "get a PathRecord for <sgid-dgid> where sgid and dgid are addresses in IPv6 format"},
	{"smkey", "", "val", "SA SM_Key value for the query. If non-numeric value (like 'x') is specified then saquery will prompt for a value. Default (when not specified here or in ibdiag.conf) is to use SM_Key == 0 (or \"untrusted\")"},
	{"slid", "", "lid", "Source LID (PathRecord)"},
	{"dlid", "", "lid", "Destination LID (PathRecord)"},
	{"mlid", "", "lid", "Multicast LID (MCMemberRecord)"},
	{"sgid", "", "gid", "Source GID (IPv6 format) (PathRecord)"},
	{"dgid", "", "gid", "Destination GID (IPv6 format) (PathRecord)"},
	{"gid", "", "gid", "Port GID (MCMemberRecord)"},
	{"mgid", "", "gid", "Multicast GID (MCMemberRecord)"},
	{"reversible", "r", "val", "Reversible path (PathRecord)"},
	{"numb_path", "n", "val", "Number of paths (PathRecord)"},
	{"pkey", "", "val", "P_Key (PathRecord, MCMemberRecord). If non-numeric value (like 'x') is specified then saquery will prompt for a value"},
	{"qos_class", "Q", "val", "QoS Class (PathRecord)"},
	{"sl", "", "val", "Service level (PathRecord, MCMemberRecord)"},
	{"mtu", "M", "val", "MTU and selector (PathRecord, MCMemberRecord)"},
	{"rate", "R", "val", "Rate and selector (PathRecord, MCMemberRecord)"},
	{"pkt_lifetime", "", "val", "Packet lifetime and selector (PathRecord, MCMemberRecord)"},
	{"qkey", "q", "val", "Q_Key (MCMemberRecord). If non-numeric value (like 'x') is specified then saquery will prompt for a value"},
	{"tclass", "T", "val", "Traffic Class (PathRecord, MCMemberRecord)"},
	{"flow_label", "F", "val", "Flow Label (PathRecord, MCMemberRecord)"},
	{"hop_limit", "H", "val", "Hop limit (PathRecord, MCMemberRecord)"},
	{"scope", "", "val", "Scope (MCMemberRecord)"},
	{"join_state", "J", "val", "Join state (MCMemberRecord)"},
	{"proxy_join", "X", "val", "Proxy join (MCMemberRecord)"},
	{"service_id", "", "val", "ServiceID (PathRecord)"},
}

// saqueryType is one record type saquery knows (saquery.c's query_cmds,
// plus ibtool's additions).
type saqueryType struct {
	name, alias string
	attr        uint16
	usage       string
	extraNames  []string // ibtool only: other names that select it
	run         func(q *saQuery, args []string) error
	ibtoolOnly  bool
}

var saqueryTypes []*saqueryType

func init() {
	saqueryTypes = []*saqueryType{
		{name: "ClassPortInfo", alias: "CPI", attr: mad.AttrClassPortInfo, run: (*saQuery).classPortInfo},
		{name: "NodeRecord", alias: "NR", attr: mad.AttrNodeRecord, usage: "[lid]", run: (*saQuery).nodeRecords},
		{name: "PortInfoRecord", alias: "PIR", attr: mad.AttrPortInfoRecord, usage: "[[lid]/[port]/[options]]", run: (*saQuery).portInfoRecords},
		{name: "SL2VLTableRecord", alias: "SL2VL", attr: mad.AttrSLtoVLMappingTableRecord, usage: "[[lid]/[in_port]/[out_port]]", run: (*saQuery).sl2vlRecords,
			extraNames: []string{"SLtoVLMappingTableRecord"}},
		{name: "PKeyTableRecord", alias: "PKTR", attr: mad.AttrPKeyTableRecord, usage: "[[lid]/[port]/[block]]", run: (*saQuery).pkeyRecords,
			extraNames: []string{"P_KeyTableRecord"}},
		{name: "VLArbitrationTableRecord", alias: "VLAR", attr: mad.AttrVLArbitrationTableRecord, usage: "[[lid]/[port]/[block]]", run: (*saQuery).vlarbRecords},
		{name: "InformInfoRecord", alias: "IIR", attr: mad.AttrInformInfoRecord, usage: "[subscriber_gid]", run: (*saQuery).informInfoRecords},
		{name: "LinkRecord", alias: "LR", attr: mad.AttrLinkRecord, usage: "[[from_lid]/[from_port]] [[to_lid]/[to_port]]", run: (*saQuery).linkRecords},
		{name: "ServiceRecord", alias: "SR", attr: mad.AttrServiceRecord, run: (*saQuery).serviceRecords},
		{name: "PathRecord", alias: "PR", attr: mad.AttrPathRecord, run: (*saQuery).pathRecords},
		{name: "MCMemberRecord", alias: "MCMR", attr: mad.AttrMCMemberRecord, run: (*saQuery).mcMemberRecords},
		{name: "LFTRecord", alias: "LFTR", attr: mad.AttrLinearForwardingTableRecord, usage: "[[lid]/[block]]", run: (*saQuery).lftRecords,
			extraNames: []string{"LinearForwardingTableRecord"}},
		{name: "MFTRecord", alias: "MFTR", attr: mad.AttrMulticastForwardingTableRecord, usage: "[[mlid]/[position]/[block]]", run: (*saQuery).mftRecords,
			extraNames: []string{"MulticastForwardingTableRecord"}},
		{name: "GUIDInfoRecord", alias: "GIR", attr: mad.AttrGUIDInfoRecord, usage: "[[lid]/[block]]", run: (*saQuery).guidInfoRecords},
		{name: "SwitchInfoRecord", alias: "SWIR", attr: mad.AttrSwitchInfoRecord, usage: "[lid]", run: (*saQuery).switchInfoRecords,
			extraNames: []string{"SwitchInfo", "SWI"}},
		{name: "SMInfoRecord", alias: "SMIR", attr: mad.AttrSMInfoRecord, usage: "[lid]", run: (*saQuery).smInfoRecords,
			extraNames: []string{"SMInfo"}},
		{name: "RFTRecord", alias: "RFTR", attr: mad.AttrRandomForwardingTableRecord, usage: "[[lid]/[block]]", run: (*saQuery).rftRecords,
			extraNames: []string{"RandomForwardingTableRecord"}, ibtoolOnly: true},
		{name: "ServiceAssociationRecord", alias: "SAR", attr: mad.AttrServiceAssociationRecord, run: (*saQuery).serviceAssociationRecords,
			ibtoolOnly: true},
	}
}

// findSaqueryType matches a record type's name or alias in any case, as
// find_query does (and ibtool's extra names).
func findSaqueryType(name string) *saqueryType {
	for _, t := range saqueryTypes {
		if strings.EqualFold(name, t.name) || strings.EqualFold(name, t.alias) {
			return t
		}
		for _, n := range t.extraNames {
			if strings.EqualFold(name, n) {
				return t
			}
		}
	}
	return nil
}

func saqueryTypeByAttr(attr uint16) *saqueryType {
	for _, t := range saqueryTypes {
		if t.attr == attr {
			return t
		}
	}
	return nil
}

// saqueryUse is the command line saquery takes.
const saqueryUse = "saquery [options] [query-name] [<name> | <lid> | <guid>] [MEMBER=VALUE ...]"

// saqueryNames lists the record types as the C tool's usage does.
func saqueryNames() string {
	var b strings.Builder
	b.WriteString("Supported query names (and aliases):\n")
	for _, t := range saqueryTypes {
		fmt.Fprintf(&b, "  %s (%s) %s", t.name, t.alias, t.usage)
		if t.ibtoolOnly {
			b.WriteString(" (ibtool only)")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n  Queries node records by default.")
	return b.String()
}

func newSaqueryCmd(env *Env) *cobra.Command {
	opts := &saqueryOptions{flags: map[string]*saOrdered{}}
	cmd := toolCommand(saqueryUse, "Query the subnet administrator (SA) for records")
	cmd.Long = "saquery asks the subnet manager's SA for records (NodeRecord by default) and prints them the way infiniband-diags does.\n" +
		"Further MEMBER=VALUE arguments select records by any component of the record type (python-rdma style).\n" +
		"With --json it prints the decoded records (see the JSON schema in the docs).\n\n" + saqueryNames()
	cmd.Example = `  saquery                          # every NodeRecord
  saquery PIR 2/1                  # PortInfoRecord of LID 2 port 1
  saquery -p --slid 2 --dlid 3     # PathRecords from LID 2 to LID 3
  saquery --src-to-dst "hca one":3 # a path by node description and LID
  saquery NR NodeInfo.NodeType=2   # switches only`
	fs := cmd.Flags()
	for _, f := range saqueryFlags {
		v := &saOrdered{seq: &opts.seq, isBool: f.arg == ""}
		opts.flags[f.long] = v
		usage := f.usage
		fl := fs.VarPF(v, f.long, f.short, usage)
		if v.isBool {
			fl.NoOptDefVal = "true"
		}
	}
	fs.StringVar(&opts.nodeNameMap, "node-name-map", "", "specify a node name map file")
	// -f: python-rdma's letter for the flow label (C: -F).
	fl := fs.VarPF(&saFlowLabelAlias{opts: opts}, "flow-label-f", "f", "Flow Label (same as -F)")
	fl.Hidden = true
	setupCommon(env, cmd, &opts.Common, "DGLsy")
	fs.StringVar(&opts.SMPort, "sm_port", "", "SA (SM) LID to query instead of the port's SM LID (ibtool only)")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runSaquery(env, opts, args)
	}
	return cmd
}

// saFlowLabelAlias makes -f set --flow_label.
type saFlowLabelAlias struct{ opts *saqueryOptions }

func (a *saFlowLabelAlias) Set(s string) error { return a.opts.flags["flow_label"].Set(s) }
func (a *saFlowLabelAlias) String() string     { return "" }
func (a *saFlowLabelAlias) Type() string       { return "string" }

var _ pflag.Value = (*saFlowLabelAlias)(nil)

// saquery's commands besides the record queries (saquery.c's enum
// saquery_command).
type saCommand int

const (
	saCmdQuery saCommand = iota
	saCmdNodeRecord
	saCmdClassPortInfo
	saCmdIsSM
	saCmdMCGroups
	saCmdMCMembers
)

// How NodeRecords print (saquery.c's node_print_desc).
type saNodePrint int

const (
	saPrintAll saNodePrint = iota
	saPrintLIDOnly
	saPrintUniqueLIDOnly
	saPrintGUIDOnly
	saPrintAllDesc
	saPrintNameOfLID
	saPrintNameOfGUID
)

// saParams are the selector options (saquery.c's query_params), with the
// C tool's "not given" values: -1 for the int ones, 0 for the others.
type saParams struct {
	serviceID             uint64
	sgid, dgid, gid, mgid mad.GID
	slid, dlid, mlid      uint16
	flowLabel             uint32
	hopLimit              int64
	tclass                uint8
	reversible, numbPath  int64
	pkey                  uint16
	qosClass, sl          int64
	mtu, rate, pktLife    uint8
	qkey                  uint32
	scope, joinState      uint8
	proxyJoin             int64
	cpi                   []byte
}

// saMember is one MEMBER=VALUE argument.
type saMember struct{ path, value string }

// saQuery is one saquery run.
type saQuery struct {
	env     *Env
	opts    *saqueryOptions
	ctx     context.Context
	eng     *rpc.Engine
	sa      *sa.Client
	names   *nodename.Map
	p       saParams
	out     io.Writer // the text output (io.Discard with --json)
	members []saMember

	printMode     saNodePrint
	requestedName string
	hasName       bool
	requestedLID  uint16
	requestedGUID uint64

	res saqueryJSON
}

// saqueryJSON is saquery's --json output.
type saqueryJSON struct {
	Query         string             `json:"query"`
	Method        string             `json:"method,omitempty"`
	AttributeID   uint16             `json:"attribute_id,omitempty"`
	ComponentMask uint64             `json:"component_mask"`
	MaskFields    []string           `json:"component_mask_fields"`
	Records       []json.RawMessage  `json:"records"`
	IsSMDisabled  *[]json.RawMessage `json:"is_sm_disabled,omitempty"`
	ClassPortInfo json.RawMessage    `json:"class_port_info,omitempty"`
}

// saMemberRE matches MEMBER=VALUE arguments: a field path, then '='.
var saMemberRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]|\.[0-9]+)*=`)

func runSaquery(env *Env, opts *saqueryOptions, args []string) error {
	q := &saQuery{env: env, opts: opts, ctx: context.Background(), out: env.IO.Out}
	if opts.JSON {
		q.out = io.Discard
	}
	q.res.Records = []json.RawMessage{}
	q.res.MaskFields = []string{}
	err := q.run(args)
	var ex *saExit
	if errors.As(err, &ex) {
		fmt.Fprint(env.IO.Err, ex.msg)
		if ex.code == 0 {
			return nil
		}
		return &ExitError{Code: ex.code, Err: errSilent}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(env.IO.Out, &q.res)
	}
	return nil
}

// saUniqueDone ends -l after the first match (the C tool's exit(0)).
var saUniqueDone = &saExit{}

func (q *saQuery) run(args []string) error {
	opts := q.opts
	// MEMBER=VALUE arguments are ibtool's; the rest are the C tool's.
	var pos []string
	for _, a := range args {
		if saMemberRE.MatchString(a) {
			path, value, _ := strings.Cut(a, "=")
			q.members = append(q.members, saMember{path, value})
			continue
		}
		pos = append(pos, a)
	}
	if err := q.parseParams(); err != nil {
		return err
	}

	command := saCmdQuery
	switch opts.last("list", "c", "N", "L", "l", "G", "O", "U", "s", "g", "m") {
	case "list", "N", "L", "l", "G", "O", "U":
		command = saCmdNodeRecord
	case "c":
		command = saCmdClassPortInfo
	case "s":
		command = saCmdIsSM
	case "g":
		command = saCmdMCGroups
	case "m":
		command = saCmdMCMembers
	}
	switch opts.last("list", "L", "l", "G", "O", "U") {
	case "list":
		q.printMode = saPrintAllDesc
	case "L":
		q.printMode = saPrintLIDOnly
	case "l":
		q.printMode = saPrintUniqueLIDOnly
	case "G":
		q.printMode = saPrintGUIDOnly
	case "O":
		q.printMode = saPrintNameOfLID
	case "U":
		q.printMode = saPrintNameOfGUID
	}
	var qt *saqueryType
	switch opts.last("p", "S", "I", "x", "src-to-dst", "sgid-to-dgid") {
	case "p", "src-to-dst", "sgid-to-dgid":
		qt = saqueryTypeByAttr(mad.AttrPathRecord)
	case "S":
		qt = saqueryTypeByAttr(mad.AttrServiceRecord)
	case "I":
		qt = saqueryTypeByAttr(mad.AttrInformInfoRecord)
	case "x":
		qt = saqueryTypeByAttr(mad.AttrLinkRecord)
	}
	if qt == nil && command == saCmdQuery {
		if len(pos) > 0 {
			qt = findSaqueryType(pos[0])
		}
		if qt != nil {
			pos = pos[1:]
		} else {
			qt = saqueryTypeByAttr(mad.AttrNodeRecord)
		}
	}
	if len(pos) > 0 {
		switch q.printMode {
		case saPrintNameOfLID:
			v, _ := saStrtoul(pos[0])
			q.requestedLID = uint16(v)
			q.hasName = true
		case saPrintNameOfGUID:
			q.requestedGUID, _ = saStrtoul(pos[0])
			q.hasName = true
		default:
			q.requestedName, q.hasName = pos[0], true
		}
	}
	switch q.printMode {
	case saPrintLIDOnly, saPrintUniqueLIDOnly, saPrintGUIDOnly:
		if !q.hasName {
			return usageErrorf("name not specified")
		}
	case saPrintNameOfLID:
		if !q.hasName {
			return usageErrorf("lid not specified")
		}
		if q.requestedLID == 0 { // a LID cannot be 0 (IBA 4.1.3)
			return usageErrorf("lid invalid")
		}
	case saPrintNameOfGUID:
		if !q.hasName {
			return usageErrorf("guid not specified")
		}
	}
	if len(q.members) > 0 && (command == saCmdClassPortInfo || command == saCmdQuery && qt.attr == mad.AttrClassPortInfo) {
		return &saExit{code: saEINVAL, msg: "ClassPortInfo has no components to match (MEMBER=VALUE)\n"}
	}

	if _, err := opts.timeoutMS(DefaultTimeoutMS); err != nil {
		// IBEXIT during option parsing, as the other tools.
		return ibFail(q.env, &opts.Common, "saquery", &ibFailure{fn: "process_opt", cmsg: err.Error()})
	}
	smkey, err := q.smKey()
	if err != nil {
		return err
	}
	eng, err := openEngine(q.env, &opts.Common, engineConfig{timeout: DefaultTimeoutMS * time.Millisecond, retries: -1})
	if err != nil {
		return err
	}
	defer eng.Close()
	q.eng = eng
	var smLID uint16
	if opts.SMPort != "" {
		v, ok := saStrtoul(opts.SMPort)
		if !ok || v == 0 || v > 0xFFFF {
			return usageErrorf("--sm_port: invalid LID %q", opts.SMPort)
		}
		smLID = uint16(v)
	}
	if q.sa, err = sa.NewFromPort(eng, smLID, uint16(opts.PKeyIdx)); err != nil {
		return fmt.Errorf("Failed to bind to the SA: %w", err)
	}
	q.sa.SMKey = smkey
	q.names = nodename.Open(q.opts.nodeNameMap, q.env.IO.Err)

	if opts.set("src-to-dst") {
		src, dst, _ := strings.Cut(opts.val("src-to-dst"), ":")
		if src != "" {
			if q.p.slid, err = q.getLID(src); err != nil {
				return err
			}
		}
		if dst != "" {
			if q.p.dlid, err = q.getLID(dst); err != nil {
				return err
			}
		}
	}

	if command == saCmdClassPortInfo || command == saCmdQuery && (qt.attr == mad.AttrClassPortInfo || qt.attr == mad.AttrSwitchInfoRecord) {
		if err := q.queryCPI(); err != nil {
			return err
		}
	}

	switch command {
	case saCmdNodeRecord:
		err = q.printNodeRecords()
	case saCmdClassPortInfo:
		err = q.classPortInfo(nil)
	case saCmdIsSM:
		err = q.printIsSM()
	case saCmdMCGroups:
		err = q.printMCGroups()
	case saCmdMCMembers:
		err = q.printMCMembers()
	default:
		err = qt.run(q, pos)
	}
	if err == saUniqueDone {
		return nil
	}
	return err
}

// parseParams turns the selector options into saParams as saquery.c's
// process_opt does: strtoul numbers, inet_pton GIDs (a bad one is a usage
// error), and --src-to-dst/--sgid-to-dgid, which also set numb_path to
// 0x7f when given after -n.
func (q *saQuery) parseParams() error {
	o := q.opts
	p := &q.p
	p.hopLimit, p.reversible, p.numbPath, p.qosClass, p.sl, p.proxyJoin = -1, -1, -1, -1, -1, -1
	num := func(name string) (uint64, bool) {
		if !o.set(name) {
			return 0, false
		}
		v, _ := saStrtoul(o.val(name))
		return v, true
	}
	asInt := func(v uint64) int64 { return int64(int32(uint32(v))) } // unsigned long to C int
	for _, n := range []struct {
		name string
		set  func(uint64)
	}{
		{"slid", func(v uint64) { p.slid = uint16(v) }},
		{"dlid", func(v uint64) { p.dlid = uint16(v) }},
		{"mlid", func(v uint64) { p.mlid = uint16(v) }},
		{"reversible", func(v uint64) { p.reversible = asInt(v) }},
		{"numb_path", func(v uint64) { p.numbPath = asInt(v) }},
		{"qos_class", func(v uint64) { p.qosClass = asInt(v) }},
		{"sl", func(v uint64) { p.sl = asInt(v) }},
		{"mtu", func(v uint64) { p.mtu = uint8(v) }},
		{"rate", func(v uint64) { p.rate = uint8(v) }},
		{"pkt_lifetime", func(v uint64) { p.pktLife = uint8(v) }},
		{"tclass", func(v uint64) { p.tclass = uint8(v) }},
		{"flow_label", func(v uint64) { p.flowLabel = uint32(v) }},
		{"hop_limit", func(v uint64) { p.hopLimit = asInt(v) }},
		{"scope", func(v uint64) { p.scope = uint8(v) }},
		{"join_state", func(v uint64) { p.joinState = uint8(v) }},
		{"proxy_join", func(v uint64) { p.proxyJoin = asInt(v) }},
		{"service_id", func(v uint64) { p.serviceID = v }},
	} {
		if v, ok := num(n.name); ok {
			n.set(v)
		}
	}
	for _, g := range []struct {
		name string
		dst  *mad.GID
	}{{"sgid", &p.sgid}, {"dgid", &p.dgid}, {"gid", &p.gid}, {"mgid", &p.mgid}} {
		if o.set(g.name) {
			gid, err := saParseGID(o.val(g.name))
			if err != nil {
				return usageErrorf("--%s: %v", g.name, err)
			}
			*g.dst = gid
		}
	}
	// Keys last: one given as something other than hex is asked for on
	// stdin, P_Key before Q_Key as the C tool asks.
	for _, k := range []struct {
		name, prompt string
		set          func(uint64)
	}{
		{"pkey", "P_Key: ", func(v uint64) { p.pkey = uint16(v) }},
		{"qkey", "Q_Key: ", func(v uint64) { p.qkey = uint32(v) }},
	} {
		if o.set(k.name) {
			s, err := q.keyArg(k.name, k.prompt)
			if err != nil {
				return err
			}
			v, _ := saStrtoul(s)
			k.set(v)
		}
	}
	if o.set("src-to-dst") {
		if !strings.Contains(o.val("src-to-dst"), ":") {
			return usageErrorf("--src-to-dst takes <src:dst>")
		}
		if o.flags["src-to-dst"].at > o.flags["numb_path"].at {
			p.numbPath = 0x7f
		}
	}
	if o.set("sgid-to-dgid") {
		s, d, ok := strings.Cut(o.val("sgid-to-dgid"), "-")
		if !ok {
			return usageErrorf("--sgid-to-dgid takes <sgid-dgid>")
		}
		sgid, err := saParseGID(s)
		if err != nil {
			return usageErrorf("--sgid-to-dgid: %v", err)
		}
		dgid, err := saParseGID(d)
		if err != nil {
			return usageErrorf("--sgid-to-dgid: %v", err)
		}
		at := o.flags["sgid-to-dgid"].at
		if at > o.flags["sgid"].at {
			p.sgid = sgid
		}
		if at > o.flags["dgid"].at {
			p.dgid = dgid
		}
		if at > o.flags["numb_path"].at && at > o.flags["src-to-dst"].at {
			p.numbPath = 0x7f
		}
	}
	return nil
}

// keyArg returns a key option's value; one that does not start with a hex
// digit is asked for on stdin, as the C tool asks with getpass.
func (q *saQuery) keyArg(name, prompt string) (string, error) {
	s := q.opts.val(name)
	if s != "" && saIsXDigit(s[0]) {
		return s, nil
	}
	fmt.Fprint(q.env.IO.Err, prompt)
	line, err := bufio.NewReader(q.env.IO.In).ReadString('\n')
	if err != nil && line == "" {
		return "", usageErrorf("cannot get %s", strings.TrimSuffix(prompt, ": "))
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// smKey is --smkey, else ibdiag.conf's sa_key, else 0 (untrusted).
func (q *saQuery) smKey() (uint64, error) {
	if q.opts.set("smkey") {
		s, err := q.keyArg("smkey", "SM_Key: ")
		if err != nil {
			return 0, err
		}
		v, _ := saStrtoul(s)
		return v, nil
	}
	if q.opts.SAKey != "" {
		v, _ := saStrtoul(q.opts.SAKey)
		return v, nil
	}
	return 0, nil
}

// --- talking to the SA ---

// saFailure is get_any_records' handling of a failed query: the message
// it prints and the status it returns.
func saFailure(err error) *saExit {
	var te *rpc.TimeoutError
	code := saEIO
	if errors.As(err, &te) {
		code = saETIMEDOUT
	}
	return &saExit{code: code, msg: fmt.Sprintf("Query SA failed: %s\n", saStrerror(code))}
}

// saStatusText is sa_report_err's line for a non-success SA status.
func saStatusText(status uint16) string {
	var madErr, saErr string
	if st := status & 0xFF; st != 0 {
		busy, redirect := "", ""
		if st&1 != 0 {
			busy = "BUSY"
		}
		if st&2 != 0 {
			redirect = "Redirection Required"
		}
		madErr = fmt.Sprintf(" (%s; %s; %s)", busy, redirect, madInvalidFieldText(int(st>>2)))
	}
	if st := status >> 8; st != 0 {
		saErr = fmt.Sprintf(" SA(%s)", saErrorText(int(st)))
	}
	return fmt.Sprintf("ERROR: Query result returned 0x%04x, %s%s\n", status, madErr, saErr)
}

var saErrorTexts = []string{
	"SA_NO_ERROR",
	"SA_ERR_NO_RESOURCES",
	"SA_ERR_REQ_INVALID",
	"SA_ERR_NO_RECORDS",
	"SA_ERR_TOO_MANY_RECORDS",
	"SA_ERR_REQ_INVALID_GID",
	"SA_ERR_REQ_INSUFFICIENT_COMPONENTS",
	"SA_ERR_REQ_DENIED",
	"SA_ERR_STATUS_PRIO_SUGGESTED",
	"SA_ERR_UNKNOWN",
}

func saErrorText(st int) string {
	if st >= len(saErrorTexts) {
		st = len(saErrorTexts) - 1
	}
	return saErrorTexts[st]
}

var madInvalidFieldTexts = []string{
	"MAD No invalid fields",
	"MAD Bad version",
	"MAD Method specified is not supported",
	"MAD Method/Attribute combination is not supported",
	"MAD Reserved",
	"MAD Reserved",
	"MAD Reserved",
	"MAD Invalid value in Attribute field(s) or Attribute Modifier",
	"MAD UNKNOWN ERROR",
}

func madInvalidFieldText(f int) string {
	if f >= len(madInvalidFieldTexts) {
		f = len(madInvalidFieldTexts) - 1
	}
	return madInvalidFieldTexts[f]
}

// query sends one SA request and returns the reply's valid bytes, or the
// C tool's failure.
func (q *saQuery) query(method uint8, attr uint16, mod uint32, data []byte, mask uint64) (mad.Header, error) {
	req := q.sa.Request(method, attr, data, mask)
	binary.BigEndian.PutUint32(req[20:24], mod)
	reply, err := q.eng.Do(q.ctx, &rpc.Request{Addr: q.sa.Addr(), MAD: req, Dest: "SA"})
	if err != nil {
		if q.opts.Verbose > 0 || q.opts.Debug > 0 {
			fmt.Fprintf(q.env.IO.Err, "saquery: %v\n", err)
		}
		return nil, saFailure(err)
	}
	if st := reply.MAD.Status(); st != 0 {
		return nil, &saExit{code: saEIO, msg: saStatusText(st)}
	}
	n := reply.Length
	if n <= 0 || n > len(reply.MAD) {
		n = len(reply.MAD)
	}
	if n < sa.DataOffset {
		return nil, &saExit{code: saEIO, msg: fmt.Sprintf("Query SA failed: reply of %d bytes is too short\n", n)}
	}
	return reply.MAD[:n], nil
}

// getTable is get_any_records: a GetTable, its records split.
func (q *saQuery) getTable(attr uint16, mod uint32, data []byte, mask uint64, size int) ([][]byte, error) {
	reply, err := q.query(mad.MethodGetTable, attr, mod, data, mask)
	if err != nil {
		return nil, err
	}
	recs, err := sa.SplitTable(reply, size)
	if err != nil {
		return nil, &saExit{code: saEIO, msg: fmt.Sprintf("Query SA failed: %v\n", err)}
	}
	return recs, nil
}

// mainTable is the command's own GetTable: it applies MEMBER=VALUE to the
// record, reports the request with -v and fills the JSON header.
func (q *saQuery) mainTable(name string, rec mad.Struct, mask uint64, mod uint32, patch func([]byte)) ([][]byte, error) {
	d := rec.Desc()
	if err := q.applyMembers(rec, &mask); err != nil {
		return nil, err
	}
	data := mad.Encode(rec)
	if patch != nil {
		patch(data)
	}
	fields := mad.CompMaskFields(d, mask)
	if q.res.Query == "" {
		q.res.Query, q.res.Method, q.res.AttributeID, q.res.ComponentMask = name, "GetTable", d.AttrID, mask
		q.res.MaskFields = append([]string{}, fields...)
	}
	if q.opts.Verbose > 0 {
		fmt.Fprintf(q.env.IO.Err, "saquery: SubnAdmGetTable(%s) attribute 0x%04X modifier 0x%08X component mask 0x%016X %v\n",
			d.Name, d.AttrID, mod, mask, fields)
	}
	return q.getTable(d.AttrID, mod, data, mask, d.Size)
}

// applyMembers sets the MEMBER=VALUE components in rec and their bits in
// mask.
func (q *saQuery) applyMembers(rec mad.Struct, mask *uint64) error {
	for _, m := range q.members {
		err := mad.SetText(rec, m.path, m.value)
		if err != nil && strings.Count(m.value, ":") == 3 && !strings.Contains(m.value, "::") {
			// A GUID written as 0002:c903:0000:1234.
			if err2 := mad.SetText(rec, m.path, "0x"+strings.ReplaceAll(m.value, ":", "")); err2 == nil {
				err = nil
			}
		}
		if err != nil {
			return &saExit{code: saEINVAL, msg: fmt.Sprintf("Invalid %s=%s for %s: %v\n", m.path, m.value, rec.Desc().Name, err)}
		}
		bits, err := mad.CompMask(rec.Desc(), m.path)
		if err != nil {
			return &saExit{code: saEINVAL, msg: fmt.Sprintf("Invalid %s=%s for %s: %v\n", m.path, m.value, rec.Desc().Name, err)}
		}
		*mask |= bits
	}
	return nil
}

// queryCPI is query_sa_cpi: the SA's ClassPortInfo, which -c prints and
// SwitchInfoRecord needs (MulticastFDBTop is there only if the SA says so).
func (q *saQuery) queryCPI() error {
	reply, err := q.query(mad.MethodGet, mad.AttrClassPortInfo, 0, nil, 0)
	if err != nil {
		var ex *saExit
		if errors.As(err, &ex) {
			ex.msg += "Failed to query SA:ClassPortInfo\n"
		}
		return err
	}
	q.p.cpi = saPad(reply[sa.DataOffset:], mad.ClassPortInfoSize)
	return nil
}

func saPad(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	return append(append([]byte(nil), b...), make([]byte, n-len(b))...)
}

// --- argument parsing, the C way ---

// getLID is get_lid: a node description (when the argument starts with a
// letter; looked up in the SA's NodeRecords) or a LID.
func (q *saQuery) getLID(name string) (uint16, error) {
	if name != "" && saIsAlpha(name[0]) {
		lid, err := q.lidFromName(name)
		if err != nil {
			code, msg := saENONET, ""
			var ex *saExit
			if errors.As(err, &ex) {
				code, msg = ex.code, ex.msg
			}
			return 0, &saExit{code: code, msg: msg + fmt.Sprintf("Failed to find lid for \"%s\": %s\n", name, saStrerror(code))}
		}
		return lid, nil
	}
	v, ok := saStrtol(name)
	if !ok || v <= 0 || v > 0xFFFF {
		return 0, &saExit{code: saEINVAL, msg: fmt.Sprintf("Invalid lid specified: \"%s\"\n", name)}
	}
	return uint16(v), nil
}

var saNoSuchNode = errors.New("no such node")

func (q *saQuery) lidFromName(name string) (uint16, error) {
	recs, err := q.getTable(mad.AttrNodeRecord, 0, nil, 0, mad.NodeRecordSize)
	if err != nil {
		return 0, err
	}
	for _, r := range recs {
		if saStrnEqual(name, string(r[44:108]), 64) {
			return binary.BigEndian.Uint16(r[0:]), nil
		}
	}
	return 0, saNoSuchNode
}

// parseLIDAndPorts is parse_lid_and_ports: "lid[/port1[/port2]]"; a port
// that does not parse is -1 (not given).
func (q *saQuery) parseLIDAndPorts(s string) (lid uint16, port1, port2 int64, err error) {
	port1, port2 = -1, -1
	lidStr, rest, more := strings.Cut(s, "/")
	if lid, err = q.getLID(lidStr); err != nil || !more {
		return lid, port1, port2, err
	}
	p1, p2, more2 := strings.Cut(rest, "/")
	if v, ok := saStrtoul(p1); ok {
		port1 = int64(int32(uint32(v)))
	}
	if more2 {
		if v, ok := saStrtoul(p2); ok {
			port2 = int64(int32(uint32(v)))
		}
	}
	return lid, port1, port2, nil
}

// given is CHECK_AND_SET_VAL's test: val differs from the "not given"
// value in the field's C width.
func saGiven(val int64, bits uint, unset int64) (uint64, bool) {
	m := uint64(1)<<bits - 1
	return uint64(val) & m, uint64(val)&m != uint64(unset)&m
}

// saRecBuilder fills a record's fields and collects their component bits.
type saRecBuilder struct {
	rec   mad.Struct
	names []string
}

func (b *saRecBuilder) set(path string, v uint64) {
	if err := mad.Set(b.rec, path, v); err != nil {
		panic(err) // callers mask values to the field's width
	}
	b.names = append(b.names, path)
}

// setIf sets a field when the C tool would: val given in bits wide C
// arithmetic; the value is cut to the field (width bits).
func (b *saRecBuilder) setIf(path string, val int64, bits uint, unset int64, width uint) {
	if v, ok := saGiven(val, bits, unset); ok {
		b.set(path, v&(uint64(1)<<width-1))
	}
}

func (b *saRecBuilder) setGID(path string, g mad.GID) {
	if g == (mad.GID{}) {
		return
	}
	if err := mad.SetBytes(b.rec, path, g[:]); err != nil {
		panic(err)
	}
	b.names = append(b.names, path)
}

func (b *saRecBuilder) mask() uint64 { return mad.MustCompMask(b.rec.Desc(), b.names...) }

// --- the record queries ---

// lidRecordQuery is the common form of the "[lid]" and "lid/x/y"
// queries: fields names the record's LID and port-like fields with their C
// widths.
func (q *saQuery) lidQuery(qt string, rec mad.Struct, args []string, fields []struct {
	path  string
	bits  uint
	width uint
}, dump func([]byte)) error {
	b := &saRecBuilder{rec: rec}
	if len(args) > 0 {
		lid, p1, p2, err := q.parseLIDAndPorts(args[0])
		if err != nil {
			return err
		}
		b.setIf(fields[0].path, int64(lid), 16, 0, 16)
		vals := []int64{p1, p2}
		for i, f := range fields[1:] {
			b.setIf(f.path, vals[i], f.bits, -1, f.width)
		}
	}
	recs, err := q.mainTable(qt, rec, b.mask(), 0, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		dump(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

type saLIDField = struct {
	path  string
	bits  uint
	width uint
}

func (q *saQuery) nodeRecords(args []string) error {
	return q.lidQuery("NodeRecord", &mad.NodeRecord{}, args, []saLIDField{{"LID", 16, 16}}, q.dumpNodeRecord)
}

func (q *saQuery) portInfoRecords(args []string) error {
	return q.lidQuery("PortInfoRecord", &mad.PortInfoRecord{}, args,
		[]saLIDField{{"EndPortLID", 16, 16}, {"PortNum", 8, 8}, {"Options", 8, 8}}, q.dumpOnePortInfoRecord)
}

func (q *saQuery) sl2vlRecords(args []string) error {
	return q.lidQuery("SL2VLTableRecord", &mad.SLtoVLMappingTableRecord{}, args,
		[]saLIDField{{"LID", 16, 16}, {"InputPortNum", 8, 8}, {"OutputPortNum", 8, 8}}, q.dumpSL2VLRecord)
}

func (q *saQuery) pkeyRecords(args []string) error {
	return q.lidQuery("PKeyTableRecord", &mad.PKeyTableRecord{}, args,
		[]saLIDField{{"LID", 16, 16}, {"PortNum", 8, 8}, {"BlockNum", 16, 16}}, q.dumpPKeyRecord)
}

func (q *saQuery) vlarbRecords(args []string) error {
	return q.lidQuery("VLArbitrationTableRecord", &mad.VLArbitrationTableRecord{}, args,
		[]saLIDField{{"LID", 16, 16}, {"OutputPortNum", 8, 8}, {"BlockNum", 8, 8}}, q.dumpVLArbRecord)
}

func (q *saQuery) lftRecords(args []string) error {
	return q.lidQuery("LFTRecord", &mad.LinearForwardingTableRecord{}, args,
		[]saLIDField{{"LID", 16, 16}, {"BlockNum", 16, 16}}, q.dumpLFTRecord)
}

func (q *saQuery) rftRecords(args []string) error {
	return q.lidQuery("RFTRecord", &mad.RandomForwardingTableRecord{}, args,
		[]saLIDField{{"LID", 16, 16}, {"BlockNum", 16, 16}}, q.dumpRFTRecord)
}

func (q *saQuery) guidInfoRecords(args []string) error {
	return q.lidQuery("GUIDInfoRecord", &mad.GUIDInfoRecord{}, args,
		[]saLIDField{{"LID", 16, 16}, {"BlockNum", 8, 8}}, q.dumpGUIDInfoRecord)
}

func (q *saQuery) switchInfoRecords(args []string) error {
	return q.lidQuery("SwitchInfoRecord", &mad.SwitchInfoRecord{}, args, []saLIDField{{"LID", 16, 16}}, q.dumpSwitchInfoRecord)
}

func (q *saQuery) smInfoRecords(args []string) error {
	return q.lidQuery("SMInfoRecord", &mad.SMInfoRecord{}, args, []saLIDField{{"LID", 16, 16}}, q.dumpSMInfoRecord)
}

func (q *saQuery) mftRecords(args []string) error {
	rec := &mad.MulticastForwardingTableRecord{}
	b := &saRecBuilder{rec: rec}
	if len(args) > 0 {
		lid, position, block, err := q.parseLIDAndPorts(args[0])
		if err != nil {
			return err
		}
		b.setIf("LID", int64(lid), 16, 0, 16)
		b.setIf("BlockNum", block, 16, -1, 9)
		b.setIf("Position", position, 8, -1, 4)
	}
	recs, err := q.mainTable("MFTRecord", rec, b.mask(), 0, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.dumpMFTRecord(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

func (q *saQuery) linkRecords(args []string) error {
	rec := &mad.LinkRecord{}
	b := &saRecBuilder{rec: rec}
	fromLID, toLID := uint16(0), uint16(0)
	fromPort, toPort := int64(-1), int64(-1)
	var err error
	if len(args) > 0 {
		if fromLID, fromPort, _, err = q.parseLIDAndPorts(args[0]); err != nil {
			return err
		}
	}
	if len(args) > 1 {
		if toLID, toPort, _, err = q.parseLIDAndPorts(args[1]); err != nil {
			return err
		}
	}
	b.setIf("FromLID", int64(fromLID), 16, 0, 16)
	b.setIf("FromPort", fromPort, 8, -1, 8)
	b.setIf("ToLID", int64(toLID), 16, 0, 16)
	b.setIf("ToPort", toPort, 8, -1, 8)
	recs, err := q.mainTable("LinkRecord", rec, b.mask(), 0, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.dumpLinkRecord(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

func (q *saQuery) informInfoRecords(args []string) error {
	rec := &mad.InformInfoRecord{}
	b := &saRecBuilder{rec: rec}
	if len(args) > 0 {
		g, err := saParseGID(args[0])
		if err != nil {
			return &saExit{code: saEINVAL, msg: fmt.Sprintf("Invalid SubscriberGID specified: \"%s\"\n", args[0])}
		}
		// The C tool sets the mask even for the all-zero GID.
		rec.SubscriberGID = g
		b.names = append(b.names, "SubscriberGID")
	}
	recs, err := q.mainTable("InformInfoRecord", rec, b.mask(), 0, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.dumpInformInfoRecord(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

func (q *saQuery) serviceRecords([]string) error {
	return q.allRecords("ServiceRecord", &mad.ServiceRecord{}, q.dumpServiceRecord)
}

func (q *saQuery) serviceAssociationRecords([]string) error {
	return q.allRecords("ServiceAssociationRecord", &mad.ServiceAssociationRecord{}, q.dumpServiceAssociationRecord)
}

// allRecords is get_and_dump_all_records: the whole table (MEMBER=VALUE
// still selects).
func (q *saQuery) allRecords(name string, rec mad.Struct, dump func([]byte)) error {
	recs, err := q.mainTable(name, rec, 0, 0, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		dump(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

func (q *saQuery) pathRecords([]string) error {
	p := &q.p
	rec := &mad.PathRecord{}
	b := &saRecBuilder{rec: rec}
	if p.serviceID != 0 {
		b.set("ServiceID", p.serviceID)
	}
	b.setGID("SGID", p.sgid)
	b.setGID("DGID", p.dgid)
	b.setIf("SLID", int64(p.slid), 16, 0, 16)
	b.setIf("DLID", int64(p.dlid), 16, 0, 16)
	b.setIf("HopLimit", p.hopLimit, 32, -1, 8)
	b.setIf("FlowLabel", int64(p.flowLabel), 32, 0, 20)
	b.setIf("TClass", int64(p.tclass), 8, 0, 8)
	b.setIf("Reversible", p.reversible, 8, -1, 1)
	b.setIf("NumbPath", p.numbPath, 8, -1, 7)
	b.setIf("PKey", int64(p.pkey), 16, 0, 16)
	b.setIf("SL", p.sl, 16, -1, 4)
	if p.qosClass != -1 {
		b.set("QoSClass", uint64(p.qosClass)&0xFFF)
	}
	b.selector("MTU", p.mtu)
	b.selector("Rate", p.rate)
	b.selector("PacketLifeTime", p.pktLife)
	recs, err := q.mainTable("PathRecord", rec, b.mask(), 0, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.dumpPathRecord(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

// selector is CHECK_AND_SET_VAL_AND_SEL: a byte with the selector in its
// two high bits and the value in the others, given when not 0.
func (b *saRecBuilder) selector(field string, v uint8) {
	if v == 0 {
		return
	}
	b.set(field+"Selector", uint64(v>>6))
	b.set(field, uint64(v&0x3F))
}

// mcmrRecord builds the MCMemberRecord of the MCMR query from the options.
// The C tool's ProxyJoin is a one-bit C bitfield, the low bit of byte 49
// on x86 (OpenSM reads it there too); the patch puts it there.
func (q *saQuery) mcmrRecord() (*mad.MCMemberRecord, uint64, func([]byte)) {
	p := &q.p
	rec := &mad.MCMemberRecord{}
	b := &saRecBuilder{rec: rec}
	b.setGID("MGID", p.mgid)
	b.setGID("PortGID", p.gid)
	b.setIf("MLID", int64(p.mlid), 16, 0, 16)
	b.setIf("QKey", int64(p.qkey), 32, 0, 32)
	b.selector("MTU", p.mtu)
	b.selector("Rate", p.rate)
	b.selector("PacketLifeTime", p.pktLife)
	b.setIf("TClass", int64(p.tclass), 8, 0, 8)
	b.setIf("PKey", int64(p.pkey), 16, 0, 16)
	b.setIf("SL", p.sl, 8, -1, 4)
	b.setIf("FlowLabel", int64(p.flowLabel), 32, 0, 20)
	b.setIf("HopLimit", p.hopLimit, 8, -1, 8)
	b.setIf("Scope", int64(p.scope), 8, 0, 4)
	b.setIf("JoinState", int64(p.joinState), 8, 0, 4)
	var patch func([]byte)
	if v, ok := saGiven(p.proxyJoin, 8, -1); ok {
		b.names = append(b.names, "ProxyJoin")
		patch = func(d []byte) { d[49] = d[49]&^1 | byte(v&1) }
	}
	return rec, b.mask(), patch
}

func (q *saQuery) mcMemberRecords([]string) error {
	rec, mask, patch := q.mcmrRecord()
	recs, err := q.mainTable("MCMemberRecord", rec, mask, 0, patch)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.dumpOneMCMemberRecord(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

func (q *saQuery) classPortInfo([]string) error {
	q.dumpClassPortInfo(q.p.cpi)
	cpi := &mad.ClassPortInfo{}
	if err := cpi.Unmarshal(q.p.cpi); err == nil {
		q.res.Query, q.res.Method, q.res.AttributeID = "ClassPortInfo", "Get", mad.AttrClassPortInfo
		q.res.ClassPortInfo, _ = json.Marshal(cpi)
	}
	return nil
}

// --- the other commands ---

// printNodeRecords is print_node_records (-N, -D, -L, -l, -G, -O, -U).
func (q *saQuery) printNodeRecords() error {
	rec := &mad.NodeRecord{}
	recs, err := q.mainTable("NodeRecord", rec, 0, 0, nil)
	if err != nil {
		return err
	}
	if q.printMode == saPrintAllDesc {
		q.res.Query = "NodeDescriptions"
		fmt.Fprint(q.out, "   LID \"name\"\n================\n")
	}
	for _, r := range recs {
		lid := binary.BigEndian.Uint16(r[0:])
		name := q.nodeName(r)
		switch q.printMode {
		case saPrintAllDesc:
			if r[4+2] == 1 { // a CA
				fmt.Fprintf(q.out, "%6d  \"%s\"\n", lid, name)
				q.addRecord(rec.Desc(), r, "name", name)
			}
		case saPrintNameOfLID:
			if q.requestedLID == lid {
				q.printNodeRecord(r)
			}
		case saPrintNameOfGUID:
			if q.requestedGUID == binary.BigEndian.Uint64(r[4+20:]) {
				q.printNodeRecord(r)
			}
		default:
			if !q.hasName || saStrnEqual(q.requestedName, string(r[44:108]), 64) || saStrnEqual(q.requestedName, name, 64) {
				q.printNodeRecord(r)
				if q.printMode == saPrintUniqueLIDOnly {
					return saUniqueDone
				}
			}
		}
	}
	return nil
}

// printNodeRecord is print_node_record: one NodeRecord in the form the
// option asks for.
func (q *saQuery) printNodeRecord(r []byte) {
	name := q.nodeName(r)
	switch q.printMode {
	case saPrintLIDOnly, saPrintUniqueLIDOnly:
		fmt.Fprintf(q.out, "%d\n", binary.BigEndian.Uint16(r[0:]))
	case saPrintGUIDOnly:
		fmt.Fprintf(q.out, "0x%016x\n", binary.BigEndian.Uint64(r[4+20:]))
	case saPrintNameOfLID, saPrintNameOfGUID:
		fmt.Fprintf(q.out, "%s\n", name)
	default:
		q.dumpNodeRecord(r)
	}
	q.addRecord(mad.LookupStruct("NodeRecord"), r, "name", name)
}

// nodeName is the node name map's name of a NodeRecord's node, or its
// cleaned description.
func (q *saQuery) nodeName(r []byte) string {
	return q.names.Name(binary.BigEndian.Uint64(r[4+12:]), string(r[44:108]))
}

// printIsSM is print_issm_records (-s): the PortInfoRecords whose
// CapabilityMask has IsSM, then those with IsSMdisabled.
func (q *saQuery) printIsSM() error {
	const capIsSM, capSMDisabled = 0x2, 0x400
	var tables [2][][]byte
	for i, capBit := range []uint32{capIsSM, capSMDisabled} {
		rec := &mad.PortInfoRecord{}
		rec.PortInfo.CapabilityMask = capBit
		recs, err := q.mainTable("IsSM", rec, mad.MustCompMask(rec.Desc(), "PortInfo.CapabilityMask"), 1<<31, nil)
		if err != nil {
			return err
		}
		tables[i] = recs
		if i == 0 {
			fmt.Fprint(q.out, "IsSM ports\n")
		} else {
			fmt.Fprint(q.out, "\nIsSMdisabled ports\n")
		}
		for _, r := range recs {
			q.dumpPortInfoRecord(r)
		}
	}
	d := mad.LookupStruct("PortInfoRecord")
	for _, r := range tables[0] {
		q.addRecord(d, r, "", "")
	}
	disabled := []json.RawMessage{}
	for _, r := range tables[1] {
		disabled = append(disabled, saRecordJSON(d, r, q.opts.ShowKeys, "", ""))
	}
	q.res.IsSMDisabled = &disabled
	return nil
}

func (q *saQuery) printMCGroups() error {
	rec := &mad.MCMemberRecord{}
	recs, err := q.mainTable("MCMemberRecord", rec, 0, 0, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		q.dumpMCGroupRecord(r)
		q.addRecord(rec.Desc(), r, "", "")
	}
	return nil
}

// printMCMembers is print_multicast_member_records (-m): every
// MCMemberRecord with the name of the node whose port GUID its PortGID
// has (from the NodeRecords); with an MLID argument only the PortGIDs of
// that group.
func (q *saQuery) printMCMembers() error {
	rec := &mad.MCMemberRecord{}
	recs, err := q.mainTable("MCMemberRecord", rec, 0, 0, nil)
	if err != nil {
		return err
	}
	nodes, err := q.getTable(mad.AttrNodeRecord, 0, nil, 0, mad.NodeRecordSize)
	if err != nil {
		return err
	}
	for _, r := range recs {
		name := "<unknown>"
		for _, n := range nodes {
			if string(n[4+20:4+28]) == string(r[24:32]) {
				name = q.nodeName(n)
				break
			}
		}
		mlid := binary.BigEndian.Uint16(r[36:])
		if q.hasName {
			if v, _ := saStrtol(q.requestedName); v == int64(mlid) {
				fmt.Fprintf(q.out, "\t\tPortGid.................%s (%s)\n", saNtop6(r[16:32]), name)
				q.addRecord(rec.Desc(), r, "node_description", name)
			}
			continue
		}
		fmt.Fprintf(q.out, "MCMemberRecord member dump:\n")
		q.field(24, "MGID", "%s", saNtop6(r[0:16]))
		q.field(24, "Mlid", "0x%X", mlid)
		q.field(24, "PortGid", "%s", saNtop6(r[16:32]))
		q.field(24, "ScopeState", "0x%X", r[48])
		q.field(24, "ProxyJoin", "0x%X", r[49]&1)
		q.field(24, "NodeDescription", "%s", name)
		q.addRecord(rec.Desc(), r, "node_description", name)
	}
	return nil
}

// --- JSON ---

// addRecord adds a record to the JSON output, with an extra string member
// when key is not empty.
func (q *saQuery) addRecord(d *mad.StructDesc, r []byte, key, value string) {
	if !q.opts.JSON {
		return
	}
	q.res.Records = append(q.res.Records, saRecordJSON(d, r, q.opts.ShowKeys, key, value))
}

// saRecordJSON decodes a record with its generated type and returns its
// JSON, with key: value appended to the object when key is not empty, and
// the secret fields (M_Key, SM_Key, ServiceKey) null unless showKeys (-K).
func saRecordJSON(d *mad.StructDesc, r []byte, showKeys bool, key, value string) json.RawMessage {
	var s mad.Struct
	if d.New != nil {
		s = d.New()
	}
	if s == nil || s.Unmarshal(saPad(r, d.Size)) != nil {
		return json.RawMessage(strconv.Quote(hex.EncodeToString(r)))
	}
	b := mad.JSON(s, showKeys)
	if key != "" && len(b) > 1 && b[len(b)-1] == '}' {
		v, _ := json.Marshal(value)
		sep := ","
		if len(b) == 2 {
			sep = ""
		}
		b = append(append(append(append(b[:len(b)-1:len(b)-1], sep...), strconv.Quote(key)+":"...), v...), '}')
	}
	return b
}

// --- the record dumps (saquery.c's dump_* functions) ---

// field prints one "\t\tname.....value" line, the name and dots col wide.
func (q *saQuery) field(col int, name, format string, args ...any) {
	fmt.Fprint(q.out, saLine(col, name, format, args...))
}

func saLine(col int, name, format string, args ...any) string {
	dots := ""
	if len(name) < col {
		dots = strings.Repeat(".", col-len(name))
	}
	return "\t\t" + name + dots + fmt.Sprintf(format, args...) + "\n"
}

func saU16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func saU32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func saU64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// saNodeType is ib_get_node_type_str.
func saNodeType(t byte) string {
	switch t {
	case 1:
		return "Channel Adapter"
	case 2:
		return "Switch"
	case 3:
		return "Router"
	}
	return "UNKNOWN"
}

func (q *saQuery) dumpNodeRecord(r []byte) {
	ni := r[4:44]
	fmt.Fprint(q.out, "NodeRecord dump:\n")
	q.field(24, "lid", "%d", saU16(r[0:]))
	q.field(24, "reserved", "0x%X", saU16(r[2:]))
	q.field(24, "base_version", "0x%X", ni[0])
	q.field(24, "class_version", "0x%X", ni[1])
	q.field(24, "node_type", "%s", saNodeType(ni[2]))
	q.field(24, "num_ports", "%d", ni[3])
	q.field(24, "sys_guid", "0x%016x", saU64(ni[4:]))
	q.field(24, "node_guid", "0x%016x", saU64(ni[12:]))
	q.field(24, "port_guid", "0x%016x", saU64(ni[20:]))
	q.field(24, "partition_cap", "0x%X", saU16(ni[28:]))
	q.field(24, "device_id", "0x%X", saU16(ni[30:]))
	q.field(24, "revision", "0x%X", saU32(ni[32:]))
	q.field(24, "port_num", "%d", ni[36])
	q.field(24, "vendor_id", "0x%X", saU32(ni[36:])&0xFFFFFF)
	q.field(24, "NodeDescription", "%s", q.nodeName(r))
}

func (q *saQuery) dumpPathRecord(r []byte) {
	fmt.Fprint(q.out, "PathRecord dump:\n")
	q.field(24, "service_id", "0x%016x", saU64(r[0:]))
	q.field(24, "dgid", "%s", saNtop6(r[8:24]))
	q.field(24, "sgid", "%s", saNtop6(r[24:40]))
	q.field(24, "dlid", "%d", saU16(r[40:]))
	q.field(24, "slid", "%d", saU16(r[42:]))
	q.field(24, "hop_flow_raw", "0x%X", saU32(r[44:]))
	q.field(24, "tclass", "0x%X", r[48])
	q.field(24, "num_path_revers", "0x%X", r[49])
	q.field(24, "pkey", "0x%X", saU16(r[50:]))
	q.field(24, "qos_class", "0x%X", saU16(r[52:])>>4)
	q.field(24, "sl", "0x%X", saU16(r[52:])&0xF)
	q.field(24, "mtu", "0x%X", r[54])
	q.field(24, "rate", "0x%X", r[55])
	q.field(24, "pkt_life", "0x%X", r[56])
	q.field(24, "preference", "0x%X", r[57])
	q.field(24, "resv2", "0x%02X%02X%02X%02X%02X%02X", r[58], r[59], r[60], r[61], r[62], r[63])
}

func (q *saQuery) dumpClassPortInfo(c []byte) {
	fmt.Fprint(q.out, "SA ClassPortInfo:\n")
	q.field(25, "Base version", "%d", c[0])
	q.field(25, "Class version", "%d", c[1])
	q.field(25, "Capability mask", "0x%04X", saU16(c[2:]))
	q.field(25, "Capability mask 2", "0x%08X", saU32(c[4:])>>5)
	q.field(25, "Response time value", "0x%02X", saU32(c[4:])&0x1F)
	q.field(25, "Redirect GID", "%s", saNtop6(c[8:24]))
	q.field(25, "Redirect TC/SL/FL", "0x%08X", saU32(c[24:]))
	q.field(25, "Redirect LID", "%d", saU16(c[28:]))
	q.field(25, "Redirect PKey", "0x%04X", saU16(c[30:]))
	q.field(25, "Redirect QP", "0x%08X", saU32(c[32:]))
	q.field(25, "Redirect QKey", "0x%08X", saU32(c[36:]))
	q.field(25, "Trap GID", "%s", saNtop6(c[40:56]))
	q.field(25, "Trap TC/SL/FL", "0x%08X", saU32(c[56:]))
	q.field(25, "Trap LID", "%d", saU16(c[60:]))
	q.field(25, "Trap PKey", "0x%04X", saU16(c[62:]))
	q.field(25, "Trap HL/QP", "0x%08X", saU32(c[64:]))
	q.field(25, "Trap QKey", "0x%08X", saU32(c[68:]))
}

// dumpPortInfoRecord is the short form -s prints.
func (q *saQuery) dumpPortInfoRecord(r []byte) {
	fmt.Fprint(q.out, "PortInfoRecord dump:\n")
	q.field(24, "EndPortLid", "%d", saU16(r[0:]))
	q.field(24, "PortNum", "%d", r[2])
	q.field(24, "base_lid", "%d", saU16(r[4+16:]))
	q.field(24, "master_sm_base_lid", "%d", saU16(r[4+18:]))
	q.field(24, "capability_mask", "0x%X", saU32(r[4+20:]))
}

// dumpOnePortInfoRecord prints a PortInfoRecord with libibmad's dotted
// PortInfo, two tabs before each line (dump_portinfo).
func (q *saQuery) dumpOnePortInfoRecord(r []byte) {
	fmt.Fprint(q.out, "PortInfoRecord dump:\n\tRID\n")
	q.field(24, "EndPortLid", "%d", saU16(r[0:]))
	q.field(24, "PortNum", "%d", r[2])
	q.field(24, "Options", "0x%x", r[3])
	fmt.Fprint(q.out, "\tPortInfo dump:\n")
	var pi mad.PortInfo
	if err := pi.Unmarshal(saPad(r[4:], mad.PortInfoSize)); err != nil {
		return
	}
	for _, line := range strings.SplitAfter(mad.Dotted(&pi, &mad.DottedOptions{ShowKeys: q.opts.ShowKeys}), "\n") {
		if line != "" && !strings.HasPrefix(line, "\t") {
			fmt.Fprint(q.out, "\t\t")
		}
		fmt.Fprint(q.out, line)
	}
}

func (q *saQuery) dumpOneMCMemberRecord(r []byte) {
	shf := saU32(r[44:])
	fmt.Fprint(q.out, "MCMember Record dump:\n")
	q.field(24, "MGID", "%s", saNtop6(r[0:16]))
	q.field(24, "PortGid", "%s", saNtop6(r[16:32]))
	q.field(24, "qkey", "0x%x", saU32(r[32:]))
	q.field(24, "mlid", "0x%x", saU16(r[36:]))
	q.field(24, "mtu", "0x%x", r[38])
	q.field(24, "TClass", "0x%x", r[39])
	q.field(24, "pkey", "0x%x", saU16(r[40:]))
	q.field(24, "rate", "0x%x", r[42])
	q.field(24, "pkt_life", "0x%x", r[43])
	q.field(24, "SL", "0x%x", shf>>28)
	q.field(24, "FlowLabel", "0x%x", shf>>8&0xFFFFF)
	q.field(24, "HopLimit", "0x%x", shf&0xFF)
	q.field(24, "Scope", "0x%x", r[48]>>4)
	q.field(24, "JoinState", "0x%x", r[48]&0xF)
	q.field(24, "ProxyJoin", "0x%x", r[49]&1)
}

func (q *saQuery) dumpMCGroupRecord(r []byte) {
	fmt.Fprint(q.out, "MCMemberRecord group dump:\n")
	q.field(24, "MGID", "%s", saNtop6(r[0:16]))
	q.field(24, "Mlid", "0x%X", saU16(r[36:]))
	q.field(24, "Mtu", "0x%X", r[38])
	q.field(24, "pkey", "0x%X", saU16(r[40:]))
	q.field(24, "Rate", "0x%X", r[42])
	q.field(24, "SL", "0x%X", saU32(r[44:])>>28)
}

func (q *saQuery) dumpServiceRecord(r []byte) {
	key := "<not displayed>"
	if q.opts.ShowKeys {
		key = "0x" + hex.EncodeToString(r[32:48])
	}
	fmt.Fprint(q.out, "ServiceRecord dump:\n")
	q.field(24, "ServiceID", "0x%016x", saU64(r[0:]))
	q.field(24, "ServiceGID", "%s", saNtop6(r[8:24]))
	q.field(24, "ServiceP_Key", "0x%X", saU16(r[24:]))
	q.field(24, "ServiceLease", "0x%X", saU32(r[28:]))
	q.field(24, "ServiceKey", "%s", key)
	q.field(24, "ServiceName", "%s", saCString(r[48:112]))
	for i := 0; i < 16; i++ {
		q.field(24, fmt.Sprintf("ServiceData8.%d", i+1), "0x%X", r[112+i])
	}
	for i := 0; i < 8; i++ {
		q.field(24, fmt.Sprintf("ServiceData16.%d", i+1), "0x%X", saU16(r[128+2*i:]))
	}
	for i := 0; i < 4; i++ {
		q.field(24, fmt.Sprintf("ServiceData32.%d", i+1), "0x%X", saU32(r[144+4*i:]))
	}
	for i := 0; i < 2; i++ {
		q.field(24, fmt.Sprintf("ServiceData64.%d", i+1), "0x%016x", saU64(r[160+8*i:]))
	}
}

// dumpServiceAssociationRecord is ibtool's (the C tool has no such query),
// in the ServiceRecord's style.
func (q *saQuery) dumpServiceAssociationRecord(r []byte) {
	key := "<not displayed>"
	if q.opts.ShowKeys {
		key = "0x" + hex.EncodeToString(r[0:16])
	}
	fmt.Fprint(q.out, "ServiceAssociationRecord dump:\n")
	q.field(24, "ServiceKey", "%s", key)
	q.field(24, "ServiceName", "%s", saCString(r[16:80]))
}

func (q *saQuery) dumpSMInfoRecord(r []byte) {
	fmt.Fprint(q.out, "SMInfoRecord dump:\n\t\tRID\n")
	q.field(22, "LID", "%d", saU16(r[0:]))
	fmt.Fprint(q.out, "\t\tSMInfo dump:\n")
	q.field(22, "GUID", "0x%016x", saU64(r[4:]))
	q.field(22, "SM_Key", "0x%016x", saU64(r[12:]))
	q.field(22, "ActCount", "%d", saU32(r[20:]))
	q.field(22, "Priority", "%d", r[24]>>4)
	q.field(22, "SMState", "%d", r[24]&0xF)
}

func (q *saQuery) dumpSwitchInfoRecord(r []byte) {
	si := r[4:24]
	fmt.Fprint(q.out, "SwitchInfoRecord dump:\n\t\tRID\n")
	q.field(40, "LID", "%d", saU16(r[0:]))
	fmt.Fprint(q.out, "\t\tSwitchInfo dump:\n")
	q.field(40, "LinearFDBCap", "0x%X", saU16(si[0:]))
	q.field(40, "RandomFDBCap", "0x%X", saU16(si[2:]))
	q.field(40, "MulticastFDBCap", "0x%X", saU16(si[4:]))
	q.field(40, "LinearFDBTop", "0x%X", saU16(si[6:]))
	q.field(40, "DefaultPort", "%d", si[8])
	q.field(40, "DefaultMulticastPrimaryPort", "%d", si[9])
	q.field(40, "DefaultMulticastNotPrimaryPort", "%d", si[10])
	q.field(40, "LifeTimeValue/PortStateChange/OpSL2VL", "0x%X", si[11])
	q.field(40, "LIDsPerPort", "0x%X", saU16(si[12:]))
	q.field(40, "PartitionEnforcementCap", "0x%X", saU16(si[14:]))
	q.field(40, "flags", "0x%X", si[16])
	const isMulticastTopSupported = 1 << 3
	if len(q.p.cpi) >= 8 && (saU32(q.p.cpi[4:])>>5)&isMulticastTopSupported != 0 {
		q.field(40, "MulticastFDBTop", "0x%X", saU16(si[18:]))
	}
}

func (q *saQuery) dumpInformInfoRecord(r []byte) {
	ii := r[24:60]
	qpnResp := saU32(ii[28:])
	fmt.Fprint(q.out, "InformInfoRecord dump:\n\t\tRID\n")
	q.field(24, "SubscriberGID", "%s", saNtop6(r[0:16]))
	q.field(24, "SubscriberEnum", "0x%X", saU16(r[16:]))
	fmt.Fprint(q.out, "\t\tInformInfo dump:\n")
	q.field(24, "gid", "%s", saNtop6(ii[0:16]))
	q.field(24, "lid_range_begin", "%d", saU16(ii[16:]))
	q.field(24, "lid_range_end", "%d", saU16(ii[18:]))
	q.field(24, "is_generic", "0x%X", ii[22])
	q.field(24, "subscribe", "0x%X", ii[23])
	q.field(24, "trap_type", "0x%X", saU16(ii[24:]))
	if ii[22] != 0 {
		q.field(24, "trap_num", "%d", saU16(ii[26:]))
	} else {
		q.field(24, "dev_id", "0x%X", saU16(ii[26:]))
	}
	if q.opts.ShowKeys {
		q.field(24, "qpn", "0x%06X", qpnResp>>8)
	} else {
		q.field(24, "qpn", "%s", "<not displayed>")
	}
	q.field(24, "resp_time_val", "0x%X", qpnResp&0x1F)
	prod := uint32(ii[33])<<16 | uint32(saU16(ii[34:]))
	if ii[22] != 0 {
		q.field(24, "node_type", "0x%06X", prod)
	} else {
		q.field(24, "vendor_id", "0x%06X", prod)
	}
}

func (q *saQuery) dumpLinkRecord(r []byte) {
	fmt.Fprint(q.out, "LinkRecord dump:\n")
	q.field(27, "FromLID", "%d", saU16(r[0:]))
	q.field(27, "FromPort", "%d", r[2])
	q.field(27, "ToPort", "%d", r[3])
	q.field(27, "ToLID", "%d", saU16(r[4:]))
}

func (q *saQuery) dumpSL2VLRecord(r []byte) {
	fmt.Fprint(q.out, "SL2VLTableRecord dump:\n")
	q.field(27, "LID", "%d", saU16(r[0:]))
	q.field(27, "InPort", "%d", r[2])
	q.field(27, "OutPort", "%d", r[3])
	var b strings.Builder
	b.WriteString("\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n\t\tVL:")
	for sl := 0; sl < 16; sl++ {
		vl := r[8+sl/2]
		if sl%2 == 0 {
			vl >>= 4
		}
		fmt.Fprintf(&b, "%2d|", vl&0xF)
	}
	b.WriteString("\n")
	fmt.Fprint(q.out, b.String())
}

func (q *saQuery) dumpVLArbRecord(r []byte) {
	fmt.Fprint(q.out, "VLArbTableRecord dump:\n")
	q.field(27, "LID", "%d", saU16(r[0:]))
	q.field(27, "Port", "%d", r[2])
	q.field(27, "Block", "%d", r[3])
	var b strings.Builder
	for i := 0; i < 32; i += 16 {
		b.WriteString("\t\tVL    :")
		for e := i; e < i+16; e++ {
			fmt.Fprintf(&b, "%2d|", r[8+2*e])
		}
		b.WriteString("\n\t\tWeight:")
		for e := i; e < i+16; e++ {
			fmt.Fprintf(&b, "%2d|", r[8+2*e+1])
		}
		b.WriteString("\n")
	}
	fmt.Fprint(q.out, b.String())
}

func (q *saQuery) dumpPKeyRecord(r []byte) {
	fmt.Fprint(q.out, "PKeyTableRecord dump:\n")
	q.field(27, "LID", "%d", saU16(r[0:]))
	q.field(27, "Port", "%d", r[4])
	// The C tool prints block_num without byte swapping: it and OpenSM
	// keep it in host (x86) order, so the number reads little endian.
	q.field(27, "Block", "%d", binary.LittleEndian.Uint16(r[2:]))
	var b strings.Builder
	b.WriteString("\t\tPKey Table:\n")
	for i := 0; i < 32; i += 8 {
		b.WriteString("\t\t")
		for e := i; e < i+8; e++ {
			if e > i {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "0x%04x", saU16(r[8+2*e:]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	fmt.Fprint(q.out, b.String())
}

func (q *saQuery) dumpLFTRecord(r []byte) {
	block := int(saU16(r[2:]))
	fmt.Fprint(q.out, "LFT Record dump:\n")
	q.field(27, "LID", "%d", saU16(r[0:]))
	q.field(27, "Block", "%d", block)
	var b strings.Builder
	b.WriteString("\t\tLFT:\n\t\tLID\tPort Number\n")
	for i := 0; i < 64; i++ {
		fmt.Fprintf(&b, "\t\t%d\t%d\n", block*64+i, r[8+i])
	}
	b.WriteString("\n")
	fmt.Fprint(q.out, b.String())
}

// dumpRFTRecord is ibtool's (the C tool has no RFTRecord query), in the
// LFT record's style: one line per valid entry.
func (q *saQuery) dumpRFTRecord(r []byte) {
	fmt.Fprint(q.out, "RFT Record dump:\n")
	q.field(27, "LID", "%d", saU16(r[0:]))
	q.field(27, "Block", "%d", saU16(r[2:]))
	var b strings.Builder
	b.WriteString("\t\tRFT:\n\t\tLID\tLMC\tPort Number\n")
	for i := 0; i < 16; i++ {
		e := r[8+4*i:]
		if e[2]&0x80 != 0 {
			fmt.Fprintf(&b, "\t\t%d\t%d\t%d\n", saU16(e), e[2]>>4&7, e[3])
		}
	}
	b.WriteString("\n")
	fmt.Fprint(q.out, b.String())
}

func (q *saQuery) dumpGUIDInfoRecord(r []byte) {
	fmt.Fprint(q.out, "GUIDInfo Record dump:\n")
	q.field(27, "LID", "%d", saU16(r[0:]))
	q.field(27, "Block", "%d", r[2])
	for i := 0; i < 8; i++ {
		q.field(27, fmt.Sprintf("GUID %d", i), "0x%016x", saU64(r[8+8*i:]))
	}
}

func (q *saQuery) dumpMFTRecord(r []byte) {
	pb := saU16(r[2:])
	position, block := pb>>12, pb&0x1FF
	fmt.Fprint(q.out, "MFT Record dump:\n")
	q.field(27, "LID", "%d", saU16(r[0:]))
	q.field(27, "Position", "%d", position)
	q.field(27, "Block", "%d", block)
	var b strings.Builder
	b.WriteString("\t\tMFT:\n\t\tMLID\tPort Mask\n")
	offset := 0xC000 + int(block)*32
	for i := 0; i < 32; i++ {
		fmt.Fprintf(&b, "\t\t0x%04x\t0x%04x\n", offset+i, saU16(r[8+2*i:]))
	}
	b.WriteString("\n")
	fmt.Fprint(q.out, b.String())
}

// --- C string and number conventions ---

// saCString is a NUL-padded C string.
func saCString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// saStrnEqual is strncmp(a, b, n) == 0 for C strings.
func saStrnEqual(a, b string, n int) bool {
	a, b = saCString([]byte(a)), saCString([]byte(b))
	if len(a) > n {
		a = a[:n]
	}
	if len(b) > n {
		b = b[:n]
	}
	return a == b
}

func saIsAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func saIsXDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// saStrtoul is strtoul(s, &end, 0) (and strtoull): leading space, a sign,
// 0x for hex and 0 for octal, as many digits as there are; ok is false
// when no digits were read (end == s). An overflow gives the maximum.
func saStrtoul(s string) (uint64, bool) {
	v, neg, ok, _ := saParseNumber(s)
	if neg {
		v = -v
	}
	return v, ok
}

// saStrtol is strtol(s, NULL, 0); ok is false on overflow (ERANGE).
func saStrtol(s string) (int64, bool) {
	v, neg, _, overflow := saParseNumber(s)
	if overflow || (!neg && v > 1<<63-1) || (neg && v > 1<<63) {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

func saParseNumber(s string) (v uint64, neg, ok, overflow bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	if i < len(s) && s[i] == '0' {
		ok = true // "0" alone, or "0x" without hex digits, reads as 0
		i++
		base = 8
		if i+1 < len(s) && (s[i] == 'x' || s[i] == 'X') && saIsXDigit(s[i+1]) {
			base = 16
			i++
		}
	}
	for ; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'z':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			d = uint64(c-'A') + 10
		default:
			d = 99
		}
		if d >= base {
			break
		}
		ok = true
		if v > (1<<64-1-d)/base {
			overflow = true
			v = 1<<64 - 1
			continue
		}
		if !overflow {
			v = v*base + d
		}
	}
	if overflow {
		v, neg = 1<<64-1, false
	}
	return v, neg, ok, overflow
}

// saParseGID is inet_pton(AF_INET6, ...): IPv6 text only, no zone.
func saParseGID(s string) (mad.GID, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return mad.GID{}, fmt.Errorf("bad GID %q (IPv6 form, e.g. fe80::2:c903:0:1234)", s)
	}
	return a.As16(), nil
}

// saNtop6 formats 16 bytes as glibc's inet_ntop(AF_INET6) does: the
// longest run of two or more zero words (the first of equal ones) as
// "::", and an IPv4 tail for ::a.b.c.d and ::ffff:a.b.c.d.
func saNtop6(b []byte) string {
	var w [8]uint16
	for i := range w {
		w[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	bestBase, bestLen, curBase, curLen := -1, 0, -1, 0
	for i := 0; i < 8; i++ {
		if w[i] == 0 {
			if curBase == -1 {
				curBase, curLen = i, 1
			} else {
				curLen++
			}
			continue
		}
		if curBase != -1 {
			if bestBase == -1 || curLen > bestLen {
				bestBase, bestLen = curBase, curLen
			}
			curBase = -1
		}
	}
	if curBase != -1 && (bestBase == -1 || curLen > bestLen) {
		bestBase, bestLen = curBase, curLen
	}
	if bestBase != -1 && bestLen < 2 {
		bestBase = -1
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if bestBase != -1 && i >= bestBase && i < bestBase+bestLen {
			if i == bestBase {
				sb.WriteByte(':')
			}
			continue
		}
		if i != 0 {
			sb.WriteByte(':')
		}
		if i == 6 && bestBase == 0 && (bestLen == 6 || bestLen == 5 && w[5] == 0xFFFF) {
			fmt.Fprintf(&sb, "%d.%d.%d.%d", b[12], b[13], b[14], b[15])
			return sb.String()
		}
		sb.WriteString(strconv.FormatUint(uint64(w[i]), 16))
	}
	if bestBase != -1 && bestBase+bestLen == 8 {
		sb.WriteByte(':')
	}
	return sb.String()
}
