package cmdutil

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Common holds infiniband-diags' common options (ibdiag_common.c). Each
// command adds the subset it wants with AddCommonFlags, leaving out the
// letters it redefines, exactly like ibdiag_process_opts' exclude string.
type Common struct {
	Config   string
	CA       string
	Port     string
	Direct   bool
	Lid      bool
	Guid     bool
	Timeout  string
	SMPort   string
	ShowKeys bool
	MKey     string
	PKeyIdx  int
	Errors   bool
	Verbose  int
	Debug    int
	Version  bool
	JSON     bool
	Stats    bool
	// Retries is --retries (or ibdiag.conf's retries=): the resends of
	// each MAD, in place of the command's default.
	Retries string
	// FailIncomplete makes a tool run through its symlink exit
	// ExitIncomplete, as `ibtool <cmd>` does, when its walk missed some.
	FailIncomplete bool

	// From ibdiag.conf only.
	SAKey  string
	MlxEPI bool
}

type commonFlag struct {
	short, long string
	add         func(fs *pflag.FlagSet, c *Common, short, long string)
}

func strFlag(get func(*Common) *string, usage string) func(*pflag.FlagSet, *Common, string, string) {
	return func(fs *pflag.FlagSet, c *Common, short, long string) { fs.StringVarP(get(c), long, short, "", usage) }
}

func boolFlag(get func(*Common) *bool, usage string) func(*pflag.FlagSet, *Common, string, string) {
	return func(fs *pflag.FlagSet, c *Common, short, long string) { fs.BoolVarP(get(c), long, short, false, usage) }
}

func countFlag(get func(*Common) *int, usage string) func(*pflag.FlagSet, *Common, string, string) {
	return func(fs *pflag.FlagSet, c *Common, short, long string) { fs.CountVarP(get(c), long, short, usage) }
}

// commonFlags is the table of ibdiag_common.c's common_opts, in its order.
var commonFlags = []commonFlag{
	{"z", "config", strFlag(func(c *Common) *string { return &c.Config }, "use config file, default: /etc/infiniband-diags/ibdiag.conf")},
	{"C", "Ca", strFlag(func(c *Common) *string { return &c.CA }, "Ca name to use")},
	{"P", "Port", strFlag(func(c *Common) *string { return &c.Port }, "Ca port number to use")},
	{"D", "Direct", boolFlag(func(c *Common) *bool { return &c.Direct }, "use Direct address argument")},
	{"L", "Lid", boolFlag(func(c *Common) *bool { return &c.Lid }, "use LID address argument")},
	{"G", "Guid", boolFlag(func(c *Common) *bool { return &c.Guid }, "use GUID address argument")},
	{"t", "timeout", strFlag(func(c *Common) *string { return &c.Timeout }, "timeout in ms")},
	{"s", "sm_port", strFlag(func(c *Common) *string { return &c.SMPort }, "SM port lid")},
	{"K", "show_keys", boolFlag(func(c *Common) *bool { return &c.ShowKeys }, "display security keys in output")},
	{"y", "m_key", strFlag(func(c *Common) *string { return &c.MKey }, "M_Key to use in request")},
	{"Y", "pkey-idx", func(fs *pflag.FlagSet, c *Common, short, long string) {
		fs.IntVarP(&c.PKeyIdx, long, short, 0, "P_Key index to use for SA/GMP MADs")
	}},
	{"e", "errors", boolFlag(func(c *Common) *bool { return &c.Errors }, "show send and receive errors")},
	{"v", "verbose", countFlag(func(c *Common) *int { return &c.Verbose }, "increase verbosity level")},
	{"d", "debug", countFlag(func(c *Common) *int { return &c.Debug }, "raise debug level")},
	{"V", "version", boolFlag(func(c *Common) *bool { return &c.Version }, "show version")},
}

// SetupCommon gives a command the common flags whose letters are not in
// exclude, plus --json, and a pre-run step that answers -V and fills unset
// options from ibdiag.conf.
func SetupCommon(env *Env, cmd *cobra.Command, c *Common, exclude string) {
	AddCommonFlags(cmd.Flags(), c, exclude)
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		env.Verbosity = c.Verbose
		if c.Version {
			if err := printVersion(env, cmd); err != nil {
				return err
			}
			return ErrVersionShown
		}
		return ApplyDiagConfig(cmd.Flags(), c)
	}
}

// AddCommonFlags adds every common flag whose letter is not in exclude, and
// --json. -h/--help is cobra's own.
func AddCommonFlags(fs *pflag.FlagSet, c *Common, exclude string) {
	for _, f := range commonFlags {
		if strings.Contains(exclude, f.short) {
			continue
		}
		f.add(fs, c, f.short, f.long)
	}
	fs.BoolVar(&c.JSON, "json", false, "print the result as JSON")
	fs.BoolVar(&c.Stats, "stats", false, "print how many MADs were sent, retried and lost to stderr at the end")
	fs.StringVar(&c.Retries, "retries", "", "resends of a MAD that gets no reply (default: the command's, as in infiniband-diags; more on a lossy fabric)")
	fs.BoolVar(&c.FailIncomplete, "fail-incomplete", false, "through a tool's symlink, exit 3 as 'ibtool <cmd>' does when the fabric walk missed something")
	fs.SortFlags = false
}

// maxRetries bounds --retries: beyond it a dead destination stalls a
// command for minutes.
const maxRetries = 100

// retries returns the command's resends: --retries if given, else def
// (negative for none).
func (c *Common) RetryCount(def int) (int, error) {
	if c.Retries == "" {
		return def, nil
	}
	n, err := strconv.Atoi(c.Retries)
	if err != nil || n < 0 || n > maxRetries {
		return 0, UsageErrorf("invalid --retries %q: want a number of resends from 0 to %d", c.Retries, maxRetries)
	}
	if n == 0 {
		return -1, nil // the engine's "none"
	}
	return n, nil
}

// DefaultTimeoutMS is libibmad's default MAD timeout.
const DefaultTimeoutMS = 1000

// TimeoutMS validates -t the way the C tools do and returns the timeout in
// milliseconds (def when -t was not given).
func (c *Common) TimeoutMS(def int) (int, error) {
	if c.Timeout == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(c.Timeout, 0, 32)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("Invalid timeout %q.  Timeout requires a positive integer value < 2147483647.", c.Timeout)
	}
	return int(n), nil
}

// ValuesAnnotation marks a flag whose values are a fixed set, for its
// completion (SetFlagValues).
const ValuesAnnotation = "ibtool_values"

// SetFlagValues declares the values flag name takes: the completion
// offers them.
func SetFlagValues(fs *pflag.FlagSet, name string, values ...string) {
	if err := fs.SetAnnotation(name, ValuesAnnotation, values); err != nil {
		panic(err) // a flag the command did not define: a bug
	}
}
