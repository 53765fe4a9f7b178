package umad

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// ibsim never reclaims the slot of a client that died without DISCONNECT,
// and has only ten. So open simulator ports are tracked, and SIGINT, SIGTERM
// or SIGHUP closes them all before the process exits with 128+signal —
// unless the program handles the signal itself (see HandleSignals).
//
// One goroutine receives the signals and decides, so that a signal is
// either the program's or ends the process, never both.
var (
	liveMu    sync.Mutex
	livePorts = map[*simConn]struct{}{}
	owners    = map[chan<- os.Signal]struct{}{}
	sigOnce   sync.Once
)

// HandleSignals delivers SIGINT and SIGTERM to ch instead of ending the
// process (ibping prints its statistics and returns, and closes its ports
// as it does), until the returned function is called. SIGHUP still ends
// the process.
func HandleSignals(ch chan<- os.Signal) (done func()) {
	watchSignals()
	liveMu.Lock()
	owners[ch] = struct{}{}
	liveMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			liveMu.Lock()
			delete(owners, ch)
			liveMu.Unlock()
		})
	}
}

func watchSignals() {
	sigOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			for sig := range ch {
				if sig != syscall.SIGHUP && forwardSignal(sig) {
					continue
				}
				closeAllSim()
				os.Exit(128 + int(sig.(syscall.Signal)))
			}
		}()
	})
}

// forwardSignal hands sig to the program's handlers, if it has any.
func forwardSignal(sig os.Signal) bool {
	liveMu.Lock()
	defer liveMu.Unlock()
	for ch := range owners {
		select {
		case ch <- sig:
		default: // it has one pending already
		}
	}
	return len(owners) > 0
}

func trackForSignals(p *simConn) (release func()) {
	watchSignals()
	liveMu.Lock()
	livePorts[p] = struct{}{}
	liveMu.Unlock()
	return func() {
		liveMu.Lock()
		delete(livePorts, p)
		liveMu.Unlock()
	}
}

func closeAllSim() {
	liveMu.Lock()
	ports := make([]*simConn, 0, len(livePorts))
	for p := range livePorts {
		ports = append(ports, p)
	}
	liveMu.Unlock()
	for _, p := range ports {
		p.Close()
	}
}
