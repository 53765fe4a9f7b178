package exporter

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/exporter/cmdline"
)

// exporter: the Prometheus exporter is a program of its own,
// ibtool-exporter, so that ibtool does not carry client_golang and its
// start-up cost in every command. `ibtool exporter` runs it with the same
// arguments.

// Binary is the exporter's program name.
const Binary = "ibtool-exporter"

// NewCmd builds the exporter command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exporter [ibtool-exporter options]",
		Short: "Prometheus exporter of every port's counters and links (runs ibtool-exporter)",
		Long: `Run ibtool-exporter, the Prometheus exporter, with these arguments: it is
looked up beside the ibtool binary, then in PATH. It serves the fabric's metrics
on :9315/metrics (--web.listen-address, --web.config.file for TLS and basic auth,
--web.systemd-socket), or with --once prints one scrape, with --textfile FILE
writes one for node_exporter's textfile collector. The flags below are
ibtool-exporter's; docs/exporter.md describes them and its deployment.`,
		Example: `  ibtool exporter --web.listen-address :9315
  ibtool exporter --textfile /var/lib/prometheus/node-exporter/infiniband.prom
  ibtool exporter --once --load-cache fabric.cache | grep ib_port_link_downed_total`,
		// Every argument is ibtool-exporter's, but for a lone -h or
		// --help: this command's help, which says where its flags are.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
				return c.Help()
			}
			return run(env, args)
		},
	}
	// The flags are ibtool-exporter's, from its one definition, for the
	// help, the man page and completion; they are passed on unparsed.
	cmd.Flags().AddFlagSet(cmdline.New(&cmdline.Options{}))
	// Every command lists --json; the exporter's output is Prometheus'
	// text format. The flag is for the help only: ibtool-exporter gets
	// it, and refuses it as a usage error.
	cmd.Flags().Bool("json", false, "not for the exporter: it writes Prometheus' text format (a usage error)")
	return cmd
}

// run replaces the process with ibtool-exporter (a test, not the
// process, runs it as a child instead).
func run(env *cmdutil.Env, args []string) error {
	self, _ := os.Executable()
	path, err := Find(self)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: err}
	}
	if env.Process {
		err := syscall.Exec(path, append([]string{Binary}, args...), os.Environ())
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("running %s: %v", path, err)}
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.IO.In, env.IO.Out, env.IO.Err
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &cmdutil.ExitError{Code: ee.ExitCode(), Err: cmdutil.ErrSilent}
	}
	return err
}

// Find is ibtool-exporter beside the ibtool binary self (where make
// install and the package put it), else in PATH.
func Find(self string) (string, error) {
	if self != "" {
		p := filepath.Join(filepath.Dir(self), Binary)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(Binary); err == nil {
		return p, nil
	}
	if self == "" {
		self = "ibtool"
	}
	return "", fmt.Errorf("%s not found beside %s or in PATH: install it with ibtool (make install does)", Binary, self)
}
