// Command ibtool is one binary for InfiniBand fabric diagnostics. Invoked
// through a symlink named like an infiniband-diags tool (perfquery, smpdump,
// ...) it behaves as that tool.
package main

import (
	"os"

	"github.com/ibtool/ibtool/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, cli.StdIO()))
}
