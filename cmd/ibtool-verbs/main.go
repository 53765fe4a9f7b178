// Command ibtool-verbs is ibtool with libibverbs within reach: the binary
// the verbs commands (ibv_devices, ibv_devinfo, rdma_bw) run in. Calling C
// without cgo (internal/verbs/dlopen) links a binary dynamically to libc,
// which every start of it pays in the dynamic loader; so ibtool is built
// without it, and its verbs commands, once their flags are checked, run
// their command line again here, in place of the ibtool process. It is
// installed beside ibtool or in ../lib/ibtool/ from ibtool's directory.
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
	"github.com/ibtool/ibtool/internal/verbs"
	"github.com/ibtool/ibtool/internal/verbs/dlopen"
)

// exitPanic is the exit code of a command that panicked (Go's own).
const exitPanic = 2

// main is cmd/ibtool's, with a way to call C.
func main() {
	verbs.UseC(dlopen.C{})
	runtime.MemProfileRate = 0
	umad.LingerMain()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "ibtool: internal error: %v\n%s", r, debug.Stack())
			exitclean.Exit(exitPanic)
		}
	}()
	exitclean.Exit(cli.Main(os.Args, cmdutil.StdIO()))
}
