// Package cli is ibtool's command tree: it parses arguments, calls the
// library packages and renders their results as text or JSON.
package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// Version is the ibtool release, overridden at build time with
// -ldflags "-X github.com/ibtool/ibtool/internal/cli.Version=...".
var Version = "0.1.0-dev"

// Env is what every command gets: its streams, how it was invoked and the
// transport to use. Tests replace the fields to run commands in-process.
type Env struct {
	IO IO
	// Compat is true when ibtool runs through a symlink named like the C tool;
	// messages then use the C tool's wording and name.
	Compat bool
	// Transport opens local ports and lists local CAs.
	Transport umad.Opener
	// verbosity is the running command's -v count, for error details.
	verbosity int
	// engines are the MAD engines opened with --stats.
	engines []*rpc.Engine
	// compatHelp is set when -h printed a tool's usage in compat use.
	compatHelp bool
	// unknownHelp is set when help was asked for a command that does not
	// exist ("ibtool nosuch --help", "ibtool help nosuch").
	unknownHelp bool
	// args are the command line, to shorten long ones in messages.
	args []string
	// process is true when the command runs as the process (Main), not
	// in a test: it may then set process-wide state (procs.go).
	process bool
}

// commandBuilder makes one command. Its name is known before it is built:
// a run builds only the command it runs, since building all 60 with their
// flags was a fifth of the start-up time of every command.
type commandBuilder struct {
	name  string
	build func(*Env) *cobra.Command
}

// commandBuilders is filled by each command file's init function.
var commandBuilders []commandBuilder

// registered tells whether a command of that name is registered.
func registered(name string) bool {
	for _, b := range commandBuilders {
		if b.name == name {
			return true
		}
	}
	return false
}

// register adds a command; name must be the built command's Name()
// (TestRegisteredNames checks).
func register(name string, build func(*Env) *cobra.Command) {
	commandBuilders = append(commandBuilders, commandBuilder{name, build})
}

// Main runs ibtool with the process arguments and returns the exit code.
// When args[0] names a registered command (a symlink such as "smpdump"), that
// command runs with the remaining arguments, busybox style.
func Main(args []string, io IO) int {
	return run(args, &Env{IO: io, Transport: umad.DefaultOpener(), process: true})
}

// run is Main with the environment given, for tests.
func run(args []string, env *Env) int {
	argv := args[1:]
	name := filepath.Base(args[0])
	link := !strings.HasPrefix(name, "ibtool")
	if !link && len(argv) > 0 {
		name = argv[0]
	}
	if env.process && registered(name) {
		// Before the command is built: giving a CPU back releases its
		// allocation caches, and the fewer the command's start-up
		// filled, the cheaper (5 ms of ibqueryerrors' start-up when
		// done after the flags were parsed). PersistentPreRun catches
		// a command named after flags.
		oneProc(name)
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
			return ExitUsage
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
	env.args = argv
	cmd, err := root.ExecuteC()
	printStats(env)
	if env.compatHelp || env.unknownHelp {
		return ExitUsage // the C tools print usage on stderr and exit 2
	}
	if err == nil || errors.Is(err, errVersionShown) {
		return ExitOK
	}
	code := exitCodeOf(err)
	if !errors.Is(err, errSilent) {
		reportError(env, cmd, err, code)
	}
	return code
}

// errSilent marks an error whose message has already been printed.
var errSilent = errors.New("already reported")

// errVersionShown ends a command after -V printed its version.
var errVersionShown = errors.New("version shown")

func reportError(env *Env, cmd *cobra.Command, err error, code int) {
	name := "ibtool"
	if cmd != nil && cmd.HasParent() {
		name = cmd.Name()
	}
	err = shortArgsError{err, env.args}
	if code == ExitUsage {
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
		fmt.Fprint(env.IO.Err, d.Detail(env.verbosity))
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
func newRoot(env *Env, only string) *cobra.Command {
	root := &cobra.Command{
		Use:           "ibtool",
		Short:         "InfiniBand fabric diagnostics in one binary",
		Long:          "ibtool discovers InfiniBand fabrics, queries nodes and counters and checks links.\nEach command accepts the options of its infiniband-diags namesake and adds --json.",
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(env.IO.Out)
	root.SetErr(env.IO.Err)
	root.SetIn(env.IO.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitUsage, Err: err}
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
			env.unknownHelp = true
			return
		}
		if env.Compat {
			c.SetOut(env.IO.Err)
			env.compatHelp = true
		}
		help(c, args)
	})
	root.SetHelpCommand(newHelpCmd())
	root.PersistentPreRun = func(c *cobra.Command, _ []string) {
		if env.process {
			oneProc(c.Name())
		}
	}
	for _, b := range buildersFor(only) {
		root.AddCommand(b.build(env))
	}
	addCompletions(root, env)
	// Unknown commands are usage errors (exit 2), as in the C tools.
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q", args[0])
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
				return usageErrorf("unknown command %q", strings.Join(args, " "))
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
		if c.Name() == name && c.Annotations[annotLink] == "true" {
			return c
		}
	}
	return nil
}

// annotLink marks commands that get a symlink (every tool-named command).
const annotLink = "link"

// linkNames lists the commands that install-links creates symlinks for.
func linkNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.Annotations[annotLink] == "true" {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	return names
}

// toolCommand returns a cobra command preset the way every tool command
// wants it: linkable, flag errors as usage errors, interspersed arguments.
func toolCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:         use,
		Short:       short,
		Annotations: map[string]string{annotLink: "true"},
	}
}
