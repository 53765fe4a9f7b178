package verbs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/verbs"
)

// HelperName is the binary that runs the verbs commands: ibtool with a
// way to call C (cmd/ibtool-verbs). That way links a binary dynamically
// to libc, and every start of it pays the dynamic loader (internal/verbs
// UseC), so ibtool itself is built without it, and its verbs commands,
// once their flags are checked, run their whole command line again there.
const HelperName = "ibtool-verbs"

// runVerbs runs a verbs command's work: here where this binary can call
// libibverbs (or in tests, which call it in-process), else in the helper,
// which replaces this process and so exits with the command's status.
func runVerbs(env *cmdutil.Env, work func() error) error {
	if verbs.CanCall() || !env.Process {
		return work()
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding %s: %w", HelperName, err)
	}
	if filepath.Base(exe) == HelperName {
		// A helper built without its way to C must not run itself again.
		return work()
	}
	helper, err := helperPath(exe)
	if err != nil {
		return err
	}
	err = syscall.Exec(helper, os.Args, os.Environ())
	return fmt.Errorf("running %s: %w", helper, err)
}

// helperPath finds the helper beside the binary exe (the build tree's
// bin/, or where go install put both), or where make install puts it,
// ../lib/ibtool/ from exe's directory.
func helperPath(exe string) (string, error) {
	dir := filepath.Dir(exe)
	beside, installed := filepath.Join(dir, HelperName), filepath.Join(dir, "..", "lib", "ibtool", HelperName)
	for _, p := range []string{beside, installed} {
		if unix.Access(p, unix.X_OK) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s, which runs the verbs commands, is not installed (neither %s nor %s): make install installs it; "+
		"go install github.com/ibtool/ibtool/cmd/%s puts it beside ibtool", HelperName, beside, filepath.Clean(installed), HelperName)
}
