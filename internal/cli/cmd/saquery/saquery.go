package saquery

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
// Each record is decoded once, with its generated type (internal/mad);
// the text prints it through the record type's label table (saDump: the C
// tool's labels over the generated fields) and the JSON is the generated
// encoding of the same value.
//
// JSON (--json, saqueryResult): {"query" (the record type's name, or
// "IsSM", "NodeDescriptions"), "method" ("GetTable", "Get"),
// "attribute_id", "component_mask", "component_mask_fields" (the
// components it selects), "records", "is_sm_disabled" (-s: the second
// table), "class_port_info" (-c, CPI)}. A record is its type's generated
// JSON (mad.JSON): the spec's snake_case field names, nested structures as
// objects, GUIDs "0x%016x", GIDs in RFC 5952 form, enums with a "_text"
// and masks with a "_names" member, secret fields (ServiceKey, M_Key)
// null unless -K; NodeRecords of -N/-D/-L/-l/-G/-O/-U add "name" (after
// the node name map), -m MCMemberRecords "node_description". The JSON's
// ProxyJoin is the IBA's bit; the text's is the C tool's (saCProxyJoin).

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
)

// errno values the C tool exits with.
const (
	SaEIO       = 5
	SaEINVAL    = 22
	SaENONET    = 64
	SaETIMEDOUT = 110
)

// saStrerror is glibc's strerror text of those errno values.
func saStrerror(code int) string {
	switch code {
	case SaEIO:
		return "Input/output error"
	case SaEINVAL:
		return "Invalid argument"
	case SaENONET:
		return "Machine is not on the network"
	case SaETIMEDOUT:
		return "Connection timed out"
	}
	return fmt.Sprintf("Unknown error %d", code)
}

// saFail is a failure the way the C tool reports it (not through IBEXIT):
// a message on stderr, as is, and an errno value as the exit code.
func saFail(code int, format string, args ...any) *cmdutil.Failure {
	return &cmdutil.Failure{CStderr: fmt.Sprintf(format, args...), Code: code}
}

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
	cmdutil.Common
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
	dump        *saDump  // how its records print
	ibtoolOnly  bool
	// The query: run, or else (lidQuery) the whole table, or the records
	// the "lid/x/y" argument selects by the fields in lid.
	run func(q *saQuery, args []string) error
	lid []saLIDField
}

// saqueryTypes are the record types, built on first use: the table
// refers to the queries' methods, which refer to it (so it cannot be a
// package-level literal), and an init function would build it at every
// start of the program, whatever command runs.
func saqueryTypes() []*saqueryType {
	saqueryTypesOnce.Do(func() { saqueryTypeList = newSaqueryTypes() })
	return saqueryTypeList
}

var (
	saqueryTypesOnce sync.Once
	saqueryTypeList  []*saqueryType
)

func newSaqueryTypes() []*saqueryType {
	return []*saqueryType{
		{name: "ClassPortInfo", alias: "CPI", attr: mad.AttrClassPortInfo, run: (*saQuery).classPortInfo},
		{name: "NodeRecord", alias: "NR", attr: mad.AttrNodeRecord, usage: "[lid]", dump: &saNodeRecordDump,
			lid: []saLIDField{{"LID", 16, 16}}},
		{name: "PortInfoRecord", alias: "PIR", attr: mad.AttrPortInfoRecord, usage: "[[lid]/[port]/[options]]", dump: &saPortInfoRecordDump,
			lid: []saLIDField{{"EndPortLID", 16, 16}, {"PortNum", 8, 8}, {"Options", 8, 8}}},
		{name: "SL2VLTableRecord", alias: "SL2VL", attr: mad.AttrSLtoVLMappingTableRecord, usage: "[[lid]/[in_port]/[out_port]]", dump: &saSL2VLDump,
			lid: []saLIDField{{"LID", 16, 16}, {"InputPortNum", 8, 8}, {"OutputPortNum", 8, 8}}, extraNames: []string{"SLtoVLMappingTableRecord"}},
		{name: "PKeyTableRecord", alias: "PKTR", attr: mad.AttrPKeyTableRecord, usage: "[[lid]/[port]/[block]]", dump: &saPKeyDump,
			lid: []saLIDField{{"LID", 16, 16}, {"PortNum", 8, 8}, {"BlockNum", 16, 16}}, extraNames: []string{"P_KeyTableRecord"}},
		{name: "VLArbitrationTableRecord", alias: "VLAR", attr: mad.AttrVLArbitrationTableRecord, usage: "[[lid]/[port]/[block]]", dump: &saVLArbDump,
			lid: []saLIDField{{"LID", 16, 16}, {"OutputPortNum", 8, 8}, {"BlockNum", 8, 8}}},
		{name: "InformInfoRecord", alias: "IIR", attr: mad.AttrInformInfoRecord, usage: "[subscriber_gid]", dump: &saInformInfoDump,
			run: (*saQuery).informInfoRecords},
		{name: "LinkRecord", alias: "LR", attr: mad.AttrLinkRecord, usage: "[[from_lid]/[from_port]] [[to_lid]/[to_port]]", dump: &saLinkDump,
			run: (*saQuery).linkRecords},
		{name: "ServiceRecord", alias: "SR", attr: mad.AttrServiceRecord, dump: newSaServiceDump()},
		{name: "PathRecord", alias: "PR", attr: mad.AttrPathRecord, dump: &saPathDump, run: (*saQuery).pathRecords},
		{name: "MCMemberRecord", alias: "MCMR", attr: mad.AttrMCMemberRecord, dump: &saMCMemberRecordDump, run: (*saQuery).mcMemberRecords},
		{name: "LFTRecord", alias: "LFTR", attr: mad.AttrLinearForwardingTableRecord, usage: "[[lid]/[block]]", dump: &saLFTDump,
			lid: []saLIDField{{"LID", 16, 16}, {"BlockNum", 16, 16}}, extraNames: []string{"LinearForwardingTableRecord"}},
		// The argument is "mlid/position/block": position before block.
		{name: "MFTRecord", alias: "MFTR", attr: mad.AttrMulticastForwardingTableRecord, usage: "[[mlid]/[position]/[block]]", dump: &saMFTDump,
			lid: []saLIDField{{"LID", 16, 16}, {"Position", 8, 4}, {"BlockNum", 16, 9}}, extraNames: []string{"MulticastForwardingTableRecord"}},
		{name: "GUIDInfoRecord", alias: "GIR", attr: mad.AttrGUIDInfoRecord, usage: "[[lid]/[block]]", dump: newSaGUIDInfoDump(),
			lid: []saLIDField{{"LID", 16, 16}, {"BlockNum", 8, 8}}},
		{name: "SwitchInfoRecord", alias: "SWIR", attr: mad.AttrSwitchInfoRecord, usage: "[lid]", dump: &saSwitchInfoDump,
			lid: []saLIDField{{"LID", 16, 16}}, extraNames: []string{"SwitchInfo", "SWI"}},
		{name: "SMInfoRecord", alias: "SMIR", attr: mad.AttrSMInfoRecord, usage: "[lid]", dump: &saSMInfoDump,
			lid: []saLIDField{{"LID", 16, 16}}, extraNames: []string{"SMInfo"}},
		{name: "RFTRecord", alias: "RFTR", attr: mad.AttrRandomForwardingTableRecord, usage: "[[lid]/[block]]", dump: &saRFTDump,
			lid: []saLIDField{{"LID", 16, 16}, {"BlockNum", 16, 16}}, extraNames: []string{"RandomForwardingTableRecord"}, ibtoolOnly: true},
		{name: "ServiceAssociationRecord", alias: "SAR", attr: mad.AttrServiceAssociationRecord, dump: &saServiceAssociationDump,
			ibtoolOnly: true},
	}
}

// findSaqueryType matches a record type's name or alias in any case, as
// find_query does (and ibtool's extra names).
func findSaqueryType(name string) *saqueryType {
	for _, t := range saqueryTypes() {
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
	for _, t := range saqueryTypes() {
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
	for _, t := range saqueryTypes() {
		fmt.Fprintf(&b, "  %s (%s) %s", t.name, t.alias, t.usage)
		if t.ibtoolOnly {
			b.WriteString(" (ibtool only)")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n  Queries node records by default.")
	return b.String()
}

// NewCmd builds the saquery command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &saqueryOptions{flags: map[string]*saOrdered{}}
	cmd := cmdutil.ToolCommand(saqueryUse, "Query the subnet administrator (SA) for records")
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
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DGLsy")
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
}

// saMember is one MEMBER=VALUE argument.
type saMember struct{ path, value string }

// saQuery is one saquery run.
type saQuery struct {
	env     *cmdutil.Env
	opts    *saqueryOptions
	ctx     context.Context
	eng     *rpc.Engine
	sa      *sa.Client
	names   *nodename.Map
	p       saParams
	members []saMember

	printMode     saNodePrint
	requestedName string
	hasName       bool
	requestedLID  uint16
	requestedGUID uint64

	res *saqueryResult
}

// saMemberRE matches MEMBER=VALUE arguments: a field path, then '='.
var saMemberRE = cmdutil.LazyRegexp{Expr: `^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]|\.[0-9]+)*=`}

func runSaquery(env *cmdutil.Env, opts *saqueryOptions, args []string) error {
	q := &saQuery{env: env, opts: opts, ctx: context.Background(),
		res: &saqueryResult{Records: []saRecord{}, MaskFields: []string{}}}
	err := q.run(args)
	return cmdutil.Finish(env, &opts.Common, "saquery", q.res, err)
}

func (q *saQuery) run(args []string) error {
	opts := q.opts
	// MEMBER=VALUE arguments are ibtool's; the rest are the C tool's.
	var pos []string
	for _, a := range args {
		if saMemberRE.Get().MatchString(a) {
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
			v, _ := ctext.Strtoul(pos[0])
			q.requestedLID = uint16(v)
			q.hasName = true
		case saPrintNameOfGUID:
			q.requestedGUID, _ = ctext.Strtoul(pos[0])
			q.hasName = true
		default:
			q.requestedName, q.hasName = pos[0], true
		}
	}
	switch q.printMode {
	case saPrintLIDOnly, saPrintUniqueLIDOnly, saPrintGUIDOnly:
		if !q.hasName {
			return cmdutil.UsageErrorf("name not specified")
		}
	case saPrintNameOfLID:
		if !q.hasName {
			return cmdutil.UsageErrorf("lid not specified")
		}
		if q.requestedLID == 0 { // a LID cannot be 0 (IBA 4.1.3)
			return cmdutil.UsageErrorf("lid invalid")
		}
	case saPrintNameOfGUID:
		if !q.hasName {
			return cmdutil.UsageErrorf("guid not specified")
		}
	}
	if len(q.members) > 0 && (command == saCmdClassPortInfo || command == saCmdQuery && qt.attr == mad.AttrClassPortInfo) {
		return saFail(SaEINVAL, "ClassPortInfo has no components to match (MEMBER=VALUE)\n")
	}

	if _, err := opts.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		// IBEXIT during option parsing, as the other tools.
		return &cmdutil.Failure{Fn: "process_opt", CMsg: err.Error()}
	}
	smkey, err := q.smKey()
	if err != nil {
		return err
	}
	eng, err := cmdutil.OpenEngine(q.env, &opts.Common, cmdutil.EngineConfig{Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond, RetryCount: -1})
	if err != nil {
		return err
	}
	defer eng.Close()
	q.eng = eng
	var smLID uint16
	if opts.SMPort != "" {
		v, ok := ctext.Strtoul(opts.SMPort)
		if !ok || v == 0 || v > 0xFFFF {
			return cmdutil.UsageErrorf("--sm_port: invalid LID %q", opts.SMPort)
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
		return q.printNodeRecords()
	case saCmdClassPortInfo:
		return q.classPortInfo(nil)
	case saCmdIsSM:
		return q.printIsSM()
	case saCmdMCGroups:
		return q.printMCGroups()
	case saCmdMCMembers:
		return q.printMCMembers()
	}
	if qt.run != nil {
		return qt.run(q, pos)
	}
	return q.lidQuery(qt, pos)
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
		v, _ := ctext.Strtoul(o.val(name))
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
				return cmdutil.UsageErrorf("--%s: %v", g.name, err)
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
			v, _ := ctext.Strtoul(s)
			k.set(v)
		}
	}
	if o.set("src-to-dst") {
		if !strings.Contains(o.val("src-to-dst"), ":") {
			return cmdutil.UsageErrorf("--src-to-dst takes <src:dst>")
		}
		if o.flags["src-to-dst"].at > o.flags["numb_path"].at {
			p.numbPath = 0x7f
		}
	}
	if o.set("sgid-to-dgid") {
		s, d, ok := strings.Cut(o.val("sgid-to-dgid"), "-")
		if !ok {
			return cmdutil.UsageErrorf("--sgid-to-dgid takes <sgid-dgid>")
		}
		sgid, err := saParseGID(s)
		if err != nil {
			return cmdutil.UsageErrorf("--sgid-to-dgid: %v", err)
		}
		dgid, err := saParseGID(d)
		if err != nil {
			return cmdutil.UsageErrorf("--sgid-to-dgid: %v", err)
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
		return "", cmdutil.UsageErrorf("cannot get %s", strings.TrimSuffix(prompt, ": "))
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
		v, _ := ctext.Strtoul(s)
		return v, nil
	}
	if q.opts.SAKey != "" {
		v, _ := ctext.Strtoul(q.opts.SAKey)
		return v, nil
	}
	return 0, nil
}

// --- talking to the SA ---

// saFailure is get_any_records' handling of a failed query: the message
// it prints and the status it returns.
func saFailure(err error) *cmdutil.Failure {
	var te *rpc.TimeoutError
	code := SaEIO
	if errors.As(err, &te) {
		code = SaETIMEDOUT
	}
	return saFail(code, "Query SA failed: %s\n", saStrerror(code))
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
		return nil, saFail(SaEIO, "%s", saStatusText(st))
	}
	n := reply.Length
	if n <= 0 || n > len(reply.MAD) {
		n = len(reply.MAD)
	}
	if n < sa.DataOffset {
		return nil, saFail(SaEIO, "Query SA failed: reply of %d bytes is too short\n", n)
	}
	return reply.MAD[:n], nil
}

// getTable is get_any_records: a GetTable, its records split and decoded
// with the generated type of attribute attr: the one decode that both the
// text and the JSON print.
func (q *saQuery) getTable(attr uint16, mod uint32, data []byte, mask uint64) ([]saRecord, error) {
	d := mad.LookupAttr(mad.ClassSubnAdm, attr)
	reply, err := q.query(mad.MethodGetTable, attr, mod, data, mask)
	if err != nil {
		return nil, err
	}
	raws, err := sa.SplitTable(reply, d.Size)
	if err != nil {
		return nil, saFail(SaEIO, "Query SA failed: %v\n", err)
	}
	recs := make([]saRecord, len(raws))
	for i, raw := range raws {
		r := &recs[i]
		r.Struct, r.showKeys = d.New(), q.opts.ShowKeys
		if err := r.Unmarshal(raw); err != nil {
			return nil, saFail(SaEIO, "Query SA failed: %v\n", err)
		}
		switch rec := r.Struct.(type) {
		case *mad.NodeRecord:
			r.name = q.names.Name(uint64(rec.NodeInfo.NodeGUID), string(rec.NodeDescription.NodeString[:]))
		case *mad.MCMemberRecord:
			r.cProxyJoin = raw[49] & 1 // see saCProxyJoin
		}
	}
	return recs, nil
}

// mainTable is the command's own GetTable: it applies MEMBER=VALUE to the
// record, reports the request with -v and fills the JSON header.
func (q *saQuery) mainTable(name string, rec mad.Struct, mask uint64, mod uint32, patch func([]byte)) ([]saRecord, error) {
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
	return q.getTable(d.AttrID, mod, data, mask)
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
			return saFail(SaEINVAL, "Invalid %s=%s for %s: %v\n", m.path, m.value, rec.Desc().Name, err)
		}
		bits, err := mad.CompMask(rec.Desc(), m.path)
		if err != nil {
			return saFail(SaEINVAL, "Invalid %s=%s for %s: %v\n", m.path, m.value, rec.Desc().Name, err)
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
		var ex *cmdutil.Failure
		if errors.As(err, &ex) {
			ex.CStderr += "Failed to query SA:ClassPortInfo\n"
		}
		return err
	}
	// A short reply reads as zeros past its end.
	data := make([]byte, mad.ClassPortInfoSize)
	copy(data, reply[sa.DataOffset:])
	q.res.cpi = &mad.ClassPortInfo{}
	return q.res.cpi.Unmarshal(data)
}

// --- argument parsing, the C way ---

// getLID is get_lid: a node description (when the argument starts with a
// letter; looked up in the SA's NodeRecords) or a LID.
func (q *saQuery) getLID(name string) (uint16, error) {
	if name != "" && saIsAlpha(name[0]) {
		lid, err := q.lidFromName(name)
		if err != nil {
			code, msg := SaENONET, ""
			var ex *cmdutil.Failure
			if errors.As(err, &ex) {
				code, msg = ex.Code, ex.CStderr
			}
			return 0, saFail(code, "%sFailed to find lid for \"%s\": %s\n", msg, name, saStrerror(code))
		}
		return lid, nil
	}
	v, ok := saStrtol(name)
	if !ok || v <= 0 || v > 0xFFFF {
		return 0, saFail(SaEINVAL, "Invalid lid specified: \"%s\"\n", name)
	}
	return uint16(v), nil
}

var saNoSuchNode = errors.New("no such node")

func (q *saQuery) lidFromName(name string) (uint16, error) {
	recs, err := q.getTable(mad.AttrNodeRecord, 0, nil, 0)
	if err != nil {
		return 0, err
	}
	for _, r := range recs {
		if nr := r.Struct.(*mad.NodeRecord); saStrnEqual(name, string(nr.NodeDescription.NodeString[:]), 64) {
			return nr.LID, nil
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
	if v, ok := ctext.Strtoul(p1); ok {
		port1 = int64(int32(uint32(v)))
	}
	if more2 {
		if v, ok := ctext.Strtoul(p2); ok {
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

// saLIDField is a field a "lid/x/y" argument sets: its path, the C
// variable's width (for the "not given" test) and the field's width.
type saLIDField struct {
	path        string
	bits, width uint
}

// lidQuery is the common form of the "[lid]" and "lid/x/y" queries (and
// get_and_dump_all_records, with no fields): qt.lid names the record's LID
// and port-like fields.
func (q *saQuery) lidQuery(qt *saqueryType, args []string) error {
	rec := mad.LookupAttr(mad.ClassSubnAdm, qt.attr).New()
	b := &saRecBuilder{rec: rec}
	if len(args) > 0 && len(qt.lid) > 0 {
		lid, p1, p2, err := q.parseLIDAndPorts(args[0])
		if err != nil {
			return err
		}
		b.setIf(qt.lid[0].path, int64(lid), 16, 0, 16)
		vals := []int64{p1, p2}
		for i, f := range qt.lid[1:] {
			b.setIf(f.path, vals[i], f.bits, -1, f.width)
		}
	}
	return q.records(qt.name, rec, b.mask(), nil)
}

// records is the command's own GetTable, whose records are the result.
func (q *saQuery) records(name string, rec mad.Struct, mask uint64, patch func([]byte)) error {
	recs, err := q.mainTable(name, rec, mask, 0, patch)
	q.res.Records = append(q.res.Records, recs...)
	return err
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
	return q.records("LinkRecord", rec, b.mask(), nil)
}

func (q *saQuery) informInfoRecords(args []string) error {
	rec := &mad.InformInfoRecord{}
	b := &saRecBuilder{rec: rec}
	if len(args) > 0 {
		g, err := saParseGID(args[0])
		if err != nil {
			return saFail(SaEINVAL, "Invalid SubscriberGID specified: \"%s\"\n", args[0])
		}
		// The C tool sets the mask even for the all-zero GID.
		rec.SubscriberGID = g
		b.names = append(b.names, "SubscriberGID")
	}
	return q.records("InformInfoRecord", rec, b.mask(), nil)
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
	return q.records("PathRecord", rec, b.mask(), nil)
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

// mcMemberRecords builds the MCMemberRecord of the MCMR query from the
// options. The C tool's ProxyJoin is a one-bit C bitfield, the low bit of
// byte 49 on x86 (OpenSM reads it there too); the patch puts it there.
func (q *saQuery) mcMemberRecords([]string) error {
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
	return q.records("MCMemberRecord", rec, b.mask(), patch)
}

func (q *saQuery) classPortInfo([]string) error {
	q.res.Query, q.res.Method, q.res.AttributeID = "ClassPortInfo", "Get", mad.AttrClassPortInfo
	q.res.ClassPortInfo = q.res.cpi
	return nil
}

// --- the other commands ---

// printNodeRecords is print_node_records (-N, -D, -L, -l, -G, -O, -U).
func (q *saQuery) printNodeRecords() error {
	recs, err := q.mainTable("NodeRecord", &mad.NodeRecord{}, 0, 0, nil)
	if err != nil {
		return err
	}
	q.res.line = saNodeLine(q.printMode)
	if q.printMode == saPrintAllDesc {
		q.res.Query, q.res.header = "NodeDescriptions", "   LID \"name\"\n================\n"
	}
	for _, r := range recs {
		nr := r.Struct.(*mad.NodeRecord)
		desc := string(nr.NodeDescription.NodeString[:])
		var match bool
		switch q.printMode {
		case saPrintAllDesc:
			match = nr.NodeInfo.NodeType == 1 // a CA
		case saPrintNameOfLID:
			match = q.requestedLID == nr.LID
		case saPrintNameOfGUID:
			match = q.requestedGUID == uint64(nr.NodeInfo.PortGUID)
		default:
			match = !q.hasName || saStrnEqual(q.requestedName, desc, 64) || saStrnEqual(q.requestedName, r.name, 64)
		}
		if match {
			r.nameKey = "name"
			q.res.Records = append(q.res.Records, r)
			if q.printMode == saPrintUniqueLIDOnly {
				break // the C tool exits after the first
			}
		}
	}
	return nil
}

// saNodeLine is print_node_record's line of each form but the dump (nil
// for the dump).
func saNodeLine(p saNodePrint) func(r *saRecord) string {
	switch p {
	case saPrintAllDesc:
		return func(r *saRecord) string {
			return fmt.Sprintf("%6d  \"%s\"\n", r.Struct.(*mad.NodeRecord).LID, r.name)
		}
	case saPrintLIDOnly, saPrintUniqueLIDOnly:
		return saLIDLine
	case saPrintGUIDOnly:
		return func(r *saRecord) string { return r.Struct.(*mad.NodeRecord).NodeInfo.PortGUID.String() + "\n" }
	case saPrintNameOfLID, saPrintNameOfGUID:
		return saNameLine
	}
	return nil
}

func saLIDLine(r *saRecord) string  { return fmt.Sprintf("%d\n", r.Struct.(*mad.NodeRecord).LID) }
func saNameLine(r *saRecord) string { return r.name + "\n" }

// printIsSM is print_issm_records (-s): the PortInfoRecords whose
// CapabilityMask has IsSM, then those with IsSMdisabled.
func (q *saQuery) printIsSM() error {
	const capIsSM, capSMDisabled = 0x2, 0x400
	for _, capBit := range []uint32{capIsSM, capSMDisabled} {
		rec := &mad.PortInfoRecord{}
		rec.PortInfo.CapabilityMask = capBit
		recs, err := q.mainTable("IsSM", rec, mad.MustCompMask(rec.Desc(), "PortInfo.CapabilityMask"), 1<<31, nil)
		if err != nil {
			return err
		}
		if q.res.as == nil {
			q.res.as, q.res.header, q.res.Records = &saShortPortInfoDump, "IsSM ports\n", recs
		} else {
			q.res.IsSMDisabled = &recs
		}
	}
	return nil
}

// printMCGroups is -g: every MCMemberRecord, in the group form.
func (q *saQuery) printMCGroups() error {
	q.res.as = &saMCGroupDump
	return q.records("MCMemberRecord", &mad.MCMemberRecord{}, 0, nil)
}

// printMCMembers is print_multicast_member_records (-m): every
// MCMemberRecord with the name of the node whose port GUID its PortGID
// has (from the NodeRecords); with an MLID argument only the PortGIDs of
// that group.
func (q *saQuery) printMCMembers() error {
	recs, err := q.mainTable("MCMemberRecord", &mad.MCMemberRecord{}, 0, 0, nil)
	if err != nil {
		return err
	}
	nodes, err := q.getTable(mad.AttrNodeRecord, 0, nil, 0)
	if err != nil {
		return err
	}
	q.res.as = &saMCMemberDump
	mlid, _ := saStrtol(q.requestedName)
	if q.hasName {
		q.res.line = func(r *saRecord) string {
			return saLine(24, "PortGid", "%s (%s)", saNtop6(r.Struct.(*mad.MCMemberRecord).PortGID[:]), r.name)
		}
	}
	for _, r := range recs {
		mc := r.Struct.(*mad.MCMemberRecord)
		if q.hasName && int64(mc.MLID) != mlid {
			continue
		}
		r.name, r.nameKey = "<unknown>", "node_description"
		for _, n := range nodes {
			if n.Struct.(*mad.NodeRecord).NodeInfo.PortGUID == mc.PortGID.GUID() {
				r.name = n.name
				break
			}
		}
		q.res.Records = append(q.res.Records, r)
	}
	return nil
}

// --- the result ---

// saqueryResult is what saquery found: the SA's records decoded with
// their generated types. Its JSON is the value (the schema is at the top
// of this file); writeText prints what the C tool prints, from the same
// decoded records.
type saqueryResult struct {
	Query         string             `json:"query"`
	Method        string             `json:"method,omitempty"`
	AttributeID   uint16             `json:"attribute_id,omitempty"`
	ComponentMask uint64             `json:"component_mask"`
	MaskFields    []string           `json:"component_mask_fields"`
	Records       []saRecord         `json:"records"`
	IsSMDisabled  *[]saRecord        `json:"is_sm_disabled,omitempty"`
	ClassPortInfo *mad.ClassPortInfo `json:"class_port_info,omitempty"`

	// How the text prints: a header, then each record as line or as
	// the dump as gives, else as its type's dump.
	header string
	line   func(r *saRecord) string
	as     *saDump
	cpi    *mad.ClassPortInfo // the SA's, when asked for (SwitchInfoRecord's MulticastFDBTop)
}

// saRecord is one record of the answer.
type saRecord struct {
	mad.Struct        // decoded with its generated type
	showKeys   bool   // -K: the JSON shows the secret fields
	name       string // NodeRecord: the node's name (node name map); -m: the member's node
	nameKey    string // the JSON key of name ("": name is not in the JSON)
	cProxyJoin uint8  // MCMemberRecord: the bit the C tool prints as ProxyJoin (see saCProxyJoin)
}

// MarshalJSON is the record's generated JSON, with name under nameKey.
func (r saRecord) MarshalJSON() ([]byte, error) {
	b := mad.JSON(r.Struct, r.showKeys)
	if r.nameKey == "" || len(b) < 2 {
		return b, nil
	}
	v, _ := json.Marshal(r.name)
	sep := ","
	if len(b) == 2 {
		sep = ""
	}
	return fmt.Appendf(b[:len(b)-1:len(b)-1], "%s%q:%s}", sep, r.nameKey, v), nil
}

func (res *saqueryResult) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if res.ClassPortInfo != nil {
		res.dump(bw, &saClassPortInfoDump, &saRecord{Struct: res.ClassPortInfo})
	}
	bw.WriteString(res.header)
	res.writeRecords(bw, res.Records)
	if res.IsSMDisabled != nil {
		bw.WriteString("\nIsSMdisabled ports\n")
		res.writeRecords(bw, *res.IsSMDisabled)
	}
	return bw.Flush()
}

func (res *saqueryResult) writeRecords(w *bufio.Writer, recs []saRecord) {
	for i := range recs {
		switch r := &recs[i]; {
		case res.line != nil:
			w.WriteString(res.line(r))
		case res.as != nil:
			res.dump(w, res.as, r)
		default:
			res.dump(w, saqueryTypeByAttr(r.Desc().AttrID).dump, r)
		}
	}
}

// --- the record dumps: saquery.c's dump_* functions as label tables ---

// saField is one line of a record's dump: the C tool's label, the field
// path in the record's generated structure and the printf format of its
// value. A path "A|B|C" names fields that share a byte or word, which the
// C tool prints as that one number (saPacked).
type saField struct {
	label, path, format string
	// value, when set, gives a value that is not one field of the
	// record (instead of path).
	value func(r *saRecord) any
	// when, when set, says whether the line prints at all.
	when   func(res *saqueryResult, r *saRecord) bool
	secret bool   // "<not displayed>" unless -K
	text   string // a line printed as is (a heading inside the dump)
}

// saDump is one record type's dump: its first lines, the width its
// labels are dotted to, its fields, and the table some print after them.
type saDump struct {
	title  string
	col    int
	fields []saField
	table  func(w *bufio.Writer, r *saRecord)
}

func (res *saqueryResult) dump(w *bufio.Writer, d *saDump, r *saRecord) {
	w.WriteString(d.title)
	for _, f := range d.fields {
		switch {
		case f.text != "":
			w.WriteString(f.text)
		case f.when != nil && !f.when(res, r):
		case f.secret && !r.showKeys:
			w.WriteString(saLine(d.col, f.label, "%s", "<not displayed>"))
		case f.value != nil:
			w.WriteString(saLine(d.col, f.label, f.format, f.value(r)))
		default:
			w.WriteString(saLine(d.col, f.label, f.format, saValue(r.Struct, f.path)))
		}
	}
	if d.table != nil {
		d.table(w, r)
	}
}

// saLine is one "\t\tlabel.....value" line, the label and dots col wide.
func saLine(col int, label, format string, args ...any) string {
	dots := ""
	if len(label) < col {
		dots = strings.Repeat(".", col-len(label))
	}
	return "\t\t" + label + dots + fmt.Sprintf(format, args...) + "\n"
}

// saValue is field path of s as the dumps print it: GIDs as inet_ntop
// text, strings up to their NUL, other bytes as bytes, numbers as uint64.
func saValue(s mad.Struct, path string) any {
	if strings.Contains(path, "|") {
		return saPacked(s, strings.Split(path, "|"))
	}
	f, _ := saFieldAt(s.Desc(), path)
	if f.IsNumber() {
		v, _ := mad.Get(s, path)
		return v
	}
	b, _ := mad.GetBytes(s, path)
	switch f.Hint {
	case mad.HintGID:
		return saNtop6(b)
	case mad.HintString:
		return saCString(b)
	}
	return b
}

// saPacked is fields that share bytes read as the C tool reads them, one
// number from the first field's start to the byte that ends the last;
// reserved bits in between read 0, as a sender sets reserved bits.
func saPacked(s mad.Struct, paths []string) uint64 {
	last, lastOff := saFieldAt(s.Desc(), paths[len(paths)-1])
	end := (lastOff + last.Width + 7) &^ 7
	var v uint64
	for _, p := range paths {
		f, off := saFieldAt(s.Desc(), p)
		x, _ := mad.Get(s, p)
		v |= x << (end - off - f.Width)
	}
	return v
}

// saFieldAt finds a field path ("NodeInfo.NodeGUID", "GUIDInfo.GUID[3]")
// in d: the field, and its bit offset in d. The tables' paths are fixed,
// so a bad one is a bug the tests catch.
func saFieldAt(d *mad.StructDesc, path string) (*mad.FieldDesc, int) {
	var f *mad.FieldDesc
	off := 0
	for _, part := range strings.Split(path, ".") {
		name, idx, _ := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		if f != nil {
			d = f.Struct
		}
		if f = d.Field(name); f == nil {
			panic("saquery: no field " + path + " in " + d.Name)
		}
		off += f.Offset
		if i, err := strconv.Atoi(idx); err == nil {
			off += i * f.Stride
		}
	}
	return f, off
}

// saEach is the lines of an array field, one per element: label and path
// take the element's index (the label's counted from first).
func saEach(label, path string, n, first int, format string) []saField {
	var fs []saField
	for i := 0; i < n; i++ {
		fs = append(fs, saField{label: fmt.Sprintf(label, i+first), path: fmt.Sprintf(path, i), format: format})
	}
	return fs
}

func saHeading(s string) saField { return saField{text: s} }

// saZero is a reserved field the C tool prints: the decoded record has no
// reserved bits, and a sender sets them to 0.
func saZero(*saRecord) any { return 0 }

var saNodeRecordDump = saDump{title: "NodeRecord dump:\n", col: 24, fields: []saField{
	{label: "lid", path: "LID", format: "%d"},
	{label: "reserved", value: saZero, format: "0x%X"}, // the two bytes after the LID
	{label: "base_version", path: "NodeInfo.BaseVersion", format: "0x%X"},
	{label: "class_version", path: "NodeInfo.ClassVersion", format: "0x%X"},
	{label: "node_type", format: "%s", value: func(r *saRecord) any { return saNodeType(r.Struct.(*mad.NodeRecord).NodeInfo.NodeType) }},
	{label: "num_ports", path: "NodeInfo.NumPorts", format: "%d"},
	{label: "sys_guid", path: "NodeInfo.SystemImageGUID", format: "0x%016x"},
	{label: "node_guid", path: "NodeInfo.NodeGUID", format: "0x%016x"},
	{label: "port_guid", path: "NodeInfo.PortGUID", format: "0x%016x"},
	{label: "partition_cap", path: "NodeInfo.PartitionCap", format: "0x%X"},
	{label: "device_id", path: "NodeInfo.DeviceID", format: "0x%X"},
	{label: "revision", path: "NodeInfo.Revision", format: "0x%X"},
	{label: "port_num", path: "NodeInfo.LocalPortNum", format: "%d"},
	{label: "vendor_id", path: "NodeInfo.VendorID", format: "0x%X"},
	{label: "NodeDescription", format: "%s", value: func(r *saRecord) any { return r.name }}, // the node name map's name
}}

// saNodeType is ib_get_node_type_str.
func saNodeType(t mad.NodeType) string {
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

var saPathDump = saDump{title: "PathRecord dump:\n", col: 24, fields: []saField{
	{label: "service_id", path: "ServiceID", format: "0x%016x"},
	{label: "dgid", path: "DGID", format: "%s"},
	{label: "sgid", path: "SGID", format: "%s"},
	{label: "dlid", path: "DLID", format: "%d"},
	{label: "slid", path: "SLID", format: "%d"},
	{label: "hop_flow_raw", path: "RawTraffic|FlowLabel|HopLimit", format: "0x%X"},
	{label: "tclass", path: "TClass", format: "0x%X"},
	{label: "num_path_revers", path: "Reversible|NumbPath", format: "0x%X"},
	{label: "pkey", path: "PKey", format: "0x%X"},
	{label: "qos_class", path: "QoSClass", format: "0x%X"},
	{label: "sl", path: "SL", format: "0x%X"},
	{label: "mtu", path: "MTUSelector|MTU", format: "0x%X"},
	{label: "rate", path: "RateSelector|Rate", format: "0x%X"},
	{label: "pkt_life", path: "PacketLifeTimeSelector|PacketLifeTime", format: "0x%X"},
	{label: "preference", path: "Preference", format: "0x%X"},
	{label: "resv2", value: saZero, format: "0x%012X"}, // the six reserved bytes at the end
}}

var saClassPortInfoDump = saDump{title: "SA ClassPortInfo:\n", col: 25, fields: []saField{
	{label: "Base version", path: "BaseVersion", format: "%d"},
	{label: "Class version", path: "ClassVersion", format: "%d"},
	{label: "Capability mask", path: "CapabilityMask", format: "0x%04X"},
	{label: "Capability mask 2", path: "CapabilityMask2", format: "0x%08X"},
	{label: "Response time value", path: "RespTimeValue", format: "0x%02X"},
	{label: "Redirect GID", path: "RedirectGID", format: "%s"},
	{label: "Redirect TC/SL/FL", path: "RedirectTC|RedirectSL|RedirectFL", format: "0x%08X"},
	{label: "Redirect LID", path: "RedirectLID", format: "%d"},
	{label: "Redirect PKey", path: "RedirectPKey", format: "0x%04X"},
	{label: "Redirect QP", path: "RedirectQP", format: "0x%08X"},
	{label: "Redirect QKey", path: "RedirectQKey", format: "0x%08X"},
	{label: "Trap GID", path: "TrapGID", format: "%s"},
	{label: "Trap TC/SL/FL", path: "TrapTC|TrapSL|TrapFL", format: "0x%08X"},
	{label: "Trap LID", path: "TrapLID", format: "%d"},
	{label: "Trap PKey", path: "TrapPKey", format: "0x%04X"},
	{label: "Trap HL/QP", path: "TrapHL|TrapQP", format: "0x%08X"},
	{label: "Trap QKey", path: "TrapQKey", format: "0x%08X"},
}}

// saShortPortInfoDump is the form -s prints.
var saShortPortInfoDump = saDump{title: "PortInfoRecord dump:\n", col: 24, fields: []saField{
	{label: "EndPortLid", path: "EndPortLID", format: "%d"},
	{label: "PortNum", path: "PortNum", format: "%d"},
	{label: "base_lid", path: "PortInfo.LID", format: "%d"},
	{label: "master_sm_base_lid", path: "PortInfo.MasterSMLID", format: "%d"},
	{label: "capability_mask", path: "PortInfo.CapabilityMask", format: "0x%X"},
}}

// saPortInfoRecordDump ends in libibmad's dotted PortInfo, two tabs
// before each line (dump_portinfo).
var saPortInfoRecordDump = saDump{title: "PortInfoRecord dump:\n\tRID\n", col: 24, fields: []saField{
	{label: "EndPortLid", path: "EndPortLID", format: "%d"},
	{label: "PortNum", path: "PortNum", format: "%d"},
	{label: "Options", path: "Options", format: "0x%x"},
	saHeading("\tPortInfo dump:\n"),
}, table: func(w *bufio.Writer, r *saRecord) {
	pi := &r.Struct.(*mad.PortInfoRecord).PortInfo
	for _, line := range strings.SplitAfter(mad.Dotted(pi, &mad.DottedOptions{ShowKeys: r.showKeys}), "\n") {
		if line != "" && !strings.HasPrefix(line, "\t") {
			w.WriteString("\t\t")
		}
		w.WriteString(line)
	}
}}

// saCProxyJoin is the MCMemberRecord's ProxyJoin as the C tool reads it:
// a one-bit C bitfield, the low bit of byte 49 on x86, where OpenSM puts
// it too (IBA 15.2.5.17 has it in the high bit: the decoded ProxyJoin).
func saCProxyJoin(r *saRecord) any { return r.cProxyJoin }

var saMCMemberRecordDump = saDump{title: "MCMember Record dump:\n", col: 24, fields: []saField{
	{label: "MGID", path: "MGID", format: "%s"},
	{label: "PortGid", path: "PortGID", format: "%s"},
	{label: "qkey", path: "QKey", format: "0x%x"},
	{label: "mlid", path: "MLID", format: "0x%x"},
	{label: "mtu", path: "MTUSelector|MTU", format: "0x%x"},
	{label: "TClass", path: "TClass", format: "0x%x"},
	{label: "pkey", path: "PKey", format: "0x%x"},
	{label: "rate", path: "RateSelector|Rate", format: "0x%x"},
	{label: "pkt_life", path: "PacketLifeTimeSelector|PacketLifeTime", format: "0x%x"},
	{label: "SL", path: "SL", format: "0x%x"},
	{label: "FlowLabel", path: "FlowLabel", format: "0x%x"},
	{label: "HopLimit", path: "HopLimit", format: "0x%x"},
	{label: "Scope", path: "Scope", format: "0x%x"},
	{label: "JoinState", path: "JoinState", format: "0x%x"},
	{label: "ProxyJoin", value: saCProxyJoin, format: "0x%x"},
}}

var saMCGroupDump = saDump{title: "MCMemberRecord group dump:\n", col: 24, fields: []saField{
	{label: "MGID", path: "MGID", format: "%s"},
	{label: "Mlid", path: "MLID", format: "0x%X"},
	{label: "Mtu", path: "MTUSelector|MTU", format: "0x%X"},
	{label: "pkey", path: "PKey", format: "0x%X"},
	{label: "Rate", path: "RateSelector|Rate", format: "0x%X"},
	{label: "SL", path: "SL", format: "0x%X"},
}}

var saMCMemberDump = saDump{title: "MCMemberRecord member dump:\n", col: 24, fields: []saField{
	{label: "MGID", path: "MGID", format: "%s"},
	{label: "Mlid", path: "MLID", format: "0x%X"},
	{label: "PortGid", path: "PortGID", format: "%s"},
	{label: "ScopeState", path: "Scope|JoinState", format: "0x%X"},
	{label: "ProxyJoin", value: saCProxyJoin, format: "0x%X"},
	{label: "NodeDescription", format: "%s", value: func(r *saRecord) any { return r.name }},
}}

// newSaServiceDump is the ServiceRecord's dump (made with the record
// types: its fields are computed).
func newSaServiceDump() *saDump {
	return &saDump{title: "ServiceRecord dump:\n", col: 24, fields: slices.Concat([]saField{
		{label: "ServiceID", path: "ServiceID", format: "0x%016x"},
		{label: "ServiceGID", path: "ServiceGID", format: "%s"},
		{label: "ServiceP_Key", path: "ServicePKey", format: "0x%X"},
		{label: "ServiceLease", path: "ServiceLease", format: "0x%X"},
		{label: "ServiceKey", path: "ServiceKey", format: "0x%x", secret: true},
		{label: "ServiceName", path: "ServiceName", format: "%s"},
	},
		saEach("ServiceData8.%d", "ServiceData8[%d]", 16, 1, "0x%X"),
		saEach("ServiceData16.%d", "ServiceData16[%d]", 8, 1, "0x%X"),
		saEach("ServiceData32.%d", "ServiceData32[%d]", 4, 1, "0x%X"),
		saEach("ServiceData64.%d", "ServiceData64[%d]", 2, 1, "0x%016x"),
	)}
}

// saServiceAssociationDump is ibtool's (the C tool has no such query), in
// the ServiceRecord's style.
var saServiceAssociationDump = saDump{title: "ServiceAssociationRecord dump:\n", col: 24, fields: []saField{
	{label: "ServiceKey", path: "ServiceKey", format: "0x%x", secret: true},
	{label: "ServiceName", path: "ServiceName", format: "%s"},
}}

var saSMInfoDump = saDump{title: "SMInfoRecord dump:\n\t\tRID\n", col: 22, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	saHeading("\t\tSMInfo dump:\n"),
	{label: "GUID", path: "SMInfo.GUID", format: "0x%016x"},
	{label: "SM_Key", path: "SMInfo.SMKey", format: "0x%016x"}, // shown without -K too, as in C
	{label: "ActCount", path: "SMInfo.ActCount", format: "%d"},
	{label: "Priority", path: "SMInfo.Priority", format: "%d"},
	{label: "SMState", path: "SMInfo.SMState", format: "%d"},
}}

var saSwitchInfoDump = saDump{title: "SwitchInfoRecord dump:\n\t\tRID\n", col: 40, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	saHeading("\t\tSwitchInfo dump:\n"),
	{label: "LinearFDBCap", path: "SwitchInfo.LinearFDBCap", format: "0x%X"},
	{label: "RandomFDBCap", path: "SwitchInfo.RandomFDBCap", format: "0x%X"},
	{label: "MulticastFDBCap", path: "SwitchInfo.MulticastFDBCap", format: "0x%X"},
	{label: "LinearFDBTop", path: "SwitchInfo.LinearFDBTop", format: "0x%X"},
	{label: "DefaultPort", path: "SwitchInfo.DefaultPort", format: "%d"},
	{label: "DefaultMulticastPrimaryPort", path: "SwitchInfo.DefaultMulticastPrimaryPort", format: "%d"},
	{label: "DefaultMulticastNotPrimaryPort", path: "SwitchInfo.DefaultMulticastNotPrimaryPort", format: "%d"},
	{label: "LifeTimeValue/PortStateChange/OpSL2VL", format: "0x%X",
		path: "SwitchInfo.LifeTimeValue|SwitchInfo.PortStateChange|SwitchInfo.OptimizedSLtoVLMapping"},
	{label: "LIDsPerPort", path: "SwitchInfo.LIDsPerPort", format: "0x%X"},
	{label: "PartitionEnforcementCap", path: "SwitchInfo.PartitionEnforcementCap", format: "0x%X"},
	{label: "flags", format: "0x%X", path: "SwitchInfo.InboundEnforcementCap|SwitchInfo.OutboundEnforcementCap|" +
		"SwitchInfo.FilterRawInboundCap|SwitchInfo.FilterRawOutboundCap|SwitchInfo.EnhancedPort0"},
	// Only if the SA's ClassPortInfo has IsMulticastTopSupported
	// (CapabilityMask2 bit 3).
	{label: "MulticastFDBTop", path: "SwitchInfo.MulticastFDBTop", format: "0x%X",
		when: func(res *saqueryResult, _ *saRecord) bool {
			return res.cpi != nil && res.cpi.CapabilityMask2&(1<<3) != 0
		}},
}}

func saGeneric(_ *saqueryResult, r *saRecord) bool {
	return r.Struct.(*mad.InformInfoRecord).InformInfo.IsGeneric != 0
}
func saVendor(res *saqueryResult, r *saRecord) bool { return !saGeneric(res, r) }

var saInformInfoDump = saDump{title: "InformInfoRecord dump:\n\t\tRID\n", col: 24, fields: []saField{
	{label: "SubscriberGID", path: "SubscriberGID", format: "%s"},
	{label: "SubscriberEnum", path: "Enum", format: "0x%X"},
	saHeading("\t\tInformInfo dump:\n"),
	{label: "gid", path: "InformInfo.GID", format: "%s"},
	{label: "lid_range_begin", path: "InformInfo.LIDRangeBegin", format: "%d"},
	{label: "lid_range_end", path: "InformInfo.LIDRangeEnd", format: "%d"},
	{label: "is_generic", path: "InformInfo.IsGeneric", format: "0x%X"},
	{label: "subscribe", path: "InformInfo.Subscribe", format: "0x%X"},
	{label: "trap_type", path: "InformInfo.Type", format: "0x%X"},
	{label: "trap_num", path: "InformInfo.TrapNumber", format: "%d", when: saGeneric},
	{label: "dev_id", path: "InformInfo.TrapNumber", format: "0x%X", when: saVendor},
	{label: "qpn", path: "InformInfo.QPN", format: "0x%06X", secret: true},
	{label: "resp_time_val", path: "InformInfo.RespTimeValue", format: "0x%X"},
	{label: "node_type", path: "InformInfo.ProducerType", format: "0x%06X", when: saGeneric},
	{label: "vendor_id", path: "InformInfo.ProducerType", format: "0x%06X", when: saVendor},
}}

var saLinkDump = saDump{title: "LinkRecord dump:\n", col: 27, fields: []saField{
	{label: "FromLID", path: "FromLID", format: "%d"},
	{label: "FromPort", path: "FromPort", format: "%d"},
	{label: "ToPort", path: "ToPort", format: "%d"},
	{label: "ToLID", path: "ToLID", format: "%d"},
}}

var saSL2VLDump = saDump{title: "SL2VLTableRecord dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "InPort", path: "InputPortNum", format: "%d"},
	{label: "OutPort", path: "OutputPortNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	w.WriteString("\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n\t\tVL:")
	for _, vl := range r.Struct.(*mad.SLtoVLMappingTableRecord).SLtoVLMappingTable.VL {
		fmt.Fprintf(w, "%2d|", vl)
	}
	w.WriteString("\n")
}}

var saVLArbDump = saDump{title: "VLArbTableRecord dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Port", path: "OutputPortNum", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	t := r.Struct.(*mad.VLArbitrationTableRecord).VLArbitrationTable.Entry
	for half := 0; half < len(t); half += 16 {
		w.WriteString("\t\tVL    :")
		for _, e := range t[half : half+16] {
			fmt.Fprintf(w, "%2d|", e.VL)
		}
		w.WriteString("\n\t\tWeight:")
		for _, e := range t[half : half+16] {
			fmt.Fprintf(w, "%2d|", e.Weight)
		}
		w.WriteString("\n")
	}
}}

var saPKeyDump = saDump{title: "PKeyTableRecord dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Port", path: "PortNum", format: "%d"},
	// The C tool prints block_num without byte swapping: it and OpenSM
	// keep it in host (x86) order, so the number reads little endian.
	{label: "Block", format: "%d", value: func(r *saRecord) any {
		return bits.ReverseBytes16(r.Struct.(*mad.PKeyTableRecord).BlockNum)
	}},
}, table: func(w *bufio.Writer, r *saRecord) {
	w.WriteString("\t\tPKey Table:\n")
	pkeys := r.Struct.(*mad.PKeyTableRecord).PKeyTable.PKey
	for row := 0; row < len(pkeys); row += 8 {
		w.WriteString("\t\t")
		for i, pk := range pkeys[row : row+8] {
			if i > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "0x%04x", pk)
		}
		w.WriteString("\n")
	}
	w.WriteString("\n")
}}

var saLFTDump = saDump{title: "LFT Record dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	rec := r.Struct.(*mad.LinearForwardingTableRecord)
	w.WriteString("\t\tLFT:\n\t\tLID\tPort Number\n")
	for i, port := range rec.LinearForwardingTable.Port {
		fmt.Fprintf(w, "\t\t%d\t%d\n", int(rec.BlockNum)*64+i, port)
	}
	w.WriteString("\n")
}}

// saRFTDump is ibtool's (the C tool has no RFTRecord query), in the LFT
// record's style: one line per valid entry.
var saRFTDump = saDump{title: "RFT Record dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	w.WriteString("\t\tRFT:\n\t\tLID\tLMC\tPort Number\n")
	for _, e := range r.Struct.(*mad.RandomForwardingTableRecord).RandomForwardingTable.Entry {
		if e.Valid != 0 {
			fmt.Fprintf(w, "\t\t%d\t%d\t%d\n", e.LID, e.LMC, e.Port)
		}
	}
	w.WriteString("\n")
}}

// newSaGUIDInfoDump is the GUIDInfoRecord's dump (made with the record
// types: its fields are computed).
func newSaGUIDInfoDump() *saDump {
	return &saDump{title: "GUIDInfo Record dump:\n", col: 27, fields: append([]saField{
		{label: "LID", path: "LID", format: "%d"},
		{label: "Block", path: "BlockNum", format: "%d"},
	}, saEach("GUID %d", "GUIDInfo.GUID[%d]", 8, 0, "0x%016x")...)}
}

var saMFTDump = saDump{title: "MFT Record dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Position", path: "Position", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	rec := r.Struct.(*mad.MulticastForwardingTableRecord)
	w.WriteString("\t\tMFT:\n\t\tMLID\tPort Mask\n")
	for i, mask := range rec.MulticastForwardingTable.PortMask {
		fmt.Fprintf(w, "\t\t0x%04x\t0x%04x\n", 0xC000+int(rec.BlockNum)*32+i, mask)
	}
	w.WriteString("\n")
}}

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
