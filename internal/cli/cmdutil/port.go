package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// EngineConfig is what a command needs to talk to the fabric.
type EngineConfig struct {
	Timeout    time.Duration
	RetryCount int // resends; negative for none
	Window     int // MADs in flight; 0 for the engine's default
	// Trace, when set, sees every MAD event of the engine (after -d's
	// lines): the diagnosis counts lost MADs per destination with it.
	Trace func(rpc.Event)
}

// OpenEngine opens the local port chosen by -C/-P and starts the MAD engine
// on it, with -t as the timeout and -d tracing to stderr.
func OpenEngine(env *Env, c *Common, cfg EngineConfig) (*rpc.Engine, error) {
	ms, err := c.TimeoutMS(int(cfg.Timeout / time.Millisecond))
	if err != nil {
		return nil, err
	}
	retries, err := c.RetryCount(cfg.RetryCount)
	if err != nil {
		return nil, err
	}
	local, err := selectLocal(env, c)
	if err != nil {
		return nil, err
	}
	port, err := env.Transport.Open(local.CA, local.Port)
	if err != nil {
		return nil, fmt.Errorf("can't open UMAD port (%s:%d): %w", OrDefault(local.CA), max(local.Port, 0), err)
	}
	opt := rpc.Options{Timeout: time.Duration(ms) * time.Millisecond, Retries: retries, Window: cfg.Window}
	if c.Debug > 0 {
		opt.Trace = traceTo(env.IO.Err, c.Debug)
	}
	if debug, own := opt.Trace, cfg.Trace; own != nil && debug != nil {
		opt.Trace = func(ev rpc.Event) { debug(ev); own(ev) }
	} else if own != nil {
		opt.Trace = own
	}
	eng := rpc.New(port, opt)
	if c.Stats {
		env.engines = append(env.engines, eng)
	}
	return eng, nil
}

// PrintStats reports the engines' MAD counts (--stats), after the command.
func PrintStats(env *Env) {
	var s rpc.Stats
	for _, e := range env.engines {
		es := e.Stats()
		s.Sent += es.Sent
		s.Retried += es.Retried
		s.Lost += es.Lost
		s.Unmatched += es.Unmatched
	}
	if len(env.engines) > 0 {
		fmt.Fprintf(env.IO.Err, "ibtool: MADs sent %d, retried %d, lost %d, unmatched replies %d\n", s.Sent, s.Retried, s.Lost, s.Unmatched)
	}
}

// selectLocal resolves -C/-P. Without them the transport picks its default
// port itself, which spares the simulator a second connection.
func selectLocal(env *Env, c *Common) (endport.Local, error) {
	if c.CA == "" && c.Port == "" {
		return endport.Local{Port: -1}, nil
	}
	if v, err := endport.ParseUint(c.Port, 8); err == nil && c.CA == "" {
		return endport.Local{Port: int(v)}, nil
	}
	cas, err := env.Transport.CAs()
	var skipped umad.CAErrors
	if err != nil && !(errors.As(err, &skipped) && len(cas) > 0) {
		return endport.Local{}, err // a broken CA must not hide the good ones
	}
	return endport.SelectLocal(cas, c.CA, c.Port)
}

func OrDefault(ca string) string {
	if ca == "" {
		return "(default)"
	}
	return ca
}

// traceTo prints one line per MAD event (-d); -dd adds the MAD decoded
// field by field. Events come from many goroutines: each is written whole.
func traceTo(w io.Writer, level int) func(rpc.Event) {
	var mu sync.Mutex
	return func(ev rpc.Event) {
		var b strings.Builder
		fmt.Fprintf(&b, "ibtool: %-11s %s", ev.Kind, rpc.Describe(ev.Addr, ev.MAD))
		if ev.Attempt > 1 {
			fmt.Fprintf(&b, " attempt %d", ev.Attempt)
		}
		fmt.Fprintf(&b, " tid 0x%016x status 0x%04x\n", ev.MAD.TID(), ev.MAD.Status())
		if level > 1 {
			b.WriteString(rpc.DumpMAD(ev.MAD))
		}
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(w, b.String())
	}
}

// HexDump is libibmad's xdump: 2-byte groups, 16 bytes a line. (xdump
// also leaves a blank before the last newline when the length is even and
// no multiple of 16; smpdump's 64 bytes never are, and decode_mad's dumps
// are its own.)
func HexDump(b []byte) string {
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

// QueryOptions are the common flags every query carries: -y, -s, -Y,
// ibdiag.conf's sa_key, and -v's log of fabric writes.
func QueryOptions(env *Env, c *Common) (query.Options, error) {
	var o query.Options
	var err error
	if c.MKey != "" {
		if o.MKey, err = endport.ParseUint(c.MKey, 64); err != nil {
			return o, UsageErrorf("invalid M_Key %q: %v", c.MKey, err)
		}
	}
	if c.SMPort != "" {
		if o.SMLID, err = endport.ParseLID(c.SMPort); err != nil {
			return o, UsageErrorf("-s: %v", err)
		}
	}
	if c.SAKey != "" {
		if o.SAKey, err = endport.ParseUint(c.SAKey, 64); err != nil {
			return o, fmt.Errorf("sa_key in ibdiag.conf: %v", err)
		}
	}
	o.PKeyIndex = uint16(c.PKeyIdx)
	// Names given as targets are looked up in the default node-name-map,
	// as the C tools name nodes in their output.
	o.Names = nodename.Open("", io.Discard)
	if c.Verbose > 0 {
		o.Log = func(format string, args ...any) {
			fmt.Fprintf(env.IO.Err, "ibtool: "+format+"\n", args...)
		}
	}
	return o, nil
}

// OpenClient opens the engine as OpenEngine does and puts the query
// layer on it. The caller closes it with client.Engine().Close().
func OpenClient(env *Env, c *Common, cfg EngineConfig) (*query.Client, error) {
	o, err := QueryOptions(env, c)
	if err != nil {
		return nil, err
	}
	eng, err := OpenEngine(env, c, cfg)
	if err != nil {
		return nil, err
	}
	return query.New(eng, o), nil
}

// OpenSourceClient opens the client a fabric source walks with: -o as
// the window (libibnetdisc's --outstanding_smps) and libibnetdisc's 3
// retries. It returns nil, and no error, for a source that reads a cache.
func OpenSourceClient(env *Env, c *Common, src *query.Source) (*query.Client, error) {
	if !src.Live() {
		return nil, nil
	}
	src.MlxEPI = c.MlxEPI
	return OpenClient(env, c, EngineConfig{Timeout: DefaultTimeoutMS * time.Millisecond, RetryCount: 3, Window: src.Window()})
}

// ms is a duration in µs in milliseconds, for JSON's *_ms.
func Millis(us int64) float64 { return float64(us) / 1000 }

// NumPorts is umad_ca_t.numports: the highest port number present.
func NumPorts(c *umad.CA) int {
	n := 0
	for _, p := range c.Ports {
		n = max(n, p.Num)
	}
	return n
}

// IBOpen opens the local port as mad_rpc_open_port does, with the C tools'
// failure message.
func IBOpen(env *Env, c *Common) (*rpc.Engine, error) {
	return IBOpenWith(env, c, EngineConfig{Timeout: rpc.DefaultTimeout})
}

// IBOpenWith is IBOpen with the engine's settings given.
func IBOpenWith(env *Env, c *Common, cfg EngineConfig) (*rpc.Engine, error) {
	if _, err := c.TimeoutMS(DefaultTimeoutMS); err != nil {
		return nil, &Failure{CMsg: err.Error(), Fn: "process_opt"}
	}
	eng, err := OpenEngine(env, c, cfg)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return nil, err
		}
		ca := c.CA
		if ca == "" {
			ca = "(null)"
		}
		port, _ := endport.ParseUint(c.Port, 32)
		return nil, &Failure{CMsg: fmt.Sprintf("Failed to open '%s' port '%d'", ca, port), Err: err, Stderr: true}
	}
	return eng, nil
}

// IBOpenClient is IBOpenWith with the query layer on the engine (-y, -s,
// -Y, sa_key, -v).
func IBOpenClient(env *Env, c *Common, cfg EngineConfig) (*query.Client, error) {
	o, err := QueryOptions(env, c)
	if err != nil {
		return nil, err
	}
	eng, err := IBOpenWith(env, c, cfg)
	if err != nil {
		return nil, err
	}
	return query.New(eng, o), nil
}
