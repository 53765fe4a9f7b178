// Command ibtool is one binary for InfiniBand fabric diagnostics. Invoked
// through a symlink named like an infiniband-diags tool (perfquery, smpdump,
// ...) it behaves as that tool.
package main

import (
	"os"
	"runtime/debug"

	"github.com/ibtool/ibtool/internal/cli"
)

func main() {
	// A run lives for a second or less and keeps most of what it
	// allocates (the fabric); collecting less often saves about a tenth
	// of a big walk's CPU. GOGC still overrides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(cli.Main(os.Args, cli.StdIO()))
}
