package cli

import (
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/spf13/cobra"
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

// annotLink marks commands that get a symlink (every tool-named command).
const annotLink = "link"

// toolCommand returns a cobra command preset the way every tool command
// wants it: linkable, flag errors as usage errors, interspersed arguments.
func toolCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:         use,
		Short:       short,
		Annotations: map[string]string{annotLink: "true"},
	}
}
