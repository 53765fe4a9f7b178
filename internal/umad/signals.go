package umad

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// ibsim never reclaims the slot of a client that died without DISCONNECT,
// and has only ten. So open simulator ports are tracked, and SIGINT, SIGTERM
// or SIGHUP closes them all before the process exits with 128+signal.
var (
	liveMu    sync.Mutex
	livePorts = map[*simConn]struct{}{}
	sigOnce   sync.Once
)

func trackForSignals(p *simConn) (release func()) {
	sigOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			sig := <-ch
			closeAllSim()
			os.Exit(128 + int(sig.(syscall.Signal)))
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
