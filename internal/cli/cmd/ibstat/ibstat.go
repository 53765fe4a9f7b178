package ibstat

// ibstat and ibstatus: the local CAs and ports, from the transport's CA
// description (sysfs for the kernel transport, the attachment point under
// ibsim).
//
// ibstat reproduces infiniband-diags 44's ibstat.c (which prints
// libibumad's umad_ca_t), ibstatus the /usr/sbin/ibstatus shell script
// (which prints the raw sysfs texts). Deliberate differences: CAs come in
// name order (the C tool uses readdir order), a CA that cannot be read is
// reported on stderr while the others are still shown (rdma-core PR
// #1501; 44 stops at it), and `ibstat <name>` prefers an exact name match
// (44 takes the first CA whose name is a prefix of the argument, so
// "mlx5_10" could pick mlx5_1).
//
// JSON (--json), stable schema:
//
//	ibstat:            {"cas": [CA...]}
//	ibstat -l:         {"ca_names": ["mlx5_0", ...]}
//	ibstat -p:         {"port_guids": ["0x0002c90300a1b2c1", ...]}
//	CA:   {"name", "node_type" ("ca"|"switch"|"router"), "ca_type", "num_ports"
//	       (highest port number), "firmware_version", "hardware_version",
//	       "node_guid" ("0x" + 16 hex digits), "system_image_guid",
//	       "ports": [Port...] (left out with -s)}
//	Port: {"port", "state" (number), "state_text" ("Down"|"Initializing"|
//	       "Armed"|"Active"|"???"), "physical_state" (number),
//	       "physical_state_text" ("LinkUp", "Polling", ...), "rate_gbps"
//	       (number, 2.5 for 1X SDR), "rate_text" (sysfs), "base_lid", "lmc",
//	       "sm_lid", "capability_mask" (number), "capability_mask_names",
//	       "port_guid", "link_layer" ("InfiniBand"|"Ethernet")}
//	`ibstat <ca> <port>` gives the one CA with the one port.
//
//	ibstatus:          {"ports": [{"device", "port", "default_gid" (RFC
//	       5952), "base_lid", "sm_lid", "state" (number), "state_text"
//	       (sysfs: "ACTIVE"...), "physical_state" (number),
//	       "physical_state_text" ("LinkUp"...), "rate_gbps", "rate_text"
//	       (sysfs text), "link_layer"}]}
//	A device or port that does not exist is an error with --json (the text
//	output prints "unknown" values for a missing port, as the script does).

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
)

// NewCmd builds ibstat or ibstatus.
func NewCmd(env *cmdutil.Env, name string) *cobra.Command {
	if name == "ibstatus" {
		return newIbstatusCmd(env)
	}
	return newIbstatCmd(env)
}

type ibstatOptions struct {
	cmdutil.Common
	listCAs  bool
	short    bool
	portList bool
}

func newIbstatCmd(env *cmdutil.Env) *cobra.Command {
	opts := &ibstatOptions{}
	cmd := cmdutil.ToolCommand("ibstat [options] [<ca_name> [portnum]]", "Show the state of the local CAs and ports")
	cmd.Long = "ibstat shows the local InfiniBand devices and their ports: every CA, one CA, or one port.\n" +
		"With --json it prints {\"cas\": [...]} (or {\"ca_names\"} with -l, {\"port_guids\"} with -p)."
	cmd.Example = `  ibstat -l          # list all IB devices
  ibstat mthca0 2    # stat port 2 of 'mthca0'`
	cmd.Flags().BoolVarP(&opts.listCAs, "list_of_cas", "l", false, "list all IB devices")
	cmd.Flags().BoolVarP(&opts.short, "short", "s", false, "short output")
	cmd.Flags().BoolVarP(&opts.portList, "port_list", "p", false, "show port list")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "CDeGKLPsty")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runIbstat(env, opts, args)
	}
	return cmd
}

// listCAs returns the transport's CAs and, in skipped, those that could
// not be read. When the command names no CA (named is ""), each skipped CA
// is reported on stderr, prefixed with prog; otherwise the caller reports
// the named one if it was skipped.
func listCAs(env *cmdutil.Env, prog, named string) (cas []umad.CA, skipped umad.CAErrors, err error) {
	cas, err = env.Transport.CAs()
	if err != nil && !errors.As(err, &skipped) {
		return nil, nil, err
	}
	for _, ce := range skipped {
		if named == "" {
			fmt.Fprintf(env.IO.Err, "%s: stat of IB device '%s' failed: %v\n", prog, ce.CA, ce.Err)
		}
	}
	return cas, skipped, nil
}

func runIbstat(env *cmdutil.Env, opts *ibstatOptions, args []string) error {
	res, err := ibstat(env, opts, args)
	return cmdutil.Finish(env, &opts.Common, "ibstat", res, err)
}

func ibstat(env *cmdutil.Env, opts *ibstatOptions, args []string) (cmdutil.Result, error) {
	cas, skipped, err := listCAs(env, "ibstat", firstArg(args))
	if err != nil {
		return nil, fmt.Errorf("can't list IB device names: %w", err)
	}
	// libibumad lists only IB node types (1..3).
	var list []umad.CA
	for _, c := range cas {
		if c.NodeType >= 1 && c.NodeType <= 3 {
			list = append(list, c)
		}
	}
	devPort := -1
	if len(args) > 0 {
		ca := findIbstatCA(list, args[0])
		if ca == nil {
			if ce := skipped.Skipped(args[0]); ce != nil {
				return nil, fmt.Errorf("stat of IB device '%s' failed: %v", ce.CA, ce.Err)
			}
			return nil, fmt.Errorf("'%s' IB device can't be found", args[0])
		}
		list = []umad.CA{*ca}
		if len(args) > 1 {
			devPort = int(int32(ctext.Strtol(args[1])))
		}
	}

	switch {
	case opts.portList:
		res := &ibstatPortGUIDs{PortGUIDs: []string{}}
		for i := range list {
			for _, p := range portsUpTo(&list[i]) {
				if p != nil && p.PortGUID != 0 {
					res.PortGUIDs = append(res.PortGUIDs, fmt.Sprintf("0x%016x", p.PortGUID))
				}
			}
		}
		return res, nil
	case opts.listCAs:
		res := &ibstatCANames{CANames: []string{}}
		for _, c := range list {
			res.CANames = append(res.CANames, c.Name)
		}
		return res, nil
	case devPort >= 0 && !opts.short: // one port of one CA
		c := &list[0]
		p := findPortNum(c, devPort)
		if p == nil {
			return nil, fmt.Errorf("stat of IB device '%s' failed: %s: '%s' has no port number %d - max (%d)",
				c.Name, ctext.UmadNodeType(c.NodeType), c.Name, devPort, cmdutil.NumPorts(c))
		}
		j := ibstatCAToJSON(c, false)
		j.Ports = []IbstatPortJSON{ibstatPortToJSON(p)}
		return &IbstatResult{CAs: []IbstatCAJSON{j}, cas: list, port: p}, nil
	}
	res := &IbstatResult{CAs: []IbstatCAJSON{}, cas: list, ports: !opts.short}
	for i := range list {
		res.CAs = append(res.CAs, ibstatCAToJSON(&list[i], !opts.short))
	}
	return res, nil
}

// IbstatResult is what plain ibstat shows: the CAs, their ports (not with
// -s), or one port (`ibstat <ca> <port>`).
type IbstatResult struct {
	CAs   []IbstatCAJSON `json:"cas"`
	cas   []umad.CA      // the same CAs, for the text
	ports bool           // the text shows every CA's ports
	port  *umad.PortInfo // the text shows this port of cas[0] alone
}

func (r *IbstatResult) WriteText(w io.Writer) error {
	if r.port != nil {
		c := &r.cas[0]
		fmt.Fprintf(w, "%s: '%s'\n", ctext.UmadNodeType(c.NodeType), cString(c.Name, 20))
		writeIbstatPort(w, r.port, true)
		return nil
	}
	for i := range r.cas {
		c := &r.cas[i]
		writeIbstatCA(w, c)
		if !r.ports {
			continue
		}
		for _, p := range portsUpTo(c) {
			if p != nil {
				writeIbstatPort(w, p, false)
			}
		}
	}
	return nil
}

// ibstatCANames is ibstat -l, ibstatPortGUIDs ibstat -p: one item a line.
type ibstatCANames struct {
	CANames []string `json:"ca_names"`
}

type ibstatPortGUIDs struct {
	PortGUIDs []string `json:"port_guids"`
}

func (r *ibstatCANames) WriteText(w io.Writer) error   { return writeLines(w, r.CANames) }
func (r *ibstatPortGUIDs) WriteText(w io.Writer) error { return writeLines(w, r.PortGUIDs) }

func writeLines(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

func firstArg(args []string) string {
	if len(args) > 0 {
		return args[0]
	}
	return ""
}

// findIbstatCA finds the CA an ibstat argument names: the exact name, else
// (as ibstat.c does) the first CA whose name starts the argument.
func findIbstatCA(cas []umad.CA, arg string) *umad.CA {
	for i := range cas {
		if cas[i].Name == arg {
			return &cas[i]
		}
	}
	for i := range cas {
		if strings.HasPrefix(arg, cas[i].Name) {
			return &cas[i]
		}
	}
	return nil
}

// portsUpTo returns ports 0..numports by number, nil where absent, the
// way ibstat.c walks ca.ports[].
func portsUpTo(c *umad.CA) []*umad.PortInfo {
	n := cmdutil.NumPorts(c)
	out := make([]*umad.PortInfo, n+1)
	for i := range c.Ports {
		if num := c.Ports[i].Num; num >= 0 && num <= n {
			out[num] = &c.Ports[i]
		}
	}
	return out
}

func findPortNum(c *umad.CA, num int) *umad.PortInfo {
	for i := range c.Ports {
		if c.Ports[i].Num == num {
			return &c.Ports[i]
		}
	}
	return nil
}

// cString is what a C char[size] buffer filled by libibumad keeps.
func cString(s string, size int) string {
	if len(s) > size-1 {
		return s[:size-1]
	}
	return s
}

var ibstatPortStates = []string{"???", "Down", "Initializing", "Armed", "Active"}

var ibstatPhysStates = []string{"No state change", "Sleep", "Polling", "Disabled",
	"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}

func lookupWord(words []string, v int) string {
	if v >= 0 && v < len(words) {
		return words[v]
	}
	return "???"
}

// ibstatRate is libibumad's port->rate: the number that starts the sysfs
// rate text.
func ibstatRate(text string) uint32 { return uint32(umad.SysfsUint(text)) }

// isFDR10 is ibstat.c's check of the sysfs rate text (read into 32 bytes):
// "FDR10" right before the first ')'.
func isFDR10(text string) bool {
	text = cString(text, 32)
	i := strings.IndexByte(text, ')')
	return i >= 5 && strings.EqualFold(text[i-5:i], "fdr10")
}

// linkLayer is libibumad's link_layer: "IB" when sysfs has none.
func linkLayer(p *umad.PortInfo) string {
	if p.LinkLayer == "" {
		return "IB"
	}
	return cString(p.LinkLayer, 20)
}

func writeIbstatCA(w io.Writer, c *umad.CA) {
	word := ctext.UmadNodeType(c.NodeType)
	fmt.Fprintf(w, "%s '%s'\n", word, cString(c.Name, 20))
	fmt.Fprintf(w, "\t%s type: %s\n", word, cString(c.Type, 40))
	fmt.Fprintf(w, "\tNumber of ports: %d\n", cmdutil.NumPorts(c))
	fmt.Fprintf(w, "\tFirmware version: %s\n", cString(c.FWVersion, 20))
	fmt.Fprintf(w, "\tHardware version: %s\n", cString(c.HWRevision, 20))
	fmt.Fprintf(w, "\tNode GUID: 0x%016x\n", c.NodeGUID)
	fmt.Fprintf(w, "\tSystem image GUID: 0x%016x\n", c.SysImageGUID)
}

// writeIbstatPort is ibstat.c's port_dump; alone drops the indentation.
func writeIbstatPort(w io.Writer, p *umad.PortInfo, alone bool) {
	pre, hdrpre := "\t\t", "\t"
	if alone {
		pre, hdrpre = "", ""
	}
	fmt.Fprintf(w, "%sPort %d:\n", hdrpre, p.Num)
	fmt.Fprintf(w, "%sState: %s\n", pre, lookupWord(ibstatPortStates, p.State))
	fmt.Fprintf(w, "%sPhysical state: %s\n", pre, lookupWord(ibstatPhysStates, p.PhysState))
	rate := ibstatRate(p.Rate)
	switch {
	case isFDR10(p.Rate):
		fmt.Fprintf(w, "%sRate: %d (FDR10)\n", pre, int32(rate))
	case rate != 2: // 2 is 1X SDR, 2.5 Gb/s
		fmt.Fprintf(w, "%sRate: %d\n", pre, int32(rate))
	default:
		fmt.Fprintf(w, "%sRate: 2.5\n", pre)
	}
	fmt.Fprintf(w, "%sBase lid: %d\n", pre, p.LID)
	fmt.Fprintf(w, "%sLMC: %d\n", pre, p.LMC)
	fmt.Fprintf(w, "%sSM lid: %d\n", pre, p.SMLID)
	fmt.Fprintf(w, "%sCapability mask: 0x%08x\n", pre, p.CapMask)
	fmt.Fprintf(w, "%sPort GUID: 0x%016x\n", pre, p.PortGUID)
	fmt.Fprintf(w, "%sLink layer: %s\n", pre, linkLayer(p))
}

type IbstatCAJSON struct {
	Name            string           `json:"name"`
	NodeType        jsonv.NodeType   `json:"node_type"`
	CAType          string           `json:"ca_type"`
	NumPorts        int              `json:"num_ports"`
	FirmwareVersion string           `json:"firmware_version"`
	HardwareVersion string           `json:"hardware_version"`
	NodeGUID        mad.GUID         `json:"node_guid"`
	SystemImageGUID mad.GUID         `json:"system_image_guid"`
	Ports           []IbstatPortJSON `json:"ports,omitempty"`
}

type IbstatPortJSON struct {
	Port                int      `json:"port"`
	State               int      `json:"state"`
	StateText           string   `json:"state_text"`
	PhysicalState       int      `json:"physical_state"`
	PhysicalStateText   string   `json:"physical_state_text"`
	RateGbps            float64  `json:"rate_gbps"`
	RateText            string   `json:"rate_text"`
	BaseLID             uint16   `json:"base_lid"`
	LMC                 uint8    `json:"lmc"`
	SMLID               uint16   `json:"sm_lid"`
	CapabilityMask      uint32   `json:"capability_mask"`
	CapabilityMaskNames []string `json:"capability_mask_names"`
	PortGUID            mad.GUID `json:"port_guid"`
	LinkLayer           string   `json:"link_layer"`
}

func ibstatCAToJSON(c *umad.CA, withPorts bool) IbstatCAJSON {
	j := IbstatCAJSON{
		Name:            c.Name,
		NodeType:        jsonv.NodeTypeOf(mad.NodeType(c.NodeType)),
		CAType:          c.Type,
		NumPorts:        cmdutil.NumPorts(c),
		FirmwareVersion: c.FWVersion,
		HardwareVersion: c.HWRevision,
		NodeGUID:        mad.GUID(c.NodeGUID),
		SystemImageGUID: mad.GUID(c.SysImageGUID),
	}
	if withPorts {
		j.Ports = []IbstatPortJSON{}
		for _, p := range portsUpTo(c) {
			if p != nil {
				j.Ports = append(j.Ports, ibstatPortToJSON(p))
			}
		}
	}
	return j
}

func ibstatPortToJSON(p *umad.PortInfo) IbstatPortJSON {
	return IbstatPortJSON{
		Port:                p.Num,
		State:               p.State,
		StateText:           lookupWord(ibstatPortStates, p.State),
		PhysicalState:       p.PhysState,
		PhysicalStateText:   lookupWord(ibstatPhysStates, p.PhysState),
		RateGbps:            rateGbps(p.Rate),
		RateText:            p.Rate,
		BaseLID:             p.LID,
		LMC:                 p.LMC,
		SMLID:               p.SMLID,
		CapabilityMask:      p.CapMask,
		CapabilityMaskNames: jsonv.MaskNames(uint64(p.CapMask), "PortCapMask"),
		PortGUID:            mad.GUID(p.PortGUID),
		LinkLayer:           jsonLinkLayer(p.LinkLayer),
	}
}

// rateGbps reads the number at the start of a sysfs rate text ("2.5 Gb/sec
// (1X SDR)" is 2.5); 0 when there is none.
func rateGbps(text string) float64 {
	text = strings.TrimSpace(text)
	end := 0
	for end < len(text) && (text[end] >= '0' && text[end] <= '9' || text[end] == '.') {
		end++
	}
	v, err := strconv.ParseFloat(text[:end], 64)
	if err != nil {
		return 0
	}
	return v
}

// jsonLinkLayer names the link layer the way sysfs does.
func jsonLinkLayer(ll string) string {
	if ll == "" || ll == "IB" {
		return "InfiniBand"
	}
	return ll
}

// ibstatus

type ibstatusOptions struct {
	cmdutil.Common // only --json
}

func newIbstatusCmd(env *cmdutil.Env) *cobra.Command {
	opts := &ibstatusOptions{}
	cmd := cmdutil.ToolCommand("ibstatus [devname[:portnum]]...", "Show the status of local ports as sysfs reports it")
	cmd.Long = "ibstatus shows, for every port of the named devices (all devices by default),\n" +
		"the default GID, LIDs, state, physical state, rate and link layer.\n" +
		"With --json it prints {\"ports\": [...]}."
	cmd.Example = `  ibstatus mthca1     # shows status of all ports of 'mthca1'
  ibstatus mthca0:2   # shows status port number 2 of 'mthca0'`
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runIbstatus(env, opts, args)
	}
	return cmd
}

// ibstatusResult is what ibstatus shows.
type ibstatusResult struct {
	Ports []IbstatusPortJSON `json:"ports"`
	shown []ibstatusShown    // the text's blocks, a missing port's too
}

type ibstatusShown struct {
	dev, port string
	p         *umad.PortInfo // nil: no such port
}

func (r *ibstatusResult) WriteText(w io.Writer) error {
	for _, s := range r.shown {
		writeIbstatusPort(w, s.dev, s.port, s.p)
	}
	return nil
}

// IbstatusPortJSON is one port in ibstatus's --json output.
type IbstatusPortJSON struct {
	Device        string   `json:"device"`
	Port          int      `json:"port"`
	DefaultGID    *mad.GID `json:"default_gid"`
	BaseLID       uint16   `json:"base_lid"`
	SMLID         uint16   `json:"sm_lid"`
	State         int      `json:"state"`
	StateText     string   `json:"state_text"`
	PhysState     int      `json:"physical_state"`
	PhysStateText string   `json:"physical_state_text"`
	RateGbps      float64  `json:"rate_gbps"`
	RateText      string   `json:"rate_text"`
	LinkLayer     string   `json:"link_layer"`
}

// ibstatusFatal is the script's fatal error. Through the ibstatus symlink
// (text) it ends the output as the script does: "Fatal error:  " and the
// message on stdout, exit 255; otherwise it is an ordinary error.
type ibstatusFatal struct {
	msg   string
	cause error
}

func (f *ibstatusFatal) Error() string {
	if f.cause != nil {
		return f.msg + ": " + f.cause.Error()
	}
	return f.msg
}

func (f *ibstatusFatal) Unwrap() error { return f.cause }

func runIbstatus(env *cmdutil.Env, opts *ibstatusOptions, args []string) error {
	res, err := ibstatus(env, opts.JSON, args)
	err = cmdutil.Finish(env, &opts.Common, "ibstatus", res, err)
	var fatal *ibstatusFatal
	if env.Compat && !opts.JSON && errors.As(err, &fatal) {
		fmt.Fprintf(env.IO.Out, "Fatal error:  %s\n", fatal.msg)
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: cmdutil.ErrSilent}
	}
	return err
}

// ibstatus returns the ports the arguments name, up to the first fatal
// error. With JSON a port that does not exist is an error too.
func ibstatus(env *cmdutil.Env, json bool, args []string) (*ibstatusResult, error) {
	res := &ibstatusResult{Ports: []IbstatusPortJSON{}}
	cas, skipped, err := listCAs(env, "ibstatus", firstArg(args))
	if err != nil || (len(args) == 0 && len(cas) == 0 && len(skipped) == 0) {
		return res, &ibstatusFatal{"No devices", err}
	}
	type target struct {
		dev   string
		ports []string // nil: every port
	}
	var targets []target
	if len(args) == 0 {
		for _, c := range cas {
			targets = append(targets, target{dev: c.Name})
		}
	}
	for _, a := range args {
		if a == "" { // the script's `while [ "$1" ]` stops here
			break
		}
		dev, port := a, a
		if i := strings.IndexByte(a, ':'); i >= 0 {
			dev, port = a[:i], a[strings.LastIndexByte(a, ':')+1:]
		}
		t := target{dev: dev}
		if port != dev {
			t.ports = strings.FieldsFunc(port, isShellBlank)
			if t.ports == nil {
				t.ports = []string{}
			}
		}
		targets = append(targets, t)
	}

	for _, t := range targets {
		ca := findCAName(cas, t.dev)
		if ca == nil {
			if ce := skipped.Skipped(t.dev); ce != nil {
				return res, &ibstatusFatal{msg: fmt.Sprintf("device '%s': %v", t.dev, ce.Err)}
			}
			return res, &ibstatusFatal{msg: fmt.Sprintf("device '%s': sys files not found (%s/%s/ports)",
				t.dev, sysfsClassDir(env), t.dev)}
		}
		ports := t.ports
		if ports == nil {
			// The script globs ports/*: names in byte order.
			for _, p := range ca.Ports {
				ports = append(ports, strconv.Itoa(p.Num))
			}
			sort.Strings(ports)
		}
		for _, name := range ports {
			p := findPortName(ca, name)
			if p != nil {
				res.Ports = append(res.Ports, ibstatusPortToJSON(ca.Name, p))
			} else if json {
				return res, fmt.Errorf("device '%s' has no port %s", ca.Name, name)
			}
			res.shown = append(res.shown, ibstatusShown{ca.Name, name, p})
		}
	}
	return res, nil
}

func isShellBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }

func findCAName(cas []umad.CA, name string) *umad.CA {
	for i := range cas {
		if cas[i].Name == name {
			return &cas[i]
		}
	}
	return nil
}

// findPortName finds the port whose sysfs directory is ports/<name>.
func findPortName(c *umad.CA, name string) *umad.PortInfo {
	for i := range c.Ports {
		if strconv.Itoa(c.Ports[i].Num) == name {
			return &c.Ports[i]
		}
	}
	return nil
}

// sysfsClassDir is the script's $infiniband_base for the transport in use.
func sysfsClassDir(env *cmdutil.Env) string {
	root := umad.DefaultSysfsRoot
	if s, ok := env.Transport.(interface{ SysfsRoot() string }); ok {
		root = s.SysfsRoot()
	}
	return strings.TrimRight(root, "/") + "/class/infiniband"
}

// Kernel sysfs words for the state and phys_state files.
var (
	sysfsStates     = []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
	sysfsPhysStates = []string{"<unknown>", "Sleep", "Polling", "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test"}
)

func sysfsStateName(s int) string {
	if s >= 0 && s < len(sysfsStates) {
		return sysfsStates[s]
	}
	return "UNKNOWN"
}

func sysfsPhysStateName(s int) string {
	if s >= 0 && s < len(sysfsPhysStates) {
		return sysfsPhysStates[s]
	}
	return "<unknown>"
}

// sysfsDefaultGID is the text of gids/0, rebuilt from the port GUID and
// prefix when the transport has no GID table.
func sysfsDefaultGID(p *umad.PortInfo) string {
	if len(p.GIDs) > 0 && p.GIDs[0] != "" {
		return p.GIDs[0]
	}
	return umad.SysfsGID(p.GIDPrefix, p.PortGUID)
}

// writeIbstatusPort prints the script's port_status block. Each value is
// the sysfs text, as `echo "label" $(cat file)` shows it: words joined by
// single spaces. A missing port prints "unknown" (link layer "IB").
func writeIbstatusPort(w io.Writer, dev, port string, p *umad.PortInfo) {
	gid, lid, smlid, state, phys, rate, ll := "unknown", "unknown", "unknown", "unknown", "unknown", "unknown", "IB"
	if p != nil {
		gid = sysfsDefaultGID(p)
		lid = fmt.Sprintf("0x%x", p.LID)
		smlid = fmt.Sprintf("0x%x", p.SMLID)
		state = fmt.Sprintf("%d: %s", p.State, sysfsStateName(p.State))
		phys = fmt.Sprintf("%d: %s", p.PhysState, sysfsPhysStateName(p.PhysState))
		if p.Rate != "" {
			rate = p.Rate
		}
		if p.LinkLayer != "" {
			ll = p.LinkLayer
		}
	}
	fmt.Fprintf(w, "Infiniband device '%s' port %s status:\n", dev, port)
	shellEcho(w, "\tdefault gid:\t", gid)
	shellEcho(w, "\tbase lid:\t", lid)
	shellEcho(w, "\tsm lid:\t\t", smlid)
	shellEcho(w, "\tstate:\t\t", state)
	shellEcho(w, "\tphys state:\t", phys)
	shellEcho(w, "\trate:\t\t", rate)
	shellEcho(w, "\tlink_layer:\t", ll)
	fmt.Fprintln(w)
}

// shellEcho prints `echo "label" $value`: the value's words after the
// label, one space apart; the label alone when there are none.
func shellEcho(w io.Writer, label, value string) {
	words := strings.FieldsFunc(value, isShellBlank)
	if len(words) == 0 {
		fmt.Fprintln(w, label)
		return
	}
	fmt.Fprintln(w, label+" "+strings.Join(words, " "))
}

// parseGIDText is a GID in sysfs' text (fe80:0000:...), nil when there is
// none ("unknown").
func parseGIDText(s string) *mad.GID {
	var g mad.GID
	if g.UnmarshalText([]byte(s)) != nil {
		return nil
	}
	return &g
}

func ibstatusPortToJSON(dev string, p *umad.PortInfo) IbstatusPortJSON {
	return IbstatusPortJSON{
		Device:        dev,
		Port:          p.Num,
		DefaultGID:    parseGIDText(sysfsDefaultGID(p)),
		BaseLID:       p.LID,
		SMLID:         p.SMLID,
		State:         p.State,
		StateText:     sysfsStateName(p.State),
		PhysState:     p.PhysState,
		PhysStateText: sysfsPhysStateName(p.PhysState),
		RateGbps:      rateGbps(p.Rate),
		RateText:      p.Rate,
		LinkLayer:     jsonLinkLayer(p.LinkLayer),
	}
}
