// Package cli is the root of ibtool's command tree: it dispatches the
// command line (or the name of the symlink ibtool runs as) to one command
// of the table in root.go, built alone, and holds what is about the tree
// as a whole: completion, the tool links and the man pages. Each command
// is a package under cli/cmd; what they share is in cli/cmdutil and
// cli/render (docs/architecture.md).
package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmd/checklftbalance"
	"github.com/ibtool/ibtool/internal/cli/cmd/decodemad"
	"github.com/ibtool/ibtool/internal/cli/cmd/diagnose"
	"github.com/ibtool/ibtool/internal/cli/cmd/exporter"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibaddr"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibcacheedit"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibcc"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibcheck"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibfindnodesusing"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibidsverify"
	"github.com/ibtool/ibtool/internal/cli/cmd/iblinkinfo"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibnetdiscover"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibping"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibportstate"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibqueryerrors"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibroute"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibstat"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibswportwatch"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibsysstat"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibtracert"
	"github.com/ibtool/ibtool/internal/cli/cmd/nodelists"
	"github.com/ibtool/ibtool/internal/cli/cmd/perfquery"
	"github.com/ibtool/ibtool/internal/cli/cmd/query"
	"github.com/ibtool/ibtool/internal/cli/cmd/saquery"
	"github.com/ibtool/ibtool/internal/cli/cmd/setguid"
	"github.com/ibtool/ibtool/internal/cli/cmd/setnodedesc"
	"github.com/ibtool/ibtool/internal/cli/cmd/setportstate"
	"github.com/ibtool/ibtool/internal/cli/cmd/sminfo"
	"github.com/ibtool/ibtool/internal/cli/cmd/smpdump"
	"github.com/ibtool/ibtool/internal/cli/cmd/smpquery"
	"github.com/ibtool/ibtool/internal/cli/cmd/subnetdiff"
	"github.com/ibtool/ibtool/internal/cli/cmd/topology"
	"github.com/ibtool/ibtool/internal/cli/cmd/vendstat"
	"github.com/ibtool/ibtool/internal/cli/cmd/verbs"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/procs"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// commandBuilder makes one command. Its name is known before it is built:
// a run builds only the command it runs, since building all 60 with their
// flags was a fifth of the start-up time of every command. A family's
// builder makes the command of the name it is given.
type commandBuilder struct {
	name  string
	build func(env *cmdutil.Env, name string) *cobra.Command
}

// commandBuilders is every command ibtool has, by name.
var commandBuilders = []commandBuilder{
	{"check_lft_balance", checklftbalance.NewCmd},
	{"decode_mad", decodemad.NewCmd},
	{"diagnose", diagnose.NewCmd},
	{"dump_fts", ibroute.NewCmd},
	{"dump_lfts", ibroute.NewCmd},
	{"dump_mfts", ibroute.NewCmd},
	{"exporter", exporter.NewCmd},
	{"ibaddr", ibaddr.NewCmd},
	{"ibcacheedit", ibcacheedit.NewCmd},
	{"ibccconfig", ibcc.NewConfigCmd},
	{"ibccquery", ibcc.NewQueryCmd},
	{"ibcheckerrors", ibcheck.NewCmd},
	{"ibcheckerrs", ibcheck.NewCmd},
	{"ibchecknet", ibcheck.NewCmd},
	{"ibchecknode", ibcheck.NewCmd},
	{"ibcheckport", ibcheck.NewCmd},
	{"ibcheckportstate", ibcheck.NewCmd},
	{"ibcheckportwidth", ibcheck.NewCmd},
	{"ibcheckstate", ibcheck.NewCmd},
	{"ibcheckwidth", ibcheck.NewCmd},
	{"ibclearcounters", ibcheck.NewCmd},
	{"ibclearerrors", ibcheck.NewCmd},
	{"ibdatacounters", ibcheck.NewCmd},
	{"ibdatacounts", ibcheck.NewCmd},
	{"ibfindnodesusing", ibfindnodesusing.NewCmd},
	{"ibhosts", nodelists.NewCmd},
	{"ibidsverify", ibidsverify.NewCmd},
	{"iblinkinfo", iblinkinfo.NewCmd},
	{"ibnetdiscover", ibnetdiscover.NewCmd},
	{"ibnodes", nodelists.NewCmd},
	{"ibping", ibping.NewCmd},
	{"ibportstate", ibportstate.NewCmd},
	{"ibprintca", nodelists.NewIbprintCmd},
	{"ibprintrt", nodelists.NewIbprintCmd},
	{"ibprintswitch", nodelists.NewIbprintCmd},
	{"ibqueryerrors", ibqueryerrors.NewCmd},
	{"ibroute", ibroute.NewCmd},
	{"ibrouters", nodelists.NewCmd},
	{"ibstat", ibstat.NewCmd},
	{"ibstatus", ibstat.NewCmd},
	{"ibswitches", nodelists.NewCmd},
	{"ibswportwatch", ibswportwatch.NewCmd},
	{"ibsysstat", ibsysstat.NewCmd},
	{"ibtracert", ibtracert.NewCmd},
	{"ibv_devices", verbs.NewDevicesCmd},
	{"ibv_devinfo", verbs.NewDevinfoCmd},
	{"init_all_ports", setportstate.NewInitAllPortsCmd},
	{"perfquery", perfquery.NewCmd},
	{"query", query.NewCmd},
	{"rdma_bw", verbs.NewRdmaBwCmd},
	{"saquery", saquery.NewCmd},
	{"set_guid", setguid.NewCmd},
	{"set_nodedesc", setnodedesc.NewCmd},
	{"set_port_state", setportstate.NewCmd},
	{"sminfo", sminfo.NewCmd},
	{"smpdump", smpdump.NewCmd},
	{"smpquery", smpquery.NewCmd},
	{"subnet_diff", subnetdiff.NewCmd},
	{"topology", topology.NewCmd},
	{"vendstat", vendstat.NewCmd},
}

// registered tells whether a command of that name is registered.
func registered(name string) bool {
	for _, b := range commandBuilders {
		if b.name == name {
			return true
		}
	}
	return false
}

// Main runs ibtool with the process arguments and returns the exit code.
// When args[0] names a registered command (a symlink such as "smpdump"), that
// command runs with the remaining arguments, busybox style.
func Main(args []string, io cmdutil.IO) int {
	return run(args, &cmdutil.Env{IO: io, Transport: umad.DefaultOpener(), Process: true})
}

// helpAsked tells a command line that asks only for help: it runs no
// MAD, so it keeps its CPUs (giving one back costs up to 60 page faults).
func helpAsked(argv []string) bool {
	for _, a := range argv {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// run is Main with the environment given, for tests.
func run(args []string, env *cmdutil.Env) int {
	argv := args[1:]
	name := filepath.Base(args[0])
	link := !strings.HasPrefix(name, "ibtool")
	if !link && len(argv) > 0 {
		name = argv[0]
	}
	if env.Process && registered(name) && !helpAsked(argv) {
		// Before the command is built: giving a CPU back releases its
		// allocation caches, and the fewer the command's start-up
		// filled, the cheaper (5 ms of ibqueryerrors' start-up when
		// done after the flags were parsed). PersistentPreRun catches
		// a command named after flags.
		procs.OneProc(name)
	}
	root := newRoot(env, name)
	if link {
		if findCommand(root, name) == nil {
			root = newRoot(env, "") // every name, for the message
			// A link under a name we do not know: running ibtool's own
			// command line in its place would surprise a script.
			fmt.Fprintf(env.IO.Err, "ibtool: invoked as %q, which is not a tool ibtool knows; it knows: %s\n"+
				"Link ibtool under one of those names, or run \"ibtool <command>\".\n",
				name, strings.Join(linkNames(root), " "))
			return cmdutil.ExitUsage
		}
		if len(argv) > 0 && completionRequest(argv[0]) {
			// A completion script asks "perfquery __complete ...".
			argv = append([]string{argv[0], name}, argv[1:]...)
		} else {
			env.Compat = true
			argv = append([]string{name}, argv...)
		}
	}
	root.SetArgs(argv)
	env.Args = argv
	cmd, err := root.ExecuteC()
	cmdutil.PrintStats(env)
	if env.CompatHelp || env.UnknownHelp {
		return cmdutil.ExitUsage // the C tools print usage on stderr and exit 2
	}
	if err == nil || errors.Is(err, cmdutil.ErrVersionShown) {
		return cmdutil.ExitOK
	}
	code := cmdutil.ExitCodeOf(err)
	if !errors.Is(err, cmdutil.ErrSilent) {
		reportError(env, cmd, err, code)
	}
	return code
}

func reportError(env *cmdutil.Env, cmd *cobra.Command, err error, code int) {
	name := "ibtool"
	if cmd != nil && cmd.HasParent() {
		name = cmd.Name()
	}
	err = shortArgsError{err, env.Args}
	if code == cmdutil.ExitUsage {
		fmt.Fprintf(env.IO.Err, "%s: %v\n", name, err)
		if cmd != nil {
			fmt.Fprintf(env.IO.Err, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return
	}
	if env.Compat {
		// The C tools' IBEXIT wording, so log scrapers keep matching.
		fmt.Fprintf(env.IO.Err, "%s: iberror: failed: %v\n", name, err)
	} else {
		fmt.Fprintf(env.IO.Err, "%s: %v\n", name, err)
	}
	var d rpc.Detailer
	if errors.As(err, &d) {
		fmt.Fprint(env.IO.Err, d.Detail(env.Verbosity))
	}
}

// longArg is the length beyond which an argument is shortened in
// messages: a 100,000-character argument echoed by each layer that adds
// its context made one error line of 400 KB.
const longArg = 64

// shortArgsError prints err with every argument longer than longArg
// shortened to its start, its end and its length.
type shortArgsError struct {
	err  error
	args []string
}

func (e shortArgsError) Error() string { return shortenArgs(e.err.Error(), e.args) }
func (e shortArgsError) Unwrap() error { return e.err }

func shortenArgs(msg string, args []string) string {
	for _, a := range args {
		if len(a) <= longArg || !strings.Contains(msg, a) {
			continue
		}
		r := []rune(a)
		if len(r) <= longArg { // long in bytes only
			continue
		}
		short := fmt.Sprintf("%s...%s (%d characters)", string(r[:24]), string(r[len(r)-8:]), len(r))
		msg = strings.ReplaceAll(msg, a, short)
	}
	return msg
}

// newRoot builds the command tree: only the command named only when that
// is a registered command, else every command.
func newRoot(env *cmdutil.Env, only string) *cobra.Command {
	root := &cobra.Command{
		Use:           "ibtool",
		Short:         "InfiniBand fabric diagnostics in one binary",
		Long:          "ibtool discovers InfiniBand fabrics, queries nodes and counters and checks links.\nEach command accepts the options of its infiniband-diags namesake and adds --json.",
		Version:       cmdutil.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(env.IO.Out)
	root.SetErr(env.IO.Err)
	root.SetIn(env.IO.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	})
	// "ibtool completion" is ours (completion.go): one line of help, and a
	// wrong shell is a usage error.
	root.CompletionOptions.DisableDefaultCmd = true
	// Through a tool's symlink, -h behaves as in the C tools: usage on
	// stderr, exit 2. "ibtool help" and "ibtool <cmd> -h" print to stdout.
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if unknown := unknownCommand(c, args); unknown != "" {
			// cobra would print the general help and succeed, and a script
			// probing for a command would think it exists.
			fmt.Fprintf(env.IO.Err, "ibtool: unknown command %q\nRun 'ibtool --help' for usage.\n", unknown)
			env.UnknownHelp = true
			return
		}
		if env.Compat {
			c.SetOut(env.IO.Err)
			env.CompatHelp = true
		}
		help(c, args)
	})
	root.SetHelpCommand(newHelpCmd())
	root.PersistentPreRun = func(c *cobra.Command, _ []string) {
		if env.Process {
			procs.OneProc(c.Name())
		}
	}
	for _, b := range buildersFor(only) {
		root.AddCommand(b.build(env, b.name))
	}
	addCompletions(root, env)
	// Unknown commands are usage errors (exit 2), as in the C tools.
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdutil.UsageErrorf("unknown command %q", args[0])
		}
		return nil
	}
	root.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
	return root
}

// buildersFor is the one registered command named only, or every command
// (help, completion and unknown names need them all).
func buildersFor(only string) []commandBuilder {
	for _, b := range commandBuilders {
		if b.name == only {
			return []commandBuilder{b}
		}
	}
	return append([]commandBuilder{{"install-links", newInstallLinksCmd}, {"completion", newCompletionCmd}}, commandBuilders...)
}

// newHelpCmd is "ibtool help [command]": cobra's, except that an unknown
// command is a usage error rather than a topic it prints nothing for.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			target, _, err := c.Root().Find(args)
			if err != nil || len(args) > 0 && target == c.Root() {
				return cmdutil.UsageErrorf("unknown command %q", strings.Join(args, " "))
			}
			return target.Help()
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, sub := range c.Root().Commands() {
				if len(args) == 0 && sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
}

// unknownCommand is the command name that help was asked for on the root
// but that names no command, "" otherwise. Flags are not names.
func unknownCommand(c *cobra.Command, args []string) string {
	if c.HasParent() {
		return ""
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if sub, _, err := c.Find([]string{a}); err != nil || sub == c {
			return a
		}
		return ""
	}
	return ""
}

func findCommand(root *cobra.Command, name string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name && c.Annotations[cmdutil.AnnotLink] == "true" {
			return c
		}
	}
	return nil
}

// linkNames lists the commands that install-links creates symlinks for.
func linkNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.Annotations[cmdutil.AnnotLink] == "true" {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	return names
}
