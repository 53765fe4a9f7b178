package ibportstate

// ibportstate: query a port's state, speed and width, or change them
// (infiniband-diags 44's ibportstate), with the same SMPs in the same
// order and the same output.
//
// "ibportstate <dest> <portnum>" queries: NodeInfo, PortInfo (on a switch
// port 0's first, for the capability mask), MlnxExtPortInfo on the devices
// libibmad knows to have it, and on an Active switch port the peer port
// over a directed route one hop further (from a LID target that is a
// combined LID+DR route, which ibsim does not forward). Link width and
// speed mismatches with the peer are warned about on stderr as libibmad's
// IBWARN lines.
//
// Writes happen only with an operation: enable, disable, on, off, reset,
// down, arm, active (one of them), and speed, espeed, fdr10, width, vls,
// mtu, lid, smlid, lmc, mkey, mkeylease, mkeyprot with a value (any
// number of them). The SubnSet(PortInfo) carries the port's current
// PortInfo with the changes, as the C tool builds it: PortState and
// PhysState NOP unless the operation sets them, the enabled speeds and
// width always written (0, the default, is NOP), a LID or SM LID of 0 or
// 0xFFFF replaced by 0x1234 (an SMA refuses 0). fdr10 first sets
// MlnxExtPortInfo. Each Set prints the port as the reply has it ("After
// PortInfo set:"); -v logs it on stderr with the operations that asked.
//
// Safety (not in the C tool): disable, off, down and reset of the local
// port (the one ibtool reaches the fabric through) are refused unless
// --force is given; ibtool finds the local node with a 0-hop NodeInfo
// only when such an operation is asked for.
//
// Failures as sminfo's: the C tool's IBEXIT line on stdout in compat use
// ("ibportstate: iberror: failed: smp query portinfo failed"), one line on
// stderr as "ibtool ibportstate", where bad operations and values are
// usage errors (exit 2).
//
// Deliberate differences: port numbers and values must be numbers (C's
// strtol/strtoull read "x" as 0, i.e. port 0 or a NOP); a non-numeric mkey
// value is an error (C prompts for it with getpass).
//
// JSON (--json): {"target" (docs/json.md's target; text portid2str), "port", "node_type" ("switch" or
// "ca"), "operation" ("query", "enable", ...), "changes" (the fields set,
// by their port_info keys: {"link_speed_enabled": 1, ...}), "port_info" (mad's JSON; m_key null unless -K),
// "mlnx_ext_port_info", "port_info_after_set",
// "mlnx_ext_port_info_after_set", "note" ("Port is already in enable
// state"), "peer" {"target", "port", "node_type", "port_info",
// "mlnx_ext_port_info"}, "warnings" (the IBWARN texts)}.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type ibportstateOptions struct {
	cmdutil.Common
	force bool
}

const ibportstateOps = "enable, disable, on, off, reset, speed, espeed, fdr10,\n" +
	"\twidth, query, down, arm, active, vls, mtu, lid, smlid, lmc,\n" +
	"\tmkey, mkeylease, mkeyprot"

// NewCmd builds the ibportstate command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibportstateOptions{}
	cmd := cmdutil.ToolCommand("ibportstate [options] <dest dr_path|lid|guid> <portnum> [<op> [<value>]]...", "Query or change a port's state, speed and width")
	cmd.Long = "ibportstate shows a port's state, LIDs, width and speed (and its peer's, for an Active\n" +
		"switch port), or changes them with an operation.\n\nSupported ops: " + ibportstateOps + "\n\n" +
		"Disabling, resetting or downing the local port needs --force."
	cmd.Example = `  ibportstate -C qib0 -P 1 3 1 disable   # by CA name, CA Port Number, lid, physical port number
  ibportstate -C qib0 -P 1 3 1 enable    # by CA name, CA Port Number, lid, physical port number
  ibportstate -D 0 1                     # (query) by direct route
  ibportstate 3 1 reset                  # by lid
  ibportstate 3 1 speed 1                # by lid
  ibportstate 3 1 width 1                # by lid
  ibportstate -D 0 1 lid 0x1234 arm      # by direct route`
	cmd.Flags().BoolVar(&opts.force, "force", false, "allow disable, off, down and reset of the local port")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 {
			return cmdutil.UsageErrorf("expected <dest dr_path|lid|guid> <portnum> [<op>]")
		}
		res, err := runIbportstate(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "ibportstate", res, err)
	}
	return cmd
}

// portOp is one of ibportstate's operations (port_args in the C tool).
type portOp struct {
	Name     string
	HasValue bool
	check    func(v uint64) string // the C tool's complaint about a bad value, "" if fine
}

// outside is the C tool's complaint about a value not in lo..hi, "" if
// it is in range.
func outside(v, lo, hi uint64, what string) string {
	if v < lo || v > hi {
		return fmt.Sprintf("invalid %s %d", what, v)
	}
	return ""
}

// badLID is the C tool's complaint about a LID value that is no unicast
// LID, "" if it is one.
func badLID(v uint64, what string) string {
	if v == 0 || v >= 0xC000 {
		return fmt.Sprintf("invalid %s value 0x%x", what, v)
	}
	return ""
}

// PortOps are ibportstate's operations. Each check is a func literal (no
// closure built by a call), so the table is data the linker lays out.
var PortOps = []portOp{
	{"query", false, nil},
	{"enable", false, nil},
	{"reset", false, nil},
	{"disable", false, nil},
	{"speed", true, func(v uint64) string { return outside(v, 0, 15, "speed value") }},
	{"espeed", true, func(v uint64) string { return outside(v, 0, 31, "extended speed value") }},
	{"fdr10", true, func(v uint64) string { return outside(v, 0, 1, "fdr10 speed value") }},
	{"width", true, func(v uint64) string {
		if v > 31 && v != 255 {
			return fmt.Sprintf("invalid width value %d", v)
		}
		return ""
	}},
	{"down", false, nil},
	{"arm", false, nil},
	{"active", false, nil},
	{"vls", true, func(v uint64) string { return outside(v, 1, 5, "vls value") }},
	{"mtu", true, func(v uint64) string { return outside(v, 1, 5, "mtu value") }},
	{"lid", true, func(v uint64) string { return badLID(v, "lid") }},
	{"smlid", true, func(v uint64) string { return badLID(v, "smlid") }},
	{"lmc", true, func(v uint64) string { return outside(v, 0, 7, "lmc value") }},
	{"mkey", true, nil},
	{"mkeylease", true, func(v uint64) string { return outside(v, 0, 0xFFFF, "mkey lease time") }},
	{"mkeyprot", true, func(v uint64) string { return outside(v, 0, 3, "mkey protection bit setting") }},
	{"on", false, nil},
	{"off", false, nil},
}

// ibportstateResult is ibportstate's result: its JSON, and the ports as
// read for the text, which shows what the run got before any failure.
type ibportstateResult struct {
	Target          jsonv.Target     `json:"target"`
	Port            int              `json:"port"`
	NodeType        string           `json:"node_type"`
	Operation       string           `json:"operation"`
	Changes         map[string]any   `json:"changes,omitempty"`
	PortInfo        json.RawMessage  `json:"port_info"`
	MlnxExtPortInfo json.RawMessage  `json:"mlnx_ext_port_info,omitempty"`
	PortInfoAfter   json.RawMessage  `json:"port_info_after_set,omitempty"`
	MlnxAfter       json.RawMessage  `json:"mlnx_ext_port_info_after_set,omitempty"`
	Note            string           `json:"note,omitempty"`
	Peer            *ibportstatePeer `json:"peer,omitempty"`
	Warnings        []string         `json:"warnings,omitempty"`

	showKeys   bool
	header     string    // "Switch PortInfo:\n", once the node is known
	port       *portView // the port as read
	disabling  bool      // "Disable may be irreversible"
	mlnxAfter  *mad.MlnxExtPortInfo
	after      *portView // as the Set's reply has it
	peerHeader bool      // "Peer PortInfo:\n", once the peer is known
}

type ibportstatePeer struct {
	Target          jsonv.Target    `json:"target"`
	Port            int             `json:"port"`
	NodeType        string          `json:"node_type"`
	PortInfo        json.RawMessage `json:"port_info"`
	MlnxExtPortInfo json.RawMessage `json:"mlnx_ext_port_info,omitempty"`

	view *portView
}

// portView is a port as show_port_info prints it.
type portView struct {
	dest             query.Dest
	num              int
	pi               mad.PortInfo
	capMask          uint32 // the CapabilityMask that counts: port 0's on a switch
	espeed, isSwitch bool
	mepi             *mad.MlnxExtPortInfo // shown after it, on the devices that have it
}

func (r *ibportstateResult) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.header)
	r.show(&b, r.port)
	if r.Note != "" {
		b.WriteString(r.Note + "\n")
	}
	if r.disabling {
		b.WriteString("Disable may be irreversible\n")
	}
	if r.mlnxAfter != nil {
		b.WriteString("\nAfter MLNXExtendedPortInfo set:\n")
		showMlnx(&b, r.port.dest, r.port.num, r.mlnxAfter)
	}
	if r.after != nil {
		b.WriteString("\nAfter PortInfo set:\n")
		r.show(&b, r.after)
	}
	if r.peerHeader {
		b.WriteString("Peer PortInfo:\n")
	}
	if r.Peer != nil {
		r.show(&b, r.Peer.view)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// show is show_port_info: the states, LIDs, widths and speeds, and the
// M_Key fields where a port has them (CAs, switch port 0).
func (r *ibportstateResult) show(b *strings.Builder, v *portView) {
	if v == nil {
		return
	}
	fields := []string{"PortState", "PortPhysicalState", "LID", "MasterSMLID", "LMC",
		"LinkWidthSupported", "LinkWidthEnabled", "LinkWidthActive",
		"LinkSpeedSupported", "LinkSpeedEnabled", "LinkSpeedActive"}
	if v.espeed {
		fields = append(fields, "LinkSpeedExtSupported", "LinkSpeedExtEnabled", "LinkSpeedExtActive")
	}
	if !v.isSwitch || v.num == 0 {
		fields = append(fields, "MKey", "MKeyLeasePeriod", "MKeyProtectBits")
	}
	fmt.Fprintf(b, "# Port info: %s port %d\n", v.dest, v.num)
	for _, name := range fields {
		f := v.pi.Desc().Field(name)
		value := "<not displayed>"
		if !f.Key || r.showKeys {
			value, _ = mad.FormatIBMAD(&v.pi, name)
		}
		b.WriteString(mad.DottedLine(f.Label, value) + "\n")
	}
	if v.mepi != nil {
		showMlnx(b, v.dest, v.num, v.mepi)
	}
}

func showMlnx(b *strings.Builder, d query.Dest, num int, m *mad.MlnxExtPortInfo) {
	fmt.Fprintf(b, "# MLNX ext Port info: %s port %d\n%s", d, num, mad.Dotted(m, nil))
}

// portState is one ibportstate run.
type portState struct {
	env   *cmdutil.Env
	opts  *ibportstateOptions
	c     *query.Client
	ctx   context.Context
	write *query.Write // nil for a query
	res   ibportstateResult
}

func runIbportstate(env *cmdutil.Env, opts *ibportstateOptions, args []string) (cmdutil.Result, error) {
	pn, err := endport.ParseUint(args[1], 8)
	if err != nil {
		return nil, cmdutil.UsageErrorf("invalid port number %q: %v", args[1], err)
	}
	portnum := int(pn)
	s := &portState{env: env, opts: opts, ctx: context.Background()}
	// One attempt per SMP, as the C tool makes: libibmad waits for the
	// reply as long as the kernel waits for it (-t), so its receive times
	// out first and it never resends. A switch port's peer behind a
	// combined route that is not forwarded (ibsim drops them) then costs
	// one timeout, not three.
	if s.c, err = cmdutil.IBOpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout, RetryCount: -1}); err != nil {
		return nil, err
	}
	defer s.c.Engine().Close()
	d, err := cmdutil.IBResolve(s.ctx, s.c, &opts.Common, args[0])
	if err != nil {
		return nil, err
	}
	op, values, err := parsePortOps(args[2:])
	if err != nil {
		return nil, err
	}
	s.res.Target, s.res.Port, s.res.Operation, s.res.showKeys = cmdutil.DestTarget(d, d.String()), portnum, op, opts.ShowKeys
	if len(values) > 0 {
		s.res.Changes = PortChangesJSON(values)
	}
	if op != "query" || len(values) > 0 {
		// The operations on the command line are what allows the Sets.
		s.write = &query.Write{By: "ibportstate " + strings.Join(args[2:], " ")}
	}
	return &s.res, s.run(d, portnum, op, values)
}

// parsePortOps checks the operations as the C tool does, in order: at
// most one state operation ("query" if none), values for the others.
func parsePortOps(ops []string) (string, map[string]uint64, error) {
	op := ""
	values := map[string]uint64{}
	for i := 0; i < len(ops); i++ {
		var o *portOp
		for j := range PortOps {
			if PortOps[j].Name == ops[i] {
				o = &PortOps[j]
			}
		}
		if o == nil {
			return "", nil, &cmdutil.Failure{CMsg: "invalid operation: " + ops[i], Code: cmdutil.ExitUsage}
		}
		if !o.HasValue {
			if op != "" {
				return "", nil, &cmdutil.Failure{CMsg: o.Name + " only one of: query, enable, disable, reset, down, arm, active, can be specified", Code: cmdutil.ExitUsage}
			}
			op = o.Name
			continue
		}
		if i++; i >= len(ops) {
			return "", nil, &cmdutil.Failure{CMsg: o.Name + " requires an additional parameter", Code: cmdutil.ExitUsage}
		}
		v, err := endport.ParseUint(ops[i], 64)
		if err != nil {
			if o.Name == "mkey" {
				return "", nil, &cmdutil.Failure{CMsg: "Bad new M_Key\n", Err: err, Code: cmdutil.ExitUsage}
			}
			return "", nil, &cmdutil.Failure{CMsg: fmt.Sprintf("invalid %s value %s", o.Name, ops[i]), Err: err, Code: cmdutil.ExitUsage}
		}
		if o.check != nil {
			if msg := o.check(v); msg != "" {
				return "", nil, &cmdutil.Failure{CMsg: msg, Code: cmdutil.ExitUsage}
			}
		}
		values[o.Name] = v
	}
	if op == "" {
		op = "query"
	}
	return op, values, nil
}

// run does the SMPs of one ibportstate run, filling s.res.
func (s *portState) run(d query.Dest, portnum int, op string, values map[string]uint64) error {
	changed := len(values) > 0
	ni, err := s.nodeInfo(d)
	if err != nil {
		return err
	}
	isSwitch := ni.NodeType == mad.NodeTypeSwitch
	s.res.NodeType = ibNodeTypeName(isSwitch)
	_, mkey := values["mkey"]
	_, lease := values["mkeylease"]
	_, prot := values["mkeyprot"]
	if (mkey || lease || prot) && isSwitch && portnum != 0 {
		return &cmdutil.Failure{CMsg: "Can't set M_Key fields on switch port != 0", Code: cmdutil.ExitUsage}
	}
	if err := s.guardLocal(ni, isSwitch, portnum, op); err != nil {
		return err
	}
	s.res.header = "CA/RT PortInfo:\n"
	if isSwitch {
		s.res.header = "Switch PortInfo:\n"
	}
	if op != "query" || changed {
		s.res.header = "Initial " + s.res.header
	}
	v, raw, err := s.portInfo(d, portnum, isSwitch)
	if err != nil {
		return err
	}
	s.res.port, s.res.PortInfo = v, mad.JSON(&v.pi, s.opts.ShowKeys)
	// The C tool's data2: stays zero when the device has none.
	mepi := &query.Raw{Struct: &mad.MlnxExtPortInfo{}, Bytes: make([]byte, mad.SMPDataSize)}
	if s.mlnxEPI(ni) {
		if err := s.mlnxExtPortInfo(d, portnum, mepi); err != nil {
			return err
		}
		v.mepi = mepi.Struct.(*mad.MlnxExtPortInfo)
		s.res.MlnxExtPortInfo, _ = json.Marshal(v.mepi)
	}

	if op != "query" || changed {
		return s.set(d, portnum, op, values, v, raw, mepi)
	}
	if isSwitch && portnum != 0 && v.pi.PortState == mad.PortState(4) {
		return s.peer(d, v, mepi.Struct.(*mad.MlnxExtPortInfo))
	}
	return nil
}

// ibNodeTypeName is the JSON's node type: the C tool tells only switches
// from the rest ("CA/RT"), so a router is a "ca" here.
func ibNodeTypeName(isSwitch bool) string {
	if isSwitch {
		return string(jsonv.Switch)
	}
	return string(jsonv.CA)
}

// nodeInfo is get_node_info.
func (s *portState) nodeInfo(d query.Dest) (*mad.NodeInfo, error) {
	var ni mad.NodeInfo
	if err := s.c.Get(s.ctx, d, 0, nil, &ni); err != nil {
		return nil, cmdutil.SMPFailed("smp query nodeinfo failed", "get_node_info", d, err)
	}
	return &ni, nil
}

// portInfo is get_port_info: on a switch port 0's PortInfo first, whose
// capability mask says whether the extended speed fields are valid. raw
// keeps the bytes a Set sends back.
func (s *portState) portInfo(d query.Dest, portnum int, isSwitch bool) (*portView, *query.Raw, error) {
	var capPort mad.PortInfo
	if isSwitch {
		if err := s.c.Get(s.ctx, d, 0, nil, &capPort); err != nil {
			return nil, nil, cmdutil.SMPFailed("smp query port 0 portinfo failed", "get_port_info", d, err)
		}
	}
	v := &portView{dest: d, num: portnum, isSwitch: isSwitch}
	raw := &query.Raw{Struct: &v.pi}
	if err := s.c.Get(s.ctx, d, uint32(portnum), nil, raw); err != nil {
		return nil, nil, cmdutil.SMPFailed("smp query portinfo failed", "get_port_info", d, err)
	}
	if !isSwitch {
		capPort = v.pi
	}
	v.capMask = capPort.CapabilityMask
	v.espeed = v.capMask&uint32(mad.PortCapMaskExtendedSpeeds) != 0
	return v, raw, nil
}

// mlnxEPI is is_mlnx_ext_port_info_supported: the Mellanox devices whose
// SMA has MlnxExtPortInfo, unless ibdiag.conf says MLX_EPI=false.
func (s *portState) mlnxEPI(ni *mad.NodeInfo) bool {
	if !s.opts.MlxEPI {
		return false
	}
	dev, bull := ni.DeviceID, ni.VendorID == 0x119f
	in := func(lo, hi uint16) bool { return dev >= lo && dev <= hi }
	switch {
	case in(0xc738, 0xc73b), dev == 0xc839, dev == 0xcb20, dev == 0xcf08, dev == 0xcf09, dev == 0xd2f0:
		return true // switches
	case bull && (dev == 0x1b02 || dev == 0x1b50 || dev == 0x1ba0 || in(0x1bd0, 0x1bd5) || dev == 0x1bf0):
		return true
	case in(0x1003, 0x101b), dev == 0xa2d2:
		return true // CAs
	case bull && (dev == 0x1b33 || dev == 0x1b73 || dev == 0x1b40 || dev == 0x1b41 || dev == 0x1b60 || dev == 0x1b61 ||
		dev == 0x1b83 || dev == 0x1b93 || dev == 0x1b94 || dev == 0x1bb4 || dev == 0x1bb5 || in(0x1bc4, 0x1bc6)):
		return true
	}
	return false
}

func (s *portState) mlnxExtPortInfo(d query.Dest, portnum int, into mad.Struct) error {
	if err := s.c.Get(s.ctx, d, uint32(portnum), nil, into); err != nil {
		return cmdutil.SMPFailed("smp query ext portinfo failed", "get_mlnx_ext_port_info", d, err)
	}
	return nil
}

// set builds and sends the SubnSet(PortInfo) (and, for fdr10, the
// SubnSet(MlnxExtPortInfo) before it) from the port's current PortInfo.
func (s *portState) set(d query.Dest, portnum int, op string, values map[string]uint64, v *portView, raw, mepi *query.Raw) error {
	has := func(name string) bool { _, ok := values[name]; return ok }
	pi := v.pi
	physState := pi.PortPhysicalState
	// An SMA refuses LID 0: keep the Set valid unless asked for a LID.
	if !has("lid") && (pi.LID == 0 || pi.LID == 0xFFFF) {
		pi.LID = 0x1234
	}
	if !has("smlid") && (pi.MasterSMLID == 0 || pi.MasterSMLID == 0xFFFF) {
		pi.MasterSMLID = 0x1234
	}
	pi.PortState, pi.PortPhysicalState = 0, 0 // NOP
	switch op {
	case "on":
		if physState != mad.PhysPortState(3) {
			s.res.Note = "Port is already in enable state"
			return nil
		}
		pi.PortPhysicalState = 2 // Polling
	case "enable", "reset":
		pi.PortPhysicalState = 2
	case "off", "disable":
		s.res.disabling = true
		pi.PortPhysicalState = 3
	case "down":
		pi.PortState = 1
	case "arm":
		pi.PortState = 3
	case "active":
		pi.PortState = 4
	}
	// Always written; 0 (the default) means no change.
	pi.LinkSpeedEnabled = uint8(values["speed"])
	pi.LinkSpeedExtEnabled = uint8(values["espeed"])
	pi.LinkWidthEnabled = uint8(values["width"])
	if has("vls") {
		pi.OperationalVLs = mad.OperVLs(values["vls"])
	}
	if has("mtu") {
		pi.NeighborMTU = mad.MTU(values["mtu"])
	}
	if has("lid") {
		pi.LID = uint16(values["lid"])
	}
	if has("smlid") {
		pi.MasterSMLID = uint16(values["smlid"])
	}
	if has("lmc") {
		pi.LMC = uint8(values["lmc"])
	}
	if has("fdr10") {
		m := *mepi.Struct.(*mad.MlnxExtPortInfo) // a copy: the port as read is shown too
		m.StateChangeEnable = 1                  // FDR10
		m.LinkSpeedEnabled = uint8(values["fdr10"])
		var after mad.MlnxExtPortInfo
		if err := s.c.Set(s.ctx, s.write, d, uint32(portnum), &query.Raw{Struct: &m, Bytes: mepi.Bytes}, &after); err != nil {
			return cmdutil.SMPFailed("smp set MLNX ext portinfo failed", "set_mlnx_ext_port_info", d, err)
		}
		s.res.mlnxAfter = &after
		s.res.MlnxAfter, _ = json.Marshal(&after)
	}
	if has("mkey") {
		pi.MKey = values["mkey"]
	}
	if has("mkeylease") {
		pi.MKeyLeasePeriod = uint16(values["mkeylease"])
	}
	if has("mkeyprot") {
		pi.MKeyProtectBits = uint8(values["mkeyprot"])
	}
	mod := uint32(portnum)
	if v.espeed {
		mod |= 1 << 31
	}
	after := *v
	after.mepi = nil
	in := &query.Raw{Struct: &pi, Bytes: raw.Bytes} // keeps what the field table does not know
	if err := s.c.Set(s.ctx, s.write, d, mod, in, &after.pi); err != nil {
		return cmdutil.SMPFailed("smp set portinfo failed", "set_port_info", d, err)
	}
	s.res.after = &after
	s.res.PortInfoAfter = mad.JSON(&after.pi, s.opts.ShowKeys)
	return nil
}

// guardLocal refuses operations that take the local port's link down,
// unless --force: the local port is the one ibtool talks through (on a
// CA, port 0 means the port the SMP arrives on, which is that one too).
func (s *portState) guardLocal(ni *mad.NodeInfo, isSwitch bool, portnum int, op string) error {
	switch op {
	case "disable", "off", "down", "reset":
	default:
		return nil
	}
	if s.opts.force {
		return nil
	}
	var self mad.NodeInfo
	if err := s.c.Get(s.ctx, query.DR([]byte{0}), 0, nil, &self); err != nil {
		return &cmdutil.Failure{CMsg: "can't tell whether the port is the local one", Err: err, Stderr: true}
	}
	if self.NodeGUID != ni.NodeGUID || !(portnum == int(self.LocalPortNum) || portnum == 0 && !isSwitch) {
		return nil
	}
	return &cmdutil.Failure{
		CMsg: fmt.Sprintf("refusing to %s the local port (port %d of this node, which ibtool reaches the fabric through); use --force to do it anyway", op, self.LocalPortNum),
		Code: cmdutil.ExitUsage,
	}
}

// peer is the C tool's check of an Active switch port's link partner:
// the port one directed hop further, and warnings when the two ends run
// slower or narrower than both enable.
func (s *portState) peer(d query.Dest, v *portView, mepi *mad.MlnxExtPortInfo) error {
	portnum, pi := v.num, &v.pi
	var peer query.Dest
	if d.Kind == query.ByDR {
		path := append(append([]byte{}, d.DRPath...), byte(portnum))
		if len(path)-1 > mad.MaxDRHops {
			return &cmdutil.Failure{CMsg: "Too many hops"}
		}
		peer = query.DR(path)
	} else {
		local, err := s.c.Local()
		if err != nil {
			return &cmdutil.Failure{CMsg: "could not resolve self", Err: err, Stderr: true}
		}
		peer = query.Combined(d.LID, []byte{0, byte(portnum)}, local.LID)
	}
	pni, err := s.nodeInfo(peer)
	if err != nil {
		return err
	}
	peerSwitch := pni.NodeType == mad.NodeTypeSwitch
	s.res.peerHeader = true
	pv, _, err := s.portInfo(peer, int(pni.LocalPortNum), peerSwitch)
	if err != nil {
		return err
	}
	peerMepi := mepi // the C tool reads the peer's FDR10 bits from data2, still ours if the peer has none
	if s.mlnxEPI(pni) {
		pv.mepi = &mad.MlnxExtPortInfo{}
		if err := s.mlnxExtPortInfo(peer, pv.num, pv.mepi); err != nil {
			return err
		}
		peerMepi = pv.mepi
	}
	res := &ibportstatePeer{Target: cmdutil.DestTarget(peer, peer.String()), Port: pv.num, NodeType: ibNodeTypeName(peerSwitch), PortInfo: mad.JSON(&pv.pi, s.opts.ShowKeys), view: pv}
	if pv.mepi != nil {
		res.MlnxExtPortInfo, _ = json.Marshal(pv.mepi)
	}
	s.res.Peer = res

	// The best of what both ends enable (validate_width, validate_speed,
	// validate_extended_speed), or FDR10 where both enable it and the
	// link is not at it, as main() of ibportstate.c checks the peer.
	l := health.CompareLink(health.End{Info: pi, CapabilityMask: v.capMask, Mlnx: mepi},
		&health.End{Info: &pv.pi, CapabilityMask: pv.capMask, Mlnx: peerMepi}, health.Enabled)
	s.checkPeer("validate_width", "width", l.Width, map[uint8]string{8: "12x", 4: "8x", 2: "4x", 16: "2x", 1: "1x"})
	s.checkPeer("validate_speed", "speed", l.Speed, map[uint8]string{4: "10.0 Gbps", 2: "5.0 Gbps", 1: "2.5 Gbps"})
	if l.ExtSpeeds {
		s.checkPeer("validate_extended_speed", "extended speed", l.ExtSpeed,
			map[uint8]string{8: "106.25 Gbps", 4: "53.125 Gbps", 2: "25.78125 Gbps", 1: "14.0625 Gbps"})
	} else if l.FDR10.Below() {
		s.warn("main", fmt.Sprintf("Peer ports operating at active speed %d rather than FDR10", pi.LinkSpeedActive))
	}
	return nil
}

// checkPeer warns, in the words of ibportstate.c's validate_* functions,
// when the link runs below the best value both ends enable; texts names
// each value.
func (s *portState) checkPeer(fn, what string, a health.Axis, texts map[uint8]string) {
	if a.Below() {
		s.warn(fn, fmt.Sprintf("Peer ports operating at active %s %d rather than %d (%s)", what, a.Active, a.Best, texts[a.Best]))
	}
}

// warn is libibmad's IBWARN: a line on stderr.
func (s *portState) warn(fn, msg string) {
	s.res.Warnings = append(s.res.Warnings, msg)
	fmt.Fprintf(s.env.IO.Err, "ibwarn: [%d] %s: %s\n", os.Getpid(), fn, msg)
}

// portChangeKey is the key of an operation in ibportstate's JSON
// "changes": the PortInfo (or MlnxExtPortInfo) field it sets, as its JSON
// names it; false for an operation that sets none.
func portChangeKey(op string) (string, bool) {
	switch op {
	case "speed":
		return "link_speed_enabled", true
	case "espeed":
		return "link_speed_ext_enabled", true
	case "fdr10":
		return "mlnx_link_speed_enabled", true
	case "width":
		return "link_width_enabled", true
	case "vls":
		return "operational_vls", true
	case "mtu":
		return "neighbor_mtu", true
	case "lid":
		return "lid", true
	case "smlid":
		return "master_sm_lid", true
	case "lmc":
		return "lmc", true
	case "mkey":
		return "m_key", true
	case "mkeylease":
		return "m_key_lease_period", true
	case "mkeyprot":
		return "m_key_protect_bits", true
	}
	return "", false
}

// PortChangesJSON is ibportstate's values by their JSON keys; the M_Key is
// a "0x" string (64 bits do not fit a JSON reader's double).
func PortChangesJSON(values map[string]uint64) map[string]any {
	out := map[string]any{}
	for op, v := range values {
		key, ok := portChangeKey(op)
		if !ok {
			key = op
		}
		if op == "mkey" {
			out[key] = fmt.Sprintf("0x%016x", v)
		} else {
			out[key] = v
		}
	}
	return out
}
