package umad

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// ibsim never reclaims the slot of a client that died without DISCONNECT,
// and has only ten. So open simulator ports are tracked, and SIGINT, SIGTERM
// or SIGHUP closes them all before the process exits with 128+signal —
// unless the program handles the signal itself (see HandleSignals).
var (
	liveMu    sync.Mutex
	livePorts = map[*simConn]struct{}{}
	sigOnce   sync.Once
	sigOwners atomic.Int32
)

// HandleSignals tells the transport that the caller handles SIGINT and
// SIGTERM itself (ibping prints its statistics and returns) and closes its
// ports as it returns; until the returned function is called, those
// signals do not end the process. SIGHUP still does.
func HandleSignals() (done func()) {
	sigOwners.Add(1)
	var once sync.Once
	return func() { once.Do(func() { sigOwners.Add(-1) }) }
}

func trackForSignals(p *simConn) (release func()) {
	sigOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			for sig := range ch {
				if sig != syscall.SIGHUP && sigOwners.Load() > 0 {
					continue // the program's own handler has it
				}
				closeAllSim()
				os.Exit(128 + int(sig.(syscall.Signal)))
			}
		}()
	})
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
