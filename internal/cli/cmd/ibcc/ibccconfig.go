package ibcc

// ibccconfig: set a congestion control attribute (IBA annex A10) of a
// port, as infiniband-diags 44's ibccconfig: the same Set MADs, and as
// the C tool nothing on stdout when it succeeds.
//
// "ibccconfig [-c cckey] <op> <lid|guid> <values>"; the operations (case
// insensitive, with aliases) and their values:
//   - CongestionKeyInfo (CK) <cckey> <cckeyprotectbit> <cckeyleaseperiod>
//     <cckeyviolations>
//   - SwitchCongestionSetting (SS) <controlmap> <victimmask> <creditmask>
//     <threshold> <packetsize> <csthreshold> <csreturndelay> <markingrate>
//     (the masks hex, up to 256 bits; csreturndelay shift:multiplier)
//   - SwitchPortCongestionSetting (SP) <portnum> <valid> <control_type>
//     <threshold> <packet_size> <cong_parm_marking_rate>: after NodeInfo
//     (the target must be a switch with that port), a Get of the port's
//     block, the port's element changed, a Set of the block
//   - CACongestionSetting (CS) <port_control> <control_map> <ccti_timer>
//     <ccti_increase> <trigger_threshold> <ccti_min>: the entry values for
//     every SL in control_map
//   - CongestionControlTable (CT) <cctilimit> <index> <cctentry>...: the
//     entries (shift:multiplier) of block <index>
//
// The operation is the permission to write (query.Set, logged at -v:
// "write: Set CongestionKeyInfo (modifier 0x0) at Lid 2, asked by
// ibccconfig CK", then what the reply has of what was changed, on
// stderr). Every value is checked before the port is opened:
// a malformed one sends nothing.
//
// Deliberate differences, for a tool whose mistakes break a fabric:
// values must fit their fields (C truncates 0x1f to a 4-bit 0xf, and a
// 33-bit number to 32 bits), negative numbers and empty values are errors
// (C wraps and reads 0), -c must be a number. SwitchPortCongestionSetting
// uses blocks of 32 ports for both its Get and its Set (IBA A10.4.3.7, as
// OpenSM): the C tool reads block port/32 but writes block port/48, which
// for ports 32 and up overwrites another block; the two agree below 32.
//
// JSON (--json): {"target", "attribute", "modifier", "sent" (the Set's
// attribute, mad's encoding), "reply" (the attribute as the reply has
// it)}.

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

var ccConfigOps = []ccOp{
	{"CongestionKeyInfo", "CK", false, "<cckey> <cckeyprotectbit> <cckeyleaseperiod> <cckeyviolations>"},
	{"SwitchCongestionSetting", "SS", false, "<controlmap> <victimmask> <creditmask> <threshold> <packetsize> <csthreshold> <csreturndelay> <markingrate>"},
	{"SwitchPortCongestionSetting", "SP", true, "<valid> <control_type> <threshold> <packet_size> <cong_parm_marking_rate>"},
	{"CACongestionSetting", "CS", false, "<port_control> <control_map> <ccti_timer> <ccti_increase> <trigger_threshold> <ccti_min>"},
	{"CongestionControlTable", "CT", false, "<cctilimit> <index> <cctentry> <cctentry> ..."},
}

// NewConfigCmd builds the ibccconfig command.
func NewConfigCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibccOptions{}
	cmd := cmdutil.ToolCommand("ibccconfig [-c key] <op> <lid|guid> <values>...", "Set a congestion control attribute of a port")
	cmd.Long = "ibccconfig sets a congestion control attribute of a port (IBA annex A10).\n\n" +
		"WARNING -- You should understand what you are doing before using this tool.  Misuse of this\n" +
		"tool could result in a broken fabric.\n\n" + ccOpsUsage(ccConfigOps, "<portnum>")
	cmd.Example = `  ibccconfig SwitchCongestionSetting 2 0x1F 0x1FFFFFFFFF 0x0 0xF 8 0 0:0 1	# Configure Switch Congestion Settings
  ibccconfig CACongestionSetting 1 0 0x3 150 1 0 0		# Configure CA Congestion Settings to SL 0 and SL 1
  ibccconfig CACongestionSetting 1 0 0x4 200 1 0 0		# Configure CA Congestion Settings to SL 2
  ibccconfig CongestionControlTable 1 63 0 0:0 0:1 ...	# Configure first block of Congestion Control Table
  ibccconfig CongestionControlTable 1 127 0 0:64 0:65 ...	# Configure second block of Congestion Control Table`
	cmd.Flags().StringVarP(&opts.ccKey, "cckey", "c", "", "CC key")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 {
			return cmdutil.UsageErrorf("expected <op> <lid|guid> <values>")
		}
		res, err := runIbccconfig(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "ibccconfig", res, err)
	}
	return cmd
}

// ibccconfigResult prints nothing, as the C tool; its JSON says what was
// written.
type ibccconfigResult struct {
	Target    jsonv.Target `json:"target"`
	Attribute string       `json:"attribute"`
	Modifier  uint32       `json:"modifier"`
	Sent      mad.Struct   `json:"sent"`
	Reply     mad.Struct   `json:"reply"`
}

func (r *ibccconfigResult) WriteText(io.Writer) error { return nil }

// ccWrite is a parsed operation: the attribute to set and its modifier;
// SwitchPortCongestionSetting edits one element of the block it reads.
type ccWrite struct {
	set     mad.Struct
	mod     uint32
	port    int // SwitchPortCongestionSetting: the port
	entries int // CongestionControlTable: the entries given
	elem    mad.SwitchPortCongestionSettingElement
	what    string // the C tool's words for the Set ("ca congestion setting")
}

func runIbccconfig(env *cmdutil.Env, opts *ibccOptions, args []string) (cmdutil.Result, error) {
	op := matchCCOp(ccConfigOps, args[0])
	if op == nil {
		return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("operation '%s' not supported", args[0]), Code: cmdutil.ExitUsage}
	}
	w, err := parseCCWrite(op.name, args[2:])
	if err != nil {
		f := &cmdutil.Failure{CMsg: fmt.Sprintf("operation %s: %s", args[0], err), Code: cmdutil.ExitUsage}
		var pe *ccParseError
		if errors.As(err, &pe) && pe.value != "" {
			f.CMsg = fmt.Sprintf("operation %s: %s", args[0], pe.msg)
			f.What, f.Err = fmt.Sprintf("operation %s: %s", args[0], pe.value), errors.New(pe.msg)
		}
		return nil, f
	}
	s, target, err := openCC(env, opts, "ibccconfig", args[0], args[1])
	if err != nil {
		return nil, err
	}
	defer s.close()
	permit := &query.Write{By: "ibccconfig " + args[0]}
	if op.name == "SwitchPortCongestionSetting" {
		if err := s.editPortBlock(w); err != nil {
			return nil, err
		}
	}
	reply := w.set.Desc().New()
	if err := s.c.SetClass(s.ctx, permit, mad.ClassCongest, s.gmp, w.mod, w.set, reply); err != nil {
		return nil, s.fail(w.what+" config failed", err)
	}
	sent := w.set
	if raw, ok := sent.(*query.Raw); ok {
		sent = raw.Struct
	}
	if opts.Verbose > 0 {
		fmt.Fprintf(env.IO.Err, "ibccconfig: %s: %s (modifier %d) set; the reply has:\n%s", s.gmp, op.name, w.mod, ccChanged(w, reply))
	}
	return &ibccconfigResult{Target: target, Attribute: op.name, Modifier: w.mod, Sent: sent, Reply: reply}, nil
}

// ccChanged is the part of a Set's reply the operation changed, in
// libibmad's dotted form: the port's element, the SLs of the control map,
// the entries given, or the whole attribute.
func ccChanged(w *ccWrite, reply mad.Struct) string {
	var b strings.Builder
	switch r := reply.(type) {
	case *mad.SwitchPortCongestionSetting:
		b.WriteString(mad.DottedLine("Port", fmt.Sprint(w.port)) + "\n")
		b.WriteString(mad.Dotted(&r.Element[w.port%spcsConfigBlock], nil))
	case *mad.CACongestionSetting:
		b.WriteString(dottedFields(r, "PortControl", "ControlMap"))
		for sl := range r.Entry {
			if w.set.(*mad.CACongestionSetting).ControlMap&(1<<sl) != 0 {
				b.WriteString(mad.DottedLine("SL", fmt.Sprint(sl)) + "\n" + mad.Dotted(&r.Entry[sl], nil))
			}
		}
	case *mad.CongestionControlTable:
		b.WriteString(dottedFields(r, "CCTILimit"))
		for i := 0; i < w.entries; i++ {
			b.WriteString(mad.DottedLine("Entry", fmt.Sprint(int(w.mod)*64+i)) + "\n" + mad.Dotted(&r.Entry[i], nil))
		}
	default:
		b.WriteString(mad.Dotted(reply, nil))
	}
	return b.String()
}

// spcsConfigBlock is the number of ports of a SwitchPortCongestionSetting
// block ibccconfig reads and writes (IBA A10.4.3.7).
const spcsConfigBlock = 32

// editPortBlock reads the port's block and puts the new element in it.
func (s *ccSession) editPortBlock(w *ccWrite) error {
	numPorts, err := s.switchPorts("config")
	if err != nil {
		return err
	}
	if w.port > numPorts {
		return s.fail("invalid port number specified", nil)
	}
	raw := &query.Raw{Struct: &mad.SwitchPortCongestionSetting{}}
	if err := s.get(w.mod, raw); err != nil {
		return s.fail("switch port congestion setting query failed", err)
	}
	raw.Struct.(*mad.SwitchPortCongestionSetting).Element[w.port%spcsConfigBlock] = w.elem
	w.set = raw
	return nil
}

// ccParseError is a bad value: the C tool's words (msg) and which value
// it was, for ibtool's message.
type ccParseError struct {
	msg   string
	value string // `threshold "0x1f"`
}

func (e *ccParseError) Error() string {
	if e.value == "" {
		return e.msg
	}
	return e.value + ": " + e.msg
}

// badValue wraps a parse error with the value it was about.
func badValue(name, arg string, err error) error {
	return &ccParseError{msg: err.Error(), value: fmt.Sprintf("%s %q", name, arg)}
}

// ccValue is one value of an operation: its name and field width.
type ccValue struct {
	name string
	bits int
}

// parseCCValues reads values as the C tool's parseint (strtoul, base 0,
// the whole argument), each within its field.
func parseCCValues(args []string, fields ...ccValue) ([]uint64, error) {
	out := make([]uint64, len(fields))
	for i, f := range fields {
		v, err := parseCCNumber(args[i], f.bits)
		if err != nil {
			return nil, badValue(f.name, args[i], err)
		}
		out[i] = v
	}
	return out, nil
}

// parseCCNumber is strtoull(s, &end, 0) of a whole argument: 0x hex, 0
// octal or decimal digits only, then checked against a field of bits.
func parseCCNumber(s string, bits int) (uint64, error) {
	digits, base := s, 10
	switch {
	case len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		digits, base = s[2:], 16
	case len(s) > 1 && s[0] == '0':
		digits, base = s[1:], 8
	}
	if digits == "" || strings.ContainsAny(digits, "+-_") {
		return 0, errors.New("invalid integer input")
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, errors.New("value out of range")
		}
		return 0, errors.New("invalid integer input")
	}
	if bits < 64 && v >= 1<<bits {
		return 0, fmt.Errorf("value out of range (%d bits)", bits)
	}
	return v, nil
}

// parseHex256 reads a mask of up to 256 bits as hex (parse256): the
// number right-aligned in 32 bytes.
func parseHex256(s string) ([32]byte, error) {
	var b [32]byte
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(digits) > 64 {
		return b, errors.New("hex code too long")
	}
	if digits == "" {
		return b, errors.New("invalid hex digit read")
	}
	for i := 0; i < len(digits); i++ {
		d := ctext.HexDigit(digits[len(digits)-1-i])
		if d > 15 {
			return b, errors.New("invalid hex digit read")
		}
		b[31-i/2] |= byte(d) << (4 * (i % 2))
	}
	return b, nil
}

// parseCCT reads "shift:multiplier" (parsecct), each within its field.
func parseCCT(s string) (shift, mult uint64, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, errors.New("ccts are formatted shift:multiplier")
	}
	if shift, err = parseCCNumber(a, 2); err != nil {
		return 0, 0, err
	}
	if mult, err = parseCCNumber(b, 14); err != nil {
		return 0, 0, err
	}
	return shift, mult, nil
}

// parseCCWrite checks an operation's values and builds its Set.
func parseCCWrite(op string, args []string) (*ccWrite, error) {
	nargs := map[string]int{"CongestionKeyInfo": 4, "SwitchCongestionSetting": 8, "SwitchPortCongestionSetting": 6, "CACongestionSetting": 6}
	if n, ok := nargs[op]; ok && len(args) != n {
		short := strings.TrimSuffix(op, "Setting") // the C tool's "SwitchPortCongestion"
		if op != "SwitchPortCongestionSetting" {
			short = op
		}
		return nil, &ccParseError{msg: "invalid number of parameters for " + short}
	}
	switch op {
	case "CongestionKeyInfo":
		return parseCKWrite(args)
	case "SwitchCongestionSetting":
		return parseSSWrite(args)
	case "SwitchPortCongestionSetting":
		return parseSPWrite(args)
	case "CACongestionSetting":
		return parseCSWrite(args)
	}
	return parseCTWrite(args)
}

func parseCKWrite(args []string) (*ccWrite, error) {
	key, err := parseCCValues(args[:1], ccValue{"cc_key", 64})
	if err != nil {
		return nil, err
	}
	// The C tool's own checks, with its words.
	checks := []struct {
		name, msg string
		bits      int
	}{{"cc_keyprotectbit", "invalid cc_keyprotectbit value", 1}, {"cc_keyleaseperiod", "invalid cc_keyleaseperiod value", 16},
		{"cc_keyviolations", "invalid cc_keyviolations value", 16}}
	v := make([]uint64, 3)
	for i, c := range checks {
		if v[i], err = parseCCNumber(args[i+1], 64); err != nil {
			return nil, badValue(c.name, args[i+1], err)
		}
		if v[i] >= 1<<c.bits {
			return nil, &ccParseError{msg: c.msg}
		}
	}
	return &ccWrite{what: "congestion key info", set: &mad.CongestionKeyInfo{CCKey: key[0], CCKeyProtectBit: uint8(v[0]),
		CCKeyLeasePeriod: uint16(v[1]), CCKeyViolations: uint16(v[2])}}, nil
}

func parseSSWrite(args []string) (*ccWrite, error) {
	cm, err := parseCCValues(args[:1], ccValue{"controlmap", 32})
	if err != nil {
		return nil, err
	}
	victim, err := parseHex256(args[1])
	if err != nil {
		return nil, badValue("victimmask", args[1], err)
	}
	credit, err := parseHex256(args[2])
	if err != nil {
		return nil, badValue("creditmask", args[2], err)
	}
	v, err := parseCCValues(args[3:6], ccValue{"threshold", 4}, ccValue{"packetsize", 8}, ccValue{"csthreshold", 4})
	if err != nil {
		return nil, err
	}
	shift, mult, err := parseCCT(args[6])
	if err != nil {
		return nil, badValue("csreturndelay", args[6], err)
	}
	rate, err := parseCCValues(args[7:8], ccValue{"markingrate", 16})
	if err != nil {
		return nil, err
	}
	return &ccWrite{what: "switch congestion setting", set: &mad.SwitchCongestionSetting{ControlMap: uint32(cm[0]),
		VictimMask: victim, CreditMask: credit, Threshold: uint8(v[0]), PacketSize: uint8(v[1]), CSThreshold: uint8(v[2]),
		CSReturnDelay: uint16(shift<<14 | mult), MarkingRate: uint16(rate[0])}}, nil
}

func parseSPWrite(args []string) (*ccWrite, error) {
	v, err := parseCCValues(args, ccValue{"portnum", 8}, ccValue{"valid", 1}, ccValue{"control_type", 1},
		ccValue{"threshold", 4}, ccValue{"packet_size", 8}, ccValue{"cong_parm_marking_rate", 16})
	if err != nil {
		return nil, err
	}
	return &ccWrite{what: "switch port congestion setting", port: int(v[0]), mod: uint32(v[0] / spcsConfigBlock),
		elem: mad.SwitchPortCongestionSettingElement{Valid: uint8(v[1]), ControlType: uint8(v[2]), Threshold: uint8(v[3]),
			PacketSize: uint8(v[4]), MarkingRate: uint16(v[5])}}, nil
}

func parseCSWrite(args []string) (*ccWrite, error) {
	v, err := parseCCValues(args, ccValue{"port_control", 16}, ccValue{"control_map", 16}, ccValue{"ccti_timer", 16},
		ccValue{"ccti_increase", 8}, ccValue{"trigger_threshold", 8}, ccValue{"ccti_min", 8})
	if err != nil {
		return nil, err
	}
	cas := &mad.CACongestionSetting{PortControl: uint16(v[0]), ControlMap: uint16(v[1])}
	for sl := range cas.Entry {
		if v[1]&(1<<sl) != 0 {
			cas.Entry[sl] = mad.CACongestionEntry{CCTITimer: uint16(v[2]), CCTIIncrease: uint8(v[3]),
				TriggerThreshold: uint8(v[4]), CCTIMin: uint8(v[5])}
		}
	}
	return &ccWrite{what: "ca congestion setting", set: cas}, nil
}

func parseCTWrite(args []string) (*ccWrite, error) {
	if len(args) < 2 || len(args) > 66 {
		return nil, &ccParseError{msg: "invalid number of parameters for CongestionControlTable"}
	}
	v, err := parseCCValues(args[:2], ccValue{"cctilimit", 16}, ccValue{"index", 32})
	if err != nil {
		return nil, err
	}
	limit, index, n := v[0], v[1], uint64(len(args)-2)
	if limit != 0 && limit+1 != index*64+n {
		return nil, &ccParseError{msg: "invalid number of cct entries input given ccti_limit and index"}
	}
	cct := &mad.CongestionControlTable{CCTILimit: uint16(limit)}
	for i, a := range args[2:] {
		shift, mult, err := parseCCT(a)
		if err != nil {
			return nil, badValue("cctentry", a, err)
		}
		cct.Entry[i] = mad.CCTEntry{Shift: uint8(shift), Multiplier: uint16(mult)}
	}
	return &ccWrite{what: "congestion control table", set: cct, mod: uint32(index), entries: len(args) - 2}, nil
}
