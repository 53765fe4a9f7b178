// Package checklftbalance is the check_lft_balance command: is every
// switch spreading its routes evenly over its ports? infiniband-diags 44
// ships a Perl script that reads dump_lfts output (-l) and an
// ibnetdiscover cache (-i), and asks iblinkinfo about each switch's
// ports. ibtool reads the same two inputs when given them; without them
// it reads the fabric and the forwarding tables itself (internal/routing)
// and feeds the script's logic what each line of dump_lfts would tell it
// (lines.go), so both ways give the script's answer, quirks and all.
package checklftbalance

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

type options struct {
	cmdutil.Common
	lftFile   string
	cacheFile string
	heuristic bool
	verbose   bool
	src       query.Source
}

// NewCmd builds the check_lft_balance command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	o := &options{}
	cmd := cmdutil.ToolCommand("check_lft_balance [-l lft-output -i ibnetdiscover-cache] [-e] [-v]", "Check that switches spread their routes evenly over their ports")
	cmd.Long = "check_lft_balance counts, for every switch, the LIDs each port forwards to, and\n" +
		"reports the switches where a port carries more than one route more than another\n" +
		"(ports that are down or lead straight to a host are left out). It reads dump_lfts\n" +
		"output (-l) and an ibnetdiscover cache (-i) as the C tool's script does, or, as\n" +
		"ibtool check_lft_balance without them, the fabric and its tables."
	cmd.Example = `  check_lft_balance -l lfts.txt -i fabric.cache
  ibtool check_lft_balance -v        # live; every switch, balanced or not`
	fs := cmd.Flags()
	fs.StringVarP(&o.lftFile, "lft-output", "l", "", "dump_lfts output to read")
	fs.StringVarP(&o.cacheFile, "ibnetdiscover-cache", "i", "", "ibnetdiscover cache to read")
	fs.BoolVarP(&o.heuristic, "heuristic", "e", false, "turn on heuristic(s) to look at switch balances deeper")
	fs.BoolVarP(&o.verbose, "all", "v", false, "verbose output, output all switches")
	o.src.AddFlags(fs, query.FlagNodeNameMap|query.FlagOutstanding)
	cmdutil.SetupCommon(env, cmd, &o.Common, "DGLKsyYtzve")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if env.Compat && (o.lftFile == "" || o.cacheFile == "") {
			what := "dump lfts file"
			if o.lftFile != "" {
				what = "ibnetdiscover cache"
			}
			fmt.Fprintf(env.IO.Err, "Must specify %s\n", what)
			fmt.Fprint(env.IO.Out, checkLftUsage)
			return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: cmdutil.ErrSilent}
		}
		res, err := runCheckLftBalance(env, o)
		return cmdutil.Finish(env, &o.Common, "check_lft_balance", res, err)
	}
	return cmd
}

const checkLftUsage = `Usage: check_lft_balance -l lft-output -i ibnetdiscover-cache [-e] [-v]
  Generate lft-output via "dump_lfts.sh > lft-output"
  Generate ibnetdiscover-cache via "ibnetdiscover --cache ibnetdiscover-cache"
  -e turn on heuristic(s) to look at switch balances deeper
  -v verbose output, output all switches
`

// lftBalanceResult is the switches the script reports.
type lftBalanceResult struct {
	Switches []*switchBalance `json:"switches"`
}

// switchBalance is one switch's route count per port.
type switchBalance struct {
	NodeGUID   string      `json:"node_guid"`
	Name       string      `json:"node_name"`
	Unbalanced bool        `json:"unbalanced"`
	Ports      []portCount `json:"ports"`
	shown      bool
}

type portCount struct {
	Port   int `json:"port"`
	Routes int `json:"routes"`
}

func (r *lftBalanceResult) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, s := range r.Switches {
		if !s.shown {
			continue
		}
		if s.Unbalanced {
			fmt.Fprintf(bw, "Unbalanced Switch Port Usage: %s, %s\n", s.Name, s.NodeGUID)
		} else {
			fmt.Fprintf(bw, "Switch Port Usage: %s, %s\n", s.Name, s.NodeGUID)
		}
		for _, p := range s.Ports {
			fmt.Fprintf(bw, "Port %03d: %d\n", p.Port, p.Routes)
		}
	}
	return bw.Flush()
}

func runCheckLftBalance(env *cmdutil.Env, o *options) (*lftBalanceResult, error) {
	if o.lftFile == "" && o.cacheFile == "" {
		return runLive(env, o)
	}
	b, err := os.ReadFile(o.lftFile)
	if err != nil {
		fmt.Fprintf(env.IO.Err, "Couldn't open dump lfts file: %s: %v\n", o.lftFile, errnoText(err))
	}
	fab, err := query.LoadCache(o.cacheFile)
	if err != nil {
		// The script's iblinkinfo fails then: no port looks up.
		fmt.Fprintf(env.IO.Err, "check_lft_balance: loading cached fabric failed: %v\n", err)
		fab = nil
	}
	names := o.src.Names(env.IO.Err)
	s := newScript(fab, names.Name, o.heuristic, o.verbose)
	for _, line := range strings.Split(string(b), "\n") {
		s.line(parseLine(line))
	}
	return s.end(), nil
}

// errnoText is an error as Perl's $! prints it.
func errnoText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		s := pe.Err.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}

var (
	lftUnicastRE = cmdutil.LazyRegexp{Expr: `Unicast lids .+ of switch (?:DR path slid|Lid) .+ guid (.+) \((.+)\)`}
	lftHostRE    = cmdutil.LazyRegexp{Expr: `.+ (.+) : \(.+ portguid .+: '(.+)'\)`}
	lftPathRE    = cmdutil.LazyRegexp{Expr: `.+ (.+) : \(path #. out of .: portguid .+\)`}
)

// lineKind is what the script makes of a line, by the words in it.
type lineKind uint8

const (
	lineOther  lineKind = iota
	lineSwitch          // "Unicast": a switch's table starts
	lineHost            // "Channel" or "Router": a host's LID
	linePath            // "path": another LID of the host's LMC range
)

// lftLine is what the script reads in a line of dump_lfts output.
type lftLine struct {
	kind lineKind
	// lineSwitch: the GUID and name the header regex takes, if it
	// matches (named).
	guid, name string
	named      bool
	// lineHost, linePath: the out port as printed ("001"; "" when the
	// line's regex does not match) and, lineHost, the host's name.
	port, host string
}

// parseLine is the script's reading of a line of text.
func parseLine(line string) lftLine {
	switch {
	case strings.Contains(line, "Unicast"):
		l := lftLine{kind: lineSwitch}
		if m := lftUnicastRE.Get().FindStringSubmatch(line); m != nil {
			l.guid, l.name, l.named = m[1], m[2], true
		}
		return l
	case strings.Contains(line, "Channel") || strings.Contains(line, "Router"):
		l := lftLine{kind: lineHost}
		if m := lftHostRE.Get().FindStringSubmatch(line); m != nil {
			l.port, l.host = m[1], m[2]
		}
		return l
	case strings.Contains(line, "path"):
		l := lftLine{kind: linePath}
		if m := lftPathRE.Get().FindStringSubmatch(line); m != nil {
			l.port = m[1]
		}
		return l
	}
	return lftLine{}
}

// script is the script's state over the lines of dump_lfts output.
type script struct {
	res       *lftBalanceResult
	sw        *lftSwitch
	fab       *discovery.Fabric
	name      func(uint64, string) string
	heuristic bool
	verbose   bool
}

func newScript(fab *discovery.Fabric, name func(uint64, string) string, heuristic, verbose bool) *script {
	return &script{res: &lftBalanceResult{Switches: []*switchBalance{}}, fab: fab, name: name, heuristic: heuristic, verbose: verbose}
}

// flush reports the switch read so far.
func (s *script) flush() {
	if s.sw == nil {
		return
	}
	s.sw.processHostPorts()
	if s.sw.named {
		s.res.Switches = append(s.res.Switches, s.sw.usage(s.fab, s.name, s.heuristic, s.verbose))
	}
}

// line reads one line.
func (s *script) line(l lftLine) {
	sw := s.sw
	switch {
	case l.kind == lineSwitch:
		s.flush()
		next := &lftSwitch{count: map[string]int{}}
		if sw != nil { // the name survives a header that does not parse
			next.guid, next.name, next.named = sw.guid, sw.name, sw.named
		}
		if l.named {
			next.guid, next.name, next.named = l.guid, l.name, true
		}
		s.sw = next
	case sw == nil:
	case l.kind == lineHost:
		sw.host = l.host
		sw.count[l.port]++
		sw.processHostPorts()
		sw.hostPorts = []string{l.port}
		if sw.lidsPerPort == 0 {
			sw.lidsPerPort++
		} else {
			sw.calculated++
		}
	case l.kind == linePath:
		sw.count[l.port]++
		if sw.calculated == 0 {
			sw.lidsPerPort++
		}
		sw.hostPorts = append(sw.hostPorts, l.port)
	default:
		if sw.lidsPerPort != 0 {
			sw.calculated++
		}
	}
}

// end is the script's last report, which is unconditional: with no
// switch read, it reports an unnamed one (seen with -v).
func (s *script) end() *lftBalanceResult {
	if s.sw == nil {
		s.sw = &lftSwitch{count: map[string]int{}}
	}
	s.sw.processHostPorts()
	s.res.Switches = append(s.res.Switches, s.sw.usage(s.fab, s.name, s.heuristic, s.verbose))
	return s.res
}

// lftSwitch is the script's state for the switch being read.
type lftSwitch struct {
	guid, name  string
	named       bool
	count       map[string]int // routes per out port, as "001"
	host        string
	hostPorts   []string
	lidsPerPort int
	calculated  int
	maybeHosts  []string // hosts that may hang off one port
}

// processHostPorts: a host whose LIDs all leave through one port may be
// connected to that port directly.
func (s *lftSwitch) processHostPorts() {
	if len(s.hostPorts) == 0 || len(s.hostPorts) != s.lidsPerPort {
		return
	}
	for _, p := range s.hostPorts {
		if perlNum(p) != perlNum(s.hostPorts[0]) {
			return
		}
	}
	s.maybeHosts = append(s.maybeHosts, s.host)
}

// scriptPorts are the ports the script looks at: 1 to 36, whatever the
// switch has.
const scriptPorts = 36

// usage is output_switch_port_usage.
func (s *lftSwitch) usage(fab *discovery.Fabric, name func(uint64, string) string, heuristic, verbose bool) *switchBalance {
	b := &switchBalance{NodeGUID: s.guid, Name: s.name, Ports: []portCount{}}
	links := switchLinks(fab, s.guid, name)
	minUse, maxUse := 999999, 0
	onSwitch := 0
	for p := 1; p <= scriptPorts; p++ {
		key := fmt.Sprintf("%03d", p)
		n := s.count[key]
		l, listed := links[p]
		if n == 0 && (!listed || l.down) {
			continue
		}
		onSwitch++
		if listed && s.directlyConnected(n, l) {
			continue
		}
		b.Ports = append(b.Ports, portCount{p, n})
		minUse, maxUse = min(minUse, n), max(maxUse, n)
	}
	b.Unbalanced = maxUse > minUse+1
	if heuristic && b.Unbalanced && onSwitch > 12 {
		b.Unbalanced = !aboutHalfBalanced(b.Ports, maxUse, onSwitch) && !restZero(b.Ports, maxUse)
	}
	b.shown = verbose || b.Unbalanced
	return b
}

// aboutHalfBalanced is the script's line-board heuristic: when about half
// the ports (not at the maximum, one below it, or unused) are balanced
// among themselves, the switch counts as balanced.
func aboutHalfBalanced(ports []portCount, maxUse, onSwitch int) bool {
	var rest []portCount
	for _, p := range ports {
		if p.Routes != maxUse && p.Routes != maxUse-1 && p.Routes != 0 {
			rest = append(rest, p)
		}
	}
	half := onSwitch / 2
	if len(rest) != half && len(rest) != half+1 && len(rest) != half-1 {
		return false
	}
	lo, hi := 999999, 0
	for _, p := range rest {
		lo, hi = min(lo, p.Routes), max(hi, p.Routes)
	}
	return hi <= lo+1
}

// restZero is the heuristic for a switch not fully populated: every port
// below max-1 carries nothing.
func restZero(ports []portCount, maxUse int) bool {
	for _, p := range ports {
		if p.Routes != maxUse && p.Routes != maxUse-1 && p.Routes != 0 {
			return false
		}
	}
	return true
}

// linkState is what the script reads from iblinkinfo's line of a port.
type linkState struct {
	down, active bool
	remote       string // the remote's name, "" when none
}

// switchLinks are the ports iblinkinfo -S shows for the switch with that
// GUID text, from the fabric (nil fabric: the script's iblinkinfo failed).
func switchLinks(fab *discovery.Fabric, guidText string, name func(uint64, string) string) map[int]linkState {
	links := map[int]linkState{}
	if fab == nil {
		return links
	}
	guid, err := strconv.ParseUint(strings.TrimPrefix(guidText, "0x"), 16, 64)
	n := fab.Node(guid)
	if err != nil || n == nil || n.Type != discovery.NodeSwitch {
		return links
	}
	for num := 1; num <= n.NumPorts; num++ {
		p := n.Port(num)
		var st linkState
		if p != nil && p.Info() != nil {
			st.down = p.Info().PortState == mad.PortStateDown
			st.active = p.Info().PortState == mad.PortStateActive
		} else {
			st.down = true
		}
		if p != nil && p.Remote != nil {
			st.remote = name(p.Remote.Node.GUID, p.Remote.Node.Desc())
		}
		links[num] = st
	}
	return links
}

// directlyConnected is is_directly_connected: an active port that carries
// exactly one host's LIDs, towards a host that may hang off one port. The
// script compares the names with Perl's numeric ==, so any two names that
// do not start with a number are equal.
func (s *lftSwitch) directlyConnected(routes int, l linkState) bool {
	if routes != s.lidsPerPort || len(s.maybeHosts) == 0 || !l.active || l.remote == "" {
		return false
	}
	for _, h := range s.maybeHosts {
		if perlNum(l.remote) == perlNum(h) {
			return true
		}
	}
	return false
}

// perlNum is a string's value as a Perl number: the leading decimal number
// after white space, 0 when there is none.
func perlNum(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || (end == 0 && (s[end] == '-' || s[end] == '+')) || s[end] == '.') {
		end++
	}
	v, _ := strconv.ParseFloat(s[:end], 64)
	return v
}
