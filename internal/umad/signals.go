package umad

import (
	"os"

	"github.com/ibtool/ibtool/internal/exitclean"
)

// ibsim never reclaims the slot of a client that died without DISCONNECT,
// and has only ten. So every simulator port registers its Close with
// exitclean from before its CONNECT on, and SIGINT, SIGTERM or SIGHUP
// closes them all before the process exits with 128+signal, unless the
// program handles the signal itself (see HandleSignals).

// HandleSignals delivers SIGINT and SIGTERM to ch instead of ending the
// process (ibping prints its statistics and returns, and closes its ports
// as it does), until the returned function is called. SIGHUP still ends
// the process.
func HandleSignals(ch chan<- os.Signal) (done func()) {
	return exitclean.Forward(ch)
}
