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
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// errno values the C tool exits with.
const (
	SaEIO       = 5
	SaEINVAL    = 22
	SaENONET    = 64
	SaETIMEDOUT = 110
)

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

func (a *saFlowLabelAlias) String() string { return "" }

func (a *saFlowLabelAlias) Type() string { return "string" }

var _ pflag.Value = (*saFlowLabelAlias)(nil)
