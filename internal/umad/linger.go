package umad

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// When a CONNECT to ibsim has gone out but not been answered (ibsim is
// busy or paused: the console's Wait) and the process must end (a signal,
// the user's limit), the answer cannot simply be abandoned: ibsim, serving
// it later, connects its slot socket to the client's packet socket, and if
// that socket is gone it panics and takes the whole fabric down. The C
// clients never give up, so they never meet this. ibtool hands its two
// sockets to a small helper process, the same executable started with
// lingerEnv set, which waits for the answer, sends DISCONNECT, and exits;
// it also exits when ibsim is gone.

const (
	lingerEnv = "IBTOOL_SIM_LINGER" // the helper's socket base name
	// lingerMax bounds a helper's life, in case ibsim stays paused.
	lingerMax = time.Hour
)

// lingerEnabled says the executable runs LingerMain first thing, so that
// starting it as a helper is safe (a test binary without it would run its
// tests instead).
var lingerEnabled atomic.Bool

// LingerMain must be called first in main (and in TestMain of tests that
// open simulator ports). In a helper process it does the helper's work
// and exits; otherwise it returns.
func LingerMain() {
	base := os.Getenv(lingerEnv)
	if base == "" {
		lingerEnabled.Store(true)
		return
	}
	os.Exit(lingerServe(base, os.NewFile(3, "ibsim-ctl"), os.NewFile(4, "ibsim-data")))
}

// lingerHandOff starts the helper with p's sockets; the caller then
// closes its own copies. Without a helper (UDP mode needs none: ibsim
// cannot fail to connect a UDP socket), the sockets are just closed.
func (p *simConn) lingerHandOff() bool {
	if p.cfg.ServerName != "" || !lingerEnabled.Load() {
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	ctl, err1 := p.ctl.(*net.UnixConn).File()
	data, err2 := p.data.(*net.UnixConn).File()
	defer closeFiles(ctl, data)
	if err1 != nil || err2 != nil {
		return false
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), lingerEnv+"="+p.cfg.SockName)
	cmd.ExtraFiles = []*os.File{ctl, data}
	// Its own session: the terminal's Ctrl-C that ended us must not end it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false
	}
	cmd.Process.Release()
	return true
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// lingerServe is the helper: it keeps data open (ibsim connects to it),
// reads the CONNECT answer from ctl, and disconnects the slot.
func lingerServe(base string, ctlFile, data *os.File) int {
	defer runtime.KeepAlive(data)
	ctl, err := net.FilePacketConn(ctlFile)
	if err != nil {
		return 1
	}
	p := &simConn{cfg: SimConfig{SockName: base}, ctl: ctl, ctlPeer: abstractAddr(base + ":ctl"), closed: make(chan struct{})}
	deadline := time.Now().Add(lingerMax)
	for time.Now().Before(deadline) {
		reply, err := p.ctlAwait(simCtlConnect, 2*time.Second, nil)
		switch {
		case errors.Is(err, errSimNoAnswer):
			if !SimReachable(p.cfg) {
				return 0 // ibsim is gone, and the slot with it
			}
			continue
		case err != nil:
			return 1
		case reply == nil:
			return 0 // refused: no slot was taken
		}
		p.slot = binary.LittleEndian.Uint32(reply[0:])
		_, err = p.ctlExchangeLocked(simCtlDisconnect, p.slot, nil)
		if err != nil {
			return 1
		}
		return 0
	}
	return 1
}
