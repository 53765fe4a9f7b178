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
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
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
	// An error or a panic ends through exitclean, which disconnects
	// simulator ports and removes temporary files; it watches the signals
	// from the first resource it has to clean up (exitclean.Hold).
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "ibtool: internal error: %v\n%s", r, debug.Stack())
			exitclean.Exit(exitPanic)
		}
	}()
	// The collector runs at Go's default (GOGC=100). It used to run half
	// as often (200), which saved about a tenth of a big walk's CPU when
	// the walk made 35 MB of garbage on the 2000-node fabric; now that it
	// makes about half that, 200 saves 3-4% of the CPU for 13% more
	// peak memory on the 5000-node fabric (44.8 against 51.6 MB; 50 would
	// take 39 MB for 12% more CPU). GOGC still overrides.
	exitclean.Exit(cli.Main(os.Args, cmdutil.StdIO()))
}
