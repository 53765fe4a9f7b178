package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibidsverify"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/nodename"
)

// Man pages, section 8, generated from the command tree: ibtool.8 and one
// ibtool-<command>.8 per command (named so, not after the C tool, so they
// install beside infiniband-diags' own pages). The roff is plain man(7)
// macros written here; cobra's doc package would need go-md2man.

// WriteManPages writes every page into dir and returns their file names.
// date (for example "2026-11-25") goes in each page's header.
func WriteManPages(dir, date string) ([]string, error) {
	root := newRoot(&cmdutil.Env{IO: cmdutil.IO{Out: os.Stdout, Err: os.Stderr}}, "")
	var files []string
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if !c.IsAvailableCommand() && c != root {
			continue
		}
		name := manName(c)
		var b strings.Builder
		writeManPage(&b, c, date)
		if err := os.WriteFile(filepath.Join(dir, name+".8"), []byte(b.String()), 0o644); err != nil {
			return files, err
		}
		files = append(files, name+".8")
	}
	return files, nil
}

// manName is a command's page name: ibtool, or ibtool-<command>.
func manName(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	return c.Root().Name() + "-" + c.Name()
}

func writeManPage(b *strings.Builder, c *cobra.Command, date string) {
	title := strings.ToUpper(manName(c))
	fmt.Fprintf(b, ".TH %q 8 %q \"ibtool %s\" \"InfiniBand diagnostics\"\n", title, date, roffEscape(cmdutil.Version))
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(b, "%s \\- %s\n", roffEscape(manName(c)), roffEscape(c.Short))

	b.WriteString(".SH SYNOPSIS\n")
	use := c.UseLine()
	if c.HasAvailableSubCommands() {
		use = c.CommandPath() + " <command> [flags]"
	}
	fmt.Fprintf(b, ".nf\n%s\n", roffLines(use))
	if c.Annotations[cmdutil.AnnotLink] == "true" {
		fmt.Fprintf(b, "%s\n", roffLines(strings.TrimPrefix(c.UseLine(), c.Root().Name()+" ")))
	}
	b.WriteString(".fi\n")

	b.WriteString(".SH DESCRIPTION\n")
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	writeManText(b, desc)
	if c.Annotations[cmdutil.AnnotLink] == "true" {
		fmt.Fprintf(b, ".PP\nRun through a link named \\fB%s\\fR (see \\fBibtool\\-install\\-links\\fR(8)), it takes the\noptions of the C tool of that name and prints what that tool prints.\n",
			roffEscape(c.Name()))
	}

	if c.HasExample() {
		b.WriteString(".SH EXAMPLES\n.nf\n")
		b.WriteString(roffLines(c.Example))
		b.WriteString("\n.fi\n")
	}

	if c.HasAvailableLocalFlags() {
		b.WriteString(".SH OPTIONS\n")
		writeManFlags(b, c.LocalFlags())
	}
	if c.HasAvailableInheritedFlags() {
		b.WriteString(".SH GLOBAL OPTIONS\n")
		writeManFlags(b, c.InheritedFlags())
	}

	if c.HasAvailableSubCommands() {
		b.WriteString(".SH COMMANDS\n")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(b, ".TP\n\\fB%s\\fR(8)\n%s\n", roffEscape(manName(sub)), roffEscape(sub.Short))
			}
		}
	}

	writeManExitStatus(b, c)
	writeManItems(b, "ENVIRONMENT", c, manEnvironment())
	writeManItems(b, "FILES", c, manFiles())

	b.WriteString(".SH SEE ALSO\n")
	var see []string
	if c.HasParent() {
		see = append(see, "\\fBibtool\\fR(8)")
	}
	if c.Annotations[cmdutil.AnnotLink] == "true" {
		see = append(see, fmt.Sprintf("\\fB%s\\fR(8) of infiniband\\-diags or rdma\\-core", roffEscape(c.Name())))
	}
	if len(see) == 0 {
		see = append(see, "the \\fBibtool\\-\\fR\\fIcommand\\fR(8) pages, \\fBinfiniband\\-diags\\fR(8)")
	}
	b.WriteString(strings.Join(see, ", ") + "\n")
}

// writeManText writes free text: blank lines become paragraphs, indented
// lines are kept as they are (usage tables, examples).
func writeManText(b *strings.Builder, text string) {
	inPre := false
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		pre := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case strings.TrimSpace(line) == "":
			if inPre {
				b.WriteString(".fi\n")
				inPre = false
			}
			b.WriteString(".PP\n")
			continue
		case pre && !inPre:
			b.WriteString(".nf\n")
			inPre = true
		case !pre && inPre:
			b.WriteString(".fi\n")
			inPre = false
		}
		b.WriteString(roffLine(line) + "\n")
	}
	if inPre {
		b.WriteString(".fi\n")
	}
}

func writeManFlags(b *strings.Builder, fs *pflag.FlagSet) {
	var flags []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags = append(flags, f)
		}
	})
	sort.SliceStable(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	for _, f := range flags {
		var head string
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			head = fmt.Sprintf("\\fB\\-%s\\fR, ", roffEscape(f.Shorthand))
		}
		head += fmt.Sprintf("\\fB\\-\\-%s\\fR", roffEscape(f.Name))
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			head += " \\fI" + roffEscape(varname) + "\\fR"
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", head, roffLines(usage))
	}
}

// roffEscape escapes text inside a line: backslashes, and hyphens, which
// roff would otherwise typeset as hyphens rather than minus signs.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// roffLine escapes one line of text; a line starting with a control
// character (. or ') gets a zero-width escape so roff prints it.
func roffLine(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func roffLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = roffLine(l)
	}
	return strings.Join(lines, "\n")
}

// manItem is one entry of a page's EXIT STATUS, ENVIRONMENT or FILES: a
// tag (a code, a variable, a path) and what it means, on the pages of the
// commands it applies to (all when applies is nil).
type manItem struct {
	tag, text string
	applies   func(c *cobra.Command) bool
}

// The exit statuses of docs/exit-codes.md: the common ones, then those of
// the commands that have their own (manCommandExits).
var manCommonExits = []manItem{
	{"0", "Success; also -V and --help.", nil},
	{"2", "Usage: an unknown command or option, a missing argument; as \"ibtool <cmd>\" also a malformed target (a bad LID, GUID, GID or directed route); through a tool's link, -h.", nil},
	{"3", "As \"ibtool <cmd>\": the result is printed but the fabric walk could not read everything; stderr lists what is missing. Through a tool's link the C tool's 0 unless --fail-incomplete.", fabricWide},
	{"255", "The operation failed: no reply, a bad MAD status, no SM, a missing device; through a tool's link also a malformed target (the C tools' IBEXIT).", nil},
	{"128+N", "Killed by signal N (130 for SIGINT, 143 for SIGTERM).", nil},
}

// manCommandExits are the codes commands have of their own, as their C
// tools or scripts have them. The man page tables are functions: built
// at package level, they would be built at every start of ibtool.
func manCommandExits() map[string][]manItem {
	exits := map[string][]manItem{
		"diagnose":         {{"1", "The sweep found errors (with --strict, warnings too); 3 wins when the sweep was incomplete.", nil}},
		"ibqueryerrors":    {{"1", "A port has counters beyond the thresholds (wins over 3).", nil}},
		"subnet_diff":      {{"1", "The two fabrics differ (wins over 3).", nil}},
		"ibfindnodesusing": {{"1", "No switch of that name (wins over 3).", nil}},
		"ibidsverify":      {{"1", "A zero or duplicate LID or GUID was found.", nil}},
		"saquery": {
			{"5", "EIO: the SA answered with an error status.", nil},
			{"22", "EINVAL: a bad LID, GID or MEMBER=VALUE argument.", nil},
			{"64", "ENONET: a node description names no node.", nil},
			{"110", "ETIMEDOUT: the SA does not answer.", nil},
		},
	}
	for _, name := range []string{"ibchecknode", "ibcheckport", "ibcheckportstate", "ibcheckportwidth", "ibcheckerrs"} {
		exits[name] = []manItem{{"100", "The check failed: \"E: <why>\" on stderr (as \"ibtool <cmd>\": \"<cmd>: <why>\"), as in python-rdma.", nil}}
	}
	return exits
}

// fabricWideCommands walk the fabric and exit 3 when the walk is
// incomplete.
var fabricWideCommands = []string{"ibnetdiscover", "iblinkinfo", "dump_fts", "ibhosts", "ibswitches", "ibrouters",
	"ibnodes", "ibprintca", "ibprintswitch", "ibprintrt", "subnet_diff", "ibqueryerrors", "ibfindnodesusing", "topology", "diagnose"}

func fabricWide(c *cobra.Command) bool { return commandIn(fabricWideCommands...)(c) }

func writeManExitStatus(b *strings.Builder, c *cobra.Command) {
	items := slices.Clone(manCommonExits)
	if c.HasParent() {
		items = append(items, manCommandExits()[c.Name()]...)
	}
	// In numeric order, 128+N last.
	code := func(it manItem) int {
		n, err := strconv.Atoi(it.tag)
		if err != nil {
			return 1 << 16
		}
		return n
	}
	slices.SortStableFunc(items, func(a, b manItem) int { return code(a) - code(b) })
	writeManItems(b, "EXIT STATUS", c, items)
	if !c.HasParent() {
		b.WriteString(".PP\n" + roffLine("Some commands have codes of their own (ibqueryerrors, subnet_diff, ibfindnodesusing and ibidsverify 1, saquery errno values, the ibcheck commands 100): see their pages.") + "\n")
	}
}

// manEnvironment are the environment variables ibtool reads.
func manEnvironment() []manItem {
	return []manItem{
		{"IBTOOL_TRANSPORT", "\"kernel\" (the umad devices) or \"ibsim\" (the simulator). Unset: the simulator when one of its variables below is set, else the kernel's umad devices when the host has them, else a running ibsim.", usesTransport},
		{"IBSIM_SOCKNAME", "The simulator's socket name (default \"sim\"), as ibsim's own clients read it.", usesTransport},
		{"IBSIM_SERVER_NAME, IBSIM_SERVER_PORT", "Reach the simulator over UDP at this host and base port (default 7070).", usesTransport},
		{"SIM_HOST", "The simulated node to attach to (its id or description).", usesTransport},
		{"SIM_SET_ISSM", "When set, attach to the simulator as a subnet manager.", usesTransport},
		{"IBTOOL_SIM_CONNECT_TIMEOUT", "How long to wait for the simulator to accept a client (seconds, or a duration such as 90s); unset or 0 waits as long as it takes, as the C tools do.", usesTransport},
		{"IBTOOL_LIBIBVERBS", "The verbs library to load in place of libibverbs.so.1.", commandIn("ibv_devices", "ibv_devinfo", "rdma_bw")},
		{"IBPATH", "Through the link of a node list, the directory the failure message names ibnetdiscover in, as the scripts do (default /usr/sbin).", commandIn("ibhosts", "ibswitches", "ibrouters", "ibnodes")},
		{CompletionCacheEnv, "The fabric cache whose node names shell completion offers when the command line gives no --load-cache.", func(c *cobra.Command) bool {
			return !c.HasParent() || c.Name() == "completion"
		}},
		{"GOMAXPROCS", "When set, the number of CPUs ibtool's Go code runs on; by default a command other than the exporter uses one.", nil},
	}
}

// manFiles are the files ibtool reads or writes on its own.
func manFiles() []manItem {
	return []manItem{
		{cmdutil.DefaultConfigPath, "Defaults for the common options (infiniband-diags' format: key=value lines); -z names another.", hasFlag("config")},
		{nodename.DefaultPath, "The node name map, read when --node-name-map names none, for the names printed and the node names a target may be given by.", func(c *cobra.Command) bool {
			return hasFlag("node-name-map")(c) || nodeArgs(c.Name()) != nil
		}},
		{counters.DefaultThresholdFile, "Error counter thresholds; --threshold-file names another.", hasFlag("threshold-file")},
		{ibidsverify.IdsCacheDir, "ibidsverify's copy of the fabric (ibnetdiscover -g output), written on first use or with -R.", commandIn("ibidsverify")},
		{"fabric caches", "ibnetdiscover --cache FILE writes the fabric to FILE; --load-cache FILE reads it in place of a walk; $" + CompletionCacheEnv + " names one for completion.", func(c *cobra.Command) bool {
			return hasFlag("load-cache")(c) || hasFlag("cache")(c) || c.Name() == "completion"
		}},
		{"/dev/infiniband/umad*, /sys/class/infiniband*", "The kernel's umad devices and the local CAs' and ports' attributes.", usesTransport},
		{"libibverbs.so.1", "rdma-core's verbs library, loaded when the command runs.", commandIn("ibv_devices", "ibv_devinfo", "rdma_bw")},
	}
}

// usesTransport: the command reaches the fabric or the local CAs.
func usesTransport(c *cobra.Command) bool {
	return hasFlag("Ca")(c) || c.Name() == "ibstat" || c.Name() == "ibstatus"
}

// hasFlag applies to the pages of the commands with that flag (and
// ibtool.8).
func hasFlag(name string) func(c *cobra.Command) bool {
	return func(c *cobra.Command) bool { return !c.HasParent() || c.Flags().Lookup(name) != nil }
}

// commandIn applies to the pages of the commands named (and ibtool.8).
func commandIn(names ...string) func(c *cobra.Command) bool {
	return func(c *cobra.Command) bool { return !c.HasParent() || slices.Contains(names, c.Name()) }
}

// writeManItems writes the section of the items that apply to c, none
// when none does.
func writeManItems(b *strings.Builder, section string, c *cobra.Command, items []manItem) {
	head := false
	for _, it := range items {
		if it.applies != nil && !it.applies(c) {
			continue
		}
		if !head {
			fmt.Fprintf(b, ".SH %s\n", section)
			head = true
		}
		fmt.Fprintf(b, ".TP\n\\fB%s\\fR\n%s\n", roffEscape(it.tag), roffLine(it.text))
	}
}
