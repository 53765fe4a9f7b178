package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// Version is the ibtool release, overridden at build time with
// -ldflags "-X github.com/ibtool/ibtool/internal/cli/cmdutil.Version=...".
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
	// Verbosity is the running command's -v count, for error details.
	Verbosity int
	// engines are the MAD engines opened with --stats.
	engines []*rpc.Engine
	// CompatHelp is set when -h printed a tool's usage in compat use.
	CompatHelp bool
	// UnknownHelp is set when help was asked for a command that does not
	// exist ("ibtool nosuch --help", "ibtool help nosuch").
	UnknownHelp bool
	// Args are the command line, to shorten long ones in messages.
	Args []string
	// Process is true when the command runs as the process (Main), not
	// in a test: it may then set process-wide state (procs.go).
	Process bool
}

// AnnotLink marks commands that get a symlink (every tool-named command).
const AnnotLink = "link"

// ToolCommand returns a cobra command preset the way every tool command
// wants it: linkable, flag errors as usage errors, interspersed arguments.
func ToolCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:         use,
		Short:       short,
		Annotations: map[string]string{AnnotLink: "true"},
	}
}
