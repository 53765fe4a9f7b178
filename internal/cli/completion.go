package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cli/cmd/smpquery"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/umad"
)

// CompletionCacheEnv names the fabric cache that completes node names for
// commands without --load-cache, or when it is not given.
const CompletionCacheEnv = "IBTOOL_CACHE"

// newCompletionCmd prints cobra's completion script for a shell. The
// scripts call "ibtool __complete", so they complete commands, flags and,
// where a command takes a node, the node names of a fabric cache.
func newCompletionCmd(env *cmdutil.Env, _ string) *cobra.Command {
	shells := map[string]func(c *cobra.Command, w io.Writer) error{
		"bash": genBashCompletion,
		"zsh":  func(c *cobra.Command, w io.Writer) error { return c.GenZshCompletion(w) },
		"fish": func(c *cobra.Command, w io.Writer) error { return c.GenFishCompletion(w, true) },
	}
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script for bash, zsh or fish",
		Long: `completion prints a script that makes the shell complete ibtool's commands,
their flags, the values of --format, -C (the CAs of the host's transport) and
-P (their port numbers) and, where a command takes a node (perfquery, ibroute, ibtracert,
smpquery ...), node names: the node-name-map names or NodeDescription host
parts of the fabric cache given with --load-cache, or else of the cache named
by $` + CompletionCacheEnv + ` (write one with "ibtool ibnetdiscover --cache FILE").

  bash:  ibtool completion bash > /etc/bash_completion.d/ibtool
  zsh:   ibtool completion zsh > "${fpath[1]}/_ibtool"
  fish:  ibtool completion fish > ~/.config/fish/completions/ibtool.fish`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.UsageErrorf("give one shell: bash, zsh or fish")
			}
			if shells[args[0]] == nil {
				return cmdutil.UsageErrorf("unknown shell %q: bash, zsh or fish", args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return shells[args[0]](c.Root(), env.IO.Out)
		},
	}
}

// genBashCompletion is cobra's bash script plus the classic tool names
// (perfquery, smpquery ...): run through a link, "perfquery __complete"
// completes as "ibtool __complete perfquery" (see run). The names
// complete only where they run ibtool: where PATH finds the C tool first,
// asking it to "__complete" would run it.
func genBashCompletion(root *cobra.Command, w io.Writer) error {
	if err := root.GenBashCompletionV2(w, true); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, `
# The classic tool names, where PATH finds them linked to ibtool.
__ibtool_link_complete() {
    local bin
    bin=$(type -P "${COMP_WORDS[0]}") || return 0
    [[ $(readlink -f "$bin") == */ibtool ]] || return 0
    __start_ibtool "$@"
}
complete -o default -F __ibtool_link_complete %s
`, strings.Join(linkNames(root), " "))
	return err
}

// completionRequest is cobra's hidden command that the scripts call.
func completionRequest(arg string) bool {
	return arg == cobra.ShellCompRequestCmd || arg == cobra.ShellCompNoDescRequestCmd
}

// nodeArgs are the positional arguments (counted from 0) of a command
// that take a node name: those whose target parsing accepts names; nil
// for none.
func nodeArgs(command string) []int {
	switch command {
	case "ibfindnodesusing", "ibping", "ibprintca", "ibprintrt", "ibprintswitch", "ibroute", "ibsysstat", "perfquery", "sminfo":
		return []int{0}
	case "ibtracert":
		return []int{0, 1}
	case "smpquery":
		return []int{1}
	}
	return nil
}

// addCompletions gives the commands that take nodes (and smpquery's
// operations) their argument completion, and the flags whose values are a
// known set theirs (see addFlagCompletions).
func addCompletions(root *cobra.Command, env *cmdutil.Env) {
	addFlagCompletions(root, env)
	for _, c := range root.Commands() {
		positions := nodeArgs(c.Name())
		if positions == nil || c.ValidArgsFunction != nil {
			continue
		}
		c.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			switch {
			case slices.Contains(positions, len(args)):
				return completeNodeNames(c, toComplete), cobra.ShellCompDirectiveNoFileComp
			case c.Name() == "smpquery" && len(args) == 0:
				var ops []string
				for _, op := range smpquery.SmpOps {
					if strings.HasPrefix(strings.ToLower(op.Name), strings.ToLower(toComplete)) {
						ops = append(ops, op.Name)
					}
				}
				return ops, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// completeNodeNames lists the names that name exactly one node of the
// cache (the command's --load-cache, else $IBTOOL_CACHE): its
// node-name-map name, or the first word of its NodeDescription. Nothing
// when there is no cache or it does not load: completion never prints
// errors.
func completeNodeNames(c *cobra.Command, prefix string) []string {
	path := flagValue(c, "load-cache")
	if path == "" {
		path = os.Getenv(CompletionCacheEnv)
	}
	if path == "" {
		return nil
	}
	fab, err := query.LoadCache(path)
	if err != nil {
		return nil
	}
	names := nodename.Open(flagValue(c, "node-name-map"), io.Discard)
	count := map[string]int{}
	for _, n := range fab.SortedByGUID() {
		name, ok := names.Lookup(n.GUID)
		if !ok {
			name, _, _ = strings.Cut(nodename.CleanDesc(n.Desc()), " ")
		}
		if name != "" && strings.HasPrefix(name, prefix) {
			count[name]++
		}
	}
	var out []string
	for name, k := range count {
		if k == 1 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// flagValue is the value of a command's flag, "" when it has no such flag.
func flagValue(c *cobra.Command, name string) string {
	if f := c.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// addFlagCompletions completes flag values where the set is known, for
// every command at once: a flag's declared values (cmdutil.SetFlagValues, e.g.
// topology --format), the transport's CA names for -C/--Ca, and for
// -P/--Port the port numbers of the CA given with -C (of every CA
// without it).
func addFlagCompletions(root *cobra.Command, env *cmdutil.Env) {
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			var complete cobra.CompletionFunc
			switch values := f.Annotations[cmdutil.ValuesAnnotation]; {
			case values != nil:
				complete = cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
			case f.Name == "Ca":
				complete = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					var names []string
					for _, ca := range localCAs(env) {
						names = append(names, ca.Name)
					}
					return names, cobra.ShellCompDirectiveNoFileComp
				}
			case f.Name == "Port":
				complete = func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
					return localPorts(env, flagValue(c, "Ca")), cobra.ShellCompDirectiveNoFileComp
				}
			default:
				return
			}
			// An error means a completion is registered already.
			_ = c.RegisterFlagCompletionFunc(f.Name, complete)
		})
	}
}

// localCAs are the transport's CAs, those it could read; none when it
// has none or fails (completion prints no errors).
func localCAs(env *cmdutil.Env) []umad.CA {
	if env == nil || env.Transport == nil {
		return nil
	}
	cas, _ := env.Transport.CAs()
	return cas
}

// localPorts are the port numbers of the CA named ca, or of every CA
// when ca is "", in order and without repeats.
func localPorts(env *cmdutil.Env, ca string) []string {
	var nums []int
	for _, c := range localCAs(env) {
		if ca != "" && c.Name != ca {
			continue
		}
		for _, p := range c.Ports {
			if !slices.Contains(nums, p.Num) {
				nums = append(nums, p.Num)
			}
		}
	}
	slices.Sort(nums)
	var out []string
	for _, n := range nums {
		out = append(out, strconv.Itoa(n))
	}
	return out
}
