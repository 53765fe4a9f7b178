// Command ibtool is one binary for InfiniBand fabric diagnostics. Invoked
// through a symlink named like an infiniband-diags tool (perfquery, smpdump,
// ...) it behaves as that tool.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/ibtool/ibtool/internal/cli"
	"github.com/ibtool/ibtool/internal/exitclean"
	"github.com/ibtool/ibtool/internal/umad"
)

// exitPanic is the exit code of a command that panicked (Go's own).
const exitPanic = 2

func main() {
	// No allocation sampling: nothing reads the profile, and its first
	// sample costs the runtime's 1.4 MB bucket table.
	runtime.MemProfileRate = 0
	umad.LingerMain() // a helper finishing an abandoned simulator CONNECT
	// Before anything is acquired: a signal, an error or a panic all end
	// through exitclean, which disconnects simulator ports and removes
	// temporary files.
	exitclean.Install()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "ibtool: internal error: %v\n%s", r, debug.Stack())
			exitclean.Exit(exitPanic)
		}
	}()
	// A run lives for a second or less and keeps most of what it
	// allocates (the fabric); collecting half as often saves about a
	// tenth of a big walk's CPU for a third more peak memory (measured
	// on the 2000-node fabric: 0.17 s and 27 MB at GOGC=100, 0.155 s and
	// 33 MB at 200). GOGC still overrides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	exitclean.Exit(cli.Main(os.Args, cli.StdIO()))
}
