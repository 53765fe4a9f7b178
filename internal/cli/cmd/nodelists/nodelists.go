package nodelists

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// ibhosts, ibswitches, ibrouters and ibnodes. In infiniband-diags 44 they
// are shell scripts: they take their own few options, run `ibnetdiscover
// -y <mkey> [-C ca] [-P port] [-t ms]` (or cat a topology file), and pick
// the Ca/Switch/Rt lines out of the topology with awk. ibnodes runs ibhosts
// and then ibswitches. These commands do the same in-process, reproducing
// the scripts' option handling, their awk field arithmetic and dash's echo.

type nodeList struct {
	name string
	typ  int // discovery.NodeCA, ...
}

var (
	listHosts    = nodeList{"ibhosts", discovery.NodeCA}
	listSwitches = nodeList{"ibswitches", discovery.NodeSwitch}
	listRouters  = nodeList{"ibrouters", discovery.NodeRouter}
)

const nodeListUsageArgs = "[-h] [<topology-file> | -y mkey -C ca_name -P ca_port -t timeout_ms]"

// NewCmd builds ibhosts, ibswitches, ibrouters or ibnodes.
func NewCmd(env *cmdutil.Env, name string) *cobra.Command {
	switch name {
	case "ibhosts":
		return newNodeListCmd(env, "ibhosts", "Show the CAs of the fabric", listHosts)
	case "ibswitches":
		return newNodeListCmd(env, "ibswitches", "Show the switches of the fabric", listSwitches)
	case "ibrouters":
		return newNodeListCmd(env, "ibrouters", "Show the routers of the fabric", listRouters)
	}
	return newNodeListCmd(env, "ibnodes", "Show the CAs and switches of the fabric", listHosts, listSwitches)
}

func newNodeListCmd(env *cmdutil.Env, name, short string, lists ...nodeList) *cobra.Command {
	cmd := cmdutil.ToolCommand(name+" "+nodeListUsageArgs, short)
	cmd.Long = short + ` (the CA, switch or router lines of ibnetdiscover's topology,
or of a topology file). Each option's value is a separate argument.`
	// The scripts parse their arguments by hand; so do we. The flags are
	// declared only for --help to list them.
	cmd.DisableFlagParsing = true
	fs := cmd.Flags()
	fs.StringP("m_key", "y", "", "M_Key to use in request")
	fs.StringP("Ca", "C", "", "Ca name to use")
	fs.StringP("Port", "P", "", "Ca port number to use")
	fs.StringP("timeout", "t", "", "timeout in ms")
	fs.Bool("json", false, "print the result as JSON")
	fs.SortFlags = false
	cmd.RunE = func(c *cobra.Command, args []string) error { return runNodeLists(env, c, name, lists, args) }
	return cmd
}

// nodeListArgs is what the scripts' argument loop collects.
type nodeListArgs struct {
	topoFile string
	mkey     string
	caInfo   []string // -C/-P/-t and their values, passed on to ibnetdiscover
	json     bool
}

// errNodeListHelp is -h/--help, which the scripts answer with their usage.
var errNodeListHelp = errors.New("help requested")

// parseNodeListArgs is the scripts' while/case loop; an error is where the
// script calls usage.
func parseNodeListArgs(args []string) (a nodeListArgs, err error) {
	a.mkey = "0"
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; arg {
		case "-h", "--help":
			return a, errNodeListHelp
		case "-y", "--m_key", "-P", "--Port", "-C", "--Ca", "-t", "--timeout":
			if i+1 >= len(args) || args[i+1] == "" || strings.HasPrefix(args[i+1], "-") {
				return a, fmt.Errorf("%s needs a value", arg)
			}
			i++
			if arg == "-y" || arg == "--m_key" {
				a.mkey = args[i]
			} else {
				a.caInfo = append(a.caInfo, arg, args[i])
			}
		case "--json":
			a.json = true
		default:
			if strings.HasPrefix(arg, "-") {
				return a, fmt.Errorf("unknown option %s", arg)
			}
			if a.topoFile != "" {
				return a, fmt.Errorf("one topology file at most, got %s and %s", a.topoFile, arg)
			}
			a.topoFile = arg
		}
	}
	return a, nil
}

func runNodeLists(env *cmdutil.Env, cmd *cobra.Command, name string, lists []nodeList, args []string) error {
	a, err := parseNodeListArgs(args)
	switch {
	case err != nil && env.Compat:
		// The scripts' usage: on stdout, exit 255, -h included.
		for _, l := range lists {
			fmt.Fprintf(env.IO.Out, "Usage: %s %s\n", l.name, nodeListUsageArgs)
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: cmdutil.ErrSilent}
	case err == errNodeListHelp:
		return cmd.Help() // as every "ibtool <cmd> --help": stdout, exit 0
	case err != nil:
		return cmdutil.UsageErrorf("%v", err)
	}
	if a.json && a.topoFile != "" {
		return cmdutil.UsageErrorf("--json needs the fabric, not a topology file")
	}

	if a.topoFile != "" {
		data, err := os.ReadFile(a.topoFile)
		code := cmdutil.ExitOK
		for _, l := range lists {
			if err != nil {
				// What `cat` says; the script goes on with no text.
				fmt.Fprintf(env.IO.Err, "cat: %s: %s\n", a.topoFile, strerror(err))
				code = 1
				continue
			}
			fmt.Fprint(env.IO.Out, awkNodeList(l.typ, dashEcho(strings.TrimRight(string(data), "\n"))))
		}
		if code != cmdutil.ExitOK {
			return &cmdutil.ExitError{Code: code, Err: cmdutil.ErrSilent}
		}
		return nil
	}

	// `ibnetdiscover -y <mkey> <ca_info>`, with its common options and
	// ibdiag.conf.
	c := &cmdutil.Common{}
	fs := pflag.NewFlagSet("ibnetdiscover", pflag.ContinueOnError)
	fs.SetOutput(env.IO.Err)
	cmdutil.AddCommonFlags(fs, c, "DGKLs")
	if err := fs.Parse(append([]string{"-y", a.mkey}, a.caInfo...)); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if err := cmdutil.ApplyDiagConfig(fs, c); err != nil {
		return err
	}
	env.Verbosity = c.Verbose
	c.JSON = a.json
	res := &nodeListResult{lists: lists, names: nodename.Open("", env.IO.Err)}
	err = cmdutil.CheckTimeout(c)
	if err == nil {
		err = res.discover(env, c, &query.Source{})
	}
	if err != nil {
		return nodeListFailure(env, c, name, lists, err)
	}
	if err := cmdutil.Finish(env, c, name, res, nil); err != nil {
		return err
	}
	return cmdutil.WalkIncomplete(env, c, name, res.fab)
}

// nodeListResult is the node lines of the fabric for one or more node
// types (ibnodes: CAs, then switches), as the scripts print them from
// ibnetdiscover's topology. Its JSON lists those nodes.
type nodeListResult struct {
	Nodes []fabricdoc.NodeDoc `json:"nodes"`
	lists []nodeList
	names *nodename.Map
	fab   *discovery.Fabric
}

func (r *nodeListResult) discover(env *cmdutil.Env, c *cmdutil.Common, src *query.Source) error {
	fab, err := cmdutil.NetdiscFabric(env, c, src, nil)
	if err != nil {
		return err
	}
	r.fab, r.Nodes = fab, []fabricdoc.NodeDoc{}
	for _, l := range r.lists {
		for _, n := range render.TypeList(fab, l.typ) {
			r.Nodes = append(r.Nodes, fabricdoc.NodeJSON(n, r.names))
		}
	}
	return nil
}

func (r *nodeListResult) WriteText(w io.Writer) error {
	if r.fab == nil {
		return nil
	}
	var text strings.Builder
	tp := render.NewTopoPrinter(r.fab, r.names, false)
	tp.W = bufio.NewWriter(&text)
	tp.Topology(false, false)
	if err := tp.W.Flush(); err != nil {
		return err
	}
	echoed := dashEcho(strings.TrimRight(text.String(), "\n"))
	for _, l := range r.lists {
		if _, err := io.WriteString(w, awkNodeList(l.typ, echoed)); err != nil {
			return err
		}
	}
	return nil
}

// nodeListFailure reports a failed ibnetdiscover run as the scripts do:
// each list runs ibnetdiscover (ibnodes two of them), whose IBEXIT line,
// prefixed with the path the script ran it by, passes through the awk
// program; the script exits with ibnetdiscover's code.
func nodeListFailure(env *cmdutil.Env, c *cmdutil.Common, name string, lists []nodeList, err error) error {
	var f *cmdutil.Failure
	if !env.Compat || !errors.As(err, &f) {
		return cmdutil.Fail(env, c, name, err)
	}
	// The scripts run $IBPATH/ibnetdiscover, /usr/sbin by default.
	ibpath := os.Getenv("IBPATH")
	if ibpath == "" {
		ibpath = "/usr/sbin"
	}
	line := *f
	line.CMsg = strings.TrimRight(f.CMsg, "\n") // awk prints no empty lines
	var res error
	for range lists {
		res = cmdutil.ReportIBExit(env, c, ibpath+"/ibnetdiscover", &line, err)
	}
	return res
}

// strerror renders a file error as the C library would ("No such file or
// directory").
func strerror(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	msg := err.Error()
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// dashEcho is what `echo "$text"` prints under dash, Debian's /bin/sh: its
// echo expands backslash escapes, and \c ends the output.
func dashEcho(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'c':
			return b.String()
		case 'e':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\':
			b.WriteByte('\\')
		case '0':
			v, n := 0, 0
			for n < 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7' {
				i++
				v = v*8 + int(s[i]-'0')
				n++
			}
			b.WriteByte(byte(v))
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// awkNodeList runs the scripts' awk program over text: the node lines of
// one type reformatted, and lines that look like tool messages as they are.
func awkNodeList(typ int, text string) string {
	var out strings.Builder
	text = strings.TrimSuffix(text, "\n")
	for _, line := range strings.Split(text, "\n") {
		switch {
		case typ == discovery.NodeCA && strings.HasPrefix(line, "Ca"),
			typ == discovery.NodeRouter && strings.HasPrefix(line, "Rt"):
			f := awkFields(line)
			out.WriteString(f.get(1) + "\t: 0x" + awkSubstr(f.get(3), 4, 16) + " ports " + f.get(2) + " " +
				awkSubstr(line, awkAfterHash(line)) + "\n")
		case typ == discovery.NodeSwitch && strings.HasPrefix(line, "Switch"):
			out.WriteString(awkSwitchLine(line) + "\n")
		}
		if strings.HasPrefix(line, "ib") {
			out.WriteString(line + "\n")
			continue
		}
		for _, tag := range []string{"ibpanic:", "ibwarn:", "iberror:"} {
			if strings.Contains(line, tag) {
				out.WriteString(line + "\n")
			}
		}
	}
	return out.String()
}

// awkSwitchLine is ibswitches' awk rule for a Switch line.
func awkSwitchLine(l string) string {
	f := awkFields(l)
	desc := awkSubstr(l, awkAfterHash(l))
	pi := awkMatch(desc, "port 0")
	pinfo := awkSubstr(desc, pi)
	desc = awkSubstr(desc, 1, pi-2)
	typ := "base port 0"
	ti := awkMatch(desc, typ)
	if ti == 0 {
		typ = "enhanced port 0"
		if ti = awkMatch(desc, typ); ti != 0 {
			desc = awkSubstr(desc, 1, ti-2)
		}
	} else {
		desc = awkSubstr(desc, 1, ti-2)
	}
	head := f.get(1) + "\t: 0x" + awkSubstr(f.get(3), 4, 16) + " ports " + f.get(2) + " " + desc + " "
	if ti == 0 {
		return head + pinfo
	}
	return head + typ + " " + pinfo
}

// awkAfterHash is match($0, "#[ \t]*")+RLENGTH: the position just after
// the first '#' and the blanks that follow it (0-1 = -1+0 when there is
// no '#', which substr treats as the whole line).
func awkAfterHash(s string) int {
	i := strings.IndexByte(s, '#')
	if i < 0 {
		return 0 + -1
	}
	j := i + 1
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return (i + 1) + (j - i)
}

// awkMatch is match(s, lit) for a literal pattern: its 1-based position,
// 0 when absent.
func awkMatch(s, lit string) int { return strings.Index(s, lit) + 1 }

// awkSubstr is awk's substr(s, m[, n]), 1-based, clipped to the string.
func awkSubstr(s string, m int, n ...int) string {
	length := len(s) - m + 1
	if len(n) > 0 {
		length = n[0]
	}
	if m < 1 {
		length += m - 1
		m = 1
	}
	if m > len(s) || length <= 0 {
		return ""
	}
	if m-1+length > len(s) {
		length = len(s) - m + 1
	}
	return s[m-1 : m-1+length]
}

type awkFieldList []string

// awkFields splits a line as awk's default FS does (blanks and tabs).
func awkFields(s string) awkFieldList {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}

func (f awkFieldList) get(i int) string {
	if i < 1 || i > len(f) {
		return ""
	}
	return f[i-1]
}
