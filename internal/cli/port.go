package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/rpc"
)

// engineConfig is what a command needs to talk to the fabric.
type engineConfig struct {
	timeout time.Duration
	retries int // resends; negative for none
}

// openEngine opens the local port chosen by -C/-P and starts the MAD engine
// on it, with -t as the timeout and -d tracing to stderr.
func openEngine(env *Env, c *Common, cfg engineConfig) (*rpc.Engine, error) {
	ms, err := c.timeoutMS(int(cfg.timeout / time.Millisecond))
	if err != nil {
		return nil, err
	}
	portNum := -1
	if c.Port != "" {
		v, err := endport.ParseUint(c.Port, 8)
		if err != nil {
			return nil, fmt.Errorf("invalid local port -P %q: %v", c.Port, err)
		}
		portNum = int(v)
	}
	port, err := env.Transport.Open(c.CA, portNum)
	if err != nil {
		return nil, fmt.Errorf("can't open UMAD port (%s:%d): %w", orDefault(c.CA), max(portNum, 0), err)
	}
	opt := rpc.Options{Timeout: time.Duration(ms) * time.Millisecond, Retries: cfg.retries}
	if c.Debug > 0 {
		opt.Trace = traceTo(env.IO.Err, c.Debug)
	}
	return rpc.New(port, opt), nil
}

func orDefault(ca string) string {
	if ca == "" {
		return "(default)"
	}
	return ca
}

// traceTo prints one line per MAD event (-d); -dd adds the MAD in hex.
func traceTo(w io.Writer, level int) func(rpc.Event) {
	return func(ev rpc.Event) {
		fmt.Fprintf(w, "ibtool: %-11s %s", ev.Kind, rpc.Describe(ev.Addr, ev.MAD))
		if ev.Attempt > 1 {
			fmt.Fprintf(w, " attempt %d", ev.Attempt)
		}
		fmt.Fprintf(w, " tid 0x%016x status 0x%04x\n", ev.MAD.TID(), ev.MAD.Status())
		if level > 1 {
			fmt.Fprint(w, hexDump(ev.MAD))
		}
	}
}

// hexDump is libibmad's xdump: 2-byte groups, 16 bytes a line.
func hexDump(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, len(b)*3)
	for i, c := range b {
		out = append(out, digits[c>>4], digits[c&0xF])
		switch {
		case i == len(b)-1 || (i+1)%16 == 0:
			out = append(out, '\n')
		case i%2 == 1:
			out = append(out, ' ')
		}
	}
	return string(out)
}
