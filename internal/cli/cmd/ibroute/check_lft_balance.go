package ibroute

// check_lft_balance: is every switch spreading its routes evenly over its
// ports? infiniband-diags 44 ships a Perl script that reads dump_lfts
// output (-l) and an ibnetdiscover cache (-i), and asks iblinkinfo about
// each switch's ports. ibtool reads the same two inputs when given them;
// without them it reads the fabric and the forwarding tables itself. The
// tables are read as the script reads them, from dump_fts text, so both
// ways give the script's answer.

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

type checkLftOptions struct {
	cmdutil.Common
	lftFile   string
	cacheFile string
	heuristic bool
	verbose   bool
	src       query.Source
}

// NewCheckLftBalanceCmd builds the check_lft_balance command.
func NewCheckLftBalanceCmd(env *cmdutil.Env, _ string) *cobra.Command {
	o := &checkLftOptions{}
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

func runCheckLftBalance(env *cmdutil.Env, o *checkLftOptions) (*lftBalanceResult, error) {
	var lfts string
	var fab *discovery.Fabric
	if o.lftFile != "" || o.cacheFile != "" {
		b, err := os.ReadFile(o.lftFile)
		if err != nil {
			fmt.Fprintf(env.IO.Err, "Couldn't open dump lfts file: %s: %v\n", o.lftFile, errnoText(err))
		}
		lfts = string(b)
		if fab, err = query.LoadCache(o.cacheFile); err != nil {
			// The script's iblinkinfo fails then: no port looks up.
			fmt.Fprintf(env.IO.Err, "check_lft_balance: loading cached fabric failed: %v\n", err)
			fab = nil
		}
	} else {
		dump := &ftsOptions{Common: o.Common, src: o.src}
		res, err := runDumpFts(env, dump, nil)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		res.WriteText(&b)
		lfts, fab = b.String(), res.fabric
	}
	names := o.src.Names(env.IO.Err)
	return balanceOf(lfts, fab, names.Name, o.heuristic, o.verbose), nil
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

// balanceOf runs the script over dump_lfts text, with the fabric in place
// of its iblinkinfo calls.
func balanceOf(lfts string, fab *discovery.Fabric, name func(uint64, string) string, heuristic, verbose bool) *lftBalanceResult {
	res := &lftBalanceResult{Switches: []*switchBalance{}}
	var sw *lftSwitch
	flush := func() {
		if sw == nil {
			return
		}
		sw.processHostPorts()
		if sw.named {
			res.Switches = append(res.Switches, sw.usage(fab, name, heuristic, verbose))
		}
	}
	for _, line := range strings.Split(lfts, "\n") {
		switch {
		case strings.Contains(line, "Unicast"):
			flush()
			next := &lftSwitch{count: map[string]int{}}
			if sw != nil { // the name survives a header that does not parse
				next.guid, next.name, next.named = sw.guid, sw.name, sw.named
			}
			if m := lftUnicastRE.Get().FindStringSubmatch(line); m != nil {
				next.guid, next.name, next.named = m[1], m[2], true
			}
			sw = next
		case sw == nil:
		case strings.Contains(line, "Channel") || strings.Contains(line, "Router"):
			port, host := "", ""
			if m := lftHostRE.Get().FindStringSubmatch(line); m != nil {
				port, host = m[1], m[2]
			}
			sw.host = host
			sw.count[port]++
			sw.processHostPorts()
			sw.hostPorts = []string{port}
			if sw.lidsPerPort == 0 {
				sw.lidsPerPort++
			} else {
				sw.calculated++
			}
		case strings.Contains(line, "path"):
			port := ""
			if m := lftPathRE.Get().FindStringSubmatch(line); m != nil {
				port = m[1]
			}
			sw.count[port]++
			if sw.calculated == 0 {
				sw.lidsPerPort++
			}
			sw.hostPorts = append(sw.hostPorts, port)
		default:
			if sw.lidsPerPort != 0 {
				sw.calculated++
			}
		}
	}
	// The script's last report is unconditional: with no switch read, it
	// reports an unnamed one (seen with -v).
	if sw == nil {
		sw = &lftSwitch{count: map[string]int{}}
	}
	sw.processHostPorts()
	res.Switches = append(res.Switches, sw.usage(fab, name, heuristic, verbose))
	return res
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
