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

// commonFlag is one common option: its letter, name and usage, and the
// field of Common it sets. Every entry is a literal, so the table is data
// the linker lays out, not closures every start builds.
type commonFlag struct {
	short, long, usage string
	field              func(c *Common) any // *string, *bool or *int
	count              bool                // an *int that counts repeats (-v -v)
}

// add adds f to fs, setting its field of c.
func (f commonFlag) add(fs *pflag.FlagSet, c *Common) {
	switch p := f.field(c).(type) {
	case *string:
		fs.StringVarP(p, f.long, f.short, "", f.usage)
	case *bool:
		fs.BoolVarP(p, f.long, f.short, false, f.usage)
	case *int:
		if f.count {
			fs.CountVarP(p, f.long, f.short, f.usage)
		} else {
			fs.IntVarP(p, f.long, f.short, 0, f.usage)
		}
	}
}

// commonFlags is the table of ibdiag_common.c's common_opts, in its order.
var commonFlags = []commonFlag{
	{short: "z", long: "config", usage: "use config file, default: /etc/infiniband-diags/ibdiag.conf", field: func(c *Common) any { return &c.Config }},
	{short: "C", long: "Ca", usage: "Ca name to use", field: func(c *Common) any { return &c.CA }},
	{short: "P", long: "Port", usage: "Ca port number to use", field: func(c *Common) any { return &c.Port }},
	{short: "D", long: "Direct", usage: "use Direct address argument", field: func(c *Common) any { return &c.Direct }},
	{short: "L", long: "Lid", usage: "use LID address argument", field: func(c *Common) any { return &c.Lid }},
	{short: "G", long: "Guid", usage: "use GUID address argument", field: func(c *Common) any { return &c.Guid }},
	{short: "t", long: "timeout", usage: "timeout in ms", field: func(c *Common) any { return &c.Timeout }},
	{short: "s", long: "sm_port", usage: "SM port lid", field: func(c *Common) any { return &c.SMPort }},
	{short: "K", long: "show_keys", usage: "display security keys in output", field: func(c *Common) any { return &c.ShowKeys }},
	{short: "y", long: "m_key", usage: "M_Key to use in request", field: func(c *Common) any { return &c.MKey }},
	{short: "Y", long: "pkey-idx", usage: "P_Key index to use for SA/GMP MADs", field: func(c *Common) any { return &c.PKeyIdx }},
	{short: "e", long: "errors", usage: "show send and receive errors", field: func(c *Common) any { return &c.Errors }},
	{short: "v", long: "verbose", usage: "increase verbosity level", field: func(c *Common) any { return &c.Verbose }, count: true},
	{short: "d", long: "debug", usage: "raise debug level", field: func(c *Common) any { return &c.Debug }, count: true},
	{short: "V", long: "version", usage: "show version", field: func(c *Common) any { return &c.Version }},
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
		f.add(fs, c)
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
